//! `RuntimeBuilder::build_global_with_spawn_handler`: the global runtime's workers start on
//! threads of the caller's handler (one that borrows from the caller and is not `Send`); a
//! second build is refused before the handler runs. (One test: the global runtime is per
//! process.)

use std::cell::Cell;
use std::rc::Rc;
use std::sync::mpsc::channel;
use std::time::Duration;

use taskpools::forkjoin::{self, Runtime};

#[test]
fn global_runtime_started_by_a_spawn_handler() {
    // Not `Send`: only a handler used during the build may hold it.
    let started = Rc::new(Cell::new(0));
    let prefix = String::from("global-by-handler");
    let s = Rc::clone(&started);
    Runtime::builder()
        .threads(2)
        .build_global_with_spawn_handler(|worker| {
            s.set(s.get() + 1);
            std::thread::Builder::new()
                .name(format!("{prefix}-{}", worker.index()))
                .spawn(move || worker.run())?;
            Ok(())
        })
        .expect("the first global build succeeds");
    assert_eq!(started.get(), 2);
    assert_eq!(forkjoin::current_num_threads(), 2);

    let (tx, rx) = channel();
    forkjoin::spawn(move || {
        tx.send(std::thread::current().name().map(String::from))
            .unwrap()
    });
    let name = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(
        name.as_deref()
            .is_some_and(|n| n.starts_with("global-by-handler-")),
        "{name:?}"
    );

    let again = Runtime::builder()
        .threads(3)
        .build_global_with_spawn_handler(|_| panic!("not called: the global runtime exists"));
    assert!(
        matches!(again, Err(taskpools::Error::GlobalExists)),
        "{again:?}"
    );
}

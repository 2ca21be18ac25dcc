//! `RuntimeBuilder::build_global`: once, before first use; then `forkjoin::spawn` and
//! `current_num_threads` outside a worker use it. (One test: the global runtime is per process.)

use std::sync::mpsc::channel;
use std::time::Duration;

use taskpools::forkjoin::{self, Runtime};

#[test]
fn build_global_once_then_spawn_and_counts() {
    Runtime::builder()
        .threads(2)
        .pin(false)
        .build_global()
        .expect("the first build_global succeeds");
    let again = Runtime::builder().threads(3).build_global();
    assert!(
        matches!(again, Err(taskpools::Error::GlobalExists)),
        "a second build_global is refused"
    );
    assert_eq!(forkjoin::current_num_threads(), 2);
    assert_eq!(forkjoin::current_thread_index(), None);
    let (tx, rx) = channel();
    forkjoin::spawn(move || tx.send(forkjoin::current_thread_index()).unwrap());
    let idx = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(idx.is_some_and(|i| i < 2), "{idx:?}");
}

//! `taskpools::runtime::set_global_default`: the global runtime, created on first use, is built
//! by the function set, once; a second setting is refused. (One test: the global runtime is
//! per process.)

use std::sync::atomic::{AtomicUsize, Ordering};

use taskpools::forkjoin;
use taskpools::Runtime;

static BUILDS: AtomicUsize = AtomicUsize::new(0);

fn three_named_workers() -> Result<Runtime, taskpools::Error> {
    BUILDS.fetch_add(1, Ordering::SeqCst);
    Runtime::builder()
        .threads(3)
        .thread_name(|i| format!("by-default-fn-{i}"))
        .build()
}

fn never() -> Result<Runtime, taskpools::Error> {
    unreachable!("a second default is refused")
}

#[test]
fn the_default_builds_the_global_runtime_on_first_use() {
    assert!(taskpools::runtime::set_global_default(three_named_workers));
    assert!(!taskpools::runtime::set_global_default(never));
    assert_eq!(
        BUILDS.load(Ordering::SeqCst),
        0,
        "built on first use, not before"
    );
    let name = forkjoin::join(|| std::thread::current().name().map(String::from), || ()).0;
    assert!(
        name.as_deref()
            .is_some_and(|n| n.starts_with("by-default-fn-")),
        "{name:?}"
    );
    assert_eq!(forkjoin::current_num_threads(), 3);
    assert_eq!(BUILDS.load(Ordering::SeqCst), 1);
    assert!(matches!(
        Runtime::builder().threads(1).build_global(),
        Err(taskpools::Error::GlobalExists)
    ));
}

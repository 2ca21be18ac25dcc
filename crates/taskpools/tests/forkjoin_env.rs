//! `TASKPOOLS_NUM_THREADS` sizes the global runtime when it is created on first use.
//! (One test: the global runtime and the environment are per process.)

use taskpools::forkjoin::{self, Runtime};

#[test]
fn num_threads_env_sizes_the_global_runtime() {
    // SAFETY: the only test of this binary, run before any runtime exists: no thread of ours
    // reads or writes the environment meanwhile.
    unsafe { std::env::set_var(forkjoin::NUM_THREADS_ENV, "3") };
    assert_eq!(forkjoin::current_num_threads(), 3);
    assert_eq!(forkjoin::join(|| 1, || 2), (1, 2));
    assert!(matches!(
        Runtime::builder().threads(1).build_global(),
        Err(taskpools::Error::GlobalExists)
    ));
}

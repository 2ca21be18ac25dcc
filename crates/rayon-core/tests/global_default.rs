//! The global pool built on first use: sized by `RAYON_NUM_THREADS` as in rayon, threads
//! unnamed. (One test: the global pool and the environment are per process.)

#[test]
fn rayon_num_threads_sizes_the_global_pool() {
    // Before any other thread exists, so no one reads the environment meanwhile.
    std::env::set_var("RAYON_NUM_THREADS", "3");
    assert_eq!(rayon_core::current_num_threads(), 3);
    let names = rayon_core::broadcast(|_| std::thread::current().name().map(str::to_owned));
    assert_eq!(names, [None, None, None]);
    assert!(rayon_core::ThreadPoolBuilder::new().build_global().is_err());
}

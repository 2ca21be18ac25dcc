//! `build_global`: the first call builds the global pool, which the free functions then use
//! from threads outside every pool; a second call, and the deprecated `initialize`, fail with
//! the error that says so. (One test: the global pool is per process.)

use std::sync::mpsc::channel;
use std::time::Duration;

use rayon_core::ThreadPoolBuilder;

#[test]
fn build_global_once() {
    ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("global-{i}"))
        .build_global()
        .expect("the first build_global succeeds");
    assert_eq!(rayon_core::current_num_threads(), 2);

    let (a, b) = rayon_core::join(
        || std::thread::current().name().map(str::to_owned),
        rayon_core::current_thread_index,
    );
    assert!(a.is_some_and(|n| n.starts_with("global-")));
    assert!(b.is_some_and(|i| i < 2));

    let (tx, rx) = channel();
    rayon_core::spawn(move || tx.send(rayon_core::current_thread_index()).unwrap());
    assert!(rx.recv_timeout(Duration::from_secs(30)).unwrap().is_some());
    assert_eq!(rayon_core::broadcast(|ctx| ctx.index()), [0, 1]);

    let e = ThreadPoolBuilder::new()
        .num_threads(3)
        .build_global()
        .unwrap_err();
    assert!(
        e.to_string().contains("global thread pool already exists"),
        "{e}"
    );
    assert!(std::error::Error::source(&e).is_none());
    #[allow(deprecated)]
    let old = rayon_core::initialize(rayon_core::Configuration::new().num_threads(1));
    assert!(old.is_err());
    assert_eq!(rayon_core::current_num_threads(), 2, "unchanged");
}

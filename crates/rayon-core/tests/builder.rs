//! `ThreadPoolBuilder`'s options, each checked on a pool it built, and `ThreadPoolBuildError`'s
//! kinds. Waits that a regression could make endless have a deadline.

use std::error::Error as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rayon_core::{ThreadBuilder, ThreadPoolBuilder};

const DEADLINE: Duration = Duration::from_secs(30);

fn wait_for(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn num_threads_and_thread_names() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("named-{i}"))
        .build()
        .unwrap();
    assert_eq!(pool.current_num_threads(), 3);
    assert_eq!(pool.install(rayon_core::current_num_threads), 3);
    let names = pool.broadcast(|ctx| {
        (
            ctx.index(),
            std::thread::current().name().map(str::to_owned),
        )
    });
    assert_eq!(
        names,
        (0..3)
            .map(|i| (i, Some(format!("named-{i}"))))
            .collect::<Vec<_>>()
    );
}

#[test]
fn threads_are_unnamed_without_thread_name() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let names = pool.broadcast(|_| std::thread::current().name().map(str::to_owned));
    assert_eq!(names, [None, None]);
}

#[test]
fn more_threads_than_the_maximum_are_lowered_to_it() {
    // Nothing is started for this check: the spawn handler refuses the first worker.
    let seen = Mutex::new(Vec::new());
    let r = ThreadPoolBuilder::new()
        .num_threads(usize::MAX)
        .spawn_handler(|t| {
            seen.lock().unwrap().push(t.index());
            Err(std::io::Error::other("refused on purpose"))
        })
        .build();
    assert!(r.is_err());
    assert_eq!(*seen.lock().unwrap(), [0]);
    assert_eq!(rayon_core::max_num_threads(), taskpools::MAX_THREADS);
}

#[test]
fn spawn_handler_sees_names_and_stack_size_and_may_borrow() {
    /// What the handler saw of each worker: index, name, stack size.
    type Seen = (usize, Option<String>, Option<usize>);
    let seen: Mutex<Vec<Seen>> = Mutex::new(Vec::new());
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("h{i}"))
        .stack_size(4 << 20)
        .spawn_handler(|t: ThreadBuilder| {
            seen.lock()
                .unwrap()
                .push((t.index(), t.name().map(str::to_owned), t.stack_size()));
            assert!(format!("{t:?}").contains("ThreadBuilder"));
            std::thread::Builder::new().spawn(move || t.run())?;
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(pool.join(|| 1, || 2), (1, 2));
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(
        seen,
        [
            (0, Some("h0".to_owned()), Some(4 << 20)),
            (1, Some("h1".to_owned()), Some(4 << 20))
        ]
    );
}

#[test]
fn a_spawn_handler_error_is_an_io_error() {
    let e = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|_| Err(std::io::Error::other("no threads today")))
        .build()
        .unwrap_err();
    assert_eq!(e.to_string(), "no threads today");
    let source = e.source().expect("the io::Error");
    assert!(source.downcast_ref::<std::io::Error>().is_some());
}

#[test]
fn start_and_exit_handlers_run_on_every_worker() {
    let started = Arc::new(AtomicUsize::new(0));
    let exited = Arc::new(AtomicUsize::new(0));
    let (s, x) = (Arc::clone(&started), Arc::clone(&exited));
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .start_handler(move |i| {
            s.fetch_add(1 << (4 * i), Ordering::SeqCst);
        })
        .exit_handler(move |i| {
            x.fetch_add(1 << (4 * i), Ordering::SeqCst);
        })
        .build()
        .unwrap();
    pool.broadcast(|_| ()); // every worker has started once its share ran
    assert_eq!(started.load(Ordering::SeqCst), 0x111);
    drop(pool);
    wait_for("the exit handlers", || {
        exited.load(Ordering::SeqCst) == 0x111
    });
}

#[test]
fn panic_handler_gets_spawned_and_start_handler_panics() {
    let (tx, rx) = channel::<String>();
    let tx = Mutex::new(tx);
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(|i| {
            if i == 1 {
                panic!("start of worker 1")
            }
        })
        .panic_handler(move |p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .unwrap_or_default();
            tx.lock().unwrap().send(msg).unwrap();
        })
        .build()
        .unwrap();
    pool.spawn(|| panic!("spawned job"));
    let mut got: Vec<String> = (0..2).map(|_| rx.recv_timeout(DEADLINE).unwrap()).collect();
    got.sort();
    assert_eq!(got, ["spawned job", "start of worker 1"]);
    // The workers went on.
    assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1]);
}

#[test]
fn use_current_thread_makes_the_builder_worker_zero() {
    std::thread::spawn(|| {
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        assert_eq!(rayon_core::current_thread_index(), Some(0));
        assert_eq!(pool.current_thread_index(), Some(0));
        let (a, b) = rayon_core::join(|| 1, || 2);
        assert_eq!(a + b, 3);

        // A worker cannot join another pool as its current thread.
        let e = ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("already a worker"), "{e}");
        assert!(e.source().is_none());
        drop(pool);
        assert_eq!(
            rayon_core::current_thread_index(),
            None,
            "released by the drop"
        );
    })
    .join()
    .unwrap();
}

#[test]
fn build_scoped_workers_borrow_from_the_caller() {
    let local = [1, 2, 3];
    let ran = AtomicUsize::new(0);
    let total = ThreadPoolBuilder::new()
        .num_threads(2)
        .build_scoped(
            |thread| {
                ran.fetch_add(local.len(), Ordering::SeqCst);
                thread.run()
            },
            |pool| pool.install(|| local.iter().sum::<i32>()),
        )
        .unwrap();
    assert_eq!(total, 6);
    // `build_scoped` returned after its worker threads ended.
    assert_eq!(ran.load(Ordering::SeqCst), 6);
}

#[test]
#[allow(deprecated)]
fn deprecated_options_still_build() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(1)
        .breadth_first()
        .build()
        .unwrap();
    assert_eq!(pool.install(|| 7), 7);
    let pool =
        rayon_core::ThreadPool::new(rayon_core::Configuration::new().num_threads(2)).unwrap();
    assert_eq!(pool.current_num_threads(), 2);
    let c = rayon_core::Configuration::new()
        .num_threads(1)
        .thread_name(|i| format!("c{i}"))
        .stack_size(1 << 21)
        .breadth_first()
        .panic_handler(|_| ())
        .start_handler(|_| ())
        .exit_handler(|_| ());
    assert!(format!("{c:?}").contains("num_threads: 1"));
    assert_eq!(
        c.build().unwrap().install(rayon_core::current_num_threads),
        1
    );
}

#[test]
fn builder_and_pool_debug() {
    let b = ThreadPoolBuilder::new()
        .num_threads(2)
        .panic_handler(|_| ());
    let s = format!("{b:?}");
    assert!(
        s.contains("num_threads: 2") && s.contains("<closure>"),
        "{s}"
    );
    let pool = b.build().unwrap();
    assert!(format!("{pool:?}").contains("num_threads: 2"));
}

/// `TASKPOOLS_RAYON_POOL` picks the runtime's deque; an unknown name fails the build with the
/// list of pools (in a child process: the variable is read by every build).
#[test]
fn the_pool_env_picks_the_deque_and_rejects_unknown_names() {
    const CHILD: &str = "RAYON_CORE_POOL_ENV_CHILD";
    if let Ok(what) = std::env::var(CHILD) {
        let built = rayon_core::ThreadPoolBuilder::new().num_threads(2).build();
        match what.as_str() {
            "bad" => {
                let e = built.expect_err("an unknown pool name fails the build");
                let msg = e.to_string();
                assert!(
                    msg.contains("unknown pool `TASKPOOLS_RAYON_POOL=no-such-pool`"),
                    "{msg}"
                );
                assert!(
                    msg.contains("chase-lev") && msg.contains("private-deque"),
                    "{msg}"
                );
            }
            _ => {
                let pool = built.expect("a known pool name builds");
                let sum = pool.install(|| {
                    fn sum(v: &[u64]) -> u64 {
                        if v.len() < 64 {
                            return v.iter().sum();
                        }
                        let (l, r) = v.split_at(v.len() / 2);
                        let (a, b) = rayon_core::join(|| sum(l), || sum(r));
                        a + b
                    }
                    sum(&(1..=10_000).collect::<Vec<u64>>())
                });
                assert_eq!(sum, 50_005_000);
            }
        }
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for (value, what) in [
        ("no-such-pool", "bad"),
        ("", "good"),
        ("private-deque", "good"),
        ("chase-lev", "good"),
        ("acr13", "good"),
    ] {
        let out = std::process::Command::new(&exe)
            .args([
                "--exact",
                "the_pool_env_picks_the_deque_and_rejects_unknown_names",
                "--nocapture",
            ])
            .env(CHILD, what)
            .env("TASKPOOLS_RAYON_POOL", value)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "TASKPOOLS_RAYON_POOL={value}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

//! The free functions, `ThreadPool`'s methods and the scopes, as rayon documents them: both
//! halves of a join run whatever panics, `join_context`'s `migrated`, broadcasts, FIFO scopes,
//! in-place scopes, yields.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon_core::{Scope, ScopeFifo, ThreadPool, ThreadPoolBuilder, Yield};

fn pool(n: usize) -> ThreadPool {
    ThreadPoolBuilder::new().num_threads(n).build().unwrap()
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> &str {
    p.downcast_ref::<&str>().copied().unwrap_or("?")
}

/// Joins nested `depth` deep (so that the worker has jobs queued and the runtime may run the
/// innermost join's halves as plain calls), then `f` at the bottom.
fn nested<R: Send>(depth: u32, f: &(dyn Fn() -> R + Sync)) -> R {
    if depth == 0 {
        f()
    } else {
        rayon_core::join(|| nested(depth - 1, f), || ()).0
    }
}

#[test]
fn both_halves_run_when_the_first_panics() {
    for threads in [1, 2] {
        let pool = pool(threads);
        let b_ran = AtomicBool::new(false);
        let r = pool.install(|| {
            catch_unwind(AssertUnwindSafe(|| {
                nested(8, &|| {
                    rayon_core::join(|| panic!("a"), || b_ran.store(true, Ordering::SeqCst))
                })
            }))
        });
        assert_eq!(panic_message(&*r.unwrap_err()), "a");
        assert!(
            b_ran.load(Ordering::SeqCst),
            "{threads} threads: b did not run"
        );
    }
}

#[test]
fn the_first_panic_wins_when_both_panic() {
    let pool = pool(1);
    let r = pool.install(|| {
        catch_unwind(|| {
            nested(8, &|| {
                rayon_core::join(|| panic!("first"), || panic!("second"))
            })
        })
    });
    assert_eq!(panic_message(&*r.unwrap_err()), "first");
    let r = catch_unwind(|| {
        rayon_core::join_context(|_| panic!("first"), |_| -> () { panic!("second") })
    });
    assert_eq!(panic_message(&*r.unwrap_err()), "first");
}

#[test]
fn join_context_migrated() {
    // From outside every pool both closures are handed to a worker.
    let (a, b) = pool(2).install(|| rayon_core::join_context(|c| c.migrated(), |c| c.migrated()));
    assert_eq!(
        (a, b),
        (false, false),
        "called on a worker: nothing handed over yet"
    );
    let (a, _) = rayon_core::join_context(|c| c.migrated(), |_| ());
    assert!(a);
    // On two workers: `b` is migrated exactly when another worker ran it.
    let pool = pool(2);
    for _ in 0..50 {
        let (me, (there, migrated)) = pool.install(|| {
            rayon_core::join_context(
                |_| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    rayon_core::current_thread_index()
                },
                |c| (rayon_core::current_thread_index(), c.migrated()),
            )
        });
        assert_eq!(migrated, me != there);
    }
}

#[test]
fn broadcasts() {
    let pool = pool(3);
    assert_eq!(pool.broadcast(|ctx| ctx.num_threads()), [3, 3, 3]);
    let nested = pool.install(|| rayon_core::broadcast(|_| rayon_core::broadcast(|c| c.index())));
    assert_eq!(nested, vec![vec![0, 1, 2]; 3]);

    let seen = std::sync::Arc::new(AtomicUsize::new(0));
    let s = std::sync::Arc::clone(&seen);
    pool.spawn_broadcast(move |ctx| {
        s.fetch_add(1 << ctx.index(), Ordering::SeqCst);
    });
    let start = std::time::Instant::now();
    while seen.load(Ordering::SeqCst) != 0b111 {
        assert!(
            start.elapsed().as_secs() < 30,
            "spawn_broadcast did not reach every worker"
        );
        std::thread::yield_now();
    }

    let in_scope = AtomicUsize::new(0);
    pool.scope(|s| {
        s.spawn_broadcast(|_, ctx| {
            in_scope.fetch_add(1 << ctx.index(), Ordering::SeqCst);
        })
    });
    pool.scope_fifo(|s| {
        s.spawn_broadcast(|_, ctx| {
            in_scope.fetch_add(1 << (4 + ctx.index()), Ordering::SeqCst);
        })
    });
    assert_eq!(in_scope.into_inner(), 0x77);
}

#[test]
fn scopes_wait_for_nested_spawns_and_resume_their_panics() {
    let pool = pool(2);
    let count = AtomicUsize::new(0);
    pool.scope(|s| {
        for _ in 0..10 {
            s.spawn(|s: &Scope<'_>| {
                count.fetch_add(1, Ordering::SeqCst);
                s.spawn(|_| {
                    count.fetch_add(1, Ordering::SeqCst);
                });
            });
        }
    });
    assert_eq!(count.load(Ordering::SeqCst), 20);
    let r = catch_unwind(AssertUnwindSafe(|| {
        rayon_core::scope(|s| {
            s.spawn(|_| panic!("in a job"));
            s.spawn(|_| {
                count.fetch_add(1, Ordering::SeqCst);
            });
        })
    }));
    assert_eq!(panic_message(&*r.unwrap_err()), "in a job");
    assert_eq!(count.load(Ordering::SeqCst), 21, "the other job still ran");
}

#[test]
fn fifo_scopes_start_jobs_in_spawn_order() {
    let pool = pool(1);
    let order = Mutex::new(Vec::new());
    pool.scope_fifo(|s| {
        for i in 0..5 {
            let order = &order;
            s.spawn_fifo(move |s: &ScopeFifo<'_>| {
                order.lock().unwrap().push(i);
                s.spawn_fifo(move |_| order.lock().unwrap().push(10 + i));
            });
        }
    });
    assert_eq!(
        order.into_inner().unwrap(),
        [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    );
}

#[test]
fn in_place_scopes_run_op_here_and_spawn_to_the_pool() {
    let pool = pool(2);
    let here = std::thread::current().id();
    let not_send = std::rc::Rc::new(5);
    let mut v = [0; 4];
    pool.in_place_scope(|s| {
        assert_eq!(std::thread::current().id(), here);
        assert_eq!(*not_send, 5);
        for (i, x) in v.iter_mut().enumerate() {
            s.spawn(move |_| *x = i + rayon_core::current_thread_index().map_or(100, |_| 0));
        }
    });
    assert_eq!(v, [0, 1, 2, 3], "the jobs ran on the pool's workers");
    let order = Mutex::new(Vec::new());
    rayon_core::in_place_scope_fifo(|s| {
        for i in 0..3 {
            let order = &order;
            s.spawn_fifo(move |_| order.lock().unwrap().push(i));
        }
    });
    assert_eq!(order.into_inner().unwrap().len(), 3);
    let mut x = 0;
    rayon_core::in_place_scope(|s| s.spawn(|_| x = 1));
    assert_eq!(x, 1);
}

#[test]
fn yields_and_pending_tasks() {
    assert_eq!(rayon_core::yield_now(), None);
    assert_eq!(rayon_core::yield_local(), None);
    assert_eq!(rayon_core::current_thread_has_pending_tasks(), None);
    let pool = pool(1);
    assert_eq!(pool.yield_now(), None, "not one of its workers");
    let ran = AtomicBool::new(false);
    pool.scope(|s| {
        s.spawn(|_| ran.store(true, Ordering::SeqCst));
        assert_eq!(rayon_core::current_thread_has_pending_tasks(), Some(true));
        assert_eq!(pool.current_thread_has_pending_tasks(), Some(true));
        assert_eq!(rayon_core::yield_local(), Some(Yield::Executed));
        assert!(ran.load(Ordering::SeqCst));
        assert_eq!(pool.yield_local(), Some(Yield::Idle));
        assert_eq!(pool.yield_now(), Some(Yield::Idle));
    });
}

#[test]
fn spawns_run_on_the_pool() {
    let pool = pool(2);
    let (tx, rx) = std::sync::mpsc::channel();
    for i in 0..4 {
        let tx1 = tx.clone();
        pool.spawn(move || tx1.send((i, pool_index())).unwrap());
        let tx2 = tx.clone();
        pool.spawn_fifo(move || tx2.send((10 + i, pool_index())).unwrap());
    }
    drop(tx);
    let mut got: Vec<(usize, bool)> = rx.iter().map(|(i, idx)| (i, idx.is_some())).collect();
    got.sort();
    assert_eq!(got.len(), 8);
    assert!(got.iter().all(|&(_, on_worker)| on_worker));
    let (tx, rx) = std::sync::mpsc::channel();
    pool.install(|| {
        rayon_core::spawn_fifo(move || tx.send(pool_index()).unwrap());
    });
    assert!(rx.recv().unwrap().is_some());
}

fn pool_index() -> Option<usize> {
    rayon_core::current_thread_index()
}

/// rayon's scopes are shared between threads (`Sync`) and may be sent to them; so are these.
#[test]
fn auto_traits() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Scope<'static>>();
    send_sync::<ScopeFifo<'static>>();
    send_sync::<ThreadPool>();
    send_sync::<rayon_core::ThreadPoolBuildError>();
}

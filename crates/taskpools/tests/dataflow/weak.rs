//! Weak accesses and early release from the outside: random nested programs of strong and
//! weak accesses against their sequential elision, under exact and block tables; a weak
//! task that must start while its predecessor runs; a part released while the task's
//! other child still runs; nesting two weak levels; `sync` and `wait_for` refused in weak
//! tasks; panics, cancels and misuse.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use taskpools::dataflow::{self, Cause, Config, Region, RegionRef, Scope};
use taskpools::Runtime;

use crate::{message, wait_until, within};

const N: usize = 24;

fn mix(a: u64, b: u64) -> u64 {
    let mut x = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}

fn digest(xs: &[u64]) -> u64 {
    xs.iter().fold(1, |h, &x| mix(h, x))
}

/// A task of a random program. Ranges are relative to the region the task's parent hands
/// out (the root's one region, or one of the parent's weak parts).
#[derive(Clone, Debug)]
enum Node {
    /// A strong read (records a digest) or write (mixes its id in).
    Leaf {
        id: usize,
        reg: usize,
        lo: usize,
        hi: usize,
        write: bool,
    },
    /// A task with weak parts `parts` of region `reg` (written or only read by its
    /// children), maybe a strong read `read` of the same region, and children on its parts
    /// (their `reg` indexes `parts`).
    Weak {
        id: usize,
        reg: usize,
        parts: Vec<(usize, usize, bool)>,
        read: Option<(usize, usize)>,
        children: Vec<Node>,
    },
}

struct Gen {
    rng: fastrand::Rng,
    next: usize,
}

impl Gen {
    fn id(&mut self) -> usize {
        self.next += 1;
        self.next
    }

    /// A task on region `reg` of `len` elements, written to only if `writable`.
    fn node(&mut self, reg: usize, len: usize, writable: bool, depth: usize) -> Node {
        let id = self.id();
        if depth == 0 || len < 2 || self.rng.u8(..10) < 6 {
            let lo = self.rng.usize(..len);
            let hi = self.rng.usize(lo + 1..=len);
            return Node::Leaf {
                id,
                reg,
                lo,
                hi,
                write: writable && self.rng.bool(),
            };
        }
        // A window cut into 1-3 contiguous weak parts.
        let a = self.rng.usize(..len - 1);
        let b = self.rng.usize(a + 1..=len);
        let k = self.rng.usize(1..=3).min(b - a);
        let mut cuts: Vec<usize> = (0..k - 1).map(|_| self.rng.usize(a + 1..b)).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut bounds = vec![a];
        bounds.extend(cuts);
        bounds.push(b);
        let parts: Vec<(usize, usize, bool)> = bounds
            .windows(2)
            .map(|w| (w[0], w[1], writable && self.rng.u8(..4) != 0))
            .collect();
        // A strong read next to the window (it may share a block with a weak part).
        let read = (b < len && self.rng.bool()).then(|| (b, self.rng.usize(b + 1..=len)));
        let children = (0..self.rng.usize(0..5))
            .map(|_| {
                let p = self.rng.usize(..parts.len());
                let (lo, hi, w) = parts[p];
                self.node(p, hi - lo, w, depth - 1)
            })
            .collect();
        Node::Weak {
            id,
            reg,
            parts,
            read,
            children,
        }
    }
}

fn gen_program(seed: u64) -> Vec<Node> {
    let mut g = Gen {
        rng: fastrand::Rng::with_seed(seed),
        next: 0,
    };
    let n = g.rng.usize(2..25);
    (0..n).map(|_| g.node(0, N, true, 2)).collect()
}

/// The sequential elision: every task at its spawn, children inside their parent. `base` is
/// where each of the parent's regions starts in `data`.
fn sequential(nodes: &[Node], data: &mut [u64], base: &[usize], seen: &mut [u64]) {
    for n in nodes {
        match n {
            Node::Leaf {
                id,
                reg,
                lo,
                hi,
                write,
            } => {
                let part = &mut data[base[*reg] + lo..base[*reg] + hi];
                if *write {
                    part.iter_mut().for_each(|x| *x = mix(*x, *id as u64));
                } else {
                    seen[*id] = digest(part);
                }
            }
            Node::Weak {
                id,
                reg,
                parts,
                read,
                children,
            } => {
                if let Some((lo, hi)) = read {
                    seen[*id] = digest(&data[base[*reg] + lo..base[*reg] + hi]);
                }
                let inner: Vec<usize> = parts.iter().map(|p| base[*reg] + p.0).collect();
                sequential(children, data, &inner, seen);
            }
        }
    }
}

/// A region a task hands to its children.
enum Reg<'s> {
    Mut(Region<'s, u64>),
    Ref(RegionRef<'s, u64>),
}

fn spawn_nodes<'s>(df: &Scope<'s, '_>, regs: &[Reg<'s>], nodes: Vec<Node>, seen: &'s [AtomicU64]) {
    for n in nodes {
        match n {
            Node::Leaf {
                id,
                reg,
                lo,
                hi,
                write,
            } => match (&regs[reg], write) {
                (Reg::Mut(r), true) => df.spawn(r.part(lo..hi).inout(), move |_, x| {
                    x.iter_mut().for_each(|x| *x = mix(*x, id as u64))
                }),
                (Reg::Mut(r), false) => df.spawn(r.part(lo..hi).read(), move |_, x| {
                    seen[id].store(digest(x), Ordering::Relaxed)
                }),
                (Reg::Ref(r), _) => df.spawn(r.part(lo..hi).read(), move |_, x| {
                    seen[id].store(digest(x), Ordering::Relaxed)
                }),
            },
            Node::Weak {
                id,
                reg,
                parts,
                read,
                children,
            } => {
                let (mut ws, mut rs, mut order) = (Vec::new(), Vec::new(), Vec::new());
                for &(lo, hi, w) in &parts {
                    order.push(w);
                    match (&regs[reg], w) {
                        (Reg::Mut(r), true) => ws.push(r.part(lo..hi).weak_inout()),
                        (Reg::Mut(r), false) => rs.push(r.part(lo..hi).weak_read()),
                        (Reg::Ref(r), _) => rs.push(r.part(lo..hi).weak_read()),
                    }
                }
                let strong = read.map(|(lo, hi)| match &regs[reg] {
                    Reg::Mut(r) => r.part(lo..hi).read(),
                    Reg::Ref(r) => r.part(lo..hi).read(),
                });
                df.spawn((ws, rs, strong), move |df, (ws, rs, strong)| {
                    if let Some(x) = strong {
                        seen[id].store(digest(x), Ordering::Relaxed);
                    }
                    let (mut ws, mut rs) = (ws.into_iter(), rs.into_iter());
                    let regs: Vec<Reg<'_>> = order
                        .iter()
                        .map(|&w| {
                            if w {
                                Reg::Mut(df.weak_region(ws.next().unwrap()))
                            } else {
                                Reg::Ref(df.weak_region_ref(rs.next().unwrap()))
                            }
                        })
                        .collect();
                    spawn_nodes(df, &regs, children, seen);
                });
            }
        }
    }
}

fn ids(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Leaf { id, .. } => *id,
            Node::Weak { id, children, .. } => (*id).max(ids(children)),
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn random_weak_programs_match_their_sequential_elision() {
    within("random weak programs", || {
        let configs = [
            Config::exact(),
            Config::blocks(16).unwrap(),
            Config::thesis(),
        ];
        // Fewer programs under valgrind (`TASKPOOLS_STRESS=small`), the same checks.
        let small = std::env::var_os("TASKPOOLS_STRESS").is_some_and(|v| v == "small");
        let seeds = if small { 30 } else { 150u64 };
        for threads in [1, 2, 4] {
            let rt = Runtime::new(threads).unwrap();
            for seed in 0..seeds {
                let prog = gen_program(seed);
                let n = ids(&prog) + 1;
                let init: Vec<u64> = (0..N as u64).collect();
                let (mut want, mut want_seen) = (init.clone(), vec![0u64; n]);
                sequential(&prog, &mut want, &[0], &mut want_seen);
                for config in configs {
                    let mut got = init.clone();
                    let seen: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
                    rt.install(|| {
                        dataflow::scope_with(config, |df| {
                            let r = df.region(&mut got);
                            spawn_nodes(df, &[Reg::Mut(r)], prog.clone(), &seen);
                        })
                    });
                    let got_seen: Vec<u64> =
                        seen.iter().map(|s| s.load(Ordering::Relaxed)).collect();
                    assert_eq!(
                        (got, got_seen),
                        (want.clone(), want_seen.clone()),
                        "seed {seed}, {threads} threads, {config:?}: {prog:?}"
                    );
                }
            }
        }
    });
}

/// The weak task runs while its predecessor on the part still does: the predecessor waits
/// for the task's body (a strict implementation, which runs the task after it, never meets),
/// and the task's child still sees the predecessor's write.
#[test]
fn a_weak_task_starts_before_its_predecessors_on_the_part_end() {
    within("weak start", || {
        let rt = Runtime::new(2).unwrap();
        let started = AtomicBool::new(false);
        let met = AtomicBool::new(true);
        let mut v = vec![0u64; 4];
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                let (started, met) = (&started, &met);
                df.spawn(r.inout(), move |_, v| {
                    if !wait_until(|| started.load(Ordering::Acquire)) {
                        met.store(false, Ordering::Relaxed);
                    }
                    v.fill(7);
                });
                df.spawn(r.weak_inout(), move |df, w| {
                    started.store(true, Ordering::Release);
                    let w = df.weak_region(w);
                    df.spawn(w.inout(), |_, v| {
                        assert_eq!(v, [7; 4], "the child ran before the outer writer");
                        v.iter_mut().for_each(|x| *x += 1);
                    });
                });
            })
        });
        assert!(
            met.load(Ordering::Relaxed),
            "the weak task waited for its predecessor"
        );
        assert_eq!(v, [8; 4]);
    });
}

/// Early release: a later task on the first part runs once the child on that part is done,
/// while the task's child on the second part still runs (it waits for that later task: a
/// strict implementation, which releases the parts only when the task ends, never meets).
#[test]
fn a_part_is_released_when_its_children_are_done() {
    within("early release", || {
        let rt = Runtime::new(2).unwrap();
        let released = AtomicBool::new(false);
        let met = AtomicBool::new(true);
        let mut v = vec![0u64; 8];
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                let (released, met) = (&released, &met);
                let halves = [r.part(0..4).weak_inout(), r.part(4..8).weak_inout()];
                df.spawn(halves, move |df, [a, b]| {
                    let (a, b) = (df.weak_region(a), df.weak_region(b));
                    df.spawn(a.inout(), |_, a| a.fill(1));
                    df.spawn(b.inout(), move |_, b| {
                        if !wait_until(|| released.load(Ordering::Acquire)) {
                            met.store(false, Ordering::Relaxed);
                        }
                        b.fill(2);
                    });
                });
                df.spawn(r.part(0..4).read(), move |_, a| {
                    assert_eq!(a, [1; 4], "the part was released before its child ended");
                    released.store(true, Ordering::Release);
                });
                df.spawn(r.read(), |_, v| assert_eq!(v, [1, 1, 1, 1, 2, 2, 2, 2]));
            })
        });
        assert!(
            met.load(Ordering::Relaxed),
            "the first part waited for the whole task"
        );
    });
}

/// A long stream of weak tasks past the spawn throttle: a weak task run at once returns
/// before it completes, so the throttled spawner runs its children before it goes on, and
/// the weak tasks started but not completed stay a handful (on one worker, one at a time)
/// rather than growing with the stream (1968 of the 2000 at once without that).
#[test]
fn a_stream_of_weak_tasks_stays_within_the_throttle() {
    within("weak stream", || {
        const TASKS: usize = 2000;
        let rt = Runtime::new(1).unwrap();
        let (live, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let mut v = vec![0u64; TASKS];
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                let (live, most) = (&live, &most);
                for i in 0..TASKS {
                    df.spawn(r.part(i..i + 1).weak_inout(), move |df, w| {
                        let n = live.fetch_add(1, Ordering::Relaxed) + 1;
                        most.fetch_max(n, Ordering::Relaxed);
                        let w = df.weak_region(w);
                        df.spawn(w.inout(), move |_, x| {
                            x[0] = i as u64;
                            live.fetch_sub(1, Ordering::Relaxed);
                        });
                    });
                }
            })
        });
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        let most = most.load(Ordering::Relaxed);
        assert!(
            most <= 8,
            "{most} weak tasks were started and not completed at once"
        );
    });
}

/// The spawn throttle counts tasks, not a weak task's gates (two per weak part): on one
/// worker, 32 weak tasks of 16 parts each are all queued before any starts, as 32 plain tasks
/// would be (the mark is 64 per worker). Counted as children, their gates (two per part, the
/// enter gates completed at once) made 17 children of each, and the fifth task ran at once.
#[test]
fn weak_gates_do_not_count_against_the_throttle() {
    within("weak gates and the throttle", || {
        const TASKS: usize = 32;
        const PARTS: usize = 16;
        let rt = Runtime::new(1).unwrap();
        let (started, spawned) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let mut v = vec![0u64; TASKS * PARTS];
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                let (started, spawned) = (&started, &spawned);
                for i in 0..TASKS {
                    let parts: Vec<_> = (i * PARTS..(i + 1) * PARTS)
                        .map(|k| r.part(k..k + 1).weak_inout())
                        .collect();
                    df.spawn(parts, move |df, parts| {
                        // How many spawns had returned when this one started.
                        started.fetch_max(spawned.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                        for w in parts {
                            let w = df.weak_region(w);
                            df.spawn(w.out(), move |_, x| x[0] = i as u64);
                        }
                    });
                    spawned.store(i + 1, Ordering::Relaxed);
                }
                // No task has started while the closure spawned.
                assert_eq!(
                    started.load(Ordering::Relaxed),
                    0,
                    "a weak task started early"
                );
            })
        });
        assert!(v.iter().enumerate().all(|(k, &x)| x == (k / PARTS) as u64));
    });
}

/// Two weak levels: a child declares a weak part of its parent's weak part; the grandchild
/// waits for the outermost predecessor, and the outer successor for the grandchild.
#[test]
fn weak_parts_nest() {
    within("weak nesting", || {
        for threads in [1, 2] {
            let rt = Runtime::new(threads).unwrap();
            let mut v = vec![1u64; 8];
            let sum = AtomicU64::new(0);
            rt.install(|| {
                dataflow::scope(|df| {
                    let r = df.region(&mut v);
                    let sum = &sum;
                    df.spawn(r.inout(), |_, v| v.iter_mut().for_each(|x| *x *= 3));
                    df.spawn(r.weak_inout(), |df, w| {
                        let w = df.weak_region(w);
                        for q in w.chunks(4) {
                            df.spawn(q.weak_inout(), |df, q| {
                                let q = df.weak_region(q);
                                df.spawn(q.inout(), |_, q| q.iter_mut().for_each(|x| *x += 1));
                            });
                        }
                    });
                    df.spawn(r.read(), move |_, v| {
                        sum.store(v.iter().sum(), Ordering::Relaxed);
                    });
                })
            });
            assert_eq!(sum.load(Ordering::Relaxed), 8 * 4);
            assert_eq!(v, [4; 8]);
        }
    });
}

/// A weak task may start before its predecessors on its parts end, so it never waits for
/// its children: `sync` and `wait_for` in it are refused with a clear panic; its children can
/// still sync and wait on their own children.
#[test]
fn sync_and_wait_for_are_refused_in_weak_tasks() {
    within("weak sync", || {
        let rt = Runtime::new(2).unwrap();
        for wait in [false, true] {
            let mut v = vec![0u64; 6];
            let r = rt.install(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    dataflow::scope(|df| {
                        let r = df.region(&mut v);
                        df.spawn(r.weak_inout(), move |df, w| {
                            let w = df.weak_region(w);
                            df.spawn(w.part(0..3).inout(), |_, a| a.fill(6));
                            if wait {
                                df.wait_for(w.part(0..3).read(), |_| ());
                            } else {
                                df.sync();
                            }
                        });
                    })
                }))
            });
            let msg = message(&*r.unwrap_err());
            let what = if wait { "wait_for" } else { "sync" };
            assert!(
                msg.contains(&format!("{what} in a task with weak accesses")),
                "{msg}"
            );
        }
        let mut v = vec![0u64; 6];
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                df.spawn(r.out(), |_, v| v.fill(5));
                df.spawn(r.weak_inout(), |df, w| {
                    let w = df.weak_region(w);
                    df.spawn(w.inout(), |df, v| {
                        let v = df.region(v);
                        df.spawn(v.part(0..3).inout(), |_, a| {
                            a.iter_mut().for_each(|x| *x += 1)
                        });
                        df.sync();
                        let s = df.wait_for(v.part(0..3).read(), |a| a.iter().sum::<u64>());
                        assert_eq!(s, 18);
                    });
                });
            })
        });
        assert_eq!(v, [6, 6, 6, 5, 5, 5]);
    });
}

/// A weak read lets its children read beside other readers, after the writer before it and
/// before the writer after it.
#[test]
fn weak_reads_order_like_reads() {
    within("weak read", || {
        let rt = Runtime::new(2).unwrap();
        let mut v = vec![0u64; 4];
        let seen = AtomicU64::new(0);
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                let seen = &seen;
                df.spawn(r.out(), |_, v| v.fill(2));
                df.spawn(r.weak_read(), move |df, w| {
                    let w = df.weak_region_ref(w);
                    for c in w.chunks(2) {
                        df.spawn(c.read(), move |_, c| {
                            seen.fetch_add(c.iter().sum(), Ordering::Relaxed);
                        });
                    }
                });
                df.spawn(r.out(), |_, v| v.fill(9));
            })
        });
        assert_eq!((seen.load(Ordering::Relaxed), v), (8, vec![9; 4]));
    });
}

/// A panicking child cancels what comes after its part outside, and the scope resumes the
/// panic; a panicking body does the same for all its parts; every task is accounted for.
#[test]
fn panics_in_weak_tasks_cancel_the_outer_successors() {
    within("weak panics", || {
        let rt = Runtime::new(2).unwrap();
        for body_panics in [false, true] {
            let after = AtomicUsize::new(0);
            let mut v = vec![0u64; 4];
            let r = rt.install(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    dataflow::scope(|df| {
                        let r = df.region(&mut v);
                        let after = &after;
                        df.spawn(r.weak_inout(), move |df, w| {
                            let w = df.weak_region(w);
                            df.spawn(w.inout(), |_, _| panic!("child fails"));
                            if body_panics {
                                panic!("body fails");
                            }
                        });
                        df.spawn(r.read(), move |_, _| {
                            after.fetch_add(1, Ordering::Relaxed);
                        });
                    })
                }))
            });
            let msg = message(&*r.unwrap_err());
            assert!(msg.ends_with("fails"), "{msg}");
            assert_eq!(
                after.load(Ordering::Relaxed),
                0,
                "a successor of a failed part ran"
            );
        }
        // try_scope counts the cancelled successor.
        let mut v = vec![0u64; 4];
        let e = rt
            .install(|| {
                dataflow::try_scope(Config::default(), |df| {
                    let r = df.region(&mut v);
                    df.spawn(r.weak_inout(), |df, w| {
                        let w = df.weak_region(w);
                        df.spawn(w.inout(), |_, _| panic!("child fails"));
                    });
                    df.spawn(r.read(), |_, _| {});
                })
            })
            .unwrap_err();
        assert!(matches!(e.cause, Cause::Panic(_)));
        assert_eq!(e.skipped, 1);
    });
}

/// A cancelled scope skips the weak task's children and successors without a hang; a weak
/// task whose predecessor failed never runs its body, and its successors are cancelled too.
#[test]
fn cancelled_and_skipped_weak_tasks_release_their_parts() {
    within("weak cancel", || {
        let rt = Runtime::new(2).unwrap();
        let ran = AtomicUsize::new(0);
        let mut v = vec![0u64; 4];
        let e = rt
            .install(|| {
                dataflow::try_scope(Config::default(), |df| {
                    let r = df.region(&mut v);
                    let ran = &ran;
                    df.spawn(r.inout(), |_, _| panic!("first fails"));
                    df.spawn(r.weak_inout(), move |_, _| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                    df.spawn(r.read(), move |_, _| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                })
            })
            .unwrap_err();
        // The weak task does not wait for the failed writer: it runs; its part stays
        // poisoned, so the read after it is cancelled.
        assert_eq!((ran.load(Ordering::Relaxed), e.skipped), (1, 1));
        let ran = AtomicUsize::new(0);
        let e = rt
            .install(|| {
                dataflow::try_scope(Config::default(), |df| {
                    let r = df.region(&mut v);
                    let ran = &ran;
                    df.spawn(r.weak_inout(), move |df, w| {
                        let w = df.weak_region(w);
                        df.cancel();
                        df.spawn(w.inout(), move |_, _| {
                            ran.fetch_add(1, Ordering::Relaxed);
                        });
                    });
                    df.spawn(r.read(), move |_, _| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                })
            })
            .unwrap_err();
        assert!(matches!(e.cause, Cause::Cancelled));
        assert_eq!(ran.load(Ordering::Relaxed), 0);
    });
}

/// Misuse is refused at the spawn: a weak write overlapping another access of the same task.
#[test]
fn a_weak_write_overlapping_another_access_is_refused() {
    let rt = Runtime::new(1).unwrap();
    let mut v = vec![0u64; 4];
    let r = rt.install(|| {
        catch_unwind(AssertUnwindSafe(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                df.spawn((r.weak_inout(), r.part(0..1).read()), |_, _| {});
            })
        }))
    });
    assert!(message(&*r.unwrap_err()).contains("overlap"));
}

/// Weak and commutative accesses in one spawn, and a weak access given to `wait_for`, are
/// refused with a clear panic before anything is queued (a weak task starts before its
/// predecessors end: holding a commutative lock meanwhile could hang its siblings; a wait
/// never runs a body, so it would never release the part).
#[test]
fn weak_with_commutative_or_in_wait_for_is_refused() {
    within("weak misuse", || {
        let rt = Runtime::new(1).unwrap();
        let mut v = vec![0u64; 4];
        let r = rt.install(|| {
            catch_unwind(AssertUnwindSafe(|| {
                dataflow::scope(|df| {
                    let r = df.region(&mut v);
                    let (a, b) = (r.part(0..2), r.part(2..4));
                    df.spawn((a.commutative(), b.weak_inout()), |_, _| {});
                })
            }))
        });
        assert!(message(&*r.unwrap_err()).contains("cannot also have commutative"));
        let r = rt.install(|| {
            catch_unwind(AssertUnwindSafe(|| {
                dataflow::scope(|df| {
                    let r = df.region(&mut v);
                    df.wait_for(r.weak_inout(), |_| ());
                })
            }))
        });
        assert!(message(&*r.unwrap_err()).contains("not commutative, reduction or weak"));
        // The scope is still usable afterwards.
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                df.spawn(r.weak_inout(), |df, w| {
                    let w = df.weak_region(w);
                    df.spawn(w.inout(), |_, v| v.fill(3));
                });
            })
        });
        assert_eq!(v, [3; 4]);
    });
}

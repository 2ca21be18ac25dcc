//! Targeted data-flow tests: refused declarations and sizes, panics and the tasks they cancel,
//! nesting and `sync`, zero-sized elements, the spawn throttle, and tiles split for
//! fork-join.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use taskpools::dataflow::{self, Config, TileMut};
use taskpools::forkjoin::{Pool, Runtime};

#[test]
fn overlapping_declarations_with_a_write_in_one_spawn_are_refused_before_anything_runs() {
    let ran = AtomicUsize::new(0);
    let mut v = vec![0u32; 16];
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut v);
            df.spawn((r.part(0..8).read(), r.part(4..12).inout()), |_, _| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
        })
    }));
    let msg = r.unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.contains("overlap"), "{msg}");
    assert_eq!(ran.load(Ordering::Relaxed), 0);
    // Reads may overlap; disjoint tiles of one matrix may be written together.
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        let m = r.matrix(4, 4);
        df.spawn((r.part(0..8).read(), r.part(4..12).read()), |_, _| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        df.spawn(
            (m.tile(0, 0, 2).inout(), m.tile(0, 1, 2).out()),
            |_, (mut a, mut b)| {
                a[(1, 1)] = 1;
                b[(1, 1)] = 2;
            },
        );
    });
    assert_eq!(ran.load(Ordering::Relaxed), 1);
    assert_eq!(v[5], 1);
    assert_eq!(v[7], 2);
}

/// One spawn declares two strided sub-matrices of 60 000 rows with different leading
/// dimensions (even elements, and every fourth odd one): they do not overlap, so the spawn
/// runs and writes both; moved onto shared elements, the same pair is refused. (How much
/// work the check does is counted in the unit test
/// `the_overlap_check_of_two_strided_accesses_is_linear_in_their_rows`.)
#[test]
fn two_long_strided_accesses_with_different_leading_dimensions_are_checked_for_overlap() {
    const ROWS: usize = 60_000;
    let mut v = vec![0u8; 4 * ROWS];
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        let evens = r.matrix_ld(ROWS, 1, 2).sub(0, 0, ROWS, 1);
        let odds = r.matrix_ld(ROWS, 2, 4).sub(0, 1, ROWS, 1);
        df.spawn((evens.inout(), odds.out()), |_, (mut a, mut b)| {
            a[(ROWS - 1, 0)] = 1;
            b[(ROWS - 1, 0)] = 2;
        });
    });
    assert_eq!((v[2 * (ROWS - 1)], v[4 * (ROWS - 1) + 1]), (1, 2));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut v);
            let evens = r.matrix_ld(ROWS, 1, 2).sub(0, 0, ROWS, 1);
            let fourths = r.matrix_ld(ROWS, 2, 4).sub(0, 0, ROWS, 1);
            df.spawn((evens.read(), fourths.out()), |_, _| {});
        })
    }));
    let msg = r.unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.contains("overlap"), "{msg}");
}

#[test]
fn a_panicking_task_cancels_its_dependents_and_its_siblings_finish() {
    for pool in Pool::ALL {
        let rt = Runtime::builder().threads(2).pool(pool).build().unwrap();
        let mut v = vec![0u64; 64];
        let r = rt.install(|| {
            dataflow::try_scope(Config::exact().with_index_block(64).unwrap(), |df| {
                let r = df.region(&mut v);
                let (a, b) = (r.part(0..32), r.part(32..64));
                df.spawn(a.out(), |_, a| {
                    a[0] = 1;
                    panic!("expected test panic in a data-flow task");
                });
                // Two dependents of the panicking task, one through another.
                df.spawn(a.inout(), |_, a| a[1] = 1);
                df.spawn((a.read(), b.part(1..32).inout()), |_, (_, b)| b[0] = 1);
                // An independent sibling.
                df.spawn(b.part(0..1).out(), |_, b| b[0] = 7);
            })
        });
        let p = r.unwrap_err();
        assert_eq!(p.skipped, 2, "{pool}");
        assert!(format!("{p:?}").contains("expected test panic"));
        assert_eq!((v[0], v[1], v[32], v[33]), (1, 0, 7, 0), "{pool}");
        // The runtime is still usable.
        assert_eq!(rt.join(|| 1, || 2), (1, 2));
    }
}

#[test]
fn nested_children_finish_before_their_parent_releases_its_successors() {
    // Each parent hands its half to 8 children that each wait a little; the successor reads
    // the whole array and must see every child's write.
    let mut v = vec![0u64; 1024];
    let seen = Arc::new(AtomicUsize::new(0));
    let seen2 = seen.clone();
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        for half in r.chunks(512) {
            df.spawn(half.out(), |df, h| {
                let r = df.region(h);
                for part in r.chunks(64) {
                    df.spawn(part.out(), |_, p| {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        p.iter_mut().for_each(|x| *x = 1);
                    });
                }
            });
        }
        df.spawn(r.read(), move |_, all| {
            seen2.store(all.iter().filter(|&&x| x == 1).count(), Ordering::Relaxed);
        });
    });
    assert_eq!(seen.load(Ordering::Relaxed), 1024);
}

#[test]
fn sync_waits_for_the_children_so_far_and_frees_their_memory() {
    let mut v = vec![0u64; 256];
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        for round in 0..100u64 {
            for c in r.chunks(16) {
                df.spawn(c.inout(), move |_, c| {
                    c.iter_mut().for_each(|x| *x += round)
                });
            }
            df.sync();
        }
    });
    assert!(v.iter().all(|&x| x == (0..100).sum::<u64>()));
}

#[test]
fn tiles_split_for_fork_join_are_disjoint_views() {
    let mut v: Vec<u32> = (0..64).collect();
    let tiles = TileMut::from_slice(&mut v, 8, 8).into_tiles(3);
    assert_eq!(tiles.len(), 3);
    assert_eq!(tiles[0].len(), 3);
    assert_eq!((tiles[2][2].rows(), tiles[2][2].cols()), (2, 2));
    taskpools::forkjoin::scope(|s| {
        for row in tiles {
            for mut t in row {
                s.spawn(move |_| {
                    for i in 0..t.rows() {
                        t.row_mut(i).iter_mut().for_each(|x| *x *= 2);
                    }
                });
            }
        }
    });
    assert!(v.iter().enumerate().all(|(i, &x)| x == 2 * i as u32));
}

#[test]
fn bad_block_sizes_are_refused() {
    assert!(Config::blocks(0).is_err());
    assert!(Config::exact().with_index_block(0).is_err());
    assert!(Config::exact()
        .with_index_block(Config::MAX_BLOCK + 1)
        .is_err());
    let e = Config::blocks(0).unwrap_err().to_string();
    assert!(e.contains("block size"), "{e}");
}

#[test]
fn sizes_that_overflow_are_refused_not_wrapped() {
    let mut v = [0u8; 16];
    let (_a, b) = v.split_at_mut(8);
    let caught = |f: &dyn Fn()| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err();
    dataflow::scope(|df| {
        let r = df.region(&mut *b);
        let m = r.matrix(2, 4);
        assert!(caught(&|| {
            m.sub(usize::MAX, 0, 1, 1);
        }));
        assert!(caught(&|| {
            m.sub(0, 1, 1, usize::MAX);
        }));
        assert!(caught(&|| {
            r.matrix_ld(3, 1, usize::MAX / 2 + 1);
        }));
        assert!(caught(&|| {
            m.tile(usize::MAX, 0, 2);
        }));
    });
    let w = [0u8; 4];
    assert!(caught(&|| {
        TileMut::from_slice(&mut [0u8; 4], 1 << 33, 1 << 31);
    }));
    assert!(caught(&|| {
        dataflow::TileRef::from_slice(&w, usize::MAX, 2);
    }));
}

/// A zero-sized type whose `&mut`s must not be live on two threads at once.
struct Token;

#[test]
fn tasks_over_zero_sized_elements_are_still_ordered() {
    static INSIDE: AtomicUsize = AtomicUsize::new(0);
    static CLASHES: AtomicUsize = AtomicUsize::new(0);
    let rt = Runtime::builder().threads(2).build().unwrap();
    let mut tokens = vec![Token, Token];
    rt.install(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut tokens);
            for _ in 0..20 {
                df.spawn(r.part(0..1).inout(), |_, _t: &mut [Token]| {
                    if INSIDE.fetch_add(1, Ordering::SeqCst) != 0 {
                        CLASHES.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    INSIDE.fetch_sub(1, Ordering::SeqCst);
                });
            }
        })
    });
    assert_eq!(CLASHES.load(Ordering::SeqCst), 0);
}

#[test]
fn a_late_dependent_of_a_failed_task_is_cancelled_too() {
    let rt = Runtime::builder().threads(2).build().unwrap();
    let mut v = vec![0u64; 8];
    let ran = AtomicUsize::new(0);
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            let r = df.region(&mut v);
            df.spawn(r.inout(), |_, x| {
                x[0] = 1;
                panic!("expected test panic in a data-flow task");
            });
            // Let the other worker run (and fail) it before the dependent is spawned.
            std::thread::sleep(std::time::Duration::from_millis(200));
            df.spawn(r.read(), |_, _| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
        })
    });
    let p = r.unwrap_err();
    assert_eq!(p.skipped, 1);
    assert_eq!(ran.load(Ordering::Relaxed), 0);
}

#[test]
fn a_panicking_destructor_of_a_cancelled_task_is_reported_not_an_abort() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("expected test panic in a destructor");
        }
    }
    let rt = Runtime::builder().threads(2).build().unwrap();
    let mut v = vec![0u64; 8];
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            let r = df.region(&mut v);
            df.spawn(r.inout(), |_, _| {
                panic!("expected test panic in a data-flow task")
            });
            let bomb = Bomb;
            df.spawn(r.inout(), move |_, _| {
                let _keep = &bomb;
            });
        })
    });
    let p = r.unwrap_err();
    assert_eq!(p.skipped, 1);
    assert_eq!(rt.join(|| 1, || 2), (1, 2));
}

#[test]
fn sync_resumes_a_child_s_panic() {
    let mut v = vec![0u64; 8];
    let after = AtomicUsize::new(0);
    let r = dataflow::try_scope(Config::default(), |df| {
        let r = df.region(&mut v);
        df.spawn(r.inout(), |_, _| {
            panic!("expected test panic in a data-flow task")
        });
        df.sync();
        after.fetch_add(1, Ordering::Relaxed);
    });
    assert!(r.is_err());
    assert_eq!(after.load(Ordering::Relaxed), 0);
}

#[test]
fn long_streams_past_the_throttle_match_the_sequential_run() {
    // Far more children than the spawner lets queue up, so spawns run tasks themselves
    // (ready ones at once, else a queued job): the result must not change.
    const BLOCKS: usize = 32;
    let mut rng = fastrand::Rng::with_seed(11);
    let tasks: Vec<(usize, usize, usize)> = (0..20_000)
        .map(|_| {
            (
                rng.usize(..BLOCKS),
                rng.usize(..BLOCKS),
                rng.usize(..BLOCKS),
            )
        })
        .collect();
    let mut expected = vec![1u64; BLOCKS * 4];
    for &(w, a, b) in &tasks {
        if w != a && w != b {
            let s = expected[a * 4].wrapping_mul(3) ^ expected[b * 4];
            expected[w * 4] = expected[w * 4].wrapping_add(s);
        }
    }
    for pool in Pool::ALL {
        for threads in [1, 2] {
            let rt = Runtime::builder()
                .threads(threads)
                .pool(pool)
                .build()
                .unwrap();
            let mut d = vec![1u64; BLOCKS * 4];
            rt.install(|| {
                dataflow::scope_with(Config::blocks(32).unwrap(), |df| {
                    let r = df.region(&mut d);
                    let p: Vec<_> = r.chunks(4).collect();
                    for &(w, a, b) in &tasks {
                        if w != a && w != b {
                            df.spawn((p[w].inout(), p[a].read(), p[b].read()), |_, (w, a, b)| {
                                w[0] = w[0].wrapping_add(a[0].wrapping_mul(3) ^ b[0]);
                            });
                        }
                    }
                })
            });
            assert_eq!(d, expected, "{pool}, {threads} threads");
        }
    }
}

#[test]
fn a_huge_slice_of_zero_sized_elements_is_one_slot() {
    let mut v = vec![(); usize::MAX];
    let n = AtomicUsize::new(0);
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        df.spawn(r.part(0..10).inout(), |_, _| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        df.spawn(r.part(usize::MAX - 10..usize::MAX).read(), |_, _| {
            n.fetch_add(1, Ordering::Relaxed);
        });
    });
    assert_eq!(n.load(Ordering::Relaxed), 2);
}

#[test]
fn after_a_caught_sync_panic_the_scope_goes_on_afresh() {
    let mut v = vec![0u64; 2];
    let r = dataflow::try_scope(Config::default(), |df| {
        let r = df.region(&mut v);
        df.spawn(r.part(0..1).inout(), |_, _| {
            panic!("expected test panic in a data-flow task")
        });
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| df.sync())).is_err();
        df.spawn(r.part(0..1).inout(), |_, x| x[0] = 42);
        caught
    });
    assert!(r.unwrap());
    assert_eq!(v[0], 42);
}

/// Read-only tiles split like mutable ones, and views built from raw parts see the same
/// elements as views built from slices.
#[test]
fn read_only_tiles_split_and_raw_views_agree_with_slice_views() {
    use taskpools::dataflow::TileRef;
    let (rows, cols) = (6, 7);
    let data: Vec<u32> = (0..rows * cols).map(|x| x as u32).collect();
    let t = TileRef::from_slice(&data, rows, cols);
    let [a, b, c, d] = t.quadrants(2, 3);
    assert_eq!((a.rows(), a.cols(), d.rows(), d.cols()), (2, 3, 4, 4));
    assert_eq!(b[(0, 0)], 3);
    assert_eq!(c[(0, 0)], (2 * cols) as u32);
    assert_eq!(d[(3, 3)], (5 * cols + 6) as u32);
    assert_eq!(d.row(1), &data[3 * cols + 3..4 * cols]);
    let (top, bottom) = t.split_at_row(rows);
    assert_eq!((top.rows(), bottom.rows()), (rows, 0));
    // SAFETY: a 3×2 view inside `data` (rows 7 apart), only read here.
    let raw = unsafe { TileRef::from_raw_parts(data.as_ptr().add(8), 3, 2, cols) };
    assert_eq!(raw.row(2), &data[22..24]);
    let mut m = data.clone();
    // SAFETY: a 2×2 view inside `m`, used only through `v` meanwhile.
    let mut v = unsafe { TileMut::from_raw_parts(m.as_mut_ptr().add(cols), 2, 2, cols) };
    v[(1, 1)] = 99;
    let r = v.into_ref();
    assert_eq!(r[(1, 1)], 99);
    assert_eq!(m[2 * cols + 1], 99);
}

#[test]
#[should_panic(expected = "split at column 8 of a tile of 7 columns")]
fn read_only_tiles_refuse_a_split_outside() {
    let data = vec![0u8; 42];
    let _ = taskpools::dataflow::TileRef::from_slice(&data, 6, 7).split_at_col(8);
}

//! Read-only regions (`Scope::region_ref`, `Scope::matrix_ref`) and one-element accesses
//! (`at(i)`): readers of shared data run together, elements come as `&T` / `&mut T` and are
//! ordered like any other footprint.

use std::sync::atomic::{AtomicU64, Ordering};

use taskpools::dataflow::{self, Config};
use taskpools::Runtime;

use super::meet::Meeting;

#[test]
fn readers_of_a_read_only_region_run_together_and_wait_for_nothing() {
    let rt = Runtime::new(2).unwrap();
    let table: Vec<u64> = (1..=64).collect();
    let mut sums = [0u64; 2];
    let meeting = Meeting::default();
    let m = &meeting;
    rt.install(|| {
        dataflow::scope(|df| {
            let (t, s) = (df.region_ref(&table), df.region(&mut sums));
            // Two readers of overlapping parts (one the whole region): neither may wait for
            // the other, so they meet.
            df.spawn((t.read(), s.at(0).out()), move |_, (t, s)| {
                assert!(m.arrive(), "the first reader never saw the second");
                *s = t.iter().sum();
            });
            df.spawn((t.part(0..32).read(), s.at(1).out()), move |_, (t, s)| {
                assert!(m.arrive(), "the second reader never saw the first");
                *s = t.iter().sum();
            });
            // The data stays readable outside the scope's tasks meanwhile.
            assert_eq!(table[63], 64);
        })
    });
    assert_eq!(meeting.met(), 2);
    assert_eq!(sums, [64 * 65 / 2, 32 * 33 / 2]);
}

#[test]
fn read_only_matrices_hand_out_the_tiles_they_name() {
    // A read-only 6 × 6 matrix, read tile by tile (3 × 3 tiles) and, inside a task, through
    // `matrix_ref` in quadrants of its tile; each result lands in one element.
    let m: Vec<u32> = (0..36).collect();
    let mut out = [0u32; 4 + 4];
    dataflow::scope(|df| {
        let (a, o) = (df.region_ref(&m).matrix(6, 6), df.region(&mut out));
        for k in 0..4 {
            let (i, j) = (k / 2, k % 2);
            df.spawn((a.tile(i, j, 3).read(), o.at(k).out()), |_, (t, o)| {
                *o = (0..3).map(|r| t.row(r).iter().sum::<u32>()).sum();
            });
        }
        df.spawn(
            (a.sub(0, 0, 4, 4).read(), o.part(4..8).out()),
            |df, (t, o)| {
                let (t, o) = (df.matrix_ref(t), df.region(o));
                for q in 0..4 {
                    df.spawn(
                        (t.tile(q / 2, q % 2, 2).read(), o.at(q).out()),
                        |_, (t, o)| *o = t[(0, 0)] + t[(1, 1)],
                    );
                }
            },
        );
    });
    let tile = |r0: u32, c0: u32, h: u32| -> u32 {
        (r0..r0 + h)
            .flat_map(|r| (c0..c0 + h).map(move |c| r * 6 + c))
            .sum()
    };
    assert_eq!(
        out[..4],
        [tile(0, 0, 3), tile(0, 3, 3), tile(3, 0, 3), tile(3, 3, 3)]
    );
    // Quadrant (qr, qc) of the top-left 4 × 4: elements (2qr, 2qc) and (2qr + 1, 2qc + 1).
    let diag = |qr: u32, qc: u32| (2 * qr * 6 + 2 * qc) + ((2 * qr + 1) * 6 + 2 * qc + 1);
    assert_eq!(out[4..], [diag(0, 0), diag(0, 1), diag(1, 0), diag(1, 1)]);
}

/// A random program of one-element tasks over 8 cells: increments (`inout`), and updates
/// `b = 31 b + a` that read one cell and write another (order matters). Under every
/// configuration and on 1 and 2 threads, the result must be the sequential one.
#[test]
fn element_accesses_give_the_sequential_result_under_dependences() {
    const CELLS: usize = 8;
    let mut rng = fastrand::Rng::with_seed(5);
    let ops: Vec<(usize, Option<usize>)> = (0..3000)
        .map(|_| {
            let w = rng.usize(..CELLS);
            let r = rng.usize(..CELLS);
            (w, (rng.bool() && r != w).then_some(r))
        })
        .collect();
    let mut expected = [1u64; CELLS];
    for &(w, r) in &ops {
        match r {
            None => expected[w] += 1,
            Some(r) => expected[w] = expected[w].wrapping_mul(31).wrapping_add(expected[r]),
        }
    }
    for threads in [1, 2] {
        let rt = Runtime::new(threads).unwrap();
        for config in [
            Config::default(),
            Config::thesis(),
            Config::blocks(8).unwrap(),
        ] {
            let mut cells = [1u64; CELLS];
            rt.install(|| {
                dataflow::scope_with(config, |df| {
                    let c = df.region(&mut cells);
                    // Half the accesses go through a part, to check `Part::at`'s offset.
                    let hi = c.part(CELLS / 2..CELLS);
                    let at = |i: usize| {
                        if i >= CELLS / 2 && i % 2 == 0 {
                            hi.at(i - CELLS / 2)
                        } else {
                            c.at(i)
                        }
                    };
                    for &(w, r) in &ops {
                        match r {
                            None => df.spawn(at(w).inout(), |_, x: &mut u64| *x += 1),
                            Some(r) => df.spawn((at(w).inout(), at(r).read()), |_, (x, a)| {
                                *x = x.wrapping_mul(31).wrapping_add(*a)
                            }),
                        }
                    }
                })
            });
            assert_eq!(cells, expected, "{threads} threads, {config:?}");
        }
    }
}

#[test]
fn elements_of_read_only_regions_are_read_in_place() {
    let params = [3u64, 5, 7];
    let total = AtomicU64::new(0);
    let t = &total;
    dataflow::scope(|df| {
        let p = df.region_ref(&params);
        let tail = p.part(1..3);
        df.spawn((p.at(0).read(), tail.at(1).read()), move |_, (a, b)| {
            t.fetch_add(a * b, Ordering::Relaxed);
        });
        // The same element twice in one spawn: reads may overlap.
        df.spawn((p.at(1).read(), tail.at(0).read()), move |_, (a, b)| {
            t.fetch_add(a + b, Ordering::Relaxed);
        });
    });
    assert_eq!(total.into_inner(), 3 * 7 + 5 + 5);
}

#[test]
#[should_panic(expected = "data-flow element 3 is out of bounds: the part has 3 elements")]
fn an_element_outside_its_part_is_refused() {
    let mut v = [0u8; 8];
    dataflow::scope(|df| {
        let _ = df.region(&mut v).part(2..5).at(3);
    });
}

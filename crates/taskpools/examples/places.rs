//! Locality-aware places (after Weibel's LASSI): a runtime whose workers are grouped into
//! places, each with a shared deque; spawns and working-phase puts carry a hint naming the
//! place that should run them (near their data, say). A hinted task may still be stolen by
//! another place when its own is busy, and it runs exactly once.
//!
//! The places here are a shape, `2x1` (two places of one worker each), which runs on any
//! machine; `Places::parse` also takes the machine's topology (`cores`, `ll_caches`,
//! `numa_domains`, `sockets`, read from sysfs on Linux; elsewhere every CPU counts as its own
//! core in one cache and package) or explicit core lists such as `{0},{1}`.
//!
//! ```text
//! cargo run --release -p taskpools --example places [-- N]
//! ```
//! N is the number of hinted leaf tasks of the working phase (default 100 000, at most
//! 10 000 000).

use taskpools::places::{current_place, Level, PlaceId, Places, Topology};
use taskpools::{Builder, Ctx, Runtime, Task};

/// A working phase's tasks: the root puts `n` leaves, leaf `i` hinted at place `i % places`.
enum Job {
    Root(usize),
    Leaf(usize),
}

/// Per-worker state: (leaves run, leaves that ran at the place they were hinted at).
impl Task<(u64, u64)> for Job {
    fn run(self, ctx: &mut Ctx<'_, Self, (u64, u64)>) {
        match self {
            Job::Root(n) => {
                for i in 0..n {
                    let place = PlaceId(i % ctx.places());
                    // A hint to a place that does not exist would hand the task back in the
                    // error; these all exist.
                    if ctx.put_at(place, Job::Leaf(i)).is_err() {
                        unreachable!("place {place} exists");
                    }
                }
            }
            Job::Leaf(i) => {
                let home = current_place() == Some(PlaceId(i % ctx.places()));
                let (run, at_home) = ctx.local();
                *run += 1;
                *at_home += u64::from(home);
            }
        }
    }
}

fn main() -> Result<(), taskpools::Error> {
    let n = size_arg();

    // What this machine's topology looks like to the places.
    let topo = Topology::detect();
    let groups: Vec<String> = Level::ALL
        .into_iter()
        .map(|l| format!("{} {}", topo.groups(l).len(), l.name()))
        .collect();
    println!("this machine: {}", groups.join(", "));

    let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    assert_eq!(rt.place_count(), 2);

    // Fork-join spawns with a hint: each half of the data is summed at its own place.
    let data: Vec<u64> = (1..=1_000_000).collect();
    let (left, right) = data.split_at(data.len() / 2);
    let mut sums = [(0u64, None), (0u64, None)];
    rt.scope(|s| -> Result<(), taskpools::Error> {
        for (i, (half, slot)) in [left, right].into_iter().zip(&mut sums).enumerate() {
            s.spawn_at(PlaceId(i), move |_| {
                *slot = (half.iter().sum(), current_place());
            })?;
        }
        // A hint to a place that does not exist is an error value, before anything runs.
        assert!(s.spawn_at(PlaceId(2), |_| ()).is_err());
        Ok(())
    })?;
    assert_eq!(sums[0].0 + sums[1].0, 1_000_000 * 1_000_001 / 2);
    let at = |p: Option<PlaceId>| p.map_or("no place".to_string(), |p| p.to_string());
    println!(
        "two hinted spawns summed the halves: {} at {} (hinted place 0), {} at {} (hinted \
         place 1)",
        sums[0].0,
        at(sums[0].1),
        sums[1].0,
        at(sums[1].1)
    );

    // A working phase with hints (`run_hinted_*`): leaf i is put at place i % 2.
    let phase = Builder::new().runtime(&rt).pool_name("chase-lev")?;
    let (report, (run, at_home)) =
        phase.run_hinted_reduce(|_| (0, 0), [Job::Root(n)], |a, b| (a.0 + b.0, a.1 + b.1))?;
    assert_eq!(run, n as u64, "every leaf ran exactly once");
    assert_eq!(report.tasks_run(), n as u64 + 1);
    println!(
        "hinted working phase: {run} leaves, {at_home} ({:.1} %) ran at their hinted place",
        100.0 * at_home as f64 / run.max(1) as f64
    );

    // The runtime's per-worker counters: hinted fork-join tasks run at their place (local)
    // or taken by another place (remote).
    for (w, c) in rt.worker_counters().iter().enumerate() {
        println!(
            "worker {w}: {} local, {} remote place tasks, {} steals between places",
            c.place_local, c.place_remote, c.place_steals
        );
    }
    Ok(())
}

/// The optional size argument, with a clear error for anything else.
fn size_arg() -> usize {
    let usage = "usage: places [N]  (N: hinted leaves, 1 to 10000000, default 100000)";
    let mut args = std::env::args().skip(1);
    let n = match args.next() {
        None => 100_000,
        Some(a) => match a.parse::<usize>() {
            Ok(n @ 1..=10_000_000) => n,
            _ => fail(&format!(
                "N must be a whole number from 1 to 10000000, got {a:?}\n{usage}"
            )),
        },
    };
    if args.next().is_some() {
        fail(&format!("too many arguments\n{usage}"));
    }
    n
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}

//! The run: every kernel on the sequential baseline, `calls`, the machine's ceiling, our
//! pools, rayon, chili and forte, each result checked, made into records.

use std::time::Instant;

use anyhow::{bail, Result};

use super::join::{Nil, JOINS};
use super::kernels::{
    fib_joins, k_calls, k_chili, k_counting, k_forte, k_ours, k_rayon, k_seq, Block,
};
use super::process::{fnv, PROC_PEERS};
use super::tree::build;
use super::{kernel, Params, Record};
use crate::experiments::pinning::{chili_pool, forte_pool, pinner, rayon_pools, Forte};
use crate::experiments::summarize;
use crate::report::Progress;

/// Where a kernel runs.
#[derive(Clone, Copy)]
enum Rt {
    Sequential,
    /// The kernel with [`Calls`](super::join::Calls) as its join, on no runtime.
    Calls,
    /// Our runtime on pool `p.pools[i]`.
    Ours(usize),
    /// The same on a runtime that records a schedule trace (`--trace`; untimed).
    OursTraced(usize),
    Rayon,
    Chili,
    Forte,
    /// A peer that runs as a program of its own: [`PROC_PEERS`]`[i]`.
    Process(usize),
}

/// A kernel run: (thread-count index, runtime) → seconds, checked.
type Kernel<'a> = Box<dyn Fn(usize, Rt) -> Result<f64> + Sync + 'a>;

/// Runs every kernel; returns the records and, for each process peer that ran, the runtime its program
/// reported (`tbb task_group: oneTBB 2021.8 /usr/lib/…/libtbb.so.12`).
pub fn run_noted(p: &Params, progress: &Progress) -> Result<(Vec<Record>, Vec<String>)> {
    if p.reps == 0 || p.threads.is_empty() || p.threads.contains(&0) {
        bail!("--reps and every thread count must be at least 1");
    }
    if p.pools.is_empty() {
        bail!("no pool to run on");
    }
    if p.kernels.is_empty() {
        bail!("no kernel to run");
    }
    for k in &p.kernels {
        kernel(k)?;
    }
    let tree = build(p.tree_depth, &mut 1);
    let fib_n = p.fib_n;
    let fib_expected = k_seq::fib(fib_n, Nil);
    let tree_expected = k_seq::tree_sum(&tree, Nil);
    // ours[pool][thread-count index]; with `--trace`, the same runtimes again, recording,
    // for one untimed run each.
    let per_pool = |trace: Option<usize>| -> Result<Vec<Vec<taskpools::Runtime>>> {
        p.pools
            .iter()
            .map(|&pool| {
                crate::experiments::pinning::runtimes_with(&p.threads, p.pin, Some(pool), trace)
            })
            .collect()
    };
    let ours = per_pool(None)?;
    let traced = match p.trace {
        None => Vec::new(),
        Some(_) => per_pool(Some(1 << 20))?,
    };
    let mut traces = Vec::new();
    let pin_to = pinner(p.pin);
    // Only the peers that run are started (an idle pool's threads still wake now and then).
    let peer = |name: &str| p.peers.contains(&name);
    let rayons = if peer("rayon") {
        rayon_pools(&p.threads, p.pin)?
    } else {
        Vec::new()
    };
    let chilis: Vec<chili::ThreadPool> = if peer("chili") {
        p.threads.iter().map(|&t| chili_pool(t, p.pin)).collect()
    } else {
        Vec::new()
    };
    let fortes: Vec<Forte> = if peer("forte") {
        p.threads.iter().map(|&t| forte_pool(t, p.pin)).collect()
    } else {
        Vec::new()
    };
    // Runs `$body` with `$j` bound to the joiner of runtime `$rt` (on its thread pool) and
    // returns its result with the seconds it took. The clock runs on the worker, from the
    // moment the kernel starts there: entering the runtime (which wakes a sleeping worker, some
    // tens of microseconds) is not part of a kernel's time, nor of its cost per join.
    // The peers' callers participate in their runs, so those run on a thread placed like the
    // runtimes' worker 0 (`on_core_0` below does that for every run).
    macro_rules! with_joiner {
        ($rt:expr, $ti:expr, |$m:ident, $cx:ident| $body:expr) => {
            match $rt {
                Rt::Sequential => {
                    use k_seq as $m;
                    let $cx = Nil;
                    timed(|| $body)
                }
                Rt::Calls => {
                    use k_calls as $m;
                    let $cx = Nil;
                    timed(|| $body)
                }
                Rt::OursTraced(pi) => traced[pi][$ti].install(|| {
                    use k_ours as $m;
                    let $cx = Nil;
                    timed(|| $body)
                }),
                Rt::Ours(pi) => ours[pi][$ti].install(|| {
                    use k_ours as $m;
                    let $cx = Nil;
                    timed(|| $body)
                }),
                Rt::Rayon => rayons[$ti].install(|| {
                    use k_rayon as $m;
                    let $cx = Nil;
                    timed(|| $body)
                }),
                Rt::Chili => {
                    use k_chili as $m;
                    let mut scope = chilis[$ti].scope();
                    let $cx = &mut scope;
                    timed(|| $body)
                }
                Rt::Forte => fortes[$ti].run(|pool| {
                    pool.with_worker(|w| {
                        use k_forte as $m;
                        let $cx = w;
                        timed(|| $body)
                    })
                }),
                // The run loop starts a process peer's program itself and never calls a
                // kernel with it.
                Rt::Process(i) => unreachable!(
                    "{} runs in a process of its own, not in the workbench",
                    PROC_PEERS[i].runtime
                ),
            }
        };
    }
    let mut rng = fastrand::Rng::with_seed(42);
    let sort_input: Vec<u32> = (0..p.sort_len).map(|_| rng.u32(..)).collect();
    let mut sort_expected = sort_input.clone();
    sort_expected.sort_unstable();
    let count = |f: &dyn Fn()| {
        JOINS.with(|c| c.set(0));
        f();
        JOINS.with(|c| c.get())
    };
    let n = p.matrix;
    if !n.is_power_of_two() {
        bail!("--matrix must be a power of two");
    }
    // The matrices come from a generator of their own, so that a peer program that multiplies
    // need not draw the sort input first.
    let mut rng = fastrand::Rng::with_seed(43);
    let ma: Vec<f64> = (0..n * n).map(|_| rng.f64() - 0.5).collect();
    let mb: Vec<f64> = (0..n * n).map(|_| rng.f64() - 0.5).collect();
    // Inputs are only read through their views; an output's view is made from `as_mut_ptr`
    // and the vector is not touched otherwise until the multiply has returned.
    let view = |v: &Vec<f64>| Block {
        ptr: v.as_ptr().cast_mut(),
        stride: n,
        n,
    };
    let out_view = |v: &mut Vec<f64>| Block {
        ptr: v.as_mut_ptr(),
        stride: n,
        n,
    };
    let (va, vb) = (view(&ma), view(&mb));
    let mut mm_expected = vec![0.0; n * n];
    k_seq::matmul(out_view(&mut mm_expected), va, vb, Nil);
    /// `f`'s result and the seconds it took.
    fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
        let t0 = Instant::now();
        let r = std::hint::black_box(f());
        (r, t0.elapsed().as_secs_f64())
    }
    // Runs `run` (a kernel that times itself) and fails unless `ok` holds for its result.
    fn checked<T>(
        kernel: &str,
        rt: &str,
        run: impl FnOnce() -> (T, f64),
        ok: impl FnOnce(&T) -> bool,
    ) -> Result<f64> {
        let (r, s) = run();
        if !ok(&r) {
            bail!("{kernel} on {rt}: the result differs from the sequential one");
        }
        Ok(s)
    }
    let rt_name = |rt: Rt| match rt {
        Rt::Sequential => "sequential".to_string(),
        Rt::Calls => "calls".to_string(),
        Rt::Ours(i) | Rt::OursTraced(i) => p.pools[i].name().to_string(),
        Rt::Rayon => "rayon".to_string(),
        Rt::Chili => "chili".to_string(),
        Rt::Forte => "forte".to_string(),
        Rt::Process(i) => PROC_PEERS[i].runtime.to_string(),
    };
    // What a process peer is given as SIZE, and the checksum it must print, per kernel.
    let sort_sum = fnv(sort_expected.iter().map(|&x| u64::from(x)));
    let mm_sum = fnv(mm_expected.iter().map(|x| x.to_bits()));
    let proc_size_sum = |kernel: &str| -> (u64, u64) {
        match kernel {
            "fib" => (fib_n, fib_expected),
            "tree-sum" => (u64::from(p.tree_depth), tree_expected),
            "mergesort" | "quicksort" => (p.sort_len as u64, sort_sum),
            _ => (n as u64, mm_sum),
        }
    };
    let mut identities: Vec<String> = Vec::new();
    // The buffers the runs write, allocated once and reused by every run of every runtime. A
    // fresh allocation per run lands at an address that depends on the allocator's history
    // (glibc moves its mmap threshold as buffers are freed), and the same multiply ran 20 %
    // slower at some addresses than at others: runtimes came out apart by where their
    // buffer happened to land, not by how they schedule.
    // The `ceiling` rows run several copies of the sequential kernel at once, so there is one
    // set of buffers per copy (allocated at its first use): a run takes the first set that no
    // other run holds, which is always the first one except in the ceiling. (With one shared
    // set, the copies took turns on its lock and the ceiling of these kernels read about 1.)
    fn free_slot<T>(slots: &[std::sync::Mutex<T>]) -> std::sync::MutexGuard<'_, T> {
        use std::sync::TryLockError;
        loop {
            for m in slots {
                match m.try_lock() {
                    Ok(g) => return g,
                    Err(TryLockError::Poisoned(e)) => return e.into_inner(),
                    Err(TryLockError::WouldBlock) => {}
                }
            }
            std::thread::yield_now();
        }
    }
    let copies = p.threads.iter().copied().max().unwrap_or(1);
    let sort_slots: Vec<std::sync::Mutex<(Vec<u32>, Vec<u32>)>> = (0..copies)
        .map(|_| std::sync::Mutex::new((Vec::new(), Vec::new())))
        .collect();
    let mm_slots: Vec<std::sync::Mutex<Vec<f64>>> = (0..copies)
        .map(|_| std::sync::Mutex::new(Vec::new()))
        .collect();
    let sort_slot = || {
        let mut g = free_slot(&sort_slots);
        if g.0.len() != sort_input.len() {
            *g = (vec![0u32; sort_input.len()], vec![0u32; sort_input.len()]);
        }
        g
    };
    let mm_slot = || {
        let mut g = free_slot(&mm_slots);
        if g.len() != n * n {
            *g = vec![0.0f64; n * n];
        }
        g
    };
    let kernels: Vec<(&str, u64, Kernel<'_>)> = vec![
        (
            "fib",
            fib_joins(fib_n),
            Box::new(|ti, rt: Rt| {
                let name = rt_name(rt);
                checked(
                    "fib",
                    &name,
                    || with_joiner!(rt, ti, |k, cx| k::fib(fib_n, cx)),
                    |&r| r == fib_expected,
                )
            }),
        ),
        (
            "tree-sum",
            (1u64 << p.tree_depth) - 1,
            Box::new(|ti, rt: Rt| {
                let name = rt_name(rt);
                checked(
                    "tree-sum",
                    &name,
                    || with_joiner!(rt, ti, |k, cx| k::tree_sum(&tree, cx)),
                    |&r| r == tree_expected,
                )
            }),
        ),
        (
            "mergesort",
            count(&|| {
                let mut v = sort_input.clone();
                let mut buf = vec![0; v.len()];
                k_counting::mergesort(&mut v, &mut buf, Nil);
            }),
            Box::new(|ti, rt: Rt| {
                let name = rt_name(rt);
                let mut slot = sort_slot();
                let (v, buf) = &mut *slot;
                v.copy_from_slice(&sort_input);
                let (v, buf) = (&mut v[..], &mut buf[..]);
                let s = checked(
                    "mergesort",
                    &name,
                    || with_joiner!(rt, ti, |k, cx| k::mergesort(v, buf, cx)),
                    |_| true,
                )?;
                if v != &sort_expected[..] {
                    bail!("mergesort on {name}: not sorted correctly");
                }
                Ok(s)
            }),
        ),
        (
            "quicksort",
            count(&|| k_counting::quicksort(&mut sort_input.clone(), Nil)),
            Box::new(|ti, rt: Rt| {
                let name = rt_name(rt);
                let mut slot = sort_slot();
                let v = &mut slot.0[..];
                v.copy_from_slice(&sort_input);
                let s = checked(
                    "quicksort",
                    &name,
                    || with_joiner!(rt, ti, |k, cx| k::quicksort(v, cx)),
                    |_| true,
                )?;
                if v != sort_expected {
                    bail!("quicksort on {name}: not sorted correctly");
                }
                Ok(s)
            }),
        ),
        (
            "matmul",
            count(&|| k_counting::matmul(out_view(&mut vec![0.0; n * n]), va, vb, Nil)),
            Box::new(|ti, rt: Rt| {
                let name = rt_name(rt);
                let mut c = mm_slot();
                c.fill(0.0);
                let vc = out_view(&mut c);
                let s = checked(
                    "matmul",
                    &name,
                    || with_joiner!(rt, ti, |k, cx| k::matmul(vc, va, vb, cx)),
                    |_| true,
                )?;
                if *c != mm_expected {
                    bail!("matmul on {name}: result differs from the sequential one");
                }
                Ok(s)
            }),
        ),
    ];
    let mut kernels = kernels;
    kernels.retain(|(name, _, _)| p.kernels.iter().any(|k| k == name));
    kernels.sort_by_key(|(name, _, _)| p.kernels.iter().position(|k| k == name));
    let runtimes: Vec<Rt> = (0..p.pools.len())
        .map(Rt::Ours)
        .chain(
            [
                ("rayon", Rt::Rayon),
                ("chili", Rt::Chili),
                ("forte", Rt::Forte),
            ]
            .into_iter()
            .filter(|(name, _)| p.peers.contains(name))
            .map(|(_, rt)| rt),
        )
        // The process peers that were built (the table says how to install the others).
        .chain(
            PROC_PEERS
                .iter()
                .enumerate()
                .filter(|(_, pp)| p.peers.contains(&pp.name) && pp.built())
                .map(|(i, _)| Rt::Process(i)),
        )
        .collect();
    let rayon_i = runtimes.iter().position(|rt| matches!(rt, Rt::Rayon));
    let chili_i = runtimes.iter().position(|rt| matches!(rt, Rt::Chili));
    let multi: Vec<usize> = p.threads.iter().copied().filter(|&t| t > 1).collect();
    let one = p.threads.iter().position(|&t| t == 1);
    // The `calls` floor is a 1-thread figure, taken when 1 is among the thread counts.
    let with_calls = one.is_some();
    progress.set_length(
        (p.reps
            * kernels.len()
            * (1 + usize::from(with_calls) + multi.len() + runtimes.len() * p.threads.len()))
            as u64,
    );
    // Runs `k` on a thread placed like the runtimes' worker 0 (pinned to core 0 with `--pin`),
    // so that the runs without a runtime (sequential, calls) and T1 are taken on the same core:
    // on a shared machine the two cores can differ for seconds at a time.
    let on_core_0_at = |k: &Kernel<'_>, ti: usize, rt: Rt| {
        std::thread::scope(|sc| {
            sc.spawn(|| {
                pin_to(0);
                k(ti, rt)
            })
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    };
    let on_core_0 = |k: &Kernel<'_>, rt: Rt| on_core_0_at(k, 0, rt);
    let mut out = Vec::new();
    for (name, joins, k) in &kernels {
        let mut seq = Vec::new();
        let mut calls = Vec::new();
        let mut par = vec![vec![Vec::new(); p.threads.len()]; runtimes.len()];
        let mut ceiling = vec![Vec::new(); multi.len()];
        // Before every timed run: let the previous runtime's idle workers (ours spin for about
        // 200 yields, rayon's for a few dozen) fall asleep, so that they do not compete for
        // this machine's two cores with the run being timed.
        let settle = || std::thread::sleep(std::time::Duration::from_millis(2));
        for _ in 0..p.reps {
            progress.set_message(format!("{name} sequential"));
            settle();
            seq.push(on_core_0(k, Rt::Sequential)?);
            progress.inc();
            if with_calls {
                progress.set_message(format!("{name} calls"));
                settle();
                calls.push(on_core_0(k, Rt::Calls)?);
                progress.inc();
            }
            // The machine's own ceiling in this run: `t` copies of the sequential kernel on
            // `t` plain threads at once, placed like the runtimes' workers. Each copy notes
            // when it started and ended (after all are started and pinned); the sample is the
            // span from the first start to the last end. (This thread cannot time it: with
            // every core busy it may not run again until a copy has finished.)
            for (&t, samples) in multi.iter().zip(ceiling.iter_mut()) {
                progress.set_message(format!("{name} ceiling x{t}"));
                settle();
                let ready = std::sync::Barrier::new(t);
                let spans = std::thread::scope(|sc| {
                    let hs: Vec<_> = (0..t)
                        .map(|i| {
                            let (ready, pin_to) = (&ready, &pin_to);
                            sc.spawn(move || {
                                pin_to(i);
                                ready.wait();
                                let start = Instant::now();
                                k(0, Rt::Sequential)?;
                                Ok::<_, anyhow::Error>((start, Instant::now()))
                            })
                        })
                        .collect();
                    hs.into_iter()
                        .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                        .collect::<Result<Vec<_>>>()
                })?;
                let first = spans.iter().map(|s| s.0).min().expect("t > 1 copies");
                let last = spans.iter().map(|s| s.1).max().expect("t > 1 copies");
                let elapsed = last - first;
                samples.push(elapsed.as_secs_f64());
                progress.inc();
            }
            for (&rt, times) in runtimes.iter().zip(par.iter_mut()) {
                for (ti, (t, samples)) in p.threads.iter().zip(times.iter_mut()).enumerate() {
                    progress.set_message(format!("{name} {} x{t}", rt_name(rt)));
                    settle();
                    samples.push(match rt {
                        Rt::Chili | Rt::Forte => on_core_0_at(k, ti, rt)?,
                        Rt::Process(i) => {
                            let pp = &PROC_PEERS[i];
                            let (size, expected) = proc_size_sum(name);
                            let ran = pp.run(name, *t, size, p.pin)?;
                            if ran.checksum != expected {
                                bail!(
                                    "{name} on {}: the result differs from the sequential one \
                                     (checksum {} against {expected})",
                                    pp.runtime,
                                    ran.checksum
                                );
                            }
                            let note = format!("{}: {}", pp.runtime, ran.identity);
                            if !identities.contains(&note) {
                                identities.push(note);
                            }
                            ran.seconds
                        }
                        _ => k(ti, rt)?,
                    });
                    progress.inc();
                }
            }
        }
        for (pi, per_thread) in traced.iter().enumerate() {
            for (ti, rt) in per_thread.iter().enumerate() {
                progress.set_message(format!(
                    "{name} tracing {} x{}",
                    p.pools[pi].name(),
                    p.threads[ti]
                ));
                let _ = rt.take_trace()?;
                k(ti, Rt::OursTraced(pi))?;
                if let Some(t) = rt.take_trace()? {
                    traces.push((
                        format!("{name} {} x{}", p.pools[pi].name(), p.threads[ti]),
                        t,
                    ));
                }
            }
        }
        let (sm, smin, smax) = summarize(&seq);
        out.push(Record {
            experiment: "forkjoin".into(),
            kernel: name.to_string(),
            runtime: "sequential".into(),
            threads: 1,
            reps: p.reps,
            median_s: sm,
            min_s: smin,
            max_s: smax,
            speedup_vs_seq: 1.0,
            speedup_vs_1: None,
            joins: 0,
            ns_per_join: None,
            join_vs_rayon: None,
            vs_rayon: None,
            join_vs_chili: None,
            vs_chili: None,
        });
        for (&t, samples) in multi.iter().zip(&ceiling) {
            let (m, mn, mx) = summarize(samples);
            out.push(Record {
                experiment: "forkjoin".into(),
                kernel: name.to_string(),
                runtime: "ceiling".into(),
                threads: t,
                reps: p.reps,
                median_s: m,
                min_s: mn,
                max_s: mx,
                speedup_vs_seq: t as f64 * sm / m,
                speedup_vs_1: None,
                joins: 0,
                ns_per_join: None,
                join_vs_rayon: None,
                vs_rayon: None,
                join_vs_chili: None,
                vs_chili: None,
            });
        }
        // Paired per-join cost at 1 thread: the median of T1 − Tseq over the repetitions.
        let paired = |t1: &[f64]| {
            let d: Vec<f64> = t1.iter().zip(&seq).map(|(t, s)| t - s).collect();
            summarize(&d).0
        };
        let diff = |ri: usize| one.map(|oi| paired(&par[ri][oi]));
        // A kernel that makes no join (a matrix at the cutoff) has no cost per join.
        let per_join = |ri: usize| {
            diff(ri)
                .filter(|_| *joins > 0)
                .map(|d| d * 1e9 / *joins as f64)
        };
        // A ratio of join costs means something only where rayon's joins cost a measurable
        // share of the run (at least a tenth of Tseq: fib, tree-sum); on the coarse kernels
        // both costs are within the noise.
        let rayon_per_join = rayon_i.and_then(|ri| {
            diff(ri)
                .filter(|&d| d >= 0.1 * sm)
                .and_then(|_| per_join(ri))
        });
        let chili_per_join = chili_i.and_then(|ci| {
            diff(ci)
                .filter(|&d| d >= 0.02 * sm)
                .and_then(|_| per_join(ci))
        });
        if !calls.is_empty() {
            let (m, mn, mx) = summarize(&calls);
            let ns_per_join = (*joins > 0).then(|| paired(&calls) * 1e9 / *joins as f64);
            out.push(Record {
                experiment: "forkjoin".into(),
                kernel: name.to_string(),
                runtime: "calls".into(),
                threads: 1,
                reps: p.reps,
                median_s: m,
                min_s: mn,
                max_s: mx,
                speedup_vs_seq: sm / m,
                speedup_vs_1: None,
                joins: *joins,
                ns_per_join,
                join_vs_rayon: ns_per_join.zip(rayon_per_join).map(|(o, r)| o / r),
                vs_rayon: None,
                join_vs_chili: ns_per_join.zip(chili_per_join).map(|(o, c)| o / c),
                vs_chili: None,
            });
        }
        for (ri, &rt) in runtimes.iter().enumerate() {
            for (ti, &t) in p.threads.iter().enumerate() {
                let (m, mn, mx) = summarize(&par[ri][ti]);
                let rayon_m = rayon_i.map(|i| summarize(&par[i][ti]).0);
                let chili_m = chili_i.map(|i| summarize(&par[i][ti]).0);
                let ns_per_join = (t == 1).then(|| per_join(ri)).flatten();
                out.push(Record {
                    experiment: "forkjoin".into(),
                    kernel: name.to_string(),
                    runtime: rt_name(rt),
                    threads: t,
                    reps: p.reps,
                    median_s: m,
                    min_s: mn,
                    max_s: mx,
                    speedup_vs_seq: sm / m,
                    speedup_vs_1: one.map(|oi| summarize(&par[ri][oi]).0 / m),
                    joins: *joins,
                    ns_per_join,
                    join_vs_rayon: match (rt, ns_per_join, rayon_per_join) {
                        (Rt::Ours(_), Some(o), Some(r)) => Some(o / r),
                        _ => None,
                    },
                    vs_rayon: rayon_m.filter(|_| matches!(rt, Rt::Ours(_))).map(|r| m / r),
                    join_vs_chili: match (rt, ns_per_join, chili_per_join) {
                        (Rt::Ours(_), Some(o), Some(c)) => Some(o / c),
                        _ => None,
                    },
                    vs_chili: chili_m.filter(|_| matches!(rt, Rt::Ours(_))).map(|c| m / c),
                });
            }
        }
    }
    if let Some(path) = &p.trace {
        crate::report::trace::write_files(path, &traces)?;
    }
    Ok((out, identities))
}

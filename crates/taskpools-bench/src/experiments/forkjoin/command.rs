//! `taskpools forkjoin`: its arguments and their checks, and what a run reports (table,
//! JSON, CSV, the speedup chart).

use anyhow::{bail, Result};
use clap::Args;

use super::{
    install_hint, kernel, peer_built, run_noted, Node, Params, KERNELS, PEERS, PROC_PEERS,
};
use crate::cli::{
    emit, names_or_all, OutputArgs, Outputs, PeersArgs, PinArgs, RepsArgs, ThreadsArgs, TraceArgs,
};
use crate::report::{self, Progress};

/// The arguments of `taskpools forkjoin`.
#[derive(Args)]
#[command(
    mut_arg("pin", |a| a.help(
        "Pin worker i of every runtime (ours, rayon, chili, forte, the ceiling's threads) to \
         core i mod cores, and the sequential and `calls` runs to core 0, where every \
         runtime's worker 0 runs. Without pinning, a worker woken by another is often placed \
         on the waker's core, and the two share it for milliseconds: 2-thread runs then \
         measure the OS, not the runtime. `--pin`, `--pin true` (the default) or `--pin \
         false`"
    )),
    mut_arg("peers", |a| a.help(
        "Other runtimes to run beside ours, comma-separated, `all` or `none`: rayon, chili, \
         forte, and where the build found them, each in a process of its own: tbb (oneTBB's \
         task_group and parallel_invoke) and libomp (OpenMP tasks under LLVM's runtime); \
         `all` takes those that were built"
    )),
    mut_arg("trace", |a| a.help(
        "Record a schedule trace of one extra, untimed run of each kernel on each of our \
         pools and thread counts (on runtimes that record; the timed runs do not): Chrome \
         trace-event JSON to this file and Gantt charts into the folder FILE with the \
         extension `.gantt`"
    )),
)]
pub struct ForkjoinArgs {
    #[command(flatten)]
    pub threads: ThreadsArgs,
    #[command(flatten)]
    pub reps: RepsArgs,
    /// fib(n); n ≤ 45 (a run makes about fib(n) joins: fib(45) ≈ 1.1e9).
    #[arg(long, default_value_t = 30)]
    pub fib: u64,
    /// Depth d of the binary tree to sum; d ≤ 25: its 2^(d+1) - 1 nodes of 16 bytes must fit
    /// in 1 GiB.
    #[arg(long, default_value_t = 20)]
    pub tree_depth: u32,
    /// Elements for mergesort and quicksort; at most 2^28 (268,435,456: each of the four u32
    /// buffers is then 1 GiB).
    #[arg(long, default_value_t = 1 << 21)]
    pub sort_len: usize,
    /// Matrix size n for the 8-way recursive multiply: a power of two, at most 2048.
    #[arg(long, default_value_t = 512)]
    pub matrix: usize,
    /// Our runtime's pools, comma-separated, or `all`: private-deque (acr13), chase-lev (dcwq).
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub pool: Vec<String>,
    /// Kernels, comma-separated, or `all`: fib, tree-sum, mergesort, quicksort, matmul.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub kernels: Vec<String>,
    #[command(flatten)]
    pub peers: PeersArgs,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The largest `--fib`: a run makes about fib(n) joins (fib(45) ≈ 1.1e9).
const MAX_FIB: u64 = 45;
/// The memory the `--tree-depth` tree may take.
const TREE_BUDGET: u64 = 1 << 30;
/// The most `--sort-len` elements.
const MAX_SORT_LEN: usize = 1 << 28;
/// The largest `--matrix`.
const MAX_MATRIX: usize = 2048;

/// Runs `taskpools forkjoin`.
pub fn exec(a: ForkjoinArgs) -> Result<()> {
    let pools = fj_pools(&a.pool)?;
    let kernels = names_or_all(&a.kernels, &KERNELS, kernel)?;
    let peers = a.peers.select(&PEERS)?;
    // A process peer named on its own must have been built; `all` takes those that were.
    for n in &a.peers.peers {
        if let Some(hint) = install_hint(n).filter(|_| !peer_built(n)) {
            bail!(
                "--peers {n}: not installed when this workbench was built ({hint}, then `cargo clean -p taskpools-bench` and rebuild)"
            );
        }
    }
    check(&a)?;
    let p = Params {
        threads: a.threads.threads,
        reps: a.reps.reps,
        fib_n: a.fib,
        tree_depth: a.tree_depth,
        sort_len: a.sort_len,
        matrix: a.matrix,
        pools,
        pin: a.pin.pin,
        peers,
        kernels: kernels.into_iter().map(String::from).collect(),
        trace: a.trace.trace.clone(),
    };
    a.trace.check()?;
    run_and_emit(&p, &a.out.outputs(), a.out.quiet())?;
    Ok(())
}

/// `--pool` of `forkjoin`: names, aliases or `all`.
fn fj_pools(names: &[String]) -> Result<Vec<taskpools::forkjoin::Pool>> {
    use taskpools::forkjoin::Pool;
    names_or_all(names, &Pool::ALL, |n| Ok(Pool::from_name(n)?))
}

fn check(a: &ForkjoinArgs) -> Result<()> {
    a.threads.check(1)?;
    a.reps.check()?;
    if a.fib > MAX_FIB {
        bail!(
            "--fib {}: n must be at most {MAX_FIB} (a run makes about fib(n) joins)",
            a.fib
        );
    }
    // 2^(d+1) - 1 nodes; d ≤ 62 keeps the count in a u64 before the budget is checked.
    let node = std::mem::size_of::<Node>() as u64;
    let fits = a.tree_depth <= 62
        && ((1u64 << (a.tree_depth + 1)) - 1).saturating_mul(node) <= TREE_BUDGET;
    if !fits {
        bail!(
            "--tree-depth {}: the tree's 2^(d+1) - 1 nodes of {node} bytes must fit in 1 GiB \
             (depth at most 25)",
            a.tree_depth
        );
    }
    if a.sort_len > MAX_SORT_LEN {
        bail!(
            "--sort-len {}: at most 2^28 = {MAX_SORT_LEN} elements",
            a.sort_len
        );
    }
    if !a.matrix.is_power_of_two() || a.matrix > MAX_MATRIX {
        bail!(
            "--matrix {}: must be a power of two, at most {MAX_MATRIX}",
            a.matrix
        );
    }
    a.out.check()
}

/// Runs the kernels and reports them: the table, and the JSON, CSV and chart asked for.
pub fn run_and_emit(p: &Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let (records, identities) = run_noted(p, &progress)?;
    progress.finish();
    let mut table = super::table::forkjoin_table(&records);
    table.push_str(&peer_notes(&p.peers, &identities));
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let mut labels: Vec<String> = Vec::new();
        for r in records.iter().filter(|r| r.runtime != "sequential") {
            let l = format!("{} x{}", r.kernel, r.threads);
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        let names: Vec<String> = p
            .pools
            .iter()
            .map(|p| p.name().to_string())
            .chain(["rayon", "chili", "forte"].map(String::from))
            .chain(PROC_PEERS.iter().map(|pp| pp.runtime.to_string()))
            .collect();
        let series: Vec<(String, Vec<f64>)> = names
            .iter()
            .map(|rt| {
                let v = labels
                    .iter()
                    .map(|l| {
                        records
                            .iter()
                            .find(|r| {
                                r.runtime == *rt && format!("{} x{}", r.kernel, r.threads) == *l
                            })
                            .map_or(f64::NAN, |r| r.speedup_vs_seq)
                    })
                    .collect();
                (rt.to_string(), v)
            })
            .collect();
        report::bar_chart(
            path,
            "fork-join: speedup vs sequential",
            "speedup vs sequential",
            &labels,
            &series,
            Some(1.0),
        )?;
    }
    Ok(())
}

/// The lines under the table about the process peers: the runtime each program reported, and
/// for each one asked for but not built, how to install it.
fn peer_notes(peers: &[&str], identities: &[String]) -> String {
    notes_for(&PROC_PEERS, peers, identities)
}

fn notes_for(procs: &[super::process::ProcPeer], peers: &[&str], identities: &[String]) -> String {
    let mut s = String::new();
    for id in identities {
        s.push_str(&format!(
            "{id} (its own process per run; the runtime it reported)\n"
        ));
    }
    let mut told: Vec<&str> = Vec::new();
    for pp in procs {
        if peers.contains(&pp.name) && !pp.built() && !told.contains(&pp.name) {
            told.push(pp.name);
            s.push_str(&format!("{}: not installed ({})\n", pp.name, pp.install));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::process::ProcPeer;

    #[test]
    fn a_peer_not_built_is_a_line_that_says_how_to_install_it() {
        let missing = ProcPeer {
            name: "tbb",
            runtime: "tbb task_group",
            variant: "task_group",
            exe: "",
            install: "apt-get install libtbb-dev",
            identity: "oneTBB",
        };
        let notes = super::notes_for(&[missing], &["rayon", "tbb"], &[]);
        assert_eq!(notes, "tbb: not installed (apt-get install libtbb-dev)\n");
        let id = ["tbb task_group: oneTBB 2021.8 /lib/libtbb.so.12".to_string()];
        let built = super::notes_for(&[], &["tbb"], &id);
        assert!(
            built.starts_with("tbb task_group: oneTBB 2021.8"),
            "{built}"
        );
    }
}

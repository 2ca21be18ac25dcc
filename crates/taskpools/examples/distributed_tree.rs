//! The working phase over MPI ranks (cargo feature `mpi`, which needs a system MPI: see
//! docs/distributed.md in the repository). Every rank runs a pool of the family on its own
//! runtime; a rank whose workers all ran dry asks another rank for work, which sends half of
//! what it can spare (serialized with serde). The phase ends on every rank at once, when a
//! token ring proves that no rank has work and no task is on the wire.
//!
//! Here all the work starts on rank 0: one task that unfolds into a complete binary tree of
//! 2^(D+1) - 1 tasks, which the other ranks get by stealing.
//!
//! ```text
//! cargo build --release -p taskpools --features mpi --example distributed_tree
//! mpirun --bind-to none -n 2 target/release/examples/distributed_tree [D]
//! ```
//! D is the depth of the tree (default 22, at most 26). Run without `mpirun`, it is one rank.

use mpi::traits::*;
use taskpools::distributed::{run_distributed, sum_across, DistributedConfig};
use taskpools::pool::{ChaseLevPool, PoolConfig};
use taskpools::{Ctx, Runtime, Task, TaskPool};

/// A node of the tree at height `self.0`: it puts its two children. Tasks that cross ranks
/// are serialized, so the task type implements serde's traits (one that does not, does not
/// compile with `run_distributed`).
#[derive(serde::Serialize, serde::Deserialize)]
struct Node(u32);

/// The per-worker state counts the nodes this worker ran.
impl Task<u64> for Node {
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        *ctx.local() += 1;
        if self.0 > 0 {
            ctx.put(Node(self.0 - 1));
            ctx.put(Node(self.0 - 1));
        }
    }
}

const WORKERS: usize = 1;

fn main() -> Result<(), taskpools::Error> {
    let depth = depth_arg();
    // The runtime's workers call MPI only through the rank's agent: `Funneled` suffices.
    let Some((universe, threading)) = mpi::initialize_with_threading(mpi::Threading::Funneled)
    else {
        eprintln!("error: MPI was already initialized");
        std::process::exit(1);
    };
    if threading < mpi::Threading::Funneled {
        eprintln!("error: this MPI offers only Threading::Single; the workers need Funneled");
        std::process::exit(1);
    }
    let world = universe.world();
    let rank = world.rank();

    // Every rank: its own runtime and pool, the same configuration, its own initial tasks.
    let rt = Runtime::new(WORKERS)?;
    let pool: ChaseLevPool<Node> = TaskPool::new(&PoolConfig::new(WORKERS));
    let roots = if rank == 0 { vec![Node(depth)] } else { vec![] };
    let (report, counts) = run_distributed(
        &world,
        &rt,
        &pool,
        &DistributedConfig::default(),
        |_| 0u64,
        roots,
    )?;

    // Each rank ran part of the tree; together, every node exactly once.
    let here: u64 = counts.iter().sum();
    let total = sum_across(&world, here);
    let expected = (1u64 << (depth + 1)) - 1;
    assert_eq!(total, expected, "nodes run on all ranks");
    assert_eq!(report.tasks_run(), expected);
    let me = &report.ranks[rank as usize];
    println!(
        "rank {rank} of {}: ran {here} of the {total} nodes (depth {depth}); sent {} and \
         received {} tasks",
        world.size(),
        me.tasks_sent,
        me.tasks_received
    );
    Ok(())
}

/// The optional depth argument, with a clear error for anything else.
fn depth_arg() -> u32 {
    let usage = "usage: distributed_tree [D]  (D: tree depth, 0 to 26, default 22)";
    let mut args = std::env::args().skip(1);
    let d = match args.next() {
        None => 22,
        Some(a) => match a.parse::<u32>() {
            Ok(d @ 0..=26) => d,
            _ => fail(&format!(
                "D must be a whole number from 0 to 26 (2^27 tasks take a while), got \
                 {a:?}\n{usage}"
            )),
        },
    };
    if args.next().is_some() {
        fail(&format!("too many arguments\n{usage}"));
    }
    d
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}

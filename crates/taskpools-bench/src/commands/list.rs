//! `taskpools list`: every pool, memory manager, wake-up policy, search and fork-join pool,
//! with its alias; then the kernels and peer runtimes of the experiments that `taskpools
//! report` tabulates.

use taskpools::{MemKind, PoolKind, WakePolicy};

/// Runs `taskpools list`.
pub fn exec() {
    // The name column fits the longest pool name (`steal-opposite-end-node-locks`).
    let width = PoolKind::ALL
        .iter()
        .map(|p| p.name().len() + 1)
        .max()
        .unwrap_or(0)
        .max(24);
    println!("pools (--pool NAME or ALIAS):");
    for p in PoolKind::ALL {
        println!(
            "  {:<width$} {:<13} {}{}",
            p.name(),
            p.alias(),
            p.description(),
            if p.uses_mem() { "  [uses --mem]" } else { "" }
        );
    }
    println!("\nmemory managers (--mem NAME or ALIAS):");
    for m in MemKind::ALL {
        println!(
            "  {:<width$} {:<13} {}",
            m.name(),
            m.alias(),
            m.description()
        );
    }
    println!("\nwake-up policies (--wake NAME or ALIAS):");
    for w in WakePolicy::ALL {
        println!(
            "  {:<width$} {:<13} {}",
            w.name(),
            w.alias(),
            w.description()
        );
    }
    println!("\nsteal-half searches (--search NAME or ALIAS):");
    for s in taskpools::Search::ALL {
        println!(
            "  {:<width$} {:<13} {}",
            s.name(),
            s.alias(),
            s.description()
        );
    }
    println!("\nfork-join pools (forkjoin --pool NAME or ALIAS; library: forkjoin::Pool):");
    for p in taskpools::forkjoin::Pool::ALL {
        println!(
            "  {:<width$} {:<13} {}",
            p.name(),
            p.alias(),
            p.description()
        );
    }
    println!(
        "\nexperiments in `taskpools report`'s table: kernels (front ends, graphs, benchmarks) \
         | peers:"
    );
    for e in crate::experiments::report::experiments() {
        println!(
            "  {:<width$} {} | {}",
            e.name,
            e.kernels.join(", "),
            if e.peers.is_empty() {
                "-".to_string()
            } else {
                e.peers.join(", ")
            }
        );
    }
}

//! The peers that are programs of their own (`crates/taskpools-bench/peers/*.cpp`, built by
//! the build script where their runtime is installed): oneTBB and LLVM's OpenMP runtime for
//! `taskpools forkjoin`, oneTBB for `taskpools queens`. libgomp and libomp define the same
//! `omp_*`/`GOMP_*` entry points, so code built for one and linked beside the other binds to
//! whichever loaded first; in a process of its own, each runtime is the one it says, and its
//! spinning threads end with the process, before the next run starts.
//!
//! The workbench starts the program once per measurement (kernel, thread count, repetition),
//! so its runs alternate with the other runtimes' as theirs do. The program regenerates the
//! kernel's input exactly as the workbench makes it, runs the kernel once untimed, then once
//! timed inside the runtime (the process's start, the input and the warm-up are not timed),
//! and prints `runtime NAME VERSION…` and `time SECONDS result CHECKSUM`; every checksum is
//! compared with the sequential Rust result's, and the runtime line with the runtime the row
//! names.

use std::process::Command;

use anyhow::{bail, Context, Result};

use super::child;

/// A peer that runs as a program of its own.
pub struct ProcPeer {
    /// Its name in `--peers`.
    pub name: &'static str,
    /// Its rows' `runtime`.
    pub runtime: &'static str,
    /// The program's VARIANT argument.
    pub variant: &'static str,
    /// The program's path, set by the build script; empty where it was not built.
    pub exe: &'static str,
    /// What to install to build it.
    pub install: &'static str,
    /// The first word of the runtime line must start with this.
    pub identity: &'static str,
}

/// One timed run of a peer program: its time and checksum, and its runtime line.
pub struct Ran {
    pub seconds: f64,
    pub checksum: u64,
    pub identity: String,
}

impl ProcPeer {
    /// Whether the build script built this peer's program.
    pub fn built(&self) -> bool {
        !self.exe.is_empty()
    }

    /// Runs `kernel` of size `size` once (after an untimed warm-up) on `threads` threads.
    pub fn run(&self, kernel: &str, threads: usize, size: u64, pin: bool) -> Result<Ran> {
        if !self.built() {
            bail!("{}: not installed ({})", self.name, self.install);
        }
        let mut cmd = Command::new(self.exe);
        cmd.arg(kernel)
            .arg(threads.to_string())
            .arg("1")
            .arg(size.to_string())
            .arg(if pin { "1" } else { "0" })
            .arg(self.variant);
        child::configure(&mut cmd);
        // OpenMP places its threads itself: one place per core, thread i on place i.
        let cores: Vec<usize> = crate::experiments::pinning::cores()
            .map(|c| c.iter().map(|c| c.id).collect())
            .unwrap_or_default();
        if pin && !cores.is_empty() {
            let places: Vec<String> = cores.iter().map(|c| format!("{{{c}}}")).collect();
            cmd.env("OMP_PLACES", places.join(","))
                .env("OMP_PROC_BIND", "close");
        }
        let what = format!("{kernel} on {}", self.runtime);
        let stdout = child::output(cmd, &what)?;
        self.parse(kernel, &stdout)
    }

    /// Reads a peer program's output: the runtime line, checked, then one timed run.
    fn parse(&self, kernel: &str, stdout: &str) -> Result<Ran> {
        let what = format!("{kernel} on {}", self.runtime);
        let (identity, seconds, checksum) = child::parse(stdout, &what, |id| {
            let name = id.split_whitespace().next().unwrap_or("");
            if name.starts_with(self.identity) {
                Ok(())
            } else {
                bail!(
                    "{what}: the runtime that ran is `{id}`, not {}",
                    self.identity
                )
            }
        })?;
        let checksum = checksum
            .parse::<u64>()
            .with_context(|| format!("{what}: `{checksum}` is not a checksum"))?;
        Ok(Ran {
            seconds,
            checksum,
            identity: identity.to_string(),
        })
    }
}

/// The checksum the peer programs print for an array: FNV-1a over 64-bit words, as their C++
/// computes it (forkjoin_common.hpp). A weaker hash than the drivers' (two flips of a word's
/// top bit cancel), on results that are sorted arrays and sums, where a wrong result moves
/// many bits.
pub fn fnv(words: impl IntoIterator<Item = u64>) -> u64 {
    words.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, w| {
        (h ^ w).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_that_is_not_the_one_named_is_refused() {
        let omp = &ProcPeer {
            name: "libomp",
            runtime: "libomp tasks",
            variant: "tasks",
            exe: "",
            install: "",
            identity: "libomp",
        };
        let e = omp
            .parse(
                "fib",
                "runtime libgomp.so.1 /usr/lib/libgomp.so.1\ntime 0.1 result 5\n",
            )
            .err()
            .expect("libgomp is not libomp");
        assert!(e.to_string().contains("not libomp"), "{e}");
        let ok = omp
            .parse(
                "fib",
                "runtime libomp.so.5 /x/libomp.so.5\ntime 0.25 result 5\n",
            )
            .unwrap();
        assert_eq!((ok.seconds, ok.checksum), (0.25, 5));
        assert!(omp.parse("fib", "runtime libomp.so.5\ntime x\n").is_err());
    }

    #[test]
    fn fnv_of_nothing_is_the_offset_basis() {
        assert_eq!(fnv([]), 0xcbf2_9ce4_8422_2325);
    }
}

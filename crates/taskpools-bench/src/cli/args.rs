//! The argument groups that many experiments take, each defined once and flattened into the
//! experiments' arguments with `#[command(flatten)]`: `--threads`, `--reps`, `--pin` and
//! `--trace`. The flag, how its value is parsed and how it is checked are these; where an
//! experiment words the help its own way or has another default, its arguments say so with
//! `#[command(mut_arg(...))]`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::checks::{check_output, check_positive, check_threads};

/// `--threads`: the thread counts to run, each in its own configuration.
#[derive(Args)]
pub struct ThreadsArgs {
    /// Thread counts, comma-separated; each 1 to 4096, none given twice.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    pub threads: Vec<usize>,
}

impl ThreadsArgs {
    /// Each count `min..=MAX_THREADS`, none given twice.
    pub fn check(&self, min: usize) -> Result<()> {
        check_threads("--threads", &self.threads, min)
    }
}

/// `--reps`: repetitions of every configuration.
#[derive(Args)]
pub struct RepsArgs {
    /// Repetitions (the median is reported); at least 1.
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
}

impl RepsArgs {
    /// At least 1.
    pub fn check(&self) -> Result<()> {
        check_positive("--reps", self.reps)
    }
}

/// `--pin`: pin the workers to cores. One form everywhere: `--pin`, `--pin true` or
/// `--pin false`.
#[derive(Args)]
pub struct PinArgs {
    /// Pin worker i of every runtime to core i mod cores, and the sequential run to core 0:
    /// `--pin`, `--pin true` (the default) or `--pin false`.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub pin: bool,
}

/// `--trace FILE`: record schedule traces (Chrome trace-event JSON to FILE, Gantt charts
/// beside it); each experiment's help says which runs it traces.
#[derive(Args)]
pub struct TraceArgs {
    /// Record a schedule trace: Chrome trace-event JSON to this file and Gantt charts into
    /// the folder FILE with the extension `.gantt`.
    #[arg(long)]
    pub trace: Option<PathBuf>,
}

impl TraceArgs {
    /// The file can be written, and the folders of Gantt charts and task graphs beside it
    /// (`FILE.gantt`, `FILE.dot`) are not something else (before any work starts).
    pub fn check(&self) -> Result<()> {
        check_output("--trace", self.trace.as_deref(), false)?;
        if let Some(path) = &self.trace {
            for ext in ["gantt", "dot"] {
                let dir = path.with_extension(ext);
                if dir.exists() && !dir.is_dir() {
                    anyhow::bail!(
                        "--trace {}: {} is there and is not a folder (the {} go there)",
                        path.display(),
                        dir.display(),
                        if ext == "gantt" {
                            "Gantt charts"
                        } else {
                            "task graphs"
                        }
                    );
                }
            }
        }
        Ok(())
    }
}

/// `--peers`: which other runtimes an experiment runs beside ours (each experiment has its
/// own set; `all`, the default, runs every one it has, `none` only ours and the sequential
/// program). For runs where the peers' slow configurations would take most of the time, such
/// as the many-core scaling matrix.
#[derive(Args)]
pub struct PeersArgs {
    /// Other runtimes to run beside ours, comma-separated, `all` or `none`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub peers: Vec<String>,
}

impl PeersArgs {
    /// The chosen peers, in `known`'s order; an unknown name is refused with the known ones.
    pub fn select(&self, known: &[&'static str]) -> Result<Vec<&'static str>> {
        let mut chosen = Vec::new();
        for n in &self.peers {
            match n.as_str() {
                "all" => chosen.extend_from_slice(known),
                "none" => {}
                _ => match known.iter().find(|k| **k == n) {
                    Some(k) => chosen.push(*k),
                    None => anyhow::bail!(
                        "--peers: unknown runtime '{n}' (this experiment has: {}, or all, none)",
                        known.join(", ")
                    ),
                },
            }
        }
        Ok(known
            .iter()
            .copied()
            .filter(|k| chosen.contains(k))
            .collect())
    }
}

//! Where an experiment's records go: the `--json`, `--csv` and `--plot` options, the
//! outputs of one run (a tour step adds the table's text file), and writing them.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use super::checks::check_output;
use crate::report;

/// `--json` and `--csv`, shared by every experiment that writes records.
#[derive(Args)]
pub struct RecordsArgs {
    /// Write the records as JSON (`-` for stdout: no table, no progress bar). The folder must
    /// exist; the file is checked for writing before the run.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the records as CSV (a file: `-` is refused). The folder must exist.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

impl RecordsArgs {
    /// The outputs asked for (no chart).
    pub fn outputs(&self) -> Outputs<'_> {
        Outputs {
            json: self.json.as_deref(),
            csv: self.csv.as_deref(),
            plot: None,
            table: None,
        }
    }

    /// Fails, naming the path, unless both outputs can be written (before any work starts).
    pub fn check(&self) -> Result<()> {
        check_output("--json", self.json.as_deref(), true)?;
        check_output("--csv", self.csv.as_deref(), false)
    }

    /// JSON goes to stdout: print nothing else.
    pub fn quiet(&self) -> bool {
        self.json.as_deref() == Some(Path::new("-"))
    }
}

/// `--json`, `--csv` and `--plot`, shared by the experiments that draw one chart.
#[derive(Args)]
pub struct OutputArgs {
    #[command(flatten)]
    pub records: RecordsArgs,
    /// Draw the results as an SVG chart (a file: `-` is refused). The folder must exist.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

impl OutputArgs {
    pub fn outputs(&self) -> Outputs<'_> {
        Outputs {
            plot: self.plot.as_deref(),
            ..self.records.outputs()
        }
    }

    /// Fails, naming the path, unless every output can be written (before any work starts).
    pub fn check(&self) -> Result<()> {
        self.records.check()?;
        check_output("--plot", self.plot.as_deref(), false)
    }

    /// JSON goes to stdout: print nothing else.
    pub fn quiet(&self) -> bool {
        self.records.quiet()
    }
}

/// The outputs of one run: each file is written when given.
pub struct Outputs<'a> {
    pub json: Option<&'a Path>,
    pub csv: Option<&'a Path>,
    pub plot: Option<&'a Path>,
    pub table: Option<&'a Path>,
}

/// Prints the table (unless quiet) and writes the table, JSON and CSV files that were asked for.
pub fn emit<R: serde::Serialize>(
    table: &str,
    records: &[R],
    out: &Outputs<'_>,
    quiet: bool,
) -> Result<()> {
    if !quiet {
        print!("{table}");
    }
    if let Some(path) = out.table {
        fs::write(path, table).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = out.json {
        report::write_json(path, records)?;
    }
    if let Some(path) = out.csv {
        report::write_csv(path, records)?;
    }
    Ok(())
}

//! The `taskpools report` subcommand: its arguments and what it runs.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::{read_dir, table, BEGIN, END};

/// The arguments of `taskpools report`.
#[derive(Args)]
pub struct ReportArgs {
    /// The folder that `taskpools tour --out DIR` wrote (its `tour.json` and the experiments'
    /// JSON files).
    pub dir: PathBuf,
    /// Instead of printing the markdown, put it into this file between the lines
    /// `<!-- results:begin -->` and `<!-- results:end -->` (the README's results section),
    /// leaving the rest of the file as it is.
    #[arg(long)]
    pub readme: Option<PathBuf>,
}

/// Runs `taskpools report`.
pub fn exec(a: ReportArgs) -> Result<()> {
    // The file to rewrite must have its block before the tour is read.
    let readme = match &a.readme {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--readme: reading {}", path.display()))?;
            if table::replace_block(&text, "").is_none() {
                bail!(
                    "--readme {}: no `{BEGIN}` line followed by an `{END}` line to put the \
                     results between",
                    path.display()
                );
            }
            Some((path, text))
        }
        None => None,
    };
    let tour = read_dir(&a.dir)?;
    let md = table::markdown(&tour);
    match readme {
        None => print!("{md}"),
        Some((path, text)) => {
            let new = table::replace_block(&text, &md).expect("checked above");
            std::fs::write(path, new)
                .with_context(|| format!("--readme: writing {}", path.display()))?;
            println!(
                "{}: results block replaced ({} from {})",
                path.display(),
                crate::report::plural(tour.rows.len(), "row", "rows"),
                a.dir.display()
            );
        }
    }
    Ok(())
}

//! `distdebug report`: scores results trees and writes the self-contained HTML report.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::report;
use crate::score::ScoreOptions;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results folders of configurations, e.g. results/baseline results/gpt-x
    #[arg(value_name = "RESULTS/CONFIG", required = true)]
    pub configs: Vec<PathBuf>,
    /// The HTML file to write
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Schema-valid attempts counted per incident
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub attempts: u64,
    /// Bootstrap resamples for the 95% intervals
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub bootstrap: u64,
    /// Seed of the bootstrap's random generator
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub dir: IncidentsDirArg,
}

pub fn run(a: ReportArgs) -> CliResult {
    // The folder must exist: a mistyped --out should not leave folders behind.
    if let Some(parent) = a.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return Err(CliError::bad_input(format!(
                "{}: no such folder for --out {}; create it first",
                parent.display(),
                a.out.display()
            )));
        }
    }
    if a.out.is_dir() {
        return Err(CliError::usage(format!(
            "{}: is a folder; --out takes the HTML file to write, e.g. report.html",
            a.out.display()
        )));
    }
    let opts = ScoreOptions {
        attempts: a.attempts as usize,
        bootstrap: a.bootstrap as usize,
        seed: a.seed,
    };
    let incidents = crate::incident::incidents_dir(a.dir.dir.as_deref());
    let (html, scores) =
        report::build_report(&a.configs, &incidents, &opts, &a.out).map_err(|e| CliError {
            status: 1,
            messages: e.lines().map(str::to_string).collect(),
        })?;
    for w in &scores.warnings {
        eprintln!("{w}");
    }
    report::write_report(&a.out, &html)?;
    let incidents: usize = scores.configs.iter().map(|c| c.incidents).sum();
    println!(
        "wrote {} ({} configuration(s), {} incident result(s), {} KiB)",
        a.out.display(),
        scores.configs.len(),
        incidents,
        html.len().div_ceil(1024)
    );
    Ok(())
}

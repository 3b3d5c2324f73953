//! `distdebug score`: scores results trees and prints the table, or the JSON documented in docs/scoring.md.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::score::{self, ScoreOptions};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// Results folders of configurations, e.g. results/baseline
    #[arg(value_name = "RESULTS/CONFIG", required = true)]
    pub configs: Vec<PathBuf>,
    /// Schema-valid attempts counted per incident
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub attempts: u64,
    /// Bootstrap resamples for the 95% intervals
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub bootstrap: u64,
    /// Seed of the bootstrap's random generator
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON object instead of the table
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dir: IncidentsDirArg,
}

pub fn run(a: ScoreArgs) -> CliResult {
    let opts = ScoreOptions {
        attempts: a.attempts as usize,
        bootstrap: a.bootstrap as usize,
        seed: a.seed,
    };
    let incidents = crate::incident::incidents_dir(a.dir.dir.as_deref());
    // Named once here rather than once per incident that cannot be found in it.
    if !incidents.is_dir() {
        return Err(CliError::bad_input(format!(
            "{}: no such incidents folder (from --dir, $DISTDEBUG_INCIDENTS, or ./incidents)",
            incidents.display()
        )));
    }
    let report = score::score_configs(&a.configs, &incidents, &opts).map_err(|e| CliError {
        status: 1,
        messages: e.lines().map(str::to_string).collect(),
    })?;
    for w in &report.warnings {
        eprintln!("{w}");
    }
    if a.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::bad_input(format!("cannot serialise the scores: {e}")))?;
        println!("{text}");
    } else {
        print!("{}", score::render_table(&report));
    }
    Ok(())
}

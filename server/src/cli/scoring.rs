//! The bridge from running attempts to scoring them (the scoring rules, docs/scoring.md): each finished attempt gets
//! its `diagnosis_scores.json`, and the demo prints the score table.

use super::run::RunOutcome;
use super::CliError;
use crate::incident::Incident;
use crate::score::{self, ScoreOptions};
use std::path::Path;

/// Scores one finished attempt, writing its `diagnosis_scores.json`. An incident whose labels
/// cannot be read is reported and left unscored (`distdebug score` will say why again).
pub(crate) fn score_attempt(incident: &Incident, attempt_dir: &Path) {
    match incident.load_labels() {
        Ok(labels) => {
            score::score_attempt_dir(incident, &labels, attempt_dir);
        }
        Err(p) => eprintln!("{}: not scored: {p}", attempt_dir.display()),
    }
}

/// Prints the score table of the configuration in `config_dir`.
pub(crate) fn print_results(
    config_dir: &Path,
    incidents_dir: &Path,
    outcome: &RunOutcome,
    attempts: u32,
) -> Result<(), CliError> {
    let opts = ScoreOptions {
        attempts: attempts.max(1) as usize,
        ..ScoreOptions::default()
    };
    let report =
        score::score_configs(&[config_dir.to_path_buf()], incidents_dir, &opts).map_err(|e| {
            CliError {
                status: 1,
                messages: e.lines().map(str::to_string).collect(),
            }
        })?;
    for w in &report.warnings {
        eprintln!("{w}");
    }
    println!(
        "{} incidents, {} attempts",
        outcome.incidents.len(),
        outcome.attempts.len()
    );
    print!("{}", score::render_table(&report));
    Ok(())
}

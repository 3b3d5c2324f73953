//! The bridge from running attempts to scoring them (CONTRACT §3): each finished attempt
//! gets its `diagnosis_scores.json`, and the demo prints the table.

use super::run::RunOutcome;
use super::CliError;
use crate::incident::Incident;
use std::path::Path;

/// Scores one finished attempt. (The scorer lands separately; until then attempts are left
/// for `distdebug score`.)
pub(crate) fn score_attempt(_incident: &Incident, _attempt_dir: &Path) {}

/// Prints what a run did, one line per incident.
pub(crate) fn print_results(
    _config_dir: &Path,
    _incidents_dir: &Path,
    outcome: &RunOutcome,
    _attempts: u32,
) -> Result<(), CliError> {
    println!(
        "{:<44} {:<8} {:>7} {:>7}",
        "incident", "language", "blocks", "exit"
    );
    for inc in &outcome.incidents {
        for s in outcome.attempts.iter().filter(|s| s.incident == inc.id()) {
            println!(
                "{:<44} {:<8} {:>7} {:>7}",
                inc.id(),
                inc.manifest.language,
                s.blocks,
                s.exit.as_str()
            );
        }
    }
    Ok(())
}

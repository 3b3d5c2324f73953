//! `distdebug eval`: runs the offline localizer over a corpus and measures it: the four
//! metrics with bootstrap intervals (overall, by tag, by system) and the recall of each stage
//! of the localizer, per incident and overall. Upstream incidents are the headline; the
//! self-contained ones (written for this project) may serve as training data only.

pub mod stages;
pub mod table;
pub mod workspaces;

use crate::agent::baseline::{self, trace::StageTrace, BaselineConfig};
use crate::agent::AgentInput;
use crate::incident::{self, Incident, Labels};
use crate::score::{score_blocks, Metrics, RepoFiles};
use serde::{Deserialize, Serialize};
use stages::LabelStages;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which incidents an evaluation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncidentSet {
    /// Incidents tagged `upstream` (real bugs of real systems).
    Upstream,
    /// The incidents written for this project.
    SelfContained,
    All,
}

#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub incidents_dir: PathBuf,
    /// Where prepared workspaces are kept between runs.
    pub work: PathBuf,
    pub set: IncidentSet,
    /// Only these incident ids (all of the set when empty).
    pub only: Vec<String>,
    pub config: BaselineConfig,
}

/// One incident's outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IncidentResult {
    pub id: String,
    pub system: String,
    pub language: String,
    pub tags: Vec<String>,
    pub metrics: Metrics,
    pub blocks: usize,
    pub lines: u64,
    pub seconds: f64,
    pub labels: Vec<LabelStages>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EvalReport {
    pub results: Vec<IncidentResult>,
    /// Incidents that could not be run, with the reason.
    pub skipped: Vec<(String, String)>,
}

/// The incidents of `opts.set` (and `opts.only`), sorted by id.
pub fn select_incidents(opts: &EvalOptions) -> Result<Vec<Incident>, String> {
    let dirs = incident::list_incident_dirs(&opts.incidents_dir).map_err(|e| {
        format!(
            "{}: cannot list incidents: {e}",
            opts.incidents_dir.display()
        )
    })?;
    let mut out = Vec::new();
    for d in dirs {
        let inc = Incident::load(&d).map_err(|p| p.to_string())?;
        let upstream = inc.manifest.has_tag("upstream");
        let wanted = match opts.set {
            IncidentSet::Upstream => upstream,
            IncidentSet::SelfContained => !upstream,
            IncidentSet::All => true,
        };
        if wanted && (opts.only.is_empty() || opts.only.iter().any(|o| o == inc.id())) {
            out.push(inc);
        }
    }
    out.sort_by(|a, b| a.id().cmp(b.id()));
    Ok(out)
}

/// Runs one attempt per incident (the localizer is deterministic), scores it and records
/// each stage's ranks. `progress` hears one line per incident.
pub fn run_eval(opts: &EvalOptions, progress: &mut dyn FnMut(&str)) -> Result<EvalReport, String> {
    let mut report = EvalReport::default();
    for inc in select_incidents(opts)? {
        if let Some(why) = workspaces::unavailable(&inc) {
            progress(&format!("{}: skipped: {why}", inc.id()));
            report.skipped.push((inc.id().to_string(), why));
            continue;
        }
        match eval_incident(&inc, opts) {
            Ok(r) => {
                progress(&format!(
                    "{}: coverage {:.0}%, precision {:.0}%, files {:.0}%, {} blocks, {:.1} s, lost at {}",
                    r.id,
                    100.0 * r.metrics.block_coverage,
                    100.0 * r.metrics.block_precision,
                    100.0 * r.metrics.file_coverage,
                    r.blocks,
                    r.seconds,
                    stages::lost_at(&r.labels)
                ));
                report.results.push(r);
            }
            Err(e) => {
                progress(&format!("{}: skipped: {e}", inc.id()));
                report.skipped.push((inc.id().to_string(), e));
            }
        }
    }
    Ok(report)
}

fn eval_incident(inc: &Incident, opts: &EvalOptions) -> Result<IncidentResult, String> {
    let labels: Labels = inc.load_labels().map_err(|p| p.to_string())?;
    let ws = workspaces::ensure(inc, &opts.work)?;
    let input = AgentInput::from_workspace(&ws, 1, std::env::temp_dir())?;
    let t = Instant::now();
    let (diagnosis, trace): (_, StageTrace) = baseline::localize_traced(&opts.config, &input)?;
    let seconds = t.elapsed().as_secs_f64();
    Ok(score_incident(
        inc,
        &labels,
        &diagnosis.blocks,
        &trace,
        seconds,
    ))
}

/// Scores named blocks and a stage trace against an incident's labels.
pub fn score_incident(
    inc: &Incident,
    labels: &Labels,
    blocks: &[crate::attempt::DiagnosisBlock],
    trace: &StageTrace,
    seconds: f64,
) -> IncidentResult {
    let files = RepoFiles::for_incident(inc);
    let scores = score_blocks(&labels.blocks, blocks, &|p| files.line_count(p));
    let m = &inc.manifest;
    IncidentResult {
        id: m.id.clone(),
        system: m.system.clone(),
        language: m.language.clone(),
        tags: m.tags.clone(),
        metrics: scores.metrics,
        blocks: blocks.len(),
        lines: blocks
            .iter()
            .map(|b| u64::from(b.end_line.saturating_sub(b.start_line)) + 1)
            .sum(),
        seconds,
        labels: stages::label_stages(&labels.blocks, trace, &scores.label_reached),
    }
}

/// Writes the report as JSON (for comparing runs).
pub fn save(report: &EvalReport, path: &Path) -> Result<(), String> {
    crate::util::fs::write_json_atomic(path, report)
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Reads a report `save` wrote.
pub fn load(path: &Path) -> Result<EvalReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: not an evaluation written by `distdebug eval --json`: {e}",
            path.display()
        )
    })
}

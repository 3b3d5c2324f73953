//! `distdebug eval`: runs the offline localizer over a corpus and measures it: the four
//! metrics with bootstrap intervals (overall, by tag, by system) and the recall of each stage
//! of the localizer, per incident and overall. Upstream incidents are the headline; the
//! self-contained ones (written for this project) may serve as training data only.

pub mod fit;
pub mod fixed;
pub mod paired;
pub mod stages;
pub mod table;
pub mod workspaces;

use crate::agent::baseline::stages::{places::Place, rank::Model, select::FilePointer};
use crate::agent::baseline::{self, trace::StageTrace, BaselineConfig};
use crate::agent::AgentInput;
use crate::incident::{self, Incident, Labels};
use crate::score::{score_blocks, Metrics, RepoFiles};
use serde::{Deserialize, Serialize};
use stages::LabelStages;
use std::collections::HashMap;
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
    /// Fit the ranking and selection leaving one system out at a time.
    pub folds_by_system: bool,
    /// Read each incident's places from `<work>/places/<id>.json` when an earlier run wrote
    /// them (valid only while the stages before the ranking are unchanged), else gather and
    /// write them.
    pub reuse_places: bool,
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

/// One fold of leave-one-system-out: the system held out and what was fitted without it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fold {
    pub held_out: String,
    pub training_incidents: usize,
    pub model: Model,
    pub max_blocks: usize,
    /// Labeled blocks the selection expects per incident (older runs had a margin instead).
    #[serde(default)]
    pub expected_labels: Option<f64>,
    #[serde(default = "one")]
    pub per_function: usize,
    /// Runs before the cap per file had none.
    #[serde(default = "no_cap")]
    pub per_file: usize,
    /// When the selection points at one more file (runs before it never did).
    #[serde(default)]
    pub pointer: Option<FilePointer>,
}

impl Fold {
    /// The selection in words, for progress lines and tables.
    pub fn describe_selection(&self) -> String {
        let how = match self.expected_labels {
            Some(l) => format!("{l:.2} labeled blocks expected"),
            None => "no expected labels".to_string(),
        };
        let pointer = match self.pointer {
            Some(fp) => format!(
                "; one more file pointed at when it pays (file chance {:.2}{:+.2}·log-odds, {:.2} labeled files expected)",
                fp.bias, fp.slope, fp.expected_files
            ),
            None => String::new(),
        };
        format!(
            "at most {} blocks, {} per function, {} per file, {how}{pointer}",
            self.max_blocks, self.per_function, self.per_file
        )
    }
}

fn one() -> usize {
    1
}

fn no_cap() -> usize {
    usize::MAX
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EvalReport {
    /// Upstream results: held out of their fold's fit with `--folds system`.
    pub results: Vec<IncidentResult>,
    /// The folds, when weights were fitted.
    #[serde(default)]
    pub folds: Vec<Fold>,
    /// Fitted on every incident (what the agent ships), when weights were fitted.
    #[serde(default)]
    pub fitted_on_all: Option<Fold>,
    /// Incidents that could not be run, with the reason.
    pub skipped: Vec<(String, String)>,
    /// The reported incidents' rankings (held out with `--folds system`) with the best k
    /// places named, for each k of `fixed::COUNTS`.
    #[serde(default)]
    pub fixed_counts: Vec<fixed::FixedCount>,
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

/// An incident with its places gathered once (ranking and selection run on them per fold).
struct Gathered {
    incident: Incident,
    labels: Labels,
    places: Vec<Place>,
    seconds: f64,
}

/// Runs the stages up to the ranking once per incident, then ranks and selects with the
/// configured weights, or, with `folds_by_system`, with weights fitted without the
/// incident's system; scores each and records each stage's ranks. `progress` hears one line
/// per incident.
pub fn run_eval(opts: &EvalOptions, progress: &mut dyn FnMut(&str)) -> Result<EvalReport, String> {
    let mut report = EvalReport::default();
    let mut gathered: Vec<Gathered> = Vec::new();
    for inc in select_incidents(opts)? {
        if let Some(why) = workspaces::unavailable(&inc) {
            progress(&format!("{}: skipped: {why}", inc.id()));
            report.skipped.push((inc.id().to_string(), why));
            continue;
        }
        match gather(inc, opts) {
            Ok(g) => {
                progress(&format!(
                    "{}: {} places in {:.1} s",
                    g.incident.id(),
                    g.places.len(),
                    g.seconds
                ));
                gathered.push(g);
            }
            Err((id, e)) => {
                progress(&format!("{id}: skipped: {e}"));
                report.skipped.push((id, e));
            }
        }
    }
    let upstream = |g: &Gathered| g.incident.manifest.has_tag("upstream");
    let mut fixed_sums = fixed::Sums::default();
    if !opts.folds_by_system {
        for g in gathered
            .iter()
            .filter(|g| upstream(g) || opts.set != IncidentSet::Upstream)
        {
            let files = RepoFiles::for_incident(&g.incident);
            report.results.push(finish(g, &opts.config, &files));
            fixed_sums.add(&at_fixed_counts(g, &opts.config, &files));
        }
        report.fixed_counts = fixed_sums.means();
        return Ok(report);
    }
    let mut systems: Vec<String> = gathered
        .iter()
        .filter(|g| upstream(g))
        .map(|g| g.incident.manifest.system.clone())
        .collect();
    systems.sort();
    systems.dedup();
    for system in &systems {
        let train: Vec<&Gathered> = gathered
            .iter()
            .filter(|g| !upstream(g) || g.incident.manifest.system != *system)
            .collect();
        let fold = fit_fold(system, &train);
        progress(&format!(
            "fold {system}: fitted on {} incidents; {}; {}",
            fold.training_incidents,
            fold.describe_selection(),
            fold.model.describe()
        ));
        let cfg = fold_config(&fold, &opts.config);
        for g in gathered
            .iter()
            .filter(|g| upstream(g) && g.incident.manifest.system == *system)
        {
            let files = RepoFiles::for_incident(&g.incident);
            report.results.push(finish(g, &cfg, &files));
            fixed_sums.add(&at_fixed_counts(g, &cfg, &files));
        }
        report.folds.push(fold);
    }
    report.fixed_counts = fixed_sums.means();
    report.results.sort_by(|a, b| a.id.cmp(&b.id));
    report.fitted_on_all = Some(fit_fold("none", &gathered.iter().collect::<Vec<_>>()));
    Ok(report)
}

fn fit_fold(held_out: &str, train: &[&Gathered]) -> Fold {
    let samples: Vec<fit::Sample> = train
        .iter()
        .map(|g| fit::Sample {
            places: &g.places,
            labels: &g.labels.blocks,
        })
        .collect();
    let (model, sel) = fit::fit(&samples);
    Fold {
        held_out: held_out.to_string(),
        training_incidents: train.len(),
        model,
        max_blocks: sel.max_blocks,
        expected_labels: sel.expected_labels,
        per_function: sel.per_function,
        per_file: sel.per_file,
        pointer: sel.pointer,
    }
}

/// The agent's configuration with a fold's fitted weights and selection.
pub fn fold_config(fold: &Fold, base: &BaselineConfig) -> BaselineConfig {
    BaselineConfig {
        model: fold.model.clone(),
        max_blocks: fold.max_blocks,
        expected_labels: fold.expected_labels,
        per_function: fold.per_function,
        per_file: fold.per_file,
        pointer: fold.pointer,
        ..base.clone()
    }
}

fn gather(inc: Incident, opts: &EvalOptions) -> Result<Gathered, (String, String)> {
    let id = inc.id().to_string();
    let run = || -> Result<Gathered, String> {
        let labels: Labels = inc.load_labels().map_err(|p| p.to_string())?;
        let saved = opts.work.join("places").join(format!("{}.json", inc.id()));
        if opts.reuse_places {
            if let Some((places, seconds)) = std::fs::read_to_string(&saved)
                .ok()
                .and_then(|t| serde_json::from_str::<(Vec<Place>, f64)>(&t).ok())
            {
                return Ok(Gathered {
                    seconds,
                    incident: inc.clone(),
                    labels,
                    places,
                });
            }
        }
        let ws = workspaces::ensure(&inc, &opts.work)?;
        let input = AgentInput::from_workspace(&ws, 1, std::env::temp_dir())?;
        let t = Instant::now();
        let places = baseline::gather_places(&opts.config, &input)?;
        let seconds = t.elapsed().as_secs_f64();
        if opts.reuse_places {
            std::fs::create_dir_all(opts.work.join("places"))
                .and_then(|_| crate::util::fs::write_json_atomic(&saved, &(&places, seconds)))
                .map_err(|e| format!("{}: cannot write: {e}", saved.display()))?;
        }
        Ok(Gathered {
            seconds,
            incident: inc.clone(),
            labels,
            places,
        })
    };
    run().map_err(|e| (id, e))
}

/// Ranks, selects and scores one gathered incident (`files`: its repository's files, opened
/// once per incident for every scoring of it).
fn finish(g: &Gathered, cfg: &BaselineConfig, files: &RepoFiles) -> IncidentResult {
    let (blocks, trace) = named_blocks(g, cfg);
    score_incident(&g.incident, &g.labels, &blocks, &trace, g.seconds, files)
}

/// The blocks `cfg` names for a gathered incident, and the trace of its stages.
fn named_blocks(
    g: &Gathered,
    cfg: &BaselineConfig,
) -> (Vec<crate::attempt::DiagnosisBlock>, StageTrace) {
    let mut places = g.places.clone();
    let (chosen, trace) = baseline::rank_and_select(cfg, &mut places);
    (baseline::diagnosis_blocks(&places, &chosen), trace)
}

/// One gathered incident's metrics with the best k places named, for each k of
/// `fixed::COUNTS` (ranked with `cfg`'s weights).
fn at_fixed_counts(
    g: &Gathered,
    cfg: &BaselineConfig,
    files: &RepoFiles,
) -> [Metrics; fixed::COUNTS.len()] {
    fixed::COUNTS.map(|k| {
        let (blocks, _) = named_blocks(g, &fixed::config(cfg, k));
        score_blocks(&g.labels.blocks, &blocks, &|p| files.line_count(p)).metrics
    })
}

/// Scores named blocks and a stage trace against an incident's labels.
pub fn score_incident(
    inc: &Incident,
    labels: &Labels,
    blocks: &[crate::attempt::DiagnosisBlock],
    trace: &StageTrace,
    seconds: f64,
    files: &RepoFiles,
) -> IncidentResult {
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
    serde_json::from_str(&text).map_err(|e| not_an_evaluation(path, e))
}

fn not_an_evaluation(path: &Path, e: serde_json::Error) -> String {
    format!(
        "{}: not an evaluation written by `distdebug eval --json`: {e}",
        path.display()
    )
}

/// Pools the per-incident results of several reports `save` wrote into one (runs of batches
/// scored at different times, each once, as they arrived): only the results are kept, since
/// each run may come from another build. An incident in two of them is an error, as it
/// would count twice.
pub fn pool(paths: &[PathBuf]) -> Result<EvalReport, String> {
    let mut pooled = EvalReport::default();
    let mut seen: HashMap<String, &Path> = HashMap::new();
    for p in paths {
        let r = load_results(p)?;
        for res in r.results {
            if let Some(first) = seen.get(&res.id) {
                return Err(format!(
                    "{}: incident {} is also in {}; pooled runs must not share incidents",
                    p.display(),
                    res.id,
                    first.display()
                ));
            }
            seen.insert(res.id.clone(), p);
            pooled.results.push(res);
        }
    }
    pooled.results.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(pooled)
}

/// Reads the per-incident results of a report `save` wrote, for a paired comparison. Only the
/// results are read: the folds' weights of an earlier build may have other features.
pub fn load_results(path: &Path) -> Result<EvalReport, String> {
    #[derive(Deserialize)]
    struct Results {
        results: Vec<IncidentResult>,
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let r: Results = serde_json::from_str(&text).map_err(|e| not_an_evaluation(path, e))?;
    Ok(EvalReport {
        results: r.results,
        ..EvalReport::default()
    })
}

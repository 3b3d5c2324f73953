//! Scoring (CONTRACT §3–§4): per-attempt metrics, the protocol across attempts, bootstrap, leakage guard.
//!
//! Plain library code: the command line (`distdebug score`), the language server and the
//! report all call it. `metrics` scores blocks in memory; `attempt` scores one attempt folder
//! and writes `diagnosis_scores.json`; `protocol` turns attempts into incident and
//! configuration scores; `score_configs` does all of it for results trees. `looked` says where
//! an agent read and when it first read a labeled line; `replay` the same step by step, for
//! stepping through an attempt in the editor.

pub mod attempt;
pub mod bench;
pub mod bootstrap;
pub mod leakage;
pub mod looked;
pub mod metrics;
pub mod protocol;
pub mod replay;
pub mod table;

pub use attempt::{score_attempt_dir, AttemptScore, RepoFiles, ScoredBlock, ScoredLabel};
pub use leakage::{Leakage, LeakageContext, LeakageFlag};
pub use metrics::{score_blocks, BlockScores, Metrics};
pub use protocol::{ConfigScore, GroupScore, IncidentScore, IncidentStatus, MeanCi};
pub use table::render_table;

use crate::attempt::layout::{list_attempts, list_result_incidents};
use crate::incident::{Incident, Labels};
use protocol::IncidentInfo;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The protocol's knobs (`--attempts`, `--bootstrap`, `--seed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreOptions {
    /// Schema-valid attempts counted per incident (N).
    pub attempts: usize,
    /// Bootstrap resamples (B).
    pub bootstrap: usize,
    /// Seed of the bootstrap's generator.
    pub seed: u64,
}

impl Default for ScoreOptions {
    fn default() -> ScoreOptions {
        ScoreOptions {
            attempts: 3,
            bootstrap: 10_000,
            seed: 0,
        }
    }
}

/// What `distdebug score --json` prints: `{"configs": [...]}` (CONTRACT §5).
#[derive(Debug, Clone, Serialize)]
pub struct ScoreReport {
    pub configs: Vec<ConfigScore>,
    /// Problems that did not stop scoring (a `diagnosis_scores.json` that could not be
    /// written); the command line prints them on stderr.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// An incident loaded for scoring: its manifest, labels and file lookups.
struct Loaded {
    incident: Incident,
    labels: Labels,
    files: RepoFiles,
    info: IncidentInfo,
}

/// The name a configuration is shown by: its folder's name.
pub fn config_name(dir: &Path) -> String {
    let named = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    named(dir)
        .or_else(|| dir.canonicalize().ok().as_deref().and_then(named))
        .unwrap_or_else(|| dir.display().to_string())
}

/// Loads an incident and its labels for scoring; an incident whose labels are missing, bad
/// or empty cannot be scored.
fn load_incident(dir: &Path) -> Result<Loaded, String> {
    let incident = Incident::load(dir).map_err(|p| p.to_string())?;
    let labels = incident.load_labels().map_err(|p| p.to_string())?;
    if labels.blocks.is_empty() {
        return Err(format!(
            "{}: blocks: is empty; an incident needs at least one labeled block to be scored",
            incident.labels_path().display()
        ));
    }
    let files = RepoFiles::for_incident(&incident);
    let m = &incident.manifest;
    let info = IncidentInfo {
        id: m.id.clone(),
        system: m.system.clone(),
        category: m.category.as_str().to_string(),
        tags: m.tags.clone(),
    };
    Ok(Loaded {
        incident,
        labels,
        files,
        info,
    })
}

/// Scores every attempt under each `results/<config>` folder against the incidents in
/// `incidents_dir` (found by the incident folder names in the results tree), writes each
/// attempt's `diagnosis_scores.json`, and aggregates per configuration.
///
/// A missing results folder, an incident folder with no incident, or an incident that cannot
/// be scored (bad or empty labels) is an error (one line per problem). Bad files inside the
/// results tree are not: their attempts are reported as not schema-valid.
pub fn score_configs(
    config_dirs: &[PathBuf],
    incidents_dir: &Path,
    opts: &ScoreOptions,
) -> Result<ScoreReport, String> {
    let mut problems: Vec<String> = Vec::new();
    // (config dir, its incident folders by id)
    let mut configs: Vec<(&PathBuf, Vec<(String, PathBuf)>)> = Vec::new();
    for dir in config_dirs {
        if !dir.is_dir() {
            problems.push(format!(
                "{}: no such results folder; expected results/<config> as written by `distdebug run`",
                dir.display()
            ));
            continue;
        }
        match list_result_incidents(dir) {
            Ok(list) => configs.push((dir, list)),
            Err(e) => problems.push(format!("{}: cannot list: {e}", dir.display())),
        }
    }
    // Each incident is loaded once, however many configurations name it.
    let mut wanted: BTreeMap<&str, &Path> = BTreeMap::new();
    for (_, list) in &configs {
        for (id, path) in list {
            wanted.entry(id.as_str()).or_insert(path.as_path());
        }
    }
    let loaded: Vec<(&str, Result<Loaded, String>)> = wanted
        .par_iter()
        .map(|(id, results_path)| {
            let dir = incidents_dir.join(id);
            let r = if dir.join("incident.json").is_file() {
                load_incident(&dir)
            } else {
                Err(format!(
                    "{}: no incident {id:?} in {}",
                    results_path.display(),
                    incidents_dir.display()
                ))
            };
            (*id, r)
        })
        .collect();
    let mut incidents: BTreeMap<&str, Loaded> = BTreeMap::new();
    for (id, r) in loaded {
        match r {
            Ok(l) => {
                incidents.insert(id, l);
            }
            Err(e) => problems.push(e),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }

    // Every attempt of every configuration is one job; rayon keeps the order of the jobs.
    struct Job<'a> {
        config: usize,
        incident: &'a str,
        dir: PathBuf,
    }
    let hosts: Vec<Vec<String>> = configs
        .iter()
        .map(|(d, _)| attempt::allowed_hosts(d))
        .collect();
    let mut jobs: Vec<Job> = Vec::new();
    for (c, (_, list)) in configs.iter().enumerate() {
        for (id, path) in list {
            for (_, dir) in list_attempts(path) {
                jobs.push(Job {
                    config: c,
                    incident: id.as_str(),
                    dir,
                });
            }
        }
    }
    let outcomes: Vec<attempt::AttemptOutcome> = jobs
        .par_iter()
        .map(|j| {
            let l = &incidents[j.incident];
            attempt::evaluate_attempt(&l.incident, &l.labels, &l.files, &hosts[j.config], &j.dir)
        })
        .collect();
    let warnings: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.write_error.clone())
        .collect();

    let mut by_key: BTreeMap<(usize, &str), Vec<attempt::AttemptOutcome>> = BTreeMap::new();
    for (job, out) in jobs.iter().zip(outcomes) {
        by_key
            .entry((job.config, job.incident))
            .or_default()
            .push(out);
    }
    let scored: Vec<ConfigScore> = configs
        .par_iter()
        .enumerate()
        .map(|(c, (dir, list))| {
            let per_incident: Vec<IncidentScore> = list
                .iter()
                .map(|(id, _)| {
                    let attempts = by_key
                        .get(&(c, id.as_str()))
                        .map(Vec::as_slice)
                        .unwrap_or(&[]);
                    protocol::score_incident(&incidents[id.as_str()].info, attempts, opts.attempts)
                })
                .collect();
            protocol::score_config(&config_name(dir), per_incident, opts)
        })
        .collect();
    Ok(ScoreReport {
        configs: scored,
        warnings,
    })
}

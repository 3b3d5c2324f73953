//! One attempt: read `diagnosis.json` (schema check) and the trajectory (leakage guard, tokens),
//! compute the metrics, and write `diagnosis_scores.json` beside them.

use super::leakage::{self, Leakage, LeakageContext, StepView};
use super::looked::{first_look, FirstLook, Read};
use super::metrics::{score_blocks, Metrics};
use crate::attempt::layout::{DIAGNOSIS, RUN_INFO, SCORES, TRAJECTORY, TRAJECTORY_LIVE};
use crate::attempt::{Diagnosis, RunInfo};
use crate::incident::{repo_cache, Incident, Labels, RepositorySource};
use crate::util::text::line_count;
use crate::util::untrusted::{self, Refused};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A labeled block with whether the diagnosis reached it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredLabel {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub reached: bool,
}

/// A predicted block with whether it hit a label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredBlock {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub hit: bool,
}

/// `diagnosis_scores.json` (CONTRACT §3), plus `schema_error` when the diagnosis is not
/// schema-valid. Paths are normalised; lines are as the files give them (before clipping).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptScore {
    pub incident: String,
    pub attempt: u32,
    pub schema_valid: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_error: Option<String>,
    pub leakage: Leakage,
    pub block_coverage: f64,
    pub block_precision: f64,
    pub block_hit_rate: f64,
    pub file_coverage: f64,
    pub labels: Vec<ScoredLabel>,
    pub blocks: Vec<ScoredBlock>,
    /// Where the agent looked (an extra field, after those of CONTRACT §3): the first step
    /// that read a labeled line. Left out when the attempt has no trajectory to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looked: Option<FirstLook>,
}

impl AttemptScore {
    pub fn metrics(&self) -> Metrics {
        Metrics {
            block_coverage: self.block_coverage,
            block_precision: self.block_precision,
            block_hit_rate: self.block_hit_rate,
            file_coverage: self.file_coverage,
        }
    }
}

/// An attempt's score plus what the protocol needs besides it.
#[derive(Debug, Clone)]
pub struct AttemptOutcome {
    pub score: AttemptScore,
    /// prompt + completion tokens from `trajectory.json`, when it could be read.
    pub tokens: Option<u64>,
    /// Why `diagnosis_scores.json` could not be written (the score itself stands).
    pub write_error: Option<String>,
}

/// Line counts of files at an incident's buggy revision, looked up once per path. A
/// self-contained incident reads its `repo/`; a git-url incident reads the repository cache
/// only when the cache already holds the buggy commit (scoring never fetches). Otherwise
/// nothing is known and no block is clipped.
pub struct RepoFiles {
    source: Source,
    cache: Mutex<HashMap<String, Option<u32>>>,
}

enum Source {
    Dir(PathBuf),
    Git(Mutex<(git2::Repository, git2::Oid)>),
    Unknown,
}

impl RepoFiles {
    pub fn for_incident(incident: &Incident) -> RepoFiles {
        let source = match &incident.manifest.repository {
            RepositorySource::Path(_) => match incident.repo_dir().map(|d| d.canonicalize()) {
                Some(Ok(root)) => Source::Dir(root),
                _ => Source::Unknown,
            },
            RepositorySource::Git { url, commit } => {
                match repo_cache::ensure_commit(url, commit, true) {
                    Ok(pair) => Source::Git(Mutex::new(pair)),
                    Err(_) => Source::Unknown,
                }
            }
        };
        RepoFiles {
            source,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// No file information at all (nothing is clipped).
    pub fn unknown() -> RepoFiles {
        RepoFiles {
            source: Source::Unknown,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// True when the buggy revision could be read (so missing files are known to be missing).
    pub fn is_known(&self) -> bool {
        !matches!(self.source, Source::Unknown)
    }

    /// The number of lines of a normalised relative path, or `None` when it is not a file at
    /// the buggy revision (or the revision cannot be read).
    pub fn line_count(&self, rel: &str) -> Option<u32> {
        if let Ok(c) = self.cache.lock() {
            if let Some(v) = c.get(rel) {
                return *v;
            }
        }
        let v = self.look_up(rel);
        if let Ok(mut c) = self.cache.lock() {
            c.insert(rel.to_string(), v);
        }
        v
    }

    pub fn has_file(&self, rel: &str) -> bool {
        self.line_count(rel).is_some()
    }

    fn look_up(&self, rel: &str) -> Option<u32> {
        if crate::util::paths::unsafe_rel_path_reason(rel).is_some() {
            return None;
        }
        match &self.source {
            Source::Dir(root) => {
                // Resolve links, and refuse anything that ends up outside the repository.
                let real = root.join(rel).canonicalize().ok()?;
                if !real.starts_with(root) || !real.is_file() {
                    return None;
                }
                std::fs::read(real).ok().map(|b| line_count(&b))
            }
            Source::Git(pair) => {
                let pair = pair.lock().ok()?;
                repo_cache::read_file_at(&pair.0, pair.1, rel).map(|b| line_count(&b))
            }
            Source::Unknown => None,
        }
    }
}

/// The model endpoint host a configuration may contact, from `results/<config>/run.json`.
pub fn allowed_hosts(config_dir: &Path) -> Vec<String> {
    std::fs::read_to_string(config_dir.join(RUN_INFO))
        .ok()
        .and_then(|t| serde_json::from_str::<RunInfo>(&t).ok())
        .and_then(|r| r.endpoint_host)
        .into_iter()
        .collect()
}

/// Scores the attempt in `attempt_dir` and writes `diagnosis_scores.json` beside its
/// `diagnosis.json`. Never fails: what cannot be read makes the attempt not schema-valid (with
/// the reason), and a failed write is reported on stderr.
pub fn score_attempt_dir(incident: &Incident, labels: &Labels, attempt_dir: &Path) -> AttemptScore {
    let files = RepoFiles::for_incident(incident);
    let hosts = attempt_dir
        .parent()
        .and_then(|p| p.parent())
        .map(allowed_hosts)
        .unwrap_or_default();
    let out = evaluate_attempt(incident, labels, &files, &hosts, attempt_dir);
    if let Some(e) = &out.write_error {
        eprintln!("{e}");
    }
    out.score
}

/// The attempt number of a folder named `attempt-<k>`.
pub fn attempt_number(attempt_dir: &Path) -> Option<u32> {
    attempt_dir
        .file_name()?
        .to_str()?
        .strip_prefix("attempt-")?
        .parse()
        .ok()
}

/// Reads, scores and writes one attempt (the work behind `score_attempt_dir`, with the file
/// lookups and allowed hosts shared across the attempts of a run).
pub fn evaluate_attempt(
    incident: &Incident,
    labels: &Labels,
    files: &RepoFiles,
    hosts: &[String],
    attempt_dir: &Path,
) -> AttemptOutcome {
    // The steps come from trajectory.json, else from the live trajectory.jsonl. Both are
    // read as untrusted files: a link, a FIFO or an oversized file makes the attempt invalid.
    let mut refused: Option<String> = None;
    let mut read_untrusted = |name: &str| match untrusted::read_regular(
        &attempt_dir.join(name),
        untrusted::TRAJECTORY_MAX,
    ) {
        Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Err(Refused::Missing) => None,
        Err(why) => {
            refused.get_or_insert(why.describe(name));
            None
        }
    };
    let json = read_untrusted(TRAJECTORY);
    let live = read_untrusted(TRAJECTORY_LIVE);
    let has_trajectory = json.is_some() || live.is_some();
    let (steps, tokens, traj_attempt) = match parse_trajectory(json.as_deref()) {
        Some(t) => t,
        None => (parse_jsonl(live.as_deref().unwrap_or_default()), None, None),
    };
    let attempt = attempt_number(attempt_dir).or(traj_attempt).unwrap_or(0);
    let has_file = |p: &str| files.has_file(p);
    let ctx = LeakageContext::for_incident(incident, hosts.to_vec(), &has_file);
    let leakage = leakage::check_views(&ctx, &steps);

    let diagnosis = match refused {
        Some(why) => Err(why),
        None => read_diagnosis(attempt_dir),
    };
    let file_lines = |p: &str| files.line_count(p);
    let blocks = match &diagnosis {
        Ok(d) => d.blocks.as_slice(),
        Err(_) => &[],
    };
    let s = score_blocks(&labels.blocks, blocks, &file_lines);
    let norm = crate::util::paths::normalize_rel;
    let score = AttemptScore {
        incident: incident.id().to_string(),
        attempt,
        schema_valid: diagnosis.is_ok(),
        schema_error: diagnosis.as_ref().err().cloned(),
        leakage,
        block_coverage: s.metrics.block_coverage,
        block_precision: s.metrics.block_precision,
        block_hit_rate: s.metrics.block_hit_rate,
        file_coverage: s.metrics.file_coverage,
        labels: labels
            .blocks
            .iter()
            .zip(&s.label_reached)
            .map(|(l, r)| ScoredLabel {
                path: norm(&l.path),
                start_line: l.start_line,
                end_line: l.end_line,
                reached: *r,
            })
            .collect(),
        blocks: blocks
            .iter()
            .zip(&s.block_hit)
            .map(|(b, h)| ScoredBlock {
                path: norm(&b.path),
                start_line: b.start_line,
                end_line: b.end_line,
                hit: *h,
            })
            .collect(),
        looked: has_trajectory.then(|| {
            let reads: Vec<Read> = steps
                .iter()
                .flat_map(|s| {
                    s.paths_read.iter().map(|p| {
                        let (start, end) = p.lines();
                        Read::new(s.index, &p.path, start, end)
                    })
                })
                .collect();
            first_look(&reads, &labels.blocks)
        }),
    };
    let path = attempt_dir.join(SCORES);
    let write_error = write_json_if_changed(&path, &score)
        .err()
        .map(|e| format!("{}: cannot write the scores: {e}", path.display()));
    AttemptOutcome {
        score,
        tokens,
        write_error,
    }
}

/// The diagnosis, or why the attempt is not schema-valid (naming `diagnosis.json`).
fn read_diagnosis(attempt_dir: &Path) -> Result<Diagnosis, String> {
    let path = attempt_dir.join(DIAGNOSIS);
    let text = match untrusted::read_regular(&path, untrusted::DIAGNOSIS_MAX) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| format!("{DIAGNOSIS}: not valid JSON: the file is not UTF-8"))?,
        Err(Refused::Missing) => {
            return Err(format!(
                "{DIAGNOSIS}: missing (the attempt submitted no diagnosis)"
            ))
        }
        Err(why) => return Err(why.describe(DIAGNOSIS)),
    };
    Diagnosis::parse(&text).map_err(|why| format!("{DIAGNOSIS}: {why}"))
}

/// `trajectory.json` as the scorer reads it: only what it needs, borrowed from the text.
#[derive(Deserialize)]
struct LeanTrajectory<'a> {
    #[serde(default)]
    attempt: Option<u32>,
    #[serde(default)]
    usage: Option<LeanUsage>,
    #[serde(borrow, default)]
    steps: Vec<StepView<'a>>,
}

#[derive(Deserialize)]
struct LeanUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// Steps, tokens used and attempt number from `trajectory.json` (in `json`); `None` when it
/// is missing or not a trajectory.
fn parse_trajectory(json: Option<&str>) -> Option<(Vec<StepView<'_>>, Option<u64>, Option<u32>)> {
    let t: LeanTrajectory = serde_json::from_str(json?).ok()?;
    let tokens = t.usage.map(|u| u.prompt_tokens + u.completion_tokens);
    Some((t.steps, tokens, t.attempt))
}

/// The steps of a live `trajectory.jsonl`; a torn last line or a line that is not a step is
/// skipped.
fn parse_jsonl(text: &str) -> Vec<StepView<'_>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Writes JSON atomically unless the file already holds exactly these bytes, so re-scoring
/// an unchanged results tree writes nothing. Scores are derived from the attempt's files and
/// rewritten by every run, so they skip the fsync (see `write_atomic_unsynced`).
fn write_json_if_changed<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    text.push('\n');
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    crate::util::fs::write_atomic_unsynced(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture() -> (Incident, Labels) {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/incidents/tiny-lease");
        let inc = Incident::load(&dir).unwrap();
        let labels = inc.load_labels().unwrap();
        (inc, labels)
    }

    fn attempt(root: &Path, k: u32, diagnosis: Option<&str>, steps: serde_json::Value) -> PathBuf {
        let dir = root.join("tiny-lease").join(format!("attempt-{k}"));
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(d) = diagnosis {
            std::fs::write(dir.join(DIAGNOSIS), d).unwrap();
        }
        let traj = json!({"incident": "tiny-lease", "attempt": k, "agent": "t", "exit": "submitted",
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}, "steps": steps});
        std::fs::write(dir.join(TRAJECTORY), traj.to_string()).unwrap();
        dir
    }

    #[test]
    fn scores_and_writes_diagnosis_scores_beside_the_diagnosis() {
        let (inc, labels) = fixture();
        let tmp = tempfile::tempdir().unwrap();
        // lease.py has 24 lines: 15..40 is clipped to 15..24, of which 15..18 are labeled.
        let dir = attempt(
            tmp.path(),
            2,
            Some(
                r#"{"blocks":[{"path":"./src/lease.py","start_line":15,"end_line":40},
                               {"path":"src\\server.py","start_line":1,"end_line":5}]}"#,
            ),
            json!([]),
        );
        let s = score_attempt_dir(&inc, &labels, &dir);
        assert!(s.schema_valid);
        assert_eq!(s.attempt, 2);
        assert_eq!(s.block_coverage, 1.0);
        assert!((s.block_precision - 4.0 / 15.0).abs() < 1e-12);
        assert_eq!(s.block_hit_rate, 0.5);
        assert_eq!(s.blocks[0].path, "src/lease.py");
        assert_eq!(s.blocks[1].path, "src/server.py");
        assert_eq!((s.blocks[0].hit, s.blocks[1].hit), (true, false));
        assert!(s.labels[0].reached);
        let on_disk: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(SCORES)).unwrap()).unwrap();
        let keys: Vec<&str> = on_disk
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "incident",
                "attempt",
                "schema_valid",
                "leakage",
                "block_coverage",
                "block_precision",
                "block_hit_rate",
                "file_coverage",
                "labels",
                "blocks",
                "looked"
            ]
        );
        assert_eq!(
            on_disk["looked"],
            json!({"first_look_step": null, "labels_read": 0, "labels": 1, "files_read": 0})
        );
        assert_eq!(on_disk["leakage"], json!({"flagged": false, "reasons": []}));
        assert_eq!(
            on_disk["labels"][0],
            json!({"path": "src/lease.py", "start_line": 13, "end_line": 18, "reached": true})
        );
    }

    #[test]
    fn an_invalid_diagnosis_records_its_reason_and_scores_zero() {
        let (inc, labels) = fixture();
        let tmp = tempfile::tempdir().unwrap();
        for (k, text, want) in [
            (1, Some("{not json"), "diagnosis.json: not valid JSON"),
            (2, None, "diagnosis.json: missing"),
            (
                3,
                Some(r#"{"blocks":[{"path":"/etc/passwd","start_line":1,"end_line":2}]}"#),
                "absolute",
            ),
            (
                4,
                Some(r#"{"blocks":[{"path":"a/../../b","start_line":1,"end_line":2}]}"#),
                "'..'",
            ),
            (
                5,
                Some(r#"{"blocks":[{"path":"src/lease.py","start_line":9,"end_line":2}]}"#),
                "after end_line",
            ),
            (
                6,
                Some(r#"{"blocks":[{"path":"src/lease.py","start_line":0,"end_line":2}]}"#),
                "start_line: 0",
            ),
            (7, Some(r#"{"summary":"no blocks"}"#), "blocks: missing"),
        ] {
            let dir = attempt(tmp.path(), k, text, json!([]));
            let s = score_attempt_dir(&inc, &labels, &dir);
            assert!(!s.schema_valid, "{k}");
            let why = s.schema_error.clone().unwrap();
            assert!(why.contains(want), "{k}: {why}");
            assert_eq!(s.metrics(), Metrics::default());
            let on_disk = std::fs::read_to_string(dir.join(SCORES)).unwrap();
            assert!(on_disk.contains("\"schema_error\""), "{on_disk}");
        }
    }

    #[test]
    fn leakage_is_read_from_the_trajectory_or_its_live_log() {
        let (inc, labels) = fixture();
        let tmp = tempfile::tempdir().unwrap();
        let dir = attempt(
            tmp.path(),
            1,
            Some(r#"{"blocks":[]}"#),
            json!([{"index": 0, "kind": "action", "tool": "bash", "args": {"command": "cat ../labels.json"}}]),
        );
        let s = score_attempt_dir(&inc, &labels, &dir);
        assert!(s.leakage.flagged);
        assert_eq!(s.leakage.reasons[0].rule, "labels");
        // Without trajectory.json, the live log is read.
        std::fs::remove_file(dir.join(TRAJECTORY)).unwrap();
        std::fs::write(
            dir.join(TRAJECTORY_LIVE),
            "{\"index\":0,\"kind\":\"action\",\"tool\":\"bash\",\"args\":{\"command\":\"git apply fix.patch\"}}\n",
        )
        .unwrap();
        let s = score_attempt_dir(&inc, &labels, &dir);
        assert_eq!(s.leakage.reasons[0].rule, "fix-patch");
    }

    #[test]
    fn the_first_step_that_read_a_labeled_line_is_added_to_the_scores() {
        let (inc, labels) = fixture();
        let tmp = tempfile::tempdir().unwrap();
        // The label is src/lease.py 13-18: step 1 reads 1-12 (not yet), step 3 reads 10-20.
        let dir = attempt(
            tmp.path(),
            1,
            Some(r#"{"blocks":[]}"#),
            json!([
                {"index": 0, "kind": "thought"},
                {"index": 1, "kind": "action", "tool": "read",
                 "paths_read": [{"path": "src/lease.py", "start_line": 1, "end_line": 12}]},
                {"index": 2, "kind": "action", "tool": "read",
                 "paths_read": [{"path": "src/server.py", "start_line": "x"}]},
                {"index": 3, "kind": "action", "tool": "read",
                 "paths_read": [{"path": "./src/lease.py", "start_line": 10, "end_line": 20}]}
            ]),
        );
        let s = score_attempt_dir(&inc, &labels, &dir);
        assert_eq!(
            s.looked,
            Some(FirstLook {
                first_look_step: Some(3),
                labels_read: 1,
                labels: 1,
                files_read: 2
            })
        );
        // An attempt without any trajectory says nothing about where it looked.
        std::fs::remove_file(dir.join(TRAJECTORY)).unwrap();
        assert_eq!(score_attempt_dir(&inc, &labels, &dir).looked, None);
    }

    #[test]
    fn rescoring_an_unchanged_attempt_does_not_rewrite_the_file() {
        let (inc, labels) = fixture();
        let tmp = tempfile::tempdir().unwrap();
        let dir = attempt(tmp.path(), 1, Some(r#"{"blocks":[]}"#), json!([]));
        score_attempt_dir(&inc, &labels, &dir);
        let p = dir.join(SCORES);
        let before = std::fs::metadata(&p).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        score_attempt_dir(&inc, &labels, &dir);
        assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), before);
    }

    #[test]
    fn repository_lookups_stay_inside_the_repository() {
        let (inc, _) = fixture();
        let files = RepoFiles::for_incident(&inc);
        assert!(files.is_known());
        assert_eq!(files.line_count("src/lease.py"), Some(24));
        assert_eq!(files.line_count("src/nope.py"), None);
        assert_eq!(files.line_count("../incident.json"), None);
        assert_eq!(files.line_count("src"), None, "a folder is not a file");
    }
}

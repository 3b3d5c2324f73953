//! A person's own diagnosis of an incident, kept as an attempt like any agent's:
//! `results/human-<name>/<incident>/attempt-1/` with `diagnosis.json`, `trajectory.json`
//! (`agent: "human"`, one step per block added or removed) and `trajectory.jsonl`, so the
//! scorer, the report and the editor treat it exactly as they treat an agent's attempt.
//!
//! Changes follow the labels editor's rule: under a lock, read the files again, apply the
//! change, write atomically; two editors of the same person lose nothing.

use super::lock::{FileLock, WAIT};
use crate::attempt::layout::TRAJECTORY_LIVE;
use crate::attempt::layout::{attempt_dir, RunInfo, DIAGNOSIS, RUN_INFO, SCORES, TRAJECTORY};
use crate::attempt::{Diagnosis, DiagnosisBlock, Exit, Step, StepKind, Trajectory};
use crate::util::fs::{write_atomic, write_json_atomic};
use crate::util::paths::{normalize_rel, unsafe_rel_path_reason};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The `agent` of a person's attempt.
pub const HUMAN_AGENT: &str = "human";

/// A name as it may appear in a folder name: lower case, `[a-z0-9._-]`, other characters
/// become `-`; an empty name is `anonymous`.
pub fn folder_name(name: &str) -> String {
    let s: String = name
        .trim()
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches(|c| c == '-' || c == '.').to_string();
    if s.is_empty() {
        "anonymous".to_string()
    } else {
        s
    }
}

/// The configuration a person's attempts live in: `human-<name>`.
pub fn human_config(name: &str) -> String {
    format!("human-{}", folder_name(name))
}

/// What a change did: the diagnosis as now on disk and a sentence about it.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanApplied {
    pub diagnosis: Diagnosis,
    pub summary: String,
    pub changed: bool,
}

/// One person's attempt at one incident.
#[derive(Debug, Clone)]
pub struct HumanDiagnosis {
    name: String,
    incident: String,
    config_dir: PathBuf,
    dir: PathBuf,
}

impl HumanDiagnosis {
    /// The attempt of `name` at `incident` under the results root `results`.
    pub fn new(results: &Path, name: &str, incident: &str) -> HumanDiagnosis {
        let config_dir = results.join(human_config(name));
        let dir = attempt_dir(&config_dir, incident, 1);
        HumanDiagnosis {
            name: name.to_string(),
            incident: incident.to_string(),
            config_dir,
            dir,
        }
    }

    pub fn config(&self) -> String {
        human_config(&self.name)
    }

    /// The attempt folder (`.../attempt-1`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The blocks named so far (none when nothing was written yet).
    pub fn read(&self) -> Result<Diagnosis, String> {
        let path = self.dir.join(DIAGNOSIS);
        if !path.exists() {
            return Ok(Diagnosis {
                incident: self.incident.clone(),
                ..Diagnosis::default()
            });
        }
        Diagnosis::load(&path).map(|mut d| {
            for b in &mut d.blocks {
                b.path = normalize_rel(&b.path);
            }
            d
        })
    }

    /// Names lines `start..=end` of `path` as a cause (unless these exact lines are named).
    pub fn add(
        &self,
        path: &str,
        start_line: u32,
        end_line: u32,
        rationale: Option<String>,
    ) -> Result<HumanApplied, String> {
        if let Some(why) = unsafe_rel_path_reason(path) {
            return Err(format!("cannot add {path}: {why}"));
        }
        if start_line == 0 || end_line < start_line {
            return Err(format!(
                "cannot add lines {start_line}-{end_line} of {path}: expected 1 <= start_line <= end_line"
            ));
        }
        let path = normalize_rel(path);
        self.change(|d| {
            if d.blocks
                .iter()
                .any(|b| b.path == path && b.start_line == start_line && b.end_line == end_line)
            {
                return Ok((
                    format!("{path}:{start_line}-{end_line} is already in your diagnosis"),
                    None,
                ));
            }
            let mut b = DiagnosisBlock::new(path.clone(), start_line, end_line);
            b.rationale = rationale.clone().filter(|r| !r.trim().is_empty());
            d.blocks.push(b);
            Ok((
                format!("added {path}:{start_line}-{end_line} to your diagnosis"),
                Some(("add_block", path.clone(), start_line, end_line)),
            ))
        })
    }

    /// Takes lines `start..=end` of `path` (a block named exactly so) out of the diagnosis.
    pub fn remove(
        &self,
        path: &str,
        start_line: u32,
        end_line: u32,
    ) -> Result<HumanApplied, String> {
        let path = normalize_rel(path);
        self.change(|d| {
            let before = d.blocks.len();
            d.blocks.retain(|b| {
                !(b.path == path && b.start_line == start_line && b.end_line == end_line)
            });
            if d.blocks.len() == before {
                return Err(format!(
                    "{path}:{start_line}-{end_line} is not in your diagnosis"
                ));
            }
            Ok((
                format!("removed {path}:{start_line}-{end_line} from your diagnosis"),
                Some(("remove_block", path.clone(), start_line, end_line)),
            ))
        })
    }

    /// Under the lock: read, change, then write the diagnosis, the trajectory with one more
    /// step, and `run.json` when the configuration has none. The old scores are removed: they
    /// were for other blocks (`distdebug score` writes them again).
    fn change(
        &self,
        f: impl FnOnce(
            &mut Diagnosis,
        ) -> Result<(String, Option<(&'static str, String, u32, u32)>), String>,
    ) -> Result<HumanApplied, String> {
        let diagnosis_path = self.dir.join(DIAGNOSIS);
        let _lock = FileLock::acquire(&diagnosis_path, WAIT)?;
        let mut d = self.read()?;
        d.incident = self.incident.clone();
        let (summary, step) = f(&mut d)?;
        let Some((tool, path, s, e)) = step else {
            return Ok(HumanApplied {
                diagnosis: d,
                summary,
                changed: false,
            });
        };
        let now = crate::util::now_rfc3339();
        write_json_atomic(&diagnosis_path, &d)
            .map_err(|e| format!("{}: cannot write: {e}", diagnosis_path.display()))?;
        let mut t = self.trajectory(&now);
        if t.steps.last().is_some_and(|s| s.kind == StepKind::Submit) {
            t.steps.pop();
        }
        let mut action = Step::new(StepKind::Action)
            .with_tool(tool, json!({"path": path, "start_line": s, "end_line": e}));
        action.text = Some(summary.clone());
        t.steps.push(action);
        t.steps.push(Step::new(StepKind::Submit).with_text(format!(
            "{} block(s) named by {}",
            d.blocks.len(),
            self.name
        )));
        for (i, step) in t.steps.iter_mut().enumerate() {
            step.index = i as u32;
        }
        t.finished_at = now.clone();
        t.exit = Exit::Submitted;
        let traj_path = self.dir.join(TRAJECTORY);
        write_json_atomic(&traj_path, &t)
            .map_err(|e| format!("{}: cannot write: {e}", traj_path.display()))?;
        let mut live = String::new();
        for step in &t.steps {
            if let Ok(line) = serde_json::to_string(step) {
                live.push_str(&line);
                live.push('\n');
            }
        }
        let live_path = self.dir.join(TRAJECTORY_LIVE);
        write_atomic(&live_path, live.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", live_path.display()))?;
        let _ = std::fs::remove_file(self.dir.join(SCORES));
        let run_path = self.config_dir.join(RUN_INFO);
        if !run_path.exists() {
            let info = RunInfo {
                agent: HUMAN_AGENT.to_string(),
                model: None,
                harness: "distdebug lsp (a person's own diagnosis)".to_string(),
                endpoint_host: None,
                settings: json!({"annotator": self.name}),
                distdebug_version: env!("CARGO_PKG_VERSION").to_string(),
                started_at: now.clone(),
                finished_at: String::new(),
                extra: Default::default(),
            };
            write_json_atomic(&run_path, &info)
                .map_err(|e| format!("{}: cannot write: {e}", run_path.display()))?;
        }
        Ok(HumanApplied {
            diagnosis: d,
            summary,
            changed: true,
        })
    }

    /// The trajectory so far, or a new one starting now.
    fn trajectory(&self, now: &str) -> Trajectory {
        Trajectory::load(&self.dir.join(TRAJECTORY)).unwrap_or_else(|_| Trajectory {
            incident: self.incident.clone(),
            attempt: 1,
            agent: HUMAN_AGENT.to_string(),
            model: None,
            started_at: now.to_string(),
            finished_at: now.to_string(),
            exit: Exit::Submitted,
            usage: Default::default(),
            steps: Vec::new(),
            extra: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_are_safe() {
        assert_eq!(human_config("Ann Lee"), "human-ann-lee");
        assert_eq!(human_config("../x"), "human-x");
        assert_eq!(human_config(""), "human-anonymous");
        assert_eq!(folder_name("r.s_t-1"), "r.s_t-1");
    }

    #[test]
    fn adds_and_removes_blocks_as_an_attempt_would_write_them() {
        let results = tempfile::tempdir().unwrap();
        let h = HumanDiagnosis::new(results.path(), "Ann", "tiny-lease");
        assert!(h.read().unwrap().blocks.is_empty());
        let r = h.add("./src/lease.py", 13, 18, Some("ttl".into())).unwrap();
        assert!(r.changed, "{}", r.summary);
        h.add("src/server.py", 1, 2, None).unwrap();
        assert!(!h.add("src/server.py", 1, 2, None).unwrap().changed);
        let dir = results.path().join("human-ann/tiny-lease/attempt-1");
        assert_eq!(h.dir(), dir);
        let d = Diagnosis::load(&dir.join(DIAGNOSIS)).unwrap();
        assert_eq!(d.incident, "tiny-lease");
        assert_eq!(
            d.blocks
                .iter()
                .map(|b| (b.path.as_str(), b.start_line, b.end_line))
                .collect::<Vec<_>>(),
            [("src/lease.py", 13, 18), ("src/server.py", 1, 2)]
        );
        assert_eq!(d.blocks[0].rationale.as_deref(), Some("ttl"));
        std::fs::write(dir.join(SCORES), "{}").unwrap();
        h.remove("src/server.py", 1, 2).unwrap();
        assert!(!dir.join(SCORES).exists(), "stale scores are removed");
        assert!(h.remove("src/server.py", 1, 2).is_err());
        let t = Trajectory::load(&dir.join(TRAJECTORY)).unwrap();
        assert_eq!(t.agent, "human");
        assert_eq!(t.exit, Exit::Submitted);
        let tools: Vec<_> = t
            .steps
            .iter()
            .map(|s| (s.index, s.tool.as_deref().unwrap_or(""), s.kind))
            .collect();
        assert_eq!(
            tools,
            [
                (0, "add_block", StepKind::Action),
                (1, "add_block", StepKind::Action),
                (2, "remove_block", StepKind::Action),
                (3, "", StepKind::Submit)
            ]
        );
        assert_eq!(
            crate::attempt::trajectory::read_jsonl_steps(&dir.join(TRAJECTORY_LIVE)).len(),
            4
        );
        let run: RunInfo = serde_json::from_str(
            &std::fs::read_to_string(results.path().join("human-ann/run.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(run.agent, "human");
    }
}

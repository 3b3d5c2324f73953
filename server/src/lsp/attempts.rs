//! What the server knows of each attempt: its state while it runs, its steps, the blocks it
//! predicts (live candidates, then the final diagnosis) and its scores; loaded from a results
//! tree or built up as an attempt the server started goes along.

use crate::attempt::layout::{list_attempts, DIAGNOSIS, TRAJECTORY, TRAJECTORY_LIVE};
use crate::attempt::trajectory::read_jsonl_steps;
use crate::attempt::{Diagnosis, DiagnosisBlock, Exit, Step, StepKind, Trajectory};
use crate::score::looked::{reads_of_steps, Looked};
use crate::util::paths::normalize_rel;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// An attempt is named by its configuration (the folder under the results root) and number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttemptKey {
    pub config: String,
    pub attempt: u32,
}

impl fmt::Display for AttemptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} #{}", self.config, self.attempt)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptState {
    /// Waiting for an earlier attempt of its run.
    Queued,
    Running,
    /// Ended; `exit` says how.
    Finished,
    /// The agent panicked or its task died; the server carried on.
    Crashed,
    /// Its run was cancelled before it started: nothing was written.
    Cancelled,
    /// Found on disk without `trajectory.json`: interrupted, or written by another process
    /// that has not finished.
    Incomplete,
}

impl AttemptState {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptState::Queued => "queued",
            AttemptState::Running => "running",
            AttemptState::Finished => "finished",
            AttemptState::Crashed => "crashed",
            AttemptState::Cancelled => "cancelled",
            AttemptState::Incomplete => "incomplete",
        }
    }
}

/// A line of an evidence file (workspace-relative path) that led an agent to a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceRef {
    pub path: String,
    pub line: u32,
}

/// A predicted block as the editor shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicted {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub rationale: Option<String>,
    pub confidence: Option<f64>,
    /// The trajectory step that produced the block, when known.
    pub step: Option<u32>,
    pub evidence: Vec<EvidenceRef>,
}

impl Predicted {
    /// Reads a diagnosis block. Besides the fields of the attempt format (docs/agents.md) it understands two optional
    /// extensions an agent may write: `step` (the index of the step that produced the block)
    /// and `evidence` (`{"path","line"}`, a list of those, or `"path:line"`).
    pub fn from_block(b: &DiagnosisBlock, default_step: Option<u32>) -> Predicted {
        let step = b
            .extra
            .get("step")
            .and_then(|v| v.as_u64())
            .map(|s| s as u32)
            .or(default_step);
        Predicted {
            path: normalize_rel(&b.path),
            start_line: b.start_line,
            end_line: b.end_line,
            rationale: b
                .rationale
                .as_ref()
                .map(|r| r.trim().to_string())
                .filter(|r| !r.is_empty()),
            confidence: b.confidence,
            step,
            evidence: b
                .extra
                .get("evidence")
                .map(parse_evidence)
                .unwrap_or_default(),
        }
    }
}

fn parse_evidence(v: &Value) -> Vec<EvidenceRef> {
    // A path that is absolute or climbs out of the workspace is dropped, checked before
    // normalising (which would strip a leading `/`).
    let make = |path: &str, line: u64| -> Option<EvidenceRef> {
        let ok = line >= 1
            && line <= u32::MAX as u64
            && crate::util::paths::unsafe_rel_path_reason(path).is_none();
        ok.then(|| EvidenceRef {
            path: normalize_rel(path),
            line: line as u32,
        })
    };
    let one = |v: &Value| -> Option<EvidenceRef> {
        match v {
            Value::String(s) => {
                let (path, line) = s.rsplit_once(':')?;
                make(path, line.trim().parse().ok()?)
            }
            Value::Object(o) => {
                let path = o.get("path")?.as_str()?;
                let line = o.get("line").or_else(|| o.get("start_line"))?.as_u64()?;
                make(path, line)
            }
            _ => None,
        }
    };
    match v {
        Value::Array(items) => items.iter().filter_map(one).collect(),
        other => one(other).into_iter().collect(),
    }
}

/// A step, shortened to what the editor shows.
#[derive(Debug, Clone, PartialEq)]
pub struct StepBrief {
    pub index: u32,
    pub kind: StepKind,
    pub tool: Option<String>,
    pub text: Option<String>,
}

impl StepBrief {
    pub fn from_step(s: &Step) -> StepBrief {
        StepBrief {
            index: s.index,
            kind: s.kind,
            tool: s.tool.clone(),
            text: s.text.as_deref().map(|t| shorten(t, 300)),
        }
    }

    /// One line for a progress report or a hover: `action read_file: looking at …`.
    pub fn summary(&self) -> String {
        let kind = kind_name(self.kind);
        let mut out = match &self.tool {
            Some(t) => format!("{kind} {t}"),
            None => kind.to_string(),
        };
        if let Some(t) = &self.text {
            out.push_str(": ");
            out.push_str(&shorten(t, 120));
        }
        out
    }
}

pub fn kind_name(k: StepKind) -> &'static str {
    match k {
        StepKind::Thought => "thought",
        StepKind::Action => "action",
        StepKind::Observation => "observation",
        StepKind::Submit => "submit",
        StepKind::Error => "error",
    }
}

/// The first line of `text`, cut to `max` characters with an ellipsis.
pub fn shorten(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= max {
        line.to_string()
    } else {
        let mut s: String = line.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// The scores of an attempt against the labels (the scoring rules, docs/scoring.md), as the editor uses them.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptScore {
    /// Per predicted block (in diagnosis order): does it name a labeled line?
    pub block_hit: Vec<bool>,
    /// Per label (in labels order): did a prediction reach it?
    pub label_reached: Vec<bool>,
    pub block_coverage: f64,
    pub block_precision: f64,
    pub block_hit_rate: f64,
    pub file_coverage: f64,
    /// Why the leakage guard flagged the attempt (empty when it did not): flagged attempts
    /// are shown, never hidden.
    pub leakage: Vec<String>,
    /// The `diagnosis_scores.json` object, returned to the client as is.
    pub json: Value,
}

#[derive(Debug, Clone)]
pub struct Attempt {
    pub key: AttemptKey,
    pub agent: String,
    pub model: Option<String>,
    pub dir: PathBuf,
    pub state: AttemptState,
    pub exit: Option<Exit>,
    pub error: Option<String>,
    /// The run that started it, for attempts this server runs.
    pub run: Option<String>,
    pub steps: Vec<StepBrief>,
    /// Live candidates while running, the final diagnosis once finished.
    pub blocks: Vec<Predicted>,
    /// Why `diagnosis.json` is not schema-valid, when it is not.
    pub diagnosis_error: Option<String>,
    pub summary: String,
    pub score: Option<AttemptScore>,
    /// What the agent read, from the steps' `paths_read`.
    pub looked: Looked,
}

impl Attempt {
    pub fn queued(key: AttemptKey, agent: &str, model: Option<String>, dir: PathBuf) -> Attempt {
        Attempt {
            key,
            agent: agent.to_string(),
            model,
            dir,
            state: AttemptState::Queued,
            exit: None,
            error: None,
            run: None,
            steps: Vec::new(),
            blocks: Vec::new(),
            diagnosis_error: None,
            summary: String::new(),
            score: None,
            looked: Looked::default(),
        }
    }

    /// Loads an attempt folder: `trajectory.json` (else the steps of `trajectory.jsonl`) and
    /// `diagnosis.json`. Nothing here fails: what cannot be read is recorded on the attempt.
    pub fn load(key: AttemptKey, dir: &Path) -> Attempt {
        let mut a = Attempt::queued(key.clone(), &key.config, None, dir.to_path_buf());
        let traj_path = dir.join(TRAJECTORY);
        if traj_path.is_file() {
            match Trajectory::load(&traj_path) {
                Ok(t) => {
                    a.agent = t.agent;
                    a.model = t.model;
                    a.exit = Some(t.exit);
                    a.state = AttemptState::Finished;
                    a.steps = t.steps.iter().map(StepBrief::from_step).collect();
                    a.looked = Looked::from_steps(&t.steps);
                    if t.exit == Exit::Error {
                        a.error = t
                            .steps
                            .iter()
                            .rev()
                            .find(|s| s.kind == StepKind::Error)
                            .and_then(|s| s.text.clone());
                    }
                }
                Err(e) => {
                    a.state = AttemptState::Finished;
                    a.error = Some(e);
                }
            }
        } else {
            a.state = AttemptState::Incomplete;
            let steps = read_jsonl_steps(&dir.join(TRAJECTORY_LIVE));
            a.steps = steps.iter().map(StepBrief::from_step).collect();
            a.looked = Looked::from_steps(&steps);
        }
        a.load_diagnosis();
        a
    }

    /// (Re)reads `diagnosis.json`; its blocks replace whatever the attempt showed.
    pub fn load_diagnosis(&mut self) {
        let path = self.dir.join(DIAGNOSIS);
        self.blocks.clear();
        self.diagnosis_error = None;
        self.summary.clear();
        if !path.is_file() {
            return;
        }
        match Diagnosis::load(&path) {
            Ok(d) => {
                let submit = self
                    .steps
                    .iter()
                    .rev()
                    .find(|s| s.kind == StepKind::Submit)
                    .map(|s| s.index);
                self.blocks = d
                    .blocks
                    .iter()
                    .map(|b| Predicted::from_block(b, submit))
                    .collect();
                self.summary = d.summary;
            }
            Err(e) => self.diagnosis_error = Some(e),
        }
    }

    /// Records a step of a running attempt. A step that carries `blocks` (an agent's current
    /// candidate list) replaces the candidates shown so far; returns whether they changed.
    pub fn record_step(&mut self, step: &Step) -> bool {
        self.steps.push(StepBrief::from_step(step));
        for r in reads_of_steps(std::slice::from_ref(step)) {
            self.looked.add(&r);
        }
        match &step.blocks {
            Some(blocks) => {
                // Candidates are not checked by the diagnosis schema: hold them to it here.
                self.blocks = blocks
                    .iter()
                    .filter(|b| {
                        crate::util::paths::unsafe_rel_path_reason(&b.path).is_none()
                            && 1 <= b.start_line
                            && b.start_line <= b.end_line
                    })
                    .map(|b| Predicted::from_block(b, Some(step.index)))
                    .collect();
                self.score = None;
                true
            }
            None => false,
        }
    }

    pub fn is_active(&self) -> bool {
        matches!(self.state, AttemptState::Queued | AttemptState::Running)
    }

    pub fn step(&self, index: u32) -> Option<&StepBrief> {
        self.steps
            .get(index as usize)
            .filter(|s| s.index == index)
            .or_else(|| self.steps.iter().find(|s| s.index == index))
    }

    /// The attempt as `distdebug/status` and the commands report it.
    pub fn to_json(&self, current: bool) -> Value {
        json!({
            "config": self.key.config,
            "attempt": self.key.attempt,
            "agent": self.agent,
            "model": self.model,
            "state": self.state.as_str(),
            "exit": self.exit.map(|e| e.as_str()),
            "error": self.error,
            "run": self.run,
            "steps": self.steps.len(),
            "blocks": self.blocks.len(),
            "diagnosisError": self.diagnosis_error,
            "scored": self.score.is_some(),
            "current": current,
            "dir": self.dir.display().to_string(),
        })
    }
}

/// Every attempt of `incident` in a results root (`<results>/<config>/<incident>/attempt-<k>`).
pub fn scan(results: &Path, incident: &str) -> BTreeMap<AttemptKey, Attempt> {
    let mut out = BTreeMap::new();
    let Ok(configs) = crate::attempt::layout::list_result_incidents(results) else {
        return out;
    };
    for (config, config_dir) in configs {
        for (k, dir) in list_attempts(&config_dir.join(incident)) {
            let key = AttemptKey {
                config: config.clone(),
                attempt: k,
            };
            out.insert(key.clone(), Attempt::load(key, &dir));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::fs::write_json_atomic;

    #[test]
    fn reads_evidence_and_step_extensions() {
        let d = Diagnosis::parse(
            r#"{"blocks":[
              {"path":"./a/B.java","start_line":3,"end_line":4,"rationale":"  r  ","step":7,
               "evidence":[{"path":".distdebug/evidence/s.log","line":12},"x.log:3","bad",{"path":"/etc/x","line":1}]},
              {"path":"c.go","start_line":1,"end_line":1,"evidence":"e.log:0"}]}"#,
        )
        .unwrap();
        let a = Predicted::from_block(&d.blocks[0], Some(1));
        assert_eq!(a.path, "a/B.java");
        assert_eq!(a.rationale.as_deref(), Some("r"));
        assert_eq!(a.step, Some(7));
        assert_eq!(
            a.evidence,
            vec![
                EvidenceRef {
                    path: ".distdebug/evidence/s.log".into(),
                    line: 12
                },
                EvidenceRef {
                    path: "x.log".into(),
                    line: 3
                }
            ]
        );
        let b = Predicted::from_block(&d.blocks[1], Some(1));
        assert_eq!((b.step, b.evidence.len(), b.rationale), (Some(1), 0, None));
    }

    #[test]
    fn loads_finished_incomplete_and_invalid_attempts() {
        let root = tempfile::tempdir().unwrap();
        let inc = root.path().join("cfg/inc");
        let a1 = inc.join("attempt-1");
        std::fs::create_dir_all(&a1).unwrap();
        let mut submit = Step::new(StepKind::Submit);
        submit.index = 0;
        write_json_atomic(
            &a1.join(TRAJECTORY),
            &Trajectory {
                incident: "inc".into(),
                attempt: 1,
                agent: "ext".into(),
                model: Some("m".into()),
                started_at: String::new(),
                finished_at: String::new(),
                exit: Exit::Submitted,
                usage: Default::default(),
                steps: vec![submit],
                extra: Default::default(),
            },
        )
        .unwrap();
        std::fs::write(
            a1.join(DIAGNOSIS),
            r#"{"blocks":[{"path":"a.py","start_line":2,"end_line":3,"rationale":"why"}]}"#,
        )
        .unwrap();
        let a2 = inc.join("attempt-2");
        std::fs::create_dir_all(&a2).unwrap();
        std::fs::write(
            a2.join(TRAJECTORY_LIVE),
            "{\"index\":0,\"kind\":\"thought\"}\n",
        )
        .unwrap();
        std::fs::write(
            a2.join(DIAGNOSIS),
            r#"{"blocks":[{"path":"/abs","start_line":1,"end_line":1}]}"#,
        )
        .unwrap();

        let all = scan(root.path(), "inc");
        assert_eq!(all.len(), 2);
        let first = &all[&AttemptKey {
            config: "cfg".into(),
            attempt: 1,
        }];
        assert_eq!(first.state, AttemptState::Finished);
        assert_eq!(
            (first.agent.as_str(), first.exit),
            ("ext", Some(Exit::Submitted))
        );
        assert_eq!(first.blocks.len(), 1);
        assert_eq!(
            first.blocks[0].step,
            Some(0),
            "blocks default to the submit step"
        );
        let second = &all[&AttemptKey {
            config: "cfg".into(),
            attempt: 2,
        }];
        assert_eq!(second.state, AttemptState::Incomplete);
        assert_eq!(second.steps.len(), 1);
        assert!(second.blocks.is_empty());
        assert!(second
            .diagnosis_error
            .as_deref()
            .unwrap()
            .contains("absolute"));
    }

    #[test]
    fn candidate_blocks_in_a_step_replace_earlier_ones() {
        let mut a = Attempt::queued(
            AttemptKey {
                config: "c".into(),
                attempt: 1,
            },
            "t",
            None,
            PathBuf::new(),
        );
        let mut s = Step::new(StepKind::Thought);
        s.index = 0;
        assert!(!a.record_step(&s));
        s.index = 1;
        s.blocks = Some(vec![
            DiagnosisBlock::new("x.rs", 1, 2),
            DiagnosisBlock::new("y.rs", 5, 5),
        ]);
        assert!(a.record_step(&s));
        s.index = 2;
        s.blocks = Some(vec![
            DiagnosisBlock::new("z.rs", 1, 1),
            DiagnosisBlock::new("/etc/passwd", 1, 1),
            DiagnosisBlock::new("w.rs", 0, 1),
        ]);
        assert!(a.record_step(&s));
        assert_eq!(a.blocks.len(), 1);
        assert_eq!(
            (a.blocks[0].path.as_str(), a.blocks[0].step),
            ("z.rs", Some(2))
        );
        assert_eq!(a.step(1).unwrap().index, 1);
    }
}

//! The trajectory of an attempt: steps appended to `trajectory.jsonl` as they happen (so an
//! editor can follow live) and the whole `trajectory.json` written at the end.

use super::diagnosis::DiagnosisBlock;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    Thought,
    Action,
    Observation,
    Submit,
    Error,
}

/// Lines of a file an agent read at a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRead {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
}

/// One step (CONTRACT §2). Fields that do not apply are left out of the JSON. `blocks` is an
/// extension: candidate blocks an agent proposes before it submits, shown live in the editor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    #[serde(default)]
    pub index: u32,
    pub kind: StepKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths_read: Vec<PathRead>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<DiagnosisBlock>>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Step {
    pub fn new(kind: StepKind) -> Step {
        Step {
            index: 0,
            kind,
            tool: None,
            args: None,
            text: None,
            paths_read: Vec::new(),
            tokens: None,
            blocks: None,
            extra: Default::default(),
        }
    }

    pub fn with_text(mut self, text: impl Into<String>) -> Step {
        self.text = Some(text.into());
        self
    }

    pub fn with_tool(mut self, tool: impl Into<String>, args: serde_json::Value) -> Step {
        self.tool = Some(tool.into());
        self.args = Some(args);
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Exit {
    Submitted,
    Budget,
    Error,
    Cancelled,
}

impl Exit {
    pub fn as_str(self) -> &'static str {
        match self {
            Exit::Submitted => "submitted",
            Exit::Budget => "budget",
            Exit::Error => "error",
            Exit::Cancelled => "cancelled",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub cost_usd: f64,
}

/// `trajectory.json`, written once at the end of an attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub incident: String,
    pub attempt: u32,
    pub agent: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub finished_at: String,
    pub exit: Exit,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Trajectory {
    pub fn load(path: &Path) -> Result<Trajectory, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a trajectory: {e}", path.display()))
    }
}

/// Reads the steps of a `trajectory.jsonl` written so far. A torn last line (the agent is still
/// writing it) and lines that are not steps are skipped rather than failing the whole read.
pub fn read_jsonl_steps(path: &Path) -> Vec<Step> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Step>(l).ok())
        .collect()
}

/// Receives each step as it is recorded (the language server's live view, progress bars).
pub type StepListener = Box<dyn FnMut(&Step) + Send>;

/// Appends steps to `trajectory.jsonl` as they happen and keeps them for `trajectory.json`.
pub struct TrajectoryRecorder {
    path: PathBuf,
    file: Option<std::fs::File>,
    steps: Vec<Step>,
    listener: Option<StepListener>,
}

impl TrajectoryRecorder {
    /// Starts a new `trajectory.jsonl` at `path` (truncating a leftover from an interrupted run).
    pub fn create(path: &Path) -> std::io::Result<TrajectoryRecorder> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::File::create(path)?;
        Ok(TrajectoryRecorder {
            path: path.to_path_buf(),
            file: Some(file),
            steps: Vec::new(),
            listener: None,
        })
    }

    /// A recorder that keeps steps in memory only (tests, benchmarks).
    pub fn in_memory() -> TrajectoryRecorder {
        TrajectoryRecorder {
            path: PathBuf::new(),
            file: None,
            steps: Vec::new(),
            listener: None,
        }
    }

    pub fn set_listener(&mut self, listener: StepListener) {
        self.listener = Some(listener);
    }

    /// Numbers the step, appends it as one JSON line (flushed, so followers see it at once),
    /// and tells the listener. Returns the step's index.
    pub fn record(&mut self, step: Step) -> u32 {
        // Whatever an agent or an endpoint echoed, no secret reaches a file or a client.
        let mut step = crate::util::secrets::redact_serde(step);
        step.index = self.steps.len() as u32;
        if let Some(f) = self.file.as_mut() {
            if let Ok(mut line) = serde_json::to_string(&step) {
                line.push('\n');
                if let Err(e) = f.write_all(line.as_bytes()).and_then(|_| f.flush()) {
                    eprintln!("distdebug: cannot append to {}: {e}", self.path.display());
                }
            }
        }
        if let Some(l) = self.listener.as_mut() {
            l(&step);
        }
        let index = step.index;
        self.steps.push(step);
        index
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn into_steps(self) -> Vec<Step> {
        self.steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_appended_as_they_are_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trajectory.jsonl");
        let mut rec = TrajectoryRecorder::create(&p).unwrap();
        rec.record(Step::new(StepKind::Thought).with_text("look at logs"));
        assert_eq!(
            read_jsonl_steps(&p).len(),
            1,
            "the first step must be on disk before the second"
        );
        let mut s =
            Step::new(StepKind::Action).with_tool("read", serde_json::json!({"path": "a.rs"}));
        s.paths_read.push(PathRead {
            path: "a.rs".into(),
            start_line: Some(1),
            end_line: Some(9),
        });
        rec.record(s);
        let steps = read_jsonl_steps(&p);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[1].index, 1);
        assert_eq!(steps[1].paths_read[0].end_line, Some(9));
        let line = std::fs::read_to_string(&p).unwrap();
        assert!(
            !line.lines().next().unwrap().contains("paths_read"),
            "fields that do not apply are left out"
        );
    }

    #[test]
    fn a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, "{\"index\":0,\"kind\":\"thought\"}\n{\"index\":1,\"ki").unwrap();
        assert_eq!(read_jsonl_steps(&p).len(), 1);
    }
}

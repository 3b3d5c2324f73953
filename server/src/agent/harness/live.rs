//! Follows a harness's native trajectory while it runs: every poll re-imports the native file
//! (mini-swe-agent's `trajectory.json` or 1.x's message log, Codex's rollout or events,
//! OpenCode's events) and records the steps that are complete and not yet recorded, so the
//! attempt's `trajectory.jsonl` grows as the harness works. At the end the whole file is
//! imported and the rest recorded. Imports are deterministic over a growing file, so the steps
//! recorded live are a prefix of the final ones.

use super::{codex, opencode};
use crate::agent::mini_swe;
use crate::attempt::{Exit, Step, TrajectoryRecorder, Usage};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Native files larger than this are not read (a runaway harness must not exhaust memory).
const MAX_NATIVE_BYTES: u64 = 256 * 1024 * 1024;

/// Where a harness writes its trajectory, and in which format.
#[derive(Debug, Clone, PartialEq)]
pub enum Native {
    MiniSwe {
        trajectory: PathBuf,
        /// 1.x only: the launcher's message log (its `trajectory.json` appears at the end).
        live_messages: Option<PathBuf>,
    },
    Codex {
        sessions: PathBuf,
        events: PathBuf,
    },
    OpenCode {
        events: PathBuf,
    },
}

/// What a native trajectory says so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    pub steps: Vec<Step>,
    /// How many of `steps` are complete (later ones may still change, e.g. get their tokens).
    pub stable: usize,
    pub usage: Usage,
    pub model: Option<String>,
    pub exit: Option<Exit>,
    /// Model replies seen (for the step budget).
    pub replies: u32,
}

pub struct LiveImport {
    native: Native,
    workspace: PathBuf,
    /// Steps recorded so far.
    pub recorded: usize,
    /// The last import (replies and usage, for the budgets).
    pub last: Imported,
    /// Size and modification time of the files last read: unchanged files are not re-read.
    seen: Option<(u64, std::time::SystemTime)>,
}

impl LiveImport {
    pub fn new(native: Native, workspace: &Path) -> LiveImport {
        LiveImport {
            native,
            workspace: workspace.to_path_buf(),
            recorded: 0,
            last: Imported::default(),
            seen: None,
        }
    }

    /// Records the newly completed steps.
    pub fn poll(&mut self, recorder: &mut TrajectoryRecorder) {
        let stamp = self.stamp();
        if stamp.is_some() && stamp == self.seen {
            return;
        }
        self.seen = stamp;
        if let Ok(imp) = self.read(false) {
            self.record(recorder, &imp.steps, imp.stable);
            self.last = imp;
        }
    }

    /// Imports the finished trajectory, records what was not recorded live and returns it;
    /// an error sentence when the harness left nothing readable.
    pub fn finish(&mut self, recorder: &mut TrajectoryRecorder) -> Result<Imported, String> {
        let imp = self.read(true)?;
        self.record(recorder, &imp.steps, imp.steps.len());
        self.last = imp.clone();
        Ok(imp)
    }

    fn record(&mut self, recorder: &mut TrajectoryRecorder, steps: &[Step], upto: usize) {
        for s in steps.iter().take(upto).skip(self.recorded) {
            recorder.record(s.clone());
        }
        self.recorded = self.recorded.max(upto.min(steps.len()));
    }

    /// The files this harness writes, for the unchanged-file check.
    fn files(&self) -> Vec<PathBuf> {
        match &self.native {
            Native::MiniSwe {
                trajectory,
                live_messages,
            } => [Some(trajectory.clone()), live_messages.clone()]
                .into_iter()
                .flatten()
                .collect(),
            Native::Codex { sessions, events } => codex::find_rollout(sessions)
                .into_iter()
                .chain([events.clone()])
                .collect(),
            Native::OpenCode { events } => vec![events.clone()],
        }
    }

    fn stamp(&self) -> Option<(u64, std::time::SystemTime)> {
        let mut size = 0;
        let mut newest = std::time::UNIX_EPOCH;
        for f in self.files() {
            let m = std::fs::metadata(&f).ok()?;
            size += m.len();
            newest = newest.max(m.modified().ok()?);
        }
        Some((size, newest))
    }

    fn read(&self, final_: bool) -> Result<Imported, String> {
        let ws = &self.workspace;
        match &self.native {
            Native::MiniSwe {
                trajectory,
                live_messages,
            } => read_mini(trajectory, live_messages.as_deref(), ws, final_),
            Native::Codex { sessions, events } => match codex::find_rollout(sessions) {
                Some(r) => Ok(codex::import_rollout(&jsonl(&r)?, ws)),
                None if events.exists() => Ok(codex::import_events(&jsonl(events)?, ws)),
                None => Err("codex wrote no session rollout and no events".to_string()),
            },
            Native::OpenCode { events } => Ok(opencode::import_events(&jsonl(events)?, ws)),
        }
    }
}

fn read_mini(
    trajectory: &Path,
    live_messages: Option<&Path>,
    ws: &Path,
    final_: bool,
) -> Result<Imported, String> {
    // 1.x while it runs: only the launcher's message log exists.
    let doc = match live_messages {
        Some(live) if !final_ || !trajectory.exists() => {
            if !live.exists() && final_ {
                return Err("mini-swe-agent wrote no trajectory".to_string());
            }
            let messages: Vec<Value> = if live.exists() { jsonl(live)? } else { Vec::new() };
            serde_json::json!({"trajectory_format": "mini-swe-agent-1", "messages": messages})
        }
        _ => {
            if !trajectory.exists() {
                return Err(format!(
                    "mini-swe-agent wrote no trajectory ({})",
                    trajectory.display()
                ));
            }
            let text = read_capped(trajectory)?;
            serde_json::from_str(&text).map_err(|e| {
                format!("{}: not valid JSON: {e}", trajectory.display())
            })?
        }
    };
    let t = mini_swe::import(&doc, ws)?;
    let replies = t.steps.iter().filter(|s| s.tokens.is_some()).count() as u32;
    Ok(Imported {
        stable: t.steps.len(),
        replies,
        steps: t.steps,
        usage: t.usage,
        model: t.model,
        exit: t.exit,
    })
}

fn read_capped(path: &Path) -> Result<String, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?
        .len();
    if len > MAX_NATIVE_BYTES {
        return Err(format!(
            "{}: {len} bytes, more than the {MAX_NATIVE_BYTES} read",
            path.display()
        ));
    }
    crate::incident::read_text_lossy(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))
}

/// The complete lines of a JSONL file that are JSON objects (a torn last line waits).
fn jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = read_capped(path)?;
    let complete = match text.rfind('\n') {
        Some(i) => &text[..i],
        None => "",
    };
    Ok(complete
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(Value::is_object)
        .collect())
}

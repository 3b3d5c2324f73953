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
    /// Steps are recorded through the recorder, which redacts the API key (registered when
    /// it was read) from what a command printed.
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
                Some(r) => {
                    let mut imp = codex::import_rollout(&jsonl(&r)?, ws);
                    if final_ && events.exists() {
                        // The retries are only in the events, which carry no times: they
                        // are added at the end (steps recorded live must stay a prefix).
                        imp.steps.extend(codex::retry_errors(&jsonl(events)?));
                    }
                    Ok(imp)
                }
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
            let messages: Vec<Value> = if live.exists() {
                jsonl(live)?
            } else {
                Vec::new()
            };
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
            serde_json::from_str(&text)
                .map_err(|e| format!("{}: not valid JSON: {e}", trajectory.display()))?
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
    crate::incident::read_text_lossy(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempt::{PathRead, StepKind};

    /// Native files recorded from real runs of the harnesses against the scripted server
    /// (workspace `/tmp/hp/ws`).
    fn fixture(name: &str) -> Vec<Value> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/harnesses")
            .join(name);
        jsonl(&p).unwrap()
    }

    fn ws() -> &'static Path {
        Path::new("/tmp/hp/ws")
    }

    fn kinds(steps: &[Step]) -> Vec<StepKind> {
        steps.iter().map(|s| s.kind).collect()
    }

    fn tokens(steps: &[Step]) -> u64 {
        steps.iter().filter_map(|s| s.tokens).sum()
    }

    fn has_read(steps: &[Step], path: &str, s: u32, e: u32) -> bool {
        let want = PathRead {
            path: path.into(),
            start_line: Some(s),
            end_line: Some(e),
        };
        steps.iter().any(|st| st.paths_read.contains(&want))
    }

    /// Every prefix of the file imports to steps whose stable part is a prefix of the whole.
    fn stable_prefixes_agree(lines: &[Value], import: fn(&[Value], &Path) -> Imported) {
        let full = import(lines, ws());
        for n in 0..lines.len() {
            let part = import(&lines[..n], ws());
            assert!(part.stable <= part.steps.len());
            assert_eq!(
                &part.steps[..part.stable],
                &full.steps[..part.stable],
                "prefix of {n} lines"
            );
        }
    }

    #[test]
    fn a_codex_rollout_gives_steps_tokens_per_reply_and_reads() {
        let lines = fixture("codex-rollout.jsonl");
        let t = codex::import_rollout(&lines, ws());
        use StepKind::*;
        assert_eq!(
            kinds(&t.steps),
            [
                Action,
                Observation,
                Action,
                Observation,
                Action,
                Observation,
                Thought,
                Submit
            ]
        );
        assert_eq!(
            (t.usage.prompt_tokens, t.usage.completion_tokens),
            (4822, 98)
        );
        assert_eq!(
            tokens(&t.steps),
            4920,
            "each reply's usage is on its first step"
        );
        assert_eq!(t.replies, 4);
        assert_eq!(t.steps[0].tokens, Some(1020));
        assert!(has_read(&t.steps, "src/lease.py", 10, 20));
        assert!(has_read(&t.steps, "src/lease.py", 17, 17), "the grep hit");
        assert_eq!(t.model.as_deref(), Some("scripted-model"));
        assert_eq!(t.exit, Some(Exit::Submitted));
        // The heredoc that writes the diagnosis reads nothing.
        assert!(t.steps[4].paths_read.is_empty());
        stable_prefixes_agree(&lines, codex::import_rollout);
    }

    #[test]
    fn codex_exec_events_are_the_fallback() {
        let t = codex::import_events(&fixture("codex-exec.jsonl"), ws());
        assert_eq!(
            (t.usage.prompt_tokens, t.usage.completion_tokens),
            (4822, 98)
        );
        let actions = t
            .steps
            .iter()
            .filter(|s| s.kind == StepKind::Action)
            .count();
        assert_eq!(actions, 3);
        assert!(has_read(&t.steps, "src/lease.py", 17, 17));
        assert!(
            t.steps.iter().any(|s| s.kind == StepKind::Error),
            "the metadata warning"
        );
    }

    #[test]
    fn opencode_events_give_steps_tokens_and_its_read_tool() {
        let lines = fixture("opencode-run.jsonl");
        let t = opencode::import_events(&lines, ws());
        assert_eq!(
            (t.usage.prompt_tokens, t.usage.completion_tokens),
            (4822, 98)
        );
        assert_eq!(tokens(&t.steps), 4920);
        assert_eq!(t.replies, 4);
        assert!(
            has_read(&t.steps, "src/lease.py", 10, 20),
            "read tool offset 10, limit 11"
        );
        assert!(has_read(&t.steps, "src/lease.py", 17, 17));
        let read = t
            .steps
            .iter()
            .find(|s| s.tool.as_deref() == Some("read"))
            .unwrap();
        assert_eq!(read.kind, StepKind::Action);
        assert_eq!(t.steps.last().unwrap().kind, StepKind::Submit);
        assert_eq!(t.exit, Some(Exit::Submitted));
        stable_prefixes_agree(&lines, opencode::import_events);
    }

    #[test]
    fn mini_swe_agent_1x_text_actions_become_actions_and_observations() {
        let doc = serde_json::json!({
            "trajectory_format": "mini-swe-agent-1",
            "info": {"exit_status": "Submitted", "submission": "", "mini_version": "1.17.5"},
            "messages": [
                {"role": "system", "content": "You are..."},
                {"role": "user", "content": "Please solve this issue: x"},
                {"role": "assistant", "content": "THOUGHT: look.\n\n```bash\ngrep -rn 'granted lease' src\n```",
                 "extra": {"response": {"usage": {"prompt_tokens": 1000, "completion_tokens": 20}}}},
                {"role": "user", "content": "<returncode>0</returncode>\n<output>\nsrc/lease.py:17:  log.info(x)\n</output>"},
                {"role": "assistant", "content": "THOUGHT: no action.",
                 "extra": {"response": {"usage": {"prompt_tokens": 1100, "completion_tokens": 5}}}},
                {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 0 actions."},
                {"role": "assistant", "content": "```bash\ncurl -s https://example.org && git log --all\n```",
                 "extra": {"response": {"usage": {"prompt_tokens": 1200, "completion_tokens": 7}}}},
                {"role": "user", "content": "<returncode>7</returncode>\n<output>\n</output>"},
                {"role": "user", "content": ""}
            ]
        });
        let t = mini_swe::import(&doc, ws()).unwrap();
        use StepKind::*;
        assert_eq!(
            kinds(&t.steps),
            [
                Thought,
                Action,
                Observation,
                Thought,
                Error,
                Thought,
                Action,
                Observation,
                Submit
            ]
        );
        assert_eq!(
            (t.usage.prompt_tokens, t.usage.completion_tokens),
            (3300, 32)
        );
        assert!(has_read(&t.steps, "src/lease.py", 17, 17));
        assert_eq!(t.steps[7].extra["returncode"], 7);
        assert_eq!(t.exit, Some(Exit::Submitted));
        // The guard sees 1.x's commands.
        let ctx = crate::score::leakage::LeakageContext {
            fix_patch: None,
            fix_commit: None,
            buggy_commit: None,
            allowed_hosts: vec![],
            repo_has_file: &|_| false,
        };
        let rules: Vec<String> = crate::score::leakage::check(&ctx, &t.steps)
            .reasons
            .into_iter()
            .map(|f| f.rule)
            .collect();
        assert!(
            rules.contains(&"network".to_string()) && rules.contains(&"git-history".to_string()),
            "{rules:?}"
        );
    }

    #[test]
    fn mini_swe_agent_time_exceeded_is_a_budget_and_rejected_replies_count() {
        let doc = serde_json::json!({
            "trajectory_format": "mini-swe-agent-1.1",
            "info": {"exit_status": "TimeExceeded"},
            "messages": [
                {"role": "user", "content": "task"},
                {"role": "user", "content": "Tool call error: no tool calls", "extra": {"interrupt_type": "FormatError",
                  "response": {"usage": {"prompt_tokens": 500, "completion_tokens": 9}}}},
                {"role": "exit", "content": "TimeExceeded", "extra": {"exit_status": "TimeExceeded", "submission": ""}}
            ]
        });
        let t = mini_swe::import(&doc, ws()).unwrap();
        assert_eq!(t.exit, Some(Exit::Budget));
        assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens), (500, 9));
        assert_eq!(t.steps[0].kind, StepKind::Error);
        assert_eq!(t.steps[0].tokens, Some(509));
    }
}

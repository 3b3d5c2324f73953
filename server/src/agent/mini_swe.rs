//! Imports a mini-swe-agent trajectory (`trajectory_format: mini-swe-agent-1.1`: `info`,
//! `messages` with `extra.actions`, `info.model_stats`) into distdebug steps, so a stock
//! mini-swe-agent run can be scored and shown. Its bash commands become action steps (with
//! the lines that `cat`, `sed -n`, `head` and `nl` showed as `paths_read`), command output
//! becomes observations, and token usage comes from each reply's `response.usage`.

use crate::attempt::{Exit, PathRead, Step, StepKind, Usage};
use serde_json::{json, Value};
use std::path::Path;

/// Characters of one observation kept in the trajectory.
const OBSERVATION_MAX: usize = 8_000;

/// What a mini-swe-agent trajectory says about its run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Imported {
    pub steps: Vec<Step>,
    pub usage: Usage,
    pub model: Option<String>,
    /// `info.exit_status` mapped: Submitted, LimitsExceeded (budget), anything else (error).
    pub exit: Option<Exit>,
    pub exit_status: Option<String>,
}

/// Whether `v` is a mini-swe-agent trajectory (any 1.x format version).
pub fn is_mini_swe(v: &Value) -> bool {
    v.get("trajectory_format")
        .and_then(Value::as_str)
        .is_some_and(|f| f.starts_with("mini-swe-agent"))
}

/// Converts a mini-swe-agent trajectory. `workspace` turns absolute paths inside it into
/// repository-relative ones.
pub fn import(v: &Value, workspace: &Path) -> Result<Imported, String> {
    let messages = v
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("messages: missing; expected the list of chat messages")?;
    let info = v.get("info").unwrap_or(&Value::Null);
    let mut out = Imported {
        model: info
            .pointer("/config/model/model_name")
            .and_then(Value::as_str)
            .map(str::to_string),
        exit_status: info
            .get("exit_status")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..Imported::default()
    };
    out.exit = out.exit_status.as_deref().map(|s| match s {
        "Submitted" => Exit::Submitted,
        "LimitsExceeded" => Exit::Budget,
        _ => Exit::Error,
    });
    let mut seen_task = false;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let extra = m.get("extra").unwrap_or(&Value::Null);
        let content = content_text(m.get("content"));
        match role {
            "system" => {}
            "assistant" => {
                let usage = extra.pointer("/response/usage");
                let p = usage
                    .and_then(|u| u.get("prompt_tokens"))
                    .and_then(Value::as_u64);
                let c = usage
                    .and_then(|u| u.get("completion_tokens"))
                    .and_then(Value::as_u64);
                out.usage.prompt_tokens += p.unwrap_or(0);
                out.usage.completion_tokens += c.unwrap_or(0);
                let mut tokens =
                    (p.is_some() || c.is_some()).then(|| p.unwrap_or(0) + c.unwrap_or(0));
                let mut push = |steps: &mut Vec<Step>, mut s: Step| {
                    s.tokens = tokens.take();
                    s.extra.insert("message".into(), json!(i));
                    steps.push(s);
                };
                if !content.trim().is_empty() {
                    push(
                        &mut out.steps,
                        Step::new(StepKind::Thought).with_text(content.clone()),
                    );
                }
                for command in commands_of(m, extra) {
                    let mut s =
                        Step::new(StepKind::Action).with_tool("bash", json!({"command": command}));
                    s.paths_read = paths_read_by(&command, workspace);
                    push(&mut out.steps, s);
                }
            }
            "tool" | "user" => {
                let is_output =
                    extra.get("raw_output").is_some() || extra.get("returncode").is_some();
                if extra.get("interrupt_type").and_then(Value::as_str) == Some("FormatError") {
                    out.steps.push(
                        Step::new(StepKind::Error).with_text(format!("format error: {content}")),
                    );
                } else if is_output || role == "tool" {
                    let text = extra
                        .get("raw_output")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or(content);
                    let mut s = Step::new(StepKind::Observation)
                        .with_text(super::tools::cap_chars(text, OBSERVATION_MAX));
                    if let Some(rc) = extra.get("returncode").filter(|r| !r.is_null()) {
                        s.extra.insert("returncode".into(), rc.clone());
                    }
                    out.steps.push(s);
                } else if seen_task {
                    out.steps
                        .push(Step::new(StepKind::Thought).with_text(content));
                }
                seen_task = true;
            }
            "exit" => {
                let submission = extra
                    .get("submission")
                    .and_then(Value::as_str)
                    .unwrap_or(&content)
                    .to_string();
                let kind = if extra.get("exit_status").and_then(Value::as_str) == Some("Submitted")
                    || out.exit == Some(Exit::Submitted)
                {
                    StepKind::Submit
                } else {
                    StepKind::Error
                };
                out.steps.push(Step::new(kind).with_text(submission));
            }
            _ => {}
        }
    }
    for (k, s) in out.steps.iter_mut().enumerate() {
        s.index = k as u32;
    }
    out.usage.cost_usd = info
        .pointer("/model_stats/instance_cost")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    Ok(out)
}

/// The text of a message's `content`: a string, or the text parts of a list.
fn content_text(c: Option<&Value>) -> String {
    match c {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The bash commands of an assistant message: `extra.actions[].command`, else the `bash`
/// tool calls.
fn commands_of(m: &Value, extra: &Value) -> Vec<String> {
    if let Some(actions) = extra.get("actions").and_then(Value::as_array) {
        return actions
            .iter()
            .filter_map(|a| a.get("command").and_then(Value::as_str).map(str::to_string))
            .collect();
    }
    m.get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let args = c.pointer("/function/arguments")?;
            let args: Value = match args {
                Value::String(s) => serde_json::from_str(s).ok()?,
                other => other.clone(),
            };
            args.get("command")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

/// The files (and lines) a shell command shows, for the simple forms agents use to read:
/// `cat F…`, `sed -n 'A,Bp' F`, `head -n N F`, `nl -ba F | sed -n 'A,Bp'`. Absolute paths
/// inside the workspace become relative; others are kept as written (the leakage guard
/// looks at them).
pub fn paths_read_by(command: &str, workspace: &Path) -> Vec<PathRead> {
    let mut out = Vec::new();
    for segment in command.split(['\n', ';']).flat_map(|s| s.split("&&")) {
        let stages: Vec<Vec<String>> = segment.split('|').map(words).collect();
        let Some(first) = stages.first() else {
            continue;
        };
        let range_after = stages.get(1).and_then(|s| sed_range(s));
        match first.first().map(String::as_str) {
            Some("cat") | Some("nl") | Some("less") | Some("more") => {
                for f in first[1..].iter().filter(|w| !w.starts_with('-')) {
                    let (s, e) = range_after.unzip();
                    out.push(read(f, s, e, workspace));
                }
            }
            Some("sed") => {
                if let (Some((s, e)), Some(f)) = (sed_range(first), first.last()) {
                    if !f.starts_with('-') && !f.ends_with('p') {
                        out.push(read(f, Some(s), Some(e), workspace));
                    }
                }
            }
            Some("head") => {
                let n = first
                    .windows(2)
                    .find(|w| w[0] == "-n")
                    .and_then(|w| w[1].parse::<u32>().ok())
                    .unwrap_or(10);
                if let Some(f) = first
                    .last()
                    .filter(|f| !f.starts_with('-') && f.parse::<u32>().is_err())
                {
                    out.push(read(f, Some(1), Some(n.max(1)), workspace));
                }
            }
            _ => {}
        }
    }
    out
}

fn read(path: &str, start: Option<u32>, end: Option<u32>, workspace: &Path) -> PathRead {
    let p = Path::new(path);
    let path = if p.is_absolute() {
        match p.strip_prefix(workspace) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string(),
        }
    } else {
        crate::util::paths::normalize_rel(path)
    };
    PathRead {
        path,
        start_line: start,
        end_line: end,
    }
}

/// `sed -n 'A,Bp'` (or `Ap`) in a word list.
fn sed_range(ws: &[String]) -> Option<(u32, u32)> {
    if ws.first().map(String::as_str) != Some("sed") || !ws.iter().any(|w| w == "-n") {
        return None;
    }
    ws.iter().find_map(|w| {
        let body = w.strip_suffix('p')?;
        let (a, b) = body.split_once(',').unwrap_or((body, body));
        let (a, b) = (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?);
        (a >= 1 && a <= b).then_some((a, b))
    })
}

/// Splits a shell segment into words, dropping simple quotes (enough for the forms above).
fn words(s: &str) -> Vec<String> {
    s.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        json!({
            "info": {
                "model_stats": {"instance_cost": 0.0123, "api_calls": 3},
                "config": {"model": {"model_name": "openai/gpt-4o-mini"}},
                "exit_status": "Submitted",
                "submission": "{\"blocks\": []}"
            },
            "messages": [
                {"role": "system", "content": "You are..."},
                {"role": "user", "content": "Diagnose this"},
                {"role": "assistant", "content": "Let me look at the leader.",
                 "extra": {"actions": [{"command": "nl -ba /ws/src/Leader.java | sed -n '100,140p'"}],
                           "response": {"usage": {"prompt_tokens": 1000, "completion_tokens": 50}}}},
                {"role": "user", "content": "<returncode>0</returncode>...",
                 "extra": {"raw_output": "100 class Leader", "returncode": 0}},
                {"role": "assistant", "content": "",
                 "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"cat src/A.java && sed -n '5,9p' src/B.java\"}"}}],
                 "extra": {"response": {"usage": {"prompt_tokens": 1200, "completion_tokens": 20}}}},
                {"role": "tool", "tool_call_id": "c1", "content": "...", "extra": {"raw_output": "x", "returncode": 1}},
                {"role": "user", "content": "Please always provide EXACTLY ONE action", "extra": {"interrupt_type": "FormatError"}},
                {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": "done"}}
            ],
            "trajectory_format": "mini-swe-agent-1.1"
        })
    }

    #[test]
    fn imports_actions_observations_usage_and_exit() {
        let v = sample();
        assert!(is_mini_swe(&v));
        let t = import(&v, Path::new("/ws")).unwrap();
        let kinds: Vec<StepKind> = t.steps.iter().map(|s| s.kind).collect();
        use StepKind::*;
        assert_eq!(
            kinds,
            vec![
                Thought,
                Action,
                Observation,
                Action,
                Observation,
                Error,
                Submit
            ]
        );
        assert_eq!(
            t.steps[0].tokens,
            Some(1050),
            "usage goes on the reply's first step"
        );
        assert_eq!(t.steps[1].tokens, None);
        assert_eq!(t.steps[3].tokens, Some(1220));
        assert_eq!(t.steps[1].tool.as_deref(), Some("bash"));
        assert_eq!(
            t.steps[1].paths_read,
            vec![PathRead {
                path: "src/Leader.java".into(),
                start_line: Some(100),
                end_line: Some(140)
            }]
        );
        assert_eq!(t.steps[3].paths_read.len(), 2);
        assert_eq!(t.steps[3].paths_read[1].start_line, Some(5));
        assert_eq!(t.steps[4].extra["returncode"], 1);
        assert_eq!(
            (t.usage.prompt_tokens, t.usage.completion_tokens),
            (2200, 70)
        );
        assert_eq!(t.usage.cost_usd, 0.0123);
        assert_eq!(t.model.as_deref(), Some("openai/gpt-4o-mini"));
        assert_eq!(t.exit, Some(Exit::Submitted));
        assert_eq!(t.steps.last().unwrap().index, 6);
    }

    #[test]
    fn limits_exceeded_is_a_budget_exit_and_missing_messages_is_an_error() {
        let mut v = sample();
        v["info"]["exit_status"] = json!("LimitsExceeded");
        assert_eq!(
            import(&v, Path::new("/ws")).unwrap().exit,
            Some(Exit::Budget)
        );
        let err = import(
            &json!({"trajectory_format": "mini-swe-agent-1.1"}),
            Path::new("/ws"),
        )
        .unwrap_err();
        assert!(err.contains("messages"), "{err}");
    }

    #[test]
    fn paths_outside_the_workspace_are_kept_absolute() {
        let r = paths_read_by("cat /data/incidents/x/labels.json", Path::new("/ws"));
        assert_eq!(r[0].path, "/data/incidents/x/labels.json");
        let r = paths_read_by("head -n 20 ./src/a.go", Path::new("/ws"));
        assert_eq!(
            r[0],
            PathRead {
                path: "src/a.go".into(),
                start_line: Some(1),
                end_line: Some(20)
            }
        );
        assert!(paths_read_by("grep -rn foo .", Path::new("/ws")).is_empty());
    }
}

//! Imports a mini-swe-agent trajectory into distdebug steps, so a stock mini-swe-agent run can
//! be scored and shown: 2.x (`trajectory_format: mini-swe-agent-1.1`, commands in
//! `extra.actions` or `bash` tool calls, output in `extra.raw_output`) and 1.x
//! (`mini-swe-agent-1`, commands only as ```bash blocks in the text, output as
//! `<returncode>…<output>` user messages, the status in `info.exit_status`). Commands become
//! action steps (with the lines they showed as `paths_read`), output becomes observations
//! (with the hits a search printed), and token usage comes from each reply's
//! `response.usage`, rejected replies included.

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
    // 1.x writes its commands only as ```bash blocks in the text.
    let text_actions =
        v.get("trajectory_format").and_then(Value::as_str) == Some("mini-swe-agent-1");
    let mut out = Imported {
        model: info
            .pointer("/config/model/model_name")
            .and_then(Value::as_str)
            .map(str::to_string),
        exit_status: info
            .get("exit_status")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        ..Imported::default()
    };
    out.exit = out.exit_status.as_deref().map(exit_of);
    let mut seen_task = false;
    // Commands waiting for their output, to find the search hits an observation shows.
    let mut pending: std::collections::VecDeque<String> = Default::default();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let extra = m.get("extra").unwrap_or(&Value::Null);
        let content = content_text(m.get("content"));
        match role {
            "system" => {}
            "assistant" => {
                let mut tokens = count_usage(extra.pointer("/response/usage"), &mut out.usage);
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
                let commands = if text_actions {
                    bash_blocks(&content)
                } else {
                    commands_of(m, extra)
                };
                pending = commands.iter().cloned().collect();
                for command in commands {
                    let mut s =
                        Step::new(StepKind::Action).with_tool("bash", json!({"command": command}));
                    s.paths_read = paths_read_by(&command, workspace);
                    push(&mut out.steps, s);
                }
                // A reply with no content and no action still used tokens.
                if let Some(t) = tokens {
                    let mut s = Step::new(StepKind::Thought).with_text("");
                    s.tokens = Some(t);
                    out.steps.push(s);
                }
            }
            "tool" | "user" => {
                if let Some(s) = observation_or_error(
                    extra,
                    &content,
                    role,
                    seen_task,
                    pending.pop_front(),
                    workspace,
                    &mut out.usage,
                ) {
                    out.steps.push(s);
                }
                seen_task = true;
            }
            "exit" => {
                let submission = extra
                    .get("submission")
                    .and_then(Value::as_str)
                    .unwrap_or(&content)
                    .to_string();
                let status = extra.get("exit_status").and_then(Value::as_str);
                if out.exit.is_none() {
                    out.exit = status.map(exit_of);
                }
                out.steps.push(end_step(status, &submission));
            }
            _ => {}
        }
    }
    // 1.x has no exit message: its status and submission are in `info`.
    let has_exit_message = messages
        .iter()
        .any(|m| m.get("role").and_then(Value::as_str) == Some("exit"));
    if !has_exit_message {
        if let Some(status) = out.exit_status.clone() {
            let submission = info
                .get("submission")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            out.steps.push(end_step(Some(&status), &submission));
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

/// mini-swe-agent's exit status as an attempt's exit: its own step, cost and wall-time limits
/// are budgets.
fn exit_of(status: &str) -> Exit {
    match status {
        "Submitted" => Exit::Submitted,
        "LimitsExceeded" | "TimeExceeded" | "CostLimitExceeded" => Exit::Budget,
        _ => Exit::Error,
    }
}

fn end_step(status: Option<&str>, submission: &str) -> Step {
    match status {
        Some("Submitted") => Step::new(StepKind::Submit).with_text(submission),
        Some(s) if submission.trim().is_empty() => {
            Step::new(StepKind::Error).with_text(format!("mini-swe-agent stopped: {s}"))
        }
        Some(s) => Step::new(StepKind::Error)
            .with_text(format!("mini-swe-agent stopped: {s}: {submission}")),
        None => Step::new(StepKind::Error).with_text(submission),
    }
}

/// Adds a reply's `usage` to the total; the reply's tokens, when it reported any.
fn count_usage(usage: Option<&Value>, total: &mut Usage) -> Option<u64> {
    let get = |k: &str| usage.and_then(|u| u.get(k)).and_then(Value::as_u64);
    let (p, c) = (get("prompt_tokens"), get("completion_tokens"));
    total.prompt_tokens += p.unwrap_or(0);
    total.completion_tokens += c.unwrap_or(0);
    (p.is_some() || c.is_some()).then(|| p.unwrap_or(0) + c.unwrap_or(0))
}

/// A user or tool message after the task: command output (2.x `extra.raw_output`, 1.x
/// `<returncode>…<output>…`), a format error (whose rejected reply's usage counts), or a
/// note to the model.
fn observation_or_error(
    extra: &Value,
    content: &str,
    role: &str,
    seen_task: bool,
    command: Option<String>,
    workspace: &Path,
    usage: &mut Usage,
) -> Option<Step> {
    let format_error = extra.get("interrupt_type").and_then(Value::as_str) == Some("FormatError")
        || content.starts_with("Please always provide EXACTLY ONE action");
    if format_error {
        let mut s = Step::new(StepKind::Error).with_text(format!("format error: {content}"));
        s.tokens = count_usage(extra.pointer("/response/usage"), usage);
        return Some(s);
    }
    let (text, returncode) =
        if extra.get("raw_output").is_some() || extra.get("returncode").is_some() {
            let text = extra
                .get("raw_output")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| content.to_string());
            (
                text,
                extra.get("returncode").filter(|r| !r.is_null()).cloned(),
            )
        } else if let Some((rc, output)) = tagged_output(content) {
            (output, Some(json!(rc)))
        } else if role == "tool" {
            (content.to_string(), None)
        } else {
            return (seen_task && !content.trim().is_empty())
                .then(|| Step::new(StepKind::Thought).with_text(content));
        };
    let mut s = Step::new(StepKind::Observation);
    if let Some(cmd) = &command {
        s.paths_read = super::harness::shell_reads::search_hits(cmd, &text, workspace);
    }
    s = s.with_text(super::tools::cap_chars(text, OBSERVATION_MAX));
    if let Some(rc) = returncode {
        s.extra.insert("returncode".into(), rc);
    }
    Some(s)
}

/// 1.x's `<returncode>N</returncode>\n<output>\n…\n</output>` (or a truncated
/// `<output_head>`/`<output_tail>` form, kept whole).
fn tagged_output(content: &str) -> Option<(i64, String)> {
    let rest = content.trim_start().strip_prefix("<returncode>")?;
    let (rc, rest) = rest.split_once("</returncode>")?;
    let rc = rc.trim().parse::<i64>().ok()?;
    let output = match (rest.find("<output>"), rest.rfind("</output>")) {
        (Some(a), Some(b)) if a + 8 <= b => rest[a + 8..b].trim_matches('\n').to_string(),
        _ => rest.trim().to_string(),
    };
    Some((rc, output))
}

/// The commands of 1.x's text: exactly one ```bash block is an action; none or several is a
/// format error (mini-swe-agent rejects the reply and says so in the next message).
fn bash_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("```bash") {
        let after = &rest[i + 7..];
        let Some(body_start) = after.find('\n') else {
            break;
        };
        let body = &after[body_start + 1..];
        let Some(end) = body.find("```") else { break };
        blocks.push(body[..end].trim().to_string());
        rest = &body[end + 3..];
    }
    if blocks.len() == 1 {
        blocks
    } else {
        Vec::new()
    }
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

/// The files (and lines) a shell command shows; see `harness::shell_reads`.
pub fn paths_read_by(command: &str, workspace: &Path) -> Vec<PathRead> {
    super::harness::shell_reads::paths_read_by(command, workspace)
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

//! Codex CLI as a harness: `codex exec --json` with `$CODEX_HOME` in the attempt's home, a
//! model provider for the configured endpoint (Codex speaks only the Responses API), no update
//! check, no web search, and Codex's own sandbox bypassed because distdebug's sandbox holds
//! it. Its rollout (`$CODEX_HOME/sessions/…/rollout-*.jsonl`) is imported live, with the usage
//! of every model reply; its `exec --json` events are the fallback.

use super::live::{Imported, Native};
use super::shell_reads::{paths_read_by, search_hits};
use super::{first_file, on_path, Harness, Launch};
use crate::attempt::{Exit, Step, StepKind};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

const OBSERVATION_MAX: usize = 8_000;

/// The `codex` binary in a node_modules folder (the platform package holds it), or the
/// program itself, or PATH.
pub fn find(location: Option<&Path>) -> Option<PathBuf> {
    const IN_NODE_MODULES: &[&str] = &[
        "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex/codex",
        "@openai/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/bin/codex",
        "@openai/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/codex/codex",
    ];
    match location {
        Some(l) if l.is_dir() => {
            let nm = l.join("node_modules");
            first_file(&nm, IN_NODE_MODULES)
                .or_else(|| first_file(l, IN_NODE_MODULES))
                .or_else(|| first_file(l, &["bin/codex", "codex"]))
        }
        Some(l) => l.is_file().then(|| l.to_path_buf()),
        None => on_path("codex"),
    }
}

/// A TOML basic string (JSON's escapes are valid TOML).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

pub fn launch(
    h: &Harness,
    home: &Path,
    attempt_dir: &Path,
    workspace: &Path,
    task: &str,
    mut env: BTreeMap<String, String>,
) -> Result<Launch, String> {
    let codex_home = home.join("codex");
    std::fs::create_dir_all(&codex_home)
        .map_err(|e| format!("{}: cannot create: {e}", codex_home.display()))?;
    let mut config = format!(
        "# Written by distdebug for one attempt.\n\
model = {model}\nmodel_provider = \"distdebug\"\ncheck_for_update_on_startup = false\n\
web_search = \"disabled\"\n\n[model_providers.distdebug]\nname = \"distdebug endpoint\"\n\
base_url = {base}\nwire_api = \"responses\"\n",
        model = toml_str(&h.model),
        base = toml_str(&h.base_url()),
    );
    // Only the variable's name: Codex reads the key from the environment itself.
    if h.has_key() {
        config.push_str(&format!("env_key = {}\n", toml_str(&h.api_key_env)));
    }
    config.push_str("\n[analytics]\nenabled = false\n");
    // A shell snapshot stores the environment (the key's variable too) under CODEX_HOME, and
    // apps, plugins and the browser reach beyond the endpoint.
    config.push_str(
        "\n[features]\nshell_snapshot = false\napps = false\nplugins = false\n\
remote_plugin = false\nbrowser_use = false\nin_app_browser = false\n",
    );
    let path = codex_home.join("config.toml");
    crate::util::fs::write_atomic(&path, config.as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    env.insert(
        "CODEX_HOME".into(),
        codex_home.to_string_lossy().into_owned(),
    );
    let argv = vec![
        h.program.to_string_lossy().into_owned(),
        "exec".into(),
        "--json".into(),
        "--skip-git-repo-check".into(),
        // distdebug's sandbox confines it; Codex's own (bubblewrap/landlock) cannot nest there.
        "--dangerously-bypass-approvals-and-sandbox".into(),
        "-C".into(),
        workspace.to_string_lossy().into_owned(),
        "-m".into(),
        h.model.clone(),
        task.to_string(),
    ];
    Ok(Launch {
        argv,
        env,
        native: Native::Codex {
            sessions: codex_home.join("sessions"),
            events: attempt_dir.join(super::super::external::STDOUT_LOG),
        },
    })
}

/// The newest `rollout-*.jsonl` under `sessions`.
pub fn find_rollout(sessions: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut stack = vec![sessions.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
            {
                found.push(p);
            }
        }
    }
    found.sort();
    found.pop()
}

/// The command line of a shell tool call's arguments (`cmd`, `command` as a string or argv).
fn command_of(args: &Value) -> Option<String> {
    let c = args.get("cmd").or_else(|| args.get("command"))?;
    match c {
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => {
            let words: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            Some(words.join(" "))
        }
        _ => None,
    }
}

/// Codex wraps a command's output in a header (`Chunk ID…`, `Output:`): keep the output.
fn strip_output_header(s: &str) -> &str {
    match s.find("\nOutput:\n") {
        Some(i) if s[..i].contains("Process exited") || s.starts_with("Chunk ID") => &s[i + 9..],
        _ => s,
    }
}

/// Imports a rollout: messages and reasoning become thoughts, tool calls actions, their output
/// observations, `token_count` events the tokens of each model reply (put on the reply's first
/// step; steps after the last `token_count` wait for it, so they are not yet stable).
pub fn import_rollout(lines: &[Value], workspace: &Path) -> Imported {
    let mut out = Imported::default();
    let mut calls: HashMap<String, String> = HashMap::new();
    let mut reply_start = 0usize;
    let mut last_total: Option<Value> = None;
    for l in lines {
        let p = l.get("payload").unwrap_or(&Value::Null);
        let ptype = p.get("type").and_then(Value::as_str).unwrap_or("");
        match (l.get("type").and_then(Value::as_str).unwrap_or(""), ptype) {
            ("turn_context", _) => {
                if let Some(m) = p.get("model").and_then(Value::as_str) {
                    out.model = Some(m.to_string());
                }
            }
            ("response_item", "message")
                if p.get("role").and_then(Value::as_str) == Some("assistant") =>
            {
                let text = output_text(p);
                if !text.trim().is_empty() {
                    out.steps.push(Step::new(StepKind::Thought).with_text(text));
                }
            }
            ("response_item", "reasoning") => {
                let text = reasoning_text(p);
                if !text.trim().is_empty() {
                    out.steps.push(Step::new(StepKind::Thought).with_text(text));
                }
            }
            ("response_item", "function_call" | "custom_tool_call" | "local_shell_call") => {
                let name = p.get("name").and_then(Value::as_str).unwrap_or("shell");
                let args = match p.get("arguments").or_else(|| p.get("input")) {
                    Some(Value::String(s)) => {
                        serde_json::from_str(s).unwrap_or(json!({"input": s}))
                    }
                    Some(v) => v.clone(),
                    None => p.get("action").cloned().unwrap_or(Value::Null),
                };
                let mut s = Step::new(StepKind::Action).with_tool(name, args.clone());
                if let Some(cmd) = command_of(&args) {
                    s.paths_read = paths_read_by(&cmd, workspace);
                    if let Some(id) = p.get("call_id").and_then(Value::as_str) {
                        calls.insert(id.to_string(), cmd);
                    }
                }
                out.steps.push(s);
            }
            ("response_item", "function_call_output" | "custom_tool_call_output") => {
                let raw = match p.get("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v
                        .get("content")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string()),
                    None => String::new(),
                };
                let text = strip_output_header(&raw).to_string();
                let mut s = Step::new(StepKind::Observation);
                if let Some(cmd) = p
                    .get("call_id")
                    .and_then(Value::as_str)
                    .and_then(|id| calls.get(id))
                {
                    s.paths_read = search_hits(cmd, &text, workspace);
                }
                out.steps
                    .push(s.with_text(crate::agent::tools::cap_chars(text, OBSERVATION_MAX)));
            }
            ("event_msg", "token_count") => {
                let Some(info) = p.get("info").filter(|i| !i.is_null()) else {
                    continue;
                };
                // The same totals repeated carry no new reply.
                if last_total.as_ref() == info.get("total_token_usage") {
                    continue;
                }
                last_total = info.get("total_token_usage").cloned();
                let u = info.get("last_token_usage").unwrap_or(&Value::Null);
                let get = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                let (pt, ct) = (get("input_tokens"), get("output_tokens"));
                out.usage.prompt_tokens += pt;
                out.usage.completion_tokens += ct;
                out.replies += 1;
                if let Some(first) = out.steps.get_mut(reply_start) {
                    first.tokens = Some(pt + ct);
                } else {
                    // A reply with no step of its own (an empty answer) still used tokens.
                    let mut s = Step::new(StepKind::Thought).with_text("");
                    s.tokens = Some(pt + ct);
                    out.steps.push(s);
                }
                reply_start = out.steps.len();
                out.stable = out.steps.len();
            }
            ("event_msg", "task_complete") => {
                let text = p
                    .get("last_agent_message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                out.steps.push(Step::new(StepKind::Submit).with_text(text));
                out.exit = Some(Exit::Submitted);
                out.stable = out.steps.len();
                reply_start = out.steps.len();
            }
            ("event_msg", "error" | "stream_error" | "turn_aborted") => {
                let msg = p
                    .get("message")
                    .or_else(|| p.get("reason"))
                    .map(|m| {
                        m.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| m.to_string())
                    })
                    .unwrap_or_default();
                out.steps
                    .push(Step::new(StepKind::Error).with_text(format!("codex: {ptype}: {msg}")));
                if ptype != "stream_error" {
                    out.exit = Some(Exit::Error);
                }
            }
            _ => {}
        }
    }
    out
}

/// Imports `codex exec --json` events (no per-reply usage there: the turn's usage is the
/// total).
pub fn import_events(lines: &[Value], workspace: &Path) -> Imported {
    let mut out = Imported::default();
    for l in lines {
        let item = l.get("item").unwrap_or(&Value::Null);
        match l.get("type").and_then(Value::as_str).unwrap_or("") {
            "item.completed" => match item.get("type").and_then(Value::as_str).unwrap_or("") {
                "agent_message" | "reasoning" => {
                    let text = item.get("text").and_then(Value::as_str).unwrap_or("");
                    out.steps.push(Step::new(StepKind::Thought).with_text(text));
                }
                "command_execution" => {
                    let cmd = item
                        .get("command")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let mut a =
                        Step::new(StepKind::Action).with_tool("exec_command", json!({"cmd": cmd}));
                    a.paths_read = paths_read_by(&cmd, workspace);
                    out.steps.push(a);
                    let text = item
                        .get("aggregated_output")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let mut o = Step::new(StepKind::Observation);
                    o.paths_read = search_hits(&cmd, &text, workspace);
                    let mut o = o.with_text(crate::agent::tools::cap_chars(text, OBSERVATION_MAX));
                    if let Some(rc) = item.get("exit_code").filter(|r| !r.is_null()) {
                        o.extra.insert("returncode".into(), rc.clone());
                    }
                    out.steps.push(o);
                }
                "error" => {
                    let msg = item.get("message").and_then(Value::as_str).unwrap_or("");
                    out.steps
                        .push(Step::new(StepKind::Error).with_text(format!("codex: {msg}")));
                }
                "" => {}
                other => {
                    out.steps
                        .push(Step::new(StepKind::Action).with_tool(other, item.clone()));
                }
            },
            "turn.completed" => {
                let u = l.get("usage").unwrap_or(&Value::Null);
                out.usage.prompt_tokens +=
                    u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0);
                out.usage.completion_tokens +=
                    u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0);
                out.exit = Some(Exit::Submitted);
            }
            "turn.failed" | "error" => {
                let msg = l
                    .pointer("/error/message")
                    .or_else(|| l.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                out.steps
                    .push(Step::new(StepKind::Error).with_text(format!("codex: {msg}")));
                out.exit = Some(Exit::Error);
            }
            _ => {}
        }
        out.stable = out.steps.len();
    }
    out
}

/// The endpoint failures Codex retried (`{"type":"error","message":"Reconnecting… 429"}` in
/// its `exec --json` events; its rollout does not record them), as error steps.
pub fn retry_errors(events: &[Value]) -> Vec<Step> {
    events
        .iter()
        .filter(|l| l.get("type").and_then(Value::as_str) == Some("error"))
        .filter_map(|l| l.get("message").and_then(Value::as_str))
        .map(|m| Step::new(StepKind::Error).with_text(format!("codex: {m}")))
        .collect()
}

fn output_text(p: &Value) -> String {
    p.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("")
}

fn reasoning_text(p: &Value) -> String {
    p.get("summary")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

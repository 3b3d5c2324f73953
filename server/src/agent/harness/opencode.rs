//! OpenCode as a harness: `opencode run --format json` with its config written into the
//! attempt's home (a provider `@ai-sdk/openai-compatible` with the endpoint as `baseURL`, the
//! key read by OpenCode from the named variable), updates, model-list fetches, LSP downloads,
//! sharing, default plugins and the repository's own OpenCode config switched off. Its JSON
//! events (`step_start`, `text`, `reasoning`, `tool_use`, `step_finish` with the reply's
//! tokens) are followed live from its stdout.

use super::live::{Imported, Native};
use super::shell_reads::{paths_read_by, read, search_hits};
use super::{first_file, on_path, Harness, Launch};
use crate::attempt::{Exit, PathRead, Step, StepKind};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const OBSERVATION_MAX: usize = 8_000;
/// The provider id in OpenCode's config.
const PROVIDER: &str = "distdebug";

/// The `opencode` binary in a node_modules folder (the platform package holds it), the
/// program itself, or PATH.
pub fn find(location: Option<&Path>) -> Option<PathBuf> {
    const IN_NODE_MODULES: &[&str] = &[
        "opencode-linux-x64/bin/opencode",
        "opencode-linux-x64-baseline/bin/opencode",
        "opencode-linux-arm64/bin/opencode",
        "opencode-linux-x64-musl/bin/opencode",
    ];
    match location {
        Some(l) if l.is_dir() => first_file(&l.join("node_modules"), IN_NODE_MODULES)
            .or_else(|| first_file(l, IN_NODE_MODULES))
            .or_else(|| first_file(l, &["bin/opencode", "opencode"])),
        Some(l) => l.is_file().then(|| l.to_path_buf()),
        None => on_path("opencode"),
    }
}

pub fn launch(
    h: &Harness,
    home: &Path,
    attempt_dir: &Path,
    task: &str,
    mut env: BTreeMap<String, String>,
) -> Result<Launch, String> {
    let mut options = json!({"baseURL": h.base_url()});
    if h.has_key() {
        // OpenCode substitutes the variable itself: the key is never written here.
        options["apiKey"] = json!(format!("{{env:{}}}", h.api_key_env));
    }
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: {
            "npm": "@ai-sdk/openai-compatible",
            "name": "distdebug endpoint",
            "options": options,
            "models": {h.model.clone(): {"name": h.model}},
        }},
        "model": format!("{PROVIDER}/{}", h.model),
        "small_model": format!("{PROVIDER}/{}", h.model),
        "autoupdate": false,
        "share": "disabled",
        "agent": {"build": {"steps": h.max_steps}},
        // Its answer goes to the output folder, outside the repository; asking would end a
        // non-interactive run. distdebug's sandbox is what confines it.
        "permission": {"external_directory": "allow"},
    });
    let path = home.join("opencode.json");
    let text = serde_json::to_string_pretty(&config).map_err(|e| e.to_string())?;
    crate::util::fs::write_atomic(&path, text.as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    env.insert(
        "OPENCODE_CONFIG".into(),
        path.to_string_lossy().into_owned(),
    );
    for flag in [
        "OPENCODE_DISABLE_AUTOUPDATE",
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_LSP_DOWNLOAD",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS",
        "OPENCODE_DISABLE_SHARE",
        "OPENCODE_DISABLE_CLAUDE_CODE",
        "OPENCODE_DISABLE_EXTERNAL_SKILLS",
        "OPENCODE_DISABLE_PROJECT_CONFIG",
    ] {
        env.insert(flag.into(), "1".into());
    }
    let argv = vec![
        h.program.to_string_lossy().into_owned(),
        "run".into(),
        "--format".into(),
        "json".into(),
        "-m".into(),
        format!("{PROVIDER}/{}", h.model),
        task.to_string(),
    ];
    Ok(Launch {
        argv,
        env,
        native: Native::OpenCode {
            events: attempt_dir.join(super::super::external::STDOUT_LOG),
        },
    })
}

/// Imports OpenCode's `--format json` events. A reply runs from `step_start` to
/// `step_finish`, whose tokens go on the reply's first step; steps of a reply still running
/// are not yet stable.
pub fn import_events(lines: &[Value], workspace: &Path) -> Imported {
    let mut out = Imported::default();
    let mut reply_start = 0usize;
    for l in lines {
        let part = l.get("part").unwrap_or(&Value::Null);
        match l.get("type").and_then(Value::as_str).unwrap_or("") {
            "step_start" => reply_start = out.steps.len(),
            "text" | "reasoning" => {
                let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                if !text.trim().is_empty() {
                    out.steps.push(Step::new(StepKind::Thought).with_text(text));
                }
            }
            "tool_use" => tool_steps(part, workspace, &mut out.steps),
            "step_finish" => {
                let t = part.get("tokens").unwrap_or(&Value::Null);
                let get = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
                let (pt, ct) = (get("input"), get("output") + get("reasoning"));
                out.usage.prompt_tokens += pt;
                out.usage.completion_tokens += ct;
                out.usage.cost_usd += part.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
                out.replies += 1;
                match out.steps.get_mut(reply_start) {
                    Some(first) => first.tokens = Some(pt + ct),
                    None => {
                        let mut s = Step::new(StepKind::Thought).with_text("");
                        s.tokens = Some(pt + ct);
                        out.steps.push(s);
                    }
                }
                if part.get("reason").and_then(Value::as_str) == Some("stop") {
                    // The final answer: the reply's text is what it submits.
                    let text = out.steps[reply_start.min(out.steps.len())..]
                        .iter()
                        .filter(|s| s.kind == StepKind::Thought)
                        .filter_map(|s| s.text.clone())
                        .collect::<Vec<_>>()
                        .join("\n");
                    out.steps.push(Step::new(StepKind::Submit).with_text(text));
                    out.exit = Some(Exit::Submitted);
                }
                reply_start = out.steps.len();
                out.stable = out.steps.len();
            }
            "error" => {
                let e = l.get("error").unwrap_or(part);
                let msg = e
                    .pointer("/data/message")
                    .or_else(|| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| e.to_string());
                out.steps
                    .push(Step::new(StepKind::Error).with_text(format!("opencode: {msg}")));
                out.exit = Some(Exit::Error);
                out.stable = out.steps.len();
            }
            _ => {}
        }
    }
    out
}

/// A `tool_use` part: an action with the tool's input, then its output as an observation.
fn tool_steps(part: &Value, workspace: &Path, steps: &mut Vec<Step>) {
    let tool = part.get("tool").and_then(Value::as_str).unwrap_or("tool");
    let state = part.get("state").unwrap_or(&Value::Null);
    let input = state.get("input").cloned().unwrap_or(Value::Null);
    let mut a = Step::new(StepKind::Action).with_tool(tool, input.clone());
    let command = input.get("command").and_then(Value::as_str);
    match tool {
        "bash" => {
            a.paths_read = command
                .map(|c| paths_read_by(c, workspace))
                .unwrap_or_default()
        }
        "read" => a.paths_read.extend(read_tool(&input, workspace)),
        _ => {}
    }
    steps.push(a);
    let status = state.get("status").and_then(Value::as_str).unwrap_or("");
    let output = state
        .get("output")
        .or_else(|| state.get("error"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut o = Step::new(if status == "error" {
        StepKind::Error
    } else {
        StepKind::Observation
    });
    o.paths_read = match (tool, command) {
        ("bash", Some(c)) => search_hits(c, &output, workspace),
        ("grep", _) => grep_tool_hits(&output, workspace),
        _ => Vec::new(),
    };
    if let Some(rc) = state.pointer("/metadata/exit").filter(|r| !r.is_null()) {
        o.extra.insert("returncode".into(), rc.clone());
    }
    steps.push(o.with_text(crate::agent::tools::cap_chars(output, OBSERVATION_MAX)));
}

/// OpenCode's `read` tool: `filePath`, 1-based `offset`, `limit` lines (2000 by default).
fn read_tool(input: &Value, workspace: &Path) -> Option<PathRead> {
    let path = input.get("filePath").and_then(Value::as_str)?;
    let offset = input
        .get("offset")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    let limit = input
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(2000)
        .max(1);
    let start = u32::try_from(offset).ok()?;
    let end = u32::try_from(offset + limit - 1).unwrap_or(u32::MAX);
    Some(read(path, Some(start), Some(end), workspace))
}

/// OpenCode's `grep` tool prints `path:` headers followed by `  Line N: text` lines.
fn grep_tool_hits(output: &str, workspace: &Path) -> Vec<PathRead> {
    let mut out = Vec::new();
    let mut current: Option<&str> = None;
    for line in output.lines() {
        let t = line.trim();
        if let Some(n) = t.strip_prefix("Line ").and_then(|r| r.split(':').next()) {
            if let (Some(p), Ok(n)) = (current, n.trim().parse::<u32>()) {
                out.push(read(p, Some(n), Some(n), workspace));
            }
        } else if let Some(p) = t.strip_suffix(':').filter(|p| !p.contains(' ')) {
            current = Some(p);
        }
    }
    out
}

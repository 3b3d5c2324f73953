//! `distdebug bench document`: one large document in the language server, as a separate
//! process over pipes. Measured: the time to open it, the first code action (which parses it,
//! unless it is above the `maxParseBytes` setting), code actions after each of N edits, and
//! the server's resident memory after opening, after the edits, after closing, and at peak.

use super::bench::{memory_mb, start_server};
use super::harness::{file_uri, full_capabilities};
use crate::incident::prepare::{WorkspaceInfo, META_DIR};
use crate::util::fs::write_json_atomic;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct DocumentBenchSpec {
    /// Size of the generated document.
    pub bytes: usize,
    /// Extension of the document (which grammar parses it).
    pub extension: String,
    /// Incremental edits, each followed by a code action.
    pub edits: usize,
    /// The server's `maxParseBytes` setting (`None`: its default).
    pub max_parse_bytes: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DocumentBenchReport {
    pub document_mb: f64,
    pub extension: String,
    pub open_ms: f64,
    pub first_code_action_ms: f64,
    pub code_action_after_edit_p50_ms: f64,
    pub code_action_after_edit_max_ms: f64,
    pub edits: usize,
    pub close_ms: f64,
    pub rss_before_open_mb: Option<f64>,
    pub rss_after_open_mb: Option<f64>,
    pub rss_after_edits_mb: Option<f64>,
    pub rss_after_close_mb: Option<f64>,
    pub peak_rss_mb: Option<f64>,
    /// (peak - before open) / document size.
    pub peak_over_text: Option<f64>,
    /// What the server said about the document in `window/logMessage`, if anything.
    pub server_said: Vec<String>,
}

/// A line pattern per language, so that the grammar has real code to parse.
fn unit(extension: &str, i: usize) -> String {
    match extension {
        "java" => format!(
            "class Lease{i} {{\n  long renew(String client, long now) {{\n    long ttl = now + 1000L;\n    if (ttl < 0) throw new IllegalStateException(\"bad lease \" + client);\n    return ttl;\n  }}\n}}\n"
        ),
        "py" => format!(
            "def renew_{i}(client, now):\n    ttl = now + 1000\n    if ttl < 0:\n        raise ValueError(f\"bad lease {{client}}\")\n    return ttl\n\n"
        ),
        "go" => format!(
            "func renew{i}(client string, now int64) int64 {{\n\tttl := now + 1000\n\tif ttl < 0 {{\n\t\tpanic(fmt.Sprintf(\"bad lease %s\", client))\n\t}}\n\treturn ttl\n}}\n"
        ),
        "rs" => format!(
            "fn renew_{i}(client: &str, now: i64) -> i64 {{\n    let ttl = now + 1000;\n    if ttl < 0 {{\n        panic!(\"bad lease {{}}\", client);\n    }}\n    ttl\n}}\n"
        ),
        "cpp" => format!(
            "long renew{i}(const std::string& client, long now) {{\n  long ttl = now + 1000;\n  if (ttl < 0) throw std::runtime_error(\"bad lease \" + client);\n  return ttl;\n}}\n"
        ),
        _ => format!(
            "object Lease{i} {{\n  def renew(client: String, now: Long): Long = {{\n    val ttl = now + 1000L\n    if (ttl < 0) throw new IllegalStateException(s\"bad lease $client\")\n    ttl\n  }}\n}}\n"
        ),
    }
}

fn generate(root: &Path, spec: &DocumentBenchSpec) -> Result<(std::path::PathBuf, String), String> {
    let ws = root.join("ws");
    let io = |e: std::io::Error| e.to_string();
    std::fs::create_dir_all(ws.join(META_DIR)).map_err(io)?;
    std::fs::write(ws.join(META_DIR).join("report.md"), "# Synthetic report\n").map_err(io)?;
    write_json_atomic(
        &ws.join(META_DIR).join("workspace.json"),
        &WorkspaceInfo {
            incident: "bench-document".into(),
            system: "Bench".into(),
            language: spec.extension.clone(),
            report: format!("{META_DIR}/report.md"),
            evidence: vec![],
            prepared_at: String::new(),
            distdebug_version: env!("CARGO_PKG_VERSION").into(),
        },
    )
    .map_err(io)?;
    let mut text = String::with_capacity(spec.bytes + 256);
    let mut i = 0;
    while text.len() < spec.bytes {
        text.push_str(&unit(&spec.extension, i));
        i += 1;
    }
    let rel = format!("src/Big.{}", spec.extension);
    std::fs::create_dir_all(ws.join("src")).map_err(io)?;
    std::fs::write(ws.join(&rel), &text).map_err(io)?;
    Ok((ws, text))
}

fn code_action_params(uri: &str, line: u32) -> Value {
    json!({
        "textDocument": {"uri": uri},
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
        "context": {"diagnostics": []}
    })
}

/// Runs the benchmark against `server` (the `distdebug` binary), in `root`.
pub async fn run(
    server: &Path,
    root: &Path,
    spec: &DocumentBenchSpec,
) -> Result<DocumentBenchReport, String> {
    let (ws, text) = generate(root, spec)?;
    let lines = text.lines().count() as u32;
    let (mut child, pid, mut c) = start_server(server)?;
    c.deadline = Duration::from_secs(600);
    let options = match spec.max_parse_bytes {
        Some(n) => json!({"maxParseBytes": n}),
        None => json!({}),
    };
    c.initialize(Some(&ws), full_capabilities("utf-16"), options)
        .await?;
    let uri = file_uri(&ws.join(format!("src/Big.{}", spec.extension)))
        .ok_or("cannot make a file URI")?;
    let rss_before_open = memory_mb(pid).0;

    let t = Instant::now();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": spec.extension, "version": 1, "text": text}}),
    )
    .await?;
    drop(text);
    // A request answered after the didOpen: the document is in.
    c.call("distdebug/status", Value::Null).await?;
    let open_ms = t.elapsed().as_secs_f64() * 1000.0;
    let rss_after_open = memory_mb(pid).0;

    let t = Instant::now();
    c.call(
        "textDocument/codeAction",
        code_action_params(&uri, lines / 2),
    )
    .await?;
    let first_code_action_ms = t.elapsed().as_secs_f64() * 1000.0;

    let mut after_edit = Vec::with_capacity(spec.edits);
    for k in 0..spec.edits {
        let line = (k as u32 * 7919) % lines.max(1);
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2 + k},
                   "contentChanges": [{"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": "// edited\n"}]}),
        )
        .await?;
        let t = Instant::now();
        c.call("textDocument/codeAction", code_action_params(&uri, line))
            .await?;
        after_edit.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let rss_after_edits = memory_mb(pid).0;

    let t = Instant::now();
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )
    .await?;
    c.call("distdebug/status", Value::Null).await?;
    let close_ms = t.elapsed().as_secs_f64() * 1000.0;
    let (rss_after_close, peak) = memory_mb(pid);
    let server_said = c
        .log
        .iter()
        .filter(|m| m["method"] == "window/logMessage")
        .filter_map(|m| m["params"]["message"].as_str())
        .filter(|s| s.contains("Big."))
        .map(str::to_string)
        .collect();
    c.shutdown().await?;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    after_edit.sort_by(|a, b| a.total_cmp(b));
    let mb = spec.bytes as f64 / (1024.0 * 1024.0);
    Ok(DocumentBenchReport {
        document_mb: mb,
        extension: spec.extension.clone(),
        open_ms,
        first_code_action_ms,
        code_action_after_edit_p50_ms: after_edit.get(after_edit.len() / 2).copied().unwrap_or(0.0),
        code_action_after_edit_max_ms: after_edit.last().copied().unwrap_or(0.0),
        edits: spec.edits,
        close_ms,
        rss_before_open_mb: rss_before_open,
        rss_after_open_mb: rss_after_open,
        rss_after_edits_mb: rss_after_edits,
        rss_after_close_mb: rss_after_close,
        peak_rss_mb: peak,
        peak_over_text: peak.zip(rss_before_open).map(|(p, b)| (p - b) / mb),
        server_said,
    })
}

//! `distdebug bench lsp`: the language server under load, as a separate process over pipes.
//! A synthetic workspace (default 500 files, ~37 MB) and an attempt with 5,000 predicted
//! blocks; measured: the time to publish every diagnostic after `distdebug.showAttempt`, the
//! latency of `textDocument/codeLens` and `textDocument/hover` (p50, p99, max) and the
//! server's memory (resident and peak, from /proc).

use super::harness::{file_uri, full_capabilities, is_notification, TestClient};
use crate::attempt::layout::{attempt_dir, DIAGNOSIS, TRAJECTORY};
use crate::incident::prepare::{WorkspaceInfo, META_DIR};
use crate::util::fs::write_json_atomic;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct LspBenchSpec {
    pub files: usize,
    pub blocks_per_file: usize,
    /// Total size of the generated source files.
    pub workspace_bytes: usize,
    /// Documents opened in the editor before the measures (held as ropes by the server).
    pub open_files: usize,
    /// Code lens requests, and as many hovers.
    pub requests: usize,
    /// Times the attempt is shown (and cleared in between).
    pub rounds: usize,
}

impl Default for LspBenchSpec {
    fn default() -> LspBenchSpec {
        LspBenchSpec {
            files: 500,
            blocks_per_file: 10,
            workspace_bytes: 37 * 1024 * 1024,
            open_files: 50,
            requests: 2000,
            rounds: 5,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub count: usize,
}

impl Latency {
    fn of(mut samples: Vec<Duration>) -> Latency {
        samples.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let at = |q: f64| {
            let i = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1;
            ms(samples[i])
        };
        Latency {
            p50_ms: at(0.50),
            p99_ms: at(0.99),
            max_ms: samples.last().map(|d| ms(*d)).unwrap_or(0.0),
            count: samples.len(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct LspBenchReport {
    pub files: usize,
    pub blocks: usize,
    pub workspace_mb: f64,
    pub open_files: usize,
    pub initialize_ms: f64,
    /// From sending `distdebug.showAttempt` to the last file's diagnostics (the attempt read
    /// from disk, the view built, every file published and received), the first time (files
    /// read for their line counts too) ...
    pub publish_all_first_ms: f64,
    /// ... and over every round (the first included).
    pub publish_all: Latency,
    pub diagnostics_received: usize,
    pub code_lens: Latency,
    pub hover: Latency,
    /// The server's CPU time (user + system) per round of publishing, median: what the wall
    /// time would be on an idle machine, minus the client's share.
    pub publish_all_server_cpu_ms: Option<f64>,
    pub server_rss_mb: Option<f64>,
    pub server_peak_rss_mb: Option<f64>,
    /// The 1-minute load average before the measures (the machine may be shared).
    pub load_before: Option<f64>,
}

const INCIDENT: &str = "bench-incident";
const CONFIG: &str = "bench";

/// Starts `server lsp` as a child (killed when the handle drops), with a client on its pipes
/// and its pid for memory readings.
pub(super) fn start_server(
    server: &Path,
) -> Result<(tokio::process::Child, u32, TestClient), String> {
    let mut child = tokio::process::Command::new(server)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{}: cannot start: {e}", server.display()))?;
    let pid = child.id().unwrap_or(0);
    let (Some(out), Some(inp)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("the server's pipes are missing".into());
    };
    Ok((child, pid, TestClient::over(out, inp)))
}

fn rel_of(i: usize) -> String {
    format!("src/module_{:02}/Component{i:03}.java", i % 25)
}

const LINE: &str = "        this.leaseTable.renew(clientId, now + ttlMillis); // keep é\n";

fn lines_per_file(spec: &LspBenchSpec) -> usize {
    (spec.workspace_bytes / spec.files.max(1) / LINE.len()).max(spec.blocks_per_file * 4)
}

/// The first line of block `b` of every file.
fn block_start(spec: &LspBenchSpec, b: usize) -> usize {
    1 + b * (lines_per_file(spec) / spec.blocks_per_file.max(1))
}

/// Writes the workspace and the attempt; returns (workspace, results root, total bytes).
fn generate(root: &Path, spec: &LspBenchSpec) -> Result<(PathBuf, PathBuf, usize), String> {
    let ws = root.join("ws");
    let results = root.join("results");
    let io = |e: std::io::Error| e.to_string();
    std::fs::create_dir_all(ws.join(META_DIR).join("evidence")).map_err(io)?;
    std::fs::write(ws.join(META_DIR).join("report.md"), "# Synthetic report\n").map_err(io)?;
    let log: String = (1..=200)
        .map(|i| {
            format!(
                "2026-01-01 00:00:{:02} WARN component {i} lost its lease\n",
                i % 60
            )
        })
        .collect();
    std::fs::write(ws.join(META_DIR).join("evidence/server.log"), log).map_err(io)?;
    write_json_atomic(
        &ws.join(META_DIR).join("workspace.json"),
        &WorkspaceInfo {
            incident: INCIDENT.into(),
            system: "Bench".into(),
            language: "java".into(),
            report: format!("{META_DIR}/report.md"),
            evidence: vec![format!("{META_DIR}/evidence/server.log")],
            prepared_at: String::new(),
            distdebug_version: env!("CARGO_PKG_VERSION").into(),
        },
    )
    .map_err(io)?;
    let lines_per_file = lines_per_file(spec);
    let mut total = 0;
    let mut blocks = Vec::new();
    for i in 0..spec.files {
        let rel = rel_of(i);
        let path = ws.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap_or(&ws)).map_err(io)?;
        let text = LINE.repeat(lines_per_file);
        total += text.len();
        std::fs::write(&path, text).map_err(io)?;
        for b in 0..spec.blocks_per_file {
            let start = block_start(spec, b);
            blocks.push(json!({
                "path": rel, "start_line": start, "end_line": start + 3,
                "rationale": format!("lease renewal in component {i} may use a stale epoch ({b})"),
                "confidence": 0.5,
                "evidence": {"path": format!("{META_DIR}/evidence/server.log"), "line": 1 + (i % 200)},
            }));
        }
    }
    let dir = attempt_dir(&results.join(CONFIG), INCIDENT, 1);
    std::fs::create_dir_all(&dir).map_err(io)?;
    write_json_atomic(
        &dir.join(DIAGNOSIS),
        &json!({"incident": INCIDENT, "summary": "", "blocks": blocks}),
    )
    .map_err(io)?;
    write_json_atomic(
        &dir.join(TRAJECTORY),
        &json!({"incident": INCIDENT, "attempt": 1, "agent": "bench", "model": null, "started_at": "",
                "finished_at": "", "exit": "submitted", "usage": {},
                "steps": [{"index": 0, "kind": "submit", "text": "5000 blocks"}]}),
    )
    .map_err(io)?;
    Ok((ws, results, total))
}

/// Shows the attempt; waits until every file has its diagnostics. Returns how many arrived.
async fn show_and_wait(
    c: &mut TestClient,
    uris: &[String],
    spec: &LspBenchSpec,
) -> Result<usize, String> {
    let from = c.log.len();
    let shown = c
        .call(
            "workspace/executeCommand",
            json!({"command": "distdebug.showAttempt", "arguments": [{"config": CONFIG, "attempt": 1}]}),
        )
        .await?;
    if shown["blocks"] != spec.files * spec.blocks_per_file {
        return Err(format!("the attempt was not shown as expected: {shown}"));
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut received = 0;
    let mut at = from;
    while seen.len() < uris.len() {
        let (i, m) = c
            .wait_from(at, "every file's diagnostics", |m| {
                is_notification(m, "textDocument/publishDiagnostics")
                    && m["params"]["diagnostics"]
                        .as_array()
                        .is_some_and(|d| !d.is_empty())
            })
            .await?;
        at = i + 1;
        received += m["params"]["diagnostics"]
            .as_array()
            .map(|d| d.len())
            .unwrap_or(0);
        if let Some(u) = m["params"]["uri"].as_str() {
            seen.insert(u.to_string());
        }
    }
    Ok(received)
}

/// Clears the attempt; waits until every file's diagnostics are cleared.
async fn clear_and_wait(c: &mut TestClient, uris: &[String]) -> Result<(), String> {
    let from = c.log.len();
    c.call(
        "workspace/executeCommand",
        json!({"command": "distdebug.clearAttempt", "arguments": [{}]}),
    )
    .await?;
    let mut cleared: HashSet<String> = HashSet::new();
    let mut at = from;
    while cleared.len() < uris.len() {
        let (i, m) = c
            .wait_from(at, "every file cleared", |m| {
                is_notification(m, "textDocument/publishDiagnostics")
                    && m["params"]["diagnostics"]
                        .as_array()
                        .is_some_and(|d| d.is_empty())
            })
            .await?;
        at = i + 1;
        if let Some(u) = m["params"]["uri"].as_str() {
            cleared.insert(u.to_string());
        }
    }
    Ok(())
}

/// User + system CPU time of a process (Linux, `/proc/<pid>/stat`), in seconds.
pub(crate) fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0) // USER_HZ is 100 on Linux
}

/// `VmRSS` and `VmHWM` of a process in MB (Linux only).
pub(crate) fn memory_mb(pid: u32) -> (Option<f64>, Option<f64>) {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return (None, None);
    };
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Runs the benchmark against `server` (the `distdebug` binary), in `root`.
pub async fn run(
    server: &Path,
    root: &Path,
    spec: &LspBenchSpec,
) -> Result<LspBenchReport, String> {
    let (ws, results, total) = generate(root, spec)?;
    let load_before = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().and_then(|x| x.parse().ok()));
    let (mut child, pid, mut c) = start_server(server)?;
    let t = Instant::now();
    c.initialize(
        Some(&ws),
        full_capabilities("utf-16"),
        json!({"results": results}),
    )
    .await?;
    let initialize_ms = t.elapsed().as_secs_f64() * 1000.0;

    let uris: Vec<String> = (0..spec.files)
        .map(|i| file_uri(&ws.join(rel_of(i))).ok_or("cannot make a file URI"))
        .collect::<Result<_, _>>()?;
    for (i, u) in uris.iter().enumerate().take(spec.open_files) {
        let text = std::fs::read_to_string(ws.join(rel_of(i))).map_err(|e| e.to_string())?;
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "java", "version": 1, "text": text}}),
        )
        .await?;
    }

    // Show the attempt (read from disk, published to every file), clear it, and again.
    let mut publish_times = Vec::new();
    let mut publish_cpu = Vec::new();
    let mut received = 0;
    for round in 0..spec.rounds.max(1) {
        let (t, cpu) = (Instant::now(), cpu_seconds(pid));
        received = show_and_wait(&mut c, &uris, spec).await?;
        publish_times.push(t.elapsed());
        if let (Some(a), Some(b)) = (cpu, cpu_seconds(pid)) {
            publish_cpu.push((b - a) * 1000.0);
        }
        c.log.clear(); // counted; keep the client's memory flat
        if round + 1 < spec.rounds {
            clear_and_wait(&mut c, &uris).await?;
            c.log.clear();
        }
    }

    let mut lens_times = Vec::with_capacity(spec.requests);
    let mut hover_times = Vec::with_capacity(spec.requests);
    for i in 0..spec.requests {
        let u = &uris[(i * 7919) % uris.len()];
        let t = Instant::now();
        let lenses = c
            .call("textDocument/codeLens", json!({"textDocument": {"uri": u}}))
            .await?;
        lens_times.push(t.elapsed());
        if lenses.as_array().map(|l| l.len()) != Some(spec.blocks_per_file) {
            return Err(format!("unexpected lenses for {u}: {lenses}"));
        }
        // Inside a block (0-based line of its second line), as a user hovering a diagnostic.
        let line = block_start(spec, i % spec.blocks_per_file.max(1));
        let t = Instant::now();
        let hover: Value = c
            .call(
                "textDocument/hover",
                json!({"textDocument": {"uri": u}, "position": {"line": line, "character": 4}}),
            )
            .await?;
        hover_times.push(t.elapsed());
        if hover.is_null() {
            return Err(format!("no hover inside a block of {u} at line {line}"));
        }
    }
    let (rss, peak) = memory_mb(pid);
    c.shutdown().await?;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    Ok(LspBenchReport {
        files: spec.files,
        blocks: spec.files * spec.blocks_per_file,
        workspace_mb: total as f64 / (1024.0 * 1024.0),
        open_files: spec.open_files,
        initialize_ms,
        publish_all_first_ms: publish_times[0].as_secs_f64() * 1000.0,
        publish_all: Latency::of(publish_times),
        diagnostics_received: received,
        code_lens: Latency::of(lens_times),
        hover: Latency::of(hover_times),
        publish_all_server_cpu_ms: {
            publish_cpu.sort_by(|a, b| a.total_cmp(b));
            publish_cpu.get(publish_cpu.len() / 2).copied()
        },
        server_rss_mb: rss,
        server_peak_rss_mb: peak,
        load_before,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_right_samples() {
        let l = Latency::of((1..=100).map(Duration::from_millis).collect());
        assert_eq!((l.p50_ms, l.p99_ms, l.max_ms), (50.0, 99.0, 100.0));
        let one = Latency::of(vec![Duration::from_millis(3)]);
        assert_eq!((one.p50_ms, one.p99_ms), (3.0, 3.0));
    }
}

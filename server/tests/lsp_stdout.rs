//! `distdebug lsp` as a process: over a whole session (handshake, a run of the offline agent,
//! requests, shutdown) its stdout holds JSON-RPC frames and nothing else, and its logs go to
//! stderr.

use distdebug::incident::prepare::{prepare_workspace, PrepareOptions};
use distdebug::incident::Incident;
use distdebug::lsp::harness::{full_capabilities, is_notification, TestClient};
use serde_json::{json, Value};
use std::path::Path;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

/// Passes bytes through and keeps a copy of all of them.
struct Recording<R> {
    inner: R,
    copy: Arc<Mutex<Vec<u8>>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Recording<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let new = buf.filled()[before..].to_vec();
        self.copy.lock().unwrap().extend_from_slice(&new);
        r
    }
}

/// Splits `bytes` into frames; fails on anything that is not a well-formed JSON-RPC frame.
fn frames(mut bytes: &[u8]) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let head_end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| {
                format!(
                    "bytes outside a frame: {:?}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(80)])
                )
            })?;
        let head = std::str::from_utf8(&bytes[..head_end]).map_err(|e| e.to_string())?;
        let mut length = None;
        for line in head.split("\r\n") {
            let (k, v) = line
                .split_once(':')
                .ok_or_else(|| format!("not a header: {line:?}"))?;
            match k.to_ascii_lowercase().as_str() {
                "content-length" => {
                    length = Some(v.trim().parse::<usize>().map_err(|e| e.to_string())?)
                }
                "content-type" => {}
                other => return Err(format!("unexpected header {other:?}")),
            }
        }
        let length = length.ok_or("a frame without Content-Length")?;
        let body = &bytes[head_end + 4..];
        if body.len() < length {
            return Err("a truncated frame".into());
        }
        let v: Value = serde_json::from_slice(&body[..length])
            .map_err(|e| format!("a body that is not JSON: {e}"))?;
        if v["jsonrpc"] != "2.0" {
            return Err(format!("not JSON-RPC 2.0: {v}"));
        }
        out.push(v);
        bytes = &body[length..];
    }
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdout_carries_nothing_but_json_rpc() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/incidents/tiny-lease");
    prepare_workspace(
        &Incident::load(&fixture).unwrap(),
        &ws,
        &PrepareOptions {
            force: true,
            offline: true,
        },
    )
    .unwrap();

    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(["lsp", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let copy = Arc::new(Mutex::new(Vec::new()));
    let stdout = Recording {
        inner: child.stdout.take().unwrap(),
        copy: copy.clone(),
    };
    let mut stderr = child.stderr.take().unwrap();
    let stderr_text = tokio::spawn(async move {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s).await;
        s
    });
    let mut c = TestClient::over(stdout, child.stdin.take().unwrap());
    c.initialize(Some(&ws), full_capabilities("utf-16"), Value::Null)
        .await
        .unwrap();
    let r = c
        .command("distdebug.runAgent", json!({"agent": "baseline"}))
        .await
        .unwrap();
    let run = r["result"]["run"].as_str().unwrap().to_string();
    c.wait_for("the end of the run", |m| {
        is_notification(m, "window/logMessage")
            && m["params"]["message"] == format!("{run} finished")
    })
    .await
    .unwrap();
    let st = c.call("distdebug/status", Value::Null).await.unwrap();
    assert_eq!(st["attempts"][0]["exit"], "submitted");
    c.call(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": "file:///nowhere.py"}}),
    )
    .await
    .unwrap();
    c.shutdown().await.unwrap();
    let status = child.wait().await.unwrap();
    assert!(status.success(), "{status}");

    let bytes = copy.lock().unwrap().clone();
    let all = frames(&bytes).unwrap();
    assert!(all.len() >= 8, "{} frames", all.len());
    assert!(all.iter().any(|m| m["method"] == "$/progress"));
    let err = stderr_text.await.unwrap();
    assert!(err.contains("distdebug lsp:"), "logs go to stderr: {err:?}");
}

#[test]
fn the_frame_checker_rejects_stray_output() {
    assert!(frames(b"Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}").is_ok());
    assert!(frames(b"hello\nContent-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}").is_err());
    assert!(frames(b"Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}\n").is_err());
}

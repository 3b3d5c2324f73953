//! Shared by the agent tests: the fixture incident, prepared workspaces, and a scripted
//! OpenAI-compatible server on 127.0.0.1 that replays prepared responses.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A scratch folder outside `/tmp` (the sandbox empties `/tmp`, so hiding must be proven
/// elsewhere).
pub fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// Copies the `tiny-lease` fixture to `<root>/incidents/tiny-lease` and prepares its
/// workspace at `<root>/ws`. Returns (incident folder, workspace).
pub fn incident_and_workspace(root: &Path) -> (PathBuf, PathBuf) {
    let inc = root.join("incidents/tiny-lease");
    copy_dir(
        &repo_root().join("tests/fixtures/incidents/tiny-lease"),
        &inc,
    );
    let incident = distdebug::incident::Incident::load(&inc).unwrap();
    let ws = root.join("ws");
    distdebug::incident::prepare::prepare_workspace(
        &incident,
        &ws,
        &distdebug::incident::prepare::PrepareOptions {
            force: true,
            offline: true,
        },
    )
    .unwrap();
    (inc, ws)
}

/// One prepared answer of the scripted server.
#[derive(Debug, Clone)]
pub struct Scripted {
    pub status: u16,
    pub body: String,
    pub delay: Duration,
    pub headers: Vec<(String, String)>,
}

impl Scripted {
    pub fn ok(body: serde_json::Value) -> Scripted {
        Scripted {
            status: 200,
            body: body.to_string(),
            delay: Duration::ZERO,
            headers: Vec::new(),
        }
    }

    pub fn status(status: u16, body: &str) -> Scripted {
        Scripted {
            status,
            body: body.to_string(),
            delay: Duration::ZERO,
            headers: Vec::new(),
        }
    }

    pub fn delayed(mut self, d: Duration) -> Scripted {
        self.delay = d;
        self
    }

    pub fn header(mut self, k: &str, v: &str) -> Scripted {
        self.headers.push((k.into(), v.into()));
        self
    }
}

/// A chat completion whose message calls one tool.
pub fn tool_call(id: &str, name: &str, arguments: &str, prompt: u64, completion: u64) -> Scripted {
    Scripted::ok(serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    }))
}

/// A chat completion with text only.
pub fn text_reply(content: &str, prompt: u64, completion: u64) -> Scripted {
    Scripted::ok(serde_json::json!({
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion}
    }))
}

/// A request the server received: its header block and its JSON body.
#[derive(Debug, Clone)]
pub struct Received {
    pub head: String,
    pub body: serde_json::Value,
}

pub struct Stub {
    pub base_url: String,
    pub received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Stub {
    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the scripted server on 127.0.0.1 (a free port). Each request, on its own
/// connection, takes the next answer; when the script is exhausted it answers 500.
pub async fn start_stub(script: Vec<Scripted>) -> Stub {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let script = Arc::new(Mutex::new(VecDeque::from(script)));
    let received = Arc::new(Mutex::new(Vec::new()));
    let rec = received.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let script = script.clone();
            let rec = rec.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let head_end = loop {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break p + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse().ok())?
                    })
                    .unwrap_or(0);
                while buf.len() < head_end + len {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let body =
                    serde_json::from_slice(&buf[head_end..]).unwrap_or(serde_json::Value::Null);
                rec.lock().unwrap().push(Received { head, body });
                let answer =
                    script.lock().unwrap().pop_front().unwrap_or_else(|| {
                        Scripted::status(500, "{\"error\":\"script exhausted\"}")
                    });
                tokio::time::sleep(answer.delay).await;
                let mut resp = format!(
                    "HTTP/1.1 {} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                    answer.status,
                    answer.body.len()
                );
                for (k, v) in &answer.headers {
                    resp.push_str(&format!("{k}: {v}\r\n"));
                }
                resp.push_str("\r\n");
                resp.push_str(&answer.body);
                let _ = sock.write_all(resp.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Stub {
        base_url: format!("http://{addr}/v1"),
        received,
        task,
    }
}

/// Every file under `dir`, read as text (lossy), for "the key is nowhere" checks.
pub fn all_text_under(dir: &Path) -> String {
    let mut out = String::new();
    for e in walk(dir) {
        out.push_str(&String::from_utf8_lossy(
            &std::fs::read(&e).unwrap_or_default(),
        ));
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                files.extend(walk(&p));
            } else {
                files.push(p);
            }
        }
    }
    files
}

//! A small LSP client for tests and benchmarks: raw JSON in and out over any byte streams (an
//! in-memory duplex to a server in this process, or a child's pipes). It answers the server's
//! requests (progress tokens, code lens refresh, show document) the way an editor does, keeps
//! every message it receives in order, and waits on messages rather than on time: a wait
//! fails only after a generous deadline, to report a hang instead of hanging.

use super::ServerOptions;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Mutex};

type Writer = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

pub struct TestClient {
    writer: Writer,
    incoming: mpsc::UnboundedReceiver<Value>,
    /// Every notification and request the server sent, in arrival order.
    pub log: Vec<Value>,
    responses: HashMap<i64, Value>,
    next_id: i64,
    /// How long a wait may take before it is reported as a hang.
    pub deadline: Duration,
}

/// Writes one framed message.
async fn write_frame(w: &Writer, msg: &Value) -> Result<(), String> {
    let body = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
    let mut w = w.lock().await;
    w.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes())
        .await
        .map_err(|e| format!("cannot write to the server: {e}"))?;
    w.write_all(&body)
        .await
        .map_err(|e| format!("cannot write to the server: {e}"))?;
    w.flush()
        .await
        .map_err(|e| format!("cannot write to the server: {e}"))
}

/// Reads one framed message; `Ok(None)` at the end of the stream.
pub async fn read_frame<R: AsyncRead + Unpin>(
    r: &mut BufReader<R>,
) -> Result<Option<Value>, String> {
    let mut length: Option<usize> = None;
    loop {
        let mut line = String::new();
        let n = r.read_line(&mut line).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(None);
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| format!("not a header line: {line:?}"))?;
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad length {value:?}"))?,
            );
        }
    }
    let length = length.ok_or("a message without Content-Length")?;
    let mut body = vec![0u8; length];
    r.read_exact(&mut body).await.map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("a body that is not JSON: {e}"))
}

/// What an editor answers to a request from the server.
fn answer(method: &str) -> Value {
    match method {
        "window/workDoneProgress/create"
        | "workspace/codeLens/refresh"
        | "client/registerCapability"
        | "client/unregisterCapability" => json!({"result": null}),
        "window/showDocument" => json!({"result": {"success": true}}),
        "workspace/configuration" => json!({"result": []}),
        _ => json!({"error": {"code": -32601, "message": format!("no handler for {method}")}}),
    }
}

impl TestClient {
    /// Starts a server in this process on an in-memory duplex and connects to it.
    pub fn in_process(options: ServerOptions) -> TestClient {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_end);
        tokio::spawn(super::serve(server_read, server_write, options));
        let (read, write) = tokio::io::split(client_end);
        TestClient::over(read, write)
    }

    /// Connects to a server reachable through `read`/`write` (e.g. a child's stdout/stdin).
    pub fn over<R, W>(read: R, write: W) -> TestClient
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let writer: Writer = Arc::new(Mutex::new(Box::new(write)));
        let (tx, rx) = mpsc::unbounded_channel();
        let w = writer.clone();
        tokio::spawn(async move {
            let mut r = BufReader::new(read);
            while let Ok(Some(msg)) = read_frame(&mut r).await {
                // A request from the server: answer it at once, as an editor would.
                if let (Some(id), Some(method)) =
                    (msg.get("id"), msg.get("method").and_then(|m| m.as_str()))
                {
                    let mut reply = answer(method);
                    reply["jsonrpc"] = json!("2.0");
                    reply["id"] = id.clone();
                    if write_frame(&w, &reply).await.is_err() {
                        break;
                    }
                }
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        TestClient {
            writer,
            incoming: rx,
            log: Vec::new(),
            responses: HashMap::new(),
            next_id: 1,
            deadline: Duration::from_secs(60),
        }
    }

    /// Takes one message off the wire into `log` or `responses`; an error when the deadline
    /// passes or the server is gone.
    async fn receive(&mut self, waiting_for: &str) -> Result<(), String> {
        let got = tokio::time::timeout(self.deadline, self.incoming.recv()).await;
        match got {
            Ok(Some(msg)) => {
                let is_response = msg.get("method").is_none();
                match (is_response, msg.get("id").and_then(|i| i.as_i64())) {
                    (true, Some(id)) => {
                        self.responses.insert(id, msg);
                    }
                    _ => self.log.push(msg),
                }
                Ok(())
            }
            Ok(None) => Err(format!(
                "the server closed the connection while waiting for {waiting_for}"
            )),
            Err(_) => Err(format!(
                "no {waiting_for} within {:?}; last messages: {}",
                self.deadline,
                self.log
                    .iter()
                    .rev()
                    .take(5)
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            )),
        }
    }

    /// Writes `bytes` as they are: for tests of what the server does with bad frames.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut w = self.writer.lock().await;
        w.write_all(bytes)
            .await
            .map_err(|e| format!("cannot write to the server: {e}"))?;
        w.flush()
            .await
            .map_err(|e| format!("cannot write to the server: {e}"))
    }

    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        write_frame(
            &self.writer,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        )
        .await
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> Result<i64, String> {
        let id = self.next_id;
        self.next_id += 1;
        write_frame(
            &self.writer,
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .await?;
        Ok(id)
    }

    /// Waits for the response to request `id` (the whole message: `result` or `error`).
    pub async fn response(&mut self, id: i64) -> Result<Value, String> {
        loop {
            if let Some(r) = self.responses.remove(&id) {
                return Ok(r);
            }
            self.receive(&format!("the response to request {id}"))
                .await?;
        }
    }

    /// Sends a request and waits for its whole response.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.send_request(method, params).await?;
        self.response(id).await
    }

    /// Sends a request and returns its result; a JSON-RPC error becomes `Err` with its message.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let r = self.request(method, params).await?;
        match r.get("error") {
            Some(e) => Err(format!("{method} failed: {e}")),
            None => Ok(r.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// `workspace/executeCommand` with one argument object.
    pub async fn command(&mut self, command: &str, arg: Value) -> Result<Value, String> {
        self.request(
            "workspace/executeCommand",
            json!({"command": command, "arguments": [arg]}),
        )
        .await
    }

    /// Waits until a message at index `from` or later in `log` satisfies `pred`; returns its
    /// index and the message.
    pub async fn wait_from(
        &mut self,
        from: usize,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<(usize, Value), String> {
        let mut checked = from;
        loop {
            while checked < self.log.len() {
                if pred(&self.log[checked]) {
                    return Ok((checked, self.log[checked].clone()));
                }
                checked += 1;
            }
            self.receive(what).await?;
        }
    }

    /// Waits until any message received so far or later satisfies `pred`.
    pub async fn wait_for(
        &mut self,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, String> {
        self.wait_from(0, what, pred).await.map(|(_, m)| m)
    }

    /// `initialize` (waiting for its answer, as the framework drops what comes before) and
    /// `initialized`. Returns the initialize result.
    pub async fn initialize(
        &mut self,
        root: Option<&Path>,
        capabilities: Value,
        options: Value,
    ) -> Result<Value, String> {
        let root_uri = root.and_then(file_uri);
        let folders = match &root_uri {
            Some(u) => json!([{"uri": u, "name": "workspace"}]),
            None => Value::Null,
        };
        let result = self
            .call(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": root_uri,
                    "workspaceFolders": folders,
                    "capabilities": capabilities,
                    "initializationOptions": options,
                }),
            )
            .await?;
        self.notify("initialized", json!({})).await?;
        Ok(result)
    }

    /// `shutdown` then `exit`.
    pub async fn shutdown(&mut self) -> Result<(), String> {
        self.call("shutdown", Value::Null).await?;
        self.notify("exit", Value::Null).await
    }
}

/// The `file:` URI of a path, as the server spells it.
pub fn file_uri(path: &Path) -> Option<String> {
    tower_lsp_server::ls_types::Uri::from_file_path(path).map(|u| u.as_str().to_string())
}

/// Capabilities of a client that supports everything the server uses, in `encoding`.
pub fn full_capabilities(encoding: &str) -> Value {
    json!({
        "general": {"positionEncodings": [encoding]},
        "window": {"workDoneProgress": true, "showDocument": {"support": true}},
        "workspace": {
            "codeLens": {"refreshSupport": true},
            "workspaceFolders": true,
            "didChangeWatchedFiles": {"dynamicRegistration": true, "relativePatternSupport": true}
        },
        "textDocument": {
            "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "refactor"]}}},
            "publishDiagnostics": {"relatedInformation": true, "versionSupport": true},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "codeLens": {},
            "synchronization": {"didSave": true}
        }
    })
}

/// Is `m` a notification with this method?
pub fn is_notification(m: &Value, method: &str) -> bool {
    m.get("method").and_then(|x| x.as_str()) == Some(method) && m.get("id").is_none()
}

/// Is `m` a `publishDiagnostics` for `uri`?
pub fn is_diagnostics_for(m: &Value, uri: &str) -> bool {
    is_notification(m, "textDocument/publishDiagnostics")
        && m["params"]["uri"].as_str() == Some(uri)
}

/// The diagnostic codes of a `publishDiagnostics` message, in order.
pub fn codes(m: &Value) -> Vec<String> {
    m["params"]["diagnostics"]
        .as_array()
        .map(|ds| {
            ds.iter()
                .filter_map(|d| d["code"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

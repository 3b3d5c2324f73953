//! `distdebug lsp` as a process survives every bad frame a client can send: each is answered
//! with the JSON-RPC error the spec gives (id null where none can be read) and logged on
//! stderr, and the same session then works normally: an attempt of the offline agent is run
//! and scored.

use distdebug::incident::prepare::{prepare_workspace, PrepareOptions};
use distdebug::incident::Incident;
use distdebug::lsp::harness::{full_capabilities, is_notification, TestClient};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/incidents/tiny-lease")
        .canonicalize()
        .unwrap()
}

fn spawn_server() -> (Child, ChildStdout, ChildStdin) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let inp = child.stdin.take().unwrap();
    (child, out, inp)
}

fn framed(body: &[u8]) -> Vec<u8> {
    let mut v = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    v.extend_from_slice(body);
    v
}

/// Every bad frame of the bug report, with the error code each must get.
fn bad_frames() -> Vec<(Vec<u8>, i64)> {
    let req = br#"{"jsonrpc":"2.0","method":"distdebug/none"}"#;
    let mut short = format!("Content-Length: {}\r\n\r\n", req.len() - 6).into_bytes();
    short.extend_from_slice(req);
    let mut v: Vec<(Vec<u8>, i64)> = vec![
        (framed(br#"{"jsonrpc":"2.0","#), -32700),
        (
            framed(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}"),
            -32700,
        ),
        (framed(b"42"), -32600),
        (framed(b"[]"), -32600),
        (framed(b"null"), -32600),
        (framed(br#"{"foo":1}"#), -32600),
        (
            framed(br#"{"jsonrpc":"1.0","method":"initialized"}"#),
            -32600,
        ),
        (
            framed(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"shutdown"}"#),
            -32600,
        ),
        (
            framed(br#"{"jsonrpc":"2.0","id":2.5,"method":"shutdown"}"#),
            -32600,
        ),
        (framed(br#"{"jsonrpc":"2.0","method":17}"#), -32600),
        (
            framed(br#"[{"jsonrpc":"2.0","id":3,"method":"shutdown"}]"#),
            -32600,
        ),
        (b"Content-Lenght: 2\r\n\r\n{}".to_vec(), -32700),
        (b"Content-Length: two\r\n\r\n{}".to_vec(), -32700),
        (b"Content-Length: -2\r\n\r\n{}".to_vec(), -32700),
        (
            b"Content-Length: 184467440737095516160\r\n\r\n{}".to_vec(),
            -32700,
        ),
    ];
    v.push((short, -32700));
    v
}

/// Sends one bad frame and waits for its error answer (id null: none of them has a
/// readable id).
async fn send_bad(c: &mut TestClient, bytes: &[u8], code: i64) {
    let from = c.log.len();
    c.send_raw(bytes).await.unwrap();
    let what = format!("the error for {:?}", bytes.escape_ascii().to_string());
    let (_, m) = c
        .wait_from(from, &what, |m| {
            m.get("error").is_some() && m["id"].is_null()
        })
        .await
        .unwrap();
    assert_eq!(m["error"]["code"], code, "{what}: {m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_frame_is_answered_and_the_session_then_runs_and_scores_an_attempt() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    prepare_workspace(
        &Incident::load(&fixture()).unwrap(),
        &ws,
        &PrepareOptions {
            force: true,
            offline: true,
        },
    )
    .unwrap();
    let (mut child, out, inp) = spawn_server();
    let mut stderr = child.stderr.take().unwrap();
    let stderr_text = tokio::spawn(async move {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s).await;
        s
    });
    let mut c = TestClient::over(out, inp);

    // Before initialize, then again in the middle of the session.
    for (bytes, code) in bad_frames() {
        send_bad(&mut c, &bytes, code).await;
    }
    let options = json!({"incident": fixture()});
    c.initialize(Some(&ws), full_capabilities("utf-16"), options)
        .await
        .unwrap();
    for (bytes, code) in bad_frames() {
        send_bad(&mut c, &bytes, code).await;
    }
    // An id that can be read is repeated in the answer.
    let r = {
        let from = c.log.len();
        c.send_raw(&framed(
            br#"{"jsonrpc":"1.0","id":"bad-1","method":"shutdown"}"#,
        ))
        .await
        .unwrap();
        c.wait_from(from, "the answer to bad-1", |m| m["id"] == "bad-1")
            .await
            .unwrap()
            .1
    };
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // A body announced too long: given up when no more bytes come, not merged with the next.
    let mut long = b"Content-Length: 60\r\n\r\n".to_vec();
    long.extend_from_slice(br#"{"jsonrpc":"2.0","method":"initialized"}"#);
    send_bad(&mut c, &long, -32700).await;
    // A request nobody handles gets MethodNotFound, `$/` ones too.
    for method in ["$/nothing", "distdebug/nothing"] {
        let r = c.request(method, json!({})).await.unwrap();
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }

    // The session works: open a document, run the offline agent, score its attempt.
    let uri = distdebug::lsp::harness::file_uri(&ws.join("src/lease.py")).unwrap();
    let text = std::fs::read_to_string(ws.join("src/lease.py")).unwrap();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    )
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
    assert_eq!(st["attempts"][0]["exit"], "submitted", "{st}");
    let r = c.command("distdebug.score", json!({})).await.unwrap();
    let s = &r["result"][0];
    assert_eq!(s["schema_valid"], true, "{r}");
    let coverage = s["block_coverage"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&coverage), "{r}");
    let d = c
        .call("distdebug/documentText", json!({"uri": uri}))
        .await
        .unwrap();
    assert_eq!(d["text"].as_str(), Some(text.as_str()));

    c.shutdown().await.unwrap();
    let status = child.wait().await.unwrap();
    assert!(status.success(), "{status}");
    let err = stderr_text.await.unwrap();
    assert!(
        err.contains("bad frame answered with an error")
            && err.contains("invalid request answered with an error")
            && err.contains(r#"it starts "Content-Lenght: 2"#),
        "each bad frame is logged with its first bytes: {err}"
    );
}

#[tokio::test]
async fn exit_without_shutdown_ends_with_status_1_and_after_shutdown_with_0() {
    for (shutdown_first, expected) in [(false, 1), (true, 0)] {
        let (mut child, out, inp) = spawn_server();
        let mut c = TestClient::over(out, inp);
        c.initialize(None, full_capabilities("utf-8"), Value::Null)
            .await
            .unwrap();
        if shutdown_first {
            c.call("shutdown", Value::Null).await.unwrap();
        }
        c.notify("exit", Value::Null).await.unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(
            status.code(),
            Some(expected),
            "shutdown first: {shutdown_first}"
        );
    }
}

#[tokio::test]
async fn the_end_of_input_ends_the_server_and_nothing_else_does() {
    use tokio::io::AsyncWriteExt;
    let (mut child, mut out, mut inp) = spawn_server();
    // Garbage of every sort, a request, then the stream closes: the server answers what it
    // can and leaves only then.
    let mut input =
        b"\x00\x01garbage\r\n\r\nContent-Length: 5\r\n\r\n[1,2]Content-Length: 3\r\n\r\n{}"
            .to_vec();
    input.extend(framed(br#"{"jsonrpc":"2.0","id":"s","method":"shutdown"}"#));
    inp.write_all(&input).await.unwrap();
    drop(inp);
    let mut answers = String::new();
    out.read_to_string(&mut answers).await.unwrap();
    let status = child.wait().await.unwrap();
    assert!(status.code().is_some(), "ended by itself: {status}");
    assert!(answers.contains(r#""code":-32600"#), "the batch: {answers}");
    assert!(
        answers.contains(r#""code":-32700"#),
        "the short body: {answers}"
    );
    assert!(
        answers.contains(r#""code":-32002"#) && answers.contains(r#""id":"s""#),
        "the request after them is answered (not initialized yet): {answers}"
    );
}

//! Commands check their arguments: commands without arguments refuse any, unknown fields and
//! extra arguments are errors, and a command that needs an attempt when none is shown fails
//! with RequestFailed (the request is fine, the session has nothing to act on).

use distdebug::incident::prepare::{prepare_workspace, PrepareOptions};
use distdebug::incident::Incident;
use distdebug::lsp::harness::{full_capabilities, TestClient};
use distdebug::lsp::ServerOptions;
use serde_json::{json, Value};
use std::path::Path;

const INVALID_PARAMS: i64 = -32602;
const REQUEST_FAILED: i64 = -32803;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_checked_to_the_letter() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/incidents/tiny-lease")
        .canonicalize()
        .unwrap();
    // The incident is copied: labeling writes its labels.json.
    let incident = tmp.path().join("tiny-lease");
    let copy = std::process::Command::new("cp")
        .arg("-r")
        .arg(&fixture)
        .arg(&incident)
        .status()
        .unwrap();
    assert!(copy.success());
    prepare_workspace(
        &Incident::load(&incident).unwrap(),
        &ws,
        &PrepareOptions {
            force: true,
            offline: true,
        },
    )
    .unwrap();
    let mut c = TestClient::in_process(ServerOptions::default());
    c.initialize(
        Some(&ws),
        full_capabilities("utf-8"),
        json!({"incident": incident, "results": tmp.path().join("results")}),
    )
    .await
    .unwrap();
    let code = |r: &Value| r["error"]["code"].as_i64();

    for (command, arg) in [
        ("distdebug.clearAttempt", json!({"attempt": 1})),
        ("distdebug.clearAttempt", json!(5)),
        ("distdebug.undoLabel", json!({"steps": 2})),
        (
            "distdebug.showAttempt",
            json!({"attempt": 1, "colour": "red"}),
        ),
        ("distdebug.score", json!({"all": true, "extra": 1})),
    ] {
        let r = c.command(command, arg.clone()).await.unwrap();
        assert_eq!(code(&r), Some(INVALID_PARAMS), "{command} {arg}: {r}");
    }
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "distdebug.clearAttempt", "arguments": [{}, {}]}),
        )
        .await
        .unwrap();
    assert_eq!(code(&r), Some(INVALID_PARAMS), "two arguments: {r}");

    // Without arguments (none, null or {}) they work.
    for arg in [Value::Null, json!({})] {
        let r = c.command("distdebug.clearAttempt", arg).await.unwrap();
        assert!(r.get("error").is_none(), "{r}");
    }
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "distdebug.clearAttempt"}),
        )
        .await
        .unwrap();
    assert!(r.get("error").is_none(), "{r}");

    // Nothing shown: accepting a prediction fails as a request the session cannot serve.
    let r = c
        .command("distdebug.acceptPrediction", json!({"block": 0}))
        .await
        .unwrap();
    assert_eq!(code(&r), Some(REQUEST_FAILED), "{r}");
    c.shutdown().await.unwrap();
}

//! Large documents: above the `maxParseBytes` setting a document is served as text without a
//! code model, and the server says so once; what it kept for a document goes on close.

use distdebug::incident::prepare::{prepare_workspace, PrepareOptions};
use distdebug::incident::Incident;
use distdebug::lsp::harness::{file_uri, full_capabilities, is_notification, TestClient};
use distdebug::lsp::ServerOptions;
use serde_json::{json, Value};
use std::path::Path;

fn is_too_large_note(m: &Value) -> bool {
    is_notification(m, "window/logMessage")
        && m["params"]["message"]
            .as_str()
            .is_some_and(|s| s.contains("above maxParseBytes"))
}

fn too_large_notes(c: &TestClient) -> usize {
    c.log.iter().filter(|m| is_too_large_note(m)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_above_the_limit_is_served_as_text_with_one_message() {
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
    let mut c = TestClient::in_process(ServerOptions::default());
    c.initialize(
        Some(&ws),
        full_capabilities("utf-8"),
        json!({"maxParseBytes": 200}),
    )
    .await
    .unwrap();
    let uri = file_uri(&ws.join("src/lease.py")).unwrap();
    let text = std::fs::read_to_string(ws.join("src/lease.py")).unwrap();
    assert!(text.len() > 200, "the fixture file is above the limit set");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    )
    .await
    .unwrap();
    let action = |line: u32| {
        json!({"textDocument": {"uri": uri}, "context": {"diagnostics": []},
               "range": {"start": {"line": line, "character": 2}, "end": {"line": line, "character": 2}}})
    };
    for line in [3, 5, 7] {
        let r = c
            .call("textDocument/codeAction", action(line))
            .await
            .unwrap();
        let titles: Vec<&str> = r
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a["title"].as_str())
            .collect();
        assert!(!titles.is_empty(), "code actions still offered: {r}");
        // Not snapped: the action names the cursor's own line.
        let one_line = format!("line {}", line + 1);
        assert!(
            titles.iter().any(|t| t.contains(&one_line)),
            "{one_line} in {titles:?}"
        );
    }
    // The note is a notification of its own and may come after the answers.
    c.wait_for("the note", is_too_large_note).await.unwrap();
    c.call("distdebug/status", Value::Null).await.unwrap();
    assert_eq!(too_large_notes(&c), 1, "said once: {:?}", c.log);

    // Closed and opened again: said again (what was kept for it went with the close).
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
    .unwrap();
    assert_eq!(
        c.call("distdebug/documentText", json!({"uri": uri}))
            .await
            .unwrap(),
        Value::Null
    );
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    )
    .await
    .unwrap();
    let reopened = c.log.len();
    c.call("textDocument/codeAction", action(3)).await.unwrap();
    c.wait_from(reopened, "the note after reopening", is_too_large_note)
        .await
        .unwrap();
    c.call("distdebug/status", Value::Null).await.unwrap();
    assert_eq!(too_large_notes(&c), 2);
    c.shutdown().await.unwrap();
}

//! Annotating through the language server, in process, with raw JSON: each code action
//! (its title, what it does to `labels.json` or to the person's own attempt, the diagnostics
//! published again), undo, two servers labeling the same incident at once, snapping in every
//! language, accepting predictions, comparing attempts, agreement, where the agent looked,
//! and a `labels.json` changed on disk. Waits are on messages, never on time.

mod support;

use distdebug::attempt::layout::{DIAGNOSIS, TRAJECTORY};
use distdebug::incident::prepare::{prepare_workspace, PrepareOptions};
use distdebug::incident::Incident;
use distdebug::lsp::harness::{
    codes, file_uri, full_capabilities, is_diagnostics_for, is_notification, TestClient,
};
use distdebug::lsp::ServerOptions;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A copy of the tiny-lease fixture (labels are written, so never the fixture itself), its
/// prepared workspace and a results folder, all in one temp folder.
struct Setup {
    _tmp: tempfile::TempDir,
    incident: PathBuf,
    ws: PathBuf,
    results: PathBuf,
}

fn setup() -> Setup {
    let tmp = support::scratch();
    let incident = tmp.path().join("incidents/tiny-lease");
    support::copy_dir(
        &support::repo_root().join("tests/fixtures/incidents/tiny-lease"),
        &incident,
    );
    let ws = tmp.path().join("ws");
    let inc = Incident::load(&incident).unwrap();
    prepare_workspace(
        &inc,
        &ws,
        &PrepareOptions {
            force: true,
            offline: true,
        },
    )
    .unwrap();
    let results = tmp.path().join("results");
    Setup {
        _tmp: tmp,
        incident,
        ws,
        results,
    }
}

async fn start(s: &Setup, caps: Value, annotator: &str) -> TestClient {
    let mut c = TestClient::in_process(ServerOptions::default());
    c.initialize(
        Some(&s.ws),
        caps,
        json!({"incident": s.incident, "annotator": annotator, "results": s.results}),
    )
    .await
    .unwrap();
    c
}

fn uri(ws: &Path, rel: &str) -> String {
    file_uri(&ws.join(rel)).unwrap()
}

async fn open(c: &mut TestClient, ws: &Path, rel: &str) -> String {
    let u = uri(ws, rel);
    let text = std::fs::read_to_string(ws.join(rel)).unwrap();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": "x", "version": 1, "text": text}}),
    )
    .await
    .unwrap();
    u
}

/// The code actions for a range (0-based line and character).
async fn actions(c: &mut TestClient, u: &str, from: (u32, u32), to: (u32, u32)) -> Vec<Value> {
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u},
                   "range": {"start": {"line": from.0, "character": from.1},
                             "end": {"line": to.0, "character": to.1}},
                   "context": {"diagnostics": []}}),
        )
        .await
        .unwrap();
    r.as_array().cloned().unwrap_or_default()
}

fn titles(actions: &[Value]) -> Vec<String> {
    actions
        .iter()
        .map(|a| a["title"].as_str().unwrap_or("").to_string())
        .collect()
}

fn find<'a>(actions: &'a [Value], title: &str) -> &'a Value {
    actions
        .iter()
        .find(|a| a["title"] == title)
        .unwrap_or_else(|| panic!("no action {title:?} among {:?}", titles(actions)))
}

/// Runs a code action's command; returns the whole response.
async fn run(c: &mut TestClient, action: &Value) -> Value {
    let cmd = &action["command"];
    c.request(
        "workspace/executeCommand",
        json!({"command": cmd["command"], "arguments": cmd["arguments"]}),
    )
    .await
    .unwrap()
}

/// The blocks of `labels.json`: (path, start, end, annotator, note).
fn labels_on_disk(incident: &Path) -> Vec<(String, u64, u64, String, Option<String>)> {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(incident.join("labels.json")).unwrap())
            .unwrap();
    v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["path"].as_str().unwrap().to_string(),
                b["start_line"].as_u64().unwrap(),
                b["end_line"].as_u64().unwrap(),
                b["annotator"].as_str().unwrap_or("").to_string(),
                b["note"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// Waits for the diagnostics of `u` published after log index `from` that satisfy `pred`.
async fn diagnostics_after(
    c: &mut TestClient,
    from: usize,
    u: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    c.wait_from(from, "diagnostics", |m| is_diagnostics_for(m, u) && pred(m))
        .await
        .unwrap()
        .1
}

fn messages(m: &Value) -> Vec<String> {
    m["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap_or("").to_string())
        .collect()
}

/// An attempt written by another program: blocks and, optionally, the steps of its trajectory.
fn external_attempt(results: &Path, config: &str, k: u32, blocks: Value, steps: Value) {
    let dir = results
        .join(config)
        .join("tiny-lease")
        .join(format!("attempt-{k}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(DIAGNOSIS),
        json!({"incident": "tiny-lease", "blocks": blocks}).to_string(),
    )
    .unwrap();
    let t = json!({"incident": "tiny-lease", "attempt": k, "agent": "ext", "model": null, "started_at": "",
                   "finished_at": "", "exit": "submitted", "usage": {}, "steps": steps});
    std::fs::write(dir.join(TRAJECTORY), t.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labeling_through_code_actions_with_undo() {
    let s = setup();
    let mut c = start(&s, full_capabilities("utf-8"), "ann-1").await;
    let lease = open(&mut c, &s.ws, "src/lease.py").await;
    diagnostics_after(&mut c, 0, &lease, |m| codes(m) == ["label"]).await;

    // Lines 13-14 (the `def grant` line and the next) are selected: the block is the method.
    let a = actions(&mut c, &lease, (12, 4), (13, 9)).await;
    assert_eq!(
        titles(&a),
        [
            "Label as causal block (lines 13-18)",
            "Label exact lines 13-14 as causal block",
            "Remove label (lines 13-18, by fixture)",
            "Edit label note (lines 13-18, by fixture)",
            "Add to my diagnosis (lines 13-18)",
            "Add exact lines 13-14 to my diagnosis",
        ]
    );
    assert_eq!(a[0]["kind"], "distdebug.label");
    assert_eq!(a[0]["command"]["command"], "distdebug.addLabel");
    assert_eq!(a[4]["kind"], "distdebug.diagnosis");

    // Label the exact lines: the file gains the block, sorted, with annotator and time.
    let from = c.log.len();
    let r = run(&mut c, find(&a, "Label exact lines 13-14 as causal block")).await;
    assert_eq!(
        r["result"]["summary"], "labeled src/lease.py:13-14 by ann-1",
        "{r}"
    );
    assert_eq!(r["result"]["undo"], 1);
    assert_eq!(
        labels_on_disk(&s.incident),
        [
            ("src/lease.py".into(), 13, 14, "ann-1".into(), None),
            (
                "src/lease.py".into(),
                13,
                18,
                "fixture".into(),
                Some("ttl in seconds multiplied as if milliseconds".into())
            ),
        ]
    );
    let text = std::fs::read_to_string(s.incident.join("labels.json")).unwrap();
    assert!(text.starts_with("{\n  \"blocks\": [\n"), "{text}");
    assert!(text.contains("\"labeled_at\""), "{text}");
    let m = diagnostics_after(&mut c, from, &lease, |m| codes(m).len() == 2).await;
    assert_eq!(codes(&m), ["label", "label"]);
    assert_eq!(m["params"]["version"], 1, "the open document's version");

    // Edit its note: the editor asks for the text; without it the command says so.
    let a = actions(&mut c, &lease, (13, 0), (13, 0)).await;
    let edit = find(&a, "Edit label note (lines 13-14, by ann-1)").clone();
    let r = run(&mut c, &edit).await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("give \"note\""),
        "{r}"
    );
    let mut args = edit["command"]["arguments"][0].clone();
    args["note"] = json!("expiry uses ms");
    let from = c.log.len();
    let r = c.command("distdebug.editLabelNote", args).await.unwrap();
    assert_eq!(
        r["result"]["summary"],
        "noted src/lease.py:13-14 by ann-1: expiry uses ms"
    );
    let m = diagnostics_after(&mut c, from, &lease, |m| {
        messages(m).iter().any(|x| x.contains("expiry uses ms"))
    })
    .await;
    assert!(messages(&m).contains(&"label by ann-1: expiry uses ms".to_string()));

    // Remove the fixture's label from under the cursor.
    let from = c.log.len();
    let r = run(&mut c, find(&a, "Remove label (lines 13-18, by fixture)")).await;
    assert!(r["result"]["summary"]
        .as_str()
        .unwrap()
        .starts_with("removed the label"));
    assert_eq!(labels_on_disk(&s.incident).len(), 1);
    diagnostics_after(&mut c, from, &lease, |m| codes(m) == ["label"]).await;

    // Undo, three times: the label comes back, the note goes, the new label goes.
    let from = c.log.len();
    let r = c.command("distdebug.undoLabel", json!({})).await.unwrap();
    assert!(
        r["result"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("undid: restored the label src/lease.py:13-18 by fixture"),
        "{r}"
    );
    diagnostics_after(&mut c, from, &lease, |m| codes(m).len() == 2).await;
    c.command("distdebug.undoLabel", json!({})).await.unwrap();
    assert_eq!(labels_on_disk(&s.incident)[0].4, None, "the note is undone");
    let from = c.log.len();
    c.command("distdebug.undoLabel", json!({})).await.unwrap();
    assert_eq!(
        labels_on_disk(&s.incident),
        [(
            "src/lease.py".into(),
            13,
            18,
            "fixture".into(),
            Some("ttl in seconds multiplied as if milliseconds".into())
        )]
    );
    diagnostics_after(&mut c, from, &lease, |m| codes(m) == ["label"]).await;
    let r = c.command("distdebug.undoLabel", json!({})).await.unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nothing to undo"),
        "{r}"
    );

    // Commands check their arguments.
    let r = c
        .command(
            "distdebug.addLabel",
            json!({"path": "../x.py", "start_line": 1, "end_line": 1}),
        )
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Nothing under .git/ is code that can be labeled.
    let r = c
        .command(
            "distdebug.addLabel",
            json!({"path": ".git/config", "start_line": 1, "end_line": 1}),
        )
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains(".git/"),
        "{r}"
    );
    // A configuration name may not leave the results folder.
    let r = c
        .command(
            "distdebug.score",
            json!({"config": "../outside", "attempt": 1}),
        )
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c
        .command(
            "distdebug.addLabel",
            json!({"uri": lease, "start_line": 5, "end_line": 2}),
        )
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // `snap` snaps on the server: line 15 alone is a statement of its own.
    let r = c
        .command(
            "distdebug.addLabel",
            json!({"uri": lease, "start_line": 13, "end_line": 13, "snap": true, "note": "n"}),
        )
        .await
        .unwrap();
    assert_eq!(
        r["result"]["summary"], "labeled src/lease.py:13-18 by ann-1",
        "{r}"
    );
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_without_code_action_literals_get_commands_and_no_labels_without_the_setting() {
    let s = setup();
    // No `incident` setting: diagnosing only, label actions are not offered.
    let mut c = TestClient::in_process(ServerOptions::default());
    c.initialize(Some(&s.ws), json!({}), json!({"annotator": "bo"}))
        .await
        .unwrap();
    let lease = open(&mut c, &s.ws, "src/lease.py").await;
    let a = actions(&mut c, &lease, (14, 0), (14, 0)).await;
    assert_eq!(titles(&a), ["Add to my diagnosis (line 15)"]);
    assert_eq!(
        a[0]["command"], "distdebug.addToDiagnosis",
        "a bare command: {}",
        a[0]
    );
    let r = c
        .command(
            "distdebug.addLabel",
            json!({"uri": lease, "start_line": 1, "end_line": 1}),
        )
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("set the \"incident\" setting"),
        "{r}"
    );
    // A client that cannot watch files is not asked to.
    assert!(!c
        .log
        .iter()
        .any(|m| m["method"] == "client/registerCapability"));
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_predictions_and_building_my_own_diagnosis() {
    let s = setup();
    external_attempt(
        &s.results,
        "ext",
        1,
        json!([{"path": "src/lease.py", "start_line": 15, "end_line": 15, "rationale": "ttl times 1000"},
               {"path": "src/server.py", "start_line": 1, "end_line": 2, "rationale": "imports"}]),
        json!([{"index": 0, "kind": "submit"}]),
    );
    let mut c = start(&s, full_capabilities("utf-16"), "Ann Lee").await;
    let lease = open(&mut c, &s.ws, "src/lease.py").await;
    c.command(
        "distdebug.showAttempt",
        json!({"config": "ext", "attempt": 1}),
    )
    .await
    .unwrap();

    // On the predicted block: accept it as a label; its rationale becomes the note.
    let a = actions(&mut c, &lease, (14, 10), (14, 10)).await;
    let accept = find(&a, "Accept predicted block as label (line 15, ext #1)");
    assert_eq!(
        accept["command"]["arguments"][0],
        json!({"config": "ext", "attempt": 1, "block": 0})
    );
    let from = c.log.len();
    let r = run(&mut c, accept).await;
    assert_eq!(
        r["result"]["summary"], "labeled src/lease.py:15-15 by Ann Lee",
        "{r}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(s.incident.join("labels.json")).unwrap())
            .unwrap();
    let b = &v["blocks"][1];
    assert_eq!(
        (b["start_line"].as_u64(), b["note"].as_str()),
        (Some(15), Some("ttl times 1000"))
    );
    assert_eq!(
        b["accepted_from"],
        json!({"config": "ext", "attempt": 1, "agent": "ext"})
    );
    let m = diagnostics_after(&mut c, from, &lease, |m| codes(m).len() == 3).await;
    assert_eq!(codes(&m), ["predicted", "label", "label"]);

    // My own diagnosis: add the snapped block; it becomes the current attempt.
    let a = actions(&mut c, &lease, (13, 0), (14, 3)).await;
    let add = find(&a, "Add to my diagnosis (lines 14-15)");
    let from = c.log.len();
    let r = run(&mut c, add).await;
    assert_eq!(r["result"]["config"], "human-ann-lee", "{r}");
    let dir = s.results.join("human-ann-lee/tiny-lease/attempt-1");
    let d: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(DIAGNOSIS)).unwrap()).unwrap();
    assert_eq!(d["blocks"][0]["start_line"], 14);
    let t: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(TRAJECTORY)).unwrap()).unwrap();
    assert_eq!(t["agent"], "human");
    let m = diagnostics_after(&mut c, from, &lease, |m| {
        codes(m).first().map(String::as_str) == Some("predicted") && codes(m).len() == 3
    })
    .await;
    assert!(messages(&m)[0].contains("predicted causal block"), "{m}");
    let st = c.call("distdebug/status", Value::Null).await.unwrap();
    assert_eq!(
        st["current"],
        json!({"config": "human-ann-lee", "attempt": 1})
    );
    assert_eq!(st["human"]["blocks"], 1);

    // Scored with the same rules as any agent: lines 14-15 reach the label 13-18.
    let r = c
        .command(
            "distdebug.score",
            json!({"config": "human-ann-lee", "attempt": 1}),
        )
        .await
        .unwrap();
    assert_eq!(r["result"][0]["block_coverage"], 1.0, "{r}");
    assert_eq!(r["result"][0]["schema_valid"], true);

    // And removed again from under the cursor.
    let a = actions(&mut c, &lease, (14, 0), (14, 0)).await;
    let from = c.log.len();
    let r = run(&mut c, find(&a, "Remove from my diagnosis (lines 14-15)")).await;
    assert_eq!(r["result"]["blocks"], 0, "{r}");
    diagnostics_after(&mut c, from, &lease, |m| {
        !codes(m).contains(&"predicted".to_string()) && !codes(m).contains(&"hit".to_string())
    })
    .await;
    assert!(
        !dir.join("diagnosis_scores.json").exists(),
        "stale scores are removed"
    );
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_label_the_same_incident_at_once_and_lose_nothing() {
    let s = setup();
    let mut ann = start(&s, full_capabilities("utf-8"), "ann").await;
    let mut bob = start(&s, full_capabilities("utf-16"), "bob").await;
    // Each server asked its client to watch labels.json.
    let reg = ann
        .wait_for("the watcher registration", |m| {
            m["method"] == "client/registerCapability"
        })
        .await
        .unwrap();
    let w = &reg["params"]["registrations"][0];
    assert_eq!(w["method"], "workspace/didChangeWatchedFiles");
    assert_eq!(
        w["registerOptions"]["watchers"][0]["globPattern"]["pattern"],
        "labels.json"
    );

    // Twenty labels each, sent without waiting, interleaved between the two servers.
    let mut pending = Vec::new();
    for i in 1..=20u32 {
        for (c, file) in [(&mut ann, "src/lease.py"), (&mut bob, "src/server.py")] {
            let id = c
                .send_request(
                    "workspace/executeCommand",
                    json!({"command": "distdebug.addLabel",
                           "arguments": [{"path": file, "start_line": i, "end_line": i}]}),
                )
                .await
                .unwrap();
            pending.push((file, id));
        }
    }
    for (file, id) in pending {
        let c = if file == "src/lease.py" {
            &mut ann
        } else {
            &mut bob
        };
        let r = c.response(id).await.unwrap();
        assert!(r["result"]["changed"] == true, "{r}");
    }
    let on_disk = labels_on_disk(&s.incident);
    assert_eq!(on_disk.len(), 41, "the fixture's label and 40 new ones");
    for (file, who) in [("src/lease.py", "ann"), ("src/server.py", "bob")] {
        let lines: Vec<u64> = on_disk
            .iter()
            .filter(|b| b.0 == file && b.3 == who)
            .map(|b| b.1)
            .collect();
        assert_eq!(lines, (1..=20).collect::<Vec<u64>>(), "{who}");
    }
    assert!(!s.incident.join("labels.json.lock").exists());

    // Every write shows the file as merged, so both servers already show each other's
    // labels written before their own last write. ann labels once more; bob's server hears
    // from its client that the file changed, reloads and shows it.
    ann.command(
        "distdebug.addLabel",
        json!({"path": "src/lease.py", "start_line": 22, "end_line": 22}),
    )
    .await
    .unwrap();
    let lease = uri(&s.ws, "src/lease.py");
    let from = bob.log.len();
    bob.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&s.incident.join("labels.json")).unwrap(), "type": 2}]}),
    )
    .await
    .unwrap();
    let m = diagnostics_after(&mut bob, from, &lease, |m| codes(m).len() == 22).await;
    assert!(codes(&m).iter().all(|c| c == "label"));
    // bob's undo takes back only bob's last label.
    bob.command("distdebug.undoLabel", json!({})).await.unwrap();
    let after = labels_on_disk(&s.incident);
    assert_eq!(after.len(), 41);
    assert!(!after.iter().any(|b| b.0 == "src/server.py" && b.1 == 20));
    assert!(after.iter().any(|b| b.0 == "src/lease.py" && b.1 == 22));
    ann.shutdown().await.unwrap();
    bob.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_labels_file_changed_on_disk_is_reloaded_and_a_broken_one_is_not() {
    let s = setup();
    let mut c = start(&s, full_capabilities("utf-8"), "ann").await;
    let server = uri(&s.ws, "src/server.py");
    let changed = json!({"changes": [{"uri": file_uri(&s.incident.join("labels.json")).unwrap(), "type": 2}]});
    std::fs::write(
        s.incident.join("labels.json"),
        r#"{"blocks": [{"path": "src/server.py", "start_line": 3, "end_line": 4, "annotator": "ext", "note": "from git"}]}"#,
    )
    .unwrap();
    let from = c.log.len();
    c.notify("workspace/didChangeWatchedFiles", changed.clone())
        .await
        .unwrap();
    let m = diagnostics_after(&mut c, from, &server, |m| codes(m) == ["label"]).await;
    assert_eq!(messages(&m), ["label by ext: from git"]);
    // A half-written file: a warning, and the labels shown stay.
    std::fs::write(s.incident.join("labels.json"), "{\"blocks\": [").unwrap();
    let from = c.log.len();
    c.notify("workspace/didChangeWatchedFiles", changed)
        .await
        .unwrap();
    c.wait_from(from, "the warning", |m| {
        is_notification(m, "window/showMessage")
            && m["params"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("cannot be read")
    })
    .await
    .unwrap();
    let st = c.call("distdebug/status", Value::Null).await.unwrap();
    assert_eq!(st["labels"]["count"], 1);
    // And nothing is written over it.
    let r = c
        .command(
            "distdebug.addLabel",
            json!({"path": "src/server.py", "start_line": 1, "end_line": 1}),
        )
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("labels.json"),
        "{r}"
    );
    assert_eq!(
        std::fs::read_to_string(s.incident.join("labels.json")).unwrap(),
        "{\"blocks\": ["
    );
    c.shutdown().await.unwrap();
}

/// One file per language: selecting the line before an `if` and the `if` line snaps to the
/// two statements (through the end of the `if`); the cursor on the `if` line snaps to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapping_in_each_language() {
    let s = setup();
    // (file, text, the statement's line, its snap with the if, the if's snap)
    type Case = (&'static str, &'static str, u32, (u32, u32), (u32, u32));
    let files: [Case; 6] = [
        (
            "src/A.java",
            "class A {\n  int f(int x) {\n    int y = x + 1;\n    if (y > 2) {\n      g(y);\n    }\n    return y;\n  }\n}\n",
            3,
            (3, 6),
            (4, 6),
        ),
        (
            "src/a.go",
            "package a\n\nfunc f(x int) int {\n\ty := x + 1\n\tif y > 2 {\n\t\tg(y)\n\t}\n\treturn y\n}\n",
            4,
            (4, 7),
            (5, 7),
        ),
        (
            "src/a.rs",
            "fn f(x: i32) -> i32 {\n    let y = x + 1;\n    if y > 2 {\n        g(y);\n    }\n    y\n}\n",
            2,
            (2, 5),
            (3, 5),
        ),
        (
            "src/b.py",
            "def f(x):\n    y = x + 1\n    if y > 2:\n        g(y)\n    return y\n",
            2,
            (2, 4),
            (3, 4),
        ),
        (
            "src/A.scala",
            "object A {\n  def f(x: Int): Int = {\n    val y = x + 1\n    if (y > 2) {\n      g(y)\n    }\n    y\n  }\n}\n",
            3,
            (3, 6),
            (4, 6),
        ),
        (
            "src/a.cpp",
            "int f(int x) {\n  int y = x + 1;\n  if (y > 2) {\n    g(y);\n  }\n  return y;\n}\n",
            2,
            (2, 5),
            (3, 5),
        ),
    ];
    for (rel, text, _, _, _) in &files {
        std::fs::write(s.ws.join(rel), text).unwrap();
    }
    let mut c = start(&s, full_capabilities("utf-8"), "ann").await;
    for (i, (rel, _, stmt, two, cursor)) in files.iter().enumerate() {
        // Half of the files open in the editor, half read from disk.
        let u = if i % 2 == 0 {
            open(&mut c, &s.ws, rel).await
        } else {
            uri(&s.ws, rel)
        };
        let l = stmt - 1;
        let a = actions(&mut c, &u, (l, 3), (l + 1, 2)).await;
        assert_eq!(
            titles(&a)[0],
            format!("Label as causal block (lines {}-{})", two.0, two.1),
            "{rel}: the statement and the if"
        );
        let a = actions(&mut c, &u, (l + 1, 1), (l + 1, 1)).await;
        assert_eq!(
            titles(&a)[0],
            format!("Label as causal block (lines {}-{})", cursor.0, cursor.1),
            "{rel}: the cursor on the if"
        );
    }
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comparing_my_diagnosis_with_an_agent_block_by_block() {
    let s = setup();
    // The agent names line 15 (in the label 13-18) and server.py 1-2 (no label).
    external_attempt(
        &s.results,
        "ext",
        1,
        json!([{"path": "src/lease.py", "start_line": 15, "end_line": 15, "rationale": "ttl times 1000"},
               {"path": "src/server.py", "start_line": 1, "end_line": 2, "rationale": "imports"}]),
        json!([{"index": 0, "kind": "submit"}]),
    );
    let mut c = start(&s, full_capabilities("utf-8"), "ann").await;
    let lease = uri(&s.ws, "src/lease.py");
    let server = uri(&s.ws, "src/server.py");
    // Without a diagnosis of my own, a comparison by default has nothing to compare.
    let r = c.command("distdebug.compare", json!({})).await.unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no diagnosis of your own"),
        "{r}"
    );
    // Mine: lease 14-16 and lease 20-21.
    for (a, b) in [(14, 16), (20, 21)] {
        c.command(
            "distdebug.addToDiagnosis",
            json!({"path": "src/lease.py", "start_line": a, "end_line": b}),
        )
        .await
        .unwrap();
    }
    c.command(
        "distdebug.showAttempt",
        json!({"config": "ext", "attempt": 1}),
    )
    .await
    .unwrap();
    let from = c.log.len();
    let r = c.command("distdebug.compare", json!({})).await.unwrap();
    let cmp = &r["result"]["comparison"];
    assert_eq!(
        r["result"]["a"],
        json!({"config": "human-ann", "attempt": 1}),
        "{r}"
    );
    assert_eq!(r["result"]["b"], json!({"config": "ext", "attempt": 1}));
    assert_eq!(
        (
            cmp["both"].as_u64(),
            cmp["only_a"].as_u64(),
            cmp["only_b"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    // lines(A) = 3 + 2, lines(B) = 1 + 2, both = 1: Jaccard 1/7.
    assert!(
        (cmp["jaccard"].as_f64().unwrap() - 1.0 / 7.0).abs() < 1e-12,
        "{cmp}"
    );
    assert_eq!(cmp["a"]["scores"]["block_coverage"], 1.0);
    assert_eq!(cmp["b"]["scores"]["block_hit_rate"], 0.5);
    let m = diagnostics_after(&mut c, from, &lease, |m| {
        codes(m).contains(&"both".to_string())
    })
    .await;
    assert_eq!(codes(&m), ["both", "only-a", "label"]);
    assert_eq!(
        messages(&m)[0],
        "both: A human-ann #1 (human) and B ext #1 name these lines · A hits a label, B hits a label"
    );
    assert!(
        messages(&m)[1].starts_with("only A: human-ann #1 (human) names these lines"),
        "{m}"
    );
    // (Diagnostics of showAttempt may still arrive after its answer: wait for the comparison's.)
    let m = diagnostics_after(&mut c, from, &server, |m| codes(m) == ["only-b"]).await;
    assert!(messages(&m)[0].ends_with("B no label"), "{m}");
    let lenses = c
        .call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": lease}}),
        )
        .await
        .unwrap();
    let lens_titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap())
        .collect();
    assert!(
        lens_titles[0].starts_with("◆ compare A human-ann #1 (human): block coverage 100.0%"),
        "{lens_titles:?}"
    );
    assert!(
        lens_titles[0].contains("overlap (Jaccard) 14.3%")
            && lens_titles[0].ends_with("this file: 1 both, 1 only A, 0 only B"),
        "{lens_titles:?}"
    );
    assert_eq!(
        lens_titles[1],
        "◆ both: A human-ann #1 (human) + B ext #1 · A hits a label, B hits a label"
    );
    let st = c.call("distdebug/status", Value::Null).await.unwrap();
    assert_eq!(st["compare"]["b"], json!({"config": "ext", "attempt": 1}));

    // Changing my diagnosis while comparing compares again.
    let from = c.log.len();
    c.command(
        "distdebug.removeFromDiagnosis",
        json!({"path": "src/lease.py", "start_line": 20, "end_line": 21}),
    )
    .await
    .unwrap();
    diagnostics_after(&mut c, from, &lease, |m| codes(m) == ["both", "label"]).await;
    // Showing an attempt ends the comparison.
    let from = c.log.len();
    c.command(
        "distdebug.showAttempt",
        json!({"config": "ext", "attempt": 1}),
    )
    .await
    .unwrap();
    diagnostics_after(&mut c, from, &lease, |m| codes(m) == ["predicted", "label"]).await;
    assert_eq!(
        c.call("distdebug/status", Value::Null).await.unwrap()["compare"],
        Value::Null
    );
    // Sides by "config#k", and bad sides.
    let r = c
        .command("distdebug.compare", json!({"a": "ext#1", "b": "human-ann"}))
        .await
        .unwrap();
    assert_eq!(r["result"]["a"]["config"], "ext", "{r}");
    let r = c
        .command("distdebug.compare", json!({"a": "ext#1", "b": "ext#1"}))
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the same attempt"),
        "{r}"
    );
    let r = c
        .command("distdebug.compare", json!({"a": "nope", "c": 1}))
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agreement_between_annotators_on_request() {
    let s = setup();
    // A: lease 13-18 (the fixture's label, as "A"); B: lease 15-16 and server 1-2.
    std::fs::write(
        s.incident.join("labels.json"),
        json!({"blocks": [
            {"path": "src/lease.py", "start_line": 13, "end_line": 18, "annotator": "A"},
            {"path": "src/lease.py", "start_line": 15, "end_line": 16, "annotator": "B"},
            {"path": "src/server.py", "start_line": 1, "end_line": 2, "annotator": "B"}]})
        .to_string(),
    )
    .unwrap();
    let mut c = start(&s, full_capabilities("utf-8"), "ann").await;
    // No params at all (as VS Code and Neovim send it).
    let r = c.request("distdebug/agreement", Value::Null).await.unwrap();
    let p = &r["result"]["pairs"][0];
    // lease.py has 24 lines, server.py 20: 44 lines. A 6, B 4, both 2: n00 = 36.
    // observed 38/44; chance (6*4 + 38*40)/44^2 = 1544/1936; kappa = 128/392.
    assert_eq!(
        (p["a"].as_str(), p["b"].as_str()),
        (Some("A"), Some("B")),
        "{r}"
    );
    assert_eq!(p["lines"], 44);
    assert!(
        (p["kappa"].as_f64().unwrap() - 128.0 / 392.0).abs() < 1e-12,
        "{p}"
    );
    assert_eq!(
        (p["a_covers_b"].as_f64(), p["b_covers_a"].as_f64()),
        (Some(0.5), Some(1.0))
    );
    let r = c
        .request("distdebug/agreement", json!({"incident": s.incident}))
        .await
        .unwrap();
    assert_eq!(r["result"]["incident"], "tiny-lease");
    let r = c
        .request("distdebug/agreement", json!({"bad": 1}))
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_the_agent_looked_as_lenses_and_hints() {
    let s = setup();
    external_attempt(
        &s.results,
        "ext",
        1,
        json!([{"path": "src/lease.py", "start_line": 15, "end_line": 15}]),
        json!([
            {"index": 0, "kind": "action", "tool": "read", "paths_read": [{"path": "src/lease.py", "start_line": 1, "end_line": 10}]},
            {"index": 1, "kind": "action", "tool": "read", "paths_read": [{"path": "src/lease.py", "start_line": 8, "end_line": 12}]},
            {"index": 2, "kind": "action", "tool": "read", "paths_read": [{"path": "src/lease.py", "start_line": 20, "end_line": 24}]},
            {"index": 3, "kind": "submit"}]),
    );
    let mut c = start(&s, full_capabilities("utf-8"), "ann").await;
    let lease = open(&mut c, &s.ws, "src/lease.py").await;
    c.command(
        "distdebug.showAttempt",
        json!({"config": "ext", "attempt": 1}),
    )
    .await
    .unwrap();
    let lenses = c
        .call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": lease}}),
        )
        .await
        .unwrap();
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.contains(&"◆ agent ext #1 read this file 3x, lines 1-12, 20-24 (first at step 0)"),
        "{titles:?}"
    );
    // Scoring adds the first look: it never read lines 13-18.
    let r = c.command("distdebug.score", json!({})).await.unwrap();
    assert_eq!(
        r["result"][0]["looked"]["first_look_step"],
        Value::Null,
        "{r}"
    );
    let lenses = c
        .call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": lease}}),
        )
        .await
        .unwrap();
    assert!(
        lenses[0]["command"]["title"]
            .as_str()
            .unwrap()
            .contains("never read a labeled line"),
        "{lenses}"
    );
    // As hint diagnostics, when asked for.
    let from = c.log.len();
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"distdebug": {"lookedHints": true}}}),
    )
    .await
    .unwrap();
    let m = diagnostics_after(&mut c, from, &lease, |m| {
        codes(m).contains(&"looked".to_string())
    })
    .await;
    let looked: Vec<&Value> = m["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "looked")
        .collect();
    assert_eq!(looked.len(), 2);
    assert_eq!(looked[0]["severity"], 4);
    assert_eq!(
        looked[0]["message"],
        "agent ext #1 read lines 1-12 (3 reads of this file, first at step 0)"
    );
    assert_eq!(looked[1]["range"]["start"]["line"], 19);
    c.shutdown().await.unwrap();
}

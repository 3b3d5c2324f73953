//! The language server in process, driven with raw JSON over an in-memory duplex: workspace
//! detection, runs with progress and live steps, cancellation, two runs at once, a crashing
//! agent, predictions as diagnostics / lenses / hovers, labels, document sync out of order and
//! UTF-16 positions. Waits are on messages, never on time.

use distdebug::agent::AgentSpec;
use distdebug::attempt::layout::{attempt_dir, DIAGNOSIS, TRAJECTORY, TRAJECTORY_LIVE};
use distdebug::attempt::trajectory::StepListener;
use distdebug::attempt::{
    Diagnosis, DiagnosisBlock, Exit, Step, StepKind, Trajectory, TrajectoryRecorder,
};
use distdebug::incident::prepare::{prepare_workspace, PrepareOptions, WorkspaceInfo};
use distdebug::incident::Incident;
use distdebug::lsp::harness::{
    codes, file_uri, full_capabilities, is_diagnostics_for, is_notification, TestClient,
};
use distdebug::lsp::runner::BoxFuture;
use distdebug::lsp::{
    AgentChoice, AgentPlan, AttemptRequest, AttemptRunner, LibraryRunner, ServerOptions,
};
use distdebug::run::AttemptSummary;
use distdebug::util::fs::write_json_atomic;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

fn fixture_incident() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/incidents/tiny-lease")
        .canonicalize()
        .unwrap()
}

/// A prepared workspace of the tiny-lease fixture in a fresh temp folder: `<tmp>/ws`, with
/// results going to `<tmp>/results`.
fn prepared() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let inc = Incident::load(&fixture_incident()).unwrap();
    prepare_workspace(
        &inc,
        &ws,
        &PrepareOptions {
            force: true,
            offline: true,
        },
    )
    .unwrap();
    (tmp, ws)
}

/// Agents written for the tests, through the public library, named by what they do:
/// - `live`: a candidate block in a step, then (once the gate opens) a final diagnosis;
/// - `gated`: one step, then waits for the gate and submits one block;
/// - `slow`: one step, then works until cancelled;
/// - `crash`: one step, then panics;
/// - anything else: the library's agents.
#[derive(Clone)]
struct TestRunner {
    gate: Arc<Semaphore>,
    /// Every agent choice the server planned, to check what it hides from agents.
    choices: Arc<std::sync::Mutex<Vec<AgentChoice>>>,
}

impl TestRunner {
    fn new() -> TestRunner {
        TestRunner {
            gate: Arc::new(Semaphore::new(0)),
            choices: Arc::default(),
        }
    }
}

fn block(path: &str, s: u32, e: u32, rationale: &str, extra: Value) -> DiagnosisBlock {
    let mut b = DiagnosisBlock::new(path, s, e);
    b.rationale = Some(rationale.to_string());
    b.confidence = Some(0.75);
    if let Value::Object(m) = extra {
        b.extra = m;
    }
    b
}

impl AttemptRunner for TestRunner {
    fn plan(&self, choice: &AgentChoice) -> Result<AgentPlan, String> {
        self.choices.lock().unwrap().push(choice.clone());
        match choice.agent.as_str() {
            "live" | "gated" | "slow" | "crash" => Ok(AgentPlan {
                agent: choice.agent.clone(),
                model: None,
                config: choice.agent.clone(),
                choice: choice.clone(),
            }),
            _ => LibraryRunner.plan(choice),
        }
    }

    fn run(
        &self,
        req: AttemptRequest,
        listener: StepListener,
        cancel: CancellationToken,
    ) -> BoxFuture<Result<AttemptSummary, String>> {
        if !matches!(req.plan.agent.as_str(), "live" | "gated" | "slow" | "crash") {
            return LibraryRunner.run(req, listener, cancel);
        }
        let gate = self.gate.clone();
        Box::pin(async move {
            let info = WorkspaceInfo::load(&req.workspace)?;
            let dir = attempt_dir(&req.config_dir, &info.incident, req.attempt);
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let mut rec = TrajectoryRecorder::create(&dir.join(TRAJECTORY_LIVE))
                .map_err(|e| e.to_string())?;
            rec.set_listener(listener);
            rec.record(Step::new(StepKind::Thought).with_text("reading the report"));
            let mut exit = Exit::Submitted;
            let mut blocks = Vec::new();
            match req.plan.agent.as_str() {
                "live" => {
                    let mut s =
                        Step::new(StepKind::Action).with_tool("grep", json!({"pattern": "ttl"}));
                    s.blocks = Some(vec![block(
                        "src/lease.py",
                        13,
                        18,
                        "candidate: grant computes the expiry",
                        json!({}),
                    )]);
                    rec.record(s);
                    gate.acquire().await.map_err(|e| e.to_string())?.forget();
                    blocks.push(block(
                        "src/lease.py",
                        15,
                        15,
                        "ttl in seconds is multiplied by 1000",
                        json!({"evidence": {"path": ".distdebug/evidence/server.log", "line": 1}}),
                    ));
                    blocks.push(block(
                        "src/server.py",
                        3,
                        4,
                        "the server trusts the lease table",
                        json!({}),
                    ));
                    rec.record(Step::new(StepKind::Submit).with_text("two blocks"));
                }
                "gated" => {
                    gate.acquire().await.map_err(|e| e.to_string())?.forget();
                    blocks.push(block(
                        "src/lease.py",
                        20,
                        24,
                        "expired() compares",
                        json!({}),
                    ));
                    rec.record(Step::new(StepKind::Submit));
                }
                "slow" => {
                    rec.record(Step::new(StepKind::Action).with_text("thinking for a long time"));
                    cancel.cancelled().await;
                    exit = Exit::Cancelled;
                }
                _ => panic!("the test agent fell over"),
            }
            let diagnosis = Diagnosis {
                incident: info.incident.clone(),
                summary: "test".into(),
                blocks,
                extra: Default::default(),
            };
            if exit == Exit::Submitted {
                write_json_atomic(&dir.join(DIAGNOSIS), &diagnosis).map_err(|e| e.to_string())?;
            }
            let t = Trajectory {
                incident: info.incident.clone(),
                attempt: req.attempt,
                agent: req.plan.agent.clone(),
                model: None,
                started_at: String::new(),
                finished_at: String::new(),
                exit,
                usage: Default::default(),
                steps: rec.into_steps(),
                extra: Default::default(),
            };
            write_json_atomic(&dir.join(TRAJECTORY), &t).map_err(|e| e.to_string())?;
            Ok(AttemptSummary {
                incident: info.incident,
                attempt: req.attempt,
                dir,
                exit,
                blocks: diagnosis.blocks.len(),
                error: None,
            })
        })
    }
}

async fn start(
    runner: &TestRunner,
    root: Option<&Path>,
    caps: Value,
    options: Value,
) -> TestClient {
    let mut c = TestClient::in_process(ServerOptions {
        runner: Arc::new(runner.clone()),
    });
    c.initialize(root, caps, options).await.unwrap();
    c
}

async fn status(c: &mut TestClient) -> Value {
    c.call("distdebug/status", Value::Null).await.unwrap()
}

fn progress_kind(m: &Value, token: &str, kind: &str) -> bool {
    is_notification(m, "$/progress")
        && m["params"]["token"] == token
        && m["params"]["value"]["kind"] == kind
}

/// Waits for the `end` of the progress of attempt `k` of `config` in `run`; returns its message.
async fn wait_end(c: &mut TestClient, run: &str, config: &str, k: u32) -> String {
    let token = format!("distdebug/{run}/{config}/{k}");
    let m = c
        .wait_for("the end of the attempt's progress", |m| {
            progress_kind(m, &token, "end")
        })
        .await
        .unwrap();
    m["params"]["value"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn uri(ws: &Path, rel: &str) -> String {
    file_uri(&ws.join(rel)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_folder_gets_a_quiet_server() {
    let tmp = tempfile::tempdir().unwrap();
    let runner = TestRunner::new();
    let mut c = start(
        &runner,
        Some(tmp.path()),
        full_capabilities("utf-8"),
        Value::Null,
    )
    .await;
    let st = status(&mut c).await;
    assert_eq!(st["incident"], Value::Null);
    // Clients send no params, null or {}: all three are answered alike.
    let with_object = c.call("distdebug/status", json!({})).await.unwrap();
    assert_eq!(with_object, st);
    let r = c
        .command("distdebug.runAgent", json!({"agent": "baseline"}))
        .await
        .unwrap();
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.contains("no incident workspace"), "{r}");
    let r = c
        .command("distdebug.showAttempt", json!({"attempt": 1}))
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no incident workspace"),
        "{r}"
    );
    let r = c.command("distdebug.nope", json!({})).await.unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown command"),
        "{r}"
    );
    // The log line arrived: everything sent before it was sent too; no diagnostics among it.
    c.wait_for("the idle log line", |m| {
        is_notification(m, "window/logMessage")
            && m["params"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("idle")
    })
    .await
    .unwrap();
    assert!(!c
        .log
        .iter()
        .any(|m| is_notification(m, "textDocument/publishDiagnostics")));
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_baseline_runs_in_the_background_with_progress_and_steps() {
    let (tmp, ws) = prepared();
    let runner = TestRunner::new();
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    let st = status(&mut c).await;
    assert_eq!(st["incident"]["id"], "tiny-lease");
    assert_eq!(st["positionEncoding"], "utf-8");

    let r = c
        .command(
            "distdebug.runAgent",
            json!({"agent": "baseline", "attempts": 2}),
        )
        .await
        .unwrap();
    assert_eq!(r["result"]["attempts"], json!([1, 2]), "{r}");
    let run = r["result"]["run"].as_str().unwrap().to_string();
    for k in [1, 2] {
        let end = wait_end(&mut c, &run, "baseline", k).await;
        assert!(end.starts_with("submitted"), "{end}");
    }
    // Each token was created before its first $/progress, and began before it ended.
    for k in [1, 2] {
        let token = format!("distdebug/{run}/baseline/{k}");
        let pos = |pred: &dyn Fn(&Value) -> bool| c.log.iter().position(pred).unwrap();
        let created = pos(&|m| {
            m["method"] == "window/workDoneProgress/create"
                && m["params"]["token"] == token.as_str()
        });
        let begin = pos(&|m| progress_kind(m, &token, "begin"));
        let end = pos(&|m| progress_kind(m, &token, "end"));
        assert!(created < begin && begin < end, "{created} {begin} {end}");
    }
    let steps = c
        .log
        .iter()
        .filter(|m| is_notification(m, "distdebug/trajectoryStep"))
        .count();
    assert!(
        steps >= 2,
        "one trajectory step per attempt at least, got {steps}"
    );
    c.wait_for("a code lens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    })
    .await
    .unwrap();
    let st = status(&mut c).await;
    let attempts = st["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    for a in attempts {
        assert_eq!(
            (a["state"].as_str(), a["exit"].as_str()),
            (Some("finished"), Some("submitted")),
            "{a}"
        );
    }
    assert_eq!(st["current"], json!({"config": "baseline", "attempt": 1}));
    let dir = tmp.path().join("results/baseline/tiny-lease/attempt-2");
    assert!(dir.join(TRAJECTORY).is_file() && dir.join(DIAGNOSIS).is_file());
    // Unknown agents and bad arguments are clear errors.
    let r = c
        .command("distdebug.runAgent", json!({"agent": "nobody"}))
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown agent"),
        "{r}"
    );
    let r = c
        .command(
            "distdebug.runAgent",
            json!({"agent": "baseline", "attempts": 0}),
        )
        .await
        .unwrap();
    assert!(
        r["error"]["message"].as_str().unwrap().contains("attempts"),
        "{r}"
    );
    let r = c
        .command(
            "distdebug.runAgent",
            json!({"agent": "baseline", "model": "m"}),
        )
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("takes no model"),
        "{r}"
    );
    let _ = AgentSpec::from_name("baseline").unwrap();
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_candidates_then_final_blocks_as_diagnostics_lenses_and_hovers() {
    let (_tmp, ws) = prepared();
    let runner = TestRunner::new();
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    let lease = uri(&ws, "src/lease.py");
    let server = uri(&ws, "src/server.py");
    let r = c
        .command("distdebug.runAgent", json!({"agent": "live"}))
        .await
        .unwrap();
    let run = r["result"]["run"].as_str().unwrap().to_string();

    // The candidate shows while the agent is still at work.
    let m = c
        .wait_for("the candidate block", |m| {
            is_diagnostics_for(m, &lease) && !codes(m).is_empty()
        })
        .await
        .unwrap();
    let d = &m["params"]["diagnostics"][0];
    assert_eq!(d["source"], "distdebug");
    assert_eq!(d["code"], "predicted");
    assert_eq!(d["message"], "candidate: grant computes the expiry");
    assert_eq!(d["severity"], 3, "Information by default");
    assert_eq!(d["range"]["start"], json!({"line": 12, "character": 0}));
    assert_eq!(status(&mut c).await["attempts"][0]["state"], "running");

    runner.gate.add_permits(1);
    assert_eq!(
        wait_end(&mut c, &run, "live", 1).await,
        "submitted 2 block(s)"
    );
    let (_, m) = c
        .wait_from(0, "the final lease.py block", |m| {
            is_diagnostics_for(m, &lease)
                && m["params"]["diagnostics"][0]["message"]
                    == "ttl in seconds is multiplied by 1000"
        })
        .await
        .unwrap();
    let d = &m["params"]["diagnostics"][0];
    assert_eq!(
        d["range"],
        json!({"start": {"line": 14, "character": 0}, "end": {"line": 15, "character": 0}})
    );
    let related = &d["relatedInformation"][0];
    assert_eq!(
        related["location"]["uri"],
        uri(&ws, ".distdebug/evidence/server.log")
    );
    assert_eq!(related["location"]["range"]["start"]["line"], 0);
    let m = c
        .wait_for("the server.py block", |m| {
            is_diagnostics_for(m, &server) && !codes(m).is_empty()
        })
        .await
        .unwrap();
    assert_eq!(
        m["params"]["diagnostics"][0]["message"],
        "the server trusts the lease table"
    );

    // A lens above each block, with agent, attempt, rank and rationale.
    let lenses = c
        .call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": lease}}),
        )
        .await
        .unwrap();
    let lenses = lenses.as_array().unwrap();
    assert_eq!(lenses.len(), 1, "{lenses:?}");
    let title = lenses[0]["command"]["title"].as_str().unwrap();
    assert!(
        title.starts_with("◆ agent live #1: ttl in seconds is multiplied by 1000"),
        "{title}"
    );
    assert!(
        title.contains("rank 1 of 2") && title.contains("confidence 75%"),
        "{title}"
    );
    assert_eq!(lenses[0]["range"]["start"]["line"], 14);

    // A hover with the rationale, the confidence and the step.
    let h = c
        .call(
            "textDocument/hover",
            json!({"textDocument": {"uri": lease}, "position": {"line": 14, "character": 3}}),
        )
        .await
        .unwrap();
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(
        text.contains("ttl in seconds is multiplied by 1000"),
        "{text}"
    );
    assert!(text.contains("confidence: 75.0%"), "{text}");
    assert!(text.contains("trajectory step 2: submit"), "{text}");
    assert!(
        text.contains("evidence: .distdebug/evidence/server.log:1"),
        "{text}"
    );
    let none = c
        .call(
            "textDocument/hover",
            json!({"textDocument": {"uri": lease}, "position": {"line": 0, "character": 0}}),
        )
        .await
        .unwrap();
    assert_eq!(none, Value::Null);

    // Clearing the attempt clears the diagnostics of every file it touched.
    let from = c.log.len();
    c.command("distdebug.clearAttempt", json!({}))
        .await
        .unwrap();
    for u in [&lease, &server] {
        c.wait_from(from, "cleared diagnostics", |m| {
            is_diagnostics_for(m, u) && codes(m).is_empty()
        })
        .await
        .unwrap();
    }
    let lenses = c
        .call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": lease}}),
        )
        .await
        .unwrap();
    assert_eq!(lenses, json!([]));
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_an_attempt_mid_way() {
    let (_tmp, ws) = prepared();
    let runner = TestRunner::new();
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    let r = c
        .command(
            "distdebug.runAgent",
            json!({"agent": "slow", "attempts": 3}),
        )
        .await
        .unwrap();
    let run = r["result"]["run"].as_str().unwrap().to_string();
    c.wait_for("the slow agent's second step", |m| {
        is_notification(m, "distdebug/trajectoryStep") && m["params"]["step"]["index"] == 1
    })
    .await
    .unwrap();
    assert_eq!(status(&mut c).await["attempts"][0]["state"], "running");
    let r = c
        .command("distdebug.cancel", json!({"run": run}))
        .await
        .unwrap();
    assert_eq!(r["result"]["cancelled"], json!([run]));
    assert_eq!(wait_end(&mut c, &run, "slow", 1).await, "cancelled");
    c.wait_for("the end of the run", |m| {
        is_notification(m, "window/logMessage")
            && m["params"]["message"] == format!("{run} finished")
    })
    .await
    .unwrap();
    let st = status(&mut c).await;
    let states: Vec<(&str, &str)> = st["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["state"].as_str().unwrap(), a["exit"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        vec![
            ("finished", "cancelled"),
            ("cancelled", "cancelled"),
            ("cancelled", "cancelled")
        ],
        "the attempts after the cancelled one never start"
    );
    assert_eq!(st["runs"][0]["active"], false);
    let r = c
        .command("distdebug.cancel", json!({"run": "run-99"}))
        .await
        .unwrap();
    assert!(
        r["error"]["message"].as_str().unwrap().contains("no run"),
        "{r}"
    );
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_cancel_button_cancels_the_run() {
    let (_tmp, ws) = prepared();
    let runner = TestRunner::new();
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    let r = c
        .command("distdebug.runAgent", json!({"agent": "slow"}))
        .await
        .unwrap();
    let run = r["result"]["run"].as_str().unwrap().to_string();
    let token = format!("distdebug/{run}/slow/1");
    c.wait_for("the slow agent's second step", |m| {
        is_notification(m, "distdebug/trajectoryStep") && m["params"]["step"]["index"] == 1
    })
    .await
    .unwrap();
    c.notify("window/workDoneProgress/cancel", json!({"token": token}))
        .await
        .unwrap();
    assert_eq!(wait_end(&mut c, &run, "slow", 1).await, "cancelled");
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_at_once() {
    let (_tmp, ws) = prepared();
    let runner = TestRunner::new();
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    let a = c
        .command("distdebug.runAgent", json!({"agent": "gated"}))
        .await
        .unwrap();
    let b = c
        .command("distdebug.runAgent", json!({"agent": "gated"}))
        .await
        .unwrap();
    let (ra, rb) = (
        a["result"]["run"].as_str().unwrap().to_string(),
        b["result"]["run"].as_str().unwrap().to_string(),
    );
    assert_ne!(ra, rb);
    assert_eq!(
        (
            a["result"]["attempts"].clone(),
            b["result"]["attempts"].clone()
        ),
        (json!([1]), json!([2]))
    );
    // Both are under way at the same time: each has sent its first step.
    for k in [1, 2] {
        c.wait_for("a step of each run", |m| {
            is_notification(m, "distdebug/trajectoryStep") && m["params"]["attempt"] == k
        })
        .await
        .unwrap();
    }
    let st = status(&mut c).await;
    let running = st["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["state"] == "running")
        .count();
    assert_eq!(running, 2, "{st}");
    runner.gate.add_permits(2);
    assert_eq!(
        wait_end(&mut c, &ra, "gated", 1).await,
        "submitted 1 block(s)"
    );
    assert_eq!(
        wait_end(&mut c, &rb, "gated", 2).await,
        "submitted 1 block(s)"
    );
    let st = status(&mut c).await;
    assert!(
        st["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["exit"] == "submitted"),
        "{st}"
    );
    assert_eq!(
        st["current"]["attempt"], 2,
        "the latest run is the one shown"
    );
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_agent_is_reported_and_the_server_carries_on() {
    let (tmp, ws) = prepared();
    let runner = TestRunner::new();
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    let r = c
        .command("distdebug.runAgent", json!({"agent": "crash"}))
        .await
        .unwrap();
    let run = r["result"]["run"].as_str().unwrap().to_string();
    assert_eq!(wait_end(&mut c, &run, "crash", 1).await, "crashed");
    let m = c
        .wait_for("an error shown to the user", |m| {
            is_notification(m, "window/showMessage") && m["params"]["type"] == 1
        })
        .await
        .unwrap();
    assert!(
        m["params"]["message"]
            .as_str()
            .unwrap()
            .contains("the test agent fell over"),
        "{m}"
    );
    let st = status(&mut c).await;
    assert_eq!(st["attempts"][0]["state"], "crashed");
    assert_eq!(st["attempts"][0]["exit"], "error");
    // The crash is on disk too, honestly: exit error, with the steps made before it.
    let t = Trajectory::load(
        &tmp.path()
            .join("results/crash/tiny-lease/attempt-1")
            .join(TRAJECTORY),
    )
    .unwrap();
    assert_eq!(t.exit, Exit::Error);
    assert_eq!(t.steps.len(), 2);
    // And the server still works.
    let r = c
        .command("distdebug.runAgent", json!({"agent": "baseline"}))
        .await
        .unwrap();
    let run = r["result"]["run"].as_str().unwrap().to_string();
    assert!(wait_end(&mut c, &run, "baseline", 1)
        .await
        .starts_with("submitted"));
    c.shutdown().await.unwrap();
}

/// Writes an attempt as an external agent would: `diagnosis.json` and `trajectory.json`.
fn external_attempt(results: &Path, config: &str, k: u32, blocks: Value) {
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
                   "finished_at": "", "exit": "submitted", "usage": {},
                   "steps": [{"index": 0, "kind": "submit", "text": "done"}]});
    std::fs::write(dir.join(TRAJECTORY), t.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_and_attempts_written_by_others_are_shown() {
    let (tmp, ws) = prepared();
    let results = tmp.path().join("results");
    external_attempt(
        &results,
        "ext",
        1,
        json!([{"path": "src/lease.py", "start_line": 14, "end_line": 16, "rationale": "expiry math"},
               {"path": "src/server.py", "start_line": 1, "end_line": 2}]),
    );
    let runner = TestRunner::new();
    let options =
        json!({"incident": fixture_incident(), "annotator": "ann-1", "severity": "warning"});
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), options).await;
    let lease = uri(&ws, "src/lease.py");
    // The labels show from the start, as `label` diagnostics, with the configured severity.
    let m = c
        .wait_for("the label", |m| is_diagnostics_for(m, &lease))
        .await
        .unwrap();
    assert_eq!(codes(&m), vec!["label"]);
    let d = &m["params"]["diagnostics"][0];
    assert_eq!(d["severity"], 4, "labels are hints by default");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("ttl in seconds multiplied"),
        "{d}"
    );
    assert_eq!(status(&mut c).await["labels"]["count"], 1);

    let from = c.log.len();
    let r = c
        .command("distdebug.showAttempt", json!({"attempt": 1}))
        .await
        .unwrap();
    assert_eq!(r["result"]["config"], "ext", "{r}");
    assert_eq!(r["result"]["blocks"], 2);
    let (_, m) = c
        .wait_from(from, "the predicted block", |m| {
            is_diagnostics_for(m, &lease) && codes(m).len() == 2
        })
        .await
        .unwrap();
    assert_eq!(codes(&m), vec!["predicted", "label"]);
    assert_eq!(
        m["params"]["diagnostics"][0]["severity"], 2,
        "severity from initializationOptions"
    );
    let lenses = c
        .call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": lease}}),
        )
        .await
        .unwrap();
    assert!(lenses[0]["command"]["title"]
        .as_str()
        .unwrap()
        .starts_with("◆ agent ext #1: expiry math"));
    let h = c
        .call(
            "textDocument/hover",
            json!({"textDocument": {"uri": lease}, "position": {"line": 14, "character": 0}}),
        )
        .await
        .unwrap();
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(
        text.contains("expiry math") && text.contains("annotator: fixture"),
        "{text}"
    );

    // The incident folder (labels, fix) is hidden from any agent the server starts.
    let r = c
        .command("distdebug.runAgent", json!({"agent": "gated"}))
        .await
        .unwrap();
    runner.gate.add_permits(1);
    let run = r["result"]["run"].as_str().unwrap().to_string();
    wait_end(&mut c, &run, "gated", 1).await;
    let hidden = runner.choices.lock().unwrap()[0].hide.clone();
    assert!(hidden.contains(&fixture_incident()), "{hidden:?}");

    // A new attempt on disk appears on showAttempt; an ambiguous number asks for the config.
    external_attempt(&results, "other", 1, json!([]));
    let r = c
        .command(
            "distdebug.showAttempt",
            json!({"config": "other", "attempt": 1}),
        )
        .await
        .unwrap();
    assert_eq!(r["result"]["blocks"], 0);
    c.command("distdebug.clearAttempt", json!({}))
        .await
        .unwrap();
    let r = c
        .command("distdebug.showAttempt", json!({"attempt": 1}))
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("several configurations"),
        "{r}"
    );
    let r = c
        .command(
            "distdebug.showAttempt",
            json!({"config": "ext", "attempt": 7}),
        )
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no attempt 7"),
        "{r}"
    );
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_out_of_version_order_never_corrupt_the_text() {
    let (_tmp, ws) = prepared();
    let runner = TestRunner::new();
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    let u = uri(&ws, "src/notes.txt");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": "text", "version": 1, "text": "one\n"}}),
    )
    .await
    .unwrap();
    // Version 3 arrives before version 2: 2 is dropped, never applied over 3.
    for (v, text) in [(3, "three\n"), (2, "two\n")] {
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": v}, "contentChanges": [{"text": text}]}),
        )
        .await
        .unwrap();
    }
    let d = c
        .call("distdebug/documentText", json!({"uri": u}))
        .await
        .unwrap();
    assert_eq!(
        (d["text"].as_str(), d["version"].as_i64()),
        (Some("three\n"), Some(3))
    );
    c.wait_for("the dropped-edit warning", |m| {
        is_notification(m, "window/logMessage")
            && m["params"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("dropped an edit for version 2")
    })
    .await
    .unwrap();

    // A burst of incremental edits, each relative to the one before: applied in order.
    let mut expected = String::from("three\n");
    for i in 0..60u32 {
        let (line, col) = (0u32, (i as usize % expected.find('\n').unwrap()) as u32);
        let ch = char::from(b'a' + (i % 26) as u8);
        expected.insert(col as usize, ch);
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": 4 + i},
                   "contentChanges": [{"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col}}, "text": ch.to_string()}]}),
        )
        .await
        .unwrap();
    }
    let d = c
        .call("distdebug/documentText", json!({"uri": u}))
        .await
        .unwrap();
    assert_eq!(d["text"].as_str().unwrap(), expected);
    assert_eq!(d["version"], 63);
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}))
        .await
        .unwrap();
    assert_eq!(
        c.call("distdebug/documentText", json!({"uri": u}))
            .await
            .unwrap(),
        Value::Null
    );
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn utf16_positions_on_lines_with_non_ascii_text() {
    let (tmp, ws) = prepared();
    external_attempt(
        &tmp.path().join("results"),
        "ext",
        1,
        json!([{"path": "src/lease.py", "start_line": 2, "end_line": 2, "rationale": "non-ascii line"}]),
    );
    let line2 = "s = \"é😀ü\" # ok";
    let text = format!("x = 1\n{line2}\nz = 3\n");
    for (caps, enc) in [
        (json!({"window": {"workDoneProgress": true}}), "utf-16"),
        (full_capabilities("utf-8"), "utf-8"),
    ] {
        let runner = TestRunner::new();
        let mut c = start(&runner, Some(&ws), caps, Value::Null).await;
        let u = uri(&ws, "src/lease.py");
        assert_eq!(status(&mut c).await["positionEncoding"], enc);
        c.command(
            "distdebug.showAttempt",
            json!({"config": "ext", "attempt": 1}),
        )
        .await
        .unwrap();
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "python", "version": 1, "text": text}}),
        )
        .await
        .unwrap();
        let width = |s: &str| {
            if enc == "utf-16" {
                s.encode_utf16().count()
            } else {
                s.len()
            }
        };
        let m = c
            .wait_for("diagnostics of the open document", |m| {
                is_diagnostics_for(m, &u) && m["params"]["version"] == 1
            })
            .await
            .unwrap();
        assert_eq!(
            m["params"]["diagnostics"][0]["range"]["end"],
            json!({"line": 1, "character": width(line2)})
        );
        // Replace "ü" (after the emoji) with "Ü!", counting columns in the negotiated unit.
        let start = width("s = \"é😀");
        let end = width("s = \"é😀ü");
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": 2},
                   "contentChanges": [{"range": {"start": {"line": 1, "character": start}, "end": {"line": 1, "character": end}}, "text": "Ü!"}]}),
        )
        .await
        .unwrap();
        let new_line = "s = \"é😀Ü!\" # ok";
        let d = c
            .call("distdebug/documentText", json!({"uri": u}))
            .await
            .unwrap();
        assert_eq!(
            d["text"].as_str().unwrap(),
            format!("x = 1\n{new_line}\nz = 3\n"),
            "{enc}"
        );
        let m = c
            .wait_for("diagnostics of version 2", |m| {
                is_diagnostics_for(m, &u) && m["params"]["version"] == 2
            })
            .await
            .unwrap();
        assert_eq!(
            m["params"]["diagnostics"][0]["range"]["end"]["character"],
            width(new_line)
        );
        c.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_incident_prepares_and_shows_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let runner = TestRunner::new();
    let out = tmp.path().join("prepared/tiny");
    let mut c = start(
        &runner,
        Some(tmp.path()),
        full_capabilities("utf-16"),
        json!({"offline": true}),
    )
    .await;
    let r = c
        .command(
            "distdebug.openIncident",
            json!({"incident": fixture_incident(), "out": out}),
        )
        .await
        .unwrap();
    assert_eq!(r["result"]["incident"], "tiny-lease", "{r}");
    assert_eq!(r["result"]["reused"], false);
    let report = uri(&out, ".distdebug/report.md");
    let m = c
        .wait_for("showDocument", |m| m["method"] == "window/showDocument")
        .await
        .unwrap();
    assert_eq!(m["params"]["uri"], report);
    assert_eq!(status(&mut c).await["incident"]["id"], "tiny-lease");
    // Opening it again reuses the workspace.
    let r = c
        .command(
            "distdebug.openIncident",
            json!({"incident": fixture_incident(), "out": out}),
        )
        .await
        .unwrap();
    assert_eq!(r["result"]["reused"], true, "{r}");
    let r = c
        .command(
            "distdebug.openIncident",
            json!({"incident": "no-such-incident"}),
        )
        .await
        .unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no incident"),
        "{r}"
    );
    c.shutdown().await.unwrap();
}

/// A command's answer is written after the messages it caused: when the answer to
/// `distdebug.score` arrives, its `hit` diagnostics and its log line have arrived already (a
/// client such as Emacs's jsonrpc.el stops reading at a synchronous answer, so what came after
/// it would wait unread). Each round shows the attempt again (unscored) and scores it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_answer_comes_after_what_it_caused() {
    let (tmp, ws) = prepared();
    let results = tmp.path().join("results");
    external_attempt(
        &results,
        "ext",
        1,
        json!([{"path": "src/lease.py", "start_line": 14, "end_line": 16, "rationale": "expiry math"},
               {"path": "src/server.py", "start_line": 1, "end_line": 2, "rationale": "imports"}]),
    );
    let runner = TestRunner::new();
    let options = json!({"incident": fixture_incident()});
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), options).await;
    let lease = uri(&ws, "src/lease.py");
    let with_code = |log: &[Value], code: &str| {
        log.iter()
            .any(|m| is_diagnostics_for(m, &lease) && codes(m).contains(&code.to_string()))
    };
    for round in 0..20 {
        let from = c.log.len();
        c.command(
            "distdebug.showAttempt",
            json!({"config": "ext", "attempt": 1}),
        )
        .await
        .unwrap();
        assert!(
            with_code(&c.log[from..], "predicted"),
            "round {round}: showAttempt answered before its predicted diagnostics"
        );
        let from = c.log.len();
        let r = c.command("distdebug.score", json!({})).await.unwrap();
        assert!(r.get("error").is_none(), "{r}");
        let before_answer = &c.log[from..];
        assert!(
            with_code(before_answer, "hit"),
            "round {round}: the score's answer came before its hit diagnostics: {before_answer:?}"
        );
        assert!(
            before_answer
                .iter()
                .any(|m| m["method"] == "window/logMessage"
                    && m["params"]["message"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("scored ext #1"))),
            "round {round}: the score's answer came before its log line"
        );
    }
    c.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scoring_marks_hits_false_positives_and_missed_labels() {
    let (tmp, ws) = prepared();
    let results = tmp.path().join("results");
    // Attempt 1 names the labeled block and a wrong one; attempt 2 only the wrong one.
    external_attempt(
        &results,
        "ext",
        1,
        json!([{"path": "src/lease.py", "start_line": 14, "end_line": 16, "rationale": "expiry math"},
               {"path": "src/server.py", "start_line": 1, "end_line": 2, "rationale": "imports"}]),
    );
    external_attempt(
        &results,
        "ext",
        2,
        json!([{"path": "src/server.py", "start_line": 1, "end_line": 2, "rationale": "imports"}]),
    );
    let runner = TestRunner::new();
    // Without the incident folder there is nothing to score against.
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    c.command("distdebug.showAttempt", json!({"attempt": 1}))
        .await
        .unwrap();
    let r = c.command("distdebug.score", json!({})).await.unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("needs the labels"),
        "{r}"
    );
    c.shutdown().await.unwrap();

    let options = json!({"incident": fixture_incident()});
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), options).await;
    let (lease, server) = (uri(&ws, "src/lease.py"), uri(&ws, "src/server.py"));
    c.command(
        "distdebug.showAttempt",
        json!({"config": "ext", "attempt": 1}),
    )
    .await
    .unwrap();
    let from = c.log.len();
    let r = c.command("distdebug.score", json!({})).await.unwrap();
    let s = &r["result"][0];
    assert_eq!(
        (s["attempt"].as_u64(), s["schema_valid"].as_bool()),
        (Some(1), Some(true)),
        "{r}"
    );
    assert_eq!(s["block_coverage"], 1.0);
    assert_eq!(s["blocks"][0]["hit"], true);
    assert_eq!(s["blocks"][1]["hit"], false);
    let on_disk: Value = serde_json::from_str(
        &std::fs::read_to_string(results.join("ext/tiny-lease/attempt-1/diagnosis_scores.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(on_disk["block_coverage"], 1.0);
    // The answer names the attempt; the file keeps the contract's fields only.
    assert_eq!(
        (s["config"].as_str(), s["agent"].as_str()),
        (Some("ext"), Some("ext")),
        "{r}"
    );
    assert!(on_disk.get("config").is_none(), "{on_disk}");
    let (_, m) = c
        .wait_from(from, "hit on lease.py", |m| {
            is_diagnostics_for(m, &lease) && codes(m).contains(&"hit".to_string())
        })
        .await
        .unwrap();
    assert_eq!(codes(&m), vec!["hit", "label"]);
    let (_, m) = c
        .wait_from(from, "false positive on server.py", |m| {
            is_diagnostics_for(m, &server) && codes(m).contains(&"false-positive".to_string())
        })
        .await
        .unwrap();
    assert_eq!(codes(&m), vec!["false-positive"]);
    let lenses = c
        .call(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": lease}}),
        )
        .await
        .unwrap();
    let top = lenses[0]["command"]["title"].as_str().unwrap();
    assert!(
        top.starts_with("◆ score ext #1: block coverage 100.0%"),
        "{top}"
    );
    assert!(
        top.contains("this file: 1 hit, 0 false positive, 0 missed"),
        "{top}"
    );
    assert_eq!(lenses[0]["range"]["start"]["line"], 0);
    assert!(lenses[1]["command"]["title"]
        .as_str()
        .unwrap()
        .contains(", hit)"));
    assert_eq!(status(&mut c).await["attempts"][0]["scored"], true);

    // Attempt 2 misses the label: it shows as `missed`.
    c.command(
        "distdebug.showAttempt",
        json!({"config": "ext", "attempt": 2}),
    )
    .await
    .unwrap();
    let from = c.log.len();
    let r = c.command("distdebug.score", json!({})).await.unwrap();
    assert_eq!(r["result"][0]["block_coverage"], 0.0, "{r}");
    let (_, m) = c
        .wait_from(from, "the missed label", |m| {
            is_diagnostics_for(m, &lease) && codes(m).contains(&"missed".to_string())
        })
        .await
        .unwrap();
    assert_eq!(codes(&m), vec!["missed"]);

    // Every finished attempt at once; a running one cannot be scored.
    let r = c
        .command("distdebug.score", json!({"all": true}))
        .await
        .unwrap();
    assert_eq!(r["result"].as_array().map(|a| a.len()), Some(2), "{r}");
    let run = c
        .command("distdebug.runAgent", json!({"agent": "slow"}))
        .await
        .unwrap();
    let run = run["result"]["run"].as_str().unwrap().to_string();
    c.wait_for("the slow agent at work", |m| {
        is_notification(m, "distdebug/trajectoryStep") && m["params"]["step"]["index"] == 1
    })
    .await
    .unwrap();
    let r = c.command("distdebug.score", json!({})).await.unwrap();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("still running"),
        "{r}"
    );
    c.command("distdebug.cancel", json!({})).await.unwrap();
    wait_end(&mut c, &run, "slow", 1).await;
    c.shutdown().await.unwrap();
}

/// A real external agent (a process group under the library's runner) ends when the editor
/// cancels its run: the attempt is recorded as cancelled and its processes are gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_ends_a_real_external_agent() {
    let (_tmp, ws) = prepared();
    let runner = TestRunner::new();
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), Value::Null).await;
    // A sleep with a duration no other process uses, so it can be found among all processes.
    let marker = format!("{}.{}", 600 + std::process::id() % 97, std::process::id());
    let script = format!(
        "echo '{{\"kind\":\"thought\",\"text\":\"waiting\"}}' >> \"$DISTDEBUG_OUTPUT/trajectory.jsonl\"; sleep {marker}"
    );
    let sleeping = |marker: &str| -> bool {
        let want = format!("sleep\0{marker}");
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(&want))
                .unwrap_or(false)
        })
    };
    let r = c
        .command(
            "distdebug.runAgent",
            json!({"agent": "command", "command": script}),
        )
        .await
        .unwrap();
    let Some(run) = r["result"]["run"].as_str().map(str::to_string) else {
        // Without bubblewrap the server refuses to run an unconfined agent; nothing to test.
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("sandbox"),
            "{r}"
        );
        return;
    };
    c.wait_for("the agent's live step", |m| {
        is_notification(m, "distdebug/trajectoryStep") && m["params"]["step"]["text"] == "waiting"
    })
    .await
    .unwrap();
    assert!(sleeping(&marker), "the agent is running before the cancel");
    let r = c
        .command("distdebug.cancel", json!({"run": run}))
        .await
        .unwrap();
    assert_eq!(r["result"]["cancelled"], json!([run]));
    let st = status(&mut c).await;
    let config = st["attempts"][0]["config"]
        .as_str()
        .unwrap_or("command")
        .to_string();
    assert_eq!(wait_end(&mut c, &run, &config, 1).await, "cancelled");
    let st = status(&mut c).await;
    assert_eq!(st["attempts"][0]["exit"], "cancelled", "{st}");
    assert!(
        !sleeping(&marker),
        "the agent's process group is gone after the cancel"
    );
    c.shutdown().await.unwrap();
}

/// `distdebug/replay`: the steps of an imported harness's attempt with what each read, the
/// lines read so far, and the first step that read a labeled line (lease.py 13-18).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_gives_steps_reads_so_far_and_the_first_labeled_read() {
    let (tmp, ws) = prepared();
    let results = tmp.path().join("results");
    let dir = results.join("mini").join("tiny-lease").join("attempt-1");
    std::fs::create_dir_all(&dir).unwrap();
    let steps = json!([
        {"index": 0, "kind": "thought", "text": "the log says the lease lasted hours"},
        {"index": 1, "kind": "action", "tool": "bash", "args": {"command": "sed -n 1,12p src/lease.py"},
         "paths_read": [{"path": "src/lease.py", "start_line": 1, "end_line": 12}]},
        {"index": 2, "kind": "observation", "text": "class LeaseTable: ..."},
        {"index": 3, "kind": "action", "tool": "bash", "args": {"command": "cat src/server.py"},
         "paths_read": [{"path": "./src/server.py"}]},
        {"index": 4, "kind": "action", "tool": "bash", "args": {"command": "sed -n 10,20p src/lease.py"},
         "paths_read": [{"path": "src/lease.py", "start_line": 10, "end_line": 20}]},
        {"index": 5, "kind": "submit", "text": "done"}
    ]);
    let t = json!({"incident": "tiny-lease", "attempt": 1, "agent": "mini-swe-agent", "exit": "submitted",
                   "steps": steps});
    std::fs::write(dir.join(TRAJECTORY), t.to_string()).unwrap();
    std::fs::write(dir.join(DIAGNOSIS), json!({"blocks": []}).to_string()).unwrap();
    let runner = TestRunner::new();
    let options = json!({"incident": fixture_incident()});
    let mut c = start(&runner, Some(&ws), full_capabilities("utf-8"), options).await;
    let r = c
        .call("distdebug/replay", json!({"config": "mini", "attempt": 1}))
        .await
        .unwrap();
    assert_eq!(
        (r["agent"].as_str(), r["live"].as_bool()),
        (Some("mini-swe-agent"), Some(false)),
        "{r}"
    );
    assert_eq!(
        r["first_label_read"], 4,
        "step 4 reads lines 10-20, the label is 13-18: {r}"
    );
    let s = &r["steps"];
    assert_eq!(s.as_array().map(|a| a.len()), Some(6));
    assert_eq!(s[0]["kind"], "thought");
    assert_eq!(s[1]["args"]["command"], "sed -n 1,12p src/lease.py");
    assert_eq!(
        s[3]["paths_read"][0]["path"], "src/server.py",
        "paths are normalised"
    );
    assert_eq!(
        s[4]["read_so_far"],
        json!([{"path": "src/lease.py", "ranges": [[1, 20]]}, {"path": "src/server.py", "ranges": [[1, null]]}])
    );
    assert_eq!(s[5]["read_so_far"], s[4]["read_so_far"]);
    // The current attempt by default; bad params are InvalidParams.
    c.command(
        "distdebug.showAttempt",
        json!({"config": "mini", "attempt": 1}),
    )
    .await
    .unwrap();
    let current = c.call("distdebug/replay", Value::Null).await.unwrap();
    assert_eq!(current["steps"], r["steps"]);
    let bad = c
        .request("distdebug/replay", json!({"attempt": "one"}))
        .await
        .unwrap();
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let missing = c
        .request("distdebug/replay", json!({"config": "mini", "attempt": 9}))
        .await
        .unwrap();
    assert_eq!(missing["error"]["code"], -32803, "{missing}");
    c.shutdown().await.unwrap();
}

//! The model agent against a scripted OpenAI-compatible server on 127.0.0.1: tool calls, a
//! malformed call, 429, 500, a reply slower than the timeout, an invalid and a valid submit;
//! the text-mode fallback; budgets; a dead endpoint; cancellation.

mod support;

use distdebug::agent::llm::{ApiKey, LlmConfig, ToolMode};
use distdebug::agent::AgentSpec;
use distdebug::attempt::{Diagnosis, Exit, StepKind, Trajectory};
use std::path::Path;
use std::time::Duration;
use support::*;
use tokio_util::sync::CancellationToken;

fn fast_config(base_url: &str) -> LlmConfig {
    let mut cfg = LlmConfig::new(base_url, "scripted-model");
    cfg.request_timeout = Duration::from_millis(400);
    cfg.retries = 4;
    cfg.retry_base = Duration::from_millis(10);
    cfg.retry_max = Duration::from_millis(40);
    cfg.budget.max_wall = Some(Duration::from_secs(60));
    cfg
}

async fn run(
    cfg: LlmConfig,
    ws: &Path,
    results: &Path,
    cancel: &CancellationToken,
) -> (Trajectory, Option<Diagnosis>, String) {
    let summary = distdebug::run::run_attempt(&AgentSpec::Llm(cfg), ws, results, 1, None, cancel)
        .await
        .unwrap();
    let t = Trajectory::load(&summary.dir.join("trajectory.json")).unwrap();
    let d = Diagnosis::load(&summary.dir.join("diagnosis.json")).ok();
    (t, d, summary.error.unwrap_or_default())
}

/// No request may hold two user turns in a row (strict chat templates reject them).
fn assert_no_double_user_turns(reqs: &[Received]) {
    for r in reqs {
        let msgs = r.body["messages"].as_array().unwrap();
        for w in msgs.windows(2) {
            assert!(
                !(w[0]["role"] == "user" && w[1]["role"] == "user"),
                "{msgs:#?}"
            );
        }
    }
}

#[tokio::test]
async fn explores_recovers_from_every_failure_and_submits() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let results = dir.path().join("results/llm");
    let stub = start_stub(vec![
        tool_call("c1", "search", r#"{"pattern": "granted lease", "glob": "**/*.py"}"#, 100, 10),
        tool_call("c2", "read", r#"{"path": "src/lease.py", "start_line": 10"#, 120, 8),
        Scripted::status(429, r#"{"error":"rate limited"}"#).header("Retry-After", "0"),
        Scripted::status(500, r#"{"error":"overloaded"}"#),
        tool_call("late", "list", "{}", 1, 1).delayed(Duration::from_secs(3)),
        tool_call("c3", "read", r#"{"path": "src/lease.py", "start_line": 13, "end_line": 18}"#, 150, 9),
        tool_call("c4", "submit", r#"{"summary": "x", "blocks": [{"path": "src/lease.py", "start_line": 0, "end_line": 2}]}"#, 160, 20),
        tool_call("c5", "submit", r#"{"summary": "ttl is multiplied by 1000", "blocks": [{"path": "src/lease.py", "start_line": 13, "end_line": 18, "rationale": "seconds treated as ms", "confidence": 0.8}]}"#, 170, 30),
    ])
    .await;
    let mut cfg = fast_config(&stub.base_url);
    cfg.api_key = Some(ApiKey::new("sk-test-secret-123".into()));
    cfg.price.prompt_per_mtok = 1.0;
    cfg.price.completion_per_mtok = 2.0;
    let (t, d, err) = run(cfg, &ws, &results, &CancellationToken::new()).await;

    assert_eq!(t.exit, Exit::Submitted, "error: {err}");
    let d = d.expect("a diagnosis is written");
    assert_eq!(d.incident, "tiny-lease");
    assert_eq!((d.blocks[0].start_line, d.blocks[0].end_line), (13, 18));

    let kinds: Vec<StepKind> = t.steps.iter().map(|s| s.kind).collect();
    use StepKind::*;
    assert_eq!(
        kinds,
        vec![
            Action,
            Observation,
            Error,
            Error,
            Error,
            Error,
            Action,
            Observation,
            Error,
            Submit
        ],
        "{:#?}",
        t.steps
    );
    // The search found the logging line and says where it looked.
    assert_eq!(t.steps[0].tool.as_deref(), Some("search"));
    assert_eq!(t.steps[0].paths_read[0].path, "src/lease.py");
    assert_eq!(t.steps[0].paths_read[0].start_line, Some(17));
    assert!(t.steps[1]
        .text
        .as_deref()
        .unwrap()
        .contains("src/lease.py:17:"));
    assert_eq!(
        t.steps[0].tokens,
        Some(110),
        "usage is recorded on the reply's first step"
    );
    // The malformed call, then one retry step each for the 429, the 500 and the timeout.
    assert!(t.steps[2].text.as_deref().unwrap().contains("format error"));
    assert!(t.steps[3].text.as_deref().unwrap().contains("429"));
    assert!(t.steps[4].text.as_deref().unwrap().contains("500"));
    assert!(
        t.steps[5].text.as_deref().unwrap().contains("no answer"),
        "{:?}",
        t.steps[5].text
    );
    assert_eq!(t.steps[6].paths_read[0].start_line, Some(13));
    assert_eq!(t.steps[6].paths_read[0].end_line, Some(18));
    assert!(t.steps[8].text.as_deref().unwrap().contains("start_line"));
    assert_eq!(t.steps[9].blocks.as_ref().unwrap().len(), 1);

    // Usage sums the five replies that arrived; cost follows the configured prices.
    assert_eq!(t.usage.prompt_tokens, 100 + 120 + 150 + 160 + 170);
    assert_eq!(t.usage.completion_tokens, 10 + 8 + 9 + 20 + 30);
    let cost = (700.0 * 1.0 + 77.0 * 2.0) / 1e6;
    assert!(
        (t.usage.cost_usd - cost).abs() < 1e-12,
        "{}",
        t.usage.cost_usd
    );
    assert_eq!(t.model.as_deref(), Some("scripted-model"));

    // What the model was told: the report first, the format error and the rejected submit fed back.
    let reqs = stub.requests();
    assert_eq!(reqs.len(), 8);
    let first = &reqs[0].body;
    assert_eq!(first["model"], "scripted-model");
    assert!(first["tools"].as_array().unwrap().len() == 5);
    assert!(first["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("Bug report"));
    let after_malformed = reqs[2].body["messages"].as_array().unwrap();
    let last = after_malformed.last().unwrap();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], "c2");
    assert!(last["content"].as_str().unwrap().contains("format error"));
    let after_bad_submit = reqs[7].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(after_bad_submit["content"]
        .as_str()
        .unwrap()
        .contains("submit rejected"));
    assert!(reqs[0]
        .head
        .to_lowercase()
        .contains("authorization: bearer sk-test-secret-123"));
    // The key is sent, and written nowhere.
    let written = all_text_under(&results);
    assert!(written.contains("ttl is multiplied"));
    assert!(!written.contains("sk-test-secret-123"));
    // The live file carries every step.
    let live = distdebug::attempt::trajectory::read_jsonl_steps(
        &results.join("tiny-lease/attempt-1/trajectory.jsonl"),
    );
    assert_eq!(live.len(), t.steps.len());
}

#[tokio::test]
async fn falls_back_to_text_actions_when_the_endpoint_rejects_tools() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let stub = start_stub(vec![
        Scripted::status(400, r#"{"error":{"message":"this model does not support tools"}}"#),
        text_reply("Reading the lease table.\n```action\n{\"tool\": \"read\", \"args\": {\"path\": \"src/lease.py\", \"start_line\": 1, \"end_line\": 20}}\n```", 50, 5),
        text_reply("Done.\n```action\n{\"tool\": \"submit\", \"args\": {\"summary\": \"ttl\", \"blocks\": [{\"path\": \"src/lease.py\", \"start_line\": 15, \"end_line\": 15}]}}\n```", 60, 6),
    ])
    .await;
    let cfg = fast_config(&stub.base_url);
    assert_eq!(cfg.mode, ToolMode::Auto);
    let (t, d, err) = run(
        cfg,
        &ws,
        &dir.path().join("results/text"),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(t.exit, Exit::Submitted, "{err}");
    assert_eq!(d.unwrap().blocks[0].start_line, 15);
    let reqs = stub.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].body.get("tools").is_some());
    assert!(
        reqs[1].body.get("tools").is_none(),
        "after the 400 the agent asks in text"
    );
    assert!(reqs[1].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("```action"));
    // The observation went back as a user message.
    let msgs = reqs[2].body["messages"].as_array().unwrap();
    let obs = msgs.last().unwrap();
    assert_eq!(obs["role"], "user");
    assert!(obs["content"].as_str().unwrap().contains("15| "));
    let read = t
        .steps
        .iter()
        .find(|s| s.tool.as_deref() == Some("read"))
        .unwrap();
    assert_eq!(read.paths_read[0].end_line, Some(20));
    assert_eq!(
        t.steps[0].kind,
        StepKind::Error,
        "the switch to text mode is recorded"
    );
}

#[tokio::test]
async fn llama_cpp_without_jinja_falls_back_to_text_actions_instead_of_retrying() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    // llama.cpp's server started without --jinja answers tool definitions with a 500.
    let stub = start_stub(vec![
        Scripted::status(
            500,
            r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#,
        ),
        text_reply("Done.\n```action\n{\"tool\": \"submit\", \"args\": {\"summary\": \"ttl\", \"blocks\": [{\"path\": \"src/lease.py\", \"start_line\": 15, \"end_line\": 15}]}}\n```", 60, 6),
    ])
    .await;
    let (t, d, err) = run(
        fast_config(&stub.base_url),
        &ws,
        &dir.path().join("results/llama"),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(t.exit, Exit::Submitted, "{err}");
    assert_eq!(d.unwrap().blocks[0].start_line, 15);
    let reqs = stub.requests();
    assert_eq!(
        reqs.len(),
        2,
        "no retry of the 500: the next request is in text mode"
    );
    assert!(reqs[1].body.get("tools").is_none());
    assert!(t.steps[0].text.as_deref().unwrap_or("").contains("--jinja"));
    // Any other 500 is still retried.
    let stub = start_stub(vec![
        Scripted::status(500, r#"{"error":"overloaded"}"#),
        text_reply("Done.\n```action\n{\"tool\": \"submit\", \"args\": {\"summary\": \"ttl\", \"blocks\": []}}\n```", 60, 6),
    ])
    .await;
    let (_t, _d, _err) = run(
        fast_config(&stub.base_url),
        &ws,
        &dir.path().join("results/llama2"),
        &CancellationToken::new(),
    )
    .await;
    let reqs = stub.requests();
    assert!(
        reqs[1].body.get("tools").is_some(),
        "a plain 500 is retried as it was"
    );
}

#[tokio::test]
async fn step_and_token_budgets_stop_the_attempt() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let search = || tool_call("s", "search", r#"{"pattern": "lease"}"#, 10, 1);
    let stub = start_stub(vec![search(), search(), search(), search()]).await;
    let mut cfg = fast_config(&stub.base_url);
    cfg.budget.max_steps = 2;
    let (t, d, _) = run(
        cfg,
        &ws,
        &dir.path().join("results/steps"),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(t.exit, Exit::Budget);
    assert!(d.is_none());
    assert_eq!(stub.requests().len(), 2);
    let last_req = &stub.requests()[1].body["messages"];
    assert!(
        last_req.to_string().contains("last step"),
        "the model is told to submit on its last step"
    );
    assert!(t
        .steps
        .last()
        .unwrap()
        .text
        .as_deref()
        .unwrap()
        .contains("step budget of 2"));

    let stub = start_stub(vec![
        tool_call("s", "search", r#"{"pattern": "lease"}"#, 900, 200),
        search(),
    ])
    .await;
    let mut cfg = fast_config(&stub.base_url);
    cfg.budget.max_tokens = Some(1000);
    let (t, _, _) = run(
        cfg,
        &ws,
        &dir.path().join("results/tokens"),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(t.exit, Exit::Budget);
    assert_eq!(stub.requests().len(), 1);
    assert!(t
        .steps
        .last()
        .unwrap()
        .text
        .as_deref()
        .unwrap()
        .contains("token budget of 1000"));
}

#[tokio::test]
async fn too_many_format_errors_end_the_attempt_with_an_error() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let chatter = || text_reply("I think it is the lease table.", 5, 5);
    let stub = start_stub(vec![chatter(), chatter(), chatter(), chatter()]).await;
    let mut cfg = fast_config(&stub.base_url);
    cfg.max_format_errors = 2;
    let (t, _, err) = run(
        cfg,
        &ws,
        &dir.path().join("results/fmt"),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(t.exit, Exit::Error);
    assert!(err.contains("without a usable tool call"), "{err}");
    assert_eq!(stub.requests().len(), 3);
    assert_no_double_user_turns(&stub.requests());
    let fed_back = stub.requests()[1].body["messages"].to_string();
    assert!(fed_back.contains("Format error"));
}

#[tokio::test]
async fn a_dead_endpoint_is_an_error_that_names_it() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    // A port that was just free: nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut cfg = fast_config(&format!("http://127.0.0.1:{port}/v1"));
    cfg.retries = 2;
    let (t, d, err) = run(
        cfg,
        &ws,
        &dir.path().join("results/dead"),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(t.exit, Exit::Error);
    assert!(d.is_none());
    assert!(
        err.contains("cannot connect to the endpoint")
            && err.contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
    assert!(err.contains("gave up after 3 tries"), "{err}");
    assert_eq!(t.steps.last().unwrap().kind, StepKind::Error);
}

#[tokio::test]
async fn cancelling_ends_a_waiting_attempt() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let stub = start_stub(vec![
        tool_call("s", "list", "{}", 1, 1).delayed(Duration::from_secs(30))
    ])
    .await;
    let mut cfg = fast_config(&stub.base_url);
    cfg.request_timeout = Duration::from_secs(60);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c.cancel();
    });
    let (t, d, _) = run(cfg, &ws, &dir.path().join("results/cancel"), &cancel).await;
    assert_eq!(t.exit, Exit::Cancelled);
    assert!(d.is_none());
}

#[tokio::test]
async fn tools_run_in_the_sandbox_where_hidden_files_do_not_exist() {
    if distdebug::agent::sandbox::bwrap().is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "bubblewrap must be installed on CI"
        );
        eprintln!("skipping: bubblewrap (bwrap) is not installed");
        return;
    }
    let dir = scratch();
    let (inc, ws) = incident_and_workspace(dir.path());
    // A link planted in the workspace towards the labels: path checks alone would say
    // "leads outside"; in the sandbox the labels are simply not there.
    std::os::unix::fs::symlink(
        inc.join("labels.json").canonicalize().unwrap(),
        ws.join("peek.json"),
    )
    .unwrap();
    let stub = start_stub(vec![
        tool_call("a", "read", r#"{"path": "peek.json"}"#, 10, 1),
        tool_call(
            "b",
            "read",
            r#"{"path": "src/lease.py", "start_line": 15, "end_line": 15}"#,
            10,
            1,
        ),
        tool_call("c", "submit", r#"{"summary": "s", "blocks": []}"#, 10, 1),
    ])
    .await;
    let mut cfg = fast_config(&stub.base_url);
    cfg.tools = distdebug::agent::tools::ToolRunner::Sandboxed {
        exe: env!("CARGO_BIN_EXE_distdebug").into(),
        hide: vec![dir.path().join("incidents")],
    };
    let (t, _, err) = run(
        cfg,
        &ws,
        &dir.path().join("results/sandboxed"),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(t.exit, Exit::Submitted, "{err}");
    let texts: Vec<&str> = t.steps.iter().filter_map(|s| s.text.as_deref()).collect();
    assert!(texts[0].contains("peek.json: no such file"), "{texts:?}");
    assert!(
        texts[1].contains("expiry = now + self.ttl * 1000"),
        "{texts:?}"
    );
}

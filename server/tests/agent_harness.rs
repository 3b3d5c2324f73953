//! The harness agents (`--agent codex|opencode|mini-swe-agent`) through the whole attempt path
//! without the real packages: small stand-in programs replay native trajectories recorded from
//! the real harnesses (tests/fixtures/harnesses/), slowly, so that the live import, the
//! per-reply tokens, distdebug's step budget, a diagnosis given only as the final answer and
//! the isolated home can be checked in `cargo test`. tests/e2e-harnesses.sh runs the real ones.

mod support;

use distdebug::agent::harness::Kind;
use distdebug::agent::options::AgentOptions;
use distdebug::agent::AgentSpec;
use distdebug::attempt::{Diagnosis, Exit, Step, StepKind, Trajectory};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;
use tokio_util::sync::CancellationToken;

/// A stand-in program: `--version` prints VERSION; otherwise it appends the lines of `replay`
/// to TARGET (a shell expression) one by one, 50 ms apart, then waits a second.
fn stand_in(dir: &Path, name: &str, version: &str, target: &str, replay: &Path) -> PathBuf {
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{name} {version}'; exit 0; fi\n\
         echo \"$HOME\" > \"$DISTDEBUG_OUTPUT/home-seen\"\n\
         target={target}\nmkdir -p \"$(dirname \"$target\")\"\n\
         while IFS= read -r line; do printf '%s\\n' \"$line\" >> \"$target\"; sleep 0.05; done < '{}'\n\
         sleep 1\n",
        replay.display()
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/harnesses").join(name)
}

fn options(kind: Kind, program: &Path, max_steps: Option<u32>) -> AgentOptions {
    let mut o = AgentOptions {
        model: Some("scripted-model".into()),
        endpoint: Some("http://127.0.0.1:9/v1".into()),
        // The stand-ins need nothing the sandbox would hide; agent_external tests the sandbox.
        no_sandbox: true,
        max_steps,
        timeout_secs: Some(60.0),
        ..Default::default()
    };
    match kind {
        Kind::Codex => o.config.harness.codex = Some(program.to_path_buf()),
        Kind::OpenCode => o.config.harness.opencode = Some(program.to_path_buf()),
        Kind::MiniSwe => o.config.harness.mini_swe_agent = Some(program.to_path_buf()),
    }
    o
}

struct Ran {
    t: Trajectory,
    d: Option<Diagnosis>,
    /// Seconds before the attempt ended at which each step was recorded.
    ahead: Vec<f64>,
    dir: PathBuf,
}

async fn run(spec: AgentSpec, ws: &Path, results: &Path) -> Ran {
    let seen: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let s2 = seen.clone();
    let listener: distdebug::attempt::trajectory::StepListener =
        Box::new(move |_s: &Step| s2.lock().unwrap().push(Instant::now()));
    let s = distdebug::run::run_attempt(
        &spec,
        ws,
        results,
        1,
        Some(listener),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let end = Instant::now();
    let ahead = seen
        .lock()
        .unwrap()
        .iter()
        .map(|t| (end - *t).as_secs_f64())
        .collect();
    Ran {
        t: Trajectory::load(&s.dir.join("trajectory.json")).unwrap(),
        d: Diagnosis::load(&s.dir.join("diagnosis.json")).ok(),
        ahead,
        dir: s.dir,
    }
}

#[tokio::test]
async fn a_codex_rollout_is_followed_live_with_the_tokens_of_each_reply() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let codex = stand_in(
        dir.path(),
        "codex",
        "0.171.0",
        "\"$CODEX_HOME/sessions/2026/12/01/rollout-2026-12-01T20-00-00-x.jsonl\"",
        &fixture("codex-rollout.jsonl"),
    );
    let spec = AgentSpec::build("codex", &options(Kind::Codex, &codex, None)).unwrap();
    let info = spec.run_info();
    assert_eq!(info.harness, "codex");
    assert_eq!(info.extra["harness_version"], "0.171.0");
    assert_eq!(info.endpoint_host.as_deref(), Some("127.0.0.1:9"));
    let r = run(spec, &ws, &dir.path().join("results/codex")).await;

    // The stand-in wrote no diagnosis.json and its answer holds none: an error, with all steps.
    assert_eq!(r.t.exit, Exit::Error);
    assert!(r.d.is_none());
    let kinds: Vec<StepKind> = r.t.steps.iter().map(|s| s.kind).collect();
    for k in [
        StepKind::Action,
        StepKind::Observation,
        StepKind::Thought,
        StepKind::Submit,
    ] {
        assert!(kinds.contains(&k), "{kinds:?}");
    }
    assert_eq!(
        (r.t.usage.prompt_tokens, r.t.usage.completion_tokens),
        (4822, 98)
    );
    let per_step: u64 = r.t.steps.iter().filter_map(|s| s.tokens).sum();
    assert_eq!(per_step, 4920);
    // Steps were recorded while the harness still ran (it waits a second after its last line).
    let early = r.ahead.iter().filter(|a| **a > 0.5).count();
    assert!(
        early >= 6,
        "steps recorded well before the end: {:?}",
        r.ahead
    );
    // Its home was inside the attempt, and its config names the endpoint, never a key.
    let home = std::fs::read_to_string(r.dir.join("agent/home-seen")).unwrap();
    assert!(Path::new(home.trim()).starts_with(&r.dir), "{home}");
    let config = std::fs::read_to_string(r.dir.join("agent/home/codex/config.toml")).unwrap();
    assert!(
        config.contains("base_url = \"http://127.0.0.1:9/v1\""),
        "{config}"
    );
    assert!(config.contains("wire_api = \"responses\""));
}

#[tokio::test]
async fn distdebug_stops_a_harness_past_the_step_budget() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let codex = stand_in(
        dir.path(),
        "codex",
        "0.171.0",
        "\"$CODEX_HOME/sessions/2026/12/01/rollout-x.jsonl\"",
        &fixture("codex-rollout.jsonl"),
    );
    let spec = AgentSpec::build("codex", &options(Kind::Codex, &codex, Some(2))).unwrap();
    let started = Instant::now();
    let r = run(spec, &ws, &dir.path().join("results/budget")).await;
    assert_eq!(r.t.exit, Exit::Budget);
    let last = r.t.steps.last().unwrap();
    assert_eq!(last.kind, StepKind::Error);
    assert!(
        last.text
            .as_deref()
            .unwrap_or("")
            .contains("step budget of 2"),
        "{last:?}"
    );
    // Killed on the third reply, long before its replay would have ended.
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(!r.t.steps.iter().any(|s| s.kind == StepKind::Submit));
}

#[tokio::test]
async fn an_opencode_answer_holding_the_diagnosis_is_submitted() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    // The recorded run, with its final text replaced by a diagnosis in a fenced block.
    let text = std::fs::read_to_string(fixture("opencode-run.jsonl")).unwrap();
    let answer = "Found it.\n```json\n{\"summary\": \"ttl\", \"blocks\": [{\"path\": \"src/lease.py\", \"start_line\": 13, \"end_line\": 18}]}\n```";
    let replaced = text.replace(
        "I wrote the diagnosis to $DISTDEBUG_OUTPUT/diagnosis.json: src/lease.py lines 13-18.",
        &answer.replace('\n', "\\n").replace('"', "\\\""),
    );
    assert_ne!(replaced, text);
    let replay = dir.path().join("opencode-events.jsonl");
    std::fs::write(&replay, replaced).unwrap();
    let opencode = stand_in(dir.path(), "opencode", "1.18.33", "/dev/stdout", &replay);
    let spec = AgentSpec::build("opencode", &options(Kind::OpenCode, &opencode, None)).unwrap();
    let r = run(spec, &ws, &dir.path().join("results/opencode")).await;
    assert_eq!(r.t.exit, Exit::Submitted);
    let d = r.d.expect("the diagnosis is taken from the answer");
    assert_eq!((d.blocks[0].start_line, d.blocks[0].end_line), (13, 18));
    assert_eq!(
        (r.t.usage.prompt_tokens, r.t.usage.completion_tokens),
        (4822, 98)
    );
    let read =
        r.t.steps
            .iter()
            .find(|s| s.tool.as_deref() == Some("read"))
            .unwrap();
    assert_eq!(read.paths_read[0].start_line, Some(10));
    let config = std::fs::read_to_string(r.dir.join("agent/home/opencode.json")).unwrap();
    assert!(
        config.contains("\"baseURL\": \"http://127.0.0.1:9/v1\""),
        "{config}"
    );
}

#[test]
fn an_unknown_agent_lists_the_harnesses() {
    let err = AgentSpec::build("swe-agent", &AgentOptions::default()).unwrap_err();
    assert!(err.contains("mini-swe-agent, codex, opencode"), "{err}");
}

//! External agents: the environment contract, the live trajectory, crashes, garbage,
//! timeouts and cancellation (with the whole process group ended), the mini-swe-agent
//! importer, and the bubblewrap sandbox hiding labels and other attempts.

mod support;

use distdebug::agent::external::ExternalConfig;
use distdebug::agent::AgentSpec;
use distdebug::attempt::{Diagnosis, Exit, Step, StepKind, Trajectory};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::*;
use tokio_util::sync::CancellationToken;

fn agent(script: &str) -> ExternalConfig {
    let mut cfg = ExternalConfig::new(vec!["sh".into(), "-c".into(), script.into()]);
    cfg.timeout = Some(Duration::from_secs(30));
    cfg.sandbox.enabled = false;
    cfg
}

struct Ran {
    t: Trajectory,
    d: Option<Diagnosis>,
    err: String,
    dir: PathBuf,
}

async fn run(
    cfg: ExternalConfig,
    ws: &Path,
    results: &Path,
    listener: Option<distdebug::attempt::trajectory::StepListener>,
    cancel: &CancellationToken,
) -> Ran {
    let s =
        distdebug::run::run_attempt(&AgentSpec::External(cfg), ws, results, 1, listener, cancel)
            .await
            .unwrap();
    Ran {
        t: Trajectory::load(&s.dir.join("trajectory.json")).unwrap(),
        d: Diagnosis::load(&s.dir.join("diagnosis.json")).ok(),
        err: s.error.unwrap_or_default(),
        dir: s.dir,
    }
}

/// Whether a process is still running (a zombie counts as ended).
fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

const GOOD_DIAGNOSIS: &str =
    r#"{"summary":"ttl","blocks":[{"path":"src/lease.py","start_line":15,"end_line":15}]}"#;

#[tokio::test]
async fn follows_the_live_trajectory_and_passes_the_environment() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let results = dir.path().join("results/cmd");
    // SAFETY of the test: no other test in this binary reads this variable.
    std::env::set_var("DISTDEBUG_INCIDENTS", dir.path().join("incidents"));
    let script = format!(
        r#"set -e
out="$DISTDEBUG_OUTPUT"
env | grep '^DISTDEBUG_' | sort > "$out/env.txt"
pwd > "$out/pwd.txt"
echo '{{"kind":"action","tool":"bash","args":{{"command":"cat src/lease.py"}},"paths_read":[{{"path":"src/lease.py"}}]}}' >> "$out/trajectory.jsonl"
i=0
while [ ! -f "$out/ack" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
[ -f "$out/ack" ] || exit 7
printf '{{"kind":"observation","text":"ok"}}\n{{"kind":"thought","te' >> "$out/trajectory.jsonl"
printf 'xt":"torn line completed"}}\n' >> "$out/trajectory.jsonl"
echo '{GOOD_DIAGNOSIS}' > "$out/diagnosis.json"
echo '{{"incident":"tiny-lease","attempt":1,"agent":"x","model":"their-model","exit":"submitted","usage":{{"prompt_tokens":5,"completion_tokens":6,"cost_usd":0.01}},"steps":[{{"kind":"action"}},{{"kind":"observation"}},{{"kind":"thought"}},{{"kind":"submit","text":"done"}}]}}' > "$out/trajectory.json"
"#
    );
    // The agent waits until distdebug has seen its first step: only live following lets it finish.
    let ack = results.join("tiny-lease/attempt-1/agent/ack");
    let seen = Arc::new(Mutex::new(Vec::<Step>::new()));
    let seen2 = seen.clone();
    let listener: distdebug::attempt::trajectory::StepListener = Box::new(move |s: &Step| {
        seen2.lock().unwrap().push(s.clone());
        let _ = std::fs::write(&ack, "");
    });
    let r = run(
        agent(&script),
        &ws,
        &results,
        Some(listener),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Submitted, "{}", r.err);
    assert_eq!(
        r.d.unwrap().incident,
        "tiny-lease",
        "the incident is filled in"
    );
    let kinds: Vec<StepKind> = r.t.steps.iter().map(|s| s.kind).collect();
    use StepKind::*;
    assert_eq!(
        kinds,
        vec![Action, Observation, Thought, Submit],
        "{:#?}",
        r.t.steps
    );
    assert_eq!(r.t.steps[2].text.as_deref(), Some("torn line completed"));
    assert_eq!(r.t.steps[0].paths_read[0].path, "src/lease.py");
    assert_eq!(seen.lock().unwrap().len(), 4);
    assert_eq!(
        (r.t.usage.prompt_tokens, r.t.usage.completion_tokens),
        (5, 6)
    );
    assert_eq!(r.t.model.as_deref(), Some("their-model"));

    let env = std::fs::read_to_string(r.dir.join("agent/env.txt")).unwrap();
    let ws_real = ws.canonicalize().unwrap();
    for want in [
        format!("DISTDEBUG_WORKSPACE={}", ws_real.display()),
        format!(
            "DISTDEBUG_REPORT={}",
            ws_real.join(".distdebug/report.md").display()
        ),
        format!(
            "DISTDEBUG_EVIDENCE={}",
            ws_real.join(".distdebug/evidence").display()
        ),
        format!(
            "DISTDEBUG_OUTPUT={}",
            r.dir.join("agent").canonicalize().unwrap().display()
        ),
        "DISTDEBUG_INCIDENT=tiny-lease".to_string(),
    ] {
        assert!(env.lines().any(|l| l == want), "missing {want} in\n{env}");
    }
    assert!(
        !env.contains("DISTDEBUG_INCIDENTS"),
        "the incidents folder is not passed on:\n{env}"
    );
    assert_eq!(
        std::fs::read_to_string(r.dir.join("agent/pwd.txt"))
            .unwrap()
            .trim(),
        ws_real.to_str().unwrap()
    );
}

#[tokio::test]
async fn crashes_garbage_and_silence_are_errors_with_reasons() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let results = dir.path().join("results");

    let r = run(
        agent("echo boom >&2; exit 3"),
        &ws,
        &results.join("crash"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Error);
    assert!(
        r.err.contains("status 3") && r.err.contains("boom"),
        "{}",
        r.err
    );

    let r = run(
        agent("kill -9 $$"),
        &ws,
        &results.join("killed"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Error);
    assert!(r.err.contains("signal 9"), "{}", r.err);

    let garbage = r#"o="$DISTDEBUG_OUTPUT"; echo 'not json' > "$o/diagnosis.json"; echo '{{{' > "$o/trajectory.json"; echo 'garbage' >> "$o/trajectory.jsonl""#;
    let r = run(
        agent(garbage),
        &ws,
        &results.join("garbage"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Error);
    assert!(r.d.is_none());
    assert!(
        r.err.contains("diagnosis.json") && r.err.contains("not valid JSON"),
        "{}",
        r.err
    );
    let texts: Vec<String> = r.t.steps.iter().filter_map(|s| s.text.clone()).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("1 line(s) of the agent's trajectory.jsonl were not steps")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("trajectory.json is not valid JSON")),
        "{texts:?}"
    );

    let schema_bad = r#"echo '{"blocks":[{"path":"/etc/passwd","start_line":1,"end_line":1}]}' > "$DISTDEBUG_OUTPUT/diagnosis.json""#;
    let r = run(
        agent(schema_bad),
        &ws,
        &results.join("schema"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Error);
    assert!(r.err.contains("absolute"), "{}", r.err);

    let r = run(
        agent("true"),
        &ws,
        &results.join("silent"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Error);
    assert!(r.err.contains("wrote no diagnosis.json"), "{}", r.err);

    let mut missing = agent("x");
    missing.argv = vec!["/nonexistent/agent-binary".into()];
    let r = run(
        missing,
        &ws,
        &results.join("missing"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Error);
    assert!(
        r.err.contains("cannot start the agent command"),
        "{}",
        r.err
    );
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let mut cfg = agent(r#"sleep 60 & echo $! > "$DISTDEBUG_OUTPUT/bg.pid"; sleep 60"#);
    cfg.timeout = Some(Duration::from_millis(700));
    let r = run(
        cfg,
        &ws,
        &dir.path().join("results"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Budget);
    assert!(r
        .t
        .steps
        .last()
        .unwrap()
        .text
        .as_deref()
        .unwrap()
        .contains("timeout"));
    let pid = std::fs::read_to_string(r.dir.join("agent/bg.pid")).unwrap();
    assert!(
        !alive(&pid),
        "the agent's background child {pid} outlived the attempt"
    );
}

#[tokio::test]
async fn cancelling_ends_the_agent_and_its_children() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let script = r#"o="$DISTDEBUG_OUTPUT"; sleep 60 & echo $! > "$o/bg.pid"; echo '{"kind":"thought","text":"started"}' >> "$o/trajectory.jsonl"; wait"#;
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let listener: distdebug::attempt::trajectory::StepListener =
        Box::new(move |_s: &Step| c.cancel());
    let r = run(
        agent(script),
        &ws,
        &dir.path().join("results"),
        Some(listener),
        &cancel,
    )
    .await;
    assert_eq!(r.t.exit, Exit::Cancelled);
    assert!(r.d.is_none());
    let pid = std::fs::read_to_string(r.dir.join("agent/bg.pid")).unwrap();
    assert!(!alive(&pid), "the agent's child {pid} outlived the cancel");
}

#[tokio::test]
async fn a_stock_mini_swe_agent_trajectory_is_imported() {
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let traj = serde_json::json!({
        "info": {"model_stats": {"instance_cost": 0.02, "api_calls": 2},
                 "config": {"model": {"model_name": "local/qwen"}}, "exit_status": "Submitted", "submission": ""},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "look", "extra": {"actions": [{"command": "sed -n '10,20p' src/lease.py"}],
              "response": {"usage": {"prompt_tokens": 300, "completion_tokens": 40}}}},
            {"role": "user", "content": "obs", "extra": {"raw_output": "def grant", "returncode": 0}},
            {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": "done"}}
        ],
        "trajectory_format": "mini-swe-agent-1.1"
    });
    let script = format!(
        "echo '{}' > \"$DISTDEBUG_OUTPUT/trajectory.json\"; echo '{GOOD_DIAGNOSIS}' > \"$DISTDEBUG_OUTPUT/diagnosis.json\"",
        traj
    );
    let r = run(
        agent(&script),
        &ws,
        &dir.path().join("results"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Submitted, "{}", r.err);
    let kinds: Vec<StepKind> = r.t.steps.iter().map(|s| s.kind).collect();
    use StepKind::*;
    assert_eq!(kinds, vec![Thought, Action, Observation, Submit]);
    assert_eq!(r.t.steps[1].paths_read[0].start_line, Some(10));
    assert_eq!(r.t.steps[0].tokens, Some(340));
    assert_eq!((r.t.usage.prompt_tokens, r.t.usage.cost_usd), (300, 0.02));
    assert_eq!(r.t.model.as_deref(), Some("local/qwen"));
}

/// The sandbox needs bubblewrap; CI installs it (`.ci/install`), so there a missing one fails.
fn sandbox_available() -> bool {
    if distdebug::agent::sandbox::bwrap().is_some() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "bubblewrap must be installed on CI"
    );
    eprintln!("skipping: bubblewrap (bwrap) is not installed");
    false
}

#[tokio::test]
async fn the_sandbox_hides_labels_and_other_attempts() {
    if !sandbox_available() {
        return;
    }
    let dir = scratch();
    let (inc, ws) = incident_and_workspace(dir.path());
    let labels = inc.join("labels.json").canonicalize().unwrap();
    let results = dir.path().join("results/sandboxed");
    let other = results.join("other-incident/attempt-1/diagnosis.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::write(&other, GOOD_DIAGNOSIS).unwrap();
    let script = r#"o="$DISTDEBUG_OUTPUT"
cat "$LABELS" > "$o/labels.txt" 2> "$o/labels.err"; echo $? > "$o/labels.rc"
cat "$OTHER" > /dev/null 2>&1; echo $? > "$o/other.rc"
touch "$DISTDEBUG_WORKSPACE/scratch" 2>/dev/null; echo $? > "$o/ws.rc"
cat /proc/net/dev > "$o/net.txt"
ls /proc | grep -c '^[0-9]' > "$o/procs.txt"
printf '{"exit":"submitted","steps":[{"kind":"action","tool":"bash","args":{"command":"cat %s"},"paths_read":[{"path":"%s"}]}]}' "$LABELS" "$LABELS" > "$o/trajectory.json"
echo '{"blocks":[]}' > "$o/diagnosis.json"
"#;
    let mut cfg = agent(script);
    cfg.sandbox.enabled = true;
    cfg.sandbox.hide = vec![dir.path().join("incidents")];
    cfg.env
        .insert("LABELS".into(), labels.display().to_string());
    cfg.env.insert("OTHER".into(), other.display().to_string());
    let r = run(cfg.clone(), &ws, &results, None, &CancellationToken::new()).await;
    assert_eq!(r.t.exit, Exit::Submitted, "{}", r.err);
    let read = |name: &str| std::fs::read_to_string(r.dir.join("agent").join(name)).unwrap();
    assert_ne!(
        read("labels.rc").trim(),
        "0",
        "labels.json must be unreadable inside the sandbox"
    );
    assert_eq!(read("labels.txt"), "");
    assert!(
        read("labels.err").contains("No such file"),
        "{}",
        read("labels.err")
    );
    assert_ne!(
        read("other.rc").trim(),
        "0",
        "other attempts must be invisible"
    );
    assert_ne!(read("ws.rc").trim(), "0", "the workspace must be read-only");
    assert!(!ws.join("scratch").exists());
    let net = read("net.txt");
    assert!(
        net.contains("lo:") && net.lines().filter(|l| l.contains(':')).count() == 1,
        "only loopback: {net}"
    );
    let procs: u32 = read("procs.txt").trim().parse().unwrap();
    assert!(
        procs < 10,
        "a PID namespace shows only the agent's processes, saw {procs}"
    );
    // The attempt that tried is on record with what it tried to read.
    assert_eq!(
        r.t.steps[0].paths_read[0].path,
        labels.display().to_string()
    );
    // …and the leakage guard flags it, naming the step and the rule.
    let incident = distdebug::incident::Incident::load(&inc).unwrap();
    let in_repo = |_: &str| false;
    let ctx = distdebug::score::leakage::LeakageContext::for_incident(&incident, vec![], &in_repo);
    let verdict = distdebug::score::leakage::check(&ctx, &r.t.steps);
    assert!(
        verdict.flagged,
        "the attempt that tried to read labels.json is flagged"
    );
    assert!(
        verdict
            .reasons
            .iter()
            .any(|f| f.step == 0 && f.rule == "labels"),
        "{:?}",
        verdict.reasons
    );

    // The same agent unconfined reads the labels: the check above is not vacuous.
    cfg.sandbox.enabled = false;
    let r = run(
        cfg,
        &ws,
        &dir.path().join("results/unconfined"),
        None,
        &CancellationToken::new(),
    )
    .await;
    let rc = std::fs::read_to_string(r.dir.join("agent/labels.rc")).unwrap();
    assert_eq!(rc.trim(), "0");
}

#[tokio::test]
async fn a_private_copy_is_writable_and_the_workspace_stays_untouched() {
    if !sandbox_available() {
        return;
    }
    let dir = scratch();
    let (_inc, ws) = incident_and_workspace(dir.path());
    let script = r#"echo scratch > "$DISTDEBUG_WORKSPACE/notes.txt" && echo '{"blocks":[]}' > "$DISTDEBUG_OUTPUT/diagnosis.json""#;
    let mut cfg = agent(script);
    cfg.sandbox.enabled = true;
    cfg.writable_copy = true;
    let r = run(
        cfg,
        &ws,
        &dir.path().join("results"),
        None,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(r.t.exit, Exit::Submitted, "{}", r.err);
    assert!(!ws.join("notes.txt").exists());
}

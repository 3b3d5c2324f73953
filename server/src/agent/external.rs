//! External agents: any command (or one of the benchmark's harnesses, see `harness`) run in the
//! workspace, sandboxed, with the `DISTDEBUG_*` environment. It writes `diagnosis.json` and
//! `trajectory.json` into `$DISTDEBUG_OUTPUT` and may append `trajectory.jsonl` there, which
//! is followed live into the attempt's own trajectory. Timeouts, crashes, cancellation and
//! garbage output all end as an attempt with an exit reason; the agent's whole process group
//! is killed when the attempt ends.

use super::mini_swe;
use super::sandbox::net::Endpoint;
use super::sandbox::{self, Mounts, Network, SandboxPolicy};
use super::{AgentInput, AgentOutput};
use crate::attempt::layout::{DIAGNOSIS, TRAJECTORY, TRAJECTORY_LIVE};
use crate::attempt::{Diagnosis, Exit, Step, StepKind, TrajectoryRecorder, Usage};
use crate::util::untrusted::{self, Refused};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The folder inside an attempt that the agent writes (`$DISTDEBUG_OUTPUT`); distdebug's own
/// files sit beside it, out of the agent's reach.
pub const AGENT_OUTPUT_DIR: &str = "agent";
pub const STDOUT_LOG: &str = "agent-stdout.log";
pub const STDERR_LOG: &str = "agent-stderr.log";
/// How often the live trajectory is polled.
const FOLLOW_EVERY: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrajectoryFormat {
    /// Decided by the file: mini-swe-agent when it says so, else distdebug's own.
    Auto,
    Distdebug,
    MiniSwe,
}

impl TrajectoryFormat {
    pub fn parse(s: &str) -> Result<TrajectoryFormat, String> {
        match s {
            "auto" => Ok(TrajectoryFormat::Auto),
            "distdebug" => Ok(TrajectoryFormat::Distdebug),
            "mini-swe-agent" | "mini-swe-agent-1.1" | "mini-swe-agent-1" => {
                Ok(TrajectoryFormat::MiniSwe)
            }
            other => Err(format!(
                "trajectory_format {other:?} is not one of: auto, distdebug, mini-swe-agent-1.1"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExternalConfig {
    /// The agent's name in trajectories (default `command`).
    pub name: String,
    /// The program and its arguments.
    pub argv: Vec<String>,
    pub timeout: Option<Duration>,
    pub trajectory_format: TrajectoryFormat,
    /// Give the agent a private writable copy of the workspace instead of the read-only one.
    pub writable_copy: bool,
    pub env: BTreeMap<String, String>,
    pub sandbox: SandboxPolicy,
    /// The model the agent uses, when known (recorded when its trajectory names none).
    pub model: Option<String>,
    /// The model endpoint's base URL: the one host the sandbox lets the agent reach.
    pub endpoint: Option<String>,
    /// One of the benchmark's harnesses (`--agent mini-swe-agent|codex|opencode`): its
    /// command, config and native trajectory replace `argv` and `trajectory.json`.
    pub harness: Option<super::harness::Harness>,
}

impl ExternalConfig {
    pub fn new(argv: Vec<String>) -> ExternalConfig {
        ExternalConfig {
            name: "command".to_string(),
            argv,
            timeout: Some(Duration::from_secs(30 * 60)),
            trajectory_format: TrajectoryFormat::Auto,
            writable_copy: false,
            env: BTreeMap::new(),
            sandbox: SandboxPolicy::default(),
            model: None,
            endpoint: None,
            harness: None,
        }
    }
}

/// How the process ended.
enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
    /// A harness went past distdebug's step, token or cost budget (checked on its live steps).
    OverBudget(String),
}

/// Runs the external agent on one attempt.
pub async fn run(
    cfg: &ExternalConfig,
    input: &AgentInput,
    recorder: &mut TrajectoryRecorder,
    cancel: &CancellationToken,
) -> AgentOutput {
    match run_inner(cfg, input, recorder, cancel).await {
        Ok(out) => out,
        Err(e) => AgentOutput {
            diagnosis: None,
            exit: Exit::Error,
            usage: Usage::default(),
            model: cfg.model.clone(),
            error: Some(e),
        },
    }
}

async fn run_inner(
    cfg: &ExternalConfig,
    input: &AgentInput,
    recorder: &mut TrajectoryRecorder,
    cancel: &CancellationToken,
) -> Result<AgentOutput, String> {
    if cancel.is_cancelled() {
        return Ok(output(
            Exit::Cancelled,
            None,
            Usage::default(),
            cfg.model.clone(),
            None,
        ));
    }
    let dirs = AgentDirs::make(cfg, input)?;
    let (workspace, out_dir) = (&dirs.workspace, &dirs.out_dir);

    // A harness writes its config into the attempt and says how to start it.
    let launch = match &cfg.harness {
        Some(h) => Some(h.prepare(out_dir, &input.output_dir, workspace, input)?),
        None => None,
    };
    let mut agent = start_agent(cfg, launch.as_ref(), input, workspace, out_dir)?;
    let pid = agent.child.id();

    let mut follower = Follower::new(out_dir.join(TRAJECTORY_LIVE));
    let mut native = launch
        .as_ref()
        .map(|l| super::harness::live::LiveImport::new(l.native.clone(), workspace));
    let ending = wait_for_end(
        &mut agent.child,
        pid,
        cfg,
        cancel,
        recorder,
        &mut follower,
        native.as_mut(),
    )
    .await?;
    // The leader may be gone while its children live on: end the whole group either way,
    // then whatever left the group.
    kill_group(pid);
    let _ = agent.child.wait().await;
    agent.containment.kill_all();
    drop(agent.containment);
    follower.poll(recorder);
    follower.finish(recorder);
    for log in [STDOUT_LOG, STDERR_LOG] {
        redact_log(&input.output_dir.join(log));
    }
    if let Some(g) = agent.gate {
        record_network(g.finish(), cfg.sandbox.network, recorder, &input.output_dir)?;
    }

    let (diagnosis, facts) = what_it_left(
        cfg,
        input,
        &dirs,
        native.as_mut(),
        follower.recorded,
        recorder,
    );
    let out = exit_of(ending, diagnosis, facts, cfg, input, recorder);
    drop(dirs);
    Ok(out)
}

/// The folders of one agent run, canonical: the workspace it runs in and the output folder it
/// writes.
struct AgentDirs {
    workspace: PathBuf,
    out_dir: PathBuf,
    /// Held, not read: the temp folder of a private copy of the workspace, removed when the
    /// attempt ends.
    _copy: Option<tempfile::TempDir>,
}

impl AgentDirs {
    /// Creates the agent's output folder and, when the agent wants to write in the workspace,
    /// its private copy.
    fn make(cfg: &ExternalConfig, input: &AgentInput) -> Result<AgentDirs, String> {
        let out_dir = input.output_dir.join(AGENT_OUTPUT_DIR);
        std::fs::create_dir_all(&out_dir)
            .map_err(|e| format!("{}: cannot create: {e}", out_dir.display()))?;
        // A private copy lives in its own temp folder, removed when the attempt ends.
        let copy = if cfg.writable_copy {
            let tmp = tempfile::Builder::new()
                .prefix("distdebug-ws-")
                .tempdir()
                .map_err(|e| format!("cannot make a temp folder for the workspace copy: {e}"))?;
            let dst = tmp.path().join("workspace");
            copy_tree(&input.workspace, &dst)?;
            Some((tmp, dst))
        } else {
            None
        };
        let workspace = copy
            .as_ref()
            .map(|(_, d)| d.clone())
            .unwrap_or_else(|| input.workspace.clone());
        let workspace = workspace
            .canonicalize()
            .map_err(|e| format!("{}: cannot open the workspace: {e}", workspace.display()))?;
        let out_dir = out_dir
            .canonicalize()
            .map_err(|e| format!("{}: {e}", out_dir.display()))?;
        Ok(AgentDirs {
            workspace,
            out_dir,
            _copy: copy.map(|(tmp, _)| tmp),
        })
    }
}

/// The agent's process once started, and what must be ended with it.
struct StartedAgent {
    // Fields are dropped in this order: the child is killed before its cgroup is removed.
    child: tokio::process::Child,
    containment: sandbox::Containment,
    /// The sandbox's network gate (for `Network::Endpoint`).
    gate: Option<sandbox::net::Gate>,
}

/// Starts the agent (sandboxed unless the policy says not to) in the workspace, with the
/// `DISTDEBUG_*` environment, its output captured, in its own process group and cgroup.
fn start_agent(
    cfg: &ExternalConfig,
    launch: Option<&super::harness::Launch>,
    input: &AgentInput,
    workspace: &Path,
    out_dir: &Path,
) -> Result<StartedAgent, String> {
    let argv = launch.map(|l| &l.argv).unwrap_or(&cfg.argv);
    let Some((program, args)) = argv.split_first() else {
        return Err("no agent command configured: give --agent-command or [external] command in distdebug.toml".into());
    };
    let mut gate = None;
    let mut cmd = if cfg.sandbox.enabled {
        let (c, g) = sandboxed_command(cfg, argv, input, workspace, out_dir)?;
        gate = g;
        c
    } else {
        sandbox::warn_once(
            "running agents without a sandbox (--no-sandbox): they can read anything this user can",
        );
        let mut c = tokio::process::Command::new(program);
        c.args(args);
        c
    };
    let meta = workspace.join(crate::incident::prepare::META_DIR);
    cmd.current_dir(workspace)
        .env_remove("DISTDEBUG_INCIDENTS")
        .env_remove("DISTDEBUG_REPO_CACHE")
        .envs(&cfg.env)
        .envs(launch.iter().flat_map(|l| l.env.iter()))
        .env("DISTDEBUG_WORKSPACE", workspace)
        .env("DISTDEBUG_REPORT", meta.join("report.md"))
        .env("DISTDEBUG_EVIDENCE", meta.join("evidence"))
        .env("DISTDEBUG_OUTPUT", out_dir)
        .env("DISTDEBUG_INCIDENT", &input.incident)
        .env("DISTDEBUG_ATTEMPT", input.attempt.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(log_file(&input.output_dir.join(STDOUT_LOG))?)
        .stderr(log_file(&input.output_dir.join(STDERR_LOG))?)
        // Its own process group, so that everything it starts can be killed together.
        .process_group(0)
        .kill_on_drop(true);
    // And its own cgroup (or token), for what leaves the group.
    let containment = sandbox::Containment::new(MAX_PROCESSES);
    containment.apply(&mut cmd);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the agent command {program:?}: {e}"))?;
    Ok(StartedAgent {
        child,
        containment,
        gate,
    })
}

/// Waits until the agent exits, is cancelled, runs out of time or (a harness) goes over
/// budget, following its live trajectory (and a harness's native one) meanwhile.
async fn wait_for_end(
    child: &mut tokio::process::Child,
    pid: Option<u32>,
    cfg: &ExternalConfig,
    cancel: &CancellationToken,
    recorder: &mut TrajectoryRecorder,
    follower: &mut Follower,
    mut native: Option<&mut super::harness::live::LiveImport>,
) -> Result<Ending, String> {
    let deadline = cfg.timeout.map(|t| tokio::time::Instant::now() + t);
    let ending = loop {
        tokio::select! {
            status = child.wait() => match status {
                Ok(s) => break Ending::Exited(s),
                Err(e) => { kill_group(pid); return Err(format!("cannot wait for the agent: {e}")) }
            },
            _ = cancel.cancelled() => break Ending::Cancelled,
            _ = sleep_until_opt(deadline) => break Ending::TimedOut,
            _ = tokio::time::sleep(FOLLOW_EVERY) => {
                follower.poll(recorder);
                if let Some(n) = native.as_mut() {
                    n.poll(recorder);
                    if let Some(why) = cfg.harness.as_ref().and_then(|h| over_budget(h, &n.last)) {
                        break Ending::OverBudget(why);
                    }
                }
            }
        }
    };
    Ok(ending)
}

/// What the ended agent left: its diagnosis, and the facts its exit is judged by. Steps of its
/// final trajectory that the live file did not carry (`recorded` did) are recorded here.
fn what_it_left(
    cfg: &ExternalConfig,
    input: &AgentInput,
    dirs: &AgentDirs,
    mut native: Option<&mut super::harness::live::LiveImport>,
    recorded: usize,
    recorder: &mut TrajectoryRecorder,
) -> (Result<Diagnosis, String>, Facts) {
    let traj = match native.as_mut() {
        Some(n) => n.finish(recorder).map(|t| {
            Some(AgentTrajectory {
                steps: Vec::new(), // recorded by the live import
                usage: t.usage,
                model: t.model,
                exit: t.exit,
            })
        }),
        None => read_agent_trajectory(cfg, &dirs.out_dir, &dirs.workspace),
    };
    let (mut usage, mut model, mut agent_exit) = (Usage::default(), cfg.model.clone(), None);
    match traj {
        Ok(Some(t)) => {
            // Steps the live file did not carry (or all of them, for a final-only agent).
            for s in t.steps.into_iter().skip(recorded) {
                recorder.record(s);
            }
            usage = t.usage;
            model = t.model.or(model);
            agent_exit = t.exit;
        }
        Ok(None) => {}
        Err(e) => {
            recorder.record(Step::new(StepKind::Error).with_text(e));
        }
    }
    let diagnosis = load_diagnosis(&dirs.out_dir, input, native.as_deref(), recorder);
    let harness_used_up = match (&cfg.harness, native.as_deref()) {
        (Some(h), Some(n)) => {
            usage = h.priced(usage);
            used_up(h, &n.last)
        }
        _ => false,
    };
    let facts = Facts {
        usage,
        model,
        agent_exit,
        harness_used_up,
    };
    (diagnosis, facts)
}

/// The agent's `diagnosis.json` (with its incident filled in), or why there is none. A
/// harness that gave its diagnosis only as its final answer has it taken from there.
fn load_diagnosis(
    out_dir: &Path,
    input: &AgentInput,
    native: Option<&super::harness::live::LiveImport>,
    recorder: &mut TrajectoryRecorder,
) -> Result<Diagnosis, String> {
    if let Some(n) = native {
        let path = out_dir.join(DIAGNOSIS);
        if !path.exists() {
            if let Some(text) = super::harness::diagnosis_in_answer(&n.last.steps) {
                if let Err(e) = crate::util::fs::write_atomic(&path, text.as_bytes()) {
                    recorder.record(
                        Step::new(StepKind::Error)
                            .with_text(format!("{}: cannot write: {e}", path.display())),
                    );
                }
            }
        }
    }
    read_agent_diagnosis(out_dir).map(|mut d| {
        if d.incident.is_empty() {
            d.incident = input.incident.clone();
        }
        d
    })
}

/// What the end of an attempt is judged by, besides how the process ended.
struct Facts {
    usage: Usage,
    model: Option<String>,
    /// The exit the agent's own trajectory states.
    agent_exit: Option<Exit>,
    /// A harness that had used up a budget.
    harness_used_up: bool,
}

/// The attempt's exit from how the process ended and what it left.
fn exit_of(
    ending: Ending,
    diagnosis: Result<Diagnosis, String>,
    facts: Facts,
    cfg: &ExternalConfig,
    input: &AgentInput,
    recorder: &mut TrajectoryRecorder,
) -> AgentOutput {
    let Facts {
        usage,
        model,
        agent_exit,
        harness_used_up,
    } = facts;
    match ending {
        Ending::Cancelled => output(Exit::Cancelled, None, usage, model, None),
        Ending::OverBudget(why) => {
            recorder.record(Step::new(StepKind::Error).with_text(format!("stopped: {why}")));
            output(Exit::Budget, diagnosis.ok(), usage, model, None)
        }
        Ending::TimedOut => {
            let secs = cfg.timeout.map(|t| t.as_secs_f64()).unwrap_or_default();
            recorder.record(Step::new(StepKind::Error).with_text(format!(
                "stopped: the agent ran past its timeout of {secs} s and was killed"
            )));
            output(Exit::Budget, diagnosis.ok(), usage, model, None)
        }
        Ending::Exited(status) if !status.success() => {
            let why = describe_status(status);
            let tail = log_tail(&input.output_dir.join(STDERR_LOG));
            let msg = if tail.is_empty() {
                why
            } else {
                format!("{why}; its last output: {tail}")
            };
            output(Exit::Error, None, usage, model, Some(msg))
        }
        Ending::Exited(_) => match diagnosis {
            Ok(d) => output(Exit::Submitted, Some(d), usage, model, None),
            // An agent that stopped on its own budget and says so is a budget exit.
            Err(_) if matches!(agent_exit, Some(Exit::Budget)) => {
                output(Exit::Budget, None, usage, model, None)
            }
            Err(e) if harness_used_up => {
                recorder.record(
                    Step::new(StepKind::Error)
                        .with_text(format!("{e}; the harness had used up its budget")),
                );
                output(Exit::Budget, None, usage, model, None)
            }
            Err(e) => output(Exit::Error, None, usage, model, Some(e)),
        },
    }
}

/// Why a harness has gone past distdebug's budget, judged by what it recorded so far (the
/// harnesses without such limits of their own are held to them this way).
fn over_budget(
    h: &super::harness::Harness,
    seen: &super::harness::live::Imported,
) -> Option<String> {
    if seen.replies > h.max_steps {
        return Some(format!(
            "the harness made {} model calls, more than the step budget of {}",
            seen.replies, h.max_steps
        ));
    }
    let usage = h.priced(seen.usage);
    let used = usage.prompt_tokens + usage.completion_tokens;
    if let Some(max) = h.max_tokens.filter(|m| used > *m) {
        return Some(format!(
            "the harness used {used} tokens, more than the token budget of {max}"
        ));
    }
    match h.max_cost_usd {
        Some(max) if usage.cost_usd > max => Some(format!(
            "the harness cost {:.4} USD, more than the cost budget of {max} USD",
            usage.cost_usd
        )),
        _ => None,
    }
}

/// Whether a harness that ended without a diagnosis had used up a budget: it stopped at its
/// own limit (set to distdebug's), which it may not say in a form distdebug reads.
fn used_up(h: &super::harness::Harness, seen: &super::harness::live::Imported) -> bool {
    let usage = h.priced(seen.usage);
    seen.replies >= h.max_steps
        || h.max_tokens
            .is_some_and(|m| usage.prompt_tokens + usage.completion_tokens >= m)
        || h.max_cost_usd
            .is_some_and(|m| m > 0.0 && usage.cost_usd >= m)
}

/// The most processes an external agent may run at once (where cgroups allow a limit).
const MAX_PROCESSES: u64 = 512;
/// The file beside the agent's folder where distdebug records what the sandbox saw.
pub const SANDBOX_RECORD: &str = "sandbox.json";

/// The bubblewrap command for the agent, and the network gate it talks to (for
/// `Network::Endpoint`).
fn sandboxed_command(
    cfg: &ExternalConfig,
    argv: &[String],
    input: &AgentInput,
    workspace: &Path,
    out_dir: &Path,
) -> Result<(tokio::process::Command, Option<sandbox::net::Gate>), String> {
    let Some(bwrap) = sandbox::bwrap() else {
        sandbox::warn_once(super::options::NO_BWRAP);
        return Err(super::options::NO_BWRAP.to_string());
    };
    let Some((program, args)) = argv.split_first() else {
        return Err("no agent command configured".to_string());
    };
    let mut hide = sandbox::default_hidden(&input.output_dir);
    hide.extend(cfg.sandbox.hide.iter().cloned());
    let mut expose = cfg.sandbox.expose.clone();
    expose.extend(program_file(argv));
    // A harness's venv or node_modules (and the Python a venv links to).
    if let Some(h) = &cfg.harness {
        expose.extend(h.roots.iter().cloned());
    }
    let gate = if cfg.sandbox.network == Network::Endpoint {
        let endpoint = cfg.endpoint.as_deref().and_then(Endpoint::from_url);
        Some(
            sandbox::net::Gate::start(endpoint)
                .map_err(|e| format!("cannot start the sandbox's network gate: {e}"))?,
        )
    } else {
        None
    };
    let exe = distdebug_exe()?;
    if gate.is_some() {
        expose.push(exe.clone());
    }
    let mounts = Mounts {
        workspace: workspace.to_path_buf(),
        workspace_writable: cfg.writable_copy,
        output: Some(out_dir.to_path_buf()),
        hide,
        expose,
        network: cfg.sandbox.network,
        net_dir: gate.as_ref().map(|g| g.dir().to_path_buf()),
    };
    let mut c = tokio::process::Command::new(bwrap);
    c.args(sandbox::bwrap_args(&mounts)?).arg("--");
    if let Some(g) = &gate {
        c.arg(&exe).args(g.inside_args()).arg("--");
    }
    c.arg(program).args(args);
    Ok((c, gate))
}

/// The `distdebug` executable that serves `sandbox-net` inside the sandbox: this process's
/// own, or (when the library runs inside a test binary of `target/*/deps/`) the `distdebug`
/// binary built beside it.
fn distdebug_exe() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the distdebug executable for the sandbox: {e}"))?;
    if exe.file_name().is_some_and(|n| n == "distdebug") {
        // Canonical: it is bound into the sandbox at its real path and run from there.
        return exe
            .canonicalize()
            .map_err(|e| format!("{}: {e}", exe.display()));
    }
    let dir = exe.parent().unwrap_or(Path::new("."));
    [dir.join("distdebug"), dir.join("../distdebug")]
        .into_iter()
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
        .ok_or_else(|| {
            format!(
                "{}: is not distdebug, and no distdebug binary lies beside it to run the sandbox's network",
                exe.display()
            )
        })
}

/// The agent's own program file when the command names one by an absolute path (directly or
/// as the first word of `sh -c`), so that it is visible in the sandbox without exposing its
/// folder.
fn program_file(argv: &[String]) -> Option<PathBuf> {
    let first = match argv {
        [sh, c, line] if sh == "sh" && c == "-c" => line.split_whitespace().next()?,
        [program, ..] => program.as_str(),
        [] => return None,
    };
    let p = Path::new(first.trim_matches(['"', '\'']));
    (p.is_absolute() && p.is_file()).then(|| p.to_path_buf())
}

/// Records each connection the gate refused as an error step, and writes `sandbox.json`
/// beside the agent's folder (out of its reach) for the leakage guard.
fn record_network(
    blocked: Vec<sandbox::net::Blocked>,
    network: Network,
    recorder: &mut TrajectoryRecorder,
    attempt_dir: &Path,
) -> Result<(), String> {
    for b in &blocked {
        recorder.record(
            Step::new(StepKind::Error)
                .with_tool(
                    crate::score::leakage::SANDBOX_NETWORK_TOOL,
                    serde_json::json!({"target": b.target}),
                )
                .with_text(format!(
            "the sandbox refused a connection to {} ({}): only the model endpoint is reachable",
            b.target, b.method
        )),
        );
    }
    let record = serde_json::json!({ "network": network.as_str(), "blocked": blocked });
    let path = attempt_dir.join(SANDBOX_RECORD);
    crate::util::fs::write_atomic(&path, record.to_string().as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Rewrites an agent's captured output with every secret redacted (the agent has the key in
/// its environment and may print it; distdebug must not keep it).
fn redact_log(path: &Path) {
    let Ok(bytes) = std::fs::read(path) else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes);
    if let std::borrow::Cow::Owned(clean) = crate::util::secrets::redact(&text) {
        let _ = crate::util::fs::write_atomic(path, clean.as_bytes());
    }
}

/// The agent's `diagnosis.json`, read as an untrusted file and schema-checked.
fn read_agent_diagnosis(out_dir: &Path) -> Result<Diagnosis, String> {
    match untrusted::read_regular_text(&out_dir.join(DIAGNOSIS), untrusted::DIAGNOSIS_MAX) {
        Ok(text) => Diagnosis::parse(&text).map_err(|why| format!("{DIAGNOSIS}: {why}")),
        Err(Refused::Missing) => Err("the agent wrote no diagnosis.json".to_string()),
        Err(why) => Err(format!("the agent's {}", why.describe(DIAGNOSIS))),
    }
}

fn output(
    exit: Exit,
    diagnosis: Option<Diagnosis>,
    usage: Usage,
    model: Option<String>,
    error: Option<String>,
) -> AgentOutput {
    AgentOutput {
        diagnosis,
        exit,
        usage,
        model,
        error,
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending::<()>().await,
    }
}

fn log_file(path: &Path) -> Result<std::fs::File, String> {
    std::fs::File::create(path).map_err(|e| format!("{}: cannot create: {e}", path.display()))
}

/// Kills the agent's process group (the agent, bwrap and everything they started).
fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 0) else {
        return;
    };
    // SAFETY: kill(2) with a negative pid signals the process group we created for the
    // child (`process_group(0)` makes its pid the group id); it touches no memory.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the agent exited with status {code}"),
        (None, Some(sig)) => format!("the agent was killed by signal {sig}"),
        _ => "the agent ended abnormally".to_string(),
    }
}

/// The last few lines of the agent's stderr, for the error message.
fn log_tail(path: &Path) -> String {
    let text = crate::incident::read_text_lossy(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
    let chars: Vec<char> = tail.chars().collect();
    if chars.len() > 400 {
        chars[chars.len() - 400..].iter().collect()
    } else {
        tail
    }
}

/// What an agent's `trajectory.json` says.
struct AgentTrajectory {
    steps: Vec<Step>,
    usage: Usage,
    model: Option<String>,
    exit: Option<Exit>,
}

/// Reads the agent's final trajectory: `Ok(None)` when there is none, an error sentence
/// (recorded as a step; the attempt goes on) when it is garbage.
fn read_agent_trajectory(
    cfg: &ExternalConfig,
    out_dir: &Path,
    workspace: &Path,
) -> Result<Option<AgentTrajectory>, String> {
    let path = out_dir.join(TRAJECTORY);
    let text = match untrusted::read_regular(&path, untrusted::TRAJECTORY_MAX) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(Refused::Missing) => return Ok(None),
        Err(why) => {
            return Err(format!(
                "the agent's {}; it was not read",
                why.describe(TRAJECTORY)
            ))
        }
    };
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("the agent's trajectory.json is not valid JSON: {e}"))?;
    if !v.is_object() {
        return Err("the agent's trajectory.json is not a JSON object".to_string());
    }
    let mini = match cfg.trajectory_format {
        TrajectoryFormat::MiniSwe => true,
        TrajectoryFormat::Distdebug => false,
        TrajectoryFormat::Auto => mini_swe::is_mini_swe(&v),
    };
    if mini {
        let t = mini_swe::import(&v, workspace).map_err(|e| {
            format!("the agent's trajectory.json is not a mini-swe-agent trajectory: {e}")
        })?;
        return Ok(Some(AgentTrajectory {
            steps: t.steps,
            usage: t.usage,
            model: t.model,
            exit: t.exit,
        }));
    }
    // Our own format, read leniently: an agent only has to get the steps right.
    let steps = match v.get("steps") {
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|s| serde_json::from_value::<Step>(s.clone()).ok())
            .collect(),
        _ => Vec::new(),
    };
    let usage = v
        .get("usage")
        .and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok())
        .unwrap_or_default();
    let exit = v
        .get("exit")
        .and_then(|e| serde_json::from_value::<Exit>(e.clone()).ok());
    let model = v.get("model").and_then(|m| m.as_str()).map(str::to_string);
    Ok(Some(AgentTrajectory {
        steps,
        usage,
        model,
        exit,
    }))
}

/// Follows the agent's `trajectory.jsonl`: complete new lines are parsed as steps and
/// recorded; a torn last line waits for the next poll.
struct Follower {
    path: PathBuf,
    offset: u64,
    pending: Vec<u8>,
    /// Steps taken from the live file.
    recorded: usize,
    bad_lines: usize,
    /// The live file was refused (a link, a FIFO…) and said so once.
    refused: bool,
}

impl Follower {
    fn new(path: PathBuf) -> Follower {
        Follower {
            path,
            offset: 0,
            pending: Vec::new(),
            recorded: 0,
            bad_lines: 0,
            refused: false,
        }
    }

    fn poll(&mut self, recorder: &mut TrajectoryRecorder) {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = match untrusted::open_regular(&self.path, untrusted::TRAJECTORY_MAX) {
            Ok(f) => f,
            Err(Refused::Missing) => return,
            Err(why) => {
                if !self.refused {
                    self.refused = true;
                    recorder.record(Step::new(StepKind::Error).with_text(format!(
                        "the agent's {}; it is not followed",
                        why.describe(TRAJECTORY_LIVE)
                    )));
                }
                return;
            }
        };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut buf = Vec::new();
        // Bounded per poll, so an agent that floods the file cannot stall the loop.
        let Ok(n) = f.by_ref().take(4 << 20).read_to_end(&mut buf) else {
            return;
        };
        self.offset += n as u64;
        self.pending.extend_from_slice(&buf);
        while let Some(nl) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&line);
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Step>(line.trim()) {
                Ok(step) => {
                    recorder.record(step);
                    self.recorded += 1;
                }
                Err(_) => self.bad_lines += 1,
            }
        }
    }

    fn finish(&mut self, recorder: &mut TrajectoryRecorder) {
        if !self.pending.iter().all(|b| b.is_ascii_whitespace()) {
            self.bad_lines += 1;
        }
        if self.bad_lines > 0 {
            recorder.record(Step::new(StepKind::Error).with_text(format!(
                "{} line(s) of the agent's trajectory.jsonl were not steps and were skipped",
                self.bad_lines
            )));
        }
    }
}

/// Copies a workspace for an agent that wants to write in it. Symlinks are copied as links.
fn copy_tree(src: &Path, dst: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dst).map_err(|e| format!("{}: cannot create: {e}", dst.display()))?;
    let entries =
        std::fs::read_dir(src).map_err(|e| format!("{}: cannot list: {e}", src.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: cannot list: {e}", src.display()))?;
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        let ft = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", from.display()))?;
        if ft.is_dir() {
            copy_tree(&from, &to)?;
        } else if ft.is_symlink() {
            let target =
                std::fs::read_link(&from).map_err(|e| format!("{}: {e}", from.display()))?;
            std::os::unix::fs::symlink(&target, &to)
                .map_err(|e| format!("{}: {e}", to.display()))?;
        } else {
            std::fs::copy(&from, &to)
                .map_err(|e| format!("{}: cannot copy: {e}", from.display()))?;
        }
    }
    Ok(())
}

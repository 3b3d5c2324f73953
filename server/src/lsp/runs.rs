//! Driving a run in the background: its attempts one after the other, each on a thread of its
//! own, with progress, live steps (`distdebug/trajectoryStep`, candidate blocks as
//! diagnostics), cancellation, and a crash of the agent reported rather than fatal.

use super::attempts::{AttemptKey, AttemptState, StepBrief};
use super::outbox::Outgoing;
use super::progress::ProgressReporter;
use super::runner::{AgentPlan, AttemptRequest};
use super::session::{refresh_code_lenses, show_error, Session};
use crate::attempt::layout::{TRAJECTORY, TRAJECTORY_LIVE};
use crate::attempt::trajectory::{read_jsonl_steps, StepListener};
use crate::attempt::{Exit, Step, StepKind, Trajectory};
use crate::run::AttemptSummary;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::ls_types::MessageType;

/// Everything a run needs, fixed when `distdebug.runAgent` accepted it.
pub struct RunPlan {
    pub id: String,
    pub agent: AgentPlan,
    pub workspace: PathBuf,
    pub incident: String,
    pub config_dir: PathBuf,
    pub attempts: Vec<u32>,
    pub cancel: CancellationToken,
}

/// Starts the run in the background and returns at once.
pub fn spawn(session: Arc<Session>, plan: RunPlan) {
    tokio::spawn(drive(session, plan));
}

async fn drive(session: Arc<Session>, plan: RunPlan) {
    for &k in &plan.attempts {
        let key = AttemptKey {
            config: plan.agent.config.clone(),
            attempt: k,
        };
        if plan.cancel.is_cancelled() {
            let mut st = session.lock();
            if let Some(a) = st.attempts.get_mut(&key) {
                a.state = AttemptState::Cancelled;
                a.exit = Some(Exit::Cancelled);
                a.error = Some("cancelled before it started".into());
            }
            continue;
        }
        let progress = match begin_attempt(&session, &plan, &key) {
            Some(p) => p,
            None => break, // the workspace changed under the run: nothing left to show it in
        };
        let listener = step_listener(
            session.clone(),
            key.clone(),
            plan.id.clone(),
            progress.clone(),
        );
        let req = AttemptRequest {
            plan: plan.agent.clone(),
            workspace: plan.workspace.clone(),
            config_dir: plan.config_dir.clone(),
            attempt: k,
        };
        let runner = session.runner.clone();
        let cancel = plan.cancel.clone();
        // A thread and a runtime of the attempt's own: agents may compute or block for a
        // while, and a panic stays inside this task.
        let joined = tokio::task::spawn_blocking(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the agent's runtime: {e}"))?;
            rt.block_on(runner.run(req, listener, cancel))
        })
        .await;
        let outcome = match joined {
            Ok(r) => Outcome::Returned(r),
            Err(e) if e.is_panic() => Outcome::Crashed(panic_message(e.into_panic())),
            Err(e) => Outcome::Crashed(format!("the attempt's task ended: {e}")),
        };
        finish_attempt(&session, &plan, &key, outcome, &progress);
    }
    let mut st = session.lock();
    if let Some(r) = st.runs.get_mut(&plan.id) {
        r.active = false;
        r.progress_token = None;
    }
    drop(st);
    session.log(MessageType::INFO, format!("{} finished", plan.id));
}

enum Outcome {
    Returned(Result<AttemptSummary, String>),
    Crashed(String),
}

/// Marks the attempt running and begins its progress. `None` when the attempt is gone (the
/// server switched to another workspace meanwhile).
fn begin_attempt(
    session: &Session,
    plan: &RunPlan,
    key: &AttemptKey,
) -> Option<Arc<ProgressReporter>> {
    let mut st = session.lock();
    let same_workspace = st
        .workspace
        .as_ref()
        .is_some_and(|w| w.root == plan.workspace);
    if !same_workspace || !st.attempts.contains_key(key) {
        return None;
    }
    let caps = st.caps;
    let token = format!("distdebug/{}/{}/{}", plan.id, key.config, key.attempt);
    let progress = Arc::new(ProgressReporter::begin(
        &caps,
        &session.outbox,
        token.clone(),
        format!("distdebug: agent {} #{}", plan.agent.agent, key.attempt),
        Some(format!("{} on {}", plan.id, plan.incident)),
    ));
    if let Some(r) = st.runs.get_mut(&plan.id) {
        r.progress_token = progress.token().map(str::to_string);
    }
    if let Some(a) = st.attempts.get_mut(key) {
        a.state = AttemptState::Running;
        a.blocks.clear();
        a.steps.clear();
        a.score = None;
    }
    if st.current.as_ref() == Some(key) {
        st.refresh(&session.outbox);
    }
    Some(progress)
}

/// Called by the recorder on the agent's thread for every step, in order.
fn step_listener(
    session: Arc<Session>,
    key: AttemptKey,
    run: String,
    progress: Arc<ProgressReporter>,
) -> StepListener {
    Box::new(move |step: &Step| {
        let mut st = session.lock();
        let Some(a) = st.attempts.get_mut(&key) else {
            return;
        };
        let candidates_changed = a.record_step(step);
        // Where the agent looked shows as it reads, when asked for.
        let read = st.config.looked_hints && !step.paths_read.is_empty();
        let summary = StepBrief::from_step(step).summary();
        if (candidates_changed || read) && st.current.as_ref() == Some(&key) {
            st.refresh(&session.outbox);
        }
        progress.report(format!("step {}: {summary}", step.index));
        session.outbox.send(Outgoing::TrajectoryStep(json!({
            "config": key.config,
            "attempt": key.attempt,
            "run": run,
            "step": step,
        })));
    })
}

fn finish_attempt(
    session: &Session,
    plan: &RunPlan,
    key: &AttemptKey,
    outcome: Outcome,
    progress: &ProgressReporter,
) {
    let mut st = session.lock();
    let mut error_to_show = None;
    let end_message;
    {
        let Some(a) = st.attempts.get_mut(key) else {
            progress.end(Some("the workspace changed; the attempt is on disk".into()));
            return;
        };
        match outcome {
            Outcome::Returned(Ok(summary)) => {
                a.state = AttemptState::Finished;
                a.exit = Some(summary.exit);
                a.error = summary.error.clone();
                a.load_diagnosis();
                end_message = match summary.exit {
                    Exit::Submitted => format!("submitted {} block(s)", a.blocks.len()),
                    Exit::Cancelled => "cancelled".to_string(),
                    Exit::Budget => format!("out of budget, {} block(s)", a.blocks.len()),
                    Exit::Error => {
                        let why = summary.error.unwrap_or_else(|| "no reason given".into());
                        error_to_show = Some(format!(
                            "agent {} #{} failed: {why}",
                            plan.agent.agent, key.attempt
                        ));
                        format!("error: {why}")
                    }
                };
            }
            Outcome::Returned(Err(why)) => {
                a.state = AttemptState::Finished;
                a.exit = Some(Exit::Error);
                a.error = Some(why.clone());
                a.blocks.clear();
                error_to_show = Some(format!(
                    "agent {} #{} could not run: {why}",
                    plan.agent.agent, key.attempt
                ));
                end_message = format!("error: {why}");
            }
            Outcome::Crashed(why) => {
                let why = format!("the agent crashed: {why}");
                a.state = AttemptState::Crashed;
                a.exit = Some(Exit::Error);
                a.error = Some(why.clone());
                a.blocks.clear();
                if let Err(e) = record_crash(&a.dir, &plan.incident, key.attempt, &plan.agent, &why)
                {
                    eprintln!("distdebug lsp: {e}");
                }
                error_to_show = Some(format!(
                    "agent {} #{}: {why}",
                    plan.agent.agent, key.attempt
                ));
                end_message = "crashed".to_string();
            }
        }
    }
    if st.current.as_ref() == Some(key) {
        st.refresh(&session.outbox);
    }
    refresh_code_lenses(&st, &session.outbox);
    progress.end(Some(end_message.clone()));
    match error_to_show {
        Some(e) => show_error(&session.outbox, e),
        None => session.log(
            MessageType::INFO,
            format!("agent {} #{}: {end_message}", plan.agent.agent, key.attempt),
        ),
    }
}

/// Leaves an honest record of a crashed attempt: `trajectory.json` with exit `error`, the steps
/// recorded so far and a last error step, so that scoring and the status see what happened.
fn record_crash(
    dir: &Path,
    incident: &str,
    k: u32,
    agent: &AgentPlan,
    why: &str,
) -> Result<(), String> {
    let mut steps = read_jsonl_steps(&dir.join(TRAJECTORY_LIVE));
    let mut last = Step::new(StepKind::Error).with_text(why.to_string());
    last.index = steps.len() as u32;
    steps.push(last);
    let t = Trajectory {
        incident: incident.to_string(),
        attempt: k,
        agent: agent.agent.clone(),
        model: agent.model.clone(),
        started_at: String::new(),
        finished_at: crate::util::now_rfc3339(),
        exit: Exit::Error,
        usage: Default::default(),
        steps,
        extra: Default::default(),
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    crate::util::fs::write_json_atomic(&dir.join(TRAJECTORY), &t)
        .map_err(|e| format!("{}: {e}", dir.join(TRAJECTORY).display()))
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

//! `workspace/executeCommand`: the `distdebug.*` commands. Each applies its change to the
//! session at once, in the order the client sent the commands (see `ordering.rs`); only
//! `distdebug.openIncident`, which prepares a workspace on disk, finishes later, and the
//! annotation commands (`labeling.rs`, `my_diagnosis.rs`), whose file work runs in arrival
//! order on the annotation lane.

use super::attempts::{Attempt, AttemptKey};
use super::runner::{AgentChoice, BoxFuture};
use super::runs::{self, RunPlan};
use super::session::{refresh_code_lenses, Run, Session};
use super::workspace::Workspace;
use crate::attempt::layout::{attempt_dir, list_attempts};
use crate::incident::prepare::{prepare_workspace, PrepareOptions, WorkspaceInfo};
use crate::incident::{incidents_dir, resolve_incident_dir, Incident};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::{MessageType, ShowDocumentParams, Uri};

pub const OPEN_INCIDENT: &str = "distdebug.openIncident";
pub const RUN_AGENT: &str = "distdebug.runAgent";
pub const CANCEL: &str = "distdebug.cancel";
pub const SHOW_ATTEMPT: &str = "distdebug.showAttempt";
pub const CLEAR_ATTEMPT: &str = "distdebug.clearAttempt";
pub const SCORE: &str = "distdebug.score";
use super::compare::COMPARE;
use super::labeling::{ACCEPT_PREDICTION, ADD_LABEL, EDIT_LABEL_NOTE, REMOVE_LABEL, UNDO_LABEL};
use super::my_diagnosis::{ADD_TO_DIAGNOSIS, REMOVE_FROM_DIAGNOSIS};

/// Every command the server offers (`executeCommandProvider.commands`).
pub const COMMANDS: &[&str] = &[
    OPEN_INCIDENT,
    RUN_AGENT,
    CANCEL,
    SHOW_ATTEMPT,
    CLEAR_ATTEMPT,
    SCORE,
    ADD_LABEL,
    REMOVE_LABEL,
    EDIT_LABEL_NOTE,
    ACCEPT_PREDICTION,
    UNDO_LABEL,
    ADD_TO_DIAGNOSIS,
    REMOVE_FROM_DIAGNOSIS,
    COMPARE,
];

/// A command's answer: ready now, or after work that must not hold up the server.
pub enum Outcome {
    Ready(Result<Option<Value>>),
    Later(BoxFuture<Result<Option<Value>>>),
}

pub fn execute(session: &Arc<Session>, command: &str, args: Vec<Value>) -> Outcome {
    let arg = args.into_iter().next().unwrap_or(Value::Null);
    match command {
        OPEN_INCIDENT => open_incident(session, arg),
        RUN_AGENT => Outcome::Ready(run_agent(session, arg)),
        CANCEL => Outcome::Ready(cancel(session, arg)),
        SHOW_ATTEMPT => Outcome::Ready(show_attempt(session, arg)),
        CLEAR_ATTEMPT => Outcome::Ready(clear_attempt(session)),
        SCORE => super::scoring::score(session, arg),
        ADD_LABEL => super::labeling::add(session, arg),
        REMOVE_LABEL => super::labeling::remove(session, arg),
        EDIT_LABEL_NOTE => super::labeling::edit_note(session, arg),
        ACCEPT_PREDICTION => super::labeling::accept(session, arg),
        UNDO_LABEL => super::labeling::undo(session, arg),
        ADD_TO_DIAGNOSIS => super::my_diagnosis::add(session, arg),
        REMOVE_FROM_DIAGNOSIS => super::my_diagnosis::remove(session, arg),
        COMPARE => super::compare::compare(session, arg),
        other => Outcome::Ready(Err(Error::invalid_params(format!(
            "unknown command {other:?}; distdebug offers {}",
            COMMANDS.join(", ")
        )))),
    }
}

/// The error for a well-formed request the server cannot carry out now (LSP `RequestFailed`).
pub fn failed(msg: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::ServerError(-32803),
        message: msg.into().into(),
        data: None,
    }
}

pub fn no_workspace() -> Error {
    failed(
        "no incident workspace is open: open a folder made by `distdebug prepare`, or run distdebug.openIncident",
    )
}

/// Reads a command's argument object; a missing argument is an empty object.
pub fn parse_args<T: DeserializeOwned>(command: &str, arg: Value, expected: &str) -> Result<T> {
    let arg = if arg.is_null() { json!({}) } else { arg };
    serde_json::from_value(arg)
        .map_err(|e| Error::invalid_params(format!("{command}: {e}; expected {expected}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    #[serde(default = "default_agent")]
    agent: String,
    #[serde(default = "one")]
    attempts: u32,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    command: Option<String>,
}

fn default_agent() -> String {
    "baseline".to_string()
}

fn one() -> u32 {
    1
}

/// The most attempts one `runAgent` may start.
const MAX_ATTEMPTS: u32 = 100;

fn run_agent(session: &Arc<Session>, arg: Value) -> Result<Option<Value>> {
    let a: RunArgs = parse_args(
        RUN_AGENT,
        arg,
        r#"{"agent": "baseline" | "llm" | "command", "attempts": 1, "model": "<optional>", "command": "<for agent command>"}"#,
    )?;
    if a.attempts == 0 || a.attempts > MAX_ATTEMPTS {
        return Err(Error::invalid_params(format!(
            "{RUN_AGENT}: attempts is {}; expected 1 to {MAX_ATTEMPTS}",
            a.attempts
        )));
    }
    // Every incident folder the server knows of stays hidden from the agent.
    let hide: Vec<PathBuf> = {
        let st = session.lock();
        [
            st.config.incident.clone(),
            st.opened_incident.clone(),
            st.config.incidents.clone(),
        ]
        .into_iter()
        .flatten()
        .collect()
    };
    let choice = AgentChoice {
        agent: a.agent,
        model: a.model,
        command: a.command,
        hide,
    };
    let plan = session
        .runner
        .plan(&choice)
        .map_err(|e| Error::invalid_params(format!("{RUN_AGENT}: {e}")))?;
    let mut st = session.lock();
    let ws = st.workspace.as_ref().ok_or_else(no_workspace)?;
    let config_dir = ws.config_dir(&plan.config);
    let incident = ws.info.incident.clone();
    let root = ws.root.clone();
    // Attempt numbers continue after every attempt of this configuration, on disk or queued.
    let on_disk = list_attempts(&config_dir.join(&incident))
        .last()
        .map(|(k, _)| *k)
        .unwrap_or(0);
    let known = st
        .attempts
        .keys()
        .filter(|k| k.config == plan.config)
        .map(|k| k.attempt)
        .max()
        .unwrap_or(0);
    let first = on_disk.max(known) + 1;
    let ks: Vec<u32> = (first..first + a.attempts).collect();
    let run_id = st.next_run_id();
    for &k in &ks {
        let key = AttemptKey {
            config: plan.config.clone(),
            attempt: k,
        };
        let mut attempt = Attempt::queued(
            key.clone(),
            &plan.agent,
            plan.model.clone(),
            attempt_dir(&config_dir, &incident, k),
        );
        attempt.run = Some(run_id.clone());
        st.attempts.insert(key, attempt);
    }
    // The editor follows the new run: its first attempt becomes current.
    st.compare = None;
    st.current = Some(AttemptKey {
        config: plan.config.clone(),
        attempt: first,
    });
    st.refresh(&session.outbox);
    let cancel = CancellationToken::new();
    st.runs.insert(
        run_id.clone(),
        Run {
            id: run_id.clone(),
            config: plan.config.clone(),
            attempts: ks.clone(),
            cancel: cancel.clone(),
            active: true,
            progress_token: None,
        },
    );
    drop(st);
    session.log(
        MessageType::INFO,
        format!(
            "{run_id}: agent {} on {incident}, attempts {ks:?}, results in {}",
            plan.agent,
            config_dir.display()
        ),
    );
    let answer = json!({"run": run_id, "config": plan.config, "agent": plan.agent, "attempts": ks});
    runs::spawn(
        session.clone(),
        RunPlan {
            id: run_id,
            agent: plan,
            workspace: root,
            incident,
            config_dir,
            attempts: ks,
            cancel,
        },
    );
    Ok(Some(answer))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    #[serde(default)]
    run: Option<String>,
}

fn cancel(session: &Arc<Session>, arg: Value) -> Result<Option<Value>> {
    let a: CancelArgs = parse_args(CANCEL, arg, r#"{"run": "<optional run id, e.g. run-1>"}"#)?;
    let st = session.lock();
    let mut cancelled = Vec::new();
    match &a.run {
        Some(id) => {
            let r = st.runs.get(id).ok_or_else(|| {
                Error::invalid_params(format!(
                    "{CANCEL}: no run {id:?}; runs: {}",
                    st.runs.keys().cloned().collect::<Vec<_>>().join(", ")
                ))
            })?;
            if r.active {
                r.cancel.cancel();
                cancelled.push(id.clone());
            }
        }
        None => {
            for r in st.runs.values().filter(|r| r.active) {
                r.cancel.cancel();
                cancelled.push(r.id.clone());
            }
        }
    }
    drop(st);
    if !cancelled.is_empty() {
        session.log(
            MessageType::INFO,
            format!("cancelling {}", cancelled.join(", ")),
        );
    }
    Ok(Some(json!({ "cancelled": cancelled })))
}

/// Cancels the run whose current attempt reports progress with `token` (the client's cancel
/// button: `window/workDoneProgress/cancel`).
pub fn cancel_progress(session: &Session, token: &str) {
    let st = session.lock();
    let found = st
        .runs
        .values()
        .find(|r| r.active && r.progress_token.as_deref() == Some(token));
    if let Some(r) = found {
        r.cancel.cancel();
        let id = r.id.clone();
        drop(st);
        session.log(
            MessageType::INFO,
            format!("cancelling {id} (from the client)"),
        );
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttemptArgs {
    #[serde(default)]
    pub config: Option<String>,
    #[serde(default)]
    pub attempt: Option<u32>,
}

pub const ATTEMPT_ARGS: &str = r#"{"config": "<optional, e.g. baseline>", "attempt": 1}"#;

/// Finds the attempt a command names. Without `config`, the current attempt's configuration
/// is preferred, else the only one that has that attempt number. Without `attempt`, the
/// current attempt.
pub fn resolve_attempt(
    st: &super::session::State,
    command: &str,
    a: &AttemptArgs,
) -> Result<AttemptKey> {
    let ws = st.workspace.as_ref().ok_or_else(no_workspace)?;
    if let Some(why) = a
        .config
        .as_deref()
        .and_then(crate::util::paths::config_name_reason)
    {
        return Err(Error::invalid_params(format!("{command}: {why}")));
    }
    let Some(k) = a.attempt else {
        return match (&a.config, &st.current) {
            (None, Some(cur)) => Ok(cur.clone()),
            (Some(c), Some(cur)) if &cur.config == c => Ok(cur.clone()),
            _ => Err(Error::invalid_params(format!(
                "{command}: no current attempt; give \"attempt\" (and \"config\")"
            ))),
        };
    };
    let on_disk = |config: &str| attempt_dir(&ws.config_dir(config), &ws.info.incident, k).is_dir();
    let known = |config: &str| {
        st.attempts.contains_key(&AttemptKey {
            config: config.to_string(),
            attempt: k,
        })
    };
    if let Some(c) = &a.config {
        if known(c) || on_disk(c) {
            return Ok(AttemptKey {
                config: c.clone(),
                attempt: k,
            });
        }
        return Err(failed(format!(
            "{command}: no attempt {k} of {c:?} for incident {} under {}",
            ws.info.incident,
            ws.results.display()
        )));
    }
    if let Some(cur) = &st.current {
        if known(&cur.config) || on_disk(&cur.config) {
            return Ok(AttemptKey {
                config: cur.config.clone(),
                attempt: k,
            });
        }
    }
    let mut configs: Vec<String> = st
        .attempts
        .keys()
        .filter(|key| key.attempt == k)
        .map(|key| key.config.clone())
        .collect();
    if let Ok(dirs) = crate::attempt::layout::list_result_incidents(&ws.results) {
        for (c, _) in dirs {
            if on_disk(&c) && !configs.contains(&c) {
                configs.push(c);
            }
        }
    }
    match configs.len() {
        1 => Ok(AttemptKey {
            config: configs.remove(0),
            attempt: k,
        }),
        0 => Err(failed(format!(
            "{command}: no attempt {k} for incident {} under {}",
            ws.info.incident,
            ws.results.display()
        ))),
        _ => Err(Error::invalid_params(format!(
            "{command}: attempt {k} exists in several configurations ({}); give \"config\"",
            configs.join(", ")
        ))),
    }
}

fn show_attempt(session: &Arc<Session>, arg: Value) -> Result<Option<Value>> {
    let a: AttemptArgs = parse_args(SHOW_ATTEMPT, arg, ATTEMPT_ARGS)?;
    let mut st = session.lock();
    let key = resolve_attempt(&st, SHOW_ATTEMPT, &a)?;
    let ws = st.workspace.as_ref().ok_or_else(no_workspace)?;
    let dir = attempt_dir(&ws.config_dir(&key.config), &ws.info.incident, key.attempt);
    // An attempt that is not running is read again from disk: another process (the command
    // line, an external agent) may have written it since.
    let active = st.attempts.get(&key).is_some_and(|x| x.is_active());
    if !active {
        let mut fresh = Attempt::load(key.clone(), &dir);
        if let Some(old) = st.attempts.get(&key) {
            fresh.run = old.run.clone();
            if old.state == super::attempts::AttemptState::Crashed {
                fresh.state = old.state;
            }
        }
        st.attempts.insert(key.clone(), fresh);
    }
    st.compare = None;
    st.current = Some(key.clone());
    st.refresh(&session.outbox);
    refresh_code_lenses(&st, &session.outbox);
    let answer = st.attempts.get(&key).map(|x| x.to_json(true));
    if let Some(e) = st
        .attempts
        .get(&key)
        .and_then(|x| x.diagnosis_error.clone())
    {
        session.outbox.show(
            MessageType::WARNING,
            format!("{key}: diagnosis.json is not schema-valid: {e}"),
        );
    }
    Ok(answer)
}

fn clear_attempt(session: &Arc<Session>) -> Result<Option<Value>> {
    let mut st = session.lock();
    st.current = None;
    st.compare = None;
    st.refresh(&session.outbox);
    refresh_code_lenses(&st, &session.outbox);
    Ok(None)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenArgs {
    incident: String,
    #[serde(default)]
    out: Option<PathBuf>,
    #[serde(default)]
    force: bool,
}

/// Where `openIncident` prepares workspaces when neither the command nor the settings say:
/// the user's cache folder.
fn default_workspaces_dir() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("distdebug").join("workspaces")
}

fn open_incident(session: &Arc<Session>, arg: Value) -> Outcome {
    let a: OpenArgs = match parse_args(
        OPEN_INCIDENT,
        arg,
        r#"{"incident": "<id or folder>", "out": "<optional folder>", "force": false}"#,
    ) {
        Ok(a) => a,
        Err(e) => return Outcome::Ready(Err(e)),
    };
    let (incidents_root, workspaces, offline, results) = {
        let st = session.lock();
        (
            incidents_dir(st.config.incidents.as_deref()),
            st.config.workspaces.clone(),
            st.config.offline,
            st.config.results.clone(),
        )
    };
    let loaded = resolve_incident_dir(&a.incident, &incidents_root)
        .and_then(|dir| Incident::load(&dir).map_err(|p| p.to_string()));
    let incident = match loaded {
        Ok(i) => i,
        Err(e) => return Outcome::Ready(Err(failed(format!("{OPEN_INCIDENT}: {e}")))),
    };
    let id = incident.id().to_string();
    let out = a
        .out
        .clone()
        .or_else(|| workspaces.map(|w| w.join(&id)))
        .unwrap_or_else(|| default_workspaces_dir().join(&id));
    let session = session.clone();
    Outcome::Later(Box::pin(async move {
        let reuse = !a.force && WorkspaceInfo::load(&out).is_ok_and(|info| info.incident == id);
        if !reuse {
            let (inc, dest) = (incident.clone(), out.clone());
            let opts = PrepareOptions {
                force: a.force,
                offline,
            };
            tokio::task::spawn_blocking(move || prepare_workspace(&inc, &dest, &opts))
                .await
                .map_err(|e| failed(format!("{OPEN_INCIDENT}: preparing stopped: {e}")))?
                .map_err(|e| failed(format!("{OPEN_INCIDENT}: {e}")))?;
        }
        let ws = Workspace::open(&out, results.as_deref()).map_err(failed)?;
        let report = ws.root.join(&ws.info.report);
        let root = ws.root.clone();
        let mut st = session.lock();
        st.opened_incident = Some(incident.dir.clone());
        st.open_workspace(ws, &session.outbox);
        let shown = show_report(&st, &session, &id, &root, &report);
        Ok(Some(json!({
            "incident": id,
            "workspace": root.display().to_string(),
            "report": report.display().to_string(),
            "reused": reuse,
            "shown": shown,
        })))
    }))
}

/// Shows the report with `window/showDocument` when the client can, else says where it is.
fn show_report(
    st: &super::session::State,
    session: &Session,
    id: &str,
    root: &Path,
    report: &Path,
) -> bool {
    let uri = Uri::from_file_path(report);
    match uri {
        Some(uri) if st.caps.show_document => {
            session
                .outbox
                .send(super::outbox::Outgoing::ShowDocument(ShowDocumentParams {
                    uri,
                    external: None,
                    take_focus: Some(true),
                    selection: None,
                }));
            session.log(
                MessageType::INFO,
                format!("incident {id} is ready in {}", root.display()),
            );
            true
        }
        _ => {
            session.outbox.show(
                MessageType::INFO,
                format!(
                    "incident {id} is ready in {}; open that folder; its report is {}",
                    root.display(),
                    report.display()
                ),
            );
            false
        }
    }
}

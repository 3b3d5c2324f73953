//! `distdebug/replay` (request): an attempt's steps for stepping through it in the editor,
//! from the plain library (`crate::score::replay`): each step's kind, text, tool and args,
//! what it read, every line read so far, and the first step that read a labeled line. Read
//! only; the files are read on the blocking pool.

use super::commands::{failed, resolve_attempt, AttemptArgs};
use super::session::Session;
use crate::attempt::layout::attempt_dir;
use crate::score::replay::replay_dir;
use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, Result};

pub const METHOD: &str = "distdebug/replay";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplayArgs {
    #[serde(default)]
    config: Option<String>,
    #[serde(default)]
    attempt: Option<u32>,
}

const EXPECTED: &str = r#"{"config": "<optional>", "attempt": <optional>}"#;

pub async fn request(session: &Session, params: Option<Value>) -> Result<Value> {
    let args: ReplayArgs = match params {
        None | Some(Value::Null) => ReplayArgs {
            config: None,
            attempt: None,
        },
        Some(v) => serde_json::from_value(v)
            .map_err(|e| Error::invalid_params(format!("{METHOD}: {e}; expected {EXPECTED}")))?,
    };
    let (key, dir, agent, labels) = {
        let st = session.lock();
        let key = resolve_attempt(
            &st,
            METHOD,
            &AttemptArgs {
                config: args.config,
                attempt: args.attempt,
            },
        )?;
        let ws = st
            .workspace
            .as_ref()
            .ok_or_else(super::commands::no_workspace)?;
        let known = st.attempts.get(&key);
        let dir = known.map(|a| a.dir.clone()).unwrap_or_else(|| {
            attempt_dir(&ws.config_dir(&key.config), &ws.info.incident, key.attempt)
        });
        let agent = known.map(|a| a.agent.clone());
        let labels = st.labels.as_ref().map(|l| l.blocks.clone());
        (key, dir, agent, labels)
    };
    let has_labels = labels.is_some();
    let r = tokio::task::spawn_blocking(move || replay_dir(&dir, labels.as_deref()))
        .await
        .map_err(|e| failed(format!("{METHOD}: stopped: {e}")))?
        .map_err(|e| failed(format!("{METHOD}: {key}: {e}")))?;
    let agent = if r.agent.is_empty() {
        agent.unwrap_or_else(|| key.config.clone())
    } else {
        r.agent.clone()
    };
    Ok(json!({
        "config": key.config,
        "attempt": key.attempt,
        "agent": agent,
        "live": r.live,
        "labels": has_labels,
        "first_label_read": r.first_label_read,
        "steps": r.steps,
    }))
}

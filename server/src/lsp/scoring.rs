//! `distdebug.score`: scores finished attempts against the labels with the scoring library
//! (`crate::score::score_attempt_dir`, which also writes `diagnosis_scores.json`), then shows
//! the verdict: predictions re-published as `hit` / `false-positive`, labels no prediction
//! reached as `missed`, and a file-level lens with the figures.

use super::attempts::{Attempt, AttemptKey, AttemptScore, AttemptState};
use super::commands::{
    failed, no_workspace, parse_args, resolve_attempt, AttemptArgs, Outcome, SCORE,
};
use super::session::{refresh_code_lenses, Session};
use crate::attempt::layout::attempt_dir;
use crate::incident::Incident;
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::MessageType;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScoreArgs {
    #[serde(default)]
    config: Option<String>,
    #[serde(default)]
    attempt: Option<u32>,
    #[serde(default)]
    all: bool,
}

const EXPECTED: &str = r#"{"config": "<optional>", "attempt": <optional>, "all": false}"#;

pub fn score(session: &Arc<Session>, arg: Value) -> Outcome {
    match plan(session, arg) {
        Ok((targets, incident_dir)) => {
            let session = session.clone();
            Outcome::Later(Box::pin(run(session, targets, incident_dir)))
        }
        Err(e) => Outcome::Ready(Err(e)),
    }
}

/// Why an attempt cannot be scored now, or `None` when it can.
fn unfinished(a: &Attempt) -> Option<String> {
    match a.state {
        AttemptState::Queued | AttemptState::Running => Some(format!(
            "{} is still running; scoring an unfinished attempt is not possible: wait for it to end or cancel it",
            a.key
        )),
        AttemptState::Incomplete => Some(format!(
            "{} is unfinished: {} has no trajectory.json (interrupted, or still being written)",
            a.key,
            a.dir.display()
        )),
        AttemptState::Cancelled => Some(format!("{} was cancelled before it started", a.key)),
        AttemptState::Finished | AttemptState::Crashed => None,
    }
}

/// Checks the request against the session: the attempts to score and where the labels are.
fn plan(session: &Session, arg: Value) -> Result<(Vec<(AttemptKey, PathBuf)>, PathBuf)> {
    let a: ScoreArgs = parse_args(SCORE, arg, EXPECTED)?;
    let mut st = session.lock();
    let ws = st.workspace.as_ref().ok_or_else(no_workspace)?;
    let (results, incident) = (ws.results.clone(), ws.info.incident.clone());
    let incident_dir = st
        .config
        .incident
        .clone()
        .or_else(|| st.opened_incident.clone())
        .ok_or_else(|| {
            failed(format!(
                "{SCORE} needs the labels: set the \"incident\" setting to the incident folder, \
                 or open the incident with distdebug.openIncident"
            ))
        })?;
    let keys: Vec<AttemptKey> = if a.all {
        if a.config.is_some() || a.attempt.is_some() {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                "{SCORE}: \"all\" scores every finished attempt; leave out \"config\" and \"attempt\""
            )));
        }
        let keys: Vec<AttemptKey> = st
            .attempts
            .values()
            .filter(|x| unfinished(x).is_none())
            .map(|x| x.key.clone())
            .collect();
        if keys.is_empty() {
            return Err(failed(format!("{SCORE}: no finished attempt to score")));
        }
        keys
    } else {
        let key = resolve_attempt(
            &st,
            SCORE,
            &AttemptArgs {
                config: a.config,
                attempt: a.attempt,
            },
        )?;
        if !st.attempts.contains_key(&key) {
            let dir = attempt_dir(&results.join(&key.config), &incident, key.attempt);
            st.attempts
                .insert(key.clone(), Attempt::load(key.clone(), &dir));
        }
        if let Some(why) = st.attempts.get(&key).and_then(unfinished) {
            return Err(failed(format!("{SCORE}: {why}")));
        }
        vec![key]
    };
    let targets = keys
        .into_iter()
        .map(|k| {
            let dir = attempt_dir(&results.join(&k.config), &incident, k.attempt);
            (k, dir)
        })
        .collect();
    Ok((targets, incident_dir))
}

async fn run(
    session: Arc<Session>,
    targets: Vec<(AttemptKey, PathBuf)>,
    incident_dir: PathBuf,
) -> Result<Option<Value>> {
    // Reading labels, repositories and trajectories is file work: off the async threads.
    let scored = tokio::task::spawn_blocking(move || -> std::result::Result<_, String> {
        let incident = Incident::load(&incident_dir).map_err(|p| p.to_string())?;
        let labels = incident.load_labels().map_err(|p| p.to_string())?;
        if labels.blocks.is_empty() {
            return Err(format!(
                "{}: blocks: is empty; there is nothing to score against",
                incident.labels_path().display()
            ));
        }
        Ok(targets
            .into_iter()
            .map(|(key, dir)| {
                let s = crate::score::score_attempt_dir(&incident, &labels, &dir);
                (key, s)
            })
            .collect::<Vec<_>>())
    })
    .await
    .map_err(|e| failed(format!("{SCORE}: scoring stopped: {e}")))?
    .map_err(|e| failed(format!("{SCORE}: {e}")))?;

    let mut st = session.lock();
    // The labels as scored (same file, same order) are the ones the view shows.
    st.reload_labels(&session.outbox);
    let mut answers = Vec::new();
    for (key, s) in scored {
        let json = serde_json::to_value(&s).unwrap_or(Value::Null);
        if let Some(a) = st.attempts.get_mut(&key) {
            if !a.is_active() {
                a.load_diagnosis();
                if a.blocks.len() == s.blocks.len() {
                    a.score = Some(AttemptScore {
                        block_hit: s.blocks.iter().map(|b| b.hit).collect(),
                        label_reached: s.labels.iter().map(|l| l.reached).collect(),
                        block_coverage: s.block_coverage,
                        block_precision: s.block_precision,
                        block_hit_rate: s.block_hit_rate,
                        file_coverage: s.file_coverage,
                        leakage: s
                            .leakage
                            .reasons
                            .iter()
                            .map(|r| format!("step {}: {}", r.step, r.reason))
                            .collect(),
                        json: json.clone(),
                    });
                } else {
                    // diagnosis.json changed while it was scored: show nothing stale.
                    a.score = None;
                    session.log(
                        MessageType::WARNING,
                        format!("{key}: diagnosis.json changed while it was scored; score again"),
                    );
                }
            }
        }
        session.log(
            MessageType::INFO,
            format!(
                "scored {key}: block coverage {}, precision {}, hit rate {}, file coverage {}{}",
                super::code_lens::pct(s.block_coverage),
                super::code_lens::pct(s.block_precision),
                super::code_lens::pct(s.block_hit_rate),
                super::code_lens::pct(s.file_coverage),
                if s.schema_valid {
                    ""
                } else {
                    " (not schema-valid)"
                }
            ),
        );
        answers.push(answer_for(&st, &key, json));
    }
    st.refresh(&session.outbox);
    refresh_code_lenses(&st, &session.outbox);
    Ok(Some(Value::Array(answers)))
}

/// One answer of the command: the attempt's `diagnosis_scores.json` object with the attempt's
/// `config` and `agent` added, so a client can name it ("baseline #1") without asking again.
fn answer_for(st: &super::session::State, key: &AttemptKey, mut json: Value) -> Value {
    if let Value::Object(map) = &mut json {
        map.insert("config".into(), Value::String(key.config.clone()));
        if let Some(a) = st.attempts.get(key) {
            map.insert("agent".into(), Value::String(a.agent.clone()));
        }
    }
    json
}

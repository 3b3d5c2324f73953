//! The label commands: `distdebug.addLabel`, `distdebug.removeLabel`,
//! `distdebug.editLabelNote`, `distdebug.acceptPrediction` and `distdebug.undoLabel`. Each is
//! checked against the session when it arrives and carried out on the annotation lane with
//! the labels editor (`crate::annotate::LabelEditor`: lock file, re-read-merge-write, atomic
//! write), then the labels are shown again at once. Labels are edited in the incident folder
//! of the `incident` setting, as the `annotator` setting (else `$USER`).

use super::commands::{failed, no_workspace, parse_args, resolve_attempt, AttemptArgs, Outcome};
use super::session::{refresh_code_lenses, Session, State};
use super::targets::{check_lines, check_target, resolve_rel, text_of};
use super::view::LabelSet;
use crate::annotate::{Applied, LabelEditor, LabelKey};
use crate::util::paths::normalize_rel;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::MessageType;

pub const ADD_LABEL: &str = "distdebug.addLabel";
pub const REMOVE_LABEL: &str = "distdebug.removeLabel";
pub const EDIT_LABEL_NOTE: &str = "distdebug.editLabelNote";
pub const ACCEPT_PREDICTION: &str = "distdebug.acceptPrediction";
pub const UNDO_LABEL: &str = "distdebug.undoLabel";

/// Where labels are edited and by whom.
struct Editing {
    incident_dir: PathBuf,
    annotator: String,
}

impl Editing {
    fn file(&self) -> PathBuf {
        self.incident_dir.join("labels.json")
    }
}

/// Labels can be edited when the `incident` setting names the workspace's incident and its
/// labels could be read.
fn editing(st: &State, command: &str) -> Result<Editing> {
    st.workspace.as_ref().ok_or_else(no_workspace)?;
    let Some(dir) = st.config.incident.clone() else {
        return Err(failed(format!(
            "{command}: labels are edited in the incident folder: set the \"incident\" setting (and \"annotator\")"
        )));
    };
    if st.labels.is_none() {
        let why = st
            .labels_error
            .clone()
            .unwrap_or_else(|| "the labels are not loaded".to_string());
        return Err(failed(format!("{command}: {why}")));
    }
    Ok(Editing {
        incident_dir: dir,
        annotator: st.annotator_name(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    path: Option<String>,
    start_line: u32,
    end_line: u32,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    snap: bool,
}

/// A label named by its lines and, optionally, its annotator.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyArgs {
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    path: Option<String>,
    start_line: u32,
    end_line: u32,
    #[serde(default)]
    annotator: Option<String>,
    /// `editLabelNote` only: the new note (`null` or `""` removes it).
    #[serde(default)]
    note: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AcceptArgs {
    #[serde(default)]
    config: Option<String>,
    #[serde(default)]
    attempt: Option<u32>,
    block: usize,
    #[serde(default)]
    note: Option<String>,
}

const ADD_EXPECTED: &str =
    r#"{"uri" or "path", "start_line": 1, "end_line": 1, "note": "<optional>", "snap": false}"#;
const KEY_EXPECTED: &str =
    r#"{"uri" or "path", "start_line": 1, "end_line": 1, "annotator": "<optional>"}"#;
const NOTE_EXPECTED: &str = r#"{"uri" or "path", "start_line": 1, "end_line": 1, "annotator": "<optional>", "note": "<text>" or null}"#;
const ACCEPT_EXPECTED: &str = r#"{"config": "<optional>", "attempt": <optional>, "block": <index of the block in the attempt's diagnosis, from 0>, "note": "<optional>"}"#;

pub fn add(session: &Arc<Session>, arg: Value) -> Outcome {
    let prepared = (|| {
        let a: AddArgs = parse_args(ADD_LABEL, arg, ADD_EXPECTED)?;
        check_lines(ADD_LABEL, a.start_line, a.end_line)?;
        let st = session.lock();
        let e = editing(&st, ADD_LABEL)?;
        let rel = resolve_rel(&st, ADD_LABEL, a.uri.as_deref(), a.path.as_deref())?;
        check_target(&st, ADD_LABEL, &rel, a.end_line)?;
        let text = if a.snap { text_of(&st, &rel) } else { None };
        Ok((a, e, rel, text))
    })();
    let (a, e, rel, text) = match prepared {
        Ok(p) => p,
        Err(err) => return Outcome::Ready(Err(err)),
    };
    let s = session.clone();
    run(session, e, move |ed| {
        let (start, end) = match &text {
            Some((t, version, uri)) => s
                .models
                .model(&rel, t, uri.as_deref(), *version)
                .snap(a.start_line, a.end_line),
            None => (a.start_line, a.end_line),
        };
        ed.add(&rel, start, end, a.note, Map::new())
    })
}

fn key_of(st: &State, command: &str, a: &KeyArgs) -> Result<LabelKey> {
    check_lines(command, a.start_line, a.end_line)?;
    let rel = resolve_rel(st, command, a.uri.as_deref(), a.path.as_deref())?;
    Ok(LabelKey {
        path: rel,
        start_line: a.start_line,
        end_line: a.end_line,
        annotator: a.annotator.clone(),
    })
}

pub fn remove(session: &Arc<Session>, arg: Value) -> Outcome {
    let prepared = (|| {
        let a: KeyArgs = parse_args(REMOVE_LABEL, arg, KEY_EXPECTED)?;
        if a.note.is_some() {
            return Err(Error::invalid_params(format!(
                "{REMOVE_LABEL}: unknown field \"note\"; expected {KEY_EXPECTED}"
            )));
        }
        let st = session.lock();
        Ok((editing(&st, REMOVE_LABEL)?, key_of(&st, REMOVE_LABEL, &a)?))
    })();
    match prepared {
        Ok((e, key)) => run(session, e, move |ed| ed.remove(key)),
        Err(err) => Outcome::Ready(Err(err)),
    }
}

pub fn edit_note(session: &Arc<Session>, arg: Value) -> Outcome {
    let prepared = (|| {
        let a: KeyArgs = parse_args(EDIT_LABEL_NOTE, arg, NOTE_EXPECTED)?;
        // A client cannot ask for text through the protocol: editor plugins prompt for the
        // note and pass it here.
        let note = match &a.note {
            None => {
                return Err(Error::invalid_params(format!(
                    "{EDIT_LABEL_NOTE}: give \"note\" (the editor asks for it; null removes the note); expected {NOTE_EXPECTED}"
                )))
            }
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(Error::invalid_params(format!(
                    "{EDIT_LABEL_NOTE}: note is {other}; expected a string or null"
                )))
            }
        };
        let st = session.lock();
        Ok((
            editing(&st, EDIT_LABEL_NOTE)?,
            key_of(&st, EDIT_LABEL_NOTE, &a)?,
            note,
        ))
    })();
    match prepared {
        Ok((e, key, note)) => run(session, e, move |ed| ed.set_note(key, note)),
        Err(err) => Outcome::Ready(Err(err)),
    }
}

pub fn accept(session: &Arc<Session>, arg: Value) -> Outcome {
    let prepared = (|| {
        let a: AcceptArgs = parse_args(ACCEPT_PREDICTION, arg, ACCEPT_EXPECTED)?;
        let st = session.lock();
        let e = editing(&st, ACCEPT_PREDICTION)?;
        let key = resolve_attempt(
            &st,
            ACCEPT_PREDICTION,
            &AttemptArgs {
                config: a.config.clone(),
                attempt: a.attempt,
            },
        )?;
        let attempt = st.attempts.get(&key).ok_or_else(|| {
            failed(format!(
                "{ACCEPT_PREDICTION}: {key} is not loaded; show it first (distdebug.showAttempt)"
            ))
        })?;
        let b = attempt.blocks.get(a.block).ok_or_else(|| {
            Error::invalid_params(format!(
                "{ACCEPT_PREDICTION}: {key} has {} block(s); there is no block {}",
                attempt.blocks.len(),
                a.block
            ))
        })?;
        let mut extra = Map::new();
        extra.insert(
            "accepted_from".into(),
            json!({"config": key.config, "attempt": key.attempt, "agent": attempt.agent}),
        );
        let note = a.note.clone().or_else(|| b.rationale.clone());
        Ok((e, b.path.clone(), b.start_line, b.end_line, note, extra))
    })();
    match prepared {
        Ok((e, path, start, end, note, extra)) => {
            run(session, e, move |ed| ed.add(&path, start, end, note, extra))
        }
        Err(err) => Outcome::Ready(Err(err)),
    }
}

pub fn undo(session: &Arc<Session>, arg: Value) -> Outcome {
    let prepared = (|| {
        super::commands::no_args(UNDO_LABEL, arg)?;
        let st = session.lock();
        editing(&st, UNDO_LABEL)
    })();
    match prepared {
        Ok(e) => run(session, e, |ed| ed.undo()),
        Err(err) => Outcome::Ready(Err(err)),
    }
}

/// Runs `change` with this session's editor on the annotation lane, then shows the labels
/// as the file now holds them.
fn run(
    session: &Arc<Session>,
    e: Editing,
    change: impl FnOnce(&mut LabelEditor) -> std::result::Result<Applied, String> + Send + 'static,
) -> Outcome {
    let s = session.clone();
    let done = session.lane.run(move || {
        let file = e.file();
        let mut slot = s.editor.lock().unwrap_or_else(|p| p.into_inner());
        // Another incident or annotator: a new editor (and a new undo history).
        let fits = slot
            .as_ref()
            .is_some_and(|ed| ed.file() == file && ed.annotator() == e.annotator);
        if !fits {
            *slot = Some(LabelEditor::new(&file, &e.annotator));
        }
        let Some(ed) = slot.as_mut() else {
            return Err("the labels editor could not be made".to_string());
        };
        let applied = change(ed)?;
        let undo = ed.undo_depth();
        drop(slot);
        s.log(MessageType::INFO, applied.summary.clone());
        show_labels(&s, &e.incident_dir, applied.labels.blocks.clone());
        Ok::<Value, String>(json!({
            "summary": applied.summary,
            "changed": applied.changed,
            "labels": applied.labels.blocks.len(),
            "undo": undo,
        }))
    });
    Outcome::Later(Box::pin(async move {
        match done.await {
            Some(Ok(v)) => Ok(Some(v)),
            Some(Err(e)) => Err(failed(e)),
            None => Err(Error::internal_error()),
        }
    }))
}

/// Shows `blocks` as the labels of `incident_dir` (when that is still the configured
/// incident): scores are dropped (they were for other labels), a comparison is made again,
/// and every affected file is published at once.
pub fn show_labels(
    session: &Session,
    incident_dir: &std::path::Path,
    blocks: Vec<crate::incident::LabelBlock>,
) {
    let mut st = session.lock();
    if st.config.incident.as_deref() != Some(incident_dir) {
        return;
    }
    let mut blocks = blocks;
    for b in &mut blocks {
        b.path = normalize_rel(&b.path);
    }
    if st.labels.as_ref().is_some_and(|l| l.blocks == blocks) {
        return;
    }
    st.labels = Some(LabelSet {
        incident_dir: incident_dir.to_path_buf(),
        blocks,
    });
    st.labels_error = None;
    for a in st.attempts.values_mut() {
        a.score = None;
    }
    super::compare::recompute(&mut st, &session.outbox);
    st.refresh(&session.outbox);
    refresh_code_lenses(&st, &session.outbox);
}

//! `distdebug.addToDiagnosis` and `distdebug.removeFromDiagnosis`: the person at the editor
//! names causal blocks of their own. Their picks are an attempt like an agent's
//! (`<results>/human-<annotator>/<incident>/attempt-1/`, `crate::annotate::human`), shown as
//! the current attempt after each change (or, while a comparison involves it, compared
//! again), and scored by `distdebug.score` with the same rules as any agent.

use super::attempts::{Attempt, AttemptKey};
use super::commands::{failed, no_workspace, parse_args, Outcome};
use super::session::{refresh_code_lenses, Session, State};
use super::targets::{check_lines, check_target, resolve_rel, text_of};
use crate::annotate::HumanDiagnosis;
use crate::attempt::DiagnosisBlock;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Error;
use tower_lsp_server::ls_types::MessageType;

pub const ADD_TO_DIAGNOSIS: &str = "distdebug.addToDiagnosis";
pub const REMOVE_FROM_DIAGNOSIS: &str = "distdebug.removeFromDiagnosis";

/// The person's own attempt at the open incident, as last read.
#[derive(Debug, Clone)]
pub struct HumanView {
    pub diagnosis: HumanDiagnosis,
    pub blocks: Vec<DiagnosisBlock>,
    /// Why `diagnosis.json` could not be read (it is then not changed either).
    pub error: Option<String>,
}

impl HumanView {
    pub fn load(diagnosis: HumanDiagnosis) -> HumanView {
        let (blocks, error) = match diagnosis.read() {
            Ok(d) => (d.blocks, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        HumanView {
            diagnosis,
            blocks,
            error,
        }
    }

    pub fn key(&self) -> AttemptKey {
        AttemptKey {
            config: self.diagnosis.config(),
            attempt: 1,
        }
    }
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
    rationale: Option<String>,
    #[serde(default)]
    snap: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoveArgs {
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    path: Option<String>,
    start_line: u32,
    end_line: u32,
}

const ADD_EXPECTED: &str = r#"{"uri" or "path", "start_line": 1, "end_line": 1, "rationale": "<optional>", "snap": false}"#;
const REMOVE_EXPECTED: &str = r#"{"uri" or "path", "start_line": 1, "end_line": 1}"#;

pub fn add(session: &Arc<Session>, arg: Value) -> Outcome {
    let prepared = (|| {
        let a: AddArgs = parse_args(ADD_TO_DIAGNOSIS, arg, ADD_EXPECTED)?;
        check_lines(ADD_TO_DIAGNOSIS, a.start_line, a.end_line)?;
        let st = session.lock();
        let rel = resolve_rel(&st, ADD_TO_DIAGNOSIS, a.uri.as_deref(), a.path.as_deref())?;
        check_target(&st, ADD_TO_DIAGNOSIS, &rel, a.end_line)?;
        let human = writable(&st, ADD_TO_DIAGNOSIS)?;
        let text = if a.snap { text_of(&st, &rel) } else { None };
        Ok((a, rel, human, text))
    })();
    let (a, rel, human, text) = match prepared {
        Ok(p) => p,
        Err(e) => return Outcome::Ready(Err(e)),
    };
    let s = session.clone();
    run(session, move || {
        let (start, end) = match &text {
            Some((t, version, uri)) => s
                .models
                .model(&rel, t, uri.as_deref(), *version)
                .snap(a.start_line, a.end_line),
            None => (a.start_line, a.end_line),
        };
        human.add(&rel, start, end, a.rationale)
    })
}

pub fn remove(session: &Arc<Session>, arg: Value) -> Outcome {
    let prepared = (|| {
        let a: RemoveArgs = parse_args(REMOVE_FROM_DIAGNOSIS, arg, REMOVE_EXPECTED)?;
        check_lines(REMOVE_FROM_DIAGNOSIS, a.start_line, a.end_line)?;
        let st = session.lock();
        let rel = resolve_rel(
            &st,
            REMOVE_FROM_DIAGNOSIS,
            a.uri.as_deref(),
            a.path.as_deref(),
        )?;
        let human = writable(&st, REMOVE_FROM_DIAGNOSIS)?;
        Ok((a, rel, human))
    })();
    let (a, rel, human) = match prepared {
        Ok(p) => p,
        Err(e) => return Outcome::Ready(Err(e)),
    };
    run(session, move || {
        human.remove(&rel, a.start_line, a.end_line)
    })
}

/// The person's attempt, when its diagnosis can be changed.
fn writable(st: &State, command: &str) -> Result<HumanDiagnosis, Error> {
    let h = st.human.as_ref().ok_or_else(no_workspace)?;
    if let Some(e) = &h.error {
        return Err(failed(format!("{command}: {e}")));
    }
    Ok(h.diagnosis.clone())
}

/// Runs the change on the annotation lane, then shows the result.
fn run(
    session: &Arc<Session>,
    change: impl FnOnce() -> Result<crate::annotate::human::HumanApplied, String> + Send + 'static,
) -> Outcome {
    let s = session.clone();
    let done = session.lane.run(move || {
        let applied = change()?;
        s.log(MessageType::INFO, applied.summary.clone());
        let mut st = s.lock();
        let key = show_change(&mut st, &s, applied.diagnosis.blocks.clone());
        Ok::<Value, String>(json!({
            "summary": applied.summary,
            "changed": applied.changed,
            "config": key.as_ref().map(|k| k.config.clone()),
            "attempt": 1,
            "blocks": applied.diagnosis.blocks.len(),
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

/// After a change to the person's diagnosis: their attempt is read again and shown (current,
/// or compared again when a comparison involves it).
fn show_change(
    st: &mut State,
    session: &Session,
    blocks: Vec<DiagnosisBlock>,
) -> Option<AttemptKey> {
    let human = st.human.as_mut()?;
    human.blocks = blocks;
    human.error = None;
    let key = human.key();
    let dir = human.diagnosis.dir().to_path_buf();
    st.attempts
        .insert(key.clone(), Attempt::load(key.clone(), &dir));
    let compared = st
        .compare
        .as_ref()
        .is_some_and(|c| c.a == key || c.b == key);
    if compared {
        super::compare::recompute(st, &session.outbox);
    } else {
        st.compare = None;
        st.current = Some(key.clone());
    }
    st.refresh(&session.outbox);
    refresh_code_lenses(st, &session.outbox);
    Some(key)
}

//! `distdebug.compare {a, b}`: two attempts side by side (by default the person's own
//! diagnosis and the current attempt). While a comparison is shown it replaces the current
//! attempt's predictions: each region of code is a diagnostic with code `both`, `only-a` or
//! `only-b`, saying whether each side's blocks there hit a label, with a lens above it and a
//! lens at the top of the file with both sides' scores and their overlap (Jaccard). Showing
//! or clearing an attempt, or starting a run, ends the comparison.

use super::attempts::{Attempt, AttemptKey};
use super::code_lens::pct;
use super::commands::{failed, no_workspace, resolve_attempt, AttemptArgs, Outcome};
use super::outbox::Outbox;
use super::session::{refresh_code_lenses, Session, State};
use crate::annotate::{compare as compare_blocks, Comparison, Presence, Side};
use crate::attempt::layout::{attempt_dir, list_attempts};
use crate::attempt::DiagnosisBlock;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::MessageType;

pub const COMPARE: &str = "distdebug.compare";

/// A comparison on screen.
#[derive(Debug, Clone)]
pub struct CompareView {
    pub a: AttemptKey,
    pub b: AttemptKey,
    pub a_blocks: Vec<DiagnosisBlock>,
    pub b_blocks: Vec<DiagnosisBlock>,
    pub result: Comparison,
}

impl CompareView {
    /// `A human-ann #1 and B baseline #1 both name these lines · A hits a label, B does not`
    pub fn region_message(&self, i: usize) -> Option<String> {
        let r = self.result.regions.get(i)?;
        let (a, b) = (&self.result.a.name, &self.result.b.name);
        let who = match r.presence {
            Presence::Both => format!("both: A {a} and B {b} name these lines"),
            Presence::OnlyA => format!("only A: {a} names these lines, B {b} does not"),
            Presence::OnlyB => format!("only B: {b} names these lines, A {a} does not"),
        };
        Some(format!("{who}{}", hits(r.a_hit, r.b_hit)))
    }

    /// The lens above a region: `◆ both · A hits a label, B no label`.
    pub fn region_lens(&self, i: usize) -> Option<String> {
        let r = self.result.regions.get(i)?;
        let (a, b) = (&self.result.a.name, &self.result.b.name);
        let who = match r.presence {
            Presence::Both => format!("both: A {a} + B {b}"),
            Presence::OnlyA => format!("only A: {a}"),
            Presence::OnlyB => format!("only B: {b}"),
        };
        Some(format!("◆ {who}{}", hits(r.a_hit, r.b_hit)))
    }

    /// The lens at the top of a file: both sides' scores, the overlap, this file's counts.
    pub fn file_lens(&self, rel: &str) -> String {
        let c = &self.result;
        let side = |s: &crate::annotate::compare::SideSummary| match &s.scores {
            Some(m) => format!(
                "{}: block coverage {}, precision {}, hit rate {}",
                s.name,
                pct(m.block_coverage),
                pct(m.block_precision),
                pct(m.block_hit_rate)
            ),
            None => format!("{}: {} block(s)", s.name, s.blocks),
        };
        let count = |p: Presence| {
            c.regions
                .iter()
                .filter(|r| r.path == rel && r.presence == p)
                .count()
        };
        format!(
            "◆ compare A {} · B {} · overlap (Jaccard) {} · this file: {} both, {} only A, {} only B",
            side(&c.a),
            side(&c.b),
            c.jaccard.map(pct).unwrap_or_else(|| "n/a".to_string()),
            count(Presence::Both),
            count(Presence::OnlyA),
            count(Presence::OnlyB)
        )
    }

    /// The arguments that show this comparison again.
    pub fn args(&self) -> Value {
        json!({
            "a": {"config": self.a.config, "attempt": self.a.attempt},
            "b": {"config": self.b.config, "attempt": self.b.attempt},
        })
    }

    pub fn to_json(&self) -> Value {
        json!({
            "a": {"config": self.a.config, "attempt": self.a.attempt},
            "b": {"config": self.b.config, "attempt": self.b.attempt},
            "comparison": self.result,
        })
    }
}

/// ` · A hits a label, B no label` (nothing without labels).
fn hits(a: Option<bool>, b: Option<bool>) -> String {
    let one = |side: &str, h: Option<bool>| {
        h.map(|h| format!("{side} {}", if h { "hits a label" } else { "no label" }))
    };
    let parts: Vec<String> = [one("A", a), one("B", b)].into_iter().flatten().collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" · {}", parts.join(", "))
    }
}

const EXPECTED: &str = r#"{"a": {"config", "attempt"} or "config#k", "b": the same} (default: a = your own diagnosis, b = the current attempt)"#;

pub fn compare(session: &Arc<Session>, arg: Value) -> Outcome {
    Outcome::Ready(run(session, arg))
}

fn run(session: &Arc<Session>, arg: Value) -> Result<Option<Value>> {
    let arg = if arg.is_null() { json!({}) } else { arg };
    let Some(obj) = arg.as_object() else {
        return Err(Error::invalid_params(format!(
            "{COMPARE}: expected {EXPECTED}"
        )));
    };
    if let Some(k) = obj.keys().find(|k| *k != "a" && *k != "b") {
        return Err(Error::invalid_params(format!(
            "{COMPARE}: unknown field {k:?}; expected {EXPECTED}"
        )));
    }
    let mut st = session.lock();
    if st.workspace.is_none() {
        return Err(no_workspace());
    }
    let a = match obj.get("a") {
        Some(v) => side(&st, v)?,
        None => {
            let h = st.human.as_ref().ok_or_else(no_workspace)?;
            if h.blocks.is_empty() && !h.diagnosis.dir().is_dir() {
                return Err(failed(format!(
                    "{COMPARE}: you have no diagnosis of your own yet (add blocks with distdebug.addToDiagnosis), so give \"a\""
                )));
            }
            h.key()
        }
    };
    let b = match obj.get("b") {
        Some(v) => side(&st, v)?,
        None => st
            .current
            .clone()
            .ok_or_else(|| failed(format!("{COMPARE}: no current attempt; give \"b\"")))?,
    };
    if a == b {
        return Err(Error::invalid_params(format!(
            "{COMPARE}: a and b are the same attempt ({a})"
        )));
    }
    let view = build(&mut st, a, b)?;
    let answer = view.to_json();
    st.compare = Some(view);
    st.refresh(&session.outbox);
    refresh_code_lenses(&st, &session.outbox);
    Ok(Some(answer))
}

/// Reads one side: `"config"`, `"config#k"`, or `{"config"?, "attempt"?}`. A configuration
/// without an attempt number means its first attempt of this incident.
fn side(st: &State, v: &Value) -> Result<AttemptKey> {
    let (config, attempt) = match v {
        Value::String(s) => match s.rsplit_once('#') {
            Some((c, k)) => match k.parse::<u32>() {
                Ok(k) => (Some(c.to_string()), Some(k)),
                Err(_) => {
                    return Err(Error::invalid_params(format!(
                        "{COMPARE}: {s:?}: expected \"config\" or \"config#k\""
                    )))
                }
            },
            None => (Some(s.clone()), None),
        },
        other => {
            let a: AttemptArgs = serde_json::from_value(other.clone()).map_err(|e| {
                Error::invalid_params(format!("{COMPARE}: {e}; expected {EXPECTED}"))
            })?;
            (a.config, a.attempt)
        }
    };
    let ws = st.workspace.as_ref().ok_or_else(no_workspace)?;
    match (config, attempt) {
        (Some(c), None) => {
            let on_disk = list_attempts(&ws.config_dir(&c).join(&ws.info.incident));
            let known = st
                .attempts
                .keys()
                .filter(|k| k.config == c)
                .map(|k| k.attempt);
            on_disk
                .iter()
                .map(|(k, _)| *k)
                .chain(known)
                .min()
                .map(|k| AttemptKey {
                    config: c.clone(),
                    attempt: k,
                })
                .ok_or_else(|| {
                    failed(format!(
                        "{COMPARE}: no attempt of {c:?} for incident {}",
                        ws.info.incident
                    ))
                })
        }
        (config, attempt) => resolve_attempt(st, COMPARE, &AttemptArgs { config, attempt }),
    }
}

/// The blocks of an attempt: as it runs, else as on disk now (read again, like showAttempt).
fn blocks_of(st: &mut State, key: &AttemptKey) -> Result<Vec<DiagnosisBlock>> {
    let ws = st.workspace.as_ref().ok_or_else(no_workspace)?;
    let dir = attempt_dir(&ws.config_dir(&key.config), &ws.info.incident, key.attempt);
    let active = st.attempts.get(key).is_some_and(|a| a.is_active());
    if !active {
        let mut fresh = Attempt::load(key.clone(), &dir);
        if let Some(old) = st.attempts.get(key) {
            fresh.run = old.run.clone();
            fresh.state = if old.state == super::attempts::AttemptState::Crashed {
                old.state
            } else {
                fresh.state
            };
        }
        st.attempts.insert(key.clone(), fresh);
    }
    let a = st
        .attempts
        .get(key)
        .ok_or_else(|| failed(format!("{COMPARE}: no attempt {key}")))?;
    if let Some(e) = &a.diagnosis_error {
        return Err(failed(format!(
            "{COMPARE}: {key}: diagnosis.json is not schema-valid: {e}"
        )));
    }
    Ok(a.blocks
        .iter()
        .map(|b| {
            let mut d = DiagnosisBlock::new(b.path.clone(), b.start_line, b.end_line);
            d.rationale = b.rationale.clone();
            d
        })
        .collect())
}

fn build(st: &mut State, a: AttemptKey, b: AttemptKey) -> Result<CompareView> {
    let a_blocks = blocks_of(st, &a)?;
    let b_blocks = blocks_of(st, &b)?;
    let labels = st.labels.as_ref().map(|l| l.blocks.clone());
    // File lengths from the workspace (the buggy revision), looked up once per path.
    let mut lengths: HashMap<String, Option<u32>> = HashMap::new();
    if let Some(ws) = st.workspace.as_mut() {
        let paths = a_blocks
            .iter()
            .chain(&b_blocks)
            .map(|x| x.path.clone())
            .chain(labels.iter().flatten().map(|l| l.path.clone()));
        for p in paths {
            if let std::collections::hash_map::Entry::Vacant(slot) = lengths.entry(p) {
                let n = ws.file_info(slot.key()).map(|f| f.lines);
                slot.insert(n);
            }
        }
    }
    let name = |k: &AttemptKey| {
        let agent = st
            .attempts
            .get(k)
            .map(|x| x.agent.clone())
            .unwrap_or_else(|| k.config.clone());
        if agent == k.config {
            format!("{} #{}", k.config, k.attempt)
        } else {
            format!("{} #{} ({agent})", k.config, k.attempt)
        }
    };
    let result = compare_blocks(
        &Side {
            name: name(&a),
            blocks: &a_blocks,
        },
        &Side {
            name: name(&b),
            blocks: &b_blocks,
        },
        labels.as_deref(),
        &|p| lengths.get(p).copied().flatten(),
    );
    Ok(CompareView {
        a,
        b,
        a_blocks,
        b_blocks,
        result,
    })
}

/// Compares the shown comparison's attempts again (one of them, or the labels, changed).
pub fn recompute(st: &mut State, outbox: &Outbox) {
    let Some(old) = st.compare.take() else {
        return;
    };
    match build(st, old.a.clone(), old.b.clone()) {
        Ok(v) => st.compare = Some(v),
        Err(e) => outbox.log(
            MessageType::WARNING,
            format!(
                "the comparison of {} and {} ended: {}",
                old.a, old.b, e.message
            ),
        ),
    }
}

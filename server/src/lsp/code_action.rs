//! `textDocument/codeAction`: labeling and diagnosing from a selection or the cursor. Each
//! action is a `distdebug.*` command (no `WorkspaceEdit`: `labels.json` lives outside the
//! workspace, and `distdebug.undoLabel` takes a change back):
//! - "Label as causal block (lines a-b)": the selection snapped to the smallest block or run
//!   of sibling statements that covers it; "Label exact lines a-b as causal block" keeps it;
//! - "Remove label (…)" and "Edit label note (…)" for each label under the selection;
//! - "Accept predicted block as label (…)" for each block of the current attempt there;
//! - "Add to my diagnosis (lines a-b)" (snapped; an exact variant when it differs) and
//!   "Remove from my diagnosis (…)" for the person's own blocks there.
//!
//! Label actions are offered when the `incident` setting is given (labeling mode); the
//! diagnosis actions whenever an incident workspace is open. Read only: the commands change
//! things when run.

use super::labeling::{ACCEPT_PREDICTION, ADD_LABEL, EDIT_LABEL_NOTE, REMOVE_LABEL};
use super::my_diagnosis::{ADD_TO_DIAGNOSIS, REMOVE_FROM_DIAGNOSIS};
use super::session::{Session, State};
use super::targets::{is_code, text_of};
use serde_json::{json, Value};
use std::sync::Arc;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Command, MessageType, Range,
};

/// The kinds of the actions, so that a client can ask for them alone (`context.only`).
pub const LABEL_KIND: &str = "distdebug.label";
pub const DIAGNOSIS_KIND: &str = "distdebug.diagnosis";

/// The 1-based lines a range covers. A selection that ends at the start of a line (whole
/// lines selected) does not include that line.
pub fn lines_of(range: &Range) -> (u32, u32) {
    let start = range.start.line.saturating_add(1);
    let mut end = range.end.line.saturating_add(1);
    if range.end.character == 0 && range.end.line > range.start.line {
        end -= 1;
    }
    (start, end.max(start))
}

fn span(s: u32, e: u32) -> String {
    if s == e {
        format!("line {s}")
    } else {
        format!("lines {s}-{e}")
    }
}

/// What the session says about the place the actions are for, gathered under the lock.
struct Place {
    rel: String,
    text: Option<(String, Option<i32>, Option<String>)>,
    labeling: bool,
    labels: Vec<(u32, u32, Option<String>, Option<String>)>,
    /// Blocks of the current attempt here: config, attempt, agent, index, lines.
    predicted: Vec<(String, u32, String, usize, u32, u32)>,
    mine: Vec<(u32, u32)>,
    workspace: bool,
    literals: bool,
}

/// One action before it is shaped for the client: title, kind, command, argument.
type Action = (String, &'static str, &'static str, Value);

pub async fn code_actions(
    session: &Arc<Session>,
    p: &CodeActionParams,
) -> Vec<CodeActionOrCommand> {
    let (start, end) = lines_of(&p.range);
    let Some(mut place) = place_of(session, p.text_document.uri.as_str(), start, end) else {
        return Vec::new();
    };
    let (ss, se) = snap(session, &place.rel, place.text.take(), start, end).await;
    let wanted = |kind: &str| is_wanted(&p.context.only, kind);
    let mut out: Vec<Action> = Vec::new();
    if place.labeling && wanted(LABEL_KIND) {
        push_label_actions(&mut out, &place, (start, end), (ss, se));
    }
    if place.workspace && wanted(DIAGNOSIS_KIND) {
        push_diagnosis_actions(&mut out, &place, (start, end), (ss, se));
    }
    out.into_iter()
        .map(|action| to_client(action, place.literals))
        .collect()
}

/// What the session says about the code file at `uri` for lines `start`-`end`, gathered
/// under the lock; `None` when `uri` is not a code file of the workspace.
fn place_of(session: &Session, uri: &str, start: u32, end: u32) -> Option<Place> {
    let overlaps = |s: u32, e: u32| s <= end && start <= e;
    let st = session.lock();
    let rel = st
        .workspace
        .as_ref()
        .and_then(|ws| ws.rel_path_of_uri(uri))
        .filter(|rel| is_code(rel))?;
    let labeling = st.config.incident.is_some() && st.labels.is_some();
    let labels = labels_here(&st, &rel, labeling, overlaps);
    let predicted = predicted_here(&st, &rel, labeling, overlaps);
    let mine = mine_here(&st, &rel, overlaps);
    let text = text_to_snap(session, &st, &rel);
    Some(Place {
        text,
        rel,
        labeling,
        labels,
        predicted,
        mine,
        workspace: st.human.is_some(),
        literals: st.caps.code_action_literals,
    })
}

/// The labels of `rel` that overlap the selection (labeling mode only): lines, annotator, note.
fn labels_here(
    st: &State,
    rel: &str,
    labeling: bool,
    overlaps: impl Fn(u32, u32) -> bool,
) -> Vec<(u32, u32, Option<String>, Option<String>)> {
    st.labels
        .as_ref()
        .filter(|_| labeling)
        .map(|l| {
            l.blocks
                .iter()
                .filter(|b| b.path == rel && overlaps(b.start_line, b.end_line))
                .map(|b| {
                    (
                        b.start_line,
                        b.end_line,
                        b.annotator.clone(),
                        b.note.clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The blocks of the current attempt in `rel` that overlap the selection (labeling mode,
/// not comparing): config, attempt, agent, index, lines.
fn predicted_here(
    st: &State,
    rel: &str,
    labeling: bool,
    overlaps: impl Fn(u32, u32) -> bool,
) -> Vec<(String, u32, String, usize, u32, u32)> {
    match (st.compare.is_none(), st.current_attempt()) {
        (true, Some(a)) if labeling => a
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.path == rel && overlaps(b.start_line, b.end_line))
            .map(|(i, b)| {
                (
                    a.key.config.clone(),
                    a.key.attempt,
                    a.agent.clone(),
                    i,
                    b.start_line,
                    b.end_line,
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The person's own blocks in `rel` that overlap the selection.
fn mine_here(st: &State, rel: &str, overlaps: impl Fn(u32, u32) -> bool) -> Vec<(u32, u32)> {
    st.human
        .as_ref()
        .map(|h| {
            h.blocks
                .iter()
                .filter(|b| b.path == rel && overlaps(b.start_line, b.end_line))
                .map(|b| (b.start_line, b.end_line))
                .collect()
        })
        .unwrap_or_default()
}

/// The text of `rel` to snap the selection on (text, version, URI), or `None` to take the
/// selection as it is.
fn text_to_snap(
    session: &Session,
    st: &State,
    rel: &str,
) -> Option<(String, Option<i32>, Option<String>)> {
    // Documents above `maxParseBytes` are served as text: selections are taken as they
    // are, without snapping to the code's blocks (and without parsing or copying it).
    let limit = st.config.max_parse_bytes;
    match super::targets::text_len(st, rel) {
        Some(n) if n > limit => {
            let key = st
                .open_rel
                .get(rel)
                .cloned()
                .unwrap_or_else(|| rel.to_string());
            if session.models.first_too_large(&key) {
                session.log(
                    MessageType::INFO,
                    format!(
                        "{rel} is {:.1} MB, above maxParseBytes ({limit} bytes): served as text, \
                         selections are not snapped to its code blocks",
                        n as f64 / (1024.0 * 1024.0)
                    ),
                );
            }
            None
        }
        _ => text_of(st, rel),
    }
}

/// Lines `start`-`end` snapped to the smallest block or run of sibling statements of `rel`
/// that covers them; as they are when there is no text to snap on.
async fn snap(
    session: &Arc<Session>,
    rel: &str,
    text: Option<(String, Option<i32>, Option<String>)>,
    start: u32,
    end: u32,
) -> (u32, u32) {
    // Parsing a large file takes a while: on the blocking pool, not on the protocol thread
    // (a model cached for this version of the document comes back at once).
    match text {
        Some((t, version, uri)) => {
            let s = session.clone();
            let rel = rel.to_string();
            tokio::task::spawn_blocking(move || {
                s.models
                    .model(&rel, &t, uri.as_deref(), version)
                    .snap(start, end)
            })
            .await
            .unwrap_or((start, end))
        }
        None => (start, end),
    }
}

/// True when the client asked for every kind, or for `kind` or a kind it falls under.
fn is_wanted(only: &Option<Vec<CodeActionKind>>, kind: &str) -> bool {
    match only {
        None => true,
        Some(only) => only
            .iter()
            .any(|k| kind == k.as_str() || kind.starts_with(&format!("{}.", k.as_str()))),
    }
}

/// Adds the labeling actions: label the snapped or the exact lines, remove or edit each label here,
/// accept each predicted block here.
fn push_label_actions(
    out: &mut Vec<Action>,
    place: &Place,
    exact: (u32, u32),
    snapped: (u32, u32),
) {
    let (start, end) = exact;
    let (ss, se) = snapped;
    let path = place.rel.as_str();
    out.push((
        format!("Label as causal block ({})", span(ss, se)),
        LABEL_KIND,
        ADD_LABEL,
        json!({"path": path, "start_line": ss, "end_line": se}),
    ));
    out.push((
        format!("Label exact {} as causal block", span(start, end)),
        LABEL_KIND,
        ADD_LABEL,
        json!({"path": path, "start_line": start, "end_line": end}),
    ));
    for (s, e, who, _) in &place.labels {
        let by = who
            .as_deref()
            .map(|w| format!(", by {w}"))
            .unwrap_or_default();
        let key = json!({"path": path, "start_line": s, "end_line": e, "annotator": who});
        out.push((
            format!("Remove label ({}{by})", span(*s, *e)),
            LABEL_KIND,
            REMOVE_LABEL,
            key.clone(),
        ));
        out.push((
            format!("Edit label note ({}{by})", span(*s, *e)),
            LABEL_KIND,
            EDIT_LABEL_NOTE,
            key,
        ));
    }
    for (config, attempt, agent, i, s, e) in &place.predicted {
        out.push((
            format!(
                "Accept predicted block as label ({}, {agent} #{attempt})",
                span(*s, *e)
            ),
            LABEL_KIND,
            ACCEPT_PREDICTION,
            json!({"config": config, "attempt": attempt, "block": i}),
        ));
    }
}

/// Adds the diagnosis actions: add the snapped lines (and the exact ones when they differ), remove
/// each of the person's own blocks here.
fn push_diagnosis_actions(
    out: &mut Vec<Action>,
    place: &Place,
    exact: (u32, u32),
    snapped: (u32, u32),
) {
    let (start, end) = exact;
    let (ss, se) = snapped;
    let path = place.rel.as_str();
    out.push((
        format!("Add to my diagnosis ({})", span(ss, se)),
        DIAGNOSIS_KIND,
        ADD_TO_DIAGNOSIS,
        json!({"path": path, "start_line": ss, "end_line": se}),
    ));
    if (ss, se) != (start, end) {
        out.push((
            format!("Add exact {} to my diagnosis", span(start, end)),
            DIAGNOSIS_KIND,
            ADD_TO_DIAGNOSIS,
            json!({"path": path, "start_line": start, "end_line": end}),
        ));
    }
    for (s, e) in &place.mine {
        out.push((
            format!("Remove from my diagnosis ({})", span(*s, *e)),
            DIAGNOSIS_KIND,
            REMOVE_FROM_DIAGNOSIS,
            json!({"path": path, "start_line": s, "end_line": e}),
        ));
    }
}

/// An action as the client takes it: a `CodeAction` when it accepts those literals, else a
/// bare `Command`.
fn to_client(action: Action, literals: bool) -> CodeActionOrCommand {
    let (title, kind, command, arg) = action;
    let command = Command {
        title: title.clone(),
        command: command.to_string(),
        arguments: Some(vec![arg]),
    };
    if literals {
        CodeActionOrCommand::CodeAction(CodeAction {
            title,
            kind: Some(CodeActionKind::new(kind)),
            command: Some(command),
            ..CodeAction::default()
        })
    } else {
        CodeActionOrCommand::Command(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Position;

    #[test]
    fn whole_line_selections_end_on_their_last_line() {
        let r =
            |a: u32, b: u32, c: u32, d: u32| Range::new(Position::new(a, b), Position::new(c, d));
        assert_eq!(lines_of(&r(4, 3, 4, 3)), (5, 5), "a cursor");
        assert_eq!(lines_of(&r(4, 0, 7, 0)), (5, 7), "lines 5-7 selected whole");
        assert_eq!(lines_of(&r(4, 0, 7, 2)), (5, 8));
    }
}

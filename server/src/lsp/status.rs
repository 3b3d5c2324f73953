//! `distdebug/status` (request): the incident, the attempts with their state and exit reason,
//! the current attempt and the runs; and `distdebug/documentText`, the server's copy of an
//! open document, for clients (and tests) that check that they are in sync.

use super::session::State;
use serde::Deserialize;
use serde_json::{json, Value};

pub fn status(st: &State) -> Value {
    let incident = st.workspace.as_ref().map(|ws| {
        json!({
            "id": ws.info.incident,
            "system": ws.info.system,
            "language": ws.info.language,
            "workspace": ws.root.display().to_string(),
            "results": ws.results.display().to_string(),
        })
    });
    let attempts: Vec<Value> = st
        .attempts
        .values()
        .map(|a| a.to_json(st.current.as_ref() == Some(&a.key)))
        .collect();
    let runs: Vec<Value> = st
        .runs
        .values()
        .map(|r| {
            json!({
                "run": r.id,
                "config": r.config,
                "attempts": r.attempts,
                "active": r.active,
                "progressToken": r.progress_token,
            })
        })
        .collect();
    let labels = match (&st.labels, &st.labels_error) {
        (Some(l), _) => json!({
            "incident": l.incident_dir.display().to_string(),
            "count": l.blocks.len(),
            "shown": st.labels_shown,
            "annotator": st.config.annotator,
            "editable": st.config.incident.is_some(),
        }),
        (None, Some(e)) => json!({ "error": e }),
        (None, None) => Value::Null,
    };
    let human = st.human.as_ref().map(|h| {
        json!({
            "config": h.diagnosis.config(),
            "attempt": 1,
            "blocks": h.blocks.len(),
            "dir": h.diagnosis.dir().display().to_string(),
            "error": h.error,
        })
    });
    let compare = st.compare.as_ref().map(|c| c.args());
    json!({
        "incident": incident,
        "current": st.current.as_ref().map(|k| json!({"config": k.config, "attempt": k.attempt})),
        "human": human,
        "compare": compare,
        "attempts": attempts,
        "runs": runs,
        "labels": labels,
        "positionEncoding": st.caps.encoding.name(),
        "openDocuments": st.docs.len(),
    })
}

#[derive(Debug, Deserialize)]
pub struct DocumentTextParams {
    pub uri: String,
}

/// `{"uri", "version", "text"}` of an open document, or null when it is not open.
pub fn document_text(st: &State, p: &DocumentTextParams) -> Value {
    match st.docs.get(&p.uri) {
        Some(d) => json!({"uri": p.uri, "version": d.version, "text": d.rope.to_string()}),
        None => Value::Null,
    }
}

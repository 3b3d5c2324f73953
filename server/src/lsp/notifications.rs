//! The notifications that change the session: document sync, settings, workspace folders and
//! the client's cancel button. Each runs to completion, synchronously, in arrival order
//! (`ordering.rs` calls them from the transport's read loop).

use super::commands;
use super::diagnostics;
use super::documents::Change;
use super::session::{Session, State};
use super::workspace::{uri_to_path, Workspace};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use tower_lsp_server::ls_types::{
    DidChangeConfigurationParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidChangeWorkspaceFoldersParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, MessageType, NumberOrString, WorkDoneProgressCancelParams,
};

/// The methods handled here.
pub const ORDERED: &[&str] = &[
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "workspace/didChangeConfiguration",
    "workspace/didChangeWorkspaceFolders",
    "workspace/didChangeWatchedFiles",
    "window/workDoneProgress/cancel",
];

/// Applies one notification. Bad params are logged and ignored (a notification has no
/// answer to carry an error).
pub fn handle(session: &Arc<Session>, method: &str, params: Option<Value>) {
    let params = params.unwrap_or(Value::Null);
    match method {
        "textDocument/didOpen" => with(session, method, params, |s, p| did_open(s, p)),
        "textDocument/didChange" => with(session, method, params, |s, p| did_change(s, p)),
        "textDocument/didClose" => with(session, method, params, |s, p| did_close(s, p)),
        "textDocument/didSave" => with(session, method, params, |s, p| did_save(s, p)),
        "workspace/didChangeConfiguration" => with(session, method, params, |s, p| {
            did_change_configuration(s, p)
        }),
        "workspace/didChangeWorkspaceFolders" => {
            with(session, method, params, |s, p| did_change_folders(s, p))
        }
        "workspace/didChangeWatchedFiles" => with(
            session,
            method,
            params,
            |s, p: DidChangeWatchedFilesParams| super::watch::did_change_watched_files(s, p),
        ),
        "window/workDoneProgress/cancel" => with(
            session,
            method,
            params,
            |s, p: WorkDoneProgressCancelParams| {
                if let NumberOrString::String(t) = &p.token {
                    commands::cancel_progress(s, t);
                }
            },
        ),
        _ => {}
    }
}

fn with<P: DeserializeOwned>(
    session: &Arc<Session>,
    method: &str,
    params: Value,
    f: impl FnOnce(&Arc<Session>, P),
) {
    match serde_json::from_value::<P>(params) {
        Ok(p) => f(session, p),
        Err(e) => session.log(
            MessageType::ERROR,
            format!("{method}: bad params, ignored: {e}"),
        ),
    }
}

fn did_open(session: &Session, p: DidOpenTextDocumentParams) {
    let uri = p.text_document.uri.as_str().to_string();
    let mut st = session.lock();
    st.docs
        .open(&uri, &p.text_document.text, p.text_document.version);
    if let Some(rel) = rel_of(&st, &uri) {
        st.open_rel.insert(rel.clone(), uri);
        diagnostics::publish_file(&mut st, &session.outbox, &rel);
    }
}

fn did_change(session: &Session, p: DidChangeTextDocumentParams) {
    let uri = p.text_document.uri.as_str().to_string();
    let mut st = session.lock();
    let enc = st.caps.encoding;
    match st
        .docs
        .change(&uri, p.text_document.version, &p.content_changes, enc)
    {
        Change::Applied => {
            if let Some(rel) = rel_of(&st, &uri) {
                diagnostics::publish_file(&mut st, &session.outbox, &rel);
            }
        }
        Change::Stale { have, got } => session.log(
            MessageType::WARNING,
            format!("{uri}: dropped an edit for version {got}; the document is at version {have}"),
        ),
        Change::NotOpen => session.log(
            MessageType::WARNING,
            format!("{uri}: an edit for a document that is not open was ignored"),
        ),
    }
}

fn did_close(session: &Session, p: DidCloseTextDocumentParams) {
    let uri = p.text_document.uri.as_str().to_string();
    let mut st = session.lock();
    let closed = st.docs.close(&uri);
    session.models.forget(&uri);
    if closed {
        super::documents::give_back_memory();
    }
    if let Some(rel) = rel_of(&st, &uri) {
        st.open_rel.remove(&rel);
        // The text on disk may differ from what the editor had.
        if let Some(ws) = st.workspace.as_mut() {
            ws.forget_file(&rel);
        }
        diagnostics::publish_file(&mut st, &session.outbox, &rel);
    }
}

fn did_save(session: &Session, p: DidSaveTextDocumentParams) {
    let mut st = session.lock();
    if let Some(rel) = rel_of(&st, p.text_document.uri.as_str()) {
        if let Some(ws) = st.workspace.as_mut() {
            ws.forget_file(&rel);
        }
    }
}

fn did_change_configuration(session: &Session, p: DidChangeConfigurationParams) {
    let mut st = session.lock();
    let before = st.config.clone();
    for problem in st.config.apply(&p.settings) {
        session.log(MessageType::WARNING, problem);
    }
    if st.config == before {
        return;
    }
    if st.config.results != before.results {
        // Attempts live elsewhere now: reopen the workspace to read them.
        if let Some(root) = st.workspace.as_ref().map(|w| w.root.clone()) {
            let results = st.config.results.clone();
            match Workspace::open(&root, results.as_deref()) {
                Ok(ws) => {
                    st.open_workspace(ws, &session.outbox);
                    return;
                }
                Err(e) => session.log(MessageType::ERROR, e),
            }
        }
    }
    if st.config.incident != before.incident {
        st.reload_labels(&session.outbox);
        for a in st.attempts.values_mut() {
            a.score = None; // scored against other labels
        }
        super::watch::update_registration(&mut st, &session.outbox);
        super::compare::recompute(&mut st, &session.outbox);
    }
    if st.config.annotator != before.annotator {
        st.reload_human();
    }
    st.refresh(&session.outbox);
    if st.config.looked_hints != before.looked_hints {
        super::session::refresh_code_lenses(&st, &session.outbox);
    }
}

fn did_change_folders(session: &Session, p: DidChangeWorkspaceFoldersParams) {
    let mut st = session.lock();
    let removed_ours = st.workspace.as_ref().is_some_and(|ws| {
        p.event
            .removed
            .iter()
            .filter_map(|f| uri_to_path(f.uri.as_str()))
            .any(|path| path == ws.root)
    });
    if removed_ours {
        session.log(
            MessageType::INFO,
            "the incident workspace folder was removed",
        );
        st.workspace = None;
        st.opened_incident = None;
        st.attempts.clear();
        st.current = None;
        st.compare = None;
        st.human = None;
        st.labels = None;
        st.open_rel.clear();
        st.refresh(&session.outbox);
    }
    if st.workspace.is_some() {
        return;
    }
    let results = st.config.results.clone();
    for f in &p.event.added {
        let Some(path) = uri_to_path(f.uri.as_str()) else {
            continue;
        };
        if Workspace::is_prepared(&path) {
            match Workspace::open(&path, results.as_deref()) {
                Ok(ws) => {
                    st.opened_incident = None;
                    st.open_workspace(ws, &session.outbox);
                    return;
                }
                Err(e) => session.log(MessageType::ERROR, e),
            }
        }
    }
}

fn rel_of(st: &State, uri: &str) -> Option<String> {
    st.workspace.as_ref()?.rel_path_of_uri(uri)
}

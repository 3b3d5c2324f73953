//! `labels.json` changed by someone else (another editor, a script, `git pull`): the server
//! asks the client to watch it (`client/registerCapability` for
//! `workspace/didChangeWatchedFiles`, when the client supports dynamic registration) and
//! reloads the labels when `workspace/didChangeWatchedFiles` names it. The reload runs on the
//! annotation lane, after any label change still being written.

use super::labeling::show_labels;
use super::outbox::{Outbox, Outgoing};
use super::session::{Session, State};
use super::view::LabelSet;
use super::workspace::uri_to_path;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower_lsp_server::ls_types::{
    DidChangeWatchedFilesParams, DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher,
    GlobPattern, MessageType, OneOf, Registration, RelativePattern, Unregistration, Uri,
};

pub const WATCH_ID: &str = "distdebug/labels.json";
const METHOD: &str = "workspace/didChangeWatchedFiles";

/// The labels file the server should watch now: the configured incident's, when the client
/// can be asked to watch files.
fn wanted(st: &State) -> Option<PathBuf> {
    if !st.caps.watch_files {
        return None;
    }
    st.config.incident.as_ref().map(|d| d.join("labels.json"))
}

/// Registers (or moves) the watcher of `labels.json` when the incident setting changed.
pub fn update_registration(st: &mut State, outbox: &Outbox) {
    let want = wanted(st);
    if want == st.watching {
        return;
    }
    if st.watching.take().is_some() {
        outbox.send(Outgoing::Unregister(Unregistration {
            id: WATCH_ID.to_string(),
            method: METHOD.to_string(),
        }));
    }
    let Some(file) = want else {
        return;
    };
    let Some(pattern) = glob(&file, st.caps.watch_relative) else {
        outbox.log(
            MessageType::WARNING,
            format!("cannot watch {}: not a path a URI can name", file.display()),
        );
        return;
    };
    let options = DidChangeWatchedFilesRegistrationOptions {
        watchers: vec![FileSystemWatcher {
            glob_pattern: pattern,
            kind: None,
        }],
    };
    outbox.send(Outgoing::Register(Registration {
        id: WATCH_ID.to_string(),
        method: METHOD.to_string(),
        register_options: Some(json!(options)),
    }));
    st.watching = Some(file);
}

/// The pattern for one file: relative to its folder when the client supports that (the
/// folder may lie outside the workspace), else the absolute path with `/` separators.
fn glob(file: &Path, relative: bool) -> Option<GlobPattern> {
    let dir = absolute(file.parent()?);
    let name = file.file_name()?.to_string_lossy().into_owned();
    if relative {
        let base = Uri::from_file_path(&dir)?;
        return Some(GlobPattern::Relative(RelativePattern {
            base_uri: OneOf::Right(base),
            pattern: name,
        }));
    }
    Some(GlobPattern::String(
        dir.join(name).to_string_lossy().replace('\\', "/"),
    ))
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Two paths name the same file (links and `..` resolved where the file exists).
fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| absolute(p));
    a == b || canon(a) == canon(b)
}

/// `workspace/didChangeWatchedFiles`: reloads the labels when their file is among the
/// changes (created, changed or deleted).
pub fn did_change_watched_files(session: &Arc<Session>, p: DidChangeWatchedFilesParams) {
    let labels_file = {
        let st = session.lock();
        st.config.incident.as_ref().map(|d| d.join("labels.json"))
    };
    let Some(labels_file) = labels_file else {
        return;
    };
    let touched = p
        .changes
        .iter()
        .filter_map(|c| uri_to_path(c.uri.as_str()))
        .any(|path| same_file(&path, &labels_file));
    if !touched {
        return;
    }
    let s = session.clone();
    // Nobody waits for the answer: the lane runs it after any pending label change.
    drop(session.lane.run(move || reload(&s)));
}

/// Reads the configured labels again and shows them when they changed.
fn reload(session: &Session) {
    let (dir, ws_ok) = {
        let st = session.lock();
        (st.config.incident.clone(), st.workspace.is_some())
    };
    let Some(dir) = dir.filter(|_| ws_ok) else {
        return;
    };
    let loaded = {
        let st = session.lock();
        match st.workspace.as_ref() {
            Some(ws) => LabelSet::load(&dir, ws),
            None => return,
        }
    };
    match loaded {
        Ok(set) => {
            let n = set.blocks.len();
            let changed = session
                .lock()
                .labels
                .as_ref()
                .is_none_or(|l| l.blocks != set.blocks);
            if changed {
                session.log(
                    MessageType::INFO,
                    format!(
                        "{} changed on disk: {n} label(s) reloaded",
                        dir.join("labels.json").display()
                    ),
                );
                show_labels(session, &dir, set.blocks);
            }
        }
        Err(e) => {
            // The labels shown stay as they were: a half-edited file must not blank them.
            session.outbox.show(
                MessageType::WARNING,
                format!("labels.json changed on disk but cannot be read: {e}"),
            );
        }
    }
}

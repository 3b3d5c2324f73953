//! What the annotation commands and code actions point at: a file of the workspace (named by
//! its URI or its repository-relative path) and lines in it, snapped to the code's blocks with
//! the code model (`code::FileModel::snap`). Parsed models of open documents are cached by
//! version, so that code actions asked for at every cursor move do not parse again.

use super::commands::failed;
use super::session::State;
use crate::code::{parse_file, FileModel};
use crate::incident::prepare::META_DIR;
use crate::util::paths::{label_path_reason, normalize_rel};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tower_lsp_server::jsonrpc::{Error, Result};

/// The file a command names: `uri` (a document of the workspace) or `path` (relative to the
/// repository root).
pub fn resolve_rel(
    st: &State,
    command: &str,
    uri: Option<&str>,
    path: Option<&str>,
) -> Result<String> {
    let ws = st
        .workspace
        .as_ref()
        .ok_or_else(super::commands::no_workspace)?;
    match (uri, path) {
        (Some(u), None) => ws.rel_path_of_uri(u).ok_or_else(|| {
            failed(format!(
                "{command}: {u} is not a file of the incident workspace {}",
                ws.root.display()
            ))
        }),
        (None, Some(p)) => match label_path_reason(p) {
            Some(why) => Err(Error::invalid_params(format!("{command}: {why}"))),
            None => Ok(normalize_rel(p)),
        },
        _ => Err(Error::invalid_params(format!(
            "{command}: give either \"uri\" (a document) or \"path\" (relative to the repository root)"
        ))),
    }
}

/// Checks 1-based inclusive lines.
pub fn check_lines(command: &str, start: u32, end: u32) -> Result<()> {
    if start == 0 || end < start {
        return Err(Error::invalid_params(format!(
            "{command}: lines {start}-{end}; expected 1 <= start_line <= end_line (1-based, inclusive)"
        )));
    }
    Ok(())
}

/// Checks that lines `..=end` of `rel` can be named as a cause: a file of the repository
/// (not the report or evidence under `.distdebug/`) that exists and has that many lines.
pub fn check_target(st: &State, command: &str, rel: &str, end: u32) -> Result<()> {
    if rel == META_DIR || rel.starts_with(&format!("{META_DIR}/")) {
        return Err(Error::invalid_params(format!(
            "{command}: {rel} is the incident's report or evidence, not code of the repository"
        )));
    }
    let Some((text, _, _)) = text_of(st, rel) else {
        return Err(failed(format!(
            "{command}: there is no file {rel} in the incident workspace"
        )));
    };
    let lines = crate::util::text::line_count(text.as_bytes());
    if end > lines {
        return Err(Error::invalid_params(format!(
            "{command}: {rel} has {lines} lines; line {end} is past its end"
        )));
    }
    Ok(())
}

/// Whether `rel` is code of the repository (not under `.distdebug/`).
pub fn is_code(rel: &str) -> bool {
    rel != META_DIR && !rel.starts_with(&format!("{META_DIR}/"))
}

/// The text of a workspace file with the version the editor has (open documents), else as
/// on disk (version `None`).
pub fn text_of(st: &State, rel: &str) -> Option<(String, Option<i32>, Option<String>)> {
    if let Some(uri) = st.open_rel.get(rel) {
        if let Some(d) = st.docs.get(uri) {
            return Some((d.rope.to_string(), Some(d.version), Some(uri.clone())));
        }
    }
    let ws = st.workspace.as_ref()?;
    let bytes = std::fs::read(ws.abs_path(rel)).ok()?;
    Some((String::from_utf8_lossy(&bytes).into_owned(), None, None))
}

/// Parsed models of open documents, by URI, for the version they were parsed at.
#[derive(Default)]
pub struct ModelCache {
    inner: Mutex<HashMap<String, (i32, Arc<FileModel>)>>,
}

/// Open documents whose models are kept; more are dropped all at once (a cheap bound).
const CACHED: usize = 32;

impl ModelCache {
    /// The model of `text` (the file `rel`); cached when the document is open (`uri`, `version`).
    pub fn model(
        &self,
        rel: &str,
        text: &str,
        uri: Option<&str>,
        version: Option<i32>,
    ) -> Arc<FileModel> {
        let (Some(uri), Some(version)) = (uri, version) else {
            return Arc::new(parse_file(Path::new(rel), text));
        };
        if let Some((v, m)) = self.lock().get(uri) {
            if *v == version {
                return m.clone();
            }
        }
        // Parsed outside the lock: another request may parse the same version meanwhile,
        // which costs time, never correctness.
        let m = Arc::new(parse_file(Path::new(rel), text));
        let mut cache = self.lock();
        if cache.len() >= CACHED {
            cache.clear();
        }
        cache.insert(uri.to_string(), (version, m.clone()));
        m
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (i32, Arc<FileModel>)>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

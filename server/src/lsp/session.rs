//! The session: all mutable state of the server behind one lock, plus the outgoing queue and
//! the attempt runner. Handlers take the lock, change the state, enqueue what the client must
//! hear and release the lock, all without awaiting in between (the guard is not `Send`, so the
//! compiler refuses an `.await` while it is held).

use super::attempts::{scan, Attempt, AttemptKey};
use super::compare::CompareView;
use super::config::Config;
use super::diagnostics;
use super::documents::Documents;
use super::lane::Lane;
use super::my_diagnosis::HumanView;
use super::outbox::{Outbox, Outgoing};
use super::positions::Encoding;
use super::runner::AttemptRunner;
use super::targets::ModelCache;
use super::view::{LabelSet, View};
use super::workspace::Workspace;
use crate::annotate::{HumanDiagnosis, LabelEditor};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::ls_types::{MessageType, Uri};

/// What the client said it can do, reduced to what the server asks of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientCaps {
    pub encoding: Encoding,
    pub work_done_progress: bool,
    pub show_document: bool,
    pub code_lens_refresh: bool,
    pub related_information: bool,
    pub markdown_hover: bool,
    /// Code actions may be `CodeAction` literals (else bare commands).
    pub code_action_literals: bool,
    /// The server may ask the client to watch files (`workspace/didChangeWatchedFiles`
    /// with dynamic registration), and with patterns relative to a folder.
    pub watch_files: bool,
    pub watch_relative: bool,
}

impl Default for ClientCaps {
    fn default() -> ClientCaps {
        ClientCaps {
            encoding: Encoding::Utf16,
            work_done_progress: false,
            show_document: false,
            code_lens_refresh: false,
            related_information: false,
            markdown_hover: false,
            code_action_literals: false,
            watch_files: false,
            watch_relative: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    Starting,
    Running,
    ShutDown,
}

/// A `distdebug.runAgent` call: attempts run one after the other, cancelled together.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: String,
    pub config: String,
    pub attempts: Vec<u32>,
    pub cancel: CancellationToken,
    pub active: bool,
    /// The progress token of the attempt running now.
    pub progress_token: Option<String>,
}

#[derive(Debug)]
pub struct State {
    pub lifecycle: Lifecycle,
    pub caps: ClientCaps,
    pub config: Config,
    pub docs: Documents,
    /// Open documents inside the workspace: relative path to the URI the client uses.
    pub open_rel: HashMap<String, String>,
    pub workspace: Option<Workspace>,
    pub labels: Option<LabelSet>,
    /// Labels are shown as diagnostics (the incident folder was configured), not only used
    /// for scoring.
    pub labels_shown: bool,
    /// The incident folder `distdebug.openIncident` prepared the workspace from: its labels
    /// serve scoring when no incident folder is configured.
    pub opened_incident: Option<std::path::PathBuf>,
    /// Why the configured labels are not shown.
    pub labels_error: Option<String>,
    pub attempts: BTreeMap<AttemptKey, Attempt>,
    pub current: Option<AttemptKey>,
    pub runs: BTreeMap<String, Run>,
    pub next_run: u32,
    pub view: View,
    /// URIs that have diagnostics at the client, so they can be cleared.
    pub published: HashMap<String, Uri>,
    /// Two attempts shown side by side (`distdebug.compare`) instead of the current one.
    pub compare: Option<CompareView>,
    /// The person's own diagnosis of the open incident.
    pub human: Option<HumanView>,
    /// The labels file the client was asked to watch.
    pub watching: Option<PathBuf>,
}

impl State {
    fn new() -> State {
        State {
            lifecycle: Lifecycle::Starting,
            caps: ClientCaps::default(),
            config: Config::default(),
            docs: Documents::default(),
            open_rel: HashMap::new(),
            workspace: None,
            labels: None,
            labels_shown: false,
            opened_incident: None,
            labels_error: None,
            attempts: BTreeMap::new(),
            current: None,
            runs: BTreeMap::new(),
            next_run: 1,
            view: View::default(),
            published: HashMap::new(),
            compare: None,
            human: None,
            watching: None,
        }
    }

    pub fn current_attempt(&self) -> Option<&Attempt> {
        self.current.as_ref().and_then(|k| self.attempts.get(k))
    }

    /// Rebuilds the view from the current attempt and labels and publishes every file whose
    /// diagnostics exist or existed.
    pub fn refresh(&mut self, outbox: &Outbox) {
        let current = self.current.as_ref().and_then(|k| self.attempts.get(k));
        self.view = View::build(
            current,
            self.labels.as_ref(),
            self.labels_shown,
            self.compare.as_ref().map(|c| &c.result),
            self.config.looked_hints,
        );
        diagnostics::publish_all(self, outbox);
    }

    /// Makes `ws` the open workspace: its attempts on disk, its labels (when configured), no
    /// current attempt. Whatever the previous workspace showed is cleared.
    pub fn open_workspace(&mut self, ws: Workspace, outbox: &Outbox) {
        outbox.log(
            MessageType::INFO,
            format!(
                "incident workspace {} (incident {}), results in {}",
                ws.root.display(),
                ws.info.incident,
                ws.results.display()
            ),
        );
        self.attempts = scan(&ws.results, &ws.info.incident);
        self.current = None;
        self.compare = None;
        self.workspace = Some(ws);
        self.reindex_open_documents();
        self.reload_labels(outbox);
        self.reload_human();
        self.refresh(outbox);
    }

    /// Reads the labels again (the incident folder setting changed, or a workspace opened):
    /// from the configured incident folder, else from the one `openIncident` used.
    pub fn reload_labels(&mut self, outbox: &Outbox) {
        self.labels = None;
        self.labels_error = None;
        self.labels_shown = self.config.incident.is_some();
        let dir = self
            .config
            .incident
            .clone()
            .or_else(|| self.opened_incident.clone());
        let (Some(dir), Some(ws)) = (dir, self.workspace.as_ref()) else {
            return;
        };
        match LabelSet::load(&dir, ws) {
            Ok(l) => self.labels = Some(l),
            Err(e) => {
                outbox.show(MessageType::WARNING, e.clone());
                self.labels_error = Some(e);
            }
        }
    }

    /// Who is labeling and diagnosing: the `annotator` setting, else `$USER`, else `unknown`.
    pub fn annotator_name(&self) -> String {
        self.config
            .annotator
            .clone()
            .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
            .or_else(|| std::env::var("USERNAME").ok().filter(|u| !u.is_empty()))
            .unwrap_or_else(|| "unknown".to_string())
    }

    /// Reads the person's own diagnosis of the open incident again (the workspace or the
    /// annotator changed).
    pub fn reload_human(&mut self) {
        let name = self.annotator_name();
        self.human = self
            .workspace
            .as_ref()
            .map(|ws| HumanView::load(HumanDiagnosis::new(&ws.results, &name, &ws.info.incident)));
    }

    /// Recomputes which open documents lie inside the workspace.
    pub fn reindex_open_documents(&mut self) {
        self.open_rel.clear();
        if let Some(ws) = &self.workspace {
            for (uri, _) in self.docs.iter() {
                if let Some(rel) = ws.rel_path_of_uri(uri) {
                    self.open_rel.insert(rel, uri.clone());
                }
            }
        }
    }

    /// A fresh run id: `run-1`, `run-2`, …
    pub fn next_run_id(&mut self) -> String {
        let id = format!("run-{}", self.next_run);
        self.next_run += 1;
        id
    }
}

pub struct Session {
    state: Mutex<State>,
    pub outbox: Outbox,
    pub runner: Arc<dyn AttemptRunner>,
    ready: Mutex<Option<oneshot::Sender<()>>>,
    /// Runs label and diagnosis changes one after the other, off the protocol thread.
    pub lane: Lane,
    /// This session's labels editor (with its undo history); used on the lane only.
    pub editor: Mutex<Option<LabelEditor>>,
    /// Parsed models of open documents, for snapping selections to blocks.
    pub models: ModelCache,
}

impl Session {
    pub fn new(
        outbox: Outbox,
        runner: Arc<dyn AttemptRunner>,
        ready: oneshot::Sender<()>,
    ) -> Session {
        Session {
            state: Mutex::new(State::new()),
            outbox,
            runner,
            ready: Mutex::new(Some(ready)),
            lane: Lane::new(),
            editor: Mutex::new(None),
            models: ModelCache::default(),
        }
    }

    /// The state. A handler that panicked while holding the lock leaves the state as it was
    /// at that point; the server keeps going with it rather than failing every later call.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lets the outgoing queue flow (called on `initialized`).
    pub fn open_outbox(&self) {
        let sender = self.ready.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(s) = sender {
            let _ = s.send(());
        }
    }

    pub fn log(&self, level: MessageType, msg: impl Into<String>) {
        self.outbox.log(level, msg);
    }
}

/// Sends `window/showMessage` for an error that the user should see.
pub fn show_error(outbox: &Outbox, msg: impl Into<String>) {
    outbox.show(MessageType::ERROR, msg);
}

/// Enqueues a code lens refresh when the client supports it.
pub fn refresh_code_lenses(state: &State, outbox: &Outbox) {
    if state.caps.code_lens_refresh {
        outbox.send(Outgoing::RefreshCodeLens);
    }
}

//! The `LanguageServer` implementation: the handshake (capabilities, settings, the workspace)
//! and the read-only requests that may run concurrently: code lens, hover, code actions,
//! `distdebug/status` and `distdebug/documentText`. What changes the session is handled in
//! order by `ordering.rs` before it gets here.

use super::code_action;
use super::code_lens;
use super::commands::{self, COMMANDS};
use super::hover;
use super::positions::Encoding;
use super::session::{ClientCaps, Lifecycle, Session};
use super::status::{self, DocumentTextParams};
use super::workspace::{uri_to_path, Workspace};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::LanguageServer;

pub struct Backend {
    pub session: Arc<Session>,
}

/// Reads what the server needs from the client's capabilities.
fn client_caps(c: &ClientCapabilities) -> ClientCaps {
    let window = c.window.as_ref();
    let td = c.text_document.as_ref();
    let watched = c
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref());
    ClientCaps {
        encoding: Encoding::negotiate(
            c.general
                .as_ref()
                .and_then(|g| g.position_encodings.as_deref()),
        ),
        work_done_progress: window.and_then(|w| w.work_done_progress).unwrap_or(false),
        show_document: window
            .and_then(|w| w.show_document.as_ref())
            .is_some_and(|s| s.support),
        code_lens_refresh: c
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|l| l.refresh_support)
            .unwrap_or(false),
        related_information: td
            .and_then(|t| t.publish_diagnostics.as_ref())
            .and_then(|p| p.related_information)
            .unwrap_or(false),
        markdown_hover: td
            .and_then(|t| t.hover.as_ref())
            .and_then(|h| h.content_format.as_ref())
            .is_some_and(|f| f.contains(&MarkupKind::Markdown)),
        code_action_literals: td
            .and_then(|t| t.code_action.as_ref())
            .is_some_and(|a| a.code_action_literal_support.is_some()),
        watch_files: watched
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false),
        watch_relative: watched
            .and_then(|w| w.relative_pattern_support)
            .unwrap_or(false),
    }
}

/// The folders the client opened: workspace folders, else the root URI, else the root path.
#[allow(deprecated)] // rootUri and rootPath are still what older clients send
fn folders(p: &InitializeParams) -> Vec<PathBuf> {
    if let Some(fs) = &p.workspace_folders {
        let v: Vec<PathBuf> = fs
            .iter()
            .filter_map(|f| uri_to_path(f.uri.as_str()))
            .collect();
        if !v.is_empty() {
            return v;
        }
    }
    if let Some(u) = &p.root_uri {
        return uri_to_path(u.as_str()).into_iter().collect();
    }
    p.root_path.iter().map(PathBuf::from).collect()
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let caps = client_caps(&params.capabilities);
        let folders = folders(&params);
        {
            let mut st = self.session.lock();
            st.caps = caps;
            if let Some(opts) = &params.initialization_options {
                for problem in st.config.apply(opts) {
                    self.session.log(
                        MessageType::WARNING,
                        format!("initializationOptions: {problem}"),
                    );
                }
            }
            let results = st.config.results.clone();
            let prepared = folders.iter().find(|f| Workspace::is_prepared(f));
            match prepared {
                Some(root) => match Workspace::open(root, results.as_deref()) {
                    Ok(ws) => st.open_workspace(ws, &self.session.outbox),
                    Err(e) => self.session.log(MessageType::ERROR, e),
                },
                None => self.session.log(
                    MessageType::INFO,
                    "no incident workspace among the open folders (none has .distdebug/workspace.json); \
                     distdebug stays idle until distdebug.openIncident",
                ),
            }
            // Sent once the client is initialized (the outgoing queue waits for that).
            super::watch::update_registration(&mut st, &self.session.outbox);
            st.lifecycle = Lifecycle::Running;
        }
        let sync = TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            will_save: None,
            will_save_wait_until: None,
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
        };
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(caps.encoding.kind()),
                text_document_sync: Some(TextDocumentSyncCapability::Options(sync)),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::new(code_action::LABEL_KIND),
                            CodeActionKind::new(code_action::DIAGNOSIS_KIND),
                        ]),
                        work_done_progress_options: Default::default(),
                        resolve_provider: Some(false),
                    },
                )),
                code_lens_provider: Some(CodeLensOptions {
                    resolve_provider: Some(false),
                }),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: COMMANDS.iter().map(|c| c.to_string()).collect(),
                    work_done_progress_options: Default::default(),
                }),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "distdebug".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.session.open_outbox();
        let enc = self.session.lock().caps.encoding;
        self.session.log(
            MessageType::INFO,
            format!(
                "distdebug {} ready (positions in {})",
                env!("CARGO_PKG_VERSION"),
                enc.name()
            ),
        );
    }

    async fn shutdown(&self) -> Result<()> {
        let mut st = self.session.lock();
        st.lifecycle = Lifecycle::ShutDown;
        for r in st.runs.values().filter(|r| r.active) {
            r.cancel.cancel();
        }
        Ok(())
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let st = self.session.lock();
        Ok(Some(code_lens::code_lenses(
            &st,
            params.text_document.uri.as_str(),
        )))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        Ok(Some(
            code_action::code_actions(&self.session, &params).await,
        ))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let st = self.session.lock();
        Ok(hover::hover(&st, p.text_document.uri.as_str(), p.position))
    }

    /// Reached only when the session is not running (commands are handled in order by
    /// `ordering.rs` otherwise).
    async fn execute_command(&self, _: ExecuteCommandParams) -> Result<Option<Value>> {
        Err(commands::failed("the server is shutting down"))
    }
}

impl Backend {
    pub async fn status(&self) -> Result<Value> {
        Ok(status::status(&self.session.lock()))
    }

    pub async fn document_text(&self, p: DocumentTextParams) -> Result<Value> {
        Ok(status::document_text(&self.session.lock(), &p))
    }
}

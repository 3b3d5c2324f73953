//! The language server: the only module that knows LSP types and JSON-RPC.
//!
//! `serve` runs the server on any pair of byte streams (stdin/stdout for `distdebug lsp`, an
//! in-memory duplex in tests). Layout: `server.rs` is the handshake and the read-only
//! requests; `ordering.rs` applies everything that changes the session in arrival order
//! (`notifications.rs`, `commands.rs`); `session.rs` holds the state; `view.rs`,
//! `diagnostics.rs`, `code_lens.rs` and `hover.rs` show it; `runs.rs`, `runner.rs` and
//! `progress.rs` run agents in the background; `outbox.rs` sends to the client in order, and
//! `delivery.rs` holds a command's answer until what it caused has been written.
//! Annotating: `code_action.rs` offers the actions, `labeling.rs` and `my_diagnosis.rs` carry
//! them out on the annotation lane (`lane.rs`), `compare.rs` shows two attempts side by side,
//! `agreement.rs` answers `distdebug/agreement`, `replay.rs` `distdebug/replay`, `watch.rs` reloads a `labels.json` changed
//! on disk.

pub mod agreement;
pub mod attempts;
pub mod bench;
pub mod code_action;
pub mod code_lens;
pub mod commands;
pub mod compare;
pub mod config;
pub mod delivery;
pub mod diagnostics;
pub mod documents;
pub mod harness;
pub mod hover;
pub mod labeling;
pub mod lane;
pub mod my_diagnosis;
pub mod notifications;
pub mod ordering;
pub mod outbox;
pub mod positions;
pub mod progress;
pub mod replay;
pub mod runner;
pub mod runs;
pub mod scoring;
pub mod server;
pub mod session;
pub mod status;
pub mod targets;
pub mod view;
pub mod watch;
pub mod workspace;

use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::{LspService, Server};

pub use runner::{AgentChoice, AgentPlan, AttemptRequest, AttemptRunner, LibraryRunner};

/// How the server is put together: who runs attempts.
#[derive(Clone)]
pub struct ServerOptions {
    pub runner: Arc<dyn AttemptRunner>,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            runner: Arc::new(LibraryRunner),
        }
    }
}

/// Serves one client on `input`/`output` until it sends `exit` or closes the stream. Runs
/// still going at the end are cancelled.
pub async fn serve<I, O>(input: I, output: O, options: ServerOptions)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let (outbox, queue) = outbox::Outbox::new();
    // Counts what is written, so that a command's answer can wait for its effects.
    let output = delivery::CountingWriter::new(output, outbox.written());
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let session = Arc::new(session::Session::new(outbox, options.runner, ready_tx));
    let backend_session = session.clone();
    let (service, socket) = LspService::build(move |client| {
        tokio::spawn(outbox::pump(client, queue, ready_rx));
        server::Backend {
            session: backend_session,
        }
    })
    .custom_method("distdebug/status", server::Backend::status)
    .custom_method("distdebug/documentText", server::Backend::document_text)
    .finish();
    let service = ordering::Ordered::new(service, session.clone());
    Server::new(input, output, socket).serve(service).await;
    let st = session.lock();
    for r in st.runs.values().filter(|r| r.active) {
        r.cancel.cancel();
    }
}

//! Everything the server sends to the client on its own initiative goes through one ordered
//! queue: handlers enqueue while they hold the session lock (so the queue order is the order
//! of the state changes) and a single task sends. Diagnostics therefore never arrive older
//! than what they replace, and `window/workDoneProgress/create` is answered before the first
//! `$/progress` of its token is sent.

use super::delivery::Written;
use serde_json::Value;
use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::ls_types::notification::{Notification, Progress};
use tower_lsp_server::ls_types::{
    MessageType, NumberOrString, ProgressParams, ProgressParamsValue, PublishDiagnosticsParams,
    Registration, ShowDocumentParams, Unregistration, WorkDoneProgress,
};
use tower_lsp_server::Client;

/// `distdebug/trajectoryStep`: one step of a running attempt, for clients that show a live log.
pub enum TrajectoryStep {}

impl Notification for TrajectoryStep {
    type Params = Value;
    const METHOD: &'static str = "distdebug/trajectoryStep";
}

#[derive(Debug)]
pub enum Outgoing {
    Publish(PublishDiagnosticsParams),
    Log(MessageType, String),
    Show(MessageType, String),
    TrajectoryStep(Value),
    CreateProgress(String),
    Progress(String, WorkDoneProgress),
    ShowDocument(ShowDocumentParams),
    RefreshCodeLens,
    /// `client/registerCapability` / `client/unregisterCapability` (file watching).
    Register(Registration),
    Unregister(Unregistration),
    /// Not sent: the pump answers how many messages it has handed to the framework so far,
    /// everything queued before this included (see `delivery.rs`).
    Barrier(oneshot::Sender<u64>),
}

#[derive(Debug, Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Outgoing>,
    written: Arc<Written>,
}

/// How long the server waits for the client to accept a progress token.
const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an answer waits for the messages queued before it to be written.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

impl Outbox {
    pub fn new() -> (Outbox, mpsc::UnboundedReceiver<Outgoing>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let written = Written::new();
        (Outbox { tx, written }, rx)
    }

    /// The count of messages written out, for the output's `CountingWriter`.
    pub fn written(&self) -> Arc<Written> {
        self.written.clone()
    }

    /// Returns once everything queued so far has been written to the client (or after
    /// `DELIVERY_TIMEOUT`, logged): an answer sent after this never overtakes the effects of
    /// the request it answers.
    pub async fn delivered(&self) {
        let (tx, rx) = oneshot::channel();
        self.send(Outgoing::Barrier(tx));
        // The whole wait is bounded: the pump itself may be waiting for a client that does not
        // answer `window/workDoneProgress/create`.
        let waited = tokio::time::timeout(DELIVERY_TIMEOUT, async {
            match rx.await {
                Ok(target) => self.written.reached(target, DELIVERY_TIMEOUT).await,
                Err(_) => true, // the pump is gone with the connection: nothing to wait for
            }
        })
        .await;
        if !matches!(waited, Ok(true)) {
            eprintln!(
                "distdebug lsp: what a command caused was not all written within {DELIVERY_TIMEOUT:?} ({} messages so far); answering anyway",
                self.written.now()
            );
        }
    }

    pub fn send(&self, msg: Outgoing) {
        // A closed queue means the connection is gone; there is no one left to tell.
        let _ = self.tx.send(msg);
    }

    /// Logs to stderr and to the client's log (`window/logMessage`). Never to stdout.
    pub fn log(&self, level: MessageType, msg: impl Into<String>) {
        let msg = crate::util::secrets::redact_string(msg.into());
        eprintln!("distdebug lsp: {msg}");
        self.send(Outgoing::Log(level, msg));
    }

    /// Logs, and also shows the message to the user (`window/showMessage`).
    pub fn show(&self, level: MessageType, msg: impl Into<String>) {
        let msg = msg.into();
        self.log(level, msg.clone());
        self.send(Outgoing::Show(level, msg));
    }
}

/// Sends the queue to the client, in order, once `ready` fires (after `initialized`: the
/// framework drops what is sent before `initialize` has returned).
pub async fn pump(
    client: Client,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    ready: oneshot::Receiver<()>,
) {
    if ready.await.is_err() {
        return;
    }
    // Tokens the client refused: per the specification no progress may be sent for them.
    let mut refused: HashSet<String> = HashSet::new();
    // Messages handed to the framework so far (each goes out as one frame).
    let mut sent: u64 = 0;
    while let Some(msg) = rx.recv().await {
        if !matches!(msg, Outgoing::Barrier(_)) && !is_refused_progress(&msg, &refused) {
            sent += 1;
        }
        match scrub(msg) {
            Outgoing::Barrier(answer) => {
                let _ = answer.send(sent);
            }
            Outgoing::Publish(p) => {
                client
                    .publish_diagnostics(p.uri, p.diagnostics, p.version)
                    .await
            }
            Outgoing::Log(t, m) => client.log_message(t, m).await,
            Outgoing::Show(t, m) => client.show_message(t, m).await,
            Outgoing::TrajectoryStep(v) => client.send_notification::<TrajectoryStep>(v).await,
            Outgoing::CreateProgress(token) => {
                let asked = client.create_work_done_progress(NumberOrString::String(token.clone()));
                match tokio::time::timeout(CLIENT_REQUEST_TIMEOUT, asked).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        eprintln!("distdebug lsp: the client refused progress token {token}: {e}");
                        refused.insert(token);
                    }
                    Err(_) => {
                        eprintln!("distdebug lsp: no answer to progress token {token}");
                        refused.insert(token);
                    }
                }
            }
            Outgoing::Progress(token, value) => {
                if !refused.contains(&token) {
                    client
                        .send_notification::<Progress>(ProgressParams {
                            token: NumberOrString::String(token),
                            value: ProgressParamsValue::WorkDone(value),
                        })
                        .await
                }
            }
            Outgoing::ShowDocument(p) => {
                // Answered by the user's editor at its own pace: do not hold the queue.
                let c = client.clone();
                send_in_order(async move {
                    let uri = p.uri.as_str().to_string();
                    match c.show_document(p).await {
                        Ok(true) => {}
                        Ok(false) => eprintln!("distdebug lsp: the client did not show {uri}"),
                        Err(e) => eprintln!("distdebug lsp: cannot show {uri}: {e}"),
                    }
                });
            }
            Outgoing::Register(r) => {
                let c = client.clone();
                send_in_order(async move {
                    let id = r.id.clone();
                    if let Err(e) = c.register_capability(vec![r]).await {
                        eprintln!("distdebug lsp: the client refused registration {id}: {e}");
                    }
                });
            }
            Outgoing::Unregister(u) => {
                let c = client.clone();
                send_in_order(async move {
                    let id = u.id.clone();
                    if let Err(e) = c.unregister_capability(vec![u]).await {
                        eprintln!("distdebug lsp: the client refused to unregister {id}: {e}");
                    }
                });
            }
            Outgoing::RefreshCodeLens => {
                let c = client.clone();
                send_in_order(async move {
                    if let Err(e) = c.code_lens_refresh().await {
                        eprintln!("distdebug lsp: workspace/codeLens/refresh failed: {e}");
                    }
                });
            }
        }
    }
}

fn is_refused_progress(msg: &Outgoing, refused: &HashSet<String>) -> bool {
    matches!(msg, Outgoing::Progress(token, _) if refused.contains(token))
}

/// The message with every secret redacted: whatever an agent or an endpoint echoed never
/// reaches the client.
fn scrub(msg: Outgoing) -> Outgoing {
    use crate::util::secrets::{redact_serde, redact_string, redact_value};
    match msg {
        Outgoing::Publish(p) => Outgoing::Publish(redact_serde(p)),
        Outgoing::Log(t, m) => Outgoing::Log(t, redact_string(m)),
        Outgoing::Show(t, m) => Outgoing::Show(t, redact_string(m)),
        Outgoing::TrajectoryStep(mut v) => {
            redact_value(&mut v);
            Outgoing::TrajectoryStep(v)
        }
        Outgoing::Progress(token, value) => Outgoing::Progress(token, redact_serde(value)),
        other => other,
    }
}

/// Starts a request to the client so that it goes out in queue order, and awaits the answer
/// in the background. The first poll puts the request on the wire's queue; what remains (the
/// wait for the answer) continues in its own task.
fn send_in_order(request: impl Future<Output = ()> + Send + 'static) {
    let mut request = Box::pin(request);
    let mut cx = Context::from_waker(Waker::noop());
    if request.as_mut().poll(&mut cx).is_pending() {
        tokio::spawn(request);
    }
}

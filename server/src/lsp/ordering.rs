//! The ordering rule. tower-lsp-server runs handlers concurrently (`buffer_unordered`), so two
//! `didChange` notifications sent in order may be handled out of order. This service sits in
//! front of the framework and applies every notification and command that changes the session
//! right where the transport reads it, one message at a time, before the next is read; only
//! read-only requests (hover, code lens, status) reach the framework's concurrent handlers.

use super::commands::{self, Outcome};
use super::notifications;
use super::session::{Lifecycle, Session};
use serde_json::Value;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, Request, Response};
use tower_lsp_server::ls_types::{ExecuteCommandParams, MessageType};
use tower_lsp_server::ExitedError;

type Answer = Pin<Box<dyn Future<Output = Result<Option<Response>, ExitedError>> + Send>>;

pub struct Ordered<S> {
    inner: S,
    session: Arc<Session>,
}

impl<S> Ordered<S> {
    pub fn new(inner: S, session: Arc<Session>) -> Ordered<S> {
        Ordered { inner, session }
    }
}

fn ready(r: Option<Response>) -> Answer {
    Box::pin(std::future::ready(Ok(r)))
}

impl<S> Service<Request> for Ordered<S>
where
    S: Service<Request, Response = Option<Response>, Error = ExitedError>,
    S::Future: Send + 'static,
{
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = Answer;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ExitedError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Answer {
        // Before `initialize` and after `shutdown` the framework answers as the protocol says.
        if self.session.lock().lifecycle != Lifecycle::Running {
            return Box::pin(self.inner.call(req));
        }
        let method = req.method().to_string();
        if req.id().is_none() && notifications::ORDERED.contains(&method.as_str()) {
            let (_, _, params) = req.into_parts();
            let session = &self.session;
            // A bug in a handler must not take the server down with it.
            if catch_unwind(AssertUnwindSafe(|| {
                notifications::handle(session, &method, params)
            }))
            .is_err()
            {
                session.log(
                    MessageType::ERROR,
                    format!("internal error while handling {method}; see stderr"),
                );
            }
            return ready(None);
        }
        // Read only, but it takes optional params, which the framework's custom methods do
        // not allow: answered here, its file work on the blocking pool.
        if method == super::replay::METHOD {
            if let Some(id) = req.id().cloned() {
                let (_, _, params) = req.into_parts();
                let session = self.session.clone();
                return Box::pin(async move {
                    let r = super::replay::request(&session, params).await;
                    Ok(Some(Response::from_parts(id, r)))
                });
            }
        }
        if method == super::agreement::METHOD {
            if let Some(id) = req.id().cloned() {
                let (_, _, params) = req.into_parts();
                let session = self.session.clone();
                return Box::pin(async move {
                    let r = super::agreement::request(&session, params).await;
                    Ok(Some(Response::from_parts(id, r)))
                });
            }
        }
        if method == "workspace/executeCommand" {
            if let Some(id) = req.id().cloned() {
                let (_, _, params) = req.into_parts();
                let p: ExecuteCommandParams =
                    match serde_json::from_value(params.unwrap_or(Value::Null)) {
                        Ok(p) => p,
                        Err(e) => {
                            let err =
                                Error::invalid_params(format!("workspace/executeCommand: {e}"));
                            return ready(Some(Response::from_parts(id, Err(err))));
                        }
                    };
                let session = &self.session;
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    commands::execute(session, &p.command, p.arguments)
                }))
                .unwrap_or_else(|_| {
                    session.log(
                        MessageType::ERROR,
                        format!("internal error in {}; see stderr", p.command),
                    );
                    Outcome::Ready(Err(Error::internal_error()))
                });
                // The answer goes out after what the command caused (delivery.rs).
                let session = session.clone();
                return Box::pin(async move {
                    let r = match outcome {
                        Outcome::Ready(r) => r,
                        Outcome::Later(f) => f.await,
                    };
                    session.outbox.delivered().await;
                    Ok(Some(Response::from_parts(
                        id,
                        r.map(|v| v.unwrap_or(Value::Null)),
                    )))
                });
            }
        }
        if method == "distdebug/status" {
            if let Some(id) = req.id().cloned() {
                // Clients differ in sending no params, `null` or `{}`; status takes none and
                // accepts all three (the framework's own dispatch would refuse `{}`).
                let value = super::status::status(&self.session.lock());
                return ready(Some(Response::from_parts(id, Ok(value))));
            }
        }
        Box::pin(self.inner.call(req))
    }
}

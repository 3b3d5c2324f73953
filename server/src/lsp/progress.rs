//! Work-done progress for background work: the token is created with
//! `window/workDoneProgress/create` first (string tokens), then `begin`, a `report` per step
//! and `end`. `end` is sent from `Drop` if nobody sent it, so a progress bar never outlives
//! its work, whatever path the work took.

use super::outbox::{Outbox, Outgoing};
use super::session::ClientCaps;
use std::sync::atomic::{AtomicBool, Ordering};
use tower_lsp_server::ls_types::{
    WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport,
};

pub struct ProgressReporter {
    /// `None` when the client does not support work-done progress: then nothing is sent.
    token: Option<String>,
    outbox: Outbox,
    ended: AtomicBool,
}

impl ProgressReporter {
    /// Creates the token and begins. Call while holding the session lock, so that the
    /// messages queue in the order of the state changes they describe.
    pub fn begin(
        caps: &ClientCaps,
        outbox: &Outbox,
        token: String,
        title: String,
        message: Option<String>,
    ) -> ProgressReporter {
        let token = caps.work_done_progress.then_some(token);
        if let Some(t) = &token {
            outbox.send(Outgoing::CreateProgress(t.clone()));
            outbox.send(Outgoing::Progress(
                t.clone(),
                WorkDoneProgress::Begin(WorkDoneProgressBegin {
                    title,
                    cancellable: Some(true),
                    message,
                    percentage: None,
                }),
            ));
        }
        ProgressReporter {
            token,
            outbox: outbox.clone(),
            ended: AtomicBool::new(false),
        }
    }

    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    pub fn report(&self, message: String) {
        if self.ended.load(Ordering::SeqCst) {
            return;
        }
        if let Some(t) = &self.token {
            self.outbox.send(Outgoing::Progress(
                t.clone(),
                WorkDoneProgress::Report(WorkDoneProgressReport {
                    cancellable: Some(true),
                    message: Some(message),
                    percentage: None,
                }),
            ));
        }
    }

    /// Ends the progress with a last message; later calls do nothing.
    pub fn end(&self, message: Option<String>) {
        if self.ended.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(t) = &self.token {
            self.outbox.send(Outgoing::Progress(
                t.clone(),
                WorkDoneProgress::End(WorkDoneProgressEnd { message }),
            ));
        }
    }
}

impl Drop for ProgressReporter {
    fn drop(&mut self) {
        self.end(None);
    }
}

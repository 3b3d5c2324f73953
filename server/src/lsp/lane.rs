//! The annotation lane: one thread that runs the file work of label and diagnosis changes
//! one job after the other, in the order the commands arrived. Commands are parsed and
//! checked against the session where the transport reads them (`ordering.rs`); what touches
//! `labels.json` (a lock that another editor may hold, a read, an fsync'd write) runs here, so
//! the protocol thread never waits on the disk or on another writer, and two changes are
//! never applied out of order.

use super::runner::BoxFuture;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Mutex;
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

pub struct Lane {
    /// `None` when the thread could not be started: jobs then run where they are submitted.
    tx: Mutex<Option<mpsc::Sender<Job>>>,
}

impl Lane {
    pub fn new() -> Lane {
        let (tx, rx) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("distdebug-annotate".to_string())
            .spawn(move || {
                // Ends when the session (the only sender) is gone.
                for job in rx {
                    // A bug in one job must not stop the jobs after it; its caller hears
                    // of it because the job's answer never comes.
                    if catch_unwind(AssertUnwindSafe(job)).is_err() {
                        eprintln!("distdebug lsp: an annotation job panicked");
                    }
                }
            });
        Lane {
            tx: Mutex::new(started.ok().map(|_| tx)),
        }
    }

    /// Queues `f` after every job queued before it; the future gives its result, or `None`
    /// when the job panicked.
    pub fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> BoxFuture<Option<T>> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        let guard = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(sender) => {
                if let Err(mpsc::SendError(job)) = sender.send(job) {
                    // The thread is gone: do the work here rather than drop it.
                    drop(guard);
                    let _ = catch_unwind(AssertUnwindSafe(job));
                }
            }
            None => {
                drop(guard);
                let _ = catch_unwind(AssertUnwindSafe(job));
            }
        }
        Box::pin(async move { rx.await.ok() })
    }
}

impl Default for Lane {
    fn default() -> Lane {
        Lane::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[tokio::test]
    async fn jobs_run_in_submission_order_and_a_panic_stops_only_its_own() {
        let lane = Lane::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut answers = Vec::new();
        for i in 0..20 {
            let seen = seen.clone();
            answers.push(lane.run(move || {
                if i == 7 {
                    panic!("job 7 fails");
                }
                seen.lock().unwrap().push(i);
                i * 2
            }));
        }
        let mut got = Vec::new();
        for a in answers {
            got.push(a.await);
        }
        assert_eq!(got[7], None);
        assert_eq!(got[8], Some(16));
        let want: Vec<i32> = (0..20).filter(|i| *i != 7).collect();
        assert_eq!(*seen.lock().unwrap(), want);
    }
}

//! Running many attempts: up to `parallel` at once as tokio tasks, results in job order, and
//! an event as each attempt starts and finishes (for a progress display).

use super::attempt::{run_attempt, AttemptSummary};
use crate::agent::AgentSpec;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

/// One attempt to run: attempt `attempt` of `incident` on its prepared `workspace`.
#[derive(Debug, Clone)]
pub struct Job {
    pub incident: String,
    pub workspace: PathBuf,
    pub attempt: u32,
}

/// What `run_jobs` reports as it goes.
pub enum JobEvent<'a> {
    Started(&'a Job),
    Finished(&'a Job, &'a Result<AttemptSummary, String>),
}

/// Runs `jobs` in their order, with at most `parallel` attempts at a time, writing under
/// `config_dir`. `on_event` sees each attempt start and finish (a start always before its
/// finish). The returned results are in job order; `None` is a job that never started because
/// `cancel` was cancelled first. Cancelling makes running attempts end as cancelled.
pub async fn run_jobs(
    spec: &AgentSpec,
    jobs: Vec<Job>,
    config_dir: &Path,
    parallel: usize,
    cancel: &CancellationToken,
    mut on_event: impl FnMut(JobEvent),
) -> Vec<Option<Result<AttemptSummary, String>>> {
    let permits = Arc::new(Semaphore::new(parallel.max(1)));
    let (started_tx, mut started_rx) = mpsc::unbounded_channel::<usize>();
    let mut set = tokio::task::JoinSet::new();
    let mut index_of: HashMap<tokio::task::Id, usize> = HashMap::new();
    // Whose turn it is to ask for a permit: attempts start in job order (attempt 1 before
    // attempt 2), not in the order the runtime happens to poll their tasks.
    let (turn_tx, turn_rx) = tokio::sync::watch::channel(0usize);
    let turn_tx = Arc::new(turn_tx);
    for (i, job) in jobs.iter().cloned().enumerate() {
        let (spec, dir, cancel, permits, started) = (
            spec.clone(),
            config_dir.to_path_buf(),
            cancel.clone(),
            permits.clone(),
            started_tx.clone(),
        );
        let (mut turn, next_turn) = (turn_rx.clone(), turn_tx.clone());
        let handle = set.spawn(async move {
            let _ = turn.wait_for(|n| *n == i).await;
            let permit = permits.acquire_owned().await;
            next_turn.send_modify(|n| *n += 1);
            // The permit goes back with the result and is released only after the finish
            // is reported, so a display never counts more than `parallel` running.
            match permit {
                Ok(permit) if !cancel.is_cancelled() => {
                    let _ = started.send(i);
                    let r =
                        run_attempt(&spec, &job.workspace, &dir, job.attempt, None, &cancel).await;
                    (i, Some(r), Some(permit))
                }
                _ => (i, None, None),
            }
        });
        index_of.insert(handle.id(), i);
    }
    drop(started_tx);
    let mut results: Vec<Option<Result<AttemptSummary, String>>> =
        (0..jobs.len()).map(|_| None).collect();
    loop {
        tokio::select! {
            // Starts first: a task sends its start before it can finish, so draining the
            // starts first keeps every start ahead of its finish.
            biased;
            Some(i) = started_rx.recv() => on_event(JobEvent::Started(&jobs[i])),
            joined = set.join_next_with_id() => match joined {
                None => break,
                Some(Ok((_, (i, r, permit)))) => {
                    if let Some(r) = &r {
                        on_event(JobEvent::Finished(&jobs[i], r));
                    }
                    results[i] = r;
                    drop(permit);
                }
                Some(Err(e)) => {
                    if let Some(&i) = index_of.get(&e.id()) {
                        let job = &jobs[i];
                        let r = Err(format!(
                            "{} attempt {}: stopped unexpectedly: {e}",
                            job.incident, job.attempt
                        ));
                        on_event(JobEvent::Finished(job, &r));
                        results[i] = Some(r);
                    }
                }
            },
        }
    }
    results
}

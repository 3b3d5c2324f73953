//! Running many attempts: up to `parallel` at once as tokio tasks, results in job order.

use super::attempt::{run_attempt, AttemptSummary};
use crate::agent::AgentSpec;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// One attempt to run: attempt `attempt` on the prepared `workspace`.
#[derive(Debug, Clone)]
pub struct Job {
    pub workspace: PathBuf,
    pub attempt: u32,
}

/// Runs `jobs` with at most `parallel` attempts at a time, writing under `config_dir`.
/// `on_done` sees each result as it finishes (in finishing order); the returned results are
/// in job order. Cancelling `cancel` makes running attempts end as cancelled and skips the
/// ones not started.
pub async fn run_jobs(
    spec: &AgentSpec,
    jobs: Vec<Job>,
    config_dir: &Path,
    parallel: usize,
    cancel: &CancellationToken,
    mut on_done: impl FnMut(&Result<AttemptSummary, String>),
) -> Vec<Result<AttemptSummary, String>> {
    let permits = Arc::new(Semaphore::new(parallel.max(1)));
    let mut set = tokio::task::JoinSet::new();
    let n = jobs.len();
    for (i, job) in jobs.into_iter().enumerate() {
        let (spec, dir, cancel, permits) = (
            spec.clone(),
            config_dir.to_path_buf(),
            cancel.clone(),
            permits.clone(),
        );
        set.spawn(async move {
            let result = match permits.acquire_owned().await {
                Ok(_permit) if !cancel.is_cancelled() => {
                    run_attempt(&spec, &job.workspace, &dir, job.attempt, None, &cancel).await
                }
                _ => Err(format!(
                    "{}: attempt {} not started: the run was cancelled",
                    job.workspace.display(),
                    job.attempt
                )),
            };
            (i, result)
        });
    }
    let mut results: Vec<Option<Result<AttemptSummary, String>>> = (0..n).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((i, r)) => {
                on_done(&r);
                results[i] = Some(r);
            }
            Err(e) => {
                let r = Err(format!("an attempt stopped unexpectedly: {e}"));
                on_done(&r);
                if let Some(slot) = results.iter_mut().find(|s| s.is_none()) {
                    *slot = Some(r);
                }
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("an attempt left no result".to_string())))
        .collect()
}

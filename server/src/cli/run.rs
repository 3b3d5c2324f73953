//! `distdebug run`: attempts of one agent on incidents, written under `results/<config>/`
//! (each attempt's files, then `run.json`), `--jobs` attempts at a time.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::agent::AgentSpec;
use crate::incident::{self, prepare::PrepareOptions, Incident};
use crate::run::{run_info, run_jobs, write_run_info, AttemptSummary, Job};
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The agent: baseline (offline), llm (an OpenAI-compatible endpoint) or command (an external agent)
    #[arg(long, default_value = "baseline")]
    pub agent: String,
    /// Incident ids or folders
    #[arg(long = "incident", value_name = "ID")]
    pub incidents: Vec<String>,
    /// Every incident in the incidents folder
    #[arg(long)]
    pub all: bool,
    /// Attempts per incident
    #[arg(long, default_value_t = 3)]
    pub attempts: u32,
    /// The configuration's results folder, e.g. results/baseline
    #[arg(long)]
    pub out: PathBuf,
    /// Attempts run at once
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Never touch the network when preparing workspaces
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub dir: IncidentsDirArg,
    #[command(flatten)]
    pub agent_args: Box<super::agent_args::AgentArgs>,
}

pub fn run(a: RunArgs) -> CliResult {
    if a.all != a.incidents.is_empty() {
        return Err(CliError::usage("give either --incident <id>... or --all"));
    }
    if a.attempts == 0 {
        return Err(CliError::usage("--attempts must be at least 1"));
    }
    if a.jobs == 0 {
        return Err(CliError::usage("--jobs must be at least 1"));
    }
    let root = incident::incidents_dir(a.dir.dir.as_deref());
    let dirs: Vec<PathBuf> = if a.all {
        incident::list_incident_dirs(&root).map_err(|e| {
            CliError::bad_input(format!("{}: cannot list incidents: {e}", root.display()))
        })?
    } else {
        a.incidents
            .iter()
            .map(|i| incident::resolve_incident_dir(i, &root))
            .collect::<Result<_, _>>()?
    };
    // The incidents folder and every incident named by path are hidden from the agent.
    let hidden: Vec<PathBuf> = std::iter::once(root.clone())
        .chain(dirs.iter().cloned())
        .collect();
    let spec: AgentSpec = a
        .agent_args
        .build(&a.agent, &hidden)
        .map_err(CliError::usage)?;
    let outcome = run_incidents(
        &spec,
        &dirs,
        a.attempts,
        a.jobs,
        &a.out,
        a.offline,
        "distdebug run",
    )?;
    if outcome.failures.is_empty() {
        Ok(())
    } else {
        Err(CliError {
            status: 1,
            messages: outcome.failures,
        })
    }
}

/// What a run of many attempts produced.
pub(crate) struct RunOutcome {
    pub incidents: Vec<Incident>,
    pub attempts: Vec<AttemptSummary>,
    /// One sentence per incident that could not be prepared or attempt that failed.
    pub failures: Vec<String>,
}

/// Prepares each incident's workspace, runs `attempts` attempts of `spec` on each (`jobs` at
/// a time), scores each finished attempt, and writes `run.json` into `out`. Incidents that
/// cannot be prepared are reported and skipped.
pub(crate) fn run_incidents(
    spec: &AgentSpec,
    dirs: &[PathBuf],
    attempts: u32,
    jobs: usize,
    out: &Path,
    offline: bool,
    command: &str,
) -> Result<RunOutcome, CliError> {
    let rt = super::runtime()?;
    let workspaces = tempfile::tempdir()
        .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
    let mut failures = Vec::new();
    let mut prepared: Vec<(Incident, PathBuf)> = Vec::new();
    for d in dirs {
        let inc = match Incident::load(d) {
            Ok(i) => i,
            Err(p) => {
                failures.push(p.to_string());
                continue;
            }
        };
        let ws = workspaces.path().join(inc.id());
        match incident::prepare::prepare_workspace(
            &inc,
            &ws,
            &PrepareOptions {
                force: true,
                offline,
            },
        ) {
            Ok(_) => prepared.push((inc, ws)),
            Err(e) => failures.push(format!("{}: cannot prepare: {e}", inc.id())),
        }
    }
    std::fs::create_dir_all(out)
        .map_err(|e| CliError::bad_input(format!("{}: cannot create: {e}", out.display())))?;
    let ids: Vec<&str> = prepared.iter().map(|(i, _)| i.id()).collect();
    let mut info = run_info(
        spec,
        json!({"attempts": attempts, "jobs": jobs, "incidents": ids, "command": command}),
    );
    // Written at the start too, so an interrupted run still says how it was made.
    write_run_info(out, &info)?;
    let job_list: Vec<Job> = prepared
        .iter()
        .flat_map(|(_, ws)| {
            (1..=attempts).map(move |k| Job {
                workspace: ws.clone(),
                attempt: k,
            })
        })
        .collect();
    let cancel = tokio_util::sync::CancellationToken::new();
    let on_signal = cancel.clone();
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.cancel();
        }
    });
    let results = rt.block_on(run_jobs(spec, job_list, out, jobs, &cancel, |r| match r {
        Ok(s) => eprintln!(
            "{} attempt {}: {} ({} blocks){}",
            s.incident,
            s.attempt,
            s.exit.as_str(),
            s.blocks,
            s.error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        Err(e) => eprintln!("{e}"),
    }));
    let mut summaries = Vec::new();
    for r in results {
        match r {
            Ok(s) => summaries.push(s),
            Err(e) => failures.push(e),
        }
    }
    for s in &summaries {
        if let Some((inc, _)) = prepared.iter().find(|(i, _)| i.id() == s.incident) {
            super::scoring::score_attempt(inc, &s.dir);
        }
    }
    info.finished_at = crate::util::now_rfc3339();
    write_run_info(out, &info)?;
    Ok(RunOutcome {
        incidents: prepared.into_iter().map(|(i, _)| i).collect(),
        attempts: summaries,
        failures,
    })
}

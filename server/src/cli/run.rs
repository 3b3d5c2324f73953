//! `distdebug run`: attempts of one agent on incidents, written under `results/<config>/`
//! (each attempt's files, then `run.json`), `--jobs` attempts at a time. Resumable: finished
//! attempts are skipped. `--shard K/N` runs one deterministic slice of the attempts.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::agent::AgentSpec;
use crate::attempt::RunInfo;
use crate::incident::{self, prepare::PrepareOptions, Incident};
use crate::run::info::{configuration_difference, merge_run_info, read_run_info};
use crate::run::{
    all_pairs, is_finished, run_info, run_jobs, write_run_info, AttemptSummary, Job, Pair,
    Progress, Shard,
};
use clap::Args;
use serde_json::json;
use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The agent: baseline (offline), llm (an OpenAI-compatible endpoint), command (an external agent), or a harness: mini-swe-agent, codex, opencode
    #[arg(long, default_value = "baseline")]
    pub agent: String,
    /// Incident ids or folders
    #[arg(long = "incident", value_name = "ID", num_args = 1.., action = clap::ArgAction::Append)]
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
    /// Run only shard K of N (K from 0): a deterministic slice of the (incident, attempt) pairs
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
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
    let shard = match &a.shard {
        Some(s) => Shard::parse(s).map_err(CliError::usage)?,
        None => Shard::all(),
    };
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
    let spec: AgentSpec = a.agent_args.build(&a.agent, &hidden)?;
    let outcome = run_incidents(
        &spec,
        &dirs,
        &RunSettings {
            attempts: a.attempts,
            jobs: a.jobs,
            offline: a.offline,
            shard: a.shard.as_ref().map(|_| shard),
            resume: true,
            command: "distdebug run",
        },
        &a.out,
    )?;
    if outcome.interrupted {
        let mut messages = outcome.failures;
        messages.push(format!(
            "interrupted: {} attempt(s) finished in this run, {} left; run the same command again to resume",
            outcome
                .attempts
                .iter()
                .filter(|s| s.exit != crate::attempt::Exit::Cancelled)
                .count(),
            outcome.left
        ));
        return Err(CliError {
            status: 130,
            messages,
        });
    }
    if outcome.failures.is_empty() {
        Ok(())
    } else {
        Err(CliError {
            status: 1,
            messages: outcome.failures,
        })
    }
}

/// How `run_incidents` runs.
pub(crate) struct RunSettings<'a> {
    pub attempts: u32,
    pub jobs: usize,
    pub offline: bool,
    /// `Some` when this process runs one shard of a larger run.
    pub shard: Option<Shard>,
    /// Skip attempts that are already finished on disk (else every attempt is made anew).
    pub resume: bool,
    /// The command, recorded in `run.json`.
    pub command: &'a str,
}

/// What a run of many attempts produced.
pub(crate) struct RunOutcome {
    pub incidents: Vec<Incident>,
    /// The attempts this run finished (not those skipped as already finished).
    pub attempts: Vec<AttemptSummary>,
    /// One sentence per incident that could not be prepared or attempt that failed.
    pub failures: Vec<String>,
    /// Ctrl-C stopped the run.
    pub interrupted: bool,
    /// Attempts of this run (or shard) not finished when it ended.
    pub left: usize,
}

/// Runs the attempts of `spec` on the incidents in `dirs` that `settings` asks for: the pairs
/// of its shard, less those already finished when resuming, `jobs` at a time, each incident's
/// workspace prepared once. Scores each finished attempt and keeps `run.json` in `out` up to
/// date (at the start, so an interrupted run still says how it was made, and at the end).
/// Ctrl-C cancels the running attempts (they end as `cancelled`, which a resumed run redoes)
/// and starts no more; a second Ctrl-C quits at once. Every file is written atomically, so
/// nothing is left half-written either way.
pub(crate) fn run_incidents(
    spec: &AgentSpec,
    dirs: &[PathBuf],
    settings: &RunSettings,
    out: &Path,
) -> Result<RunOutcome, CliError> {
    let mut failures = Vec::new();
    let loaded = load_incidents(dirs, &mut failures);
    let ids: Vec<String> = loaded.iter().map(|i| i.id().to_string()).collect();
    let pairs = all_pairs(&ids, settings.attempts);
    let mine: &[Pair] = settings.shard.unwrap_or_else(Shard::all).slice(&pairs);
    let todo: Vec<Pair> = mine
        .iter()
        .filter(|p| !(settings.resume && is_finished(out, p)))
        .cloned()
        .collect();
    let skipped = mine.len() - todo.len();
    let info = starting_run_info(spec, settings, &ids, out)?;

    let rt = super::runtime()?;
    let workspaces = tempfile::tempdir()
        .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
    let (prepared, unprepared) = prepare_workspaces(
        &loaded,
        &todo,
        workspaces.path(),
        settings.offline,
        &mut failures,
    );
    std::fs::create_dir_all(out)
        .map_err(|e| CliError::bad_input(format!("{}: cannot create: {e}", out.display())))?;
    // Written at the start too, so an interrupted run still says how it was made.
    write_run_info(out, &info)?;
    let job_list = jobs_of(&todo, &prepared);
    let mut progress = new_progress(mine, &todo, &unprepared);
    progress.println(&plan_line(settings, &job_list, pairs.len(), skipped));

    let cancel = cancel_on_ctrl_c(&rt);
    let results = rt.block_on(run_jobs(spec, job_list, out, settings.jobs, &cancel, |e| {
        progress.event(&e)
    }));
    progress.finish();
    let interrupted = cancel.is_cancelled();
    let summaries = finished_attempts(results, &mut failures);
    for s in &summaries {
        if let Some((inc, _)) = prepared.iter().find(|(i, _)| i.id() == s.incident) {
            super::scoring::score_attempt(inc, &s.dir);
        }
    }
    let left = mine.iter().filter(|p| !is_finished(out, p)).count();
    write_final_run_info(out, info, interrupted)?;
    Ok(RunOutcome {
        incidents: prepared.into_iter().map(|(i, _)| i).collect(),
        attempts: summaries,
        failures,
        interrupted,
        left,
    })
}

/// The incidents in `dirs` that load; a sentence in `failures` for each that does not.
fn load_incidents(dirs: &[PathBuf], failures: &mut Vec<String>) -> Vec<Incident> {
    let mut loaded: Vec<Incident> = Vec::new();
    for d in dirs {
        match Incident::load(d) {
            Ok(i) => loaded.push(i),
            Err(p) => failures.push(p.to_string()),
        }
    }
    loaded
}

/// The `run.json` of this run as it starts, merged with the one already in `out`.
fn starting_run_info(
    spec: &AgentSpec,
    settings: &RunSettings,
    ids: &[String],
    out: &Path,
) -> Result<RunInfo, CliError> {
    // One results folder holds one configuration: a resumed run or another shard must be
    // the same agent, model and settings as what is there.
    let mut run_settings = json!({"attempts": settings.attempts, "jobs": settings.jobs,
        "incidents": ids, "command": settings.command});
    if let Some(s) = settings.shard {
        run_settings["shard"] = json!(s.to_string());
    }
    let info = run_info(spec, run_settings);
    let existing = read_run_info(out).map_err(|e| {
        CliError::bad_input(format!(
            "{e}; remove it or choose another --out to start a new results folder"
        ))
    })?;
    // (The demo, which redoes every attempt, overwrites whatever was there.)
    if let (Some(old), true) = (&existing, settings.resume) {
        if let Some(why) = configuration_difference(old, &info) {
            return Err(CliError::bad_input(format!(
                "{}: holds another configuration ({why}); choose another --out, or remove the folder to start over",
                out.display()
            )));
        }
    }
    Ok(merge_run_info(existing.as_ref(), info))
}

/// Prepares, under `root`, the workspace of each loaded incident that `todo` needs: those
/// prepared with their workspaces, and the ids of those that could not be (each with a
/// sentence in `failures`).
fn prepare_workspaces(
    loaded: &[Incident],
    todo: &[Pair],
    root: &Path,
    offline: bool,
    failures: &mut Vec<String>,
) -> (Vec<(Incident, PathBuf)>, BTreeSet<String>) {
    let needed: BTreeSet<&str> = todo.iter().map(|p| p.incident.as_str()).collect();
    let mut prepared: Vec<(Incident, PathBuf)> = Vec::new();
    let mut unprepared: BTreeSet<String> = Default::default();
    for inc in loaded.iter().filter(|i| needed.contains(i.id())) {
        let ws = root.join(inc.id());
        match incident::prepare::prepare_workspace(
            inc,
            &ws,
            &PrepareOptions {
                force: true,
                offline,
            },
        ) {
            Ok(_) => prepared.push((inc.clone(), ws)),
            Err(e) => {
                failures.push(format!("{}: cannot prepare: {e}", inc.id()));
                unprepared.insert(inc.id().to_string());
            }
        }
    }
    (prepared, unprepared)
}

/// The jobs of `todo` whose incident has a prepared workspace.
fn jobs_of(todo: &[Pair], prepared: &[(Incident, PathBuf)]) -> Vec<Job> {
    todo.iter()
        .filter_map(|p| {
            let (_, ws) = prepared.iter().find(|(i, _)| i.id() == p.incident)?;
            Some(Job {
                incident: p.incident.clone(),
                workspace: ws.clone(),
                attempt: p.attempt,
            })
        })
        .collect()
}

/// The progress display of the attempts of `todo` that can run, among the incidents of this
/// run (or shard).
fn new_progress(mine: &[Pair], todo: &[Pair], unprepared: &BTreeSet<String>) -> Progress {
    let incidents_in_scope = mine
        .iter()
        .map(|p| p.incident.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    Progress::new(
        &todo
            .iter()
            .filter(|p| !unprepared.contains(&p.incident))
            .cloned()
            .collect::<Vec<_>>(),
        incidents_in_scope,
        std::io::stderr().is_terminal(),
    )
}

/// The line that says what this run is about to do.
fn plan_line(settings: &RunSettings, job_list: &[Job], pairs: usize, skipped: usize) -> String {
    format!(
        "{}: {} attempt(s) to run on {} incident(s){}{}, {} at a time",
        settings.command,
        job_list.len(),
        job_list
            .iter()
            .map(|j| j.incident.as_str())
            .collect::<BTreeSet<_>>()
            .len(),
        settings
            .shard
            .map(|s| format!(" (shard {s} of {pairs} attempts in all)"))
            .unwrap_or_default(),
        if skipped > 0 {
            format!("; {skipped} already finished, skipped")
        } else {
            String::new()
        },
        settings.jobs
    )
}

/// A token that the first Ctrl-C cancels; a second Ctrl-C quits at once.
fn cancel_on_ctrl_c(rt: &tokio::runtime::Runtime) -> CancellationToken {
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("stopping: running attempts are cancelled and no more start (Ctrl-C again to quit at once)");
            on_signal.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                // Every file is written atomically: quitting now leaves no half-written file,
                // only unfinished attempts, which the next run redoes.
                eprintln!("quitting; run the same command again to resume");
                std::process::exit(130);
            }
        }
    });
    cancel
}

/// The summaries of the attempts that finished; a sentence in `failures` for each that failed.
fn finished_attempts(
    results: Vec<Option<Result<AttemptSummary, String>>>,
    failures: &mut Vec<String>,
) -> Vec<AttemptSummary> {
    let mut summaries = Vec::new();
    for r in results.into_iter().flatten() {
        match r {
            Ok(s) => summaries.push(s),
            Err(e) => failures.push(e),
        }
    }
    summaries
}

/// Writes `run.json` as the run ends.
fn write_final_run_info(out: &Path, mut info: RunInfo, interrupted: bool) -> Result<(), CliError> {
    // The end, unless another run on this folder (a shard) is still going: then the last to
    // finish sets it. An interrupted run records that it was.
    info.finished_at = crate::util::now_rfc3339();
    if interrupted {
        info.extra.insert("interrupted".into(), json!(true));
    } else {
        info.extra.remove("interrupted");
    }
    let latest = read_run_info(out).ok().flatten();
    write_run_info(out, &merge_run_info(latest.as_ref(), info))?;
    Ok(())
}

//! `distdebug demo`: the whole loop on the bundled self-contained incidents with the offline
//! agent: prepare, run, score, print the table. Upstream (git-url) incidents run too when the
//! repository cache holds their commit; the others are skipped (never fetched) and counted.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::agent::AgentSpec;
use crate::incident::{self, repo_cache, validate::validate_incident, Incident, RepositorySource};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub dir: IncidentsDirArg,
    /// Where the attempts are written
    #[arg(long, default_value = "results/demo/baseline")]
    pub out: PathBuf,
    /// Attempts per incident (the offline agent is deterministic, so one says it all)
    #[arg(long, default_value_t = 1)]
    pub attempts: u32,
    /// Attempts run at once (default: the number of cores)
    #[arg(long)]
    pub jobs: Option<usize>,
}

pub fn run(a: DemoArgs) -> CliResult {
    if a.attempts == 0 {
        return Err(CliError::usage("--attempts must be at least 1"));
    }
    let root = incident::incidents_dir(a.dir.dir.as_deref());
    let dirs = incident::list_incident_dirs(&root).map_err(|e| {
        CliError::bad_input(format!("{}: cannot list incidents: {e}", root.display()))
    })?;
    let mut bundled: Vec<PathBuf> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for d in dirs {
        let problems = validate_incident(&d);
        if !problems.is_empty() {
            return Err(CliError {
                status: 1,
                messages: problems.iter().map(|p| p.to_string()).collect(),
            });
        }
        let inc = Incident::load(&d).map_err(|p| p.to_string())?;
        match &inc.manifest.repository {
            RepositorySource::Path(_) => bundled.push(d),
            RepositorySource::Git { url, commit } => {
                if repo_cache::ensure_commit(url, commit, true).is_ok() {
                    bundled.push(d);
                } else {
                    skipped.push(inc.manifest.id.clone());
                }
            }
        }
    }
    if !skipped.is_empty() {
        println!(
            "skipped {} upstream incident(s) whose repository is not in the cache {} ({}); \
             `distdebug cache list` shows which, `distdebug cache add <url> <mirror>` (or one \
             `distdebug prepare <id>` with network) includes them",
            skipped.len(),
            repo_cache::cache_root().display(),
            skipped.join(", ")
        );
    }
    if bundled.is_empty() {
        return Err(CliError::bad_input(format!(
            "{}: no self-contained incidents (with a repo/ folder) to run the demo on",
            root.display()
        )));
    }
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let spec = AgentSpec::from_name("baseline").map_err(CliError::usage)?;
    println!(
        "distdebug demo: {} incidents of {} ({}), offline agent, {} attempt(s) each, results in {}",
        bundled.len(),
        root.display(),
        bundled
            .iter()
            .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(", "),
        a.attempts,
        a.out.display()
    );
    // The demo always makes every attempt anew: it shows the whole loop.
    let outcome = super::run::run_incidents(
        &spec,
        &bundled,
        &super::run::RunSettings {
            attempts: a.attempts,
            jobs,
            offline: true,
            shard: None,
            resume: false,
            command: "distdebug demo",
        },
        &a.out,
    )?;
    if outcome.interrupted {
        return Err(CliError {
            status: 130,
            messages: vec!["interrupted".to_string()],
        });
    }
    for f in &outcome.failures {
        eprintln!("{f}");
    }
    super::scoring::print_results(&a.out, &root, &outcome, a.attempts)?;
    Ok(())
}

//! `distdebug run`: attempts of one agent on incidents, written under `results/<config>/`.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::agent::AgentSpec;
use crate::incident::{self, prepare::PrepareOptions, Incident};
use clap::Args;
use std::path::PathBuf;

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
    let rt = super::runtime()?;
    let mut run_info = spec.run_info();
    run_info.started_at = crate::util::now_rfc3339();
    let workspaces = tempfile::tempdir()
        .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
    let cancel = tokio_util::sync::CancellationToken::new();
    // Ctrl-C cancels the attempts, so agents and their children are ended, not orphaned.
    let on_interrupt = cancel.clone();
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    let mut failures = Vec::new();
    for d in dirs {
        let inc = Incident::load(&d).map_err(|p| p.to_string())?;
        let ws = workspaces.path().join(inc.id());
        if let Err(e) = incident::prepare::prepare_workspace(
            &inc,
            &ws,
            &PrepareOptions {
                force: true,
                offline: a.offline,
            },
        ) {
            failures.push(e);
            continue;
        }
        for k in 1..=a.attempts {
            match rt.block_on(crate::run::run_attempt(
                &spec, &ws, &a.out, k, None, &cancel,
            )) {
                Ok(s) => eprintln!(
                    "{} attempt {}: {} ({} blocks){}",
                    s.incident,
                    s.attempt,
                    s.exit.as_str(),
                    s.blocks,
                    s.error.map(|e| format!(": {e}")).unwrap_or_default()
                ),
                Err(e) => failures.push(e),
            }
        }
    }
    run_info.finished_at = crate::util::now_rfc3339();
    let run_json = a.out.join(crate::attempt::layout::RUN_INFO);
    if let Err(e) = crate::util::fs::write_json_atomic(&run_json, &run_info) {
        failures.push(format!("{}: cannot write: {e}", run_json.display()));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(CliError {
            status: 1,
            messages: failures,
        })
    }
}

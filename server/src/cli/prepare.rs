//! `distdebug prepare <incident> --out <dir>`: the anonymized workspace.

use super::{CliResult, IncidentsDirArg};
use crate::incident::{self, prepare::PrepareOptions, Incident};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct PrepareArgs {
    /// An incident id (under the incidents folder) or a path to an incident folder
    pub incident: String,
    /// Where to make the workspace
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an existing non-empty output folder
    #[arg(long)]
    pub force: bool,
    /// Never touch the network; fail when the repository cache lacks the buggy commit
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub dir: IncidentsDirArg,
}

pub fn run(a: PrepareArgs) -> CliResult {
    let root = incident::incidents_dir(a.dir.dir.as_deref());
    let dir = incident::resolve_incident_dir(&a.incident, &root)?;
    let inc = Incident::load(&dir).map_err(|p| p.to_string())?;
    let info = incident::prepare::prepare_workspace(
        &inc,
        &a.out,
        &PrepareOptions {
            force: a.force,
            offline: a.offline,
        },
    )?;
    println!("prepared {} at {}", info.incident, a.out.display());
    Ok(())
}

//! `distdebug demo`: the whole loop on the bundled incidents with the offline agent.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::incident::{
    self, prepare::PrepareOptions, validate::validate_incident, Incident, RepositorySource,
};
use clap::Args;

#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub dir: IncidentsDirArg,
}

pub fn run(a: DemoArgs) -> CliResult {
    let root = incident::incidents_dir(a.dir.dir.as_deref());
    let dirs = incident::list_incident_dirs(&root).map_err(|e| {
        CliError::bad_input(format!("{}: cannot list incidents: {e}", root.display()))
    })?;
    let work = tempfile::tempdir()
        .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
    let mut prepared = 0;
    for d in dirs {
        let problems = validate_incident(&d);
        if !problems.is_empty() {
            return Err(CliError {
                status: 1,
                messages: problems.iter().map(|p| p.to_string()).collect(),
            });
        }
        let inc = Incident::load(&d).map_err(|p| p.to_string())?;
        if !matches!(inc.manifest.repository, RepositorySource::Path(_)) {
            continue; // upstream incidents need the network; the demo runs offline
        }
        incident::prepare::prepare_workspace(
            &inc,
            &work.path().join(inc.id()),
            &PrepareOptions {
                force: true,
                offline: true,
            },
        )?;
        println!("prepared {}", inc.id());
        prepared += 1;
    }
    println!("{prepared} incident(s) prepared");
    Ok(())
}

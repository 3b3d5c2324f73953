//! `distdebug incidents list` and `distdebug incidents validate`.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::incident::{self, validate::validate_incident, Incident};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum IncidentsCommand {
    /// One line per incident: id, system, language, category, #labels
    List {
        #[command(flatten)]
        dir: IncidentsDirArg,
    },
    /// Validate incidents (all under the incidents folder when no PATH is given)
    Validate {
        /// Incident folders or ids
        paths: Vec<String>,
        #[command(flatten)]
        dir: IncidentsDirArg,
    },
}

pub fn run(cmd: IncidentsCommand) -> CliResult {
    match cmd {
        IncidentsCommand::List { dir } => list(dir),
        IncidentsCommand::Validate { paths, dir } => validate(paths, dir),
    }
}

fn all_incident_dirs(dir: &std::path::Path) -> Result<Vec<PathBuf>, CliError> {
    incident::list_incident_dirs(dir)
        .map_err(|e| CliError::bad_input(format!("{}: cannot list incidents: {e}", dir.display())))
}

fn list(dir: IncidentsDirArg) -> CliResult {
    let root = incident::incidents_dir(dir.dir.as_deref());
    let mut errors = Vec::new();
    for d in all_incident_dirs(&root)? {
        match Incident::load_for_listing(&d) {
            Ok(inc) => {
                let labels = inc
                    .load_labels()
                    .map(|l| l.blocks.len().to_string())
                    .unwrap_or_else(|_| "?".to_string());
                let m = &inc.manifest;
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    m.id,
                    m.system,
                    m.language,
                    m.category.as_str(),
                    labels
                );
            }
            Err(p) => errors.push(p.to_string()),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CliError {
            status: 1,
            messages: errors,
        })
    }
}

fn validate(paths: Vec<String>, dir: IncidentsDirArg) -> CliResult {
    let root = incident::incidents_dir(dir.dir.as_deref());
    let dirs = if paths.is_empty() {
        all_incident_dirs(&root)?
    } else {
        let mut v = Vec::new();
        for p in &paths {
            let as_path = PathBuf::from(p);
            // A folder given by path is validated even when its incident.json is missing,
            // so that the error names what is missing.
            if as_path.is_dir() {
                v.push(as_path);
            } else {
                v.push(incident::resolve_incident_dir(p, &root).map_err(CliError::bad_input)?);
            }
        }
        v
    };
    let mut problems = Vec::new();
    for d in &dirs {
        problems.extend(validate_incident(d).into_iter().map(|p| p.to_string()));
    }
    if problems.is_empty() {
        eprintln!("{} incident(s) valid", dirs.len());
        Ok(())
    } else {
        Err(CliError {
            status: 1,
            messages: problems,
        })
    }
}

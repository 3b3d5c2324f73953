//! Incidents: the manifest, labels, report and evidence (docs/incident-format.md), their validation,
//! and the anonymized workspace an agent works in.

pub mod corpus_table;
pub mod deep;
pub mod discover;
pub mod fix_notes;
pub mod frames;
pub mod labels;
pub mod manifest;
pub mod prepare;
pub mod problem;
pub mod repo_cache;
pub mod repo_mirror;
mod strict_json;
pub mod validate;

pub use discover::{incidents_dir, list_incident_dirs, resolve_incident_dir};
pub use labels::{LabelBlock, Labels};
pub use manifest::{Category, FixSource, Manifest, RepositorySource};
pub use problem::Problem;

use std::path::{Path, PathBuf};

/// A loaded incident: its folder and its parsed manifest. Labels are loaded on demand
/// (`load_labels`) because most callers (agents above all) must never see them.
#[derive(Debug, Clone)]
pub struct Incident {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

/// One evidence file as an agent sees it: its path relative to the incident and its text.
#[derive(Debug, Clone)]
pub struct EvidenceFile {
    pub name: String,
    pub text: String,
}

impl Incident {
    /// Loads `incident.json` with the same checks as `distdebug incidents validate` makes of
    /// it (fields, id against the folder, every path inside the incident, nothing an agent
    /// must not see), and refuses the incident on the first problem, worded as validation
    /// words it. Labels are checked when they are loaded.
    pub fn load(dir: &Path) -> Result<Incident, Problem> {
        match validate::check_manifest(dir) {
            (Some((manifest, _)), problems) if problems.is_empty() => Ok(Incident {
                dir: dir.to_path_buf(),
                manifest,
            }),
            (_, mut problems) if !problems.is_empty() => Err(problems.remove(0)),
            _ => Err(Problem::new(
                &dir.join("incident.json"),
                "",
                "cannot be read as an incident manifest",
            )),
        }
    }

    /// Reads `incident.json` alone, without the checks of [`Incident::load`]: for listings,
    /// which show an incident even when one of its files is missing. Never for running or
    /// scoring.
    pub fn load_for_listing(dir: &Path) -> Result<Incident, Problem> {
        Ok(Incident {
            dir: dir.to_path_buf(),
            manifest: Manifest::load(&dir.join("incident.json"))?,
        })
    }

    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    pub fn labels_path(&self) -> PathBuf {
        self.dir.join("labels.json")
    }

    pub fn report_path(&self) -> PathBuf {
        self.dir.join(&self.manifest.report)
    }

    /// The folder of a self-contained incident's source tree, `None` for git-url incidents.
    pub fn repo_dir(&self) -> Option<PathBuf> {
        match &self.manifest.repository {
            RepositorySource::Path(p) => Some(self.dir.join(p)),
            RepositorySource::Git { .. } => None,
        }
    }

    pub fn load_labels(&self) -> Result<Labels, Problem> {
        Labels::load(&self.labels_path())
    }

    pub fn load_report(&self) -> Result<String, Problem> {
        let path = self.report_path();
        read_text_lossy(&path)
            .map_err(|e| Problem::new(&path, "", format!("cannot read the report: {e}")))
    }

    pub fn load_evidence(&self) -> Result<Vec<EvidenceFile>, Problem> {
        self.manifest
            .evidence
            .iter()
            .map(|name| {
                let path = self.dir.join(name);
                let text = read_text_lossy(&path).map_err(|e| {
                    Problem::new(&path, "", format!("cannot read evidence file: {e}"))
                })?;
                Ok(EvidenceFile {
                    name: name.clone(),
                    text,
                })
            })
            .collect()
    }
}

/// Reads a file as text, replacing invalid UTF-8 rather than failing: logs are often not clean.
pub fn read_text_lossy(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

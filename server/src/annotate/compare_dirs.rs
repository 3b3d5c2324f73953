//! Two results folders compared incident by incident (`distdebug compare results/A results/B`):
//! for each incident both hold, one attempt of each side (the first on disk unless chosen),
//! compared with `compare::compare` against the incident's labels.

use super::compare::{compare, Comparison, Side};
use crate::attempt::layout::{list_attempts, list_result_incidents, DIAGNOSIS};
use crate::attempt::Diagnosis;
use crate::incident::Incident;
use crate::score::{config_name, RepoFiles};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IncidentComparison {
    pub incident: String,
    pub a_attempt: u32,
    pub b_attempt: u32,
    /// Why a side's diagnosis is not schema-valid (it is compared as naming nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_error: Option<String>,
    /// Why there are no scores or hits (the incident or its labels could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unscored: Option<String>,
    pub comparison: Comparison,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirsComparison {
    pub a: String,
    pub b: String,
    pub incidents: Vec<IncidentComparison>,
    /// Incidents with an attempt on one side only.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// Problems that did not stop the comparison (printed on stderr).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Which attempt of each side to compare: a number, or the first one on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AttemptChoice {
    pub a: Option<u32>,
    pub b: Option<u32>,
}

/// The incidents of a results folder that have the wanted attempt (id, attempt, folder), and
/// those that are there without it (id, the attempts they have).
type Found = (Vec<(String, u32, PathBuf)>, Vec<(String, Vec<u32>)>);

fn attempts_of(dir: &Path, want: Option<u32>) -> Result<Found, String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: no such results folder; expected results/<config> as written by `distdebug run`",
            dir.display()
        ));
    }
    let list =
        list_result_incidents(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
    let mut found = Vec::new();
    let mut without = Vec::new();
    for (id, path) in list {
        let attempts = list_attempts(&path);
        let numbers: Vec<u32> = attempts.iter().map(|(k, _)| *k).collect();
        let hit = match want {
            Some(k) => attempts.into_iter().find(|(n, _)| *n == k),
            None => attempts.into_iter().next(),
        };
        match hit {
            Some((k, d)) => found.push((id, k, d)),
            None => without.push((id, numbers)),
        }
    }
    Ok((found, without))
}

/// Why an incident present on a side is not compared: it lacks the chosen attempt.
fn lacks_attempt(side: &str, id: &str, want: Option<u32>, has: &[u32]) -> String {
    let has = if has.is_empty() {
        "none".to_string()
    } else {
        has.iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match want {
        Some(k) => format!("{id}: not compared: {side} has no attempt {k} (its attempts: {has})"),
        None => format!("{id}: not compared: {side} has no attempt"),
    }
}

/// The blocks of an attempt's diagnosis, or why it is not schema-valid.
fn blocks_of(attempt: &Path) -> (Diagnosis, Option<String>) {
    match Diagnosis::load(&attempt.join(DIAGNOSIS)) {
        Ok(d) => (d, None),
        Err(e) => (Diagnosis::default(), Some(e)),
    }
}

/// Compares results folders `a` and `b` incident by incident; labels come from the incidents
/// under `incidents_dir`. A results folder that does not exist is an error.
pub fn compare_dirs(
    a: &Path,
    b: &Path,
    incidents_dir: &Path,
    choice: AttemptChoice,
) -> Result<DirsComparison, String> {
    let (la, lb) = (attempts_of(a, choice.a), attempts_of(b, choice.b));
    let ((la, wa), (lb, wb)) = match (la, lb) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(e),
        (Err(e1), Err(e2)) => return Err(format!("{e1}\n{e2}")),
    };
    let (name_a, name_b) = (config_name(a), config_name(b));
    let mut out = DirsComparison {
        a: name_a.clone(),
        b: name_b.clone(),
        incidents: Vec::new(),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        warnings: Vec::new(),
    };
    for (id, has) in &wa {
        out.warnings
            .push(lacks_attempt(&format!("A ({name_a})"), id, choice.a, has));
    }
    for (id, has) in &wb {
        out.warnings
            .push(lacks_attempt(&format!("B ({name_b})"), id, choice.b, has));
    }
    for (id, ka, da) in &la {
        let Some((_, kb, db)) = lb.iter().find(|(x, _, _)| x == id) else {
            if !wb.iter().any(|(x, _)| x == id) {
                out.only_in_a.push(id.clone());
            }
            continue;
        };
        let (diag_a, a_error) = blocks_of(da);
        let (diag_b, b_error) = blocks_of(db);
        let dir = incidents_dir.join(id);
        let loaded = Incident::load(&dir)
            .map_err(|p| p.to_string())
            .and_then(|inc| {
                let labels = inc.load_labels().map_err(|p| p.to_string())?;
                Ok((RepoFiles::for_incident(&inc), labels))
            });
        let (files, labels, unscored) = match loaded {
            Ok((f, l)) => (f, Some(l), None),
            Err(e) => {
                let why = if dir.join("incident.json").is_file() {
                    e
                } else {
                    format!("no incident {id:?} in {}", incidents_dir.display())
                };
                out.warnings
                    .push(format!("{id}: compared without scores: {why}"));
                (RepoFiles::unknown(), None, Some(why))
            }
        };
        let comparison = compare(
            &Side {
                name: format!("{name_a} #{ka}"),
                blocks: &diag_a.blocks,
            },
            &Side {
                name: format!("{name_b} #{kb}"),
                blocks: &diag_b.blocks,
            },
            labels.as_ref().map(|l| l.blocks.as_slice()),
            &|p| files.line_count(p),
        );
        out.incidents.push(IncidentComparison {
            incident: id.clone(),
            a_attempt: *ka,
            b_attempt: *kb,
            a_error,
            b_error,
            unscored,
            comparison,
        });
    }
    for (id, _, _) in &lb {
        if !la.iter().any(|(x, _, _)| x == id) && !wa.iter().any(|(x, _)| x == id) {
            out.only_in_b.push(id.clone());
        }
    }
    Ok(out)
}

/// Agreement between the annotators of the incident in `dir`, with file lengths from its
/// repository at the buggy revision.
pub fn incident_agreement(dir: &Path) -> Result<super::Agreement, String> {
    let inc = Incident::load(dir).map_err(|p| p.to_string())?;
    let labels = inc.load_labels().map_err(|p| p.to_string())?;
    let files = RepoFiles::for_incident(&inc);
    Ok(super::agreement(inc.id(), &labels.blocks, &|p| {
        files.line_count(p)
    }))
}

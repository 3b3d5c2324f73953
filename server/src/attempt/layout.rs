//! Where attempts live: `results/<config>/<incident-id>/attempt-<k>/` and `run.json`.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const DIAGNOSIS: &str = "diagnosis.json";
pub const SCORES: &str = "diagnosis_scores.json";
pub const TRAJECTORY: &str = "trajectory.json";
pub const TRAJECTORY_LIVE: &str = "trajectory.jsonl";
pub const RUN_INFO: &str = "run.json";

pub fn attempt_dir(config_dir: &Path, incident: &str, attempt: u32) -> PathBuf {
    config_dir.join(incident).join(format!("attempt-{attempt}"))
}

/// The attempts of one incident in a results tree, sorted by attempt number.
pub fn list_attempts(incident_dir: &Path) -> Vec<(u32, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(incident_dir) else {
        return Vec::new();
    };
    let mut out: Vec<(u32, PathBuf)> = entries
        .filter_map(|e| e.ok())
        // A link is never an attempt: its target could lie anywhere.
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let k = name.strip_prefix("attempt-")?.parse::<u32>().ok()?;
            Some((k, e.path()))
        })
        .collect();
    out.sort_by_key(|(k, _)| *k);
    out
}

/// The incident folders of a results tree (`results/<config>/<incident-id>/`), sorted.
pub fn list_result_incidents(config_dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(config_dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type()?.is_dir() && !name.starts_with('.') {
            out.push((name, e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// `results/<config>/run.json`: how the attempts of a configuration were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct RunInfo {
    pub agent: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub harness: String,
    /// The endpoint's host only: never the key, never the full URL with credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_host: Option<String>,
    #[serde(default)]
    pub settings: serde_json::Value,
    #[serde(default)]
    pub distdebug_version: String,
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub finished_at: String,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

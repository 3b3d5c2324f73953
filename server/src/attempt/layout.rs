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

/// The attempt number of a folder name: `attempt-<k>` with k >= 1 written without leading
/// zeros (`attempt-0`, `attempt-01`, `attempt-+1` are not attempts).
pub fn attempt_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("attempt-")?;
    let well_formed = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0');
    well_formed.then(|| digits.parse::<u32>().ok()).flatten()
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
            Some((attempt_number(&name)?, e.path()))
        })
        .collect();
    out.sort_by_key(|(k, _)| *k);
    out
}

/// Folders of an incident's results that look like attempts but are not named
/// `attempt-<k>` (k >= 1, no leading zeros): reported, never scored.
pub fn misnamed_attempts(incident_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(incident_dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("attempt") && attempt_number(&name).is_none()
        })
        .map(|e| e.path())
        .collect();
    out.sort();
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

#[cfg(test)]
mod attempt_name_tests {
    use super::attempt_number;

    #[test]
    fn only_attempt_k_from_1_without_leading_zeros_is_an_attempt() {
        assert_eq!(attempt_number("attempt-1"), Some(1));
        assert_eq!(attempt_number("attempt-10"), Some(10));
        for bad in [
            "attempt-0",
            "attempt-01",
            "attempt-",
            "attempt-+1",
            "attempt-1a",
            "attempt-99999999999",
        ] {
            assert_eq!(attempt_number(bad), None, "{bad}");
        }
    }
}

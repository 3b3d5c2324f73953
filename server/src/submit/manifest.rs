//! `manifest.json` of a submission package: what the package holds, per incident and attempt,
//! and every other file's SHA-256 and size.

use crate::score::leakage::Leakage;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub const FORMAT: &str = "distdebug-submission";
pub const FORMAT_VERSION: u32 = 1;
/// Every entry of the archive lives under this folder.
pub const ROOT: &str = "submission";
pub const MANIFEST: &str = "manifest.json";
/// The per-attempt result of the local leakage check.
pub const LEAKAGE: &str = "leakage.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub format_version: u32,
    /// The configuration's name (its results folder's name).
    pub config: String,
    pub created_at: String,
    pub distdebug_version: String,
    /// Attempts per incident the package was made for (the protocol's N).
    pub attempts_per_incident: usize,
    pub incidents: Vec<ManifestIncident>,
    /// Every file of the package except this manifest, by path inside `submission/`.
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestIncident {
    pub id: String,
    pub attempts: Vec<ManifestAttempt>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestAttempt {
    pub attempt: u32,
    /// `trajectory.json`'s exit reason (`submitted`, `budget`, `error`, `cancelled`).
    pub exit: String,
    /// Whether `diagnosis.json` exists and is schema-valid (the attempt format, docs/agents.md).
    pub schema_valid: bool,
    /// The local leakage check's verdict (the reasons are in the attempt's `leakage.json`).
    pub flagged: bool,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// Token use and cost over every attempt of the package, added to its `run.json` as `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct UsageTotals {
    pub attempts: usize,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
}

impl UsageTotals {
    pub fn add(&mut self, a: &ManifestAttempt) {
        self.attempts += 1;
        self.prompt_tokens += a.prompt_tokens;
        self.completion_tokens += a.completion_tokens;
        self.cost_usd += a.cost_usd;
    }

    /// Equal up to the rounding of summing costs in another order.
    pub fn matches(&self, other: &UsageTotals) -> bool {
        self.attempts == other.attempts
            && self.prompt_tokens == other.prompt_tokens
            && self.completion_tokens == other.completion_tokens
            && (self.cost_usd - other.cost_usd).abs() <= 1e-6 * self.cost_usd.abs().max(1.0)
    }
}

/// The leakage file of one attempt.
pub type LeakageFile = Leakage;

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The path of an attempt file inside `submission/`.
pub fn attempt_file(incident: &str, attempt: u32, name: &str) -> String {
    format!("{incident}/attempt-{attempt}/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_reference_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

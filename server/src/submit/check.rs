//! `distdebug submit --check`: validates a submission package the way a maintainer would
//! before listing it: the archive's shape, every checksum against the manifest, every file
//! against its schema, N attempts per incident, and the manifest against the files.
//!
//! The package is untrusted input. It is read as a stream and never extracted: entries
//! outside `submission/`, with `..`, absolute, links or devices are refused, and file sizes
//! are capped, so a hostile archive can neither write anywhere nor exhaust memory.

use super::manifest::{
    sha256_hex, Manifest, UsageTotals, FORMAT, FORMAT_VERSION, LEAKAGE, MANIFEST, ROOT,
};
use crate::attempt::layout::{DIAGNOSIS, RUN_INFO, TRAJECTORY};
use crate::attempt::{Diagnosis, RunInfo, Trajectory};
use crate::incident::manifest::is_valid_id;
use crate::score::leakage::Leakage;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;

/// The largest single file a package may hold (a long trajectory is a few megabytes).
pub const MAX_FILE_BYTES: u64 = 256 << 20;
/// The most a package may hold in all, uncompressed.
pub const MAX_TOTAL_BYTES: u64 = 16 << 30;

/// The verdict on a package: what it holds and every problem found (none: it passes).
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    pub config: Option<String>,
    pub incidents: usize,
    pub attempts: usize,
    pub flagged: usize,
    pub not_schema_valid: usize,
    pub usage: UsageTotals,
    pub problems: Vec<String>,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What one attempt's files said, as they were read from the archive.
#[derive(Default)]
struct SeenAttempt {
    /// `Some(valid)` when `diagnosis.json` is present.
    diagnosis_valid: Option<bool>,
    trajectory: Option<Result<Trajectory, String>>,
    leakage: Option<Result<Leakage, String>>,
}

/// A file of the archive: checksum and size.
struct SeenFile {
    sha256: String,
    bytes: u64,
}

/// `<id>/attempt-<k>/<name>` split into its parts.
fn attempt_path(rel: &str) -> Option<(&str, u32, &str)> {
    let mut parts = rel.split('/');
    let id = parts.next()?;
    let k = parts.next()?.strip_prefix("attempt-")?.parse().ok()?;
    let name = parts.next()?;
    if parts.next().is_some() {
        return None;
    }
    Some((id, k, name))
}

/// The path of an entry inside `submission/`, or why it is not acceptable.
fn entry_rel(raw: &[u8]) -> Result<String, String> {
    let path = std::str::from_utf8(raw).map_err(|_| "a path that is not UTF-8".to_string())?;
    if path.starts_with('/') || path.contains('\\') {
        return Err(format!("{path}: absolute or with backslashes"));
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.iter().any(|p| *p == ".." || *p == ".") {
        return Err(format!("{path}: contains '.' or '..'"));
    }
    match parts.split_first() {
        Some((first, rest)) if *first == ROOT => Ok(rest.join("/")),
        _ => Err(format!("{path}: outside the {ROOT}/ folder")),
    }
}

/// Checks the package at `path`; `attempts` is the number of attempts every incident needs.
pub fn check_package(path: &Path, attempts: usize) -> CheckReport {
    let mut report = CheckReport::default();
    let name = path.display().to_string();
    let problem = |r: &mut CheckReport, what: String| r.problems.push(format!("{name}: {what}"));
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            problem(&mut report, format!("cannot open: {e}"));
            return report;
        }
    };
    let mut archive =
        tar::Archive::new(flate2::read::GzDecoder::new(std::io::BufReader::new(file)));
    let entries = match archive.entries() {
        Ok(e) => e,
        Err(e) => {
            problem(&mut report, format!("not a gzipped tar: {e}"));
            return report;
        }
    };

    let mut files: BTreeMap<String, SeenFile> = BTreeMap::new();
    let mut seen: BTreeMap<(String, u32), SeenAttempt> = BTreeMap::new();
    let mut manifest_bytes: Option<Vec<u8>> = None;
    let mut run_bytes: Option<Vec<u8>> = None;
    let mut total: u64 = 0;
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                problem(&mut report, format!("not a readable gzipped tar: {e}"));
                return report;
            }
        };
        let rel = match entry_rel(&entry.path_bytes()) {
            Ok(r) => r,
            Err(why) => {
                problem(&mut report, format!("entry refused: {why}"));
                continue;
            }
        };
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            problem(
                &mut report,
                format!("{ROOT}/{rel}: a {kind:?} entry; a package holds only regular files"),
            );
            continue;
        }
        let size = entry.header().size().unwrap_or(u64::MAX);
        total = total.saturating_add(size);
        if size > MAX_FILE_BYTES || total > MAX_TOTAL_BYTES {
            problem(
                &mut report,
                format!("{ROOT}/{rel}: too large ({size} bytes; a file may hold {MAX_FILE_BYTES}, a package {MAX_TOTAL_BYTES})"),
            );
            return report;
        }
        let mut data = Vec::with_capacity(size as usize);
        if let Err(e) = (&mut entry).take(MAX_FILE_BYTES + 1).read_to_end(&mut data) {
            problem(&mut report, format!("{ROOT}/{rel}: cannot read: {e}"));
            return report;
        }
        if files.contains_key(&rel) || (rel == MANIFEST && manifest_bytes.is_some()) {
            problem(&mut report, format!("{ROOT}/{rel}: appears twice"));
            continue;
        }
        if rel == MANIFEST {
            manifest_bytes = Some(data);
            continue;
        }
        files.insert(
            rel.clone(),
            SeenFile {
                sha256: sha256_hex(&data),
                bytes: data.len() as u64,
            },
        );
        if rel == RUN_INFO {
            run_bytes = Some(data);
            continue;
        }
        let Some((id, k, file)) = attempt_path(&rel) else {
            continue; // reported below: not in the manifest, or not a file a package holds
        };
        let a = seen.entry((id.to_string(), k)).or_default();
        let text = String::from_utf8(data).map_err(|_| "not UTF-8".to_string());
        match file {
            DIAGNOSIS => {
                a.diagnosis_valid = Some(text.and_then(|t| Diagnosis::parse(&t)).is_ok());
            }
            TRAJECTORY => {
                a.trajectory = Some(text.and_then(|t| {
                    serde_json::from_str::<Trajectory>(&t).map_err(|e| e.to_string())
                }));
            }
            LEAKAGE => {
                a.leakage =
                    Some(text.and_then(|t| {
                        serde_json::from_str::<Leakage>(&t).map_err(|e| e.to_string())
                    }));
            }
            _ => {}
        }
    }

    // Read the gzip stream to its end, so its CRC is checked too (tar stops at its own end
    // marker and would not notice damage after it).
    if let Err(e) = std::io::copy(&mut archive.into_inner(), &mut std::io::sink()) {
        problem(&mut report, format!("the gzip stream is damaged: {e}"));
    }

    let Some(manifest_bytes) = manifest_bytes else {
        problem(&mut report, format!("no {ROOT}/{MANIFEST}"));
        return report;
    };
    let manifest: Manifest = match serde_json::from_slice(&manifest_bytes) {
        Ok(m) => m,
        Err(e) => {
            problem(
                &mut report,
                format!("{ROOT}/{MANIFEST}: not a submission manifest: {e}"),
            );
            return report;
        }
    };
    if manifest.format != FORMAT || manifest.format_version != FORMAT_VERSION {
        problem(
            &mut report,
            format!(
                "{ROOT}/{MANIFEST}: format {:?} version {}; expected {FORMAT:?} version {FORMAT_VERSION}",
                manifest.format, manifest.format_version
            ),
        );
    }
    report.config = Some(manifest.config.clone());

    // Checksums: every listed file is there and unchanged; every file is listed.
    let mut listed: BTreeSet<&str> = BTreeSet::new();
    for f in &manifest.files {
        if !listed.insert(f.path.as_str()) {
            problem(
                &mut report,
                format!("{ROOT}/{MANIFEST}: lists {} twice", f.path),
            );
            continue;
        }
        match files.get(&f.path) {
            None => problem(
                &mut report,
                format!("{ROOT}/{}: listed in the manifest but missing", f.path),
            ),
            Some(s) if s.sha256 != f.sha256 || s.bytes != f.bytes => problem(
                &mut report,
                format!(
                    "{ROOT}/{}: checksum mismatch: sha256 {} ({} bytes), the manifest says {} ({} bytes)",
                    f.path, s.sha256, s.bytes, f.sha256, f.bytes
                ),
            ),
            Some(_) => {}
        }
    }
    for rel in files.keys() {
        if !listed.contains(rel.as_str()) {
            problem(&mut report, format!("{ROOT}/{rel}: not in the manifest"));
        }
    }

    // Incidents and attempts: N each, numbered without gaps, every file consistent.
    let mut usage = UsageTotals::default();
    let mut ids: BTreeSet<&str> = BTreeSet::new();
    let mut expected_attempts: BTreeSet<(String, u32)> = BTreeSet::new();
    for inc in &manifest.incidents {
        if !is_valid_id(&inc.id) {
            problem(
                &mut report,
                format!(
                    "{ROOT}/{MANIFEST}: incident id {:?} is not [a-z0-9][a-z0-9._-]*",
                    inc.id
                ),
            );
        }
        if !ids.insert(inc.id.as_str()) {
            problem(
                &mut report,
                format!("{ROOT}/{MANIFEST}: incident {} listed twice", inc.id),
            );
            continue;
        }
        let numbers: Vec<u32> = inc.attempts.iter().map(|a| a.attempt).collect();
        let want: Vec<u32> = (1..=numbers.len() as u32).collect();
        if numbers != want {
            problem(
                &mut report,
                format!(
                    "{}: attempts {numbers:?}; expected 1 to {} without gaps",
                    inc.id,
                    numbers.len()
                ),
            );
        }
        if numbers.len() < attempts {
            problem(
                &mut report,
                format!(
                    "{}: {} attempt(s); a submission needs {attempts} per incident",
                    inc.id,
                    numbers.len()
                ),
            );
        }
        for a in &inc.attempts {
            expected_attempts.insert((inc.id.clone(), a.attempt));
            let at = format!("{ROOT}/{}/attempt-{}", inc.id, a.attempt);
            let s = seen.get(&(inc.id.clone(), a.attempt));
            match s.and_then(|s| s.trajectory.as_ref()) {
                None => problem(&mut report, format!("{at}/{TRAJECTORY}: missing")),
                Some(Err(e)) => problem(
                    &mut report,
                    format!("{at}/{TRAJECTORY}: not a trajectory: {e}"),
                ),
                Some(Ok(t)) => {
                    if t.incident != inc.id || t.attempt != a.attempt {
                        problem(
                            &mut report,
                            format!(
                                "{at}/{TRAJECTORY}: says incident {:?} attempt {}",
                                t.incident, t.attempt
                            ),
                        );
                    }
                    if t.exit.as_str() != a.exit
                        || t.usage.prompt_tokens != a.prompt_tokens
                        || t.usage.completion_tokens != a.completion_tokens
                        || (t.usage.cost_usd - a.cost_usd).abs() > 1e-9
                    {
                        problem(
                            &mut report,
                            format!("{at}/{TRAJECTORY}: exit or usage differs from the manifest"),
                        );
                    }
                }
            }
            match s.and_then(|s| s.leakage.as_ref()) {
                None => problem(&mut report, format!("{at}/{LEAKAGE}: missing")),
                Some(Err(e)) => problem(
                    &mut report,
                    format!("{at}/{LEAKAGE}: not a leakage result: {e}"),
                ),
                Some(Ok(l)) if l.flagged != a.flagged || l.flagged == l.reasons.is_empty() => {
                    problem(
                        &mut report,
                        format!("{at}/{LEAKAGE}: flagged {} with {} reason(s), the manifest says flagged {}", l.flagged, l.reasons.len(), a.flagged),
                    )
                }
                Some(Ok(_)) => {}
            }
            let valid = s.and_then(|s| s.diagnosis_valid).unwrap_or(false);
            if valid != a.schema_valid {
                problem(
                    &mut report,
                    format!(
                        "{at}/{DIAGNOSIS}: schema-valid is {valid}, the manifest says {}",
                        a.schema_valid
                    ),
                );
            }
            usage.add(a);
            report.attempts += 1;
            report.flagged += usize::from(a.flagged);
            report.not_schema_valid += usize::from(!a.schema_valid);
        }
    }
    for (id, k) in seen.keys() {
        if !expected_attempts.contains(&(id.clone(), *k)) {
            problem(
                &mut report,
                format!("{ROOT}/{id}/attempt-{k}: an attempt the manifest does not list"),
            );
        }
    }
    if manifest.incidents.is_empty() {
        problem(&mut report, "the package holds no incidents".to_string());
    }
    report.incidents = manifest.incidents.len();
    report.usage = usage;

    // run.json: a run record whose totals are the attempts' own.
    match run_bytes {
        None => problem(&mut report, format!("no {ROOT}/{RUN_INFO}")),
        Some(b) => match serde_json::from_slice::<RunInfo>(&b) {
            Err(e) => problem(
                &mut report,
                format!("{ROOT}/{RUN_INFO}: not a run record: {e}"),
            ),
            Ok(r) => {
                if r.agent.trim().is_empty() {
                    problem(&mut report, format!("{ROOT}/{RUN_INFO}: agent: is empty"));
                }
                if r.distdebug_version.trim().is_empty() {
                    problem(
                        &mut report,
                        format!("{ROOT}/{RUN_INFO}: distdebug_version: is empty"),
                    );
                }
                let totals = r
                    .extra
                    .get("usage")
                    .cloned()
                    .and_then(|u| serde_json::from_value::<UsageTotals>(u).ok());
                match totals {
                    None => problem(
                        &mut report,
                        format!("{ROOT}/{RUN_INFO}: usage: missing or not {{attempts, prompt_tokens, completion_tokens, cost_usd}}"),
                    ),
                    Some(t) if !t.matches(&usage) => problem(
                        &mut report,
                        format!(
                            "{ROOT}/{RUN_INFO}: usage says {} attempts, {} + {} tokens, ${:.4}; the attempts add up to {}, {} + {}, ${:.4}",
                            t.attempts, t.prompt_tokens, t.completion_tokens, t.cost_usd,
                            usage.attempts, usage.prompt_tokens, usage.completion_tokens, usage.cost_usd
                        ),
                    ),
                    Some(_) => {}
                }
            }
        },
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_paths_must_stay_inside_the_submission_folder() {
        assert_eq!(
            entry_rel(b"submission/a/attempt-1/x.json").unwrap(),
            "a/attempt-1/x.json"
        );
        assert_eq!(entry_rel(b"submission//run.json").unwrap(), "run.json");
        assert!(entry_rel(b"/submission/run.json").is_err());
        assert!(entry_rel(b"submission/../etc/passwd").is_err());
        assert!(entry_rel(b"submission/./run.json").is_err());
        assert!(entry_rel(b"other/run.json").is_err());
        assert!(entry_rel(b"submission\\..\\x").is_err());
        assert!(entry_rel(&[b's', 0xff]).is_err());
    }

    #[test]
    fn attempt_paths_are_split_into_incident_attempt_and_file() {
        assert_eq!(
            attempt_path("zk-1/attempt-12/diagnosis.json"),
            Some(("zk-1", 12, "diagnosis.json"))
        );
        assert_eq!(attempt_path("zk-1/attempt-x/diagnosis.json"), None);
        assert_eq!(attempt_path("zk-1/attempt-1/deeper/file"), None);
        assert_eq!(attempt_path("run.json"), None);
    }
}

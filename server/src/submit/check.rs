//! `distdebug submit --check`: validates a submission package the way a maintainer would
//! before listing it: the archive's shape, every checksum against the manifest, every file
//! against its schema, N attempts per incident, and the manifest against the files.
//!
//! The package is untrusted input. It is read as a stream and never extracted: entries
//! outside `submission/`, with `..`, absolute, links or devices are refused, and file sizes
//! are capped, so a hostile archive can neither write anywhere nor exhaust memory.

use super::manifest::{
    sha256_hex, Manifest, ManifestAttempt, ManifestIncident, UsageTotals, FORMAT, FORMAT_VERSION,
    LEAKAGE, MANIFEST, ROOT,
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
    let mut checker = Checker {
        name: path.display().to_string(),
        report: CheckReport::default(),
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            checker.problem(format!("cannot open: {e}"));
            return checker.report;
        }
    };
    let mut archive =
        tar::Archive::new(flate2::read::GzDecoder::new(std::io::BufReader::new(file)));
    let Some(contents) = checker.read_entries(&mut archive) else {
        return checker.report;
    };

    // Read the gzip stream to its end, so its CRC is checked too (tar stops at its own end
    // marker and would not notice damage after it).
    if let Err(e) = std::io::copy(&mut archive.into_inner(), &mut std::io::sink()) {
        checker.problem(format!("the gzip stream is damaged: {e}"));
    }

    let Some(manifest) = checker.read_manifest(contents.manifest) else {
        return checker.report;
    };
    checker.check_checksums(&manifest, &contents.files);
    let usage = checker.check_incidents(&manifest, &contents.attempts, attempts);
    checker.check_run(contents.run, &usage);
    checker.report
}

/// What the archive's entries held, by path inside `submission/`.
#[derive(Default)]
struct ArchiveContents {
    /// Every file except the manifest.
    files: BTreeMap<String, SeenFile>,
    attempts: BTreeMap<(String, u32), SeenAttempt>,
    manifest: Option<Vec<u8>>,
    run: Option<Vec<u8>>,
}

impl SeenAttempt {
    /// Records what the attempt's file `name` says (other names are left to the manifest
    /// check).
    fn read(&mut self, name: &str, data: Vec<u8>) {
        let text = String::from_utf8(data).map_err(|_| "not UTF-8".to_string());
        match name {
            DIAGNOSIS => {
                self.diagnosis_valid = Some(text.and_then(|t| Diagnosis::parse(&t)).is_ok());
            }
            TRAJECTORY => {
                self.trajectory = Some(text.and_then(|t| {
                    serde_json::from_str::<Trajectory>(&t).map_err(|e| e.to_string())
                }));
            }
            LEAKAGE => {
                self.leakage =
                    Some(text.and_then(|t| {
                        serde_json::from_str::<Leakage>(&t).map_err(|e| e.to_string())
                    }));
            }
            _ => {}
        }
    }
}

/// A report being made: every problem is prefixed by the package's name.
struct Checker {
    name: String,
    report: CheckReport,
}

impl Checker {
    fn problem(&mut self, what: String) {
        self.report.problems.push(format!("{}: {what}", self.name));
    }

    /// Reads every entry of the archive; `None` when reading has to stop (the report says why).
    fn read_entries<R: Read>(&mut self, archive: &mut tar::Archive<R>) -> Option<ArchiveContents> {
        let entries = match archive.entries() {
            Ok(e) => e,
            Err(e) => {
                self.problem(format!("not a gzipped tar: {e}"));
                return None;
            }
        };
        let mut contents = ArchiveContents::default();
        let mut total: u64 = 0;
        for entry in entries {
            let mut entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    self.problem(format!("not a readable gzipped tar: {e}"));
                    return None;
                }
            };
            let Some(rel) = self.regular_file_path(&entry) else {
                continue;
            };
            let data = self.read_capped(&mut entry, &rel, &mut total)?;
            self.keep_file(&mut contents, rel, data);
        }
        Some(contents)
    }

    /// The entry's path inside `submission/` when it is a regular file; `None` for a folder
    /// (skipped) or a refused entry (reported).
    fn regular_file_path<R: Read>(&mut self, entry: &tar::Entry<'_, R>) -> Option<String> {
        let rel = match entry_rel(&entry.path_bytes()) {
            Ok(r) => r,
            Err(why) => {
                self.problem(format!("entry refused: {why}"));
                return None;
            }
        };
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            return None;
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            self.problem(format!(
                "{ROOT}/{rel}: a {kind:?} entry; a package holds only regular files"
            ));
            return None;
        }
        Some(rel)
    }

    /// The entry's bytes within the size caps, `total` counting every file's bytes so far;
    /// `None` when reading has to stop (reported).
    fn read_capped<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        rel: &str,
        total: &mut u64,
    ) -> Option<Vec<u8>> {
        let size = entry.header().size().unwrap_or(u64::MAX);
        *total = total.saturating_add(size);
        if size > MAX_FILE_BYTES || *total > MAX_TOTAL_BYTES {
            self.problem(format!("{ROOT}/{rel}: too large ({size} bytes; a file may hold {MAX_FILE_BYTES}, a package {MAX_TOTAL_BYTES})"));
            return None;
        }
        let mut data = Vec::with_capacity(size as usize);
        if let Err(e) = entry.take(MAX_FILE_BYTES + 1).read_to_end(&mut data) {
            self.problem(format!("{ROOT}/{rel}: cannot read: {e}"));
            return None;
        }
        Some(data)
    }

    /// Keeps a file of the archive: the manifest and `run.json` to be read later, every other
    /// file's checksum and size, and what an attempt's files say.
    fn keep_file(&mut self, contents: &mut ArchiveContents, rel: String, data: Vec<u8>) {
        if contents.files.contains_key(&rel) || (rel == MANIFEST && contents.manifest.is_some()) {
            self.problem(format!("{ROOT}/{rel}: appears twice"));
            return;
        }
        if rel == MANIFEST {
            contents.manifest = Some(data);
            return;
        }
        contents.files.insert(
            rel.clone(),
            SeenFile {
                sha256: sha256_hex(&data),
                bytes: data.len() as u64,
            },
        );
        if rel == RUN_INFO {
            contents.run = Some(data);
            return;
        }
        let Some((id, k, file)) = attempt_path(&rel) else {
            return; // reported later: not in the manifest, or not a file a package holds
        };
        contents
            .attempts
            .entry((id.to_string(), k))
            .or_default()
            .read(file, data);
    }

    /// The manifest, its format checked and its config recorded; `None` when there is none
    /// to check the package against (reported).
    fn read_manifest(&mut self, bytes: Option<Vec<u8>>) -> Option<Manifest> {
        let Some(bytes) = bytes else {
            self.problem(format!("no {ROOT}/{MANIFEST}"));
            return None;
        };
        let manifest: Manifest = match serde_json::from_slice(&bytes) {
            Ok(m) => m,
            Err(e) => {
                self.problem(format!("{ROOT}/{MANIFEST}: not a submission manifest: {e}"));
                return None;
            }
        };
        if manifest.format != FORMAT || manifest.format_version != FORMAT_VERSION {
            self.problem(format!(
                "{ROOT}/{MANIFEST}: format {:?} version {}; expected {FORMAT:?} version {FORMAT_VERSION}",
                manifest.format, manifest.format_version
            ));
        }
        self.report.config = Some(manifest.config.clone());
        Some(manifest)
    }

    /// Checksums: every listed file is there and unchanged; every file is listed.
    fn check_checksums(&mut self, manifest: &Manifest, files: &BTreeMap<String, SeenFile>) {
        let mut listed: BTreeSet<&str> = BTreeSet::new();
        for f in &manifest.files {
            if !listed.insert(f.path.as_str()) {
                self.problem(format!("{ROOT}/{MANIFEST}: lists {} twice", f.path));
                continue;
            }
            match files.get(&f.path) {
                None => self.problem(format!(
                    "{ROOT}/{}: listed in the manifest but missing",
                    f.path
                )),
                Some(s) if s.sha256 != f.sha256 || s.bytes != f.bytes => self.problem(format!(
                    "{ROOT}/{}: checksum mismatch: sha256 {} ({} bytes), the manifest says {} ({} bytes)",
                    f.path, s.sha256, s.bytes, f.sha256, f.bytes
                )),
                Some(_) => {}
            }
        }
        for rel in files.keys() {
            if !listed.contains(rel.as_str()) {
                self.problem(format!("{ROOT}/{rel}: not in the manifest"));
            }
        }
    }

    /// Incidents and attempts: N each, numbered without gaps, every file consistent. Counts
    /// them into the report and returns the attempts' usage totals.
    fn check_incidents(
        &mut self,
        manifest: &Manifest,
        seen: &BTreeMap<(String, u32), SeenAttempt>,
        attempts: usize,
    ) -> UsageTotals {
        let mut usage = UsageTotals::default();
        let mut ids: BTreeSet<&str> = BTreeSet::new();
        let mut expected_attempts: BTreeSet<(String, u32)> = BTreeSet::new();
        for inc in &manifest.incidents {
            if !is_valid_id(&inc.id) {
                self.problem(format!(
                    "{ROOT}/{MANIFEST}: incident id {:?} is not [a-z0-9][a-z0-9._-]*",
                    inc.id
                ));
            }
            if !ids.insert(inc.id.as_str()) {
                self.problem(format!(
                    "{ROOT}/{MANIFEST}: incident {} listed twice",
                    inc.id
                ));
                continue;
            }
            self.check_attempt_numbers(inc, attempts);
            for a in &inc.attempts {
                expected_attempts.insert((inc.id.clone(), a.attempt));
                self.check_attempt(&inc.id, a, seen.get(&(inc.id.clone(), a.attempt)));
                usage.add(a);
                self.report.attempts += 1;
                self.report.flagged += usize::from(a.flagged);
                self.report.not_schema_valid += usize::from(!a.schema_valid);
            }
        }
        for (id, k) in seen.keys() {
            if !expected_attempts.contains(&(id.clone(), *k)) {
                self.problem(format!(
                    "{ROOT}/{id}/attempt-{k}: an attempt the manifest does not list"
                ));
            }
        }
        if manifest.incidents.is_empty() {
            self.problem("the package holds no incidents".to_string());
        }
        self.report.incidents = manifest.incidents.len();
        self.report.usage = usage;
        usage
    }

    /// An incident's attempts are numbered 1 to k without gaps, and k is at least `attempts`.
    fn check_attempt_numbers(&mut self, inc: &ManifestIncident, attempts: usize) {
        let numbers: Vec<u32> = inc.attempts.iter().map(|a| a.attempt).collect();
        let want: Vec<u32> = (1..=numbers.len() as u32).collect();
        if numbers != want {
            self.problem(format!(
                "{}: attempts {numbers:?}; expected 1 to {} without gaps",
                inc.id,
                numbers.len()
            ));
        }
        if numbers.len() < attempts {
            self.problem(format!(
                "{}: {} attempt(s); a submission needs {attempts} per incident",
                inc.id,
                numbers.len()
            ));
        }
    }

    /// One listed attempt against its files as read from the archive (`seen`, if any).
    fn check_attempt(&mut self, id: &str, a: &ManifestAttempt, seen: Option<&SeenAttempt>) {
        let at = format!("{ROOT}/{id}/attempt-{}", a.attempt);
        self.check_trajectory(&at, id, a, seen.and_then(|s| s.trajectory.as_ref()));
        self.check_leakage(&at, a, seen.and_then(|s| s.leakage.as_ref()));
        let valid = seen.and_then(|s| s.diagnosis_valid).unwrap_or(false);
        if valid != a.schema_valid {
            self.problem(format!(
                "{at}/{DIAGNOSIS}: schema-valid is {valid}, the manifest says {}",
                a.schema_valid
            ));
        }
    }

    /// The attempt's trajectory names it and agrees with the manifest on exit and usage.
    fn check_trajectory(
        &mut self,
        at: &str,
        id: &str,
        a: &ManifestAttempt,
        trajectory: Option<&Result<Trajectory, String>>,
    ) {
        match trajectory {
            None => self.problem(format!("{at}/{TRAJECTORY}: missing")),
            Some(Err(e)) => self.problem(format!("{at}/{TRAJECTORY}: not a trajectory: {e}")),
            Some(Ok(t)) => {
                if t.incident != id || t.attempt != a.attempt {
                    self.problem(format!(
                        "{at}/{TRAJECTORY}: says incident {:?} attempt {}",
                        t.incident, t.attempt
                    ));
                }
                if t.exit.as_str() != a.exit
                    || t.usage.prompt_tokens != a.prompt_tokens
                    || t.usage.completion_tokens != a.completion_tokens
                    || (t.usage.cost_usd - a.cost_usd).abs() > 1e-9
                {
                    self.problem(format!(
                        "{at}/{TRAJECTORY}: exit or usage differs from the manifest"
                    ));
                }
            }
        }
    }

    /// The attempt's leakage result agrees with itself and with the manifest.
    fn check_leakage(
        &mut self,
        at: &str,
        a: &ManifestAttempt,
        leakage: Option<&Result<Leakage, String>>,
    ) {
        match leakage {
            None => self.problem(format!("{at}/{LEAKAGE}: missing")),
            Some(Err(e)) => self.problem(format!("{at}/{LEAKAGE}: not a leakage result: {e}")),
            Some(Ok(l)) if l.flagged != a.flagged || l.flagged == l.reasons.is_empty() => self
                .problem(format!(
                    "{at}/{LEAKAGE}: flagged {} with {} reason(s), the manifest says flagged {}",
                    l.flagged,
                    l.reasons.len(),
                    a.flagged
                )),
            Some(Ok(_)) => {}
        }
    }

    /// run.json: a run record whose totals are the attempts' own.
    fn check_run(&mut self, run: Option<Vec<u8>>, usage: &UsageTotals) {
        match run {
            None => self.problem(format!("no {ROOT}/{RUN_INFO}")),
            Some(b) => match serde_json::from_slice::<RunInfo>(&b) {
                Err(e) => self.problem(format!("{ROOT}/{RUN_INFO}: not a run record: {e}")),
                Ok(r) => self.check_run_record(&r, usage),
            },
        }
    }

    /// The run record names its agent and version, and its `usage` is `usage`.
    fn check_run_record(&mut self, r: &RunInfo, usage: &UsageTotals) {
        if r.agent.trim().is_empty() {
            self.problem(format!("{ROOT}/{RUN_INFO}: agent: is empty"));
        }
        if r.distdebug_version.trim().is_empty() {
            self.problem(format!("{ROOT}/{RUN_INFO}: distdebug_version: is empty"));
        }
        let totals = r
            .extra
            .get("usage")
            .cloned()
            .and_then(|u| serde_json::from_value::<UsageTotals>(u).ok());
        match totals {
            None => self.problem(format!("{ROOT}/{RUN_INFO}: usage: missing or not {{attempts, prompt_tokens, completion_tokens, cost_usd}}")),
            Some(t) if !t.matches(usage) => self.problem(format!(
                "{ROOT}/{RUN_INFO}: usage says {} attempts, {} + {} tokens, ${:.4}; the attempts add up to {}, {} + {}, ${:.4}",
                t.attempts, t.prompt_tokens, t.completion_tokens, t.cost_usd,
                usage.attempts, usage.prompt_tokens, usage.completion_tokens, usage.cost_usd
            )),
            Some(_) => {}
        }
    }
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

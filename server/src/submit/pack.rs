//! Making a submission package from `results/<config>`: every attempt's `diagnosis.json` and
//! `trajectory.json`, the local leakage check's result per attempt, `run.json` with the
//! totals of token use and cost, and `manifest.json` with every file's checksum.

use super::manifest::{
    attempt_file, sha256_hex, FileEntry, Manifest, ManifestAttempt, ManifestIncident, UsageTotals,
    FORMAT, FORMAT_VERSION, LEAKAGE, MANIFEST, ROOT,
};
use crate::attempt::layout::{attempt_dir, DIAGNOSIS, RUN_INFO, TRAJECTORY};
use crate::attempt::{RunInfo, Trajectory};
use crate::score::leakage::Leakage;
use crate::score::protocol::AttemptSummary;
use crate::score::{config_name, score_configs, ConfigScore, IncidentScore, ScoreOptions};
use flate2::write::GzEncoder;
use std::io::Write;
use std::path::Path;

/// What `pack` checks the results against.
#[derive(Debug, Clone, Copy)]
pub struct PackOptions {
    /// Attempts every incident must have (the protocol's N, 3 by default).
    pub attempts: usize,
}

/// What went into a package.
#[derive(Debug, Clone)]
pub struct PackSummary {
    pub config: String,
    pub incidents: usize,
    pub attempts: usize,
    pub flagged: usize,
    pub not_schema_valid: usize,
    pub files: usize,
    /// Bytes of the files before compression, and of the package.
    pub bytes: u64,
    pub package_bytes: u64,
    pub usage: UsageTotals,
}

/// The files of a package in the order they are archived (the manifest comes last, so each
/// file is read once: hashed and archived in one go).
struct Writer<W: Write> {
    tar: tar::Builder<W>,
    files: Vec<FileEntry>,
    bytes: u64,
    mtime: u64,
}

impl<W: Write> Writer<W> {
    fn add(&mut self, rel: &str, data: &[u8]) -> Result<(), String> {
        let mut h = tar::Header::new_ustar();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(self.mtime);
        h.set_entry_type(tar::EntryType::Regular);
        let path = format!("{ROOT}/{rel}");
        self.tar
            .append_data(&mut h, &path, data)
            .map_err(|e| format!("cannot add {path} to the package: {e}"))?;
        if rel != MANIFEST {
            self.files.push(FileEntry {
                path: rel.to_string(),
                sha256: sha256_hex(data),
                bytes: data.len() as u64,
            });
        }
        self.bytes += data.len() as u64;
        Ok(())
    }
}

/// An attempt's file as a package holds it: a regular file, never a link or its target.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    crate::util::untrusted::read_regular(path, crate::util::untrusted::TRAJECTORY_MAX).map_err(
        |why| {
            format!(
                "{}: not packed: {}",
                path.display(),
                why.describe("the file").trim_start_matches("the file: ")
            )
        },
    )
}

/// Packs `config_dir` into the gzipped tar `out` (written atomically). The leakage check and
/// schema check run as `distdebug score` runs them, against the incidents in `incidents_dir`.
/// Refuses (one line per problem) a results folder without `run.json`, an incident with fewer
/// than `attempts` attempts or a gap in their numbers, and an unfinished attempt (no valid
/// `trajectory.json`).
pub fn pack(
    config_dir: &Path,
    incidents_dir: &Path,
    out: &Path,
    opts: &PackOptions,
) -> Result<PackSummary, String> {
    let run_value = read_run_record(config_dir)?;
    let config = score_config(config_dir, incidents_dir, opts)?;
    let trajectories = finished_trajectories(config_dir, &config, opts)?;

    let tmp = crate::util::fs::temp_file_beside(out)
        .map_err(|e| format!("{}: cannot write: {e}", out.display()))?;
    let mut w = PackageWriter::create(&tmp, out)?;
    let packed = add_attempts(&mut w, config_dir, &config, &trajectories)?;
    add_run_record(&mut w, run_value, packed.usage)?;
    let manifest = add_manifest(&mut w, config_dir, opts, packed.incidents)?;
    let files = manifest.files.len() + 1;
    let bytes = w.bytes;
    w.finish(tmp, out)?;
    let package_bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    Ok(PackSummary {
        config: manifest.config,
        incidents: manifest.incidents.len(),
        attempts: packed.usage.attempts,
        flagged: packed.flagged,
        not_schema_valid: packed.not_schema_valid,
        files,
        bytes,
        package_bytes,
        usage: packed.usage,
    })
}

/// The package as it is written: a gzipped tar into the temp file that becomes `out`.
type PackageWriter = Writer<GzEncoder<std::io::BufWriter<std::fs::File>>>;

impl PackageWriter {
    /// A writer into `tmp`, the temp file beside `out`.
    fn create(tmp: &tempfile::NamedTempFile, out: &Path) -> Result<PackageWriter, String> {
        // A second handle on the temp file, so the encoder owns its writer and `tmp` stays free
        // to be persisted once everything is written.
        let handle = tmp
            .as_file()
            .try_clone()
            .map_err(|e| format!("{}: cannot write: {e}", out.display()))?;
        let gz = GzEncoder::new(
            std::io::BufWriter::new(handle),
            flate2::Compression::default(),
        );
        let mtime = time::OffsetDateTime::now_utc().unix_timestamp().max(0) as u64;
        Ok(Writer {
            tar: tar::Builder::new(gz),
            files: Vec::new(),
            bytes: 0,
            mtime,
        })
    }

    /// Ends the archive, flushes it to disk and moves it to `out`.
    fn finish(self, tmp: tempfile::NamedTempFile, out: &Path) -> Result<(), String> {
        let cannot_write = |e: std::io::Error| format!("{}: cannot write: {e}", out.display());
        let gz = self.tar.into_inner().map_err(cannot_write)?;
        let mut buf = gz.finish().map_err(cannot_write)?;
        buf.flush().map_err(cannot_write)?;
        drop(buf);
        tmp.as_file().sync_all().map_err(cannot_write)?;
        tmp.persist(out).map_err(|e| cannot_write(e.error))?;
        Ok(())
    }
}

/// `config_dir/run.json` as written, once it is known to be a run record that names its agent.
fn read_run_record(config_dir: &Path) -> Result<serde_json::Value, String> {
    let run_path = config_dir.join(RUN_INFO);
    if !config_dir.is_dir() {
        return Err(format!(
            "{}: no such results folder; expected results/<config> as written by `distdebug run`",
            config_dir.display()
        ));
    }
    let run_text = std::fs::read_to_string(&run_path).map_err(|e| {
        format!(
            "{}: cannot read ({e}); a submission records how its attempts were made, which `distdebug run` writes there",
            run_path.display()
        )
    })?;
    let run_value: serde_json::Value = serde_json::from_str(&run_text)
        .map_err(|e| format!("{}: not valid JSON: {e}", run_path.display()))?;
    let run_info: RunInfo = serde_json::from_value(run_value.clone())
        .map_err(|e| format!("{}: not a run record: {e}", run_path.display()))?;
    if run_info.agent.trim().is_empty() {
        return Err(format!("{}: agent: is empty", run_path.display()));
    }
    Ok(run_value)
}

/// `config_dir` scored as `distdebug score` scores it; refused when it holds no incidents.
fn score_config(
    config_dir: &Path,
    incidents_dir: &Path,
    opts: &PackOptions,
) -> Result<ConfigScore, String> {
    let score_opts = ScoreOptions {
        attempts: opts.attempts,
        // The intervals are not part of a package; the maintainers compute them.
        bootstrap: 1,
        seed: 0,
    };
    let scores = score_configs(&[config_dir.to_path_buf()], incidents_dir, &score_opts)?;
    let config = scores
        .configs
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: nothing was scored", config_dir.display()))?;
    if config.per_incident.is_empty() {
        return Err(format!(
            "{}: holds no incident folders; nothing to submit",
            config_dir.display()
        ));
    }
    Ok(config)
}

/// Every incident's trajectories, in the order of its attempts. Every incident needs attempts
/// 1..=k with k >= N, each finished; otherwise refused, one line per problem.
fn finished_trajectories(
    config_dir: &Path,
    config: &ConfigScore,
    opts: &PackOptions,
) -> Result<Vec<Vec<Trajectory>>, String> {
    let mut problems: Vec<String> = Vec::new();
    let mut trajectories: Vec<Vec<Trajectory>> = Vec::new();
    for inc in &config.per_incident {
        check_attempt_numbers(config_dir, inc, opts, &mut problems);
        trajectories.push(load_trajectories(config_dir, inc, &mut problems));
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    Ok(trajectories)
}

/// An incident's attempts are numbered 1 to k without gaps, and k is at least N.
fn check_attempt_numbers(
    config_dir: &Path,
    inc: &IncidentScore,
    opts: &PackOptions,
    problems: &mut Vec<String>,
) {
    let numbers: Vec<u32> = inc.attempts.iter().map(|a| a.attempt).collect();
    let expected: Vec<u32> = (1..=numbers.len() as u32).collect();
    if numbers != expected {
        problems.push(format!(
            "{}: attempts {numbers:?}; expected attempt-1 to attempt-{} without gaps",
            config_dir.join(&inc.incident).display(),
            numbers.len()
        ));
    }
    if numbers.len() < opts.attempts {
        problems.push(format!(
            "{}: {} attempt(s); a submission needs {} per incident (`distdebug run --attempts {}` completes it)",
            config_dir.join(&inc.incident).display(),
            numbers.len(),
            opts.attempts,
            opts.attempts
        ));
    }
}

/// The trajectories of an incident's finished attempts; each unfinished or misnamed one is a
/// problem.
fn load_trajectories(
    config_dir: &Path,
    inc: &IncidentScore,
    problems: &mut Vec<String>,
) -> Vec<Trajectory> {
    let mut ts = Vec::new();
    for a in &inc.attempts {
        let p = attempt_dir(config_dir, &inc.incident, a.attempt).join(TRAJECTORY);
        match Trajectory::load(&p) {
            Ok(t) if t.incident != inc.incident || t.attempt != a.attempt => {
                problems.push(format!(
                    "{}: says incident {:?} attempt {}; expected {:?} attempt {}",
                    p.display(),
                    t.incident,
                    t.attempt,
                    inc.incident,
                    a.attempt
                ))
            }
            Ok(t) => ts.push(t),
            Err(e) => problems.push(format!(
                "{e}; the attempt is unfinished (`distdebug run` redoes it)"
            )),
        }
    }
    ts
}

/// The attempts as the manifest lists them, and the totals over them.
struct PackedAttempts {
    incidents: Vec<ManifestIncident>,
    usage: UsageTotals,
    flagged: usize,
    not_schema_valid: usize,
}

/// Adds every attempt's files to the package; `trajectories` are the incidents' in order.
fn add_attempts<W: Write>(
    w: &mut Writer<W>,
    config_dir: &Path,
    config: &ConfigScore,
    trajectories: &[Vec<Trajectory>],
) -> Result<PackedAttempts, String> {
    let mut packed = PackedAttempts {
        incidents: Vec::new(),
        usage: UsageTotals::default(),
        flagged: 0,
        not_schema_valid: 0,
    };
    for (inc, ts) in config.per_incident.iter().zip(trajectories) {
        let mut attempts = Vec::new();
        for (a, t) in inc.attempts.iter().zip(ts) {
            let m = add_attempt(w, config_dir, &inc.incident, a, t)?;
            packed.usage.add(&m);
            packed.flagged += usize::from(a.flagged);
            packed.not_schema_valid += usize::from(!a.schema_valid);
            attempts.push(m);
        }
        packed.incidents.push(ManifestIncident {
            id: inc.incident.clone(),
            attempts,
        });
    }
    Ok(packed)
}

/// Adds one attempt's files (its diagnosis if any, its trajectory, its leakage result) and
/// returns the attempt as the manifest lists it.
fn add_attempt<W: Write>(
    w: &mut Writer<W>,
    config_dir: &Path,
    incident: &str,
    a: &AttemptSummary,
    t: &Trajectory,
) -> Result<ManifestAttempt, String> {
    let dir = attempt_dir(config_dir, incident, a.attempt);
    let diagnosis = dir.join(DIAGNOSIS);
    if diagnosis.is_file() {
        let bytes = read(&diagnosis)?;
        w.add(&attempt_file(incident, a.attempt, DIAGNOSIS), &bytes)?;
    }
    let traj = read(&dir.join(TRAJECTORY))?;
    w.add(&attempt_file(incident, a.attempt, TRAJECTORY), &traj)?;
    let leakage = Leakage {
        flagged: a.flagged,
        reasons: a.leakage.clone(),
    };
    let mut text = serde_json::to_string_pretty(&leakage).map_err(|e| e.to_string())?;
    text.push('\n');
    w.add(&attempt_file(incident, a.attempt, LEAKAGE), text.as_bytes())?;
    Ok(ManifestAttempt {
        attempt: a.attempt,
        exit: t.exit.as_str().to_string(),
        schema_valid: a.schema_valid,
        flagged: a.flagged,
        prompt_tokens: t.usage.prompt_tokens,
        completion_tokens: t.usage.completion_tokens,
        cost_usd: t.usage.cost_usd,
    })
}

/// Adds run.json as the run wrote it, plus the totals over the packaged attempts.
fn add_run_record<W: Write>(
    w: &mut Writer<W>,
    mut run_value: serde_json::Value,
    usage: UsageTotals,
) -> Result<(), String> {
    if let Some(obj) = run_value.as_object_mut() {
        obj.insert(
            "usage".to_string(),
            serde_json::to_value(usage).map_err(|e| e.to_string())?,
        );
    }
    let mut run_out = serde_json::to_string_pretty(&run_value).map_err(|e| e.to_string())?;
    run_out.push('\n');
    w.add(RUN_INFO, run_out.as_bytes())
}

/// Adds the manifest, listing every file added so far, and returns it.
fn add_manifest<W: Write>(
    w: &mut Writer<W>,
    config_dir: &Path,
    opts: &PackOptions,
    incidents: Vec<ManifestIncident>,
) -> Result<Manifest, String> {
    let manifest = Manifest {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        config: config_name(config_dir),
        created_at: crate::util::now_rfc3339(),
        distdebug_version: env!("CARGO_PKG_VERSION").to_string(),
        attempts_per_incident: opts.attempts,
        incidents,
        files: std::mem::take(&mut w.files),
    };
    let mut text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    text.push('\n');
    w.add(MANIFEST, text.as_bytes())?;
    Ok(manifest)
}

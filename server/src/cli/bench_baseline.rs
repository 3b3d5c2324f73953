//! `distdebug bench index` and `bench attempt`: the code model's and the offline agent's
//! benchmarks. `index <dir>` times the repository index (and, side by side, parsing every file
//! and `ctags -R`); `attempt <workspace>` times one full offline attempt.

use super::{CliError, CliResult};
use crate::code::{IndexOptions, RepoIndex};
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The folder to index
    pub dir: PathBuf,
    /// Runs of each phase; the median is printed
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Also run `ctags -R` on the same folder for comparison
    #[arg(long)]
    pub ctags: bool,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AttemptArgs {
    /// A prepared workspace, or any folder when --report is given
    pub workspace: PathBuf,
    /// The bug report (for a folder that is not a prepared workspace)
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Evidence files (for a folder that is not a prepared workspace)
    #[arg(long)]
    pub evidence: Vec<PathBuf>,
    /// Runs; the median is printed
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
    /// Also print the steps of the last run (what the agent did, with timings)
    #[arg(long)]
    pub steps: bool,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 / 1e6 / secs
    } else {
        0.0
    }
}

pub fn index(a: IndexArgs) -> CliResult {
    let runs = a.runs.max(1);
    let opts = IndexOptions::default();
    let mut index_secs = Vec::new();
    let mut parse_secs = Vec::new();
    let mut last = None;
    let mut blocks = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let idx = RepoIndex::build(&a.dir, &opts)?;
        index_secs.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        blocks = idx.parse_all();
        parse_secs.push(t.elapsed().as_secs_f64());
        last = Some(idx);
    }
    let Some(idx) = last else {
        return Err(CliError::usage("--runs must be at least 1"));
    };
    let bytes = idx.bytes();
    let files = idx.files.len();
    let literals: usize = idx.files.iter().map(|f| f.literals.len()).sum();
    let parsed_bytes: u64 = idx
        .files
        .iter()
        .filter(|f| f.lang.grammar().is_some())
        .map(|f| f.text.len() as u64)
        .sum();
    let (ti, tp) = (median(index_secs), median(parse_secs));
    let ctags = if a.ctags {
        Some(time_ctags(&a.dir, runs)?)
    } else {
        None
    };
    let threads = rayon::current_num_threads();
    if a.json {
        println!(
            "{}",
            json!({
                "dir": a.dir.display().to_string(),
                "threads": threads,
                "runs": runs,
                "files": files,
                "bytes": bytes,
                "literals": literals,
                "skipped": idx.skipped,
                "index_seconds": ti,
                "index_mb_per_s": mbps(bytes, ti),
                "blocks": blocks,
                "parse_all_seconds": tp,
                "parse_all_mb_per_s": mbps(parsed_bytes, tp),
                "ctags_seconds": ctags,
            })
        );
        return Ok(());
    }
    println!(
        "{} ({} threads, median of {runs} runs)",
        a.dir.display(),
        threads
    );
    println!(
        "index:      {files} files, {bytes} bytes, {literals} string literals, {ti:.3} s, {:.1} MB/s",
        mbps(bytes, ti)
    );
    println!(
        "parse all:  {blocks} blocks, {parsed_bytes} bytes with a grammar, {tp:.3} s, {:.1} MB/s",
        mbps(parsed_bytes, tp)
    );
    println!(
        "skipped:    {} binary, {} too large, {} unreadable, {} links out of the folder",
        idx.skipped.binary,
        idx.skipped.too_large,
        idx.skipped.unreadable,
        idx.skipped.symlink_outside
    );
    if let Some(c) = ctags {
        println!(
            "ctags -R:   {c:.3} s, {:.1} MB/s (of the same indexed bytes)",
            mbps(bytes, c)
        );
    }
    Ok(())
}

/// Median wall time of `ctags -R` over `dir`, writing its tags to a temp file.
fn time_ctags(dir: &Path, runs: usize) -> Result<f64, CliError> {
    let tmp = tempfile::tempdir()
        .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
    let tags = tmp.path().join("tags");
    let mut secs = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let status = std::process::Command::new("ctags")
            .arg("-R")
            .arg("-f")
            .arg(&tags)
            .arg(".")
            .current_dir(dir)
            .status()
            .map_err(|e| CliError::bad_input(format!("cannot run ctags: {e}")))?;
        if !status.success() {
            return Err(CliError::bad_input(format!("ctags -R failed: {status}")));
        }
        secs.push(t.elapsed().as_secs_f64());
    }
    Ok(median(secs))
}

pub fn attempt(a: AttemptArgs) -> CliResult {
    let runs = a.runs.max(1);
    let input = bench_input(&a)?;
    let rt = super::runtime()?;
    let mut secs = Vec::new();
    let mut blocks = 0;
    let mut steps = 0;
    let mut last_steps = Vec::new();
    for _ in 0..runs {
        let mut rec = crate::attempt::TrajectoryRecorder::in_memory();
        let cancel = tokio_util::sync::CancellationToken::new();
        let cfg = crate::agent::baseline::BaselineConfig::default();
        let t = Instant::now();
        let out = rt.block_on(crate::agent::baseline::run(&cfg, &input, &mut rec, &cancel));
        secs.push(t.elapsed().as_secs_f64());
        if let Some(e) = out.error {
            return Err(CliError::bad_input(e));
        }
        blocks = out.diagnosis.map(|d| d.blocks.len()).unwrap_or(0);
        steps = rec.steps().len();
        last_steps = rec.into_steps();
    }
    if a.steps {
        for s in &last_steps {
            println!(
                "{:>3} {:<12} {:<22} {}",
                s.index,
                format!("{:?}", s.kind).to_lowercase(),
                s.tool.as_deref().unwrap_or(""),
                s.text.as_deref().unwrap_or("").lines().next().unwrap_or("")
            );
        }
    }
    let s = median(secs);
    if a.json {
        println!(
            "{}",
            json!({"workspace": a.workspace.display().to_string(), "runs": runs,
                   "seconds": s, "blocks": blocks, "steps": steps})
        );
    } else {
        println!(
            "{}: one offline attempt in {s:.3} s (median of {runs}); {blocks} blocks, {steps} steps",
            a.workspace.display()
        );
    }
    Ok(())
}

/// The agent's input: from a prepared workspace, or from a plain folder plus --report and
/// --evidence (a large checkout that was never prepared).
fn bench_input(a: &AttemptArgs) -> Result<crate::agent::AgentInput, CliError> {
    let out = std::env::temp_dir();
    let Some(report) = &a.report else {
        return crate::agent::AgentInput::from_workspace(&a.workspace, 1, out)
            .map_err(CliError::bad_input);
    };
    let read = |p: &Path| {
        crate::incident::read_text_lossy(p)
            .map_err(|e| CliError::bad_input(format!("{}: cannot read: {e}", p.display())))
    };
    let mut evidence = Vec::new();
    for e in &a.evidence {
        evidence.push(crate::incident::EvidenceFile {
            name: e.display().to_string(),
            text: read(e)?,
        });
    }
    Ok(crate::agent::AgentInput {
        incident: "bench".to_string(),
        attempt: 1,
        workspace: a.workspace.clone(),
        report: read(report)?,
        evidence,
        output_dir: out,
    })
}

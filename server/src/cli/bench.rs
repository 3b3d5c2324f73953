//! `distdebug bench ...`: benchmarks that print figures (never timed assertions in tests).

use super::{CliError, CliResult};
use crate::score::{self, bench::BenchSpec, ScoreOptions};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time indexing a folder: files, bytes, blocks, seconds, MB/s
    Index(super::bench_baseline::IndexArgs),
    /// Time one full offline attempt on a workspace
    Attempt(super::bench_baseline::AttemptArgs),
    /// Time `score` on a synthetic results tree (default 17 configs x 120 incidents x 3 attempts)
    Score(BenchScoreArgs),
    /// The language server under load (default 5,000 predicted blocks across 500 files, a ~37 MB
    /// workspace): publishing time, code lens and hover latency, memory
    Lsp(BenchLspArgs),
    /// Labeling: label changes (lock, merge, atomic write) with one and two writers on a large
    /// labels.json, snapping in a large file, agreement over many labels
    Annotate(BenchAnnotateArgs),
    /// One large document in the server (default a 50 MB Scala file): open, code actions
    /// after edits, close; time and resident memory
    Document(BenchDocumentArgs),
}

#[derive(Debug, Args)]
pub struct BenchDocumentArgs {
    /// Size of the document in MB
    #[arg(long, default_value_t = 50.0)]
    pub mb: f64,
    /// Its extension, which picks the grammar: scala, java, py, go, rs, cpp
    #[arg(long, default_value = "scala")]
    pub ext: String,
    /// Incremental edits, each followed by a code action
    #[arg(long, default_value_t = 30)]
    pub edits: usize,
    /// The server's maxParseBytes setting (default: the server's default)
    #[arg(long)]
    pub max_parse_bytes: Option<u64>,
}

#[derive(Debug, Args)]
pub struct BenchAnnotateArgs {
    /// Blocks already in labels.json
    #[arg(long, default_value_t = 1000)]
    pub existing: usize,
    /// Label changes timed (per writer in the two-writer run)
    #[arg(long, default_value_t = 200)]
    pub writes: usize,
    /// Lines of the generated source file snapped in
    #[arg(long, default_value_t = 20_000)]
    pub source_lines: usize,
}

#[derive(Debug, Args)]
pub struct BenchLspArgs {
    #[arg(long, default_value_t = 500)]
    pub files: usize,
    #[arg(long, default_value_t = 10)]
    pub blocks_per_file: usize,
    /// Size of the generated workspace
    #[arg(long, default_value_t = 37)]
    pub workspace_mb: usize,
    /// Documents opened before measuring
    #[arg(long, default_value_t = 50)]
    pub open: usize,
    /// Code lens requests (and as many hovers)
    #[arg(long, default_value_t = 2000)]
    pub requests: usize,
    /// Times the attempt is shown (cleared in between)
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
}

#[derive(Debug, Args)]
pub struct BenchScoreArgs {
    #[arg(long, default_value_t = 17)]
    pub configs: usize,
    #[arg(long, default_value_t = 120)]
    pub incidents: usize,
    #[arg(long, default_value_t = 3)]
    pub attempts: usize,
    /// Bootstrap resamples
    #[arg(long, default_value_t = 10_000)]
    pub bootstrap: usize,
    /// Seed of the generator of the tree (and of the bootstrap)
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Timed runs after the first (which writes every diagnosis_scores.json)
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Generate the tree here and keep it (default: a temp folder, removed afterwards)
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

pub fn run(c: BenchCommand) -> CliResult {
    match c {
        BenchCommand::Index(a) => super::bench_baseline::index(a),
        BenchCommand::Attempt(a) => super::bench_baseline::attempt(a),
        BenchCommand::Score(a) => bench_score(a),
        BenchCommand::Lsp(a) => bench_lsp(a),
        BenchCommand::Annotate(a) => bench_annotate(a),
        BenchCommand::Document(a) => bench_document(a),
    }
}

fn bench_document(a: BenchDocumentArgs) -> CliResult {
    if a.mb.is_nan()
        || a.mb <= 0.0
        || !["scala", "java", "py", "go", "rs", "cpp"].contains(&a.ext.as_str())
    {
        return Err(CliError::usage(
            "--mb must be above 0 and --ext one of scala, java, py, go, rs, cpp",
        ));
    }
    let spec = crate::lsp::bench_document::DocumentBenchSpec {
        bytes: (a.mb * 1024.0 * 1024.0) as usize,
        extension: a.ext,
        edits: a.edits,
        max_parse_bytes: a.max_parse_bytes,
    };
    let exe = std::env::current_exe()
        .map_err(|e| CliError::bad_input(format!("cannot find the distdebug binary: {e}")))?;
    let tmp = tempfile::tempdir()
        .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
    let rt = super::runtime()?;
    let report = rt.block_on(crate::lsp::bench_document::run(&exe, tmp.path(), &spec))?;
    let text = serde_json::to_string_pretty(&report)
        .map_err(|e| CliError::bad_input(format!("cannot print the figures: {e}")))?;
    println!("{text}");
    Ok(())
}

fn bench_annotate(a: BenchAnnotateArgs) -> CliResult {
    if a.writes == 0 || a.source_lines < 10 {
        return Err(CliError::usage(
            "--writes must be at least 1 and --source-lines at least 10",
        ));
    }
    let dir = tempfile::tempdir()
        .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
    let spec = crate::annotate::bench::AnnotateBenchSpec {
        existing: a.existing,
        writes: a.writes,
        source_lines: a.source_lines,
    };
    let r = crate::annotate::bench::run(dir.path(), &spec)?;
    println!(
        "labels.json with {} blocks ({} bytes): one writer, per change p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        r.existing_blocks, r.labels_json_bytes, r.one_writer.p50_ms, r.one_writer.p99_ms, r.one_writer.max_ms
    );
    println!(
        "two writers, {} changes each: {:.2} s, {:.0} changes/s, {} lost",
        a.writes, r.two_writers_seconds, r.two_writers_changes_per_second, r.two_writers_lost
    );
    println!(
        "snap in a {}-line file: parse + snap p50 {:.2} ms, p99 {:.2} ms; on the parsed model p50 {:.4} ms",
        r.source_lines, r.snap_cold.p50_ms, r.snap_cold.p99_ms, r.snap_warm.p50_ms
    );
    println!(
        "agreement over {} labels: {:.2} ms",
        r.agreement_labels, r.agreement_ms
    );
    let json = serde_json::to_string(&r)
        .map_err(|e| CliError::bad_input(format!("cannot serialise the figures: {e}")))?;
    println!("{json}");
    Ok(())
}

fn bench_lsp(a: BenchLspArgs) -> CliResult {
    if a.files == 0 || a.blocks_per_file == 0 || a.requests == 0 {
        return Err(CliError::usage(
            "--files, --blocks-per-file and --requests must be at least 1",
        ));
    }
    let spec = crate::lsp::bench::LspBenchSpec {
        files: a.files,
        blocks_per_file: a.blocks_per_file,
        workspace_bytes: a.workspace_mb * 1024 * 1024,
        open_files: a.open.min(a.files),
        requests: a.requests,
        rounds: a.rounds.max(1),
    };
    let exe = std::env::current_exe()
        .map_err(|e| CliError::bad_input(format!("cannot find the distdebug binary: {e}")))?;
    let tmp = tempfile::tempdir()
        .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
    let rt = super::runtime()?;
    let report = rt.block_on(crate::lsp::bench::run(&exe, tmp.path(), &spec))?;
    let text = serde_json::to_string_pretty(&report)
        .map_err(|e| CliError::bad_input(format!("cannot print the figures: {e}")))?;
    println!("{text}");
    Ok(())
}

fn bench_score(a: BenchScoreArgs) -> CliResult {
    let tmp;
    let root = match &a.keep {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| CliError::bad_input(format!("{}: cannot create: {e}", d.display())))?;
            d.clone()
        }
        None => {
            tmp = tempfile::tempdir()
                .map_err(|e| CliError::bad_input(format!("cannot make a temp folder: {e}")))?;
            tmp.path().to_path_buf()
        }
    };
    let spec = BenchSpec {
        configs: a.configs,
        incidents: a.incidents,
        attempts: a.attempts,
        seed: a.seed,
    };
    let t = Instant::now();
    let tree = score::bench::generate(&root, &spec)?;
    eprintln!(
        "generated {} files ({:.1} MB) under {} in {:.2} s",
        tree.files,
        tree.bytes as f64 / 1e6,
        root.display(),
        t.elapsed().as_secs_f64()
    );
    let opts = ScoreOptions {
        attempts: a.attempts.max(1),
        bootstrap: a.bootstrap,
        seed: a.seed,
    };
    let threads = rayon::current_num_threads();
    // Wall time depends on what else the machine runs; CPU time (user + system) much less.
    let time = |label: &str| -> Result<(f64, Option<f64>), CliError> {
        let (t, cpu_before) = (Instant::now(), cpu_seconds());
        let report = score::score_configs(&tree.config_dirs, &tree.incidents_dir, &opts)?;
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_before
            .zip(cpu_seconds())
            .map(|(a, b)| ((b - a) * 100.0).round() / 100.0);
        let attempts: usize = report
            .configs
            .iter()
            .flat_map(|c| c.per_incident.iter())
            .map(|i| i.attempts.len())
            .sum();
        let cpu_text = cpu
            .map(|c| format!(", {c:.2} s of CPU"))
            .unwrap_or_default();
        println!("{label}: {attempts} attempts scored in {secs:.3} s{cpu_text}");
        Ok((secs, cpu))
    };
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string));
    let (first, first_cpu) = time("first run (writes every diagnosis_scores.json)")?;
    let mut again = Vec::new();
    for i in 0..a.repeat {
        let label = format!("run {} (scores unchanged, nothing written)", i + 2);
        again.push(time(&label)?);
    }
    again.sort_by(|x, y| x.0.total_cmp(&y.0));
    let median = again.get(again.len() / 2).copied();
    let summary = serde_json::json!({
        "bench": "score", "configs": a.configs, "incidents": a.incidents, "attempts": a.attempts,
        "bootstrap": a.bootstrap, "threads": threads, "files": tree.files, "bytes": tree.bytes,
        "load_before": load, "first_run_s": first, "first_run_cpu_s": first_cpu,
        "rescore_median_s": median.map(|m| m.0), "rescore_median_cpu_s": median.and_then(|m| m.1),
    });
    println!("{summary}");
    Ok(())
}

/// User + system CPU time of this process so far (Linux, from /proc/self/stat), in seconds.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // Clock ticks are 100 a second on every Linux this runs on (USER_HZ).
    Some((utime + stime) / 100.0)
}

//! `distdebug bench ...`: benchmarks that print figures (never timed assertions in tests).

use super::{CliError, CliResult};
use crate::score::{self, bench::BenchSpec, ScoreOptions};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time `score` on a synthetic results tree (default 17 configs x 120 incidents x 3 attempts)
    Score(BenchScoreArgs),
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
        BenchCommand::Score(a) => bench_score(a),
    }
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
    let time = |label: &str| -> Result<f64, CliError> {
        let t = Instant::now();
        let report = score::score_configs(&tree.config_dirs, &tree.incidents_dir, &opts)?;
        let secs = t.elapsed().as_secs_f64();
        let attempts: usize = report
            .configs
            .iter()
            .flat_map(|c| c.per_incident.iter())
            .map(|i| i.attempts.len())
            .sum();
        println!("{label}: {attempts} attempts scored in {:.3} s", secs);
        Ok(secs)
    };
    let first = time("first run (writes every diagnosis_scores.json)")?;
    let mut again = Vec::new();
    for i in 0..a.repeat {
        again.push(time(&format!(
            "run {} (scores unchanged, nothing written)",
            i + 2
        ))?);
    }
    again.sort_by(f64::total_cmp);
    let median = again.get(again.len() / 2).copied();
    let summary = serde_json::json!({
        "bench": "score", "configs": a.configs, "incidents": a.incidents, "attempts": a.attempts,
        "bootstrap": a.bootstrap, "threads": threads, "files": tree.files, "bytes": tree.bytes,
        "first_run_s": first, "rescore_median_s": median,
    });
    println!("{summary}");
    Ok(())
}

//! `distdebug submit`: packs a results folder as a submission, or checks a package
//! (`--check`) the way a maintainer would before listing it.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::submit::{self, PackOptions};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The configuration's results folder, e.g. results/gpt-x
    #[arg(
        value_name = "RESULTS/CONFIG",
        required_unless_present = "check",
        conflicts_with = "check"
    )]
    pub config: Option<PathBuf>,
    /// The package to write
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "check",
        conflicts_with = "check"
    )]
    pub out: Option<PathBuf>,
    /// Check this package instead of making one: schema, attempts per incident, checksums
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
    /// Attempts every incident must have
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub attempts: u64,
    #[command(flatten)]
    pub dir: IncidentsDirArg,
}

pub fn run(a: SubmitArgs) -> CliResult {
    let attempts = a.attempts as usize;
    if let Some(pkg) = &a.check {
        let r = submit::check_package(pkg, attempts);
        if !r.passed() {
            return Err(CliError {
                status: 1,
                messages: r.problems,
            });
        }
        println!(
            "{}: ok: configuration {}, {} incident(s), {} attempt(s) ({} flagged by the leakage check, {} not schema-valid), {} prompt + {} completion tokens, ${:.2}",
            pkg.display(),
            r.config.as_deref().unwrap_or("?"),
            r.incidents,
            r.attempts,
            r.flagged,
            r.not_schema_valid,
            r.usage.prompt_tokens,
            r.usage.completion_tokens,
            r.usage.cost_usd
        );
        return Ok(());
    }
    let (Some(config), Some(out)) = (&a.config, &a.out) else {
        return Err(CliError::usage(
            "give <results/config> --out <file>, or --check <file>",
        ));
    };
    if out.is_dir() {
        return Err(CliError::usage(format!(
            "{}: is a folder; --out takes the package file to write, e.g. submission.tar.gz",
            out.display()
        )));
    }
    let incidents = crate::incident::incidents_dir(a.dir.dir.as_deref());
    let s =
        submit::pack(config, &incidents, out, &PackOptions { attempts }).map_err(|e| CliError {
            status: 1,
            messages: e.lines().map(str::to_string).collect(),
        })?;
    println!(
        "wrote {}: configuration {}, {} incident(s), {} attempt(s) ({} flagged by the leakage check, {} not schema-valid), {} files, {} KiB packed from {} KiB",
        out.display(),
        s.config,
        s.incidents,
        s.attempts,
        s.flagged,
        s.not_schema_valid,
        s.files,
        s.package_bytes.div_ceil(1024),
        s.bytes.div_ceil(1024)
    );
    Ok(())
}

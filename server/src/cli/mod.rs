//! The command line (README.md, Command line): argument definitions and dispatch to one file per command.
//! Every command is a thin front end over library calls.

pub mod agent_args;
pub mod agent_tool;
pub mod agreement;
pub mod bench;
pub mod bench_baseline;
pub mod cache;
pub mod compare;
pub mod demo;
pub mod eval;
pub mod incidents;
pub mod lsp;
pub mod prepare;
pub mod report;
pub mod run;
pub mod sandbox_net;
pub mod score;
mod scoring;
pub mod submit;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "distdebug",
    version,
    about = "Diagnose distributed-system failures: incidents, agents, scoring and a language server"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// `--dir D`: where incidents are read from.
#[derive(Debug, Args, Clone, Default)]
pub struct IncidentsDirArg {
    /// The incidents folder (default: $DISTDEBUG_INCIDENTS, else ./incidents)
    #[arg(long = "dir", value_name = "D")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The whole loop on the bundled self-contained incidents with the offline agent: prepare, run, score, print the table (upstream incidents are listed and skipped)
    Demo(demo::DemoArgs),
    /// List or validate incidents
    #[command(subcommand)]
    Incidents(incidents::IncidentsCommand),
    /// The repository cache of git-url incidents: add a local mirror, list what is cached
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// Make the anonymized workspace of an incident at its buggy revision
    Prepare(prepare::PrepareArgs),
    /// Run agent attempts on incidents
    Run(run::RunArgs),
    /// Score results against the labels: a table, or the JSON documented in docs/scoring.md with --json
    Score(score::ScoreArgs),
    /// Agreement between the annotators of incidents' labels: block coverage, line kappa
    Agreement(agreement::AgreementArgs),
    /// Two results folders side by side, incident by incident: scores, block overlap, Jaccard
    Compare(compare::CompareArgs),
    /// Write the self-contained HTML report of one or more scored configurations
    Report(report::ReportArgs),
    /// Pack a results folder as a submission (a .tar.gz with checksums), or --check a package
    Submit(submit::SubmitArgs),
    /// Measure the offline localizer on a corpus: metrics with intervals, recall of each stage
    Eval(eval::EvalArgs),
    /// Benchmarks that print figures: index, attempt, score, lsp, annotate, document
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// The language server on stdin/stdout
    Lsp(lsp::LspArgs),
    /// Serves one sandboxed tool call of the model agent (internal)
    #[command(hide = true)]
    AgentTool,
    /// Runs an agent behind the sandbox's endpoint-only network (internal)
    #[command(hide = true)]
    SandboxNet(sandbox_net::SandboxNetArgs),
}

/// A command's failure: the exit status (1 bad input, 2 usage) and one sentence per problem.
#[derive(Debug)]
pub struct CliError {
    pub status: u8,
    pub messages: Vec<String>,
}

impl CliError {
    pub fn bad_input(msg: impl Into<String>) -> CliError {
        CliError {
            status: 1,
            messages: vec![msg.into()],
        }
    }

    pub fn usage(msg: impl Into<String>) -> CliError {
        CliError {
            status: 2,
            messages: vec![msg.into()],
        }
    }
}

impl From<String> for CliError {
    fn from(msg: String) -> CliError {
        CliError::bad_input(msg)
    }
}

pub type CliResult = Result<(), CliError>;

pub fn dispatch(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Incidents(c) => incidents::run(c),
        Command::Cache(c) => cache::run(c),
        Command::Prepare(a) => prepare::run(a),
        Command::Run(a) => run::run(a),
        Command::Score(a) => score::run(a),
        Command::Agreement(a) => agreement::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Report(a) => report::run(a),
        Command::Submit(a) => submit::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Bench(c) => bench::run(c),
        Command::Lsp(a) => lsp::run(a),
        Command::AgentTool => agent_tool::run(),
        Command::SandboxNet(a) => return sandbox_net::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            for m in &e.messages {
                eprintln!("{}", crate::util::secrets::redact(m));
            }
            ExitCode::from(e.status)
        }
    }
}

/// A multi-threaded tokio runtime for the commands that run agents.
pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::bad_input(format!("cannot start the async runtime: {e}")))
}

//! `distdebug eval`: the offline localizer measured on a corpus (see `crate::eval`).

use super::{CliError, CliResult, IncidentsDirArg};
use crate::eval::{self, EvalOptions, IncidentSet};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SetArg {
    /// Real upstream incidents (tag `upstream`): the headline
    Upstream,
    /// The incidents written for this project
    SelfContained,
    All,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FoldsArg {
    System,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub dir: IncidentsDirArg,
    /// Which incidents
    #[arg(long, value_enum, default_value = "upstream")]
    pub set: SetArg,
    /// Only this incident (repeatable)
    #[arg(long = "incident", value_name = "ID")]
    pub only: Vec<String>,
    /// `system`: fit the ranking and selection leaving one system out at a time and report
    /// each upstream incident with the weights fitted without its system
    #[arg(long, value_name = "system")]
    pub folds: Option<FoldsArg>,
    /// Keep each incident's candidate places under <work>/places/ and reuse them in later
    /// runs (only while the stages before the ranking are unchanged: for fitting)
    #[arg(long)]
    pub reuse_places: bool,
    /// Where prepared workspaces are kept between runs
    #[arg(long, default_value = "target/distdebug-eval")]
    pub work: PathBuf,
    /// Also write the results as JSON to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Print the tables of a JSON file an earlier run wrote (--json) instead of running;
    /// repeated, the runs' incidents are pooled into one table (each incident in one run)
    #[arg(long, value_name = "FILE")]
    pub from: Vec<PathBuf>,
    /// Also compare this run (or --from) with an earlier one, incident by incident: the mean
    /// change of each metric with a paired bootstrap interval, and the incidents that moved
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
    /// Seed of the bootstrap intervals
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

pub fn run(a: EvalArgs) -> CliResult {
    let opts = EvalOptions {
        incidents_dir: crate::incident::incidents_dir(a.dir.dir.as_deref()),
        work: a.work,
        set: match a.set {
            SetArg::Upstream => IncidentSet::Upstream,
            SetArg::SelfContained => IncidentSet::SelfContained,
            SetArg::All => IncidentSet::All,
        },
        only: a.only,
        config: Default::default(),
        folds_by_system: a.folds.is_some(),
        reuse_places: a.reuse_places,
    };
    // Read the earlier run first: a wrong path should not cost a whole evaluation.
    let before = a.against.as_deref().map(eval::load_results).transpose()?;
    let report = match a.from.as_slice() {
        [] => eval::run_eval(&opts, &mut |line| eprintln!("{line}"))?,
        [one] => eval::load(one)?,
        several => eval::pool(several)?,
    };
    if report.results.is_empty() {
        return Err(CliError::bad_input(format!(
            "no incident of {} could be evaluated ({} skipped)",
            opts.incidents_dir.display(),
            report.skipped.len()
        )));
    }
    print!("{}", eval::table::render(&report, a.seed));
    if let Some(p) = &a.json {
        eval::save(&report, p)?;
    }
    if let Some(before) = &before {
        let paired = eval::paired::compare(&report, before, a.seed);
        print!("\n{}", eval::paired::render(&paired));
    }
    Ok(())
}

//! Running attempts: the files an attempt leaves behind, cancellation, scheduling many
//! attempts at once, and the run's description (`run.json`).

pub mod attempt;
pub mod info;
pub mod schedule;

pub use attempt::{run_attempt, AttemptSummary};
pub use info::{run_info, write_run_info};
pub use schedule::{run_jobs, Job};

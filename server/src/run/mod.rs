//! Running attempts: the files an attempt leaves behind, cancellation, scheduling many
//! attempts at once, which attempts a run makes (shards, resuming), its progress display,
//! and the run's description (`run.json`).

pub mod attempt;
pub mod info;
pub mod plan;
pub mod progress;
pub mod schedule;

pub use attempt::{run_attempt, AttemptSummary};
pub use info::{run_info, write_run_info};
pub use plan::{all_pairs, is_finished, Pair, Shard};
pub use progress::Progress;
pub use schedule::{run_jobs, Job, JobEvent};

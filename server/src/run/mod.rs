//! Running attempts: the files an attempt leaves behind, cancellation and scheduling.

pub mod attempt;

pub use attempt::{run_attempt, AttemptSummary};

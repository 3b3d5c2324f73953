//! Submission packages: one `results/<config>` as a gzipped tar that a benchmark's maintainers
//! can list, and the check they run before listing it.
//!
//! Layout inside the archive, all under `submission/`:
//! `manifest.json` (incidents, attempts, and every other file's SHA-256 and size),
//! `run.json` (the run record plus `usage`: token and cost totals), and per attempt
//! `<incident>/attempt-<k>/{diagnosis.json, trajectory.json, leakage.json}`.

pub mod check;
pub mod manifest;
pub mod pack;

pub use check::{check_package, CheckReport};
pub use manifest::{Manifest, UsageTotals};
pub use pack::{pack, PackOptions, PackSummary};

#[cfg(test)]
mod tests;

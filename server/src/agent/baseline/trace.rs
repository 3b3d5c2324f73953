//! What each stage of the offline localizer handed to the next, kept so that an evaluation
//! can say at which stage an incident's labeled code was lost.

use serde::{Deserialize, Serialize};

/// A line range of one file (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub path: String,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(path: impl Into<String>, start: u32, end: u32) -> Span {
        Span {
            path: path.into(),
            start,
            end,
        }
    }

    /// True when both name the same file and share at least one line.
    pub fn touches(&self, path: &str, start: u32, end: u32) -> bool {
        self.path == path && self.start <= end && start <= self.end
    }
}

/// The ranked output of each stage, best first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StageTrace {
    /// Candidate files.
    pub files: Vec<String>,
    /// Candidate functions (definitions; a block outside any function stands for itself).
    pub functions: Vec<Span>,
    /// Candidate blocks before the final choice.
    pub blocks: Vec<Span>,
}

//! What the stages of the offline localizer share: the step sink, the raw candidate type
//! and small helpers for steps and rationales.

use crate::attempt::{PathRead, Step, StepKind};
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Why the localizer stopped early.
pub enum Stop {
    Cancelled,
    Failed(String),
}

/// Hands steps from the blocking localizer to the async side, which records them as they
/// come; and tells the localizer when the attempt was cancelled.
pub struct Sink {
    pub tx: mpsc::UnboundedSender<Step>,
    pub cancel: CancellationToken,
}

impl Sink {
    pub fn step(&self, s: Step) {
        // The receiver is gone only when the attempt was abandoned; nothing to record then.
        let _ = self.tx.send(s);
    }

    pub fn check(&self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            Err(Stop::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Where a candidate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Source {
    Log,
    /// A log statement only a sentence of the report (not output it quotes) matches.
    Prose,
    Frame,
    Mention,
    Named,
    Related,
    Flow,
    /// Writers of state the report names.
    State,
    /// Lines that use two or more names the report writes as code.
    Together,
    Bm25,
}

impl Source {
    /// Every source, in the order of their features.
    pub const ALL: [Source; 10] = [
        Source::Log,
        Source::Prose,
        Source::Frame,
        Source::Mention,
        Source::Named,
        Source::Related,
        Source::Flow,
        Source::State,
        Source::Together,
        Source::Bm25,
    ];

    /// The position of this source's feature.
    pub fn feature(self) -> usize {
        Source::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }

    /// What the source is, for summaries.
    pub fn describe(self) -> &'static str {
        match self {
            Source::Log => "a matching log statement",
            Source::Prose => "a log statement the report's words paraphrase",
            Source::Frame => "a stack frame",
            Source::Mention => "a file:line mention",
            Source::Named => "a definition the report names",
            Source::Related => "a caller or callee of the evidence",
            Source::Flow => "data flow back from the evidence",
            Source::State => "a writer of state the report names",
            Source::Together => "a use of several names the report writes as code",
            Source::Bm25 => "the report's words",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Candidate {
    pub file: usize,
    pub start: u32,
    pub end: u32,
    pub score: f64,
    pub source: Source,
    pub reason: String,
}

pub fn action(tool: &str, args: serde_json::Value) -> Step {
    Step::new(StepKind::Action).with_tool(tool, args)
}

pub fn observation(text: String) -> Step {
    Step::new(StepKind::Observation).with_text(text)
}

/// An observation stamped with the time since the attempt started.
pub fn timed(started: &Instant, text: String) -> Step {
    observation(format!("[{:.2} s] {text}", started.elapsed().as_secs_f64()))
}

pub fn read(path: &str, start: u32, end: u32) -> PathRead {
    PathRead {
        path: path.to_string(),
        start_line: Some(start.max(1)),
        end_line: Some(end.max(start).max(1)),
    }
}

pub fn quote(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.len() <= max {
        return s.to_string();
    }
    let mut e = max;
    while !s.is_char_boundary(e) {
        e -= 1;
    }
    format!("{}…", &s[..e])
}

/// The name the report goes by in rationales (its path in the workspace).
pub const REPORT: &str = ".distdebug/report.md";

/// The reason up to its first `;` (what the evidence was, without how the block was cut).
pub fn first_clause(reason: &str) -> String {
    reason.split(';').next().unwrap_or(reason).to_string()
}

//! Per-stage recall: where in each stage's ranked output a labeled block first shows up (its
//! file among the candidate files, its function among the candidate functions, the block
//! among the candidate blocks), so a miss can be put down to the stage that lost it.

use crate::agent::baseline::trace::StageTrace;
use crate::incident::LabelBlock;
use crate::util::paths::normalize_rel;
use serde::{Deserialize, Serialize};

/// One labeled block's ranks (1-based; `None`: not among that stage's candidates).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LabelStages {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub file_rank: Option<usize>,
    pub function_rank: Option<usize>,
    pub block_rank: Option<usize>,
    /// Touched by a named block (what block coverage counts).
    pub reached: bool,
}

/// The ranks of every label in `trace`; `reached[i]` says whether label i was named.
pub fn label_stages(
    labels: &[LabelBlock],
    trace: &StageTrace,
    reached: &[bool],
) -> Vec<LabelStages> {
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let path = normalize_rel(&l.path);
            let (s, e) = (l.start_line, l.end_line);
            LabelStages {
                file_rank: trace.files.iter().position(|f| *f == path).map(|r| r + 1),
                function_rank: trace
                    .functions
                    .iter()
                    .position(|f| f.touches(&path, s, e))
                    .map(|r| r + 1),
                block_rank: trace
                    .blocks
                    .iter()
                    .position(|b| b.touches(&path, s, e))
                    .map(|r| r + 1),
                reached: reached.get(i).copied().unwrap_or(false),
                path,
                start_line: s,
                end_line: e,
            }
        })
        .collect()
}

/// The recall columns the tables show: (title, which rank, cut-off).
pub const COLUMNS: [(&str, Stage, usize); 8] = [
    ("file@1", Stage::File, 1),
    ("file@5", Stage::File, 5),
    ("file@20", Stage::File, 20),
    ("fn@5", Stage::Function, 5),
    ("fn@20", Stage::Function, 20),
    ("block@10", Stage::Block, 10),
    ("block@all", Stage::Block, usize::MAX),
    ("named", Stage::Named, 0),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    File,
    Function,
    Block,
    Named,
}

/// The share of labels that pass each column (one row per incident).
pub fn recall_row(labels: &[LabelStages]) -> [f64; 8] {
    std::array::from_fn(|c| {
        let (_, stage, k) = COLUMNS[c];
        let pass = |l: &LabelStages| match stage {
            Stage::File => l.file_rank.is_some_and(|r| r <= k),
            Stage::Function => l.function_rank.is_some_and(|r| r <= k),
            Stage::Block => l.block_rank.is_some_and(|r| r <= k),
            Stage::Named => l.reached,
        };
        if labels.is_empty() {
            0.0
        } else {
            labels.iter().filter(|l| pass(l)).count() as f64 / labels.len() as f64
        }
    })
}

/// The stage at which an incident's best label was lost: the first stage no label passed
/// (with the cut-offs the selection works with), or "named" when one was.
pub fn lost_at(labels: &[LabelStages]) -> &'static str {
    if labels.iter().any(|l| l.reached) {
        "named"
    } else if labels.iter().all(|l| l.file_rank.is_none()) {
        "files"
    } else if labels.iter().all(|l| l.function_rank.is_none()) {
        "functions"
    } else if labels.iter().all(|l| l.block_rank.is_none()) {
        "blocks"
    } else {
        "ranking"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::baseline::trace::Span;

    #[test]
    fn ranks_are_the_first_touching_candidate_of_each_stage() {
        let trace = StageTrace {
            files: vec!["b.rs".into(), "a.rs".into()],
            functions: vec![Span::new("b.rs", 1, 9), Span::new("a.rs", 10, 30)],
            blocks: vec![Span::new("a.rs", 10, 11), Span::new("a.rs", 20, 22)],
        };
        let labels = [
            LabelBlock::new("a.rs", 21, 21),
            LabelBlock::new("./c.rs", 1, 2),
        ];
        let got = label_stages(&labels, &trace, &[false, false]);
        assert_eq!(
            (got[0].file_rank, got[0].function_rank, got[0].block_rank),
            (Some(2), Some(2), Some(2))
        );
        assert_eq!(got[1].path, "c.rs");
        assert_eq!(got[1].file_rank, None);
        let row = recall_row(&got);
        assert_eq!(row[0], 0.0); // file@1
        assert_eq!(row[1], 0.5); // file@5
        assert_eq!(lost_at(&got), "ranking");
        assert_eq!(lost_at(&got[1..]), "files");
    }
}

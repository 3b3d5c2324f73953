//! Where an agent looked: the files and lines its trajectory's `paths_read` name, per file (how
//! often, which lines, from which step), and the first step at which it read a labeled line
//! ("time to first look"), which the scorer adds to `diagnosis_scores.json`.

use crate::attempt::Step;
use crate::incident::LabelBlock;
use crate::util::paths::normalize_rel;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One read: a step read lines `start..=end` of `path` (normalised). `end` is `u32::MAX` when
/// the read runs to the end of the file; a read that names no lines covers the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub step: u32,
    pub path: String,
    pub start: u32,
    pub end: u32,
}

impl Read {
    /// A read as a trajectory writes it: both lines missing means the whole file, a missing
    /// start means from line 1, a missing end means to the end of the file.
    pub fn new(step: u32, path: &str, start: Option<u32>, end: Option<u32>) -> Read {
        let start = start.unwrap_or(1).max(1);
        let end = end.unwrap_or(u32::MAX).max(start);
        Read {
            step,
            path: normalize_rel(path),
            start,
            end,
        }
    }

    pub fn whole_file(&self) -> bool {
        self.start == 1 && self.end == u32::MAX
    }
}

/// What an agent read of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLooks {
    pub path: String,
    /// How many reads named this file.
    pub reads: u32,
    /// The lines read, merged, sorted and disjoint (inclusive; `u32::MAX` is "to the end").
    pub ranges: Vec<(u32, u32)>,
    /// The first step that read this file.
    pub first_step: u32,
}

impl FileLooks {
    /// `lines 40-120, 130-131` or `the whole file`; at most `max` ranges, then `+n more`.
    pub fn describe_lines(&self, max: usize) -> String {
        if self.ranges == [(1, u32::MAX)] {
            return "the whole file".to_string();
        }
        let show = |&(s, e): &(u32, u32)| match (s, e) {
            (s, u32::MAX) => format!("{s}-end"),
            (s, e) if s == e => format!("{s}"),
            (s, e) => format!("{s}-{e}"),
        };
        let mut parts: Vec<String> = self.ranges.iter().take(max).map(show).collect();
        if self.ranges.len() > max {
            parts.push(format!("+{} more", self.ranges.len() - max));
        }
        let word = if self.ranges.len() == 1 && self.ranges[0].0 == self.ranges[0].1 {
            "line"
        } else {
            "lines"
        };
        format!("{word} {}", parts.join(", "))
    }
}

/// Everything an attempt read, by file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Looked {
    files: BTreeMap<String, FileLooks>,
}

impl Looked {
    pub fn add(&mut self, read: &Read) {
        let f = self
            .files
            .entry(read.path.clone())
            .or_insert_with(|| FileLooks {
                path: read.path.clone(),
                reads: 0,
                ranges: Vec::new(),
                first_step: read.step,
            });
        f.reads += 1;
        f.first_step = f.first_step.min(read.step);
        f.ranges.push((read.start, read.end));
        f.ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(f.ranges.len());
        for &(s, e) in &f.ranges {
            match merged.last_mut() {
                Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        f.ranges = merged;
    }

    /// The reads of a whole trajectory.
    pub fn from_steps(steps: &[Step]) -> Looked {
        let mut l = Looked::default();
        for r in reads_of_steps(steps) {
            l.add(&r);
        }
        l
    }

    pub fn file(&self, path: &str) -> Option<&FileLooks> {
        self.files.get(path)
    }

    pub fn files(&self) -> impl Iterator<Item = &FileLooks> {
        self.files.values()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// The reads of the steps, in step order.
pub fn reads_of_steps(steps: &[Step]) -> Vec<Read> {
    steps
        .iter()
        .flat_map(|s| {
            s.paths_read
                .iter()
                .map(move |p| Read::new(s.index, &p.path, p.start_line, p.end_line))
        })
        .collect()
}

/// "Time to first look", as `diagnosis_scores.json` carries it (an extra field, beside the
/// fields of the scoring rules (docs/scoring.md)): the first step that read a line of a labeled block (`null` when no
/// step did), how many labels had a line read, and how many files were read at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirstLook {
    pub first_look_step: Option<u32>,
    pub labels_read: usize,
    pub labels: usize,
    pub files_read: usize,
}

/// Compares the reads (in any order) with the labeled blocks.
pub fn first_look(reads: &[Read], labels: &[LabelBlock]) -> FirstLook {
    let labels_norm: Vec<(String, u32, u32)> = labels
        .iter()
        .map(|l| (normalize_rel(&l.path), l.start_line, l.end_line))
        .collect();
    let touches =
        |r: &Read, l: &(String, u32, u32)| r.path == l.0 && r.start <= l.2 && l.1 <= r.end;
    let first_look_step = reads
        .iter()
        .filter(|r| labels_norm.iter().any(|l| touches(r, l)))
        .map(|r| r.step)
        .min();
    let labels_read = labels_norm
        .iter()
        .filter(|l| reads.iter().any(|r| touches(r, l)))
        .count();
    let mut files: Vec<&str> = reads.iter().map(|r| r.path.as_str()).collect();
    files.sort_unstable();
    files.dedup();
    FirstLook {
        first_look_step,
        labels_read,
        labels: labels.len(),
        files_read: files.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempt::trajectory::PathRead;
    use crate::attempt::StepKind;

    fn step(index: u32, reads: &[(&str, Option<u32>, Option<u32>)]) -> Step {
        let mut s = Step::new(StepKind::Action);
        s.index = index;
        s.paths_read = reads
            .iter()
            .map(|(p, a, b)| PathRead {
                path: p.to_string(),
                start_line: *a,
                end_line: *b,
            })
            .collect();
        s
    }

    fn label(path: &str, s: u32, e: u32) -> LabelBlock {
        LabelBlock::new(path, s, e)
    }

    #[test]
    fn counts_reads_and_merges_line_ranges_per_file() {
        let steps = vec![
            step(0, &[("evidence/x.log", None, None)]),
            step(2, &[("./src/a.py", Some(40), Some(80))]),
            step(
                5,
                &[
                    ("src/a.py", Some(81), Some(120)),
                    ("src/b.py", Some(3), Some(3)),
                ],
            ),
            step(7, &[("src\\a.py", Some(200), None)]),
        ];
        let l = Looked::from_steps(&steps);
        let a = l.file("src/a.py").unwrap();
        assert_eq!(a.reads, 3);
        assert_eq!(a.ranges, vec![(40, 120), (200, u32::MAX)]);
        assert_eq!(a.first_step, 2);
        assert_eq!(a.describe_lines(5), "lines 40-120, 200-end");
        assert_eq!(a.describe_lines(1), "lines 40-120, +1 more");
        assert_eq!(l.file("src/b.py").unwrap().describe_lines(5), "line 3");
        assert_eq!(
            l.file("evidence/x.log").unwrap().describe_lines(5),
            "the whole file"
        );
        assert_eq!(l.files().count(), 3);
    }

    #[test]
    fn the_first_look_is_the_first_step_that_reads_a_labeled_line() {
        let labels = vec![label("src/a.py", 100, 110), label("src/c.py", 1, 5)];
        // Step 2 reads 40..80 of a.py: not yet. Step 5 reads 81..120: it reaches 100..110.
        let steps = vec![
            step(2, &[("src/a.py", Some(40), Some(80))]),
            step(5, &[("src/a.py", Some(81), Some(120))]),
            step(9, &[("src/a.py", None, None)]),
        ];
        let f = first_look(&reads_of_steps(&steps), &labels);
        assert_eq!(
            f,
            FirstLook {
                first_look_step: Some(5),
                labels_read: 1,
                labels: 2,
                files_read: 1
            }
        );
        // A read that ends right before the label does not count; a whole-file read does.
        let steps = vec![
            step(1, &[("src/c.py", Some(6), Some(9))]),
            step(3, &[("src/c.py", None, None)]),
        ];
        let f = first_look(&reads_of_steps(&steps), &labels);
        assert_eq!(f.first_look_step, Some(3));
        let none = first_look(&reads_of_steps(&steps[..1]), &labels);
        assert_eq!((none.first_look_step, none.labels_read), (None, 0));
    }
}

//! The four per-attempt metrics of the scoring rules (docs/scoring.md), computed on line intervals (never on sets of
//! single lines, so a block naming lines 1 to 4,000,000,000 costs as little as any other).

use crate::attempt::DiagnosisBlock;
use crate::incident::LabelBlock;
use crate::util::paths::normalize_rel;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Block coverage, block precision, block hit rate and file coverage, each in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Metrics {
    pub block_coverage: f64,
    pub block_precision: f64,
    pub block_hit_rate: f64,
    pub file_coverage: f64,
}

impl Metrics {
    pub fn as_array(&self) -> [f64; 4] {
        [
            self.block_coverage,
            self.block_precision,
            self.block_hit_rate,
            self.file_coverage,
        ]
    }

    pub fn from_array(a: [f64; 4]) -> Metrics {
        Metrics {
            block_coverage: a[0],
            block_precision: a[1],
            block_hit_rate: a[2],
            file_coverage: a[3],
        }
    }
}

/// The metrics of one diagnosis plus the details the editor shows: which labels were reached
/// and which predicted blocks hit a label (in the order of the inputs).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockScores {
    pub metrics: Metrics,
    pub label_reached: Vec<bool>,
    pub block_hit: Vec<bool>,
}

/// A block as the metrics see it: a normalised path and an inclusive line range, already
/// clipped to the file's length (`None` when clipping leaves no line).
#[derive(Debug, Clone)]
struct Span {
    path: String,
    lines: Option<(u64, u64)>,
}

fn span(path: &str, start: u32, end: u32, file_lines: &dyn Fn(&str) -> Option<u32>) -> Span {
    let path = normalize_rel(path);
    let (start, mut end) = (u64::from(start.max(1)), u64::from(end));
    // Clip only where the file exists at the buggy revision; elsewhere the lines stay and
    // count against precision.
    if let Some(n) = file_lines(&path) {
        end = end.min(u64::from(n));
    }
    let lines = (start <= end).then_some((start, end));
    Span { path, lines }
}

/// Merged, sorted, disjoint intervals per path: `lines(X)` of the scoring rules (docs/scoring.md).
struct LineSet<'a> {
    by_path: BTreeMap<&'a str, Vec<(u64, u64)>>,
}

impl<'a> LineSet<'a> {
    fn new(spans: &'a [Span]) -> LineSet<'a> {
        let mut by_path: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
        for s in spans {
            if let Some(r) = s.lines {
                by_path.entry(s.path.as_str()).or_default().push(r);
            }
        }
        for ranges in by_path.values_mut() {
            ranges.sort_unstable();
            let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
            for &(s, e) in ranges.iter() {
                match merged.last_mut() {
                    // Overlapping or touching ranges become one, so each line counts once.
                    Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            *ranges = merged;
        }
        LineSet { by_path }
    }

    fn len(&self) -> u64 {
        self.by_path
            .values()
            .flat_map(|r| r.iter())
            .map(|(s, e)| e - s + 1)
            .sum()
    }

    /// True when the set holds at least one line of `span`.
    fn touches(&self, span: &Span) -> bool {
        let (Some((s, e)), Some(ranges)) = (span.lines, self.by_path.get(span.path.as_str()))
        else {
            return false;
        };
        // The first merged range that ends at or after `s` is the only candidate.
        let i = ranges.partition_point(|r| r.1 < s);
        ranges.get(i).is_some_and(|r| r.0 <= e)
    }

    /// |self ∩ other| in lines.
    fn overlap(&self, other: &LineSet) -> u64 {
        let mut total = 0;
        for (path, a) in &self.by_path {
            let Some(b) = other.by_path.get(path) else {
                continue;
            };
            let (mut i, mut j) = (0, 0);
            while i < a.len() && j < b.len() {
                let lo = a[i].0.max(b[j].0);
                let hi = a[i].1.min(b[j].1);
                if lo <= hi {
                    total += hi - lo + 1;
                }
                if a[i].1 < b[j].1 {
                    i += 1;
                } else {
                    j += 1;
                }
            }
        }
        total
    }
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// Scores `blocks` against `labels` (the scoring rules, docs/scoring.md). `file_lines` gives the number of lines of
/// a normalised repository path at the buggy revision, or `None` when the file does not exist
/// there (or cannot be looked up): then the block is not clipped.
///
/// With no labels every metric that divides by |L| is 0 (an incident needs labels to be
/// scored; callers reject it before). With no blocks, precision and hit rate are 0.
pub fn score_blocks(
    labels: &[LabelBlock],
    blocks: &[DiagnosisBlock],
    file_lines: &dyn Fn(&str) -> Option<u32>,
) -> BlockScores {
    let l_spans: Vec<Span> = labels
        .iter()
        .map(|b| span(&b.path, b.start_line, b.end_line, file_lines))
        .collect();
    let d_spans: Vec<Span> = blocks
        .iter()
        .map(|b| span(&b.path, b.start_line, b.end_line, file_lines))
        .collect();
    let l_lines = LineSet::new(&l_spans);
    let d_lines = LineSet::new(&d_spans);

    let label_reached: Vec<bool> = l_spans.iter().map(|s| d_lines.touches(s)).collect();
    let block_hit: Vec<bool> = d_spans.iter().map(|s| l_lines.touches(s)).collect();

    let l_files: BTreeSet<&str> = l_spans.iter().map(|s| s.path.as_str()).collect();
    let d_files: BTreeSet<&str> = d_spans.iter().map(|s| s.path.as_str()).collect();

    let count = |v: &[bool]| v.iter().filter(|x| **x).count() as u64;
    let metrics = Metrics {
        block_coverage: ratio(count(&label_reached), l_spans.len() as u64),
        block_precision: ratio(d_lines.overlap(&l_lines), d_lines.len()),
        block_hit_rate: ratio(count(&block_hit), d_spans.len() as u64),
        file_coverage: ratio(
            l_files.intersection(&d_files).count() as u64,
            l_files.len() as u64,
        ),
    };
    BlockScores {
        metrics,
        label_reached,
        block_hit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn label(path: &str, s: u32, e: u32) -> LabelBlock {
        LabelBlock::new(path, s, e)
    }

    fn block(path: &str, s: u32, e: u32) -> DiagnosisBlock {
        DiagnosisBlock::new(path, s, e)
    }

    fn no_files(_: &str) -> Option<u32> {
        None
    }

    /// A repository with `a.rs` of 100 lines and `b.rs` of 50.
    fn two_files(p: &str) -> Option<u32> {
        match p {
            "a.rs" => Some(100),
            "b.rs" => Some(50),
            _ => None,
        }
    }

    #[test]
    fn the_worked_example_of_docs_scoring() {
        // docs/scoring.md, "A worked example": the numbers there are checked here.
        let files = |p: &str| match p {
            "src/Leader.java" => Some(100),
            "src/Epoch.java" => Some(50),
            _ => None,
        };
        let labels = [
            label("src/Leader.java", 10, 19),
            label("src/Leader.java", 40, 44),
            label("src/Epoch.java", 5, 9),
        ];
        let blocks = [
            block("./src/Leader.java", 15, 24),
            block("src/Leader.java", 20, 29),
            block("src\\Quorum.java", 1, 10),
            block("src/Leader.java", 95, 120),
        ];
        let s = score_blocks(&labels, &blocks, &files);
        assert_eq!(s.label_reached, [true, false, false]);
        assert_eq!(s.block_hit, [true, false, false, false]);
        // lines(D): Leader 15..29 (15 lines) + Leader 95..100 (6, clipped) + Quorum 1..10
        // (10, no such file) = 31; lines(D) ∩ lines(L) = Leader 15..19 = 5 lines.
        assert!((s.metrics.block_coverage - 1.0 / 3.0).abs() < 1e-12);
        assert!((s.metrics.block_precision - 5.0 / 31.0).abs() < 1e-12);
        assert!((s.metrics.block_hit_rate - 0.25).abs() < 1e-12);
        assert!((s.metrics.file_coverage - 0.5).abs() < 1e-12);
    }

    #[test]
    fn empty_diagnosis_scores_zero_everywhere() {
        let s = score_blocks(&[label("a.rs", 1, 5)], &[], &two_files);
        assert_eq!(s.metrics, Metrics::default());
        assert_eq!(s.label_reached, [false]);
        assert!(s.block_hit.is_empty());
    }

    #[test]
    fn no_labels_scores_zero_instead_of_dividing_by_zero() {
        let s = score_blocks(&[], &[block("a.rs", 1, 5)], &two_files);
        assert_eq!(s.metrics.block_coverage, 0.0);
        assert_eq!(s.metrics.file_coverage, 0.0);
        assert_eq!(s.metrics.block_precision, 0.0);
        assert_eq!(s.block_hit, [false]);
    }

    #[test]
    fn a_block_past_the_end_of_its_file_is_clipped() {
        let labels = [label("b.rs", 45, 50)];
        // b.rs has 50 lines: 45..1000 is clipped to 45..50, so all its lines are labeled.
        let s = score_blocks(&labels, &[block("b.rs", 45, 1000)], &two_files);
        assert_eq!(s.metrics.block_precision, 1.0);
        // Entirely past the end: no line left, so no hit, but the file is still named.
        let s = score_blocks(&labels, &[block("b.rs", 60, 70)], &two_files);
        assert_eq!(s.metrics.block_hit_rate, 0.0);
        assert_eq!(s.metrics.block_precision, 0.0);
        assert_eq!(s.metrics.block_coverage, 0.0);
        assert_eq!(s.metrics.file_coverage, 1.0);
    }

    #[test]
    fn a_block_in_a_missing_file_keeps_its_lines_against_precision() {
        let labels = [label("a.rs", 1, 10)];
        let blocks = [block("a.rs", 1, 10), block("gone.rs", 1, 30)];
        let s = score_blocks(&labels, &blocks, &two_files);
        assert!((s.metrics.block_precision - 10.0 / 40.0).abs() < 1e-12);
        assert_eq!(s.metrics.block_hit_rate, 0.5);
        // The same without any file information: nothing is clipped either way.
        let s2 = score_blocks(&labels, &blocks, &no_files);
        assert_eq!(s.metrics, s2.metrics);
    }

    #[test]
    fn duplicate_and_overlapping_blocks_count_each_line_once() {
        let labels = [label("a.rs", 1, 10)];
        let once = score_blocks(&labels, &[block("a.rs", 5, 14)], &two_files);
        let twice = score_blocks(
            &labels,
            &[
                block("a.rs", 5, 14),
                block("a.rs", 5, 14),
                block("a.rs", 8, 12),
            ],
            &two_files,
        );
        assert_eq!(once.metrics.block_precision, 0.6);
        assert_eq!(twice.metrics.block_precision, 0.6);
        // Hit rate counts blocks, not lines: each duplicate is a block that hit.
        assert_eq!(twice.block_hit, [true, true, true]);
        // Overlapping labels: lines(L) counts the shared lines once too.
        let labels = [label("a.rs", 1, 10), label("a.rs", 6, 12)];
        let s = score_blocks(&labels, &[block("a.rs", 1, 20)], &two_files);
        assert!((s.metrics.block_precision - 12.0 / 20.0).abs() < 1e-12);
        assert_eq!(s.metrics.block_coverage, 1.0);
    }

    #[test]
    fn touching_ranges_do_not_overlap() {
        let s = score_blocks(
            &[label("a.rs", 10, 19)],
            &[block("a.rs", 20, 29)],
            &two_files,
        );
        assert_eq!(s.label_reached, [false]);
        let s = score_blocks(
            &[label("a.rs", 10, 19)],
            &[block("a.rs", 19, 29)],
            &two_files,
        );
        assert_eq!(s.label_reached, [true]);
        // 19..29 is 11 lines, of which line 19 is labeled.
        assert!((s.metrics.block_precision - 1.0 / 11.0).abs() < 1e-12);
    }

    #[test]
    fn paths_are_normalised_before_comparing() {
        let labels = [label("src/main/A.java", 3, 4)];
        for p in [
            "./src/main/A.java",
            "src\\main\\A.java",
            "src//main/./A.java",
        ] {
            let s = score_blocks(&labels, &[block(p, 1, 3)], &no_files);
            assert_eq!(s.metrics.block_coverage, 1.0, "{p}");
            assert_eq!(s.metrics.file_coverage, 1.0, "{p}");
        }
        // Case is significant: repositories on Linux may hold both.
        let s = score_blocks(&labels, &[block("src/main/a.java", 1, 3)], &no_files);
        assert_eq!(s.metrics.file_coverage, 0.0);
    }

    #[test]
    fn huge_ranges_cost_nothing() {
        let s = score_blocks(
            &[label("x.rs", 1, 1)],
            &[block("x.rs", 1, u32::MAX)],
            &no_files,
        );
        assert!((s.metrics.block_precision - 1.0 / u32::MAX as f64).abs() < 1e-15);
    }

    fn arb_block() -> impl Strategy<Value = (String, u32, u32)> {
        (
            prop_oneof![Just("a.rs"), Just("b.rs"), Just("./a.rs"), Just("c.rs")],
            1u32..120,
            0u32..30,
        )
            .prop_map(|(p, s, len)| (p.to_string(), s, s + len))
    }

    fn arb_label() -> impl Strategy<Value = LabelBlock> {
        // Labels of a valid incident lie inside their files (a.rs: 100 lines, b.rs: 50).
        (
            prop_oneof![Just("a.rs"), Just("b.rs")],
            1u32..=50,
            0u32..=50,
        )
            .prop_map(|(p, s, len)| label(p, s, (s + len).min(50)))
    }

    proptest! {
        #[test]
        fn metrics_stay_in_the_unit_interval(
            labels in proptest::collection::vec(arb_label(), 0..6),
            blocks in proptest::collection::vec(arb_block(), 0..8),
        ) {
            let blocks: Vec<_> = blocks.iter().map(|(p, s, e)| block(p, *s, *e)).collect();
            let m = score_blocks(&labels, &blocks, &two_files).metrics;
            for v in m.as_array() {
                prop_assert!((0.0..=1.0).contains(&v), "{m:?}");
            }
        }

        #[test]
        fn naming_exactly_the_labels_scores_one(
            labels in proptest::collection::vec(arb_label(), 1..6),
        ) {
            let blocks: Vec<_> = labels.iter().map(|l| block(&l.path, l.start_line, l.end_line)).collect();
            let m = score_blocks(&labels, &blocks, &two_files).metrics;
            prop_assert_eq!(m, Metrics { block_coverage: 1.0, block_precision: 1.0, block_hit_rate: 1.0, file_coverage: 1.0 });
        }

        #[test]
        fn adding_a_block_never_lowers_coverage(
            labels in proptest::collection::vec(arb_label(), 1..6),
            blocks in proptest::collection::vec(arb_block(), 0..6),
            extra in arb_block(),
        ) {
            let mut blocks: Vec<_> = blocks.iter().map(|(p, s, e)| block(p, *s, *e)).collect();
            let before = score_blocks(&labels, &blocks, &two_files).metrics;
            blocks.push(block(&extra.0, extra.1, extra.2));
            let after = score_blocks(&labels, &blocks, &two_files).metrics;
            prop_assert!(after.block_coverage >= before.block_coverage);
            prop_assert!(after.file_coverage >= before.file_coverage);
        }

        #[test]
        fn naming_every_labeled_file_whole_covers_every_label(
            labels in proptest::collection::vec(arb_label(), 1..6),
        ) {
            let files: BTreeSet<String> = labels.iter().map(|l| l.path.clone()).collect();
            let blocks: Vec<_> = files.iter().map(|f| block(f, 1, two_files(f).unwrap())).collect();
            let m = score_blocks(&labels, &blocks, &two_files).metrics;
            prop_assert_eq!(m.block_coverage, 1.0);
            prop_assert_eq!(m.file_coverage, 1.0);
            prop_assert_eq!(m.block_hit_rate, 1.0);
        }
    }
}

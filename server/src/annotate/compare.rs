//! Two attempts block by block (e.g. a person's diagnosis and an agent's): which regions of
//! code both named, which only A, which only B, and whether each side's blocks there hit a
//! label; both sides' scores under the scoring rules; and their line-level overlap (Jaccard).
//!
//! A region is a run of overlapping blocks in one file: blocks of either side that share a
//! line fall in one region. A region holding blocks of both sides is `both`.

use super::ranges::{clip, LineRanges};
use crate::attempt::DiagnosisBlock;
use crate::incident::LabelBlock;
use crate::score::{score_blocks, Metrics};
use crate::util::paths::normalize_rel;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Presence {
    #[serde(rename = "both")]
    Both,
    #[serde(rename = "only-a")]
    OnlyA,
    #[serde(rename = "only-b")]
    OnlyB,
}

impl Presence {
    pub fn as_str(self) -> &'static str {
        match self {
            Presence::Both => "both",
            Presence::OnlyA => "only-a",
            Presence::OnlyB => "only-b",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Region {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub presence: Presence,
    /// Indices (in diagnosis order) of each side's blocks in the region.
    pub a_blocks: Vec<usize>,
    pub b_blocks: Vec<usize>,
    /// Whether that side's blocks here touch a label; `None` without labels or blocks.
    pub a_hit: Option<bool>,
    pub b_hit: Option<bool>,
}

/// One side: its name, how much it names, and its scores when there are labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideSummary {
    pub name: String,
    pub blocks: usize,
    pub lines: u64,
    pub scores: Option<Metrics>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub a: SideSummary,
    pub b: SideSummary,
    pub regions: Vec<Region>,
    pub both: usize,
    pub only_a: usize,
    pub only_b: usize,
    pub both_lines: u64,
    /// |lines(A) ∩ lines(B)| / |lines(A) ∪ lines(B)|; `None` when neither names a line.
    pub jaccard: Option<f64>,
}

/// An attempt as compared: a name (`baseline #1`) and its blocks.
pub struct Side<'a> {
    pub name: String,
    pub blocks: &'a [DiagnosisBlock],
}

/// Compares `a` with `b`. `labels` (when known) decide hits and scores; `file_lines` clips
/// blocks to their files as the scoring rules do.
pub fn compare(
    a: &Side,
    b: &Side,
    labels: Option<&[LabelBlock]>,
    file_lines: &dyn Fn(&str) -> Option<u32>,
) -> Comparison {
    let scored = |blocks: &[DiagnosisBlock]| labels.map(|l| score_blocks(l, blocks, file_lines));
    let (sa, sb) = (scored(a.blocks), scored(b.blocks));
    let lines_of = |blocks: &[DiagnosisBlock]| {
        let mut r = LineRanges::default();
        for x in blocks {
            if let Some((s, e)) = clip(&x.path, x.start_line, x.end_line, file_lines) {
                r.add(&x.path, s, e);
            }
        }
        r
    };
    let (la, lb) = (lines_of(a.blocks), lines_of(b.blocks));
    let both_lines = la.intersection(&lb).len();
    let union = la.len() + lb.len() - both_lines;
    let jaccard = (union > 0).then(|| both_lines as f64 / union as f64);

    // Every block as a span (clipped when anything is left, else as written), by side.
    struct Span {
        path: String,
        start: u32,
        end: u32,
        side_a: bool,
        index: usize,
    }
    let mut spans: Vec<Span> = Vec::new();
    for (side_a, blocks) in [(true, a.blocks), (false, b.blocks)] {
        for (index, x) in blocks.iter().enumerate() {
            let (start, end) = clip(&x.path, x.start_line, x.end_line, file_lines)
                .unwrap_or((x.start_line, x.end_line));
            spans.push(Span {
                path: normalize_rel(&x.path),
                start,
                end,
                side_a,
                index,
            });
        }
    }
    spans.sort_by(|x, y| (&x.path, x.start, x.end).cmp(&(&y.path, y.start, y.end)));
    let mut regions: Vec<Region> = Vec::new();
    for s in spans {
        let joins = regions
            .last()
            .is_some_and(|r| r.path == s.path && s.start <= r.end_line);
        if !joins {
            regions.push(Region {
                path: s.path.clone(),
                start_line: s.start,
                end_line: s.end,
                presence: Presence::Both,
                a_blocks: Vec::new(),
                b_blocks: Vec::new(),
                a_hit: None,
                b_hit: None,
            });
        }
        if let Some(r) = regions.last_mut() {
            r.end_line = r.end_line.max(s.end);
            if s.side_a {
                r.a_blocks.push(s.index);
            } else {
                r.b_blocks.push(s.index);
            }
        }
    }
    for r in &mut regions {
        r.a_blocks.sort_unstable();
        r.b_blocks.sort_unstable();
        r.presence = match (r.a_blocks.is_empty(), r.b_blocks.is_empty()) {
            (false, false) => Presence::Both,
            (false, true) => Presence::OnlyA,
            _ => Presence::OnlyB,
        };
        let hit = |ix: &[usize], s: &Option<crate::score::BlockScores>| {
            let s = s.as_ref()?;
            (!ix.is_empty()).then(|| ix.iter().any(|&i| s.block_hit.get(i) == Some(&true)))
        };
        r.a_hit = hit(&r.a_blocks, &sa);
        r.b_hit = hit(&r.b_blocks, &sb);
    }
    let count = |p: Presence| regions.iter().filter(|r| r.presence == p).count();
    Comparison {
        a: SideSummary {
            name: a.name.clone(),
            blocks: a.blocks.len(),
            lines: la.len(),
            scores: sa.map(|s| s.metrics),
        },
        b: SideSummary {
            name: b.name.clone(),
            blocks: b.blocks.len(),
            lines: lb.len(),
            scores: sb.map(|s| s.metrics),
        },
        both: count(Presence::Both),
        only_a: count(Presence::OnlyA),
        only_b: count(Presence::OnlyB),
        both_lines,
        jaccard,
        regions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(path: &str, s: u32, e: u32) -> LabelBlock {
        LabelBlock::new(path, s, e)
    }

    #[test]
    fn regions_scores_and_jaccard() {
        // A: x 10-20, x 40-42, y 1-3. B: x 15-25, x 21-22 (inside the same region), z 5-5.
        // Labels: x 18-19 and z 100-101.
        let a = vec![
            DiagnosisBlock::new("x.py", 10, 20),
            DiagnosisBlock::new("x.py", 40, 42),
            DiagnosisBlock::new("y.py", 1, 3),
        ];
        let b = vec![
            DiagnosisBlock::new("./x.py", 15, 25),
            DiagnosisBlock::new("x.py", 21, 22),
            DiagnosisBlock::new("z.py", 5, 5),
        ];
        let labels = vec![label("x.py", 18, 19), label("z.py", 100, 101)];
        let c = compare(
            &Side {
                name: "human-ann #1".into(),
                blocks: &a,
            },
            &Side {
                name: "baseline #1".into(),
                blocks: &b,
            },
            Some(&labels),
            &|p| (p == "x.py").then_some(100),
        );
        type Row<'a> = (&'a str, u32, u32, &'a str, Option<bool>, Option<bool>);
        let got: Vec<Row> = c
            .regions
            .iter()
            .map(|r| {
                (
                    r.path.as_str(),
                    r.start_line,
                    r.end_line,
                    r.presence.as_str(),
                    r.a_hit,
                    r.b_hit,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("x.py", 10, 25, "both", Some(true), Some(true)),
                ("x.py", 40, 42, "only-a", Some(false), None),
                ("y.py", 1, 3, "only-a", Some(false), None),
                ("z.py", 5, 5, "only-b", None, Some(false)),
            ]
        );
        assert_eq!(c.regions[0].b_blocks, [0, 1]);
        assert_eq!((c.both, c.only_a, c.only_b), (1, 2, 1));
        // lines(A) = 11 + 3 + 3 = 17; lines(B) = x 15-25 (11) + z 5 (1) = 12; both = x 15-20
        // (6); union = 17 + 12 - 6 = 23.
        assert_eq!((c.a.lines, c.b.lines, c.both_lines), (17, 12, 6));
        assert!((c.jaccard.unwrap() - 6.0 / 23.0).abs() < 1e-12);
        let sa = c.a.scores.unwrap();
        assert_eq!(sa.block_coverage, 0.5);
        assert!((sa.block_hit_rate - 1.0 / 3.0).abs() < 1e-12);
        let sb = c.b.scores.unwrap();
        assert!((sb.block_hit_rate - 1.0 / 3.0).abs() < 1e-12);
        // Without labels: no hits, no scores; two empty attempts have no Jaccard.
        let c = compare(
            &Side {
                name: "a".into(),
                blocks: &a,
            },
            &Side {
                name: "b".into(),
                blocks: &[],
            },
            None,
            &|_| None,
        );
        assert!(c.a.scores.is_none() && c.regions.iter().all(|r| r.a_hit.is_none()));
        assert_eq!(c.jaccard, Some(0.0));
        let none = compare(
            &Side {
                name: "a".into(),
                blocks: &[],
            },
            &Side {
                name: "b".into(),
                blocks: &[],
            },
            None,
            &|_| None,
        );
        assert_eq!(none.jaccard, None);
    }
}

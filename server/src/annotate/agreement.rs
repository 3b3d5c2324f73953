//! Agreement between annotators of one incident, from the `annotator` of each block of
//! `labels.json`. For each pair (A, B):
//! - block level: the share of B's blocks that A's labels reach (at least one common line),
//!   and the other way round, so a team sees who labeled what the other did not;
//! - line level: Cohen's kappa over every line of the files either of them labeled (a line
//!   is labeled or not, by each), with the observed and the chance agreement;
//! - where they disagree: the line ranges only one of them labeled.

use super::ranges::{clip, LineRanges};
use crate::incident::LabelBlock;
use crate::util::paths::normalize_rel;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The name blocks without an `annotator` are grouped under.
pub const UNNAMED: &str = "(unnamed)";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnnotatorSummary {
    pub annotator: String,
    pub blocks: usize,
    pub lines: u64,
}

/// Lines only one annotator of a pair labeled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub only: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairAgreement {
    pub a: String,
    pub b: String,
    /// Share of B's blocks with a line A labeled.
    pub a_covers_b: f64,
    /// Share of A's blocks with a line B labeled.
    pub b_covers_a: f64,
    /// Cohen's kappa over the lines of the labeled files; `None` when chance agreement is
    /// total (e.g. both label every line), where kappa is undefined.
    pub kappa: Option<f64>,
    pub observed: f64,
    pub expected: f64,
    /// Lines compared (the lines of every file either labeled), and how many each labeled.
    pub lines: u64,
    pub a_lines: u64,
    pub b_lines: u64,
    pub both_lines: u64,
    pub files: Vec<String>,
    /// Files whose length could not be read: their last labeled line stands in for it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_without_length: Vec<String>,
    pub disagreements: Vec<Disagreement>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    pub incident: String,
    pub annotators: Vec<AnnotatorSummary>,
    pub pairs: Vec<PairAgreement>,
}

/// One annotator's labels: the blocks (clipped; `None` when nothing is left) and their lines.
struct Side {
    blocks: Vec<(String, Option<(u32, u32)>)>,
    lines: LineRanges,
}

/// Agreement between every pair of annotators of `labels`. `file_lines` gives the number of
/// lines of a normalised path at the buggy revision, `None` when unknown.
pub fn agreement(
    incident: &str,
    labels: &[LabelBlock],
    file_lines: &dyn Fn(&str) -> Option<u32>,
) -> Agreement {
    let mut sides: BTreeMap<String, Side> = BTreeMap::new();
    for l in labels {
        let who = l
            .annotator
            .clone()
            .filter(|a| !a.trim().is_empty())
            .unwrap_or_else(|| UNNAMED.to_string());
        let side = sides.entry(who).or_insert_with(|| Side {
            blocks: Vec::new(),
            lines: LineRanges::default(),
        });
        let path = normalize_rel(&l.path);
        let lines = clip(&path, l.start_line, l.end_line, file_lines);
        if let Some((s, e)) = lines {
            side.lines.add(&path, s, e);
        }
        side.blocks.push((path, lines));
    }
    let annotators = sides
        .iter()
        .map(|(name, s)| AnnotatorSummary {
            annotator: name.clone(),
            blocks: s.blocks.len(),
            lines: s.lines.len(),
        })
        .collect();
    let names: Vec<&String> = sides.keys().collect();
    let mut pairs = Vec::new();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            pairs.push(pair(a, &sides[*a], b, &sides[*b], file_lines));
        }
    }
    Agreement {
        incident: incident.to_string(),
        annotators,
        pairs,
    }
}

/// The share of `of`'s blocks that `by`'s lines reach (1 when `of` has none).
fn coverage(by: &LineRanges, of: &Side) -> f64 {
    if of.blocks.is_empty() {
        return 1.0;
    }
    let reached = of
        .blocks
        .iter()
        .filter(|(p, l)| l.is_some_and(|(s, e)| by.touches(p, s, e)))
        .count();
    reached as f64 / of.blocks.len() as f64
}

fn pair(
    a_name: &str,
    a: &Side,
    b_name: &str,
    b: &Side,
    file_lines: &dyn Fn(&str) -> Option<u32>,
) -> PairAgreement {
    let files: BTreeSet<&str> = a
        .blocks
        .iter()
        .chain(&b.blocks)
        .map(|(p, _)| p.as_str())
        .collect();
    let mut total: u64 = 0;
    let mut estimated = Vec::new();
    for f in &files {
        let n = match file_lines(f) {
            Some(n) => u64::from(n),
            None => {
                estimated.push(f.to_string());
                let last = |s: &Side| s.lines.ranges(f).last().map(|r| r.1).unwrap_or(0);
                u64::from(last(a).max(last(b)))
            }
        };
        total += n;
    }
    let both = a.lines.intersection(&b.lines);
    let (na, nb, n11) = (a.lines.len(), b.lines.len(), both.len());
    let n00 = total.saturating_sub(na + nb - n11);
    let ratio = |x: u64| {
        if total == 0 {
            0.0
        } else {
            x as f64 / total as f64
        }
    };
    let observed = ratio(n11 + n00);
    let (pa, pb) = (ratio(na), ratio(nb));
    let expected = pa * pb + (1.0 - pa) * (1.0 - pb);
    let kappa = (total > 0 && expected < 1.0).then(|| (observed - expected) / (1.0 - expected));
    let mut disagreements: Vec<Disagreement> = Vec::new();
    for (only, d) in [
        (a_name, a.lines.difference(&b.lines)),
        (b_name, b.lines.difference(&a.lines)),
    ] {
        for (path, s, e) in d.iter() {
            disagreements.push(Disagreement {
                path: path.to_string(),
                start_line: s,
                end_line: e,
                only: only.to_string(),
            });
        }
    }
    disagreements.sort_by(|x, y| (&x.path, x.start_line).cmp(&(&y.path, y.start_line)));
    PairAgreement {
        a: a_name.to_string(),
        b: b_name.to_string(),
        a_covers_b: coverage(&a.lines, b),
        b_covers_a: coverage(&b.lines, a),
        kappa,
        observed,
        expected,
        lines: total,
        a_lines: na,
        b_lines: nb,
        both_lines: n11,
        files: files.iter().map(|f| f.to_string()).collect(),
        files_without_length: estimated,
        disagreements,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(path: &str, s: u32, e: u32, who: Option<&str>) -> LabelBlock {
        LabelBlock {
            annotator: who.map(str::to_string),
            ..LabelBlock::new(path, s, e)
        }
    }

    /// The example of docs/annotating.md, by hand. x.py has 20 lines, y.py 10.
    /// A labels x 1-5 and x 11-12 (7 lines); B labels x 3-6, x 12 and y 2-3 (7 lines).
    /// Both: x 3-5 and x 12 (4 lines). Over the 30 lines of x and y:
    /// n11 = 4, n10 = 3, n01 = 3, n00 = 20; observed = 24/30 = 0.8;
    /// expected = (7/30)(7/30) + (23/30)(23/30) = 578/900;
    /// kappa = (720 - 578) / (900 - 578) = 142/322 = 0.44099...
    /// A reaches 2 of B's 3 blocks (not y 2-3); B reaches both of A's.
    #[test]
    fn a_hand_computed_pair() {
        let labels = vec![
            label("x.py", 1, 5, Some("A")),
            label("x.py", 11, 12, Some("A")),
            label("x.py", 3, 6, Some("B")),
            label("./x.py", 12, 12, Some("B")),
            label("y.py", 2, 3, Some("B")),
        ];
        let lengths = |p: &str| match p {
            "x.py" => Some(20),
            "y.py" => Some(10),
            _ => None,
        };
        let g = agreement("inc", &labels, &lengths);
        assert_eq!(g.annotators.len(), 2);
        assert_eq!(g.pairs.len(), 1);
        let p = &g.pairs[0];
        assert_eq!((p.a.as_str(), p.b.as_str()), ("A", "B"));
        assert_eq!((p.lines, p.a_lines, p.b_lines, p.both_lines), (30, 7, 7, 4));
        assert!((p.a_covers_b - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(p.b_covers_a, 1.0);
        assert!((p.observed - 0.8).abs() < 1e-12);
        assert!((p.expected - 578.0 / 900.0).abs() < 1e-12);
        assert!((p.kappa.unwrap() - 142.0 / 322.0).abs() < 1e-12);
        let d: Vec<(&str, u32, u32, &str)> = p
            .disagreements
            .iter()
            .map(|d| (d.path.as_str(), d.start_line, d.end_line, d.only.as_str()))
            .collect();
        assert_eq!(
            d,
            [
                ("x.py", 1, 2, "A"),
                ("x.py", 6, 6, "B"),
                ("x.py", 11, 11, "A"),
                ("y.py", 2, 3, "B")
            ]
        );
    }

    #[test]
    fn three_annotators_give_three_pairs_and_unknown_lengths_are_estimated() {
        let labels = vec![
            label("a.go", 10, 20, Some("x")),
            label("a.go", 10, 20, Some("y")),
            label("a.go", 30, 31, None),
        ];
        let g = agreement("inc", &labels, &|_| None);
        let names: Vec<(&str, &str)> = g
            .pairs
            .iter()
            .map(|p| (p.a.as_str(), p.b.as_str()))
            .collect();
        assert_eq!(names, [(UNNAMED, "x"), (UNNAMED, "y"), ("x", "y")]);
        let xy = &g.pairs[2];
        // Only a.go, length unknown: its last labeled line (20) stands in. x and y agree on
        // every line: 11 labeled by both, 9 by neither.
        assert_eq!(xy.lines, 20);
        assert_eq!(xy.files_without_length, ["a.go"]);
        assert_eq!(xy.kappa, Some(1.0));
        assert!(xy.disagreements.is_empty());
        // Labeling every line of the file: chance agreement is total and kappa undefined.
        let all = vec![
            label("b.go", 1, 5, Some("x")),
            label("b.go", 1, 5, Some("y")),
        ];
        let g = agreement("inc", &all, &|_| Some(5));
        assert_eq!(g.pairs[0].kappa, None);
        assert_eq!(g.pairs[0].observed, 1.0);
    }
}

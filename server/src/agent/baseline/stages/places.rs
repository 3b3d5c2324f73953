//! Stage 1b, candidate blocks as places: raw candidates that name mostly the same lines merge
//! into one place, evidence on neighbouring statements of one function joins, and each place
//! gets its feature vector: the strength of each kind of evidence, BM25 of its lines, whether
//! it lies in a definition the report names, in test code, how many kinds agree, its length,
//! whether it holds a branch.
//! The file and function stages add their features afterwards.

use super::super::context::{Candidate, Source};
use super::super::scorer::BlockScorer;
use super::super::{conditions, logmatch, related, smells};
use super::blocks::NamedRegion;
use crate::code::RepoIndex;
use serde::{Deserialize, Serialize};

/// The features of a place, by position.
pub const FEATURES: [&str; K] = [
    "log",
    "prose",
    "frame",
    "mention",
    "named",
    "related",
    "flow",
    "state",
    "together",
    "bm25_block",
    "bm25_range",
    "in_named",
    "test",
    "kinds",
    "lines",
    "file_bm25",
    "file_evidence",
    "function_evidence",
    "condition",
];
pub const K: usize = 19;
pub const F_BM25_RANGE: usize = 10;
pub const F_IN_NAMED: usize = 11;
pub const F_TEST: usize = 12;
pub const F_KINDS: usize = 13;
pub const F_LINES: usize = 14;
pub const F_FILE_BM25: usize = 15;
pub const F_FILE_EVIDENCE: usize = 16;
pub const F_FUNCTION_EVIDENCE: usize = 17;
pub const F_CONDITION: usize = 18;

/// A candidate block with everything the ranking and selection need, free of the index (so an
/// evaluation can rank and select it again with other weights).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Place {
    pub file: usize,
    pub path: String,
    pub start: u32,
    pub end: u32,
    /// The lines of the function (definition) that holds the place, if any.
    pub function: Option<(u32, u32)>,
    pub features: [f64; K],
    /// The strongest kind of evidence behind it.
    pub source: Source,
    pub reason: String,
    /// Set by the ranking.
    pub score: f64,
}

impl Place {
    /// How many lines the place names: what precision counts.
    pub fn lines(&self) -> f64 {
        f64::from(self.end - self.start + 1)
    }

    /// What "one block per function" compares: the file and the function (or the place
    /// itself outside any function).
    pub fn function_key(&self) -> (usize, u32, u32) {
        let (s, e) = self.function.unwrap_or((self.start, self.end));
        (self.file, s, e)
    }
}

/// Whether two candidates name mostly the same lines: they overlap by at least half of the
/// smaller one (a block that only touches another names different code).
fn same_place(a: &Place, b: &Candidate) -> bool {
    if a.file != b.file || a.start > b.end || b.start > a.end {
        return false;
    }
    let overlap = a.end.min(b.end) - a.start.max(b.start) + 1;
    let smaller = (a.end - a.start + 1).min(b.end - b.start + 1);
    2 * overlap >= smaller
}

fn append_reason(to: &mut String, more: &str) {
    if !to.contains(more) && to.len() < 600 {
        to.push_str("; also ");
        to.push_str(more);
    }
}

fn function_of(index: &RepoIndex, file: usize, start: u32, end: u32) -> Option<(u32, u32)> {
    let m = index.model(file);
    m.covering(start, end)
        .and_then(|i| m.function_of(i))
        .map(|i| (m.blocks[i].start_line, m.blocks[i].end_line))
}

/// Merges raw candidates into places with their evidence features.
pub fn merge(
    index: &RepoIndex,
    scorer: &BlockScorer,
    mut cands: Vec<Candidate>,
    named: &[NamedRegion],
    max_lines: u32,
) -> Vec<Place> {
    cands.retain(|c| {
        c.start >= 1 && c.end >= c.start && c.end <= index.files[c.file].line_count.max(c.start)
    });
    cands.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.file.cmp(&b.file))
            .then(a.start.cmp(&b.start))
    });
    let mut places: Vec<Place> = Vec::new();
    for c in cands {
        if let Some(p) = places.iter_mut().find(|p| same_place(p, &c)) {
            let f = &mut p.features[c.source.feature()];
            *f = f.max(c.score);
            append_reason(&mut p.reason, &c.reason);
            continue;
        }
        // Evidence on neighbouring statements of one function points at one piece of code
        // (a log and the removal right after it): join them while the whole stays small.
        let function = function_of(index, c.file, c.start, c.end);
        let near = places.iter_mut().find(|p| {
            p.file == c.file
                && p.source != Source::Bm25
                && c.source != Source::Bm25
                && (c.start == p.end + 1 || p.start == c.end + 1)
                && p.end.max(c.end) - p.start.min(c.start) < related::LOG_CONTEXT_LINES
                && p.function == function
        });
        if let Some(p) = near {
            p.start = p.start.min(c.start);
            p.end = p.end.max(c.end);
            let f = &mut p.features[c.source.feature()];
            *f = f.max(c.score);
            append_reason(&mut p.reason, &c.reason);
            continue;
        }
        let mut features = [0.0; K];
        features[c.source.feature()] = c.score;
        places.push(Place {
            file: c.file,
            path: index.files[c.file].path.clone(),
            start: c.start,
            end: c.end,
            function,
            features,
            source: c.source,
            reason: c.reason,
            score: 0.0,
        });
    }
    describe(index, scorer, &mut places, named, max_lines);
    places
}

/// The features of a place that are not the strength of one kind of evidence; and smells.
fn describe(
    index: &RepoIndex,
    scorer: &BlockScorer,
    places: &mut [Place],
    named: &[NamedRegion],
    max_lines: u32,
) {
    let bm: Vec<f64> = places
        .iter()
        .map(|p| scorer.range_score(p.file, p.start, p.end))
        .collect();
    let max_bm = bm.iter().cloned().fold(0.0, f64::max);
    for (p, b) in places.iter_mut().zip(bm) {
        if max_bm > 0.0 {
            p.features[F_BM25_RANGE] = b / max_bm;
        }
        if let Some((_, _, _, id, strength)) = named
            .iter()
            .find(|(f, s, e, _, _)| *f == p.file && *s <= p.start && p.end <= *e)
        {
            p.features[F_IN_NAMED] = *strength;
            p.reason = format!("{} (inside `{id}`, which the report names)", p.reason);
        }
        p.features[F_TEST] = if logmatch::is_test_path(&p.path) {
            1.0
        } else {
            0.0
        };
        let kinds = Source::ALL[..Source::ALL.len() - 1]
            .iter()
            .filter(|s| p.features[s.feature()] > 0.0)
            .count();
        p.features[F_KINDS] = (kinds as f64 / 3.0).min(1.0);
        let f = &index.files[p.file];
        if conditions::has_branch(&f.text, f.lang, p.start, p.end) {
            p.features[F_CONDITION] = 1.0;
        }
        let lines = p.lines();
        p.features[F_LINES] = (lines.ln() / f64::from(max_lines.max(2)).ln()).min(1.5);
        // The strongest kind of evidence names the place (BM25 only when nothing else does).
        p.source = Source::ALL
            .iter()
            .copied()
            .filter(|s| p.features[s.feature()] > 0.0)
            .max_by(|a, b| {
                let wa = if *a == Source::Bm25 { 0.0 } else { 1.0 };
                let wb = if *b == Source::Bm25 { 0.0 } else { 1.0 };
                (wa, p.features[a.feature()])
                    .partial_cmp(&(wb, p.features[b.feature()]))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .unwrap_or(p.source);
        // A block that drops an error on the floor is worth pointing out; on the corpus the
        // smell did not change which blocks rank first, so it annotates and does not score.
        if let Some(sm) = smells::find(&f.text, f.lang, p.start, p.end).first() {
            p.reason = format!("{}; note line {}: {}", p.reason, sm.line, sm.what);
        }
    }
}

//! BM25 of blocks of the repository against the report: the score of a range, the best
//! part of a definition, and the best small blocks of the best files.

use super::bm25::{self, Corpus, Query};
use super::logmatch;
use crate::code::{BlockKind, RepoIndex};
use std::cell::RefCell;
use std::collections::HashMap;

/// BM25 of blocks of the repository against the report.
pub struct BlockScorer<'a> {
    index: &'a RepoIndex,
    query: &'a Query,
    corpus: &'a Corpus,
    /// The best file's score, for normalising.
    top_file: f64,
    /// BM25 of blocks already scored, by (file, block index): a function is asked for by the
    /// BM25 blocks of its statements, by the function candidates and by `best_inside`.
    scores: RefCell<HashMap<(usize, usize), f64>>,
}

/// A candidate block of the BM25 kinds: (file, start, end, score 0..1, the report's words it
/// holds).
pub type ScoredBlock = (usize, u32, u32, f64, Vec<String>);

/// A block of `best_blocks_of` before its words are looked up.
struct Hit {
    file: usize,
    block: usize,
    start: u32,
    end: u32,
    score: f64,
}

/// Assumed average length of a block in terms, for BM25's length normalisation.
const AVG_BLOCK_TERMS: f64 = 40.0;

impl<'a> BlockScorer<'a> {
    pub fn new(index: &'a RepoIndex, query: &'a Query, corpus: &'a Corpus) -> BlockScorer<'a> {
        BlockScorer {
            index,
            query,
            corpus,
            top_file: corpus.files.first().map(|f| f.1).unwrap_or(0.0),
            scores: RefCell::new(HashMap::new()),
        }
    }

    fn text_score(&self, text: &str) -> f64 {
        if self.query.is_empty() {
            return 0.0;
        }
        let (tf, len) = bm25::count_terms(text, self.query, &mut String::new());
        bm25::bm25(&tf, len, AVG_BLOCK_TERMS, self.query, self.corpus)
    }

    /// The five report words of `text` that weigh most (rarest in the repository, most
    /// often in the report): what a BM25 candidate's rationale quotes.
    fn words(&self, text: &str) -> Vec<String> {
        let (tf, _) = bm25::count_terms(text, self.query, &mut String::new());
        let mut words: Vec<(String, f64)> = tf
            .into_keys()
            .map(|t| {
                let w = self.corpus.idf(&t) * self.query.terms[&t];
                (t, w)
            })
            .collect();
        words.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        words.into_iter().take(5).map(|w| w.0).collect()
    }

    fn block_text(&self, file: usize, block: usize) -> &str {
        let m = self.index.model(file);
        let b = &m.blocks[block];
        self.index.files[file]
            .text
            .get(b.start_byte..b.end_byte)
            .unwrap_or("")
    }

    /// BM25 of block `block` of `file`, scored once.
    fn block_score(&self, file: usize, block: usize) -> f64 {
        if let Some(s) = self.scores.borrow().get(&(file, block)) {
            return *s;
        }
        let s = self.text_score(self.block_text(file, block));
        self.scores.borrow_mut().insert((file, block), s);
        s
    }

    /// BM25 of lines `start..=end` of a file.
    pub fn range_score(&self, file: usize, start: u32, end: u32) -> f64 {
        let f = &self.index.files[file];
        self.text_score(lines_text(&f.text, start, end))
    }

    /// Inside definition `def` of `file`: the `k` blocks (at most `max` lines, not nested in
    /// one another) that best match the report, best first; the definition itself when it
    /// is short and nothing inside matches.
    pub fn best_inside(&self, file: usize, def: usize, max: u32, k: usize) -> Vec<(u32, u32)> {
        self.best_inside_scored(file, def, max, k)
            .into_iter()
            .map(|(_, s, e)| (s, e))
            .collect()
    }

    /// `best_inside` with each block's BM25 score (0 for the short definition itself).
    pub fn best_inside_scored(
        &self,
        file: usize,
        def: usize,
        max: u32,
        k: usize,
    ) -> Vec<(f64, u32, u32)> {
        let m = self.index.model(file);
        let d = &m.blocks[def];
        let mut scored: Vec<(f64, u32, u32)> = Vec::new();
        for (i, b) in m.blocks.iter().enumerate().skip(def + 1) {
            if b.start_byte >= d.end_byte {
                break;
            }
            if b.lines() > max {
                continue;
            }
            let s = self.block_score(file, i);
            if s > 0.0 {
                scored.push((s, b.start_line, b.end_line));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut out: Vec<(f64, u32, u32)> = Vec::new();
        for (score, s, e) in scored {
            if out.iter().any(|&(_, os, oe)| os <= e && s <= oe) {
                continue;
            }
            out.push((score, s, e));
            if out.len() >= k {
                break;
            }
        }
        if out.is_empty() && d.lines() <= 2 * max {
            out.push((0.0, d.start_line, d.end_line));
        }
        out
    }

    /// The best `files` files by BM25 that the code model can parse, with their scores.
    fn top_files(&self, files: usize) -> Vec<(usize, f64)> {
        self.corpus
            .files
            .iter()
            .filter(|(f, _)| self.index.files[*f].lang.grammar().is_some())
            .take(files)
            .cloned()
            .collect()
    }

    /// The best small blocks of the best `files` files: (file, start, end, score 0..1, words).
    pub fn best_blocks(&self, files: usize, keep: usize, max: u32) -> Vec<ScoredBlock> {
        self.best_blocks_of(self.top_files(files), keep, max)
    }

    /// The functions of the best `files` files whose whole body best matches the report,
    /// `keep` at most, each as its best small block inside: (file, start, end, score 0..1,
    /// words). A causal function often matches the report as a whole while none of its
    /// statements is among the best blocks of a large file.
    pub fn best_functions(&self, files: usize, keep: usize, max: u32) -> Vec<ScoredBlock> {
        if self.query.is_empty() || self.top_file <= 0.0 {
            return Vec::new();
        }
        let top = self.top_files(files);
        let ids: Vec<usize> = top.iter().map(|t| t.0).collect();
        self.index.parse_many(&ids);
        let mut scored: Vec<(f64, usize, usize)> = Vec::new();
        for (file, fscore) in top {
            let m = self.index.model(file);
            let test = test_weight(&self.index.files[file].path);
            for (i, b) in m.blocks.iter().enumerate() {
                if !super::related::is_function(b) {
                    continue;
                }
                let s = self.block_score(file, i);
                if s > 0.0 {
                    scored.push((s * (0.5 + 0.5 * fscore / self.top_file) * test, file, i));
                }
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let best = scored.first().map(|s| s.0).unwrap_or(1.0);
        scored.truncate(keep);
        self.as_best_blocks(scored, best, max)
    }

    /// Scored functions `(score, file, definition)`, each as its best small block inside,
    /// with its score relative to `best` and the report words of the whole function.
    fn as_best_blocks(
        &self,
        functions: Vec<(f64, usize, usize)>,
        best: f64,
        max: u32,
    ) -> Vec<ScoredBlock> {
        let mut out = Vec::new();
        for (score, file, def) in functions {
            if let Some(&(s, e)) = self.best_inside(file, def, max, 1).first() {
                let words = self.words(self.block_text(file, def));
                out.push((file, s, e, score / best, words));
            }
        }
        out
    }

    /// The `per_file` functions of each of `files` whose whole body best matches the report,
    /// leaving out those that `taken(file, start, end)` says already hold a candidate, each as
    /// its best small block inside; scores are relative to the best function of all.
    pub fn best_functions_in(
        &self,
        files: &[usize],
        per_file: usize,
        max: u32,
        taken: impl Fn(usize, u32, u32) -> bool,
    ) -> Vec<ScoredBlock> {
        if self.query.is_empty() || self.top_file <= 0.0 {
            return Vec::new();
        }
        self.index.parse_many(files);
        let mut found: Vec<(f64, usize, usize)> = Vec::new();
        for &file in files {
            let m = self.index.model(file);
            let test = test_weight(&self.index.files[file].path);
            let mut scored: Vec<(f64, usize, usize)> = m
                .blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| super::related::is_function(b))
                .filter(|(_, b)| !taken(file, b.start_line, b.end_line))
                .map(|(i, _)| (self.block_score(file, i) * test, file, i))
                .filter(|s| s.0 > 0.0)
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
            found.extend(scored.into_iter().take(per_file));
        }
        let best = found
            .iter()
            .map(|s| s.0)
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        self.as_best_blocks(found, best, max)
    }

    /// The best small blocks of the given files (with their BM25 scores), as `best_blocks`.
    pub fn best_blocks_of(
        &self,
        top: Vec<(usize, f64)>,
        keep: usize,
        max: u32,
    ) -> Vec<ScoredBlock> {
        if self.query.is_empty() || self.top_file <= 0.0 {
            return Vec::new();
        }
        let ids: Vec<usize> = top.iter().map(|t| t.0).collect();
        self.index.parse_many(&ids);
        let mut out: Vec<Hit> = Vec::new();
        for (file, fscore) in top {
            let m = self.index.model(file);
            let test = test_weight(&self.index.files[file].path);
            for (i, b) in m.blocks.iter().enumerate() {
                if b.lines() > max
                    || b.kind == BlockKind::Definition
                        && b.def_kind
                            .is_some_and(|k| !matches!(k, "function" | "method" | "constructor"))
                {
                    continue;
                }
                let s = self.block_score(file, i);
                if s <= 0.0 {
                    continue;
                }
                // The enclosing function's own score gives context to its statements.
                let fn_score = match m.function_of(i) {
                    Some(fi) => self.block_score(file, fi),
                    None => s,
                };
                let score = s
                    * (1.0 + fn_score / (fn_score + 10.0))
                    * (0.5 + 0.5 * fscore / self.top_file)
                    * test;
                out.push(Hit {
                    file,
                    block: i,
                    start: b.start_line,
                    end: b.end_line,
                    score,
                });
            }
        }
        out.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.file.cmp(&b.file))
                .then(a.start.cmp(&b.start))
        });
        // Nested blocks score alike; keep the best of each overlapping group.
        let mut kept: Vec<Hit> = Vec::new();
        for c in out {
            if kept
                .iter()
                .any(|k| k.file == c.file && k.start <= c.end && c.start <= k.end)
            {
                continue;
            }
            kept.push(c);
            if kept.len() >= keep {
                break;
            }
        }
        let top = kept.first().map(|k| k.score).unwrap_or(1.0);
        kept.into_iter()
            .map(|h| {
                let words = self.words(self.block_text(h.file, h.block));
                (h.file, h.start, h.end, h.score / top, words)
            })
            .collect()
    }
}

/// How much a block of test code counts against one of the code under test.
fn test_weight(path: &str) -> f64 {
    if logmatch::is_test_path(path) {
        0.3
    } else {
        1.0
    }
}

/// Lines `start..=end` (1-based) of `text`.
pub fn lines_text(text: &str, start: u32, end: u32) -> &str {
    let mut line = 1u32;
    let mut from = if start <= 1 { Some(0) } else { None };
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            line += 1;
            if line == start {
                from = Some(i + 1);
            }
            if line == end + 1 {
                return from.and_then(|f| text.get(f..i)).unwrap_or("");
            }
        }
    }
    from.and_then(|f| text.get(f..)).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_text_cuts_exact_lines() {
        let t = "a\nb\nc\nd";
        assert_eq!(lines_text(t, 2, 3), "b\nc");
        assert_eq!(lines_text(t, 1, 1), "a");
        assert_eq!(lines_text(t, 4, 9), "d");
        assert_eq!(lines_text(t, 7, 9), "");
    }
}

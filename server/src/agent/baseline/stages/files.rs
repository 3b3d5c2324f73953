//! Stage 2, candidate files: how much evidence each file holds and how well it matches the
//! report, as features of its places; after ranking, the files in order of their best place.

use super::super::bm25::Corpus;
use super::super::context::Source;
use super::places::{Place, F_FILE_BM25, F_FILE_EVIDENCE};
use std::collections::HashMap;

/// Sets each place's file features: the file's BM25 against the report (relative to the
/// best file) and how many places with evidence other than words it holds.
pub fn annotate(places: &mut [Place], corpus: &Corpus) {
    let top = corpus.files.first().map(|f| f.1).unwrap_or(0.0);
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for p in places.iter().filter(|p| p.source != Source::Bm25) {
        *counts.entry(p.file).or_default() += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    for p in places.iter_mut() {
        if top > 0.0 {
            p.features[F_FILE_BM25] = corpus.file_score(p.file) / top;
        }
        let c = counts.get(&p.file).copied().unwrap_or(0);
        if most > 0 {
            p.features[F_FILE_EVIDENCE] = (1.0 + c as f64).ln() / (1.0 + most as f64).ln();
        }
    }
}

/// The files of the ranked places, best first, with the score of their best place.
pub fn ranked(places: &[Place]) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for p in places {
        if !out.iter().any(|(f, _)| *f == p.path) {
            out.push((p.path.clone(), p.score));
        }
    }
    out
}

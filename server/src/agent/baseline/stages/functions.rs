//! Stage 3, candidate functions: how many places with evidence share a function, as a feature
//! of each place; after ranking, the functions in order of their best place.

use super::super::context::Source;
use super::super::trace::Span;
use super::places::{Place, F_FUNCTION_EVIDENCE};
use std::collections::HashMap;

/// Sets each place's function feature: how many places with evidence other than words its
/// function holds (relative to the busiest function).
pub fn annotate(places: &mut [Place]) {
    let mut counts: HashMap<(usize, u32, u32), usize> = HashMap::new();
    for p in places.iter().filter(|p| p.source != Source::Bm25) {
        *counts.entry(p.function_key()).or_default() += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    for p in places.iter_mut() {
        let c = counts.get(&p.function_key()).copied().unwrap_or(0);
        if most > 0 {
            p.features[F_FUNCTION_EVIDENCE] = (1.0 + c as f64).ln() / (1.0 + most as f64).ln();
        }
    }
}

/// The functions of the ranked places (a place outside any function stands for itself),
/// best first, with the score of their best place.
pub fn ranked(places: &[Place]) -> Vec<(Span, f64)> {
    let mut out: Vec<(Span, f64)> = Vec::new();
    for p in places {
        let (_, s, e) = p.function_key();
        let span = Span::new(p.path.clone(), s, e);
        if !out.iter().any(|(f, _)| *f == span) {
            out.push((span, p.score));
        }
    }
    out
}

//! Stage 5, selection: from the ranked places, the best one, then the next best of other
//! functions while their estimated chance stays within the margin of the best (one block per
//! function by default: three blocks around one symptom are one guess). How many blocks an incident
//! gets follows from its scores, not from a fixed count.

use super::places::Place;

/// The selection's knobs (fitted by the evaluation with the ranking).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    pub max_blocks: usize,
    /// A place is named only when its chance is at least this share of the best one's.
    pub min_relative: f64,
    /// At most this many blocks of one function.
    pub per_function: usize,
}

/// The indices of the places named, best first. `places` is ranked.
pub fn select(places: &[Place], sel: &Selection) -> Vec<usize> {
    let Some(top) = places.first().map(|p| p.score) else {
        return Vec::new();
    };
    let mut chosen: Vec<usize> = Vec::new();
    let mut functions = Vec::new();
    for (i, p) in places.iter().enumerate() {
        if chosen.len() >= sel.max_blocks || p.score < sel.min_relative * top {
            break;
        }
        let f = p.function_key();
        if functions.iter().filter(|g| **g == f).count() >= sel.per_function {
            continue;
        }
        functions.push(f);
        chosen.push(i);
    }
    chosen
}

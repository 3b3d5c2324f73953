//! Stage 5, selection: from the ranked places, the best ones of distinct functions (at most
//! two blocks of one function: three blocks around one symptom are one guess; and at most
//! three of one file, whose places hit or miss together), as many of them
//! as make the expected block coverage plus precision largest under the ranking's estimated
//! chances. How many blocks an incident gets follows from its own chances, not from a fixed
//! count or a margin fitted over the whole corpus. Then, when it pays, one more file: the
//! first line of the best place in a file no named block is in, a pointer that costs
//! precision one line and may find the file of a cause.

use super::places::Place;
use serde::{Deserialize, Serialize};

/// The selection's knobs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    pub max_blocks: usize,
    /// At most this many blocks of one function.
    pub per_function: usize,
    /// At most this many blocks of one file.
    pub per_file: usize,
    /// How many labeled blocks an incident has on average (fitted with the ranking), which
    /// turns expected hits into expected coverage. `None` names all `max_blocks`.
    pub expected_labels: Option<f64>,
    /// When to point at one more file; `None` never does.
    pub pointer: Option<FilePointer>,
}

/// The chance that a file holds a labeled block, from the chance of its best place (a
/// logistic in that chance's log-odds, fitted with the ranking), and how many files an
/// incident's labels lie in on average, which turns it into expected file coverage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FilePointer {
    pub bias: f64,
    pub slope: f64,
    pub expected_files: f64,
}

impl FilePointer {
    /// The chance that the file whose best place has chance `place` holds a cause.
    pub fn file_chance(&self, place: f64) -> f64 {
        let z = self.bias + self.slope * log_odds(place);
        1.0 / (1.0 + (-z).exp())
    }
}

/// The log-odds of a chance, kept finite at 0 and 1: the pointer's one variable.
pub fn log_odds(chance: f64) -> f64 {
    let p = chance.clamp(1e-9, 1.0 - 1e-9);
    (p / (1.0 - p)).ln()
}

/// The indices of the places named, best first. `places` is ranked.
pub fn select(places: &[Place], sel: &Selection) -> Vec<usize> {
    let mut chosen: Vec<usize> = Vec::new();
    let mut functions = Vec::new();
    for (i, p) in places.iter().enumerate() {
        if chosen.len() >= sel.max_blocks {
            break;
        }
        let f = p.function_key();
        if functions.iter().filter(|g| **g == f).count() >= sel.per_function {
            continue;
        }
        if chosen.iter().filter(|&&c| places[c].file == p.file).count() >= sel.per_file {
            continue;
        }
        functions.push(f);
        chosen.push(i);
    }
    if let Some(labels) = sel.expected_labels {
        chosen.truncate(best_count(places, &chosen, labels));
    }
    chosen
}

/// The place whose first line is worth naming as well, if any: the best place in a file that
/// no chosen place is in, when the file coverage it is expected to add is more than the
/// expected precision one more line costs. Confident selections keep their precision; unsure
/// ones, whose precision is low anyway, spread to one more file.
pub fn pointer(places: &[Place], chosen: &[usize], fp: &FilePointer) -> Option<usize> {
    let (i, p) = places
        .iter()
        .enumerate()
        .find(|(_, p)| chosen.iter().all(|&c| places[c].file != p.file))?;
    let lines: f64 = chosen.iter().map(|&c| places[c].lines()).sum();
    let hit_lines: f64 = chosen
        .iter()
        .map(|&c| places[c].score * places[c].lines())
        .sum();
    let precision = if lines > 0.0 { hit_lines / lines } else { 0.0 };
    let cost = precision - (hit_lines + p.score) / (lines + 1.0);
    let gain = fp.file_chance(p.score) / fp.expected_files.max(1.0);
    (gain > cost).then_some(i)
}

/// Narrows the place `pointer` chose to its first line and says why it is named.
pub fn narrow_to_pointer(place: &mut Place, fp: &FilePointer) {
    place.end = place.start;
    place.reason = format!(
        "one line pointing at another file that may hold the cause (chance {:.0}%): {}",
        100.0 * fp.file_chance(place.score),
        place.reason
    );
}

/// The number of the first `chosen` places whose expected coverage (their chances summed,
/// over the labels expected, at most 1) plus expected precision (their chances weighted by
/// their lines) is largest. A place adds to precision only while its chance is above the
/// share of hit lines so far; it adds to coverage in proportion to its chance.
fn best_count(places: &[Place], chosen: &[usize], labels: f64) -> usize {
    let (mut hits, mut lines, mut hit_lines) = (0.0, 0.0, 0.0);
    let mut best = (f64::MIN, 0);
    for (k, &i) in chosen.iter().enumerate() {
        let p = &places[i];
        let n = p.lines();
        hits += p.score;
        lines += n;
        hit_lines += p.score * n;
        let value = (hits / labels.max(1.0)).min(1.0) + hit_lines / lines;
        // Ties keep the fewer blocks.
        if value > best.0 + 1e-12 {
            best = (value, k + 1);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::baseline::context::Source;
    use crate::agent::baseline::stages::places::K;

    fn place(start: u32, score: f64) -> Place {
        Place {
            file: 0,
            path: "a.rs".into(),
            start,
            end: start + 3,
            function: Some((start, start + 3)),
            features: [0.0; K],
            source: Source::Log,
            reason: String::new(),
            score,
        }
    }

    fn sel(expected_labels: Option<f64>) -> Selection {
        Selection {
            max_blocks: 6,
            per_function: 2,
            per_file: 3,
            expected_labels,
            pointer: None,
        }
    }

    #[test]
    fn a_sure_first_place_is_named_alone_and_even_chances_are_named_together() {
        let sure = [place(1, 0.9), place(10, 0.05), place(20, 0.04)];
        assert_eq!(select(&sure, &sel(Some(1.5))), [0]);
        let even = [place(1, 0.3), place(10, 0.28), place(20, 0.27)];
        assert_eq!(select(&even, &sel(Some(1.5))), [0, 1, 2]);
        // Without expected labels: the best `max_blocks`.
        assert_eq!(select(&sure, &sel(None)), [0, 1, 2]);
        assert!(select(&[], &sel(Some(1.5))).is_empty());
    }

    #[test]
    fn at_most_the_allowed_blocks_of_one_function_are_named() {
        let mut p = vec![place(1, 0.5), place(1, 0.5), place(1, 0.5), place(30, 0.4)];
        p[1].start = 2;
        p[2].start = 3;
        let one = Selection {
            per_function: 1,
            ..sel(None)
        };
        assert_eq!(select(&p, &one), [0, 3]);
        assert_eq!(select(&p, &sel(None)), [0, 1, 3]);
    }

    #[test]
    fn at_most_the_allowed_blocks_of_one_file_are_named() {
        // Five places in five functions of one file, then one in another file.
        let mut p: Vec<Place> = (0..5).map(|k| place(1 + 10 * k, 0.5)).collect();
        let mut other = place(1, 0.4);
        other.file = 1;
        other.path = "b.rs".into();
        p.push(other);
        assert_eq!(select(&p, &sel(None)), [0, 1, 2, 5]);
        let two = Selection {
            per_file: 2,
            ..sel(None)
        };
        assert_eq!(select(&p, &two), [0, 1, 5]);
    }

    #[test]
    fn an_unsure_selection_points_at_one_more_file_and_a_sure_one_does_not() {
        let fp = FilePointer {
            bias: -1.0,
            slope: 1.0,
            expected_files: 1.2,
        };
        let mut other = place(40, 0.1);
        other.file = 1;
        other.path = "b.rs".into();
        // Unsure: the named block's precision is low, so one line costs little.
        let unsure = [place(1, 0.1), place(10, 0.09), other.clone()];
        assert_eq!(pointer(&unsure, &[0], &fp), Some(2));
        // Sure: one more line would cost more precision than the file is expected to add.
        let sure = [place(1, 0.95), place(10, 0.05), other];
        assert_eq!(pointer(&sure, &[0], &fp), None);
        // No other file: nothing to point at.
        assert_eq!(pointer(&unsure[..2], &[0], &fp), None);
        let mut p = unsure[2].clone();
        narrow_to_pointer(&mut p, &fp);
        assert_eq!((p.start, p.end), (40, 40));
        assert!(p.reason.starts_with("one line pointing at another file"));
    }
}

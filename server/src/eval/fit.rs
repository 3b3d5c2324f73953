//! Fitting the ranking and the selection: L2-regularised logistic regression (Newton's
//! method) on whether a place touches a labeled block, each incident weighing the same; the
//! selection's expected number of labeled blocks, their mean over the training incidents;
//! and the pointer's chance that a file holds a cause, from its best place's chance.

use crate::agent::baseline::stages::places::{Place, K};
use crate::agent::baseline::stages::rank::{
    self, Model, FITTED_MAX_BLOCKS, FITTED_PER_FILE, FITTED_PER_FUNCTION,
};
use crate::agent::baseline::stages::select::{log_odds, FilePointer, Selection};
use crate::incident::LabelBlock;
use std::collections::BTreeSet;

/// One incident's places and labels, as the fit sees them.
pub struct Sample<'a> {
    pub places: &'a [Place],
    pub labels: &'a [LabelBlock],
}

/// Strength of the L2 penalty (per unit of incident weight).
const L2: f64 = 0.05;
const NEWTON_STEPS: usize = 60;

fn touches(p: &Place, labels: &[LabelBlock]) -> bool {
    labels.iter().any(|l| {
        crate::util::paths::normalize_rel(&l.path) == p.path
            && p.start <= l.end_line
            && l.start_line <= p.end
    })
}

/// Solves `a x = b` (n x n) by Gaussian elimination with partial pivoting; `None` when
/// singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        let (upper, lower) = a.split_at_mut(c + 1);
        let pivot = &upper[c];
        for (row, r) in lower.iter_mut().zip(c + 1..n) {
            let f = row[c] / pivot[c];
            for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                *x -= f * p;
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[r][k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    Some(x)
}

/// L2-regularised logistic regression by Newton's method over weighted rows whose first
/// column is the intercept (not penalised): the coefficients, intercept first.
fn logistic(rows: &[(Vec<f64>, f64, f64)], n: usize, l2: f64) -> Vec<f64> {
    let mut beta = vec![0.0; n];
    for _ in 0..NEWTON_STEPS {
        let mut grad = vec![0.0; n];
        let mut hess = vec![vec![0.0; n]; n];
        for (x, y, w) in rows {
            let z: f64 = x.iter().zip(&beta).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-z).exp());
            for i in 0..n {
                grad[i] += w * (p - y) * x[i];
                for j in 0..n {
                    hess[i][j] += w * p * (1.0 - p) * x[i] * x[j];
                }
            }
        }
        for i in 1..n {
            grad[i] += l2 * beta[i];
            hess[i][i] += l2;
        }
        hess[0][0] += 1e-9;
        let Some(step) = solve(hess, grad) else { break };
        let mut moved = 0.0f64;
        for i in 0..n {
            beta[i] -= step[i];
            moved = moved.max(step[i].abs());
        }
        if moved < 1e-7 {
            break;
        }
    }
    beta
}

/// The ranking model: pooled logistic regression of "this place touches a label", every
/// incident weighing one in total. Each feature has a second column that is the feature in
/// incidents without a trace and 0 elsewhere: its weight is the correction `untraced`.
/// (A listwise fit, conditional logit within each incident, was tried and did no better on
/// held-out systems; see docs/baseline.md.)
pub fn fit_model(samples: &[Sample]) -> Model {
    let mut rows: Vec<(Vec<f64>, f64, f64)> = Vec::new();
    for s in samples.iter().filter(|s| !s.places.is_empty()) {
        let w = 1.0 / s.places.len() as f64;
        let untraced = if rank::traced(s.places) { 0.0 } else { 1.0 };
        for p in s.places {
            let mut x = Vec::with_capacity(2 * K + 1);
            x.push(1.0);
            x.extend_from_slice(&p.features);
            x.extend(p.features.iter().map(|v| v * untraced));
            rows.push((x, if touches(p, s.labels) { 1.0 } else { 0.0 }, w));
        }
    }
    let beta = logistic(&rows, 2 * K + 1, L2);
    Model {
        bias: beta[0],
        weights: std::array::from_fn(|k| beta[k + 1]),
        untraced: std::array::from_fn(|k| beta[K + 1 + k]),
    }
}

/// The pointer: with `model`'s chances, a logistic of "this file holds a labeled block" in
/// the log-odds of the file's best place, over every candidate file of the training
/// incidents; and the mean number of files their labels lie in.
pub fn fit_pointer(samples: &[Sample], model: &Model) -> FilePointer {
    let mut rows: Vec<(Vec<f64>, f64, f64)> = Vec::new();
    let (mut incidents, mut files) = (0usize, 0usize);
    for s in samples.iter().filter(|s| !s.places.is_empty()) {
        let labeled: BTreeSet<String> = s
            .labels
            .iter()
            .map(|l| crate::util::paths::normalize_rel(&l.path))
            .collect();
        incidents += 1;
        files += labeled.len();
        let mut ranked = s.places.to_vec();
        rank::rank(&mut ranked, model);
        let mut seen = BTreeSet::new();
        // Ranked best first, so a file's first place is its best.
        for p in ranked.iter().filter(|p| seen.insert(p.file)) {
            let y = if labeled.contains(&p.path) { 1.0 } else { 0.0 };
            rows.push((vec![1.0, log_odds(p.score)], y, 1.0));
        }
    }
    let beta = logistic(&rows, 2, 1e-6);
    FilePointer {
        bias: beta[0],
        slope: beta[1],
        expected_files: if incidents == 0 {
            1.0
        } else {
            (files as f64 / incidents as f64).max(1.0)
        },
    }
}

/// The model, then the selection that goes with it: how many labeled blocks the training
/// incidents have on average, which turns the model's chances into expected coverage.
pub fn fit(samples: &[Sample]) -> (Model, Selection) {
    let model = fit_model(samples);
    let labels: usize = samples.iter().map(|s| s.labels.len()).sum();
    let expected_labels = if samples.is_empty() {
        1.0
    } else {
        (labels as f64 / samples.len() as f64).max(1.0)
    };
    let sel = Selection {
        max_blocks: FITTED_MAX_BLOCKS,
        per_function: FITTED_PER_FUNCTION,
        per_file: FITTED_PER_FILE,
        expected_labels: Some(expected_labels),
        pointer: Some(fit_pointer(samples, &model)),
    };
    (model, sel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::baseline::context::Source;
    use crate::agent::baseline::stages::rank::rank;
    use crate::agent::baseline::stages::select::select;

    fn place(start: u32, log: f64, bm25: f64) -> Place {
        let mut features = [0.0; K];
        features[Source::Log.feature()] = log;
        features[Source::Bm25.feature()] = bm25;
        Place {
            file: 0,
            path: "a.rs".into(),
            start,
            end: start,
            function: Some((start, start)),
            features,
            source: Source::Log,
            reason: String::new(),
            score: 0.0,
        }
    }

    /// Every incident's places with the same labels.
    fn samples_of<'a>(places: &'a [Vec<Place>], labels: &'a [LabelBlock]) -> Vec<Sample<'a>> {
        places
            .iter()
            .map(|p| Sample { places: p, labels })
            .collect()
    }

    #[test]
    fn the_fit_learns_which_evidence_marks_the_labeled_places() {
        // Log evidence marks the labeled place; BM25 is noise.
        let places: Vec<Vec<Place>> = (0..6)
            .map(|k| {
                vec![
                    place(1, 0.9, 0.2 + 0.1 * k as f64),
                    place(5, 0.1, 0.9),
                    place(9, 0.2, 0.5),
                ]
            })
            .collect();
        let labels = vec![LabelBlock::new("a.rs", 1, 1)];
        let samples = samples_of(&places, &labels);
        let (model, sel) = fit(&samples);
        assert!(model.weights[Source::Log.feature()] > 1.0, "{model:?}");
        assert!(
            model.weights[Source::Log.feature()] > model.weights[Source::Bm25.feature()],
            "{model:?}"
        );
        // One block is enough when the first is always right.
        assert_eq!(sel.expected_labels, Some(1.0));
        let mut ranked = places[0].clone();
        rank(&mut ranked, &model);
        assert_eq!(select(&ranked, &sel).len(), 1);
    }

    #[test]
    fn without_a_trace_the_fit_learns_its_own_correction_and_the_pointer_its_file_chance() {
        // With a frame, the frame marks the labeled place and BM25 is noise; without one,
        // BM25 marks it.
        let traced_place = |start: u32, frame: f64, bm25: f64| {
            let mut p = place(start, 0.0, bm25);
            p.features[Source::Frame.feature()] = frame;
            p
        };
        let mut places: Vec<Vec<Place>> = Vec::new();
        for k in 0..8 {
            let noise = 0.1 * k as f64;
            places.push(vec![
                traced_place(1, 0.9, 0.2 + noise / 2.0),
                traced_place(5, 0.1, 0.9),
                traced_place(9, 0.0, 0.6),
            ]);
            let mut other = place(9, 0.0, 0.1 + noise / 4.0);
            other.file = 1;
            other.path = "b.rs".into();
            places.push(vec![
                place(1, 0.0, 0.9),
                place(5, 0.0, 0.3 + noise / 2.0),
                other,
            ]);
        }
        let labels = vec![LabelBlock::new("a.rs", 1, 1)];
        let samples = samples_of(&places, &labels);
        let (model, sel) = fit(&samples);
        let bm25 = Source::Bm25.feature();
        assert!(model.untraced[bm25] > 0.5, "{model:?}");
        // The file of a likely place holds the label more often than that of an unlikely one.
        let fp = sel.pointer.expect("a fitted pointer");
        assert!(fp.slope > 0.0, "{fp:?}");
        assert!(fp.file_chance(0.9) > fp.file_chance(0.01), "{fp:?}");
        assert_eq!(fp.expected_files, 1.0);
    }

    #[test]
    fn solve_solves_a_small_system() {
        let x = solve(vec![vec![2.0, 1.0], vec![1.0, 3.0]], vec![3.0, 5.0]).unwrap();
        assert!((x[0] - 0.8).abs() < 1e-9 && (x[1] - 1.4).abs() < 1e-9);
    }
}

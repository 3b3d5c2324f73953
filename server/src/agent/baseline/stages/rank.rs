//! Stage 4, ranking: a logistic model over the places' features. The weights are fitted by
//! `distdebug eval --fit` (logistic regression on whether a place touches a labeled block),
//! never set by hand; the evaluation reports them on systems held out of the fit.

use super::places::{Place, FEATURES, K};
use serde::{Deserialize, Serialize};

/// The evidence strengths (the first features, one per kind of evidence, and BM25 of the
/// block) whose square roots are inputs too.
const ROOTED: usize = 10;
/// How many inputs the model weighs: the features, then the square roots of the strengths.
pub const INPUTS: usize = K + ROOTED;

/// The model's inputs for a place's features. A strength enters both as itself and as its
/// square root, so the fit can tell a weak piece of evidence from none at all without
/// letting a strong one count in proportion (held out, the roots raised coverage and file
/// coverage; docs/baseline.md, twelfth measurement).
pub fn inputs(features: &[f64; K]) -> [f64; INPUTS] {
    std::array::from_fn(|i| {
        if i < K {
            features[i]
        } else {
            features[i - K].max(0.0).sqrt()
        }
    })
}

/// The name of each input, in order (`sqrt_` before a rooted strength's feature name).
pub fn input_names() -> Vec<String> {
    FEATURES
        .iter()
        .map(|n| n.to_string())
        .chain(FEATURES[..ROOTED].iter().map(|n| format!("sqrt_{n}")))
        .collect()
}

/// A linear score over the inputs; its logistic is the estimated chance that a place
/// touches a cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub bias: f64,
    pub weights: [f64; INPUTS],
}

/// The shipped weights: `distdebug eval --set all --folds system` fitted on all 273
/// incidents (261 upstream, 12 self-contained), in the order of `input_names`. The held-out
/// figures in docs/baseline.md come from the folds, never from these.
// A fitted weight may happen to lie near a mathematical constant, which clippy takes for a typo.
#[allow(clippy::approx_constant)]
pub const FITTED: Model = Model {
    bias: -6.771,
    weights: [
        0.154, -0.128, 1.605, 0.647, -0.064, -0.230, 0.738, 0.388, 0.189, 0.606, 0.039, 1.310,
        -1.428, 0.308, 0.197, 1.542, 0.156, 1.004, 0.567, 0.106, -0.426, 1.320, 1.102, 0.375,
        -0.443, 0.561, 0.621, -0.096, 0.353,
    ],
};

impl Model {
    pub fn linear(&self, features: &[f64; K]) -> f64 {
        let x = inputs(features);
        self.bias + self.weights.iter().zip(&x).map(|(w, v)| w * v).sum::<f64>()
    }

    pub fn probability(&self, x: &[f64; K]) -> f64 {
        1.0 / (1.0 + (-self.linear(x)).exp())
    }

    /// The weights as `name=value` pairs, for steps and reports.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("bias={:.2}", self.bias)];
        for (n, w) in input_names().iter().zip(self.weights) {
            parts.push(format!("{n}={w:.2}"));
        }
        parts.join(" ")
    }
}

/// Scores every place and sorts them best first (ties: file, then line, so attempts are
/// deterministic).
pub fn rank(places: &mut [Place], model: &Model) {
    for p in places.iter_mut() {
        p.score = model.probability(&p.features);
    }
    places.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.file.cmp(&b.file))
            .then(a.start.cmp(&b.start))
    });
}

/// The shipped selection: at most 6 blocks (the old grid's largest count) and two of one
/// function (one did worse held out, docs/baseline.md), both fixed; as many as make the
/// expected coverage plus precision largest with 1.51 labeled blocks expected per incident
/// (fitted with the weights: the mean of the 273 incidents).
pub const FITTED_MAX_BLOCKS: usize = 6;
pub const FITTED_EXPECTED_LABELS: f64 = 1.51;
pub const FITTED_PER_FUNCTION: usize = 2;

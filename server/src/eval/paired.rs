//! Two evaluations of the same incidents side by side: the mean change of each metric with a
//! paired bootstrap interval (incidents resampled, each keeping both of its scores), and the
//! incidents whose coverage moved. Over some fifty incidents the intervals of two separate
//! runs overlap for almost any change; the paired interval says whether a change is real.

use super::{EvalReport, IncidentResult};
use crate::score::bootstrap::percentile_ci;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// Bootstrap resamples of the paired intervals.
const RESAMPLES: usize = 10_000;
/// The metrics compared, in the order of `Metrics::as_array`.
const METRICS: [&str; 4] = [
    "block coverage",
    "block precision",
    "hit rate",
    "file coverage",
];

/// One metric's mean change (this run minus the other), 0..1 fractions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub metric: String,
    pub before: f64,
    pub after: f64,
    pub change: f64,
    pub ci95: (f64, f64),
}

/// An incident whose block coverage differs between the two.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    pub id: String,
    pub before: f64,
    pub after: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Paired {
    /// Incidents in both evaluations.
    pub incidents: usize,
    /// Incidents in only one of them (left out of the comparison).
    pub unmatched: Vec<String>,
    pub changes: Vec<Change>,
    pub better: Vec<Moved>,
    pub worse: Vec<Moved>,
}

/// One incident's metrics before and after, and its id.
type Pair<'a> = ([f64; 4], [f64; 4], &'a str);

/// `after` against `before`, incident by incident (matched by id).
pub fn compare(after: &EvalReport, before: &EvalReport, seed: u64) -> Paired {
    let old: HashMap<&str, &IncidentResult> =
        before.results.iter().map(|r| (r.id.as_str(), r)).collect();
    let new_ids: HashSet<&str> = after.results.iter().map(|r| r.id.as_str()).collect();
    let mut unmatched: Vec<String> = before
        .results
        .iter()
        .filter(|r| !new_ids.contains(&r.id.as_str()))
        .map(|r| r.id.clone())
        .collect();
    let mut pairs: Vec<Pair> = Vec::new();
    for r in &after.results {
        match old.get(r.id.as_str()) {
            Some(o) => pairs.push((o.metrics.as_array(), r.metrics.as_array(), r.id.as_str())),
            None => unmatched.push(r.id.clone()),
        }
    }
    unmatched.sort();
    let diffs: Vec<[f64; 4]> = pairs
        .iter()
        .map(|(b, a, _)| std::array::from_fn(|k| a[k] - b[k]))
        .collect();
    let ci = percentile_ci(&diffs, RESAMPLES, seed);
    let n = pairs.len().max(1) as f64;
    let mean = |pick: &dyn Fn(&Pair) -> f64| pairs.iter().map(pick).sum::<f64>() / n;
    let changes = (0..4)
        .map(|k| Change {
            metric: METRICS[k].to_string(),
            before: mean(&|p| p.0[k]),
            after: mean(&|p| p.1[k]),
            change: mean(&|p| p.1[k] - p.0[k]),
            ci95: ci[k],
        })
        .collect();
    let moved = |want_better: bool| {
        let mut v: Vec<Moved> = pairs
            .iter()
            .filter(|(b, a, _)| {
                if want_better {
                    a[0] > b[0] + 1e-9
                } else {
                    a[0] + 1e-9 < b[0]
                }
            })
            .map(|(b, a, id)| Moved {
                id: id.to_string(),
                before: b[0],
                after: a[0],
            })
            .collect();
        v.sort_by(|x, y| x.id.cmp(&y.id));
        v
    };
    Paired {
        incidents: pairs.len(),
        unmatched,
        changes,
        better: moved(true),
        worse: moved(false),
    }
}

/// The comparison as text: one line per metric, then the incidents that moved.
pub fn render(p: &Paired) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "paired over {} incidents (this run minus the other; 95% paired bootstrap interval)",
        p.incidents
    );
    let _ = writeln!(
        s,
        "{:<16} {:>8} {:>8} {:>8}   {:<16}",
        "metric", "before", "after", "change", "interval"
    );
    for c in &p.changes {
        // A change that prints as 0.0 is float noise, not a finding, whatever its interval.
        const SHOWN: f64 = 0.0005;
        let sure = if c.ci95.0 > SHOWN || c.ci95.1 < -SHOWN {
            "  (beyond its interval)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "{:<16} {:>8.1} {:>8.1} {:>+8.1}   [{:+.1}, {:+.1}]{}",
            c.metric,
            c.before * 100.0,
            c.after * 100.0,
            c.change * 100.0,
            c.ci95.0 * 100.0,
            c.ci95.1 * 100.0,
            sure
        );
    }
    for (what, list) in [("coverage rose", &p.better), ("coverage fell", &p.worse)] {
        let _ = writeln!(s, "{what} on {} incident(s):", list.len());
        for m in list {
            let _ = writeln!(
                s,
                "  {:<60} {:>5.1} -> {:>5.1}",
                m.id,
                m.before * 100.0,
                m.after * 100.0
            );
        }
    }
    if !p.unmatched.is_empty() {
        let _ = writeln!(
            s,
            "in one evaluation only (not compared): {}",
            p.unmatched.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::Metrics;

    fn result(id: &str, coverage: f64, precision: f64) -> IncidentResult {
        IncidentResult {
            id: id.into(),
            system: "S".into(),
            language: "go".into(),
            tags: vec![],
            metrics: Metrics {
                block_coverage: coverage,
                block_precision: precision,
                block_hit_rate: precision,
                file_coverage: 1.0,
            },
            blocks: 1,
            lines: 5,
            seconds: 0.1,
            labels: vec![],
        }
    }

    fn report(rows: &[(&str, f64, f64)]) -> EvalReport {
        EvalReport {
            results: rows.iter().map(|(i, c, p)| result(i, *c, *p)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_consistent_gain_is_beyond_its_interval_and_a_single_one_is_not() {
        let ids: Vec<String> = (0..30).map(|i| format!("inc-{i}")).collect();
        let before: Vec<(&str, f64, f64)> = ids.iter().map(|i| (i.as_str(), 0.2, 0.5)).collect();
        // Every incident gains 0.1 coverage; precision moves on one incident only.
        let mut after: Vec<(&str, f64, f64)> = ids.iter().map(|i| (i.as_str(), 0.3, 0.5)).collect();
        after[0].2 = 1.0;
        let p = compare(&report(&after), &report(&before), 0);
        assert_eq!(p.incidents, 30);
        let cov = &p.changes[0];
        assert!((cov.change - 0.1).abs() < 1e-9);
        assert!(cov.ci95.0 > 0.0, "{cov:?}");
        let prec = &p.changes[1];
        assert!(prec.ci95.0 <= 0.0 + 1e-12, "{prec:?}");
        assert_eq!(p.better.len(), 30);
        assert!(p.worse.is_empty());
        let text = render(&p);
        assert!(text.contains("block coverage"), "{text}");
        assert!(text.contains("(beyond its interval)"), "{text}");
    }

    #[test]
    fn float_noise_is_not_called_a_change() {
        let ids: Vec<String> = (0..30).map(|i| format!("inc-{i}")).collect();
        let before: Vec<(&str, f64, f64)> = ids.iter().map(|i| (i.as_str(), 0.2, 0.5)).collect();
        let after: Vec<(&str, f64, f64)> =
            ids.iter().map(|i| (i.as_str(), 0.2, 0.5 - 1e-15)).collect();
        let text = render(&compare(&report(&after), &report(&before), 0));
        assert!(!text.contains("(beyond its interval)"), "{text}");
    }

    #[test]
    fn incidents_in_one_run_only_are_named_and_left_out() {
        let p = compare(
            &report(&[("a", 1.0, 1.0), ("new", 0.0, 0.0)]),
            &report(&[("a", 0.0, 0.0), ("gone", 1.0, 1.0)]),
            0,
        );
        assert_eq!(p.incidents, 1);
        assert_eq!(p.unmatched, vec!["gone".to_string(), "new".to_string()]);
        assert_eq!(p.worse.len(), 0);
        assert_eq!(p.better[0].id, "a");
    }
}

//! The rankings seen without the selection's fit: every reported incident named with its
//! best k places (at most two of one function), for a few k. This view compares two
//! rankings, or two sets of candidates, on the order they give alone, whatever the selection
//! makes of their chances.

// Places of one function named at most at a fixed count: as many as the shipped selection allows.
use crate::agent::baseline::stages::rank::FITTED_PER_FUNCTION as PER_FUNCTION;
use crate::agent::baseline::BaselineConfig;
use crate::score::Metrics;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The block counts shown.
pub const COUNTS: [usize; 4] = [1, 2, 3, 5];

/// The means over the reported incidents at one block count, in [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixedCount {
    pub k: usize,
    pub incidents: usize,
    pub block_coverage: f64,
    pub block_precision: f64,
    pub file_coverage: f64,
}

/// `cfg` with the selection replaced by "the best `k` places".
pub fn config(cfg: &BaselineConfig, k: usize) -> BaselineConfig {
    BaselineConfig {
        max_blocks: k,
        expected_labels: None,
        per_function: PER_FUNCTION,
        per_file: usize::MAX,
        pointer: None,
        ..cfg.clone()
    }
}

/// Sums the metrics of each count over incidents.
#[derive(Debug, Default)]
pub struct Sums {
    per_count: [(f64, f64, f64); COUNTS.len()],
    incidents: usize,
}

impl Sums {
    /// Adds one incident: its metrics at each of `COUNTS`, in order.
    pub fn add(&mut self, at: &[Metrics; COUNTS.len()]) {
        for (s, m) in self.per_count.iter_mut().zip(at) {
            s.0 += m.block_coverage;
            s.1 += m.block_precision;
            s.2 += m.file_coverage;
        }
        self.incidents += 1;
    }

    pub fn means(&self) -> Vec<FixedCount> {
        if self.incidents == 0 {
            return Vec::new();
        }
        let n = self.incidents as f64;
        COUNTS
            .iter()
            .zip(&self.per_count)
            .map(|(&k, s)| FixedCount {
                k,
                incidents: self.incidents,
                block_coverage: s.0 / n,
                block_precision: s.1 / n,
                file_coverage: s.2 / n,
            })
            .collect()
    }
}

/// The counts as a table, in %.
pub fn table(rows: &[FixedCount]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "the same rankings with the best k places named (at most {PER_FUNCTION} per function), over {} incidents",
        rows[0].incidents
    );
    let _ = writeln!(
        s,
        "{:<4} {:>15} {:>15} {:>15}",
        "k", "block coverage", "block precision", "file coverage"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<4} {:>15.1} {:>15.1} {:>15.1}",
            r.k,
            100.0 * r.block_coverage,
            100.0 * r.block_precision,
            100.0 * r.file_coverage
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(c: f64, p: f64, f: f64) -> Metrics {
        Metrics {
            block_coverage: c,
            block_precision: p,
            block_hit_rate: 0.0,
            file_coverage: f,
        }
    }

    #[test]
    fn means_per_count_and_the_table() {
        let mut s = Sums::default();
        assert!(s.means().is_empty());
        s.add(&[
            m(1.0, 0.5, 1.0),
            m(1.0, 0.25, 1.0),
            m(1.0, 0.2, 1.0),
            m(1.0, 0.1, 1.0),
        ]);
        s.add(&[
            m(0.0, 0.0, 0.0),
            m(0.0, 0.0, 1.0),
            m(1.0, 0.2, 1.0),
            m(1.0, 0.1, 1.0),
        ]);
        let rows = s.means();
        assert_eq!(rows.len(), 4);
        assert_eq!((rows[0].k, rows[0].incidents), (1, 2));
        assert!((rows[0].block_coverage - 0.5).abs() < 1e-12);
        assert!((rows[1].block_precision - 0.125).abs() < 1e-12);
        assert!((rows[1].file_coverage - 1.0).abs() < 1e-12);
        assert!((rows[3].block_coverage - 1.0).abs() < 1e-12);
        let t = table(&rows);
        assert!(t.contains("over 2 incidents"), "{t}");
        assert!(
            t.lines()
                .any(|l| l.starts_with("2 ") && l.contains("50.0") && l.contains("12.5")),
            "{t}"
        );
    }

    #[test]
    fn the_config_names_the_best_k() {
        let c = config(&BaselineConfig::default(), 3);
        assert_eq!((c.max_blocks, c.per_function), (3, PER_FUNCTION));
        assert_eq!(c.expected_labels, None);
    }
}

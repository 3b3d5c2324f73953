//! The evaluation as text: the metrics with 95% bootstrap intervals per group, the recall of
//! each stage per group, and one line per incident saying where its labels were lost.

use super::stages::{self, COLUMNS};
use super::{EvalReport, IncidentResult};
use crate::score::bootstrap::{means, percentile_ci};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Bootstrap resamples of the intervals.
const RESAMPLES: usize = 10_000;

fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// The groups a table shows: every incident, then by tag, then by system.
pub fn groups(results: &[IncidentResult]) -> Vec<(String, Vec<&IncidentResult>)> {
    let mut out = vec![("all".to_string(), results.iter().collect::<Vec<_>>())];
    let mut tags: BTreeMap<&str, Vec<&IncidentResult>> = BTreeMap::new();
    let mut systems: BTreeMap<&str, Vec<&IncidentResult>> = BTreeMap::new();
    for r in results {
        for t in &r.tags {
            tags.entry(t.as_str()).or_default().push(r);
        }
        systems.entry(r.system.as_str()).or_default().push(r);
    }
    for (t, v) in tags {
        out.push((format!("tag {t}"), v));
    }
    for (s, v) in systems {
        out.push((format!("system {s}"), v));
    }
    out
}

/// The metrics table: mean [95% CI] of block coverage, then precision, hit rate and file
/// coverage (with their intervals), blocks and lines per attempt.
pub fn metrics_table(results: &[IncidentResult], seed: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<34} {:>3}  {:>20} {:>20} {:>20} {:>20} {:>6} {:>6}",
        "group",
        "n",
        "block coverage",
        "block precision",
        "hit rate",
        "file coverage",
        "blocks",
        "lines"
    );
    for (name, rs) in groups(results) {
        let rows: Vec<[f64; 4]> = rs.iter().map(|r| r.metrics.as_array()).collect();
        let m = means(&rows);
        let ci = percentile_ci(&rows, RESAMPLES, seed);
        let cell = |k: usize| format!("{} [{}, {}]", pct(m[k]), pct(ci[k].0), pct(ci[k].1));
        let n = rs.len().max(1) as f64;
        let _ = writeln!(
            s,
            "{:<34} {:>3}  {:>20} {:>20} {:>20} {:>20} {:>6.1} {:>6.1}",
            name,
            rs.len(),
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            rs.iter().map(|r| r.blocks as f64).sum::<f64>() / n,
            rs.iter().map(|r| r.lines as f64).sum::<f64>() / n,
        );
    }
    s
}

/// The stage recall table: per group, the mean share of labels that pass each column.
pub fn stage_table(results: &[IncidentResult]) -> String {
    let mut s = String::new();
    let _ = write!(s, "{:<34} {:>3}", "group", "n");
    for (title, _, _) in COLUMNS {
        let _ = write!(s, " {title:>9}");
    }
    s.push('\n');
    for (name, rs) in groups(results) {
        let rows: Vec<[f64; 8]> = rs.iter().map(|r| stages::recall_row(&r.labels)).collect();
        let m = means(&rows);
        let _ = write!(s, "{:<34} {:>3}", name, rs.len());
        for v in m {
            let _ = write!(s, " {:>9}", pct(v));
        }
        s.push('\n');
    }
    s
}

fn rank(r: Option<usize>) -> String {
    r.map(|r| r.to_string()).unwrap_or_else(|| "-".into())
}

/// One line per incident: its metrics, each label's ranks (file/function/block, `-` when not
/// a candidate, `*` when named) and the stage where it was lost.
pub fn incident_table(results: &[IncidentResult]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<52} {:<10} {:>5} {:>5} {:>5}  {:<10} label ranks file/fn/block",
        "incident", "system", "cov", "prec", "files", "lost at"
    );
    for r in results {
        let ranks: Vec<String> = r
            .labels
            .iter()
            .map(|l| {
                format!(
                    "{}/{}/{}{}",
                    rank(l.file_rank),
                    rank(l.function_rank),
                    rank(l.block_rank),
                    if l.reached { "*" } else { "" }
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "{:<52} {:<10} {:>5} {:>5} {:>5}  {:<10} {}",
            r.id,
            r.system,
            pct(r.metrics.block_coverage),
            pct(r.metrics.block_precision),
            pct(r.metrics.file_coverage),
            stages::lost_at(&r.labels),
            ranks.join("  ")
        );
    }
    s
}

/// The whole evaluation as text.
pub fn render(report: &EvalReport, seed: u64) -> String {
    let mut s = String::new();
    s.push_str(&metrics_table(&report.results, seed));
    s.push_str("\nrecall of each stage (% of labels; file@k: the labeled file among the first k candidate files, fn@k: its function among the first k candidate functions, block@k: a candidate block touching it, named: a named block touching it)\n");
    s.push_str(&stage_table(&report.results));
    s.push('\n');
    if !report.fixed_counts.is_empty() {
        s.push_str(&super::fixed::table(&report.fixed_counts));
        s.push('\n');
    }
    s.push_str(&incident_table(&report.results));
    for f in &report.folds {
        let _ = writeln!(
            s,
            "fold without {}: {} training incidents, {}; {}",
            f.held_out,
            f.training_incidents,
            f.describe_selection(),
            f.model.describe()
        );
    }
    if let Some(f) = &report.fitted_on_all {
        let _ = writeln!(
            s,
            "fitted on all {} incidents: {}; {}",
            f.training_incidents,
            f.describe_selection(),
            f.model.describe()
        );
    }
    for (id, why) in &report.skipped {
        let _ = writeln!(s, "skipped {id}: {why}");
    }
    s
}

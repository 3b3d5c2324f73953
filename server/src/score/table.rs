//! The readable table of `distdebug score`: configurations side by side, breakdowns, then
//! each incident with the attempts that did not count and why. Percentages with one decimal.

use super::protocol::{ConfigScore, GroupScore, IncidentStatus, MeanCi};
use super::ScoreReport;
use std::fmt::Write;

/// A fraction as a percentage with one decimal (`0.4234` -> `42.3%`).
pub fn pct(v: f64) -> String {
    format!("{:.1}%", clean(v * 100.0))
}

/// Rounding can print `-0.0`; a reader should see `0.0`.
pub fn clean(v: f64) -> f64 {
    if v == 0.0 || (v < 0.0 && v > -0.05) {
        0.0
    } else {
        v
    }
}

/// A mean with its interval, as percentages (`37.5% [25.0, 50.0]`).
pub fn with_ci(m: &MeanCi) -> String {
    format!(
        "{} [{:.1}, {:.1}]",
        pct(m.mean),
        clean(m.ci95[0] * 100.0),
        clean(m.ci95[1] * 100.0)
    )
}

/// Tokens per run without decimals, `n/a` when unknown.
pub fn tokens(t: Option<f64>) -> String {
    t.map(|t| format!("{t:.0}"))
        .unwrap_or_else(|| "n/a".to_string())
}

/// Percentage points with a sign and one decimal (`+17.7`).
pub fn gap(pp: f64) -> String {
    format!("{:+.1}", clean(pp))
}

/// Renders the whole report as text.
pub fn render_table(report: &ScoreReport) -> String {
    let mut out = String::new();
    if report.configs.is_empty() {
        return "no configurations scored\n".to_string();
    }
    let name_w = report
        .configs
        .iter()
        .map(|c| c.config.chars().count())
        .max()
        .unwrap_or(0)
        .max("config".len());
    let _ = writeln!(
        out,
        "{:<name_w$}  {:>9}  {:<25}  {:>9}  {:>8}  {:>8}  {:>6}  {:>10}  {:>5}",
        "config",
        "incidents",
        "block coverage [95% CI]",
        "precision",
        "hit rate",
        "file cov",
        "gap pp",
        "tokens/run",
        "flaky"
    );
    for c in &report.configs {
        let _ = writeln!(
            out,
            "{:<name_w$}  {:>9}  {:<25}  {:>9}  {:>8}  {:>8}  {:>6}  {:>10}  {:>5}",
            c.config,
            c.incidents,
            with_ci(&c.block_coverage),
            pct(c.block_precision.mean),
            pct(c.block_hit_rate.mean),
            pct(c.file_coverage.mean),
            gap(c.gap_pp),
            tokens(c.tokens_per_run),
            c.flaky
        );
    }
    for c in &report.configs {
        out.push('\n');
        render_groups(&mut out, &c.config, "system", &c.by_system);
        render_groups(&mut out, &c.config, "tag", &c.by_tag);
        render_incidents(&mut out, c);
    }
    out
}

fn render_groups(
    out: &mut String,
    config: &str,
    what: &str,
    groups: &std::collections::BTreeMap<String, GroupScore>,
) {
    if groups.is_empty() {
        return;
    }
    let w = groups
        .keys()
        .map(|k| k.chars().count())
        .max()
        .unwrap_or(0)
        .max(what.len());
    let _ = writeln!(out, "{config} by {what}");
    let _ = writeln!(
        out,
        "  {:<w$}  {:>9}  {:<25}  {:>9}  {:>8}  {:>8}  {:>6}",
        what, "incidents", "block coverage [95% CI]", "precision", "hit rate", "file cov", "gap pp"
    );
    for (k, g) in groups {
        let _ = writeln!(
            out,
            "  {:<w$}  {:>9}  {:<25}  {:>9}  {:>8}  {:>8}  {:>6}",
            k,
            g.incidents,
            with_ci(&g.block_coverage),
            pct(g.block_precision.mean),
            pct(g.block_hit_rate.mean),
            pct(g.file_coverage.mean),
            gap(g.gap_pp)
        );
    }
}

fn render_incidents(out: &mut String, c: &ConfigScore) {
    let _ = writeln!(out, "{} per incident", c.config);
    if c.per_incident.is_empty() {
        let _ = writeln!(out, "  (no incident folders in this results folder)");
        return;
    }
    let w = c
        .per_incident
        .iter()
        .map(|i| i.incident.chars().count())
        .max()
        .unwrap_or(0)
        .max("incident".len());
    let _ = writeln!(
        out,
        "  {:<w$}  {:>8}  {:>9}  {:>8}  {:>8}  {:>7}  {:>5}  {:>8}  {:>10}",
        "incident",
        "coverage",
        "precision",
        "hit rate",
        "file cov",
        "cov sd",
        "flaky",
        "attempts",
        "tokens/run"
    );
    for i in &c.per_incident {
        let _ = writeln!(
            out,
            "  {:<w$}  {:>8}  {:>9}  {:>8}  {:>8}  {:>7}  {:>5}  {:>8}  {:>10}",
            i.incident,
            pct(i.block_coverage),
            pct(i.block_precision),
            pct(i.block_hit_rate),
            pct(i.file_coverage),
            pct(i.coverage_sd),
            if i.flaky { "yes" } else { "no" },
            i.scored_attempts,
            tokens(i.tokens_per_run)
        );
        if i.status != IncidentStatus::Scored {
            let _ = writeln!(out, "    scores 0: {}", i.status.as_str());
        }
        for a in &i.attempts {
            if let Some(why) = &a.schema_error {
                let _ = writeln!(out, "    attempt {}: not schema-valid: {why}", a.attempt);
            }
            for f in &a.leakage {
                let fate = if a.counted {
                    "discarded"
                } else {
                    "not counted"
                };
                let _ = writeln!(
                    out,
                    "    attempt {}: leakage ({fate}), step {} [{}]: {}",
                    a.attempt, f.step, f.rule, f.reason
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_have_one_decimal_and_no_negative_zero() {
        assert_eq!(pct(0.4234), "42.3%");
        assert_eq!(pct(1.0), "100.0%");
        assert_eq!(pct(-0.0), "0.0%");
        assert_eq!(pct(-0.0000001), "0.0%");
        assert_eq!(gap(17.66), "+17.7");
        assert_eq!(gap(-3.04), "-3.0");
    }
}

//! The benchmark's protocol across attempts and incidents (the scoring rules, docs/scoring.md): which attempts
//! count, an incident's score, a configuration's means, intervals, variation and breakdowns.

use super::attempt::AttemptOutcome;
use super::bootstrap::{means, percentile_ci};
use super::leakage::LeakageFlag;
use super::metrics::Metrics;
use super::ScoreOptions;
use serde::Serialize;
use std::collections::BTreeMap;

/// An incident's block coverage spans more than this many points across attempts: flaky.
/// (A small tolerance keeps 0.5 − 0.3 = 0.19999… from being read as 20 points.)
pub const FLAKY_SPAN: f64 = 0.20;
const EPS: f64 = 1e-9;

/// One attempt as the per-incident report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct AttemptSummary {
    pub attempt: u32,
    pub schema_valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_error: Option<String>,
    /// Among the first N schema-valid attempts.
    pub counted: bool,
    pub flagged: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub leakage: Vec<LeakageFlag>,
    pub block_coverage: f64,
    pub block_precision: f64,
    pub block_hit_rate: f64,
    pub file_coverage: f64,
    pub tokens: Option<u64>,
}

/// Why an incident has the score it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IncidentStatus {
    /// At least one counted, unflagged attempt.
    Scored,
    /// The results tree has no attempt folder for it.
    NoAttempts,
    /// No attempt is schema-valid.
    NoValidAttempts,
    /// Every counted attempt was flagged by the leakage guard.
    AllFlagged,
}

impl IncidentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            IncidentStatus::Scored => "scored",
            IncidentStatus::NoAttempts => "no attempts",
            IncidentStatus::NoValidAttempts => "no schema-valid attempt",
            IncidentStatus::AllFlagged => "every counted attempt flagged",
        }
    }
}

/// One incident of one configuration (an element of `per_incident`).
#[derive(Debug, Clone, Serialize)]
pub struct IncidentScore {
    pub incident: String,
    pub system: String,
    pub category: String,
    pub tags: Vec<String>,
    pub status: IncidentStatus,
    pub block_coverage: f64,
    pub block_precision: f64,
    pub block_hit_rate: f64,
    pub file_coverage: f64,
    /// Attempts that entered the incident's mean (counted and not flagged).
    pub scored_attempts: usize,
    /// Population standard deviation of block coverage over the scored attempts.
    pub coverage_sd: f64,
    pub flaky: bool,
    /// Mean prompt + completion tokens over counted attempts whose usage is known.
    pub tokens_per_run: Option<f64>,
    pub attempts: Vec<AttemptSummary>,
}

impl IncidentScore {
    pub fn metrics(&self) -> Metrics {
        Metrics {
            block_coverage: self.block_coverage,
            block_precision: self.block_precision,
            block_hit_rate: self.block_hit_rate,
            file_coverage: self.file_coverage,
        }
    }
}

/// What the protocol needs to know about an incident besides its attempts.
#[derive(Debug, Clone)]
pub struct IncidentInfo {
    pub id: String,
    pub system: String,
    pub category: String,
    pub tags: Vec<String>,
}

/// Applies the protocol to the attempts of one incident (sorted by attempt number): the first
/// `n` schema-valid attempts are counted, flagged ones among them discarded, the rest averaged.
pub fn score_incident(info: &IncidentInfo, attempts: &[AttemptOutcome], n: usize) -> IncidentScore {
    let mut summaries = Vec::with_capacity(attempts.len());
    let mut counted = 0usize;
    let mut used: Vec<Metrics> = Vec::new();
    let mut tokens: Vec<u64> = Vec::new();
    let mut any_valid = false;
    for a in attempts {
        let s = &a.score;
        let is_counted = s.schema_valid && counted < n;
        if is_counted {
            counted += 1;
            tokens.extend(a.tokens);
            if !s.leakage.flagged {
                used.push(s.metrics());
            }
        }
        any_valid |= s.schema_valid;
        summaries.push(AttemptSummary {
            attempt: s.attempt,
            schema_valid: s.schema_valid,
            schema_error: s.schema_error.clone(),
            counted: is_counted,
            flagged: s.leakage.flagged,
            leakage: s.leakage.reasons.clone(),
            block_coverage: s.block_coverage,
            block_precision: s.block_precision,
            block_hit_rate: s.block_hit_rate,
            file_coverage: s.file_coverage,
            tokens: a.tokens,
        });
    }
    let status = if !used.is_empty() {
        IncidentStatus::Scored
    } else if attempts.is_empty() {
        IncidentStatus::NoAttempts
    } else if !any_valid {
        IncidentStatus::NoValidAttempts
    } else {
        IncidentStatus::AllFlagged
    };
    let rows: Vec<[f64; 4]> = used.iter().map(|m| m.as_array()).collect();
    let mean = Metrics::from_array(means(&rows));
    let cov: Vec<f64> = used.iter().map(|m| m.block_coverage).collect();
    let (sd, span) = spread(&cov);
    IncidentScore {
        incident: info.id.clone(),
        system: info.system.clone(),
        category: info.category.clone(),
        tags: info.tags.clone(),
        status,
        block_coverage: mean.block_coverage,
        block_precision: mean.block_precision,
        block_hit_rate: mean.block_hit_rate,
        file_coverage: mean.file_coverage,
        scored_attempts: used.len(),
        coverage_sd: sd,
        flaky: span > FLAKY_SPAN + EPS,
        tokens_per_run: mean_u64(&tokens),
        attempts: summaries,
    }
}

/// Population standard deviation (divide by the count) and range of `v` (0 for fewer than 2).
pub fn spread(v: &[f64]) -> (f64, f64) {
    if v.len() < 2 {
        return (0.0, 0.0);
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64;
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    (var.sqrt(), max - min)
}

fn mean_u64(v: &[u64]) -> Option<f64> {
    if v.is_empty() {
        None
    } else {
        Some(v.iter().map(|x| *x as f64).sum::<f64>() / v.len() as f64)
    }
}

/// A mean with its 95% percentile-bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanCi {
    pub mean: f64,
    pub ci95: [f64; 2],
}

/// The four metrics over a set of incidents, each with its interval, and the gap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupScore {
    pub incidents: usize,
    pub block_coverage: MeanCi,
    pub block_precision: MeanCi,
    pub block_hit_rate: MeanCi,
    pub file_coverage: MeanCi,
    /// File coverage minus block coverage, in percentage points.
    pub gap_pp: f64,
}

/// Means over incidents (each weighted equally) with one shared bootstrap for the four metrics.
pub fn score_group(incidents: &[&IncidentScore], opts: &ScoreOptions) -> GroupScore {
    let rows: Vec<[f64; 4]> = incidents.iter().map(|i| i.metrics().as_array()).collect();
    let m = means(&rows);
    let ci = percentile_ci(&rows, opts.bootstrap, opts.seed);
    let mc = |k: usize| MeanCi {
        mean: m[k],
        ci95: [ci[k].0, ci[k].1],
    };
    GroupScore {
        incidents: incidents.len(),
        block_coverage: mc(0),
        block_precision: mc(1),
        block_hit_rate: mc(2),
        file_coverage: mc(3),
        gap_pp: (m[3] - m[0]) * 100.0,
    }
}

/// One configuration (an element of `configs` in `score --json`).
#[derive(Debug, Clone, Serialize)]
pub struct ConfigScore {
    pub config: String,
    pub incidents: usize,
    pub block_coverage: MeanCi,
    pub block_precision: MeanCi,
    pub block_hit_rate: MeanCi,
    pub file_coverage: MeanCi,
    pub gap_pp: f64,
    /// Mean prompt + completion tokens over every counted attempt with known usage.
    pub tokens_per_run: Option<f64>,
    /// How many incidents are flaky.
    pub flaky: usize,
    pub per_incident: Vec<IncidentScore>,
    pub by_system: BTreeMap<String, GroupScore>,
    pub by_tag: BTreeMap<String, GroupScore>,
}

/// Aggregates the incident scores of one configuration.
pub fn score_config(
    name: &str,
    per_incident: Vec<IncidentScore>,
    opts: &ScoreOptions,
) -> ConfigScore {
    let all: Vec<&IncidentScore> = per_incident.iter().collect();
    let overall = score_group(&all, opts);
    let mut systems: BTreeMap<&str, Vec<&IncidentScore>> = BTreeMap::new();
    let mut tags: BTreeMap<&str, Vec<&IncidentScore>> = BTreeMap::new();
    for i in &per_incident {
        systems.entry(i.system.as_str()).or_default().push(i);
        let mut seen: Vec<&str> = Vec::new();
        for t in &i.tags {
            // A tag listed twice on one incident still weighs it once.
            if !seen.contains(&t.as_str()) {
                seen.push(t);
                tags.entry(t.as_str()).or_default().push(i);
            }
        }
    }
    let group = |m: BTreeMap<&str, Vec<&IncidentScore>>| {
        m.into_iter()
            .map(|(k, v)| (k.to_string(), score_group(&v, opts)))
            .collect()
    };
    let counted_tokens: Vec<u64> = per_incident
        .iter()
        .flat_map(|i| i.attempts.iter())
        .filter(|a| a.counted)
        .filter_map(|a| a.tokens)
        .collect();
    ConfigScore {
        config: name.to_string(),
        incidents: per_incident.len(),
        block_coverage: overall.block_coverage,
        block_precision: overall.block_precision,
        block_hit_rate: overall.block_hit_rate,
        file_coverage: overall.file_coverage,
        gap_pp: overall.gap_pp,
        tokens_per_run: mean_u64(&counted_tokens),
        flaky: per_incident.iter().filter(|i| i.flaky).count(),
        by_system: group(systems),
        by_tag: group(tags),
        per_incident,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::attempt::AttemptScore;
    use crate::score::leakage::Leakage;

    fn outcome(
        k: u32,
        valid: bool,
        flagged: bool,
        cov: f64,
        tokens: Option<u64>,
    ) -> AttemptOutcome {
        AttemptOutcome {
            score: AttemptScore {
                incident: "x".into(),
                attempt: k,
                schema_valid: valid,
                schema_error: (!valid).then(|| "diagnosis.json: missing".to_string()),
                leakage: Leakage {
                    flagged,
                    reasons: if flagged {
                        vec![LeakageFlag {
                            step: 0,
                            rule: "labels".into(),
                            reason: "r".into(),
                        }]
                    } else {
                        vec![]
                    },
                },
                block_coverage: cov,
                block_precision: cov / 2.0,
                block_hit_rate: cov,
                file_coverage: 1.0,
                labels: vec![],
                blocks: vec![],
                looked: None,
                ignored: Vec::new(),
            },
            tokens,
            write_error: None,
        }
    }

    fn info() -> IncidentInfo {
        IncidentInfo {
            id: "x".into(),
            system: "S".into(),
            category: "logic".into(),
            tags: vec![],
        }
    }

    #[test]
    fn only_the_first_n_valid_attempts_count() {
        let a = [
            outcome(1, true, false, 1.0, Some(10)),
            outcome(2, true, false, 0.5, Some(20)),
            outcome(3, true, false, 0.0, Some(30)),
            outcome(4, true, false, 0.0, Some(40)),
        ];
        let s = score_incident(&info(), &a, 2);
        assert_eq!(s.block_coverage, 0.75);
        assert_eq!(s.scored_attempts, 2);
        assert_eq!(s.tokens_per_run, Some(15.0));
        assert_eq!(
            s.attempts.iter().map(|a| a.counted).collect::<Vec<_>>(),
            [true, true, false, false]
        );
    }

    #[test]
    fn invalid_attempts_before_valid_ones_are_skipped_not_counted() {
        let a = [
            outcome(1, false, false, 0.0, Some(5)),
            outcome(2, false, false, 0.0, Some(5)),
            outcome(3, true, false, 0.5, Some(10)),
            outcome(4, true, false, 1.0, Some(10)),
        ];
        let s = score_incident(&info(), &a, 3);
        assert_eq!(s.scored_attempts, 2);
        assert_eq!(s.block_coverage, 0.75);
        assert_eq!(
            s.tokens_per_run,
            Some(10.0),
            "tokens over counted attempts only"
        );
        assert!(s.flaky, "0.5 to 1.0 spans 50 points");
        assert_eq!(s.coverage_sd, 0.25);
    }

    #[test]
    fn flagged_attempts_are_counted_then_discarded() {
        let a = [
            outcome(1, true, true, 1.0, Some(10)),
            outcome(2, true, false, 0.2, Some(10)),
            outcome(3, true, false, 0.4, Some(10)),
            outcome(4, true, false, 1.0, Some(10)),
        ];
        // Attempt 1 takes one of the three counted places though it is then discarded;
        // attempt 4 is never reached.
        let s = score_incident(&info(), &a, 3);
        assert_eq!(s.scored_attempts, 2);
        assert!((s.block_coverage - 0.3).abs() < 1e-12);
        assert!(!s.flaky, "0.2 to 0.4 spans exactly 20 points, not more");
        assert_eq!(s.status, IncidentStatus::Scored);
    }

    #[test]
    fn an_incident_with_nothing_to_score_scores_zero_with_its_reason() {
        let all_flagged = [
            outcome(1, true, true, 1.0, None),
            outcome(2, true, true, 1.0, None),
        ];
        let s = score_incident(&info(), &all_flagged, 3);
        assert_eq!(
            (s.status, s.metrics()),
            (IncidentStatus::AllFlagged, Metrics::default())
        );
        assert_eq!(s.tokens_per_run, None);
        let invalid = [outcome(1, false, false, 0.0, Some(3))];
        let s = score_incident(&info(), &invalid, 3);
        assert_eq!(s.status, IncidentStatus::NoValidAttempts);
        assert_eq!(s.tokens_per_run, None, "an invalid attempt is not counted");
        let s = score_incident(&info(), &[], 3);
        assert_eq!(
            (s.status, s.block_coverage),
            (IncidentStatus::NoAttempts, 0.0)
        );
    }

    #[test]
    fn the_protocol_example_of_docs_scoring() {
        // docs/scoring.md, "Across attempts and incidents": the numbers there are checked here.
        let with_file = |mut o: AttemptOutcome, file: f64| {
            o.score.file_coverage = file;
            o
        };
        let a = [
            outcome(1, false, false, 0.0, Some(900)),
            with_file(outcome(2, true, false, 0.5, Some(1000)), 1.0),
            with_file(outcome(3, true, true, 1.0, Some(3000)), 1.0),
            with_file(outcome(4, true, false, 0.0, Some(2000)), 0.5),
            with_file(outcome(5, true, false, 1.0, Some(500)), 1.0),
        ];
        let b: Vec<_> = (1..=3)
            .map(|k| with_file(outcome(k, true, false, 0.5, Some(4000)), 1.0))
            .collect();
        let ia = score_incident(
            &IncidentInfo {
                id: "a".into(),
                ..info()
            },
            &a,
            3,
        );
        let ib = score_incident(
            &IncidentInfo {
                id: "b".into(),
                ..info()
            },
            &b,
            3,
        );
        assert_eq!(
            (ia.block_coverage, ia.file_coverage, ia.coverage_sd),
            (0.25, 0.75, 0.25)
        );
        assert!(ia.flaky);
        assert_eq!(ia.tokens_per_run, Some(2000.0));
        assert_eq!(
            (ib.block_coverage, ib.coverage_sd, ib.flaky),
            (0.5, 0.0, false)
        );
        let c = score_config("cfg", vec![ia, ib], &ScoreOptions::default());
        assert_eq!(c.block_coverage.mean, 0.375);
        assert_eq!(c.file_coverage.mean, 0.875);
        assert_eq!(c.gap_pp, 50.0);
        assert_eq!(c.block_coverage.ci95, [0.25, 0.5]);
        assert_eq!(c.tokens_per_run, Some(3000.0));
        assert_eq!(c.flaky, 1);
    }

    #[test]
    fn population_sd_divides_by_the_count() {
        let (sd, span) = spread(&[0.0, 1.0, 0.5]);
        // mean 0.5, squared deviations 0.25 + 0.25 + 0 = 0.5, / 3.
        assert!((sd - (0.5f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(span, 1.0);
        assert_eq!(spread(&[0.7]), (0.0, 0.0));
    }

    #[test]
    fn configurations_weight_incidents_equally_and_break_down_by_system_and_tag() {
        let mk = |id: &str, sys: &str, tags: &[&str], cov: f64, attempts: usize| {
            let info = IncidentInfo {
                id: id.into(),
                system: sys.into(),
                category: "logic".into(),
                tags: tags.iter().map(|t| t.to_string()).collect(),
            };
            let a: Vec<_> = (0..attempts)
                .map(|k| outcome(k as u32 + 1, true, false, cov, Some(100)))
                .collect();
            score_incident(&info, &a, 3)
        };
        // One incident with 3 attempts and one with 1: equal weights, so the mean is 0.5.
        let per = vec![
            mk("a", "ZooKeeper", &["cross-component"], 1.0, 3),
            mk("b", "etcd", &["cross-component", "cross-component"], 0.0, 1),
            mk("c", "etcd", &[], 0.5, 2),
        ];
        let c = score_config(
            "cfg",
            per,
            &ScoreOptions {
                bootstrap: 1000,
                ..Default::default()
            },
        );
        assert_eq!(c.incidents, 3);
        assert_eq!(c.block_coverage.mean, 0.5);
        assert!((c.gap_pp - 50.0).abs() < 1e-9);
        assert_eq!(c.by_system["etcd"].incidents, 2);
        assert_eq!(c.by_system["etcd"].block_coverage.mean, 0.25);
        assert_eq!(c.by_tag["cross-component"].incidents, 2);
        assert_eq!(c.by_tag["cross-component"].block_coverage.mean, 0.5);
        assert_eq!(c.tokens_per_run, Some(100.0));
        let ci = c.block_coverage.ci95;
        assert!(ci[0] <= 0.5 && 0.5 <= ci[1] && ci[0] >= 0.0 && ci[1] <= 1.0);
    }
}

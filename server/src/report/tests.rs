//! Unit tests of the page: figures in the right cells, escaping, links, evidence groups and
//! self-containedness. (The page in a real browser is tests/e2e-report.sh.)

use super::*;
use crate::score::attempt::{AttemptOutcome, AttemptScore};
use crate::score::leakage::{Leakage, LeakageFlag};
use crate::score::protocol::{score_config, score_incident, IncidentInfo};

const EVIL: &str = "<img src=x onerror=\"alert(1)\">";

fn outcome(k: u32, valid: bool, flagged: bool, cov: f64, file: f64) -> AttemptOutcome {
    AttemptOutcome {
        score: AttemptScore {
            incident: "x".into(),
            attempt: k,
            schema_valid: valid,
            schema_error: (!valid).then(|| format!("diagnosis.json: blocks: {EVIL}")),
            leakage: Leakage {
                flagged,
                reasons: if flagged {
                    vec![LeakageFlag {
                        step: 3,
                        rule: "labels".into(),
                        reason: format!("reads {EVIL}"),
                    }]
                } else {
                    vec![]
                },
            },
            block_coverage: cov,
            block_precision: cov / 2.0,
            block_hit_rate: cov,
            file_coverage: file,
            labels: vec![],
            blocks: vec![],
            looked: None,
            ignored: Vec::new(),
        },
        tokens: Some(1000),
        write_error: None,
    }
}

fn incident(id: &str, system: &str, tags: &[&str], a: &[AttemptOutcome]) -> IncidentScore {
    let info = IncidentInfo {
        id: id.into(),
        system: system.into(),
        category: "logic".into(),
        tags: tags.iter().map(|t| t.to_string()).collect(),
    };
    score_incident(&info, a, 3)
}

fn opts() -> ScoreOptions {
    ScoreOptions {
        bootstrap: 500,
        ..Default::default()
    }
}

/// Two configurations: "weak" (listed first) and "strong", with one hostile system name.
fn scores() -> Vec<ConfigScore> {
    let weak = score_config(
        "weak",
        vec![
            incident(
                "inc-a",
                EVIL,
                &["causal-method-named", "cross-component"],
                &[
                    outcome(1, false, false, 0.0, 0.0),
                    outcome(2, true, false, 0.5, 1.0),
                    outcome(3, true, true, 1.0, 1.0),
                    outcome(4, true, false, 0.0, 0.5),
                ],
            ),
            incident(
                "inc-b",
                "etcd",
                &["no-internal-stack-trace"],
                &[outcome(1, true, false, 0.0, 0.0)],
            ),
        ],
        &opts(),
    );
    let strong = score_config(
        "strong",
        vec![
            incident(
                "inc-a",
                EVIL,
                &["causal-method-named", "cross-component"],
                &[outcome(1, true, false, 1.0, 1.0)],
            ),
            incident(
                "inc-b",
                "etcd",
                &["no-internal-stack-trace"],
                &[outcome(1, true, false, 0.5, 1.0)],
            ),
        ],
        &opts(),
    );
    vec![weak, strong]
}

fn page<'a>(scores: &'a [ConfigScore], root: &Path) -> ReportPage<'a> {
    ReportPage {
        configs: scores
            .iter()
            .map(|s| ReportConfig {
                score: s,
                dir: root.join("results").join(&s.config),
                run: Some(RunInfo {
                    agent: "llm".into(),
                    model: Some(format!("m-{EVIL}")),
                    ..Default::default()
                }),
            })
            .collect(),
        options: opts(),
        out_dir: root.join("out"),
        generated_at: "2026-01-01T00:00:00Z".into(),
    }
}

/// The text of the first element with `class` inside the row that starts at `row_marker`.
fn cell(html: &str, row_marker: &str, class: &str) -> String {
    let row = &html[html
        .find(row_marker)
        .unwrap_or_else(|| panic!("{row_marker}"))..];
    let row = &row[..row.find("</tr>").unwrap()];
    let key = format!("class=\"num {class}\">");
    let at = row.find(&key).unwrap_or_else(|| panic!("{class} in {row}")) + key.len();
    let text = &row[at..];
    let end = text.find(['<']).unwrap();
    text[..end].to_string()
}

#[test]
fn the_leaderboard_ranks_by_block_coverage_and_shows_the_figures() {
    let s = scores();
    let root = tempfile::tempdir().unwrap();
    let html = render(&page(&s, root.path()));
    let strong = html.find("<tr data-config=\"strong\">").unwrap();
    let weak = html.find("<tr data-config=\"weak\">").unwrap();
    assert!(strong < weak, "strong (75%) ranks above weak (12.5%)");
    let w = &s[0];
    // weak: inc-a scores (0.5 + 0.0)/2 = 0.25, inc-b 0.0; the mean is 12.5%.
    assert_eq!(w.block_coverage.mean, 0.125);
    let row = "<tr data-config=\"weak\">";
    assert_eq!(
        cell(&html, row, "block-coverage"),
        with_ci(&w.block_coverage)
    );
    assert_eq!(cell(&html, row, "file-coverage"), "37.5%");
    assert_eq!(cell(&html, row, "precision"), pct(w.block_precision.mean));
    assert_eq!(cell(&html, row, "gap"), "+25.0");
    assert_eq!(cell(&html, row, "tokens"), "1000");
    assert_eq!(cell(&html, row, "flaky-count"), "1");
    assert_eq!(cell(&html, row, "rank"), "2");
}

#[test]
fn everything_from_files_is_escaped() {
    let s = scores();
    let root = tempfile::tempdir().unwrap();
    let html = render(&page(&s, root.path()));
    assert!(
        !html.contains("<img"),
        "no markup from files reaches the page"
    );
    let escaped = esc(EVIL);
    // The system name (tables), the model (run.json), the schema error and leakage reason.
    assert!(html.contains(&format!("<td>{escaped}</td>")));
    assert!(html.contains(&format!("model m-{escaped}")));
    assert!(html.contains(&format!(
        "not schema-valid: diagnosis.json: blocks: {escaped}"
    )));
    assert!(html.contains(&format!(
        "leakage (discarded), step 3 [labels]: reads {escaped}"
    )));
}

#[test]
fn the_page_is_self_contained() {
    let s = scores();
    let root = tempfile::tempdir().unwrap();
    let html = render(&page(&s, root.path()));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"));
    assert!(!html.contains("<link"));
    // No element loads anything (escaped text from files may still spell "src=").
    let loads = regex::Regex::new(
        r#"<[a-zA-Z][a-zA-Z0-9-]*(\s+[a-zA-Z:-]+(="[^"]*")?)*\s+(src|srcset|data)="#,
    )
    .unwrap();
    assert!(!loads.is_match(&html), "{:?}", loads.find(&html));
    assert!(!html.contains("@import") && !html.contains("url(http"));
    // The only absolute URL is the SVG namespace, which is a name, not a fetch.
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_ns.contains("http://") && !without_ns.contains("https://"));
    assert!(html.contains("<style>") && html.contains("<svg"));
}

#[test]
fn evidence_groups_include_the_complement_of_causal_method_named() {
    let s = scores();
    let strong = &s[1];
    let none_named = evidence_score(strong, &Evidence::Without(CAUSAL_METHOD_NAMED), &opts())
        .expect("inc-b has no causal-method-named tag");
    assert_eq!(none_named.incidents, 1);
    assert_eq!(none_named.block_coverage.mean, 0.5);
    let named = evidence_score(strong, &Evidence::Tag(CAUSAL_METHOD_NAMED), &opts()).unwrap();
    assert_eq!(named, strong.by_tag[CAUSAL_METHOD_NAMED]);
    assert!(evidence_score(strong, &Evidence::Tag("internal-stack-trace"), &opts()).is_none());

    let root = tempfile::tempdir().unwrap();
    let html = render(&page(&s, root.path()));
    for key in [
        "causal-method-named",
        "no-causal-code-named",
        "no-internal-stack-trace",
        "cross-component",
    ] {
        assert!(html.contains(&format!("data-group=\"{key}\"")), "{key}");
    }
    assert!(html.contains("50.0% [50.0, 50.0] · n=1"));
}

#[test]
fn attempts_link_to_their_files_relative_to_the_report() {
    let s = scores();
    let root = tempfile::tempdir().unwrap();
    let a2 = root.path().join("results/weak/inc-a/attempt-2");
    std::fs::create_dir_all(&a2).unwrap();
    std::fs::write(a2.join("diagnosis.json"), "{}").unwrap();
    std::fs::write(a2.join("trajectory.json"), "{}").unwrap();
    let html = render(&page(&s, root.path()));
    assert!(html.contains("href=\"../results/weak/inc-a/attempt-2/diagnosis.json\""));
    assert!(html.contains("href=\"../results/weak/inc-a/attempt-2/trajectory.json\""));
    // Attempt 1 wrote no diagnosis.json: its link goes to the folder and it is marked invalid.
    assert!(html.contains("href=\"../results/weak/inc-a/attempt-1\""));
    assert!(html.contains(">#1✗</a>") && html.contains(">#3⚑</a>"));
    assert!(html.contains("href=\"../results/weak/inc-a\""));
}

#[test]
fn an_incident_without_scored_attempts_says_why() {
    let c = score_config(
        "c",
        vec![incident(
            "leaky",
            "S",
            &[],
            &[outcome(1, true, true, 1.0, 1.0)],
        )],
        &opts(),
    );
    let root = tempfile::tempdir().unwrap();
    let html = render(&page(std::slice::from_ref(&c), root.path()));
    assert!(html.contains("scores 0: every counted attempt flagged"));
    assert!(html.contains("<title>distdebug report: c</title>"));
}

#[test]
fn the_report_is_written_atomically_and_bad_folders_are_errors() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("sub/report.html");
    write_report(&out, "<p>x</p>").unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "<p>x</p>");
    let names: Vec<_> = std::fs::read_dir(out.parent().unwrap()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temp file left behind");

    let missing = root.path().join("results/none");
    let err = build_report(&[missing], root.path(), &opts(), &out).unwrap_err();
    assert!(err.contains("no such results folder"), "{err}");
}

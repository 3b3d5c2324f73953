//! `distdebug report` end to end without a browser: the file is written, shows the figures
//! `score --json` gives, and bad input is refused without writing anything. (The rendered page
//! in headless Chromium is tests/e2e-report.sh.)

mod cli_support;
use cli_support::distdebug;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Three attempts on tiny-lease (label src/lease.py 13..18): the label, the wrong file, and
/// one that reads labels.json.
fn results(root: &Path) -> PathBuf {
    let cfg = root.join("results").join("cfg<1>");
    let diag = |p: &str, s: u32, e: u32| json!({"incident": "tiny-lease", "blocks": [{"path": p, "start_line": s, "end_line": e}]});
    let attempts = [
        (diag("src/lease.py", 13, 18), json!([])),
        (diag("src/server.py", 1, 5), json!([])),
        (
            diag("src/lease.py", 13, 18),
            json!([{"index": 0, "kind": "action", "tool": "bash", "args": {"command": "cat ../labels.json"}}]),
        ),
    ];
    for (k, (d, steps)) in attempts.iter().enumerate() {
        let dir = cfg.join("tiny-lease").join(format!("attempt-{}", k + 1));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("diagnosis.json"), d.to_string()).unwrap();
        let t = json!({"incident": "tiny-lease", "attempt": k + 1, "agent": "test", "exit": "submitted",
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}, "steps": steps});
        std::fs::write(dir.join("trajectory.json"), t.to_string()).unwrap();
    }
    cfg
}

#[test]
fn the_report_shows_what_score_json_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = results(tmp.path());
    let out = tmp.path().join("site/report.html");
    std::fs::create_dir_all(tmp.path().join("site")).unwrap();
    let c = cfg.to_str().unwrap();
    let (code, stdout, err) = distdebug(&[
        "report",
        c,
        "--dir",
        "tests/fixtures/incidents",
        "--out",
        out.to_str().unwrap(),
        "--bootstrap",
        "300",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("1 configuration(s)"), "{stdout}");
    let html = std::fs::read_to_string(&out).unwrap();
    let (code, json_out, _) = distdebug(&[
        "score",
        c,
        "--dir",
        "tests/fixtures/incidents",
        "--bootstrap",
        "300",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&json_out).unwrap();
    let s = &v["configs"][0];
    // Attempts 1 (coverage 1) and 2 (0) are scored, 3 is discarded: 50.0%, flaky.
    assert_eq!(s["block_coverage"]["mean"], 0.5);
    assert!(html.contains("<td class=\"num block-coverage\">50.0% [50.0, 50.0]"));
    assert!(html.contains("<td class=\"num tokens\">120</td>"));
    assert!(html.contains("<td class=\"num flaky-count\">1</td>"));
    assert!(html.contains("sd 50.0% · flaky"));
    // The configuration's folder name holds markup characters: escaped everywhere.
    assert!(html.contains("data-config=\"cfg&lt;1&gt;\""));
    assert!(!html.contains("cfg<1>"));
    // Links are relative to the report and percent-encoded.
    assert!(html.contains("href=\"../results/cfg%3C1%3E/tiny-lease/attempt-2/diagnosis.json\""));
    assert!(html.contains("leakage (discarded), step 0 [labels]"));
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report.html");
    let missing = tmp.path().join("results/none");
    let (code, _, err) = distdebug(&[
        "report",
        missing.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no such results folder"), "{err}");
    assert!(!out.exists());

    let cfg = results(tmp.path());
    let (code, _, err) = distdebug(&[
        "report",
        cfg.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "--out naming a folder is a usage error: {err}");
    assert!(err.contains("is a folder"));
    let (code, _, _) = distdebug(&["report", cfg.to_str().unwrap()]);
    assert_eq!(code, 2, "--out is required");
}

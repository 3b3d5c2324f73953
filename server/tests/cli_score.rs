//! `distdebug score` end to end: a results tree for the tiny-lease fixture, the JSON of
//! the command line as README.md documents it, the table, and bad input (missing folders, unknown incidents, broken files).

mod cli_support;
use cli_support::{distdebug, repo_root};

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One attempt folder: `diagnosis` (None: no file) and a trajectory with `steps` and tokens.
fn attempt(config: &Path, k: u32, diagnosis: Option<&str>, steps: Value, tokens: u64) {
    let dir = config.join("tiny-lease").join(format!("attempt-{k}"));
    if let Some(d) = diagnosis {
        write(&dir.join("diagnosis.json"), d);
    }
    let traj = json!({"incident": "tiny-lease", "attempt": k, "agent": "test", "exit": "submitted",
        "usage": {"prompt_tokens": tokens, "completion_tokens": 0}, "steps": steps});
    write(&dir.join("trajectory.json"), &traj.to_string());
}

fn blocks(b: &[(&str, u32, u32)]) -> String {
    let b: Vec<Value> = b
        .iter()
        .map(|(p, s, e)| json!({"path": p, "start_line": s, "end_line": e}))
        .collect();
    json!({"incident": "tiny-lease", "blocks": b}).to_string()
}

/// The label of tiny-lease is src/lease.py 13..18 (lease.py has 24 lines).
fn sample_config(root: &Path) -> PathBuf {
    let cfg = root.join("results").join("cfg-a");
    // attempt 1: invalid (does not count, takes no place)
    attempt(&cfg, 1, Some("{\"blocks\": [ {"), json!([]), 999);
    // attempt 2: exactly the label
    attempt(
        &cfg,
        2,
        Some(&blocks(&[("src/lease.py", 13, 18)])),
        json!([]),
        100,
    );
    // attempt 3: flagged (reads labels.json): counted, then discarded
    let leak = json!([{"index": 0, "kind": "action", "tool": "bash", "args": {"command": "cat ../../labels.json"}}]);
    attempt(
        &cfg,
        3,
        Some(&blocks(&[("src/lease.py", 13, 18)])),
        leak,
        300,
    );
    // attempt 4: the wrong file, past its end too (server.py has 20 lines)
    attempt(
        &cfg,
        4,
        Some(&blocks(&[("src\\server.py", 15, 40)])),
        json!([]),
        200,
    );
    // attempt 5: beyond the first three valid attempts
    attempt(
        &cfg,
        5,
        Some(&blocks(&[("src/lease.py", 13, 18)])),
        json!([]),
        50,
    );
    cfg
}

#[test]
fn json_follows_the_contract_and_applies_the_protocol() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = sample_config(tmp.path());
    let (code, out, err) = distdebug(&[
        "score",
        cfg.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
        "--json",
        "--bootstrap",
        "500",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = &v["configs"][0];
    let keys: Vec<&str> = c.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "config",
            "incidents",
            "block_coverage",
            "block_precision",
            "block_hit_rate",
            "file_coverage",
            "gap_pp",
            "tokens_per_run",
            "flaky",
            "per_incident",
            "by_system",
            "by_tag"
        ]
    );
    assert_eq!(c["config"], "cfg-a");
    assert_eq!(c["incidents"], 1);
    // Scored attempts: 2 (all 1.0) and 4 (all 0.0); attempt 3 is discarded, 5 never counted.
    assert_eq!(c["block_coverage"]["mean"], 0.5);
    assert_eq!(c["block_precision"]["mean"], 0.5);
    assert_eq!(c["block_hit_rate"]["mean"], 0.5);
    assert_eq!(c["file_coverage"]["mean"], 0.5);
    // One incident: every resample is that incident, so the interval is a point.
    assert_eq!(c["block_coverage"]["ci95"], json!([0.5, 0.5]));
    assert_eq!(c["gap_pp"], 0.0);
    // Counted attempts are 2, 3 and 4 (the flagged one spent its tokens too).
    assert_eq!(c["tokens_per_run"], 200.0);
    assert_eq!(c["flaky"], 1);
    let inc = &c["per_incident"][0];
    assert_eq!(inc["incident"], "tiny-lease");
    assert_eq!(inc["status"], "scored");
    assert_eq!(inc["scored_attempts"], 2);
    assert_eq!(inc["coverage_sd"], 0.5);
    let counted: Vec<bool> = inc["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["counted"].as_bool().unwrap())
        .collect();
    assert_eq!(counted, [false, true, true, true, false]);
    assert!(inc["attempts"][0]["schema_error"]
        .as_str()
        .unwrap()
        .starts_with("diagnosis.json: not valid JSON"));
    assert_eq!(inc["attempts"][2]["leakage"][0]["rule"], "labels");
    assert_eq!(c["by_system"]["TinyLease"]["incidents"], 1);
    assert_eq!(
        c["by_tag"]["cross-component"]["block_coverage"]["mean"],
        0.5
    );

    // Every attempt got its diagnosis_scores.json, the invalid one with its reason.
    let scores = |k: u32| -> Value {
        let p = cfg.join(format!("tiny-lease/attempt-{k}/diagnosis_scores.json"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    assert_eq!(scores(1)["schema_valid"], false);
    assert!(scores(1)["schema_error"].is_string());
    assert_eq!(scores(3)["leakage"]["flagged"], true);
    assert_eq!(scores(3)["leakage"]["reasons"][0]["step"], 0);
    assert_eq!(
        scores(4)["blocks"][0],
        json!({"path": "src/server.py", "start_line": 15, "end_line": 40, "hit": false})
    );
}

#[test]
fn the_same_seed_gives_the_same_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    // Three incidents are needed for an interval that is not a point: copy the fixture twice.
    let incidents = tmp.path().join("incidents");
    for id in ["lease-a", "lease-b", "lease-c"] {
        copy_dir(
            &repo_root().join("tests/fixtures/incidents/tiny-lease"),
            &incidents.join(id),
        );
        let p = incidents.join(id).join("incident.json");
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("tiny-lease", id);
        std::fs::write(&p, text).unwrap();
    }
    let cfg = tmp.path().join("results/cfg");
    for (id, end) in [("lease-a", 18), ("lease-b", 12), ("lease-c", 13)] {
        let d = cfg.join(id).join("attempt-1");
        write(
            &d.join("diagnosis.json"),
            &blocks(&[("src/lease.py", 1, end)]),
        );
    }
    let run = |seed: &str| {
        let (code, out, err) = distdebug(&[
            "score",
            cfg.to_str().unwrap(),
            "--dir",
            incidents.to_str().unwrap(),
            "--json",
            "--seed",
            seed,
        ]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["configs"][0].clone()
    };
    let a = run("7");
    assert_eq!(a, run("7"));
    let ci = a["block_coverage"]["ci95"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    let mean = a["block_coverage"]["mean"].as_f64().unwrap();
    assert!((mean - 2.0 / 3.0).abs() < 1e-12);
    assert!(lo < mean && mean < hi, "[{lo}, {hi}] around {mean}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

#[test]
fn the_table_shows_configurations_side_by_side_in_percent() {
    let tmp = tempfile::tempdir().unwrap();
    let a = sample_config(tmp.path());
    let b = tmp.path().join("results").join("cfg-b");
    attempt(
        &b,
        1,
        Some(&blocks(&[("src/lease.py", 10, 14)])),
        json!([]),
        10,
    );
    let (code, out, err) = distdebug(&[
        "score",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
    ]);
    assert_eq!(code, 0, "{err}");
    let header = out.lines().next().unwrap();
    assert!(header.starts_with("config"), "{out}");
    let row_a = out.lines().find(|l| l.starts_with("cfg-a ")).unwrap();
    let row_b = out.lines().find(|l| l.starts_with("cfg-b ")).unwrap();
    assert!(row_a.contains("50.0% [50.0, 50.0]"), "{row_a}");
    // cfg-b: 10..14 reaches the label; 2 of its 5 lines are labeled.
    assert!(
        row_b.contains("100.0% [100.0, 100.0]") && row_b.contains("40.0%"),
        "{row_b}"
    );
    assert!(
        out.contains("attempt 1: not schema-valid: diagnosis.json: not valid JSON"),
        "{out}"
    );
    assert!(
        out.contains("attempt 3: leakage (discarded), step 0 [labels]"),
        "{out}"
    );
}

#[test]
fn an_incident_whose_attempts_are_all_flagged_scores_zero_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("cfg");
    let leak = json!([{"index": 4, "kind": "action", "tool": "bash", "args": {"command": "git apply /x/fix.patch"}}]);
    for k in 1..=2 {
        attempt(
            &cfg,
            k,
            Some(&blocks(&[("src/lease.py", 13, 18)])),
            leak.clone(),
            1,
        );
    }
    let (code, out, err) = distdebug(&[
        "score",
        cfg.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let inc = &v["configs"][0]["per_incident"][0];
    assert_eq!(inc["status"], "all-flagged");
    assert_eq!(inc["block_coverage"], 0.0);
    assert_eq!(inc["attempts"][1]["leakage"][0]["step"], 4);
    assert_eq!(inc["attempts"][1]["leakage"][0]["rule"], "fix-patch");
}

#[test]
fn malformed_files_in_results_never_abort_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("cfg");
    let d = cfg.join("tiny-lease").join("attempt-1");
    std::fs::create_dir_all(d.join("diagnosis.json")).unwrap(); // a folder where a file belongs
    write(&d.join("trajectory.json"), "{ torn");
    write(
        &cfg.join("tiny-lease/attempt-2/diagnosis.json"),
        "\u{0}\u{ff}garbage",
    );
    write(
        &cfg.join("tiny-lease/attempt-3/diagnosis.json"),
        &blocks(&[("src/lease.py", 13, 13)]),
    );
    write(
        &cfg.join("tiny-lease/attempt-x/diagnosis.json"),
        "ignored: not attempt-<k>",
    );
    write(&cfg.join("run.json"), "not json either");
    let (code, out, err) = distdebug(&[
        "score",
        cfg.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let inc = &v["configs"][0]["per_incident"][0];
    assert_eq!(inc["attempts"].as_array().unwrap().len(), 3);
    assert!(
        inc["attempts"][0]["schema_error"]
            .as_str()
            .unwrap()
            .contains("cannot read"),
        "{inc}"
    );
    assert!(
        inc["attempts"][1]["schema_error"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{inc}"
    );
    assert_eq!(inc["block_coverage"], 1.0);
    assert_eq!(
        inc["tokens_per_run"],
        Value::Null,
        "no trajectory.json: usage unknown"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("results/nope");
    let (code, _, err) = distdebug(&[
        "score",
        missing.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("results/nope: no such results folder"),
        "{err}"
    );

    let cfg = tmp.path().join("cfg");
    write(
        &cfg.join("no-such-incident/attempt-1/diagnosis.json"),
        "{\"blocks\": []}",
    );
    let (code, _, err) = distdebug(&[
        "score",
        cfg.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "cfg/no-such-incident: no incident \"no-such-incident\" in tests/fixtures/incidents"
        ),
        "{err}"
    );

    // An incident with empty labels cannot be scored.
    let cfg = tmp.path().join("cfg2");
    write(
        &cfg.join("empty-labels/attempt-1/diagnosis.json"),
        "{\"blocks\": []}",
    );
    let (code, _, err) = distdebug(&[
        "score",
        cfg.to_str().unwrap(),
        "--dir",
        "tests/broken-incidents",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("empty-labels/labels.json: blocks: is empty"),
        "{err}"
    );

    let (code, _, _) = distdebug(&["score", cfg.to_str().unwrap(), "--attempts", "0"]);
    assert_eq!(code, 2, "usage error");
    let (code, _, _) = distdebug(&["score"]);
    assert_eq!(code, 2, "usage error");
}

//! `distdebug agreement` and `distdebug compare` end to end, on hand-computed examples.

mod support;

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

fn distdebug(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(args)
        .current_dir(support::repo_root())
        .env_remove("DISTDEBUG_INCIDENTS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn agreement_between_two_annotators() {
    let tmp = support::scratch();
    let incidents = tmp.path().join("incidents");
    let inc = incidents.join("tiny-lease");
    support::copy_dir(
        &support::repo_root().join("tests/fixtures/incidents/tiny-lease"),
        &inc,
    );
    // A: lease.py 13-18. B: lease.py 15-16 and server.py 1-2. lease.py has 24 lines and
    // server.py 20: 44 lines; A labels 6, B 4, both 2, neither 36. Observed 38/44 = 86.4%;
    // chance (6*4 + 38*40)/44^2 = 1544/1936 = 79.8%; kappa = (1672 - 1544)/(1936 - 1544)
    // = 128/392 = 0.327. A reaches B's lease block only (50%), B reaches A's (100%).
    write(
        &inc.join("labels.json"),
        &json!({"blocks": [
            {"path": "src/lease.py", "start_line": 13, "end_line": 18, "annotator": "A"},
            {"path": "src/lease.py", "start_line": 15, "end_line": 16, "annotator": "B"},
            {"path": "src/server.py", "start_line": 1, "end_line": 2, "annotator": "B"}]})
        .to_string(),
    );
    let dir = incidents.to_str().unwrap();
    let (code, out, err) = distdebug(&["agreement", "tiny-lease", "--dir", dir]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "tiny-lease: 2 annotators: A (1 blocks, 6 lines), B (2 blocks, 4 lines)\n\
         \x20 A vs B: A reaches 50.0% of B's blocks, B reaches 100.0% of A's; line kappa 0.327 (observed 86.4%, chance 79.8%) over 44 lines of 2 files\n\
         \x20   only A: src/lease.py:13-14, src/lease.py:17-18\n\
         \x20   only B: src/server.py:1-2\n"
    );
    let (code, out, _) = distdebug(&["agreement", inc.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = &v["incidents"][0]["pairs"][0];
    assert!(
        (p["kappa"].as_f64().unwrap() - 128.0 / 392.0).abs() < 1e-12,
        "{p}"
    );
    assert_eq!(p["both_lines"], 2);

    // The fixture has one annotator: no pair. An unknown incident is an error (exit 1)
    // after the others are printed.
    let (code, out, err) = distdebug(&[
        "agreement",
        "tests/fixtures/incidents/tiny-lease",
        "nope",
        "--dir",
        dir,
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains("1 annotator: fixture (1 blocks, 6 lines)")
            && out.contains("needs blocks from two"),
        "{out}"
    );
    assert!(err.contains("no incident \"nope\""), "{err}");
}

#[test]
fn compare_two_results_folders() {
    let tmp = support::scratch();
    let results = tmp.path().join("results");
    let attempt = |config: &str, incident: &str, blocks: Value| {
        let dir = results.join(config).join(incident).join("attempt-1");
        write(
            &dir.join("diagnosis.json"),
            &json!({"incident": incident, "blocks": blocks}).to_string(),
        );
    };
    // The label is lease.py 13-18. A names lease 14-16 (hit) and 20-21; B names lease 15
    // (hit) and server.py 1-2. A: 5 lines, 3 labeled: precision 60%; B: 3 lines, 1 labeled.
    // Both name lease 15: Jaccard 1/(5 + 3 - 1) = 14.3%.
    attempt(
        "human-ann",
        "tiny-lease",
        json!([{"path": "src/lease.py", "start_line": 14, "end_line": 16},
               {"path": "src/lease.py", "start_line": 20, "end_line": 21}]),
    );
    attempt(
        "ext",
        "tiny-lease",
        json!([{"path": "src/lease.py", "start_line": 15, "end_line": 15},
               {"path": "src/server.py", "start_line": 1, "end_line": 2}]),
    );
    attempt("ext", "other", json!([]));
    let a = results.join("human-ann");
    let b = results.join("ext");
    let args = [
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
    ];
    let (code, out, err) = distdebug(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "A = human-ann, B = ext\n\
         tiny-lease: A #1 vs B #1\n\
         \x20 A human-ann #1: block coverage 100.0%, precision 60.0%, hit rate 50.0%, file coverage 100.0% (2 blocks, 5 lines)\n\
         \x20 B ext #1: block coverage 100.0%, precision 33.3%, hit rate 50.0%, file coverage 100.0% (2 blocks, 3 lines)\n\
         \x20 blocks: 1 both, 1 only A, 1 only B; lines: Jaccard 14.3% (A 5, B 3, both 1)\n\
         \x20   both    src/lease.py:14-16  A hits a label, B hits a label\n\
         \x20   only A  src/lease.py:20-21  A no label\n\
         \x20   only B  src/server.py:1-2  B no label\n\
         only in B: other\n"
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let (code, out, _) = distdebug(&json_args);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = &v["incidents"][0]["comparison"];
    assert!((c["jaccard"].as_f64().unwrap() - 1.0 / 7.0).abs() < 1e-12);
    assert_eq!(c["regions"][0]["presence"], "both");
    assert_eq!(v["only_in_b"], json!(["other"]));

    // Without the incident, the comparison stands without scores (and says why).
    let (code, out, err) = distdebug(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--dir",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("compared without scores"), "{err}");
    assert!(out.contains("no scores (no labels)"), "{out}");
    // A results folder that does not exist.
    let (code, _, err) = distdebug(&["compare", a.to_str().unwrap(), "results/none"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("results/none: no such results folder"),
        "{err}"
    );
}

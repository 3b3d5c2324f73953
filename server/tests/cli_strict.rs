//! The command line to the letter of its documentation: each test here failed before the
//! fix it covers (issue 14's list).

mod cli_support;

use cli_support::repo_root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `distdebug ARGS` in `cwd` without `$DISTDEBUG_INCIDENTS`: (status, stdout, stderr).
fn run_in(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(args)
        .current_dir(cwd)
        .env_remove("DISTDEBUG_INCIDENTS")
        // A repository cache of the test's own: the user's may hold upstream repositories.
        .env("DISTDEBUG_REPO_CACHE", cwd.join("repo-cache"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An incidents folder with the tiny-lease fixture under `ids` (each a copy with its own id).
fn incidents(root: &Path, ids: &[&str]) -> PathBuf {
    let dir = root.join("incidents");
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = repo_root().join("tests/fixtures/incidents/tiny-lease");
    for id in ids {
        let to = dir.join(id);
        let ok = Command::new("cp")
            .arg("-r")
            .arg(&fixture)
            .arg(&to)
            .status()
            .unwrap();
        assert!(ok.success());
        let manifest = to.join("incident.json");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(
            &manifest,
            text.replace("\"tiny-lease\"", &format!("\"{id}\"")),
        )
        .unwrap();
    }
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn run_takes_several_ids_after_one_incident_flag_and_repeated_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let inc = incidents(tmp.path(), &["one", "two", "three"]);
    let out = tmp.path().join("results/base");
    let (code, _, err) = run_in(
        tmp.path(),
        &[
            "run",
            "--agent",
            "baseline",
            "--incident",
            "one",
            "two",
            "--incident",
            "three",
            "--attempts",
            "1",
            "--offline",
            "--dir",
            s(&inc),
            "--out",
            s(&out),
        ],
    );
    assert_eq!(code, 0, "{err}");
    for id in ["one", "two", "three"] {
        assert!(
            out.join(id).join("attempt-1/diagnosis.json").is_file(),
            "{id}: {err}"
        );
    }
}

#[test]
fn a_settings_file_with_an_unknown_key_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let inc = incidents(tmp.path(), &["tiny-lease"]);
    let cfg = tmp.path().join("distdebug.toml");
    std::fs::write(&cfg, "bogus = 1\n").unwrap();
    let out = tmp.path().join("results/x");
    let (code, _, err) = run_in(
        tmp.path(),
        &[
            "run",
            "--incident",
            "tiny-lease",
            "--dir",
            s(&inc),
            "--out",
            s(&out),
            "--config",
            s(&cfg),
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("bogus") && err.contains("distdebug.toml"),
        "{err}"
    );
}

#[test]
fn lsp_takes_dir() {
    let (code, _, err) = run_in(&repo_root(), &["lsp", "--dir", "tests/fixtures/incidents"]);
    assert_eq!(
        code, 0,
        "the stream ends at once, the server with it: {err}"
    );
}

#[test]
fn score_names_a_missing_incidents_folder_once() {
    let tmp = tempfile::tempdir().unwrap();
    let inc = incidents(tmp.path(), &["a1", "a2", "a3"]);
    let out = tmp.path().join("results/base");
    let (code, _, err) = run_in(
        tmp.path(),
        &[
            "run",
            "--incident",
            "a1",
            "a2",
            "a3",
            "--attempts",
            "1",
            "--offline",
            "--dir",
            s(&inc),
            "--out",
            s(&out),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run_in(
        tmp.path(),
        &["score", s(&out), "--dir", "/missing-incidents"],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.matches("/missing-incidents").count(), 1, "{err}");
}

#[test]
fn report_refuses_an_out_file_in_a_missing_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("missing/x.html");
    let (code, _, err) = run_in(
        tmp.path(),
        &[
            "report",
            s(&tmp.path().join("results/none")),
            "--out",
            s(&target),
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no such folder"), "{err}");
    assert!(!tmp.path().join("missing").exists(), "no folder made");
}

#[test]
fn bench_help_lists_every_benchmark() {
    let (code, out, _) = run_in(&repo_root(), &["bench", "--help"]);
    assert_eq!(code, 0);
    for b in ["index", "attempt", "score", "lsp", "annotate", "document"] {
        assert!(out.contains(&format!("  {b}")), "{b}: {out}");
    }
}

/// An attempt folder with this diagnosis (and a minimal trajectory).
fn attempt(results: &Path, id: &str, folder: &str, diagnosis: &str) {
    let dir = results.join(id).join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("diagnosis.json"), diagnosis).unwrap();
    std::fs::write(
        dir.join("trajectory.json"),
        r#"{"incident":"tiny-lease","attempt":1,"agent":"t","model":null,"started_at":"","finished_at":"","exit":"submitted","usage":{},"steps":[]}"#,
    )
    .unwrap();
}

const GOOD: &str = r#"{"blocks":[{"path":"src/lease.py","start_line":14,"end_line":16}]}"#;

#[test]
fn only_attempt_k_folders_count_and_the_others_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let inc = incidents(tmp.path(), &["tiny-lease"]);
    let results = tmp.path().join("results/ext");
    for folder in ["attempt-1", "attempt-0", "attempt-01"] {
        attempt(&results, "tiny-lease", folder, GOOD);
    }
    let (code, out, err) = run_in(
        tmp.path(),
        &["score", s(&results), "--dir", s(&inc), "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let per = &v["configs"][0]["per_incident"][0];
    assert_eq!(
        per["attempts"].as_array().map(|a| a.len()),
        Some(1),
        "{per}"
    );
    for bad in ["attempt-0", "attempt-01"] {
        assert!(err.contains(bad) && err.contains("skipped"), "{bad}: {err}");
    }
}

#[test]
fn an_optional_field_of_the_wrong_type_is_ignored_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let inc = incidents(tmp.path(), &["tiny-lease"]);
    let results = tmp.path().join("results/ext");
    attempt(
        &results,
        "tiny-lease",
        "attempt-1",
        r#"{"blocks":[{"path":"src/lease.py","start_line":14,"end_line":16,"rationale":5,"confidence":"high"}]}"#,
    );
    let (code, _, err) = run_in(tmp.path(), &["score", s(&results), "--dir", s(&inc)]);
    assert_eq!(code, 0, "{err}");
    let scores: Value = serde_json::from_str(
        &std::fs::read_to_string(results.join("tiny-lease/attempt-1/diagnosis_scores.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(scores["schema_valid"], true, "{scores}");
    assert_eq!(
        scores["ignored"][0]["path"], "blocks[0].rationale",
        "{scores}"
    );
    assert_eq!(scores["ignored"][1]["expected"], "a number", "{scores}");
    assert!(scores["block_coverage"].as_f64().unwrap() > 0.0, "{scores}");
}

#[test]
fn compare_says_which_side_lacks_the_chosen_attempt() {
    let tmp = tempfile::tempdir().unwrap();
    let inc = incidents(tmp.path(), &["tiny-lease"]);
    let (a, b) = (tmp.path().join("results/a"), tmp.path().join("results/b"));
    attempt(&a, "tiny-lease", "attempt-1", GOOD);
    attempt(&b, "tiny-lease", "attempt-1", GOOD);
    attempt(&b, "tiny-lease", "attempt-2", GOOD);
    let (_, out, err) = run_in(
        tmp.path(),
        &[
            "compare",
            s(&a),
            s(&b),
            "--attempt-a",
            "2",
            "--dir",
            s(&inc),
        ],
    );
    let all = format!("{out}{err}");
    assert!(!all.contains("only in B"), "{all}");
    assert!(all.contains("has no attempt 2"), "{all}");
}

#[test]
fn demo_says_which_incidents_ran_and_which_upstream_ones_it_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let inc = incidents(tmp.path(), &["tiny-lease"]);
    let upstream = "etcd-raft-inflight-bytes-stall";
    let ok = Command::new("cp")
        .arg("-r")
        .arg(repo_root().join("incidents").join(upstream))
        .arg(inc.join(upstream))
        .status()
        .unwrap();
    assert!(ok.success());
    let out_dir = tmp.path().join("results/demo");
    let (code, out, err) = run_in(
        tmp.path(),
        &[
            "demo",
            "--dir",
            s(&inc),
            "--out",
            s(&out_dir),
            "--jobs",
            "1",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(tiny-lease)"), "{out}");
    assert!(
        out.contains("skipped 1 upstream incident(s)") && out.contains(upstream),
        "{out}"
    );
}

//! `distdebug run --agent baseline` end to end on the tiny-lease fixture: the files of an
//! attempt (the attempt format, docs/agents.md) and `run.json` are written, and the diagnosis names the labeled block.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn distdebug(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(args)
        .current_dir(cwd)
        .env_remove("DISTDEBUG_INCIDENTS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn run_writes_every_file_of_each_attempt_and_run_json() {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("results/baseline");
    let incidents = repo_root().join("tests/fixtures/incidents");
    let (code, _, err) = distdebug(
        &[
            "run",
            "--agent",
            "baseline",
            "--incident",
            "tiny-lease",
            "--attempts",
            "2",
            "--jobs",
            "2",
            "--offline",
            "--dir",
            incidents.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        scratch.path(),
    );
    assert_eq!(code, 0, "{err}");
    for k in 1..=2 {
        let dir = out.join(format!("tiny-lease/attempt-{k}"));
        let d = read_json(&dir.join("diagnosis.json"));
        assert_eq!(d["incident"], "tiny-lease");
        let blocks = d["blocks"].as_array().unwrap();
        let most = distdebug::agent::baseline::BaselineConfig::default().max_blocks;
        assert!(!blocks.is_empty() && blocks.len() <= most, "{d}");
        // The grant log line is the rarest evidence; its statement is inside the label 13-18.
        let hit = blocks
            .iter()
            .find(|b| {
                b["path"] == "src/lease.py"
                    && b["start_line"].as_u64().unwrap() <= 18
                    && b["end_line"].as_u64().unwrap() >= 13
            })
            .unwrap_or_else(|| panic!("no block reaches the label: {d}"));
        let (s, e) = (
            hit["start_line"].as_u64().unwrap(),
            hit["end_line"].as_u64().unwrap(),
        );
        assert!(e - s < 12, "a small block, not the whole file: {hit}");
        assert!(hit["rationale"].as_str().unwrap().contains("granted lease"));

        let scores = read_json(&dir.join("diagnosis_scores.json"));
        assert_eq!(scores["attempt"], k);
        assert_eq!(scores["block_coverage"], 1.0, "{scores}");

        let t = read_json(&dir.join("trajectory.json"));
        assert_eq!(t["agent"], "baseline");
        assert_eq!(t["attempt"], k);
        assert_eq!(t["exit"], "submitted");
        let steps = t["steps"].as_array().unwrap();
        assert!(steps.len() >= 5);
        assert_eq!(steps.last().unwrap()["kind"], "submit");
        // The live trajectory holds the same steps, one JSON object a line.
        let live = std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap();
        assert_eq!(live.lines().count(), steps.len());
        // What the agent read is recorded, and it never read outside the workspace.
        let read: Vec<&str> = steps
            .iter()
            .flat_map(|s| s["paths_read"].as_array().cloned().unwrap_or_default())
            .map(|p| p["path"].as_str().unwrap_or("").to_string())
            .map(|p| Box::leak(p.into_boxed_str()) as &str)
            .collect();
        assert!(read.contains(&"src/lease.py"), "{read:?}");
        assert!(read
            .iter()
            .all(|p| !p.starts_with('/') && !p.contains("labels")));
    }
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["agent"], "baseline");
    assert_eq!(run["settings"]["attempts"], 2);
    assert_eq!(run["settings"]["jobs"], 2);
    assert_eq!(run["settings"]["incidents"][0], "tiny-lease");
    assert!(run["settings"]["max_blocks"].as_u64().is_some());
    assert!(!run["finished_at"].as_str().unwrap().is_empty());
}

#[test]
fn run_rejects_zero_attempts_and_zero_jobs_as_usage_errors() {
    let scratch = tempfile::tempdir().unwrap();
    let incidents = repo_root().join("tests/fixtures/incidents");
    for flag in ["--attempts", "--jobs"] {
        let (code, _, err) = distdebug(
            &[
                "run",
                "--incident",
                "tiny-lease",
                flag,
                "0",
                "--dir",
                incidents.to_str().unwrap(),
                "--out",
                "r",
            ],
            scratch.path(),
        );
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(err.contains(flag), "{err}");
    }
}

#[test]
fn demo_runs_the_bundled_incidents_and_exits_zero() {
    let scratch = tempfile::tempdir().unwrap();
    let incidents = repo_root().join("tests/fixtures/incidents");
    let (code, out, err) = distdebug(
        &["demo", "--dir", incidents.to_str().unwrap()],
        scratch.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tiny-lease"), "{out}");
    assert!(out.contains("block coverage"), "the score table: {out}");
    let attempt = scratch
        .path()
        .join("results/demo/baseline/tiny-lease/attempt-1");
    assert!(attempt.join("diagnosis.json").is_file());
    let scores = read_json(&attempt.join("diagnosis_scores.json"));
    assert_eq!(scores["schema_valid"], true);
    assert_eq!(scores["block_coverage"], 1.0, "{scores}");
}

#[test]
fn bench_index_prints_its_figures() {
    let (code, out, err) = distdebug(
        &[
            "bench",
            "index",
            "tests/fixtures/incidents/tiny-lease/repo",
            "--runs",
            "1",
        ],
        &repo_root(),
    );
    assert_eq!(code, 0, "{err}");
    for word in ["files", "bytes", "blocks", " s,", "MB/s"] {
        assert!(out.contains(word), "{word}: {out}");
    }
}

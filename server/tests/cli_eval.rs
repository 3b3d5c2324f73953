//! `distdebug eval` end to end on the bundled incidents: the metrics table, the recall of each
//! stage, one line per incident, the JSON it writes and reads back, and upstream incidents
//! whose repository is not cached being skipped with the reason.

mod cli_support;

use cli_support::repo_root;
use std::process::Command;

fn eval(args: &[&str], cache: &std::path::Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .arg("eval")
        .args(args)
        .current_dir(repo_root())
        .env_remove("DISTDEBUG_INCIDENTS")
        .env("DISTDEBUG_REPO_CACHE", cache)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn eval_measures_each_stage_and_reads_its_json_back() {
    let scratch = tempfile::tempdir().unwrap();
    let work = scratch.path().join("work");
    let json = scratch.path().join("eval.json");
    let (code, out, err) = eval(
        &[
            "--set",
            "self-contained",
            "--work",
            work.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        scratch.path(),
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = v["results"].as_array().unwrap();
    assert!(results.len() >= 10, "{v}");
    for r in results {
        let id = r["id"].as_str().unwrap();
        assert!(out.contains(id), "{id} missing from:\n{out}");
        assert!(!r["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "upstream"));
        // Every label has its ranks; a named label's file must be a candidate file.
        for l in r["labels"].as_array().unwrap() {
            if l["reached"] == true {
                assert!(l["file_rank"].as_u64().is_some(), "{r}");
                assert!(l["block_rank"].as_u64().is_some(), "{r}");
            }
        }
    }
    let all = out.lines().find(|l| l.starts_with("all ")).unwrap();
    assert!(
        all.split_whitespace().nth(1) == Some(&results.len().to_string()),
        "{all}"
    );
    assert!(out.contains("recall of each stage"), "{out}");
    assert!(out.contains("file@1") && out.contains("block@all"), "{out}");
    // The rankings at fixed block counts: more blocks never cover less.
    let fixed = v["fixed_counts"].as_array().unwrap();
    let ks: Vec<u64> = fixed.iter().map(|f| f["k"].as_u64().unwrap()).collect();
    assert_eq!(ks, [1, 2, 3, 5], "{v}");
    let cov: Vec<f64> = fixed
        .iter()
        .map(|f| f["block_coverage"].as_f64().unwrap())
        .collect();
    assert!(cov.windows(2).all(|w| w[0] <= w[1] + 1e-12), "{cov:?}");
    assert_eq!(fixed[0]["incidents"].as_u64(), Some(results.len() as u64));
    assert!(out.contains("with the best k places named"), "{out}");
    // The workspaces are kept for the next run.
    assert!(work.join(results[0]["id"].as_str().unwrap()).is_dir());

    // The tables again from the JSON, without running anything.
    let (code, again, err) = eval(&["--from", json.to_str().unwrap()], scratch.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(again, out);

    // Against an earlier run with one incident's coverage lowered: a paired comparison that
    // names the incident and finds no change on the rest. The earlier run came from a build
    // with two features: only its results are compared.
    let mut earlier = v.clone();
    let first = earlier["results"][0]["id"].as_str().unwrap().to_string();
    earlier["results"][0]["metrics"]["block_coverage"] = serde_json::json!(-1.0);
    earlier["fitted_on_all"] = serde_json::json!({
        "held_out": "none", "training_incidents": 1, "max_blocks": 1, "min_relative": 0.5,
        "per_function": 1, "model": {"bias": 0.0, "weights": [0.5, 0.5]}
    });
    let earlier_path = scratch.path().join("earlier.json");
    std::fs::write(&earlier_path, earlier.to_string()).unwrap();
    let (code, paired, err) = eval(
        &[
            "--from",
            json.to_str().unwrap(),
            "--against",
            earlier_path.to_str().unwrap(),
        ],
        scratch.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        paired.contains(&format!("paired over {} incidents", results.len())),
        "{paired}"
    );
    assert!(
        paired.contains("coverage rose on 1 incident(s):"),
        "{paired}"
    );
    assert!(paired.contains(&first), "{paired}");
    assert!(
        paired.contains("coverage fell on 0 incident(s):"),
        "{paired}"
    );
    // Two runs pooled (here the run split in two halves) make the run's table again; the
    // fixed-count table belongs to one run's rankings and is left out.
    let half = results.len() / 2;
    let mut part_a = v.clone();
    let mut part_b = v.clone();
    part_a["results"] = serde_json::json!(results[..half].to_vec());
    part_b["results"] = serde_json::json!(results[half..].to_vec());
    let (path_a, path_b) = (scratch.path().join("a.json"), scratch.path().join("b.json"));
    std::fs::write(&path_a, part_a.to_string()).unwrap();
    std::fs::write(&path_b, part_b.to_string()).unwrap();
    let args = [
        "--from",
        path_b.to_str().unwrap(),
        "--from",
        path_a.to_str().unwrap(),
    ];
    let (code, pooled, err) = eval(&args, scratch.path());
    assert_eq!(code, 0, "{err}");
    let all_line = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("all "))
            .map(str::to_string)
    };
    assert_eq!(all_line(&pooled), all_line(&out), "{pooled}");
    assert!(pooled.contains("block@all"), "{pooled}");
    assert!(!pooled.contains("with the best k places named"), "{pooled}");
    // An incident in two pooled runs would count twice: an error naming it and both files.
    let args = [
        "--from",
        path_a.to_str().unwrap(),
        "--from",
        json.to_str().unwrap(),
    ];
    let (code, _, err) = eval(&args, scratch.path());
    assert_ne!(code, 0);
    assert!(
        err.contains(&first) && err.contains("a.json") && err.contains("eval.json"),
        "{err}"
    );

    // A missing earlier run is an error naming the file, before anything runs.
    let missing = scratch.path().join("missing.json");
    let (code, _, err) = eval(
        &[
            "--from",
            json.to_str().unwrap(),
            "--against",
            missing.to_str().unwrap(),
        ],
        scratch.path(),
    );
    assert_ne!(code, 0);
    assert!(err.contains("missing.json"), "{err}");
}

#[test]
fn upstream_incidents_without_a_cached_repository_are_skipped_with_the_reason() {
    let scratch = tempfile::tempdir().unwrap();
    let work = scratch.path().join("work");
    let (code, _, err) = eval(
        &["--set", "upstream", "--work", work.to_str().unwrap()],
        &scratch.path().join("empty-cache"),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is not in the repository cache"), "{err}");
    assert!(err.contains("no incident of"), "{err}");
}

//! `distdebug run` at scale: resuming (finished attempts skipped, partial and cancelled ones
//! redone), `--shard K/N` slices that together make the whole run, one configuration per
//! results folder, and Ctrl-C stopping cleanly.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn distdebug(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(args)
        .env_remove("DISTDEBUG_INCIDENTS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// An incidents folder with tiny-lease copied under each id in `ids`.
fn incidents(root: &Path, ids: &[&str]) -> PathBuf {
    let dir = root.join("incidents");
    for id in ids {
        copy_dir(
            &repo_root().join("tests/fixtures/incidents/tiny-lease"),
            &dir.join(id),
        );
        let p = dir.join(id).join("incident.json");
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("tiny-lease", id);
        std::fs::write(&p, text).unwrap();
    }
    dir
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn run_baseline(dir: &Path, out: &Path, attempts: &str, extra: &[&str]) -> (i32, String) {
    let mut args = vec![
        "run",
        "--agent",
        "baseline",
        "--all",
        "--attempts",
        attempts,
        "--offline",
        "--dir",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (code, _, err) = distdebug(&args);
    (code, err)
}

#[test]
fn a_rerun_skips_finished_attempts_and_redoes_partial_and_cancelled_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = incidents(tmp.path(), &["lease-a"]);
    let out = tmp.path().join("results/base");
    let (code, err) = run_baseline(&dir, &out, "3", &[]);
    assert_eq!(code, 0, "{err}");
    let a = |k: u32| out.join(format!("lease-a/attempt-{k}"));
    let started = read_json(&out.join("run.json"))["started_at"].clone();

    // attempt 1 finished: marked, so a rerun that redid it would lose the mark;
    // attempt 2 stopped before its trajectory.json; attempt 3 was cancelled by Ctrl-C.
    let mut t1 = read_json(&a(1).join("trajectory.json"));
    t1["marker"] = Value::from("kept");
    std::fs::write(a(1).join("trajectory.json"), t1.to_string()).unwrap();
    std::fs::remove_file(a(2).join("trajectory.json")).unwrap();
    std::fs::write(a(2).join("leftover.txt"), "partial").unwrap();
    let mut t3 = read_json(&a(3).join("trajectory.json"));
    t3["exit"] = Value::from("cancelled");
    std::fs::write(a(3).join("trajectory.json"), t3.to_string()).unwrap();

    let (code, err) = run_baseline(&dir, &out, "3", &["--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("2 attempt(s) to run on 1 incident(s); 1 already finished, skipped"),
        "{err}"
    );
    assert_eq!(read_json(&a(1).join("trajectory.json"))["marker"], "kept");
    assert!(
        !a(2).join("leftover.txt").exists(),
        "a partial attempt is redone from scratch"
    );
    assert_eq!(
        read_json(&a(2).join("trajectory.json"))["exit"],
        "submitted"
    );
    assert_eq!(
        read_json(&a(3).join("trajectory.json"))["exit"],
        "submitted"
    );
    assert!(
        a(2).join("diagnosis_scores.json").is_file(),
        "redone attempts are scored"
    );
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["started_at"], started, "run.json keeps the first start");
    assert_eq!(run["settings"]["jobs"], 2);

    // Nothing left to do: nothing runs. More attempts: only the new ones run.
    let (code, err) = run_baseline(&dir, &out, "3", &[]);
    assert_eq!(code, 0);
    assert!(
        err.contains("0 attempt(s) to run on 0 incident(s); 3 already finished"),
        "{err}"
    );
    let (code, err) = run_baseline(&dir, &out, "4", &[]);
    assert_eq!(code, 0);
    assert!(
        err.contains("1 attempt(s) to run on 1 incident(s); 3 already finished"),
        "{err}"
    );
    assert!(a(4).join("trajectory.json").is_file());
}

#[test]
fn shards_together_make_the_whole_run_each_attempt_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = incidents(tmp.path(), &["lease-a", "lease-b", "lease-c"]);
    let out = tmp.path().join("results/sharded");
    // 3 incidents x 2 attempts = 6 pairs over 4 shards: 1, 2, 1, 2 attempts.
    let mut seen: Vec<String> = Vec::new();
    for k in 0..4 {
        let shard = format!("{k}/4");
        let before = attempt_dirs(&out);
        let (code, err) = run_baseline(&dir, &out, "2", &["--shard", &shard]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains(&format!("(shard {shard} of 6 attempts in all)")),
            "{err}"
        );
        let new: Vec<String> = attempt_dirs(&out)
            .into_iter()
            .filter(|d| !before.contains(d))
            .collect();
        assert_eq!(new.len(), [1, 2, 1, 2][k], "shard {shard}: {new:?}");
        seen.extend(new);
        let run = read_json(&out.join("run.json"));
        assert_eq!(run["settings"]["shard"], shard.as_str());
        assert_eq!(run["settings"]["incidents"].as_array().unwrap().len(), 3);
    }
    seen.sort();
    let mut all = attempt_dirs(&out);
    all.sort();
    assert_eq!(seen, all);
    assert_eq!(all.len(), 6);
    // The same shard again finds its attempts finished.
    let (code, err) = run_baseline(&dir, &out, "2", &["--shard", "1/4"]);
    assert_eq!(code, 0);
    assert!(err.contains("0 attempt(s) to run"), "{err}");
    for bad in ["4/4", "x", "0/0"] {
        let (code, err) = run_baseline(&dir, &out, "2", &["--shard", bad]);
        assert_eq!(code, 2, "--shard {bad}: {err}");
        assert!(err.contains("expected K/N with 0 <= K < N"), "{err}");
    }
}

fn attempt_dirs(out: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for inc in std::fs::read_dir(out).into_iter().flatten().flatten() {
        if inc.path().is_dir() {
            for a in std::fs::read_dir(inc.path()).unwrap().flatten() {
                if a.path().join("trajectory.json").is_file() {
                    v.push(format!(
                        "{}/{}",
                        inc.file_name().to_string_lossy(),
                        a.file_name().to_string_lossy()
                    ));
                }
            }
        }
    }
    v
}

#[test]
fn a_results_folder_of_another_configuration_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = incidents(tmp.path(), &["lease-a"]);
    let out = tmp.path().join("results/mixed");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(
        out.join("run.json"),
        r#"{"agent": "llm", "model": "m", "harness": "distdebug-llm", "settings": {}}"#,
    )
    .unwrap();
    let (code, err) = run_baseline(&dir, &out, "1", &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("holds another configuration (agent \"llm\" here, \"baseline\" in this run)"),
        "{err}"
    );
    assert!(!out.join("lease-a").exists(), "nothing was run");
}

#[test]
fn ctrl_c_stops_cleanly_and_the_next_run_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = incidents(tmp.path(), &["lease-a"]);
    let out = tmp.path().join("results/slow");
    // An external agent that waits (first run), then answers (second run): the command is
    // the same, so both runs are the same configuration.
    let agent = tmp.path().join("agent.sh");
    std::fs::write(&agent, "sleep 60\n").unwrap();
    let command = format!("sh {}", agent.display());
    let args = |out: &Path| -> Vec<String> {
        [
            "run",
            "--agent",
            "command",
            "--agent-command",
            &command,
            "--no-sandbox",
            "--all",
            "--attempts",
            "2",
            "--jobs",
            "1",
            "--offline",
            "--dir",
            dir.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(args(&out))
        .env_remove("DISTDEBUG_INCIDENTS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let live = out.join("lease-a/attempt-1/trajectory.jsonl");
    let t0 = Instant::now();
    while !live.exists() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if !live.exists() {
        let _ = child.kill();
        let _ = child.wait();
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
        let listing = walk(&out);
        panic!("attempt 1 never started; stderr: {err}\nresults: {listing:?}");
    }
    std::thread::sleep(Duration::from_millis(300));
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let t1 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t1.elapsed() < Duration::from_secs(20),
            "Ctrl-C did not stop the run"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted: 0 attempt(s) finished in this run, 2 left"),
        "{err}"
    );
    // The cancelled attempt says so; the next was never started; no temp file is left.
    assert_eq!(
        read_json(&out.join("lease-a/attempt-1/trajectory.json"))["exit"],
        "cancelled"
    );
    assert!(!out.join("lease-a/attempt-2").exists());
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["interrupted"], true);
    assert!(!run["finished_at"].as_str().unwrap().is_empty());
    let mut stack = vec![out.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                !name.starts_with(".distdebug-tmp"),
                "{}",
                e.path().display()
            );
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
    }

    std::fs::write(
        &agent,
        "printf '{\"blocks\":[{\"path\":\"src/lease.py\",\"start_line\":13,\"end_line\":18}]}' > \"$DISTDEBUG_OUTPUT/diagnosis.json\"\n",
    )
    .unwrap();
    let a = args(&out);
    let (code, _, err) = distdebug(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("2 attempt(s) to run"),
        "the cancelled attempt is redone: {err}"
    );
    for k in 1..=2 {
        let t = read_json(&out.join(format!("lease-a/attempt-{k}/trajectory.json")));
        assert_eq!(t["exit"], "submitted", "{t}");
    }
    assert!(read_json(&out.join("run.json"))
        .get("interrupted")
        .is_none());
}

/// Every path below `dir` (for failure messages).
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            out.push(e.path().display().to_string());
            out.extend(walk(&e.path()));
        }
    }
    out
}

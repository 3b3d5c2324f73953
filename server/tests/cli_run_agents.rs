//! `distdebug run --agent llm|command` through the binary: flags, distdebug.toml, run.json
//! without the key, and clear usage errors.

mod support;

use std::path::Path;
use support::*;

async fn distdebug(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_distdebug"));
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("DISTDEBUG_MODEL")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DISTDEBUG_INCIDENTS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().await.unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn incidents(root: &Path) -> String {
    let dst = root.join("incidents/tiny-lease");
    copy_dir(
        &repo_root().join("tests/fixtures/incidents/tiny-lease"),
        &dst,
    );
    root.join("incidents").display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_agent_runs_from_flags_and_config_and_keeps_the_key_out_of_files() {
    let dir = scratch();
    let inc = incidents(dir.path());
    let stub = start_stub(vec![
        tool_call("a", "search", r#"{"pattern": "ttl"}"#, 40, 4),
        tool_call("b", "submit", r#"{"summary": "ttl", "blocks": [{"path": "src/lease.py", "start_line": 15, "end_line": 15}]}"#, 50, 5),
    ])
    .await;
    std::fs::write(
        dir.path().join("distdebug.toml"),
        "[llm]\nmodel = \"from-config\"\nretry_base_ms = 10\n[prices.from-config]\nprompt_per_mtok = 2.0\n",
    )
    .unwrap();
    let out = dir.path().join("results/llm");
    let (code, stderr) = distdebug(
        &[
            "run",
            "--agent",
            "llm",
            "--endpoint",
            &stub.base_url,
            "--incident",
            "tiny-lease",
            "--dir",
            &inc,
            "--attempts",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--offline",
            "--max-steps",
            "5",
        ],
        dir.path(),
        &[("OPENAI_API_KEY", "sk-cli-secret")],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("tiny-lease attempt 1: submitted (1 blocks)"),
        "{stderr}"
    );
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["agent"], "llm");
    assert_eq!(info["model"], "from-config");
    assert_eq!(info["settings"]["max_steps"], 5);
    assert_eq!(
        info["endpoint_host"],
        stub.base_url
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
    );
    let t: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("tiny-lease/attempt-1/trajectory.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(t["usage"]["prompt_tokens"], 90);
    assert!((t["usage"]["cost_usd"].as_f64().unwrap() - 90.0 * 2.0 / 1e6).abs() < 1e-12);
    assert!(stub.requests()[0].head.contains("sk-cli-secret"));
    assert!(!all_text_under(&out).contains("sk-cli-secret"));
    assert!(!stderr.contains("sk-cli-secret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_command_runs_unconfined_only_when_asked() {
    let dir = scratch();
    let inc = incidents(dir.path());
    let out = dir.path().join("results/cmd");
    let agent = r#"echo '{"blocks":[{"path":"src/lease.py","start_line":13,"end_line":18}]}' > "$DISTDEBUG_OUTPUT/diagnosis.json""#;
    let (code, stderr) = distdebug(
        &[
            "run",
            "--agent",
            "command",
            "--agent-command",
            agent,
            "--no-sandbox",
            "--incident",
            "tiny-lease",
            "--dir",
            &inc,
            "--attempts",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--offline",
        ],
        dir.path(),
        &[],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr.matches("without a sandbox").count(),
        1,
        "said once: {stderr}"
    );
    for k in [1, 2] {
        assert!(
            stderr.contains(&format!("tiny-lease attempt {k}: submitted (1 blocks)")),
            "{stderr}"
        );
    }
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["agent"], "command");
    assert_eq!(info["settings"]["sandbox"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_settings_are_usage_errors() {
    let dir = scratch();
    let inc = incidents(dir.path());
    let out = dir.path().join("results/x");
    let o = out.to_str().unwrap();
    let (code, stderr) = distdebug(
        &[
            "run",
            "--agent",
            "llm",
            "--no-sandbox",
            "--incident",
            "tiny-lease",
            "--dir",
            &inc,
            "--out",
            o,
        ],
        dir.path(),
        &[],
    )
    .await;
    assert_eq!(code, 2);
    assert!(stderr.contains("no model for --agent llm"), "{stderr}");
    let (code, stderr) = distdebug(
        &[
            "run",
            "--agent",
            "command",
            "--incident",
            "tiny-lease",
            "--dir",
            &inc,
            "--out",
            o,
        ],
        dir.path(),
        &[],
    )
    .await;
    assert_eq!(code, 2);
    assert!(stderr.contains("--agent-command"), "{stderr}");
    std::fs::write(dir.path().join("bad.toml"), "[llm]\nmodle = 1\n").unwrap();
    let (code, stderr) = distdebug(
        &[
            "run",
            "--agent",
            "llm",
            "--config",
            "bad.toml",
            "--incident",
            "tiny-lease",
            "--dir",
            &inc,
            "--out",
            o,
        ],
        dir.path(),
        &[],
    )
    .await;
    // A bad input file (here the config) exits 1; 2 is for usage errors.
    assert_eq!(code, 1);
    assert!(
        stderr.contains("bad.toml") && stderr.contains("modle"),
        "{stderr}"
    );
}

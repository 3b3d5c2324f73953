//! Hostile agents against the real binary, as CI runs it (as root): each tries to read what it
//! must not see, forge its result, keep processes alive, reach the network or leak the key.
//! Each must be blocked, the attempt flagged or invalid with the reason, the host unchanged
//! outside the output folder, and no key in any file.

mod cli_support;

use cli_support::repo_root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const KEY: &str = "sk-hostile-test-key-0123456789";

/// A scratch corpus: the fixture incident in `incidents/`, a second copy of it in a git
/// checkout (as the project's own checkout would hold it), and a marker file on the host.
struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl World {
    fn new() -> World {
        // Not under /tmp: the sandbox's own /tmp would hide it for free (and take the
        // agent's writes to it), so a checkout under /tmp puts its world in /var/tmp.
        let target = repo_root().join("target");
        let parent = if target.starts_with("/tmp") {
            PathBuf::from("/var/tmp")
        } else {
            target
        };
        let tmp = tempfile::tempdir_in(parent).unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let fixture = repo_root().join("tests/fixtures/incidents/tiny-lease");
        copy_dir(&fixture, &root.join("incidents/tiny-lease"));
        copy_dir(&fixture, &root.join("checkout/incidents/tiny-lease"));
        let git = |args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(root.join("checkout"))
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .unwrap()
        };
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-qm", "corpus"]);
        std::fs::write(root.join("host-marker"), "untouched").unwrap();
        std::fs::create_dir_all(root.join("agents")).unwrap();
        World { _tmp: tmp, root }
    }

    fn agent(&self, name: &str, body: &str) -> PathBuf {
        let p = self.root.join("agents").join(format!("{name}.sh"));
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn distdebug(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
            .args(args)
            .current_dir(&self.root)
            .env("DISTDEBUG_INCIDENTS", self.root.join("incidents"))
            .env("DISTDEBUG_REPO_CACHE", self.root.join("cache"))
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs one attempt of the agent script and scores it; returns the attempt folder and the
    /// per-attempt score.
    fn run(&self, config: &str, script: &Path, extra: &[&str]) -> (PathBuf, Value, String) {
        let out = self.root.join("results").join(config);
        let out_s = out.to_string_lossy().into_owned();
        let mut args = vec![
            "run",
            "--agent",
            "command",
            "--agent-command",
            script.to_str().unwrap(),
            "--incident",
            "tiny-lease",
            "--attempts",
            "1",
            "--timeout",
            "60",
            "--out",
            &out_s,
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = self.distdebug(&args, &[("OPENAI_API_KEY", KEY)]);
        assert_eq!(code, 0, "run failed: {err}");
        let (code, json, serr) = self.distdebug(&["score", &out_s, "--json"], &[]);
        assert_eq!(code, 0, "score failed: {serr}");
        let v: Value = serde_json::from_str(&json).unwrap();
        let attempt = v["configs"][0]["per_incident"][0]["attempts"][0].clone();
        (out.join("tiny-lease/attempt-1"), attempt, err)
    }

    fn host_untouched(&self) {
        assert_eq!(
            std::fs::read_to_string(self.root.join("host-marker")).unwrap(),
            "untouched"
        );
        let labels =
            std::fs::read_to_string(self.root.join("incidents/tiny-lease/labels.json")).unwrap();
        assert!(labels.contains("blocks"));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

fn sandbox_available() -> bool {
    let ok = Command::new("bwrap")
        .args(["--unshare-user", "--ro-bind", "/", "/", "--", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var_os("CI").is_some() {
        panic!("bubblewrap must work on CI: .ci/install installs it");
    }
    if !ok {
        eprintln!("SKIPPED: bubblewrap is not available here");
    }
    ok
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Every file under `dir`, for "no key anywhere" checks.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.push_str(&all_text(&p));
            } else if e.file_type().is_ok_and(|t| t.is_file()) {
                out.push_str(&String::from_utf8_lossy(
                    &std::fs::read(&p).unwrap_or_default(),
                ));
            }
        }
    }
    out
}

#[test]
fn root_in_the_sandbox_cannot_mount_see_the_host_or_keep_capabilities() {
    if !sandbox_available() {
        return;
    }
    let w = World::new();
    let inc = w.root.join("incidents/tiny-lease");
    let checkout = w.root.join("checkout");
    let script = w.agent(
        "escape",
        &format!(
            r#"o="$DISTDEBUG_OUTPUT"
grep CapEff /proc/self/status > "$o/caps"
umount -l /tmp 2>/dev/null && echo umounted >> "$o/escaped"
mount -o remount,bind,rw / 2>/dev/null && echo remounted >> "$o/escaped"
mount -t tmpfs none /mnt 2>/dev/null && echo mounted >> "$o/escaped"
unshare -U -r true 2>/dev/null && echo userns >> "$o/escaped"
cat {inc}/labels.json {inc}/fix.patch >> "$o/stolen" 2>/dev/null
cat {checkout}/incidents/tiny-lease/labels.json >> "$o/stolen" 2>/dev/null
git -C {checkout} show HEAD:incidents/tiny-lease/fix.patch >> "$o/stolen" 2>/dev/null
cat /proc/1/root{inc}/labels.json >> "$o/stolen" 2>/dev/null
for f in /proc/self/fd/*; do readlink "$f"; done > "$o/fds"
ls /proc/{parent}/ >/dev/null 2>&1 && echo parent-visible >> "$o/escaped"
ls -a "$HOME" > "$o/home"
ls /root /etc/shadow >> "$o/stolen" 2>/dev/null
touch {marker} 2>/dev/null && echo wrote-host >> "$o/escaped"
echo x > {marker} 2>/dev/null && echo wrote-host >> "$o/escaped"
echo x > "$DISTDEBUG_WORKSPACE/lease.py" 2>/dev/null && echo wrote-workspace >> "$o/escaped"
echo '{{"blocks":[]}}' > "$o/diagnosis.json""#,
            inc = inc.display(),
            checkout = checkout.display(),
            marker = w.root.join("host-marker").display(),
            parent = std::process::id(),
        ),
    );
    let (dir, attempt, _) = w.run("escape", &script, &[]);
    let out = dir.join("agent");
    assert_eq!(
        read(&out.join("caps")).split_whitespace().last(),
        Some("0000000000000000")
    );
    assert_eq!(read(&out.join("escaped")), "", "escaped the sandbox");
    assert_eq!(read(&out.join("stolen")), "", "read what it must not see");
    assert!(!read(&out.join("fds")).contains("labels.json"));
    assert_eq!(
        read(&out.join("home")).split_whitespace().count(),
        2,
        "home must be empty"
    );
    assert_eq!(attempt["schema_valid"], true);
    w.host_untouched();
}

#[test]
fn a_linked_or_special_diagnosis_is_never_followed_or_packed() {
    if !sandbox_available() {
        return;
    }
    let w = World::new();
    let labels = w.root.join("incidents/tiny-lease/labels.json");
    for (name, body) in [
        ("symlink", format!("ln -s {} \"$DISTDEBUG_OUTPUT/diagnosis.json\"", labels.display())),
        ("fifo", "mkfifo \"$DISTDEBUG_OUTPUT/diagnosis.json\"".to_string()),
        (
            "traj-link",
            format!(
                "ln -s {} \"$DISTDEBUG_OUTPUT/trajectory.json\"; echo '{{\"blocks\":[]}}' > \"$DISTDEBUG_OUTPUT/diagnosis.json\"",
                labels.display()
            ),
        ),
    ] {
        let script = w.agent(name, &body);
        let (dir, attempt, _) = w.run(name, &script, &[]);
        if name == "traj-link" {
            let steps = read(&dir.join("trajectory.json"));
            assert!(steps.contains("symbolic link"), "{name}: {steps}");
            continue;
        }
        assert_eq!(attempt["schema_valid"], false, "{name}: {attempt}");
        assert!(!dir.join("diagnosis.json").exists(), "{name}: a diagnosis was written");
        let traj = read(&dir.join("trajectory.json"));
        assert!(traj.contains("\"exit\": \"error\"") || traj.contains("\"exit\":\"error\""), "{name}: {traj}");
    }
    // A results tree with a linked diagnosis (as a forged submission would carry) is not
    // scored and not packed.
    let forged = w
        .root
        .join("results/symlink/tiny-lease/attempt-1/diagnosis.json");
    std::os::unix::fs::symlink(&labels, &forged).unwrap();
    let cfg = w.root.join("results/symlink");
    let (_, json, _) = w.distdebug(&["score", cfg.to_str().unwrap(), "--json"], &[]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let a = &v["configs"][0]["per_incident"][0]["attempts"][0];
    assert_eq!(a["schema_valid"], false, "{a}");
    let pkg = w.root.join("sub.tar.gz");
    let (code, _, err) = w.distdebug(
        &[
            "submit",
            cfg.to_str().unwrap(),
            "--out",
            pkg.to_str().unwrap(),
            "--attempts",
            "1",
        ],
        &[],
    );
    assert_ne!(code, 0, "a linked diagnosis was packed");
    assert!(err.contains("symbolic link"), "{err}");
    w.host_untouched();
}

#[test]
fn connections_other_than_the_endpoint_fail_and_flag_the_attempt() {
    if !sandbox_available() {
        return;
    }
    let w = World::new();
    let script = w.agent(
        "net",
        r#"o="$DISTDEBUG_OUTPUT"
curl -s -m 5 https://pypi.example/simple -o /dev/null; echo "curl=$?" > "$o/net"
python3 -c "import urllib.request as u; u.urlopen('http://prices.example/models.json', timeout=5)" 2>/dev/null && echo fetched >> "$o/net"
echo '{"blocks":[]}' > "$o/diagnosis.json""#,
    );
    let (dir, attempt, _) = w.run("net", &script, &[]);
    assert!(!read(&dir.join("agent/net")).contains("fetched"));
    assert_eq!(attempt["flagged"], true, "{attempt}");
    let reasons = attempt["leakage"].to_string();
    assert!(reasons.contains("prices.example:80"), "{reasons}");
    let record: Value = serde_json::from_str(&read(&dir.join("sandbox.json"))).unwrap();
    assert_eq!(record["network"], "endpoint");
    // The host network stays an explicit, recorded opt-out.
    let (_, json) = {
        let (_, _, _) = w.run(
            "net-host",
            &w.agent(
                "quiet",
                r#"echo '{"blocks":[]}' > "$DISTDEBUG_OUTPUT/diagnosis.json""#,
            ),
            &["--network", "host"],
        );
        (0, read(&w.root.join("results/net-host/run.json")))
    };
    assert!(
        json.contains("\"host\""),
        "run.json must record the host network: {json}"
    );
}

#[test]
fn no_process_outlives_its_attempt_with_or_without_the_sandbox() {
    let w = World::new();
    let script = w.agent(
        "survivor",
        r#"setsid sleep 1000 & echo $! > "$DISTDEBUG_OUTPUT/pid"
(setsid sh -c 'sleep 1000' &) ; echo '{"blocks":[]}' > "$DISTDEBUG_OUTPUT/diagnosis.json""#,
    );
    let mut modes: Vec<(&str, Vec<&str>)> = vec![("nosandbox", vec!["--no-sandbox"])];
    if sandbox_available() {
        modes.push(("sandbox", vec![]));
    }
    for (name, extra) in modes {
        let before = sleepers();
        let (dir, _, _) = w.run(name, &script, &extra);
        assert!(
            dir.join("agent/pid").exists(),
            "{name}: the agent did not run"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
        let after = sleepers();
        let survivors: Vec<_> = after.iter().filter(|p| !before.contains(p)).collect();
        assert!(survivors.is_empty(), "{name}: survivors {survivors:?}");
    }
}

/// Pids of `sleep 1000` processes on the machine.
fn sleepers() -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'));
        if cmd == b"sleep\x001000\x00" && !zombie {
            out.push(pid);
        }
    }
    out
}

#[test]
fn many_processes_are_capped_where_cgroups_allow_it() {
    let limited = Path::new("/sys/fs/cgroup/pids/cgroup.procs").exists();
    if !limited || !sandbox_available() {
        eprintln!("SKIPPED: no writable pids cgroup here");
        return;
    }
    let w = World::new();
    // Bounded on purpose: 2,000 sleepers, harmless even where no limit applies. The shell
    // stops at the first fork the limit refuses.
    let script = w.agent(
        "forks",
        r#"echo '{"blocks":[]}' > "$DISTDEBUG_OUTPUT/diagnosis.json"
i=0
while [ $i -lt 2000 ]; do sleep 31 & i=$((i+1)); done
echo "started all $i" > "$DISTDEBUG_OUTPUT/all""#,
    );
    let (dir, _, _) = w.run("forks", &script, &[]);
    assert!(
        !dir.join("agent/all").exists(),
        "2,000 processes were allowed"
    );
    let stderr = read(&dir.join("agent-stderr.log"));
    assert!(
        stderr.contains("fork"),
        "the limit should refuse a fork: {stderr}"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x0031\x00"))
        .count();
    assert_eq!(left, 0, "sleepers outlived the attempt");
}

#[test]
fn the_key_is_in_no_file_and_no_message() {
    let w = World::new();
    let script = w.agent(
        "leaky",
        r#"o="$DISTDEBUG_OUTPUT"
echo "my key is $OPENAI_API_KEY"; echo "Authorization: Bearer $OPENAI_API_KEY" >&2
echo "{\"kind\":\"thought\",\"text\":\"key $OPENAI_API_KEY\"}" >> "$o/trajectory.jsonl"
echo "{\"blocks\":[{\"path\":\"lease.py\",\"start_line\":1,\"end_line\":1,\"rationale\":\"$OPENAI_API_KEY\"}]}" > "$o/diagnosis.json"
exit 3"#,
    );
    let (_, _, stderr) = w.run("leaky", &script, &["--no-sandbox"]);
    assert!(!stderr.contains(KEY), "stderr: {stderr}");
    let everything = all_text(&w.root.join("results/leaky"));
    assert!(
        everything.contains("[redacted]"),
        "the echo should be kept, redacted"
    );
    // The agent's own output folder is the agent's; distdebug's files must be clean.
    let attempt = w.root.join("results/leaky/tiny-lease/attempt-1");
    for f in [
        "trajectory.json",
        "trajectory.jsonl",
        "agent-stdout.log",
        "agent-stderr.log",
        "diagnosis_scores.json",
    ] {
        assert!(!read(&attempt.join(f)).contains(KEY), "{f} holds the key");
    }
}

#[test]
fn a_model_endpoint_that_echoes_the_key_does_not_leak_it() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { continue };
            let mut buf = vec![0u8; 65536];
            let n = c.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let auth = req
                .lines()
                .find(|l| l.to_ascii_lowercase().starts_with("authorization:"))
                .unwrap_or("")
                .to_string();
            let body = format!("{{\"error\":{{\"message\":\"invalid key; you sent {auth}\"}}}}");
            let _ = write!(
                c,
                "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let w = World::new();
    let out = w.root.join("results/llm");
    let endpoint = format!("http://127.0.0.1:{port}/v1");
    let (_, _, stderr) = w.distdebug(
        &[
            "run",
            "--agent",
            "llm",
            "--model",
            "m",
            "--endpoint",
            &endpoint,
            "--incident",
            "tiny-lease",
            "--attempts",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--no-sandbox",
        ],
        &[("OPENAI_API_KEY", KEY)],
    );
    assert!(
        stderr.contains("401"),
        "the failure must be reported: {stderr}"
    );
    assert!(!stderr.contains(KEY), "stderr: {stderr}");
    let everything = all_text(&out);
    assert!(!everything.contains(KEY), "a file holds the key");
    assert!(
        everything.contains("[redacted]"),
        "the echoed header should be kept, redacted"
    );
}

#[test]
fn incidents_that_expose_hidden_files_are_refused_by_every_command() {
    let w = World::new();
    let inc = w.root.join("incidents/tiny-lease");
    let manifest = read(&inc.join("incident.json"));
    let cases = [
        (
            "\"evidence\": [\"evidence/server.log\"]",
            "\"evidence\": [\"labels.json\"]",
            "labels.json",
        ),
        (
            "\"report\": \"report.md\"",
            "\"report\": \"fix.patch\"",
            "fix.patch",
        ),
        (
            "\"repository\": { \"path\": \"repo\" }",
            "\"repository\": { \"path\": \".\" }",
            "labels.json",
        ),
        (
            "\"report\": \"report.md\"",
            "\"report\": \"/etc/passwd\"",
            "absolute",
        ),
        (
            "\"report\": \"report.md\"",
            "\"report\": \"../../host-marker\"",
            "..",
        ),
        (
            "\"id\": \"tiny-lease\"",
            "\"id\": \"other-id\"",
            "folder name",
        ),
        (
            "\"report\": \"report.md\"",
            "\"report\": \"report.md\", \"report\": \"fix.patch\"",
            "duplicate key",
        ),
    ];
    for (from, to, expect) in cases {
        assert!(manifest.contains(from), "{from}");
        std::fs::write(inc.join("incident.json"), manifest.replace(from, to)).unwrap();
        let (code, _, validate_err) =
            w.distdebug(&["incidents", "validate", inc.to_str().unwrap()], &[]);
        assert_eq!(code, 1, "validate passed {to}");
        assert!(validate_err.contains(expect), "validate: {validate_err}");
        let ws = w.root.join("ws");
        let (code, _, err) = w.distdebug(
            &[
                "prepare",
                "tiny-lease",
                "--out",
                ws.to_str().unwrap(),
                "--force",
            ],
            &[],
        );
        assert_eq!(code, 1, "prepare accepted {to}: {err}");
        let first = validate_err.lines().next().unwrap();
        assert!(
            err.contains(first),
            "prepare must say what validate says.\nprepare: {err}\nvalidate: {first}"
        );
        assert!(!ws.join(".distdebug/evidence/labels.json").exists());
        let (code, _, err) = w.distdebug(
            &[
                "run",
                "--agent",
                "baseline",
                "--incident",
                "tiny-lease",
                "--attempts",
                "1",
                "--out",
                w.root.join("results/b").to_str().unwrap(),
            ],
            &[],
        );
        assert_ne!(code, 0, "run accepted {to}: {err}");
    }
    std::fs::write(inc.join("incident.json"), manifest).unwrap();
}

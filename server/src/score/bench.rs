//! A synthetic results tree for the scoring benchmark (`distdebug bench score`): incidents with
//! small repositories and labels, and configurations whose attempts hold diagnoses and
//! trajectories of realistic size, including some invalid and some leaking attempts.

use super::bootstrap::Xoshiro256;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The shape of the tree (the issue asks for 17 configurations x 120 incidents x 3 attempts).
#[derive(Debug, Clone, Copy)]
pub struct BenchSpec {
    pub configs: usize,
    pub incidents: usize,
    pub attempts: usize,
    pub seed: u64,
}

impl Default for BenchSpec {
    fn default() -> BenchSpec {
        BenchSpec {
            configs: 17,
            incidents: 120,
            attempts: 3,
            seed: 0,
        }
    }
}

/// Where the generated tree is and how many files it holds.
#[derive(Debug, Clone)]
pub struct BenchTree {
    pub incidents_dir: PathBuf,
    pub config_dirs: Vec<PathBuf>,
    pub files: usize,
    pub bytes: u64,
}

const SYSTEMS: [&str; 6] = [
    "ZooKeeper",
    "etcd-io/raft",
    "raft-rs",
    "hashicorp/raft",
    "Kafka",
    "HDFS",
];
const TAGS: [&str; 5] = [
    "causal-method-named",
    "internal-stack-trace",
    "no-internal-stack-trace",
    "cross-component",
    "upstream",
];
const FILES_PER_REPO: usize = 6;

struct Writer {
    files: usize,
    bytes: u64,
}

impl Writer {
    fn write(&mut self, path: &Path, text: &str) -> Result<(), String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        }
        // A scratch tree nobody else reads: plain writes, no fsync, keep generation quick.
        std::fs::write(path, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        self.files += 1;
        self.bytes += text.len() as u64;
        Ok(())
    }
}

/// Writes the tree under `root` (which should be empty): `root/incidents/` and
/// `root/results/config-NN/`. The same spec gives the same tree.
pub fn generate(root: &Path, spec: &BenchSpec) -> Result<BenchTree, String> {
    let mut rng = Xoshiro256::seed_from_u64(spec.seed);
    let mut w = Writer { files: 0, bytes: 0 };
    let incidents_dir = root.join("incidents");
    // Per incident: file lengths and label ranges, reused to place plausible predictions.
    let mut repos: Vec<Vec<u32>> = Vec::new();
    let mut labels: Vec<Vec<(usize, u32, u32)>> = Vec::new();
    for i in 0..spec.incidents {
        let id = format!("bench-{i:04}");
        let dir = incidents_dir.join(&id);
        let mut tags: Vec<&str> = TAGS.iter().copied().filter(|_| rng.below(3) == 0).collect();
        if tags.is_empty() {
            tags.push(TAGS[rng.below(TAGS.len())]);
        }
        let category = ["logic", "concurrency", "error-handling", "config", "other"][i % 5];
        // Half the incidents name their fix by commit, so the guard scans tool output for it.
        let fix = if i % 2 == 0 {
            json!({"patch": "fix.patch"})
        } else {
            json!({"commit": format!("{:016x}{:016x}{:08x}", rng.next_u64(), rng.next_u64(), rng.below(1 << 31))})
        };
        let manifest = json!({
            "id": id, "system": SYSTEMS[i % SYSTEMS.len()], "language": "python",
            "category": category,
            "tags": tags, "repository": {"path": "repo"}, "report": "report.md",
            "evidence": ["evidence/server.log"], "fix": fix
        });
        w.write(&dir.join("incident.json"), &manifest.to_string())?;
        w.write(
            &dir.join("report.md"),
            "The cluster stalls after a leader change.\n",
        )?;
        w.write(
            &dir.join("evidence/server.log"),
            "ERROR stalled waiting for quorum\n",
        )?;
        if i % 2 == 0 {
            w.write(&dir.join("fix.patch"), "")?;
        }
        let lens: Vec<u32> = (0..FILES_PER_REPO)
            .map(|_| 200 + rng.below(800) as u32)
            .collect();
        for (f, n) in lens.iter().enumerate() {
            let text = "    value = compute(value)  # a line of code\n".repeat(*n as usize);
            w.write(&dir.join(format!("repo/src/mod{f}.py")), &text)?;
        }
        let mut ls = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let f = rng.below(FILES_PER_REPO);
            let s = 1 + rng.below(lens[f] as usize - 30) as u32;
            ls.push((f, s, s + 3 + rng.below(20) as u32));
        }
        let blocks: Vec<_> = ls
            .iter()
            .map(|(f, s, e)| json!({"path": format!("src/mod{f}.py"), "start_line": s, "end_line": e}))
            .collect();
        w.write(
            &dir.join("labels.json"),
            &json!({ "blocks": blocks }).to_string(),
        )?;
        repos.push(lens);
        labels.push(ls);
    }

    let mut config_dirs = Vec::new();
    for c in 0..spec.configs {
        let cdir = root.join("results").join(format!("config-{c:02}"));
        let run = json!({"agent": "synthetic", "model": format!("model-{c}"), "harness": "bench",
            "endpoint_host": "localhost:8000", "settings": {}, "distdebug_version": env!("CARGO_PKG_VERSION")});
        w.write(&cdir.join("run.json"), &run.to_string())?;
        // Better configurations find more labels.
        let skill = 0.2 + 0.6 * c as f64 / spec.configs.max(1) as f64;
        for i in 0..spec.incidents {
            let id = format!("bench-{i:04}");
            for k in 1..=spec.attempts {
                let adir = cdir.join(&id).join(format!("attempt-{k}"));
                let roll = rng.below(100);
                let diagnosis = if roll < 2 {
                    "{\"blocks\": [ {\"path\": \"src/mod1.py\", \"start_line\": 3".to_string()
                } else if roll < 4 {
                    json!({"blocks": [{"path": "../outside.py", "start_line": 1, "end_line": 2}]})
                        .to_string()
                } else {
                    let mut blocks = Vec::new();
                    for (f, s, e) in &labels[i] {
                        if rng.unit_f64() < skill {
                            let shift = rng.below(20) as i64 - 10;
                            let s2 = (*s as i64 + shift).max(1) as u32;
                            blocks.push(block(*f, s2, (*e as i64 + shift).max(s2 as i64) as u32));
                        }
                    }
                    for _ in 0..rng.below(4) {
                        let f = rng.below(FILES_PER_REPO + 1); // one past the end: a missing file
                        let s = 1 + rng.below(repos[i][0] as usize) as u32;
                        blocks.push(block(f, s, s + rng.below(40) as u32));
                    }
                    json!({"incident": id, "summary": "synthetic", "blocks": blocks}).to_string()
                };
                if roll != 99 {
                    w.write(&adir.join("diagnosis.json"), &diagnosis)?;
                }
                let leak = rng.below(100) == 0;
                w.write(
                    &adir.join("trajectory.json"),
                    &trajectory(&id, k, leak, &mut rng).to_string(),
                )?;
            }
        }
        config_dirs.push(cdir);
    }
    Ok(BenchTree {
        incidents_dir,
        config_dirs,
        files: w.files,
        bytes: w.bytes,
    })
}

fn block(file: usize, s: u32, e: u32) -> serde_json::Value {
    json!({"path": format!("./src/mod{file}.py"), "start_line": s, "end_line": e,
           "rationale": "the stall follows from this branch", "confidence": 0.5})
}

/// About 30 steps of thoughts, shell commands and their output, as an agent would leave.
fn trajectory(id: &str, k: usize, leak: bool, rng: &mut Xoshiro256) -> serde_json::Value {
    let mut steps = Vec::new();
    for n in 0..10 {
        let f = rng.below(FILES_PER_REPO);
        let cmd = match n % 3 {
            0 => format!("grep -rn 'quorum' src/ | head -{}", 5 + n),
            1 => format!("sed -n '{},{}p' src/mod{f}.py", 10 * n + 1, 10 * n + 60),
            _ => "git log --oneline -5 && git status".to_string(),
        };
        steps.push(
            json!({"kind": "thought", "text": format!("Step {n}: look at mod{f} for the stall")}),
        );
        steps.push(
            json!({"kind": "action", "tool": "bash", "args": {"command": cmd},
            "paths_read": [{"path": format!("src/mod{f}.py"), "start_line": 1, "end_line": 60}]}),
        );
        steps.push(json!({"kind": "observation",
            "text": "    value = compute(value)  # a line of code\n".repeat(40)}));
    }
    if leak {
        steps.push(json!({"kind": "action", "tool": "bash", "args": {"command": "cat ../../incidents/x/labels.json"}}));
    }
    steps.push(json!({"kind": "submit", "text": "submitting"}));
    for (i, s) in steps.iter_mut().enumerate() {
        s["index"] = json!(i);
    }
    json!({"incident": id, "attempt": k, "agent": "synthetic", "model": "m",
        "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z", "exit": "submitted",
        "usage": {"prompt_tokens": 20_000 + rng.below(10_000), "completion_tokens": 1_000 + rng.below(1_000), "cost_usd": 0.01},
        "steps": steps})
}

//! The benchmark's real harnesses as agents: mini-swe-agent (1.x and 2.x, from PyPI), Codex
//! CLI (npm `@openai/codex`) and OpenCode (npm `opencode-ai`). Each is found from settings or
//! PATH, pointed at the configured endpoint, model and key variable, given config and home
//! folders inside the attempt's output (nothing is read from or written to the host's
//! `$HOME`), started without first-run prompts, and run through the external-agent path (the
//! same sandbox, timeout and cancellation). Its native trajectory is imported live.

pub mod codex;
pub mod live;
pub mod mini;
pub mod opencode;
pub mod shell_reads;

use super::AgentInput;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    MiniSwe,
    Codex,
    OpenCode,
}

impl Kind {
    /// The `--agent` names.
    pub fn parse(name: &str) -> Option<Kind> {
        match name {
            "mini-swe-agent" | "mini" => Some(Kind::MiniSwe),
            "codex" => Some(Kind::Codex),
            "opencode" => Some(Kind::OpenCode),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::MiniSwe => "mini-swe-agent",
            Kind::Codex => "codex",
            Kind::OpenCode => "opencode",
        }
    }

    /// The `[harness]` key of `distdebug.toml` that says where it is installed.
    pub fn setting(self) -> &'static str {
        match self {
            Kind::MiniSwe => "mini_swe_agent",
            Kind::Codex => "codex",
            Kind::OpenCode => "opencode",
        }
    }

    /// What to install when it is missing.
    fn install_hint(self) -> &'static str {
        match self {
            Kind::MiniSwe => "the PyPI package mini-swe-agent (python3 -m venv .venv-mini2 && .venv-mini2/bin/pip install mini-swe-agent==2.4.6)",
            Kind::Codex => "the npm package @openai/codex (npm install --prefix .harnesses --ignore-scripts @openai/codex@0.171.0)",
            Kind::OpenCode => "the npm package opencode-ai (npm install --prefix .harnesses --ignore-scripts opencode-ai@1.18.33)",
        }
    }
}

/// A harness ready to launch: where it is, what it talks to, and its limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Harness {
    pub kind: Kind,
    /// The program started (`mini`, the `codex` or `opencode` binary).
    pub program: PathBuf,
    /// mini-swe-agent's venv Python, when `mini` sits in a venv.
    pub python: Option<PathBuf>,
    pub version: String,
    /// The OpenAI-compatible base URL (`…/v1`).
    pub endpoint: String,
    pub model: String,
    /// The environment variable holding the API key (its value is never copied into a file).
    pub api_key_env: String,
    pub max_steps: u32,
    pub max_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
    pub wall: Option<Duration>,
    /// `[prices."<model>"]`: the cost of an attempt whose harness reports none.
    pub price: crate::config::Price,
    /// Folders the harness needs to read inside the sandbox (its venv or node_modules, the
    /// Python it was built with).
    pub roots: Vec<PathBuf>,
}

/// What one attempt's launch needs: the command, its environment and where its native
/// trajectory will be. Its `Debug` shows the variables' names only (one may hold the key).
#[derive(Clone)]
pub struct Launch {
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub native: live::Native,
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("argv", &self.argv)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("native", &self.native)
            .finish()
    }
}

/// The folder inside `$DISTDEBUG_OUTPUT` that is the harness's `$HOME` (its config, caches,
/// sessions).
pub const HOME_DIR: &str = "home";

impl Harness {
    /// Finds the harness from `location` (a setting: a venv or node_modules folder, or the
    /// program) or PATH, and reads its version.
    pub fn locate(
        kind: Kind,
        location: Option<&Path>,
    ) -> Result<(PathBuf, Option<PathBuf>, String, Vec<PathBuf>), String> {
        let missing = |where_: String| {
            format!(
                "{} is not installed ({where_}); install {}, then set [harness] {} in distdebug.toml or put it on PATH",
                kind.name(),
                kind.install_hint(),
                kind.setting()
            )
        };
        let program = match kind {
            Kind::MiniSwe => mini::find(location),
            Kind::Codex => codex::find(location),
            Kind::OpenCode => opencode::find(location),
        };
        let program = match (program, location) {
            (Some(p), _) => p,
            (None, Some(l)) => return Err(missing(format!("nothing runnable at {}", l.display()))),
            (None, None) => return Err(missing("not found on PATH".to_string())),
        };
        let program = program.canonicalize().unwrap_or(program);
        let mut roots = Vec::new();
        let (python, version) = match kind {
            Kind::MiniSwe => {
                let (python, version, r) = mini::inspect(&program);
                roots.extend(r);
                (python, version)
            }
            _ => (None, version_of(&program)),
        };
        if let Some(root) = location
            .and_then(|l| l.canonicalize().ok())
            .or_else(|| program.parent().map(Path::to_path_buf))
        {
            roots.insert(0, root);
        }
        roots.dedup();
        Ok((program, python, version, roots))
    }

    /// Writes the harness's config into the attempt's output and returns how to start it.
    pub fn prepare(
        &self,
        out_dir: &Path,
        attempt_dir: &Path,
        workspace: &Path,
        input: &AgentInput,
    ) -> Result<Launch, String> {
        let home = out_dir.join(HOME_DIR);
        for d in ["", ".config", ".cache", ".local/share", ".local/state"] {
            let p = home.join(d);
            std::fs::create_dir_all(&p)
                .map_err(|e| format!("{}: cannot create: {e}", p.display()))?;
        }
        let mut env = BTreeMap::new();
        let h = home.to_string_lossy().into_owned();
        env.insert("HOME".into(), h.clone());
        env.insert("XDG_CONFIG_HOME".into(), format!("{h}/.config"));
        env.insert("XDG_CACHE_HOME".into(), format!("{h}/.cache"));
        env.insert("XDG_DATA_HOME".into(), format!("{h}/.local/share"));
        env.insert("XDG_STATE_HOME".into(), format!("{h}/.local/state"));
        // Package managers a harness might start must not reach their registries.
        env.insert("npm_config_offline".into(), "true".into());
        env.insert("PIP_NO_INDEX".into(), "1".into());
        let task = task_text(input, workspace, out_dir);
        let launch = match self.kind {
            Kind::MiniSwe => mini::launch(self, &home, out_dir, &task, env)?,
            Kind::Codex => codex::launch(self, &home, attempt_dir, workspace, &task, env)?,
            Kind::OpenCode => opencode::launch(self, &home, attempt_dir, &task, env)?,
        };
        Ok(launch)
    }

    /// How `run.json` describes the harness (never the key, only the variable's name).
    pub fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "harness": self.kind.name(),
            "harness_version": self.version,
            "program": self.program,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "max_steps": self.max_steps,
            "max_tokens": self.max_tokens,
            "max_cost_usd": self.max_cost_usd,
            "max_wall_secs": self.wall.map(|d| d.as_secs_f64()),
            "harness_command": self.command_summary(),
        })
    }

    /// The command each attempt runs, with `<task>`, `<output>` and `<workspace>` standing for
    /// what changes per attempt.
    pub fn command_summary(&self) -> Vec<String> {
        let p = self.program.to_string_lossy().into_owned();
        let cost = self.max_cost_usd.unwrap_or(0.0);
        let mut v: Vec<String> = vec![p];
        let words: Vec<String> = match self.kind {
            Kind::MiniSwe => {
                let mut w: Vec<String> = "--yolo --exit-immediately -t <task> -o <output>/trajectory.json"
                    .split(' ')
                    .map(str::to_string)
                    .collect();
                if mini::is_1x(&self.version) {
                    w.extend(["-l".to_string(), cost.to_string()]);
                } else {
                    w.extend([
                        "-c".to_string(),
                        "mini.yaml".to_string(),
                        "-c".to_string(),
                        format!("agent.step_limit={}", self.max_steps),
                        "-c".to_string(),
                        format!("agent.cost_limit={cost}"),
                    ]);
                }
                w
            }
            Kind::Codex => "exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -C <workspace> -m"
                .split(' ')
                .map(str::to_string)
                .chain([self.model.clone(), "<task>".to_string()])
                .collect(),
            Kind::OpenCode => ["run", "--format", "json", "-m"]
                .iter()
                .map(|s| s.to_string())
                .chain([format!("distdebug/{}", self.model), "<task>".to_string()])
                .collect(),
        };
        v.extend(words);
        v
    }

    /// The base URL without a trailing `/chat/completions` or `/responses`.
    pub fn base_url(&self) -> String {
        let e = self.endpoint.trim().trim_end_matches('/');
        let e = e.strip_suffix("/chat/completions").unwrap_or(e);
        e.strip_suffix("/responses").unwrap_or(e).to_string()
    }

    /// The usage with its cost: the harness's own figure, else the configured price.
    pub fn priced(&self, mut usage: crate::attempt::Usage) -> crate::attempt::Usage {
        if usage.cost_usd == 0.0 {
            usage.cost_usd = (usage.prompt_tokens as f64 * self.price.prompt_per_mtok
                + usage.completion_tokens as f64 * self.price.completion_per_mtok)
                / 1e6;
        }
        usage
    }

    /// Whether the key variable holds a value in this process's environment.
    pub fn has_key(&self) -> bool {
        super::options::process_env(&self.api_key_env).is_some()
    }
}

/// A diagnosis the harness gave only as its final answer (a JSON object with `blocks`, bare
/// or in a fenced block), for harnesses told to write `diagnosis.json` that answered instead.
pub fn diagnosis_in_answer(steps: &[crate::attempt::Step]) -> Option<String> {
    let answer = steps
        .iter()
        .rev()
        .find(|s| s.kind == crate::attempt::StepKind::Submit)?
        .text
        .as_deref()?;
    let fenced = answer
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|b| b.strip_prefix("json").unwrap_or(b).trim().to_string());
    let bare = match (answer.find('{'), answer.rfind('}')) {
        (Some(a), Some(b)) if a < b => Some(answer[a..=b].to_string()),
        _ => None,
    };
    fenced.chain(bare).find(|text| {
        serde_json::from_str::<serde_json::Value>(text)
            .is_ok_and(|v| v.get("blocks").is_some_and(|b| b.is_array()))
    })
}

/// The `--version` line of a program (its last word when it is a version number), asked in
/// a throw-away home so that the probe writes nothing into the user's, and given up after
/// ten seconds.
fn version_of(program: &Path) -> String {
    let Ok(home) = tempfile::tempdir() else {
        return "unknown".to_string();
    };
    let h = home.path();
    let child = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .env("HOME", h)
        .env("CODEX_HOME", h)
        .env("XDG_CONFIG_HOME", h)
        .env("XDG_DATA_HOME", h)
        .env("XDG_CACHE_HOME", h)
        .env("XDG_STATE_HOME", h)
        .spawn();
    let Ok(mut child) = child else {
        return "unknown".to_string();
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let line = text.lines().next().unwrap_or("").trim();
    match line.rsplit(' ').next() {
        Some(v) if !v.is_empty() => v.to_string(),
        _ => "unknown".to_string(),
    }
}

/// Looks `name` up on PATH.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The first of `candidates` (relative to `base`) that is a file.
fn first_file(base: &Path, candidates: &[&str]) -> Option<PathBuf> {
    candidates
        .iter()
        .map(|c| base.join(c))
        .find(|p| p.is_file())
}

/// The task every harness gets: the report, where the evidence is, and how to answer.
fn task_text(input: &AgentInput, workspace: &Path, out_dir: &Path) -> String {
    let meta = workspace.join(crate::incident::prepare::META_DIR);
    let report = super::tools::cap_chars(input.report.clone(), 20_000);
    let evidence: Vec<String> = input
        .evidence
        .iter()
        .map(|e| format!("- {}", workspace.join(&e.name).display()))
        .collect();
    format!(
        "You are localizing the cause of a failure in a distributed system. Your working \
directory {ws} is the repository at the buggy revision (read-only). The bug report is \
{report_path}; the evidence files (logs, stack traces) are:\n{evidence}\n\n<report>\n{report}\n</report>\n\n\
Find the code blocks that cause the failure (do not fix them). Use only the repository and the \
evidence: no network, and no git history beyond the current commit. When you are done, write \
your answer as JSON to {out}/diagnosis.json, for example with a heredoc:\n\
cat > {out}/diagnosis.json <<'EOF'\n\
{{\"summary\": \"one paragraph\", \"blocks\": [{{\"path\": \"path/relative/to/the/repository\", \
\"start_line\": 10, \"end_line\": 20, \"rationale\": \"why\", \"confidence\": 0.7}}]}}\nEOF\n\
Name few, small blocks: precision counts. Then finish.",
        ws = workspace.display(),
        report_path = meta.join("report.md").display(),
        evidence = evidence.join("\n"),
        out = out_dir.display(),
    )
}

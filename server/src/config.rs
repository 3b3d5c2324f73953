//! `distdebug.toml`: the settings of the model agent, external agents, budgets, prices and
//! the sandbox. Every key is optional; flags override the file, the file overrides the
//! environment. The API key itself never lives in this file: `api_key_env` names the variable.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name looked for in the working directory when `--config` is not given.
pub const FILE_NAME: &str = "distdebug.toml";

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub llm: LlmSection,
    #[serde(default)]
    pub budget: BudgetSection,
    /// Prices per model name, in US dollars per million tokens.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    #[serde(default)]
    pub external: ExternalSection,
    #[serde(default)]
    pub sandbox: SandboxSection,
    #[serde(default)]
    pub harness: HarnessSection,
}

/// Where the benchmark's harnesses are installed (each: a venv or node_modules folder, or the
/// program itself; relative paths are taken from the working directory). Unset: PATH.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HarnessSection {
    /// mini-swe-agent: a venv folder (with `bin/mini`) or the `mini` program.
    pub mini_swe_agent: Option<PathBuf>,
    /// Codex CLI: a folder holding `node_modules/@openai/codex-linux-x64`, or the binary.
    pub codex: Option<PathBuf>,
    /// OpenCode: a folder holding `node_modules/opencode-linux-x64`, or the binary.
    pub opencode: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LlmSection {
    /// Base URL of an OpenAI-compatible API (`http://127.0.0.1:8080/v1`), or the full
    /// `.../chat/completions` URL.
    pub endpoint: Option<String>,
    pub model: Option<String>,
    /// The environment variable that holds the API key (default `OPENAI_API_KEY`).
    pub api_key_env: Option<String>,
    /// `auto` (tool calls, falling back to text), `tools` or `text`.
    pub mode: Option<String>,
    /// Seconds one request may take before it is retried.
    pub timeout_secs: Option<f64>,
    /// Retries of one request after 429, 5xx, timeouts and connection failures.
    pub retries: Option<u32>,
    /// First backoff delay in milliseconds (doubled each retry, with jitter).
    pub retry_base_ms: Option<u64>,
    /// Longest backoff delay in milliseconds (also caps `Retry-After`).
    pub retry_max_ms: Option<u64>,
    /// Replies without a usable tool call that are fed back before the attempt fails.
    pub max_format_errors: Option<u32>,
    pub temperature: Option<f64>,
    /// Completion tokens per reply (`max_tokens` in the request).
    pub max_reply_tokens: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetSection {
    pub max_steps: Option<u32>,
    /// Prompt + completion tokens over the whole attempt.
    pub max_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
    pub max_wall_secs: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    #[serde(default)]
    pub prompt_per_mtok: f64,
    #[serde(default)]
    pub completion_per_mtok: f64,
}

/// A command as a shell line (run with `sh -c`) or as an argument vector.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CommandLine {
    Shell(String),
    Argv(Vec<String>),
}

impl CommandLine {
    /// The program and its arguments.
    pub fn argv(&self) -> Vec<String> {
        match self {
            CommandLine::Shell(s) => vec!["sh".into(), "-c".into(), s.clone()],
            CommandLine::Argv(v) => v.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExternalSection {
    pub command: Option<CommandLine>,
    /// The name recorded as the agent (default `command`).
    pub name: Option<String>,
    pub timeout_secs: Option<f64>,
    /// `auto`, `distdebug` or `mini-swe-agent-1.1`.
    pub trajectory_format: Option<String>,
    /// `none` or `host`.
    pub network: Option<String>,
    /// `read-only` or `copy` (a private writable copy of the workspace).
    pub workspace: Option<String>,
    /// Extra environment variables for the agent.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SandboxSection {
    /// `false` runs agents unconfined, as `--no-sandbox` does.
    pub enabled: Option<bool>,
    /// Further paths agents must not see (the incidents folder and results are always hidden).
    #[serde(default)]
    pub hide: Vec<PathBuf>,
    /// Paths under `/tmp` an agent needs (the sandbox gives it an empty `/tmp`), read-only.
    #[serde(default)]
    pub expose: Vec<PathBuf>,
}

impl Config {
    /// Parses a config file's text; the error names the file and the offending key.
    pub fn parse(path: &Path, text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| {
            format!(
                "{}: not a valid distdebug config: {}",
                path.display(),
                e.to_string().trim()
            )
        })
    }

    /// Loads `explicit` (which must exist), else `./distdebug.toml` when present, else the
    /// defaults.
    pub fn load(explicit: Option<&Path>) -> Result<Config, String> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            None => {
                let p = PathBuf::from(FILE_NAME);
                if !p.is_file() {
                    return Ok(Config::default());
                }
                p
            }
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read the config: {e}", path.display()))?;
        Config::parse(&path, &text)
    }

    /// The price of `model`, 0 when the config names none (local models cost nothing).
    pub fn price_of(&self, model: &str) -> Price {
        self.prices.get(model).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_section() {
        let text = r#"
[llm]
endpoint = "http://127.0.0.1:8080/v1"
model = "qwen"
api_key_env = "MY_KEY"
mode = "text"
retries = 2

[budget]
max_steps = 12
max_cost_usd = 0.5

[prices."gpt-4o-mini"]
prompt_per_mtok = 0.15
completion_per_mtok = 0.6

[external]
command = ["python3", "wrapper.py"]
network = "host"
env = { FOO = "bar" }

[sandbox]
hide = ["/data/private"]

[harness]
mini_swe_agent = ".venv-mini2"
codex = "/opt/harnesses"
"#;
        let c = Config::parse(Path::new("distdebug.toml"), text).unwrap();
        assert_eq!(c.harness.mini_swe_agent, Some(PathBuf::from(".venv-mini2")));
        assert_eq!(c.harness.codex, Some(PathBuf::from("/opt/harnesses")));
        assert_eq!(c.harness.opencode, None);
        assert_eq!(c.llm.model.as_deref(), Some("qwen"));
        assert_eq!(c.budget.max_steps, Some(12));
        assert_eq!(c.price_of("gpt-4o-mini").completion_per_mtok, 0.6);
        assert_eq!(c.price_of("local").prompt_per_mtok, 0.0);
        assert_eq!(
            c.external.command.unwrap().argv(),
            vec!["python3", "wrapper.py"]
        );
        assert_eq!(c.external.env["FOO"], "bar");
        assert_eq!(c.sandbox.hide, vec![PathBuf::from("/data/private")]);
    }

    #[test]
    fn a_shell_command_runs_through_sh() {
        let c = Config::parse(
            Path::new("x.toml"),
            "[external]\ncommand = \"run-agent --fast\"",
        )
        .unwrap();
        assert_eq!(
            c.external.command.unwrap().argv(),
            vec!["sh", "-c", "run-agent --fast"]
        );
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_file() {
        let err =
            Config::parse(Path::new("cfg/distdebug.toml"), "[llm]\nmodle = \"x\"").unwrap_err();
        assert!(
            err.contains("cfg/distdebug.toml") && err.contains("modle"),
            "{err}"
        );
        let err = Config::parse(Path::new("distdebug.toml"), "[budget]\nmax_steps = \"ten\"")
            .unwrap_err();
        assert!(err.contains("max_steps"), "{err}");
    }

    #[test]
    fn a_missing_explicit_file_is_an_error() {
        let err = Config::load(Some(Path::new("/nonexistent/distdebug.toml"))).unwrap_err();
        assert!(err.contains("/nonexistent/distdebug.toml"), "{err}");
    }
}

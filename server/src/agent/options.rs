//! Resolves an agent's settings from, in order of precedence, the command-line flags,
//! `distdebug.toml` and the environment (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
//! `DISTDEBUG_MODEL`), then the defaults.

use super::external::{ExternalConfig, TrajectoryFormat};
use super::llm::{ApiKey, Budget, LlmConfig, ToolMode};
use super::sandbox::{Network, SandboxPolicy};
use super::tools::ToolRunner;
use crate::config::{CommandLine, Config};
use std::path::PathBuf;
use std::time::Duration;

/// The endpoint used when neither a flag, the config nor `OPENAI_BASE_URL` names one (the
/// same default as OpenAI's own clients).
pub const DEFAULT_ENDPOINT: &str = "https://api.openai.com/v1";

/// Said when a sandbox is wanted and bubblewrap cannot give one.
pub const NO_BWRAP: &str =
    "bubblewrap (bwrap) is not installed or cannot run here, so agents cannot be \
sandboxed; install it (apt-get install bubblewrap) or pass --no-sandbox to run them unconfined";
/// Said once when agents run without a sandbox.
pub const UNCONFINED: &str =
    "running agents without a sandbox (--no-sandbox): an external agent can \
read anything this user can, and only path checks keep the model agent's tools in the workspace";

/// Flags given on the command line (or by the language server), and the loaded config file.
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    pub config: Config,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    /// The environment variable that holds the API key.
    pub api_key_env: Option<String>,
    /// An external agent's command, run with `sh -c`.
    pub command: Option<String>,
    pub network: Option<String>,
    pub no_sandbox: bool,
    pub max_steps: Option<u32>,
    pub max_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
    /// Wall-time limit of one attempt, for either kind of agent.
    pub timeout_secs: Option<f64>,
    /// Paths agents must not see (the incidents folder, given by the front end).
    pub hide: Vec<PathBuf>,
}

/// Reads a variable of this process's environment (empty counts as unset).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn secs(what: &str, s: f64) -> Result<Duration, String> {
    if s.is_finite() && s > 0.0 && s < 1e9 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(format!(
            "{what} must be a positive number of seconds, not {s}"
        ))
    }
}

impl AgentOptions {
    /// The model agent's settings; `env` reads the environment (a parameter so tests need
    /// not change the process's).
    pub fn llm_config(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<LlmConfig, String> {
        let c = &self.config.llm;
        let endpoint = self.endpoint_with(env);
        if reqwest::Url::parse(&endpoint).is_err() {
            return Err(format!(
                "the endpoint {endpoint:?} is not a URL (expected e.g. http://127.0.0.1:8080/v1)"
            ));
        }
        let model = self
            .model
            .clone()
            .or_else(|| c.model.clone())
            .or_else(|| env("DISTDEBUG_MODEL"))
            .ok_or("no model for --agent llm: give --model, [llm] model in distdebug.toml, or DISTDEBUG_MODEL")?;
        let key_var = self
            .api_key_env
            .clone()
            .or_else(|| c.api_key_env.clone())
            .unwrap_or_else(|| "OPENAI_API_KEY".to_string());
        let mut cfg = LlmConfig::new(&endpoint, &model);
        cfg.api_key = env(&key_var).map(ApiKey::new);
        if let Some(m) = &c.mode {
            cfg.mode = ToolMode::parse(m).map_err(|e| format!("distdebug.toml: [llm] {e}"))?;
        }
        if let Some(t) = c.timeout_secs {
            cfg.request_timeout = secs("[llm] timeout_secs", t)?;
        }
        if let Some(r) = c.retries {
            cfg.retries = r.min(20);
        }
        if let Some(ms) = c.retry_base_ms {
            cfg.retry_base = Duration::from_millis(ms);
        }
        if let Some(ms) = c.retry_max_ms {
            cfg.retry_max = Duration::from_millis(ms);
        }
        if let Some(n) = c.max_format_errors {
            cfg.max_format_errors = n;
        }
        cfg.temperature = c.temperature;
        cfg.max_reply_tokens = c.max_reply_tokens;
        cfg.budget = self.budget()?;
        cfg.price = self.config.price_of(&model);
        if self.sandbox_enabled() {
            if super::sandbox::bwrap().is_none() {
                return Err(NO_BWRAP.to_string());
            }
            let exe = std::env::current_exe().map_err(|e| {
                format!("cannot find the distdebug executable to sandbox the tools: {e}")
            })?;
            cfg.tools = ToolRunner::Sandboxed {
                exe,
                hide: self.hidden(),
            };
        } else {
            super::sandbox::warn_once(UNCONFINED);
        }
        Ok(cfg)
    }

    fn budget(&self) -> Result<Budget, String> {
        let b = &self.config.budget;
        let mut budget = Budget::default();
        if let Some(n) = self.max_steps.or(b.max_steps) {
            if n == 0 {
                return Err("the step budget must be at least 1".to_string());
            }
            budget.max_steps = n;
        }
        budget.max_tokens = self.max_tokens.or(b.max_tokens);
        budget.max_cost_usd = self.max_cost_usd.or(b.max_cost_usd);
        if let Some(s) = self.timeout_secs.or(b.max_wall_secs) {
            budget.max_wall = Some(secs("the wall-time budget", s)?);
        }
        Ok(budget)
    }

    /// The model endpoint: the flag, then `[llm] endpoint`, then `OPENAI_BASE_URL`, then the
    /// default.
    fn endpoint_with(&self, env: &dyn Fn(&str) -> Option<String>) -> String {
        self.endpoint
            .clone()
            .or_else(|| self.config.llm.endpoint.clone())
            .or_else(|| env("OPENAI_BASE_URL"))
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string())
    }

    fn endpoint_url(&self) -> String {
        self.endpoint_with(&|k| std::env::var(k).ok())
    }

    fn sandbox_enabled(&self) -> bool {
        !self.no_sandbox && self.config.sandbox.enabled.unwrap_or(true)
    }

    fn hidden(&self) -> Vec<PathBuf> {
        self.hide
            .iter()
            .chain(&self.config.sandbox.hide)
            .cloned()
            .collect()
    }

    /// An external agent's settings.
    pub fn external_config(&self) -> Result<ExternalConfig, String> {
        let x = &self.config.external;
        let argv = match (&self.command, &x.command) {
            (Some(line), _) => CommandLine::Shell(line.clone()).argv(),
            (None, Some(c)) => c.argv(),
            (None, None) => {
                return Err("no command for --agent command: give --agent-command or [external] command in distdebug.toml".into())
            }
        };
        if argv.first().is_none_or(|p| p.trim().is_empty()) {
            return Err("the agent command is empty".to_string());
        }
        let mut cfg = ExternalConfig::new(argv);
        if let Some(n) = &x.name {
            cfg.name = n.clone();
        }
        if let Some(t) = self
            .timeout_secs
            .or(x.timeout_secs)
            .or(self.config.budget.max_wall_secs)
        {
            cfg.timeout = Some(secs("the agent timeout", t)?);
        }
        if let Some(f) = &x.trajectory_format {
            cfg.trajectory_format = TrajectoryFormat::parse(f)
                .map_err(|e| format!("distdebug.toml: [external] {e}"))?;
        }
        cfg.writable_copy = match x.workspace.as_deref() {
            None | Some("read-only") => false,
            Some("copy") => true,
            Some(other) => {
                return Err(format!(
                    "distdebug.toml: [external] workspace {other:?} is not one of: read-only, copy"
                ))
            }
        };
        cfg.env = x.env.clone();
        cfg.endpoint = Some(self.endpoint_url());
        // The agent gets the key through its environment; distdebug still never writes it.
        let key_var = self
            .api_key_env
            .clone()
            .or_else(|| self.config.llm.api_key_env.clone())
            .unwrap_or_else(|| "OPENAI_API_KEY".to_string());
        if let Some(v) = process_env(&key_var) {
            crate::util::secrets::register(&v);
        }
        cfg.model = self.model.clone().or_else(|| self.config.llm.model.clone());
        if let Some(m) = &self.model {
            cfg.env.insert("DISTDEBUG_MODEL".into(), m.clone());
        }
        let s = &self.config.sandbox;
        cfg.sandbox = SandboxPolicy {
            enabled: self.sandbox_enabled(),
            network: Network::parse(
                self.network
                    .as_deref()
                    .or(x.network.as_deref())
                    .unwrap_or("endpoint"),
            )?,
            hide: self.hidden(),
            expose: s.expose.clone(),
        };
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn flags_beat_the_file_which_beats_the_environment() {
        let env = env_of(&[
            ("OPENAI_BASE_URL", "http://env:1/v1"),
            ("DISTDEBUG_MODEL", "env-model"),
            ("OPENAI_API_KEY", "sk-env"),
            ("OTHER_KEY", "sk-other"),
        ]);
        let mut o = AgentOptions {
            no_sandbox: true,
            ..Default::default()
        };
        let c = o.llm_config(&env).unwrap();
        assert_eq!(c.tools, ToolRunner::InProcess);
        assert_eq!(c.endpoint, "http://env:1/v1/chat/completions");
        assert_eq!(c.model, "env-model");
        assert_eq!(c.api_key, Some(ApiKey::new("sk-env".into())));
        o.config = Config::parse(
            Path::new("distdebug.toml"),
            "[llm]\nendpoint = \"http://file:2/v1\"\nmodel = \"file-model\"\napi_key_env = \"OTHER_KEY\"\n[budget]\nmax_steps = 7\n[prices.file-model]\nprompt_per_mtok = 1.0",
        )
        .unwrap();
        let c = o.llm_config(&env).unwrap();
        assert_eq!(
            (c.endpoint.as_str(), c.model.as_str()),
            ("http://file:2/v1/chat/completions", "file-model")
        );
        assert_eq!(c.api_key, Some(ApiKey::new("sk-other".into())));
        assert_eq!(c.budget.max_steps, 7);
        assert_eq!(c.price.prompt_per_mtok, 1.0);
        o.endpoint = Some("http://flag:3/v1".into());
        o.model = Some("flag-model".into());
        o.max_steps = Some(3);
        let c = o.llm_config(&env).unwrap();
        assert_eq!(
            (c.endpoint.as_str(), c.model.as_str()),
            ("http://flag:3/v1/chat/completions", "flag-model")
        );
        assert_eq!(c.budget.max_steps, 3);
        assert_eq!(
            c.price.prompt_per_mtok, 0.0,
            "an unpriced model costs nothing"
        );
    }

    #[test]
    fn a_missing_model_or_command_is_a_clear_error() {
        let o = AgentOptions {
            no_sandbox: true,
            ..Default::default()
        };
        let err = o.llm_config(&|_| None).unwrap_err();
        assert!(
            err.contains("--model") && err.contains("DISTDEBUG_MODEL"),
            "{err}"
        );
        let err = o.external_config().unwrap_err();
        assert!(err.contains("--agent-command"), "{err}");
    }

    #[test]
    fn the_model_agent_tools_are_sandboxed_unless_asked_not_to() {
        let o = AgentOptions {
            model: Some("m".into()),
            hide: vec![PathBuf::from("/incidents")],
            ..Default::default()
        };
        match (super::super::sandbox::bwrap(), o.llm_config(&|_| None)) {
            (Some(_), Ok(c)) => match c.tools {
                ToolRunner::Sandboxed { hide, .. } => {
                    assert_eq!(hide, vec![PathBuf::from("/incidents")])
                }
                other => panic!("expected sandboxed tools, got {other:?}"),
            },
            (None, Err(e)) => assert!(e.contains("--no-sandbox"), "{e}"),
            (b, c) => panic!("bwrap {b:?} but config {c:?}"),
        }
    }

    #[test]
    fn external_settings() {
        let o = AgentOptions {
            command: Some("my-agent --fast".into()),
            network: Some("host".into()),
            no_sandbox: true,
            hide: vec![PathBuf::from("/incidents")],
            timeout_secs: Some(5.0),
            ..Default::default()
        };
        let c = o.external_config().unwrap();
        assert_eq!(c.argv, vec!["sh", "-c", "my-agent --fast"]);
        assert_eq!(c.sandbox.network, Network::Host);
        assert!(!c.sandbox.enabled);
        assert_eq!(c.sandbox.hide, vec![PathBuf::from("/incidents")]);
        assert_eq!(c.timeout, Some(Duration::from_secs(5)));
        let bad = AgentOptions {
            network: Some("lan".into()),
            ..o
        };
        assert!(bad.external_config().unwrap_err().contains("none, host"));
    }
}

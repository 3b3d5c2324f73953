//! The flags that configure an agent (`--model`, `--endpoint`, `--agent-command`, the
//! sandbox and the budgets), shared by the commands that run agents.

use crate::agent::options::AgentOptions;
use crate::agent::AgentSpec;
use crate::config::Config;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args, Clone, Default)]
pub struct AgentArgs {
    /// The settings file (default: ./distdebug.toml when present)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The model for --agent llm (else [llm] model, else $DISTDEBUG_MODEL)
    #[arg(long)]
    pub model: Option<String>,
    /// An OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 (else [llm] endpoint, else $OPENAI_BASE_URL)
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// The environment variable that holds the API key (default OPENAI_API_KEY)
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// The command of --agent command, run with `sh -c` in the workspace
    #[arg(long, value_name = "CMD")]
    pub agent_command: Option<String>,
    /// Network for external agents inside the sandbox: endpoint (only the model endpoint, the default), none, or host
    #[arg(long, value_name = "endpoint|none|host")]
    pub network: Option<String>,
    /// Run agents unconfined (needed where bubblewrap is missing)
    #[arg(long)]
    pub no_sandbox: bool,
    /// Step budget of the model agent
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u32>,
    /// Token budget (prompt + completion) of one attempt
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Cost budget of one attempt, in US dollars
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Wall-time limit of one attempt, in seconds
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
}

impl AgentArgs {
    /// Builds the agent `name`, hiding `hidden` (incident folders) from it.
    pub fn build(&self, name: &str, hidden: &[PathBuf]) -> Result<AgentSpec, String> {
        let opts = AgentOptions {
            config: Config::load(self.config.as_deref())?,
            model: self.model.clone(),
            endpoint: self.endpoint.clone(),
            api_key_env: self.api_key_env.clone(),
            command: self.agent_command.clone(),
            network: self.network.clone(),
            no_sandbox: self.no_sandbox,
            max_steps: self.max_steps,
            max_tokens: self.max_tokens,
            max_cost_usd: self.max_cost,
            timeout_secs: self.timeout,
            hide: hidden.to_vec(),
        };
        AgentSpec::build(name, &opts)
    }
}

//! Agents: what runs an attempt. The built-in offline baseline, a model behind any
//! OpenAI-compatible endpoint, an external command, or one of the benchmark's harnesses
//! (mini-swe-agent, Codex CLI, OpenCode). Each sees only the prepared workspace.

pub mod baseline;
pub mod describe;
pub mod external;
pub mod harness;
pub mod llm;
pub mod mini_swe;
pub mod options;
pub mod sandbox;
pub mod tools;

use crate::attempt::{Diagnosis, Exit, TrajectoryRecorder, Usage};
use crate::incident::EvidenceFile;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// What an agent is given: the prepared workspace and what its `.distdebug/` folder holds.
/// Nothing here points into the incident folder.
#[derive(Debug, Clone)]
pub struct AgentInput {
    pub incident: String,
    pub attempt: u32,
    /// The prepared workspace (repository root, with `.distdebug/` inside).
    pub workspace: PathBuf,
    pub report: String,
    /// Evidence files, named by their path relative to the workspace.
    pub evidence: Vec<EvidenceFile>,
    /// The attempt's output folder (`results/<config>/<incident>/attempt-<k>/`).
    pub output_dir: PathBuf,
}

impl AgentInput {
    /// Reads the report and evidence from a prepared workspace's `.distdebug/` folder.
    pub fn from_workspace(
        workspace: &std::path::Path,
        attempt: u32,
        output_dir: PathBuf,
    ) -> Result<AgentInput, String> {
        let info = crate::incident::prepare::WorkspaceInfo::load(workspace)?;
        let read = |rel: &str| {
            crate::incident::read_text_lossy(&workspace.join(rel))
                .map_err(|e| format!("{}: cannot read: {e}", workspace.join(rel).display()))
        };
        let report = read(&info.report)?;
        let mut evidence = Vec::new();
        for rel in &info.evidence {
            evidence.push(EvidenceFile {
                name: rel.clone(),
                text: read(rel)?,
            });
        }
        Ok(AgentInput {
            incident: info.incident,
            attempt,
            workspace: workspace.to_path_buf(),
            report,
            evidence,
            output_dir,
        })
    }
}

/// What an agent hands back. `diagnosis` is `None` when it submitted nothing.
#[derive(Debug, Clone)]
pub struct AgentOutput {
    pub diagnosis: Option<Diagnosis>,
    pub exit: Exit,
    pub usage: Usage,
    pub model: Option<String>,
    /// Why the attempt failed, when `exit` is `error`.
    pub error: Option<String>,
}

/// The agents distdebug can run, chosen by `--agent`.
#[derive(Debug, Clone)]
pub enum AgentSpec {
    Baseline(baseline::BaselineConfig),
    /// A model behind an OpenAI-compatible endpoint (`--agent llm`).
    Llm(llm::LlmConfig),
    /// Any command (`--agent command`).
    External(external::ExternalConfig),
}

impl AgentSpec {
    /// Builds an agent from its name with the settings of `./distdebug.toml` and the
    /// environment (`build` takes flags on top).
    pub fn from_name(name: &str) -> Result<AgentSpec, String> {
        let opts = options::AgentOptions {
            config: crate::config::Config::load(None)?,
            // The incidents folder ($DISTDEBUG_INCIDENTS or ./incidents) is never visible.
            hide: vec![crate::incident::incidents_dir(None)],
            ..Default::default()
        };
        AgentSpec::build(name, &opts)
    }

    /// Builds an agent from its name and the resolved flags, config file and environment.
    pub fn build(name: &str, opts: &options::AgentOptions) -> Result<AgentSpec, String> {
        match name {
            "baseline" | "offline" => Ok(AgentSpec::Baseline(baseline::BaselineConfig::default())),
            "llm" => Ok(AgentSpec::Llm(opts.llm_config(&options::process_env)?)),
            "command" | "external" => Ok(AgentSpec::External(opts.external_config()?)),
            other => match harness::Kind::parse(other) {
                Some(kind) => Ok(AgentSpec::External(
                    opts.harness_config(kind, &options::process_env)?,
                )),
                None => Err(format!(
                    "unknown agent {other:?}; expected one of: baseline, llm, command, mini-swe-agent, codex, opencode"
                )),
            },
        }
    }

    /// The name recorded in trajectories and shown in the editor.
    pub fn name(&self) -> String {
        match self {
            AgentSpec::Baseline(_) => "baseline".to_string(),
            AgentSpec::Llm(_) => "llm".to_string(),
            AgentSpec::External(c) => c.name.clone(),
        }
    }

    pub fn model(&self) -> Option<String> {
        match self {
            AgentSpec::Baseline(_) => None,
            AgentSpec::Llm(c) => Some(c.model.clone()),
            AgentSpec::External(c) => c.model.clone(),
        }
    }

    /// How `results/<config>/run.json` describes this agent (never the API key).
    pub fn run_info(&self) -> crate::attempt::RunInfo {
        describe::run_info(self)
    }

    /// Runs one attempt. Steps go to `recorder` as they happen; `cancel` ends the attempt early
    /// with exit `cancelled`.
    pub async fn run(
        &self,
        input: &AgentInput,
        recorder: &mut TrajectoryRecorder,
        cancel: &CancellationToken,
    ) -> AgentOutput {
        match self {
            AgentSpec::Baseline(cfg) => baseline::run(cfg, input, recorder, cancel).await,
            AgentSpec::Llm(cfg) => llm::run(cfg, input, recorder, cancel).await,
            AgentSpec::External(cfg) => external::run(cfg, input, recorder, cancel).await,
        }
    }
}

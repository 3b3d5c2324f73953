//! What runs an attempt for the server. The server asks a runner, never an agent directly, so
//! that the same run machinery (progress, cancellation, live steps, crash handling) serves the
//! library's agents (`crate::agent::AgentSpec` through `crate::run::run_attempt`) and, in
//! tests, agents written for the occasion.

use crate::agent::options::AgentOptions;
use crate::agent::AgentSpec;
use crate::attempt::layout::RUN_INFO;
use crate::attempt::trajectory::StepListener;
use crate::run::AttemptSummary;
use crate::util::fs::write_json_atomic;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use tokio_util::sync::CancellationToken;

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What `distdebug.runAgent` asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentChoice {
    pub agent: String,
    pub model: Option<String>,
    /// The command of an external agent (`agent: "command"`).
    pub command: Option<String>,
    /// Folders the agent must never see (incident folders: labels, fixes).
    pub hide: Vec<PathBuf>,
}

/// An agent checked and named before anything starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentPlan {
    /// The agent's name as trajectories record it.
    pub agent: String,
    pub model: Option<String>,
    /// The configuration folder under the results root (`results/<config>/`).
    pub config: String,
    pub choice: AgentChoice,
}

/// One attempt to run: attempt `attempt` of `agent` on `workspace`, written into
/// `<config_dir>/<incident>/attempt-<attempt>/`.
#[derive(Debug, Clone)]
pub struct AttemptRequest {
    pub plan: AgentPlan,
    pub workspace: PathBuf,
    pub config_dir: PathBuf,
    pub attempt: u32,
}

pub trait AttemptRunner: Send + Sync {
    /// Checks the chosen agent (and model) and names its configuration, or says what is wrong.
    fn plan(&self, choice: &AgentChoice) -> Result<AgentPlan, String>;

    /// Runs one attempt to its end. Steps go to `listener` as they happen; `cancel` asks the
    /// agent to stop. The server drives the future on a thread of its own, so an agent that
    /// computes for a while does not stall the editor, and a panic is reported, not fatal.
    fn run(
        &self,
        req: AttemptRequest,
        listener: StepListener,
        cancel: CancellationToken,
    ) -> BoxFuture<Result<AttemptSummary, String>>;
}

/// The library's agents (baseline, llm, command), built as `distdebug run` builds them: with
/// `./distdebug.toml` (relative to the server's working folder) and the environment.
#[derive(Debug, Default, Clone)]
pub struct LibraryRunner;

impl LibraryRunner {
    fn spec(choice: &AgentChoice) -> Result<AgentSpec, String> {
        let mut hide = choice.hide.clone();
        hide.push(crate::incident::incidents_dir(None));
        let opts = AgentOptions {
            config: crate::config::Config::load(None)?,
            model: choice.model.clone(),
            command: choice.command.clone(),
            hide,
            ..Default::default()
        };
        let spec = AgentSpec::build(&choice.agent, &opts)?;
        if let Some(m) = &choice.model {
            // An agent without a model refuses one rather than silently ignoring it.
            if spec.model().as_deref() != Some(m.as_str()) {
                return Err(format!(
                    "agent {:?} takes no model (got {m:?}); leave \"model\" out",
                    spec.name()
                ));
            }
        }
        Ok(spec)
    }
}

impl AttemptRunner for LibraryRunner {
    fn plan(&self, choice: &AgentChoice) -> Result<AgentPlan, String> {
        let spec = LibraryRunner::spec(choice)?;
        let model = spec.model();
        Ok(AgentPlan {
            config: config_name(&spec.name(), model.as_deref()),
            agent: spec.name(),
            model,
            choice: choice.clone(),
        })
    }

    fn run(
        &self,
        req: AttemptRequest,
        listener: StepListener,
        cancel: CancellationToken,
    ) -> BoxFuture<Result<AttemptSummary, String>> {
        Box::pin(async move {
            let spec = LibraryRunner::spec(&req.plan.choice)?;
            // `results/<config>/run.json` says how the attempts were made (the scorer's leakage
            // guard reads the allowed endpoint from it); written once per configuration.
            let run_json = req.config_dir.join(RUN_INFO);
            if !run_json.is_file() {
                let mut info = spec.run_info();
                info.started_at = crate::util::now_rfc3339();
                write_json_atomic(&run_json, &info)
                    .map_err(|e| format!("{}: cannot write: {e}", run_json.display()))?;
            }
            crate::run::run_attempt(
                &spec,
                &req.workspace,
                &req.config_dir,
                req.attempt,
                Some(listener),
                &cancel,
            )
            .await
        })
    }
}

/// The configuration folder name of an agent and model: `baseline`, `llm-gpt-4o-mini`. Only
/// `[a-z0-9._-]` survive, so a model name cannot make a path.
pub fn config_name(agent: &str, model: Option<&str>) -> String {
    let raw = match model {
        Some(m) => format!("{agent}-{m}"),
        None => agent.to_string(),
    };
    let cleaned: String = raw
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = cleaned.trim_matches(|c| c == '.' || c == '-');
    if trimmed.is_empty() {
        "agent".to_string()
    } else {
        trimmed.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_names_are_safe_folder_names() {
        assert_eq!(config_name("baseline", None), "baseline");
        assert_eq!(
            config_name("llm", Some("openai/GPT-4o mini")),
            "llm-openai-gpt-4o-mini"
        );
        assert_eq!(config_name("..", Some("/")), "agent");
    }

    #[test]
    fn the_library_runner_checks_agents_and_models() {
        let r = LibraryRunner;
        let choose = |agent: &str, model: Option<&str>| AgentChoice {
            agent: agent.into(),
            model: model.map(str::to_string),
            ..Default::default()
        };
        let p = r.plan(&choose("baseline", None)).unwrap();
        assert_eq!(
            (p.agent.as_str(), p.config.as_str()),
            ("baseline", "baseline")
        );
        let err = |c: AgentChoice| r.plan(&c).unwrap_err();
        assert!(err(choose("nope", None)).contains("unknown agent"));
        assert!(err(choose("baseline", Some("m"))).contains("takes no model"));
        assert!(
            err(choose("command", None)).contains("command"),
            "an external agent needs its command"
        );
    }
}

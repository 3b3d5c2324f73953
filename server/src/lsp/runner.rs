//! What runs an attempt for the server. The server asks a runner, never an agent directly, so
//! that the same run machinery (progress, cancellation, live steps, crash handling) serves the
//! library's agents (`crate::agent::AgentSpec` through `crate::run::run_attempt`) and, in
//! tests, agents written for the occasion.

use crate::agent::AgentSpec;
use crate::attempt::trajectory::StepListener;
use crate::run::AttemptSummary;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use tokio_util::sync::CancellationToken;

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// An agent checked and named before anything starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentPlan {
    pub agent: String,
    pub model: Option<String>,
    /// The configuration folder under the results root (`results/<config>/`).
    pub config: String,
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
    /// Checks an agent name (and model) and names its configuration, or says what is wrong.
    fn plan(&self, agent: &str, model: Option<&str>) -> Result<AgentPlan, String>;

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

/// The library's agents, as `distdebug run` runs them.
#[derive(Debug, Default, Clone)]
pub struct LibraryRunner;

impl LibraryRunner {
    fn spec(agent: &str, model: Option<&str>) -> Result<AgentSpec, String> {
        let spec = AgentSpec::from_name(agent)?;
        if let Some(m) = model {
            // Agents that take a model get it here once they exist; the others refuse one
            // rather than silently ignoring it.
            if spec.model().as_deref() != Some(m) {
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
    fn plan(&self, agent: &str, model: Option<&str>) -> Result<AgentPlan, String> {
        let spec = LibraryRunner::spec(agent, model)?;
        let model = model.map(str::to_string).or_else(|| spec.model());
        Ok(AgentPlan {
            config: config_name(&spec.name(), model.as_deref()),
            agent: spec.name(),
            model,
        })
    }

    fn run(
        &self,
        req: AttemptRequest,
        listener: StepListener,
        cancel: CancellationToken,
    ) -> BoxFuture<Result<AttemptSummary, String>> {
        Box::pin(async move {
            let spec = LibraryRunner::spec(&req.plan.agent, req.plan.model.as_deref())?;
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
        let p = r.plan("baseline", None).unwrap();
        assert_eq!(
            (p.agent.as_str(), p.config.as_str()),
            ("baseline", "baseline")
        );
        assert!(r.plan("nope", None).unwrap_err().contains("unknown agent"));
        assert!(r
            .plan("baseline", Some("m"))
            .unwrap_err()
            .contains("takes no model"));
    }
}

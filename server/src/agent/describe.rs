//! What `results/<config>/run.json` says about an agent: its name, model, harness, endpoint
//! host and settings. The API key is never part of it, and of the endpoint only the host.

use super::AgentSpec;
use crate::attempt::RunInfo;

pub fn run_info(spec: &AgentSpec) -> RunInfo {
    use serde_json::json;
    let (harness, endpoint_host, settings) = match spec {
        AgentSpec::Baseline(c) => ("distdebug-baseline", None, c.settings()),
        AgentSpec::Llm(c) => (
            "distdebug-llm",
            host_of(&c.endpoint),
            json!({
                "mode": format!("{:?}", c.mode).to_lowercase(),
                "max_steps": c.budget.max_steps,
                "max_tokens": c.budget.max_tokens,
                "max_cost_usd": c.budget.max_cost_usd,
                "max_wall_secs": c.budget.max_wall.map(|d| d.as_secs_f64()),
                "request_timeout_secs": c.request_timeout.as_secs_f64(),
                "retries": c.retries,
                "max_format_errors": c.max_format_errors,
                "temperature": c.temperature,
                "price": {"prompt_per_mtok": c.price.prompt_per_mtok, "completion_per_mtok": c.price.completion_per_mtok},
                "sandboxed_tools": matches!(c.tools, super::tools::ToolRunner::Sandboxed { .. }),
            }),
        ),
        AgentSpec::External(c) if c.harness.is_some() => {
            let h = c.harness.as_ref().map(|h| h.settings()).unwrap_or_default();
            (
                c.name.as_str(),
                c.harness.as_ref().and_then(|h| host_of(&h.base_url())),
                json!({
                    "harness": h,
                    "command": c.harness.as_ref().map(|h| h.program.clone()),
                    "timeout_secs": c.timeout.map(|d| d.as_secs_f64()),
                    "sandbox": c.sandbox.enabled,
                    "network": c.sandbox.network.as_str(),
                }),
            )
        }
        AgentSpec::External(c) => (
            "external-command",
            None,
            json!({
                "command": c.argv,
                "timeout_secs": c.timeout.map(|d| d.as_secs_f64()),
                "trajectory_format": format!("{:?}", c.trajectory_format).to_lowercase(),
                "workspace": if c.writable_copy { "copy" } else { "read-only" },
                "sandbox": c.sandbox.enabled,
                "network": c.sandbox.network.as_str(),
            }),
        ),
    };
    let mut info = RunInfo {
        agent: spec.name(),
        model: spec.model(),
        harness: harness.to_string(),
        endpoint_host,
        settings,
        distdebug_version: env!("CARGO_PKG_VERSION").to_string(),
        ..Default::default()
    };
    if let AgentSpec::External(c) = spec {
        if let Some(h) = &c.harness {
            info.extra
                .insert("harness_version".into(), json!(h.version));
        }
    }
    info
}

/// `host:port` of a URL (never its credentials or path).
fn host_of(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    let host = u.host_str()?.to_string();
    Some(match u.port() {
        Some(p) => format!("{host}:{p}"),
        None => host,
    })
}

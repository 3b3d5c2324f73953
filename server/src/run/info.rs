//! `results/<config>/run.json`: how the attempts of a configuration were made.

use crate::agent::AgentSpec;
use crate::attempt::layout::RUN_INFO;
use crate::attempt::RunInfo;
use std::path::Path;

/// The run description for `spec` with the run's own settings merged into the agent's.
pub fn run_info(spec: &AgentSpec, harness: &str, settings: serde_json::Value) -> RunInfo {
    let mut merged = spec.settings();
    if let (Some(m), serde_json::Value::Object(extra)) = (merged.as_object_mut(), settings) {
        m.extend(extra);
    }
    RunInfo {
        agent: spec.name(),
        model: spec.model(),
        harness: harness.to_string(),
        endpoint_host: None,
        settings: merged,
        distdebug_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: crate::util::now_rfc3339(),
        finished_at: String::new(),
        extra: Default::default(),
    }
}

/// Writes `run.json` into `config_dir` atomically.
pub fn write_run_info(config_dir: &Path, info: &RunInfo) -> Result<(), String> {
    let path = config_dir.join(RUN_INFO);
    crate::util::fs::write_json_atomic(&path, info).map_err(|e| format!("{}: {e}", path.display()))
}

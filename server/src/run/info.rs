//! `results/<config>/run.json`: how the attempts of a configuration were made: the agent's
//! own description (`AgentSpec::run_info`) plus the run's settings.

use crate::agent::AgentSpec;
use crate::attempt::layout::RUN_INFO;
use crate::attempt::RunInfo;
use std::path::Path;

/// The run description for `spec`, started now, with the run's own settings (attempts,
/// jobs, incidents) merged into the agent's.
pub fn run_info(spec: &AgentSpec, run_settings: serde_json::Value) -> RunInfo {
    let mut info = spec.run_info();
    info.started_at = crate::util::now_rfc3339();
    if !info.settings.is_object() {
        info.settings = serde_json::json!({});
    }
    if let (Some(m), serde_json::Value::Object(extra)) =
        (info.settings.as_object_mut(), run_settings)
    {
        m.extend(extra);
    }
    info
}

/// Writes `run.json` into `config_dir` atomically.
pub fn write_run_info(config_dir: &Path, info: &RunInfo) -> Result<(), String> {
    let path = config_dir.join(RUN_INFO);
    crate::util::fs::write_json_atomic(&path, info).map_err(|e| format!("{}: {e}", path.display()))
}

//! `results/<config>/run.json`: how the attempts of a configuration were made: the agent's
//! own description (`AgentSpec::run_info`: agent, model, harness, endpoint host but never the
//! key, settings, distdebug version) plus the run's settings, and when it started and ended.
//!
//! Several runs may fill one results folder: a run resumed after Ctrl-C, or the shards of a
//! run on many machines. They must all be the same configuration; `run.json` then keeps the
//! earliest start, and the end of the last run to finish (empty while one is running).

use crate::agent::AgentSpec;
use crate::attempt::layout::RUN_INFO;
use crate::attempt::RunInfo;
use std::path::Path;

/// Settings that describe one run rather than the configuration, so they may differ between
/// the runs that fill one results folder.
pub const PER_RUN_SETTINGS: [&str; 6] = [
    "attempts",
    "jobs",
    "incidents",
    "command",
    "run_command",
    "shard",
];

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
        merge_run_settings(m, extra);
    }
    info
}

/// Adds the run's own settings to the agent's. An external agent's own `command` (its argv)
/// is what run.json must record; the distdebug command that ran it goes beside it.
fn merge_run_settings(
    agent: &mut serde_json::Map<String, serde_json::Value>,
    run: serde_json::Map<String, serde_json::Value>,
) {
    for (k, v) in run {
        if k == "command" && agent.contains_key("command") {
            agent.insert("run_command".into(), v);
        } else {
            agent.insert(k, v);
        }
    }
}

/// Writes `run.json` into `config_dir` atomically.
pub fn write_run_info(config_dir: &Path, info: &RunInfo) -> Result<(), String> {
    let path = config_dir.join(RUN_INFO);
    crate::util::fs::write_json_atomic(&path, info).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `run.json` already in `config_dir`: `Ok(None)` when there is none.
pub fn read_run_info(config_dir: &Path) -> Result<Option<RunInfo>, String> {
    let path = config_dir.join(RUN_INFO);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: not a run record: {e}", path.display()))
}

/// Why `a` and `b` are not the same configuration, or `None` when they are: agent, model,
/// harness, endpoint host and the settings other than `PER_RUN_SETTINGS` must agree.
pub fn configuration_difference(a: &RunInfo, b: &RunInfo) -> Option<String> {
    let differ = |what: &str, x: &dyn std::fmt::Debug, y: &dyn std::fmt::Debug| {
        Some(format!("{what} {x:?} here, {y:?} in this run"))
    };
    if a.agent != b.agent {
        return differ("agent", &a.agent, &b.agent);
    }
    if a.model != b.model {
        return differ("model", &a.model, &b.model);
    }
    if a.harness != b.harness {
        return differ("harness", &a.harness, &b.harness);
    }
    if a.endpoint_host != b.endpoint_host {
        return differ("endpoint host", &a.endpoint_host, &b.endpoint_host);
    }
    let settings = |r: &RunInfo| {
        let mut m = r.settings.as_object().cloned().unwrap_or_default();
        for k in PER_RUN_SETTINGS {
            m.remove(k);
        }
        m
    };
    let (sa, sb) = (settings(a), settings(b));
    let keys: std::collections::BTreeSet<&String> = sa.keys().chain(sb.keys()).collect();
    for k in keys {
        if sa.get(k) != sb.get(k) {
            return differ(&format!("setting {k}"), &sa.get(k), &sb.get(k));
        }
    }
    None
}

/// `new` as it should be written over `existing` (the same configuration): the earliest start.
pub fn merge_run_info(existing: Option<&RunInfo>, mut new: RunInfo) -> RunInfo {
    if let Some(old) = existing {
        // RFC 3339 UTC timestamps written by `now_rfc3339` sort as text.
        if !old.started_at.is_empty() && old.started_at < new.started_at {
            new.started_at = old.started_at.clone();
        }
    }
    new
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(model: &str, settings: serde_json::Value, start: &str) -> RunInfo {
        RunInfo {
            agent: "llm".into(),
            model: Some(model.into()),
            harness: "distdebug-llm".into(),
            endpoint_host: Some("api.example:443".into()),
            settings,
            distdebug_version: "0.1.0".into(),
            started_at: start.into(),
            ..Default::default()
        }
    }

    #[test]
    fn an_external_agents_command_is_kept_beside_the_run_command() {
        let mut m = serde_json::Map::new();
        m.insert("command".into(), json!(["sh", "-c", "agent"]));
        let mut info = RunInfo {
            settings: serde_json::Value::Object(m),
            ..RunInfo::default()
        };
        if let (Some(m), serde_json::Value::Object(extra)) = (
            info.settings.as_object_mut(),
            json!({"command": "distdebug run", "jobs": 2}),
        ) {
            merge_run_settings(m, extra);
        }
        assert_eq!(info.settings["command"], json!(["sh", "-c", "agent"]));
        assert_eq!(info.settings["run_command"], "distdebug run");
        assert_eq!(info.settings["jobs"], 2);
    }

    #[test]
    fn runs_of_one_configuration_may_differ_only_in_per_run_settings() {
        let a = info(
            "m",
            json!({"temperature": 0, "jobs": 4, "shard": "0/3", "attempts": 3}),
            "t",
        );
        let b = info(
            "m",
            json!({"temperature": 0, "jobs": 1, "attempts": 5, "command": "x"}),
            "t",
        );
        assert_eq!(configuration_difference(&a, &b), None);
        let c = info("m", json!({"temperature": 0.7}), "t");
        assert!(configuration_difference(&a, &c)
            .unwrap()
            .contains("setting temperature"));
        let d = info("other", json!({"temperature": 0}), "t");
        assert!(configuration_difference(&a, &d)
            .unwrap()
            .starts_with("model"));
        let mut e = a.clone();
        e.endpoint_host = None;
        assert!(configuration_difference(&a, &e)
            .unwrap()
            .starts_with("endpoint host"));
    }

    #[test]
    fn merging_keeps_the_earliest_start() {
        let old = info("m", json!({}), "2026-01-01T00:00:00Z");
        let new = info("m", json!({}), "2026-01-02T00:00:00Z");
        assert_eq!(
            merge_run_info(Some(&old), new.clone()).started_at,
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(
            merge_run_info(Some(&new), old.clone()).started_at,
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(merge_run_info(None, new).started_at, "2026-01-02T00:00:00Z");
    }

    #[test]
    fn run_json_round_trips_and_a_broken_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_run_info(dir.path()).unwrap(), None);
        let a = info("m", json!({"x": 1}), "t");
        write_run_info(dir.path(), &a).unwrap();
        assert_eq!(read_run_info(dir.path()).unwrap(), Some(a));
        std::fs::write(dir.path().join("run.json"), "{").unwrap();
        assert!(read_run_info(dir.path())
            .unwrap_err()
            .contains("not a run record"));
    }
}

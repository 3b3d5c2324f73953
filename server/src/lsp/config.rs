//! The server's settings: `initializationOptions` at start, `workspace/didChangeConfiguration`
//! later (either the settings object itself or wrapped as `{"distdebug": {...}}`).

use serde_json::Value;
use std::path::PathBuf;
use tower_lsp_server::ls_types::DiagnosticSeverity;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The incident folder (with `labels.json`): enables label diagnostics and scoring.
    pub incident: Option<PathBuf>,
    /// Who is labeling; shown with labels.
    pub annotator: Option<String>,
    /// The results root (`<results>/<config>/<incident>/attempt-<k>/`).
    pub results: Option<PathBuf>,
    /// Where `distdebug.openIncident` looks up incident ids.
    pub incidents: Option<PathBuf>,
    /// Where `distdebug.openIncident` prepares workspaces.
    pub workspaces: Option<PathBuf>,
    /// Never use the network when preparing a workspace.
    pub offline: bool,
    /// Severity of predicted blocks (also once scored: `hit`, `false-positive`).
    pub severity: DiagnosticSeverity,
    /// Severity of labels (`label`, `missed`).
    pub label_severity: DiagnosticSeverity,
    /// Show where the current attempt's agent looked as hint diagnostics (code `looked`).
    pub looked_hints: bool,
    /// Documents larger than this are served as text, without a code model.
    pub max_parse_bytes: u64,
}

/// The default of `maxParseBytes`: 2 MiB, far above hand-written source files, and a parse
/// that stays within a few hundred milliseconds and megabytes.
pub const MAX_PARSE_BYTES: u64 = 2 * 1024 * 1024;

impl Default for Config {
    fn default() -> Config {
        Config {
            incident: None,
            annotator: None,
            results: None,
            incidents: None,
            workspaces: None,
            offline: false,
            severity: DiagnosticSeverity::INFORMATION,
            label_severity: DiagnosticSeverity::HINT,
            looked_hints: false,
            max_parse_bytes: MAX_PARSE_BYTES,
        }
    }
}

impl Config {
    /// Reads settings over `self`. Returns one sentence per setting that was ignored because it
    /// had the wrong shape; the rest still applies.
    pub fn apply(&mut self, value: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let obj = match value.get("distdebug") {
            Some(inner @ Value::Object(_)) => inner,
            _ => value,
        };
        let Some(obj) = obj.as_object() else {
            if !value.is_null() {
                problems.push(format!(
                    "settings: expected an object, found {value}; using the defaults"
                ));
            }
            return problems;
        };
        for (key, v) in obj {
            let mut path = |slot: &mut Option<PathBuf>| match v {
                Value::String(s) if !s.is_empty() => *slot = Some(PathBuf::from(s)),
                Value::Null => *slot = None,
                _ => problems.push(format!(
                    "settings.{key}: expected a path as a string, found {v}"
                )),
            };
            match key.as_str() {
                "incident" => path(&mut self.incident),
                "results" => path(&mut self.results),
                "incidents" => path(&mut self.incidents),
                "workspaces" => path(&mut self.workspaces),
                "annotator" => match v {
                    Value::String(s) if !s.is_empty() => self.annotator = Some(s.clone()),
                    Value::Null => self.annotator = None,
                    _ => problems.push(format!(
                        "settings.annotator: expected a name as a string, found {v}"
                    )),
                },
                "offline" => match v.as_bool() {
                    Some(b) => self.offline = b,
                    None => problems.push(format!(
                        "settings.offline: expected true or false, found {v}"
                    )),
                },
                "lookedHints" => match v.as_bool() {
                    Some(b) => self.looked_hints = b,
                    None => problems.push(format!(
                        "settings.lookedHints: expected true or false, found {v}"
                    )),
                },
                "maxParseBytes" => match v.as_u64() {
                    Some(n) => self.max_parse_bytes = n,
                    None => problems.push(format!(
                        "settings.maxParseBytes: expected a number of bytes (an integer >= 0), found {v}"
                    )),
                },
                "severity" => match parse_severity(v) {
                    Some(s) => self.severity = s,
                    None => problems.push(format!("settings.severity: {}", SEVERITY_EXPECTED)),
                },
                "labelSeverity" => match parse_severity(v) {
                    Some(s) => self.label_severity = s,
                    None => problems.push(format!("settings.labelSeverity: {}", SEVERITY_EXPECTED)),
                },
                _ => {} // settings of other tools or newer versions: not ours to judge
            }
        }
        problems
    }
}

const SEVERITY_EXPECTED: &str =
    "expected \"error\", \"warning\", \"information\" or \"hint\" (or 1 to 4)";

fn parse_severity(v: &Value) -> Option<DiagnosticSeverity> {
    match v {
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "error" => Some(DiagnosticSeverity::ERROR),
            "warning" | "warn" => Some(DiagnosticSeverity::WARNING),
            "information" | "info" => Some(DiagnosticSeverity::INFORMATION),
            "hint" => Some(DiagnosticSeverity::HINT),
            _ => None,
        },
        Value::Number(n) => match n.as_u64() {
            Some(1) => Some(DiagnosticSeverity::ERROR),
            Some(2) => Some(DiagnosticSeverity::WARNING),
            Some(3) => Some(DiagnosticSeverity::INFORMATION),
            Some(4) => Some(DiagnosticSeverity::HINT),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_options_and_reports_bad_ones() {
        let mut c = Config::default();
        let problems = c.apply(&json!({
            "incident": "/inc/zk", "annotator": "ann-1", "severity": "warning",
            "labelSeverity": 7, "offline": "yes", "somethingElse": 1
        }));
        assert_eq!(c.incident, Some(PathBuf::from("/inc/zk")));
        assert_eq!(c.annotator.as_deref(), Some("ann-1"));
        assert_eq!(c.severity, DiagnosticSeverity::WARNING);
        assert_eq!(
            c.label_severity,
            DiagnosticSeverity::HINT,
            "bad value keeps the default"
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("labelSeverity") || problems[1].contains("labelSeverity"));
    }

    #[test]
    fn accepts_settings_wrapped_in_a_section() {
        let mut c = Config::default();
        assert!(c.apply(&json!({"distdebug": {"severity": 4}})).is_empty());
        assert_eq!(c.severity, DiagnosticSeverity::HINT);
        assert!(c.apply(&Value::Null).is_empty());
    }
}

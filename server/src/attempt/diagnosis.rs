//! `diagnosis.json`: the blocks an attempt names as the cause, and the schema check that
//! decides whether an attempt counts.

use crate::incident::problem::kind;
use crate::util::paths::unsafe_rel_path_reason;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosisBlock {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Any further fields an agent wrote (evidence references, step numbers…), kept as is.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl DiagnosisBlock {
    pub fn new(path: impl Into<String>, start_line: u32, end_line: u32) -> DiagnosisBlock {
        DiagnosisBlock {
            path: path.into(),
            start_line,
            end_line,
            rationale: None,
            confidence: None,
            extra: Default::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Diagnosis {
    #[serde(default)]
    pub incident: String,
    #[serde(default)]
    pub summary: String,
    pub blocks: Vec<DiagnosisBlock>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Diagnosis {
    /// Parses and schema-checks a diagnosis (CONTRACT §2). The error is the reason the
    /// attempt is not schema-valid, naming the JSON path of the first offending value.
    pub fn parse(text: &str) -> Result<Diagnosis, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
        Diagnosis::from_value(value)
    }

    pub fn from_value(value: serde_json::Value) -> Result<Diagnosis, String> {
        if !value.is_object() {
            return Err(format!("expected a JSON object, found {}", kind(&value)));
        }
        let blocks = match value.get("blocks") {
            Some(serde_json::Value::Array(b)) => b,
            Some(other) => return Err(format!("blocks: expected an array, found {}", kind(other))),
            None => return Err("blocks: missing; expected an array of blocks".to_string()),
        };
        for (i, b) in blocks.iter().enumerate() {
            if !b.is_object() {
                return Err(format!(
                    "blocks[{i}]: expected an object, found {}",
                    kind(b)
                ));
            }
            match b.get("path") {
                Some(serde_json::Value::String(p)) => {
                    if let Some(why) = unsafe_rel_path_reason(p) {
                        return Err(format!("blocks[{i}].path: {why}"));
                    }
                }
                Some(other) => {
                    return Err(format!(
                        "blocks[{i}].path: expected a string, found {}",
                        kind(other)
                    ))
                }
                None => return Err(format!("blocks[{i}].path: missing")),
            }
            let line = |key: &str| -> Result<u64, String> {
                let v = b
                    .get(key)
                    .ok_or_else(|| format!("blocks[{i}].{key}: missing"))?;
                match v.as_u64() {
                    Some(n) if n >= 1 && n <= u32::MAX as u64 => Ok(n),
                    _ => Err(format!("blocks[{i}].{key}: {v} is not an integer >= 1")),
                }
            };
            let s = line("start_line")?;
            let e = line("end_line")?;
            if s > e {
                return Err(format!("blocks[{i}]: start_line {s} is after end_line {e}"));
            }
            if let Some(c) = b.get("confidence") {
                if !c.is_null() && !c.is_number() {
                    return Err(format!(
                        "blocks[{i}].confidence: expected a number, found {}",
                        kind(c)
                    ));
                }
            }
            if let Some(r) = b.get("rationale") {
                if !r.is_null() && !r.is_string() {
                    return Err(format!(
                        "blocks[{i}].rationale: expected a string, found {}",
                        kind(r)
                    ));
                }
            }
        }
        if let Some(s) = value.get("summary") {
            if !s.is_null() && !s.is_string() {
                return Err(format!("summary: expected a string, found {}", kind(s)));
            }
        }
        let mut value = value;
        if let Some(obj) = value.as_object_mut() {
            for key in ["summary", "incident"] {
                if obj.get(key).is_some_and(|v| v.is_null()) {
                    obj.remove(key);
                }
            }
        }
        serde_json::from_value(value)
            .map_err(|e| format!("does not match the diagnosis schema: {e}"))
    }

    /// Reads and schema-checks `diagnosis.json`; the error names the file.
    pub fn load(path: &Path) -> Result<Diagnosis, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Diagnosis::parse(&text).map_err(|why| format!("{}: {why}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_contract_example_and_empty_blocks() {
        let d = Diagnosis::parse(r#"{"incident":"x","summary":"s","blocks":[{"path":"a/B.java","start_line":118,"end_line":130,"rationale":"r","confidence":0.7}]}"#).unwrap();
        assert_eq!(d.blocks[0].end_line, 130);
        assert!(Diagnosis::parse(r#"{"blocks":[]}"#)
            .unwrap()
            .blocks
            .is_empty());
    }

    #[test]
    fn rejects_what_is_not_schema_valid() {
        for (text, want) in [
            ("nope", "not valid JSON"),
            ("[]", "expected a JSON object"),
            (r#"{"summary":"x"}"#, "blocks: missing"),
            (
                r#"{"blocks":[{"path":"/etc/x","start_line":1,"end_line":1}]}"#,
                "absolute",
            ),
            (
                r#"{"blocks":[{"path":"a/../../x","start_line":1,"end_line":1}]}"#,
                "'..'",
            ),
            (
                r#"{"blocks":[{"path":"a","start_line":1.5,"end_line":2}]}"#,
                "start_line: 1.5 is not an integer",
            ),
            (
                r#"{"blocks":[{"path":"a","start_line":0,"end_line":2}]}"#,
                "start_line: 0",
            ),
            (
                r#"{"blocks":[{"path":"a","start_line":5,"end_line":2}]}"#,
                "start_line 5 is after end_line 2",
            ),
            (
                r#"{"blocks":[{"path":"a","start_line":"3","end_line":4}]}"#,
                "start_line",
            ),
        ] {
            let err = Diagnosis::parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}

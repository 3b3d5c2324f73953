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

/// An optional field that was ignored: its JSON path and what it should have been.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredField {
    pub path: String,
    pub expected: String,
}

/// The largest line number a block may name (lines are 32-bit).
pub const MAX_LINE: u64 = u32::MAX as u64;

impl Diagnosis {
    /// Parses and schema-checks a diagnosis (the attempt format, docs/agents.md). The error is the reason the
    /// attempt is not schema-valid, naming the JSON path of the first offending value.
    pub fn parse(text: &str) -> Result<Diagnosis, String> {
        Diagnosis::parse_reporting(text).map(|(d, _)| d)
    }

    /// `parse`, also saying which optional fields of the wrong type were ignored.
    pub fn parse_reporting(text: &str) -> Result<(Diagnosis, Vec<IgnoredField>), String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
        Diagnosis::from_value_reporting(value)
    }

    pub fn from_value(value: serde_json::Value) -> Result<Diagnosis, String> {
        Diagnosis::from_value_reporting(value).map(|(d, _)| d)
    }

    /// `from_value`, also saying which optional fields of the wrong type were ignored:
    /// they are left out, and do not make the diagnosis invalid.
    pub fn from_value_reporting(
        mut value: serde_json::Value,
    ) -> Result<(Diagnosis, Vec<IgnoredField>), String> {
        let ignored = drop_wrong_optional_fields(&mut value);
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
                    Some(n) if (1..=MAX_LINE).contains(&n) => Ok(n),
                    Some(n) if n > MAX_LINE => Err(format!(
                        "blocks[{i}].{key}: {n} is above the largest line number, {MAX_LINE}"
                    )),
                    _ if v.is_number()
                        && v.as_f64()
                            .is_some_and(|f| f.fract() == 0.0 && f > MAX_LINE as f64) =>
                    {
                        Err(format!(
                            "blocks[{i}].{key}: {v} is above the largest line number, {MAX_LINE}"
                        ))
                    }
                    _ => Err(format!("blocks[{i}].{key}: {v} is not an integer >= 1")),
                }
            };
            let s = line("start_line")?;
            let e = line("end_line")?;
            if s > e {
                return Err(format!("blocks[{i}]: start_line {s} is after end_line {e}"));
            }
        }
        if let Some(obj) = value.as_object_mut() {
            for key in ["summary", "incident"] {
                if obj.get(key).is_some_and(|v| v.is_null()) {
                    obj.remove(key);
                }
            }
        }
        let d: Diagnosis = serde_json::from_value(value)
            .map_err(|e| format!("does not match the diagnosis schema: {e}"))?;
        Ok((d, ignored))
    }

    /// Reads and schema-checks `diagnosis.json`; the error names the file.
    pub fn load(path: &Path) -> Result<Diagnosis, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Diagnosis::parse(&text).map_err(|why| format!("{}: {why}", path.display()))
    }
}

/// Removes the optional fields that have the wrong type (`summary` and `incident` not
/// strings, a block's `rationale` not a string or `confidence` not a number) and says which.
fn drop_wrong_optional_fields(value: &mut serde_json::Value) -> Vec<IgnoredField> {
    let mut ignored = Vec::new();
    let mut check = |obj: &mut serde_json::Map<String, serde_json::Value>,
                     at: &str,
                     key: &str,
                     expected: &str,
                     ok: fn(&serde_json::Value) -> bool| {
        if obj.get(key).is_some_and(|v| !v.is_null() && !ok(v)) {
            obj.remove(key);
            ignored.push(IgnoredField {
                path: format!("{at}{key}"),
                expected: expected.to_string(),
            });
        }
    };
    let Some(obj) = value.as_object_mut() else {
        return Vec::new();
    };
    check(
        obj,
        "",
        "incident",
        "a string",
        serde_json::Value::is_string,
    );
    check(obj, "", "summary", "a string", serde_json::Value::is_string);
    if let Some(serde_json::Value::Array(blocks)) = obj.get_mut("blocks") {
        for (i, b) in blocks.iter_mut().enumerate() {
            if let Some(b) = b.as_object_mut() {
                let at = format!("blocks[{i}].");
                check(
                    b,
                    &at,
                    "rationale",
                    "a string",
                    serde_json::Value::is_string,
                );
                check(
                    b,
                    &at,
                    "confidence",
                    "a number",
                    serde_json::Value::is_number,
                );
            }
        }
    }
    ignored
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
    fn optional_fields_of_the_wrong_type_are_ignored_and_named() {
        let (d, ignored) = Diagnosis::parse_reporting(
            r#"{"summary": 3, "blocks":[{"path":"a","start_line":1,"end_line":2,"rationale":5,"confidence":"high"}]}"#,
        )
        .unwrap();
        assert_eq!(d.blocks[0].rationale, None);
        assert_eq!(d.blocks[0].confidence, None);
        let paths: Vec<&str> = ignored.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["summary", "blocks[0].rationale", "blocks[0].confidence"]
        );
        assert_eq!(ignored[2].expected, "a number");
    }

    #[test]
    fn a_line_above_the_32_bit_range_says_so() {
        for n in ["4294967296", "18446744073709551616"] {
            let text = format!(r#"{{"blocks":[{{"path":"a","start_line":1,"end_line":{n}}}]}}"#);
            let err = Diagnosis::parse(&text).unwrap_err();
            assert!(
                err.contains("above the largest line number, 4294967295"),
                "{n}: {err}"
            );
        }
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

//! `labels.json`: the human-labeled causal blocks of an incident (never shown to an agent).

use super::problem::{kind, read_json_file, JsonReader, Problem};
use crate::util::paths::unsafe_rel_path_reason;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One labeled causal block. Unknown fields are kept so a tool that rewrites the file
/// loses nothing another tool wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelBlock {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotator: Option<String>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Labels {
    pub blocks: Vec<LabelBlock>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl LabelBlock {
    /// A block with no note, annotator or other fields.
    pub fn new(path: impl Into<String>, start_line: u32, end_line: u32) -> LabelBlock {
        LabelBlock {
            path: path.into(),
            start_line,
            end_line,
            note: None,
            annotator: None,
            extra: Default::default(),
        }
    }
}

impl Labels {
    /// Loads `labels.json`, returning the first problem (see `load_all` for every one).
    pub fn load(file: &Path) -> Result<Labels, Problem> {
        let (labels, mut problems) = Labels::load_all(file);
        match labels {
            Some(l) if problems.is_empty() => Ok(l),
            _ => Err(problems.remove(0)),
        }
    }

    /// Loads `labels.json` and reports every problem of shape (not of content: that the files
    /// and lines exist is checked by `incident::validate` against the repository).
    pub fn load_all(file: &Path) -> (Option<Labels>, Vec<Problem>) {
        match read_json_file(file) {
            Ok(value) => Labels::from_value(file, &value),
            Err(p) => (None, vec![p]),
        }
    }

    pub fn from_value(file: &Path, v: &serde_json::Value) -> (Option<Labels>, Vec<Problem>) {
        let mut r = JsonReader::new(file);
        let Some(items) = v.get("blocks").and_then(|b| b.as_array()) else {
            match v.get("blocks") {
                Some(other) => r.complain(
                    "blocks",
                    format!("expected an array of blocks, found {}", kind(other)),
                ),
                None if v.is_object() => {
                    r.complain("blocks", "missing; expected an array of blocks")
                }
                None => r.complain(
                    "",
                    format!("expected a JSON object with \"blocks\", found {}", kind(v)),
                ),
            }
            return (None, r.problems);
        };
        let mut blocks = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let base = format!("blocks[{i}]");
            if !item.is_object() {
                r.complain(&base, format!("expected an object, found {}", kind(item)));
                continue;
            }
            let path = r.string(item, &base, "path");
            if let Some(p) = &path {
                if let Some(why) = unsafe_rel_path_reason(p) {
                    r.complain(&format!("{base}.path"), why);
                }
            }
            let start = r.line(item, &base, "start_line");
            let end = r.line(item, &base, "end_line");
            if let (Some(s), Some(e)) = (start, end) {
                if e < s {
                    r.complain(
                        &format!("{base}.end_line"),
                        format!("{e} is before start_line {s}"),
                    );
                }
            }
            let note = r.opt_string(item, &base, "note");
            let annotator = r.opt_string(item, &base, "annotator");
            if let (Some(path), Some(start_line), Some(end_line)) = (path, start, end) {
                let mut extra = item.as_object().cloned().unwrap_or_default();
                for k in ["path", "start_line", "end_line", "note", "annotator"] {
                    extra.remove(k);
                }
                blocks.push(LabelBlock {
                    path,
                    start_line,
                    end_line,
                    note,
                    annotator,
                    extra,
                });
            }
        }
        let mut extra = v.as_object().cloned().unwrap_or_default();
        extra.remove("blocks");
        (Some(Labels { blocks, extra }), r.problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_end_before_start_with_its_json_path() {
        let v = json!({"blocks": [
            {"path": "a.java", "start_line": 1, "end_line": 2},
            {"path": "b.java", "start_line": 4, "end_line": 5},
            {"path": "c.java", "start_line": 9, "end_line": 3}
        ]});
        let (_, p) = Labels::from_value(Path::new("incidents/zk-x/labels.json"), &v);
        assert_eq!(p.len(), 1);
        assert_eq!(
            p[0].to_string(),
            "incidents/zk-x/labels.json: blocks[2].end_line: 3 is before start_line 9"
        );
    }

    #[test]
    fn rejects_escaping_paths_and_bad_lines() {
        let v = json!({"blocks": [
            {"path": "../x", "start_line": 0, "end_line": "7"}
        ]});
        let (_, p) = Labels::from_value(Path::new("labels.json"), &v);
        let all: Vec<String> = p.iter().map(|p| p.to_string()).collect();
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(all[0].contains("blocks[0].path"));
        assert!(all[1].contains("blocks[0].start_line: 0 is not a line number"));
        assert!(
            all[2].contains("blocks[0].end_line: expected an integer >= 1, found the string \"7\"")
        );
    }

    #[test]
    fn keeps_unknown_fields_through_a_round_trip() {
        let v = json!({"blocks": [{"path": "a", "start_line": 1, "end_line": 1, "created_at": "t"}], "version": 2});
        let (l, p) = Labels::from_value(Path::new("labels.json"), &v);
        assert!(p.is_empty());
        let back = serde_json::to_value(l.unwrap()).unwrap();
        assert_eq!(back["version"], 2);
        assert_eq!(back["blocks"][0]["created_at"], "t");
    }
}

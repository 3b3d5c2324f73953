//! A validation problem: the file, where in it (JSON path or line), and what was expected.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem found in an input file. Displays as `file: location: message`
/// (or `file: message` when there is no finer location).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    pub location: String,
    pub message: String,
}

impl Problem {
    pub fn new(file: &Path, location: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            file: file.to_path_buf(),
            location: location.into(),
            message: message.into(),
        }
    }

    /// A problem for a JSON syntax error, located by serde's line and column.
    pub fn from_json_error(file: &Path, err: &serde_json::Error) -> Problem {
        Problem::new(
            file,
            format!("line {} column {}", err.line(), err.column()),
            format!("invalid JSON: {}", strip_position(&err.to_string())),
        )
    }
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.location.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(
                f,
                "{}: {}: {}",
                self.file.display(),
                self.location,
                self.message
            )
        }
    }
}

impl std::error::Error for Problem {}

/// Reads and parses a JSON input file; the problem names the file and, for a syntax error,
/// the line and column.
pub fn read_json_file(file: &Path) -> Result<serde_json::Value, Problem> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Problem::new(file, "", format!("cannot read: {e}")))?;
    super::strict_json::parse(&text).map_err(|e| Problem::from_json_error(file, &e))
}

/// Reads JSON fields from a `serde_json::Value` while recording where each one lives, so every
/// complaint can name the JSON path of the offending value.
pub struct JsonReader<'a> {
    pub file: &'a Path,
    pub problems: Vec<Problem>,
}

impl<'a> JsonReader<'a> {
    pub fn new(file: &'a Path) -> Self {
        JsonReader {
            file,
            problems: Vec::new(),
        }
    }

    pub fn complain(&mut self, location: &str, message: impl Into<String>) {
        self.problems
            .push(Problem::new(self.file, location, message));
    }

    fn join(base: &str, key: &str) -> String {
        if base.is_empty() {
            key.to_string()
        } else {
            format!("{base}.{key}")
        }
    }

    /// A required string field.
    pub fn string(&mut self, obj: &serde_json::Value, base: &str, key: &str) -> Option<String> {
        let loc = Self::join(base, key);
        match obj.get(key) {
            None => {
                self.complain(&loc, "missing; expected a string");
                None
            }
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.complain(&loc, format!("expected a string, found {}", kind(other)));
                None
            }
        }
    }

    /// An optional string field (absent or null is fine, any other type is a problem).
    pub fn opt_string(&mut self, obj: &serde_json::Value, base: &str, key: &str) -> Option<String> {
        match obj.get(key) {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(other) => {
                let loc = Self::join(base, key);
                self.complain(&loc, format!("expected a string, found {}", kind(other)));
                None
            }
        }
    }

    /// A required positive integer (1-based line numbers).
    pub fn line(&mut self, obj: &serde_json::Value, base: &str, key: &str) -> Option<u32> {
        let loc = Self::join(base, key);
        match obj.get(key) {
            None => {
                self.complain(&loc, "missing; expected a line number (integer >= 1)");
                None
            }
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 && n <= u32::MAX as u64 => Some(n as u32),
                Some(n) => {
                    self.complain(
                        &loc,
                        format!("{n} is not a line number; expected an integer >= 1"),
                    );
                    None
                }
                None => {
                    self.complain(
                        &loc,
                        format!("expected an integer >= 1, found {}", describe(v)),
                    );
                    None
                }
            },
        }
    }
}

/// The JSON type of a value, for messages.
pub fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn describe(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Number(n) => format!("{n}"),
        serde_json::Value::String(s) => format!("the string {s:?}"),
        other => kind(other).to_string(),
    }
}

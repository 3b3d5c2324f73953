//! `incident.json`: the manifest of one incident, parsed with JSON-path errors.

use super::problem::{kind, read_json_file, JsonReader, Problem};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Logic,
    Concurrency,
    ErrorHandling,
    Config,
    Other,
}

impl Category {
    pub const ALL: [&'static str; 5] =
        ["logic", "concurrency", "error-handling", "config", "other"];

    pub fn parse(s: &str) -> Option<Category> {
        Some(match s {
            "logic" => Category::Logic,
            "concurrency" => Category::Concurrency,
            "error-handling" => Category::ErrorHandling,
            "config" => Category::Config,
            "other" => Category::Other,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Logic => "logic",
            Category::Concurrency => "concurrency",
            Category::ErrorHandling => "error-handling",
            Category::Config => "config",
            Category::Other => "other",
        }
    }
}

/// Where the buggy revision comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepositorySource {
    /// A source tree inside the incident folder.
    Path(String),
    /// A git repository and the 40-hex buggy commit.
    Git { url: String, commit: String },
}

/// Where the upstream fix comes from (never shown to an agent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixSource {
    Patch(String),
    Commit(String),
}

#[derive(Debug, Clone)]
pub struct Manifest {
    pub id: String,
    pub system: String,
    pub language: String,
    pub category: Category,
    pub tags: Vec<String>,
    pub repository: RepositorySource,
    pub report: String,
    pub evidence: Vec<String>,
    pub fix: Option<FixSource>,
}

/// True when `id` matches `[a-z0-9][a-z0-9._-]*`.
pub fn is_valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    match chars.next() {
        Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit() => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
}

/// True for a full 40-hex git commit id.
pub fn is_commit_id(s: &str) -> bool {
    s.len() == 40 && s.chars().all(|c| c.is_ascii_hexdigit())
}

impl Manifest {
    /// Loads `incident.json`; the first problem found is returned (use `parse_all` for every one).
    pub fn load(file: &Path) -> Result<Manifest, Problem> {
        let (manifest, mut problems) = Manifest::load_all(file);
        match manifest {
            Some(m) if problems.is_empty() => Ok(m),
            _ => Err(problems.remove(0)),
        }
    }

    /// Loads `incident.json` and returns every problem found, plus the manifest when its
    /// required fields could be read.
    pub fn load_all(file: &Path) -> (Option<Manifest>, Vec<Problem>) {
        match read_json_file(file) {
            Ok(value) => Manifest::from_value(file, &value),
            Err(p) => (None, vec![p]),
        }
    }

    pub fn from_value(file: &Path, v: &serde_json::Value) -> (Option<Manifest>, Vec<Problem>) {
        let mut r = JsonReader::new(file);
        if !v.is_object() {
            r.complain("", format!("expected a JSON object, found {}", kind(v)));
            return (None, r.problems);
        }
        let id = read_id(&mut r, v);
        let system = r.string(v, "", "system");
        let language = r.string(v, "", "language");
        let category = read_category(&mut r, v);
        let tags = read_strings(&mut r, v, "tags", "a string", "an array of strings");
        let repository = read_repository(&mut r, v);
        let report = match v.get("report") {
            None => Some("report.md".to_string()),
            Some(_) => r.string(v, "", "report"),
        };
        let evidence = read_strings(
            &mut r,
            v,
            "evidence",
            "a file path string",
            "an array of file paths",
        );
        let fix = read_fix(&mut r, v);
        let manifest = match (
            id, system, language, category, tags, repository, report, evidence,
        ) {
            (
                Some(id),
                Some(system),
                Some(language),
                Some(category),
                Some(tags),
                Some(repository),
                Some(report),
                Some(evidence),
            ) => Some(Manifest {
                id,
                system,
                language,
                category,
                tags,
                repository,
                report,
                evidence,
                fix,
            }),
            _ => None,
        };
        (manifest, r.problems)
    }

    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }
}

/// `id`, complained about when it does not follow the id pattern (and still returned).
fn read_id(r: &mut JsonReader<'_>, v: &serde_json::Value) -> Option<String> {
    let id = r.string(v, "", "id");
    if let Some(id) = &id {
        if !is_valid_id(id) {
            r.complain(
                "id",
                format!("{id:?} is not a valid id; expected [a-z0-9][a-z0-9._-]*"),
            );
        }
    }
    id
}

/// `category`, one of `Category::ALL`.
fn read_category(r: &mut JsonReader<'_>, v: &serde_json::Value) -> Option<Category> {
    r.string(v, "", "category")
        .and_then(|c| match Category::parse(&c) {
            Some(cat) => Some(cat),
            None => {
                r.complain(
                    "category",
                    format!(
                        "{c:?} is not a category; expected one of {}",
                        Category::ALL.join(", ")
                    ),
                );
                None
            }
        })
}

/// A field that is an array of strings (`tags`, `evidence`), empty when absent or null.
/// Items that are not strings are complained about and left out; `item` and `array` say what
/// was expected, for the complaint.
fn read_strings(
    r: &mut JsonReader<'_>,
    v: &serde_json::Value,
    field: &str,
    item: &str,
    array: &str,
) -> Option<Vec<String>> {
    match v.get(field) {
        None | Some(serde_json::Value::Null) => Some(Vec::new()),
        Some(serde_json::Value::Array(items)) => {
            let mut out = Vec::new();
            for (i, t) in items.iter().enumerate() {
                match t.as_str() {
                    Some(s) => out.push(s.to_string()),
                    None => r.complain(
                        &format!("{field}[{i}]"),
                        format!("expected {item}, found {}", kind(t)),
                    ),
                }
            }
            Some(out)
        }
        Some(other) => {
            r.complain(field, format!("expected {array}, found {}", kind(other)));
            None
        }
    }
}

/// `repository`: required, an object with either a `path` or a `url` and a `commit`.
fn read_repository(r: &mut JsonReader<'_>, v: &serde_json::Value) -> Option<RepositorySource> {
    match v.get("repository") {
        Some(repo @ serde_json::Value::Object(_)) => match (repo.get("path"), repo.get("url")) {
            (Some(_), Some(_)) => {
                r.complain("repository", "has both path and url; expected exactly one");
                None
            }
            (Some(_), None) => r
                .string(repo, "repository", "path")
                .map(RepositorySource::Path),
            (None, Some(_)) => read_git_repository(r, repo),
            (None, None) => {
                r.complain(
                    "repository",
                    "expected {\"path\": \"<dir>\"} or {\"url\": \"<git url>\", \"commit\": \"<40-hex>\"}",
                );
                None
            }
        },
        Some(other) => {
            r.complain(
                "repository",
                format!("expected an object, found {}", kind(other)),
            );
            None
        }
        None => {
            r.complain(
                "repository",
                "missing; expected {\"path\": ...} or {\"url\": ..., \"commit\": ...}",
            );
            None
        }
    }
}

/// The `url` and 40-hex `commit` of a `repository` object that names a git repository.
fn read_git_repository(
    r: &mut JsonReader<'_>,
    repo: &serde_json::Value,
) -> Option<RepositorySource> {
    let url = r.string(repo, "repository", "url");
    let commit = r.string(repo, "repository", "commit");
    if let Some(c) = &commit {
        if !is_commit_id(c) {
            r.complain(
                "repository.commit",
                format!("{c:?} is not a 40-hex commit id"),
            );
        }
    }
    match (url, commit) {
        (Some(url), Some(commit)) => Some(RepositorySource::Git { url, commit }),
        _ => None,
    }
}

/// `fix`: optional, an object with either a `patch` or a 40-hex `commit`.
fn read_fix(r: &mut JsonReader<'_>, v: &serde_json::Value) -> Option<FixSource> {
    match v.get("fix") {
        None | Some(serde_json::Value::Null) => None,
        Some(f @ serde_json::Value::Object(_)) => match (f.get("patch"), f.get("commit")) {
            (Some(_), None) => r.string(f, "fix", "patch").map(FixSource::Patch),
            (None, Some(_)) => {
                let c = r.string(f, "fix", "commit");
                if let Some(c) = &c {
                    if !is_commit_id(c) {
                        r.complain("fix.commit", format!("{c:?} is not a 40-hex commit id"));
                    }
                }
                c.map(FixSource::Commit)
            }
            _ => {
                r.complain(
                    "fix",
                    "expected {\"patch\": \"<file>\"} or {\"commit\": \"<40-hex>\"}",
                );
                None
            }
        },
        Some(other) => {
            r.complain("fix", format!("expected an object, found {}", kind(other)));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> (Option<Manifest>, Vec<String>) {
        let (m, p) = Manifest::from_value(Path::new("incident.json"), &v);
        (m, p.iter().map(|p| p.to_string()).collect())
    }

    #[test]
    fn parses_the_contract_example() {
        let (m, p) = parse(json!({
            "id": "zk-session-expiry", "system": "ZooKeeper", "language": "java",
            "category": "concurrency", "tags": ["no-internal-stack-trace"],
            "repository": {"path": "repo"}, "report": "report.md",
            "evidence": ["evidence/server1.log"], "fix": {"patch": "fix.patch"}
        }));
        assert!(p.is_empty(), "{p:?}");
        let m = m.unwrap();
        assert_eq!(m.category, Category::Concurrency);
        assert_eq!(m.repository, RepositorySource::Path("repo".into()));
        assert_eq!(m.fix, Some(FixSource::Patch("fix.patch".into())));
    }

    #[test]
    fn names_every_bad_field() {
        let (m, p) = parse(json!({
            "id": "Bad Id", "system": 3, "language": "java", "category": "weird",
            "repository": {"url": "https://x/y.git", "commit": "abc"}, "tags": [1]
        }));
        assert!(m.is_none());
        let all = p.join("\n");
        assert!(
            all.contains("incident.json: id: \"Bad Id\" is not a valid id"),
            "{all}"
        );
        assert!(
            all.contains("system: expected a string, found a number"),
            "{all}"
        );
        assert!(
            all.contains("category: \"weird\" is not a category"),
            "{all}"
        );
        assert!(
            all.contains("repository.commit: \"abc\" is not a 40-hex commit id"),
            "{all}"
        );
        assert!(all.contains("tags[0]: expected a string"), "{all}");
    }

    #[test]
    fn ids_follow_the_pattern() {
        assert!(is_valid_id("zk-1.a_b"));
        assert!(!is_valid_id("-zk"));
        assert!(!is_valid_id("Zk"));
        assert!(!is_valid_id(""));
    }
}

//! The model agent's tools: `search`, `read`, `list` and `outline`, all read-only and
//! confined to the prepared workspace, with capped output. (`submit` is handled by the agent
//! loop because it ends the attempt.) Each call also reports which lines it showed, so the
//! trajectory's `paths_read` tells the editor where the agent looked.

use crate::attempt::PathRead;
use crate::util::paths::unsafe_rel_path_reason;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Matches returned by one `search` unless the model asks for fewer.
pub const SEARCH_DEFAULT: usize = 50;
/// Matches one `search` may return at most.
pub const SEARCH_MAX: usize = 200;
/// Lines one `read` returns when no range is given, and at most.
pub const READ_DEFAULT_LINES: u32 = 200;
pub const READ_MAX_LINES: u32 = 400;
/// Characters one tool result may hold; longer output is cut with a note.
pub const OUTPUT_MAX_CHARS: usize = 24_000;
/// Entries one `list` shows at most.
pub const LIST_MAX: usize = 500;
/// Files larger than this are not searched (generated or data files).
const SEARCH_FILE_MAX_BYTES: u64 = 2 * 1024 * 1024;
/// Characters of one matching line shown by `search`.
const LINE_MAX_CHARS: usize = 240;

/// The result of one tool call: the text the model sees and what it read.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolOutput {
    pub text: String,
    pub paths_read: Vec<PathRead>,
    /// The call was rejected (bad arguments, a path outside the workspace…); `text` says why.
    pub is_error: bool,
}

impl ToolOutput {
    fn ok(text: String, paths_read: Vec<PathRead>) -> ToolOutput {
        ToolOutput {
            text: cap_chars(text, OUTPUT_MAX_CHARS),
            paths_read,
            is_error: false,
        }
    }

    fn error(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            text: text.into(),
            paths_read: Vec::new(),
            is_error: true,
        }
    }
}

/// The names of every tool, `submit` included, as the model calls them.
pub const TOOL_NAMES: [&str; 5] = ["search", "read", "list", "outline", "submit"];

/// The OpenAI `tools` array describing every tool.
pub fn tool_specs() -> Value {
    let f = |name: &str, description: &str, parameters: Value| json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}});
    json!([
        f("search", "Search the repository's files for a regular expression (Rust regex syntax). Returns `path:line: text` lines.",
          json!({"type": "object", "properties": {
              "pattern": {"type": "string", "description": "regular expression"},
              "glob": {"type": "string", "description": "only files whose path matches this glob, e.g. **/*.java"},
              "path": {"type": "string", "description": "only under this folder"},
              "ignore_case": {"type": "boolean"},
              "max_results": {"type": "integer", "description": "at most 200"}},
            "required": ["pattern"]})),
        f("read", "Read lines of a file, numbered. At most 400 lines per call.",
          json!({"type": "object", "properties": {
              "path": {"type": "string"},
              "start_line": {"type": "integer", "description": "1-based, default 1"},
              "end_line": {"type": "integer", "description": "inclusive"}},
            "required": ["path"]})),
        f("list", "List a folder of the repository (folders end with /).",
          json!({"type": "object", "properties": {"path": {"type": "string", "description": "default: the repository root"}}})),
        f("outline", "The definitions (classes, functions, methods) of a file with their line numbers.",
          json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})),
        f("submit", "Submit the diagnosis: the code blocks that cause the failure. Ends the attempt.",
          json!({"type": "object", "properties": {
              "summary": {"type": "string", "description": "the root cause in a few sentences"},
              "blocks": {"type": "array", "items": {"type": "object", "properties": {
                  "path": {"type": "string", "description": "relative to the repository root"},
                  "start_line": {"type": "integer"},
                  "end_line": {"type": "integer"},
                  "rationale": {"type": "string"},
                  "confidence": {"type": "number"}},
                "required": ["path", "start_line", "end_line"]}}},
            "required": ["summary", "blocks"]})),
    ])
}

/// Where the read-only tools run: in this process (confined by path checks alone), or each
/// call in a fresh `distdebug agent-tool` process under bubblewrap, which sees the workspace
/// read-only and none of the hidden paths, with no network.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRunner {
    InProcess,
    Sandboxed {
        /// The `distdebug` executable that serves one call.
        exe: PathBuf,
        /// Paths to hide besides those every sandbox hides.
        hide: Vec<PathBuf>,
    },
}

/// One call as `distdebug agent-tool` reads it on stdin.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ToolRequest {
    pub workspace: PathBuf,
    pub tool: String,
    pub args: Value,
}

/// Serves one `ToolRequest` (the body of `distdebug agent-tool`).
pub fn serve(request: &str) -> ToolOutput {
    match serde_json::from_str::<ToolRequest>(request) {
        Ok(r) => match Toolbox::new(&r.workspace) {
            Ok(tb) => tb.run(&r.tool, &r.args),
            Err(e) => ToolOutput::error(e),
        },
        Err(e) => ToolOutput::error(format!("agent-tool: not a tool request: {e}")),
    }
}

/// Runs one call in a sandboxed `distdebug agent-tool` process. `output` is the attempt's
/// folder, whose configuration's results are hidden too.
pub fn run_sandboxed(
    exe: &Path,
    hide: &[PathBuf],
    workspace: &Path,
    output: &Path,
    tool: &str,
    args: &Value,
) -> ToolOutput {
    use std::io::Write;
    let Some(bwrap) = super::sandbox::bwrap() else {
        return ToolOutput::error("bubblewrap (bwrap) is not available to sandbox the tools");
    };
    let mut all_hidden = super::sandbox::default_hidden(output);
    all_hidden.extend(hide.iter().cloned());
    let mounts = super::sandbox::Mounts {
        workspace: workspace.to_path_buf(),
        workspace_writable: false,
        output: None,
        hide: all_hidden,
        expose: vec![exe.to_path_buf()],
        network: super::sandbox::Network::None,
        net_dir: None,
    };
    let args_list = match super::sandbox::bwrap_args(&mounts) {
        Ok(a) => a,
        Err(e) => return ToolOutput::error(e),
    };
    let request = ToolRequest {
        workspace: workspace.to_path_buf(),
        tool: tool.to_string(),
        args: args.clone(),
    };
    let child = std::process::Command::new(bwrap)
        .args(args_list)
        .arg("--")
        .arg(exe)
        .arg("agent-tool")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return ToolOutput::error(format!("cannot start the sandboxed tool: {e}")),
    };
    if let Some(mut stdin) = child.stdin.take() {
        let body = serde_json::to_string(&request).unwrap_or_default();
        let _ = stdin.write_all(body.as_bytes());
    }
    match child.wait_with_output() {
        Ok(out) => serde_json::from_slice::<ToolOutput>(&out.stdout).unwrap_or_else(|_| {
            ToolOutput::error(format!(
                "the sandboxed tool failed ({}): {}",
                out.status,
                cap_chars(String::from_utf8_lossy(&out.stderr).trim().to_string(), 300)
            ))
        }),
        Err(e) => ToolOutput::error(format!("the sandboxed tool failed: {e}")),
    }
}

/// Read-only access to one workspace. Every path is checked to stay inside it, after
/// symlinks are resolved.
#[derive(Debug, Clone)]
pub struct Toolbox {
    root: PathBuf,
}

impl Toolbox {
    pub fn new(workspace: &Path) -> Result<Toolbox, String> {
        let root = workspace
            .canonicalize()
            .map_err(|e| format!("{}: cannot open the workspace: {e}", workspace.display()))?;
        Ok(Toolbox { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs one read-only tool. Unknown tools and bad arguments come back as error outputs
    /// for the model to correct.
    pub fn run(&self, tool: &str, args: &Value) -> ToolOutput {
        let result = match tool {
            "search" => self.search(args),
            "read" => self.read(args),
            "list" => self.list(args),
            "outline" => self.outline(args),
            other => Err(format!(
                "unknown tool {other:?}; the tools are: {}",
                TOOL_NAMES.join(", ")
            )),
        };
        result.unwrap_or_else(ToolOutput::error)
    }

    /// Resolves a workspace-relative path to a real path inside the workspace.
    fn resolve(&self, rel: &str) -> Result<(PathBuf, String), String> {
        let rel = crate::util::paths::normalize_rel(rel);
        if rel.is_empty() {
            return Ok((self.root.clone(), String::new()));
        }
        if let Some(why) = unsafe_rel_path_reason(&rel) {
            return Err(why);
        }
        let real = self
            .root
            .join(&rel)
            .canonicalize()
            .map_err(|_| format!("{rel}: no such file or folder in the repository"))?;
        if !real.starts_with(&self.root) {
            return Err(format!("{rel}: leads outside the repository"));
        }
        Ok((real, rel))
    }

    fn search(&self, args: &Value) -> Result<ToolOutput, String> {
        let pattern = str_arg(args, "pattern")?.ok_or("search: `pattern` is required")?;
        let ignore_case = args
            .get("ignore_case")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let re = regex::RegexBuilder::new(&pattern)
            .case_insensitive(ignore_case)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("search: bad pattern: {e}"))?;
        let glob = match str_arg(args, "glob")? {
            Some(g) => Some(
                globset::GlobBuilder::new(&g)
                    .literal_separator(false)
                    .build()
                    .map_err(|e| format!("search: bad glob {g:?}: {e}"))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let limit = args
            .get("max_results")
            .and_then(Value::as_u64)
            .map(|n| (n as usize).clamp(1, SEARCH_MAX))
            .unwrap_or(SEARCH_DEFAULT);
        let (base, _) = self.resolve(&str_arg(args, "path")?.unwrap_or_default())?;

        let mut files = Vec::new();
        let walker = ignore::WalkBuilder::new(&base)
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walker.flatten() {
            if entry.file_type().is_some_and(|t| t.is_file()) {
                let rel = self.rel_of(entry.path());
                if glob.as_ref().is_none_or(|g| g.is_match(&rel)) {
                    files.push((rel, entry.into_path()));
                }
            }
        }
        files.sort();

        let mut lines = Vec::new();
        let mut paths_read = Vec::new();
        let mut total = 0usize;
        for (rel, path) in files {
            if std::fs::metadata(&path)
                .map(|m| m.len())
                .unwrap_or(u64::MAX)
                > SEARCH_FILE_MAX_BYTES
            {
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if bytes.iter().take(8192).any(|&b| b == 0) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            for (i, line) in text.lines().enumerate() {
                if re.is_match(line) {
                    total += 1;
                    if lines.len() < limit {
                        let n = i as u32 + 1;
                        lines.push(format!(
                            "{rel}:{n}: {}",
                            cap_chars(line.trim_end().to_string(), LINE_MAX_CHARS)
                        ));
                        paths_read.push(PathRead {
                            path: rel.clone(),
                            start_line: Some(n),
                            end_line: Some(n),
                        });
                    }
                }
            }
        }
        let mut text = if lines.is_empty() {
            "no matches".to_string()
        } else {
            lines.join("\n")
        };
        if total > lines.len() {
            text.push_str(&format!(
                "\n[{} more matches not shown; narrow the pattern or the glob]",
                total - lines.len()
            ));
        }
        Ok(ToolOutput::ok(text, paths_read))
    }

    fn read(&self, args: &Value) -> Result<ToolOutput, String> {
        let rel = str_arg(args, "path")?.ok_or("read: `path` is required")?;
        let (path, rel) = self.resolve(&rel)?;
        if path.is_dir() {
            return Err(format!("read: {rel} is a folder; use list"));
        }
        let text = crate::incident::read_text_lossy(&path)
            .map_err(|e| format!("read: {rel}: cannot read: {e}"))?;
        let all: Vec<&str> = text.lines().collect();
        let count = all.len() as u32;
        let start = line_arg(args, "start_line")?.unwrap_or(1).max(1);
        if count == 0 {
            return Ok(ToolOutput::ok(format!("{rel} is empty"), Vec::new()));
        }
        if start > count {
            return Err(format!(
                "read: {rel} has {count} lines; start_line {start} is past its end"
            ));
        }
        let wanted_end = line_arg(args, "end_line")?.unwrap_or(start + READ_DEFAULT_LINES - 1);
        if wanted_end < start {
            return Err(format!(
                "read: end_line {wanted_end} is before start_line {start}"
            ));
        }
        let end = wanted_end.min(count).min(start + READ_MAX_LINES - 1);
        let mut out = String::new();
        for n in start..=end {
            out.push_str(&format!("{n:>6}| {}\n", all[(n - 1) as usize]));
        }
        if end < count {
            out.push_str(&format!("[lines {start}-{end} of {count}]"));
        }
        let read = PathRead {
            path: rel,
            start_line: Some(start),
            end_line: Some(end),
        };
        Ok(ToolOutput::ok(out, vec![read]))
    }

    fn list(&self, args: &Value) -> Result<ToolOutput, String> {
        let (dir, rel) = self.resolve(&str_arg(args, "path")?.unwrap_or_default())?;
        if !dir.is_dir() {
            return Err(format!("list: {rel} is a file; use read"));
        }
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| format!("list: {rel}: cannot list: {e}"))?
            .flatten()
            .filter(|e| e.file_name() != ".git")
            .map(|e| {
                let mut n = e.file_name().to_string_lossy().into_owned();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    n.push('/');
                }
                n
            })
            .collect();
        names.sort();
        let total = names.len();
        names.truncate(LIST_MAX);
        let mut text = if names.is_empty() {
            "(empty)".to_string()
        } else {
            names.join("\n")
        };
        if total > names.len() {
            text.push_str(&format!(
                "\n[{} more entries not shown]",
                total - names.len()
            ));
        }
        Ok(ToolOutput::ok(text, Vec::new()))
    }

    fn outline(&self, args: &Value) -> Result<ToolOutput, String> {
        let rel = str_arg(args, "path")?.ok_or("outline: `path` is required")?;
        let (path, rel) = self.resolve(&rel)?;
        if path.is_dir() {
            return Err(format!("outline: {rel} is a folder; use list"));
        }
        let text = crate::incident::read_text_lossy(&path)
            .map_err(|e| format!("outline: {rel}: cannot read: {e}"))?;
        // The code model's tree-sitter outline gives each definition's whole range; files in
        // languages it does not parse fall back to definition-looking lines.
        let defs = crate::code::outline(Path::new(&rel), &text);
        let body = if defs.is_empty() {
            outline_definitions(&rel, &text)
                .iter()
                .map(|(line, sig)| format!("{line:>6}: {sig}"))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            defs.iter()
                .map(|d| {
                    format!(
                        "{:>6}-{:<6} {} {}",
                        d.start_line, d.end_line, d.kind, d.name
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        if body.is_empty() {
            return Ok(ToolOutput::ok(
                format!("{rel}: no definitions found"),
                Vec::new(),
            ));
        }
        Ok(ToolOutput::ok(body, Vec::new()))
    }

    fn rel_of(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// The definitions of a file as (line, signature), found line by line: the outline of files
/// whose language the code model does not parse.
pub fn outline_definitions(_path: &str, text: &str) -> Vec<(u32, String)> {
    static DEF: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = DEF.get_or_init(|| {
        regex::Regex::new(concat!(
            r"^\s*(?:",
            // Rust, Go, Python, Scala and friends: a keyword then a name.
            r"(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:fn|func|def|class|struct|enum|trait|impl|interface|object|type|mod)\b",
            r"|",
            // Java / C++ methods: modifiers, a return type, a name and an opening parenthesis.
            r"(?:(?:public|private|protected|static|final|synchronized|abstract|native|virtual|inline|override)\s+)+[\w<>\[\],.?\s]*\w+\s*\(",
            r"|",
            r"(?:public|private|protected|abstract|final|static)?\s*(?:class|interface|enum|record)\s+\w+",
            r")"
        ))
        .expect("the outline pattern is a valid regex")
    });
    text.lines()
        .enumerate()
        .filter(|(_, l)| re.is_match(l))
        .map(|(i, l)| (i as u32 + 1, cap_chars(l.trim().to_string(), 160)))
        .collect()
}

fn str_arg(args: &Value, key: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
    }
}

fn line_arg(args: &Value, key: &str) -> Result<Option<u32>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        {
            Some(n) if n >= 1 && n <= u32::MAX as u64 => Ok(Some(n as u32)),
            _ => Err(format!("`{key}` must be a line number >= 1, not {v}")),
        },
    }
}

/// Cuts `s` to at most `max` characters, saying how much was cut.
pub fn cap_chars(s: String, max: usize) -> String {
    if s.chars().count() <= max {
        return s;
    }
    let kept: String = s.chars().take(max).collect();
    format!("{kept}\n[output cut at {max} characters]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, Toolbox) {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("ws/src");
        std::fs::create_dir_all(&src).unwrap();
        let body: String = (1..=500).map(|i| format!("line {i}\n")).collect();
        std::fs::write(src.join("Big.java"), body).unwrap();
        std::fs::write(
            src.join("Leader.java"),
            "package x;\npublic class Leader {\n  private void bumpEpoch(long e) {\n    LOG.warn(\"stale epoch {}\", e);\n  }\n}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("secret.txt"), "outside").unwrap();
        let tb = Toolbox::new(&dir.path().join("ws")).unwrap();
        (dir, tb)
    }

    #[test]
    fn read_numbers_lines_caps_the_range_and_reports_what_it_showed() {
        let (_d, tb) = workspace();
        let out = tb.run(
            "read",
            &json!({"path": "src/Big.java", "start_line": 10, "end_line": 12}),
        );
        assert!(!out.is_error, "{}", out.text);
        assert!(out.text.contains("    10| line 10") && out.text.contains("    12| line 12"));
        assert!(!out.text.contains("line 13\n"));
        assert_eq!(out.paths_read[0].start_line, Some(10));
        assert_eq!(out.paths_read[0].end_line, Some(12));
        let out = tb.run("read", &json!({"path": "src/Big.java", "end_line": 500}));
        assert_eq!(out.paths_read[0].end_line, Some(READ_MAX_LINES));
        assert!(out.text.contains("[lines 1-400 of 500]"));
    }

    #[test]
    fn paths_outside_the_workspace_are_refused() {
        let (dir, tb) = workspace();
        for p in ["../secret.txt", "/etc/passwd", "src/../../secret.txt"] {
            let out = tb.run("read", &json!({"path": p}));
            assert!(out.is_error, "{p} must be refused: {}", out.text);
        }
        // A symlink that points outside is refused after it is resolved.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), dir.path().join("ws/link"))
                .unwrap();
            let out = tb.run("read", &json!({"path": "link"}));
            assert!(out.is_error && out.text.contains("outside"), "{}", out.text);
        }
    }

    #[test]
    fn search_finds_matches_with_globs_and_caps_them() {
        let (_d, tb) = workspace();
        let out = tb.run(
            "search",
            &json!({"pattern": "stale epoch", "glob": "**/*.java"}),
        );
        assert_eq!(
            out.text,
            "src/Leader.java:4:     LOG.warn(\"stale epoch {}\", e);"
        );
        assert_eq!(out.paths_read[0].start_line, Some(4));
        let out = tb.run("search", &json!({"pattern": "stale", "glob": "*.go"}));
        assert_eq!(out.text, "no matches");
        let out = tb.run(
            "search",
            &json!({"pattern": "^line \\d+$", "max_results": 5}),
        );
        assert_eq!(out.paths_read.len(), 5);
        assert!(
            out.text.contains("[495 more matches not shown"),
            "{}",
            out.text
        );
        let out = tb.run("search", &json!({"pattern": "("}));
        assert!(out.is_error && out.text.contains("bad pattern"));
    }

    #[test]
    fn list_and_outline() {
        let (_d, tb) = workspace();
        let out = tb.run("list", &json!({}));
        assert_eq!(out.text, "src/");
        let out = tb.run("list", &json!({"path": "src"}));
        assert_eq!(out.text, "Big.java\nLeader.java");
        let out = tb.run("outline", &json!({"path": "src/Leader.java"}));
        let lines: Vec<&str> = out.text.lines().map(|l| l.trim()).collect();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("2-6 ") && l.ends_with(" Leader")),
            "the class with its whole range: {}",
            out.text
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("3-5 ") && l.ends_with(" bumpEpoch")),
            "the method with its whole range: {}",
            out.text
        );
        let out = tb.run("grep", &json!({}));
        assert!(out.is_error && out.text.contains("unknown tool"));
    }
}

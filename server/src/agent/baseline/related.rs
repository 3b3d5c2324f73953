//! From a line the evidence points at to the block worth naming (widened to the enclosing
//! error-handling construct when that is small), and one level of callers and callees.

use crate::code::{BlockKind, FileModel, RepoIndex};
use rayon::prelude::*;

/// The block to name for evidence at `line`, and what it is: the innermost statement; when
/// that sits in a branch (then/else, catch, case), the enclosing compound statement (its
/// condition is usually what went wrong) if it has at most `max_lines` lines, else the branch.
/// Blocks longer than `max_lines` shrink to the line itself.
pub fn widen(m: &FileModel, line: u32, max_lines: u32) -> (u32, u32, &'static str) {
    let Some(i) = m.innermost(line) else {
        return (line, line, "line");
    };
    let b = &m.blocks[i];
    if matches!(b.kind, BlockKind::Statement) {
        if let Some(p) = b.parent.map(|p| p as usize) {
            let parent = &m.blocks[p];
            let compound = match parent.kind {
                BlockKind::Compound => Some(p),
                BlockKind::Arm => parent
                    .parent
                    .map(|g| g as usize)
                    .filter(|&g| m.blocks[g].kind == BlockKind::Compound),
                _ => None,
            };
            if let Some(c) = compound {
                let cb = &m.blocks[c];
                if cb.lines() <= max_lines {
                    return (
                        cb.start_line,
                        cb.end_line,
                        "its enclosing compound statement",
                    );
                }
            }
            if parent.kind == BlockKind::Arm && parent.lines() <= max_lines {
                return (parent.start_line, parent.end_line, "its enclosing branch");
            }
        }
    }
    if b.lines() <= max_lines {
        return (b.start_line, b.end_line, "the statement");
    }
    (line, line, "the line")
}

/// How many lines before a log statement are named with it: a log reports what the
/// statements just before it did, and that is where the fault often is.
pub const LOG_CONTEXT_LINES: u32 = 6;

/// Like `widen`, for a logging or error statement: a statement on its own is named together
/// with the sibling statements just before it, up to `LOG_CONTEXT_LINES` lines in all.
pub fn widen_log(m: &FileModel, line: u32, max_lines: u32) -> (u32, u32, &'static str) {
    let (s, e, what) = widen(m, line, max_lines);
    if what != "the statement" {
        return (s, e, what);
    }
    let Some(i) = m.innermost(line) else {
        return (s, e, what);
    };
    let parent = m.blocks[i].parent.map(|p| p as usize);
    let siblings = m.children(parent);
    let Some(pos) = siblings.iter().position(|&k| k == i) else {
        return (s, e, what);
    };
    let mut start = s;
    for &k in siblings[..pos].iter().rev() {
        let b = &m.blocks[k];
        if e - b.start_line + 1 > LOG_CONTEXT_LINES.min(max_lines) {
            break;
        }
        start = b.start_line;
    }
    if start < s {
        (start, e, "the statements just before it")
    } else {
        (s, e, what)
    }
}

/// Whether `line` sits in code that handles an error: a catch/except clause, or a branch or
/// match arm whose header speaks of errors (`if err != nil`, `case Failure(e)`, `Err(e) =>`).
pub fn in_error_path(m: &FileModel, text: &str, line: u32) -> bool {
    let Some(mut cur) = m.innermost(line) else {
        return false;
    };
    loop {
        let b = &m.blocks[cur];
        if b.kind == BlockKind::Definition {
            return false;
        }
        if matches!(
            b.node,
            "catch_clause" | "except_clause" | "except_group_clause"
        ) {
            return true;
        }
        if matches!(b.kind, BlockKind::Arm | BlockKind::Compound) {
            let header = text
                .get(b.start_byte..b.end_byte)
                .and_then(|t| t.lines().next())
                .unwrap_or("")
                .to_ascii_lowercase();
            if [
                "err",
                "exception",
                "failure",
                "fail",
                "panic",
                "timeout",
                "timedout",
            ]
            .iter()
            .any(|w| header.contains(w))
            {
                return true;
            }
        }
        match b.parent {
            Some(p) => cur = p as usize,
            None => return false,
        }
    }
}

/// Files whose text contains `needle`; `None` when more than `cap` do (too common a name to
/// follow).
pub fn files_containing(index: &RepoIndex, needle: &str, cap: usize) -> Option<Vec<usize>> {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let found: Vec<usize> = index
        .files
        .par_iter()
        .enumerate()
        .filter(|(_, f)| f.lang.grammar().is_some() && finder.find(f.text.as_bytes()).is_some())
        .map(|(i, _)| i)
        .collect();
    if found.len() > cap {
        None
    } else {
        Some(found)
    }
}

/// Names too common to follow as calls.
const COMMON: &[&str] = &[
    "get",
    "set",
    "put",
    "add",
    "size",
    "len",
    "equals",
    "hashCode",
    "toString",
    "append",
    "format",
    "valueOf",
    "max",
    "min",
    "isEmpty",
    "contains",
    "remove",
    "clear",
    "close",
    "length",
    "println",
    "printf",
    "Sprintf",
    "Errorf",
    "New",
    "new",
    "String",
    "unwrap",
    "clone",
    "into",
    "iter",
    "map",
    "push",
    "insert",
    "info",
    "warn",
    "error",
    "debug",
    "trace",
    "warning",
    "Infof",
    "Warnf",
    "Debugf",
    "Warningf",
    "Fatalf",
    "Panicf",
    "Printf",
    "Println",
    "assert",
    "require",
    "of",
    "from",
    "is_empty",
    "to_string",
    "as_ref",
    "lock",
    "unlock",
    "print",
    "str",
    "int",
    "range",
    "sleep",
    "now",
    "join",
    "split",
    "trim",
    "next",
    "hasNext",
];

/// Whether a function name is too common to follow as a call.
pub fn is_common_name(name: &str) -> bool {
    COMMON.contains(&name)
}

/// The function-like definitions named `name` anywhere in the repository (at most `cap`
/// files are parsed), as (file, block index).
pub fn definitions_named(index: &RepoIndex, name: &str, cap: usize) -> Vec<(usize, usize)> {
    if name.len() < 3 || COMMON.contains(&name) {
        return Vec::new();
    }
    let Some(files) = files_containing(index, name, cap) else {
        return Vec::new();
    };
    index.parse_many(&files);
    let mut out = Vec::new();
    for f in files {
        let m = index.model(f);
        for (i, b) in m.blocks.iter().enumerate() {
            if is_function_named(b, name) {
                out.push((f, i));
            }
        }
    }
    out
}

/// Whether block `b` defines a function, method or constructor.
pub fn is_function(b: &crate::code::Block) -> bool {
    b.kind == BlockKind::Definition
        && matches!(b.def_kind, Some("function" | "method" | "constructor"))
}

/// Whether block `b` defines a function, method or constructor called `name`.
pub fn is_function_named(b: &crate::code::Block, name: &str) -> bool {
    // C++ definitions out of their class are named `Class::method`.
    is_function(b)
        && b.name
            .as_deref()
            .map(|n| n.rsplit("::").next().unwrap_or(n))
            == Some(name)
}

/// The functions called from lines `start..=end` of file `file`, resolved to their
/// definitions (names defined more than `max_defs` times are skipped as ambiguous).
pub fn callees(
    index: &RepoIndex,
    file: usize,
    start: u32,
    end: u32,
    max_defs: usize,
) -> Vec<(String, usize, usize)> {
    let m = index.model(file);
    let mut names: Vec<&str> = m
        .calls
        .iter()
        .filter(|c| c.line >= start && c.line <= end)
        .map(|c| c.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut out = Vec::new();
    for name in names.into_iter().take(6) {
        let defs = definitions_named(index, name, 48);
        if defs.is_empty() || defs.len() > max_defs {
            continue;
        }
        for (f, b) in defs {
            // A call to the function the block is in is recursion, not a callee.
            let inside = f == file && {
                let d = &index.model(f).blocks[b];
                d.start_line <= start && end <= d.end_line
            };
            if !inside {
                out.push((name.to_string(), f, b));
            }
        }
    }
    out
}

/// The places that call the function enclosing lines `start..=end` of `file`: (its name,
/// file, line of the call). Empty when the name is too common to follow.
pub fn callers(index: &RepoIndex, file: usize, start: u32, end: u32) -> Vec<(String, usize, u32)> {
    let m = index.model(file);
    let Some(i) = m.covering(start, end) else {
        return Vec::new();
    };
    let Some(fi) = m.function_of(i) else {
        return Vec::new();
    };
    let Some(name) = m.blocks[fi].name.clone() else {
        return Vec::new();
    };
    if name.len() < 3 || COMMON.contains(&name.as_str()) {
        return Vec::new();
    }
    let (fs, fe) = (m.blocks[fi].start_line, m.blocks[fi].end_line);
    let Some(files) = files_containing(index, &name, 48) else {
        return Vec::new();
    };
    index.parse_many(&files);
    let mut out = Vec::new();
    for f in files {
        let cm = index.model(f);
        for c in &cm.calls {
            if c.name == name && !(f == file && c.line >= fs && c.line <= fe) {
                out.push((name.clone(), f, c.line));
            }
        }
    }
    out.truncate(8);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::parse_as;
    use crate::code::Lang;
    use std::path::Path;

    #[test]
    fn widening_takes_the_small_enclosing_if() {
        let src = "class A {\n  boolean acquire(String c) {\n    if (owner != null && !leases.expired(owner)) {\n      log.warn(\"held by {}\", owner);\n      return false;\n    }\n    owner = c;\n    return true;\n  }\n}\n";
        let m = parse_as(Lang::Java, src);
        assert_eq!(widen(&m, 4, 12), (3, 6, "its enclosing compound statement"));
        assert_eq!(
            widen(&m, 4, 3).0..=widen(&m, 4, 3).1,
            4..=5,
            "the branch when the if is too long"
        );
        assert_eq!(widen(&m, 7, 12), (7, 7, "the statement"));
        assert_eq!(widen(&m, 2, 3), (2, 2, "the line"));
        assert_eq!(widen(&m, 99, 3), (99, 99, "line"));
    }

    #[test]
    fn a_log_statement_comes_with_the_statements_before_it() {
        let src = "class A {\n  void expire(S s) {\n    s.setState(CLOSING);\n    sessions.remove(s.id);\n    log.info(\"Expiring {}\", s);\n    s.close();\n  }\n}\n";
        let m = parse_as(Lang::Java, src);
        assert_eq!(
            widen_log(&m, 5, 12),
            (3, 5, "the statements just before it")
        );
        assert_eq!(widen_log(&m, 3, 12), (3, 3, "the statement"));
    }

    #[test]
    fn error_paths_are_recognised() {
        let go = "package a\nfunc f() {\n\tif err := g(); err != nil {\n\t\tlog.Warn(\"x\")\n\t}\n\tlog.Info(\"y\")\n}\n";
        let m = parse_as(Lang::Go, go);
        assert!(in_error_path(&m, go, 4));
        assert!(!in_error_path(&m, go, 6));
        let java =
            "class A { void f() { try { g(); } catch (IOException e) { log.warn(\"z\"); } } }\n";
        let m = parse_as(Lang::Java, java);
        assert!(in_error_path(&m, java, 1));
    }

    #[test]
    fn callers_and_callees_one_level() {
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                ("src/lease.py".into(), "class LeaseTable:\n    def grant_lease(self, c):\n        self.leases[c] = 1\n\n    def expired_at(self, c):\n        return True\n".into()),
                ("src/server.py".into(), "def acquire(t, c):\n    if t.expired_at(c):\n        t.grant_lease(c)\n\ndef main():\n    acquire(t, 'a')\n".into()),
            ],
        );
        let server = idx.file_id("src/server.py").unwrap();
        let lease = idx.file_id("src/lease.py").unwrap();
        let got = callees(&idx, server, 2, 3, 3);
        let names: Vec<_> = got.iter().map(|(n, f, _)| (n.as_str(), *f)).collect();
        assert_eq!(names, [("expired_at", lease), ("grant_lease", lease)]);
        let c = callers(&idx, server, 3, 3);
        assert_eq!(c, vec![("acquire".to_string(), server, 6)]);
        assert!(files_containing(&idx, "def", 1).is_none());
    }

    #[test]
    fn cpp_methods_defined_out_of_their_class_are_found_by_name() {
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![(
                "src/split_planner.cc".into(),
                "SplitPlan SplitPlanner::Build(const Range& p, Key k) const {\n  SplitPlan plan;\n  return plan;\n}\n".into(),
            )],
        );
        let defs = definitions_named(&idx, "Build", 8);
        assert_eq!(defs.len(), 1);
        let m = idx.model(defs[0].0);
        assert_eq!(m.blocks[defs[0].1].start_line, 1);
    }
}

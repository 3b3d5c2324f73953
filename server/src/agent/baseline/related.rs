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

/// The functions a report's qualified name points at (`QuorumPeer.shutdown`,
/// `EntryCache::append`): those called like its last part that lie in a type named like the
/// part before it, in a file named after it (`QuorumPeer.java`, `entry_cache.rs`), or whose
/// header mentions it (a Go receiver). Empty when the name has no qualifier or none match.
/// A method name such as `shutdown` is defined in too many files to be followed alone; its
/// qualifier is what the report adds.
pub fn definitions_qualified(index: &RepoIndex, id: &str, cap: usize) -> Vec<(usize, usize)> {
    let mut parts = id.rsplit(['.', ':']).filter(|p| !p.is_empty());
    let (Some(name), Some(qual)) = (parts.next(), parts.next()) else {
        return Vec::new();
    };
    if name.len() < 3 || qual.len() < 3 {
        return Vec::new();
    }
    // `ZKDatabase.append` is as specific as its qualifier: a common name counts only in a
    // type or file of exactly that name, never through a header that merely mentions it.
    let common = COMMON.contains(&name);
    // Every file with the name (no cap yet: the qualifier narrows them), then those that
    // also hold the qualifier.
    let by_qual = memchr::memmem::Finder::new(qual.as_bytes());
    let mut files = files_containing(index, name, usize::MAX).unwrap_or_default();
    files.retain(|&f| by_qual.find(index.files[f].text.as_bytes()).is_some());
    if files.len() > cap {
        files.retain(|&f| named_after(&index.files[f].path, qual));
    }
    if files.len() > cap {
        return Vec::new();
    }
    index.parse_many(&files);
    let mut out = Vec::new();
    for f in files {
        let m = index.model(f);
        let file_matches = named_after(&index.files[f].path, qual);
        for (i, b) in m.blocks.iter().enumerate() {
            if is_function_named(b, name)
                && (file_matches
                    || inside_type_named(&m, b, qual)
                    || (!common && header_mentions(&index.files[f].text, b, qual)))
            {
                out.push((f, i));
            }
        }
    }
    out
}

/// Whether the file's name, case and `_` aside, is `qual` (`entry_cache.rs` for `EntryCache`).
fn named_after(path: &str, qual: &str) -> bool {
    let mut parts = path.rsplit('/');
    let base = parts.next().unwrap_or(path);
    let mut stem = base.split('.').next().unwrap_or(base);
    // A module's own file takes its folder's name (`storage/mod.rs` for `Storage`).
    if stem == "mod" || stem == "__init__" {
        stem = parts.next().unwrap_or(stem);
    }
    let fold = |s: &str| s.replace('_', "").to_ascii_lowercase();
    fold(stem) == fold(qual)
}

/// Whether a definition encloses `b` whose name is `qual` (a class, an `impl`).
fn inside_type_named(m: &FileModel, b: &crate::code::Block, qual: &str) -> bool {
    let mut parent = b.parent;
    while let Some(p) = parent {
        let Some(a) = m.blocks.get(p as usize) else {
            return false;
        };
        if a.kind == BlockKind::Definition && a.name.as_deref() == Some(qual) {
            return true;
        }
        parent = a.parent;
    }
    false
}

/// Whether the first line of definition `b` mentions `qual` (`func (s *authStore) WithRoot`).
fn header_mentions(text: &str, b: &crate::code::Block, qual: &str) -> bool {
    let head = text
        .get(b.start_byte..b.end_byte.min(text.len()))
        .unwrap_or("");
    head.lines().next().is_some_and(|l| l.contains(qual))
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
    fn a_file_is_named_after_its_type_or_a_module_after_its_folder() {
        assert!(named_after("server/src/entry_cache.rs", "EntryCache"));
        assert!(named_after("src/storage/mod.rs", "Storage"));
        assert!(named_after("distributed/comm/__init__.py", "comm"));
        assert!(!named_after("src/storage/mod.rs", "Mod"));
        assert!(!named_after("src/storage/kv.rs", "Storage"));
    }

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

    #[test]
    fn a_qualified_name_picks_the_method_of_its_type() {
        let peer =
            "package zk;\nclass QuorumPeer {\n  void shutdown() {\n    zkDb.close();\n  }\n}\n";
        let other =
            "package zk;\nclass Learner {\n  void shutdown() {\n    sock.close();\n  }\n}\n";
        let inner = "package zk;\nclass Mgr {\n  class Listener {\n    void shutdown() {\n      halt();\n    }\n  }\n  void shutdown() {\n    stop();\n  }\n}\n";
        let go = "package auth\n\nfunc (as *authStore) WithRoot(ctx int) int {\n\treturn ctx\n}\n\nfunc (t *tokenJWT) WithRoot(ctx int) int {\n\treturn 0\n}\n";
        let db = "package zk;\nclass ZKDatabase {\n  boolean append(Request si) {\n    return log.append(si);\n  }\n}\n";
        let user = "package zk;\nclass Txn {\n  // uses ZKDatabase\n  void append(int x) {\n    n++;\n  }\n}\n";
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                ("src/QuorumPeer.java".into(), peer.into()),
                ("src/Learner.java".into(), other.into()),
                ("src/Mgr.java".into(), inner.into()),
                ("auth/store.go".into(), go.into()),
                ("src/ZKDatabase.java".into(), db.into()),
                ("src/Txn.java".into(), user.into()),
            ],
        );
        let found = |id: &str| -> Vec<(String, u32)> {
            definitions_qualified(&idx, id, 8)
                .into_iter()
                .map(|(f, d)| (idx.files[f].path.clone(), idx.model(f).blocks[d].start_line))
                .collect()
        };
        assert_eq!(
            found("QuorumPeer.shutdown"),
            [("src/QuorumPeer.java".to_string(), 3)]
        );
        assert_eq!(
            found("Mgr.Listener.shutdown"),
            [("src/Mgr.java".to_string(), 4)]
        );
        assert_eq!(
            found("authStore.WithRoot"),
            [("auth/store.go".to_string(), 3)]
        );
        // A common name counts in the type or file its qualifier names, not in a file that
        // merely mentions the qualifier.
        assert_eq!(
            found("ZKDatabase.append"),
            [("src/ZKDatabase.java".to_string(), 3)]
        );
        // No qualifier, or one nothing matches: the caller falls back to the bare name.
        assert!(found("shutdown").is_empty());
        assert!(found("Follower.shutdown").is_empty());
        assert_eq!(definitions_named(&idx, "shutdown", 8).len(), 4);
    }
}

//! Stack frames printed by another version of the code: a frame whose line lies outside the
//! function it names is moved into that function, at the call of the next inner frame's
//! function or at a statement that can fail as the trace's header says; an outer frame whose
//! line calls no inner frame moves to the line of its function that does.
//!
//! A user's trace usually comes from a release, while the workspace holds the revision
//! before the fix; lines drift by a few to a few hundred. Without this, such a frame names
//! whatever code now sits at its old line number, often in another function entirely.

use super::evidence::Templates;
use super::frames::{Frame, FrameKind};
use super::logmatch::SiteHit;
use super::related;
use crate::code::{FileModel, RepoIndex};
use std::collections::HashSet;

/// How much less sure a moved frame is when its new line is only inferred (a statement that
/// can fail as the header says, or the function's first line). A frame moved to a call of
/// the frame inside it keeps its sureness: the call confirms the line.
const INFERRED_SURENESS: f64 = 0.5;

/// Moves every resolved stack frame that lies outside the function it names into that
/// function (when the file defines it). `all` is every parsed frame, for the inner
/// neighbours of frames whose next inner frame lies outside the repository.
pub fn reanchor(index: &RepoIndex, all: &[Frame], resolved: &mut [(Frame, usize, f64)]) {
    let in_repository: HashSet<(usize, usize)> = resolved
        .iter()
        .filter(|r| r.0.kind == FrameKind::Stack)
        .map(|r| (r.0.trace, r.0.pos))
        .collect();
    for (f, file, sure) in resolved.iter_mut() {
        if f.kind != FrameKind::Stack || f.line == 0 {
            continue;
        }
        let Some(name) = f.function.as_deref().and_then(plain_name) else {
            continue;
        };
        let m = index.model(*file);
        let inner = all
            .iter()
            .find(|g| g.kind == FrameKind::Stack && g.trace == f.trace && g.pos + 1 == f.pos)
            .and_then(|g| g.function.as_deref())
            .and_then(plain_name);
        if let Some(def) = enclosing_function_named(&m, f.line, name) {
            // In the right function, an outer frame's line still has to call the frame inside
            // it; when it does not and another line of the function does, the lines drifted
            // within the function. Only for an inner frame of the project: a runtime's or
            // library's (`panic`, `HashMap.get`) may be entered from a line that names no call.
            let inner_here = f.pos > 0 && in_repository.contains(&(f.trace, f.pos - 1));
            if let Some(line) = inner
                .filter(|_| inner_here)
                .and_then(|callee| drifted_call(&m, f.line, def, callee))
            {
                // The call confirms the line as much as the trace's number would have.
                f.moved_from = Some(f.line);
                f.line = line;
            }
            continue;
        }
        let Some(def) = nearest_definition(&m, f.line, name) else {
            continue;
        };
        let text = &index.files[*file].text;
        let (line, factor) = match inner.and_then(|callee| call_of(&m, def, callee)) {
            Some(call) => (call, 1.0),
            None => (
                failing_statement(text, def, f.header.as_deref().unwrap_or("")).unwrap_or(def.0),
                INFERRED_SURENESS,
            ),
        };
        f.moved_from = Some(f.line);
        f.line = line;
        *sure *= factor;
    }
}

/// Moves every `file.go:123` mention (a logger's caller field, `[kv.rs:716]`) whose line holds
/// no log statement its evidence line matched, while a statement of that file did match it:
/// the logger printed the line of its own version. The mention goes to the best-matching
/// statement; as sure as before, since the match confirms it.
pub fn reanchor_mentions(
    templates: &Templates,
    hits: &[SiteHit],
    resolved: &mut [(Frame, usize, f64)],
) {
    for (f, file, _) in resolved.iter_mut() {
        if f.kind != FrameKind::Mention {
            continue;
        }
        let Some(t) = templates
            .templates
            .iter()
            .position(|t| t.source == f.source && t.line == f.source_line)
        else {
            continue;
        };
        let matched: Vec<&SiteHit> = hits
            .iter()
            .filter(|h| h.template == t && h.file == *file)
            .collect();
        if matched
            .iter()
            .any(|h| h.line <= f.line && f.line <= h.end_line)
        {
            continue;
        }
        let best = matched.into_iter().max_by(|a, b| {
            a.score
                .total_cmp(&b.score)
                .then(b.line.abs_diff(f.line).cmp(&a.line.abs_diff(f.line)))
        });
        if let Some(h) = best {
            f.moved_from = Some(f.line);
            f.line = h.line;
        }
    }
}

/// The bare function name a frame gives, when it is one a definition can carry: the last
/// segment of `pkg.(*T).Method` or `a::b::f`, not a closure (`func1`, `1`), a lambda
/// (`lambda$run$0`, `<lambda>`), a constructor (`<init>`) or a Rust symbol hash.
fn plain_name(function: &str) -> Option<&str> {
    let last = function
        .rsplit(['.', ':'])
        .find(|s| !s.is_empty() && !is_symbol_hash(s))?
        .trim_end_matches("()");
    let is_ident = last
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && last.chars().all(|c| c.is_alphanumeric() || c == '_');
    let closure = last.starts_with("func") && last[4..].chars().all(|c| c.is_ascii_digit());
    (is_ident && !closure).then_some(last)
}

/// The hash a Rust symbol ends with (`::h0123456789abcdef`).
fn is_symbol_hash(s: &str) -> bool {
    s.len() == 17 && s.starts_with('h') && s[1..].chars().all(|c| c.is_ascii_hexdigit())
}

/// The lines of the function-like definition around `line` that carries `name`: the
/// innermost or one enclosing it (a lambda inside the named method still counts).
fn enclosing_function_named(m: &FileModel, line: u32, name: &str) -> Option<(u32, u32)> {
    let mut cur = m.innermost(line);
    while let Some(i) = cur {
        let b = &m.blocks[i];
        if related::is_function_named(b, name) {
            return Some((b.start_line, b.end_line));
        }
        cur = b.parent.map(|p| p as usize);
    }
    None
}

/// The lines of the definition named `name` nearest to `line` (overloads and other types'
/// methods of the same name: the code around the old line moved least).
fn nearest_definition(m: &FileModel, line: u32, name: &str) -> Option<(u32, u32)> {
    m.blocks
        .iter()
        .filter(|b| related::is_function_named(b, name))
        .map(|b| (b.start_line, b.end_line))
        .min_by_key(|&(s, e)| {
            if line < s {
                s - line
            } else {
                line.saturating_sub(e)
            }
        })
}

/// The first line inside `def` that calls `callee`: an outer frame's line is the call of the
/// frame inside it.
fn call_of(m: &FileModel, def: (u32, u32), callee: &str) -> Option<u32> {
    calls_in(m, def, callee).next()
}

/// The lines in the body of `def` (after its first line) that call a function named `callee`
/// (`n.step`, `Leader::halt` and `step` all call `step`).
fn calls_in<'a>(
    m: &'a FileModel,
    def: (u32, u32),
    callee: &'a str,
) -> impl Iterator<Item = u32> + 'a {
    m.calls
        .iter()
        .filter(move |c| c.line > def.0 && c.line <= def.1)
        .filter(move |c| c.name.rsplit(['.', ':']).next() == Some(callee))
        .map(|c| c.line)
}

/// For a frame at `line` inside the function whose lines are `def` and whose inner frame is
/// `callee`: the line of the function's call of `callee` nearest to `line`, when the
/// statement at `line` calls no `callee`.
fn drifted_call(m: &FileModel, line: u32, def: (u32, u32), callee: &str) -> Option<u32> {
    let calls: Vec<u32> = calls_in(m, def, callee).collect();
    // The call may sit anywhere in the statement the frame's line belongs to (a chained or
    // wrapped call); a line in a compound's header takes the whole compound, which errs on
    // the side of leaving the frame alone.
    let statement = m.innermost(line).map(|i| &m.blocks[i]);
    let here =
        |c: u32| c == line || statement.is_some_and(|s| s.start_line <= c && c <= s.end_line);
    if calls.is_empty() || calls.iter().any(|&c| here(c)) {
        return None;
    }
    calls.into_iter().min_by_key(|&c| c.abs_diff(line))
}

/// The first line in the body of `def` that can fail the way `header` reports: a throw or
/// construction of the exception it names, or the operation a runtime error comes from.
fn failing_statement(text: &str, def: (u32, u32), header: &str) -> Option<u32> {
    let wanted = failure_sites(header);
    if wanted.is_empty() {
        return None;
    }
    text.lines()
        .enumerate()
        .skip(def.0 as usize)
        .take(def.1.saturating_sub(def.0) as usize)
        .find(|(_, l)| wanted.iter().any(|w| l.contains(w.as_str())))
        .map(|(i, _)| i as u32 + 1)
}

/// What a statement that fails as `header` says looks like.
fn failure_sites(header: &str) -> Vec<String> {
    let h = header
        .trim_start_matches("panic: ")
        .trim_start_matches("Exception in thread ");
    let runtime: &[(&str, &[&str])] = &[
        ("interface conversion", &[".("]),
        ("index out of range", &["["]),
        ("index out of bounds", &["["]),
        ("KeyError", &["["]),
        ("IndexError", &["["]),
        ("ZeroDivisionError", &["/", "%"]),
        ("ArithmeticException", &["/", "%"]),
        ("ArrayIndexOutOfBoundsException", &["["]),
        ("ClassCastException", &["(("]),
        ("unwrap()", &[".unwrap()"]),
        ("assertion", &["assert"]),
        ("AssertionError", &["assert"]),
        ("send on closed channel", &["<-"]),
        ("close of closed channel", &["close("]),
    ];
    for (marker, sites) in runtime {
        if h.contains(marker) {
            return sites.iter().map(|s| s.to_string()).collect();
        }
    }
    // A named exception (`java.lang.IllegalStateException: …`, `ValueError: …`): where the
    // code creates or raises it.
    let first = h.split([':', ' ']).find(|s| !s.is_empty()).unwrap_or("");
    let class = first.rsplit('.').next().unwrap_or("");
    let is_exception = ["Exception", "Error"].iter().any(|e| class.ends_with(e))
        && class.chars().all(|c| c.is_alphanumeric() || c == '_');
    if is_exception && class != "NullPointerException" {
        return vec![
            format!("new {class}"),
            format!("raise {class}"),
            format!("{class}("),
        ];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::baseline::frames::parse;
    use std::path::Path;

    const STORE_GO: &str = "package auth\n\nfunc NewTokenProvider(t string) (TokenProvider, error) {\n\tswitch t {\n\tdefault:\n\t\treturn nil, errInvalid\n\t}\n}\n\nfunc (as *authStore) WithRoot(ctx context.Context) context.Context {\n\tif !as.enabled {\n\t\treturn ctx\n\t}\n\tts := as.tokenProvider.(*tokenSimple)\n\treturn ts.assign(ctx)\n}\n";

    fn index(path: &str, text: &str) -> RepoIndex {
        RepoIndex::from_texts(Path::new("/ws"), vec![(path.into(), text.into())])
    }

    /// The stack frames of `log` resolved in `idx`, after `reanchor`.
    fn reanchored(idx: &RepoIndex, log: &str) -> Vec<(Frame, usize, f64)> {
        let all = parse(log, 0, 0);
        let mut r = resolved(idx, &all);
        reanchor(idx, &all, &mut r);
        r
    }

    fn resolved(idx: &RepoIndex, frames: &[Frame]) -> Vec<(Frame, usize, f64)> {
        frames
            .iter()
            .filter(|f| f.kind == FrameKind::Stack)
            .flat_map(|f| {
                super::super::frames::resolve(idx, f)
                    .into_iter()
                    .map(|(file, sure)| (f.clone(), file, sure))
            })
            .collect()
    }

    #[test]
    fn a_frame_from_another_version_moves_to_the_failing_statement_of_its_function() {
        let idx = index("auth/store.go", STORE_GO);
        // Line 6 lies in NewTokenProvider here; the trace says WithRoot.
        let log = "panic: interface conversion: auth.TokenProvider is *auth.tokenJWT, not *auth.tokenSimple\n\ngoroutine 610 [running]:\ngithub.com/coreos/etcd/auth.(*authStore).WithRoot(0xc420373bc0)\n\t/home/u/src/github.com/coreos/etcd/auth/store.go:6 +0x82a\n";
        let r = reanchored(&idx, log);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].0.line, 14, "the type assertion in WithRoot");
        assert_eq!(r[0].0.moved_from, Some(6));
        assert!(
            (r[0].2 - INFERRED_SURENESS).abs() < 1e-9,
            "inferred: less sure"
        );
    }

    #[test]
    fn an_outer_frame_moves_to_the_call_of_the_frame_inside_it() {
        let leader = "package org.a;\n\nclass Leader {\n    void lead() {\n        int x = 1;\n        halt();\n    }\n\n    void shutdown(String why) {\n        LOG.info(why);\n        stopAll();\n        halt();\n    }\n\n    void stopAll() {\n        throw new IllegalStateException(\"gone\");\n    }\n}\n";
        let idx = index("src/org/a/Leader.java", leader);
        // Both lines are off by one function: 5 lies in lead(), 10 in shutdown().
        let log = "java.lang.IllegalStateException: gone\n\tat org.a.Leader.stopAll(Leader.java:5)\n\tat org.a.Leader.shutdown(Leader.java:2)\n";
        let r = reanchored(&idx, log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].0.line, 16, "the throw in stopAll");
        assert_eq!(r[1].0.line, 11, "shutdown's call of stopAll");
        assert!((r[0].2 - INFERRED_SURENESS).abs() < 1e-9);
        assert!((r[1].2 - 1.0).abs() < 1e-9, "a call confirms the line");
    }

    #[test]
    fn an_outer_frame_in_its_function_moves_to_its_call_of_the_inner_frame() {
        let node = "package raft\n\nfunc (n *node) run() {\n\tx := 1\n\ty := 2\n\tn.step(x)\n\tn.log(y)\n}\n\nfunc (n *node) step(x int) {\n\tpanic(x)\n}\n";
        let idx = index("raft/node.go", node);
        // run's line 4 calls nothing; its call of step is line 6. The innermost frame, panic
        // of the runtime, is outside the repository: step's own line 11 stays.
        let log = "panic: boom\n\ngoroutine 1 [running]:\npanic(0x1)\n\t/usr/local/go/src/runtime/panic.go:1038 +0x1\ngithub.com/x/raft.(*node).step(0x1)\n\t/src/raft/node.go:11 +0x1\ngithub.com/x/raft.(*node).run(0x1)\n\t/src/raft/node.go:4 +0x1\n";
        let r = reanchored(&idx, log);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].0.line, r[0].0.moved_from), (11, None));
        assert_eq!((r[1].0.line, r[1].0.moved_from), (6, Some(4)));
    }

    #[test]
    fn a_frame_inside_its_function_or_naming_no_definition_here_stays() {
        let idx = index("auth/store.go", STORE_GO);
        let log = "panic: boom\n\ngoroutine 1 [running]:\ngithub.com/coreos/etcd/auth.(*authStore).WithRoot(0x1)\n\t/x/auth/store.go:11 +0x1\ngithub.com/coreos/etcd/auth.(*authStore).Gone(0x1)\n\t/x/auth/store.go:4 +0x1\ngithub.com/coreos/etcd/auth.(*authStore).run.func1(0x1)\n\t/x/auth/store.go:5 +0x1\n";
        let r = reanchored(&idx, log);
        assert_eq!(r.len(), 3, "{r:?}");
        let lines: Vec<u32> = r.iter().map(|x| x.0.line).collect();
        assert_eq!(lines, vec![11, 4, 5]);
        assert!(r.iter().all(|x| x.0.moved_from.is_none() && x.2 == 1.0));
    }

    #[test]
    fn a_logger_caller_from_another_version_moves_to_the_statement_that_logs_the_line() {
        let server = "package etcdserver\n\nfunc (s *EtcdServer) apply() {\n\tx := 1\n\ts.lg.Warn(\"failed to apply request\", zap.Int(\"took\", x))\n}\n\nfunc (s *EtcdServer) other() {\n\ts.lg.Info(\"applied\")\n}\n";
        let idx = index("server/etcdserver/server.go", server);
        // The logger printed line 9 (its version's); here line 5 logs that message.
        let log = "{\"level\":\"warn\",\"caller\":\"etcdserver/server.go:9\",\"msg\":\"failed to apply request\",\"took\":7}\n";
        let mut templates = Templates::default();
        templates.add_source("etcd.log", log, false);
        let hits = super::super::logmatch::search(&idx, &templates).hits;
        assert!(hits.iter().any(|h| h.line == 5), "{hits:?}");
        let all = parse(log, 0, 0);
        let mut r: Vec<(Frame, usize, f64)> = all
            .iter()
            .filter(|f| f.kind == FrameKind::Mention)
            .flat_map(|f| {
                super::super::frames::resolve(&idx, f)
                    .into_iter()
                    .map(|(file, sure)| (f.clone(), file, sure))
            })
            .collect();
        assert_eq!(r.len(), 1, "{r:?}");
        reanchor_mentions(&templates, &hits, &mut r);
        assert_eq!((r[0].0.line, r[0].0.moved_from), (5, Some(9)));
        // A caller that names the matched statement stays.
        let mut again = r.clone();
        reanchor_mentions(&templates, &hits, &mut again);
        assert_eq!((again[0].0.line, again[0].0.moved_from), (5, Some(9)));
    }

    #[test]
    fn names_a_definition_can_carry() {
        assert_eq!(plain_name("(*authStore).WithRoot"), Some("WithRoot"));
        assert_eq!(
            plain_name("raftstore::store::Peer::on_ready"),
            Some("on_ready")
        );
        assert_eq!(plain_name("run.func9"), None);
        assert_eq!(plain_name("lambda$run$0"), None);
        assert_eq!(plain_name("<module>"), None);
        assert_eq!(plain_name("h0123456789abcdef"), None);
        assert_eq!(
            plain_name("kv::Peer::on_ready::h0123456789abcdef"),
            Some("on_ready")
        );
    }
}

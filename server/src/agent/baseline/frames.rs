//! Stack frames in the evidence and the report (Java/Scala `at a.B.m(B.java:12)`, Python
//! `File "x.py", line 12`, Go `\t/src/x.go:12 +0x1d`, Rust `at src/x.rs:12:5` and
//! `panicked at src/x.rs:12:5`, C++ gdb `#3 … at x.cc:12` and sanitizer `#0 0x… in f x.cc:12`),
//! plain `file.ext:line` mentions, and their mapping to files of the repository; a trace a
//! logger wrote as one escaped field (`backtrace="…\n…"`) is read as the lines it stands for.

use super::symbols;
use crate::code::RepoIndex;
use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A frame of a stack trace.
    Stack,
    /// A `file.ext:line` written anywhere else (a logger's caller field, a sentence).
    Mention,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub kind: FrameKind,
    /// Which source (evidence file or report) and line it was read from.
    pub source: usize,
    pub source_line: u32,
    /// Frames of one trace share a number; `pos` is the frame's place in it (0 = innermost).
    pub trace: usize,
    pub pos: usize,
    /// The file as written in the frame, and the line.
    pub file: String,
    pub line: u32,
    /// `org.a.Leader` for Java/Scala frames: tells packages apart.
    pub class: Option<String>,
    /// The function the frame names, when it does; a Rust frame without a location keeps its
    /// whole path (`krate::module::Type::f`), from which `symbols::locate` finds the file.
    pub function: Option<String>,
    /// The exception or panic message that heads the trace, when there is one.
    pub header: Option<String>,
    /// The line the evidence gave, when `drift.rs` moved the frame or mention because that
    /// line was printed by another version of the code.
    pub moved_from: Option<u32>,
}

struct Patterns {
    java: Regex,
    python: Regex,
    go: Regex,
    go_func: Regex,
    rust_at: Regex,
    rust_panic: Regex,
    gdb: Regex,
    sanitizer: Regex,
    mention: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        // These are constant, tested expressions; a failure to compile is a programming error.
        let re = |s: &str| Regex::new(s).unwrap_or_else(|e| panic!("bad frame regex {s}: {e}"));
        Patterns {
            java: re(r"^\s*at\s+(?:[\w.$/@-]+/)?([\w$.<>]+)\.([\w$<>-]+)\(([^():]+?):(\d+)\)"),
            python: re(r#"File "([^"]+)", line (\d+)(?:, in ([\w<>.]+))?"#),
            go: re(r"^\s+(\S+\.go):(\d+)(?:\s+\+0x[0-9a-fA-F]+)?\s*$"),
            go_func: re(r"^([\w./*()\[\]-]+)\(.*\)\s*$"),
            rust_at: re(r"^\s*(?:at\s+)(\S+\.rs):(\d+)(?::\d+)?\s*$"),
            rust_panic: re(r"panicked at (?:'[^']*', )?(\S+?\.rs):(\d+)(?::\d+)?"),
            gdb: re(r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(\S+?)\s*\(.*\)\s+at\s+(\S+?):(\d+)"),
            sanitizer: re(r"^\s*#\d+\s+0x[0-9a-fA-F]+\s+in\s+(\S+)\s+(\S+?):(\d+)(?::\d+)?"),
            mention: re(r"([\w./\\-]*\w\.(?:java|scala|go|rs|py|cc|cpp|cxx|hpp|hh|h|c|kt)):(\d+)"),
        }
    })
}

/// Lines that start a new trace.
fn starts_trace(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("Caused by")
        || t.starts_with("Exception in thread")
        || t.starts_with("Traceback")
        || t.starts_with("goroutine ")
        || t.starts_with("panic:")
        || t.starts_with("thread '")
        || t.starts_with("stack backtrace")
        || is_gdb_thread(t)
}

/// gdb's `Thread 49 (Thread 0x7f2f30dff700 (LWP 19448)):`, which heads one thread's frames in
/// `thread apply all bt`.
fn is_gdb_thread(t: &str) -> bool {
    t.strip_prefix("Thread ")
        .and_then(|r| r.split_once(' '))
        .is_some_and(|(n, rest)| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with('(')
        })
}

/// Whether a line reads like the message that heads a trace.
fn is_header(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty()
        && (t.contains("Exception")
            || t.contains("Error")
            || t.starts_with("panic")
            || t.contains("panicked")
            || t.contains("SIGSEGV")
            || t.contains("Assertion")
            || t.contains("[FATAL]"))
}

/// Every frame and mention in `text` (source number `source`); trace numbers start at
/// `first_trace`.
pub fn parse(text: &str, source: usize, first_trace: usize) -> Vec<Frame> {
    let p = patterns();
    let mut out: Vec<Frame> = Vec::new();
    let mut trace = first_trace;
    let mut pos = 0;
    let mut gap = usize::MAX;
    let mut header: Option<String> = None;
    let mut prev_line = "";
    // Traces that Python printed (outermost frame first, the exception after the frames).
    let mut python: Vec<usize> = Vec::new();
    let lines = logical_lines(p, text);
    for (k, (line_no, line)) in lines.iter().enumerate() {
        let (line_no, line) = (*line_no, line.as_ref());
        let next = lines.get(k + 1).map_or("", |(_, l)| l.as_ref());
        if line.len() > 4000 {
            prev_line = "";
            gap = gap.saturating_add(1);
            continue;
        }
        if pos > 0 && is_panic_machinery(line) {
            // Everything innermost of the panic machinery is the panic hook's own
            // (`tikv_util::set_panic_hook`), not the code that failed.
            out.retain(|f| f.kind != FrameKind::Stack || f.trace != trace);
            pos = 0;
        }
        let stack = stack_frame(p, line, prev_line).or_else(|| {
            // A location on the next line makes that line the frame.
            symbols::frame(line)
                .filter(|_| !p.rust_at.is_match(next))
                .map(|(file, path)| (file, 0, None, Some(path)))
        });
        prev_line = line;
        match stack {
            Some((file, l, class, function)) => {
                if gap > 3 {
                    if !out.is_empty() {
                        trace += 1;
                    }
                    pos = 0;
                }
                gap = 0;
                if p.python.is_match(line) && !python.contains(&trace) {
                    python.push(trace);
                }
                out.push(Frame {
                    kind: FrameKind::Stack,
                    source,
                    source_line: line_no,
                    trace,
                    pos,
                    file,
                    line: l,
                    class,
                    function,
                    header: header.clone(),
                    moved_from: None,
                });
                pos += 1;
            }
            None => {
                if starts_trace(line) {
                    // A Go panic's message comes just before its goroutine's line, which only
                    // numbers the goroutine: the message stays the header.
                    let after_panic = line.trim_start().starts_with("goroutine ")
                        && pos == 0
                        && gap <= 3
                        && header.as_deref().is_some_and(|h| h.starts_with("panic:"));
                    if pos > 0 {
                        trace += 1;
                    }
                    pos = 0;
                    gap = 0;
                    if !after_panic {
                        header = Some(cut(line.trim(), 200));
                    }
                    // The rust panic line carries its own location.
                    if let Some(c) = p.rust_panic.captures(line) {
                        if let Ok(l) = c[2].parse() {
                            out.push(Frame {
                                kind: FrameKind::Stack,
                                source,
                                source_line: line_no,
                                trace,
                                pos,
                                file: c[1].to_string(),
                                line: l,
                                class: None,
                                function: None,
                                header: header.clone(),
                                moved_from: None,
                            });
                            pos += 1;
                        }
                    }
                    continue;
                }
                if let Some(c) = p.rust_panic.captures(line) {
                    if let Ok(l) = c[2].parse() {
                        trace += 1;
                        header = Some(cut(line.trim(), 200));
                        out.push(Frame {
                            kind: FrameKind::Stack,
                            source,
                            source_line: line_no,
                            trace,
                            pos: 0,
                            file: c[1].to_string(),
                            line: l,
                            class: None,
                            function: None,
                            header: header.clone(),
                            moved_from: None,
                        });
                        pos = 1;
                        gap = 0;
                        continue;
                    }
                }
                // A thread blocked in a lock: what it waits in heads the frames that follow.
                if pos == 0 && symbols::is_blocking_frame(line) {
                    header = Some(cut(line.trim(), 200));
                }
                gap = gap.saturating_add(1);
                if gap > 3 && is_header(line) {
                    header = Some(cut(line.trim(), 200));
                }
                for c in p.mention.captures_iter(line) {
                    if let Ok(l) = c[2].parse::<u32>() {
                        out.push(Frame {
                            kind: FrameKind::Mention,
                            source,
                            source_line: line_no,
                            trace: usize::MAX,
                            pos: 0,
                            file: c[1].to_string(),
                            line: l,
                            class: None,
                            function: None,
                            header: None,
                            moved_from: None,
                        });
                    }
                }
            }
        }
    }
    for t in python {
        python_innermost_first(&mut out, text, t);
    }
    out
}

/// The lines of `text` with their 1-based numbers. A line that holds a whole trace written as
/// one field with escaped line breaks (TiKV's `[backtrace="   0: …\n   at …"]`, zap's
/// `"stacktrace":"pkg.f\n\tpkg/f.go:85\n…"`, a JSON logger's `"stack_trace"`) is unfolded
/// into the lines it stands for, each with the number of the line that holds it; other lines
/// are kept as they are.
fn logical_lines<'a>(p: &Patterns, text: &'a str) -> Vec<(u32, Cow<'a, str>)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i as u32 + 1;
        if line.len() <= MAX_FOLDED_LINE && line.matches("\\n").count() >= 2 {
            let mut pieces: Vec<&str> = line.split("\\n").collect();
            // The field ends at the last piece's first unescaped quote; what follows it (more
            // fields of the log line) is a line of its own.
            if let Some(tail) = pieces.pop() {
                let (field, rest) = tail.split_at(field_end(tail));
                pieces.extend([field, rest]);
            }
            let parts: Vec<String> = pieces
                .iter()
                .map(|s| s.replace("\\t", "\t").replace("\\\"", "\""))
                .collect();
            let mut prev = "";
            let holds_trace = parts.iter().any(|l| {
                let found = stack_frame(p, l, prev).is_some() || symbols::is_frame_line(l);
                prev = l;
                found
            });
            if holds_trace {
                out.extend(parts.into_iter().map(|l| (n, Cow::Owned(l))));
                continue;
            }
        }
        out.push((n, Cow::Borrowed(line)));
    }
    out
}

/// Where `s`'s first quote that no backslash escapes is (its length when there is none).
fn field_end(s: &str) -> usize {
    let b = s.as_bytes();
    (0..b.len())
        .find(|&i| b[i] == b'"' && (i == 0 || b[i - 1] != b'\\'))
        .unwrap_or(b.len())
}

/// Lines longer than this are never unfolded: a logged trace field is far shorter, and
/// splitting a huge line only to skip its pieces would cost a copy of it.
const MAX_FOLDED_LINE: usize = 256 * 1024;

/// Whether a line of a Rust backtrace names the panic machinery (`rust_begin_unwind`,
/// `core::panicking::panic_fmt`, `std::panicking::…`): the frames printed before it are
/// the panic hook's.
fn is_panic_machinery(line: &str) -> bool {
    let t = line.trim_start();
    let t = t.trim_start_matches(|c: char| c.is_ascii_digit());
    let t = t.strip_prefix(':').unwrap_or(t).trim_start();
    [
        "rust_begin_unwind",
        "__rustc::rust_begin_unwind",
        "core::panicking::",
        "std::panicking::",
        "std::sys_common::backtrace::__rust_end_short_backtrace",
        "std::sys::backtrace::__rust_end_short_backtrace",
        "__rust_start_panic",
    ]
    .iter()
    .any(|m| t.starts_with(m))
}

/// Python prints a trace outermost frame first and its exception after the last frame
/// (`TypeError: …`); every other trace here starts at the innermost frame under its
/// message. Turns trace `t` around so that `pos` 0 is the innermost frame, and heads it with
/// the exception line.
fn python_innermost_first(out: &mut [Frame], text: &str, t: usize) {
    let at: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].kind == FrameKind::Stack && out[i].trace == t)
        .collect();
    let Some(last_line) = at.iter().map(|&i| out[i].source_line).max() else {
        return;
    };
    // The exception is the first line after the last frame that Python does not indent.
    let exception = text
        .lines()
        .skip(last_line as usize)
        .take(12)
        .find(|l| !l.trim().is_empty() && !l.starts_with([' ', '\t']))
        .filter(|l| {
            !starts_trace(l) && !l.starts_with("During handling") && !l.starts_with("The above")
        })
        .map(|l| cut(l.trim(), 200));
    let frames: Vec<Frame> = at.iter().rev().map(|&i| out[i].clone()).collect();
    for (pos, (&i, mut f)) in at.iter().zip(frames).enumerate() {
        f.pos = pos;
        if exception.is_some() {
            f.header = exception.clone();
        }
        out[i] = f;
    }
}

type Parsed = (String, u32, Option<String>, Option<String>);

fn stack_frame(p: &Patterns, line: &str, prev: &str) -> Option<Parsed> {
    if let Some(c) = p.java.captures(line) {
        return Some((
            c[3].to_string(),
            c[4].parse().ok()?,
            Some(c[1].to_string()),
            Some(c[2].to_string()),
        ));
    }
    if let Some(c) = p.python.captures(line) {
        return Some((
            c[1].to_string(),
            c[2].parse().ok()?,
            None,
            c.get(3).map(|m| m.as_str().to_string()),
        ));
    }
    if let Some(c) = p.go.captures(line) {
        let function = p
            .go_func
            .captures(prev)
            .map(|f| f[1].rsplit('.').next().unwrap_or("").to_string());
        return Some((c[1].to_string(), c[2].parse().ok()?, None, function));
    }
    if let Some(c) = p.rust_at.captures(line) {
        return Some((c[1].to_string(), c[2].parse().ok()?, None, None));
    }
    if let Some(c) = p.gdb.captures(line) {
        return Some((
            c[2].to_string(),
            c[3].parse().ok()?,
            None,
            Some(c[1].to_string()),
        ));
    }
    if let Some(c) = p.sanitizer.captures(line) {
        return Some((
            c[2].to_string(),
            c[3].parse().ok()?,
            None,
            Some(c[1].to_string()),
        ));
    }
    None
}

fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut e = max;
    while !s.is_char_boundary(e) {
        e -= 1;
    }
    s[..e].to_string()
}

/// Paths of toolchains' own sources: frames there are outside the repository. (Installed
/// packages are not: `site-packages/<project>/x.py` is the project itself, deployed; a
/// third-party package simply finds no file of the same path in the repository.)
fn is_outside(path: &str) -> bool {
    let p = path.replace('\\', "/");
    [
        "/go/src/runtime/",
        "/usr/local/go/",
        "/usr/lib/go",
        "/rustc/",
        ".cargo/registry/",
        "/usr/include/",
        "/library/std/",
        "/library/core/",
    ]
    .iter()
    .any(|s| p.contains(s))
}

/// The repository files a frame points at, with how sure the mapping is (1.0 = the whole
/// path or package matched, less when only the file name did). Empty when the frame is
/// outside the repository or its line is past the end of the file.
pub fn resolve(index: &RepoIndex, f: &Frame) -> Vec<(usize, f64)> {
    if is_outside(&f.file) || f.line == 0 {
        return Vec::new();
    }
    let file = f.file.replace('\\', "/");
    let comps: Vec<&str> = file
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let Some(name) = comps.last() else {
        return Vec::new();
    };
    let mut found: Vec<(usize, f64)> = Vec::new();
    if let Some(class) = &f.class {
        // Java/Scala: the frame names the file only; the class's package says where it is.
        let mut pkg: Vec<&str> = class.split('.').collect();
        pkg.pop();
        let by_name = index.files_ending_with(name);
        let score = |path: &str| {
            pkg.iter()
                .filter(|p| path.contains(&format!("/{p}/")))
                .count()
        };
        let best = by_name.iter().map(|&i| score(&index.files[i].path)).max();
        if let Some(best) = best {
            let top: Vec<usize> = by_name
                .iter()
                .copied()
                .filter(|&i| score(&index.files[i].path) == best)
                .collect();
            let sure = if best > 0 || by_name.len() == 1 {
                1.0
            } else {
                0.5
            };
            if top.len() <= 2 {
                found = top.into_iter().map(|i| (i, sure)).collect();
            }
        }
    } else {
        for n in (1..=comps.len()).rev() {
            let suffix = comps[comps.len() - n..].join("/");
            let m = index.files_ending_with(&suffix);
            if m.is_empty() {
                continue;
            }
            // Only the bare file name matched although the frame had folders: probably a
            // file of the same name elsewhere (a library's), so trust it less.
            let sure = if n >= 2 || comps.len() == 1 { 1.0 } else { 0.5 };
            if m.len() <= 2 {
                found = m.into_iter().map(|i| (i, sure)).collect();
            }
            break;
        }
    }
    found.retain(|(i, _)| f.line <= index.files[*i].line_count);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn one(text: &str) -> Frame {
        let f = parse(text, 0, 0);
        assert_eq!(f.len(), 1, "{f:?}");
        f.into_iter().next().unwrap()
    }

    #[test]
    fn a_python_trace_starts_at_its_innermost_frame_under_its_exception() {
        let text = "distributed.client - ERROR - boom\nTraceback (most recent call last):\n  File \"/opt/site-packages/distributed/client.py\", line 1529, in _handle_report\n    await result\n  File \"/opt/site-packages/distributed/client.py\", line 683, in _handle_warn\n    category=pickle.loads(x),\n             ^^^^^^^^^^^^\nTypeError: a bytes-like object is required, not 'NoneType'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"/opt/a.py\", line 3, in f\n    g()\n  File \"/opt/b.py\", line 9, in g\n    raise KeyError(k)\nKeyError: 'x'\n";
        let f = parse(text, 0, 0);
        let shape: Vec<_> = f
            .iter()
            .map(|x| (x.trace, x.pos, x.line, x.header.as_deref().unwrap_or("")))
            .collect();
        let type_error = "TypeError: a bytes-like object is required, not 'NoneType'";
        assert_eq!(
            shape,
            [
                (0, 0, 683, type_error),
                (0, 1, 1529, type_error),
                (1, 0, 9, "KeyError: 'x'"),
                (1, 1, 3, "KeyError: 'x'")
            ]
        );
    }

    #[test]
    fn parses_frames_of_each_shape() {
        let j = one("        at org.apache.zookeeper.server.quorum.LeaderZooKeeperServer.lambda$registerMetrics$5(LeaderZooKeeperServer.java:122)");
        assert_eq!(
            (j.file.as_str(), j.line),
            ("LeaderZooKeeperServer.java", 122)
        );
        assert_eq!(
            j.class.as_deref(),
            Some("org.apache.zookeeper.server.quorum.LeaderZooKeeperServer")
        );
        let s = one("\tat kafka.log.UnifiedLog.append(UnifiedLog.scala:812)");
        assert_eq!((s.file.as_str(), s.line), ("UnifiedLog.scala", 812));
        let m = one("    at app//org.x.Y$Z.run(Y.java:9)");
        assert_eq!(
            (m.file.as_str(), m.function.as_deref()),
            ("Y.java", Some("run"))
        );
        let p = one("  File \"/srv/app/src/lease.py\", line 15, in grant");
        assert_eq!(
            (p.file.as_str(), p.line, p.function.as_deref()),
            ("/srv/app/src/lease.py", 15, Some("grant"))
        );
        let g = parse("goroutine 1 [running]:\nmain.(*Raft).step(0xc000, 0x1)\n\t/home/u/kv/raft/raft.go:206 +0x1d\n", 0, 0);
        assert_eq!(g.len(), 1);
        assert_eq!(
            (g[0].file.as_str(), g[0].line, g[0].function.as_deref()),
            ("/home/u/kv/raft/raft.go", 206, Some("step"))
        );
        assert_eq!(g[0].header.as_deref(), Some("goroutine 1 [running]:"));
        let r = parse("thread 'main' panicked at src/raft/log.rs:88:9:\nindex out of bounds\nstack backtrace:\n   0: core::panicking::panic\n             at /rustc/abc/library/core/src/panicking.rs:72:14\n   1: kv::raft::log::Log::term\n             at ./src/raft/log.rs:88:9\n", 0, 0);
        let files: Vec<_> = r
            .iter()
            .map(|f| (f.file.as_str(), f.line, f.kind))
            .collect();
        assert_eq!(files[0], ("src/raft/log.rs", 88, FrameKind::Stack));
        assert!(files.contains(&("./src/raft/log.rs", 88, FrameKind::Stack)));
        let gdb = one("#3  0x00005555 in kv::Store::put (this=0x1, k=2) at /build/src/store.cc:41");
        assert_eq!((gdb.file.as_str(), gdb.line), ("/build/src/store.cc", 41));
        let asan = one("    #0 0x4f2a1b in kv::Store::get(int) /build/src/store.cc:57:3");
        assert_eq!((asan.file.as_str(), asan.line), ("/build/src/store.cc", 57));
        let men = one("I0917 14:02:07.1 12 raft.go:912] became leader at term 5");
        assert_eq!(
            (men.kind, men.file.as_str(), men.line),
            (FrameKind::Mention, "raft.go", 912)
        );
    }

    #[test]
    fn a_trace_written_as_one_escaped_field_is_read_frame_by_frame() {
        // TiKV's FATAL line: the backtrace is one quoted field, its panic hook comes first.
        let tikv = r#"[2023/05/10 08:12:40.118 +00:00] [FATAL] [lib.rs:470] ["called `Option::unwrap()` on a `None` value"] [backtrace="   0: tikv_util::set_panic_hook::{{closure}}\n             at /build/tikv/components/tikv_util/src/lib.rs:469:18\n   1: std::panicking::rust_panic_with_hook\n             at /rustc/5680/library/std/src/panicking.rs:702:17\n   7: core::panicking::panic\n             at /rustc/5680/library/core/src/panicking.rs:114:5\n   8: kvstore::apply::ApplyDelegate::exec_split\n             at /build/tikv/components/kvstore/src/apply.rs:1432:17\n   9: kvstore::apply::ApplyDelegate::exec_admin_cmd\n             at /build/tikv/components/kvstore/src/apply.rs:1290:32"] [location=components/kvstore/src/apply.rs:1432]"#;
        let f = parse(tikv, 0, 0);
        let stack: Vec<_> = f
            .iter()
            .filter(|x| x.kind == FrameKind::Stack && !is_outside(&x.file))
            .map(|x| {
                (
                    x.file.rsplit('/').next().unwrap_or(""),
                    x.line,
                    x.pos,
                    x.source_line,
                )
            })
            .collect();
        assert_eq!(stack, [("apply.rs", 1432, 1, 1), ("apply.rs", 1290, 2, 1)]);
        // The panic hook's frame is gone; the logger's caller and the location stay mentions.
        assert!(!f
            .iter()
            .any(|x| x.kind == FrameKind::Stack && x.line == 469));
        assert!(f
            .iter()
            .any(|x| x.kind == FrameKind::Mention && x.line == 1432));

        // zap's JSON stacktrace: Go frames under their function lines.
        let zap = r#"{"level":"fatal","msg":"failed","stacktrace":"go.etcd.io/etcd/pkg/v3/flags.verifyEnv\n\tgo.etcd.io/etcd/pkg/v3/flags/flag.go:85\ngo.etcd.io/etcd/pkg/v3/flags.SetPflagsFromEnv\n\tgo.etcd.io/etcd/pkg/v3/flags/flag.go:63"}"#;
        let g: Vec<_> = parse(zap, 0, 0)
            .into_iter()
            .map(|x| (x.kind, x.line, x.pos))
            .collect();
        assert_eq!(g, [(FrameKind::Stack, 85, 0), (FrameKind::Stack, 63, 1)]);

        // Escaped line breaks without a frame leave the line as it was: mentions only.
        let msg = r#"{"msg":"bad entry\nat offset 3\nsee wal.go:120"}"#;
        let m = parse(msg, 0, 0);
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].kind, m[0].line), (FrameKind::Mention, 120));
    }

    #[test]
    fn a_rust_backtrace_starts_below_its_panic_machinery() {
        let t = "stack backtrace:\n   0: kv::util::panic_hook\n             at ./src/util.rs:10:5\n   1: std::panicking::rust_panic_with_hook\n   2: rust_begin_unwind\n             at /rustc/abc/library/std/src/panicking.rs:645:5\n   3: kv::raft::log::Log::term\n             at ./src/raft/log.rs:88:9\n";
        let inside: Vec<_> = parse(t, 0, 0)
            .into_iter()
            .filter(|x| !is_outside(&x.file))
            .map(|x| (x.file, x.line))
            .collect();
        assert_eq!(inside, [("./src/raft/log.rs".to_string(), 88)]);
    }

    #[test]
    fn a_rust_frame_without_a_location_is_read_by_its_symbol() {
        // TiKV without line tables: every frame names a function only.
        let log = r#"[2024/01/12 16:55:02.845 +08:00] [FATAL] [lib.rs:478] ["called `Option::unwrap()` on a `None` value"] [backtrace="   0: backtrace::capture::Backtrace::new\n   1: tikv_util::set_panic_hook::{{closure}}\n   2: std::panicking::rust_panic_with_hook\n   3: core::panicking::panic\n   4: kvdata::codec::row::v2::row_slice::RowSlice::cut_checksum_bytes\n   5: kvdata::codec::row::v2::row_slice::RowSlice::from_bytes::h0123456789abcdef\n   6: tikv::storage::Storage::get\n             at src/storage/mod.rs:12:5"]"#;
        let f: Vec<Frame> = parse(log, 0, 0)
            .into_iter()
            .filter(|x| x.kind == FrameKind::Stack)
            .collect();
        let inner: Vec<_> = f
            .iter()
            .map(|x| (x.pos, x.file.as_str(), x.line, x.function.as_deref()))
            .collect();
        let cut = "kvdata::codec::row::v2::row_slice::RowSlice::cut_checksum_bytes";
        let from = "kvdata::codec::row::v2::row_slice::RowSlice::from_bytes";
        assert_eq!(
            inner,
            [
                (0, "panicking.rs", 0, Some("core::panicking::panic")),
                (1, "codec/row/v2/row_slice.rs", 0, Some(cut)),
                (2, "codec/row/v2/row_slice.rs", 0, Some(from)),
                // A frame with its location is read from the location, as before.
                (3, "src/storage/mod.rs", 12, None),
            ]
        );
        assert!(f[1].header.as_deref().unwrap_or("").contains("unwrap()"));
    }

    #[test]
    fn a_go_panic_message_heads_its_goroutine_and_the_next_goroutine_has_its_own() {
        let text = "panic: interface conversion: auth.TokenProvider is *auth.tokenJWT\n\ngoroutine 610 [running]:\ngithub.com/x/auth.(*authStore).WithRoot(0x1)\n\t/src/auth/store.go:1277 +0x82a\n\ngoroutine 7 [chan receive]:\ngithub.com/x/raft.(*node).run(0x1)\n\t/src/raft/node.go:40 +0x1\n";
        let f = parse(text, 0, 0);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(
            f[0].header.as_deref(),
            Some("panic: interface conversion: auth.TokenProvider is *auth.tokenJWT")
        );
        assert_eq!(f[0].function.as_deref(), Some("WithRoot"));
        assert_eq!(f[1].header.as_deref(), Some("goroutine 7 [chan receive]:"));
        assert_ne!(f[0].trace, f[1].trace);
    }

    #[test]
    fn frames_of_one_trace_share_a_number_and_caused_by_starts_another() {
        let t = "java.lang.IllegalStateException: boom\n\tat a.B.f(B.java:1)\n\tat a.B.g(B.java:2)\nCaused by: java.io.IOException: disk\n\tat a.C.h(C.java:3)\n";
        let f = parse(t, 0, 0);
        let shape: Vec<_> = f.iter().map(|x| (x.trace, x.pos)).collect();
        assert_eq!(shape, [(0, 0), (0, 1), (1, 0)]);
        assert_eq!(
            f[2].header.as_deref(),
            Some("Caused by: java.io.IOException: disk")
        );
        assert!(parse("", 0, 0).is_empty());
        assert!(parse(&"x".repeat(100_000), 0, 0).is_empty());
    }

    #[test]
    fn resolves_frames_to_repository_files() {
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                (
                    "src/main/java/org/a/Leader.java".into(),
                    "class Leader {\n}\n".into(),
                ),
                (
                    "src/test/java/org/b/Leader.java".into(),
                    "class Leader {\n}\n".into(),
                ),
                ("raft/raft.go".into(), "package raft\n\n\n".into()),
                ("kvserver/server.go".into(), "package kv\n\n\n".into()),
            ],
        );
        let frame = |file: &str, line: u32, class: Option<&str>| Frame {
            kind: FrameKind::Stack,
            source: 0,
            source_line: 1,
            trace: 0,
            pos: 0,
            file: file.into(),
            line,
            class: class.map(|c| c.into()),
            function: None,
            header: None,
            moved_from: None,
        };
        let id = |p: &str| idx.file_id(p).unwrap();
        assert_eq!(
            resolve(&idx, &frame("Leader.java", 2, Some("org.a.Leader"))),
            vec![(id("src/main/java/org/a/Leader.java"), 1.0)]
        );
        assert_eq!(
            resolve(&idx, &frame("/home/u/kv/raft/raft.go", 3, None)),
            vec![(id("raft/raft.go"), 1.0)]
        );
        assert!(
            resolve(&idx, &frame("/home/u/kv/raft/raft.go", 99, None)).is_empty(),
            "past the end"
        );
        assert!(resolve(
            &idx,
            &frame("/usr/local/go/src/net/http/server.go", 1, None)
        )
        .is_empty());
        assert_eq!(
            resolve(&idx, &frame("/elsewhere/server.go", 1, None)),
            vec![(id("kvserver/server.go"), 0.5)]
        );
        assert!(resolve(&idx, &frame("Nope.java", 1, Some("x.Nope"))).is_empty());
        assert_eq!(
            resolve(
                &idx,
                &frame("/opt/x/lib/python3.11/site-packages/raft/raft.go", 2, None)
            ),
            vec![(id("raft/raft.go"), 1.0)],
            "a deployed copy of the project maps back to it"
        );
    }
}

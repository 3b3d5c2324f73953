//! Rust backtrace frames that name a function but no location (a build without line tables,
//! or gdb's `#3 0x… in krate::f::h… ()`): how they are read, and where in the repository
//! they point.

use super::frames::Frame;
use super::related;
use crate::code::RepoIndex;
use regex::Regex;
use std::sync::OnceLock;

fn pattern() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        // A constant, tested expression; a failure to compile is a programming error.
        Regex::new(r"^\s*\d+:\s+((?:[A-Za-z_]\w*::)+[A-Za-z_]\w*)(?:::\{\{closure\}\})*\s*$")
            .unwrap_or_else(|e| panic!("bad symbol frame regex: {e}"))
    })
}

/// gdb's frame of a function without debug line info: `#3  0x000055a6 in
/// raftstore::store::Peer$LT$EK$GT$::on_ready::hb8ba6dd7648d255a ()` (the symbol as the
/// legacy mangling prints it).
fn gdb_pattern() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        // A constant, tested expression; a failure to compile is a programming error.
        Regex::new(r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?([^\s(]+)\s*\(")
            .unwrap_or_else(|e| panic!("bad gdb symbol regex: {e}"))
    })
}

/// The function path a frame line names: a numbered Rust backtrace line, or a gdb frame whose
/// symbol, unmangled, is a Rust path.
fn frame_path(line: &str) -> Option<String> {
    if let Some(c) = pattern().captures(line) {
        return Some(c[1].to_string());
    }
    let c = gdb_pattern().captures(line)?;
    let path = without_generics(&unescape_legacy(&c[1]));
    let valid = path.contains("::")
        && path.split("::").all(|s| {
            s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
    valid.then_some(path)
}

/// A legacy-mangled Rust symbol as gdb prints it, its escapes undone: `Peer$LT$EK$GT$` is
/// `Peer<EK>`, and `..` inside a path is `::`.
fn unescape_legacy(symbol: &str) -> String {
    let mut s = symbol.to_string();
    for (from, to) in [
        ("$LT$", "<"),
        ("$GT$", ">"),
        ("$C$", ","),
        ("$u20$", " "),
        ("$RF$", "&"),
        ("$BP$", "*"),
        ("$u7b$", "{"),
        ("$u7d$", "}"),
        ("$u5b$", "["),
        ("$u5d$", "]"),
        ("$u27$", "'"),
        ("$u22$", "\""),
        ("$SP$", "@"),
    ] {
        s = s.replace(from, to);
    }
    s.replace("..", "::")
}

/// A path with its generic arguments (`<…>`, nested) left out.
fn without_generics(path: &str) -> String {
    let mut depth = 0usize;
    let mut out = String::new();
    for ch in path.chars() {
        match ch {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out
}

/// Whether a line is a numbered frame of a Rust backtrace (or gdb's) that names a function
/// path.
pub fn is_frame_line(line: &str) -> bool {
    frame_path(line).is_some()
}

/// Whether a gdb frame line names a primitive a thread blocks in (`pthread_mutex_lock`,
/// `__lll_lock_wait`, `pthread_cond_wait`, `futex_wait`): the frames below it in the trace
/// are where the thread waits.
pub fn is_blocking_frame(line: &str) -> bool {
    gdb_pattern().is_match(line)
        && LOCK_WAITS
            .iter()
            .chain(CONDITION_WAITS)
            .any(|b| line.contains(b))
}

/// Primitives of a thread waiting for a lock; the function that called one holds a
/// `.lock()`, `.write()` or `.read()`.
const LOCK_WAITS: &[&str] = &["mutex_lock", "lll_lock", "rwlock"];

/// Primitives of a thread waiting for a condition or a message.
const CONDITION_WAITS: &[&str] = &["cond_wait", "cond_timedwait", "futex_wait"];

/// A numbered frame of a Rust backtrace that names its function but no location (a build
/// without line tables: `  8: tidb_query_datatype::codec::row::v2::row_slice::RowSlice::cut_checksum_bytes`,
/// when no `at file:line` follows it): the module's file (`codec/row/v2/row_slice.rs`) and the
/// whole path. `locate` finds the line.
pub fn frame(line: &str) -> Option<(String, String)> {
    let mut path = frame_path(line)?;
    // A legacy-mangled symbol ends in its hash (`::h0123456789abcdef`), which names nothing.
    if let Some((head, last)) = path.rsplit_once("::") {
        if last.len() == 17
            && last.starts_with('h')
            && last[1..].bytes().all(|b| b.is_ascii_hexdigit())
        {
            path = head.to_string();
        }
    }
    let (_, modules, _) = split_symbol(&path)?;
    let file = if modules.is_empty() {
        "lib.rs".to_string()
    } else {
        format!("{}.rs", modules.join("/"))
    };
    Some((file, path))
}

/// A Rust symbol path as (crate, modules, function): `krate::a::b::Type::f` gives
/// (`krate`, [`a`, `b`], `f`); a type's name (capitalised) is not a module.
fn split_symbol(path: &str) -> Option<(&str, Vec<&str>, &str)> {
    let mut parts: Vec<&str> = path.split("::").collect();
    if parts.len() < 2 {
        return None;
    }
    let function = parts.pop()?;
    let krate = parts.remove(0);
    while parts
        .last()
        .is_some_and(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
    {
        parts.pop();
    }
    Some((krate, parts, function))
}

/// Where a symbol-only frame (line 0, see `frame`) points: the files whose path ends
/// with its module's (`row/v2/row_slice.rs` or `row_slice/mod.rs`, preferring those under a
/// folder named like its crate) that define its function, and in each, the lines of that
/// function that can raise what the trace's header reports (`.unwrap()` for "called
/// `Option::unwrap()`", `assert` for an assertion, indexing for "index out of bounds"), at most
/// two; the function's first line when none matches. Sureness 0.5: the line is inferred.
pub fn locate(index: &RepoIndex, f: &Frame) -> Vec<(usize, u32, f64)> {
    let Some(path) = f.function.as_deref() else {
        return Vec::new();
    };
    let Some((krate, modules, function)) = split_symbol(path) else {
        return Vec::new();
    };
    let mut files: Vec<usize> = Vec::new();
    let tails = if modules.is_empty() {
        vec!["src/lib.rs".to_string(), "src/main.rs".to_string()]
    } else {
        let m = modules.join("/");
        vec![format!("{m}.rs"), format!("{m}/mod.rs")]
    };
    for tail in &tails {
        files.extend(index.files_ending_with(tail));
    }
    let in_crate: Vec<usize> = files
        .iter()
        .copied()
        .filter(|&i| index.files[i].path.contains(&format!("{krate}/")))
        .collect();
    if !in_crate.is_empty() {
        files = in_crate;
    }
    let mut out = Vec::new();
    for file in files.into_iter().take(2) {
        let m = index.model(file);
        let Some(def) = m
            .blocks
            .iter()
            .find(|b| related::is_function_named(b, function))
        else {
            continue;
        };
        let text = &index.files[file].text;
        let wanted = panic_sites(f.header.as_deref().unwrap_or(""));
        // The body: the lines after the definition's first, through its last.
        let mut hits: Vec<u32> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i as u32 + 1, l))
            .skip(def.start_line as usize)
            .take((def.end_line - def.start_line) as usize)
            .filter(|(_, l)| wanted.iter().any(|w| l.contains(w)))
            .map(|(n, _)| n)
            .take(2)
            .collect();
        if hits.is_empty() {
            hits.push(def.start_line);
        }
        out.extend(hits.into_iter().map(|l| (file, l, 0.5)));
    }
    out
}

/// The code that raises the panic a header reports, or that blocks in the primitive a gdb
/// frame names (a thread stuck in `pthread_mutex_lock` is in a `.lock()` of the first frame of
/// the project).
fn panic_sites(header: &str) -> Vec<&'static str> {
    let gdb = header.starts_with('#');
    if gdb && LOCK_WAITS.iter().any(|b| header.contains(b)) {
        vec![".lock()", ".write()", ".read()"]
    } else if gdb && CONDITION_WAITS.iter().any(|b| header.contains(b)) {
        vec![".wait(", ".recv(", ".lock()"]
    } else if header.contains("unwrap()") {
        vec![".unwrap()"]
    } else if header.contains("expect") || header.contains("Err` value") {
        vec![".expect(", ".unwrap()"]
    } else if header.contains("assertion") {
        vec!["assert"]
    } else if header.contains("index out of bounds") {
        vec!["["]
    } else if header.contains("unreachable") {
        vec!["unreachable!"]
    } else if header.contains("panicked") || header.contains("panic") {
        vec!["panic!"]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::baseline::frames::{parse, FrameKind};
    use std::path::Path;

    #[test]
    fn a_symbol_frame_points_at_the_lines_of_its_function_that_can_fail_as_reported() {
        let log = r#"[FATAL] ["called `Option::unwrap()` on a `None` value"] [backtrace="stack backtrace:\n   0: core::panicking::panic\n   1: kvdata::codec::row::v2::row_slice::RowSlice::cut_checksum_bytes\n   2: kvdata::codec::row::v2::row_slice::RowSlice::from_bytes"]"#;
        let f: Vec<Frame> = parse(log, 0, 0)
            .into_iter()
            .filter(|x| x.kind == FrameKind::Stack)
            .collect();
        assert_eq!(f.len(), 3, "{f:?}");
        let row_slice = "impl RowSlice {\n    fn cut_checksum_bytes(&self, n: usize) -> usize {\n        let x = self.len();\n        let end = self.offsets.get(n - 1).unwrap();\n        end + x\n    }\n}\n";
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                (
                    "components/kvdata/src/codec/row/v2/row_slice.rs".into(),
                    row_slice.into(),
                ),
                // The same module path in another crate, without the function.
                (
                    "components/other/src/codec/row/v2/row_slice.rs".into(),
                    "fn unrelated() {}\n".into(),
                ),
            ],
        );
        let located = locate(&idx, &f[1]);
        let id = idx
            .file_id("components/kvdata/src/codec/row/v2/row_slice.rs")
            .unwrap();
        assert_eq!(located, vec![(id, 4, 0.5)], "the unwrap the header reports");
        // Without a header that says how it failed, the function's first line.
        let bare = Frame {
            header: None,
            ..f[1].clone()
        };
        assert_eq!(locate(&idx, &bare), vec![(id, 2, 0.5)]);
        // Crates outside the repository find nothing.
        assert!(locate(&idx, &f[0]).is_empty());
    }

    #[test]
    fn a_gdb_frame_under_a_lock_wait_points_at_the_locks_of_its_function() {
        let log = "Thread 12 (Thread 0x7f2f30dff700 (LWP 19448)):\n\
#0  0x00007f2536da14ed in __lll_lock_wait () from /lib64/libpthread.so.0\n\
#1  0x00007f2536d9cc98 in pthread_mutex_lock () from /lib64/libpthread.so.0\n\
#2  0x000055a6ffc1505e in store::fsm::peer::PeerFsm$LT$EK$C$ER$GT$::on_snapshot::hb8ba6dd7648d255a ()\n\
#3  0x000055a6ffc104b6 in store::fsm::peer::PeerFsm$LT$EK$C$ER$GT$::on_ready::h1fcc32c1524e2da0 ()\n";
        let f: Vec<Frame> = parse(log, 0, 0)
            .into_iter()
            .filter(|x| x.kind == FrameKind::Stack)
            .collect();
        assert_eq!(f.len(), 2, "only the project's frames: {f:?}");
        assert_eq!(
            f[0].function.as_deref(),
            Some("store::fsm::peer::PeerFsm::on_snapshot"),
            "unmangled, without generics and hash"
        );
        let peer = "impl<EK, ER> PeerFsm<EK, ER> {\n    fn on_snapshot(&mut self) {\n        let a = self.regions.lock().unwrap();\n        a.apply();\n        let b = self.pending.lock().unwrap();\n        b.clear();\n    }\n    fn on_ready(&mut self) {\n        self.on_snapshot();\n    }\n}\n";
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![("components/store/src/fsm/peer.rs".into(), peer.into())],
        );
        let id = idx.file_id("components/store/src/fsm/peer.rs").unwrap();
        assert_eq!(
            locate(&idx, &f[0]),
            vec![(id, 3, 0.5), (id, 5, 0.5)],
            "the two locks it may wait in, not the unwraps after them"
        );
        // A frame line of a C function, or text that only looks numbered, names nothing.
        assert!(!is_frame_line(
            "#1  0x00007f25 in pthread_mutex_lock () from /lib64/x.so"
        ));
        assert!(!is_frame_line("#3 see the notes"));
    }
}

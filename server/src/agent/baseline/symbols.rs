//! Rust backtrace frames that name a function but no location (a build without line tables):
//! how they are read, and where in the repository they point.

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

/// Whether a line is a numbered frame of a Rust backtrace that names a function path.
pub fn is_frame_line(line: &str) -> bool {
    pattern().is_match(line)
}

/// A numbered frame of a Rust backtrace that names its function but no location (a build
/// without line tables: `  8: tidb_query_datatype::codec::row::v2::row_slice::RowSlice::cut_checksum_bytes`,
/// when no `at file:line` follows it): the module's file (`codec/row/v2/row_slice.rs`) and the
/// whole path. `locate` finds the line.
pub fn frame(line: &str) -> Option<(String, String)> {
    let c = pattern().captures(line)?;
    let mut path = c[1].to_string();
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

/// The code that raises the panic a header reports.
fn panic_sites(header: &str) -> Vec<&'static str> {
    if header.contains("unwrap()") {
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
}

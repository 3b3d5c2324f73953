//! Messages defined once as constants and raised elsewhere: `ErrCompacted =
//! errors.New("mvcc: required revision has been compacted")` in Go, `static final String
//! UNREASONABLE_LENGTH = "Unreasonable length = "` in Java, `const PREFIX: &str = "…"` in
//! Rust. The evidence quotes the message, but the code that failed is where the constant is
//! returned or thrown, not where it is declared; those are the uses to follow.

use crate::code::{RepoIndex, SiteKind};
use regex::Regex;
use std::sync::OnceLock;

/// A name used in more files than this is no clue to one place.
const MAX_FILES_USING: usize = 40;
/// At most this many uses of one constant are followed.
const MAX_USES: usize = 24;
/// At most this many constants are followed.
pub const MAX_CONSTANTS: usize = 16;

/// A declaration whose literal matched the evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageConstant {
    pub file: usize,
    pub line: u32,
    pub name: String,
    /// The literal's text, as the lexer read it.
    pub literal: String,
}

/// One line that uses a message constant.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstantUse {
    pub file: usize,
    pub line: u32,
    pub kind: SiteKind,
    /// Which constant (index into the constants), and how to name the use in a rationale.
    pub constant: usize,
    pub callee: String,
}

/// The name a line declares before its first `=`, when it looks like a constant: written in
/// capitals (`UNREASONABLE_LENGTH`) or a Go error value (`ErrCompacted`, `errNotLeader`).
pub fn declared_constant(line: &str) -> Option<String> {
    static DECL: OnceLock<Option<Regex>> = OnceLock::new();
    let re = DECL
        .get_or_init(|| {
            Regex::new(r#"^[^"=]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?(?::=|=)[^=]"#).ok()
        })
        .as_ref()?;
    let name = re.captures(line)?.get(1)?.as_str();
    let capitals = name.len() >= 3
        && name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    let go_error = ["Err", "err"].iter().any(|p| {
        name.strip_prefix(p)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c.is_ascii_uppercase())
    });
    (capitals || go_error).then(|| name.to_string())
}

/// Whether `name` occurs in `line` as a whole word.
fn uses_word(line: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(name).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Whether `line` compares `name` rather than produces it: `errors.Is(err, ErrX)`,
/// `err == ErrX`, `ERR.equals(msg)`. A handler that tests for an error did not raise it, even
/// when it returns on the same line.
fn compares(line: &str, name: &str) -> bool {
    if ["errors.Is(", "errors.As(", ".equals("]
        .iter()
        .any(|w| line.contains(w))
    {
        return true;
    }
    line.match_indices(name).any(|(i, _)| {
        let before = line[..i].trim_end();
        let after = line[i + name.len()..].trim_start();
        ["==", "!="]
            .iter()
            .any(|op| before.ends_with(op) || after.starts_with(op))
    })
}

/// What a use of `name` does with the message: raises or returns it, or only compares or
/// passes it.
fn use_kind(line: &str, name: &str) -> SiteKind {
    let raises = [
        "throw", "raise", "return", "Err(", "panic", "Error(", "errors.",
    ];
    if raises.iter().any(|w| line.contains(w)) && !compares(line, name) {
        SiteKind::Error
    } else {
        SiteKind::Other
    }
}

/// Every line of the repository (outside the declaration itself) that raises or returns one
/// of `constants`, at most `MAX_USES` per constant; constants used in too many files are left
/// out. Lines that only compare or pass the constant on are not followed: a setting's name
/// (`CONNECT_PROTOCOL_CONFIG = "connect.protocol"`) is read in many places that raise nothing,
/// and an error value is handled in many places that did not fail.
pub fn uses(index: &RepoIndex, constants: &[MessageConstant]) -> Vec<ConstantUse> {
    let mut out = Vec::new();
    for (ci, c) in constants.iter().enumerate() {
        let Some(files) = super::related::files_containing(index, &c.name, MAX_FILES_USING) else {
            continue;
        };
        let mut found = Vec::new();
        for f in files {
            let src = &index.files[f];
            for (i, line) in src.text.lines().enumerate() {
                let n = i as u32 + 1;
                if (f == c.file && n == c.line)
                    || !uses_word(line, &c.name)
                    || use_kind(line, &c.name) != SiteKind::Error
                {
                    continue;
                }
                found.push(ConstantUse {
                    file: f,
                    line: n,
                    kind: SiteKind::Error,
                    constant: ci,
                    callee: format!(
                        "{}, whose message is declared at {}:{}",
                        c.name, index.files[c.file].path, c.line
                    ),
                });
            }
        }
        if found.len() <= MAX_USES {
            out.extend(found);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_told_from_other_assignments() {
        let cases = [
            (
                r#"    private static final String UNREASONBLE_LENGTH = "Unreasonable length = ";"#,
                Some("UNREASONBLE_LENGTH"),
            ),
            (
                r#"	ErrCompacted = errors.New("mvcc: required revision has been compacted")"#,
                Some("ErrCompacted"),
            ),
            (
                r#"var errNotLeader = fmt.Errorf("not leader")"#,
                Some("errNotLeader"),
            ),
            (
                r#"const GRPC_THREAD_PREFIX: &str = "grpc-server";"#,
                Some("GRPC_THREAD_PREFIX"),
            ),
            (r#"        String msg = "Unreasonable length";"#, None),
            (r#"    LOG.warn("Unreasonable length = {}", len);"#, None),
            (r#"    if (x == "ERR") {"#, None),
        ];
        for (line, want) in cases {
            assert_eq!(declared_constant(line).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn uses_are_whole_words_and_raising_ones_are_errors() {
        assert!(uses_word("return 0, ErrCompacted", "ErrCompacted"));
        assert!(!uses_word("return ErrCompactedTooFar", "ErrCompacted"));
        assert!(!uses_word("x.MyErrCompacted", "ErrCompacted"));
        let kind = |line: &str| use_kind(line, "ErrCompacted");
        assert_eq!(kind("    return 0, 0, rev, ErrCompacted"), SiteKind::Error);
        assert_eq!(
            kind("\treturn errors.Wrap(ErrCompacted, \"x\")"),
            SiteKind::Error
        );
        assert_eq!(
            use_kind(
                "  throw new IOException(UNREASONBLE_LENGTH + len);",
                "UNREASONBLE_LENGTH"
            ),
            SiteKind::Error
        );
        assert_eq!(kind("  if err == ErrCompacted {"), SiteKind::Other);
        // Tests for the error, though the line returns: the handler did not raise it.
        assert_eq!(
            kind("\treturn errors.Is(err, ErrCompacted)"),
            SiteKind::Other
        );
        assert_eq!(
            kind("\tif err != ErrCompacted { return err }"),
            SiteKind::Other
        );
    }
}

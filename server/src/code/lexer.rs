//! A fast lexical pass over source text that finds string literals and their lines without
//! parsing (comments skipped, char literals and Rust lifetimes told apart from strings). The
//! index runs it over every file; tree-sitter then parses only the files that matter.

use super::lang::Lang;

/// A string literal's contents (quotes removed, escapes kept as written) and its first line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub line: u32,
    pub text: String,
}

/// The longest literal text kept; longer literals are cut (they are matched by their words).
const MAX_LITERAL: usize = 400;

/// The string literals of `text` in `lang` that hold at least one letter.
pub fn literals(text: &str, lang: Lang) -> Vec<Literal> {
    if lang == Lang::Text {
        return Vec::new();
    }
    let b = text.as_bytes();
    let hash = lang.hash_comments();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1u32;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'#' if hash => i = skip_to_eol(b, i),
            b'/' if !hash && b.get(i + 1) == Some(&b'/') => i = skip_to_eol(b, i),
            b'/' if !hash && b.get(i + 1) == Some(&b'*') => {
                let end = find(b, i + 2, b"*/").map(|e| e + 2).unwrap_or(b.len());
                line += count_newlines(&b[i..end]);
                i = end;
            }
            b'"' | b'\'' | b'`' => {
                if c == b'\'' && !matches!(lang, Lang::Python) {
                    i = skip_char_literal(b, i);
                    continue;
                }
                if c == b'`' && lang != Lang::Go {
                    i += 1;
                    continue;
                }
                let raw_rust = lang == Lang::Rust && is_raw_prefix(b, i);
                let (start, end, next) = string_span(b, i, lang, raw_rust);
                push_literal(&mut out, text, start, end, line);
                line += count_newlines(&b[i..next]);
                i = next;
            }
            b'r' if lang == Lang::Rust && b.get(i + 1) == Some(&b'#') && !prev_is_ident(b, i) => {
                // r#"…"#: find the opening quote after the hashes.
                let mut j = i + 1;
                while j < b.len() && b[j] == b'#' {
                    j += 1;
                }
                if b.get(j) == Some(&b'"') {
                    let hashes = j - i - 1;
                    let mut close = vec![b'"'];
                    close.extend(std::iter::repeat_n(b'#', hashes));
                    let end = find(b, j + 1, &close).unwrap_or(b.len());
                    push_literal(&mut out, text, j + 1, end, line);
                    let next = (end + close.len()).min(b.len());
                    line += count_newlines(&b[i..next]);
                    i = next;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// The span of the string starting at `i`: (content start, content end, index after it).
fn string_span(b: &[u8], i: usize, lang: Lang, raw: bool) -> (usize, usize, usize) {
    let q = b[i];
    if q == b'`' {
        let end = memchr::memchr(b'`', &b[i + 1..])
            .map(|e| i + 1 + e)
            .unwrap_or(b.len());
        return (i + 1, end, (end + 1).min(b.len()));
    }
    if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
        let triple = [q, q, q];
        let end = find(b, i + 3, &triple).unwrap_or(b.len());
        return (i + 3, end, (end + 3).min(b.len()));
    }
    // Rust strings may span lines; elsewhere a newline ends an unterminated string, so one
    // stray quote cannot swallow the rest of the file.
    let multiline = lang == Lang::Rust;
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' if !raw => j += 2,
            b'\n' if !multiline => return (i + 1, j, j),
            x if x == q => return (i + 1, j, j + 1),
            _ => j += 1,
        }
    }
    (i + 1, b.len().min(j), b.len())
}

fn push_literal(out: &mut Vec<Literal>, text: &str, start: usize, end: usize, line: u32) {
    let Some(s) = text.get(start..end.max(start)) else {
        // Not on a char boundary (a quote inside a multi-byte sequence cannot happen in valid
        // UTF-8, but a cut at MAX_LITERAL can): fall back to a lossy slice.
        let bytes = &text.as_bytes()[start.min(text.len())..end.min(text.len())];
        let s = String::from_utf8_lossy(bytes);
        if s.bytes().any(|c| c.is_ascii_alphabetic()) {
            out.push(Literal {
                line,
                text: cut(&s),
            });
        }
        return;
    };
    if s.bytes().any(|c| c.is_ascii_alphabetic()) {
        out.push(Literal { line, text: cut(s) });
    }
}

fn cut(s: &str) -> String {
    if s.len() <= MAX_LITERAL {
        return s.to_string();
    }
    let mut e = MAX_LITERAL;
    while !s.is_char_boundary(e) {
        e -= 1;
    }
    s[..e].to_string()
}

fn is_raw_prefix(b: &[u8], i: usize) -> bool {
    i >= 1 && b[i - 1] == b'r' && (i < 2 || !is_ident(b[i - 2]) || b[i - 2] == b'b')
}

fn prev_is_ident(b: &[u8], i: usize) -> bool {
    i >= 1 && is_ident(b[i - 1])
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Skips `'x'`, `'\n'`, `'\u{1F600}'`; a lone `'` (a Rust lifetime, a Scala symbol) is one byte.
fn skip_char_literal(b: &[u8], i: usize) -> usize {
    if b.get(i + 1) == Some(&b'\\') {
        let limit = (i + 12).min(b.len());
        for (j, &c) in b.iter().enumerate().take(limit).skip(i + 2) {
            if c == b'\'' {
                return j + 1;
            }
            if c == b'\n' {
                return j;
            }
        }
        return i + 1;
    }
    // One char of up to four UTF-8 bytes, then the closing quote.
    for len in 1..=4 {
        if b.get(i + 1 + len) == Some(&b'\'') && b.get(i + 1) != Some(&b'\n') {
            return i + 2 + len;
        }
    }
    i + 1
}

fn skip_to_eol(b: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &b[i..])
        .map(|e| i + e)
        .unwrap_or(b.len())
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= b.len() {
        return None;
    }
    memchr::memmem::find(&b[from..], needle).map(|e| from + e)
}

fn count_newlines(b: &[u8]) -> u32 {
    memchr::memchr_iter(b'\n', b).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(v: &[Literal]) -> Vec<(u32, &str)> {
        v.iter().map(|l| (l.line, l.text.as_str())).collect()
    }

    #[test]
    fn finds_literals_and_skips_comments_and_chars() {
        let java = "// \"not this\"\nclass A {\n  /* \"nor\n this\" */ char c = '\"';\n  void f() { log.warn(\"lease {} expired\", id); }\n  String t = \"\"\"\n    multi\n    line\"\"\";\n  String u = \"x\\\"y z\";\n}\n";
        assert_eq!(
            texts(&literals(java, Lang::Java)),
            [
                (5, "lease {} expired"),
                (6, "\n    multi\n    line"),
                (9, "x\\\"y z")
            ]
        );
        let py = "# don't\nlog.info('granted %s', c)  # it's\nx = \"\"\"doc\nstring\"\"\"\n";
        assert_eq!(
            texts(&literals(py, Lang::Python)),
            [(2, "granted %s"), (3, "doc\nstring")]
        );
        let rs = "fn f<'a>(x: &'a str) { let c = 'q'; warn!(r#\"raw \"quoted\" {}\"#, x); panic!(\"two\nlines\"); }\n";
        assert_eq!(
            texts(&literals(rs, Lang::Rust)),
            [(1, "raw \"quoted\" {}"), (1, "two\nlines")]
        );
        let go = "package a\n// x\nvar s = `raw %s\nq`\nfunc f() { log.Printf(\"term %d\", t) }\n";
        assert_eq!(
            texts(&literals(go, Lang::Go)),
            [(3, "raw %s\nq"), (5, "term %d")]
        );
    }

    #[test]
    fn unterminated_strings_and_odd_bytes_do_not_derail() {
        let src = "a = \"open\nb = \"closed\"\n\u{00e9}\"\u{00e9}t\u{00e9}\"";
        let l = literals(src, Lang::Java);
        assert_eq!(l.len(), 3);
        assert_eq!(l[1].line, 2);
        assert!(literals("", Lang::Go).is_empty());
        assert!(literals("\"no end", Lang::Rust).len() == 1);
    }
}

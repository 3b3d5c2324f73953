//! HTML building blocks of the report: escaping, links to files, and number formats.
//!
//! Everything that comes from a file (configuration and incident names, systems, tags, models,
//! error messages, leakage reasons) passes through `esc` before it reaches the page, in text
//! and in attributes alike; links are percent-encoded first and escaped second.

use std::fmt::Write;
use std::path::{Component, Path, PathBuf};

/// Escapes text for an HTML text node or a quoted attribute value.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline are not allowed in HTML text.
            c if c.is_control() && c != '\t' && c != '\n' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A number for an SVG coordinate or length: one decimal, no `-0.0`.
pub fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.1}");
    if s == "-0.0" {
        "0.0".to_string()
    } else {
        s
    }
}

/// An absolute, lexically cleaned form of `p` (the real path when it exists), so that two
/// paths can be compared component by component.
fn absolute(p: &Path) -> PathBuf {
    if let Ok(real) = p.canonicalize() {
        return real;
    }
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    // The folder may not exist yet (the report's own folder): clean `.` and `..` by hand,
    // after resolving the longest existing ancestor.
    let mut existing = abs.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    for name in rest.into_iter().rev() {
        out.push(name);
    }
    let mut clean = PathBuf::new();
    for c in out.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other.as_os_str()),
        }
    }
    clean
}

/// Percent-encodes one path segment for a URL: everything but unreserved characters.
fn encode_segment(seg: &str, out: &mut String) {
    for b in seg.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

/// The link from a page in `from_dir` to `target`: a relative URL when both share a root,
/// else a `file://` URL. Not yet HTML-escaped (pass it through `esc`).
pub fn href(from_dir: &Path, target: &Path) -> String {
    let from = absolute(from_dir);
    let to = absolute(target);
    let fc: Vec<Component> = from.components().collect();
    let tc: Vec<Component> = to.components().collect();
    let common = fc.iter().zip(&tc).take_while(|(a, b)| a == b).count();
    let mut out = String::new();
    if common == 0 {
        out.push_str("file://");
        for c in &tc {
            if let Component::Normal(s) = c {
                out.push('/');
                encode_segment(&s.to_string_lossy(), &mut out);
            }
        }
        return out;
    }
    let mut segs: Vec<String> = Vec::new();
    for _ in common..fc.len() {
        segs.push("..".to_string());
    }
    for c in &tc[common..] {
        let mut s = String::new();
        encode_segment(&c.as_os_str().to_string_lossy(), &mut s);
        segs.push(s);
    }
    if segs.is_empty() {
        return ".".to_string();
    }
    segs.join("/")
}

/// `<a href="...">text</a>` with both parts escaped.
pub fn link(from_dir: &Path, target: &Path, text: &str, title: &str) -> String {
    format!(
        "<a href=\"{}\" title=\"{}\">{}</a>",
        esc(&href(from_dir, target)),
        esc(title),
        esc(text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_control_characters() {
        assert_eq!(
            esc("<img src=x onerror=\"a('b')\">&"),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
        assert_eq!(esc("a\u{0}b\tc"), "a\u{fffd}b\tc");
        assert_eq!(esc("plain ü text"), "plain ü text");
    }

    #[test]
    fn svg_numbers_have_one_decimal_and_no_negative_zero() {
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(-0.01), "0.0");
        assert_eq!(num(f64::NAN), "0.0");
    }

    #[test]
    fn links_are_relative_and_percent_encoded() {
        let root = tempfile::tempdir().unwrap();
        let attempt = root.path().join("results/my cfg/inc-1/attempt-2");
        std::fs::create_dir_all(&attempt).unwrap();
        let out = root.path().join("reports");
        assert_eq!(
            href(&out, &attempt.join("diagnosis.json")),
            "../results/my%20cfg/inc-1/attempt-2/diagnosis.json"
        );
        // The report's folder may not exist yet and may be written with `..`.
        let odd = root.path().join("results/x/../new");
        assert_eq!(
            href(&odd, &attempt.join("diagnosis.json")),
            "../my%20cfg/inc-1/attempt-2/diagnosis.json"
        );
        assert_eq!(href(&attempt, &attempt), ".");
        let a = link(&out, &attempt.join("a\"<b>.json"), "<x>", "t\"");
        assert!(a.contains("href=\"../results/my%20cfg/inc-1/attempt-2/a%22%3Cb%3E.json\""));
        assert!(a.contains(">&lt;x&gt;</a>") && a.contains("title=\"t&quot;\""));
    }
}

//! Error-handling smells: statements that drop an error or a result on the floor (an empty
//! catch, `except: pass`, Rust's `.ok();` and `let _ =`, Go's `_ = f()`, a catch-all that
//! only continues). Most catastrophic failures in distributed systems come from mishandled
//! non-fatal errors (Yuan et al., OSDI'14), so near the evidence these are a weak prior: they
//! raise a candidate a little, never name code on their own.

use crate::code::access::{self, TokKind};
use crate::code::Lang;

/// One smell: its 1-based line and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Smell {
    pub line: u32,
    pub what: &'static str,
}

/// The smells of lines `start..=end` of `text`.
pub fn find(text: &str, lang: Lang, start: u32, end: u32) -> Vec<Smell> {
    let mut out = Vec::new();
    let mut line_no = 0u32;
    let mut offset = 0usize;
    let mut lines: Vec<(u32, usize, &str)> = Vec::new();
    for l in text.split_inclusive('\n') {
        line_no += 1;
        if line_no >= start && line_no <= end {
            lines.push((line_no, offset, l));
        }
        offset += l.len();
        if line_no > end {
            break;
        }
    }
    for (k, &(n, from, l)) in lines.iter().enumerate() {
        let code = strip_comment(l, lang).trim();
        if code.is_empty() {
            continue;
        }
        let toks = access::tokenize(text, lang, from, from + l.len(), n);
        let words: Vec<&str> = toks
            .iter()
            .filter(|t| t.kind != TokKind::Str)
            .filter_map(|t| text.get(t.start..t.end))
            .collect();
        let next = lines
            .get(k + 1)
            .map(|x| strip_comment(x.2, lang).trim())
            .unwrap_or("");
        if let Some(what) = smell_of(lang, &words, code, next) {
            out.push(Smell { line: n, what });
        }
    }
    out
}

fn strip_comment(line: &str, lang: Lang) -> &str {
    let marker = if lang.hash_comments() { "#" } else { "//" };
    match line.find(marker) {
        // A marker inside a string is rare enough on a smell's line to ignore.
        Some(i) => &line[..i],
        None => line,
    }
}

fn smell_of(lang: Lang, w: &[&str], code: &str, next: &str) -> Option<&'static str> {
    let ends = |tail: &[&str]| w.len() >= tail.len() && w[w.len() - tail.len()..] == *tail;
    let starts = |head: &[&str]| w.len() >= head.len() && w[..head.len()] == *head;
    match lang {
        Lang::Rust => {
            if ends(&[".", "ok", "(", ")", ";"]) || ends(&[".", "ok", "(", ")"]) {
                return Some("a Result discarded with `.ok()`");
            }
            if starts(&["let", "_", "="]) {
                return Some("a result discarded with `let _ =`");
            }
            if w.windows(4).any(|x| x == ["Err", "(", "_", ")"])
                && (code.ends_with("=> {}") || code.ends_with("=> (),") || code.ends_with("=> {},"))
            {
                return Some("an error arm that does nothing");
            }
        }
        Lang::Go => {
            if starts(&["_", "="]) || starts(&["_", ",", "_", "="]) {
                return Some("a result discarded with `_ =`");
            }
            if code.starts_with("if err != nil") && (code.ends_with("{}") || next == "}") {
                return Some("an error check that does nothing");
            }
        }
        Lang::Python => {
            if (code.starts_with("except") && code.ends_with(':') || code == "except:")
                && next == "pass"
                || code.starts_with("except") && code.ends_with(": pass")
            {
                return Some("an exception swallowed with `pass`");
            }
        }
        Lang::Java | Lang::Scala | Lang::Cpp => {
            if w.first() == Some(&"}") && w.get(1) == Some(&"catch") || w.first() == Some(&"catch")
            {
                let empty = code.ends_with("{ }") || code.ends_with("{}") || next == "}";
                if empty {
                    return Some("an empty catch block");
                }
            }
            if lang == Lang::Scala && code.contains("case _ =>") && code.ends_with("=> ()") {
                return Some("a catch-all case that does nothing");
            }
            if lang == Lang::Cpp && starts(&["(", "void", ")"]) {
                return Some("a result discarded with `(void)`");
            }
        }
        Lang::Text => {}
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whats(src: &str, lang: Lang) -> Vec<(u32, &'static str)> {
        find(src, lang, 1, 999)
            .into_iter()
            .map(|s| (s.line, s.what))
            .collect()
    }

    #[test]
    fn finds_dropped_errors_in_each_language() {
        let rs = "fn f(&mut self) {\n    self.ring.write().unwrap().remove(id).ok();\n    let _ = tx.send(x);\n    let y = g().ok()?;\n}\n";
        assert_eq!(
            whats(rs, Lang::Rust),
            [
                (2, "a Result discarded with `.ok()`"),
                (3, "a result discarded with `let _ =`")
            ]
        );
        let go = "func f() {\n\t_ = conn.Close()\n\tif err != nil {\n\t}\n\tif err != nil {\n\t\treturn err\n\t}\n}\n";
        assert_eq!(
            whats(go, Lang::Go),
            [
                (2, "a result discarded with `_ =`"),
                (3, "an error check that does nothing")
            ]
        );
        let py =
            "try:\n    x()\nexcept KeyError:\n    pass\nexcept ValueError:\n    log.warning('x')\n";
        assert_eq!(
            whats(py, Lang::Python),
            [(3, "an exception swallowed with `pass`")]
        );
        let java = "try {\n  a();\n} catch (IOException e) {\n}\ntry { b(); } catch (Exception e) { log.warn(\"x\", e); }\n";
        assert_eq!(whats(java, Lang::Java), [(3, "an empty catch block")]);
        // Only the lines asked about.
        assert!(find(rs, Lang::Rust, 4, 5).is_empty());
    }
}

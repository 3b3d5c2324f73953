//! Call sites: logging and error calls with the constant text of their message (SLF4J `{}`,
//! printf `%s %d %v`, concatenation, Python `%`/`{}`/f-strings, Scala `s""`, Rust `{}`,
//! C++ `<<` streams), and every call by the name it calls (for callers and callees).

use super::lang::Lang;
use serde::Serialize;
use tree_sitter::Node;

/// A piece of a message: constant text, or a value filled in at run time.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum Piece {
    Lit(String),
    Hole,
}

/// What a message call does with its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SiteKind {
    /// A logging call (`log.warn`, `info!`, `klog.Errorf`, `LOG(INFO) <<`…).
    Log,
    /// An error made or raised (`throw new …`, `raise`, `panic`, `fmt.Errorf`, `errors.New`).
    Error,
    /// Any other call with a constant message (`String.format`, `print`…).
    Other,
}

/// A call with a constant message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageSite {
    pub line: u32,
    pub end_line: u32,
    pub kind: SiteKind,
    /// The callee as written (`LOG.warn`, `fmt.Errorf`, `new IllegalStateException`).
    pub callee: String,
    pub pieces: Vec<Piece>,
}

/// A call, by the last segment of what it calls (`this.leases.expired(..)` -> `expired`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallRef {
    pub name: String,
    pub line: u32,
}

const CALL_KINDS: &[&str] = &[
    "method_invocation",
    "object_creation_expression",
    "call_expression",
    "call",
    "macro_invocation",
];

/// Records the call at `node`, if it is one, and its message site, if it has a message.
pub(crate) fn visit(
    lang: Lang,
    node: &Node,
    src: &str,
    in_throw: bool,
    sites: &mut Vec<MessageSite>,
    calls: &mut Vec<CallRef>,
) {
    let kind = node.kind();
    if lang == Lang::Cpp && kind == "binary_expression" {
        cpp_stream(node, src, sites);
        return;
    }
    if !CALL_KINDS.contains(&kind) {
        return;
    }
    let (start, end) = super::parse::line_range(node);
    let callee = callee_text(node, src);
    let name = last_segment(&callee);
    if !name.is_empty() && kind != "macro_invocation" {
        calls.push(CallRef {
            name: name.to_string(),
            line: start,
        });
    }
    let pieces = if kind == "macro_invocation" {
        macro_pieces(node, src)
    } else {
        match node.child_by_field_name("arguments") {
            Some(args) => argument_pieces(&args, src, lang, 0),
            None => Vec::new(),
        }
    };
    let pieces = tidy(pieces);
    let constant_tokens: usize = pieces
        .iter()
        .map(|p| match p {
            Piece::Lit(s) => super::tokens::message_tokens(s).len(),
            Piece::Hole => 0,
        })
        .sum();
    let site_kind = classify(&callee, kind, in_throw);
    let enough = match site_kind {
        SiteKind::Other => constant_tokens >= 2,
        _ => constant_tokens >= 1,
    };
    if !enough {
        return;
    }
    // The same message reached through a nested call (`log.warn(String.format(..))`) is
    // recorded once, by the outer call that was visited first.
    if sites
        .iter()
        .rev()
        .take(4)
        .any(|s| s.line <= start && end <= s.end_line && s.pieces == pieces)
    {
        return;
    }
    sites.push(MessageSite {
        line: start,
        end_line: end,
        kind: site_kind,
        callee: clip(&callee, 120),
        pieces,
    });
}

/// The callee as written: everything of the call before its arguments.
fn callee_text(node: &Node, src: &str) -> String {
    let head = if node.kind() == "macro_invocation" {
        node.child_by_field_name("macro")
    } else {
        node.child_by_field_name("function")
            .or_else(|| node.child_by_field_name("type"))
            .or_else(|| node.child_by_field_name("name"))
    };
    let text = match (node.kind(), node.child_by_field_name("arguments")) {
        ("method_invocation" | "object_creation_expression", Some(args)) => {
            src.get(node.start_byte()..args.start_byte()).unwrap_or("")
        }
        _ => head
            .and_then(|h| src.get(h.start_byte()..h.end_byte()))
            .unwrap_or(""),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The last identifier of a callee: `a.b::<T>.c` -> `c`, `new pkg.Foo<>` -> `Foo`.
pub fn last_segment(callee: &str) -> &str {
    let trimmed = match callee.find('<') {
        Some(i) => &callee[..i],
        None => callee,
    };
    let trimmed = trimmed.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    let start = trimmed
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(|i| i + trimmed[i..].chars().next().map_or(1, |c| c.len_utf8()))
        .unwrap_or(0);
    &trimmed[start..]
}

const LOG_NAMES: &[&str] = &[
    "trace",
    "debug",
    "info",
    "warn",
    "warning",
    "error",
    "fatal",
    "critical",
    "exception",
    "severe",
    "notice",
    "log",
    "fine",
    "finer",
    "finest",
    "tracef",
    "debugf",
    "infof",
    "warnf",
    "warningf",
    "errorf",
    "fatalf",
    "panicf",
    "printf",
    "println",
    "print",
    "eprintln",
    "eprint",
    "infoln",
    "warningln",
    "errorln",
    "debugw",
    "infow",
    "warnw",
    "errorw",
    "logf",
    "v",
    "logger",
    "spdlog",
];

const ERROR_NAMES: &[&str] = &[
    "panic",
    "panicf",
    "bail",
    "anyhow",
    "ensure",
    "unreachable",
    "unimplemented",
    "todo",
    "expect",
    "new",
    "errorf",
    "wrap",
    "wrapf",
    "checkstate",
    "checkargument",
    "checknotnull",
    "require",
    "assert",
    "assert_eq",
    "assert_ne",
    "fail",
    "abort",
];

/// Whether a call logs, makes an error, or just carries a message.
fn classify(callee: &str, node_kind: &str, in_throw: bool) -> SiteKind {
    let name = last_segment(callee).to_ascii_lowercase();
    let lower = callee.to_ascii_lowercase();
    let is_error_type = node_kind == "object_creation_expression"
        || name.ends_with("exception")
        || name.ends_with("error") && name != "error";
    if in_throw || is_error_type {
        return SiteKind::Error;
    }
    // `errors.New`, `fmt.Errorf`, `panic(..)`: values that become errors; `log.Fatal` logs.
    if lower.starts_with("errors.") || lower == "fmt.errorf" || name == "panic" {
        return SiteKind::Error;
    }
    if LOG_NAMES.contains(&name.as_str())
        || lower.contains("log")
        || lower.starts_with("zap.")
        || lower.starts_with("tracing::")
    {
        return SiteKind::Log;
    }
    if ERROR_NAMES.contains(&name.as_str()) {
        return SiteKind::Error;
    }
    SiteKind::Other
}

/// The pieces of a call's arguments: each argument's pieces, with a hole between arguments.
fn argument_pieces(args: &Node, src: &str, lang: Lang, depth: u32) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut cursor = args.walk();
    for a in args.named_children(&mut cursor) {
        if a.kind().ends_with("comment") {
            continue;
        }
        if !out.is_empty() {
            out.push(Piece::Hole);
        }
        out.extend(expr_pieces(&a, src, lang, depth + 1));
    }
    out
}

/// The pieces of an expression: literals, concatenations and formatting calls are followed;
/// anything else is a value.
fn expr_pieces(node: &Node, src: &str, lang: Lang, depth: u32) -> Vec<Piece> {
    if depth > 48 {
        return vec![Piece::Hole];
    }
    let text = || src.get(node.start_byte()..node.end_byte()).unwrap_or("");
    match node.kind() {
        "string_literal"
        | "interpreted_string_literal"
        | "raw_string_literal"
        | "string"
        | "interpolated_string_expression"
        | "text_block" => literal_pieces(text(), lang),
        "concatenated_string" => {
            let mut out = Vec::new();
            let mut cursor = node.walk();
            for c in node.named_children(&mut cursor) {
                out.extend(expr_pieces(&c, src, lang, depth + 1));
            }
            out
        }
        "binary_expression" | "binary_operator" | "infix_expression" => {
            let op = node
                .child_by_field_name("operator")
                .and_then(|o| src.get(o.start_byte()..o.end_byte()))
                .unwrap_or("");
            let left = node.child_by_field_name("left");
            let right = node.child_by_field_name("right");
            match (op, left, right) {
                ("+", Some(l), Some(r)) => {
                    let mut out = expr_pieces(&l, src, lang, depth + 1);
                    out.extend(expr_pieces(&r, src, lang, depth + 1));
                    out
                }
                // Python `"..." % args`: the format's own holes stand for the values.
                ("%", Some(l), Some(_)) if lang == Lang::Python => {
                    expr_pieces(&l, src, lang, depth + 1)
                }
                _ => vec![Piece::Hole],
            }
        }
        "parenthesized_expression" => match node.named_child(0) {
            Some(c) => expr_pieces(&c, src, lang, depth + 1),
            None => vec![Piece::Hole],
        },
        "method_invocation" | "call_expression" | "call" if depth < 4 => {
            // `"{} x".format(a)`: the receiver is the format.
            let receiver = node
                .child_by_field_name("function")
                .and_then(|f| f.child_by_field_name("object"))
                .or_else(|| node.child_by_field_name("object"));
            if let Some(r) = receiver {
                if matches!(r.kind(), "string" | "string_literal") {
                    return expr_pieces(&r, src, lang, depth + 1);
                }
            }
            // `String.format(..)`, `fmt.Sprintf(..)`: the message is in the arguments.
            match node.child_by_field_name("arguments") {
                Some(a) => {
                    let p = argument_pieces(&a, src, lang, depth + 1);
                    if p.iter().any(|x| matches!(x, Piece::Lit(_))) {
                        p
                    } else {
                        vec![Piece::Hole]
                    }
                }
                None => vec![Piece::Hole],
            }
        }
        "macro_invocation" if depth < 4 => macro_pieces(node, src),
        _ => vec![Piece::Hole],
    }
}

/// The pieces of a Rust macro's arguments (`format!`, `warn!`…): its string literals, with
/// holes for everything else.
fn macro_pieces(node: &Node, src: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let Some(tt) = node
        .named_children(&mut node.walk())
        .find(|c| c.kind() == "token_tree")
    else {
        return out;
    };
    let mut cursor = tt.walk();
    for c in tt.named_children(&mut cursor) {
        match c.kind() {
            "string_literal" | "raw_string_literal" => {
                if !out.is_empty() {
                    out.push(Piece::Hole);
                }
                out.extend(literal_pieces(
                    src.get(c.start_byte()..c.end_byte()).unwrap_or(""),
                    Lang::Rust,
                ));
            }
            _ => {
                if !matches!(out.last(), Some(Piece::Hole)) && !out.is_empty() {
                    out.push(Piece::Hole);
                }
            }
        }
    }
    out
}

/// `LOG(INFO) << "put " << k;` and `std::cerr << …`: a stream chain whose head looks like a
/// log is a logging site with the chain's literals as its message.
fn cpp_stream(node: &Node, src: &str, sites: &mut Vec<MessageSite>) {
    let op = |n: &Node| {
        n.child_by_field_name("operator")
            .and_then(|o| src.get(o.start_byte()..o.end_byte()))
            .unwrap_or("")
            .to_string()
    };
    if op(node) != "<<" {
        return;
    }
    if node
        .parent()
        .is_some_and(|p| p.kind() == "binary_expression" && op(&p) == "<<")
    {
        return; // only the outermost `<<` of a chain
    }
    let mut operands = Vec::new();
    let mut cur = *node;
    let mut guard = 0;
    while cur.kind() == "binary_expression" && op(&cur) == "<<" && guard < 256 {
        if let Some(r) = cur.child_by_field_name("right") {
            operands.push(r);
        }
        match cur.child_by_field_name("left") {
            Some(l) => cur = l,
            None => break,
        }
        guard += 1;
    }
    let head = src.get(cur.start_byte()..cur.end_byte()).unwrap_or("");
    let lower = head.to_ascii_lowercase();
    if !(lower.contains("log") || lower.contains("cerr") || lower.contains("cout")) {
        return;
    }
    operands.reverse();
    let mut pieces = Vec::new();
    for o in operands {
        pieces.extend(expr_pieces(&o, src, Lang::Cpp, 1));
    }
    let pieces = tidy(pieces);
    if !pieces.iter().any(|p| matches!(p, Piece::Lit(_))) {
        return;
    }
    let (line, end_line) = super::parse::line_range(node);
    sites.push(MessageSite {
        line,
        end_line,
        kind: SiteKind::Log,
        callee: clip(head, 120),
        pieces,
    });
}

/// Merges neighbouring literals and holes, drops empty literals and holes at the ends.
fn tidy(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for p in pieces {
        match p {
            Piece::Lit(s) if s.is_empty() => {}
            Piece::Lit(s) => match out.last_mut() {
                Some(Piece::Lit(prev)) => prev.push_str(&s),
                _ => out.push(Piece::Lit(s)),
            },
            Piece::Hole => {
                if !out.is_empty() && !matches!(out.last(), Some(Piece::Hole)) {
                    out.push(Piece::Hole);
                }
            }
        }
    }
    if matches!(out.last(), Some(Piece::Hole)) {
        out.pop();
    }
    out
}

/// The pieces of one string literal as written in `lang`: its prefix and quotes removed,
/// escapes resolved, and format placeholders (`{}`, `{0}`, `{name}`, `%s`, `%-5d`, `%(x)s`,
/// `%v`, Scala `$x` / `${x}`) turned into holes.
pub fn literal_pieces(text: &str, lang: Lang) -> Vec<Piece> {
    let Some(q) = text.find(['"', '\'', '`']) else {
        return Vec::new();
    };
    let prefix = &text[..q];
    let rest = &text[q..];
    let quote = rest.as_bytes()[0] as char;
    let raw = prefix.contains(['r', 'R']) || quote == '`';
    let triple: String = std::iter::repeat_n(quote, 3).collect();
    let mut body = if rest.starts_with(&triple) && rest.len() >= 6 {
        rest[3..].trim_end_matches(quote)
    } else {
        let inner = &rest[1..];
        match inner.rfind(quote) {
            Some(e) => &inner[..e],
            None => inner,
        }
    };
    // C++ raw strings: R"delim( … )delim"
    if lang == Lang::Cpp && prefix.ends_with('R') {
        if let (Some(o), Some(c)) = (body.find('('), body.rfind(')')) {
            if o < c {
                body = &body[o + 1..c];
            }
        }
    }
    let interpolated = lang == Lang::Scala && !prefix.is_empty();
    let chars: Vec<char> = body.chars().collect();
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    let flush = |lit: &mut String, out: &mut Vec<Piece>| {
        if !lit.is_empty() {
            out.push(Piece::Lit(std::mem::take(lit)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\\' && !raw {
            match next {
                Some('n') | Some('t') | Some('r') => lit.push(' '),
                Some(x) => lit.push(x),
                None => {}
            }
            i += 2;
            continue;
        }
        if c == '{' {
            if next == Some('{') {
                lit.push('{');
                i += 2;
                continue;
            }
            if let Some(len) = placeholder_len(&chars[i..], '}') {
                flush(&mut lit, &mut out);
                out.push(Piece::Hole);
                i += len;
                continue;
            }
        }
        if c == '%' {
            if next == Some('%') {
                lit.push('%');
                i += 2;
                continue;
            }
            if let Some(len) = printf_len(&chars[i..]) {
                flush(&mut lit, &mut out);
                out.push(Piece::Hole);
                i += len;
                continue;
            }
        }
        if c == '$' && interpolated {
            if next == Some('$') {
                lit.push('$');
                i += 2;
                continue;
            }
            if next == Some('{') {
                if let Some(len) = placeholder_len(&chars[i + 1..], '}') {
                    flush(&mut lit, &mut out);
                    out.push(Piece::Hole);
                    i += len + 1;
                    continue;
                }
            }
            if next.is_some_and(|x| x.is_alphabetic() || x == '_') {
                let mut j = i + 1;
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                flush(&mut lit, &mut out);
                out.push(Piece::Hole);
                i = j;
                continue;
            }
        }
        lit.push(c);
        i += 1;
    }
    flush(&mut lit, &mut out);
    out
}

/// Length of `{…}` at the start of `s` when it looks like a placeholder (short, one line).
fn placeholder_len(s: &[char], close: char) -> Option<usize> {
    for (j, &c) in s.iter().enumerate().skip(1).take(48) {
        if c == close {
            return Some(j + 1);
        }
        if c == '\n' || c == '{' || c == '"' {
            return None;
        }
    }
    None
}

/// Length of a printf conversion at the start of `s` (`%s`, `%-5d`, `%.2f`, `%lld`, `%(x)s`).
fn printf_len(s: &[char]) -> Option<usize> {
    let mut j = 1;
    if s.get(j) == Some(&'(') {
        while j < s.len() && s[j] != ')' {
            j += 1;
            if j > 40 {
                return None;
            }
        }
        j += 1;
    }
    // No space flag: "100% sure" is prose far more often than `% s` is a conversion.
    while j < s.len() && "-+#0".contains(s[j]) {
        j += 1;
    }
    while j < s.len() && (s[j].is_ascii_digit() || s[j] == '*') {
        j += 1;
    }
    if s.get(j) == Some(&'.') {
        j += 1;
        while j < s.len() && (s[j].is_ascii_digit() || s[j] == '*') {
            j += 1;
        }
    }
    while j < s.len()
        && "hlLqjzt".contains(s[j])
        && s.get(j + 1).is_some_and(|c| c.is_ascii_alphabetic())
    {
        j += 1;
    }
    match s.get(j) {
        Some(c) if "diouxXeEfFgGaAcspnqvwTtb".contains(*c) => Some(j + 1),
        _ => None,
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::parse::parse_as;

    fn lits(p: &[Piece]) -> Vec<String> {
        p.iter()
            .map(|x| match x {
                Piece::Lit(s) => s.clone(),
                Piece::Hole => "_".to_string(),
            })
            .collect()
    }

    #[test]
    fn format_strings_become_pieces() {
        assert_eq!(
            lits(&literal_pieces("\"epoch {} too high for {}\"", Lang::Java)),
            ["epoch ", "_", " too high for ", "_"]
        );
        assert_eq!(
            lits(&literal_pieces("\"term %d (%-5s) at %v%%\"", Lang::Go)),
            ["term ", "_", " (", "_", ") at ", "_", "%"]
        );
        assert_eq!(
            lits(&literal_pieces(
                "f'lease {client!r} until {t:.1f}'",
                Lang::Python
            )),
            ["lease ", "_", " until ", "_"]
        );
        assert_eq!(
            lits(&literal_pieces("\"%(name)s left\"", Lang::Python)),
            ["_", " left"]
        );
        assert_eq!(
            lits(&literal_pieces(
                "s\"stale epoch ${rec.epoch} from $peer\"",
                Lang::Scala
            )),
            ["stale epoch ", "_", " from ", "_"]
        );
        assert_eq!(
            lits(&literal_pieces("r#\"raw {} \\n\"#", Lang::Rust)),
            ["raw ", "_", " \\n"]
        );
        assert_eq!(
            lits(&literal_pieces("\"a\\\"b\\nc\"", Lang::Java)),
            ["a\"b c"]
        );
        assert_eq!(lits(&literal_pieces("`x %s`", Lang::Go)), ["x ", "_"]);
        assert_eq!(
            lits(&literal_pieces("\"100% sure\"", Lang::Go)),
            ["100% sure"]
        );
    }

    #[test]
    fn java_logging_throw_and_concatenation() {
        let src = "class A {\n void f(long id) {\n  LOG.warn(\"Session 0x{} expired after {} ms\", id, t);\n  throw new IllegalStateException(\"no leader for \" + id + \" in epoch \" + e);\n  String s = String.format(\"plain %s call\", x);\n  go(id);\n }\n}\n";
        let m = parse_as(Lang::Java, src);
        let sites: Vec<_> = m
            .sites
            .iter()
            .map(|s| (s.line, s.kind, lits(&s.pieces)))
            .collect();
        assert_eq!(
            sites,
            [
                (
                    3,
                    SiteKind::Log,
                    vec![
                        "Session 0x".into(),
                        "_".into(),
                        " expired after ".into(),
                        "_".into(),
                        " ms".into()
                    ]
                ),
                (
                    4,
                    SiteKind::Error,
                    vec!["no leader for ".into(), "_".into(), " in epoch ".into()]
                ),
                (
                    5,
                    SiteKind::Other,
                    vec!["plain ".into(), "_".into(), " call".into()]
                ),
            ]
        );
        let calls: Vec<_> = m.calls.iter().map(|c| (c.name.as_str(), c.line)).collect();
        assert!(calls.contains(&("go", 6)));
        assert!(calls.contains(&("warn", 3)));
        assert!(calls.contains(&("IllegalStateException", 4)));
    }

    #[test]
    fn go_python_rust_scala_cpp_sites() {
        let go = parse_as(
            Lang::Go,
            "package a\nfunc f() error {\n\tr.logger.Warningf(\"%x rejected vote from %x at term %d\", a, b, c)\n\treturn fmt.Errorf(\"stale term %d\", t)\n}\n",
        );
        assert_eq!(go.sites.len(), 2);
        assert_eq!(go.sites[0].kind, SiteKind::Log);
        assert_eq!(go.sites[1].kind, SiteKind::Error);
        let py = parse_as(
            Lang::Python,
            "def f():\n    log.warning(\"lock held by %s, refusing %s\", a, b)\n    raise ValueError(\"bad ttl {}\".format(t))\n",
        );
        assert_eq!(
            lits(&py.sites[0].pieces),
            ["lock held by ", "_", ", refusing "]
        );
        assert_eq!(py.sites[1].kind, SiteKind::Error);
        assert_eq!(lits(&py.sites[1].pieces), ["bad ttl "]);
        let rs = parse_as(
            Lang::Rust,
            "fn f() {\n    warn!(\"peer {} lagging by {} entries\", p, n);\n    panic!(\"unexpected state {:?}\", s);\n}\n",
        );
        assert_eq!(rs.sites.len(), 2);
        assert_eq!(rs.sites[0].kind, SiteKind::Log);
        assert_eq!(rs.sites[1].kind, SiteKind::Error);
        let sc = parse_as(
            Lang::Scala,
            "object A {\n  def f() = {\n    error(s\"Log segment $seg is corrupt\")\n  }\n}\n",
        );
        assert_eq!(sc.sites.len(), 1);
        assert_eq!(
            lits(&sc.sites[0].pieces),
            ["Log segment ", "_", " is corrupt"]
        );
        let cc = parse_as(
            Lang::Cpp,
            "void f(int k) {\n  LOG(WARNING) << \"slow put of \" << k << \" bytes\";\n}\n",
        );
        assert_eq!(cc.sites.len(), 1);
        assert_eq!(lits(&cc.sites[0].pieces), ["slow put of ", "_", " bytes"]);
    }

    #[test]
    fn last_segment_of_callees() {
        assert_eq!(last_segment("this.leases.expired"), "expired");
        assert_eq!(last_segment("new java.util.HashMap<>"), "HashMap");
        assert_eq!(last_segment("crate::raft::step"), "step");
        assert_eq!(last_segment("f"), "f");
        assert_eq!(last_segment(""), "");
    }
}

//! Which names a piece of code reads and which it writes, found lexically (no parse needed):
//! a token stream (comments skipped, string literals as one token, names interpolated into
//! them kept as reads), paths such as `self.leases[k].expiry`, and whether each path is
//! assigned, updated (`+=`, `++`), mutated through a collection method (`put`, `remove`,
//! Go's `delete(m, k)`), set through a setter (`s.setState(..)`), or only read. The offline
//! agent follows data flow with it: from what a failure reads to the code that wrote it.

use super::lang::Lang;
use super::lexer;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    Ident,
    /// An identifier interpolated into a string literal (`s"$x"`, `f"{x}"`, `"{x}"`): a read.
    Interp,
    Op,
    Str,
    Num,
}

/// One token: its kind, its bytes in the text and its 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tok {
    pub kind: TokKind,
    pub start: usize,
    pub end: usize,
    pub line: u32,
}

/// Operators of more than one character, longest first.
const OPS: &[&str] = &[
    "<<=", ">>=", "...", "==", "!=", "<=", ">=", "=>", "->", "::", ":=", "+=", "-=", "*=", "/=",
    "%=", "|=", "&=", "^=", "++", "--", "&&", "||", "<-", "?.", "<<", ">>",
];

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The tokens of `text[from..to]` (clamped to the text), whose first byte is on line
/// `first_line`.
pub fn tokenize(text: &str, lang: Lang, from: usize, to: usize, first_line: u32) -> Vec<Tok> {
    let b = text.as_bytes();
    let to = to.min(b.len());
    let hash = lang.hash_comments();
    let mut out = Vec::new();
    let mut i = from.min(to);
    let mut line = first_line;
    while i < to {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'#' if hash => i = lexer::skip_to_eol(b, i).min(to),
            b'/' if !hash && b.get(i + 1) == Some(&b'/') => i = lexer::skip_to_eol(b, i).min(to),
            b'/' if !hash && b.get(i + 1) == Some(&b'*') => {
                let end = lexer::find(b, i + 2, b"*/")
                    .map(|e| e + 2)
                    .unwrap_or(b.len())
                    .min(to);
                line += lexer::count_newlines(&b[i..end]);
                i = end;
            }
            b'\'' if lang != Lang::Python => {
                let next = lexer::skip_char_literal(b, i).min(to);
                if next > i + 1 {
                    out.push(Tok {
                        kind: TokKind::Str,
                        start: i,
                        end: next,
                        line,
                    });
                }
                i = next;
            }
            b'"' | b'\'' | b'`' if c != b'`' || lang == Lang::Go => {
                let raw = lang == Lang::Rust && lexer::is_raw_prefix(b, i);
                let (s, e, next) = lexer::string_span(b, i, lang, raw);
                let next = next.min(to);
                out.push(Tok {
                    kind: TokKind::Str,
                    start: i,
                    end: next,
                    line,
                });
                interpolated(text, lang, s, e.min(to), line, &mut out);
                line += lexer::count_newlines(&b[i..next]);
                i = next.max(i + 1);
            }
            _ if is_ident_start(c) => {
                let s = i;
                while i < to && is_ident_byte(b[i]) {
                    i += 1;
                }
                out.push(Tok {
                    kind: TokKind::Ident,
                    start: s,
                    end: i,
                    line,
                });
            }
            _ if c.is_ascii_digit() => {
                let s = i;
                while i < to && (is_ident_byte(b[i]) || b[i] == b'.' && b.get(i + 1) != Some(&b'.'))
                {
                    i += 1;
                }
                out.push(Tok {
                    kind: TokKind::Num,
                    start: s,
                    end: i,
                    line,
                });
            }
            _ if c.is_ascii() => {
                let len = OPS
                    .iter()
                    .find(|op| b[i..to].starts_with(op.as_bytes()))
                    .map_or(1, |op| op.len());
                out.push(Tok {
                    kind: TokKind::Op,
                    start: i,
                    end: i + len,
                    line,
                });
                i += len;
            }
            _ => i += 1,
        }
    }
    out
}

/// Names interpolated into the literal `text[s..e]`: `$x`, `${a.b}` (Scala), `{x}`, `{x:?}`,
/// `{a.b!r}` (Python f-strings, Rust format strings). `{}` and `%s` hold no name.
fn interpolated(text: &str, lang: Lang, s: usize, e: usize, line: u32, out: &mut Vec<Tok>) {
    let b = text.as_bytes();
    let mut i = s;
    let mut line = line;
    while i < e {
        match b[i] {
            b'\n' => line += 1,
            b'$' if b.get(i + 1).is_some_and(|&c| is_ident_start(c)) => {
                let st = i + 1;
                let mut j = st;
                while j < e && is_ident_byte(b[j]) {
                    j += 1;
                }
                out.push(Tok {
                    kind: TokKind::Interp,
                    start: st,
                    end: j,
                    line,
                });
                i = j;
                continue;
            }
            b'{' => {
                let st = i + 1 + usize::from(b.get(i + 1) == Some(&b'$'));
                let close = b[st.min(e)..e]
                    .iter()
                    .position(|&c| c == b'}' || c == b'\n');
                if let Some(k) = close.filter(|_| b.get(st).is_some_and(|&c| is_ident_start(c))) {
                    let end = st + k;
                    for t in tokenize(text, lang, st, end, line) {
                        if t.kind == TokKind::Ident {
                            out.push(Tok {
                                kind: TokKind::Interp,
                                ..t
                            });
                        }
                    }
                    i = end + 1;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// How a path is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// `x = …`, `let x = …`, `x := …`, `a, b = …`.
    Assign,
    /// `x += …`, `x++`, `--x`, `&mut x` handed to a call.
    Update,
    /// `m.put(..)`, `v.push(..)`, `s.add(..)`.
    Insert,
    /// `m.remove(..)`, `delete(m, k)`, `q.poll()`, `v.clear()`, `o.take()`.
    Remove,
    /// A setter: `s.setState(..)` writes `s` and its field `state`.
    Set,
}

/// A path the code mentions (`self.leases[k].expiry` is self, leases, expiry), where, and
/// whether it is written. A path that ends in a call (`a.b.run(..)`) is the receiver `a.b`
/// with `call` = `run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ref {
    pub names: Vec<String>,
    pub call: Option<String>,
    pub write: Option<Write>,
    /// The field a setter writes (`setState` -> `state`).
    pub field: Option<String>,
    pub line: u32,
    pub start: usize,
    /// Interpolated into a string literal.
    pub interp: bool,
}

impl Ref {
    /// Whether this reference writes the variable `name`: the written path starts with it
    /// (`plan = …`, `plan.left.end = …`, `plan.put(..)`; `self.plan = …` too).
    pub fn writes_variable(&self, name: &str) -> bool {
        self.write.is_some() && self.subject() == Some(name)
    }

    /// Whether this reference writes the field `name` of some object: the written path ends
    /// with it (`self.x = …`, `bi.x[i] = …`, `s.x.remove(..)`), or a setter sets it.
    pub fn writes_field(&self, name: &str) -> bool {
        self.write.is_some()
            && (self.names.last().is_some_and(|n| n == name)
                || self.field.as_deref() == Some(name)
                || self.subject() == Some(name))
    }

    /// The name this reference stands for: the first after `self`/`this`, else the root.
    pub fn subject(&self) -> Option<&str> {
        match self.names.first() {
            Some(r) if is_self(r) => self.names.get(1).map(|s| s.as_str()),
            Some(r) => Some(r.as_str()),
            None => None,
        }
    }

    /// Whether the path is a member of `self`/`this` (state of the object).
    pub fn is_member(&self) -> bool {
        self.names.first().is_some_and(|r| is_self(r)) && self.names.len() > 1
    }
}

pub fn is_self(name: &str) -> bool {
    matches!(name, "self" | "this" | "Self")
}

/// Collection methods that insert into their receiver.
const INSERTS: &[&str] = &[
    "put",
    "putall",
    "putifabsent",
    "insert",
    "add",
    "addall",
    "push",
    "pushback",
    "push_back",
    "push_front",
    "append",
    "appendleft",
    "extend",
    "update",
    "offer",
    "emplace",
    "emplace_back",
    "setdefault",
    "incrementandget",
    "getandincrement",
    "decrementandget",
    "getandadd",
    "addandget",
    "getandset",
    "compareandset",
    "compareandswap",
    "set",
    "store",
    "swap",
    "merge",
    "compute",
    "computeifabsent",
    "computeifpresent",
    "replace",
    "enqueue",
    "resize",
];

/// Collection methods that remove from their receiver.
const REMOVES: &[&str] = &[
    "remove",
    "removeall",
    "removeif",
    "delete",
    "clear",
    "pop",
    "pop_back",
    "pop_front",
    "popleft",
    "popitem",
    "poll",
    "take",
    "drain",
    "retain",
    "retainall",
    "truncate",
    "discard",
    "erase",
    "dequeue",
    "split_off",
];

fn mutator(method: &str) -> Option<Write> {
    let lower = method.to_ascii_lowercase();
    if REMOVES.contains(&lower.as_str()) {
        Some(Write::Remove)
    } else if INSERTS.contains(&lower.as_str()) {
        Some(Write::Insert)
    } else {
        None
    }
}

/// `setFooBar` -> `fooBar` (a Java-style setter's field).
fn setter_field(method: &str) -> Option<String> {
    let rest = method.strip_prefix("set")?;
    let mut chars = rest.chars();
    let first = chars.next()?;
    if !first.is_ascii_uppercase() {
        return None;
    }
    Some(first.to_ascii_lowercase().to_string() + chars.as_str())
}

const ASSIGN_OPS: &[&str] = &["=", ":="];
const UPDATE_OPS: &[&str] = &["+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>="];
/// Words that are never the root of a path (keywords and literals of the languages).
const KEYWORDS: &[&str] = &[
    "if",
    "else",
    "elif",
    "for",
    "while",
    "do",
    "loop",
    "switch",
    "case",
    "default",
    "match",
    "catch",
    "except",
    "try",
    "finally",
    "return",
    "throw",
    "throws",
    "raise",
    "new",
    "synchronized",
    "and",
    "or",
    "not",
    "in",
    "is",
    "lambda",
    "def",
    "fn",
    "func",
    "let",
    "val",
    "var",
    "mut",
    "const",
    "static",
    "final",
    "public",
    "private",
    "protected",
    "class",
    "struct",
    "impl",
    "pub",
    "use",
    "import",
    "package",
    "go",
    "defer",
    "select",
    "yield",
    "await",
    "async",
    "assert",
    "true",
    "false",
    "null",
    "nil",
    "None",
    "True",
    "False",
    "with",
    "as",
    "from",
    "pass",
    "break",
    "continue",
    "goto",
    "range",
    "type",
    "interface",
    "enum",
    "extends",
    "implements",
    "override",
    "where",
    "unsafe",
    "ref",
    "move",
    "dyn",
    "crate",
    "instanceof",
    "typeof",
    "sizeof",
    "void",
    "volatile",
    "transient",
    "abstract",
    "trait",
    "object",
    "sealed",
    "implicit",
    "lazy",
    "then",
    "chan",
    "map",
    "auto",
    "virtual",
    "template",
    "typename",
    "namespace",
    "using",
    "operator",
    "inline",
    "explicit",
    "global",
    "nonlocal",
    "del",
    "print",
    "exec",
];
const DECL_WORDS: &[&str] = &["let", "val", "var", "mut", "const", "lazy"];
const SEPARATORS: &[&str] = &[".", "->", "?.", "::"];

/// The paths of a token stream and how each is used.
pub fn refs(text: &str, toks: &[Tok]) -> Vec<Ref> {
    let reader = PathReader::new(text, toks);
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        if t.kind == TokKind::Interp {
            let (interpolated, last) = reader.interpolated_path(k);
            out.push(interpolated);
            k = last + 1;
            continue;
        }
        // A method called on what a call returned (`a.lock().unwrap().address_of(k)`): a call
        // with no path of its own.
        if reader.is_call_on_a_result(k) {
            out.push(Ref {
                names: Vec::new(),
                call: Some(reader.text_of(t).to_string()),
                write: None,
                field: None,
                line: t.line,
                start: t.start,
                interp: false,
            });
            k += 1;
            continue;
        }
        if !reader.is_root(k) {
            k += 1;
            continue;
        }
        // The path: identifiers joined by separators, with index groups skipped.
        let (segs, j) = reader.path_at(k);
        if let Some(path) = reader.path_ref(k, &segs, j) {
            out.push(path);
        }
        k = segs.last().map_or(k + 1, |&l| l + 1);
    }
    out
}

/// A token stream read for its paths: the text its tokens point into, and for each token the
/// innermost bracket open before it.
struct PathReader<'a> {
    text: &'a str,
    toks: &'a [Tok],
    inside: Vec<Option<&'a str>>,
}

impl<'a> PathReader<'a> {
    fn new(text: &'a str, toks: &'a [Tok]) -> PathReader<'a> {
        PathReader {
            text,
            toks,
            inside: innermost_brackets(text, toks),
        }
    }

    /// The text of a token.
    fn text_of(&self, t: &Tok) -> &'a str {
        self.text.get(t.start..t.end).unwrap_or("")
    }

    /// The operator at `k`, or `""` when there is none.
    fn op(&self, k: usize) -> &'a str {
        self.toks
            .get(k)
            .filter(|t| t.kind == TokKind::Op)
            .map_or("", |t| self.text_of(t))
    }

    fn statement_level(&self, k: usize) -> bool {
        matches!(self.inside.get(k), Some(None | Some("{")))
    }

    /// The read of the interpolated name at `k`, and the index of its last token.
    fn interpolated_path(&self, k: usize) -> (Ref, usize) {
        let toks = self.toks;
        let t = &toks[k];
        let mut k = k;
        let mut names = vec![self.text_of(t).to_string()];
        // `{a.b}` arrives as a, b: keep the path together.
        while toks.get(k + 1).is_some_and(|n| {
            n.kind == TokKind::Interp && self.text.get(t.end..n.start).is_some_and(|g| g == ".")
        }) {
            k += 1;
            names.push(self.text_of(&toks[k]).to_string());
        }
        let interpolated = Ref {
            names,
            call: None,
            write: None,
            field: None,
            line: t.line,
            start: t.start,
            interp: true,
        };
        (interpolated, k)
    }

    /// Whether the identifier at `k` is a method called on what a call returned.
    fn is_call_on_a_result(&self, k: usize) -> bool {
        self.toks[k].kind == TokKind::Ident
            && SEPARATORS.contains(&self.op(k.wrapping_sub(1)))
            && matches!(self.op(k.wrapping_sub(2)), ")" | "]" | "?")
            && self.op(k + 1) == "("
    }

    /// Whether the token at `k` starts a path.
    fn is_root(&self, k: usize) -> bool {
        let toks = self.toks;
        let t = &toks[k];
        t.kind == TokKind::Ident
            && !SEPARATORS.contains(&self.op(k.wrapping_sub(1)))
            && !KEYWORDS.contains(&self.text_of(t))
            // A string prefix (`f"…"`, `s"…"`, `r"…"`) is not a name.
            && !toks
                .get(k + 1)
                .is_some_and(|n| n.kind == TokKind::Str && n.start == t.end)
    }

    /// The path rooted at `root`: the indexes of its identifiers, and the index of the token
    /// after it.
    fn path_at(&self, root: usize) -> (Vec<usize>, usize) {
        let op = |k: usize| self.op(k);
        let mut segs = vec![root];
        let mut j = root + 1;
        loop {
            if SEPARATORS.contains(&op(j))
                && self
                    .toks
                    .get(j + 1)
                    .is_some_and(|n| n.kind == TokKind::Ident)
            {
                segs.push(j + 1);
                j += 2;
            } else if op(j) == "[" && segs.len() < 16 {
                match close_of(self.toks, self.text, j) {
                    Some(c) if SEPARATORS.contains(&op(c + 1)) || next_is_write(&op, c + 1) => {
                        j = c + 1
                    }
                    _ => break,
                }
            } else {
                break;
            }
        }
        (segs, j)
    }

    /// How the path of the identifiers at `segs` (from `root`), followed by the token at `j`,
    /// is used; `None` when it names nothing.
    fn path_ref(&self, root: usize, segs: &[usize], j: usize) -> Option<Ref> {
        let t = &self.toks[root];
        let mut names: Vec<String> = segs
            .iter()
            .map(|&i| self.text_of(&self.toks[i]).to_string())
            .collect();
        let mut call = None;
        let mut write = None;
        let mut field = None;
        if self.op(j) == "(" || self.op(j) == "!" && self.op(j + 1) == "(" {
            // A call: the last segment is the function, the rest its receiver.
            let method = names.pop().unwrap_or_default();
            if !names.is_empty() {
                if let Some(w) = mutator(&method) {
                    write = Some(w);
                } else if let Some(f) = setter_field(&method) {
                    write = Some(Write::Set);
                    field = Some(f);
                }
            }
            call = Some(method);
        } else {
            write = self.assignment_of(root, j);
        }
        if write.is_none() && call.is_none() && root >= 2 {
            write = self.written_as_argument(root);
        }
        if !names.is_empty() || call.is_some() {
            Some(Ref {
                names,
                call,
                write,
                field,
                line: t.line,
                start: t.start,
                interp: false,
            })
        } else {
            None
        }
    }

    /// How the path from `root`, followed by the token at `j`, is assigned or updated, if it
    /// is.
    fn assignment_of(&self, root: usize, j: usize) -> Option<Write> {
        let toks = self.toks;
        let op = |k: usize| self.op(k);
        let assigned = ASSIGN_OPS.contains(&op(j)) && self.statement_level(j)
            // `let n: u64 = …`
            || op(j) == ":"
                && root > 0
                && DECL_WORDS.contains(&self.text_of(&toks[root - 1]))
                && toks[root - 1].kind == TokKind::Ident
            // `a, b = …`
            || op(j) == "," && self.statement_level(j) && tuple_assigned(toks, &op, j);
        // `x += 1`, `x++`, `++x` (not `a ++ b`).
        let updated = UPDATE_OPS.contains(&op(j))
            || op(j) == "++"
            || op(j) == "--"
            || matches!(op(root.wrapping_sub(1)), "++" | "--")
                && !toks
                    .get(root.wrapping_sub(2))
                    .is_some_and(|p| matches!(p.kind, TokKind::Ident | TokKind::Num));
        if assigned {
            Some(Write::Assign)
        } else if updated {
            Some(Write::Update)
        } else {
            None
        }
    }

    /// `&mut x` handed over (Rust), and Go's `delete(m, k)`: the argument is written. `root`
    /// is at least 2.
    fn written_as_argument(&self, root: usize) -> Option<Write> {
        let before = &self.toks[root - 1];
        if self.text_of(before) == "mut" && self.op(root - 2) == "&" {
            Some(Write::Update)
        } else if self.op(root - 1) == "(" && self.text_of(&self.toks[root - 2]) == "delete" {
            Some(Write::Remove)
        } else {
            None
        }
    }
}

/// For each token, the innermost open bracket before it: an `=` directly inside `(` or `[` is
/// a named argument or a default, not an assignment.
fn innermost_brackets<'a>(text: &'a str, toks: &[Tok]) -> Vec<Option<&'a str>> {
    let mut open: Vec<&str> = Vec::new();
    let mut inside: Vec<Option<&str>> = Vec::with_capacity(toks.len());
    for t in toks {
        inside.push(open.last().copied());
        if t.kind == TokKind::Op {
            match text.get(t.start..t.end).unwrap_or("") {
                x @ ("(" | "[" | "{") => open.push(x),
                ")" | "]" | "}" => {
                    open.pop();
                }
                _ => {}
            }
        }
    }
    inside
}

fn next_is_write<'a>(op: &impl Fn(usize) -> &'a str, k: usize) -> bool {
    let o = op(k);
    ASSIGN_OPS.contains(&o) || UPDATE_OPS.contains(&o) || o == "++" || o == "--"
}

/// The index of the `]` that closes the `[` at `k`.
fn close_of(toks: &[Tok], text: &str, k: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate().skip(k).take(64) {
        if t.kind != TokKind::Op {
            continue;
        }
        match text.get(t.start..t.end) {
            Some("[" | "(" | "{") => depth += 1,
            Some("]" | ")" | "}") => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether `a, b.c, d = …` follows from the `,` at `k`: paths and commas up to an assignment.
fn tuple_assigned<'a>(toks: &[Tok], op: &impl Fn(usize) -> &'a str, k: usize) -> bool {
    for j in k..k + 24 {
        let o = op(j);
        if ASSIGN_OPS.contains(&o) {
            return true;
        }
        let ok =
            matches!(o, "," | "." | "->") || toks.get(j).is_some_and(|t| t.kind == TokKind::Ident);
        // A tuple assignment is on one line.
        if !ok || toks.get(j).is_some_and(|t| t.line != toks[k].line) {
            return false;
        }
    }
    false
}

/// Operators and words that make a value a computation rather than a copy.
const COMPUTING_OPS: &[&str] = &[
    "+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&&", "||", "?", "!", "<<", ">>",
    "&", "|", "^",
];
const COMPUTING_WORDS: &[&str] = &["if", "match", "max", "min", "else", "switch", "case"];

/// Whether the statement `text[from..to]` computes the value it stores or returns
/// (arithmetic, a comparison, a condition: what follows its assignment, or all of it when it
/// has none), as opposed to copying a value or a call's result (`x = y`, `x = f(a)`,
/// `return this.id`), or building a message (`"0x" + id`). A faulty value is made by a
/// computation; copies only carry it. Mutations (`n++`, `m.remove(k)`) are told apart by
/// their `Write` kind, not here.
pub fn computes(text: &str, lang: Lang, from: usize, to: usize) -> bool {
    let toks = tokenize(text, lang, from, to, 1);
    let s = |t: &Tok| text.get(t.start..t.end).unwrap_or("");
    let at = toks
        .iter()
        .position(|t| t.kind == TokKind::Op && ASSIGN_OPS.contains(&s(t)))
        .map_or(0, |a| a + 1);
    let is_str = |k: usize| toks.get(k).is_some_and(|t| t.kind == TokKind::Str);
    let binary = |k: usize| {
        k > at
            && (matches!(
                toks[k - 1].kind,
                TokKind::Ident | TokKind::Num | TokKind::Str
            ) || matches!(s(&toks[k - 1]), ")" | "]"))
    };
    let after_ident =
        |k: usize| k > 0 && toks[k - 1].kind == TokKind::Ident && toks[k - 1].end == toks[k].start;
    toks.iter().enumerate().skip(at).any(|(k, t)| match t.kind {
        // `"x" + y` builds a message.
        TokKind::Op if s(t) == "+" => !is_str(k + 1) && !is_str(k.wrapping_sub(1)),
        // Rust's `?` passes an error on and `name!` is a macro: neither computes.
        TokKind::Op if s(t) == "?" => lang != Lang::Rust,
        TokKind::Op if s(t) == "!" => !after_ident(k),
        // `&x`, `*p`, `-1` as prefixes take a reference, dereference, negate a literal.
        TokKind::Op if matches!(s(t), "&" | "*" | "-") => binary(k),
        TokKind::Op => COMPUTING_OPS.contains(&s(t)),
        TokKind::Ident => COMPUTING_WORDS.contains(&s(t)),
        _ => false,
    })
}

/// The references of `text[from..to]` (starting on line `first_line`).
pub fn analyze(text: &str, lang: Lang, from: usize, to: usize, first_line: u32) -> Vec<Ref> {
    let toks = tokenize(text, lang, from, to, first_line);
    refs(text, &toks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(text: &str, lang: Lang) -> Vec<String> {
        analyze(text, lang, 0, text.len(), 1)
            .into_iter()
            .map(|r| {
                let mut s = r.names.join(".");
                if let Some(c) = &r.call {
                    s = format!("{s}:{c}()");
                }
                if let Some(w) = r.write {
                    s = format!("{s} {w:?}");
                }
                if let Some(f) = &r.field {
                    s = format!("{s} {f}");
                }
                if r.interp {
                    s = format!("{s} interp");
                }
                s
            })
            .collect()
    }

    #[test]
    fn assignments_updates_and_mutations_are_writes() {
        let java = "Session s = sessionsById.get(id);\nsessionsById.remove(s.getId());\ncount += 2; ++acks; s.setState(CLOSING);\nif (a == b) { x = f(y = 1); }\n";
        assert_eq!(
            show(java, Lang::Java),
            [
                "Session",
                "s Assign",
                "sessionsById:get()",
                "id",
                "sessionsById:remove() Remove",
                "s:getId()",
                "count Update",
                "acks Update",
                "s:setState() Set state",
                "CLOSING",
                "a",
                "b",
                "x Assign",
                ":f()",
                "y",
            ]
        );
    }

    #[test]
    fn declarations_tuples_indexes_and_go_delete() {
        let py = "lease_id, token = self._lease_id, self._token\nself._valid_until = grant.expires_at - self._margin\n";
        let got = show(py, Lang::Python);
        assert_eq!(
            got,
            [
                "lease_id Assign",
                "token Assign",
                "self._lease_id",
                "self._token",
                "self._valid_until Assign",
                "grant.expires_at",
                "self._margin"
            ]
        );
        let go = "v, ok := m[k]\nbi.storages[last] = nil\ndelete(m.items, k)\n";
        assert_eq!(
            show(go, Lang::Go),
            [
                "v Assign",
                "ok Assign",
                "m",
                "k",
                "bi.storages Assign",
                "last",
                ":delete()",
                "m.items Remove",
                "k"
            ]
        );
        let rs = "let mut n: u64 = 0;\nself.ring.write().unwrap().remove_node(id).ok();\nstd::mem::take(&mut self.events)\n";
        let got = show(rs, Lang::Rust);
        assert_eq!(got[0], "n Assign");
        assert!(got.contains(&":remove_node()".to_string()), "{got:?}");
        assert!(got.contains(&"self.events Update".to_string()), "{got:?}");
        assert!(got.contains(&"self.ring:write()".to_string()), "{got:?}");
    }

    #[test]
    fn interpolated_names_are_reads_and_literals_and_comments_are_skipped() {
        let scala = "logger.info(s\"Truncated $removed entries, end ${log.end}\") // x = 1\n";
        assert_eq!(
            show(scala, Lang::Scala),
            ["logger:info()", "removed interp", "log.end interp"]
        );
        let py = "log.warning(f\"left {left:.1f}\", x)  # y = 2\n";
        assert_eq!(
            show(py, Lang::Python),
            ["log:warning()", "left interp", "x"]
        );
        let r = analyze("a.b.c = 1", Lang::Java, 0, 9, 1);
        assert!(r[0].writes_variable("a") && !r[0].writes_variable("c"));
        assert!(r[0].writes_field("c") && !r[0].writes_field("b"));
        assert_eq!(r[0].subject(), Some("a"));
        let r = analyze("this.leases.put(k, v)", Lang::Java, 0, 21, 3);
        assert!(r[0].writes_variable("leases") && r[0].is_member() && r[0].line == 3);
        assert_eq!(r[0].subject(), Some("leases"));
        let c = |t: &str| computes(t, Lang::Python, 0, t.len());
        assert!(c("self._valid_until = grant.expires_at - self._margin"));
        assert!(c("removed = 0 if off >= end else n") && c("return max(0, a - b)"));
        assert!(!c("lease_id = self._lease_id") && !c("v = self._catalog.placement()"));
        assert!(!c("return \"0x\" + hex(self.id)") && !c("return self.timeout"));
        let r = |t: &str| computes(t, Lang::Rust, 0, t.len());
        assert!(!r("let owner = ring.owner(&k)?.clone();") && !r("let v = vec![a, b];"));
        assert!(r("let ok = !done;") && r("let n = a.len() - 1;"));
        let r = analyze("s.setState(CLOSED)", Lang::Java, 0, 18, 1);
        assert!(r[0].writes_field("state") && r[0].writes_variable("s"));
    }
}

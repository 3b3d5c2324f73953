//! Data flow from a symptom back to the code that produced it. A failure shows where a value
//! is used (the crash statement, the log line that prints it); the fault is usually where the
//! value was written: the statements before it that compute what it reads, the function it
//! got the value from, and, for state shared across calls (fields, maps, globals), the
//! statements elsewhere that assign, update, insert into or remove from that state.
//! Everything is lexical (`code::access`), one function or file at a time, with a small hop
//! budget, so it stays cheap on large repositories.

use super::logmatch::is_test_path;
use super::related;
use crate::code::access::{self, Ref, Write};
use crate::code::tokens::is_word_byte;
use crate::code::{BlockKind, FileModel, Lang, RepoIndex};
use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Where a failure shows: a statement that logs, raises or crashes.
#[derive(Debug, Clone)]
pub struct Seed {
    pub file: usize,
    pub start: u32,
    pub end: u32,
    pub score: f64,
    /// What the seed is, for rationales ("the log at a/B.java:12").
    pub what: String,
    /// A call at the seed not to follow (the logging call itself).
    pub skip_call: Option<String>,
    /// The failure is about something missing (null, not found, out of range).
    pub absence: bool,
}

/// Words of a failure that say a value was missing: null, not found, out of range…
const ABSENCE: &[&str] = &[
    "null",
    "nil pointer",
    "none",
    "not found",
    "not a member",
    "no such",
    "missing",
    "out of range",
    "out_of_range",
    "index out of",
    "keyerror",
    "nosuchelement",
    "does not exist",
    "unknown",
    "not exist",
    "no entry",
    "not present",
];

/// Whether a failure's text says something was missing (who removed it is then the question).
pub fn speaks_of_absence(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ABSENCE.iter().any(|w| lower.contains(w))
}

/// How a block was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Computes a value the seed (or a later step) reads, in the same function.
    Local,
    /// The value returned by a function the seed's values come from.
    Callee,
    /// Writes shared state (a field, a map, a global) the seed's values are read from.
    State,
}

/// A block the data flow leads to.
#[derive(Debug, Clone)]
pub struct Found {
    pub file: usize,
    pub start: u32,
    pub end: u32,
    pub score: f64,
    pub via: Via,
    pub reason: String,
}

/// The share of a seed's score a writer of a value it reads gets, per kind of step.
const LOCAL_WEIGHT: f64 = 0.7;
const CALLEE_WEIGHT: f64 = 0.7;
const STATE_WEIGHT: f64 = 0.6;
/// Writers of state in another file than the one that reads it count this much.
const OTHER_FILE: f64 = 0.5;
/// Writers inside constructors (initial values) count this much: faults are rarely there.
const CONSTRUCTOR: f64 = 0.3;
/// Statements that only copy a value (`x = y`, `x = f(a)`) count this much as places to name;
/// the flow still goes on through them.
const COPY: f64 = 0.35;
/// Extra weight of a removal when the failure says something was missing.
const ABSENCE_BOOST: f64 = 2.0;
/// A function called inside a log statement's arguments (a formatting helper, mostly) counts
/// this much.
const INLINE_CALL: f64 = 0.5;
/// The share of a seed's score the conditions around it get (an `if`, `switch`, `while` or
/// `case` the statement lies in, inside its function), and how many of those that read a
/// name are followed, innermost first.
const GUARD_WEIGHT: f64 = 0.7;
const MAX_GUARDS: usize = 2;
/// Steps followed from a seed (seed -> local writer -> callee -> its writers / state).
const MAX_HOPS: u8 = 3;
/// At most this many names and calls are followed from one statement.
const MAX_NAMES: usize = 8;
const MAX_CALLS: usize = 4;
/// Function names found in more files than this are too common to resolve.
const MAX_DEFINITION_FILES: usize = 48;
/// State names found in more files than this are looked for in their own file only.
const MAX_STATE_FILES: usize = 24;
/// Writers of one state name beyond this many are not named (the name is too generic).
const MAX_WRITERS: usize = 12;
/// A function at most this long is named whole when the flow goes through it.
const SHORT_FUNCTION: u32 = 5;

/// Names too generic to follow as data.
const GENERIC: &[&str] = &[
    "err",
    "error",
    "errors",
    "exc",
    "ex",
    "self",
    "this",
    "ctx",
    "context",
    "result",
    "results",
    "res",
    "ret",
    "val",
    "value",
    "values",
    "key",
    "keys",
    "args",
    "kwargs",
    "log",
    "logger",
    "LOG",
    "LOGGER",
    "Log",
    "fmt",
    "std",
    "string",
    "str",
    "int",
    "len",
    "size",
    "new",
    "true",
    "false",
    "None",
    "null",
    "nil",
    "msg",
    "message",
    "format",
    "time",
    "now",
    "String",
    "Integer",
    "Long",
    "Math",
    "System",
    "Arrays",
    "Collections",
    "Objects",
    "Optional",
    "unwrap",
    "expect",
    "clone",
    "to_string",
    "iter",
    "into",
    "super",
];

fn followable(name: &str) -> bool {
    name.len() >= 3
        && !GENERIC.contains(&name)
        // CONSTANTS and macros are not state that a fault writes.
        && !(name.len() > 1 && name.bytes().all(|c| c.is_ascii_uppercase() || c == b'_' || c.is_ascii_digit()))
}

/// A function's references, and the names its header declares (parameters, receiver).
struct FnView {
    file: usize,
    def: Option<usize>,
    refs: Vec<Ref>,
    params: HashSet<String>,
}

/// Pending work: names read and calls made at some statement, to be traced back.
struct Item {
    file: usize,
    line: u32,
    names: Vec<(String, bool)>,
    calls: Vec<String>,
    score: f64,
    hop: u8,
    via: String,
    absence: bool,
    /// The calls are made inside a log statement's arguments: formatting helpers, mostly.
    inline: bool,
}

/// State to look for writers of.
struct StateName {
    score: f64,
    absence: bool,
    /// Where it was read (none for names the report gives).
    file: Option<usize>,
    def: Option<usize>,
    via: String,
}

pub struct Tracer<'a> {
    index: &'a RepoIndex,
    max_lines: u32,
    views: HashMap<(usize, Option<usize>), Arc<FnView>>,
    defs: HashMap<String, Vec<(usize, usize)>>,
}

impl<'a> Tracer<'a> {
    pub fn new(index: &'a RepoIndex, max_lines: u32) -> Tracer<'a> {
        Tracer {
            index,
            max_lines,
            views: HashMap::new(),
            defs: HashMap::new(),
        }
    }

    /// The function that holds `line` of `file` (or the block around it at top level).
    fn view(&mut self, file: usize, line: u32) -> Arc<FnView> {
        let m = self.index.model(file);
        let def = m.innermost(line).and_then(|i| m.function_of(i));
        if let Some(v) = self.views.get(&(file, def)) {
            return v.clone();
        }
        let f = &self.index.files[file];
        let (from, to, first, header_end) = match def {
            Some(d) => {
                let b = &m.blocks[d];
                let body = m
                    .children(Some(d))
                    .first()
                    .map_or(b.end_byte, |&c| m.blocks[c].start_byte);
                (b.start_byte, b.end_byte, b.start_line, body)
            }
            None => {
                let (s, e) = line_bytes(&f.text, line);
                (s, e, line, s)
            }
        };
        let toks = access::tokenize(&f.text, f.lang, from, to, first);
        let params = toks
            .iter()
            .filter(|t| t.kind == access::TokKind::Ident && t.end <= header_end)
            .filter_map(|t| f.text.get(t.start..t.end))
            .map(str::to_string)
            .collect();
        let v = Arc::new(FnView {
            file,
            def,
            refs: access::refs(&f.text, &toks),
            params,
        });
        self.views.insert((file, def), v.clone());
        v
    }

    /// Whether lines `start..=end` of `file` compute a value (see `access::computes`).
    fn computes(&self, file: usize, start: u32, end: u32) -> bool {
        let f = &self.index.files[file];
        let (from, _) = line_bytes(&f.text, start);
        let (_, to) = line_bytes(&f.text, end);
        access::computes(&f.text, f.lang, from, to)
    }

    /// Function definitions named `name` outside tests (none when the name is ambiguous).
    fn definitions(&mut self, name: &str) -> Vec<(usize, usize)> {
        if !self.defs.contains_key(name) {
            self.prefetch(&[name.to_string()]);
        }
        self.defs.get(name).cloned().unwrap_or_default()
    }

    /// Looks up the definitions of many names at once: one pass over the repository for all
    /// of them, then only the files that hold them are parsed.
    fn prefetch(&mut self, names: &[String]) {
        let mut todo: Vec<&str> = names
            .iter()
            .map(|n| n.as_str())
            .filter(|n| !self.defs.contains_key(*n))
            .collect();
        todo.sort_unstable();
        todo.dedup();
        let (follow, skip): (Vec<&str>, Vec<&str>) = todo
            .into_iter()
            .partition(|n| n.len() >= 3 && !related::is_common_name(n));
        for n in skip {
            self.defs.insert(n.to_string(), Vec::new());
        }
        if follow.is_empty() {
            return;
        }
        let files = files_with_words(self.index, &follow);
        let mut wanted: Vec<usize> = files
            .iter()
            .filter(|f| f.len() <= MAX_DEFINITION_FILES)
            .flatten()
            .copied()
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        self.index.parse_many(&wanted);
        for (name, fs) in follow.iter().zip(files) {
            let mut d: Vec<(usize, usize)> = Vec::new();
            if fs.len() <= MAX_DEFINITION_FILES {
                for f in fs {
                    if is_test_path(&self.index.files[f].path) {
                        continue;
                    }
                    let m = self.index.model(f);
                    for (i, b) in m.blocks.iter().enumerate() {
                        if related::is_function_named(b, name) {
                            d.push((f, i));
                        }
                    }
                }
            }
            if d.len() > 3 {
                d.clear();
            }
            self.defs.insert(name.to_string(), d);
        }
    }

    /// The first work items: what each seed's statement reads and calls, and what the
    /// conditions around it test.
    fn seed_items(&mut self, seeds: &[Seed]) -> Vec<Item> {
        let mut queue: Vec<Item> = Vec::new();
        for s in seeds {
            let v = self.view(s.file, s.start);
            let m = self.index.model(s.file);
            // The whole statement: a crash inside a closure or a nested call reads what the
            // statement around it computed.
            let (st, en) = whole_statement(&m, s.start, s.end, self.max_lines);
            let (names, calls) = reads_of(&v, st, en, s.skip_call.as_deref());
            queue.push(Item {
                file: s.file,
                line: s.start,
                names,
                calls,
                score: s.score,
                hop: 0,
                via: s.what.clone(),
                absence: s.absence,
                inline: s.skip_call.is_some(),
            });
            // What decided that the statement ran at all: the conditions around it.
            let mut guards = 0;
            for (gs, ge) in guard_headers(&m, st) {
                let (names, _) = reads_of(&v, gs, ge, None);
                if names.is_empty() {
                    continue; // `case CONSTANT:`, `try`, `else`
                }
                if guards == MAX_GUARDS {
                    break;
                }
                guards += 1;
                queue.push(Item {
                    file: s.file,
                    line: gs,
                    names,
                    calls: Vec::new(),
                    score: s.score * GUARD_WEIGHT,
                    hop: 1,
                    via: format!(
                        "the condition at {}:{gs} tests",
                        self.index.files[s.file].path
                    ),
                    absence: s.absence,
                    inline: false,
                });
            }
        }
        queue
    }

    /// Traces every seed; returns the blocks reached, best first.
    pub fn trace(&mut self, seeds: &[Seed]) -> Vec<Found> {
        let mut found: Vec<Found> = Vec::new();
        let mut state: HashMap<String, StateName> = HashMap::new();
        let mut queue = self.seed_items(seeds);
        // Breadth first, strongest first within a hop; bounded work.
        let mut steps = 0;
        let mut hop_seen = None;
        while !queue.is_empty() && steps < 400 {
            queue.sort_by(|a, b| b.hop.cmp(&a.hop).then(a.score.total_cmp(&b.score)));
            let Some(it) = queue.pop() else { break };
            steps += 1;
            if hop_seen != Some(it.hop) {
                // A new round: resolve every call it makes in one pass.
                hop_seen = Some(it.hop);
                let calls: Vec<String> = queue
                    .iter()
                    .chain(std::iter::once(&it))
                    .filter(|q| q.hop == it.hop)
                    .flat_map(|q| q.calls.iter().take(MAX_CALLS).cloned())
                    .collect();
                self.prefetch(&calls);
            }
            let v = self.view(it.file, it.line);
            let m = self.index.model(it.file);
            let lang = self.index.files[it.file].lang;
            for (name, member) in it.names.iter().take(MAX_NAMES) {
                if *member {
                    note_state(&mut state, name, it.score * STATE_WEIGHT, &v, &it);
                }
                let runs = writer_runs(&v, &m, name, *member, it.line, self.max_lines);
                for (k, (s, e, w)) in runs.iter().enumerate() {
                    let score = it.score * LOCAL_WEIGHT / (1.0 + k as f64);
                    let copy = if *w != Write::Assign || self.computes(it.file, *s, *e) {
                        1.0
                    } else {
                        COPY
                    };
                    let reason = format!("{} `{}` that {}", write_verb(*w), name, it.via);
                    found.push(Found {
                        file: it.file,
                        start: *s,
                        end: *e,
                        score: score * copy,
                        via: Via::Local,
                        reason,
                    });
                    if it.hop + 1 < MAX_HOPS {
                        let (names, calls) = reads_of(&v, *s, *e, None);
                        // A copy passes the value on unchanged: the flow loses nothing.
                        let next = if copy < 1.0 {
                            it.score / (1.0 + k as f64)
                        } else {
                            score
                        };
                        queue.push(Item {
                            file: it.file,
                            line: *s,
                            names: names.into_iter().filter(|n| n.0 != *name).collect(),
                            calls,
                            score: next,
                            hop: it.hop + 1,
                            via: format!("computes `{name}`, which {}", it.via),
                            absence: it.absence,
                            inline: false,
                        });
                    }
                }
                if runs.is_empty() && !*member && !v.params.contains(name) && bare_fields(lang) {
                    // Not written here, not a parameter: a field or a global.
                    note_state(&mut state, name, it.score * STATE_WEIGHT * 0.5, &v, &it);
                }
            }
            if it.hop >= MAX_HOPS {
                continue;
            }
            self.follow_calls(&it, &v, &mut found, &mut queue);
        }
        found.extend(self.state_writers(state));
        found.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.file.cmp(&b.file))
                .then(a.start.cmp(&b.start))
        });
        found
    }

    /// The functions a statement calls: their returns are where its values come from; the
    /// flow goes on from what those returns read.
    fn follow_calls(
        &mut self,
        it: &Item,
        v: &FnView,
        found: &mut Vec<Found>,
        queue: &mut Vec<Item>,
    ) {
        for call in it.calls.iter().take(MAX_CALLS) {
            for (file, def) in self.definitions(call) {
                if file == it.file && v.def == Some(def) {
                    continue; // recursion
                }
                let cm = self.index.model(file);
                let d = &cm.blocks[def];
                // A call made right in a log's arguments mostly formats what it prints.
                let inline = if it.inline { INLINE_CALL } else { 1.0 };
                let score = it.score * CALLEE_WEIGHT * inline;
                let via = format!("returns what {} uses", it.via_short());
                let returns = return_statements(&cm, def);
                let (s, e) = if d.lines() <= SHORT_FUNCTION || returns.is_empty() {
                    if d.lines() > self.max_lines {
                        continue;
                    }
                    (d.start_line, d.end_line)
                } else {
                    let r = returns[returns.len() - 1];
                    (cm.blocks[r].start_line, cm.blocks[r].end_line)
                };
                let computes = if returns.is_empty() {
                    self.computes(file, s, e)
                } else {
                    returns.iter().any(|&r| {
                        self.computes(file, cm.blocks[r].start_line, cm.blocks[r].end_line)
                    })
                };
                let copy = if computes { 1.0 } else { COPY };
                found.push(Found {
                    file,
                    start: s,
                    end: e,
                    score: score * copy,
                    via: Via::Callee,
                    reason: format!("`{call}` {via}"),
                });
                if it.hop < MAX_HOPS {
                    let cv = self.view(file, d.start_line.max(s));
                    let mut names = Vec::new();
                    let mut calls = Vec::new();
                    let targets: Vec<(u32, u32)> = if returns.is_empty() {
                        vec![(s, e)]
                    } else {
                        returns
                            .iter()
                            .map(|&r| (cm.blocks[r].start_line, cm.blocks[r].end_line))
                            .collect()
                    };
                    for (rs, re) in &targets {
                        let (n, c) = reads_of(&cv, *rs, *re, None);
                        for x in n {
                            if !names.contains(&x) {
                                names.push(x);
                            }
                        }
                        for x in c {
                            if !calls.contains(&x) && x != *call {
                                calls.push(x);
                            }
                        }
                    }
                    let last = targets.last().map_or(e, |t| t.0);
                    queue.push(Item {
                        file,
                        line: last,
                        names,
                        calls,
                        score: if computes { score } else { it.score * inline },
                        hop: it.hop + 1,
                        via: format!("`{call}` returns for {}", it.via_short()),
                        absence: it.absence,
                        inline: false,
                    });
                }
            }
        }
    }

    /// The statements that write state the report names (`next_idx`, `pendingQueue`):
    /// (name, weight) pairs; a name written in too many places is left out.
    pub fn writers_of_named(&mut self, names: &[(String, f64)]) -> Vec<Found> {
        let state: HashMap<String, StateName> = names
            .iter()
            .filter(|(n, _)| followable(n))
            .map(|(n, w)| {
                (
                    n.clone(),
                    StateName {
                        score: *w,
                        absence: false,
                        file: None,
                        def: None,
                        via: "the report names".to_string(),
                    },
                )
            })
            .collect();
        self.state_writers(state)
    }

    /// The statements that write each state name, outside the function it was read in.
    fn state_writers(&mut self, state: HashMap<String, StateName>) -> Vec<Found> {
        let mut names: Vec<(&String, &StateName)> = state.iter().collect();
        names.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(b.0)));
        names.truncate(24);
        if names.is_empty() {
            return Vec::new();
        }
        let pats: Vec<&str> = names.iter().map(|n| n.0.as_str()).collect();
        let files = files_with_words(self.index, &pats);
        let mut out = Vec::new();
        let mut wanted: Vec<usize> = Vec::new();
        let mut per_name: Vec<Vec<usize>> = Vec::new();
        for (k, (_, info)) in names.iter().enumerate() {
            let mut fs = files[k].clone();
            if fs.len() > MAX_STATE_FILES {
                // Too common a word across the repository: only its own file.
                fs.retain(|&f| Some(f) == info.file);
            }
            fs.retain(|&f| !is_test_path(&self.index.files[f].path));
            wanted.extend(&fs);
            per_name.push(fs);
        }
        wanted.sort_unstable();
        wanted.dedup();
        self.index.parse_many(&wanted);
        let refs: HashMap<usize, Vec<Ref>> = wanted
            .par_iter()
            .map(|&f| {
                let sf = &self.index.files[f];
                (f, access::analyze(&sf.text, sf.lang, 0, sf.text.len(), 1))
            })
            .collect();
        for (k, (name, info)) in names.iter().enumerate() {
            let mut writers: Vec<(usize, u32, u32, Write, bool)> = Vec::new();
            for &f in &per_name[k] {
                let m = self.index.model(f);
                for r in &refs[&f] {
                    if !r.writes_field(name) {
                        continue;
                    }
                    let Some(i) = m.innermost(r.line) else {
                        continue;
                    };
                    let def = m.function_of(i);
                    if Some(f) == info.file && def == info.def && def.is_some() {
                        continue;
                    }
                    let ctor = def.is_some_and(|d| is_constructor(&m, d));
                    let (s, e) = statement_at(&m, r.line, self.max_lines);
                    if !writers.iter().any(|w| w.0 == f && w.1 <= e && s <= w.2) {
                        let w = r.write.unwrap_or(Write::Assign);
                        let copy = w == Write::Assign && !self.computes(f, s, e);
                        writers.push((f, s, e, r.write.unwrap_or(Write::Assign), ctor || copy));
                    }
                }
            }
            if writers.is_empty() || writers.len() > MAX_WRITERS {
                continue;
            }
            let spread = (writers.len() as f64).sqrt();
            // Constructors set initial values and copies carry values: weaker places.
            for (f, s, e, w, weak) in writers {
                let mut score = info.score / spread;
                if info.file.is_some_and(|o| o != f) {
                    score *= OTHER_FILE;
                }
                if weak {
                    score *= CONSTRUCTOR;
                }
                // Something was missing where it was read: removals explain that.
                if info.absence && w == Write::Remove {
                    score *= ABSENCE_BOOST;
                }
                out.push(Found {
                    file: f,
                    start: s,
                    end: e,
                    score,
                    via: Via::State,
                    reason: format!("{} `{}`, which {}", write_verb(w), name, info.via),
                });
            }
        }
        out
    }
}

impl Item {
    fn via_short(&self) -> String {
        self.via
            .split(", which")
            .next()
            .unwrap_or(&self.via)
            .to_string()
    }
}

fn note_state(
    state: &mut HashMap<String, StateName>,
    name: &str,
    score: f64,
    v: &FnView,
    it: &Item,
) {
    let via = &it.via;
    let e = state.entry(name.to_string()).or_insert(StateName {
        score: 0.0,
        absence: false,
        file: Some(v.file),
        def: v.def,
        via: format!("is read where {via}"),
    });
    e.absence |= it.absence;
    if score > e.score {
        e.score = score;
        e.file = Some(v.file);
        e.def = v.def;
        e.via = format!("is read where {via}");
    }
}

fn write_verb(w: Write) -> &'static str {
    match w {
        Write::Assign => "assigns",
        Write::Update => "updates",
        Write::Insert => "adds to",
        Write::Remove => "removes from",
        Write::Set => "sets",
    }
}

/// Languages whose methods commonly read fields by their bare name (`count`, not `this.count`).
fn bare_fields(lang: Lang) -> bool {
    matches!(lang, Lang::Java | Lang::Scala | Lang::Cpp | Lang::Go)
}

/// The names read and the calls made on lines `start..=end` of a function: (name, is a
/// member of `self`/`this` or of a parameter), and called function names.
fn reads_of(
    v: &FnView,
    start: u32,
    end: u32,
    skip_call: Option<&str>,
) -> (Vec<(String, bool)>, Vec<String>) {
    let mut names: Vec<(String, bool)> = Vec::new();
    let mut calls: Vec<String> = Vec::new();
    for r in v.refs.iter().filter(|r| r.line >= start && r.line <= end) {
        if let Some(c) = &r.call {
            if skip_call == Some(c.as_str()) {
                continue;
            }
            if followable(c) && !related::is_common_name(c) && !calls.contains(c) {
                calls.push(c.clone());
            }
        }
        if r.write == Some(Write::Assign) && r.call.is_none() && r.names.len() == 1 {
            continue; // the target of an assignment is not read
        }
        // `recv.field` of a parameter or receiver (Go's `bi.storages`) is state as much as
        // `self.field`.
        let member = r.is_member()
            || r.names.len() > 1 && r.names.first().is_some_and(|n| v.params.contains(n));
        let name = if member && !r.is_member() {
            r.names.get(1).map(|s| s.as_str())
        } else {
            r.subject()
        };
        if let Some(n) = name {
            if followable(n) && !names.iter().any(|x| x.0 == n) {
                names.push((n.to_string(), member));
            }
        }
    }
    (names, calls)
}

/// The header lines of the compound statements and arms around the statement at `line`,
/// inside its function, innermost first: `if (x)`, `switch (state)`, `while (…)`, a `case`
/// label (at most three lines each).
fn guard_headers(m: &FileModel, line: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut cur = m
        .innermost(line)
        .and_then(|i| m.blocks[i].parent)
        .map(|p| p as usize);
    while let Some(c) = cur {
        let b = &m.blocks[c];
        if b.kind == BlockKind::Definition {
            break;
        }
        if matches!(b.kind, BlockKind::Compound | BlockKind::Arm) {
            let first_child = m.children(Some(c)).first().map(|&k| m.blocks[k].start_line);
            let end = match first_child {
                Some(l) if l > b.start_line => l - 1,
                _ => b.start_line,
            };
            let header = (b.start_line, end.min(b.start_line + 2));
            // An arm and the group inside it (Java's switch block) share a header.
            if !out.contains(&header) {
                out.push(header);
            }
        }
        cur = b.parent.map(|p| p as usize);
    }
    out
}

/// The runs of statements before line `before` of the function that write `name`, nearest
/// first: a write, with the writes of the same name just before it (sibling statements), up
/// to `max` lines. At most two runs.
fn writer_runs(
    v: &FnView,
    m: &FileModel,
    name: &str,
    member: bool,
    before: u32,
    max: u32,
) -> Vec<(u32, u32, Write)> {
    let mut writes: Vec<(u32, u32, Write)> = v
        .refs
        .iter()
        .filter(|r| {
            r.line < before
                && if member {
                    r.writes_field(name)
                } else {
                    r.writes_variable(name)
                }
        })
        .map(|r| {
            let (s, e) = statement_at(m, r.line, max);
            (s, e, r.write.unwrap_or(Write::Assign))
        })
        .filter(|w| w.1 < before)
        .collect();
    writes.sort_by_key(|w| std::cmp::Reverse(w.0));
    writes.dedup_by(|a, b| a.0 == b.0);
    let mut runs: Vec<(u32, u32, Write)> = Vec::new();
    for w in writes {
        if let Some(last) = runs.last_mut() {
            // Adjacent to the current run (at most one blank line between) and still small.
            if w.1 + 2 >= last.0 && last.1 + 1 - w.0 <= max {
                last.0 = last.0.min(w.0);
                continue;
            }
        }
        if runs.len() == 2 {
            break;
        }
        runs.push(w);
    }
    runs
}

/// The statement on `line` to name: the innermost statement if it has at most `max` lines,
/// else the line itself.
pub fn statement_at(m: &FileModel, line: u32, max: u32) -> (u32, u32) {
    match m.innermost(line).map(|i| &m.blocks[i]) {
        Some(b)
            if matches!(b.kind, BlockKind::Statement | BlockKind::Compound) && b.lines() <= max =>
        {
            (b.start_line, b.end_line)
        }
        _ => (line, line),
    }
}

/// The outermost statement (within its function, at most `max` lines) around lines
/// `start..=end`; the lines themselves when no statement holds them.
fn whole_statement(m: &FileModel, start: u32, end: u32, max: u32) -> (u32, u32) {
    let Some(mut cur) = m.covering(start, end) else {
        return (start, end);
    };
    let mut best = (start, end);
    loop {
        let b = &m.blocks[cur];
        if !matches!(b.kind, BlockKind::Statement) || b.lines() > max {
            break;
        }
        best = (b.start_line.min(start), b.end_line.max(end));
        match b.parent {
            Some(p) => cur = p as usize,
            None => break,
        }
    }
    best
}

/// The return statements of function `def` (not of functions nested in it); for languages
/// where the last expression is the value, the last statement.
fn return_statements(m: &FileModel, def: usize) -> Vec<usize> {
    let d = &m.blocks[def];
    let mut out = Vec::new();
    for (i, b) in m.blocks.iter().enumerate().skip(def + 1) {
        if b.start_byte >= d.end_byte {
            break;
        }
        if b.node.starts_with("return") && m.function_of(i) == Some(def) {
            out.push(i);
        }
    }
    if out.is_empty() {
        if let Some(&last) = m.children(Some(def)).last() {
            if matches!(
                m.blocks[last].kind,
                BlockKind::Statement | BlockKind::Compound
            ) {
                out.push(last);
            }
        }
    }
    out
}

fn is_constructor(m: &FileModel, def: usize) -> bool {
    let b = &m.blocks[def];
    if b.def_kind == Some("constructor") {
        return true;
    }
    let name = b.name.as_deref().unwrap_or("");
    if matches!(name, "__init__" | "new" | "init" | "constructor" | "setUp") {
        return true;
    }
    // C++/Scala constructors are named after their class.
    let class = b
        .parent
        .and_then(|p| m.definition_of(p as usize))
        .and_then(|c| m.blocks[c].name.as_deref());
    class.is_some_and(|c| c == name || name.ends_with(&format!("::{c}")))
        || name
            .rsplit_once("::")
            .is_some_and(|(a, b)| a.rsplit("::").next() == Some(b))
}

/// The byte range of line `line` (1-based) of `text`.
fn line_bytes(text: &str, line: u32) -> (usize, usize) {
    let mut start = 0;
    for (k, l) in text.split_inclusive('\n').enumerate() {
        if k + 1 == line as usize {
            return (start, start + l.trim_end_matches('\n').len());
        }
        start += l.len();
    }
    (text.len(), text.len())
}

/// For each pattern, the files (with a grammar) where it occurs as a whole word; one pass.
pub fn files_with_words(index: &RepoIndex, pats: &[&str]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); pats.len()];
    // Leftmost-longest, not overlapping: where a longer name matches, a shorter one at the
    // same place could not be a whole word anyway; and it is several times faster.
    let Ok(ac) = AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        .build(pats)
    else {
        return out;
    };
    let hits: Vec<(usize, Vec<usize>)> = index
        .files
        .par_iter()
        .enumerate()
        .filter(|(_, f)| f.lang.grammar().is_some())
        .filter_map(|(i, f)| {
            let b = f.text.as_bytes();
            let mut seen: Vec<usize> = Vec::new();
            for m in ac.find_iter(b) {
                let p = m.pattern().as_usize();
                let before = m.start() == 0 || !is_word_byte(b[m.start() - 1]);
                let after = m.end() >= b.len() || !is_word_byte(b[m.end()]);
                if before && after && !seen.contains(&p) {
                    seen.push(p);
                }
            }
            (!seen.is_empty()).then_some((i, seen))
        })
        .collect();
    for (f, ps) in hits {
        for p in ps {
            out[p].push(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn trace(files: Vec<(&str, &str)>, seed_file: &str, line: u32, skip: &str) -> Vec<Found> {
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            files
                .into_iter()
                .map(|(p, t)| (p.to_string(), t.to_string()))
                .collect(),
        );
        let file = idx.file_id(seed_file).unwrap();
        let mut t = Tracer::new(&idx, 12);
        t.trace(&[Seed {
            file,
            start: line,
            end: line,
            score: 1.0,
            what: "the seed".into(),
            skip_call: Some(skip.into()),
            absence: speaks_of_absence("NullPointerException: session is null"),
        }])
    }

    fn at(found: &[Found], start: u32, end: u32) -> Option<&Found> {
        found.iter().find(|f| f.start == start && f.end == end)
    }

    #[test]
    fn a_printed_value_leads_to_the_statement_that_computed_it() {
        let src = "class A {\n  void f(int n) {\n    int acks = 0;\n    for (R r : rs) {\n      if (r.late()) { continue; }\n      acks++;\n    }\n    audit(n);\n    LOG.info(\"committed acks={}\", acks);\n  }\n}\n";
        let found = trace(vec![("A.java", src)], "A.java", 9, "info");
        let w = at(&found, 6, 6).expect("the update of acks");
        assert_eq!(w.via, Via::Local);
        assert!(w.reason.contains("updates `acks`"), "{}", w.reason);
        // The initial assignment is a second, weaker run.
        let init = at(&found, 3, 3).unwrap();
        assert!(init.score < w.score);
        // `audit(n)` neither writes nor is printed.
        assert!(at(&found, 8, 8).is_none());
    }

    #[test]
    fn the_condition_around_a_throw_leads_to_the_writers_of_what_it_tests() {
        let src = "class H {\n  private byte state = 0;\n  void read(Msg m) {\n    switch (state) {\n      case 1:\n        throw new IllegalStateException(\"message before handshake completion\");\n      default:\n        process(m);\n    }\n  }\n  void respond(Ctx ctx) {\n    ctx.writeAndFlush(resp);\n    state = 2;\n  }\n}\n";
        let found = trace(vec![("H.java", src)], "H.java", 6, "none");
        let w = found
            .iter()
            .find(|f| f.start <= 13 && 13 <= f.end)
            .unwrap_or_else(|| {
                panic!(
                    "the writer of `state` in another method: {:?}",
                    found
                        .iter()
                        .map(|f| (f.start, f.end, &f.reason))
                        .collect::<Vec<_>>()
                )
            });
        assert_eq!(w.via, Via::State);
        assert!(
            w.reason.contains("`state`") && w.reason.contains("condition at H.java:"),
            "{}",
            w.reason
        );
    }

    #[test]
    fn a_value_from_a_call_leads_into_the_callee_and_to_the_state_it_reads() {
        let src = "class Elector:\n    def remaining(self):\n        return self._valid_until - self._clock.wall()\n\n    def _extend(self, grant):\n        self._valid_until = grant.expires_at - self._margin\n\n    def renew(self):\n        left = self.remaining()\n        log.warning(\"lease valid for another %.1fs\", left)\n";
        let found = trace(vec![("e.py", src)], "e.py", 10, "warning");
        assert_eq!(at(&found, 9, 9).unwrap().via, Via::Local);
        let callee = at(&found, 2, 3).expect("the short callee, whole");
        assert_eq!(callee.via, Via::Callee);
        let writer = at(&found, 6, 6).expect("the writer of the state it reads");
        assert_eq!(writer.via, Via::State);
        assert!(
            writer.reason.contains("`_valid_until`"),
            "{}",
            writer.reason
        );
    }

    #[test]
    fn state_read_at_a_crash_leads_to_its_writers_in_other_functions() {
        let tracker = "class Tracker {\n  Map<Long, S> sessionsById;\n  Tracker() {\n    sessionsById = new HashMap<>();\n  }\n  S getSession(long id) {\n    return sessionsById.get(id);\n  }\n  void expire(S s) {\n    s.close();\n    sessionsById.remove(s.id());\n  }\n}\n";
        let store = "class Store {\n  void renew(long id) {\n    S session = tracker.getSession(id);\n    long t = session.timeout();\n  }\n}\n";
        let found = trace(
            vec![("Tracker.java", tracker), ("Store.java", store)],
            "Store.java",
            4,
            "",
        );
        let remove = at(&found, 11, 11).expect("the removal");
        assert_eq!(remove.via, Via::State);
        assert!(remove.reason.starts_with("removes from `sessionsById`"));
        // The constructor's initial assignment weighs less.
        let ctor = at(&found, 4, 4).unwrap();
        assert!(ctor.score < remove.score);
    }

    #[test]
    fn go_fields_of_the_receiver_are_state() {
        let src = "package n\n\nfunc (bi *BlockInfo) storageAt(i int) *D { return bi.storages[i] }\n\nfunc (bi *BlockInfo) removeStorage(i int) {\n\tlast := len(bi.storages) - 1\n\tbi.storages = bi.storages[:last]\n}\n";
        let found = trace(vec![("b.go", src)], "b.go", 3, "");
        let w = at(&found, 7, 7).expect("the shrinking assignment");
        assert_eq!(w.via, Via::State);
    }

    #[test]
    fn a_missing_value_puts_removals_first() {
        // The crash says something was missing: the removal outranks the insertion, which
        // otherwise weighs the same.
        let m = "class Members {\n  void add(N n) {\n    members.put(n.id, n);\n  }\n  void drop(N n) {\n    members.remove(n.id);\n  }\n  A addressOf(Id id) {\n    return members.get(id).addr;\n  }\n}\n";
        let r = "class Router {\n  A route(Id owner) {\n    A addr = ms.addressOf(owner);\n    return addr.port();\n  }\n}\n";
        let found = trace(vec![("M.java", m), ("R.java", r)], "R.java", 4, "");
        let state = |found: &[Found], line: u32| {
            found
                .iter()
                .find(|f| f.via == Via::State && f.start == line)
                .map(|f| f.score)
                .unwrap()
        };
        let (remove, put) = (state(&found, 6), state(&found, 3));
        assert!(remove > 1.5 * put, "{remove} {put}");
        // Without a missing value, both writers weigh the same.
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![("M.java".into(), m.into()), ("R.java".into(), r.into())],
        );
        let file = idx.file_id("R.java").unwrap();
        let found = Tracer::new(&idx, 12).trace(&[Seed {
            file,
            start: 4,
            end: 4,
            score: 1.0,
            what: "the seed".into(),
            skip_call: None,
            absence: false,
        }]);
        assert!((state(&found, 6) - state(&found, 3)).abs() < 1e-9);
    }

    #[test]
    fn helpers_called_inside_a_log_call_weigh_less_than_values_computed_before_it() {
        let src = "class S:\n    def remaining(self):\n        return self.until - now()\n\n    def label(self):\n        return \"0x\" + hex(self.id) + \":\" + str(self.n - 1)\n\n    def tick(self):\n        left = self.remaining()\n        log.info(\"session %s valid for %.1fs\", self.label(), left)\n";
        let found = trace(vec![("s.py", src)], "s.py", 10, "info");
        let computed = at(&found, 2, 3).expect("remaining()");
        let inline = at(&found, 5, 6).expect("label()");
        assert!(computed.score > inline.score);
    }

    #[test]
    fn state_the_report_names_leads_to_its_writers() {
        let src = "struct Progress { next_idx: u64, matched: u64 }\nimpl Progress {\n    fn maybe_decr_to(&mut self, rejected: u64) -> bool {\n        self.next_idx = rejected.min(self.matched + 1);\n        true\n    }\n    fn reset(&mut self) {\n        self.next_idx = self.matched + 1;\n    }\n    fn next(&self) -> u64 {\n        self.next_idx\n    }\n}\n";
        let idx = RepoIndex::from_texts(Path::new("/ws"), vec![("p.rs".into(), src.into())]);
        let found = Tracer::new(&idx, 12).writers_of_named(&[("next_idx".into(), 1.0)]);
        let lines: Vec<(u32, u32)> = found.iter().map(|f| (f.start, f.end)).collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.contains(&(4, 4)) && lines.contains(&(8, 8)));
        assert!(
            found[0].reason.contains("which the report names"),
            "{}",
            found[0].reason
        );
    }

    #[test]
    fn words_are_found_whole() {
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                ("a.go".into(), "x := acks + 1\n".into()),
                ("b.go".into(), "y := backs\n".into()),
            ],
        );
        assert_eq!(
            files_with_words(&idx, &["acks", "y"]),
            vec![vec![0], vec![1]]
        );
    }
}

//! Matching the evidence's log lines to the logging and error statements of the repository.
//! A lexical pass over every string literal finds the files whose messages share words with
//! the evidence; only those are parsed; their call sites' patterns are matched against the
//! templates, each match weighted by the constant tokens it matched (rare tokens count more),
//! by the line's severity and by how rare the matched lines are in the evidence.

use super::constants::{self, ConstantUse, MessageConstant};
use super::evidence::Templates;
use super::patterns::{accept, Pattern};
use crate::code::sites::literal_pieces;
use crate::code::{RepoIndex, SiteKind};
use rayon::prelude::*;
use std::collections::HashMap;

/// At most this many files are parsed for their call sites.
const MAX_FILES: usize = 400;
/// The idf sum at which a match counts as half sure.
const MATCH_SATURATION: f64 = 8.0;
/// Extra weight of a line stamped around a time the report mentions.
const TIME_BOOST: f64 = 1.0;
/// Extra weight of a line leading up to a failure (or sharing its ids).
const FAILURE_BOOST: f64 = 1.5;
/// Extra weight of a line that holds the report's words (values included), at the cap.
const REPORT_WORDS_BOOST: f64 = 1.0;
const REPORT_WORDS_CAP: usize = 4;
/// The least rarity a message leading up to a failure is given.
const NEAR_FAILURE_RARITY: f64 = 0.7;

/// A call site whose message was found in the evidence.
#[derive(Debug, Clone)]
pub struct SiteHit {
    pub file: usize,
    pub line: u32,
    pub end_line: u32,
    pub kind: SiteKind,
    pub callee: String,
    pub score: f64,
    /// The template that matched it best, and how many of its constant tokens matched.
    pub template: usize,
    pub matched: usize,
    pub total: usize,
    /// Evidence lines it matched in all.
    pub lines: usize,
}

#[derive(Debug, Default)]
pub struct LogSearch {
    pub literals: usize,
    pub candidate_literals: usize,
    /// Declarations of message constants whose literal matched, and the lines using them.
    pub constants: Vec<MessageConstant>,
    pub constant_uses: Vec<ConstantUse>,
    pub files_parsed: Vec<usize>,
    pub sites_tried: usize,
    pub hits: Vec<SiteHit>,
}

/// The templates a pattern could be accepted against: any accepted template holds at least
/// one of the pattern's k rarest tokens, k = tokens that may be missing + 1 (pigeonhole).
fn candidate_templates(pattern: &Pattern, inverted: &HashMap<&str, Vec<u32>>) -> Vec<u32> {
    let total = pattern.constant_tokens();
    let mut toks: Vec<&str> = pattern
        .fragments
        .iter()
        .flatten()
        .map(|s| s.as_str())
        .collect();
    toks.sort_unstable();
    toks.dedup();
    toks.sort_by_key(|t| inverted.get(t).map_or(0, |v| v.len()));
    let need = (total * 6).div_ceil(10).max(2);
    let k = total + 1 - need.min(total);
    let mut cands: Vec<u32> = Vec::new();
    for t in toks.iter().take(k) {
        if let Some(v) = inverted.get(t) {
            cands.extend_from_slice(v);
        }
    }
    cands.sort_unstable();
    cands.dedup();
    cands
}

/// Whether a path looks like test code (tests log and assert the same messages as the code
/// under test, but are rarely where a bug lives).
pub fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or("");
    lower.split('/').any(|c| {
        matches!(
            c,
            "test"
                | "tests"
                | "testing"
                | "testutil"
                | "testutils"
                | "it"
                | "benchmark"
                | "benchmarks"
                | "jmh-benchmarks"
        )
    }) || name.ends_with("_test.go")
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || name.ends_with("test.java")
        || name.ends_with("tests.java")
        || name.ends_with("test.scala")
        || name.ends_with("suite.scala")
        || name.ends_with("_test.cc")
        || name.ends_with("_test.cpp")
        || name.ends_with("_tests.rs")
}

pub fn search(index: &RepoIndex, templates: &Templates) -> LogSearch {
    let mut out = LogSearch::default();
    if templates.templates.is_empty() {
        return out;
    }
    // Every evidence token, numbered; literal counts are kept per number.
    let mut vocab: HashMap<&str, u32> = HashMap::new();
    for t in &templates.templates {
        for tok in &t.tokens {
            let n = vocab.len() as u32;
            vocab.entry(tok.as_str()).or_insert(n);
        }
    }

    let inverted = templates.inverted();

    // 1. Every literal of every file, matched on its own against the templates (a lexical
    //    stand-in for the statement it belongs to): files with a literal that matches are
    //    parsed. Along the way, how common each evidence word is among the literals.
    let scans = scan_literals(index, templates, &vocab, &inverted);
    let mut df_by_id: Vec<u32> = vec![0; vocab.len()];
    let mut files: Vec<(usize, usize)> = Vec::new();
    out.constants = message_constants(index, &scans);
    for (i, s) in scans {
        out.literals += s.literals;
        out.candidate_literals += s.candidates;
        for (k, v) in s.df {
            df_by_id[k as usize] += v;
        }
        if s.candidates > 0 {
            files.push((i, s.best));
        }
    }
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    files.truncate(MAX_FILES);
    let mut ids: Vec<usize> = files.iter().map(|f| f.0).collect();
    out.constant_uses = constants::uses(index, &out.constants);
    for u in &out.constant_uses {
        if !ids.contains(&u.file) {
            ids.push(u.file);
        }
    }
    index.parse_many(&ids);
    out.files_parsed = ids.clone();

    let n_lits = out.literals.max(1) as f64;
    let idf = |t: &str| -> f64 {
        let d = vocab.get(t).map_or(0, |&v| df_by_id[v as usize]) as f64;
        (1.0 + n_lits / (1.0 + d)).ln()
    };

    // 2. Match each parsed call site's pattern against the templates that could hold it.
    let mut matches = match_sites(index, templates, &ids, &inverted, &idf, &mut out);
    matches.extend(match_constants(index, templates, &out, &inverted, &idf));
    out.hits = credit_sites(index, templates, &matches, &out.constant_uses);
    out
}

/// The declarations among the literals that matched: the names of message constants, the
/// best matched first, at most `constants::MAX_CONSTANTS`, each name once.
fn message_constants(index: &RepoIndex, scans: &[(usize, FileScan)]) -> Vec<MessageConstant> {
    let mut found: Vec<(usize, MessageConstant)> = Vec::new();
    for (fid, scan) in scans.iter().filter(|(_, s)| !s.accepted.is_empty()) {
        let lines: Vec<&str> = index.files[*fid].text.lines().collect();
        for (lit_line, matched, literal) in &scan.accepted {
            let line = (*lit_line as usize)
                .checked_sub(1)
                .and_then(|i| lines.get(i).copied())
                .unwrap_or("");
            if let Some(name) = constants::declared_constant(line) {
                found.push((
                    *matched,
                    MessageConstant {
                        file: *fid,
                        line: *lit_line,
                        name,
                        literal: literal.clone(),
                    },
                ));
            }
        }
    }
    found.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.file.cmp(&b.1.file))
            .then(a.1.line.cmp(&b.1.line))
    });
    let mut out: Vec<MessageConstant> = Vec::new();
    for (_, c) in found {
        if out.len() < constants::MAX_CONSTANTS && !out.iter().any(|o| o.name == c.name) {
            out.push(c);
        }
    }
    out
}

/// How sure a match is: rare constant words make it surer, saturating (a long message is no
/// more relevant than a short one, only as certain).
fn match_weight(matched: &[&str], total: usize, idf: &dyn Fn(&str) -> f64) -> f64 {
    let evidence: f64 = matched.iter().map(|t| idf(t)).sum();
    evidence / (evidence + MATCH_SATURATION) * matched.len() as f64 / total as f64
}

/// Each use of a message constant, matched as if the constant's message were written there.
fn match_constants(
    index: &RepoIndex,
    templates: &Templates,
    out: &LogSearch,
    inverted: &HashMap<&str, Vec<u32>>,
    idf: &dyn Fn(&str) -> f64,
) -> Vec<Match> {
    let mut matches = Vec::new();
    for (ci, c) in out.constants.iter().enumerate() {
        let pattern = literal_pattern(&c.literal, index.files[c.file].lang);
        let total = pattern.constant_tokens();
        for ti in candidate_templates(&pattern, inverted) {
            let m = pattern.matched(&templates.templates[ti as usize].tokens);
            if !accept(m.len(), total) {
                continue;
            }
            let weight = match_weight(&m, total, idf);
            for (ui, _) in out
                .constant_uses
                .iter()
                .enumerate()
                .filter(|(_, u)| u.constant == ci)
            {
                matches.push(Match {
                    site: SiteRef::Use(ui),
                    template: ti as usize,
                    matched: m.len(),
                    total,
                    weight,
                });
            }
        }
    }
    matches
}

struct FileScan {
    literals: usize,
    candidates: usize,
    best: usize,
    df: Vec<(u32, u32)>,
    /// The literals that matched a template: line, constant tokens matched, text.
    accepted: Vec<(u32, usize, String)>,
}

/// A literal's pattern. The lexer keeps no prefix: a Scala literal is read as interpolated
/// (`s"…$x"`) so that its `$x` are values, as they are in the call site's own pattern.
fn literal_pattern(text: &str, lang: crate::code::Lang) -> Pattern {
    let prefix = if lang == crate::code::Lang::Scala {
        "s"
    } else {
        ""
    };
    Pattern::from_pieces(&literal_pieces(&format!("{prefix}\"{text}\""), lang))
}

/// Phase 1 of `search`, per file: its literals, those that match a template, the best match
/// and the document frequency of the evidence words among its literals.
fn scan_literals(
    index: &RepoIndex,
    templates: &Templates,
    vocab: &HashMap<&str, u32>,
    inverted: &HashMap<&str, Vec<u32>>,
) -> Vec<(usize, FileScan)> {
    index
        .files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            let mut s = FileScan {
                literals: f.literals.len(),
                candidates: 0,
                best: 0,
                df: Vec::new(),
                accepted: Vec::new(),
            };
            let mut local: HashMap<u32, u32> = HashMap::new();
            for lit in &f.literals {
                let pattern = literal_pattern(&lit.text, f.lang);
                let mut uniq: Vec<&str> = pattern
                    .fragments
                    .iter()
                    .flatten()
                    .map(|t| t.as_str())
                    .collect();
                uniq.sort_unstable();
                uniq.dedup();
                let mut hits = 0;
                for t in &uniq {
                    if let Some(&v) = vocab.get(t) {
                        hits += 1;
                        *local.entry(v).or_insert(0) += 1;
                    }
                }
                let total = pattern.constant_tokens();
                if hits < 2 || total < 2 {
                    continue;
                }
                let best = candidate_templates(&pattern, inverted)
                    .into_iter()
                    .map(|t| {
                        pattern
                            .matched(&templates.templates[t as usize].tokens)
                            .len()
                    })
                    .filter(|&m| accept(m, total))
                    .max();
                if let Some(m) = best {
                    s.candidates += 1;
                    s.best = s.best.max(m);
                    s.accepted.push((lit.line, m, lit.text.clone()));
                }
            }
            s.df = local.into_iter().collect();
            (i, s)
        })
        .collect()
}

/// What matched: a call site of a parsed file (file, site), or a use of a message constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum SiteRef {
    Call(usize, usize),
    Use(usize),
}

struct Match {
    site: SiteRef,
    template: usize,
    matched: usize,
    total: usize,
    weight: f64,
}

/// Phase 2 of `search`: each parsed call site's pattern against the templates that could hold it.
fn match_sites(
    index: &RepoIndex,
    templates: &Templates,
    ids: &[usize],
    inverted: &HashMap<&str, Vec<u32>>,
    idf: &dyn Fn(&str) -> f64,
    out: &mut LogSearch,
) -> Vec<Match> {
    let mut matches: Vec<Match> = Vec::new();
    for &fid in ids {
        let model = index.model(fid);
        for (si, site) in model.sites.iter().enumerate() {
            out.sites_tried += 1;
            let pattern = Pattern::from_pieces(&site.pieces);
            let total = pattern.constant_tokens();
            if total < 2 {
                continue;
            }
            let cands = candidate_templates(&pattern, inverted);
            for ti in cands {
                let tpl = &templates.templates[ti as usize];
                let m = pattern.matched(&tpl.tokens);
                if !accept(m.len(), total) {
                    continue;
                }
                let weight = match_weight(&m, total, idf);
                matches.push(Match {
                    site: SiteRef::Call(fid, si),
                    template: ti as usize,
                    matched: m.len(),
                    total,
                    weight,
                });
            }
        }
    }

    matches
}

/// Phase 3 of `search`: the credit of each call site, best first.
fn credit_sites(
    index: &RepoIndex,
    templates: &Templates,
    matches: &[Match],
    uses: &[ConstantUse],
) -> Vec<SiteHit> {
    // 3. A line credits only the sites that explain it best (ties share the credit).
    let mut best: HashMap<usize, f64> = HashMap::new();
    for m in matches {
        let b = best.entry(m.template).or_insert(0.0);
        *b = b.max(m.weight);
    }
    let mut ties: HashMap<usize, usize> = HashMap::new();
    for m in matches {
        if m.weight >= 0.9 * best[&m.template] {
            *ties.entry(m.template).or_insert(0) += 1;
        }
    }
    let n_lines = templates.total_lines.max(2) as f64;
    let mut per_site: HashMap<SiteRef, SiteHit> = HashMap::new();
    for m in matches {
        if m.weight < 0.9 * best[&m.template] {
            continue;
        }
        let tpl = &templates.templates[m.template];
        let source_weight = if tpl.from_report { 0.8 } else { 1.0 };
        // Lines around the time the report names, and lines leading up to the first failures,
        // are where the story of the incident is told.
        let focus = 1.0
            + TIME_BOOST * f64::from(u8::from(tpl.near_time))
            + FAILURE_BOOST * f64::from(u8::from(tpl.near_failure));
        let about = 1.0
            + REPORT_WORDS_BOOST * tpl.report_words.min(REPORT_WORDS_CAP) as f64
                / REPORT_WORDS_CAP as f64;
        let credit = m.weight * tpl.level.weight() * source_weight * focus * about
            / ties[&m.template] as f64;
        let e = per_site.entry(m.site).or_insert_with(|| {
            let (file, line, end_line, kind, callee) = match m.site {
                SiteRef::Call(f, si) => {
                    let site = &index.model(f).sites[si];
                    (f, site.line, site.end_line, site.kind, site.callee.clone())
                }
                SiteRef::Use(ui) => {
                    let u = &uses[ui];
                    (u.file, u.line, u.line, u.kind, u.callee.clone())
                }
            };
            SiteHit {
                file,
                line,
                end_line,
                kind,
                callee,
                score: 0.0,
                template: m.template,
                matched: m.matched,
                total: m.total,
                lines: 0,
            }
        });
        e.lines += tpl.count;
        if credit > e.score {
            e.score = credit;
            e.template = m.template;
            e.matched = m.matched;
            e.total = m.total;
        }
    }
    let mut hits: Vec<SiteHit> = per_site
        .into_values()
        .map(|mut h| {
            // Rare messages say more than ones repeated all through the logs.
            let mut rarity = (1.0 + n_lines / h.lines.max(1) as f64).ln() / (1.0 + n_lines).ln();
            // An occurrence tied to the failure tells its story however often the same
            // message shows elsewhere.
            if templates.templates[h.template].near_failure {
                rarity = rarity.max(NEAR_FAILURE_RARITY);
            }
            let kind = match h.kind {
                SiteKind::Log | SiteKind::Error => 1.0,
                SiteKind::Other => 0.6,
            };
            let test = if is_test_path(&index.files[h.file].path) {
                0.3
            } else {
                1.0
            };
            h.score *= rarity * kind * test;
            h
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn index() -> RepoIndex {
        RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                (
                    "src/lease.py".into(),
                    "def grant(c, now):\n    expiry = now + ttl * 1000\n    log.info(\"granted lease to %s until %s\", c, expiry)\n".into(),
                ),
                (
                    "src/server.py".into(),
                    "def acquire(c):\n    if held():\n        log.warning(\"lock held by %s, refusing %s\", o, c)\n        return False\n    log.info(\"lock free\")\n".into(),
                ),
                (
                    "tests/test_server.py".into(),
                    "def test_x():\n    log.warning(\"lock held by %s, refusing %s\", a, b)\n".into(),
                ),
            ],
        )
    }

    #[test]
    fn matches_lines_to_their_statements_and_prefers_rare_ones() {
        let idx = index();
        let mut t = Templates::default();
        t.add_source(
            "server.log",
            "10:00:00 INFO lease granted lease to client-a until 1762077600001.0\n10:00:12 WARNING server lock held by client-a, refusing client-b\n11:00:12 WARNING server lock held by client-a, refusing client-b\n11:00:13 WARNING server lock held by client-a, refusing client-c\n",
            false,
        );
        let s = search(&idx, &t);
        let got: Vec<_> = s
            .hits
            .iter()
            .map(|h| (idx.files[h.file].path.as_str(), h.line))
            .collect();
        assert_eq!(got[0], ("src/lease.py", 3), "{got:?}");
        assert!(got.contains(&("src/server.py", 3)));
        let server = s.hits.iter().find(|h| h.line == 3 && h.file == 1).unwrap();
        assert_eq!((server.matched, server.total, server.lines), (4, 4, 3));
        // The test's copy of the statement ties with the real one and is discounted.
        let test = s.hits.iter().find(|h| h.file == 2).unwrap();
        assert!(test.score < server.score);
    }

    #[test]
    fn a_message_constant_leads_to_where_it_is_raised_not_where_it_is_compared() {
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                (
                    "mvcc/errors.go".into(),
                    "package mvcc\n\nvar (\n\tErrCompacted = errors.New(\"mvcc: required revision has been compacted\")\n)\n".into(),
                ),
                (
                    "mvcc/kvstore.go".into(),
                    "package mvcc\n\nfunc (s *store) hashByRev(rev int64) error {\n\tif rev <= s.compactRev {\n\t\treturn ErrCompacted\n\t}\n\treturn nil\n}\n".into(),
                ),
                (
                    "corrupt.go".into(),
                    "package etcd\n\nfunc check(err error) bool {\n\tif err == mvcc.ErrCompacted {\n\t\treturn false\n\t}\n\treturn true\n}\n".into(),
                ),
            ],
        );
        let mut t = Templates::default();
        t.add_source(
            "follower.log",
            "{\"level\":\"warn\",\"msg\":\"failed to get hashKV\",\"error\":\"mvcc: required revision has been compacted\"}\n",
            false,
        );
        let s = search(&idx, &t);
        assert_eq!(s.constants.len(), 1, "{:?}", s.constants);
        assert_eq!(s.constants[0].name, "ErrCompacted");
        let at = |file: &str, line: u32| {
            s.hits
                .iter()
                .any(|h| idx.files[h.file].path == file && h.line == line)
        };
        assert!(
            at("mvcc/errors.go", 4),
            "the declaration is a match of its own"
        );
        assert!(
            at("mvcc/kvstore.go", 5),
            "the return that raises it is followed"
        );
        assert!(!at("corrupt.go", 4), "a comparison raises nothing");
        let raised = s.hits.iter().find(|h| h.line == 5).unwrap();
        assert!(
            raised.callee.contains("declared at mvcc/errors.go:4"),
            "{}",
            raised.callee
        );
    }

    #[test]
    fn scala_interpolated_messages_are_matched() {
        // The literal pre-pass must read `$removed` as a value too, or the file is never
        // parsed and its statement never matched.
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![(
                "src/ReplicaLog.scala".into(),
                "class ReplicaLog {\n  def truncateTo(o: Long): Int = lock.synchronized {\n    val removed = cut(o)\n    logger.info(s\"Truncated $removed entries from $name; log end offset now $end\")\n    removed\n  }\n}\n".into(),
            )],
        );
        let mut t = Templates::default();
        t.add_source(
            "node-2.log",
            "17:40:00.526 INFO io.tidelog.log.ReplicaLog - Truncated 0 entries from tidelog-0@node-2; log end offset now 389613\n",
            false,
        );
        let s = search(&idx, &t);
        assert_eq!(s.hits.len(), 1, "{:?}", s.hits);
        assert_eq!(s.hits[0].line, 4);
    }

    #[test]
    fn no_matching_line_means_no_hits() {
        let idx = index();
        let mut t = Templates::default();
        t.add_source("x.log", "completely unrelated words here\n", false);
        assert!(search(&idx, &t).hits.is_empty());
        assert!(search(&idx, &Templates::default()).hits.is_empty());
    }

    #[test]
    fn test_paths() {
        assert!(is_test_path("src/test/java/a/FooTest.java"));
        assert!(is_test_path("raft/raft_test.go"));
        assert!(is_test_path("tests/test_x.py"));
        assert!(!is_test_path("src/main/java/a/Tester.java"));
        assert!(!is_test_path("raft/raft.go"));
    }
}

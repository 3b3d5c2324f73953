//! BM25 from the report's words to the code: first over whole files (every file of the
//! repository, with its path), then over the blocks of the best files. Identifiers are split
//! on case and `_`; words the report writes as code (`backticks`, camelCase, `snake_case`,
//! `call()`) weigh double.

use crate::code::tokens::{for_each_term, terms};
use crate::code::RepoIndex;
use rayon::prelude::*;
use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words that say nothing about where a bug is.
const STOPWORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "are",
    "but",
    "not",
    "you",
    "all",
    "any",
    "can",
    "had",
    "her",
    "was",
    "one",
    "our",
    "out",
    "has",
    "have",
    "him",
    "his",
    "how",
    "its",
    "may",
    "new",
    "now",
    "old",
    "see",
    "two",
    "way",
    "who",
    "did",
    "get",
    "got",
    "let",
    "put",
    "say",
    "she",
    "too",
    "use",
    "that",
    "with",
    "this",
    "from",
    "they",
    "will",
    "would",
    "there",
    "their",
    "what",
    "about",
    "which",
    "when",
    "make",
    "like",
    "time",
    "just",
    "know",
    "take",
    "into",
    "year",
    "your",
    "some",
    "could",
    "them",
    "than",
    "then",
    "look",
    "only",
    "come",
    "over",
    "also",
    "back",
    "after",
    "use",
    "work",
    "first",
    "well",
    "even",
    "want",
    "because",
    "these",
    "give",
    "most",
    "is",
    "it",
    "in",
    "of",
    "to",
    "a",
    "an",
    "on",
    "at",
    "by",
    "be",
    "as",
    "or",
    "if",
    "we",
    "us",
    "so",
    "no",
    "do",
    "my",
    "me",
    "up",
    "were",
    "been",
    "being",
    "does",
    "should",
    "still",
    "expected",
    "observed",
    "actual",
    "setup",
    "steps",
    "reproduce",
    "report",
    "issue",
    "bug",
    "happened",
    "seems",
    "seem",
    "every",
    "each",
    "after",
    "before",
    "while",
    "again",
    "once",
    "about",
    "around",
    "other",
    "more",
    "less",
    "very",
    "much",
    "many",
    "same",
    "such",
    "here",
    "where",
    "why",
    "those",
    "into",
    "onto",
    "within",
    "without",
    "between",
    "never",
    "always",
    "sometimes",
    "nothing",
    "something",
    "anything",
    "everything",
    "someone",
    "i",
    "im",
    "http",
    "https",
    "www",
    "com",
    "org",
    "md",
    "log",
    "logs",
    "attached",
    "see",
    "below",
    "above",
    "later",
    "earlier",
    "minutes",
    "seconds",
    "hours",
    "hour",
    "minute",
    "second",
    "today",
    "yesterday",
    "ago",
];

/// The report as a BM25 query.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Term -> weight (occurrences, capped, doubled when written as code).
    pub terms: HashMap<String, f64>,
    /// Words written as code (`Foo.bar`, `leaseTable`, `grant()`), as written, with how
    /// surely each names code (0..1).
    pub identifiers: Vec<(String, f64)>,
}

impl Query {
    pub fn from_report(report: &str) -> Query {
        let mut counts: HashMap<String, f64> = HashMap::new();
        terms(report, |t| {
            if !STOPWORDS.contains(&t.as_str()) && t.len() >= 3 {
                *counts.entry(t).or_insert(0.0) += 1.0;
            }
        });
        let identifiers = code_identifiers(report);
        let mut code_terms: Vec<String> = Vec::new();
        for (id, _) in &identifiers {
            terms(id, |t| code_terms.push(t));
        }
        let terms = counts
            .into_iter()
            .map(|(t, c)| {
                let w = c.min(3.0) * if code_terms.contains(&t) { 2.0 } else { 1.0 };
                (t, w)
            })
            .collect();
        Query { terms, identifiers }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// Words of the report that are written as code, with how surely they name code: a
/// qualified or called name (`Leader.elect`, `grant()`) 1.0, a camelCase or snake_case word
/// 0.7 in backticks and 0.5 in prose, a plain word in backticks 0.4. Spans that are values,
/// commands or file names (`node-1.log`, `--tick 100ms`) are not identifiers.
pub fn code_identifiers(report: &str) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut push = |w: &str, strength: f64| {
        if w.len() < 3 || out.len() >= 64 {
            return;
        }
        match out.iter_mut().find(|x| x.0 == w) {
            Some(x) => x.1 = x.1.max(strength),
            None => out.push((w.to_string(), strength)),
        }
    };
    for (i, part) in report.split('`').enumerate() {
        if i % 2 == 0 || part.len() > 120 {
            continue;
        }
        let (path, called) = callee(&dotted_members(part.trim()));
        let path = path.as_str();
        let segments: Vec<&str> = path.split("::").flat_map(|p| p.split('.')).collect();
        let is_ident = |x: &str| {
            !x.is_empty()
                && x.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                && x.bytes()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        };
        if !segments.iter().all(|x| is_ident(x)) {
            continue;
        }
        let last = segments.last().copied().unwrap_or("");
        if segments.len() > 1 && FILE_EXTENSIONS.contains(&last.to_ascii_lowercase().as_str()) {
            continue;
        }
        let strength = if called || segments.len() > 1 {
            1.0
        } else if is_compound(last) {
            0.7
        } else {
            0.4
        };
        push(path, strength);
    }
    for raw in report.split_whitespace() {
        let w = raw.trim_matches(|c: char| {
            !c.is_alphanumeric() && c != '_' && c != '.' && c != '(' && c != ')'
        });
        let w = w.trim_end_matches('.');
        // A frame of a trace pasted as prose (`Foo.bar(Foo.java:12)`) is the frames' business.
        if w.contains(':') {
            continue;
        }
        let dotted = dotted_members(w);
        // `Class#method` names a member however plain its words are.
        let member = dotted != w;
        let (path, called) = callee(&dotted);
        let path = path.as_str();
        let segments: Vec<&str> = path.split('.').collect();
        let last = segments.last().copied().unwrap_or("");
        if !segments
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'))
        {
            continue;
        }
        if segments.len() > 1 && FILE_EXTENSIONS.contains(&last.to_ascii_lowercase().as_str()) {
            continue;
        }
        if called || (segments.len() > 1 && (member || segments.iter().any(|p| is_compound(p)))) {
            push(path, 0.8);
        } else if segments.len() == 1 && is_compound(last) {
            push(path, 0.5);
        }
    }
    out
}

/// `Class#method` (how Javadoc and most Java bug reports name a method: `Acceptor#accept`,
/// `KafkaConsumer#position()`) written as `Class.method`. Only a `#` between a name and a name
/// counts, so an issue number (`#123`, `PR#42`) and a line anchor (`resolve.rs#L114`) stay
/// what they are.
fn dotted_members(span: &str) -> String {
    let b = span.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let anchor = |i: usize| b.get(i) == Some(&b'L') && b.get(i + 1).is_some_and(u8::is_ascii_digit);
    span.char_indices()
        .map(|(i, c)| {
            let joins = c == '#'
                && i > 0
                && word(b[i - 1])
                && b.get(i + 1)
                    .is_some_and(|&n| n.is_ascii_alphabetic() || n == b'_')
                && !anchor(i + 1);
            if joins {
                '.'
            } else {
                c
            }
        })
        .collect()
}

/// What a span written as code calls, and whether it is a call: `grant()`,
/// `ZKDatabase.append(Request)`, `respond(...)` and `sendRaftError(Processor.java:325)` all name
/// their callee; Go's method expressions `auth.(*authStore).CheckPassword` name
/// `auth.authStore.CheckPassword`. Anything else comes back as it is.
fn callee(span: &str) -> (String, bool) {
    let go_method = span.replace("(*", "").replace(").", ".");
    let span = if go_method != span && !go_method.contains(['(', ')']) {
        go_method.as_str()
    } else {
        span
    };
    match span.find('(') {
        Some(open) if open > 0 && span.ends_with(')') => (span[..open].to_string(), true),
        _ => (span.to_string(), false),
    }
}

/// camelCase, PascalCase with two humps, or snake_case.
fn is_compound(w: &str) -> bool {
    let b = w.as_bytes();
    let humps = b
        .windows(2)
        .filter(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase())
        .count();
    let snake = w.trim_matches('_').contains('_');
    humps >= 1 || snake
}

/// Extensions that make `name.ext` a file, not `Type.member`.
const FILE_EXTENSIONS: &[&str] = &[
    "log",
    "json",
    "yaml",
    "yml",
    "txt",
    "md",
    "xml",
    "conf",
    "properties",
    "toml",
    "csv",
    "out",
    "err",
    "html",
    "cfg",
    "ini",
    "gz",
    "zip",
    "jar",
    "sh",
    "py",
    "go",
    "rs",
    "java",
    "scala",
    "cc",
    "cpp",
    "h",
];

/// File-level statistics of the query over the whole repository.
#[derive(Debug, Default)]
pub struct Corpus {
    pub n_files: usize,
    pub df: HashMap<String, u32>,
    /// BM25 of every file with any query term, best first.
    pub files: Vec<(usize, f64)>,
}

impl Corpus {
    pub fn idf(&self, term: &str) -> f64 {
        let n = self.n_files.max(1) as f64;
        let d = self.df.get(term).copied().unwrap_or(0) as f64;
        (1.0 + (n - d + 0.5) / (d + 0.5)).ln()
    }

    pub fn file_score(&self, file: usize) -> f64 {
        self.files
            .iter()
            .find(|(f, _)| *f == file)
            .map(|x| x.1)
            .unwrap_or(0.0)
    }
}

/// Query-term counts and the length (in terms) of a text.
pub fn count_terms(text: &str, query: &Query, buf: &mut String) -> (HashMap<String, u32>, u32) {
    let mut tf: HashMap<String, u32> = HashMap::new();
    let mut len = 0u32;
    for_each_term(text, buf, |t| {
        len += 1;
        if query.terms.contains_key(t) {
            match tf.get_mut(t) {
                Some(c) => *c += 1,
                None => {
                    tf.insert(t.to_string(), 1);
                }
            }
        }
    });
    (tf, len)
}

/// BM25 of a document given its query-term counts and length.
pub fn bm25(
    tf: &HashMap<String, u32>,
    len: u32,
    avg_len: f64,
    query: &Query,
    corpus: &Corpus,
) -> f64 {
    let norm = K1 * (1.0 - B + B * len as f64 / avg_len.max(1.0));
    // Summed in term order: the same input gives the same score to the last bit.
    let mut terms: Vec<(&String, &u32)> = tf.iter().collect();
    terms.sort_unstable();
    terms
        .into_iter()
        .map(|(t, &c)| {
            let c = c as f64;
            query.terms.get(t).copied().unwrap_or(0.0) * corpus.idf(t) * c * (K1 + 1.0) / (c + norm)
        })
        .sum()
}

/// Scores every file of the repository (its text and its path) against the query.
pub fn score_files(index: &RepoIndex, query: &Query) -> Corpus {
    let per_file: Vec<(HashMap<String, u32>, u32)> = index
        .files
        .par_iter()
        .map_init(String::new, |buf, f| {
            let (mut tf, len) = count_terms(&f.text, query, buf);
            // The path names the component: its words count as if written twice more.
            let (ptf, plen) = count_terms(&f.path, query, buf);
            for (t, c) in ptf {
                *tf.entry(t).or_insert(0) += 2 * c;
            }
            (tf, len + 2 * plen)
        })
        .collect();
    let mut df: HashMap<String, u32> = HashMap::new();
    let mut total_len = 0f64;
    for (tf, len) in &per_file {
        total_len += *len as f64;
        for t in tf.keys() {
            *df.entry(t.clone()).or_insert(0) += 1;
        }
    }
    let mut corpus = Corpus {
        n_files: index.files.len(),
        df,
        files: Vec::new(),
    };
    let avg = total_len / index.files.len().max(1) as f64;
    let mut files: Vec<(usize, f64)> = per_file
        .iter()
        .enumerate()
        .filter(|(_, (tf, _))| !tf.is_empty())
        .map(|(i, (tf, len))| (i, bm25(tf, *len, avg, query, &corpus)))
        .collect();
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    corpus.files = files;
    corpus
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_query_weighs_code_words_double_and_drops_stopwords() {
        let q = Query::from_report(
            "The lease is never freed. `LeaseTable.grant` sets the expiry; leaseExpiry is wrong.",
        );
        assert!(!q.terms.contains_key("the"));
        assert_eq!(q.terms["grant"], 2.0);
        assert_eq!(q.terms["freed"], 1.0);
        assert!(q.terms["lease"] >= 4.0, "{:?}", q.terms);
        let ids: Vec<_> = q.identifiers.iter().map(|x| (x.0.as_str(), x.1)).collect();
        assert_eq!(ids, [("LeaseTable.grant", 1.0), ("leaseExpiry", 0.5)]);
        let ids = code_identifiers(
            "see `node-1.log`, `--tick 100ms`, `scheduler.log`, `Put`, `onCompleteJoin`, `is_leader()` and GroupCoordinator.onCompleteJoin or snake_name.",
        );
        assert_eq!(
            ids,
            [
                ("Put".to_string(), 0.4),
                ("onCompleteJoin".to_string(), 0.7),
                ("is_leader".to_string(), 1.0),
                ("GroupCoordinator.onCompleteJoin".to_string(), 0.8),
                ("snake_name".to_string(), 0.5)
            ]
        );
        assert!(Query::from_report("").is_empty());
        let ids = code_identifiers(
            "`ZKDatabase.append(Request)` and `Manager.respond(...)`, `auth.(*authStore).CheckPassword`, `x == (a)`, then getACL(node) at Foo.run(Foo.java:12).",
        );
        let ids: Vec<_> = ids.iter().map(|x| (x.0.as_str(), x.1)).collect();
        assert_eq!(
            ids,
            [
                ("ZKDatabase.append", 1.0),
                ("Manager.respond", 1.0),
                ("auth.authStore.CheckPassword", 1.0),
                ("getACL", 0.8)
            ]
        );
        // Javadoc's `Class#method`, in code and in prose; issue numbers are no members.
        let ids = code_identifiers(
            "`DistributedQueryManager#close()` hangs after Acceptor#accept fails (#123, PR#42, a.rs#L114).",
        );
        let ids: Vec<_> = ids.iter().map(|x| (x.0.as_str(), x.1)).collect();
        assert_eq!(
            ids,
            [
                ("DistributedQueryManager.close", 1.0),
                ("Acceptor.accept", 0.8)
            ]
        );
    }

    #[test]
    fn files_that_speak_of_the_report_rank_first() {
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                (
                    "src/lease.py".into(),
                    "class LeaseTable:\n    def grant(self, c):\n        self.expiry = ttl\n"
                        .into(),
                ),
                (
                    "src/server.py".into(),
                    "class Server:\n    def serve(self):\n        pass\n".into(),
                ),
                ("README.md".into(), "A lock server.\n".into()),
            ],
        );
        let q = Query::from_report("lease expiry is wrong after grant");
        let c = score_files(&idx, &q);
        assert_eq!(c.files[0].0, idx.file_id("src/lease.py").unwrap());
        assert_eq!(c.files.len(), 1);
        assert!(c.idf("lease") > c.idf("zzz") - 10.0);
        let (tf, len) = count_terms("leaseExpiry = lease", &q, &mut String::new());
        assert_eq!((tf["lease"], tf["expiry"], len), (2, 1, 4));
    }
}

//! Places where names the report writes as code are used together: a call that passes two
//! settings the report names, a condition over two of its fields. Reports describe a fault by
//! what it mixes up or combines; the line that combines those names is often where it is.

use super::dataflow::files_with_words;
use crate::code::tokens::is_word_byte;
use crate::code::RepoIndex;

/// A run of lines (at most `WINDOW` lines apart) that uses two or more report-named names.
#[derive(Debug, Clone, PartialEq)]
pub struct Together {
    pub file: usize,
    pub start: u32,
    pub end: u32,
    /// The sum of the strengths of the distinct names it uses.
    pub score: f64,
    pub names: Vec<String>,
}

/// Names used on lines at most this far apart count as used together.
const WINDOW: u32 = 3;
/// A name found in more files than this is too common to say anything.
const MAX_FILES_PER_NAME: usize = 48;
/// At most this many files (those using the most names) are searched.
const MAX_FILES: usize = 32;
/// Names shorter than this are too generic (`id`, `key`).
const MIN_LEN: usize = 4;

/// The runs of lines that use at least two of `names` (name, strength), strongest first.
pub fn find(index: &RepoIndex, names: &[(String, f64)]) -> Vec<Together> {
    let mut wanted: Vec<(&str, f64)> = Vec::new();
    for (n, w) in names {
        if n.len() >= MIN_LEN && !wanted.iter().any(|x| x.0 == n) {
            wanted.push((n.as_str(), *w));
        }
    }
    if wanted.len() < 2 {
        return Vec::new();
    }
    let pats: Vec<&str> = wanted.iter().map(|w| w.0).collect();
    let files = files_with_words(index, &pats);
    // Per file, which names it holds (common names left out).
    let mut per_file: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (k, fs) in files.iter().enumerate() {
        if fs.len() > MAX_FILES_PER_NAME {
            continue;
        }
        for &f in fs {
            per_file.entry(f).or_default().push(k);
        }
    }
    let mut candidates: Vec<(usize, Vec<usize>)> = per_file
        .into_iter()
        .filter(|(_, ks)| ks.len() >= 2)
        .collect();
    candidates.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    candidates.truncate(MAX_FILES);
    let mut out = Vec::new();
    for (file, ks) in candidates {
        out.extend(runs_in(index, file, &ks, &wanted));
    }
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.file.cmp(&b.file))
            .then(a.start.cmp(&b.start))
    });
    out
}

/// The runs of one file: each occurrence opens a window of `WINDOW` lines; a window with two
/// or more distinct names is a run; overlapping runs keep the first.
fn runs_in(index: &RepoIndex, file: usize, ks: &[usize], wanted: &[(&str, f64)]) -> Vec<Together> {
    let text = &index.files[file].text;
    let mut hits: Vec<(u32, usize)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for &k in ks {
            if has_word(line, wanted[k].0) {
                hits.push((i as u32 + 1, k));
            }
        }
    }
    let mut out: Vec<Together> = Vec::new();
    for (i, &(line, _)) in hits.iter().enumerate() {
        if out.last().is_some_and(|t| t.end >= line) {
            continue;
        }
        let window: Vec<&(u32, usize)> = hits[i..]
            .iter()
            .take_while(|(l, _)| *l <= line + WINDOW)
            .collect();
        let mut distinct: Vec<usize> = Vec::new();
        for (_, k) in &window {
            if !distinct.contains(k) {
                distinct.push(*k);
            }
        }
        if distinct.len() < 2 {
            continue;
        }
        let end = window.last().map_or(line, |w| w.0);
        out.push(Together {
            file,
            start: line,
            end,
            score: distinct.iter().map(|&k| wanted[k].1).sum(),
            names: distinct.iter().map(|&k| wanted[k].0.to_string()).collect(),
        });
    }
    out
}

/// Whether `word` occurs in `line` as a whole word.
fn has_word(line: &str, word: &str) -> bool {
    let b = line.as_bytes();
    line.match_indices(word).any(|(at, _)| {
        let before = at == 0 || !is_word_byte(b[at - 1]);
        let after = at + word.len() >= b.len() || !is_word_byte(b[at + word.len()]);
        before && after
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn two_named_settings_passed_together_are_found_and_one_alone_is_not() {
        let src = "class P {\n  static P create(Cfg c, Cfg n) {\n    return new P(\n        c.planner().planCacheExpiresAfterSeconds().value(),\n        n.planner().threadCount().value(),\n        c.other());\n  }\n  int threadCount() { return 4; }\n}\n";
        let other = "class Q {\n  int threadCount() { return 1; }\n}\n";
        let idx = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![
                ("P.java".to_string(), src.to_string()),
                ("Q.java".to_string(), other.to_string()),
            ],
        );
        let names = vec![
            ("planCacheExpiresAfterSeconds".to_string(), 0.7),
            ("threadCount".to_string(), 0.7),
        ];
        let found = find(&idx, &names);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].start, found[0].end), (4, 5));
        assert_eq!(found[0].names.len(), 2);
        assert!((found[0].score - 1.4).abs() < 1e-9);
        // One name is not enough.
        assert!(find(&idx, &names[1..]).is_empty());
    }

    #[test]
    fn names_match_whole_words_only() {
        assert!(has_word("a.threadCount()", "threadCount"));
        assert!(!has_word("maxThreadCountX", "ThreadCount"));
    }
}

//! Which of a name's definitions a report means, when several places define the name.

use super::logmatch;
use crate::code::RepoIndex;
use std::collections::BTreeSet;

/// A definition: (file, block index in that file's model).
pub type Definition = (usize, usize);

/// Extensions of source files a report may name by path.
const SOURCE_EXTENSIONS: &[&str] = &[
    "java", "scala", "go", "rs", "py", "kt", "c", "cc", "cpp", "h", "hpp", "ts", "js",
];

/// Files the report names: by path (`etcdserver/api/v3rpc/watch.go`, `ZKUtil.java`, a
/// `file:line` too), or by a type written as code that a file is named after (`DataTree` for
/// `DataTree.java`). A type only in prose does not count: "ZooKeeper" is the system's name in
/// nearly every ZooKeeper report, not a pointer at `ZooKeeper.java`.
pub fn report_files(index: &RepoIndex, report: &str) -> Vec<usize> {
    let mut wanted_paths: BTreeSet<String> = BTreeSet::new();
    for raw in report.split(|c: char| c.is_whitespace() || c == '`' || c == '(' || c == ')') {
        let token = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '/'));
        let token = token.split(':').next().unwrap_or(token);
        let Some((_, ext)) = token.rsplit_once('.') else {
            continue;
        };
        if SOURCE_EXTENSIONS.contains(&ext) && token.len() > ext.len() + 1 {
            wanted_paths.insert(token.to_string());
        }
    }
    let wanted_types: BTreeSet<&str> = report
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|code| is_type_name(code))
        .collect();
    let mut out: BTreeSet<usize> = wanted_paths
        .iter()
        .flat_map(|p| index.files_ending_with(p))
        .collect();
    for (i, f) in index.files.iter().enumerate() {
        let base = f.path.rsplit('/').next().unwrap_or(&f.path);
        let stem = base.split('.').next().unwrap_or(base);
        if wanted_types.contains(stem) {
            out.insert(i);
        }
    }
    out.into_iter().collect()
}

/// A single word that reads as a type's name: capitalised, with a lower-case letter after.
fn is_type_name(id: &str) -> bool {
    id.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && id.chars().any(|c| c.is_ascii_lowercase())
        && id.len() >= 4
}

/// The definitions of one name the report most likely means, and how many distinct places
/// (files) they still spread over. Test code goes when other code defines the name; the
/// files the report names decide next, then the files the evidence points at; each step
/// applies only when it keeps something.
pub fn narrow(
    index: &RepoIndex,
    mut defs: Vec<Definition>,
    report_files: &[usize],
    evidence_files: &[usize],
) -> (Vec<Definition>, usize) {
    keep_if_any(&mut defs, |(f, _)| {
        !logmatch::is_test_path(&index.files[*f].path)
    });
    keep_if_any(&mut defs, |(f, _)| report_files.contains(f));
    keep_if_any(&mut defs, |(f, _)| evidence_files.contains(f));
    let files: BTreeSet<usize> = defs.iter().map(|d| d.0).collect();
    let spread = files.len();
    (defs, spread)
}

/// Keeps the definitions `keep` accepts, unless it accepts none of them.
fn keep_if_any(defs: &mut Vec<Definition>, keep: impl Fn(&Definition) -> bool) {
    if defs.iter().any(&keep) {
        defs.retain(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::RepoIndex;
    use std::path::Path;

    /// An index of the files, which it keeps sorted by path.
    fn index(files: &[(&str, &str)]) -> RepoIndex {
        let texts = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        RepoIndex::from_texts(Path::new("/ws"), texts)
    }

    #[test]
    fn a_path_or_a_type_the_report_writes_names_its_file() {
        let idx = index(&[
            ("etcdserver/api/v3rpc/watch.go", "package v3rpc\n"),
            ("proxy/grpcproxy/watch.go", "package grpcproxy\n"),
            ("server/DataNode.java", "class DataNode {}\n"),
            ("server/DataTree.java", "class DataTree {}\n"),
            ("server/ZooKeeper.java", "class ZooKeeper {}\n"),
        ]);
        let report = "ZooKeeper: the `return nil` in `recvLoop` \
            (etcdserver/api/v3rpc/watch.go:256) looks wrong, and `DataTree` too; DataNode only in prose";
        assert_eq!(report_files(&idx, report), vec![0, 3]);
    }

    #[test]
    fn the_named_file_decides_then_the_evidence_and_tests_go_first() {
        let idx = index(&[
            ("a/watch.go", ""),
            ("a/watch_test.go", ""),
            ("b/watch.go", ""),
            ("c/watch.go", ""),
        ]);
        let defs = vec![(0, 1), (1, 1), (2, 1), (3, 1), (3, 4)];
        // The report names b/watch.go; the evidence points at c/watch.go.
        assert_eq!(narrow(&idx, defs.clone(), &[2], &[3]), (vec![(2, 1)], 1));
        assert_eq!(
            narrow(&idx, defs.clone(), &[], &[3]),
            (vec![(3, 1), (3, 4)], 1)
        );
        // Neither: the test file's definition goes, the overloads in c/watch.go count once.
        let (kept, spread) = narrow(&idx, defs, &[], &[]);
        assert_eq!(kept, vec![(0, 1), (2, 1), (3, 1), (3, 4)]);
        assert_eq!(spread, 3);
        // Only a test defines it: it stays.
        assert_eq!(narrow(&idx, vec![(1, 1)], &[], &[]), (vec![(1, 1)], 1));
    }
}

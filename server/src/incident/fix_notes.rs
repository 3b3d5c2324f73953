//! Notes from the fix against the labels and the evidence: a label the fix does not touch, and
//! a message only the fix adds that the report or evidence quotes. Both are the usual slips of
//! building an incident from an upstream fix, and neither is always wrong, so they are notes.

use super::{Incident, Labels};
use crate::util::paths::normalize_rel;
use git2::{Diff, DiffOptions, Oid, Repository};
use std::collections::{BTreeMap, BTreeSet};

/// A fixed piece of a string literal must be at least this long to count as a message (shorter
/// ones, like `"id"` or `"%s: %d"`, turn up in any log).
const MIN_MESSAGE: usize = 16;

/// What a fix changes, as the labels and the evidence are compared with it.
#[derive(Debug, Default)]
pub struct FixChanges {
    /// Per file (at the buggy revision), the line ranges the fix replaces or deletes, and the
    /// lines after which it inserts code (as a range of that one line).
    old_ranges: BTreeMap<String, Vec<(u32, u32)>>,
    /// Message pieces of string literals on the lines the fix adds outside tests, and not on
    /// the lines it removes.
    added_messages: BTreeSet<String>,
}

/// The changes of `fix` against `buggy`, without context lines.
pub fn of_commits(repo: &Repository, buggy: Oid, fix: Oid) -> Result<FixChanges, git2::Error> {
    let old = repo.find_commit(buggy)?.tree()?;
    let new = repo.find_commit(fix)?.tree()?;
    let mut opts = DiffOptions::new();
    opts.context_lines(0);
    let diff = repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))?;
    of_diff(&diff)
}

/// The changes of a unified diff (`fix.patch`); one made by plain `diff -u`, without git's
/// `diff --git` lines, is read too.
pub fn of_patch(patch: &[u8]) -> Result<FixChanges, git2::Error> {
    let text = String::from_utf8_lossy(patch);
    if text.contains("diff --git ") {
        return of_diff(&Diff::from_buffer(patch)?);
    }
    let mut with_headers = String::new();
    let mut old_path: Option<&str> = None;
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("--- ") {
            old_path = Some(p.split('\t').next().unwrap_or(p));
            continue;
        }
        if let (Some(p), Some(old)) = (line.strip_prefix("+++ "), old_path.take()) {
            let new = p.split('\t').next().unwrap_or(p);
            let strip = |s: &str| {
                s.strip_prefix("a/")
                    .or_else(|| s.strip_prefix("b/"))
                    .unwrap_or(s)
                    .to_string()
            };
            with_headers.push_str(&format!(
                "diff --git a/{} b/{}\n--- {old}\n+++ {new}\n",
                strip(old),
                strip(new)
            ));
            continue;
        }
        with_headers.push_str(line);
        with_headers.push('\n');
    }
    of_diff(&Diff::from_buffer(with_headers.as_bytes())?)
}

fn of_diff(diff: &Diff) -> Result<FixChanges, git2::Error> {
    let mut changes = FixChanges::default();
    let mut added = BTreeSet::new();
    let mut removed = BTreeSet::new();
    // The last old line seen in the current hunk: code the fix adds goes right after it.
    let mut last_old = 0u32;
    let mut hunk_start = None;
    diff.foreach(
        &mut |_, _| true,
        None,
        None,
        Some(&mut |delta, hunk, line| {
            let Some(old_path) = delta.old_file().path() else {
                return true;
            };
            let old_path = normalize_rel(&old_path.to_string_lossy());
            if let Some(h) = hunk {
                if hunk_start != Some((old_path.clone(), h.old_start())) {
                    hunk_start = Some((old_path.clone(), h.old_start()));
                    // A hunk that only inserts names the line it follows; any other names
                    // its first old line.
                    last_old = if h.old_lines() == 0 {
                        h.old_start()
                    } else {
                        h.old_start().saturating_sub(1)
                    };
                }
            }
            match line.origin() {
                ' ' => last_old = line.old_lineno().unwrap_or(last_old),
                '-' => {
                    last_old = line.old_lineno().unwrap_or(last_old);
                    push_range(&mut changes, &old_path, last_old);
                }
                '+' => push_range(&mut changes, &old_path, last_old.max(1)),
                _ => return true,
            }
            if old_path.to_lowercase().contains("test") {
                return true; // a test's messages are not what a failing build prints
            }
            let text = String::from_utf8_lossy(line.content());
            match line.origin() {
                '+' => added.extend(message_pieces(&text)),
                '-' => removed.extend(message_pieces(&text)),
                _ => {}
            }
            true
        }),
    )?;
    changes.added_messages = added.difference(&removed).cloned().collect();
    Ok(changes)
}

/// Adds `line` to the file's changed ranges, extending the last range when it continues it.
fn push_range(changes: &mut FixChanges, path: &str, line: u32) {
    let ranges = changes.old_ranges.entry(path.to_string()).or_default();
    match ranges.last_mut() {
        Some(last) if line >= last.0 && line <= last.1 + 1 => last.1 = last.1.max(line),
        _ => ranges.push((line, line)),
    }
}

/// The fixed pieces of the double-quoted literals of a line: the text between format
/// placeholders (`{}`, `%s`, `{0}`), as a message would print them whatever the values.
fn message_pieces(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, literal) in line.split('"').enumerate() {
        if i % 2 == 0 {
            continue; // outside the quotes
        }
        for piece in literal.split(['{', '}', '%', '\\']) {
            let piece = piece.trim();
            if piece.chars().count() >= MIN_MESSAGE {
                out.push(piece.to_string());
            }
        }
    }
    out
}

/// A note for each labeled block that touches no line the fix changes, nor the line after which
/// it inserts code.
pub fn note_untouched_labels(
    incident: &Incident,
    labels: &Labels,
    fix: &FixChanges,
) -> Vec<String> {
    let mut notes = Vec::new();
    for (i, b) in labels.blocks.iter().enumerate() {
        let path = normalize_rel(&b.path);
        let ranges = fix.old_ranges.get(&path).map(Vec::as_slice).unwrap_or(&[]);
        // A change on the line next to the block still counts: the fix often adds what the
        // block was missing right after it, or rewrites the condition just above it.
        let touched = ranges
            .iter()
            .any(|&(s, e)| s <= b.end_line + 1 && b.start_line <= e + 1);
        if !touched {
            notes.push(format!(
                "{}: labels.json: blocks[{i}] ({path}:{}-{}) touches no line the fix changes; a causal block is usually code the fix changes, or the spot where it adds what was missing",
                incident.id(),
                b.start_line,
                b.end_line
            ));
        }
    }
    notes
}

/// The messages only the fix adds that the report or an evidence file quotes, as (file,
/// message). Whether the buggy revision prints them anyway (from another file the fix does not
/// touch) is the caller's to check, with `note_quoted_messages` for those it does not.
pub fn quoted_fix_messages(incident: &Incident, fix: &FixChanges) -> Vec<(String, String)> {
    let mut texts: Vec<(String, String)> = Vec::new();
    if let Ok(report) = incident.load_report() {
        texts.push((incident.manifest.report.clone(), report));
    }
    if let Ok(evidence) = incident.load_evidence() {
        texts.extend(evidence.into_iter().map(|e| (e.name, e.text)));
    }
    let mut out = Vec::new();
    for (name, text) in &texts {
        for message in fix
            .added_messages
            .iter()
            .filter(|m| text.contains(m.as_str()))
        {
            out.push((name.clone(), message.clone()));
        }
    }
    out
}

/// Source text with string literals that continue on the next line joined (`"a " +` or
/// `"a "` then `"b"` on the next line reads `"a b"`), so that a message split over lines is
/// found whole.
pub fn join_split_literals(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            let mut j = i + 1;
            let mut newline = false;
            while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\r' | b'\n' | b'+') {
                newline |= bytes[j] == b'\n';
                j += 1;
            }
            if newline && j < bytes.len() && bytes[j] == b'"' {
                i = j + 1; // drop the closing quote, the joint and the opening quote
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The notes for quoted messages the buggy revision does not have: the evidence then likely
/// comes from a fixed build, and tells the agent what the fix changed.
pub fn note_quoted_messages(incident: &Incident, quoted: &[(String, String)]) -> Vec<String> {
    quoted
        .iter()
        .map(|(name, message)| {
            format!(
                "{}: {name} quotes \"{message}\", which the fix adds and the buggy revision does not have anywhere: evidence from a fixed build, or a name the user wrote that the fix starts to accept; check that it tells the agent nothing the reporter could not have known",
                incident.id()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::LabelBlock;

    const PATCH: &str = "\
diff --git a/src/lease.py b/src/lease.py
--- a/src/lease.py
+++ b/src/lease.py
@@ -10,2 +10,2 @@
-    if now > deadline:
-        log.info(\"lease expired for holder\")
+    if now >= deadline:
+        log.info(\"lease expired at the deadline for holder {}\", holder)
@@ -30,0 +31,1 @@
+    self.pending.clear()
diff --git a/tests/test_lease.py b/tests/test_lease.py
--- a/tests/test_lease.py
+++ b/tests/test_lease.py
@@ -1,0 +2,1 @@
+    assert msg == \"a message from the test only\"
";

    #[test]
    fn changed_ranges_and_insertion_points_come_from_the_old_side() {
        let fix = of_patch(PATCH.as_bytes()).unwrap();
        assert_eq!(fix.old_ranges["src/lease.py"], vec![(10, 11), (30, 30)]);
        // The message the fix adds, not the one it removes, and nothing from the test.
        assert_eq!(
            fix.added_messages.iter().collect::<Vec<_>>(),
            vec!["lease expired at the deadline for holder"]
        );
    }

    #[test]
    fn literals_split_over_lines_are_joined() {
        let java = "log.warn(\"Managed memory exceeds \" +\n        \"process memory\");";
        assert_eq!(
            join_split_literals(java),
            "log.warn(\"Managed memory exceeds process memory\");"
        );
        let python = "logger.warning(\n    \"Please ensure \"\n    \"that sizeof() works\"\n)";
        assert!(join_split_literals(python).contains("\"Please ensure that sizeof() works\""));
        // Two arguments on one line stay apart.
        assert_eq!(join_split_literals("f(\"a\", \"b\")"), "f(\"a\", \"b\")");
    }

    #[test]
    fn labels_off_the_fix_and_evidence_quoting_the_fix_are_noted() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("tiny");
        std::fs::create_dir_all(d.join("repo/src")).unwrap();
        std::fs::create_dir_all(d.join("evidence")).unwrap();
        std::fs::write(d.join("repo/src/lease.py"), "x\n".repeat(40)).unwrap();
        std::fs::write(d.join("report.md"), "Leases vanish.\n").unwrap();
        std::fs::write(
            d.join("evidence/a.log"),
            "INFO lease expired at the deadline for holder 7\n",
        )
        .unwrap();
        std::fs::write(d.join("fix.patch"), PATCH).unwrap();
        std::fs::write(
            d.join("incident.json"),
            r#"{"id":"tiny","system":"T","language":"python","category":"logic","tags":[],
                "repository":{"path":"repo"},"evidence":["evidence/a.log"],
                "fix":{"patch":"fix.patch"}}"#,
        )
        .unwrap();
        let inc = Incident::load(&d).unwrap();
        let fix = of_patch(PATCH.as_bytes()).unwrap();
        let labels = Labels {
            blocks: vec![
                LabelBlock::new("src/lease.py", 9, 10),  // overlaps the change
                LabelBlock::new("src/lease.py", 27, 29), // next to the insertion after 30
                LabelBlock::new("src/lease.py", 20, 22), // nowhere near
            ],
            ..Labels::default()
        };
        let notes = note_untouched_labels(&inc, &labels, &fix);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("blocks[2] (src/lease.py:20-22)"),
            "{notes:?}"
        );
        let quoted = quoted_fix_messages(&inc, &fix);
        assert_eq!(
            quoted,
            vec![(
                "evidence/a.log".to_string(),
                "lease expired at the deadline for holder".to_string()
            )]
        );
        let leaks = note_quoted_messages(&inc, &quoted);
        assert!(
            leaks[0].starts_with("tiny: evidence/a.log quotes"),
            "{leaks:?}"
        );
    }
}

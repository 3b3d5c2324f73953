//! Checks on the bundled corpus: every incident is valid, every self-contained fix applies to its
//! prepared workspace and touches a labeled block, and the corpus has the breadth it promises.

use distdebug::incident::prepare::{prepare_workspace, PrepareOptions};
use distdebug::incident::validate::validate_incident;
use distdebug::incident::{list_incident_dirs, FixSource, Incident, RepositorySource};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn incidents_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("incidents")
}

fn self_contained() -> Vec<Incident> {
    list_incident_dirs(&incidents_root())
        .unwrap()
        .iter()
        .map(|d| Incident::load(d).unwrap())
        .filter(|i| matches!(i.manifest.repository, RepositorySource::Path(_)))
        .collect()
}

#[test]
fn every_bundled_incident_is_valid() {
    for d in list_incident_dirs(&incidents_root()).unwrap() {
        let problems = validate_incident(&d);
        assert!(problems.is_empty(), "{}: {problems:#?}", d.display());
    }
}

/// Old-side line numbers a unified diff removes or replaces, per file; a pure insertion counts
/// the lines on either side of it, since a fix that only adds code is "at" its neighbours.
fn touched_old_lines(patch: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut file = String::new();
    let mut old_line = 0u32;
    let mut last_was_context = true;
    for line in patch.lines() {
        if let Some(p) = line.strip_prefix("--- ") {
            file = p.trim_start_matches("a/").to_string();
        } else if line.starts_with("+++ ") {
        } else if let Some(rest) = line.strip_prefix("@@ -") {
            let start = rest
                .split([',', ' '])
                .next()
                .unwrap()
                .parse::<u32>()
                .unwrap();
            old_line = start;
            last_was_context = true;
        } else if line.starts_with('-') {
            out.push((file.clone(), old_line));
            old_line += 1;
            last_was_context = false;
        } else if line.starts_with('+') {
            if last_was_context {
                out.push((file.clone(), old_line.saturating_sub(1)));
                out.push((file.clone(), old_line));
            }
            last_was_context = false;
        } else if line.starts_with(' ') || line.is_empty() {
            old_line += 1;
            last_was_context = true;
        }
    }
    out
}

#[test]
fn every_fix_applies_to_the_prepared_workspace_and_touches_a_label() {
    let tmp = tempfile::tempdir().unwrap();
    for inc in self_contained() {
        let Some(FixSource::Patch(patch_rel)) = &inc.manifest.fix else {
            panic!("{}: self-contained incidents carry fix.patch", inc.id());
        };
        let ws = tmp.path().join(inc.id());
        prepare_workspace(&inc, &ws, &PrepareOptions::default()).unwrap();
        let patch = std::fs::read(inc.dir.join(patch_rel)).unwrap();
        let diff = git2::Diff::from_buffer(&patch)
            .unwrap_or_else(|e| panic!("{}: fix.patch does not parse: {e}", inc.id()));
        let repo = git2::Repository::open(&ws).unwrap();
        let mut opts = git2::ApplyOptions::new();
        opts.check(true);
        repo.apply(&diff, git2::ApplyLocation::WorkDir, Some(&mut opts))
            .unwrap_or_else(|e| panic!("{}: fix.patch does not apply: {e}", inc.id()));

        let labels = inc.load_labels().unwrap();
        let touched = touched_old_lines(&String::from_utf8_lossy(&patch));
        let hit = labels.blocks.iter().any(|b| {
            touched
                .iter()
                .any(|(p, l)| *p == b.path && (b.start_line..=b.end_line).contains(l))
        });
        assert!(
            hit,
            "{}: the fix touches no labeled block (touched {touched:?})",
            inc.id()
        );
    }
}

#[test]
fn the_corpus_has_the_promised_breadth() {
    let incs = self_contained();
    let languages: BTreeSet<_> = incs.iter().map(|i| i.manifest.language.clone()).collect();
    let named = incs
        .iter()
        .filter(|i| i.manifest.has_tag("causal-method-named"))
        .count();
    assert!(
        named * 3 <= incs.len(),
        "at most a third of the reports may name the causal method"
    );
    for i in &incs {
        let trace_tags = ["internal-stack-trace", "no-internal-stack-trace"]
            .iter()
            .filter(|t| i.manifest.has_tag(t))
            .count();
        assert_eq!(
            trace_tags,
            1,
            "{}: exactly one of internal-stack-trace / no-internal-stack-trace",
            i.id()
        );
        let labels = i.load_labels().unwrap();
        assert!(
            (1..=3).contains(&labels.blocks.len()),
            "{}: 1 to 3 labeled blocks",
            i.id()
        );
    }
    assert!(
        incs.len() >= 12,
        "at least 12 self-contained incidents, found {}",
        incs.len()
    );
    assert!(
        languages.len() >= 6,
        "at least 6 languages, found {languages:?}"
    );
}

#[test]
fn the_hunk_reader_finds_replaced_and_inserted_lines() {
    let patch = "--- a/x.rs\n+++ b/x.rs\n@@ -10,3 +10,3 @@\n a\n-b\n+c\n d\n@@ -20,2 +20,3 @@\n e\n+f\n g\n";
    let t = touched_old_lines(patch);
    assert!(t.contains(&("x.rs".to_string(), 11)));
    assert!(t.contains(&("x.rs".to_string(), 20)) && t.contains(&("x.rs".to_string(), 21)));
}

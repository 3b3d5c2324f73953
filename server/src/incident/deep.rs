//! The deep check of an incident against its code at the buggy revision: every label range,
//! every stack frame of the evidence, (for git-url incidents) that the fix commit's first
//! parent is the buggy commit, and notes where the labels or the evidence disagree with the
//! fix. Git-url incidents are checked only when the repository cache holds the buggy commit;
//! the check never uses the network.

use super::fix_notes;
use super::frames::{find_frames, Frame};
use super::problem::Problem;
use super::repo_cache;
use super::{FixSource, Incident, RepositorySource};
use crate::util::paths::{normalize_rel, unsafe_rel_path_reason};
use crate::util::text::line_count;
use git2::{Oid, Repository};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// What the deep check of one incident found.
#[derive(Debug)]
pub enum DeepOutcome {
    /// The code was at hand and was checked.
    Checked(DeepFindings),
    /// The repository cache lacks the buggy commit (the sentence says which and where).
    NotCached(String),
}

#[derive(Debug, Default)]
pub struct DeepFindings {
    pub problems: Vec<Problem>,
    /// Frames that name a file of the repository and were checked.
    pub frames_checked: usize,
    /// Frames of files outside the repository (JDK, Go runtime, libraries): skipped.
    pub frames_external: usize,
    /// JVM frames whose line was checked for a call of the frame above.
    pub calls_checked: usize,
    /// Things that could not be checked although the buggy commit is cached (e.g. a fix
    /// commit a shallow fetch did not bring); not errors.
    pub notes: Vec<String>,
}

/// The source tree at the buggy revision, from the incident folder or the repository cache.
enum Source {
    Tree(PathBuf),
    Git(Repository, Oid),
}

impl Source {
    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        self.read_checked(rel).ok().flatten()
    }

    /// `Ok(None)` when the tree has no such file; an error when it has the file but its
    /// content is not in the cache (a partial clone without that blob).
    fn read_checked(&self, rel: &str) -> Result<Option<Vec<u8>>, String> {
        match self {
            Source::Tree(root) => {
                // A link that leads out of the tree counts as absent.
                let (Ok(base), Ok(real)) = (root.canonicalize(), root.join(rel).canonicalize())
                else {
                    return Ok(None);
                };
                if !real.starts_with(&base) || !real.is_file() {
                    return Ok(None);
                }
                Ok(std::fs::read(real).ok())
            }
            Source::Git(repo, oid) => {
                let tree = repo
                    .find_commit(*oid)
                    .and_then(|c| c.tree())
                    .map_err(|e| format!("cannot read the tree of {oid}: {e}"))?;
                let Ok(entry) = tree.get_path(Path::new(rel)) else {
                    return Ok(None);
                };
                match repo.find_blob(entry.id()) {
                    Ok(blob) => Ok(Some(blob.content().to_vec())),
                    Err(_) => Err(format!(
                        "the content of {rel} ({}) is not in the repository cache (a partial clone?)",
                        entry.id()
                    )),
                }
            }
        }
    }

    /// Every file path of the tree, `/`-separated, relative to its root.
    fn file_paths(&self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        match self {
            Source::Tree(root) => walk_dir(root, "", &mut out)?,
            Source::Git(repo, oid) => {
                let tree = repo
                    .find_commit(*oid)
                    .and_then(|c| c.tree())
                    .map_err(|e| format!("cannot read the tree of {oid}: {e}"))?;
                tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
                    if entry.kind() == Some(git2::ObjectType::Blob) {
                        out.push(format!("{dir}{}", entry.name().unwrap_or("")));
                    }
                    git2::TreeWalkResult::Ok
                })
                .map_err(|e| format!("cannot walk the tree of {oid}: {e}"))?;
            }
        }
        Ok(out)
    }
}

fn walk_dir(root: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), String> {
    let dir = root.join(prefix);
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        let rel = format!("{prefix}{name}");
        let ft = entry.file_type().map_err(|e| format!("{rel}: {e}"))?;
        if ft.is_dir() {
            walk_dir(root, &format!("{rel}/"), out)?;
        } else if ft.is_file() {
            out.push(rel);
        }
    }
    Ok(())
}

/// Runs the deep check of `incident` (its manifest already loaded and valid).
pub fn deep_check(incident: &Incident) -> DeepOutcome {
    let m = &incident.manifest;
    let source = match &m.repository {
        RepositorySource::Path(p) => Source::Tree(incident.dir.join(p)),
        RepositorySource::Git { url, commit } => {
            match repo_cache::ensure_commit(url, commit, true) {
                Ok((repo, oid)) => Source::Git(repo, oid),
                Err(e) => return DeepOutcome::NotCached(e),
            }
        }
    };
    let mut findings = DeepFindings::default();
    check_labels(incident, &source, &mut findings.problems);
    match source.file_paths() {
        Ok(paths) => check_frames(incident, &source, &paths, &mut findings),
        Err(e) => findings
            .problems
            .push(Problem::new(&incident.dir, "repository", e)),
    }
    if let (Source::Git(repo, oid), Some(FixSource::Commit(fix))) = (&source, &m.fix) {
        check_fix_commit(incident, repo, *oid, fix, &mut findings);
    }
    note_against_the_fix(incident, &source, &mut findings.notes);
    DeepOutcome::Checked(findings)
}

/// Compares the fix (its commit in the cache, or `fix.patch`) with the labels and the
/// evidence; a fix that cannot be read adds nothing here (the other checks report why).
fn note_against_the_fix(incident: &Incident, source: &Source, notes: &mut Vec<String>) {
    let changes = match (source, &incident.manifest.fix) {
        (Source::Git(repo, buggy), Some(FixSource::Commit(fix))) => Oid::from_str(fix)
            .ok()
            .and_then(|fix| fix_notes::of_commits(repo, *buggy, fix).ok()),
        (_, Some(FixSource::Patch(rel))) => std::fs::read(incident.dir.join(rel))
            .ok()
            .and_then(|patch| fix_notes::of_patch(&patch).ok()),
        _ => None,
    };
    let Some(changes) = changes else { return };
    if let Ok(labels) = incident.load_labels() {
        notes.extend(fix_notes::note_untouched_labels(
            incident, &labels, &changes,
        ));
    }
    let mut quoted = fix_notes::quoted_fix_messages(incident, &changes);
    if !quoted.is_empty() {
        // A message the fix adds in one file may be printed by another the fix leaves alone.
        let paths = source.file_paths().unwrap_or_default();
        for path in &paths {
            let Some(bytes) = source.read(path) else {
                continue;
            };
            let text = fix_notes::join_split_literals(&String::from_utf8_lossy(&bytes));
            quoted.retain(|(_, message)| !text.contains(message.as_str()));
            if quoted.is_empty() {
                break;
            }
        }
    }
    notes.extend(fix_notes::note_quoted_messages(incident, &quoted));
}

/// Every labeled file exists at the buggy revision and every range ends inside it.
fn check_labels(incident: &Incident, source: &Source, problems: &mut Vec<Problem>) {
    let file = incident.labels_path();
    let labels = match incident.load_labels() {
        Ok(l) => l,
        Err(p) => return problems.push(p),
    };
    for (i, b) in labels.blocks.iter().enumerate() {
        if unsafe_rel_path_reason(&b.path).is_some() {
            continue; // the shape check reports it
        }
        let rel = normalize_rel(&b.path);
        let content = match source.read_checked(&rel) {
            Ok(c) => c,
            Err(e) => {
                problems.push(Problem::new(&file, format!("blocks[{i}].path"), e));
                continue;
            }
        };
        let Some(content) = content else {
            problems.push(Problem::new(
                &file,
                format!("blocks[{i}].path"),
                format!("{rel} does not exist in the repository at the buggy revision"),
            ));
            continue;
        };
        let lines = line_count(&content);
        // A start after the end is the shape check's to report; here only the file's length.
        if b.end_line > lines {
            problems.push(Problem::new(
                &file,
                format!("blocks[{i}].end_line"),
                format!(
                    "{} is past the end of {rel}, which has {lines} lines at the buggy revision",
                    b.end_line
                ),
            ));
        }
    }
}

/// Every frame that names a file of the repository points at a line inside that file. A
/// frame whose file the repository does not have is external and skipped.
fn check_frames(
    incident: &Incident,
    source: &Source,
    paths: &[String],
    findings: &mut DeepFindings,
) {
    let mut by_name: HashMap<&str, Vec<&str>> = HashMap::new();
    for p in paths {
        let name = p.rsplit('/').next().unwrap_or(p);
        by_name.entry(name).or_default().push(p);
    }
    let mut line_counts: HashMap<String, Result<u32, String>> = HashMap::new();
    for name in &incident.manifest.evidence {
        let path = incident.dir.join(name);
        let Ok(text) = super::read_text_lossy(&path) else {
            continue; // the shape check reports a missing evidence file
        };
        // The previous frame when it was the project's, on the line just above: its caller
        // (this frame) should call it on the line the trace names.
        let mut callee: Option<(Frame, usize)> = None;
        for frame in find_frames(&text) {
            let candidates = if frame.known_external {
                Vec::new()
            } else {
                matching_files(&frame, &by_name)
            };
            if candidates.is_empty() {
                findings.frames_external += 1;
                callee = None;
                continue;
            }
            findings.frames_checked += 1;
            if let (Some((below, at)), [file]) = (callee.take(), candidates.as_slice()) {
                if at + 1 == frame.evidence_line {
                    note_missing_call(incident, name, source, file, &frame, &below, findings);
                }
            }
            callee = Some((frame.clone(), frame.evidence_line));
            if frame.line == 0 {
                continue; // some runtimes print line 0 for generated code
            }
            let mut longest: Option<(&str, u32)> = None;
            for c in &candidates {
                let counted = line_counts.entry(c.to_string()).or_insert_with(|| {
                    source
                        .read_checked(c)
                        .map(|b| b.map_or(0, |b| line_count(&b)))
                });
                match counted {
                    Ok(n) if longest.is_none_or(|(_, m)| *n > m) => longest = Some((c, *n)),
                    Ok(_) => {}
                    Err(e) => {
                        findings.notes.push(format!(
                            "{}: frame {} not checked: {e}",
                            incident.id(),
                            frame.text
                        ));
                        longest = None;
                        break;
                    }
                }
            }
            if let (Some((file, n)), 1) = (longest, candidates.len()) {
                if frame.line <= n {
                    note_unlikely_line(incident, name, source, file, &frame, findings);
                }
            }
            if let Some((file, n)) = longest.filter(|(_, n)| frame.line > *n) {
                let also = if candidates.len() > 1 {
                    format!(" (the longest of {} files it could name)", candidates.len())
                } else {
                    String::new()
                };
                findings.problems.push(Problem::new(
                    &path,
                    format!("line {}", frame.evidence_line),
                    format!(
                        "frame {} points past the end of {file}{also}, which has {n} lines at the buggy revision",
                        frame.text
                    ),
                ));
            }
        }
    }
}

/// Notes (not errors: a call may span lines, or go through a generated method) when the line a
/// JVM frame names does not spell the method of the frame above it, which it should be calling.
fn note_missing_call(
    incident: &Incident,
    evidence: &str,
    source: &Source,
    file: &str,
    caller: &Frame,
    callee: &Frame,
    findings: &mut DeepFindings,
) {
    let (Some(called), Some(_)) = (callee.called_name(), caller.method.as_ref()) else {
        return;
    };
    let Some(bytes) = source.read(file) else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let n = caller.line as usize;
    if n == 0 || n > lines.len() {
        return; // past the end is an error reported on its own
    }
    findings.calls_checked += 1;
    // A call split over lines is attributed to one of them: look at the line and two before.
    let window = &lines[n.saturating_sub(3)..n];
    if !window.iter().any(|l| l.contains(called.as_str())) {
        findings.notes.push(format!(
            "{}: {evidence} line {}: could not confirm that frame {} calls {called} (the frame above it): lines {}-{n} of {file} do not mention it (fine for a call through an interface such as a lambda's)",
            incident.id(),
            caller.evidence_line,
            caller.text,
            n.saturating_sub(2).max(1),
        ));
    }
}

/// Notes (not errors) for a frame inside its file whose line cannot be what the evidence
/// means: a blank or comment line (no frame stops there), or a log call site without a
/// logging call. Typically the evidence comes from another build than the buggy revision.
fn note_unlikely_line(
    incident: &Incident,
    evidence: &str,
    source: &Source,
    file: &str,
    frame: &Frame,
    findings: &mut DeepFindings,
) {
    let Some(bytes) = source.read(file) else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let n = frame.line as usize;
    let Some(code) = lines.get(n.wrapping_sub(1)).map(|l| l.trim()) else {
        return;
    };
    let what = if code.is_empty() {
        Some("is blank".to_string())
    } else if ["//", "/*", "* ", "#"].iter().any(|c| code.starts_with(c)) || code == "*" {
        Some("is a comment".to_string())
    } else if frame.log_call_site {
        // A logging call may span lines: the call site is its first or last line.
        let window = &lines[n.saturating_sub(3)..n.min(lines.len())];
        let logs = |l: &&str| {
            let l = l.to_ascii_lowercase();
            [
                "info", "warn", "error", "debug", "fatal", "panic", "trace!", "log!", "log::",
                "logger", "printf", "println",
            ]
            .iter()
            .any(|w| l.contains(w))
        };
        (!window.iter().any(logs)).then(|| "holds no logging call".to_string())
    } else {
        None
    };
    if let Some(what) = what {
        findings.notes.push(format!(
            "{}: {evidence} line {}: frame {} is inside {file}, but its line {what} at the buggy revision (evidence from another build?)",
            incident.id(),
            frame.evidence_line,
            frame.text
        ));
    }
}

/// The repository files a frame can name: those sharing the longest run of trailing path
/// components with it, when that run is long enough for the frame's kind.
fn matching_files<'a>(frame: &Frame, by_name: &HashMap<&str, Vec<&'a str>>) -> Vec<&'a str> {
    let Some(name) = frame.components.last() else {
        return Vec::new();
    };
    let Some(same_name) = by_name.get(name.as_str()) else {
        return Vec::new();
    };
    let mut best: BTreeMap<usize, Vec<&'a str>> = BTreeMap::new();
    for p in same_name {
        let shared = p
            .split('/')
            .rev()
            .zip(frame.components.iter().rev())
            .take_while(|(a, b)| a == &b.as_str())
            .count();
        best.entry(shared).or_default().push(p);
    }
    match best.pop_last() {
        Some((shared, files)) if shared >= frame.min_match => files,
        _ => Vec::new(),
    }
}

/// The fix commit is in the cache and its first parent is the buggy commit.
fn check_fix_commit(
    incident: &Incident,
    repo: &Repository,
    buggy: Oid,
    fix: &str,
    findings: &mut DeepFindings,
) {
    let manifest = incident.dir.join("incident.json");
    let Ok(fix_oid) = Oid::from_str(fix) else {
        return; // the shape check reports a malformed id
    };
    let Ok(commit) = repo.find_commit(fix_oid) else {
        findings.notes.push(format!(
            "{}: fix commit {fix} is not in the repository cache, so its parent was not checked",
            incident.id()
        ));
        return;
    };
    match commit.parent_id(0) {
        Ok(parent) if parent == buggy => {}
        Ok(parent) => findings.problems.push(Problem::new(
            &manifest,
            "fix.commit",
            format!(
                "the first parent of {fix} is {parent}, expected the buggy commit {buggy} (repository.commit)"
            ),
        )),
        Err(_) => findings.problems.push(Problem::new(
            &manifest,
            "fix.commit",
            format!("{fix} has no parent; expected the buggy commit {buggy} as its first parent"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn frames_are_checked_against_the_tree_and_calls_against_the_frame_above() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("inc");
        write(
            &dir,
            "incident.json",
            r#"{"id":"inc","system":"S","language":"java","category":"logic","tags":[],
            "repository":{"path":"repo"},"evidence":["evidence/a.log"]}"#,
        );
        write(&dir, "report.md", "it broke\n");
        write(
            &dir,
            "labels.json",
            r#"{"blocks":[{"path":"src/x/A.java","start_line":5,"end_line":12}]}"#,
        );
        write(
            &dir,
            "repo/src/x/A.java",
            "class A {\n  void outer() {\n    inner();\n  }\n  void inner() {\n    throw new RuntimeException();\n  }\n  void other() {\n    nothing();\n  }\n}\n",
        );
        write(
            &dir,
            "evidence/a.log",
            "java.lang.RuntimeException\n\
             \tat x.A.inner(A.java:6)\n\
             \tat x.A.outer(A.java:3)\n\
             \tat x.A.other(A.java:9)\n\
             \tat x.A.gone(A.java:99)\n\
             \tat java.lang.Thread.run(Thread.java:833)\n\
             \tat y.B.run(B.java:1)\n",
        );
        let inc = Incident::load(&dir).unwrap();
        let DeepOutcome::Checked(f) = deep_check(&inc) else {
            panic!("a self-contained incident is always checked");
        };
        assert_eq!((f.frames_checked, f.frames_external), (4, 2), "{f:?}");
        let problems: Vec<String> = f.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(problems[0].ends_with("labels.json: blocks[0].end_line: 12 is past the end of src/x/A.java, which has 11 lines at the buggy revision"), "{problems:#?}");
        assert!(
            problems[1]
                .contains("a.log: line 5: frame A.java:99 points past the end of src/x/A.java"),
            "{problems:#?}"
        );
        // outer calls inner on line 3; other does not call outer on lines 7-9.
        assert_eq!(f.calls_checked, 2, "{f:?}");
        assert_eq!(f.notes.len(), 1, "{:?}", f.notes);
        assert!(
            f.notes[0].contains("frame A.java:9 calls outer"),
            "{:?}",
            f.notes
        );
    }

    #[test]
    fn frames_on_comments_blank_lines_or_log_sites_without_logging_are_noted() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("inc");
        write(
            &dir,
            "incident.json",
            r#"{"id":"inc","system":"S","language":"go","category":"logic","tags":[],
            "repository":{"path":"repo"},"evidence":["evidence/a.log"]}"#,
        );
        write(&dir, "report.md", "it broke\n");
        write(
            &dir,
            "labels.json",
            r#"{"blocks":[{"path":"server/x.go","start_line":4,"end_line":7}]}"#,
        );
        write(
            &dir,
            "repo/server/x.go",
            "package x\n\n// comment\nfunc f() {\n\tlg.Warn(\"boom\")\n\ty := 1\n}\n",
        );
        write(
            &dir,
            "evidence/a.log",
            "{\"level\":\"warn\",\"caller\":\"server/x.go:5\",\"msg\":\"boom\"}\n\
             {\"level\":\"warn\",\"caller\":\"server/x.go:6\",\"msg\":\"boom\"}\n\
             {\"level\":\"warn\",\"caller\":\"server/x.go:4\",\"msg\":\"boom\"}\n\
             \t/build/server/x.go:3 +0x1d\n\
             \t/build/server/x.go:2 +0x1d\n\
             \t/build/server/x.go:6 +0x1d\n",
        );
        let inc = Incident::load(&dir).unwrap();
        let DeepOutcome::Checked(f) = deep_check(&inc) else {
            panic!("a self-contained incident is always checked");
        };
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        assert_eq!(f.frames_checked, 6);
        let notes: Vec<&str> = f.notes.iter().map(String::as_str).collect();
        assert_eq!(notes.len(), 3, "{notes:#?}");
        assert!(notes[0].contains("line 3: frame server/x.go:4 is inside server/x.go, but its line holds no logging call"), "{notes:#?}");
        assert!(notes[1].contains("line 4: frame build/server/x.go:3 is inside server/x.go, but its line is a comment"), "{notes:#?}");
        assert!(
            notes[2].contains(
                "line 5: frame build/server/x.go:2 is inside server/x.go, but its line is blank"
            ),
            "{notes:#?}"
        );
    }

    #[test]
    fn a_fix_patch_is_compared_with_the_labels_and_the_evidence() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("inc");
        write(
            &dir,
            "incident.json",
            r#"{"id":"inc","system":"S","language":"python","category":"logic","tags":[],
            "repository":{"path":"repo"},"evidence":["evidence/a.log"],
            "fix":{"patch":"fix.patch"}}"#,
        );
        write(&dir, "report.md", "leases vanish\n");
        write(
            &dir,
            "labels.json",
            r#"{"blocks":[{"path":"lease.py","start_line":2,"end_line":2},
                          {"path":"lease.py","start_line":5,"end_line":5}]}"#,
        );
        write(
            &dir,
            "repo/lease.py",
            "def expire(now, deadline):\n    if now > deadline:\n        log(\"lease gone\")\n\n    x = 1\n",
        );
        write(
            &dir,
            "fix.patch",
            "--- a/lease.py\n+++ b/lease.py\n@@ -2,2 +2,2 @@\n-    if now > deadline:\n-        log(\"lease gone\")\n+    if now >= deadline:\n+        log(\"lease expired at its deadline\")\n",
        );
        write(
            &dir,
            "evidence/a.log",
            "INFO lease expired at its deadline\n",
        );
        let inc = Incident::load(&dir).unwrap();
        let DeepOutcome::Checked(f) = deep_check(&inc) else {
            panic!("a self-contained incident is always checked");
        };
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        assert_eq!(f.notes.len(), 2, "{:#?}", f.notes);
        assert!(
            f.notes[0].contains("blocks[1] (lease.py:5-5) touches no line the fix changes"),
            "{:#?}",
            f.notes
        );
        assert!(
            f.notes[1].contains("evidence/a.log quotes \"lease expired at its deadline\""),
            "{:#?}",
            f.notes
        );
    }
}

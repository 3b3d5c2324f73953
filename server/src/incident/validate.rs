//! Whole-incident validation (docs/incident-format.md): every file, every field, and every label checked
//! against the source tree. All problems are collected, not just the first.

use super::labels::Labels;
use super::manifest::{FixSource, Manifest, RepositorySource};
use super::problem::Problem;
use super::repo_cache;
use crate::util::paths::unsafe_rel_path_reason;
use crate::util::text::line_count;
use std::path::{Path, PathBuf};

/// Validates the incident folder `dir` and returns every problem found (empty when valid).
/// Problems of `labels.json` are reported even when `incident.json` has problems of its own.
pub fn validate_incident(dir: &Path) -> Vec<Problem> {
    let (checked, mut problems) = check_manifest(dir);
    let labels_file = dir.join("labels.json");
    if !labels_file.is_file() {
        problems.push(Problem::new(
            &labels_file,
            "",
            "missing; every incident needs its labeled causal blocks",
        ));
        return problems;
    }
    let (labels, label_problems) = Labels::load_all(&labels_file);
    problems.extend(label_problems);
    if let Some(labels) = labels {
        if labels.blocks.is_empty() {
            problems.push(Problem::new(
                &labels_file,
                "blocks",
                "is empty; expected at least one labeled causal block",
            ));
        }
        if let Some((m, repo_dir)) = &checked {
            check_labels_against_source(
                m,
                repo_dir.as_deref(),
                &labels_file,
                &labels,
                &mut problems,
            );
        }
    }
    problems
}

/// The checks of `incident.json` that every command runs before it uses an incident (the
/// manifest's fields; the id against the folder; report, evidence, repository folder and
/// fix patch inside the incident, through no link that leaves it, and never naming what an
/// agent must not see). Returns the manifest and the repository folder when it could be read.
pub fn check_manifest(dir: &Path) -> (Option<(Manifest, Option<PathBuf>)>, Vec<Problem>) {
    let manifest_file = dir.join("incident.json");
    if !manifest_file.is_file() {
        return (
            None,
            vec![Problem::new(
                &manifest_file,
                "",
                "missing; every incident folder needs an incident.json",
            )],
        );
    }
    let (manifest, mut problems) = Manifest::load_all(&manifest_file);
    let Some(m) = manifest else {
        return (None, problems);
    };
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !folder.is_empty() && m.id != folder {
        problems.push(Problem::new(
            &manifest_file,
            "id",
            format!("{:?} differs from the folder name {folder:?}", m.id),
        ));
    }
    let hidden = HiddenFiles::of(dir, &m);
    let mut inside = |rel: &str, location: &str, what: &str, want_dir: bool| -> Option<PathBuf> {
        let full = match inside_incident(dir, rel, what, want_dir) {
            Ok(full) => full,
            Err(why) => {
                problems.push(Problem::new(&manifest_file, location, why));
                return None;
            }
        };
        if let Some(why) = hidden.exposed_by(&full, want_dir) {
            problems.push(Problem::new(&manifest_file, location, why));
            return None;
        }
        Some(full)
    };
    let repo_dir = match &m.repository {
        RepositorySource::Path(p) => inside(p, "repository.path", "repository folder", true),
        RepositorySource::Git { .. } => None,
    };
    inside(&m.report, "report", "report", false);
    for (i, e) in m.evidence.iter().enumerate() {
        inside(e, &format!("evidence[{i}]"), "evidence file", false);
    }
    if let Some(FixSource::Patch(p)) = &m.fix {
        if let Err(why) = inside_incident(dir, p, "fix patch", false) {
            problems.push(Problem::new(&manifest_file, "fix.patch", why));
        }
    }
    (Some((m, repo_dir)), problems)
}

/// `dir/rel` when `rel` is a safe relative path to an existing file (or folder) that stays
/// inside `dir` after links are resolved; else why not.
fn inside_incident(dir: &Path, rel: &str, what: &str, want_dir: bool) -> Result<PathBuf, String> {
    if let Some(why) = unsafe_rel_path_reason(rel) {
        return Err(format!("{why}; expected a path inside the incident folder"));
    }
    let full = dir.join(rel);
    let ok = if want_dir {
        full.is_dir()
    } else {
        full.is_file()
    };
    if !ok {
        return Err(format!("{what} {} does not exist", full.display()));
    }
    match (dir.canonicalize(), full.canonicalize()) {
        (Ok(base), Ok(real)) if real.starts_with(&base) => Ok(full),
        (Ok(_), Ok(_)) => Err(format!(
            "{rel:?} leaves the incident folder through a symlink"
        )),
        (Err(e), _) | (_, Err(e)) => Err(format!("{}: cannot be resolved: {e}", full.display())),
    }
}

/// The files of an incident that an agent must never see: `labels.json` and the fix patch
/// (as resolved paths and as inodes, so neither a second name nor a hard link passes).
struct HiddenFiles {
    files: Vec<(PathBuf, Option<(u64, u64)>)>,
}

impl HiddenFiles {
    fn of(dir: &Path, m: &Manifest) -> HiddenFiles {
        let mut names = vec![dir.join("labels.json")];
        if let Some(FixSource::Patch(p)) = &m.fix {
            names.push(dir.join(p));
        }
        let files = names
            .into_iter()
            .map(|p| {
                let real = p.canonicalize().unwrap_or(p);
                let inode = inode_of(&real);
                (real, inode)
            })
            .collect();
        HiddenFiles { files }
    }

    /// Why `full` (a file the agent will see, or a folder it will see all of) exposes a
    /// hidden file, if it does.
    fn exposed_by(&self, full: &Path, is_dir: bool) -> Option<String> {
        let real = full.canonicalize().ok()?;
        let inode = inode_of(&real);
        for (hidden, hidden_inode) in &self.files {
            let name = hidden
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let same = &real == hidden || (inode.is_some() && inode == *hidden_inode);
            if !is_dir && same {
                return Some(format!(
                    "names {name}, which an agent must never see; expected a file of its own"
                ));
            }
            if is_dir && hidden.starts_with(&real) {
                return Some(format!(
                    "contains {name}, which an agent must never see; expected a folder of the source tree only"
                ));
            }
        }
        None
    }
}

fn inode_of(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// Checks that every labeled file exists at the buggy revision and every range is inside it.
/// Self-contained incidents are checked against their tree; git-url incidents only when the
/// repository cache already holds the commit (validation never touches the network).
fn check_labels_against_source(
    m: &Manifest,
    repo_dir: Option<&Path>,
    labels_file: &Path,
    labels: &Labels,
    problems: &mut Vec<Problem>,
) {
    let cached = match &m.repository {
        RepositorySource::Git { url, commit } => repo_cache::ensure_commit(url, commit, true).ok(),
        RepositorySource::Path(_) => None,
    };
    if repo_dir.is_none() && cached.is_none() {
        return;
    }
    for (i, b) in labels.blocks.iter().enumerate() {
        if unsafe_rel_path_reason(&b.path).is_some() {
            continue; // already reported by the shape check
        }
        let rel = crate::util::paths::normalize_rel(&b.path);
        let content = match (&repo_dir, &cached) {
            (Some(root), _) => read_inside(root, &rel),
            (None, Some((repo, oid))) => repo_cache::read_file_at(repo, *oid, &rel),
            _ => None,
        };
        let loc = format!("blocks[{i}].path");
        let Some(content) = content else {
            problems.push(Problem::new(
                labels_file,
                loc,
                format!("{rel} does not exist in the repository at the buggy revision"),
            ));
            continue;
        };
        let lines = line_count(&content);
        if b.end_line > lines {
            problems.push(Problem::new(
                labels_file,
                format!("blocks[{i}].end_line"),
                format!(
                    "{} is past the end of {rel}, which has {lines} lines",
                    b.end_line
                ),
            ));
        }
    }
}

/// Reads `rel` under `root`, refusing anything that resolves outside `root`.
fn read_inside(root: &Path, rel: &str) -> Option<Vec<u8>> {
    let full = root.join(rel);
    let base = root.canonicalize().ok()?;
    let real = full.canonicalize().ok()?;
    if !real.starts_with(&base) || !real.is_file() {
        return None;
    }
    std::fs::read(real).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn good_incident(root: &Path) -> PathBuf {
        let dir = root.join("inc-a");
        write(
            &dir,
            "incident.json",
            r#"{"id":"inc-a","system":"S","language":"java","category":"logic","tags":[],
            "repository":{"path":"repo"},"report":"report.md","evidence":["evidence/a.log"],"fix":{"patch":"fix.patch"}}"#,
        );
        write(&dir, "report.md", "it broke\n");
        write(&dir, "evidence/a.log", "ERROR x\n");
        write(&dir, "fix.patch", "");
        write(&dir, "repo/src/A.java", "class A {\n  int x;\n}\n");
        write(
            &dir,
            "labels.json",
            r#"{"blocks":[{"path":"src/A.java","start_line":1,"end_line":3}]}"#,
        );
        dir
    }

    #[test]
    fn a_good_incident_has_no_problems() {
        let t = tempfile::tempdir().unwrap();
        let dir = good_incident(t.path());
        assert_eq!(validate_incident(&dir), vec![]);
    }

    #[test]
    fn labels_past_the_end_and_missing_files_are_named() {
        let t = tempfile::tempdir().unwrap();
        let dir = good_incident(t.path());
        write(
            &dir,
            "labels.json",
            r#"{"blocks":[{"path":"src/A.java","start_line":2,"end_line":9},{"path":"src/B.java","start_line":1,"end_line":1}]}"#,
        );
        std::fs::remove_file(dir.join("evidence/a.log")).unwrap();
        let p: Vec<String> = validate_incident(&dir)
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(p.len(), 3, "{p:#?}");
        assert!(p.iter().any(|s| s.contains("evidence[0]: evidence file")));
        assert!(p.iter().any(|s| s
            .ends_with("blocks[0].end_line: 9 is past the end of src/A.java, which has 3 lines")));
        assert!(p
            .iter()
            .any(|s| s.contains("blocks[1].path: src/B.java does not exist")));
    }

    #[test]
    fn a_repository_path_that_escapes_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let dir = good_incident(t.path());
        write(
            &dir,
            "incident.json",
            r#"{"id":"inc-a","system":"S","language":"java","category":"logic",
            "repository":{"path":"../elsewhere"},"report":"report.md"}"#,
        );
        let p: Vec<String> = validate_incident(&dir)
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert!(
            p.iter()
                .any(|s| s.contains("repository.path") && s.contains("'..'")),
            "{p:#?}"
        );
    }
}

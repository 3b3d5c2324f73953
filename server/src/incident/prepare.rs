//! `distdebug prepare`: the anonymized workspace an agent works in. The buggy tree becomes a
//! fresh git repository with exactly one commit (no history, remotes or tags), and the report
//! and evidence are copied to `.distdebug/`. Labels and the fix are never copied.

use super::repo_cache;
use super::{Incident, RepositorySource};
use git2::{IndexAddOption, Repository, RepositoryInitOptions, Signature, Time};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The folder inside a workspace that holds what the agent may read besides the code.
pub const META_DIR: &str = ".distdebug";
/// The message of the single commit of a prepared workspace.
pub const COMMIT_MESSAGE: &str = "buggy revision";

#[derive(Debug, Clone, Default)]
pub struct PrepareOptions {
    pub force: bool,
    pub offline: bool,
}

/// `.distdebug/workspace.json`: what the workspace holds, for the language server and agents.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkspaceInfo {
    pub incident: String,
    pub system: String,
    pub language: String,
    pub report: String,
    pub evidence: Vec<String>,
    pub prepared_at: String,
    pub distdebug_version: String,
}

impl WorkspaceInfo {
    /// Reads the workspace description of a prepared workspace rooted at `root`.
    pub fn load(root: &Path) -> Result<WorkspaceInfo, String> {
        let path = root.join(META_DIR).join("workspace.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a workspace description: {e}", path.display()))
    }
}

/// Builds the workspace for `incident` at `out`. The work happens in a temp folder beside
/// `out` that is renamed into place only when complete, so a failure leaves nothing behind
/// and an existing workspace is replaced (with `force`) only by a whole new one.
pub fn prepare_workspace(
    incident: &Incident,
    out: &Path,
    opts: &PrepareOptions,
) -> Result<WorkspaceInfo, String> {
    if out.is_file() {
        return Err(format!(
            "{}: is a file; expected a folder for the workspace",
            out.display()
        ));
    }
    let non_empty = out.is_dir()
        && std::fs::read_dir(out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false);
    if non_empty && !opts.force {
        return Err(format!(
            "{}: exists and is not empty; pass --force to replace it",
            out.display()
        ));
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .map_err(|e| format!("{}: cannot create: {e}", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".distdebug-prepare-")
        .tempdir_in(&parent)
        .map_err(|e| format!("{}: cannot make a temp folder: {e}", parent.display()))?;

    match &incident.manifest.repository {
        RepositorySource::Path(rel) => {
            let src = incident.dir.join(rel);
            copy_tree(&src, staging.path())?;
        }
        RepositorySource::Git { url, commit } => {
            let (repo, oid) = repo_cache::ensure_commit(url, commit, opts.offline)?;
            let left_out = write_commit_tree(&repo, oid, staging.path())?;
            if !left_out.is_empty() {
                eprintln!(
                    "{}: {} file(s) left out of the workspace, as the repository cache lacks their content (a partial clone): {}",
                    incident.id(),
                    left_out.len(),
                    left_out.join(", ")
                );
            }
        }
    }
    commit_single_revision(staging.path())?;
    let info = write_meta(incident, staging.path())?;

    let staged = staging.keep();
    if out.exists() {
        // Move the old workspace aside first so that the swap is two renames, then delete it.
        let trash = parent.join(format!(".distdebug-old-{}", std::process::id()));
        std::fs::rename(out, &trash).map_err(|e| {
            format!(
                "{}: cannot move the old workspace aside: {e}",
                out.display()
            )
        })?;
        if let Err(e) = std::fs::rename(&staged, out) {
            let _ = std::fs::rename(&trash, out);
            let _ = std::fs::remove_dir_all(&staged);
            return Err(format!(
                "{}: cannot move the new workspace into place: {e}",
                out.display()
            ));
        }
        let _ = std::fs::remove_dir_all(&trash);
    } else if let Err(e) = std::fs::rename(&staged, out) {
        let _ = std::fs::remove_dir_all(&staged);
        return Err(format!(
            "{}: cannot move the new workspace into place: {e}",
            out.display()
        ));
    }
    Ok(info)
}

/// Copies a source tree without following symlinks (a link is copied as a link, so one that
/// points outside the tree cannot pull outside files in). `.git` folders are skipped.
fn copy_tree(src: &Path, dst: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(src)
        .map_err(|e| format!("{}: cannot read the source tree: {e}", src.display()))?;
    if !meta.is_dir() {
        return Err(format!(
            "{}: expected a folder with the source tree",
            src.display()
        ));
    }
    let entries =
        std::fs::read_dir(src).map_err(|e| format!("{}: cannot list: {e}", src.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: cannot list: {e}", src.display()))?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let from = entry.path();
        let to = dst.join(&name);
        let ft = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", from.display()))?;
        if ft.is_symlink() {
            let target = std::fs::read_link(&from)
                .map_err(|e| format!("{}: cannot read link: {e}", from.display()))?;
            make_symlink(&target, &to)
                .map_err(|e| format!("{}: cannot copy link: {e}", to.display()))?;
        } else if ft.is_dir() {
            std::fs::create_dir(&to)
                .map_err(|e| format!("{}: cannot create: {e}", to.display()))?;
            copy_tree(&from, &to)?;
        } else if ft.is_file() {
            std::fs::copy(&from, &to)
                .map_err(|e| format!("{}: cannot copy: {e}", from.display()))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn make_symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Ok(()) // links are dropped where the platform cannot make them without privileges
}

/// Writes the tree of `commit` from the cache into `dst` (files, executables and links;
/// submodules are left out, as they would need their own repositories). Returns the files
/// left out because the cache lacks their content: a cache filled from a partial mirror may
/// miss a few large blobs (data files), which should not make the whole workspace fail.
fn write_commit_tree(
    repo: &Repository,
    commit: git2::Oid,
    dst: &Path,
) -> Result<Vec<String>, String> {
    let mut left_out: Vec<String> = Vec::new();
    let odb = repo
        .odb()
        .map_err(|e| format!("cannot open the object database: {e}"))?;
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(|e| format!("cannot read the tree of {commit}: {e}"))?;
    let mut failure: Option<String> = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let name = entry.name().unwrap_or("");
        let rel = Path::new(dir).join(name);
        let to = dst.join(&rel);
        let result = match entry.kind() {
            Some(git2::ObjectType::Tree) => std::fs::create_dir_all(&to).map_err(|e| e.to_string()),
            Some(git2::ObjectType::Blob) if !odb.exists(entry.id()) => {
                left_out.push(rel.to_string_lossy().replace('\\', "/"));
                Ok(())
            }
            Some(git2::ObjectType::Blob) => repo
                .find_blob(entry.id())
                .map_err(|e| e.to_string())
                .and_then(|blob| {
                    if entry.filemode() == 0o120000 {
                        let target = String::from_utf8_lossy(blob.content()).into_owned();
                        make_symlink(Path::new(&target), &to).map_err(|e| e.to_string())
                    } else {
                        std::fs::write(&to, blob.content()).map_err(|e| e.to_string())?;
                        set_executable(&to, entry.filemode() == 0o100755).map_err(|e| e.to_string())
                    }
                }),
            _ => Ok(()),
        };
        match result {
            Ok(()) => git2::TreeWalkResult::Ok,
            Err(e) => {
                failure = Some(format!("{}: cannot write: {e}", to.display()));
                git2::TreeWalkResult::Abort
            }
        }
    })
    .map_err(|e| {
        failure
            .clone()
            .unwrap_or_else(|| format!("cannot walk the tree of {commit}: {e}"))
    })?;
    match failure {
        Some(f) => Err(f),
        None => Ok(left_out),
    }
}

#[cfg(unix)]
fn set_executable(path: &Path, exec: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if exec {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn set_executable(_path: &Path, _exec: bool) -> std::io::Result<()> {
    Ok(())
}

/// Makes `root` a git repository whose only commit holds the tree, with a neutral author and a
/// fixed date so that nothing in the history tells where the code came from.
fn commit_single_revision(root: &Path) -> Result<(), String> {
    let mut init = RepositoryInitOptions::new();
    init.initial_head("main");
    let repo = Repository::init_opts(root, &init)
        .map_err(|e| format!("{}: cannot create a git repository: {e}", root.display()))?;
    let exclude = root.join(".git/info/exclude");
    std::fs::create_dir_all(root.join(".git/info")).map_err(|e| e.to_string())?;
    std::fs::write(&exclude, format!("/{META_DIR}/\n"))
        .map_err(|e| format!("{}: {e}", exclude.display()))?;
    let mut index = repo.index().map_err(|e| e.to_string())?;
    index
        .add_all(
            ["*"].iter(),
            IndexAddOption::DEFAULT | IndexAddOption::FORCE,
            None,
        )
        .map_err(|e| format!("cannot add the tree to the index: {e}"))?;
    index.write().map_err(|e| e.to_string())?;
    let tree_id = index
        .write_tree()
        .map_err(|e| format!("cannot write the tree: {e}"))?;
    let tree = repo.find_tree(tree_id).map_err(|e| e.to_string())?;
    let when = Time::new(946_684_800, 0); // 2000-01-01T00:00:00Z
    let sig =
        Signature::new("distdebug", "distdebug@localhost", &when).map_err(|e| e.to_string())?;
    repo.commit(Some("HEAD"), &sig, &sig, COMMIT_MESSAGE, &tree, &[])
        .map_err(|e| format!("cannot commit the buggy revision: {e}"))?;
    Ok(())
}

/// Copies the report and evidence into `.distdebug/` and writes `workspace.json`.
fn write_meta(incident: &Incident, root: &Path) -> Result<WorkspaceInfo, String> {
    let meta = root.join(META_DIR);
    std::fs::create_dir_all(meta.join("evidence"))
        .map_err(|e| format!("{}: {e}", meta.display()))?;
    let report = incident.load_report().map_err(|p| p.to_string())?;
    std::fs::write(meta.join("report.md"), report)
        .map_err(|e| format!("{}: {e}", meta.display()))?;
    let mut evidence = Vec::new();
    for file in incident.load_evidence().map_err(|p| p.to_string())? {
        let name = Path::new(&file.name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "evidence.txt".to_string());
        let mut rel = format!("{META_DIR}/evidence/{name}");
        let mut n = 1;
        while evidence.contains(&rel) {
            n += 1;
            rel = format!("{META_DIR}/evidence/{n}-{name}");
        }
        std::fs::write(root.join(&rel), file.text).map_err(|e| format!("{rel}: {e}"))?;
        evidence.push(rel);
    }
    let m = &incident.manifest;
    let info = WorkspaceInfo {
        incident: m.id.clone(),
        system: m.system.clone(),
        language: m.language.clone(),
        report: format!("{META_DIR}/report.md"),
        evidence,
        prepared_at: crate::util::now_rfc3339(),
        distdebug_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    crate::util::fs::write_json_atomic(&meta.join("workspace.json"), &info)
        .map_err(|e| format!("{}: {e}", meta.display()))?;
    Ok(info)
}

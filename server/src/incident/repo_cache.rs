//! The bare-repository cache for git-url incidents: one bare clone per upstream repository,
//! reused across runs, fetched only when it lacks the buggy commit.

use git2::{Oid, Repository};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cache root: `$DISTDEBUG_REPO_CACHE`, else `~/.cache/distdebug/repos`.
pub fn cache_root() -> PathBuf {
    if let Some(v) = std::env::var_os("DISTDEBUG_REPO_CACHE").filter(|v| !v.is_empty()) {
        return PathBuf::from(v);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache/distdebug/repos")
}

/// `<root>/<host>/<owner>/<name>.git` for a URL such as `https://github.com/owner/name.git`;
/// local paths and `file://` URLs go under `<root>/local/…`.
pub fn cache_path(root: &Path, url: &str) -> PathBuf {
    let (host, rest) = if let Some(rest) = url.strip_prefix("file://") {
        ("local".to_string(), rest.to_string())
    } else if let Some((_, after)) = url.split_once("://") {
        let after = after.rsplit_once('@').map(|(_, h)| h).unwrap_or(after);
        match after.split_once('/') {
            Some((host, path)) => (
                host.split(':').next().unwrap_or(host).to_string(),
                path.to_string(),
            ),
            None => (after.to_string(), String::new()),
        }
    } else if let Some((userhost, path)) = url.split_once(':').filter(|(h, _)| h.contains('@')) {
        // scp-like `git@host:owner/name.git`
        let host = userhost
            .rsplit_once('@')
            .map(|(_, h)| h)
            .unwrap_or(userhost);
        (host.to_string(), path.to_string())
    } else {
        ("local".to_string(), url.to_string())
    };
    let mut path = root.join(sanitize(&host));
    let parts: Vec<&str> = rest
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    for (i, part) in parts.iter().enumerate() {
        let mut part = sanitize(part);
        if i + 1 == parts.len() && !part.ends_with(".git") {
            part.push_str(".git");
        }
        path.push(part);
    }
    if parts.is_empty() {
        path.push("repo.git");
    }
    path
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Opens the cached bare repository for `url` and makes sure it holds `commit`, fetching it
/// when allowed. With `offline`, a missing commit is an error that says what is missing.
pub fn ensure_commit(url: &str, commit: &str, offline: bool) -> Result<(Repository, Oid), String> {
    let path = cache_path(&cache_root(), url);
    let oid = Oid::from_str(commit).map_err(|e| format!("{commit:?} is not a commit id: {e}"))?;
    if let Ok(repo) = Repository::open_bare(&path) {
        if repo.find_commit(oid).is_ok() {
            return Ok((repo, oid));
        }
    }
    if offline {
        return Err(format!(
            "commit {commit} of {url} is not in the repository cache at {} and --offline forbids fetching it",
            path.display()
        ));
    }
    std::fs::create_dir_all(&path)
        .map_err(|e| format!("cannot create the repository cache {}: {e}", path.display()))?;
    let repo = match Repository::open_bare(&path) {
        Ok(r) => r,
        Err(_) => Repository::init_bare(&path)
            .map_err(|e| format!("cannot create a bare repository at {}: {e}", path.display()))?,
    };
    fetch_into(&repo, &path, url, commit)?;
    repo.find_commit(oid)
        .map_err(|_| format!("fetched {url} but it has no commit {commit}"))?;
    Ok((repo, oid))
}

/// Fetches every branch (and, failing that, the commit itself) from `url`. Local repositories
/// go through libgit2; network URLs through the `git` program, since the vendored libgit2 is
/// built without TLS.
fn fetch_into(repo: &Repository, path: &Path, url: &str, commit: &str) -> Result<(), String> {
    let is_network = url.contains("://") && !url.starts_with("file://") || url.contains('@');
    if !is_network {
        let mut remote = repo
            .remote_anonymous(url)
            .map_err(|e| format!("cannot use {url}: {e}"))?;
        remote
            .fetch(&["+refs/heads/*:refs/heads/*"], None, None)
            .map_err(|e| format!("cannot fetch {url}: {}", e.message()))?;
        return Ok(());
    }
    let git = |args: &[&str]| -> Result<(), String> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(path)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run git to fetch {url}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git fetch from {url} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    // Fetching the one commit is quick where the server allows it (GitHub does); else all branches.
    if git(&["fetch", "--no-tags", "--filter=blob:none", url, commit]).is_ok()
        && repo
            .find_commit(Oid::from_str(commit).map_err(|e| e.to_string())?)
            .is_ok()
    {
        return Ok(());
    }
    git(&["fetch", "--no-tags", url, "+refs/heads/*:refs/heads/*"])
}

/// The bytes of `path` at `commit`, or `None` when the file does not exist there.
pub fn read_file_at(repo: &Repository, commit: Oid, path: &str) -> Option<Vec<u8>> {
    let tree = repo.find_commit(commit).ok()?.tree().ok()?;
    let entry = tree.get_path(Path::new(path)).ok()?;
    let blob = repo.find_blob(entry.id()).ok()?;
    Some(blob.content().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_paths_follow_host_owner_name() {
        let root = Path::new("/c");
        assert_eq!(
            cache_path(root, "https://github.com/apache/zookeeper.git"),
            Path::new("/c/github.com/apache/zookeeper.git")
        );
        assert_eq!(
            cache_path(root, "https://github.com/etcd-io/raft"),
            Path::new("/c/github.com/etcd-io/raft.git")
        );
        assert_eq!(
            cache_path(root, "git@github.com:tikv/raft-rs.git"),
            Path::new("/c/github.com/tikv/raft-rs.git")
        );
        assert_eq!(
            cache_path(root, "/tmp/x/up.git"),
            Path::new("/c/local/tmp/x/up.git")
        );
        assert_eq!(
            cache_path(root, "file:///tmp/../up"),
            Path::new("/c/local/tmp/up.git")
        );
    }
}

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
            "commit {commit} of {url} is not in the repository cache at {} and --offline forbids fetching it; \
             fill the cache from a local mirror with `distdebug cache add {url} <mirror>`",
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
    fetch_into(&repo, &path, url, commit).map_err(|e| {
        format!(
            "{e}; commit {commit} is missing from the repository cache: without network, fill it \
             from a local mirror with `distdebug cache add {url} <mirror>`"
        )
    })?;
    repo.find_commit(oid)
        .map_err(|_| format!("fetched {url} but it has no commit {commit}"))?;
    Ok((repo, oid))
}

/// Fetches the commit (and, failing that, every branch) from `url`. Local paths go through
/// libgit2; URLs (`https://`, `ssh://`, `git@host:`, `file://`) through the `git` program, since
/// the vendored libgit2 is built without TLS and cannot make shallow fetches.
fn fetch_into(repo: &Repository, path: &Path, url: &str, commit: &str) -> Result<(), String> {
    let through_git = url.contains("://") || url.contains('@');
    if !through_git {
        let mut remote = repo
            .remote_anonymous(url)
            .map_err(|e| format!("cannot use {url}: {e}"))?;
        remote
            .fetch(&["+refs/heads/*:refs/heads/*"], None, None)
            .map_err(|e| format!("cannot fetch {url}: {}", e.message()))?;
        return Ok(());
    }
    eprintln!(
        "distdebug: fetching commit {} of {url} into the repository cache {} (once per commit)",
        &commit[..commit.len().min(12)],
        path.display()
    );
    // One commit with its whole tree is what a workspace needs; a shallow fetch brings just
    // that where the server allows fetching a commit by id (GitHub does). A blobless clone
    // would not do: libgit2 cannot fetch missing blobs later.
    let one = git_fetch(path, url, &["--depth=1", url, commit]);
    if one.is_ok() && Oid::from_str(commit).is_ok_and(|oid| repo.find_commit(oid).is_ok()) {
        return Ok(());
    }
    git_fetch(path, url, &[url, "+refs/heads/*:refs/heads/*"]).map_err(|e| match one {
        Err(first) => format!("{first}; fetching all branches failed too: {e}"),
        Ok(()) => e,
    })
}

/// Runs `git fetch --no-tags ARGS` in the bare repository at `path`. Git's progress display
/// goes to our stderr when it is a terminal; the last of git's messages make the error.
fn git_fetch(path: &Path, url: &str, args: &[&str]) -> Result<(), String> {
    use std::io::{IsTerminal, Read, Write};
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir")
        .arg(path)
        .args(["fetch", "--no-tags"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let show = std::io::stderr().is_terminal();
    if show {
        cmd.arg("--progress");
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run git to fetch {url}: {e}"))?;
    let mut tail: Vec<u8> = Vec::new();
    if let Some(mut err) = child.stderr.take() {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            if show {
                let _ = std::io::stderr().write_all(&buf[..n]);
            }
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 8192 {
                tail.drain(..tail.len() - 4096);
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("cannot run git to fetch {url}: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&tail);
    let last = text
        .split(['\n', '\r'])
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no message");
    Err(format!("git fetch from {url} failed: {last}"))
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

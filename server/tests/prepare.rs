//! `distdebug prepare`: one-commit anonymized workspaces from a source tree and from a git URL.

use git2::{Repository, Signature};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn distdebug(args: &[&str], cache: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(args)
        .current_dir(repo_root())
        .env("DISTDEBUG_REPO_CACHE", cache)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// Checks the invariants of every prepared workspace; returns its single commit.
fn assert_anonymized(ws: &Path) -> git2::Oid {
    let repo = Repository::open(ws).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(head.message().ok(), Some("buggy revision"));
    assert_eq!(head.parent_count(), 0, "exactly one commit, no history");
    assert_eq!(head.author().name().ok(), Some("distdebug"));
    assert_eq!(repo.remotes().unwrap().len(), 0, "no remotes");
    assert_eq!(repo.tag_names(None).unwrap().len(), 0, "no tags");
    let refs: Vec<String> = repo
        .references()
        .unwrap()
        .map(|r| r.unwrap().name().unwrap().to_string())
        .collect();
    assert_eq!(refs, vec!["refs/heads/main".to_string()]);
    assert!(ws.join(".distdebug/report.md").is_file());
    assert!(ws.join(".distdebug/workspace.json").is_file());
    for entry in walk(ws) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name != "labels.json" && name != "fix.patch",
            "leaked {}",
            entry.display()
        );
    }
    let tree = head.tree().unwrap();
    assert!(
        tree.get_name(".distdebug").is_none(),
        "the meta folder is not part of the commit"
    );
    head.id()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        out.push(e.path());
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

#[test]
fn a_path_incident_becomes_a_one_commit_repository_without_labels_or_fix() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    let (code, err) = distdebug(
        &[
            "prepare",
            "tests/fixtures/incidents/tiny-lease",
            "--out",
            ws.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert_anonymized(&ws);
    assert!(ws.join("src/lease.py").is_file());
    assert!(ws.join(".distdebug/evidence/server.log").is_file());

    // A second prepare into the same non-empty folder is refused and changes nothing…
    std::fs::write(ws.join("marker"), "mine").unwrap();
    let (code, err) = distdebug(
        &[
            "prepare",
            "tiny-lease",
            "--dir",
            "tests/fixtures/incidents",
            "--out",
            ws.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("exists and is not empty") && err.contains("--force"),
        "{err}"
    );
    assert!(ws.join("marker").is_file());
    // …unless forced, which swaps in a whole new workspace.
    let (code, err) = distdebug(
        &[
            "prepare",
            "tiny-lease",
            "--dir",
            "tests/fixtures/incidents",
            "--out",
            ws.to_str().unwrap(),
            "--force",
        ],
        t.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(!ws.join("marker").exists());
    let leftovers: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temp folders left beside the workspace: {leftovers:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_tree_is_copied_as_a_link_never_followed() {
    let t = tempfile::tempdir().unwrap();
    let inc = t.path().join("incidents/linky");
    copy_dir(
        &repo_root().join("tests/fixtures/incidents/tiny-lease"),
        &inc,
    );
    let manifest = std::fs::read_to_string(inc.join("incident.json"))
        .unwrap()
        .replace("\"tiny-lease\"", "\"linky\"");
    std::fs::write(inc.join("incident.json"), manifest).unwrap();
    std::fs::write(t.path().join("secret.txt"), "top secret").unwrap();
    std::os::unix::fs::symlink(t.path().join("secret.txt"), inc.join("repo/src/escape.txt"))
        .unwrap();
    let ws = t.path().join("ws");
    let (code, err) = distdebug(
        &[
            "prepare",
            inc.to_str().unwrap(),
            "--out",
            ws.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(code, 0, "{err}");
    let meta = std::fs::symlink_metadata(ws.join("src/escape.txt")).unwrap();
    assert!(meta.file_type().is_symlink(), "the link stays a link");
    let repo = Repository::open(&ws).unwrap();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let entry = tree.get_path(Path::new("src/escape.txt")).unwrap();
    assert_eq!(
        entry.filemode(),
        0o120000,
        "committed as a symlink, not as the secret's content"
    );
}

#[test]
fn a_git_url_incident_is_cloned_into_the_cache_and_reduced_to_one_commit() {
    let t = tempfile::tempdir().unwrap();
    // An "upstream" repository with a buggy commit, a later fix, a tag and a remote-looking branch.
    let up = t.path().join("upstream");
    let repo = Repository::init(&up).unwrap();
    let sig = Signature::now("Upstream Dev", "dev@upstream.example").unwrap();
    let commit_file = |text: &str, msg: &str, parents: &[&git2::Commit]| {
        std::fs::create_dir_all(up.join("src")).unwrap();
        std::fs::write(up.join("src/main.go"), text).unwrap();
        let mut idx = repo.index().unwrap();
        idx.add_path(Path::new("src/main.go")).unwrap();
        idx.write().unwrap();
        let tree = repo.find_tree(idx.write_tree().unwrap()).unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, msg, &tree, parents)
            .unwrap()
    };
    let first = commit_file("package main\n", "initial", &[]);
    let buggy = commit_file(
        "package main\n\nfunc f() int { return 1 }\n",
        "add f (ISSUE-42 precursor)",
        &[&repo.find_commit(first).unwrap()],
    );
    let fix = commit_file(
        "package main\n\nfunc f() int { return 2 }\n",
        "ISSUE-42: fix f",
        &[&repo.find_commit(buggy).unwrap()],
    );
    repo.tag_lightweight("v1.0", &repo.find_object(fix, None).unwrap(), false)
        .unwrap();

    let inc = t.path().join("incidents/up-1");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(
        inc.join("incident.json"),
        format!(
            r#"{{"id":"up-1","system":"Up","language":"go","category":"logic","tags":["upstream"],
            "repository":{{"url":"{}","commit":"{buggy}"}},"report":"report.md","evidence":[],"fix":{{"commit":"{fix}"}}}}"#,
            up.display()
        ),
    )
    .unwrap();
    std::fs::write(inc.join("report.md"), "f returns the wrong value\n").unwrap();
    std::fs::write(
        inc.join("labels.json"),
        r#"{"blocks":[{"path":"src/main.go","start_line":3,"end_line":3}]}"#,
    )
    .unwrap();
    let cache = t.path().join("cache");

    // Offline with an empty cache: refused, saying what is missing.
    let ws = t.path().join("ws");
    let (code, err) = distdebug(
        &[
            "prepare",
            inc.to_str().unwrap(),
            "--out",
            ws.to_str().unwrap(),
            "--offline",
        ],
        &cache,
    );
    assert_eq!(code, 1);
    assert!(
        err.contains(&buggy.to_string()) && err.contains("--offline"),
        "{err}"
    );
    assert!(!ws.exists(), "a failed prepare leaves nothing behind");

    let (code, err) = distdebug(
        &[
            "prepare",
            inc.to_str().unwrap(),
            "--out",
            ws.to_str().unwrap(),
        ],
        &cache,
    );
    assert_eq!(code, 0, "{err}");
    assert_anonymized(&ws);
    assert_eq!(
        std::fs::read_to_string(ws.join("src/main.go")).unwrap(),
        "package main\n\nfunc f() int { return 1 }\n"
    );
    let ws_repo = Repository::open(&ws).unwrap();
    assert!(
        ws_repo.find_commit(fix).is_err(),
        "the fix is not reachable from the workspace"
    );
    assert!(
        ws_repo.find_commit(buggy).is_err(),
        "not even the upstream id of the buggy revision"
    );

    // The cache now holds the commit: offline works, and validation can check labels against it.
    let ws2 = t.path().join("ws2");
    let (code, err) = distdebug(
        &[
            "prepare",
            inc.to_str().unwrap(),
            "--out",
            ws2.to_str().unwrap(),
            "--offline",
        ],
        &cache,
    );
    assert_eq!(code, 0, "{err}");
    std::fs::write(
        inc.join("labels.json"),
        r#"{"blocks":[{"path":"src/main.go","start_line":3,"end_line":7}]}"#,
    )
    .unwrap();
    let (code, err) = distdebug(&["incidents", "validate", inc.to_str().unwrap()], &cache);
    assert_eq!(code, 1);
    assert!(
        err.contains("7 is past the end of src/main.go, which has 3 lines"),
        "{err}"
    );
}

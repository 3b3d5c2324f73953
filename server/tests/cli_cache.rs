//! `distdebug cache add/list` from a local mirror, and `incidents validate --deep` against the
//! cache it fills: label ranges, evidence stack frames and the fix commit's first parent.

use git2::{Oid, Repository, Signature};
use std::path::Path;
use std::process::Command;

const URL: &str = "https://example.invalid/acme/widget.git";

/// Runs `distdebug ARGS` with the repository cache at `cache`.
fn distdebug(cache: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(args)
        .env("DISTDEBUG_REPO_CACHE", cache)
        .env_remove("DISTDEBUG_INCIDENTS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn commit_file(repo: &Repository, path: &str, text: &str, parents: &[Oid], msg: &str) -> Oid {
    let blob = repo.blob(text.as_bytes()).unwrap();
    let mut dirs: Vec<&str> = path.split('/').collect();
    let name = dirs.pop().unwrap();
    let mut tb = repo.treebuilder(None).unwrap();
    tb.insert(name, blob, 0o100644).unwrap();
    let mut tree = tb.write().unwrap();
    for d in dirs.iter().rev() {
        let mut tb = repo.treebuilder(None).unwrap();
        tb.insert(d, tree, 0o040000).unwrap();
        tree = tb.write().unwrap();
    }
    let tree = repo.find_tree(tree).unwrap();
    let sig = Signature::now("t", "t@example.invalid").unwrap();
    let parents: Vec<_> = parents
        .iter()
        .map(|p| repo.find_commit(*p).unwrap())
        .collect();
    let refs: Vec<_> = parents.iter().collect();
    repo.commit(None, &sig, &sig, msg, &tree, &refs).unwrap()
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// An incident on `URL` at `buggy` with `fix`, labels on lines 2-3 and one evidence file.
fn incident(root: &Path, id: &str, buggy: Oid, fix: Oid, evidence: &str) {
    let dir = root.join(id);
    write(
        &dir,
        "incident.json",
        &format!(
            r#"{{"id":"{id}","system":"Widget","language":"java","category":"logic","tags":["upstream"],
            "repository":{{"url":"{URL}","commit":"{buggy}"}},"evidence":["evidence/a.log"],
            "fix":{{"commit":"{fix}"}}}}"#
        ),
    );
    write(&dir, "report.md", "it broke\n");
    write(&dir, "evidence/a.log", evidence);
    write(
        &dir,
        "labels.json",
        r#"{"blocks":[{"path":"src/main/java/com/acme/Widget.java","start_line":2,"end_line":3}]}"#,
    );
}

#[test]
fn cache_add_fills_the_cache_from_a_mirror_and_the_deep_check_uses_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror_dir = tmp.path().join("mirror.git");
    let mirror = Repository::init_bare(&mirror_dir).unwrap();
    let path = "src/main/java/com/acme/Widget.java";
    let buggy = commit_file(
        &mirror,
        path,
        "class Widget {\n  int a;\n  int b;\n}\n",
        &[],
        "one",
    );
    let fix = commit_file(
        &mirror,
        path,
        "class Widget {\n  long a;\n  int b;\n}\n",
        &[buggy],
        "fix",
    );
    let stray = commit_file(&mirror, path, "class Widget {}\n", &[fix], "later");
    mirror
        .reference("refs/pull/7/head", fix, true, "t")
        .unwrap();
    mirror
        .reference("refs/heads/other", stray, true, "t")
        .unwrap();

    let incidents = tmp.path().join("incidents");
    let good_trace = "java.lang.IllegalStateException: boom\n\
        \tat com.acme.Widget.run(Widget.java:3)\n\
        \tat java.lang.Thread.run(Thread.java:833)\n";
    incident(&incidents, "widget-good", buggy, fix, good_trace);
    incident(
        &incidents,
        "widget-frame-past-eof",
        buggy,
        fix,
        "\tat com.acme.Widget.run(Widget.java:40)\n",
    );
    incident(
        &incidents,
        "widget-wrong-fix-parent",
        buggy,
        stray,
        good_trace,
    );
    let cache = tmp.path().join("cache");
    let dir = incidents.to_str().unwrap();

    // Before the cache holds anything, the deep check says what it could not check.
    let (code, _, err) = distdebug(&cache, &["incidents", "validate", "--deep", "--dir", dir]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("not checked deeply") && err.contains("widget-good"),
        "{err}"
    );
    let (_, out, _) = distdebug(&cache, &["cache", "list", "--dir", dir]);
    assert!(
        out.contains("widget-good: https://example.invalid/acme/widget.git is not cached"),
        "{out}"
    );

    let mirror_arg = mirror_dir.to_str().unwrap();
    let (code, out, err) = distdebug(&cache, &["cache", "add", URL, mirror_arg, "--dir", dir]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("it serves 3 incident(s); 0 of them lack their buggy commit"),
        "{out}"
    );
    let entry = cache.join("example.invalid/acme/widget.git");
    let cached = Repository::open_bare(&entry).unwrap();
    assert!(cached.find_commit(fix).is_ok());
    assert_eq!(
        cached.find_reference("refs/pull/7/head").unwrap().target(),
        Some(fix)
    );
    // Idempotent: a second add brings nothing new and still succeeds.
    let (code, out, _) = distdebug(&cache, &["cache", "add", URL, mirror_arg, "--dir", dir]);
    assert_eq!(code, 0);
    assert!(out.contains("(0 object file(s) added"), "{out}");

    let (_, out, _) = distdebug(&cache, &["cache", "list", "--dir", dir]);
    assert!(
        out.contains("example.invalid/acme/widget.git: serves 3 incident(s)"),
        "{out}"
    );
    assert!(
        out.contains("incidents without their repository in the cache: 0"),
        "{out}"
    );

    let (code, _, err) = distdebug(&cache, &["incidents", "validate", "--deep", "--dir", dir]);
    assert_eq!(code, 1, "{err}");
    let problems: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("incidents/widget-"))
        .collect();
    assert_eq!(problems.len(), 2, "{err}");
    assert!(problems.iter().any(|l| l.contains("widget-frame-past-eof/evidence/a.log: line 1: frame Widget.java:40 points past the end of src/main/java/com/acme/Widget.java")), "{err}");
    assert!(
        problems.iter().any(|l| l
            .contains("widget-wrong-fix-parent/incident.json: fix.commit: the first parent of")),
        "{err}"
    );
    assert!(
        err.contains("3 incident(s) checked against their code"),
        "{err}"
    );
    assert!(!err.contains("not checked deeply"), "{err}");

    let (code, _, err) = distdebug(
        &cache,
        &[
            "incidents",
            "validate",
            "--deep",
            &format!("{dir}/widget-good"),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("(1 stack frame(s) in the project checked, 1 outside it skipped, "),
        "{err}"
    );
}

#[test]
fn cache_add_refuses_what_is_not_a_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = distdebug(
        &tmp.path().join("cache"),
        &["cache", "add", URL, tmp.path().to_str().unwrap()],
    );
    assert_eq!(code, 1);
    assert!(err.contains("not a git repository"), "{err}");
}

/// The first `prepare` of a git-url incident fetches the one commit into the cache (through
/// the `git` program, as for a network URL); offline, the error names the commit and says how
/// to fill the cache without network.
#[test]
fn first_prepare_fetches_the_commit_and_offline_names_cache_add() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror_dir = tmp.path().join("up.git");
    let mirror = Repository::init_bare(&mirror_dir).unwrap();
    let path = "src/main/java/com/acme/Widget.java";
    let buggy = commit_file(
        &mirror,
        path,
        "class Widget {\n  int a;\n  int b;\n}\n",
        &[],
        "one",
    );
    let fix = commit_file(
        &mirror,
        path,
        "class Widget {\n  long a;\n  int b;\n}\n",
        &[buggy],
        "fix",
    );
    mirror.reference("refs/heads/main", fix, true, "t").unwrap();
    // A local server refuses to hand out a commit that is not a branch tip unless told to.
    mirror
        .config()
        .unwrap()
        .set_bool("uploadpack.allowAnySHA1InWant", true)
        .unwrap();
    let url = format!("file://{}", mirror_dir.display());
    let incidents = tmp.path().join("incidents");
    incident(&incidents, "widget-good", buggy, fix, "ok\n");
    let manifest = incidents.join("widget-good/incident.json");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace(URL, &url);
    std::fs::write(&manifest, text).unwrap();
    let cache = tmp.path().join("cache");
    let inc = incidents.join("widget-good");
    let inc = inc.to_str().unwrap();
    let ws = tmp.path().join("ws");
    let ws = ws.to_str().unwrap();

    let (code, _, err) = distdebug(&cache, &["prepare", inc, "--out", ws, "--offline"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "commit {buggy} of {url} is not in the repository cache"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("distdebug cache add {url} <mirror>")),
        "{err}"
    );

    let (code, _, err) = distdebug(&cache, &["prepare", inc, "--out", ws]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("fetching commit"), "{err}");
    let text = std::fs::read_to_string(Path::new(ws).join(path)).unwrap();
    assert!(
        text.contains("int a;"),
        "the buggy revision, not the fix: {text}"
    );
    // Now cached: offline works and the fetch is not repeated.
    let (code, _, err) = distdebug(
        &cache,
        &["prepare", inc, "--out", ws, "--offline", "--force"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("fetching commit"), "{err}");

    // The shallow fetch lacks the fix commit: the deep check says so and does not fail.
    let entry = cache
        .join("local")
        .join(mirror_dir.strip_prefix("/").unwrap());
    assert!(entry.join("shallow").is_file(), "{}", entry.display());
    let (code, _, err) = distdebug(&cache, &["incidents", "validate", "--deep", inc]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("fix commit {fix} is not in the repository cache")),
        "{err}"
    );
    // Adding the whole mirror brings the history and lifts the shallow boundary.
    let (code, out, err) = distdebug(
        &cache,
        &["cache", "add", &url, mirror_dir.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with(&format!("updated {}", entry.display())),
        "{out}"
    );
    assert!(!entry.join("shallow").exists());
    let (code, _, err) = distdebug(&cache, &["incidents", "validate", "--deep", inc]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note:"), "{err}");
}

/// `demo` runs the upstream incidents whose commit is cached and counts the others as skipped.
#[test]
fn demo_runs_cached_upstream_incidents_and_counts_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror_dir = tmp.path().join("mirror.git");
    let mirror = Repository::init_bare(&mirror_dir).unwrap();
    let path = "src/main/java/com/acme/Widget.java";
    let buggy = commit_file(
        &mirror,
        path,
        "class Widget {\n  int a;\n  int b;\n}\n",
        &[],
        "one",
    );
    let fix = commit_file(
        &mirror,
        path,
        "class Widget {\n  long a;\n  int b;\n}\n",
        &[buggy],
        "fix",
    );
    mirror.reference("refs/heads/main", fix, true, "t").unwrap();
    let incidents = tmp.path().join("incidents");
    incident(
        &incidents,
        "widget-cached",
        buggy,
        fix,
        "Widget a overflowed\n",
    );
    incident(
        &incidents,
        "widget-elsewhere",
        buggy,
        fix,
        "Widget a overflowed\n",
    );
    let manifest = incidents.join("widget-elsewhere/incident.json");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace(URL, "https://example.invalid/acme/other.git");
    std::fs::write(&manifest, text).unwrap();
    let cache = tmp.path().join("cache");
    let dir = incidents.to_str().unwrap();
    let (code, out, err) = distdebug(
        &cache,
        &[
            "cache",
            "add",
            URL,
            mirror_dir.to_str().unwrap(),
            "--dir",
            dir,
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("it serves 1 incident(s)"),
        "only those of its URL: {out}"
    );

    let results = tmp.path().join("results");
    let (code, out, err) = distdebug(
        &cache,
        &["demo", "--dir", dir, "--out", results.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("skipped 1 upstream incident(s)"), "{out}");
    assert!(out.contains("distdebug cache add"), "{out}");
    assert!(results.join("widget-cached/attempt-1").is_dir(), "{out}");
    assert!(!results.join("widget-elsewhere").exists(), "{out}");
}

/// A cache entry that has a file in its tree but not its content (a partial clone) is
/// reported as such, not as a missing file or a frame past the end.
#[test]
fn a_blob_missing_from_the_cache_is_named_as_missing_content() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror_dir = tmp.path().join("mirror.git");
    let mirror = Repository::init_bare(&mirror_dir).unwrap();
    let path = "src/main/java/com/acme/Widget.java";
    let text = "class Widget {\n  int a;\n  int b;\n}\n";
    let buggy = commit_file(&mirror, path, text, &[], "one");
    let fix = commit_file(&mirror, path, "class Widget {}\n", &[buggy], "fix");
    mirror.reference("refs/heads/main", fix, true, "t").unwrap();
    let incidents = tmp.path().join("incidents");
    incident(
        &incidents,
        "widget-partial",
        buggy,
        fix,
        "\tat com.acme.Widget.run(Widget.java:3)\n",
    );
    let cache = tmp.path().join("cache");
    let (code, _, err) = distdebug(&cache, &["cache", "add", URL, mirror_dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let blob = Oid::hash_object(git2::ObjectType::Blob, text.as_bytes())
        .unwrap()
        .to_string();
    let loose = cache
        .join("example.invalid/acme/widget.git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    std::fs::remove_file(&loose).unwrap();
    let (code, _, err) = distdebug(
        &cache,
        &[
            "incidents",
            "validate",
            "--deep",
            incidents.join("widget-partial").to_str().unwrap(),
        ],
    );
    assert!(
        err.contains(&format!(
            "the content of {path} ({blob}) is not in the repository cache"
        )),
        "{err}"
    );
    assert!(!err.contains("past the end"), "{err}");
    assert_eq!(code, 1, "the label cannot be checked: {err}");
    assert!(
        !err.contains("does not exist"),
        "the file exists, its content is missing: {err}"
    );
}

/// `cache add` says which incidents of the URL the mirror cannot serve, and fails.
#[test]
fn cache_add_names_the_incidents_whose_commit_the_mirror_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror_dir = tmp.path().join("mirror.git");
    let mirror = Repository::init_bare(&mirror_dir).unwrap();
    let path = "src/main/java/com/acme/Widget.java";
    let buggy = commit_file(&mirror, path, "class Widget {\n}\n", &[], "one");
    mirror
        .reference("refs/heads/main", buggy, true, "t")
        .unwrap();
    let incidents = tmp.path().join("incidents");
    let absent = Oid::from_str("0123456789abcdef0123456789abcdef01234567").unwrap();
    incident(&incidents, "widget-elsewhen", absent, absent, "ok\n");
    let cache = tmp.path().join("cache");
    let dir = incidents.to_str().unwrap();
    let (code, out, err) = distdebug(
        &cache,
        &[
            "cache",
            "add",
            URL,
            mirror_dir.to_str().unwrap(),
            "--dir",
            dir,
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!("widget-elsewhen: commit {absent} is not in")),
        "{out}"
    );
    assert!(
        err.contains("is it a mirror of https://example.invalid/acme/widget.git"),
        "{err}"
    );
    let (_, out, _) = distdebug(&cache, &["cache", "list", "--dir", dir]);
    assert!(
        out.contains(&format!("widget-elsewhen: {URL} lacks commit {absent}")),
        "{out}"
    );
}

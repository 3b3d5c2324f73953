//! The `incidents list` / `incidents validate` commands against good and broken incidents.

mod cli_support;
use cli_support::distdebug;

use std::process::Command;

#[test]
fn the_fixture_incidents_are_valid_and_listed() {
    let (code, _, err) = distdebug(&["incidents", "validate", "--dir", "tests/fixtures/incidents"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = distdebug(&["incidents", "list", "--dir", "tests/fixtures/incidents"]);
    assert_eq!(code, 0);
    assert!(
        out.lines()
            .any(|l| l == "tiny-lease\tTinyLease\tpython\tlogic\t1"),
        "{out}"
    );
}

#[test]
fn the_bundled_incidents_are_valid() {
    let (code, _, err) = distdebug(&["incidents", "validate"]);
    assert_eq!(code, 0, "{err}");
}

/// Each broken incident has exactly one broken thing; validate reports each of them, one a line.
#[test]
fn every_broken_incident_is_reported_with_file_location_and_expectation() {
    let expected = [
        ("bad-commit", "incident.json: repository.commit: \"not-a-commit\" is not a 40-hex commit id"),
        ("bad-json", "incident.json: line 2 column 0: invalid JSON"),
        ("empty-labels", "labels.json: blocks: is empty"),
        ("escaping-repo-path", "incident.json: repository.path: "),
        ("id-mismatch", "incident.json: id: \"some-other-id\" differs from the folder name \"id-mismatch\""),
        ("label-end-before-start", "labels.json: blocks[0].end_line: 3 is before start_line 13"),
        ("label-missing-file", "labels.json: blocks[0].path: src/leases.py does not exist"),
        ("label-past-eof", "labels.json: blocks[0].end_line: 99 is past the end of src/lease.py, which has 24 lines"),
        ("missing-evidence", "incident.json: evidence[0]: evidence file"),
        ("missing-labels", "labels.json: missing"),
        ("unknown-category", "incident.json: category: \"cosmic-rays\" is not a category"),
        ("wrong-type-tags", "incident.json: tags: expected an array of strings, found a string"),
    ];
    let (code, out, err) = distdebug(&["incidents", "validate", "--dir", "tests/broken-incidents"]);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "errors go to stderr, not stdout: {out}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.len(),
        expected.len(),
        "one error a line, all reported:\n{err}"
    );
    for (dir, want) in expected {
        let prefix = format!("tests/broken-incidents/{dir}/");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&prefix) && l.contains(want)),
            "missing {dir}: {want}\n{err}"
        );
    }
}

#[test]
fn validating_one_path_reports_only_that_incident() {
    let (code, _, err) = distdebug(&[
        "incidents",
        "validate",
        "tests/broken-incidents/label-past-eof",
        "tests/fixtures/incidents/tiny-lease",
    ]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, _) = distdebug(&["incidents", "frobnicate"]);
    assert_eq!(code, 2);
}

/// `distdebug incidents list | head -1` ends quietly, as `ls | head` does, without a panic.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_listing_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    // More incidents than a pipe buffer holds, so the listing is still writing when the
    // reader goes away.
    let t = tempfile::tempdir().unwrap();
    for i in 0..3000 {
        let d = t.path().join(format!("incident-{i:05}"));
        std::fs::create_dir(&d).unwrap();
        let m = format!(
            r#"{{"id":"incident-{i:05}","system":"S","language":"go","category":"logic","repository":{{"path":"repo"}}}}"#
        );
        std::fs::write(d.join("incident.json"), m).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(["incidents", "list", "--dir"])
        .arg(t.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here: the pipe is closed while the listing may still be writing.
    let out = child.wait_with_output().unwrap();
    assert!(!first.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// Problems of labels.json are reported even when incident.json has problems of its own.
#[test]
fn validate_reports_manifest_and_label_problems_together() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("both-bad");
    std::fs::create_dir_all(d.join("repo")).unwrap();
    std::fs::write(
        d.join("incident.json"),
        r#"{"id":"both-bad","system":"S","language":"go","category":"weird","repository":{"path":"repo"}}"#,
    )
    .unwrap();
    std::fs::write(d.join("report.md"), "r").unwrap();
    std::fs::write(
        d.join("labels.json"),
        r#"{"blocks":[{"path":"a.go","start_line":9,"end_line":3}]}"#,
    )
    .unwrap();
    let (code, _, err) = distdebug(&["incidents", "validate", d.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("incident.json: category"), "{err}");
    assert!(err.contains("labels.json: blocks[0].end_line"), "{err}");
}

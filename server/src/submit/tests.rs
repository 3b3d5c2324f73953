//! Packing a results tree and checking packages, honest and tampered.

use super::manifest::{sha256_hex, Manifest, ROOT};
use super::*;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

fn incidents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("tests/fixtures/incidents")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `attempts` attempts on tiny-lease: 1 names the label, 2 is not schema-valid, 3 reads
/// labels.json (flagged); the rest name the label.
fn results(root: &Path, attempts: u32) -> PathBuf {
    let cfg = root.join("results/cfg");
    write(
        &cfg.join("run.json"),
        &json!({"agent": "llm", "model": "m-1", "harness": "distdebug-llm",
                "endpoint_host": "localhost:8000", "settings": {"temperature": 0},
                "distdebug_version": "0.1.0", "started_at": "s", "finished_at": "f"})
        .to_string(),
    );
    for k in 1..=attempts {
        let dir = cfg.join(format!("tiny-lease/attempt-{k}"));
        let diag = if k == 2 {
            "{\"blocks\": [{\"path\": \"/abs\", \"start_line\": 1, \"end_line\": 2}]}".to_string()
        } else {
            json!({"incident": "tiny-lease", "blocks": [{"path": "src/lease.py", "start_line": 13, "end_line": 18}]}).to_string()
        };
        write(&dir.join("diagnosis.json"), &diag);
        let steps = if k == 3 {
            json!([{"index": 0, "kind": "action", "tool": "bash", "args": {"command": "cat ../labels.json"}}])
        } else {
            json!([])
        };
        write(
            &dir.join("trajectory.json"),
            &json!({"incident": "tiny-lease", "attempt": k, "agent": "llm", "exit": "submitted",
                    "usage": {"prompt_tokens": 1000 * k as u64, "completion_tokens": 10, "cost_usd": 0.25},
                    "steps": steps})
            .to_string(),
        );
    }
    cfg
}

fn packed(root: &Path) -> PathBuf {
    let cfg = results(root, 3);
    let out = root.join("out/submission.tar.gz");
    pack(&cfg, &incidents_dir(), &out, &PackOptions { attempts: 3 }).unwrap();
    out
}

/// The entries of a package: (path, data, entry type).
type Entries = Vec<(Vec<u8>, Vec<u8>, tar::EntryType)>;

fn entries(pkg: &Path) -> Entries {
    let f = std::fs::File::open(pkg).unwrap();
    let mut a = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let mut out = Vec::new();
    for e in a.entries().unwrap() {
        let mut e = e.unwrap();
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        out.push((e.path_bytes().to_vec(), data, e.header().entry_type()));
    }
    out
}

/// Writes entries as they are, without the checks `tar::Builder` applies to paths, so a test
/// can make the archives an attacker would.
fn repack(pkg: &Path, entries: &Entries) {
    let f = std::fs::File::create(pkg).unwrap();
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
        f,
        flate2::Compression::fast(),
    ));
    for (path, data, kind) in entries {
        let mut h = tar::Header::new_gnu();
        let name = &mut h.as_old_mut().name;
        name[..path.len()].copy_from_slice(path);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(*kind);
        if *kind == tar::EntryType::Symlink {
            h.set_link_name("/etc/passwd").unwrap();
        }
        h.set_cksum();
        b.append(&h, data.as_slice()).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap().flush().unwrap();
}

fn get<'a>(e: &'a mut Entries, rel: &str) -> &'a mut Vec<u8> {
    let path = format!("{ROOT}/{rel}");
    &mut e.iter_mut().find(|x| x.0 == path.as_bytes()).unwrap().1
}

/// Rewrites the manifest after a change, so only the change under test is left to find.
fn edit_manifest(e: &mut Entries, f: impl FnOnce(&mut Manifest)) {
    let m = get(e, "manifest.json");
    let mut manifest: Manifest = serde_json::from_slice(m).unwrap();
    f(&mut manifest);
    *m = serde_json::to_vec(&manifest).unwrap();
}

/// Recomputes every checksum in the manifest (a careful tamperer would).
fn fix_checksums(e: &mut Entries) {
    let sums: Vec<(String, String, u64)> = e
        .iter()
        .map(|(p, d, _)| {
            let p = String::from_utf8(p.clone()).unwrap();
            let rel = p.strip_prefix("submission/").unwrap_or(&p).to_string();
            (rel, sha256_hex(d), d.len() as u64)
        })
        .collect();
    edit_manifest(e, |m| {
        for f in &mut m.files {
            if let Some((_, s, n)) = sums.iter().find(|(r, _, _)| *r == f.path) {
                f.sha256 = s.clone();
                f.bytes = *n;
            }
        }
    });
}

fn problems(pkg: &Path) -> String {
    let r = check_package(pkg, 3);
    assert!(!r.passed(), "the check passed a bad package");
    r.problems.join("\n")
}

#[test]
fn a_package_holds_every_attempt_and_passes_its_check() {
    let root = tempfile::tempdir().unwrap();
    let cfg = results(root.path(), 3);
    let out = root.path().join("out/submission.tar.gz");
    let s = pack(&cfg, &incidents_dir(), &out, &PackOptions { attempts: 3 }).unwrap();
    assert_eq!(
        (s.incidents, s.attempts, s.flagged, s.not_schema_valid),
        (1, 3, 1, 1)
    );
    assert_eq!(s.usage.prompt_tokens, 6000);
    assert_eq!(s.usage.completion_tokens, 30);
    assert!((s.usage.cost_usd - 0.75).abs() < 1e-12);
    // 3 x (diagnosis, trajectory, leakage) + run.json + manifest.json
    assert_eq!(s.files, 11);

    let r = check_package(&out, 3);
    assert!(r.passed(), "{:?}", r.problems);
    assert_eq!(r.config.as_deref(), Some("cfg"));
    assert_eq!(
        (r.incidents, r.attempts, r.flagged, r.not_schema_valid),
        (1, 3, 1, 1)
    );

    let mut e = entries(&out);
    let names: Vec<String> = e
        .iter()
        .map(|x| String::from_utf8(x.0.clone()).unwrap())
        .collect();
    assert!(names.iter().all(|n| n.starts_with("submission/")));
    assert_eq!(names.last().unwrap(), "submission/manifest.json");
    let run: Value = serde_json::from_slice(get(&mut e, "run.json")).unwrap();
    assert_eq!(run["model"], "m-1");
    assert_eq!(run["endpoint_host"], "localhost:8000");
    assert_eq!(run["usage"]["prompt_tokens"], 6000);
    assert_eq!(run["usage"]["attempts"], 3);
    let leak: Value =
        serde_json::from_slice(get(&mut e, "tiny-lease/attempt-3/leakage.json")).unwrap();
    assert_eq!(leak["flagged"], true);
    assert_eq!(leak["reasons"][0]["rule"], "labels");
    let diag = get(&mut e, "tiny-lease/attempt-1/diagnosis.json").clone();
    assert_eq!(
        diag,
        std::fs::read(cfg.join("tiny-lease/attempt-1/diagnosis.json")).unwrap(),
        "files are packed byte for byte"
    );
    // A package needing more attempts than it holds fails the stricter check.
    assert!(!check_package(&out, 4).passed());
}

#[test]
fn a_changed_file_fails_its_checksum() {
    let root = tempfile::tempdir().unwrap();
    let pkg = packed(root.path());
    let mut e = entries(&pkg);
    get(&mut e, "tiny-lease/attempt-1/diagnosis.json").extend_from_slice(b" ");
    repack(&pkg, &e);
    let p = problems(&pkg);
    assert!(
        p.contains("submission/tiny-lease/attempt-1/diagnosis.json: checksum mismatch"),
        "{p}"
    );
}

#[test]
fn changes_with_recomputed_checksums_are_still_caught() {
    let root = tempfile::tempdir().unwrap();
    let pkg = packed(root.path());

    // The invalid diagnosis of attempt 2 made valid: the manifest says it was not.
    let mut e = entries(&pkg);
    *get(&mut e, "tiny-lease/attempt-2/diagnosis.json") = br#"{"blocks": []}"#.to_vec();
    fix_checksums(&mut e);
    repack(&pkg, &e);
    let p = problems(&pkg);
    assert!(
        p.contains("attempt-2/diagnosis.json: schema-valid is true, the manifest says false"),
        "{p}"
    );

    // The leakage flag of attempt 3 removed.
    let pkg2 = packed(&root.path().join("b"));
    let mut e2 = entries(&pkg2);
    *get(&mut e2, "tiny-lease/attempt-3/leakage.json") =
        br#"{"flagged": false, "reasons": []}"#.to_vec();
    fix_checksums(&mut e2);
    repack(&pkg2, &e2);
    let p = problems(&pkg2);
    assert!(p.contains("attempt-3/leakage.json: flagged false with 0 reason(s), the manifest says flagged true"), "{p}");

    // Fewer tokens claimed in run.json than the trajectories spent.
    let pkg3 = packed(&root.path().join("c"));
    let mut e3 = entries(&pkg3);
    let run = get(&mut e3, "run.json");
    let mut v: Value = serde_json::from_slice(run).unwrap();
    v["usage"]["prompt_tokens"] = json!(10);
    *run = serde_json::to_vec(&v).unwrap();
    fix_checksums(&mut e3);
    repack(&pkg3, &e3);
    let p = problems(&pkg3);
    assert!(
        p.contains("run.json: usage says 3 attempts, 10 + 30 tokens"),
        "{p}"
    );
}

#[test]
fn a_missing_attempt_or_an_extra_file_is_reported() {
    let root = tempfile::tempdir().unwrap();
    let pkg = packed(root.path());
    let mut e = entries(&pkg);
    e.retain(|x| !x.0.starts_with(b"submission/tiny-lease/attempt-3/"));
    edit_manifest(&mut e, |m| {
        m.incidents[0].attempts.pop();
        m.files
            .retain(|f| !f.path.starts_with("tiny-lease/attempt-3/"));
    });
    repack(&pkg, &e);
    let p = problems(&pkg);
    assert!(
        p.contains("tiny-lease: 2 attempt(s); a submission needs 3 per incident"),
        "{p}"
    );
    // The totals in run.json still count the dropped attempt; nothing else is wrong.
    assert!(p.contains("run.json: usage says 3 attempts"), "{p}");
    assert_eq!(p.lines().count(), 2, "{p}");

    let mut e = entries(&packed(&root.path().join("b")));
    e.insert(
        0,
        (
            b"submission/notes.txt".to_vec(),
            b"hi".to_vec(),
            tar::EntryType::Regular,
        ),
    );
    e.insert(
        0,
        (
            b"submission/tiny-lease/attempt-9/trajectory.json".to_vec(),
            b"{}".to_vec(),
            tar::EntryType::Regular,
        ),
    );
    repack(&pkg, &e);
    let p = problems(&pkg);
    assert!(
        p.contains("submission/notes.txt: not in the manifest"),
        "{p}"
    );
    assert!(
        p.contains("submission/tiny-lease/attempt-9: an attempt the manifest does not list"),
        "{p}"
    );

    // A listed file that is gone.
    let mut e = entries(&packed(&root.path().join("c")));
    e.retain(|x| x.0 != b"submission/tiny-lease/attempt-1/trajectory.json");
    repack(&pkg, &e);
    let p = problems(&pkg);
    assert!(
        p.contains("attempt-1/trajectory.json: listed in the manifest but missing"),
        "{p}"
    );
    assert!(p.contains("attempt-1/trajectory.json: missing"), "{p}");
}

#[test]
fn hostile_archives_are_refused_without_extracting() {
    let root = tempfile::tempdir().unwrap();
    let pkg = packed(root.path());
    let mut e = entries(&pkg);
    e.push((
        b"submission/../../escape.txt".to_vec(),
        b"x".to_vec(),
        tar::EntryType::Regular,
    ));
    e.push((
        b"/etc/evil".to_vec(),
        b"x".to_vec(),
        tar::EntryType::Regular,
    ));
    e.push((
        b"submission/link".to_vec(),
        Vec::new(),
        tar::EntryType::Symlink,
    ));
    repack(&pkg, &e);
    let p = problems(&pkg);
    assert!(
        p.contains("entry refused: submission/../../escape.txt: contains '.' or '..'"),
        "{p}"
    );
    assert!(p.contains("entry refused: /etc/evil: absolute"), "{p}");
    assert!(p.contains("submission/link: a Symlink entry"), "{p}");
    assert!(!root.path().join("escape.txt").exists());

    // Damage in the gzip trailer (its CRC) leaves every tar entry readable: still caught.
    let good = packed(&root.path().join("crc"));
    let mut bytes = std::fs::read(&good).unwrap();
    let n = bytes.len();
    bytes[n - 6] ^= 0xff;
    std::fs::write(&good, &bytes).unwrap();
    assert!(problems(&good).contains("the gzip stream is damaged"));

    std::fs::write(&pkg, b"not a package at all").unwrap();
    let p = problems(&pkg);
    assert!(
        p.contains("not a readable gzipped tar") || p.contains("not a gzipped tar"),
        "{p}"
    );

    // No manifest.
    let mut e = entries(&packed(&root.path().join("b")));
    e.retain(|x| x.0 != b"submission/manifest.json");
    repack(&pkg, &e);
    assert!(problems(&pkg).contains("no submission/manifest.json"));

    assert!(problems(&root.path().join("none.tar.gz")).contains("cannot open"));
}

#[test]
fn pack_refuses_incomplete_results_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("s.tar.gz");
    let opts = PackOptions { attempts: 3 };

    let cfg = results(&root.path().join("two"), 2);
    let err = pack(&cfg, &incidents_dir(), &out, &opts).unwrap_err();
    assert!(err.contains("2 attempt(s); a submission needs 3"), "{err}");

    let cfg = results(&root.path().join("unfinished"), 3);
    std::fs::remove_file(cfg.join("tiny-lease/attempt-2/trajectory.json")).unwrap();
    let err = pack(&cfg, &incidents_dir(), &out, &opts).unwrap_err();
    assert!(
        err.contains("attempt-2/trajectory.json: cannot read"),
        "{err}"
    );
    assert!(err.contains("unfinished"), "{err}");

    let cfg = results(&root.path().join("norun"), 3);
    std::fs::remove_file(cfg.join("run.json")).unwrap();
    let err = pack(&cfg, &incidents_dir(), &out, &opts).unwrap_err();
    assert!(err.contains("run.json: cannot read"), "{err}");

    let cfg = results(&root.path().join("gap"), 3);
    std::fs::rename(
        cfg.join("tiny-lease/attempt-3"),
        cfg.join("tiny-lease/attempt-4"),
    )
    .unwrap();
    let err = pack(&cfg, &incidents_dir(), &out, &opts).unwrap_err();
    assert!(
        err.contains("attempts [1, 2, 4]; expected attempt-1 to attempt-3 without gaps"),
        "{err}"
    );
    assert!(!out.exists());
    let names: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().starts_with(".distdebug-tmp")),
        "{names:?}"
    );
}

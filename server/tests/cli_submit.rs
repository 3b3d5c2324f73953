//! `distdebug submit` end to end: pack a results folder, check the package, and refuse a
//! tampered one with exit status 1. (Every kind of tampering is tested in server/src/submit/.)

mod cli_support;
use cli_support::distdebug;

use serde_json::json;

#[test]
fn pack_check_and_refuse_a_tampered_package() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("results/cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("run.json"),
        json!({"agent": "baseline", "distdebug_version": "0.1.0"}).to_string(),
    )
    .unwrap();
    for k in 1..=3 {
        let d = cfg.join(format!("tiny-lease/attempt-{k}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("diagnosis.json"),
            r#"{"blocks":[{"path":"src/lease.py","start_line":13,"end_line":18}]}"#,
        )
        .unwrap();
        std::fs::write(
            d.join("trajectory.json"),
            json!({"incident": "tiny-lease", "attempt": k, "agent": "baseline", "exit": "submitted",
                   "usage": {"prompt_tokens": 0, "completion_tokens": 0}, "steps": []})
            .to_string(),
        )
        .unwrap();
    }
    let pkg = tmp.path().join("submission.tar.gz");
    let (code, out, err) = distdebug(&[
        "submit",
        cfg.to_str().unwrap(),
        "--dir",
        "tests/fixtures/incidents",
        "--out",
        pkg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 incident(s), 3 attempt(s)"), "{out}");

    let (code, out, err) = distdebug(&["submit", "--check", pkg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(": ok: configuration cfg"), "{out}");

    // A flipped byte in the compressed stream.
    let mut bytes = std::fs::read(&pkg).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&pkg, &bytes).unwrap();
    let (code, _, err) = distdebug(&["submit", "--check", pkg.to_str().unwrap()]);
    assert_eq!(code, 1, "a corrupted package must fail: {err}");
    assert!(err.contains("submission.tar.gz: "), "{err}");

    let (code, _, _) = distdebug(&["submit", cfg.to_str().unwrap()]);
    assert_eq!(code, 2, "--out is required when packing");
}

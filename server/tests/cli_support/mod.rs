//! Shared by the command-line tests: the repository root and running the built `distdebug`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs `distdebug ARGS` from the repository root, without `$DISTDEBUG_INCIDENTS`; returns
/// the exit status, stdout and stderr.
pub fn distdebug(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_distdebug"))
        .args(args)
        .current_dir(repo_root())
        .env_remove("DISTDEBUG_INCIDENTS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

//! Atomic file writes: a temp file beside the target, flushed, then renamed over it.

use std::io::Write;
use std::path::Path;

/// Temp files are named `.distdebug-tmp-<pid>-<random>`.
pub const TEMP_PREFIX: &str = ".distdebug-tmp-";

/// A temp file in `path`'s folder (created if missing) to be persisted over `path`, for
/// writers that stream (a submission package). It gets the permissions of a file made the
/// ordinary way (0666 less the umask), not tempfile's owner-only 0600: the files written here
/// are meant to be read by others (a report, results shared on a volume).
pub fn temp_file_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut b = tempfile::Builder::new();
    // The writer's pid in the name: temp files of a writer that died can be told apart
    // (see `annotate::lock`).
    let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
    b.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir)
}

/// Writes `bytes` to `path` so that readers see either the old file or the whole new one,
/// never a half-written file. The temp file lives in the same directory so the rename stays
/// on one filesystem.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = temp_file_beside(path)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Like `write_atomic` (readers see the old file or the whole new one) but without the
/// fsync, for files derived from others that every run recomputes (`diagnosis_scores.json`):
/// thousands of fsyncs cost seconds, and a crash can only lose what the next run rewrites.
pub fn write_atomic_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = temp_file_beside(path)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Serialises `value` as two-space-indented JSON with a trailing newline and writes it atomically.
pub fn write_json_atomic<T: serde::Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"old").unwrap();
        write_atomic(&p, b"new contents").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new contents");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "temp files must not be left behind");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The same mode as a file made the ordinary way (0666 less the umask), not 0600.
            let plain = dir.path().join("plain");
            std::fs::write(&plain, b"x").unwrap();
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&p), mode(&plain));
        }
    }
}

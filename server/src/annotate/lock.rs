//! A lock file beside a file that several writers change (`labels.json.lock` beside
//! `labels.json`): created exclusively, held for one read-merge-write, removed when dropped.
//! Works across processes and editors on one machine and on shared folders, where advisory
//! locks are unreliable. A writer that died holding the lock leaves a stale file: one older
//! than `STALE` is broken.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// A lock older than this is taken to belong to a writer that died: a read-merge-write holds
/// it for milliseconds.
pub const STALE: Duration = Duration::from_secs(10);

/// How long `acquire` waits for another writer by default (longer than `STALE`, so that a
/// stale lock is always broken before a waiter gives up).
pub const WAIT: Duration = Duration::from_secs(15);

#[derive(Debug)]
pub struct FileLock {
    path: PathBuf,
}

/// The lock file of `target`: `<target>.lock` beside it.
pub fn lock_path(target: &Path) -> PathBuf {
    let mut name = target
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".lock");
    target.with_file_name(name)
}

impl FileLock {
    /// Takes the lock of `target`, waiting up to `wait` for another writer to finish.
    pub fn acquire(target: &Path, wait: Duration) -> Result<FileLock, String> {
        let path = lock_path(target);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("{}: cannot create the folder: {e}", dir.display()))?;
        }
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    // Who holds it, for the message a waiter shows when it gives up.
                    let _ = writeln!(
                        f,
                        "pid {} since {}",
                        std::process::id(),
                        crate::util::now_rfc3339()
                    );
                    return Ok(FileLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if is_stale(&path) {
                        // Another waiter may break it at the same moment: either way the
                        // file is gone and one of us creates it next.
                        let _ = std::fs::remove_file(&path);
                        continue;
                    }
                    if started.elapsed() >= wait {
                        let holder = std::fs::read_to_string(&path).unwrap_or_default();
                        return Err(format!(
                            "{}: another writer holds the lock ({}); waited {:.1} s. Remove the file if no distdebug is writing",
                            path.display(),
                            holder.trim(),
                            wait.as_secs_f64()
                        ));
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(e) => return Err(format!("{}: cannot create the lock: {e}", path.display())),
            }
        }
    }
}

fn is_stale(path: &Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > STALE)
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_waits_and_a_stale_lock_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("labels.json");
        let first = FileLock::acquire(&target, WAIT).unwrap();
        assert!(dir.path().join("labels.json.lock").is_file());
        let err = FileLock::acquire(&target, Duration::from_millis(30)).unwrap_err();
        assert!(err.contains("another writer holds the lock"), "{err}");
        drop(first);
        assert!(!dir.path().join("labels.json.lock").exists());
        let _again = FileLock::acquire(&target, Duration::from_millis(30)).unwrap();
        drop(_again);

        // A lock left by a writer that died long ago.
        let lock = lock_path(&target);
        std::fs::write(&lock, "pid 1 since long ago\n").unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let taken = FileLock::acquire(&target, Duration::from_millis(30));
        assert!(taken.is_ok(), "{taken:?}");
    }
}

//! A lock file beside a file that several writers change (`labels.json.lock` beside
//! `labels.json`): created exclusively, held for one read-merge-write, removed when dropped.
//! Works across processes and editors on one machine and on shared folders, where advisory
//! locks are unreliable. The lock names its owner (`pid <n> host <name> since <time>`): a
//! lock whose owner is a process of this machine that no longer runs is broken at once, and
//! the temp files that writer left beside the target are removed; any other lock older than
//! `STALE` (an owner on another machine, or a lock not yet written) is broken too.

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
                        "pid {} host {} since {}",
                        std::process::id(),
                        host_name(),
                        crate::util::now_rfc3339()
                    );
                    remove_dead_temp_files(&path);
                    return Ok(FileLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if owner_is_dead(&path) || is_stale(&path) {
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

/// This machine's name, as locks record it.
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match (ok, std::str::from_utf8(&buf[..end])) {
        (true, Ok(name)) if !name.is_empty() => name.to_string(),
        _ => "unknown".to_string(),
    }
}

/// The owner a lock file names: (pid, host); the host is `None` in locks of older versions.
pub fn owner(text: &str) -> Option<(u32, Option<String>)> {
    let mut words = text.split_whitespace();
    let mut pid = None;
    let mut host = None;
    while let Some(w) = words.next() {
        match w {
            "pid" => pid = words.next().and_then(|p| p.parse().ok()),
            "host" => host = words.next().map(str::to_string),
            _ => {}
        }
    }
    pid.map(|p| (p, host))
}

/// Does process `pid` of this machine still run?
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    // EPERM: it exists but belongs to someone else.
    std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Is the lock's owner a process of this machine that no longer runs?
fn owner_is_dead(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    match owner(&text) {
        Some((pid, host)) => {
            let here = host.is_none_or(|h| h == host_name());
            here && !pid_alive(pid)
        }
        None => false,
    }
}

/// Removes `.distdebug-tmp-<pid>-*` files beside the lock whose writer no longer runs (a
/// writer killed mid-write leaves them behind).
fn remove_dead_temp_files(lock: &Path) {
    let dir = match lock.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(crate::util::fs::TEMP_PREFIX))
        else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| !pid_alive(p)) {
            let _ = std::fs::remove_file(e.path());
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

    /// The pid of a process that ran and was killed with SIGKILL (and reaped).
    fn killed_pid() -> u32 {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        child.kill().unwrap();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_lock_of_a_killed_writer_is_broken_at_once_and_its_temp_files_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("labels.json");
        let dead = killed_pid();
        assert!(!pid_alive(dead));
        std::fs::write(
            lock_path(&target),
            format!("pid {dead} host {} since now\n", host_name()),
        )
        .unwrap();
        let left = dir.path().join(format!(".distdebug-tmp-{dead}-abc123"));
        std::fs::write(&left, "half a labels.json").unwrap();
        let mine = dir
            .path()
            .join(format!(".distdebug-tmp-{}-xyz", std::process::id()));
        std::fs::write(&mine, "a live writer's").unwrap();
        let t = Instant::now();
        let lock = FileLock::acquire(&target, Duration::from_secs(5)).unwrap();
        assert!(
            t.elapsed() < STALE,
            "broken at once, not after the stale age"
        );
        assert!(!left.exists(), "the dead writer's temp file is removed");
        assert!(mine.exists(), "a live writer's temp file stays");
        let text = std::fs::read_to_string(lock_path(&target)).unwrap();
        assert_eq!(
            owner(&text),
            Some((std::process::id(), Some(host_name()))),
            "{text}"
        );
        drop(lock);
    }

    #[test]
    fn a_lock_of_a_live_writer_or_another_host_is_respected_until_stale() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("labels.json");
        let mut live = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        std::fs::write(
            lock_path(&target),
            format!("pid {} host {} since now\n", live.id(), host_name()),
        )
        .unwrap();
        let err = FileLock::acquire(&target, Duration::from_millis(50)).unwrap_err();
        assert!(err.contains("another writer holds the lock"), "{err}");
        live.kill().unwrap();
        live.wait().unwrap();
        // A dead pid on another machine says nothing about this one: only age breaks it.
        let dead = killed_pid();
        std::fs::write(
            lock_path(&target),
            format!("pid {dead} host elsewhere.example since now\n"),
        )
        .unwrap();
        assert!(FileLock::acquire(&target, Duration::from_millis(50)).is_err());
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(lock_path(&target))
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(FileLock::acquire(&target, Duration::from_millis(50)).is_ok());
    }

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

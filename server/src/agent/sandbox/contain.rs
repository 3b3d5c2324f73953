//! No survivors: every process an attempt starts is put in a cgroup of its own (with a
//! process limit, which also stops fork bombs) and killed with the attempt, including those
//! that left the process group with `setsid`. Where no cgroup can be made, processes are found
//! by an environment token that their descendants inherit.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that marks every process of one attempt.
pub const TOKEN_VAR: &str = "DISTDEBUG_ATTEMPT_TOKEN";

/// The processes of one attempt. Dropping it kills whatever is still alive.
#[derive(Debug)]
pub struct Containment {
    cgroup: Option<PathBuf>,
    token: String,
    /// `cgroup.procs` of the cgroup, ready for the child to join before it execs.
    procs: Option<CString>,
}

impl Containment {
    /// A new containment allowing at most `max_pids` processes at once (when the machine's
    /// cgroups allow a limit).
    pub fn new(max_pids: u64) -> Containment {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let token = format!("{}-{}-{}", std::process::id(), n, nanos());
        let cgroup = make_cgroup(&format!("attempt-{token}"), max_pids);
        let procs = cgroup
            .as_ref()
            .and_then(|c| CString::new(c.join("cgroup.procs").as_os_str().as_encoded_bytes()).ok());
        Containment {
            cgroup,
            token,
            procs,
        }
    }

    /// Whether a cgroup holds the processes (else only the token finds them).
    pub fn has_cgroup(&self) -> bool {
        self.cgroup.is_some()
    }

    /// Makes `cmd`'s process join the containment before it runs anything.
    pub fn apply(&self, cmd: &mut tokio::process::Command) {
        cmd.env(TOKEN_VAR, &self.token);
        if let Some(procs) = self.procs.clone() {
            // SAFETY: the closure runs in the forked child before exec and only calls
            // async-signal-safe functions (getpid, open, write, close) on memory prepared
            // before the fork; it allocates nothing.
            unsafe {
                cmd.pre_exec(move || {
                    join_cgroup(&procs);
                    Ok(())
                });
            }
        }
    }

    /// Kills every process of the attempt and waits until none is left (bounded).
    pub fn kill_all(&self) {
        for _ in 0..50 {
            let mut pids = self.cgroup.as_deref().map(cgroup_pids).unwrap_or_default();
            pids.extend(token_pids(&self.token));
            pids.retain(|p| *p != std::process::id() as i32 && *p > 1);
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                // SAFETY: kill(2) on a pid we found in the attempt's cgroup or carrying its
                // token; it touches no memory.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Containment {
    fn drop(&mut self) {
        self.kill_all();
        if let Some(c) = &self.cgroup {
            let _ = std::fs::remove_dir(c);
        }
    }
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

/// A cgroup for the attempt: the v1 `pids` hierarchy when it is writable (with the limit),
/// else a child of this process's own cgroup v2 (a limit only where `pids.max` exists).
fn make_cgroup(name: &str, max_pids: u64) -> Option<PathBuf> {
    let v1 = Path::new("/sys/fs/cgroup/pids");
    let parent = if v1.join("cgroup.procs").exists() {
        v1.join("distdebug")
    } else {
        own_v2_cgroup()?.join("distdebug")
    };
    std::fs::create_dir_all(&parent).ok()?;
    let dir = parent.join(name);
    std::fs::create_dir(&dir).ok()?;
    let max = dir.join("pids.max");
    if max.exists() {
        let _ = std::fs::write(&max, max_pids.to_string());
    }
    Some(dir)
}

fn own_v2_cgroup() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let root = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        .iter()
        .map(Path::new)
        .find(|p| p.join("cgroup.procs").exists())?;
    Some(root.join(rel.trim_start_matches('/')))
}

/// Writes this process's pid into `procs` (run between fork and exec).
fn join_cgroup(procs: &CString) {
    let mut buf = [0u8; 24];
    // SAFETY: getpid has no preconditions.
    let mut pid = unsafe { libc::getpid() } as u64;
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (pid % 10) as u8;
        pid /= 10;
        if pid == 0 {
            break;
        }
    }
    // SAFETY: `procs` is a valid NUL-terminated path and `buf[i..]` a valid buffer; the file
    // descriptor is closed before returning.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::write(fd, buf[i..].as_ptr().cast(), buf.len() - i);
            libc::close(fd);
        }
    }
}

fn cgroup_pids(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Processes whose environment carries the token (descendants inherit it).
fn token_pids(token: &str) -> Vec<i32> {
    let needle = format!("{TOKEN_VAR}={token}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_process_that_left_the_group_dies_with_the_attempt() {
        let c = Containment::new(64);
        let mut cmd = tokio::process::Command::new("sh");
        // The grandchild starts its own session, as a hostile agent would.
        cmd.args(["-c", "setsid sleep 600 >/dev/null 2>&1 & echo $!"])
            .stdout(std::process::Stdio::piped());
        c.apply(&mut cmd);
        let out = cmd.output().await.unwrap();
        let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let alive = |p: i32| Path::new(&format!("/proc/{p}")).exists() && !is_zombie(p);
        assert!(alive(pid), "the survivor should run before the kill");
        drop(c);
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!alive(pid), "process {pid} survived its attempt");
    }

    fn is_zombie(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
    }
}

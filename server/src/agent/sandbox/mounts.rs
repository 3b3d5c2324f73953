//! The bubblewrap command line of one sandboxed run: a new user namespace with no
//! capabilities, and an allow-list of mounts (toolchain read-only, workspace, output, what the
//! user exposes); every other host path is absent.

use super::Network;
use std::path::{Path, PathBuf};

/// Top-level folders of the system toolchain, bound read-only when they exist (and recreated
/// as the same links where the host has links, as merged-/usr systems do).
const TOOLCHAIN_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Entries of `/etc` a toolchain needs (name lookup, TLS roots, the dynamic linker, time
/// zone, Debian's alternatives). The rest of `/etc` (shadow, ssh keys, the host's own
/// configuration) stays absent.
const ETC_ALLOWED: &[&str] = &[
    "passwd",
    "group",
    "hosts",
    "host.conf",
    "resolv.conf",
    "nsswitch.conf",
    "protocols",
    "services",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "alternatives",
    "java-17-openjdk",
    "gitconfig",
    "mime.types",
    "magic",
    "os-release",
    "debian_version",
    "terminfo",
    "inputrc",
    "bash.bashrc",
    "profile",
    "environment",
    "python3",
    "python3.11",
];

/// Inside the sandbox: the agent's empty home and the folder of the network socket.
pub const SANDBOX_HOME: &str = "/tmp/home";
pub const NET_DIR_INSIDE: &str = "/run/distdebug-net";

/// What one sandboxed run binds where. Paths keep their host names inside, so what the
/// agent records means the same outside.
#[derive(Debug, Clone)]
pub struct Mounts {
    pub workspace: PathBuf,
    pub workspace_writable: bool,
    /// The one writable folder (none for the model agent's read-only tools).
    pub output: Option<PathBuf>,
    /// Paths hidden under an empty tmpfs where they lie inside an exposed folder or the
    /// workspace (everything else is absent anyway).
    pub hide: Vec<PathBuf>,
    /// Host paths the agent may read (a venv, a harness's install, the distdebug binary).
    pub expose: Vec<PathBuf>,
    pub network: Network,
    /// The host folder of the endpoint forwarder's socket (`Network::Endpoint`), bound at
    /// [`NET_DIR_INSIDE`].
    pub net_dir: Option<PathBuf>,
}

/// The `bwrap` arguments (before `--` and the command) for `m`. Later mounts cover earlier
/// ones: the toolchain, the empty `/tmp` and home, what is exposed, the hidden paths inside
/// those, then the workspace and the output on top.
pub fn bwrap_args(m: &Mounts) -> Result<Vec<String>, String> {
    let workspace = real(&m.workspace)?;
    let mut a = Args::default();
    a.flags(&[
        "--unshare-user",
        "--uid",
        "0",
        "--gid",
        "0",
        "--cap-drop",
        "ALL",
        "--disable-userns",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
    ]);
    if m.network != Network::Host {
        a.flags(&["--unshare-net"]);
    }
    for dir in TOOLCHAIN_DIRS {
        toolchain_entry(&mut a, Path::new(dir));
    }
    for name in ETC_ALLOWED {
        let p = Path::new("/etc").join(name);
        if std::fs::symlink_metadata(&p).is_ok() {
            let s = p.to_string_lossy().into_owned();
            a.pair("--ro-bind", &s, &s);
        }
    }
    a.flags(&["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]);
    a.flags(&["--dir", SANDBOX_HOME]);
    for e in &m.expose {
        let e = real(e)?;
        a.pair("--ro-bind", &e, &e);
    }
    let bound: Vec<PathBuf> = m
        .expose
        .iter()
        .chain(std::iter::once(&m.workspace))
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    for h in &m.hide {
        let Ok(h) = h.canonicalize() else { continue };
        if !bound.iter().any(|b| h.starts_with(b)) || h == Path::new("/") {
            continue;
        }
        let s = h.to_string_lossy().into_owned();
        if h.is_dir() {
            a.flags(&["--tmpfs", &s]);
        } else {
            a.pair("--ro-bind", "/dev/null", &s);
        }
    }
    let ws_flag = if m.workspace_writable {
        "--bind"
    } else {
        "--ro-bind"
    };
    a.pair(ws_flag, &workspace, &workspace);
    if let Some(out) = &m.output {
        let out = real(out)?;
        a.pair("--bind", &out, &out);
    }
    if let Some(dir) = &m.net_dir {
        a.pair("--bind", &real(dir)?, NET_DIR_INSIDE);
    }
    // The root tmpfs that holds the mount points is made read-only last: nothing can be
    // written outside /tmp, the home and the output.
    a.flags(&["--remount-ro", "/"]);
    a.flags(&["--setenv", "HOME", SANDBOX_HOME, "--chdir", &workspace]);
    Ok(a.0)
}

/// One top-level toolchain folder: a link where the host has a link, else a read-only bind.
fn toolchain_entry(a: &mut Args, dir: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    let s = dir.to_string_lossy().into_owned();
    if meta.file_type().is_symlink() {
        if let Ok(target) = std::fs::read_link(dir) {
            a.pair("--symlink", &target.to_string_lossy(), &s);
        }
    } else if meta.is_dir() {
        a.pair("--ro-bind", &s, &s);
    }
}

fn real(p: &Path) -> Result<String, String> {
    p.canonicalize()
        .map(|c| c.to_string_lossy().into_owned())
        .map_err(|e| format!("{}: cannot be mounted in the sandbox: {e}", p.display()))
}

#[derive(Default)]
struct Args(Vec<String>);

impl Args {
    fn flags(&mut self, f: &[&str]) {
        self.0.extend(f.iter().map(|s| s.to_string()));
    }
    fn pair(&mut self, flag: &str, from: &str, to: &str) {
        self.0
            .extend([flag.to_string(), from.to_string(), to.to_string()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_capabilities_and_binds_only_what_is_allowed() {
        let d = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let ws = d.path().join("ws");
        let out = d.path().join("results/cfg/inc/attempt-2/agent");
        let venv = d.path().join("venv");
        let secret = venv.join("secret");
        for p in [&ws, &out, &secret] {
            std::fs::create_dir_all(p).unwrap();
        }
        let args = bwrap_args(&Mounts {
            workspace: ws.clone(),
            workspace_writable: false,
            output: Some(out.clone()),
            hide: vec![secret.clone(), d.path().join("results")],
            expose: vec![venv.clone()],
            network: Network::None,
            net_dir: None,
        })
        .unwrap();
        let joined = args.join(" ");
        for flag in [
            "--unshare-user",
            "--cap-drop ALL",
            "--disable-userns",
            "--unshare-net",
            "--die-with-parent",
            "--new-session",
        ] {
            assert!(joined.contains(flag), "{flag} missing: {joined}");
        }
        // No bind of the host root: only allowed folders.
        assert!(!joined.contains("--ro-bind / /"), "{joined}");
        assert!(!joined.contains("/etc/shadow"), "{joined}");
        let r = |p: &Path| p.canonicalize().unwrap().display().to_string();
        assert!(joined.contains(&format!("--ro-bind {0} {0}", r(&ws))));
        assert!(joined.contains(&format!("--bind {0} {0}", r(&out))));
        // A hidden path inside an exposed folder is covered; one outside needs nothing.
        assert!(joined.contains(&format!("--tmpfs {}", r(&secret))));
        assert!(!joined.contains(&format!("--tmpfs {}", r(&d.path().join("results")))));
        let expose_at = joined
            .find(&format!("--ro-bind {0} {0}", r(&venv)))
            .unwrap();
        let hide_at = joined.find(&format!("--tmpfs {}", r(&secret))).unwrap();
        assert!(
            expose_at < hide_at,
            "the hide must cover the exposed folder"
        );
    }

    #[test]
    fn host_network_keeps_the_namespace() {
        let d = tempfile::tempdir().unwrap();
        let args = bwrap_args(&Mounts {
            workspace: d.path().to_path_buf(),
            workspace_writable: true,
            output: None,
            hide: vec![],
            expose: vec![],
            network: Network::Host,
            net_dir: None,
        })
        .unwrap();
        assert!(!args.iter().any(|a| a == "--unshare-net"));
        assert!(args.iter().any(|a| a == "--cap-drop"));
    }
}

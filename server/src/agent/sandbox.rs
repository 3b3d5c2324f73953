//! The agent sandbox: bubblewrap (`bwrap`) runs an agent with the host's root read-only, an
//! empty `/tmp`, the workspace read-only (or a private writable copy), only its output folder
//! writable, the incidents, labels, fixes, the repository cache and other attempts' results
//! hidden under empty tmpfs mounts, its own PID namespace, and optionally no network.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Whether an external agent may reach the network (it usually must reach its model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    None,
    Host,
}

impl Network {
    pub fn parse(s: &str) -> Result<Network, String> {
        match s {
            "none" => Ok(Network::None),
            "host" => Ok(Network::Host),
            other => Err(format!("network {other:?} is not one of: none, host")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Network::None => "none",
            Network::Host => "host",
        }
    }
}

/// How agents are confined.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxPolicy {
    /// `false` when the user passed `--no-sandbox` (or `[sandbox] enabled = false`).
    pub enabled: bool,
    pub network: Network,
    /// Paths the agent must not see, besides those every sandbox hides.
    pub hide: Vec<PathBuf>,
    /// Paths under `/tmp` the agent may read.
    pub expose: Vec<PathBuf>,
}

impl Default for SandboxPolicy {
    fn default() -> SandboxPolicy {
        SandboxPolicy {
            enabled: true,
            network: Network::None,
            hide: Vec::new(),
            expose: Vec::new(),
        }
    }
}

/// The `bwrap` binary when it is installed and works here (it needs user namespaces or
/// root), probed once per process.
pub fn bwrap() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let path = std::env::var_os("PATH")?;
            let bin = std::env::split_paths(&path)
                .map(|d| d.join("bwrap"))
                .find(|p| p.is_file())?;
            let works = std::process::Command::new(&bin)
                .args([
                    "--ro-bind",
                    "/",
                    "/",
                    "--dev",
                    "/dev",
                    "--unshare-pid",
                    "--",
                    "true",
                ])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            works.then_some(bin)
        })
        .as_deref()
}

/// Says once per process that agents run unconfined or cannot run, and why.
pub fn warn_once(message: &str) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::SeqCst) {
        eprintln!("distdebug: {message}");
    }
}

/// What one sandboxed run binds where. Paths keep their host names inside, so what the
/// agent records means the same outside.
#[derive(Debug, Clone)]
pub struct Mounts {
    pub workspace: PathBuf,
    pub workspace_writable: bool,
    /// The one writable folder (none for the model agent's read-only tools).
    pub output: Option<PathBuf>,
    pub hide: Vec<PathBuf>,
    pub expose: Vec<PathBuf>,
    pub network: Network,
}

/// The paths every sandbox hides for an attempt writing into `output`
/// (`results/<config>/<incident>/attempt-k/...`): the whole results tree of the configuration
/// (other attempts) and the repository cache (full upstream history, fix commits included).
pub fn default_hidden(output: &Path) -> Vec<PathBuf> {
    let mut hide = vec![crate::incident::repo_cache::cache_root()];
    // The attempt folder is config/incident/attempt-k; hide config/.
    if let Some(config_dir) = output
        .ancestors()
        .find(|a| {
            a.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("attempt-"))
        })
        .and_then(|attempt| attempt.parent())
        .and_then(|incident| incident.parent())
    {
        hide.push(config_dir.to_path_buf());
    }
    hide
}

/// The `bwrap` arguments (before `--` and the command) for `m`. Later mounts cover earlier
/// ones: the root, then the empty `/tmp` and the hidden paths, then the workspace and the
/// output on top, so they stay reachable even when they lie inside a hidden path.
pub fn bwrap_args(m: &Mounts) -> Result<Vec<String>, String> {
    let abs = |p: &Path| -> Result<String, String> {
        p.canonicalize()
            .map(|c| c.to_string_lossy().into_owned())
            .map_err(|e| format!("{}: cannot be mounted in the sandbox: {e}", p.display()))
    };
    let workspace = abs(&m.workspace)?;
    let mut a: Vec<String> = [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for h in &m.hide {
        // Paths that do not exist need no hiding; tmp paths are already gone.
        let Ok(real) = h.canonicalize() else { continue };
        if real.starts_with("/tmp") || real == Path::new("/") {
            continue;
        }
        let real = real.to_string_lossy().into_owned();
        if Path::new(&real).is_dir() {
            a.extend(["--tmpfs".into(), real]);
        } else {
            a.extend(["--ro-bind".into(), "/dev/null".into(), real]);
        }
    }
    for e in &m.expose {
        let real = abs(e)?;
        a.extend(["--ro-bind".into(), real.clone(), real]);
    }
    let ws_flag = if m.workspace_writable {
        "--bind"
    } else {
        "--ro-bind"
    };
    a.extend([ws_flag.into(), workspace.clone(), workspace.clone()]);
    if let Some(out) = &m.output {
        let out = abs(out)?;
        a.extend(["--bind".into(), out.clone(), out]);
    }
    a.extend(
        [
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    if m.network == Network::None {
        a.push("--unshare-net".into());
    }
    a.extend(["--chdir".into(), workspace]);
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_the_results_of_the_configuration_and_binds_workspace_and_output_last() {
        let d = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let ws = d.path().join("ws");
        let out = d.path().join("results/cfg/inc/attempt-2/agent");
        let incidents = d.path().join("incidents");
        for p in [&ws, &out, &incidents] {
            std::fs::create_dir_all(p).unwrap();
        }
        let mut hide = default_hidden(&out);
        assert!(hide.contains(&d.path().join("results/cfg")), "{hide:?}");
        hide.push(incidents.clone());
        let args = bwrap_args(&Mounts {
            workspace: ws.clone(),
            workspace_writable: false,
            output: Some(out.clone()),
            hide,
            expose: vec![],
            network: Network::None,
        })
        .unwrap();
        let joined = args.join(" ");
        let cfg = d.path().join("results/cfg").canonicalize().unwrap();
        // A checkout under /tmp is hidden by the sandbox's own empty /tmp already.
        let hidden = if cfg.starts_with("/tmp") {
            PathBuf::from("/tmp")
        } else {
            cfg.clone()
        };
        let hide_at = joined
            .find(&format!("--tmpfs {}", hidden.display()))
            .unwrap();
        let out_real = out.canonicalize().unwrap();
        let out_at = joined
            .find(&format!("--bind {0} {0}", out_real.display()))
            .unwrap();
        assert!(
            hide_at < out_at,
            "the output must be bound over the hidden results: {joined}"
        );
        let ws_real = ws.canonicalize().unwrap();
        assert!(joined.contains(&format!("--ro-bind {0} {0}", ws_real.display())));
        let incidents_real = incidents.canonicalize().unwrap();
        if !incidents_real.starts_with("/tmp") {
            assert!(joined.contains(&format!("--tmpfs {}", incidents_real.display())));
        }
        assert!(joined.contains("--unshare-net") && joined.contains("--die-with-parent"));
    }

    #[test]
    fn parses_network_settings() {
        assert_eq!(Network::parse("host").unwrap(), Network::Host);
        assert!(Network::parse("bridge").unwrap_err().contains("none, host"));
    }
}

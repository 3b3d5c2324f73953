//! The agent sandbox: bubblewrap (`bwrap`) runs an agent in a new user namespace with no
//! capabilities, seeing only the system toolchain (read-only), an empty `/tmp` and home, the
//! workspace (read-only, or a private writable copy), its own output folder and what the user
//! exposes; its own PID namespace; and no network but the model endpoint (see `net`).

mod contain;
mod mounts;
pub mod net;

pub use contain::Containment;
pub use mounts::{bwrap_args, Mounts, NET_DIR_INSIDE, SANDBOX_HOME};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What network an external agent gets inside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// No network at all (only the sandbox's own loopback).
    None,
    /// The model endpoint and nothing else: a forwarder carries connections to it; every
    /// other connection fails and is recorded (the default).
    Endpoint,
    /// The host's network, unrestricted: an explicit opt-out, recorded in `run.json`.
    Host,
}

impl Network {
    pub fn parse(s: &str) -> Result<Network, String> {
        match s {
            "none" => Ok(Network::None),
            "endpoint" => Ok(Network::Endpoint),
            "host" => Ok(Network::Host),
            other => Err(format!(
                "network {other:?} is not one of: endpoint, none, host"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Network::None => "none",
            Network::Endpoint => "endpoint",
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
            network: Network::Endpoint,
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
            // The probe uses the namespaces every run needs, so a machine where they fail
            // says so once instead of failing every attempt.
            let works = std::process::Command::new(&bin)
                .args([
                    "--unshare-user",
                    "--cap-drop",
                    "ALL",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_the_results_of_the_configuration_and_the_cache() {
        let out = Path::new("/r/results/cfg/inc/attempt-2/agent");
        let hide = default_hidden(out);
        assert!(hide.contains(&PathBuf::from("/r/results/cfg")), "{hide:?}");
        assert!(hide.contains(&crate::incident::repo_cache::cache_root()));
    }

    #[test]
    fn parses_network_settings() {
        assert_eq!(Network::parse("host").unwrap(), Network::Host);
        assert_eq!(Network::parse("endpoint").unwrap(), Network::Endpoint);
        assert!(Network::parse("bridge")
            .unwrap_err()
            .contains("endpoint, none, host"));
    }
}

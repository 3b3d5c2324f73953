//! `distdebug sandbox-net` (hidden): the inside half of the sandbox's endpoint-only network.
//! Listens on loopback, carries connections to distdebug's gate, runs the agent's command and
//! exits with its status.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct SandboxNetArgs {
    /// The gate's Unix socket
    #[arg(long)]
    pub socket: PathBuf,
    /// A loopback port to forward to the endpoint (the endpoint's own port)
    #[arg(long)]
    pub forward: Vec<u16>,
    /// The agent's command
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

pub fn run(a: SandboxNetArgs) -> ExitCode {
    match crate::agent::sandbox::net::serve_inside(a.socket, &a.forward, &a.command) {
        Ok(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(127)
        }
    }
}

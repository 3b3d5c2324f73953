//! `distdebug lsp`: the language server on stdin/stdout.
//!
//! Only JSON-RPC may reach stdout. The transport gets a private copy of the stdout file
//! descriptor and descriptor 1 itself is pointed at stderr, so a stray `println!` anywhere in
//! the process (an agent, a library) lands in the log instead of corrupting the protocol.

use super::{CliError, CliResult};
use clap::Args;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct LspArgs {
    /// Use stdin/stdout (the only transport; accepted because editors pass it)
    #[arg(long)]
    pub stdio: bool,
    /// Where `distdebug.openIncident` looks up incident ids (the `incidents` setting overrides it)
    #[command(flatten)]
    pub dir: super::IncidentsDirArg,
}

pub fn run(a: LspArgs) -> CliResult {
    if let Some(dir) = &a.dir.dir {
        // The server's default for the `incidents` setting; set before any thread starts.
        std::env::set_var("DISTDEBUG_INCIDENTS", dir);
    }
    let out = protocol_stdout()?;
    // One thread serves the protocol: its handlers are short, and passing each message
    // between tasks on one thread is much cheaper than between threads. Agents, workspace
    // preparation and scoring run on the blocking pool (threads of their own).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::bad_input(format!("cannot start the async runtime: {e}")))?;
    let end = rt.block_on(async move {
        let out = async_writer(out);
        crate::lsp::serve(
            tokio::io::stdin(),
            out,
            crate::lsp::ServerOptions::default(),
        )
        .await
    });
    // Agents still winding down after a cancel get a moment; then the process ends anyway.
    rt.shutdown_timeout(Duration::from_secs(2));
    // The protocol: `exit` without `shutdown` first ends with status 1.
    if end.exit_sent && !end.shut_down {
        return Err(CliError::bad_input(
            "the client sent exit without shutdown first",
        ));
    }
    Ok(())
}

type Output = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

/// Writes to a pipe (the usual case: an editor spawned the server) go straight through the
/// reactor; anything else (a file, a terminal) through tokio's blocking file writer.
#[cfg(unix)]
fn async_writer(file: std::fs::File) -> Output {
    if let Ok(copy) = file.try_clone() {
        // Fails, and leaves nothing behind, when the file is not a pipe.
        if let Ok(pipe) = tokio::net::unix::pipe::Sender::from_file(copy) {
            return Box::new(pipe);
        }
    }
    Box::new(tokio::fs::File::from_std(file))
}

#[cfg(not(unix))]
fn async_writer(out: tokio::io::Stdout) -> Output {
    Box::new(out)
}

/// The protocol's stdout, with descriptor 1 redirected to stderr.
#[cfg(unix)]
fn protocol_stdout() -> Result<std::fs::File, CliError> {
    use std::os::fd::FromRawFd;
    // A close-on-exec duplicate: agents and tools the server starts must not inherit the
    // protocol's pipe (they could write into it, or keep it open after the server exits).
    // SAFETY: plain descriptor calls; the duplicate is owned by the File made from it alone.
    let fd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 0) };
    if fd < 0 {
        return Err(CliError::bad_input(format!(
            "cannot duplicate stdout: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: 2 and 1 are the process's own stderr and stdout.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(CliError::bad_input(format!(
            "cannot point stdout at stderr: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: `fd` was just returned by dup and nothing else owns it.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

#[cfg(not(unix))]
fn protocol_stdout() -> Result<tokio::io::Stdout, CliError> {
    Ok(tokio::io::stdout())
}

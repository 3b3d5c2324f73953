//! The `distdebug` binary: parses the command line and hands over to the library.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = distdebug::cli::Cli::parse();
    if !matches!(cli.command, distdebug::cli::Command::Lsp(_)) {
        restore_default_sigpipe();
    }
    distdebug::cli::dispatch(cli)
}

/// Rust ignores SIGPIPE, so `distdebug incidents list | head` would panic on the closed pipe.
/// A command-line tool should end quietly instead, as `ls | head` does. The language server
/// keeps Rust's default: its stdout is the protocol and a closed one is handled as an error.
#[cfg(unix)]
fn restore_default_sigpipe() {
    // SAFETY: called once at start-up, before any thread exists; SIG_DFL is always valid.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_default_sigpipe() {}

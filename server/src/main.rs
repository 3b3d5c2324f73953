//! The `distdebug` binary: parses the command line and hands over to the library.

use clap::Parser;

fn main() -> std::process::ExitCode {
    distdebug::cli::dispatch(distdebug::cli::Cli::parse())
}

//! distdebug: diagnose distributed-system failures in the editor. The library behind the
//! `distdebug` command line and language server; arrows point down the list below.

pub mod cli;
pub mod lsp;

pub mod report;
pub mod run;
pub mod submit;

pub mod annotate;

pub mod eval;

pub mod agent;
pub mod score;

pub mod attempt;
pub mod code;
pub mod config;
pub mod incident;
pub mod util;

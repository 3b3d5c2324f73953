//! `distdebug agent-tool` (hidden): serves one read-only tool call of the model agent inside
//! the sandbox. Reads a JSON request on stdin, writes the JSON result on stdout.

use super::CliResult;
use std::io::{Read, Write};

pub fn run() -> CliResult {
    let mut request = String::new();
    std::io::stdin()
        .read_to_string(&mut request)
        .map_err(|e| format!("agent-tool: cannot read the request: {e}"))?;
    let out = crate::agent::tools::serve(&request);
    let body = serde_json::to_string(&out).map_err(|e| format!("agent-tool: {e}"))?;
    std::io::stdout()
        .write_all(body.as_bytes())
        .map_err(|e| format!("agent-tool: cannot write the result: {e}"))?;
    Ok(())
}

//! `distdebug.score`: scores finished attempts against the labels with the scoring library.

use super::session::Session;
use serde_json::Value;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;

pub fn score(_session: &Arc<Session>, _arg: Value) -> Result<Option<Value>> {
    Err(super::commands::failed(
        "distdebug.score: waiting for the scoring library",
    ))
}

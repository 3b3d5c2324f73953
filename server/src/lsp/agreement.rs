//! `distdebug/agreement` (request): agreement between the annotators of the incident's
//! `labels.json`, as `distdebug agreement` computes it (`crate::annotate::agreement`). Read
//! only; the file work runs on the blocking pool.

use super::commands::failed;
use super::session::Session;
use crate::annotate::compare_dirs::incident_agreement;
use serde_json::Value;
use std::path::PathBuf;
use tower_lsp_server::jsonrpc::{Error, Result};

pub const METHOD: &str = "distdebug/agreement";

/// The incident folder to read: `{"incident": "<folder>"}`, else the `incident` setting,
/// else the folder `distdebug.openIncident` used.
fn incident_dir(session: &Session, params: Option<Value>) -> Result<PathBuf> {
    let given = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => {
            if let Some(k) = o.keys().find(|k| *k != "incident") {
                return Err(Error::invalid_params(format!(
                    "{METHOD}: unknown field {k:?}; expected {{\"incident\": \"<optional folder>\"}}"
                )));
            }
            match o.get("incident") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(PathBuf::from(s)),
                Some(other) => {
                    return Err(Error::invalid_params(format!(
                        "{METHOD}: incident is {other}; expected a folder as a string"
                    )))
                }
            }
        }
        Some(other) => {
            return Err(Error::invalid_params(format!(
                "{METHOD}: expected {{\"incident\": \"<optional folder>\"}}, found {other}"
            )))
        }
    };
    let st = session.lock();
    given
        .or_else(|| st.config.incident.clone())
        .or_else(|| st.opened_incident.clone())
        .ok_or_else(|| {
            failed(format!(
                "{METHOD}: which incident? Set the \"incident\" setting or give {{\"incident\": \"<folder>\"}}"
            ))
        })
}

pub async fn request(session: &Session, params: Option<Value>) -> Result<Value> {
    let dir = incident_dir(session, params)?;
    let g = tokio::task::spawn_blocking(move || incident_agreement(&dir))
        .await
        .map_err(|e| failed(format!("{METHOD}: stopped: {e}")))?
        .map_err(|e| failed(format!("{METHOD}: {e}")))?;
    serde_json::to_value(g).map_err(|e| failed(format!("{METHOD}: {e}")))
}

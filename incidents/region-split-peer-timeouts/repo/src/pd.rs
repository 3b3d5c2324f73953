//! Client of the placement driver (PD), which allocates IDs and keeps the
//! cluster-wide region map. The wire client is out of scope here; requests
//! go through a `PdTransport`.

use std::fmt;
use std::sync::Arc;

use crate::raftstore::{escape, Region};
use crate::{debug, info};

#[derive(Debug)]
pub enum PdError {
    Unavailable(String),
    Other(String),
}

impl fmt::Display for PdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PdError::Unavailable(s) => write!(f, "pd unavailable: {}", s),
            PdError::Other(s) => write!(f, "pd error: {}", s),
        }
    }
}

pub trait PdTransport: Send + Sync {
    fn alloc_ids(&self, count: usize) -> Result<Vec<u64>, PdError>;
    fn region_changed(&self, region: &Region) -> Result<(), PdError>;
    fn store_heartbeat(&self, store_id: u64, region_count: usize, leader_count: usize) -> Result<(), PdError>;
}

#[derive(Clone)]
pub struct PdClient {
    endpoints: Vec<String>,
    transport: Arc<dyn PdTransport>,
}

impl PdClient {
    pub fn new(endpoints: Vec<String>, transport: Arc<dyn PdTransport>) -> PdClient {
        info!("connecting to PD endpoints {:?}", endpoints);
        PdClient { endpoints, transport }
    }

    /// Allocates a region ID and one peer ID per replica for a split.
    pub fn ask_split(&self, region_id: u64, replicas: usize) -> Result<(u64, Vec<u64>), PdError> {
        let ids = self.transport.alloc_ids(replicas + 1)?;
        debug!("[region {}] PD allocated ids {:?} for split", region_id, ids);
        Ok((ids[0], ids[1..].to_vec()))
    }

    pub fn report_split(&self, store_id: u64, parent: u64, new_region: &Region) {
        match self.transport.region_changed(new_region) {
            Ok(()) => info!(
                "store {} reported split of region {} into new region {} [{}, {})",
                store_id,
                parent,
                new_region.id,
                escape(&new_region.start_key),
                escape(&new_region.end_key)
            ),
            Err(e) => crate::warn!("store {} failed to report split of region {} to {:?}: {}", store_id, parent, self.endpoints, e),
        }
    }

    pub fn store_heartbeat(&self, store_id: u64, region_count: usize, leader_count: usize) {
        if let Err(e) = self.transport.store_heartbeat(store_id, region_count, leader_count) {
            crate::warn!("store heartbeat failed: {}", e);
        }
    }
}

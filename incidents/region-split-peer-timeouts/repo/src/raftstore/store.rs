//! A store hosts one peer of many regions and drives them all.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::msg::{Command, RaftMessage};
use super::peer::{Peer, PeerError, PeerSettings};
use super::split::SplitChecker;
use super::{escape, Region};
use crate::config::RaftStoreConfig;
use crate::pd::PdClient;
use crate::storage::Engine;
use crate::transport::{Transport, TransportError};
use crate::{debug, info, warn};

const STATS_INTERVAL: Duration = Duration::from_secs(60);

#[derive(Debug, PartialEq, Eq)]
pub enum StoreError {
    RegionNotFound { key: Vec<u8> },
    Peer(PeerError),
}

impl From<PeerError> for StoreError {
    fn from(e: PeerError) -> Self {
        StoreError::Peer(e)
    }
}

pub struct Store {
    pub id: u64,
    cfg: Arc<RaftStoreConfig>,
    pub(crate) engine: Engine,
    pub(crate) peers: HashMap<u64, Peer>,
    pub(crate) pd: PdClient,
    transport: Box<dyn Transport + Send>,
    pub(crate) split_checker: SplitChecker,
    last_stats: Instant,
}

impl Store {
    pub fn new(id: u64, cfg: Arc<RaftStoreConfig>, engine: Engine, pd: PdClient, transport: Box<dyn Transport + Send>) -> Store {
        let split_checker = SplitChecker::new(&cfg, Instant::now());
        Store { id, cfg, engine, peers: HashMap::new(), pd, transport, split_checker, last_stats: Instant::now() }
    }

    pub fn cfg(&self) -> &RaftStoreConfig {
        &self.cfg
    }

    /// Creates the local peer of a region this store was assigned, either at
    /// bootstrap or when PD adds a replica here.
    pub fn create_peer(&mut self, region: Region, now: Instant) {
        let region_id = region.id;
        let peer = Peer::new(self.id, region, PeerSettings::from(&*self.cfg), now);
        info!("[region {}] {} created local peer on store {}", region_id, peer.peer_id, self.id);
        self.peers.insert(region_id, peer);
    }

    fn region_for_key(&self, key: &[u8]) -> Option<u64> {
        self.peers.values().find(|p| p.region.contains(key)).map(|p| p.region.id)
    }

    pub fn on_tick(&mut self, now: Instant) {
        for peer in self.peers.values_mut() {
            peer.tick(now);
        }
        if self.split_checker.due(now) {
            self.run_split_check(now);
        }
        if now.duration_since(self.last_stats) >= STATS_INTERVAL {
            self.last_stats = now;
            let leaders = self.peers.values().filter(|p| p.is_leader()).count();
            info!("store {} heartbeat: {} regions, {} leaders", self.id, self.peers.len(), leaders);
            self.pd.store_heartbeat(self.id, self.peers.len(), leaders);
        }
        self.flush(now);
    }

    pub fn on_raft_message(&mut self, msg: RaftMessage, now: Instant) {
        match self.peers.get_mut(&msg.region_id) {
            Some(peer) => peer.step(msg, now),
            None => {
                debug!("[region {}] dropping message for missing peer {} from {}", msg.region_id, msg.to_peer, msg.from_peer);
                return;
            }
        }
        self.flush(now);
    }

    pub fn put(&mut self, key: &[u8], value: &[u8], now: Instant) -> Result<u64, StoreError> {
        let region_id = self.region_for_key(key).ok_or_else(|| StoreError::RegionNotFound { key: key.to_vec() })?;
        let peer = self.peers.get_mut(&region_id).expect("region looked up above");
        let index = peer.propose(Command::Put { key: key.to_vec(), value: value.to_vec() }, now)?;
        self.flush(now);
        Ok(index)
    }

    pub fn get(&self, key: &[u8], now: Instant) -> Result<Option<Vec<u8>>, StoreError> {
        let region_id = self.region_for_key(key).ok_or_else(|| StoreError::RegionNotFound { key: key.to_vec() })?;
        self.peers[&region_id].check_local_read(key, now)?;
        Ok(self.engine.get(key))
    }

    /// Sends queued messages and applies committed entries of every peer.
    pub(crate) fn flush(&mut self, now: Instant) {
        let mut outgoing = Vec::new();
        let mut splits = Vec::new();
        for peer in self.peers.values_mut() {
            outgoing.extend(peer.take_messages());
            for entry in peer.take_committed() {
                match entry.cmd {
                    Command::Noop => {}
                    Command::Put { key, value } => {
                        peer.approximate_size += (key.len() + value.len()) as u64;
                        self.engine.put(&key, &value);
                    }
                    Command::Delete { key } => self.engine.delete(&key),
                    Command::Split { split_key, new_region_id, new_peer_ids } => {
                        splits.push((peer.region.id, split_key, new_region_id, new_peer_ids))
                    }
                }
            }
        }
        for (region_id, split_key, new_region_id, new_peer_ids) in splits {
            self.apply_split(region_id, split_key, new_region_id, new_peer_ids, now);
        }
        for msg in outgoing {
            let (store, region) = (msg.to_store, msg.region_id);
            match self.transport.send(msg) {
                Ok(()) => {}
                Err(e @ TransportError::Backoff(_)) => {
                    debug!("[region {}] failed to send raft message to store {}: {}", region, store, e)
                }
                Err(e) => warn!("[region {}] failed to send raft message to store {}: {}", region, store, e),
            }
        }
    }

    pub fn region_summary(&self) -> Vec<String> {
        let mut v: Vec<_> = self
            .peers
            .values()
            .map(|p| {
                format!(
                    "region {} [{}, {}) role {:?} term {} leader {:?}",
                    p.region.id,
                    escape(&p.region.start_key),
                    escape(&p.region.end_key),
                    p.role(),
                    p.term(),
                    p.leader()
                )
            })
            .collect();
        v.sort();
        v
    }
}

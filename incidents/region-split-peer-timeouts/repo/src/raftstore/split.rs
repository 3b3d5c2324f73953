//! Region split: periodic size checks on leaders, and applying a committed
//! split on every replica.

use std::time::{Duration, Instant};

use super::msg::Command;
use super::peer::{Peer, PeerSettings};
use super::store::Store;
use super::{escape, Region};
use crate::config::RaftStoreConfig;
use crate::{info, warn};

pub struct SplitChecker {
    interval: Duration,
    split_size: u64,
    max_size: u64,
    last_check: Instant,
}

impl SplitChecker {
    pub fn new(cfg: &RaftStoreConfig, now: Instant) -> SplitChecker {
        SplitChecker {
            interval: cfg.split_region_check_tick_interval.0,
            split_size: cfg.region_split_size.0,
            max_size: cfg.region_max_size.0,
            last_check: now,
        }
    }

    pub fn due(&mut self, now: Instant) -> bool {
        if now.duration_since(self.last_check) >= self.interval {
            self.last_check = now;
            return true;
        }
        false
    }
}

impl Store {
    /// Asks PD for IDs and proposes a split for every led region that grew
    /// past `region-max-size`.
    pub(crate) fn run_split_check(&mut self, now: Instant) {
        let (split_size, max_size) = (self.split_checker.split_size, self.split_checker.max_size);
        let mut to_split = Vec::new();
        for peer in self.peers.values_mut() {
            if !peer.is_leader() {
                continue;
            }
            let size = self.engine.approximate_size(&peer.region.start_key, &peer.region.end_key);
            peer.approximate_size = size;
            if size < max_size {
                continue;
            }
            match self.engine.middle_key(&peer.region.start_key, &peer.region.end_key) {
                Some(key) => to_split.push((peer.region.id, key, size)),
                None => warn!("[region {}] size {} exceeds limit but no split key found", peer.region.id, size),
            }
        }
        for (region_id, split_key, size) in to_split {
            let peer_count = self.peers[&region_id].region.peers.len();
            let (new_region_id, new_peer_ids) = match self.pd.ask_split(region_id, peer_count) {
                Ok(ids) => ids,
                Err(e) => {
                    warn!("[region {}] ask split failed: {}", region_id, e);
                    continue;
                }
            };
            info!(
                "[region {}] proposing split at key {}, approximate size {} (split size {}), new region {}",
                region_id,
                escape(&split_key),
                size,
                split_size,
                new_region_id
            );
            let cmd = Command::Split { split_key, new_region_id, new_peer_ids };
            if let Err(e) = self.peers.get_mut(&region_id).unwrap().propose(cmd, now) {
                warn!("[region {}] split proposal rejected: {:?}", region_id, e);
            }
        }
    }

    /// Applies a committed split: the parent keeps `[start, split_key)` and a
    /// new region takes `[split_key, end)`, with one new peer per replica.
    pub(crate) fn apply_split(&mut self, region_id: u64, split_key: Vec<u8>, new_region_id: u64, new_peer_ids: Vec<u64>, now: Instant) {
        if self.peers.contains_key(&new_region_id) {
            warn!("[region {}] new region {} already exists, ignoring duplicate split", region_id, new_region_id);
            return;
        }
        let parent = match self.peers.get_mut(&region_id) {
            Some(p) => p,
            None => return,
        };
        if new_peer_ids.len() != parent.region.peers.len() {
            warn!(
                "[region {}] split carries {} peer ids for {} replicas, ignoring",
                region_id,
                new_peer_ids.len(),
                parent.region.peers.len()
            );
            return;
        }
        let new_region = Region {
            id: new_region_id,
            start_key: split_key.clone(),
            end_key: parent.region.end_key.clone(),
            version: parent.region.version + 1,
            peers: parent.region.peers.iter().zip(&new_peer_ids).map(|((_, store), id)| (*id, *store)).collect(),
        };
        parent.region.end_key = split_key;
        parent.region.version += 1;
        parent.approximate_size /= 2;
        let parent_is_leader = parent.is_leader();
        let parent_range = (escape(&parent.region.start_key), escape(&parent.region.end_key));
        info!(
            "[region {}] split applied: region {} [{}, {}) version {}, new region {} [{}, {})",
            region_id,
            region_id,
            parent_range.0,
            parent_range.1,
            parent.region.version,
            new_region_id,
            escape(&new_region.start_key),
            escape(&new_region.end_key)
        );

        let mut peer = Peer::new(self.id, new_region.clone(), PeerSettings::default(), now);
        peer.approximate_size = self.peers[&region_id].approximate_size;
        if parent_is_leader {
            // The parent's leader campaigns at once so the new region does
            // not wait a full election timeout for its first leader.
            peer.campaign(now, Duration::ZERO);
        }
        self.peers.insert(new_region_id, peer);
        self.pd.report_split(self.id, region_id, &new_region);
    }
}

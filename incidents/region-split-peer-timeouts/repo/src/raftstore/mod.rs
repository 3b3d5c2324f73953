//! Multi-raft store: one raft group per region.

pub mod lease;
pub mod msg;
pub mod peer;
pub mod split;
pub mod store;

pub use peer::{Peer, PeerSettings, Role};
pub use store::Store;

/// A contiguous key range `[start_key, end_key)` replicated by a raft group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub id: u64,
    pub start_key: Vec<u8>,
    pub end_key: Vec<u8>,
    /// Bumped by every split or merge.
    pub version: u64,
    /// `(peer_id, store_id)` of every replica.
    pub peers: Vec<(u64, u64)>,
}

impl Region {
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start_key.as_slice() && (self.end_key.is_empty() || key < self.end_key.as_slice())
    }

    pub fn peer_on_store(&self, store_id: u64) -> Option<u64> {
        self.peers.iter().find(|(_, s)| *s == store_id).map(|(p, _)| *p)
    }

    pub fn store_of(&self, peer_id: u64) -> Option<u64> {
        self.peers.iter().find(|(p, _)| *p == peer_id).map(|(_, s)| *s)
    }
}

/// Renders a key the way the logs show it: printable ASCII as is, the rest
/// hex-escaped.
pub fn escape(key: &[u8]) -> String {
    let mut s = String::with_capacity(key.len());
    for &b in key {
        if b.is_ascii_graphic() {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{:02x}", b));
        }
    }
    s
}

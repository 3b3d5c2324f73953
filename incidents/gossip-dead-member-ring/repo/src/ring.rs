//! Consistent-hash ring with virtual nodes. The ring decides which member
//! owns a key; it is frozen while a handoff moves partitions between nodes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::member::NodeId;

#[derive(Debug, PartialEq, Eq)]
pub enum RingError {
    /// A handoff is running against `epoch`; topology changes must wait.
    Frozen { epoch: u64 },
    UnknownNode(NodeId),
    AlreadyPresent(NodeId),
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingError::Frozen { epoch } => write!(f, "ring is frozen at epoch {} for handoff", epoch),
            RingError::UnknownNode(n) => write!(f, "node {} is not on the ring", n),
            RingError::AlreadyPresent(n) => write!(f, "node {} is already on the ring", n),
        }
    }
}

impl std::error::Error for RingError {}

pub fn fnv1a(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub struct Ring {
    vnodes: BTreeMap<u64, NodeId>,
    per_node: usize,
    epoch: u64,
    frozen: bool,
}

impl Ring {
    pub fn new(per_node: usize) -> Ring {
        Ring { vnodes: BTreeMap::new(), per_node, epoch: 0, frozen: false }
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    fn tokens(&self, id: &NodeId) -> impl Iterator<Item = u64> + '_ {
        let name = id.0.clone();
        (0..self.per_node).map(move |i| fnv1a(format!("{}#{}", name, i).as_bytes()))
    }

    pub fn contains(&self, id: &NodeId) -> bool {
        self.vnodes.values().any(|n| n == id)
    }

    pub fn add_node(&mut self, id: &NodeId) -> Result<u64, RingError> {
        if self.frozen {
            return Err(RingError::Frozen { epoch: self.epoch });
        }
        if self.contains(id) {
            return Err(RingError::AlreadyPresent(id.clone()));
        }
        let tokens: Vec<u64> = self.tokens(id).collect();
        for t in tokens {
            self.vnodes.insert(t, id.clone());
        }
        self.epoch += 1;
        Ok(self.epoch)
    }

    pub fn remove_node(&mut self, id: &NodeId) -> Result<u64, RingError> {
        if self.frozen {
            return Err(RingError::Frozen { epoch: self.epoch });
        }
        if !self.contains(id) {
            return Err(RingError::UnknownNode(id.clone()));
        }
        self.vnodes.retain(|_, n| n != id);
        self.epoch += 1;
        Ok(self.epoch)
    }

    /// Freezes the topology for a handoff and returns the epoch it covers.
    pub fn freeze(&mut self) -> u64 {
        self.frozen = true;
        self.epoch
    }

    pub fn thaw(&mut self) {
        self.frozen = false;
    }

    /// The node owning `key`: the first virtual node clockwise of its hash.
    pub fn owner(&self, key: &[u8]) -> Option<&NodeId> {
        let h = fnv1a(key);
        self.vnodes.range(h..).next().or_else(|| self.vnodes.iter().next()).map(|(_, n)| n)
    }

    pub fn nodes(&self) -> BTreeSet<NodeId> {
        self.vnodes.values().cloned().collect()
    }

    /// Share of the hash space owned by each node, in per mille.
    pub fn ownership(&self) -> BTreeMap<NodeId, u64> {
        let mut out = BTreeMap::new();
        let mut prev = self.vnodes.keys().next_back().copied().unwrap_or(0);
        for (&t, n) in &self.vnodes {
            let span = t.wrapping_sub(prev);
            *out.entry(n.clone()).or_insert(0u64) += span / (u64::MAX / 1000);
            prev = t;
        }
        out
    }
}

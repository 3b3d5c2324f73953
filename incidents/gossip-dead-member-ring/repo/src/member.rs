//! Member records and the updates gossiped about them.

use std::fmt;
use std::net::SocketAddr;
use std::time::Instant;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub String);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Alive,
    Suspect,
    Dead,
    Left,
}

#[derive(Clone, Debug)]
pub struct Member {
    pub id: NodeId,
    pub addr: SocketAddr,
    pub state: State,
    /// Only the member itself increments its incarnation, to refute
    /// suspicion.
    pub incarnation: u64,
    pub state_changed: Instant,
}

/// A piece of membership news, piggybacked on probe traffic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Update {
    Alive { id: NodeId, addr: SocketAddr, incarnation: u64 },
    Suspect { id: NodeId, incarnation: u64, from: NodeId },
    Dead { id: NodeId, incarnation: u64, from: NodeId },
    Left { id: NodeId, incarnation: u64 },
}

impl Update {
    pub fn subject(&self) -> &NodeId {
        match self {
            Update::Alive { id, .. } | Update::Suspect { id, .. } | Update::Dead { id, .. } | Update::Left { id, .. } => id,
        }
    }
}

/// Updates waiting to be piggybacked; each is sent a bounded number of
/// times, scaled with the cluster size.
#[derive(Default)]
pub struct Broadcasts {
    queue: Vec<(Update, u32)>,
}

impl Broadcasts {
    pub fn push(&mut self, u: Update) {
        self.queue.retain(|(q, _)| q.subject() != u.subject());
        self.queue.push((u, 0));
    }

    pub fn take(&mut self, max: usize, limit: u32) -> Vec<Update> {
        self.queue.sort_by_key(|(_, n)| *n);
        let mut out = Vec::new();
        for (u, n) in self.queue.iter_mut().take(max) {
            *n += 1;
            out.push(u.clone());
        }
        self.queue.retain(|(_, n)| *n < limit);
        out
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

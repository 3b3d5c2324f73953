//! The membership table: who is in the cluster, in which state, and at
//! which incarnation. Applies local observations and gossiped updates, and
//! keeps the hash ring in step with the set of live members.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use crate::member::{Broadcasts, Member, NodeId, State, Update};
use crate::ring::Ring;
use crate::{debug, info, warn};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Joined(NodeId),
    Removed(NodeId),
}

pub struct Membership {
    local: NodeId,
    incarnation: u64,
    members: HashMap<NodeId, Member>,
    ring: Arc<RwLock<Ring>>,
    pub broadcasts: Broadcasts,
    events: Vec<Event>,
}

impl Membership {
    pub fn new(local: NodeId, addr: SocketAddr, ring: Arc<RwLock<Ring>>) -> Membership {
        let mut m = Membership {
            local: local.clone(),
            incarnation: 0,
            members: HashMap::new(),
            ring,
            broadcasts: Broadcasts::default(),
            events: Vec::new(),
        };
        m.add_member(local, addr, 0);
        m
    }

    pub fn local(&self) -> &NodeId {
        &self.local
    }

    pub fn get(&self, id: &NodeId) -> Option<&Member> {
        self.members.get(id)
    }

    pub fn address_of(&self, id: &NodeId) -> Option<SocketAddr> {
        self.members.get(id).map(|m| m.addr)
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Members other than ourselves that may be probed.
    pub fn probe_candidates(&self) -> Vec<(NodeId, SocketAddr)> {
        let mut v: Vec<_> = self
            .members
            .values()
            .filter(|m| m.id != self.local && matches!(m.state, State::Alive | State::Suspect))
            .map(|m| (m.id.clone(), m.addr))
            .collect();
        v.sort();
        v
    }

    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn add_member(&mut self, id: NodeId, addr: SocketAddr, incarnation: u64) {
        match self.ring.write().unwrap().add_node(&id) {
            Ok(epoch) => info!("member {} joined at {} (incarnation {}), ring epoch {}", id, addr, incarnation, epoch),
            Err(e) => warn!("member {} joined at {} but was not added to the ring: {}", id, addr, e),
        }
        self.members.insert(
            id.clone(),
            Member { id: id.clone(), addr, state: State::Alive, incarnation, state_changed: Instant::now() },
        );
        self.events.push(Event::Joined(id));
    }

    fn remove_member(&mut self, id: &NodeId, reason: &str) {
        if let Some(m) = self.members.remove(id) {
            self.ring.write().unwrap().remove_node(id).ok();
            info!("member {} removed ({}), last incarnation {}", id, reason, m.incarnation);
            self.events.push(Event::Removed(id.clone()));
        }
    }

    /// Marks `id` suspect at `incarnation` (local probe failure).
    pub fn suspect(&mut self, id: &NodeId, incarnation: u64) -> bool {
        let local = self.local.clone();
        self.apply(Update::Suspect { id: id.clone(), incarnation, from: local })
    }

    /// Declares `id` dead after its suspicion timed out.
    pub fn confirm_dead(&mut self, id: &NodeId, incarnation: u64) -> bool {
        let local = self.local.clone();
        self.apply(Update::Dead { id: id.clone(), incarnation, from: local })
    }

    /// Applies an update, local or gossiped. Returns whether it changed the
    /// table; changes are queued for further gossip.
    pub fn apply(&mut self, u: Update) -> bool {
        let changed = match &u {
            Update::Alive { id, addr, incarnation } => self.on_alive(id, *addr, *incarnation),
            Update::Suspect { id, incarnation, from } => self.on_suspect(id, *incarnation, from),
            Update::Dead { id, incarnation, from } => {
                if *id == self.local {
                    self.refute(*incarnation);
                    return false;
                }
                match self.members.get(id) {
                    Some(m) if *incarnation >= m.incarnation => {
                        info!("member {} declared dead by {} at incarnation {}", id, from, incarnation);
                        self.remove_member(id, "dead");
                        true
                    }
                    _ => false,
                }
            }
            Update::Left { id, incarnation } => match self.members.get(id) {
                Some(m) if *incarnation >= m.incarnation => {
                    self.remove_member(id, "left");
                    true
                }
                _ => false,
            },
        };
        if changed {
            self.broadcasts.push(u);
        }
        changed
    }

    fn on_alive(&mut self, id: &NodeId, addr: SocketAddr, incarnation: u64) -> bool {
        match self.members.get_mut(id) {
            None => {
                self.add_member(id.clone(), addr, incarnation);
                true
            }
            Some(m) if incarnation > m.incarnation => {
                if m.state == State::Suspect {
                    info!("member {} refuted suspicion with incarnation {}", id, incarnation);
                }
                m.incarnation = incarnation;
                m.state = State::Alive;
                m.addr = addr;
                m.state_changed = Instant::now();
                true
            }
            Some(_) => false,
        }
    }

    fn on_suspect(&mut self, id: &NodeId, incarnation: u64, from: &NodeId) -> bool {
        if *id == self.local {
            self.refute(incarnation);
            return false;
        }
        match self.members.get_mut(id) {
            Some(m) if incarnation >= m.incarnation && m.state == State::Alive => {
                m.state = State::Suspect;
                m.incarnation = incarnation;
                m.state_changed = Instant::now();
                info!("member {} suspected by {} at incarnation {}", id, from, incarnation);
                true
            }
            _ => false,
        }
    }

    /// Someone thinks we are suspect or dead: bump our incarnation and tell
    /// everyone we are alive.
    fn refute(&mut self, incarnation: u64) {
        if incarnation >= self.incarnation {
            self.incarnation = incarnation + 1;
            let addr = self.members[&self.local].addr;
            debug!("refuting suspicion of {}, new incarnation {}", self.local, self.incarnation);
            self.broadcasts.push(Update::Alive { id: self.local.clone(), addr, incarnation: self.incarnation });
        }
    }

    /// Members that have been suspect for longer than `timeout`.
    pub fn expired_suspects(&self, now: Instant, timeout: std::time::Duration) -> Vec<(NodeId, u64)> {
        self.members
            .values()
            .filter(|m| m.state == State::Suspect && now.duration_since(m.state_changed) >= timeout)
            .map(|m| (m.id.clone(), m.incarnation))
            .collect()
    }

    pub fn alive_count(&self) -> usize {
        self.members.values().filter(|m| m.state == State::Alive).count()
    }
}

//! One replica of a region: a compact raft implementation with leader
//! leases, driven by the store's tick and message loop.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::lease::{Lease, LeaseState};
use super::msg::{Command, Entry, MessageKind, RaftMessage};
use super::Region;
use crate::config::RaftStoreConfig;
use crate::{debug, info, warn};

/// Timing knobs of a peer, derived from the `[raftstore]` configuration.
#[derive(Clone, Copy, Debug)]
pub struct PeerSettings {
    pub election_timeout: Duration,
    pub heartbeat_interval: Duration,
    pub max_lease: Duration,
}

impl From<&RaftStoreConfig> for PeerSettings {
    fn from(cfg: &RaftStoreConfig) -> Self {
        PeerSettings {
            election_timeout: cfg.election_timeout(),
            heartbeat_interval: cfg.heartbeat_interval(),
            max_lease: cfg.max_leader_lease.0,
        }
    }
}

impl Default for PeerSettings {
    fn default() -> Self {
        PeerSettings::from(&RaftStoreConfig::default())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
}

#[derive(Debug, PartialEq, Eq)]
pub enum PeerError {
    NotLeader { region_id: u64, leader: Option<u64> },
    LeaseExpired { region_id: u64 },
    KeyNotInRegion { region_id: u64 },
}

pub struct Peer {
    pub region: Region,
    pub peer_id: u64,
    store_id: u64,
    settings: PeerSettings,

    role: Role,
    term: u64,
    vote: Option<u64>,
    leader: Option<u64>,

    log: Vec<Entry>,
    commit: u64,
    applied: u64,
    match_index: HashMap<u64, u64>,
    votes: HashSet<u64>,

    last_leader_contact: Instant,
    election_deadline: Instant,
    last_heartbeat_sent: Instant,
    round_acks: HashSet<u64>,
    last_quorum_ack: Instant,
    lease: Lease,

    rng: u64,
    outbox: Vec<RaftMessage>,
    pub approximate_size: u64,
}

impl Peer {
    pub fn new(store_id: u64, region: Region, settings: PeerSettings, now: Instant) -> Peer {
        let peer_id = region.peer_on_store(store_id).expect("region has no peer on this store");
        let mut p = Peer {
            peer_id,
            store_id,
            settings,
            role: Role::Follower,
            term: 5,
            vote: None,
            leader: None,
            log: vec![Entry { term: 5, index: 5, cmd: Command::Noop }],
            commit: 5,
            applied: 5,
            match_index: HashMap::new(),
            votes: HashSet::new(),
            last_leader_contact: now,
            election_deadline: now,
            last_heartbeat_sent: now,
            round_acks: HashSet::new(),
            last_quorum_ack: now,
            lease: Lease::new(settings.max_lease),
            rng: peer_id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            outbox: Vec::new(),
            approximate_size: 0,
            region,
        };
        p.reset_election_deadline(now);
        debug!(
            "[region {}] {} created peer on store {}, election timeout {:?}, lease {:?}",
            p.region.id, p.peer_id, p.store_id, p.settings.election_timeout, p.settings.max_lease
        );
        p
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn term(&self) -> u64 {
        self.term
    }

    pub fn leader(&self) -> Option<u64> {
        self.leader
    }

    pub fn is_leader(&self) -> bool {
        self.role == Role::Leader
    }

    fn next_rand(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn reset_election_deadline(&mut self, now: Instant) {
        let base = self.settings.election_timeout;
        let jitter = self.next_rand() % (base.as_millis() as u64).max(1);
        self.election_deadline = now + base + Duration::from_millis(jitter);
    }

    fn last_index(&self) -> u64 {
        self.log.last().map_or(0, |e| e.index)
    }

    fn last_term(&self) -> u64 {
        self.log.last().map_or(0, |e| e.term)
    }

    fn term_at(&self, index: u64) -> Option<u64> {
        let first = self.log.first()?.index;
        if index < first {
            return None;
        }
        self.log.get((index - first) as usize).map(|e| e.term)
    }

    fn quorum(&self) -> usize {
        self.region.peers.len() / 2 + 1
    }

    fn send(&mut self, to_peer: u64, kind: MessageKind) {
        let to_store = match self.region.store_of(to_peer) {
            Some(s) => s,
            None => return,
        };
        self.outbox.push(RaftMessage {
            region_id: self.region.id,
            from_peer: self.peer_id,
            to_peer,
            to_store,
            term: self.term,
            kind,
        });
    }

    fn others(&self) -> Vec<u64> {
        self.region.peers.iter().map(|(p, _)| *p).filter(|p| *p != self.peer_id).collect()
    }

    pub fn take_messages(&mut self) -> Vec<RaftMessage> {
        std::mem::take(&mut self.outbox)
    }

    pub fn tick(&mut self, now: Instant) {
        match self.role {
            Role::Leader => {
                if now.duration_since(self.last_quorum_ack) >= self.settings.election_timeout {
                    warn!(
                        "[region {}] {} leader has not heard from a quorum for {:?}, stepping down",
                        self.region.id,
                        self.peer_id,
                        now.duration_since(self.last_quorum_ack)
                    );
                    self.become_follower(self.term, None, now);
                    return;
                }
                if now.duration_since(self.last_heartbeat_sent) >= self.settings.heartbeat_interval {
                    self.broadcast_heartbeat(now);
                }
            }
            Role::Follower | Role::Candidate => {
                if now >= self.election_deadline {
                    let silent = now.duration_since(self.last_leader_contact);
                    self.campaign(now, silent);
                }
            }
        }
    }

    pub fn campaign(&mut self, now: Instant, silent: Duration) {
        self.term += 1;
        self.role = Role::Candidate;
        self.vote = Some(self.peer_id);
        self.leader = None;
        self.lease.expire();
        self.votes.clear();
        self.votes.insert(self.peer_id);
        self.reset_election_deadline(now);
        info!(
            "[region {}] {} became candidate at term {} (no leader for {:.1?})",
            self.region.id, self.peer_id, self.term, silent
        );
        let (li, lt) = (self.last_index(), self.last_term());
        for p in self.others() {
            self.send(p, MessageKind::RequestVote { last_index: li, last_term: lt });
        }
        if self.votes.len() >= self.quorum() {
            self.become_leader(now);
        }
    }

    fn become_follower(&mut self, term: u64, leader: Option<u64>, now: Instant) {
        let was_leader = self.role == Role::Leader;
        if term > self.term {
            self.vote = None;
        }
        self.term = term;
        self.role = Role::Follower;
        self.leader = leader;
        self.lease.expire();
        self.last_leader_contact = now;
        self.reset_election_deadline(now);
        if was_leader || leader.is_some() {
            info!(
                "[region {}] {} became follower at term {}, leader {:?}",
                self.region.id, self.peer_id, self.term, self.leader
            );
        }
    }

    fn become_leader(&mut self, now: Instant) {
        self.role = Role::Leader;
        self.leader = Some(self.peer_id);
        self.match_index.clear();
        self.last_quorum_ack = now;
        let index = self.last_index() + 1;
        self.log.push(Entry { term: self.term, index, cmd: Command::Noop });
        info!("[region {}] {} became leader at term {}", self.region.id, self.peer_id, self.term);
        self.broadcast_append();
        self.broadcast_heartbeat(now);
    }

    fn broadcast_heartbeat(&mut self, now: Instant) {
        self.last_heartbeat_sent = now;
        self.round_acks.clear();
        self.round_acks.insert(self.peer_id);
        let commit = self.commit;
        for p in self.others() {
            self.send(p, MessageKind::Heartbeat { commit });
        }
    }

    fn broadcast_append(&mut self) {
        for p in self.others() {
            let matched = *self.match_index.get(&p).unwrap_or(&0);
            let first = self.log[0].index;
            let prev_index = matched.max(first);
            let prev_term = self.term_at(prev_index).unwrap_or(0);
            let entries: Vec<Entry> = self.log.iter().filter(|e| e.index > prev_index).cloned().collect();
            let commit = self.commit;
            self.send(p, MessageKind::Append { prev_index, prev_term, entries, commit });
        }
    }

    pub fn propose(&mut self, cmd: Command, now: Instant) -> Result<u64, PeerError> {
        if self.role != Role::Leader {
            return Err(PeerError::NotLeader { region_id: self.region.id, leader: self.leader });
        }
        let index = self.last_index() + 1;
        self.log.push(Entry { term: self.term, index, cmd });
        self.broadcast_append();
        let _ = now;
        Ok(index)
    }

    /// Checks that a read of `key` may be served from the local engine.
    pub fn check_local_read(&self, key: &[u8], now: Instant) -> Result<(), PeerError> {
        if !self.region.contains(key) {
            return Err(PeerError::KeyNotInRegion { region_id: self.region.id });
        }
        if self.role != Role::Leader {
            return Err(PeerError::NotLeader { region_id: self.region.id, leader: self.leader });
        }
        match self.lease.inspect(now) {
            LeaseState::Valid => Ok(()),
            LeaseState::Expired => Err(PeerError::LeaseExpired { region_id: self.region.id }),
        }
    }

    pub fn step(&mut self, m: RaftMessage, now: Instant) {
        if m.term > self.term {
            let leader = match m.kind {
                MessageKind::Heartbeat { .. } | MessageKind::Append { .. } => Some(m.from_peer),
                _ => None,
            };
            self.become_follower(m.term, leader, now);
        } else if m.term < self.term {
            return;
        }
        match m.kind {
            MessageKind::Heartbeat { commit } => {
                if self.role != Role::Follower || self.leader != Some(m.from_peer) {
                    self.become_follower(m.term, Some(m.from_peer), now);
                }
                self.last_leader_contact = now;
                self.reset_election_deadline(now);
                self.commit = self.commit.max(commit.min(self.last_index()));
                self.send(m.from_peer, MessageKind::HeartbeatResp);
            }
            MessageKind::HeartbeatResp => {
                if self.role == Role::Leader {
                    self.round_acks.insert(m.from_peer);
                    if self.round_acks.len() >= self.quorum() {
                        self.last_quorum_ack = now;
                        self.lease.renew(self.last_heartbeat_sent);
                    }
                }
            }
            MessageKind::RequestVote { last_index, last_term } => {
                let up_to_date = last_term > self.last_term()
                    || (last_term == self.last_term() && last_index >= self.last_index());
                let granted = up_to_date && (self.vote.is_none() || self.vote == Some(m.from_peer));
                if granted {
                    self.vote = Some(m.from_peer);
                    self.reset_election_deadline(now);
                }
                info!(
                    "[region {}] {} received vote request from {} at term {}, granted: {}",
                    self.region.id, self.peer_id, m.from_peer, m.term, granted
                );
                self.send(m.from_peer, MessageKind::Vote { granted });
            }
            MessageKind::Vote { granted } => {
                if self.role == Role::Candidate && granted {
                    self.votes.insert(m.from_peer);
                    if self.votes.len() >= self.quorum() {
                        self.become_leader(now);
                    }
                }
            }
            MessageKind::Append { prev_index, prev_term, entries, commit } => {
                self.last_leader_contact = now;
                self.reset_election_deadline(now);
                if self.term_at(prev_index) != Some(prev_term) {
                    self.send(m.from_peer, MessageKind::AppendResp { match_index: self.last_index(), reject: true });
                    return;
                }
                let first = self.log[0].index;
                self.log.truncate((prev_index - first + 1) as usize);
                self.log.extend(entries);
                self.commit = self.commit.max(commit.min(self.last_index()));
                let mi = self.last_index();
                self.send(m.from_peer, MessageKind::AppendResp { match_index: mi, reject: false });
            }
            MessageKind::AppendResp { match_index, reject } => {
                if self.role != Role::Leader {
                    return;
                }
                if reject {
                    self.match_index.insert(m.from_peer, match_index.min(self.last_index()));
                    self.broadcast_append();
                    return;
                }
                self.match_index.insert(m.from_peer, match_index);
                self.maybe_commit();
            }
        }
    }

    fn maybe_commit(&mut self) {
        let mut matched: Vec<u64> = self.match_index.values().copied().collect();
        matched.push(self.last_index());
        matched.sort_unstable_by(|a, b| b.cmp(a));
        let candidate = matched[self.quorum() - 1];
        if candidate > self.commit && self.term_at(candidate) == Some(self.term) {
            self.commit = candidate;
        }
    }

    /// Entries committed since the last call, in order.
    pub fn take_committed(&mut self) -> Vec<Entry> {
        if self.commit <= self.applied {
            return Vec::new();
        }
        let from = self.applied;
        self.applied = self.commit;
        self.log.iter().filter(|e| e.index > from && e.index <= self.commit).cloned().collect()
    }

    pub fn settings(&self) -> PeerSettings {
        self.settings
    }
}

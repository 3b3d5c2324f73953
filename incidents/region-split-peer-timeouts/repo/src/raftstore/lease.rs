//! Leader lease: lets a leader serve reads locally while no other peer can
//! have been elected.

use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseState {
    Valid,
    Expired,
}

#[derive(Debug)]
pub struct Lease {
    max_lease: Duration,
    bound: Option<Instant>,
}

impl Lease {
    pub fn new(max_lease: Duration) -> Lease {
        Lease { max_lease, bound: None }
    }

    /// Extends the lease from the moment a heartbeat round that reached a
    /// quorum was *sent*; followers reset their election timers no earlier.
    pub fn renew(&mut self, send_ts: Instant) {
        let bound = send_ts + self.max_lease;
        if self.bound.map_or(true, |b| bound > b) {
            self.bound = Some(bound);
        }
    }

    pub fn inspect(&self, now: Instant) -> LeaseState {
        match self.bound {
            Some(b) if now < b => LeaseState::Valid,
            _ => LeaseState::Expired,
        }
    }

    pub fn expire(&mut self) {
        self.bound = None;
    }

    pub fn remaining(&self, now: Instant) -> Duration {
        self.bound.map_or(Duration::ZERO, |b| b.saturating_duration_since(now))
    }

    pub fn max_lease(&self) -> Duration {
        self.max_lease
    }
}

//! SWIM failure detector: each protocol period, probe one member directly,
//! fall back to indirect probes through k others, and turn unanswered probes
//! into suspicion that expires into death.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::member::NodeId;
use crate::membership::Membership;
use crate::transport::{Message, Transport};
use crate::{debug, info, warn};

#[derive(Clone, Debug)]
pub struct DetectorConfig {
    pub protocol_period: Duration,
    pub probe_timeout: Duration,
    pub indirect_probes: usize,
    pub suspicion_mult: u32,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            protocol_period: Duration::from_millis(1000),
            probe_timeout: Duration::from_millis(500),
            indirect_probes: 3,
            suspicion_mult: 4,
        }
    }
}

pub struct Detector {
    cfg: DetectorConfig,
    membership: Arc<Mutex<Membership>>,
    transport: Arc<dyn Transport>,
    seq: u64,
    round_robin: usize,
}

impl Detector {
    pub fn new(cfg: DetectorConfig, membership: Arc<Mutex<Membership>>, transport: Arc<dyn Transport>) -> Detector {
        Detector { cfg, membership, transport, seq: 0, round_robin: 0 }
    }

    /// Suspicion timeout grows with log(cluster size), as in Lifeguard.
    fn suspicion_timeout(&self, members: usize) -> Duration {
        let scale = ((members.max(1) as f64).log10().max(1.0)) as u32;
        self.cfg.protocol_period * self.cfg.suspicion_mult * scale
    }

    /// Runs one protocol period.
    pub fn tick(&mut self, now: Instant) {
        let (target, others, size) = {
            let m = self.membership.lock().unwrap();
            let cands = m.probe_candidates();
            if cands.is_empty() {
                return;
            }
            self.round_robin = (self.round_robin + 1) % cands.len();
            let target = cands[self.round_robin].clone();
            let others: Vec<_> = cands.iter().filter(|c| c.0 != target.0).cloned().collect();
            (target, others, m.len())
        };

        self.seq += 1;
        let piggyback = self.membership.lock().unwrap().broadcasts.take(6, 3 * (size as u32).max(2));
        let acked = self
            .transport
            .request(target.1, Message::Ping { seq: self.seq, updates: piggyback }, self.cfg.probe_timeout)
            .map(|r| self.absorb(r))
            .unwrap_or(false);

        if !acked {
            debug!("probe of {} (seq {}) timed out, trying {} indirect probes", target.0, self.seq, self.cfg.indirect_probes);
            let mut indirect_ok = false;
            for (via, addr) in others.iter().take(self.cfg.indirect_probes) {
                let req = Message::PingReq { seq: self.seq, target: target.0.clone(), target_addr: target.1 };
                match self.transport.request(*addr, req, self.cfg.probe_timeout) {
                    Ok(Message::Ack { .. }) => {
                        indirect_ok = true;
                        break;
                    }
                    Ok(_) | Err(_) => debug!("indirect probe of {} via {} failed", target.0, via),
                }
            }
            if !indirect_ok {
                let mut m = self.membership.lock().unwrap();
                let inc = m.get(&target.0).map_or(0, |x| x.incarnation);
                if m.suspect(&target.0, inc) {
                    warn!("no ack from {} directly or via {} peers, marking suspect", target.0, others.len().min(self.cfg.indirect_probes));
                }
            }
        }

        let timeout = self.suspicion_timeout(size);
        let mut m = self.membership.lock().unwrap();
        for (id, inc) in m.expired_suspects(now, timeout) {
            info!("suspicion of {} expired after {:?}, declaring dead", id, timeout);
            m.confirm_dead(&id, inc);
        }
    }

    fn absorb(&self, reply: Message) -> bool {
        match reply {
            Message::Ack { updates, .. } => {
                let mut m = self.membership.lock().unwrap();
                for u in updates {
                    m.apply(u);
                }
                true
            }
            _ => false,
        }
    }

    pub fn run(mut self) {
        loop {
            let start = Instant::now();
            self.tick(start);
            let spent = start.elapsed();
            if spent < self.cfg.protocol_period {
                std::thread::sleep(self.cfg.protocol_period - spent);
            }
        }
    }
}

/// Used by tests and tools: the member probed in the next period.
pub fn next_target(m: &Membership, cursor: usize) -> Option<NodeId> {
    let c = m.probe_candidates();
    if c.is_empty() {
        None
    } else {
        Some(c[(cursor + 1) % c.len()].0.clone())
    }
}

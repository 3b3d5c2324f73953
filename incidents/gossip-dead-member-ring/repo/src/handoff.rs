//! Moves partitions to their new owner after a member joins. The ring is
//! frozen for the duration, so that the transfer plan stays valid.

use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::member::NodeId;
use crate::membership::{Event, Membership};
use crate::ring::Ring;
use crate::store::Store;
use crate::transport::{Message, Transport};
use crate::{error, info, warn};

pub const PARTITIONS: u32 = 1024;

pub fn partition_key(p: u32) -> Vec<u8> {
    format!("partition-{:04}", p).into_bytes()
}

pub struct HandoffManager {
    local: NodeId,
    ring: Arc<RwLock<Ring>>,
    membership: Arc<Mutex<Membership>>,
    store: Arc<Store>,
    transport: Arc<dyn Transport>,
    batch_size: usize,
    retry_limit: u32,
}

impl HandoffManager {
    pub fn new(
        local: NodeId,
        ring: Arc<RwLock<Ring>>,
        membership: Arc<Mutex<Membership>>,
        store: Arc<Store>,
        transport: Arc<dyn Transport>,
    ) -> HandoffManager {
        HandoffManager { local, ring, membership, store, transport, batch_size: 512, retry_limit: 5 }
    }

    /// Partitions this node owns under `before` that `joined` owns now.
    fn plan(&self, before: &BTreeMap<u32, NodeId>, joined: &NodeId) -> Vec<u32> {
        let ring = self.ring.read().unwrap();
        (0..PARTITIONS)
            .filter(|p| before.get(p) == Some(&self.local) && ring.owner(&partition_key(*p)) == Some(joined))
            .collect()
    }

    fn snapshot_owners(&self) -> BTreeMap<u32, NodeId> {
        let ring = self.ring.read().unwrap();
        (0..PARTITIONS).filter_map(|p| ring.owner(&partition_key(p)).map(|n| (p, n.clone()))).collect()
    }

    fn transfer(&self, epoch: u64, to: &NodeId, partition: u32) -> bool {
        let addr = match self.membership.lock().unwrap().address_of(to) {
            Some(a) => a,
            None => return false,
        };
        let entries = self.store.partition_entries(partition);
        for chunk in entries.chunks(self.batch_size.max(1)) {
            let mut attempt = 0;
            loop {
                let msg = Message::HandoffBatch { epoch, partition, entries: chunk.to_vec() };
                match self.transport.request(addr, msg, Duration::from_secs(5)) {
                    Ok(Message::HandoffAck { .. }) => break,
                    Ok(other) => warn!("unexpected handoff reply from {}: {:?}", to, other),
                    Err(e) => warn!("handoff batch for partition {} to {} failed: {}", partition, to, e),
                }
                attempt += 1;
                if attempt >= self.retry_limit {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(200 * u64::from(attempt)));
            }
        }
        true
    }

    fn handle_join(&self, joined: &NodeId, before: &BTreeMap<u32, NodeId>) {
        let plan = self.plan(before, joined);
        if plan.is_empty() {
            return;
        }
        let epoch = self.ring.write().unwrap().freeze();
        let start = Instant::now();
        info!("handoff for epoch {} started: {} partitions to {}", epoch, plan.len(), joined);
        let mut moved = 0;
        for (i, p) in plan.iter().enumerate() {
            if self.transfer(epoch, joined, *p) {
                moved += 1;
                self.store.drop_partition(*p);
            } else {
                error!("handoff of partition {} to {} failed, keeping local copy", p, joined);
            }
            if (i + 1) % 32 == 0 {
                info!("handoff for epoch {}: {}/{} partitions sent to {}", epoch, i + 1, plan.len(), joined);
            }
        }
        self.ring.write().unwrap().thaw();
        info!(
            "handoff for epoch {} complete: {} of {} partitions moved to {} in {:?}",
            epoch,
            moved,
            plan.len(),
            joined,
            start.elapsed()
        );
    }

    /// Consumes membership events; `owners` is refreshed after every event.
    pub fn run(self, events: mpsc::Receiver<Event>) {
        let mut owners = self.snapshot_owners();
        for ev in events {
            if let Event::Joined(id) = &ev {
                if *id != self.local {
                    self.handle_join(id, &owners);
                }
            }
            owners = self.snapshot_owners();
        }
    }
}

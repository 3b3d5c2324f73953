//! Wires membership, detector, handoff and router together and runs the
//! router worker pool.

use std::net::SocketAddr;
use std::sync::{mpsc, Arc, Mutex, RwLock};
use std::thread;

use crate::detector::{Detector, DetectorConfig};
use crate::handoff::HandoffManager;
use crate::member::{NodeId, Update};
use crate::membership::Membership;
use crate::ring::Ring;
use crate::router::{Request, Response, Router};
use crate::store::Store;
use crate::transport::Transport;
use crate::{error, info};

pub struct Job {
    pub request: Request,
    pub reply: mpsc::Sender<Response>,
}

pub struct Server {
    pub local: NodeId,
    pub membership: Arc<Mutex<Membership>>,
    pub ring: Arc<RwLock<Ring>>,
    pub store: Arc<Store>,
    transport: Arc<dyn Transport>,
}

impl Server {
    pub fn new(local: NodeId, addr: SocketAddr, vnodes: usize, transport: Arc<dyn Transport>) -> Server {
        let ring = Arc::new(RwLock::new(Ring::new(vnodes)));
        let membership = Arc::new(Mutex::new(Membership::new(local.clone(), addr, ring.clone())));
        Server { local, membership, ring, store: Arc::new(Store::default()), transport }
    }

    /// Adds the seed members we were configured with.
    pub fn join(&self, seeds: &[(NodeId, SocketAddr)]) {
        let mut m = self.membership.lock().unwrap();
        for (id, addr) in seeds {
            if *id != self.local {
                m.apply(Update::Alive { id: id.clone(), addr: *addr, incarnation: 0 });
            }
        }
        info!("joined cluster through {} seeds, {} members known", seeds.len(), m.len());
    }

    pub fn spawn_detector(&self, cfg: DetectorConfig) -> thread::JoinHandle<()> {
        let d = Detector::new(cfg, self.membership.clone(), self.transport.clone());
        thread::Builder::new().name("swim-detector".into()).spawn(move || d.run()).expect("spawn detector")
    }

    /// Forwards membership events to the handoff manager.
    pub fn spawn_handoff(&self) -> thread::JoinHandle<()> {
        let (tx, rx) = mpsc::channel();
        let hm = HandoffManager::new(
            self.local.clone(),
            self.ring.clone(),
            self.membership.clone(),
            self.store.clone(),
            self.transport.clone(),
        );
        let membership = self.membership.clone();
        thread::Builder::new()
            .name("membership-events".into())
            .spawn(move || loop {
                for ev in membership.lock().unwrap().take_events() {
                    if tx.send(ev).is_err() {
                        return;
                    }
                }
                thread::sleep(std::time::Duration::from_millis(100));
            })
            .expect("spawn event pump");
        thread::Builder::new().name("handoff".into()).spawn(move || hm.run(rx)).expect("spawn handoff")
    }

    /// Starts `n` router workers sharing one job queue.
    pub fn spawn_workers(&self, n: usize) -> mpsc::Sender<Job> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..n {
            let rx = rx.clone();
            let router = Router::new(
                self.local.clone(),
                self.ring.clone(),
                self.membership.clone(),
                self.store.clone(),
                self.transport.clone(),
            );
            thread::Builder::new()
                .name(format!("router-{}", i))
                .spawn(move || loop {
                    let job = match rx.lock().unwrap().recv() {
                        Ok(j) => j,
                        Err(_) => return,
                    };
                    let resp = router.forward(job.request);
                    if job.reply.send(resp).is_err() {
                        error!("client went away before its reply was ready");
                    }
                })
                .expect("spawn router worker");
        }
        tx
    }
}

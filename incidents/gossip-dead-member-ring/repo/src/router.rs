//! Routes client requests to the member that owns the key's partition.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::handoff::partition_key;
use crate::member::NodeId;
use crate::membership::Membership;
use crate::ring::Ring;
use crate::store::{partition_of, Store};
use crate::transport::{Message, Transport};
use crate::warn;

#[derive(Debug, PartialEq, Eq)]
pub enum Route {
    Local,
    Remote(NodeId, SocketAddr),
}

#[derive(Debug)]
pub enum Request {
    Get { key: Vec<u8> },
    Put { key: Vec<u8>, value: Vec<u8> },
}

impl Request {
    pub fn key(&self) -> &[u8] {
        match self {
            Request::Get { key } | Request::Put { key, .. } => key,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Response {
    Value(Option<Vec<u8>>),
    Stored,
    Unavailable(String),
}

pub struct Router {
    local: NodeId,
    ring: Arc<RwLock<Ring>>,
    membership: Arc<Mutex<Membership>>,
    store: Arc<Store>,
    transport: Arc<dyn Transport>,
    forward_timeout: Duration,
}

impl Router {
    pub fn new(
        local: NodeId,
        ring: Arc<RwLock<Ring>>,
        membership: Arc<Mutex<Membership>>,
        store: Arc<Store>,
        transport: Arc<dyn Transport>,
    ) -> Router {
        Router { local, ring, membership, store, transport, forward_timeout: Duration::from_secs(2) }
    }

    /// Resolves the owner of `key`. The ring only contains members, so an
    /// owner always has an address.
    pub fn route(&self, key: &[u8]) -> Option<Route> {
        let owner = self.ring.read().unwrap().owner(&partition_key(partition_of(key)))?.clone();
        if owner == self.local {
            return Some(Route::Local);
        }
        let addr = self.membership.lock().unwrap().address_of(&owner).unwrap_or_else(|| {
            panic!("ring owner {} for key {:?} is not a member", owner, String::from_utf8_lossy(key))
        });
        Some(Route::Remote(owner, addr))
    }

    pub fn forward(&self, req: Request) -> Response {
        match self.route(req.key()) {
            None => Response::Unavailable("ring is empty".into()),
            Some(Route::Local) => match req {
                Request::Get { key } => Response::Value(self.store.get(&key)),
                Request::Put { key, value } => {
                    self.store.put(&key, &value);
                    Response::Stored
                }
            },
            Some(Route::Remote(owner, addr)) => {
                let msg = match req {
                    Request::Get { key } => Message::Get { key },
                    Request::Put { key, value } => Message::Put { key, value },
                };
                match self.transport.request(addr, msg, self.forward_timeout) {
                    Ok(Message::Value { value }) => Response::Value(value),
                    Ok(Message::Ack { .. }) => Response::Stored,
                    Ok(other) => Response::Unavailable(format!("unexpected reply from {}: {:?}", owner, other)),
                    Err(e) => {
                        warn!("forwarding to {} at {} failed: {}", owner, addr, e);
                        Response::Unavailable(format!("{} unreachable", owner))
                    }
                }
            }
        }
    }
}

//! ferrokv: a region-sharded, raft-replicated key-value store.

pub mod trace;

pub mod config;
pub mod pd;
pub mod raftstore;
pub mod storage;
pub mod transport;

//! Local key-value data, grouped by partition.

use std::collections::{BTreeMap, HashMap};
use std::sync::RwLock;

use crate::handoff::PARTITIONS;
use crate::ring::fnv1a;

pub fn partition_of(key: &[u8]) -> u32 {
    (fnv1a(key) % u64::from(PARTITIONS)) as u32
}

#[derive(Default)]
pub struct Store {
    parts: RwLock<HashMap<u32, BTreeMap<Vec<u8>, Vec<u8>>>>,
}

impl Store {
    pub fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.parts.read().unwrap().get(&partition_of(key)).and_then(|p| p.get(key).cloned())
    }

    pub fn put(&self, key: &[u8], value: &[u8]) {
        self.parts.write().unwrap().entry(partition_of(key)).or_default().insert(key.to_vec(), value.to_vec());
    }

    pub fn partition_entries(&self, p: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.parts
            .read()
            .unwrap()
            .get(&p)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }

    pub fn ingest(&self, p: u32, entries: Vec<(Vec<u8>, Vec<u8>)>) {
        self.parts.write().unwrap().entry(p).or_default().extend(entries);
    }

    pub fn drop_partition(&self, p: u32) {
        self.parts.write().unwrap().remove(&p);
    }
}

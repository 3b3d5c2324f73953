//! The local key-value engine shared by every region on a store.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, RwLock};

#[derive(Clone, Default)]
pub struct Engine {
    inner: Arc<RwLock<BTreeMap<Vec<u8>, Vec<u8>>>>,
}

impl Engine {
    pub fn new() -> Engine {
        Engine::default()
    }

    pub fn put(&self, key: &[u8], value: &[u8]) {
        self.inner.write().unwrap().insert(key.to_vec(), value.to_vec());
    }

    pub fn delete(&self, key: &[u8]) {
        self.inner.write().unwrap().remove(key);
    }

    pub fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.read().unwrap().get(key).cloned()
    }

    /// Total size of keys and values in `[start, end)`; an empty `end` means
    /// unbounded.
    pub fn approximate_size(&self, start: &[u8], end: &[u8]) -> u64 {
        let map = self.inner.read().unwrap();
        map.range::<[u8], _>((Bound::Included(start), upper(end)))
            .map(|(k, v)| (k.len() + v.len()) as u64)
            .sum()
    }

    /// The key at which `[start, end)` splits into two halves by size.
    pub fn middle_key(&self, start: &[u8], end: &[u8]) -> Option<Vec<u8>> {
        let total = self.approximate_size(start, end);
        let map = self.inner.read().unwrap();
        let mut acc = 0u64;
        for (k, v) in map.range::<[u8], _>((Bound::Included(start), upper(end))) {
            acc += (k.len() + v.len()) as u64;
            if acc * 2 >= total && k.as_slice() != start {
                return Some(k.clone());
            }
        }
        None
    }
}

fn upper(end: &[u8]) -> Bound<&[u8]> {
    if end.is_empty() {
        Bound::Unbounded
    } else {
        Bound::Excluded(end)
    }
}

//! Which attempts a run makes: every (incident, attempt) pair, the deterministic slice of them
//! that one shard runs (`--shard K/N`), and which of those are already finished on disk, so a
//! run can resume where it stopped.

use crate::attempt::layout::{attempt_dir, TRAJECTORY};
use crate::attempt::Exit;
use serde::Deserialize;
use std::path::Path;

/// One attempt of one incident.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pair {
    pub incident: String,
    pub attempt: u32,
}

/// Every pair of `incidents` × `1..=attempts`, sorted by incident id, then attempt. The order
/// depends only on the ids, so every machine that sees the same incidents lists the same pairs.
pub fn all_pairs(incidents: &[String], attempts: u32) -> Vec<Pair> {
    let mut ids: Vec<&String> = incidents.iter().collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .flat_map(|id| {
            (1..=attempts).map(move |k| Pair {
                incident: id.clone(),
                attempt: k,
            })
        })
        .collect()
}

/// `--shard K/N`: shard K (0-based, so a Kubernetes completion index can be K as it is) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` with `0 <= K < N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!("--shard {s:?}: expected K/N with 0 <= K < N, e.g. 0/4 (K counts from 0, like a Kubernetes completion index)")
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The whole run as one shard.
    pub fn all() -> Shard {
        Shard { index: 0, count: 1 }
    }

    /// This shard's part of `pairs`: a contiguous run of them, `len/N` long give or take one.
    /// Contiguous, so a shard holds whole incidents where it can and prepares few workspaces.
    /// Over K = 0..N the parts are disjoint and cover every pair.
    pub fn slice<'a, T>(&self, pairs: &'a [T]) -> &'a [T] {
        let len = pairs.len();
        let start = len * self.index / self.count;
        let end = len * (self.index + 1) / self.count;
        &pairs[start..end]
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The part of `trajectory.json` that says whether an attempt finished.
#[derive(Deserialize)]
struct Ending {
    incident: String,
    attempt: u32,
    exit: Exit,
}

/// True when the attempt left a valid `trajectory.json` for this incident and attempt with an
/// exit reason. An attempt that was cancelled (Ctrl-C) is not finished: resuming redoes it,
/// as it redoes one that stopped before writing its trajectory.
pub fn is_finished(config_dir: &Path, pair: &Pair) -> bool {
    let path = attempt_dir(config_dir, &pair.incident, pair.attempt).join(TRAJECTORY);
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    match serde_json::from_str::<Ending>(&text) {
        Ok(e) => {
            e.incident == pair.incident && e.attempt == pair.attempt && e.exit != Exit::Cancelled
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("inc-{i:03}")).collect()
    }

    #[test]
    fn shards_parse_from_zero_and_refuse_the_rest() {
        assert_eq!(Shard::parse("0/4").unwrap(), Shard { index: 0, count: 4 });
        assert_eq!(Shard::parse("3/4").unwrap().to_string(), "3/4");
        for bad in ["4/4", "1/0", "0/0", "a/2", "1", "-1/2", "1/2/3", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn pairs_are_sorted_and_independent_of_the_listing_order() {
        let a = all_pairs(&["b".into(), "a".into(), "b".into()], 2);
        let b = all_pairs(&["a".into(), "b".into()], 2);
        assert_eq!(a, b);
        assert_eq!(
            a.iter()
                .map(|p| (p.incident.as_str(), p.attempt))
                .collect::<Vec<_>>(),
            [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
        );
    }

    proptest! {
        /// The shards of any N partition the work exactly: every pair in exactly one shard,
        /// in order, and the shards differ in size by at most one.
        #[test]
        fn the_shards_of_any_n_partition_the_work(incidents in 0usize..60, attempts in 1u32..6, n in 1usize..80) {
            let pairs = all_pairs(&ids(incidents), attempts);
            let mut joined: Vec<Pair> = Vec::new();
            let mut sizes = Vec::new();
            for k in 0..n {
                let part = Shard { index: k, count: n }.slice(&pairs);
                sizes.push(part.len());
                joined.extend_from_slice(part);
            }
            prop_assert_eq!(&joined, &pairs);
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            prop_assert!(max - min <= 1, "sizes {:?}", sizes);
        }
    }

    #[test]
    fn only_a_valid_uncancelled_trajectory_of_the_same_attempt_is_finished() {
        let root = tempfile::tempdir().unwrap();
        let pair = Pair {
            incident: "inc".into(),
            attempt: 2,
        };
        let dir = attempt_dir(root.path(), "inc", 2);
        std::fs::create_dir_all(&dir).unwrap();
        let t = |exit: &str, attempt: u32| {
            format!(
                r#"{{"incident":"inc","attempt":{attempt},"agent":"a","exit":"{exit}","steps":[]}}"#
            )
        };
        assert!(!is_finished(root.path(), &pair), "no trajectory.json yet");
        std::fs::write(dir.join("trajectory.jsonl"), "{}\n").unwrap();
        assert!(!is_finished(root.path(), &pair), "only the live trajectory");
        for (text, done) in [
            (t("submitted", 2), true),
            (t("budget", 2), true),
            (t("error", 2), true),
            (t("cancelled", 2), false),
            (t("submitted", 1), false),
            (t("whatever", 2), false),
            (
                "{\"incident\":\"inc\",\"attempt\":2,\"agent\":\"a\"".to_string(),
                false,
            ),
        ] {
            std::fs::write(dir.join("trajectory.json"), &text).unwrap();
            assert_eq!(is_finished(root.path(), &pair), done, "{text}");
        }
    }
}

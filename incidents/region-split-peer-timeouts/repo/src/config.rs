//! Server configuration, loaded from a TOML-like file with `[section]`
//! headers and `key = value` lines.

use std::fmt;
use std::time::Duration;

#[derive(Debug)]
pub enum ConfigError {
    Parse { line: usize, msg: String },
    UnknownKey(String),
    Invalid(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Parse { line, msg } => write!(f, "line {}: {}", line, msg),
            ConfigError::UnknownKey(k) => write!(f, "unknown configuration key {:?}", k),
            ConfigError::Invalid(m) => write!(f, "invalid configuration: {}", m),
        }
    }
}

impl std::error::Error for ConfigError {}

/// A duration written as `"500ms"`, `"2s"`, `"10m"` or `"1h"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReadableDuration(pub Duration);

impl ReadableDuration {
    pub const fn secs(s: u64) -> Self {
        ReadableDuration(Duration::from_secs(s))
    }
    pub const fn millis(ms: u64) -> Self {
        ReadableDuration(Duration::from_millis(ms))
    }
    pub fn as_millis(&self) -> u64 {
        self.0.as_millis() as u64
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim().trim_matches('"');
        let split = s.find(|c: char| !c.is_ascii_digit() && c != '.').ok_or_else(|| format!("missing unit in {:?}", s))?;
        let (num, unit) = s.split_at(split);
        let n: f64 = num.parse().map_err(|_| format!("invalid number in {:?}", s))?;
        let ms = match unit {
            "ms" => n,
            "s" => n * 1_000.0,
            "m" => n * 60_000.0,
            "h" => n * 3_600_000.0,
            _ => return Err(format!("unknown unit {:?} in {:?}", unit, s)),
        };
        Ok(ReadableDuration(Duration::from_micros((ms * 1_000.0) as u64)))
    }
}

impl fmt::Display for ReadableDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.as_millis();
        if ms % 1_000 == 0 {
            write!(f, "{}s", ms / 1_000)
        } else {
            write!(f, "{}ms", ms)
        }
    }
}

/// A size written as `"96MiB"`, `"1GiB"` or a plain byte count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReadableSize(pub u64);

impl ReadableSize {
    pub const fn mb(n: u64) -> Self {
        ReadableSize(n * 1024 * 1024)
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim().trim_matches('"');
        let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let n: u64 = num.parse().map_err(|_| format!("invalid size {:?}", s))?;
        let mul = match unit.to_ascii_uppercase().as_str() {
            "" | "B" => 1,
            "KB" | "KIB" => 1 << 10,
            "MB" | "MIB" => 1 << 20,
            "GB" | "GIB" => 1 << 30,
            _ => return Err(format!("unknown size unit {:?}", unit)),
        };
        Ok(ReadableSize(n * mul))
    }
}

#[derive(Clone, Debug)]
pub struct RaftStoreConfig {
    pub raft_base_tick_interval: ReadableDuration,
    pub raft_heartbeat_ticks: u64,
    pub raft_election_timeout_ticks: u64,
    pub max_leader_lease: ReadableDuration,
    pub split_region_check_tick_interval: ReadableDuration,
    pub region_split_size: ReadableSize,
    pub region_max_size: ReadableSize,
}

impl Default for RaftStoreConfig {
    fn default() -> Self {
        RaftStoreConfig {
            raft_base_tick_interval: ReadableDuration::secs(1),
            raft_heartbeat_ticks: 2,
            raft_election_timeout_ticks: 10,
            max_leader_lease: ReadableDuration::secs(9),
            split_region_check_tick_interval: ReadableDuration::secs(10),
            region_split_size: ReadableSize::mb(96),
            region_max_size: ReadableSize::mb(144),
        }
    }
}

impl RaftStoreConfig {
    pub fn election_timeout(&self) -> Duration {
        self.raft_base_tick_interval.0 * self.raft_election_timeout_ticks as u32
    }

    pub fn heartbeat_interval(&self) -> Duration {
        self.raft_base_tick_interval.0 * self.raft_heartbeat_ticks as u32
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.raft_heartbeat_ticks == 0 || self.raft_election_timeout_ticks <= self.raft_heartbeat_ticks {
            return Err(ConfigError::Invalid(
                "raft-election-timeout-ticks must be greater than raft-heartbeat-ticks".into(),
            ));
        }
        if self.max_leader_lease.0 >= self.election_timeout() {
            return Err(ConfigError::Invalid(format!(
                "max-leader-lease ({}) must be shorter than the election timeout ({:?})",
                self.max_leader_lease,
                self.election_timeout()
            )));
        }
        if self.region_split_size > self.region_max_size {
            return Err(ConfigError::Invalid("region-split-size must not exceed region-max-size".into()));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub addr: String,
    pub store_id: u64,
    pub pd_endpoints: Vec<String>,
    pub log_level: String,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: "127.0.0.1:20160".into(),
            store_id: 1,
            pd_endpoints: vec!["127.0.0.1:2379".into()],
            log_level: "info".into(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    pub server: ServerConfig,
    pub raftstore: RaftStoreConfig,
}

impl Config {
    pub fn from_str(text: &str) -> Result<Config, ConfigError> {
        let mut cfg = Config::default();
        let mut section = String::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with('[') && line.ends_with(']') {
                section = line[1..line.len() - 1].trim().to_string();
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| ConfigError::Parse { line: i + 1, msg: "expected key = value".into() })?;
            let (key, value) = (key.trim(), value.trim());
            let err = |msg: String| ConfigError::Parse { line: i + 1, msg };
            let rs = &mut cfg.raftstore;
            match (section.as_str(), key) {
                ("server", "addr") => cfg.server.addr = value.trim_matches('"').to_string(),
                ("server", "store-id") => cfg.server.store_id = value.parse().map_err(|_| err("store-id".into()))?,
                ("server", "log-level") => cfg.server.log_level = value.trim_matches('"').to_string(),
                ("pd", "endpoints") => {
                    cfg.server.pd_endpoints = value
                        .trim_matches(|c| c == '[' || c == ']')
                        .split(',')
                        .map(|s| s.trim().trim_matches('"').to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                }
                ("raftstore", "raft-base-tick-interval") => rs.raft_base_tick_interval = ReadableDuration::parse(value).map_err(err)?,
                ("raftstore", "raft-heartbeat-ticks") => rs.raft_heartbeat_ticks = value.parse().map_err(|_| err(key.into()))?,
                ("raftstore", "raft-election-timeout-ticks") => {
                    rs.raft_election_timeout_ticks = value.parse().map_err(|_| err(key.into()))?
                }
                ("raftstore", "max-leader-lease") => rs.max_leader_lease = ReadableDuration::parse(value).map_err(err)?,
                ("raftstore", "split-region-check-tick-interval") => {
                    rs.split_region_check_tick_interval = ReadableDuration::parse(value).map_err(err)?
                }
                ("coprocessor", "region-split-size") => rs.region_split_size = ReadableSize::parse(value).map_err(err)?,
                ("coprocessor", "region-max-size") => rs.region_max_size = ReadableSize::parse(value).map_err(err)?,
                _ => return Err(ConfigError::UnknownKey(format!("{}.{}", section, key))),
            }
        }
        cfg.raftstore.validate()?;
        Ok(cfg)
    }
}

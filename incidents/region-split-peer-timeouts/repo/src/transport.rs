//! Raft message transport between stores: a connection per remote store,
//! carrying messages in a compact line-oriented text codec.

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::raftstore::msg::{Command, Entry, MessageKind, RaftMessage};
use crate::{debug, warn};

#[derive(Debug)]
pub enum TransportError {
    UnknownStore(u64),
    Io(std::io::Error),
    Backoff(Duration),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::UnknownStore(s) => write!(f, "store {} has no known address", s),
            TransportError::Io(e) => write!(f, "{}", e),
            TransportError::Backoff(d) => write!(f, "connection in backoff for {:?}", d),
        }
    }
}

pub trait Transport {
    fn send(&self, msg: RaftMessage) -> Result<(), TransportError>;
}

struct Conn {
    stream: Option<TcpStream>,
    retry_at: Option<Instant>,
}

pub struct TcpTransport {
    addrs: HashMap<u64, String>,
    conns: Mutex<HashMap<u64, Conn>>,
}

impl TcpTransport {
    pub fn new(addrs: HashMap<u64, String>) -> TcpTransport {
        TcpTransport { addrs, conns: Mutex::new(HashMap::new()) }
    }
}

impl Transport for TcpTransport {
    fn send(&self, msg: RaftMessage) -> Result<(), TransportError> {
        let addr = self.addrs.get(&msg.to_store).ok_or(TransportError::UnknownStore(msg.to_store))?;
        let mut conns = self.conns.lock().unwrap();
        let conn = conns.entry(msg.to_store).or_insert(Conn { stream: None, retry_at: None });
        if conn.stream.is_none() {
            if let Some(at) = conn.retry_at {
                let now = Instant::now();
                if now < at {
                    return Err(TransportError::Backoff(at - now));
                }
            }
            match TcpStream::connect_timeout(&addr.parse().map_err(|_| TransportError::UnknownStore(msg.to_store))?, Duration::from_millis(500)) {
                Ok(mut s) => {
                    if let Err(e) = s.write_all(b"RAFT\n") {
                        return Err(TransportError::Io(e));
                    }
                    debug!("connected to store {} at {}", msg.to_store, addr);
                    conn.stream = Some(s);
                    conn.retry_at = None;
                }
                Err(e) => {
                    warn!("connection to store {} at {} failed: {}", msg.to_store, addr, e);
                    conn.retry_at = Some(Instant::now() + Duration::from_secs(3));
                    return Err(TransportError::Io(e));
                }
            }
        }
        let line = encode(&msg);
        let res = conn.stream.as_mut().unwrap().write_all(line.as_bytes());
        if let Err(e) = res {
            conn.stream = None;
            return Err(TransportError::Io(e));
        }
        Ok(())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{:02x}", x)).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect()
}

fn encode_entry(e: &Entry) -> String {
    let cmd = match &e.cmd {
        Command::Noop => "n".to_string(),
        Command::Put { key, value } => format!("p:{}:{}", hex(key), hex(value)),
        Command::Delete { key } => format!("d:{}", hex(key)),
        Command::Split { split_key, new_region_id, new_peer_ids } => format!(
            "s:{}:{}:{}",
            hex(split_key),
            new_region_id,
            new_peer_ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")
        ),
    };
    format!("{}/{}/{}", e.term, e.index, cmd)
}

fn decode_entry(s: &str) -> Option<Entry> {
    let mut it = s.splitn(3, '/');
    let term = it.next()?.parse().ok()?;
    let index = it.next()?.parse().ok()?;
    let c: Vec<&str> = it.next()?.split(':').collect();
    let cmd = match c.as_slice() {
        ["n"] => Command::Noop,
        ["p", k, v] => Command::Put { key: unhex(k)?, value: unhex(v)? },
        ["d", k] => Command::Delete { key: unhex(k)? },
        ["s", k, r, ps] => Command::Split {
            split_key: unhex(k)?,
            new_region_id: r.parse().ok()?,
            new_peer_ids: ps.split(',').map(|p| p.parse().ok()).collect::<Option<Vec<u64>>>()?,
        },
        _ => return None,
    };
    Some(Entry { term, index, cmd })
}

pub fn encode(m: &RaftMessage) -> String {
    let kind = match &m.kind {
        MessageKind::Heartbeat { commit } => format!("hb {}", commit),
        MessageKind::HeartbeatResp => "hbr".to_string(),
        MessageKind::RequestVote { last_index, last_term } => format!("rv {} {}", last_index, last_term),
        MessageKind::Vote { granted } => format!("v {}", granted),
        MessageKind::Append { prev_index, prev_term, entries, commit } => format!(
            "ap {} {} {} {}",
            prev_index,
            prev_term,
            commit,
            entries.iter().map(encode_entry).collect::<Vec<_>>().join(";")
        ),
        MessageKind::AppendResp { match_index, reject } => format!("apr {} {}", match_index, reject),
    };
    format!("{} {} {} {} {} {}\n", m.region_id, m.from_peer, m.to_peer, m.to_store, m.term, kind)
}

pub fn decode(line: &str) -> Option<RaftMessage> {
    let f: Vec<&str> = line.trim_end().split(' ').collect();
    if f.len() < 6 {
        return None;
    }
    let num = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
    let kind = match f[5] {
        "hb" => MessageKind::Heartbeat { commit: num(6)? },
        "hbr" => MessageKind::HeartbeatResp,
        "rv" => MessageKind::RequestVote { last_index: num(6)?, last_term: num(7)? },
        "v" => MessageKind::Vote { granted: f.get(6)? == &"true" },
        "ap" => MessageKind::Append {
            prev_index: num(6)?,
            prev_term: num(7)?,
            commit: num(8)?,
            entries: match f.get(9) {
                Some(s) if !s.is_empty() => s.split(';').map(decode_entry).collect::<Option<Vec<_>>>()?,
                _ => Vec::new(),
            },
        },
        "apr" => MessageKind::AppendResp { match_index: num(6)?, reject: f.get(7)? == &"true" },
        _ => return None,
    };
    Some(RaftMessage { region_id: num(0)?, from_peer: num(1)?, to_peer: num(2)?, to_store: num(3)?, term: num(4)?, kind })
}

/// Reads messages from one inbound connection until it closes.
pub fn read_messages<R: std::io::Read>(r: R, mut deliver: impl FnMut(RaftMessage)) {
    for line in BufReader::new(r).lines() {
        match line {
            Ok(l) if l == "RAFT" => continue,
            Ok(l) => match decode(&l) {
                Some(m) => deliver(m),
                None => warn!("dropping undecodable raft message: {:?}", l),
            },
            Err(_) => return,
        }
    }
}

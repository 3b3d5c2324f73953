//! Messages exchanged between the replicas of a region.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Noop,
    Put { key: Vec<u8>, value: Vec<u8> },
    Delete { key: Vec<u8> },
    Split { split_key: Vec<u8>, new_region_id: u64, new_peer_ids: Vec<u64> },
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub term: u64,
    pub index: u64,
    pub cmd: Command,
}

#[derive(Clone, Debug)]
pub enum MessageKind {
    Heartbeat { commit: u64 },
    HeartbeatResp,
    RequestVote { last_index: u64, last_term: u64 },
    Vote { granted: bool },
    Append { prev_index: u64, prev_term: u64, entries: Vec<Entry>, commit: u64 },
    AppendResp { match_index: u64, reject: bool },
}

#[derive(Clone, Debug)]
pub struct RaftMessage {
    pub region_id: u64,
    pub from_peer: u64,
    pub to_peer: u64,
    pub to_store: u64,
    pub term: u64,
    pub kind: MessageKind,
}

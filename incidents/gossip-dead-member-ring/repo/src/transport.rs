//! Wire messages and the request/response transport used by the detector,
//! the handoff manager and the router.

use std::fmt;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::member::{NodeId, Update};

#[derive(Clone, Debug)]
pub enum Message {
    Ping { seq: u64, updates: Vec<Update> },
    PingReq { seq: u64, target: NodeId, target_addr: SocketAddr },
    Ack { seq: u64, updates: Vec<Update> },
    Get { key: Vec<u8> },
    Put { key: Vec<u8>, value: Vec<u8> },
    Value { value: Option<Vec<u8>> },
    HandoffBatch { epoch: u64, partition: u32, entries: Vec<(Vec<u8>, Vec<u8>)> },
    HandoffAck { epoch: u64, partition: u32 },
}

#[derive(Debug)]
pub enum TransportError {
    Timeout,
    Io(std::io::Error),
    Codec(String),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Timeout => write!(f, "timed out"),
            TransportError::Io(e) => write!(f, "{}", e),
            TransportError::Codec(s) => write!(f, "codec error: {}", s),
        }
    }
}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => TransportError::Timeout,
            _ => TransportError::Io(e),
        }
    }
}

pub trait Transport: Send + Sync {
    fn request(&self, to: SocketAddr, msg: Message, timeout: Duration) -> Result<Message, TransportError>;
}

/// Encodes a message as a length-prefixed frame. The body is the `Debug`
/// rendering, parsed back by `Codec`; good enough for a control plane that
/// sends a few hundred small messages per second.
pub struct Codec;

impl Codec {
    pub fn frame(msg: &Message) -> Vec<u8> {
        let body = format!("{:?}", msg).into_bytes();
        let mut out = (body.len() as u32).to_be_bytes().to_vec();
        out.extend(body);
        out
    }

    pub fn read_frame<R: Read>(r: &mut R) -> Result<Vec<u8>, TransportError> {
        let mut len = [0u8; 4];
        r.read_exact(&mut len)?;
        let n = u32::from_be_bytes(len) as usize;
        if n > 64 << 20 {
            return Err(TransportError::Codec(format!("frame of {} bytes is too large", n)));
        }
        let mut body = vec![0u8; n];
        r.read_exact(&mut body)?;
        Ok(body)
    }
}

pub struct TcpTransport {
    pub decode: fn(&[u8]) -> Option<Message>,
}

impl Transport for TcpTransport {
    fn request(&self, to: SocketAddr, msg: Message, timeout: Duration) -> Result<Message, TransportError> {
        let mut s = TcpStream::connect_timeout(&to, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        s.write_all(&Codec::frame(&msg))?;
        let body = Codec::read_frame(&mut s)?;
        (self.decode)(&body).ok_or_else(|| TransportError::Codec("undecodable reply".into()))
    }
}

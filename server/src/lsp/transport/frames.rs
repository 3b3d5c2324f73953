//! Splitting a byte stream into `Content-Length` frames, recovering from any bad input.
//!
//! The reader is plain synchronous code (bytes in, events out) so that it can be tested and
//! fuzzed without a runtime. It never gives up: a bad header or a body that is not JSON is
//! reported as a [`Event::Rejected`] frame, and reading starts again at the next
//! `Content-Length` header found in what follows, which is also how a body announced too
//! long or too short gives the next message back instead of swallowing it.

use aho_corasick::AhoCorasick;
use std::sync::LazyLock;

/// How many bytes of a bad frame or of skipped bytes are kept for the log.
pub const SHOWN_BYTES: usize = 48;
/// A header block longer than this without its blank line is not a header.
pub const MAX_HEADER: usize = 8 * 1024;
const CONTENT_LENGTH: &str = "content-length";

static HEADER_START: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build([CONTENT_LENGTH])
        .expect("a fixed pattern builds")
});

/// What the reader found in the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// A frame whose body is well-formed JSON (its JSON-RPC shape is checked elsewhere).
    Message(Vec<u8>),
    /// A frame that cannot be read: answered with a parse error (id null).
    Rejected(BadFrame),
    /// Bytes outside any frame (between frames, or the rest of a bad one): logged only.
    Skipped(Skipped),
}

#[derive(Debug, PartialEq, Eq)]
pub struct BadFrame {
    pub reason: String,
    pub first_bytes: Vec<u8>,
}

#[derive(Debug, PartialEq, Eq, Default)]
pub struct Skipped {
    pub count: usize,
    pub first_bytes: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// At what should be the first header line of a frame.
    Header,
    /// Looking for the next `Content-Length` header.
    Resync,
    /// Headers read; the body starts `body_at` bytes after `pos` and is `len` bytes long.
    Body { body_at: usize, len: usize },
}

pub struct FrameReader {
    buf: Vec<u8>,
    /// Where the unit being read (header, body or skipped bytes) starts in `buf`.
    pos: usize,
    state: State,
    /// The largest body accepted.
    limit: usize,
    /// Bytes skipped so far in the current run, reported when the run ends.
    junk: Skipped,
}

fn shown(bytes: &[u8]) -> Vec<u8> {
    bytes[..bytes.len().min(SHOWN_BYTES)].to_vec()
}

/// Is every byte a header-name character (RFC 7230 token)?
fn is_token(name: &[u8]) -> bool {
    !name.is_empty()
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b))
}

/// `Name: value` split at its colon, or `None` when the line is not a header line.
fn header_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = line.iter().position(|&b| b == b':')?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    is_token(name).then_some((name, value.trim_ascii()))
}

/// Could these bytes (no newline yet) still become a header line?
fn may_be_header(partial: &[u8]) -> bool {
    match partial.iter().position(|&b| b == b':') {
        Some(colon) => is_token(&partial[..colon]),
        None => partial.is_empty() || is_token(partial),
    }
}

/// The value of a `Content-Length` header, or why it is not one.
fn content_length(value: &[u8], limit: usize) -> Result<usize, String> {
    let text = String::from_utf8_lossy(value);
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(format!(
            "Content-Length {text:?} is not a non-negative integer"
        ));
    }
    match text.parse::<usize>() {
        Ok(n) if n <= limit => Ok(n),
        _ => Err(format!(
            "Content-Length {text} exceeds the limit of {limit} bytes"
        )),
    }
}

/// Why a body is not JSON, if it is not.
fn not_json(body: &[u8]) -> Option<String> {
    if body.is_empty() {
        return Some("the body is empty".into());
    }
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => return Some(format!("the body is not UTF-8 ({e})")),
    };
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .err()
        .map(|e| format!("the body is not JSON ({e})"))
}

impl FrameReader {
    pub fn new(limit: usize) -> FrameReader {
        FrameReader {
            buf: Vec::new(),
            pos: 0,
            state: State::Header,
            limit,
            junk: Skipped::default(),
        }
    }

    /// Adds bytes read from the stream.
    pub fn push(&mut self, data: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// Are there bytes of an unfinished frame (or skipped bytes not yet reported)?
    pub fn has_pending(&self) -> bool {
        self.pos < self.buf.len() || self.junk.count > 0
    }

    /// The next event the bytes so far allow; `None` when more bytes are needed.
    pub fn next_event(&mut self) -> Option<Event> {
        loop {
            let step = match self.state {
                State::Header => self.read_header(),
                State::Resync => self.resync(),
                State::Body { body_at, len } => self.read_body(body_at, len),
            };
            match step {
                Step::Event(e) => return Some(e),
                Step::Again => continue,
                Step::NeedMore => return None,
            }
        }
    }

    /// No more bytes came in time (or the stream ended): what is pending is given up. Call
    /// `next_event` again afterwards, since what was pending may hold the next frame.
    pub fn expire(&mut self) -> Option<Event> {
        let rest = &self.buf[self.pos..];
        match self.state {
            State::Body { body_at, len } => {
                let got = rest.len().saturating_sub(body_at);
                let first_bytes = shown(rest);
                self.pos += body_at;
                self.state = State::Resync;
                Some(Event::Rejected(BadFrame {
                    reason: format!("the body ended after {got} of its {len} bytes"),
                    first_bytes,
                }))
            }
            State::Header if !rest.is_empty() && may_be_header(rest) => {
                let first_bytes = shown(rest);
                self.pos += 1;
                self.state = State::Resync;
                Some(Event::Rejected(BadFrame {
                    reason: "the header ended without its blank line".into(),
                    first_bytes,
                }))
            }
            _ => {
                let n = rest.len();
                self.skip(n);
                self.state = State::Header;
                self.take_junk()
            }
        }
    }

    fn skip(&mut self, n: usize) {
        let room = SHOWN_BYTES.saturating_sub(self.junk.first_bytes.len());
        let shown_now = n.min(room);
        self.junk
            .first_bytes
            .extend_from_slice(&self.buf[self.pos..self.pos + shown_now]);
        self.junk.count += n;
        self.pos += n;
    }

    fn take_junk(&mut self) -> Option<Event> {
        (self.junk.count > 0).then(|| Event::Skipped(std::mem::take(&mut self.junk)))
    }

    fn reject(&mut self, reason: String, resync_at: usize) -> Step {
        let first_bytes = shown(&self.buf[self.pos..]);
        self.pos = resync_at;
        self.state = State::Resync;
        Step::Event(Event::Rejected(BadFrame {
            reason,
            first_bytes,
        }))
    }

    /// Bytes at `pos` that are not a frame: skipped (at least one, so reading moves on)
    /// up to the next header.
    fn skip_to_next_header(&mut self) -> Step {
        self.skip(1);
        self.state = State::Resync;
        Step::Again
    }

    fn resync(&mut self) -> Step {
        let rest = &self.buf[self.pos..];
        match HEADER_START.find(rest) {
            Some(m) => {
                let at = m.start();
                self.skip(at);
                self.state = State::Header;
                match self.take_junk() {
                    Some(e) => Step::Event(e),
                    None => Step::Again,
                }
            }
            None => {
                // Keep what could be the start of a header cut by the read.
                let keep = CONTENT_LENGTH.len() - 1;
                let n = rest.len().saturating_sub(keep);
                self.skip(n);
                Step::NeedMore
            }
        }
    }

    fn read_header(&mut self) -> Step {
        let start = self.pos;
        let mut cur = start;
        let mut length: Option<usize> = None;
        loop {
            let Some(nl) = memchr::memchr(b'\n', &self.buf[cur..]) else {
                let partial = &self.buf[cur..];
                if cur == start && !may_be_header(partial) {
                    return self.skip_to_next_header();
                }
                if self.buf.len() - start > MAX_HEADER {
                    return self.reject(
                        format!("no end of the header within {MAX_HEADER} bytes"),
                        start + 1,
                    );
                }
                return Step::NeedMore;
            };
            let line_at = cur;
            let raw = &self.buf[cur..cur + nl];
            let line = raw.strip_suffix(b"\r").unwrap_or(raw);
            cur += nl + 1;
            if line.is_empty() && line_at > start {
                break;
            }
            let Some((name, value)) = header_line(line) else {
                if line_at == start {
                    // Not a frame at all: bytes to skip up to the next header.
                    return self.skip_to_next_header();
                }
                let reason = format!(
                    "not a header line: {:?}",
                    String::from_utf8_lossy(&shown(line))
                );
                return self.reject(reason, line_at);
            };
            if !name.eq_ignore_ascii_case(CONTENT_LENGTH.as_bytes()) {
                continue;
            }
            match content_length(value, self.limit) {
                // The same length twice is harmless (HTTP allows it); two lengths are not,
                // and reading goes on after the second.
                Ok(n) if length.is_some_and(|l| l != n) => {
                    return self.reject("two different Content-Length headers".into(), cur)
                }
                Ok(n) => length = Some(n),
                Err(reason) => return self.reject(reason, start + 1),
            }
        }
        match length {
            Some(len) => {
                self.state = State::Body {
                    body_at: cur - start,
                    len,
                };
                Step::Again
            }
            None => self.reject("the header has no Content-Length".into(), start + 1),
        }
    }

    fn read_body(&mut self, body_at: usize, len: usize) -> Step {
        let from = self.pos + body_at;
        if self.buf.len() - from < len {
            return Step::NeedMore;
        }
        if let Some(reason) = not_json(&self.buf[from..from + len]) {
            let first_bytes = shown(&self.buf[from..from + len]);
            // The length may be wrong: look for the next header inside this body too.
            self.pos = from;
            self.state = State::Resync;
            return Step::Event(Event::Rejected(BadFrame {
                reason,
                first_bytes,
            }));
        }
        // Hand the body over without copying it (documents can be tens of megabytes).
        let rest = self.buf.split_off(from + len);
        let mut body = std::mem::replace(&mut self.buf, rest);
        body.drain(..from);
        self.pos = 0;
        self.state = State::Header;
        Step::Event(Event::Message(body))
    }
}

enum Step {
    Event(Event),
    Again,
    NeedMore,
}

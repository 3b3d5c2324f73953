//! Effects before answers: the answer to a command is written only after everything the
//! command had the server send (diagnostics, logs) has been written to the client.
//!
//! Why: the framework merges its answers and our notifications into one output in no fixed
//! order, so the answer to `distdebug.score` could leave before the `hit` diagnostics it
//! caused. Some clients lose what follows an answer: Emacs's jsonrpc.el (1.0.14, Emacs 28)
//! leaves its process filter by a `throw` when a synchronous request's answer arrives, and the
//! rest of that chunk of output waits unread until the server writes again. Written in the
//! order "effects, then answer", nothing a command caused is left behind the answer.
//!
//! How: the output is wrapped in a [`CountingWriter`] that counts the server-to-client messages
//! (frames whose JSON object has a top-level `method`) as their last byte is written. The
//! outbox's pump counts what it hands to the framework, and a barrier asks the pump for that
//! count (after everything queued before it) and waits until the writer has written as many.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::AsyncWrite;
use tokio::sync::watch;

/// How many server-to-client messages have been written out so far.
#[derive(Debug)]
pub struct Written {
    count: watch::Sender<u64>,
}

impl Written {
    pub fn new() -> Arc<Written> {
        Arc::new(Written {
            count: watch::Sender::new(0),
        })
    }

    fn add(&self, n: u64) {
        if n > 0 {
            self.count.send_modify(|c| *c += n);
        }
    }

    pub fn now(&self) -> u64 {
        *self.count.borrow()
    }

    /// Waits until at least `target` messages have been written, for at most `limit`; false
    /// when the limit passed first (the client stopped reading, or a message was never sent).
    pub async fn reached(&self, target: u64, limit: Duration) -> bool {
        let mut rx = self.count.subscribe();
        let reached = tokio::time::timeout(limit, rx.wait_for(|c| *c >= target))
            .await
            .is_ok_and(|r| r.is_ok());
        reached
    }
}

/// The output stream, counting the messages with a `method` that pass through it.
pub struct CountingWriter<W> {
    inner: W,
    frames: FrameCounter,
    written: Arc<Written>,
}

impl<W> CountingWriter<W> {
    pub fn new(inner: W, written: Arc<Written>) -> CountingWriter<W> {
        CountingWriter {
            inner,
            frames: FrameCounter::default(),
            written,
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for CountingWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            let done = this.frames.feed(&buf[..*n]);
            this.written.add(done);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Follows `Content-Length` frames through the written bytes, whatever pieces they come in,
/// and tells for each body whether its top-level object has a `method` key (a request or a
/// notification, not an answer). One pass, no copy of the body.
#[derive(Debug, Default)]
pub struct FrameCounter {
    header: Vec<u8>,
    /// Body bytes still to come; `None` while reading a header.
    remaining: Option<usize>,
    body: KeyScanner,
}

/// A header longer than this is not one of the framework's; it is dropped and reading starts
/// again (the count is then only too low, which makes a barrier wait until its time limit).
const MAX_HEADER: usize = 4096;

impl FrameCounter {
    /// Feeds written bytes; returns how many messages with a `method` they completed.
    pub fn feed(&mut self, mut bytes: &[u8]) -> u64 {
        let mut done = 0;
        while !bytes.is_empty() {
            match self.remaining {
                None => {
                    let Some(i) = bytes.iter().position(|&b| b == b'\n') else {
                        self.header.extend_from_slice(bytes);
                        if self.header.len() > MAX_HEADER {
                            self.header.clear();
                        }
                        return done;
                    };
                    self.header.extend_from_slice(&bytes[..=i]);
                    bytes = &bytes[i + 1..];
                    if self.header.ends_with(b"\r\n\r\n") {
                        self.remaining = content_length(&self.header);
                        self.header.clear();
                        self.body = KeyScanner::default();
                        if self.remaining == Some(0) {
                            self.remaining = None;
                        }
                    }
                }
                Some(left) => {
                    let take = left.min(bytes.len());
                    for &b in &bytes[..take] {
                        self.body.feed(b);
                    }
                    bytes = &bytes[take..];
                    if take == left {
                        self.remaining = None;
                        if self.body.saw_method {
                            done += 1;
                        }
                    } else {
                        self.remaining = Some(left - take);
                    }
                }
            }
        }
        done
    }
}

fn content_length(header: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(header).ok()?;
    text.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            value.trim().parse().ok()
        } else {
            None
        }
    })
}

/// Reads a JSON text byte by byte and notes whether the outermost object has the key
/// `method`. Strings (with escapes) and nesting are followed; values are not decoded.
#[derive(Debug, Default)]
struct KeyScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    /// The key being read (only its first bytes: "method" is all that matters).
    key: Option<Vec<u8>>,
    saw_method: bool,
}

impl KeyScanner {
    fn feed(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if let Some(k) = self.key.take() {
                    if k == b"method" {
                        self.saw_method = true;
                    }
                }
                return;
            }
            if let Some(k) = self.key.as_mut() {
                if k.len() <= 8 {
                    k.push(b);
                }
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.key = Some(Vec::new());
                    self.expect_key = false;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.expect_key = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.expect_key = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn counts_requests_and_notifications_not_answers() {
        let mut all = Vec::new();
        all.extend(frame(
            r#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///a","diagnostics":[]}}"#,
        ));
        // An answer whose result holds objects with a "method" key: not counted.
        all.extend(frame(
            r#"{"jsonrpc":"2.0","result":{"method":"x","nested":{"method":"y"}},"id":1}"#,
        ));
        // Escaped quotes and braces inside strings do not confuse the scanner.
        all.extend(frame(
            r#"{"jsonrpc":"2.0","params":{"message":"a \"}\" {method"},"method":"window/logMessage"}"#,
        ));
        all.extend(frame(
            r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"method"},"id":2}"#,
        ));
        all.extend(frame(
            r#"{"id":3,"method":"window/workDoneProgress/create","jsonrpc":"2.0"}"#,
        ));
        // Whole, and in every piece size down to single bytes: the same count.
        for size in [all.len(), 1000, 7, 3, 1] {
            let mut c = FrameCounter::default();
            let n: u64 = all.chunks(size).map(|piece| c.feed(piece)).sum();
            assert_eq!(n, 3, "pieces of {size} bytes");
        }
    }

    #[test]
    fn a_message_counts_when_its_last_byte_is_written() {
        let bytes = frame(r#"{"jsonrpc":"2.0","method":"m"}"#);
        let mut c = FrameCounter::default();
        assert_eq!(c.feed(&bytes[..bytes.len() - 1]), 0);
        assert_eq!(c.feed(&bytes[bytes.len() - 1..]), 1);
        // Headers in either case, with a content type, multi-byte text in the body.
        let body = r#"{"method":"é◆"}"#;
        let other = format!(
            "content-length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{body}",
            body.len()
        );
        assert_eq!(c.feed(other.as_bytes()), 1);
    }

    #[tokio::test]
    async fn the_writer_counts_what_it_wrote_and_a_barrier_waits_for_it() {
        use tokio::io::AsyncWriteExt;
        let written = Written::new();
        let (a, _b) = tokio::io::duplex(1 << 16);
        let mut w = CountingWriter::new(a, written.clone());
        assert!(!written.reached(1, Duration::from_millis(20)).await);
        w.write_all(&frame(r#"{"method":"m"}"#)).await.unwrap();
        w.write_all(&frame(r#"{"result":null,"id":1}"#))
            .await
            .unwrap();
        assert_eq!(written.now(), 1);
        assert!(written.reached(1, Duration::from_millis(20)).await);
    }
}

//! The JSON-RPC transport in front of tower-lsp-server: our own framing, so that no input
//! ends the server.
//!
//! The framework stops reading at the first frame it cannot decode. Here `frames.rs` splits
//! the client's bytes into frames (re-synchronising after anything bad), `message.rs` checks
//! each one is a JSON-RPC 2.0 message, bad ones are answered with the spec's error and logged
//! on stderr, and only good frames reach the framework through an in-memory pipe. Its answers
//! come back through a second pipe and are written out whole, one frame at a time, together
//! with ours, so that the two never interleave.

pub mod frames;
pub mod message;
#[cfg(test)]
mod tests;

use frames::{Event, FrameReader};
use message::{error_frame, frame, INVALID_REQUEST, PARSE_ERROR};
use std::future::Future;
use std::time::Duration;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;

/// Limits of the transport.
#[derive(Debug, Clone, Copy)]
pub struct TransportOptions {
    /// An unfinished frame with no new byte for this long is given up.
    pub idle_timeout: Duration,
    /// The largest body accepted.
    pub max_body: usize,
}

impl Default for TransportOptions {
    fn default() -> TransportOptions {
        TransportOptions {
            idle_timeout: Duration::from_secs(2),
            max_body: 512 * 1024 * 1024,
        }
    }
}

/// How the client ended the connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ending {
    /// The client sent the `exit` notification (else its stream ended).
    pub exit_sent: bool,
}

const PIPE_SIZE: usize = 1 << 16;

/// Runs `framework` (given the good frames to read and a pipe to answer on) with `input` and
/// `output` as the client's streams; returns when the framework does.
pub async fn serve<I, O, F, Fut>(
    input: I,
    output: O,
    options: TransportOptions,
    framework: F,
) -> Ending
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
    F: FnOnce(DuplexStream, DuplexStream) -> Fut,
    Fut: Future<Output = ()>,
{
    let (to_framework, framework_in) = tokio::io::duplex(PIPE_SIZE);
    let (framework_out, from_framework) = tokio::io::duplex(PIPE_SIZE);
    let (frames_tx, frames_rx) = mpsc::channel::<Vec<u8>>(64);
    let mut ending = Ending::default();
    let reading = read_client(input, to_framework, frames_tx.clone(), options, &mut ending);
    let relaying = relay_answers(from_framework, frames_tx);
    let served = async move {
        let serving = async {
            tokio::join!(framework(framework_in, framework_out), relaying);
        };
        // The reader never ends the session itself: at the end of its input it closes the
        // framework's, and the framework ends.
        let reading = async {
            reading.await;
            std::future::pending::<()>().await
        };
        tokio::select! {
            _ = serving => {}
            _ = reading => {}
        }
    };
    tokio::join!(served, write_client(output, frames_rx));
    ending
}

/// Reads the client's bytes until they end, passing good frames on and answering bad ones.
async fn read_client<I: AsyncRead + Unpin>(
    mut input: I,
    mut to_framework: DuplexStream,
    answers: mpsc::Sender<Vec<u8>>,
    options: TransportOptions,
    ending: &mut Ending,
) {
    let mut reader = FrameReader::new(options.max_body);
    let mut chunk = vec![0u8; PIPE_SIZE];
    loop {
        while let Some(event) = reader.next_event() {
            if !pass_on(event, &mut to_framework, &answers, ending).await {
                return;
            }
        }
        let read = if reader.has_pending() {
            tokio::time::timeout(options.idle_timeout, input.read(&mut chunk)).await
        } else {
            Ok(input.read(&mut chunk).await)
        };
        match read {
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => reader.push(&chunk[..n]),
            Ok(Err(e)) => {
                eprintln!("distdebug lsp: cannot read the client's messages: {e}");
                break;
            }
            Err(_) => {
                if let Some(event) = reader.expire() {
                    if !pass_on(event, &mut to_framework, &answers, ending).await {
                        return;
                    }
                }
            }
        }
    }
    // The stream ended: whatever is left is reported, and may still hold whole frames.
    while reader.has_pending() {
        while let Some(event) = reader.next_event() {
            if !pass_on(event, &mut to_framework, &answers, ending).await {
                return;
            }
        }
        match reader.expire() {
            Some(event) => {
                if !pass_on(event, &mut to_framework, &answers, ending).await {
                    return;
                }
            }
            None => break,
        }
    }
}

/// Handles one event; `false` once the framework no longer reads.
async fn pass_on(
    event: Event,
    to_framework: &mut DuplexStream,
    answers: &mpsc::Sender<Vec<u8>>,
    ending: &mut Ending,
) -> bool {
    match event {
        Event::Message(body) => match message::check(&body) {
            Ok(accepted) => {
                if accepted.method.as_deref() == Some("exit") {
                    ending.exit_sent = true;
                }
                let head = format!("Content-Length: {}\r\n\r\n", body.len());
                to_framework.write_all(head.as_bytes()).await.is_ok()
                    && to_framework.write_all(&body).await.is_ok()
            }
            Err(refused) => {
                log_bad("invalid request", &refused.reason, &body);
                let text = format!("Invalid Request: {}", refused.reason);
                let _ = answers
                    .send(error_frame(INVALID_REQUEST, &text, &refused.id))
                    .await;
                true
            }
        },
        Event::Rejected(bad) => {
            log_bad("bad frame", &bad.reason, &bad.first_bytes);
            let text = format!("Parse error: {}", bad.reason);
            let _ = answers
                .send(error_frame(PARSE_ERROR, &text, &serde_json::Value::Null))
                .await;
            true
        }
        Event::Skipped(s) => {
            eprintln!(
                "distdebug lsp: skipped {} bytes up to the next Content-Length header, starting {}",
                s.count,
                shown(&s.first_bytes)
            );
            true
        }
    }
}

fn shown(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(frames::SHOWN_BYTES)];
    format!("\"{}\"", cut.escape_ascii())
}

fn log_bad(what: &str, reason: &str, bytes: &[u8]) {
    eprintln!(
        "distdebug lsp: {what} answered with an error ({reason}); it starts {}",
        shown(bytes)
    );
}

/// Copies the framework's answers, frame by frame, to the writer.
async fn relay_answers(from_framework: DuplexStream, out: mpsc::Sender<Vec<u8>>) {
    let mut r = BufReader::new(from_framework);
    loop {
        let mut length = None;
        loop {
            let mut line = Vec::new();
            match r.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_ascii();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix(b"Content-Length:") {
                length = std::str::from_utf8(v)
                    .ok()
                    .and_then(|v| v.trim().parse().ok());
            }
        }
        let Some(length) = length else {
            eprintln!("distdebug lsp: the framework wrote a frame without Content-Length");
            return;
        };
        let mut body = vec![0u8; length];
        if r.read_exact(&mut body).await.is_err() {
            return;
        }
        if out.send(frame(&body)).await.is_err() {
            return;
        }
    }
}

/// Writes whole frames to the client, in the order they come.
async fn write_client<O: AsyncWrite + Unpin>(mut output: O, mut frames: mpsc::Receiver<Vec<u8>>) {
    while let Some(f) = frames.recv().await {
        if output.write_all(&f).await.is_err() || output.flush().await.is_err() {
            // The client is gone; keep draining so that nobody waits on a full channel.
            while frames.recv().await.is_some() {}
            return;
        }
    }
}

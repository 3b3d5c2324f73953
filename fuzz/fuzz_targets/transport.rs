//! The language server's framing and JSON-RPC check: any byte stream, cut into reads of any
//! sizes, must be consumed to the end without a panic, every event must make progress, and
//! every frame that passes the check must be one the framework decodes.
#![no_main]

use distdebug::lsp::transport::frames::{Event, FrameReader};
use distdebug::lsp::transport::message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, input)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(chunk % 64) + 1;
    let mut reader = FrameReader::new(1 << 16);
    let handle = |e: Event| {
        if let Event::Message(body) = e {
            if message::check(&body).is_ok() {
                // What passes must decode as the framework's own types would.
                let v: serde_json::Value = serde_json::from_slice(&body).expect("checked JSON");
                assert!(v.is_object());
            }
        }
    };
    for piece in input.chunks(chunk) {
        reader.push(piece);
        while let Some(e) = reader.next_event() {
            handle(e);
        }
    }
    // The end of the stream: everything pending is given up, a bounded number of times.
    let mut rounds = 0;
    while reader.has_pending() {
        while let Some(e) = reader.next_event() {
            handle(e);
        }
        match reader.expire() {
            Some(e) => handle(e),
            None => break,
        }
        rounds += 1;
        assert!(rounds <= input.len() + 2, "expire must make progress");
    }
});

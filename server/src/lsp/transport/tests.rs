//! The framing reader and the message check on every kind of bad input the transport must
//! survive, each followed by a good message that must still come through.

use super::frames::{Event, FrameReader};
use super::message::{check, Refused};
use serde_json::{json, Value};

const GOOD: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;

fn framed(body: &[u8]) -> Vec<u8> {
    super::message::frame(body)
}

/// Feeds `input` in chunks of `chunk` bytes, then lets the pending bytes expire (as at the
/// end of the stream); returns every event in order.
fn events(input: &[u8], chunk: usize) -> Vec<Event> {
    let mut r = FrameReader::new(1 << 20);
    let mut out = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        r.push(piece);
        while let Some(e) = r.next_event() {
            out.push(e);
        }
    }
    while r.has_pending() {
        while let Some(e) = r.next_event() {
            out.push(e);
        }
        match r.expire() {
            Some(e) => out.push(e),
            None => break,
        }
    }
    out
}

fn messages(evs: &[Event]) -> Vec<&[u8]> {
    evs.iter()
        .filter_map(|e| match e {
            Event::Message(m) => Some(m.as_slice()),
            _ => None,
        })
        .collect()
}

fn rejected(evs: &[Event]) -> usize {
    evs.iter()
        .filter(|e| matches!(e, Event::Rejected(_)))
        .count()
}

#[test]
fn good_frames_come_through_whatever_the_chunking() {
    let other = br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
    let mut input = framed(GOOD);
    input.extend(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
    input.extend(framed(other));
    for chunk in [1, 2, 7, 64, 10_000] {
        let evs = events(&input, chunk);
        assert_eq!(messages(&evs), vec![GOOD, &other[..]], "chunk {chunk}");
        assert_eq!(evs.len(), 2, "chunk {chunk}: {evs:?}");
    }
}

#[test]
fn every_bad_header_is_rejected_once_and_the_next_frame_read() {
    let bad_headers: [&[u8]; 7] = [
        b"Content-Lenght: 5\r\n\r\nhello",
        b"Content-Length: abc\r\n\r\n{}",
        b"Content-Length: -5\r\n\r\n{}",
        b"Content-Length: 99999999999999999999999999\r\n\r\n{}",
        b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        b"Content-Length: 2\r\n{}\r\n\r\n",
        b"Content-Length: 2000000\r\n\r\n{}",
    ];
    for bad in bad_headers {
        let mut input = bad.to_vec();
        input.extend(framed(GOOD));
        for chunk in [1, 5, 4096] {
            let evs = events(&input, chunk);
            assert_eq!(
                rejected(&evs),
                1,
                "{:?} chunk {chunk}: {evs:?}",
                bad.escape_ascii()
            );
            assert_eq!(messages(&evs), vec![GOOD], "{:?}", bad.escape_ascii());
        }
    }
}

#[test]
fn bodies_that_are_not_json_are_rejected() {
    for body in [
        &b"{\"jsonrpc\":\"2.0\","[..],
        b"\xff\xfe",
        b"",
        b"{} {}",
        b"nul",
    ] {
        let mut input = framed(body);
        input.extend(framed(GOOD));
        let evs = events(&input, 3);
        assert_eq!(rejected(&evs), 1, "{:?}: {evs:?}", body.escape_ascii());
        assert_eq!(messages(&evs), vec![GOOD]);
    }
}

#[test]
fn a_length_too_short_gives_the_next_frame_back() {
    let mut input = format!("Content-Length: {}\r\n\r\n", GOOD.len() - 5).into_bytes();
    input.extend(GOOD);
    input.extend(framed(GOOD));
    let evs = events(&input, 4096);
    assert_eq!(rejected(&evs), 1, "{evs:?}");
    assert_eq!(messages(&evs), vec![GOOD]);
}

#[test]
fn a_length_too_long_does_not_eat_the_next_frame() {
    // The next frame comes at once: the body swallows part of it, is not JSON, and the
    // header found inside it starts the next frame.
    for extra in [3, 14, 20] {
        let mut input = format!("Content-Length: {}\r\n\r\n", GOOD.len() + extra).into_bytes();
        input.extend(GOOD);
        input.extend(framed(GOOD));
        input.extend(framed(GOOD));
        let evs = events(&input, 4096);
        assert_eq!(rejected(&evs), 1, "extra {extra}: {evs:?}");
        // The second good frame always survives; the first too unless its header was eaten.
        let n = messages(&evs).len();
        assert!(n == 2 || (n == 1 && extra > 14), "extra {extra}: {evs:?}");
    }
}

#[test]
fn a_body_that_never_completes_expires_and_reading_goes_on() {
    let mut r = FrameReader::new(1 << 20);
    let mut input = format!("Content-Length: {}\r\n\r\n", GOOD.len() + 10).into_bytes();
    input.extend(GOOD);
    r.push(&input);
    assert_eq!(r.next_event(), None, "waits for the rest of the body");
    assert!(matches!(r.expire(), Some(Event::Rejected(_))));
    r.push(&framed(GOOD));
    let mut got = Vec::new();
    while let Some(e) = r.next_event() {
        got.push(e);
    }
    assert_eq!(messages(&got), vec![GOOD], "{got:?}");
}

#[test]
fn a_header_that_never_ends_expires() {
    let mut r = FrameReader::new(1 << 20);
    r.push(b"Content-Length: 5");
    assert_eq!(r.next_event(), None);
    assert!(matches!(r.expire(), Some(Event::Rejected(_))));
    r.push(&framed(GOOD));
    let mut got = Vec::new();
    while let Some(e) = r.next_event() {
        got.push(e);
    }
    assert_eq!(messages(&got), vec![GOOD], "{got:?}");
}

#[test]
fn bytes_between_frames_are_skipped_not_answered() {
    let mut input = b"\r\nhello world\n".to_vec();
    input.extend(framed(GOOD));
    input.extend(b"}}}");
    input.extend(framed(GOOD));
    let evs = events(&input, 2);
    assert_eq!(rejected(&evs), 0, "{evs:?}");
    assert_eq!(messages(&evs).len(), 2);
    let skipped: usize = evs
        .iter()
        .map(|e| match e {
            Event::Skipped(s) => s.count,
            _ => 0,
        })
        .sum();
    assert_eq!(skipped, 14 + 3);
}

fn refused(body: &str) -> Refused {
    check(body.as_bytes()).expect_err(body)
}

#[test]
fn messages_that_are_not_json_rpc_are_refused_with_the_id_when_readable() {
    let null_id = [
        "42",
        "[]",
        "null",
        "\"x\"",
        r#"{"foo":1}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"x"}"#,
    ];
    for body in null_id {
        assert_eq!(refused(body).id, Value::Null, "{body}");
    }
    let with_id = [
        r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#,
        r#"{"id":3,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":5}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"x","params":5}"#,
        r#"{"jsonrpc":"2.0","id":3}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":"x","message":"m"}}"#,
    ];
    for body in with_id {
        assert_eq!(refused(body).id, json!(3), "{body}");
    }
    assert_eq!(
        refused(r#"{"jsonrpc":"2.0","id":"a","method":7}"#).id,
        json!("a")
    );
}

#[test]
fn json_rpc_messages_are_accepted() {
    for body in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":"s","method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","id":-4,"method":"x","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"exit"}"#,
        r#"{"jsonrpc":"2.0","method":"exit","params":null}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":null}"#,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#,
        r#"{"jsonrpc":"2.0","method":"x","params":{},"extra":true}"#,
    ] {
        assert!(check(body.as_bytes()).is_ok(), "{body}");
    }
    let exit = check(br#"{"jsonrpc":"2.0","method":"exit"}"#).unwrap();
    assert_eq!(exit.method.as_deref(), Some("exit"));
    assert!(!exit.is_request);
}

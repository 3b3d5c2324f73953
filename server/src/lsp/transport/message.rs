//! Checking that a frame's JSON is one JSON-RPC 2.0 message the framework can take.
//!
//! tower-lsp-server stops reading at the first message it cannot decode, so everything it
//! would refuse is refused here first and answered with Invalid Request. The check reads the
//! envelope only: `params` and `result` are skipped, not built, since a `didOpen` can carry a
//! document of tens of megabytes.

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;

/// A message the framework may have.
#[derive(Debug, PartialEq, Eq)]
pub struct Accepted {
    /// The method of a request or notification; `None` for a response.
    pub method: Option<String>,
    pub is_request: bool,
}

/// A message refused: the error to answer, with the id when one could be read.
#[derive(Debug, PartialEq)]
pub struct Refused {
    pub id: Value,
    pub reason: String,
}

/// The JSON kind of a value, read without keeping the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Structured,
    Other,
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
        struct KindVisitor;
        impl<'de> Visitor<'de> for KindVisitor {
            type Value = Kind;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Kind, E> {
                Ok(Kind::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Kind, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Kind::Structured)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Kind, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Kind::Structured)
            }
        }
        d.deserialize_any(KindVisitor)
    }
}

/// Present fields keep their value even when it is `null` (serde's `Option` would not).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Kind>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Kind>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

/// The id as the answer may repeat it: a string or an integer that fits in 64 bits.
fn readable_id(id: Option<&Value>) -> Option<Value> {
    match id? {
        Value::String(s) => Some(Value::String(s.clone())),
        Value::Number(n) if n.as_i64().is_some() => Some(Value::Number(n.clone())),
        _ => None,
    }
}

/// Checks one JSON text (already known to be well-formed JSON).
pub fn check(body: &[u8]) -> Result<Accepted, Refused> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        let reason = if first == Some(&b'[') {
            "batches are not supported; send one message a frame"
        } else {
            "a message must be a JSON object"
        };
        return Err(refused(Value::Null, reason));
    }
    let env: Envelope = serde_json::from_slice(body)
        .map_err(|e| refused(Value::Null, &format!("not a JSON-RPC message ({e})")))?;
    let id = readable_id(env.id.as_ref());
    let answer_id = id.clone().unwrap_or(Value::Null);
    if env.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err(refused(answer_id, "\"jsonrpc\" must be \"2.0\""));
    }
    if env.id.is_some() && id.is_none() && env.method.is_some() {
        return Err(refused(
            Value::Null,
            "\"id\" must be a string or an integer",
        ));
    }
    match env.method {
        Some(Value::String(method)) => {
            // `null` is not structured, but clients send it for `shutdown` and `exit`.
            if env.params == Some(Kind::Other) {
                return Err(refused(
                    answer_id,
                    "\"params\" must be an object, an array or null",
                ));
            }
            Ok(Accepted {
                method: Some(method),
                is_request: env.id.is_some(),
            })
        }
        Some(_) => Err(refused(answer_id, "\"method\" must be a string")),
        None => check_response(body, &env, answer_id),
    }
}

/// A response from the client to a request of the server; the framework's own type decides,
/// since it refuses some shapes (an `error` with extra fields) that JSON-RPC allows.
fn check_response(body: &[u8], env: &Envelope, id: Value) -> Result<Accepted, Refused> {
    if env.result.is_none() && env.error.is_none() {
        return Err(refused(
            id,
            "a message needs a \"method\" (request or notification) or a \"result\" or \"error\" (response)",
        ));
    }
    if env.result.is_some() && env.error.is_some() {
        return Err(refused(
            id,
            "a response has \"result\" or \"error\", not both",
        ));
    }
    if env.id.is_none() {
        return Err(refused(id, "a response needs an \"id\""));
    }
    match serde_json::from_slice::<tower_lsp_server::jsonrpc::Response>(body) {
        Ok(_) => Ok(Accepted {
            method: None,
            is_request: false,
        }),
        Err(e) => Err(refused(id, &format!("not a valid response ({e})"))),
    }
}

fn refused(id: Value, reason: &str) -> Refused {
    Refused {
        id,
        reason: reason.to_string(),
    }
}

/// The framed JSON-RPC error answer.
pub fn error_frame(code: i64, message: &str, id: &Value) -> Vec<u8> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "error": {"code": code, "message": message},
        "id": id,
    })
    .to_string();
    frame(body.as_bytes())
}

/// `body` with its `Content-Length` header.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

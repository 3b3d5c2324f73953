//! Secrets never leave memory: the API key's value (registered when it is read) and any
//! `Authorization` / `api-key` header value are replaced by `[redacted]` in everything
//! distdebug writes or sends (trajectories, diagnoses, logs, stderr, LSP messages).

use regex::Regex;
use std::borrow::Cow;
use std::sync::{OnceLock, RwLock};

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";
/// Values shorter than this are not registered: redacting them would garble ordinary text.
const MIN_SECRET_LEN: usize = 8;

fn registry() -> &'static RwLock<Vec<String>> {
    static SECRETS: OnceLock<RwLock<Vec<String>>> = OnceLock::new();
    SECRETS.get_or_init(|| RwLock::new(Vec::new()))
}

/// Header-like mentions of a credential: `Authorization: Bearer x`, `"api-key": "x"`,
/// `x-api-key=x`, and a bare `Bearer x`.
fn header_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r#"(?i)((?:proxy-)?authorization|x-api-key|api[-_]key|openai[-_]api[-_]key)(["']?\s*[:=]\s*["']?)(?:(bearer|basic|token)\s+)?[^\s"',;}\]]+|(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"#,
        )
        .expect("the credential pattern is a valid regex")
    })
}

/// Remembers `value` as a secret to redact from now on (the API key, once read).
pub fn register(value: &str) {
    let value = value.trim();
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    if let Ok(mut s) = registry().write() {
        if !s.iter().any(|v| v == value) {
            s.push(value.to_string());
        }
    }
}

/// `text` with every registered secret and every credential header value redacted.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    if let Ok(secrets) = registry().read() {
        for s in secrets.iter() {
            if out.contains(s.as_str()) {
                out = Cow::Owned(out.replace(s.as_str(), REDACTED));
            }
        }
    }
    if header_pattern().is_match(&out) {
        let replaced = header_pattern()
            .replace_all(&out, |c: &regex::Captures| {
                if let Some(bearer) = c.get(4) {
                    return format!("{}{REDACTED}", bearer.as_str());
                }
                let scheme = c
                    .get(3)
                    .map(|m| format!("{} ", m.as_str()))
                    .unwrap_or_default();
                format!("{}{}{scheme}{REDACTED}", &c[1], &c[2])
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    out
}

/// [`redact`] into an owned string.
pub fn redact_string(text: String) -> String {
    match redact(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(o) => o,
    }
}

/// Redacts every string inside a JSON value, in place.
pub fn redact_value(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => {
            if let Cow::Owned(o) = redact(s) {
                *s = o;
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(redact_value),
        serde_json::Value::Object(o) => o.values_mut().for_each(redact_value),
        _ => {}
    }
}

/// A serializable value with its strings redacted (round-tripped through JSON only when its
/// text holds something to redact).
pub fn redact_serde<T: serde::Serialize + serde::de::DeserializeOwned>(t: T) -> T {
    let Ok(text) = serde_json::to_string(&t) else {
        return t;
    };
    if matches!(redact(&text), Cow::Borrowed(_)) {
        return t;
    }
    let Ok(mut v) = serde_json::to_value(&t) else {
        return t;
    };
    redact_value(&mut v);
    serde_json::from_value(v).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_keys_and_header_values_are_redacted() {
        register("sk-test-0123456789abcdef");
        let t = "401: invalid key sk-test-0123456789abcdef";
        assert_eq!(redact(t), "401: invalid key [redacted]");
        let echoed =
            r#"{"error":"bad","headers":{"authorization":"Bearer tok-elsewhere-99999999"}}"#;
        let r = redact(echoed);
        assert!(!r.contains("tok-elsewhere"), "{r}");
        assert!(r.contains(r#""authorization":"Bearer [redacted]""#), "{r}");
        let r = redact("Authorization: Basic dXNlcjpwYXNz and api-key=abcdefgh1234");
        assert!(
            !r.contains("dXNlcjpwYXNz") && !r.contains("abcdefgh1234"),
            "{r}"
        );
        let r = redact("got bearer eyJhbGciOiJIUzI1NiJ9.x.y from proxy");
        assert!(!r.contains("eyJhbGci"), "{r}");
        assert_eq!(redact("nothing secret here"), "nothing secret here");
        let mut v = serde_json::json!({"a": ["x sk-test-0123456789abcdef"]});
        redact_value(&mut v);
        assert_eq!(v["a"][0], "x [redacted]");
    }
}

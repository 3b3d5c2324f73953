//! Words of code and prose: identifiers split on case and `_`, and the tokens log matching
//! compares (lowercase, with numbers and id-like words left out as variable).

/// Calls `f` with every maximal run of ASCII letters, digits and `_` in `text`.
pub fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if is_word_byte(bytes[i]) {
            let start = i;
            while i < bytes.len() && is_word_byte(bytes[i]) {
                i += 1;
            }
            // Word bytes are ASCII, so the slice boundaries are char boundaries.
            f(&text[start..i]);
        } else {
            i += 1;
        }
    }
}

/// Whether `b` can be part of an identifier (ASCII letters, digits, `_`).
pub fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Splits an identifier into lowercase parts: `leaseExpiryMs` -> lease, expiry, ms;
/// `HTTPServer_v2` -> http, server, v2; digits stay attached to the letters before them.
pub fn split_identifier(word: &str, mut f: impl FnMut(String)) {
    let chars: Vec<char> = word.chars().collect();
    let mut start = 0;
    let n = chars.len();
    let mut i = 0;
    while i < n {
        let c = chars[i];
        if c == '_' {
            emit(&chars[start..i], &mut f);
            start = i + 1;
        } else if i > start {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|x| x.is_ascii_lowercase());
            // A new part starts at lower->Upper, and at the last capital of a run of
            // capitals followed by a lowercase letter (HTTPServer -> HTTP, Server).
            let boundary = (prev.is_ascii_lowercase() || prev.is_ascii_digit())
                && c.is_ascii_uppercase()
                || prev.is_ascii_uppercase() && c.is_ascii_uppercase() && next_lower;
            if boundary {
                emit(&chars[start..i], &mut f);
                start = i;
            }
        }
        i += 1;
    }
    emit(&chars[start..n], &mut f);
}

fn emit(part: &[char], f: &mut impl FnMut(String)) {
    if !part.is_empty() {
        f(part.iter().map(|c| c.to_ascii_lowercase()).collect());
    }
}

/// The search terms of a text: each word's parts and, for compound identifiers, the whole
/// word, lowercase. One-letter parts and pure numbers are left out.
pub fn terms(text: &str, mut f: impl FnMut(String)) {
    let mut buf = String::new();
    for_each_term(text, &mut buf, |t| f(t.to_string()));
}

/// Like `terms`, without allocating a string per term: `f` sees each term borrowed from a
/// reused buffer. This is the inner loop of scoring a whole repository.
pub fn for_each_term(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    for_each_word(text, |w| {
        let b = w.as_bytes();
        let mut parts = 0;
        let mut start = 0;
        let emit_part = |s: usize, e: usize, buf: &mut String, f: &mut dyn FnMut(&str)| {
            if e > s {
                buf.clear();
                for &c in &b[s..e] {
                    buf.push(c.to_ascii_lowercase() as char);
                }
                if keep_term(buf) {
                    f(buf);
                }
            }
        };
        for i in 0..b.len() {
            let c = b[i];
            if c == b'_' {
                if i > start {
                    parts += 1;
                }
                emit_part(start, i, buf, &mut f);
                start = i + 1;
            } else if i > start {
                let prev = b[i - 1];
                let next_lower = b.get(i + 1).is_some_and(|x| x.is_ascii_lowercase());
                let boundary = (prev.is_ascii_lowercase() || prev.is_ascii_digit())
                    && c.is_ascii_uppercase()
                    || prev.is_ascii_uppercase() && c.is_ascii_uppercase() && next_lower;
                if boundary {
                    parts += 1;
                    emit_part(start, i, buf, &mut f);
                    start = i;
                }
            }
        }
        if b.len() > start {
            parts += 1;
        }
        emit_part(start, b.len(), buf, &mut f);
        if parts > 1 {
            buf.clear();
            for &c in b {
                if c != b'_' {
                    buf.push(c.to_ascii_lowercase() as char);
                }
            }
            if keep_term(buf) {
                f(buf);
            }
        }
    });
}

fn keep_term(t: &str) -> bool {
    t.len() >= 2 && !t.bytes().all(|b| b.is_ascii_digit())
}

/// The constant tokens of a log message as matching compares them: lowercase words, with
/// values left out (numbers, hex, ids with digits). `"lease 0x1f expired after 30s"` ->
/// lease, expired, after.
pub fn message_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| {
        for part in w.split('_') {
            if !part.is_empty() && !is_variable(part) {
                out.push(part.to_ascii_lowercase());
            }
        }
    });
    out
}

/// Whether a word is a value rather than part of a message's constant text: numbers, and
/// words with digits unless short and starting with a letter (`v2`, `ipv4`, `utf8` stay).
pub fn is_variable(word: &str) -> bool {
    let has_digit = word.bytes().any(|b| b.is_ascii_digit());
    if !has_digit {
        return false;
    }
    let starts_alpha = word.bytes().next().is_some_and(|b| b.is_ascii_alphabetic());
    !(starts_alpha && word.len() <= 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(w: &str) -> Vec<String> {
        let mut v = Vec::new();
        split_identifier(w, |p| v.push(p));
        v
    }

    #[test]
    fn splits_identifiers_on_case_and_underscores() {
        assert_eq!(split("leaseExpiryMs"), ["lease", "expiry", "ms"]);
        assert_eq!(split("HTTPServer_v2"), ["http", "server", "v2"]);
        assert_eq!(split("snake_case_name"), ["snake", "case", "name"]);
        assert_eq!(split("ttl"), ["ttl"]);
        assert_eq!(split("__init__"), ["init"]);
    }

    #[test]
    fn terms_keep_whole_compounds_and_drop_numbers() {
        let mut v = Vec::new();
        terms("grantLease(42) x HTTPServer_v2 a_b", |t| v.push(t));
        assert_eq!(
            v,
            [
                "grant",
                "lease",
                "grantlease",
                "http",
                "server",
                "v2",
                "httpserverv2",
                "ab"
            ]
        );
    }

    #[test]
    fn message_tokens_leave_values_out() {
        assert_eq!(
            message_tokens("lease 0x1f3a expired after 30s for ipv4 peer-7"),
            ["lease", "expired", "after", "for", "ipv4", "peer"]
        );
    }
}

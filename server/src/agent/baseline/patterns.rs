//! Log-statement patterns: a call site's message pieces become fragments of constant tokens
//! that must appear, in order, in a templated log line; matching counts the constant tokens
//! found.

use crate::code::tokens::message_tokens;
use crate::code::Piece;

/// The constant text of a message as token fragments, in order. Values between fragments
/// may be anything (including nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    pub fragments: Vec<Vec<String>>,
}

impl Pattern {
    /// Builds the pattern of a message. A word glued to a value (`"0x" + id`, `"{}ms"`) is
    /// left out: in the log line it is part of the value's token.
    pub fn from_pieces(pieces: &[Piece]) -> Pattern {
        let mut fragments = Vec::new();
        for (i, p) in pieces.iter().enumerate() {
            let Piece::Lit(text) = p else { continue };
            let glued = |c: char| c.is_alphanumeric() || c == '_';
            let mut t = text.as_str();
            if matches!(pieces.get(i + 1), Some(Piece::Hole)) {
                t = t.trim_end_matches(glued);
            }
            if i > 0 && matches!(pieces.get(i - 1), Some(Piece::Hole)) {
                t = t.trim_start_matches(glued);
            }
            let toks = message_tokens(t);
            if !toks.is_empty() {
                fragments.push(toks);
            }
        }
        Pattern { fragments }
    }

    pub fn constant_tokens(&self) -> usize {
        self.fragments.iter().map(|f| f.len()).sum()
    }

    /// The tokens of the fragments found in order in `line` (each fragment contiguous),
    /// fragments that are not found skipped.
    pub fn matched<'a>(&'a self, line: &[String]) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut from = 0;
        for frag in &self.fragments {
            if let Some(at) = find_seq(line, from, frag) {
                out.extend(frag.iter().map(|s| s.as_str()));
                from = at + frag.len();
            }
        }
        out
    }
}

fn find_seq(hay: &[String], from: usize, needle: &[String]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

/// Whether a match of `matched` of a pattern's `total` constant tokens is good enough to say
/// the line came from it: at least two tokens, and most of the pattern.
pub fn accept(matched: usize, total: usize) -> bool {
    matched >= 2 && matched * 10 >= total * 6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::sites::literal_pieces;
    use crate::code::Lang;

    fn toks(s: &str) -> Vec<String> {
        message_tokens(s)
    }

    #[test]
    fn slf4j_pattern_matches_a_templated_line() {
        let p = Pattern::from_pieces(&literal_pieces(
            "\"Session 0x{} expired after {} ms, closing\"",
            Lang::Java,
        ));
        assert_eq!(
            p.fragments,
            vec![toks("Session"), toks("expired after"), toks("ms, closing")]
        );
        let line = toks("2024-01-01 12:00:00,001 [main] INFO  o.a.z.Server - Session 0x1f2e3d expired after 30000 ms, closing");
        assert_eq!(p.matched(&line).len(), 5);
        assert!(accept(5, p.constant_tokens()));
        let other = toks("Session 0x1 created");
        assert_eq!(p.matched(&other), vec!["session"]);
        assert!(!accept(1, p.constant_tokens()));
    }

    #[test]
    fn words_glued_to_values_are_left_out() {
        let p = Pattern::from_pieces(&[
            Piece::Lit("lease 0x".into()),
            Piece::Hole,
            Piece::Lit("ms late".into()),
        ]);
        assert_eq!(p.fragments, vec![toks("lease"), toks("late")]);
        let line = toks("lease 0xdeadbeef1 250ms late");
        assert_eq!(p.matched(&line).len(), 2);
    }

    #[test]
    fn fragments_must_come_in_order() {
        let p = Pattern::from_pieces(&literal_pieces(
            "\"granted lease to %s until %s\"",
            Lang::Python,
        ));
        assert_eq!(p.matched(&toks("until 12 granted lease to a")).len(), 3);
        assert_eq!(p.matched(&toks("granted lease to a until 12")).len(), 4);
        assert!(accept(2, 3));
        assert!(!accept(2, 4));
        assert!(!accept(1, 1));
    }
}

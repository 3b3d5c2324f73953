//! Open documents: their text as ropes and their versions, with full and incremental sync.
//!
//! Edits are applied in the order the client sent them (see `ordering.rs`); an edit whose
//! version is not newer than the stored one is dropped, so a late or repeated notification
//! never rewinds or corrupts the text.

use super::positions::{self, Encoding};
use ropey::Rope;
use std::collections::HashMap;
use tower_lsp_server::ls_types::TextDocumentContentChangeEvent;

#[derive(Debug, Clone)]
pub struct Document {
    pub rope: Rope,
    pub version: i32,
}

/// What became of a `didChange`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Applied,
    /// The edit's version is not newer than the document's: dropped.
    Stale {
        have: i32,
        got: i32,
    },
    /// The document is not open.
    NotOpen,
}

/// The documents the client has open, by URI as the client spells it.
#[derive(Debug, Default)]
pub struct Documents {
    by_uri: HashMap<String, Document>,
}

impl Documents {
    pub fn open(&mut self, uri: &str, text: &str, version: i32) {
        self.by_uri.insert(
            uri.to_string(),
            Document {
                rope: Rope::from_str(text),
                version,
            },
        );
    }

    pub fn change(
        &mut self,
        uri: &str,
        version: i32,
        changes: &[TextDocumentContentChangeEvent],
        enc: Encoding,
    ) -> Change {
        let Some(doc) = self.by_uri.get_mut(uri) else {
            return Change::NotOpen;
        };
        if version <= doc.version {
            return Change::Stale {
                have: doc.version,
                got: version,
            };
        }
        for change in changes {
            match change.range {
                None => doc.rope = Rope::from_str(&change.text),
                Some(range) => {
                    let start = positions::to_char(&doc.rope, range.start, enc);
                    let end = positions::to_char(&doc.rope, range.end, enc).max(start);
                    doc.rope.remove(start..end);
                    doc.rope.insert(start, &change.text);
                }
            }
        }
        doc.version = version;
        Change::Applied
    }

    pub fn close(&mut self, uri: &str) -> bool {
        self.by_uri.remove(uri).is_some()
    }

    pub fn get(&self, uri: &str) -> Option<&Document> {
        self.by_uri.get(uri)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Document)> {
        self.by_uri.iter()
    }

    pub fn len(&self) -> usize {
        self.by_uri.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_uri.is_empty()
    }
}

/// Returns memory freed by a large document or parse to the system. The allocator keeps
/// freed small blocks for reuse, so without this a closed 50 MB document would go on
/// holding the process's peak.
pub fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    fn edit(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l1, c1), Position::new(l2, c2))),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn applies_incremental_edits_in_utf16_after_non_ascii_text() {
        let mut docs = Documents::default();
        docs.open("file:///a", "let s = \"😀é\";\nnext\n", 1);
        // Insert after the emoji: UTF-16 column 11 (`let s = "` is 9 units, the emoji 2).
        let r = docs.change(
            "file:///a",
            2,
            &[edit(0, 11, 0, 11, "X"), edit(1, 0, 1, 4, "NEXT")],
            Encoding::Utf16,
        );
        assert_eq!(r, Change::Applied);
        assert_eq!(
            docs.get("file:///a").unwrap().rope.to_string(),
            "let s = \"😀X\u{e9}\";\nNEXT\n"
        );
    }

    #[test]
    fn the_same_edit_in_utf8_columns() {
        let mut docs = Documents::default();
        docs.open("u", "😀é|", 1);
        // After é: 4 + 2 bytes.
        docs.change("u", 2, &[edit(0, 6, 0, 7, "!")], Encoding::Utf8);
        assert_eq!(docs.get("u").unwrap().rope.to_string(), "😀é!");
    }

    #[test]
    fn drops_edits_that_are_not_newer() {
        let mut docs = Documents::default();
        docs.open("u", "one", 1);
        let full = |t: &str| TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: t.to_string(),
        };
        assert_eq!(
            docs.change("u", 3, &[full("three")], Encoding::Utf8),
            Change::Applied
        );
        assert_eq!(
            docs.change("u", 2, &[full("two")], Encoding::Utf8),
            Change::Stale { have: 3, got: 2 }
        );
        assert_eq!(
            docs.change("u", 3, &[full("again")], Encoding::Utf8),
            Change::Stale { have: 3, got: 3 }
        );
        let d = docs.get("u").unwrap();
        assert_eq!((d.rope.to_string().as_str(), d.version), ("three", 3));
        assert_eq!(
            docs.change("other", 9, &[full("x")], Encoding::Utf8),
            Change::NotOpen
        );
    }
}

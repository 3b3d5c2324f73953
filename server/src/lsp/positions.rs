//! Position encodings: the negotiation of `positionEncoding` and the conversion between LSP
//! positions (line, character in the negotiated unit) and char offsets in a rope.
//!
//! Inside the server a document is a rope and a place in it is a char offset; only this file
//! knows that a client counts UTF-8 bytes or UTF-16 code units.

use ropey::{Rope, RopeSlice};
use tower_lsp_server::ls_types::{Position, PositionEncodingKind};

/// The unit a client counts `Position.character` in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    /// Picks the encoding from what the client offers: UTF-8 when it can, else UTF-16, which
    /// every client must support (and is what VS Code speaks).
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        match offered {
            Some(list) if list.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
            _ => Encoding::Utf16,
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
        }
    }

    /// The width of `text` in this encoding's units.
    pub fn width(self, text: &str) -> u32 {
        match self {
            Encoding::Utf8 => text.len() as u32,
            Encoding::Utf16 => text.chars().map(|c| c.len_utf16() as u32).sum(),
        }
    }
}

/// The text of line `line` without its line break (`\n`, `\r\n` or `\r`).
pub fn line_without_break(rope: &Rope, line: usize) -> RopeSlice<'_> {
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    if len > 0 && slice.char(len - 1) == '\n' {
        len -= 1;
    }
    if len > 0 && slice.char(len - 1) == '\r' {
        len -= 1;
    }
    slice.slice(..len)
}

/// The number of lines an editor shows: a trailing line break does not open a new line unless
/// the document is empty (then it has one empty line).
pub fn visible_lines(rope: &Rope) -> usize {
    let n = rope.len_lines();
    if n > 1 && rope.line(n - 1).len_chars() == 0 {
        n - 1
    } else {
        n
    }
}

/// The width of line `line` (without its break) in `enc` units; 0 past the end.
pub fn line_width(rope: &Rope, line: usize, enc: Encoding) -> u32 {
    if line >= rope.len_lines() {
        return 0;
    }
    let text = line_without_break(rope, line);
    match enc {
        Encoding::Utf8 => text.len_bytes() as u32,
        Encoding::Utf16 => text.len_utf16_cu() as u32,
    }
}

/// Converts an LSP position to a char offset in `rope`. A line past the end maps to the end
/// of the text; a character past the end of its line maps to the end of the line (as the
/// specification asks); a position inside a multi-unit character rounds down to its start.
pub fn to_char(rope: &Rope, pos: Position, enc: Encoding) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let start = rope.line_to_char(line);
    let text = line_without_break(rope, line);
    let wanted = pos.character as usize;
    let mut units = 0usize;
    for (i, c) in text.chars().enumerate() {
        let w = match enc {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
        };
        if units + w > wanted {
            return start + i;
        }
        units += w;
    }
    start + text.len_chars()
}

/// Converts a char offset in `rope` to an LSP position in `enc` units.
pub fn from_char(rope: &Rope, offset: usize, enc: Encoding) -> Position {
    let offset = offset.min(rope.len_chars());
    let line = rope.char_to_line(offset);
    let start = rope.line_to_char(line);
    let before = rope.slice(start..offset);
    let character = match enc {
        Encoding::Utf8 => before.len_bytes(),
        Encoding::Utf16 => before.len_utf16_cu(),
    };
    Position::new(line as u32, character as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(l: u32, c: u32) -> Position {
        Position::new(l, c)
    }

    #[test]
    fn prefers_utf8_and_falls_back_to_utf16() {
        let both = [PositionEncodingKind::UTF16, PositionEncodingKind::UTF8];
        assert_eq!(Encoding::negotiate(Some(&both)), Encoding::Utf8);
        assert_eq!(
            Encoding::negotiate(Some(&[PositionEncodingKind::UTF16])),
            Encoding::Utf16
        );
        assert_eq!(
            Encoding::negotiate(Some(&[PositionEncodingKind::UTF32])),
            Encoding::Utf16
        );
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
    }

    #[test]
    fn converts_non_ascii_lines_in_both_encodings() {
        // é: 2 bytes, 1 UTF-16 unit; 😀: 4 bytes, 2 UTF-16 units.
        let rope = Rope::from_str("ab\né😀x\r\nlast");
        // 'x' on line 1.
        let x = rope.line_to_char(1) + 2;
        assert_eq!(rope.char(x), 'x');
        assert_eq!(to_char(&rope, pos(1, 3), Encoding::Utf16), x);
        assert_eq!(to_char(&rope, pos(1, 6), Encoding::Utf8), x);
        assert_eq!(from_char(&rope, x, Encoding::Utf16), pos(1, 3));
        assert_eq!(from_char(&rope, x, Encoding::Utf8), pos(1, 6));
        // Inside the surrogate pair or inside the UTF-8 sequence: rounds down to the emoji.
        assert_eq!(to_char(&rope, pos(1, 2), Encoding::Utf16), x - 1);
        assert_eq!(to_char(&rope, pos(1, 4), Encoding::Utf8), x - 1);
        // Past the end of a line: the end of the line, before "\r\n".
        assert_eq!(to_char(&rope, pos(1, 99), Encoding::Utf16), x + 1);
        // Past the last line: the end of the text.
        assert_eq!(to_char(&rope, pos(9, 0), Encoding::Utf8), rope.len_chars());
        assert_eq!(line_width(&rope, 1, Encoding::Utf16), 4);
        assert_eq!(line_width(&rope, 1, Encoding::Utf8), 7);
    }

    #[test]
    fn counts_visible_lines_like_an_editor() {
        assert_eq!(visible_lines(&Rope::from_str("")), 1);
        assert_eq!(visible_lines(&Rope::from_str("a\nb\n")), 2);
        assert_eq!(visible_lines(&Rope::from_str("a\nb")), 2);
        assert_eq!(visible_lines(&Rope::from_str("a\r\n\r\n")), 2);
    }

    #[test]
    fn round_trips_every_offset() {
        let rope = Rope::from_str("α😀β\n\r\nz€\rq");
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            for off in 0..=rope.len_chars() {
                if off > 0
                    && off < rope.len_chars()
                    && rope.char(off - 1) == '\r'
                    && rope.char(off) == '\n'
                {
                    continue; // inside a "\r\n" break: no position names it
                }
                let p = from_char(&rope, off, enc);
                assert_eq!(to_char(&rope, p, enc), off, "{enc:?} offset {off} -> {p:?}");
            }
        }
    }
}

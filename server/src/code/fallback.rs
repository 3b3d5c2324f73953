//! The line-based fallback for text files without a grammar (configuration, scripts, other
//! languages): each paragraph (a run of non-blank lines) is a block.

use super::blocks::{Block, BlockKind, FileModel};

/// A model whose blocks are the paragraphs of `text`.
pub fn model(text: &str) -> FileModel {
    let mut blocks = Vec::new();
    let mut start: Option<(u32, usize)> = None;
    let mut line_no = 0u32;
    let mut offset = 0usize;
    let mut last_end = 0usize;
    for line in text.split_inclusive('\n') {
        line_no += 1;
        let blank = line.trim().is_empty();
        match (blank, start) {
            (false, None) => start = Some((line_no, offset)),
            (true, Some((s, sb))) => {
                blocks.push(paragraph(s, line_no - 1, sb, last_end));
                start = None;
            }
            _ => {}
        }
        offset += line.len();
        if !blank {
            last_end = offset;
        }
    }
    if let Some((s, sb)) = start {
        blocks.push(paragraph(s, line_no, sb, last_end));
    }
    FileModel {
        lang: None,
        line_count: crate::util::text::line_count(text.as_bytes()),
        blocks,
        sites: Vec::new(),
        calls: Vec::new(),
        has_errors: false,
    }
}

fn paragraph(start: u32, end: u32, start_byte: usize, end_byte: usize) -> Block {
    Block {
        kind: BlockKind::Statement,
        node: "paragraph",
        name: None,
        def_kind: None,
        start_line: start,
        end_line: end.max(start),
        start_byte,
        end_byte,
        parent: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_are_blocks() {
        let m = model("a: 1\nb: 2\n\n\nc: 3\n  d: 4\n\ne");
        let r: Vec<_> = m
            .blocks
            .iter()
            .map(|b| (b.start_line, b.end_line))
            .collect();
        assert_eq!(r, [(1, 2), (5, 6), (8, 8)]);
        assert_eq!(m.snap(5, 5), (5, 6));
        assert_eq!(m.snap(2, 5), (1, 6));
        assert!(model("").blocks.is_empty());
    }
}

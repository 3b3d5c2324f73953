//! Blocks: a file's definitions and, inside them, statements and compound statements with
//! exact line ranges, as a tree; and the queries the editor and agents ask of it
//! (innermost block at a line, snapping a range to blocks, the definitions of a file).

use super::lang::Lang;
use super::sites::{CallRef, MessageSite};
use serde::Serialize;

/// What a block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockKind {
    /// A class, function, method, type…
    Definition,
    /// A statement that holds statements: if, loop, try, switch, match.
    Compound,
    /// A branch of a compound statement: then/else arm, catch, case, match arm.
    Arm,
    /// A simple statement (or, in the fallback, a paragraph of lines).
    Statement,
}

/// One block of a file. Lines are 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    pub kind: BlockKind,
    /// The tree-sitter node kind (`if_statement`, `method_declaration`…), `paragraph` in the
    /// fallback.
    pub node: &'static str,
    /// Definitions only: the name and the kind of definition (`class`, `method`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub def_kind: Option<&'static str>,
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: usize,
    pub end_byte: usize,
    /// The index of the enclosing block in `FileModel::blocks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
}

impl Block {
    pub fn lines(&self) -> u32 {
        self.end_line - self.start_line + 1
    }

    pub fn contains_lines(&self, start: u32, end: u32) -> bool {
        self.start_line <= start && end <= self.end_line
    }
}

/// A definition as the outline shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Definition {
    pub name: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// Everything the code model knows about one file.
#[derive(Debug, Clone, Default)]
pub struct FileModel {
    pub lang: Option<Lang>,
    pub line_count: u32,
    /// In pre-order: a parent always comes before its children, siblings in source order.
    pub blocks: Vec<Block>,
    /// Logging, error and other calls with a constant message.
    pub sites: Vec<MessageSite>,
    /// Every call, by the name of what it calls.
    pub calls: Vec<CallRef>,
    /// Whether tree-sitter reported syntax errors (the blocks are what it recovered).
    pub has_errors: bool,
}

impl FileModel {
    /// The children of block `i` (or the top-level blocks for `None`), in source order.
    pub fn children(&self, i: Option<usize>) -> Vec<usize> {
        let want = i.map(|x| x as u32);
        let from = i.map(|x| x + 1).unwrap_or(0);
        let mut out = Vec::new();
        for (j, b) in self.blocks.iter().enumerate().skip(from) {
            if let Some(p) = i {
                // Pre-order: once a block starts past the parent's end, no descendant follows.
                if b.start_byte >= self.blocks[p].end_byte && b.parent != want {
                    break;
                }
            }
            if b.parent == want {
                out.push(j);
            }
        }
        out
    }

    /// The innermost block that contains `line`.
    pub fn innermost(&self, line: u32) -> Option<usize> {
        self.covering(line, line)
    }

    /// The smallest block that contains every line of `start..=end`.
    pub fn covering(&self, start: u32, end: u32) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, b) in self.blocks.iter().enumerate() {
            if b.contains_lines(start, end) {
                // Later blocks that contain the range are descendants (pre-order), or equal
                // ranges deeper down: both are at least as small.
                match best {
                    Some(j) if self.blocks[j].lines() < b.lines() => {}
                    _ => best = Some(i),
                }
            }
        }
        best
    }

    /// Snaps a line range to the code structure: the smallest block that covers it, or a run of
    /// sibling statements inside that block when the range lies within them only. Ranges
    /// outside any block snap to the run of top-level blocks they touch, else stay as they are.
    pub fn snap(&self, start: u32, end: u32) -> (u32, u32) {
        let (start, end) = if start <= end {
            (start, end)
        } else {
            (end, start)
        };
        let outer = self.covering(start, end);
        let kids = self.children(outer);
        let touched: Vec<usize> = kids
            .iter()
            .copied()
            .filter(|&k| {
                let b = &self.blocks[k];
                b.start_line <= end && start <= b.end_line
            })
            .collect();
        // Lines of the outer block that belong to no child (an if's header, a closing
        // brace): touching them means the range is about the outer block itself.
        let within_children = (start..=end).all(|l| {
            touched.iter().any(|&k| {
                let b = &self.blocks[k];
                b.start_line <= l && l <= b.end_line
            }) || self.is_blank_gap(outer, &kids, l)
        });
        if let (Some(first), Some(last)) = (touched.first(), touched.last()) {
            if within_children {
                return (self.blocks[*first].start_line, self.blocks[*last].end_line);
            }
        }
        match outer {
            Some(o) => (self.blocks[o].start_line, self.blocks[o].end_line),
            None => (start, end),
        }
    }

    /// Whether `line` lies between two children of `outer` (blank lines, comments between
    /// statements), so a range may cross it and still be a run of siblings.
    fn is_blank_gap(&self, outer: Option<usize>, kids: &[usize], line: u32) -> bool {
        let before = kids.iter().any(|&k| self.blocks[k].end_line < line);
        let after = kids.iter().any(|&k| self.blocks[k].start_line > line);
        let inside_outer = outer.is_none_or(|o| {
            let b = &self.blocks[o];
            b.start_line < line && line < b.end_line
        });
        before && after && inside_outer
    }

    /// The nearest enclosing definition of block `i` (itself if it is one).
    pub fn definition_of(&self, i: usize) -> Option<usize> {
        let mut cur = Some(i);
        while let Some(c) = cur {
            if self.blocks[c].kind == BlockKind::Definition {
                return Some(c);
            }
            cur = self.blocks[c].parent.map(|p| p as usize);
        }
        None
    }

    /// The innermost function-like definition enclosing block `i` (skipping classes, types).
    pub fn function_of(&self, i: usize) -> Option<usize> {
        let mut cur = Some(i);
        while let Some(c) = cur {
            let b = &self.blocks[c];
            if b.kind == BlockKind::Definition
                && matches!(
                    b.def_kind,
                    Some("function" | "method" | "constructor" | "macro")
                )
            {
                return Some(c);
            }
            cur = b.parent.map(|p| p as usize);
        }
        None
    }

    /// The definitions of the file, in source order.
    pub fn definitions(&self) -> Vec<Definition> {
        self.blocks
            .iter()
            .filter(|b| b.kind == BlockKind::Definition)
            .map(|b| Definition {
                name: b.name.clone().unwrap_or_default(),
                kind: b.def_kind.unwrap_or("definition").to_string(),
                start_line: b.start_line,
                end_line: b.end_line,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::code::parse::parse_file;
    use std::path::Path;

    const JAVA: &str = r#"package a;

class Leader {
    void elect(int epoch) {
        int next = epoch + 1;
        if (next > max) {
            log.warn("epoch {} too high", next);
            throw new IllegalStateException("bad epoch " + next);
        } else {
            max = next;
        }

        store(next);
        notifyAll();
    }
}
"#;

    #[test]
    fn innermost_and_snap_follow_the_tree() {
        let m = parse_file(Path::new("a/Leader.java"), JAVA);
        let inner = m.innermost(7).unwrap();
        assert_eq!(
            (m.blocks[inner].start_line, m.blocks[inner].end_line),
            (7, 7)
        );
        let arm = m.blocks[inner].parent.unwrap() as usize;
        assert_eq!(
            (m.blocks[arm].start_line, m.blocks[arm].end_line),
            (7, 8),
            "the then-arm, without the lines of its braces"
        );
        // A range over two sibling statements snaps to exactly those two.
        assert_eq!(m.snap(7, 8), (7, 8));
        // Touching the if header means the whole if statement.
        assert_eq!(m.snap(6, 7), (6, 11));
        // Statements across a blank line are still a run of siblings.
        assert_eq!(m.snap(11, 13), (6, 13));
        assert_eq!(m.snap(13, 14), (13, 14));
        // The method's signature line means the method.
        assert_eq!(m.snap(4, 5), (4, 15));
        // Reversed ranges are tolerated; lines outside every block stay as they are.
        assert_eq!(m.snap(14, 13), (13, 14));
        assert_eq!(m.snap(1, 1), (1, 1));
        let f = m.function_of(inner).unwrap();
        assert_eq!(m.blocks[f].name.as_deref(), Some("elect"));
    }
}

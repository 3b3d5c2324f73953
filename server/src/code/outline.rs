//! Outlines and the editor's block queries by path and text: the definitions of a file, the
//! innermost block at a line, and a range snapped to blocks.

use super::blocks::Definition;
use super::parse::parse_file;
use std::path::Path;

/// The definitions (classes, functions, methods, types) of a file with names and line ranges;
/// the model agent's `outline` tool shows these.
pub fn outline(path: &Path, text: &str) -> Vec<Definition> {
    parse_file(path, text).definitions()
}

/// The lines of the innermost block at `line` (1-based) in the file `path` holding `text`.
pub fn innermost_block(path: &Path, text: &str, line: u32) -> Option<(u32, u32)> {
    let m = parse_file(path, text);
    m.innermost(line)
        .map(|i| (m.blocks[i].start_line, m.blocks[i].end_line))
}

/// The range `start..=end` snapped to the smallest block or run of sibling statements that
/// covers it (what the editor's "label this" action stores).
pub fn snap(path: &Path, text: &str, start: u32, end: u32) -> (u32, u32) {
    parse_file(path, text).snap(start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outline_names_definitions_in_order() {
        let src = "class A {\n  int x;\n  void f() {}\n  class B { void g() {} }\n}\n";
        let o = outline(Path::new("A.java"), src);
        let names: Vec<_> = o
            .iter()
            .map(|d| (d.name.as_str(), d.kind.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("A", "class"),
                ("f", "method"),
                ("B", "class"),
                ("g", "method")
            ]
        );
        assert_eq!((o[0].start_line, o[0].end_line), (1, 5));
        assert!(outline(Path::new("notes.txt"), "just text\n").is_empty());
        assert_eq!(innermost_block(Path::new("A.java"), src, 3), Some((3, 3)));
        assert_eq!(snap(Path::new("A.java"), src, 2, 3), (2, 3));
    }
}

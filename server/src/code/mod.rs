//! The code model: tree-sitter parsing, blocks, outlines and the repository index.

//! The code model: tree-sitter parsing (Java, Go, Rust, Python, Scala, C++; a line-based
//! fallback for other text), blocks with exact line ranges, outlines, message call sites, and
//! the repository index that parses files on demand.

pub mod blocks;
pub mod fallback;
pub mod index;
pub mod lang;
pub mod lexer;
pub mod outline;
pub mod parse;
pub mod sites;
pub mod tokens;

pub use blocks::{Block, BlockKind, Definition, FileModel};
pub use index::{IndexOptions, RepoIndex};
pub use lang::Lang;
pub use outline::{innermost_block, outline, snap};
pub use parse::{parse_as, parse_file};
pub use sites::{CallRef, MessageSite, Piece, SiteKind};

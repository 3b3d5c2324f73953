//! Annotating and comparing, with no LSP types: the labels editor (`label_store`, with its
//! lock file and undo), a person's own diagnosis kept as an attempt (`human`), agreement
//! between annotators (`agreement`), two attempts compared block by block (`compare`,
//! `compare_dirs` for whole results folders). The language server and the command line are
//! front ends over these.

pub mod agreement;
pub mod bench;
pub mod compare;
pub mod compare_dirs;
pub mod human;
pub mod label_store;
pub mod lock;
pub mod ranges;

pub use agreement::{agreement, Agreement, PairAgreement};
pub use compare::{compare, Comparison, Presence, Region, Side};
pub use human::{human_config, HumanDiagnosis, HUMAN_AGENT};
pub use label_store::{Applied, Change, LabelEditor, LabelKey};

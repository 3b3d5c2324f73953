//! The offline localizer as a pipeline of typed stages, one file each: the signals, candidate
//! blocks (raw, then merged into places with features), candidate files, candidate
//! functions, ranking and selection.

pub mod blocks;
pub mod files;
pub mod functions;
pub mod places;
pub mod rank;
pub mod select;
pub mod signals;

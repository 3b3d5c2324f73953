//! The files of one agent attempt (the attempt format, docs/agents.md): the diagnosis, the trajectory and where
//! they live in a results tree. Agents write them, the scorer and the editor read them.

pub mod diagnosis;
pub mod layout;
pub mod trajectory;

pub use diagnosis::{Diagnosis, DiagnosisBlock};
pub use layout::RunInfo;
pub use trajectory::{Exit, PathRead, Step, StepKind, Trajectory, TrajectoryRecorder, Usage};

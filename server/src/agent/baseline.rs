//! The offline baseline agent: localizes with no model at all (log-statement matching,
//! stack frames, BM25 over code blocks).

use super::{AgentInput, AgentOutput};
use crate::attempt::{Diagnosis, Exit, Step, StepKind, TrajectoryRecorder, Usage};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Default)]
pub struct BaselineConfig {}

/// Runs the baseline. (The localizer itself lands with the code model; until then it submits
/// an empty diagnosis so the pipeline around it can be exercised.)
pub async fn run(
    _cfg: &BaselineConfig,
    input: &AgentInput,
    recorder: &mut TrajectoryRecorder,
    cancel: &CancellationToken,
) -> AgentOutput {
    if cancel.is_cancelled() {
        return AgentOutput {
            diagnosis: None,
            exit: Exit::Cancelled,
            usage: Usage::default(),
            model: None,
            error: None,
        };
    }
    recorder.record(Step::new(StepKind::Submit).with_text("no localizer yet"));
    AgentOutput {
        diagnosis: Some(Diagnosis {
            incident: input.incident.clone(),
            summary: String::new(),
            blocks: Vec::new(),
            extra: Default::default(),
        }),
        exit: Exit::Submitted,
        usage: Usage::default(),
        model: None,
        error: None,
    }
}

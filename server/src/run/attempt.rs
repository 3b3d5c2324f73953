//! One attempt from start to finish: the live trajectory, the agent, and the final
//! `trajectory.json` and `diagnosis.json`, both written atomically.

use crate::agent::{AgentInput, AgentOutput, AgentSpec};
use crate::attempt::layout::{attempt_dir, DIAGNOSIS, TRAJECTORY, TRAJECTORY_LIVE};
use crate::attempt::{Exit, Step, StepKind, Trajectory, TrajectoryRecorder};
use crate::util::fs::write_json_atomic;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

/// What one finished attempt left behind.
#[derive(Debug, Clone)]
pub struct AttemptSummary {
    pub incident: String,
    pub attempt: u32,
    pub dir: PathBuf,
    pub exit: Exit,
    pub blocks: usize,
    pub error: Option<String>,
}

/// Runs attempt `k` of `spec` on the prepared `workspace`, writing into
/// `<config_dir>/<incident>/attempt-<k>/`. Leftovers of an interrupted earlier run of the same
/// attempt are removed first. `listener` sees each step as it is recorded.
pub async fn run_attempt(
    spec: &AgentSpec,
    workspace: &Path,
    config_dir: &Path,
    k: u32,
    listener: Option<crate::attempt::trajectory::StepListener>,
    cancel: &CancellationToken,
) -> Result<AttemptSummary, String> {
    let info = crate::incident::prepare::WorkspaceInfo::load(workspace)?;
    let dir = attempt_dir(config_dir, &info.incident, k);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| format!("{}: cannot clear a partial attempt: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let input = AgentInput::from_workspace(workspace, k, dir.clone())?;
    let mut recorder = TrajectoryRecorder::create(&dir.join(TRAJECTORY_LIVE))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Some(l) = listener {
        recorder.set_listener(l);
    }
    let started_at = crate::util::now_rfc3339();
    let mut out: AgentOutput = spec.run(&input, &mut recorder, cancel).await;
    out.error = out.error.map(crate::util::secrets::redact_string);
    out.diagnosis = out.diagnosis.map(crate::util::secrets::redact_serde);
    if let Some(err) = &out.error {
        recorder.record(Step::new(StepKind::Error).with_text(err.clone()));
    }
    if let Some(d) = &out.diagnosis {
        write_json_atomic(&dir.join(DIAGNOSIS), d)
            .map_err(|e| format!("{}: {e}", dir.join(DIAGNOSIS).display()))?;
    }
    let trajectory = Trajectory {
        incident: info.incident.clone(),
        attempt: k,
        agent: spec.name(),
        model: out.model.clone().or_else(|| spec.model()),
        started_at,
        finished_at: crate::util::now_rfc3339(),
        exit: out.exit,
        usage: out.usage,
        steps: recorder.into_steps(),
        extra: Default::default(),
    };
    write_json_atomic(&dir.join(TRAJECTORY), &trajectory)
        .map_err(|e| format!("{}: {e}", dir.join(TRAJECTORY).display()))?;
    Ok(AttemptSummary {
        incident: info.incident,
        attempt: k,
        dir,
        exit: out.exit,
        blocks: out.diagnosis.map(|d| d.blocks.len()).unwrap_or(0),
        error: out.error,
    })
}

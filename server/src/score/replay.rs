//! Replaying an attempt: its steps in order, each with the file regions it read and every line
//! read up to and including it, and the first step that read a labeled line (`looked.rs` step
//! by step). Works on any attempt folder: finished (`trajectory.json`), still running or
//! interrupted (the `trajectory.jsonl` written so far), from our agents or an imported harness.

use super::looked::{Looked, Read};
use crate::attempt::layout::{TRAJECTORY, TRAJECTORY_LIVE};
use crate::attempt::trajectory::{PathRead, Step, StepKind, Trajectory};
use crate::incident::LabelBlock;
use crate::util::paths::normalize_rel;
use crate::util::untrusted::{self, Refused};
use serde::Serialize;
use std::path::Path;

/// Lines one file had been read up to a step: merged, sorted, disjoint, inclusive; an `end`
/// of `None` means "to the end of the file".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileRead {
    pub path: String,
    pub ranges: Vec<(u32, Option<u32>)>,
}

/// One step of the replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayStep {
    /// The step's `index` in the trajectory.
    pub index: u32,
    pub kind: StepKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<serde_json::Value>,
    /// The thought, the action's command, the observation's output, the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// What this step read (paths normalised), as the trajectory names it.
    pub paths_read: Vec<PathRead>,
    /// Every line read by this step and the ones before it, by file (sorted by path).
    pub read_so_far: Vec<FileRead>,
    /// This step read a line of a labeled block.
    pub reads_label: bool,
}

/// An attempt's replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    pub agent: String,
    /// Read from `trajectory.jsonl`: the attempt has not ended (or was interrupted).
    pub live: bool,
    pub steps: Vec<ReplayStep>,
    /// The position in `steps` of the first step that read a labeled line; `None` when none
    /// did or no labels were given.
    pub first_label_read: Option<usize>,
}

/// Reads an attempt folder's steps: `trajectory.json` when the attempt ended, else the
/// `trajectory.jsonl` written so far (an empty replay when there is neither yet). Both are an
/// agent's files: read as regular files only, never through a link, within the size limit.
pub fn load_steps(dir: &Path) -> Result<(String, bool, Vec<Step>), String> {
    let done = dir.join(TRAJECTORY);
    match untrusted::read_regular_text(&done, untrusted::TRAJECTORY_MAX) {
        Ok(text) => {
            let t: Trajectory = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a trajectory: {e}", done.display()))?;
            return Ok((t.agent, false, t.steps));
        }
        Err(Refused::Missing) => {}
        Err(why) => return Err(why.describe(&done.display().to_string())),
    }
    let live = dir.join(TRAJECTORY_LIVE);
    let text = match untrusted::read_regular_text(&live, untrusted::TRAJECTORY_MAX) {
        Ok(text) => text,
        Err(Refused::Missing) => String::new(),
        Err(why) => return Err(why.describe(&live.display().to_string())),
    };
    // A torn last line (the agent is still writing it) and lines that are not steps are
    // skipped, as for the live view.
    let steps = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Step>(l).ok())
        .collect();
    Ok((String::new(), true, steps))
}

/// The replay of an attempt folder, with the first labeled read when `labels` are given.
pub fn replay_dir(dir: &Path, labels: Option<&[LabelBlock]>) -> Result<Replay, String> {
    let (agent, live, steps) = load_steps(dir)?;
    let mut r = replay(&steps, labels);
    r.agent = agent;
    r.live = live;
    Ok(r)
}

/// The replay of steps (in trajectory order).
pub fn replay(steps: &[Step], labels: Option<&[LabelBlock]>) -> Replay {
    let labels: Vec<(String, u32, u32)> = labels
        .unwrap_or(&[])
        .iter()
        .map(|l| (normalize_rel(&l.path), l.start_line, l.end_line))
        .collect();
    let mut looked = Looked::default();
    let mut out = Vec::with_capacity(steps.len());
    let mut first_label_read = None;
    for s in steps {
        let reads: Vec<Read> = s
            .paths_read
            .iter()
            .map(|p| Read::new(s.index, &p.path, p.start_line, p.end_line))
            .collect();
        let reads_label = reads.iter().any(|r| {
            labels
                .iter()
                .any(|(p, a, b)| &r.path == p && r.start <= *b && *a <= r.end)
        });
        for r in &reads {
            looked.add(r);
        }
        if reads_label && first_label_read.is_none() {
            first_label_read = Some(out.len());
        }
        out.push(ReplayStep {
            index: s.index,
            kind: s.kind,
            tool: s.tool.clone(),
            args: s.args.clone(),
            text: s.text.clone(),
            paths_read: s
                .paths_read
                .iter()
                .map(|p| PathRead {
                    path: normalize_rel(&p.path),
                    start_line: p.start_line,
                    end_line: p.end_line,
                })
                .collect(),
            read_so_far: looked
                .files()
                .map(|f| FileRead {
                    path: f.path.clone(),
                    ranges: f
                        .ranges
                        .iter()
                        .map(|&(a, b)| (a, (b != u32::MAX).then_some(b)))
                        .collect(),
                })
                .collect(),
            reads_label,
        });
    }
    Replay {
        agent: String::new(),
        live: false,
        steps: out,
        first_label_read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(
        index: u32,
        kind: StepKind,
        text: &str,
        reads: &[(&str, Option<u32>, Option<u32>)],
    ) -> Step {
        let mut s = Step::new(kind).with_text(text);
        s.index = index;
        s.paths_read = reads
            .iter()
            .map(|(p, a, b)| PathRead {
                path: p.to_string(),
                start_line: *a,
                end_line: *b,
            })
            .collect();
        s
    }

    fn steps() -> Vec<Step> {
        vec![
            step(0, StepKind::Thought, "look at the log", &[]),
            step(
                1,
                StepKind::Action,
                "read a.py 1-10",
                &[("./a.py", Some(1), Some(10))],
            ),
            step(
                2,
                StepKind::Observation,
                "…",
                &[("a.py", Some(8), Some(20)), ("b.py", None, None)],
            ),
            step(
                3,
                StepKind::Action,
                "read a.py 40-45",
                &[("a.py", Some(40), Some(45))],
            ),
            step(4, StepKind::Submit, "done", &[]),
        ]
    }

    #[test]
    fn reads_accumulate_step_by_step() {
        let r = replay(&steps(), None);
        assert_eq!(r.steps.len(), 5);
        assert!(r.steps[0].read_so_far.is_empty());
        assert_eq!(
            r.steps[1].paths_read[0].path, "a.py",
            "paths are normalised"
        );
        assert_eq!(
            r.steps[1].read_so_far,
            vec![FileRead {
                path: "a.py".into(),
                ranges: vec![(1, Some(10))]
            }]
        );
        // Overlapping reads merge; a read naming no lines is the whole file.
        assert_eq!(
            r.steps[2].read_so_far,
            vec![
                FileRead {
                    path: "a.py".into(),
                    ranges: vec![(1, Some(20))]
                },
                FileRead {
                    path: "b.py".into(),
                    ranges: vec![(1, None)]
                },
            ]
        );
        assert_eq!(
            r.steps[3].read_so_far[0].ranges,
            vec![(1, Some(20)), (40, Some(45))]
        );
        assert_eq!(
            r.steps[4].read_so_far, r.steps[3].read_so_far,
            "a step that reads nothing keeps what was read"
        );
        assert_eq!(r.first_label_read, None, "no labels, no labeled read");
    }

    #[test]
    fn the_first_labeled_read_is_the_first_step_touching_a_label() {
        let labels = vec![
            LabelBlock::new("a.py", 42, 50),
            LabelBlock::new("b.py", 3, 3),
        ];
        let r = replay(&steps(), Some(&labels));
        // Step 2 reads the whole of b.py, which holds the label at line 3.
        assert_eq!(r.first_label_read, Some(2));
        let flags: Vec<bool> = r.steps.iter().map(|s| s.reads_label).collect();
        assert_eq!(flags, vec![false, false, true, true, false]);
        let only_a = vec![LabelBlock::new("a.py", 21, 39)];
        assert_eq!(
            replay(&steps(), Some(&only_a)).first_label_read,
            None,
            "lines 21-39 were never read"
        );
    }

    #[test]
    fn a_folder_replays_from_its_live_log_until_trajectory_json_exists() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        assert_eq!(
            replay_dir(dir, None).unwrap().steps.len(),
            0,
            "nothing written yet"
        );
        let lines: Vec<String> = steps()[..2]
            .iter()
            .map(|s| serde_json::to_string(s).unwrap())
            .collect();
        // A torn last line (still being written) is skipped.
        std::fs::write(
            dir.join(TRAJECTORY_LIVE),
            format!("{}\n{{\"index\": 2, \"ki", lines.join("\n")),
        )
        .unwrap();
        let live = replay_dir(dir, None).unwrap();
        assert!(live.live);
        assert_eq!(live.steps.len(), 2);
        let t = serde_json::json!({"incident": "x", "attempt": 1, "agent": "mini-swe-agent", "exit": "submitted",
                                   "steps": steps()});
        std::fs::write(dir.join(TRAJECTORY), t.to_string()).unwrap();
        let done = replay_dir(dir, None).unwrap();
        assert!(!done.live);
        assert_eq!(
            (done.agent.as_str(), done.steps.len()),
            ("mini-swe-agent", 5)
        );
        std::fs::write(dir.join(TRAJECTORY), "{not json").unwrap();
        assert!(replay_dir(dir, None)
            .unwrap_err()
            .contains("trajectory.json"));
        // A link is never followed: it could point at the labels.
        std::fs::remove_file(dir.join(TRAJECTORY)).unwrap();
        std::os::unix::fs::symlink(dir.join(TRAJECTORY_LIVE), dir.join(TRAJECTORY)).unwrap();
        let err = replay_dir(dir, None).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
    }
}

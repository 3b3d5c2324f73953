//! What the editor shows, file by file: the blocks of the current attempt and the labels, each
//! with its diagnostic code (`predicted`, `hit`, `false-positive`, `label`, `missed`), or,
//! while two attempts are compared, the compared regions (`both`, `only-a`, `only-b`); and,
//! when asked for, where the current attempt's agent looked (`looked`). Rebuilt whenever the
//! current attempt, its blocks, its scores, the comparison or the labels change; diagnostics,
//! code lenses and hovers are all read from it.

use super::attempts::Attempt;
use super::workspace::Workspace;
use crate::annotate::{Comparison, Presence};
use crate::incident::{Incident, LabelBlock};
use crate::util::paths::normalize_rel;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The labels of the workspace's incident, read from the incident folder the server was
/// configured with. They are shown to the human only: nothing here reaches an agent.
#[derive(Debug, Clone)]
pub struct LabelSet {
    pub incident_dir: PathBuf,
    pub blocks: Vec<LabelBlock>,
}

impl LabelSet {
    /// Loads `labels.json` of `incident_dir`, checking that it is the workspace's incident.
    /// A missing `labels.json` is an incident not labeled yet: no labels.
    pub fn load(incident_dir: &Path, workspace: &Workspace) -> Result<LabelSet, String> {
        let incident = Incident::load(incident_dir).map_err(|p| p.to_string())?;
        if incident.id() != workspace.info.incident {
            return Err(format!(
                "{}: is incident {:?}, but the workspace {} holds incident {:?}; labels are not shown",
                incident_dir.display(),
                incident.id(),
                workspace.root.display(),
                workspace.info.incident
            ));
        }
        let mut labels = if incident.labels_path().exists() {
            incident.load_labels().map_err(|p| p.to_string())?
        } else {
            crate::incident::Labels::default()
        };
        for b in &mut labels.blocks {
            b.path = normalize_rel(&b.path);
        }
        Ok(LabelSet {
            incident_dir: incident_dir.to_path_buf(),
            blocks: labels.blocks,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Predicted,
    Hit,
    FalsePositive,
    Label,
    Missed,
    Both,
    OnlyA,
    OnlyB,
    Looked,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Predicted => "predicted",
            Code::Hit => "hit",
            Code::FalsePositive => "false-positive",
            Code::Label => "label",
            Code::Missed => "missed",
            Code::Both => "both",
            Code::OnlyA => "only-a",
            Code::OnlyB => "only-b",
            Code::Looked => "looked",
        }
    }

    /// Predictions, and compared regions (predictions of two attempts): shown with the
    /// `severity` setting.
    pub fn is_prediction(self) -> bool {
        matches!(
            self,
            Code::Predicted
                | Code::Hit
                | Code::FalsePositive
                | Code::Both
                | Code::OnlyA
                | Code::OnlyB
        )
    }
}

/// Where an annotation comes from: the index of a block of the current attempt, of a label,
/// of a compared region, or of a range the current attempt's agent read in this file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Block(usize),
    Label(usize),
    Region(usize),
    Looked(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub code: Code,
    pub origin: Origin,
    pub start_line: u32,
    pub end_line: u32,
}

impl Annotation {
    pub fn covers(&self, line: u32) -> bool {
        self.start_line <= line && line <= self.end_line
    }
}

#[derive(Debug, Default, Clone)]
pub struct View {
    /// Annotations by repository-relative path, predictions first (in rank order), then labels.
    pub files: BTreeMap<String, Vec<Annotation>>,
}

impl View {
    /// `show_labels`: labels are shown as `label` diagnostics (the server was configured with
    /// the incident folder). Once the current attempt is scored, labels it missed are shown
    /// either way: that is the answer to the question the user asked. A comparison, when
    /// given, is shown instead of the current attempt. `looked`: the ranges the current
    /// attempt's agent read are shown too.
    pub fn build(
        current: Option<&Attempt>,
        labels: Option<&LabelSet>,
        show_labels: bool,
        compare: Option<&Comparison>,
        looked: bool,
    ) -> View {
        let mut files: BTreeMap<String, Vec<Annotation>> = BTreeMap::new();
        let current = if compare.is_some() { None } else { current };
        if let Some(c) = compare {
            for (i, r) in c.regions.iter().enumerate() {
                let code = match r.presence {
                    Presence::Both => Code::Both,
                    Presence::OnlyA => Code::OnlyA,
                    Presence::OnlyB => Code::OnlyB,
                };
                files.entry(r.path.clone()).or_default().push(Annotation {
                    code,
                    origin: Origin::Region(i),
                    start_line: r.start_line,
                    end_line: r.end_line,
                });
            }
        }
        let score = current.and_then(|a| a.score.as_ref());
        if let Some(a) = current {
            for (i, b) in a.blocks.iter().enumerate() {
                let code = match score.and_then(|s| s.block_hit.get(i)) {
                    Some(true) => Code::Hit,
                    Some(false) => Code::FalsePositive,
                    None => Code::Predicted,
                };
                files.entry(b.path.clone()).or_default().push(Annotation {
                    code,
                    origin: Origin::Block(i),
                    start_line: b.start_line,
                    end_line: b.end_line,
                });
            }
        }
        if let Some(l) = labels {
            for (i, b) in l.blocks.iter().enumerate() {
                let code = match score.and_then(|s| s.label_reached.get(i)) {
                    Some(false) => Code::Missed,
                    _ if show_labels => Code::Label,
                    _ => continue,
                };
                files.entry(b.path.clone()).or_default().push(Annotation {
                    code,
                    origin: Origin::Label(i),
                    start_line: b.start_line,
                    end_line: b.end_line,
                });
            }
        }
        if let Some(a) = current.filter(|_| looked) {
            for f in a.looked.files() {
                for (i, (s, e)) in f.ranges.iter().enumerate() {
                    files.entry(f.path.clone()).or_default().push(Annotation {
                        code: Code::Looked,
                        origin: Origin::Looked(i),
                        start_line: *s,
                        end_line: *e,
                    });
                }
            }
        }
        View { files }
    }

    pub fn file(&self, rel: &str) -> &[Annotation] {
        self.files.get(rel).map(|v| v.as_slice()).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::super::attempts::{AttemptKey, AttemptScore, Predicted};
    use super::*;

    fn block(path: &str, s: u32, e: u32) -> Predicted {
        Predicted {
            path: path.into(),
            start_line: s,
            end_line: e,
            rationale: None,
            confidence: None,
            step: None,
            evidence: vec![],
        }
    }

    #[test]
    fn codes_follow_the_scores() {
        let mut a = Attempt::queued(
            AttemptKey {
                config: "c".into(),
                attempt: 1,
            },
            "t",
            None,
            PathBuf::new(),
        );
        a.blocks = vec![block("a.rs", 1, 3), block("b.rs", 9, 9)];
        let labels = LabelSet {
            incident_dir: PathBuf::new(),
            blocks: vec![LabelBlock::new("a.rs", 2, 2), LabelBlock::new("c.rs", 5, 6)],
        };
        let v = View::build(Some(&a), Some(&labels), true, None, false);
        let codes = |f: &str| v.file(f).iter().map(|x| x.code).collect::<Vec<_>>();
        assert_eq!(codes("a.rs"), vec![Code::Predicted, Code::Label]);
        assert_eq!(codes("c.rs"), vec![Code::Label]);
        let hidden = View::build(Some(&a), Some(&labels), false, None, false);
        assert!(
            hidden.file("c.rs").is_empty(),
            "labels stay hidden unless configured"
        );

        a.score = Some(AttemptScore {
            block_hit: vec![true, false],
            label_reached: vec![true, false],
            block_coverage: 0.5,
            block_precision: 1.0 / 4.0,
            block_hit_rate: 0.5,
            file_coverage: 0.5,
            leakage: vec![],
            json: serde_json::Value::Null,
        });
        let v = View::build(Some(&a), Some(&labels), true, None, false);
        let codes = |f: &str| v.file(f).iter().map(|x| x.code).collect::<Vec<_>>();
        assert_eq!(codes("a.rs"), vec![Code::Hit, Code::Label]);
        assert_eq!(codes("b.rs"), vec![Code::FalsePositive]);
        assert_eq!(codes("c.rs"), vec![Code::Missed]);
        assert!(v.file("a.rs")[0].covers(3) && !v.file("a.rs")[0].covers(4));
        let hidden = View::build(Some(&a), Some(&labels), false, None, false);
        assert_eq!(
            hidden.file("c.rs").len(),
            1,
            "a missed label shows once scored"
        );
        assert_eq!(hidden.file("a.rs").len(), 1, "a reached label stays hidden");
    }
}

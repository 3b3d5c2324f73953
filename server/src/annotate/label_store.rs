//! The labels editor: adds, removes and re-notes blocks of an incident's `labels.json` on
//! behalf of one annotator, and undoes its own last change.
//!
//! Every change is an intent ("add this block", "remove the label at these lines") applied to
//! the file as it is on disk at that moment: under the file's lock, the editor reads
//! `labels.json` again, applies the intent, and writes the result atomically. Two editors
//! labeling the same incident therefore never lose each other's labels, whatever the order of
//! their writes. The file is written in one stable form: blocks sorted by path, lines and
//! annotator, two-space JSON, fields nobody here knows kept as they were.

use super::lock::{FileLock, WAIT};
use crate::incident::{LabelBlock, Labels};
use crate::util::paths::{label_path_reason, normalize_rel};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A label as a change names it: its lines, and who made it (`None`: whoever did).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelKey {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub annotator: Option<String>,
}

impl LabelKey {
    /// The key naming exactly this block (its annotator included).
    pub fn of(b: &LabelBlock) -> LabelKey {
        LabelKey {
            path: normalize_rel(&b.path),
            start_line: b.start_line,
            end_line: b.end_line,
            annotator: b.annotator.clone(),
        }
    }

    fn matches(&self, b: &LabelBlock) -> bool {
        normalize_rel(&b.path) == normalize_rel(&self.path)
            && b.start_line == self.start_line
            && b.end_line == self.end_line
            && self
                .annotator
                .as_ref()
                .is_none_or(|a| b.annotator.as_ref() == Some(a))
    }

    fn describe(&self) -> String {
        let who = self
            .annotator
            .as_deref()
            .map(|a| format!(" by {a}"))
            .unwrap_or_default();
        format!("{}:{}-{}{who}", self.path, self.start_line, self.end_line)
    }
}

/// One change to `labels.json`, applied to whatever the file holds when it is applied.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Adds the block unless the same lines are already labeled by the same annotator.
    Add(LabelBlock),
    /// Removes every label the key matches.
    Remove(LabelKey),
    /// Removes the labels each key matches (the inverse of a restore).
    RemoveEach(Vec<LabelKey>),
    /// Sets (or, with `None`, removes) the note of every label the key matches.
    SetNote { key: LabelKey, note: Option<String> },
    /// Puts blocks back as they were (the undo of a removal).
    Restore(Vec<LabelBlock>),
    /// Replaces the block each key names with the given one (the undo of a note change).
    Replace(Vec<(LabelKey, LabelBlock)>),
}

/// What a change did: the labels as now on disk, and a sentence saying what changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub labels: Labels,
    pub summary: String,
    /// False when the file already said what the change asked (nothing was written).
    pub changed: bool,
}

/// Edits one `labels.json` for one annotator, keeping the undo history of its own changes.
#[derive(Debug)]
pub struct LabelEditor {
    file: PathBuf,
    annotator: String,
    /// The inverse of each change made through this editor, newest last.
    undo: Vec<Change>,
    wait: Duration,
}

impl LabelEditor {
    pub fn new(file: &Path, annotator: &str) -> LabelEditor {
        LabelEditor {
            file: file.to_path_buf(),
            annotator: annotator.to_string(),
            undo: Vec::new(),
            wait: WAIT,
        }
    }

    pub fn file(&self) -> &Path {
        &self.file
    }

    pub fn annotator(&self) -> &str {
        &self.annotator
    }

    /// How many changes `undo` can take back.
    pub fn undo_depth(&self) -> usize {
        self.undo.len()
    }

    /// The labels on disk now (a missing file is no labels yet).
    pub fn read(&self) -> Result<Labels, String> {
        read_labels(&self.file)
    }

    /// Labels lines `start..=end` of `path` for this editor's annotator, with the time;
    /// `extra` adds fields (e.g. where an accepted prediction came from).
    pub fn add(
        &mut self,
        path: &str,
        start_line: u32,
        end_line: u32,
        note: Option<String>,
        extra: Map<String, Value>,
    ) -> Result<Applied, String> {
        if let Some(why) = label_path_reason(path) {
            return Err(format!("cannot label {path}: {why}"));
        }
        if start_line == 0 || end_line < start_line {
            return Err(format!(
                "cannot label lines {start_line}-{end_line} of {path}: expected 1 <= start_line <= end_line"
            ));
        }
        let mut extra = extra;
        extra
            .entry("labeled_at")
            .or_insert_with(|| Value::String(crate::util::now_rfc3339()));
        let block = LabelBlock {
            path: normalize_rel(path),
            start_line,
            end_line,
            note: note.filter(|n| !n.trim().is_empty()),
            annotator: Some(self.annotator.clone()),
            extra,
        };
        self.change(Change::Add(block))
    }

    /// Removes the labels `key` names.
    pub fn remove(&mut self, key: LabelKey) -> Result<Applied, String> {
        self.change(Change::Remove(key))
    }

    /// Sets the note of the labels `key` names; an empty note removes it.
    pub fn set_note(&mut self, key: LabelKey, note: Option<String>) -> Result<Applied, String> {
        let note = note.filter(|n| !n.trim().is_empty());
        self.change(Change::SetNote { key, note })
    }

    /// Takes back the last change made through this editor, applied (like every change) to
    /// the file as it is now: a label someone else added since stays.
    pub fn undo(&mut self) -> Result<Applied, String> {
        let Some(inverse) = self.undo.pop() else {
            return Err(format!(
                "nothing to undo: no label change was made through this editor ({})",
                self.file.display()
            ));
        };
        let (applied, _) = self.apply(&inverse)?;
        Ok(Applied {
            summary: format!("undid: {}", applied.summary),
            ..applied
        })
    }

    /// Applies a change and remembers its inverse.
    pub fn change(&mut self, change: Change) -> Result<Applied, String> {
        let (applied, inverse) = self.apply(&change)?;
        if let Some(inv) = inverse {
            self.undo.push(inv);
        }
        Ok(applied)
    }

    /// Under the lock: read the file, apply `change`, write it if it changed.
    fn apply(&self, change: &Change) -> Result<(Applied, Option<Change>), String> {
        let _lock = FileLock::acquire(&self.file, self.wait)?;
        let mut labels = read_labels(&self.file)?;
        let (summary, inverse) = apply_change(&mut labels, change, &self.annotator)?;
        let changed = inverse.is_some();
        if changed {
            sort_blocks(&mut labels.blocks);
            crate::util::fs::write_atomic(&self.file, render(&labels)?.as_bytes())
                .map_err(|e| format!("{}: cannot write: {e}", self.file.display()))?;
        }
        Ok((
            Applied {
                labels,
                summary,
                changed,
            },
            inverse,
        ))
    }
}

/// Reads `labels.json`; a missing file is an empty one, a bad one an error naming the problem
/// (and nothing is written over it).
pub fn read_labels(file: &Path) -> Result<Labels, String> {
    if !file.exists() {
        return Ok(Labels::default());
    }
    let (labels, problems) = Labels::load_all(file);
    match (labels, problems.first()) {
        (Some(l), None) => Ok(l),
        (_, Some(p)) => Err(format!("{p}; not changing it")),
        (None, None) => Err(format!("{}: cannot be read", file.display())),
    }
}

/// The stable order of blocks: path, lines, annotator.
pub fn sort_blocks(blocks: &mut [LabelBlock]) {
    blocks.sort_by(|a, b| {
        (
            normalize_rel(&a.path),
            a.start_line,
            a.end_line,
            &a.annotator,
        )
            .cmp(&(
                normalize_rel(&b.path),
                b.start_line,
                b.end_line,
                &b.annotator,
            ))
    });
}

/// The file's text: two-space JSON with a trailing newline.
pub fn render(labels: &Labels) -> Result<String, String> {
    let mut text = serde_json::to_string_pretty(labels)
        .map_err(|e| format!("cannot write labels as JSON: {e}"))?;
    text.push('\n');
    Ok(text)
}

/// Applies `change` to `labels`; returns what happened and the change that takes it back
/// (`None` when nothing changed).
fn apply_change(
    labels: &mut Labels,
    change: &Change,
    annotator: &str,
) -> Result<(String, Option<Change>), String> {
    match change {
        Change::Add(b) => {
            let key = LabelKey::of(b);
            if labels.blocks.iter().any(|x| key.matches(x)) {
                return Ok((format!("{} is already labeled", key.describe()), None));
            }
            labels.blocks.push(b.clone());
            Ok((
                format!("labeled {}", key.describe()),
                Some(Change::Remove(key)),
            ))
        }
        Change::RemoveEach(keys) => {
            let (gone, kept): (Vec<LabelBlock>, Vec<LabelBlock>) = labels
                .blocks
                .drain(..)
                .partition(|b| keys.iter().any(|k| k.matches(b)));
            labels.blocks = kept;
            if gone.is_empty() {
                return Err("none of those labels is there any more".to_string());
            }
            let what: Vec<String> = gone.iter().map(|b| LabelKey::of(b).describe()).collect();
            Ok((
                format!("removed the label {}", what.join(", ")),
                Some(Change::Restore(gone)),
            ))
        }
        Change::Remove(key) => {
            let (gone, kept): (Vec<LabelBlock>, Vec<LabelBlock>) =
                labels.blocks.drain(..).partition(|b| key.matches(b));
            labels.blocks = kept;
            if gone.is_empty() {
                return Err(format!(
                    "no label {} (someone may have removed or changed it)",
                    key.describe()
                ));
            }
            let n = gone.len();
            Ok((
                format!(
                    "removed the label {}{}",
                    key.describe(),
                    if n > 1 {
                        format!(" ({n} labels)")
                    } else {
                        String::new()
                    }
                ),
                Some(Change::Restore(gone)),
            ))
        }
        Change::SetNote { key, note } => {
            let mut before = Vec::new();
            let now = crate::util::now_rfc3339();
            for b in labels.blocks.iter_mut().filter(|b| key.matches(b)) {
                if &b.note == note {
                    continue;
                }
                before.push((LabelKey::of(b), b.clone()));
                b.note = note.clone();
                b.extra
                    .insert("edited_by".into(), Value::String(annotator.to_string()));
                b.extra
                    .insert("edited_at".into(), Value::String(now.clone()));
            }
            let matched = labels.blocks.iter().any(|b| key.matches(b));
            if !matched {
                return Err(format!(
                    "no label {} (someone may have removed or changed it)",
                    key.describe()
                ));
            }
            if before.is_empty() {
                return Ok((format!("the note of {} is unchanged", key.describe()), None));
            }
            let what = match note {
                Some(n) => format!("noted {}: {n}", key.describe()),
                None => format!("removed the note of {}", key.describe()),
            };
            Ok((what, Some(Change::Replace(before))))
        }
        Change::Restore(blocks) => {
            let mut back = Vec::new();
            for b in blocks {
                let key = LabelKey::of(b);
                if !labels.blocks.iter().any(|x| key.matches(x)) {
                    labels.blocks.push(b.clone());
                    back.push(key);
                }
            }
            if back.is_empty() {
                return Ok(("the labels are already back".to_string(), None));
            }
            let summary = format!(
                "restored the label {}",
                back.iter()
                    .map(|k| k.describe())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            Ok((summary, Some(Change::RemoveEach(back))))
        }
        Change::Replace(pairs) => {
            let mut done = Vec::new();
            let mut missing = Vec::new();
            for (key, with) in pairs {
                match labels.blocks.iter_mut().find(|b| key.matches(b)) {
                    Some(b) => {
                        done.push((LabelKey::of(with), b.clone()));
                        *b = with.clone();
                    }
                    None => missing.push(key.describe()),
                }
            }
            if done.is_empty() {
                return Err(format!(
                    "no label {} (someone may have removed or changed it)",
                    missing.join(", ")
                ));
            }
            let summary = format!(
                "restored the note of {}",
                done.iter()
                    .map(|(k, _)| k.describe())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            Ok((summary, Some(Change::Replace(done))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(path: &str, s: u32, e: u32, who: Option<&str>) -> LabelKey {
        LabelKey {
            path: path.into(),
            start_line: s,
            end_line: e,
            annotator: who.map(str::to_string),
        }
    }

    fn lines_of(file: &Path) -> Vec<(String, u32, u32, Option<String>)> {
        read_labels(file)
            .unwrap()
            .blocks
            .into_iter()
            .map(|b| (b.path, b.start_line, b.end_line, b.annotator))
            .collect()
    }

    #[test]
    fn adds_sorted_with_annotator_and_time_keeping_unknown_fields() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("labels.json");
        std::fs::write(
            &file,
            r#"{"blocks": [{"path": "src/z.py", "start_line": 5, "end_line": 6, "reviewed": true}], "version": 3}"#,
        )
        .unwrap();
        let mut ed = LabelEditor::new(&file, "ann-1");
        let r = ed
            .add("./src/a.py", 10, 12, Some("why".into()), Map::new())
            .unwrap();
        assert!(r.changed);
        assert_eq!(r.summary, "labeled src/a.py:10-12 by ann-1");
        ed.add("src/a.py", 3, 4, None, Map::new()).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], 3, "unknown top-level fields are kept");
        assert_eq!(
            v["blocks"][2]["reviewed"], true,
            "unknown block fields are kept"
        );
        let order: Vec<(&str, u64)> = v["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["path"].as_str().unwrap(),
                    b["start_line"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(order, [("src/a.py", 3), ("src/a.py", 10), ("src/z.py", 5)]);
        assert_eq!(v["blocks"][1]["annotator"], "ann-1");
        assert_eq!(v["blocks"][1]["note"], "why");
        assert!(v["blocks"][1]["labeled_at"]
            .as_str()
            .unwrap()
            .ends_with('Z'));
        // Two-space JSON, a trailing newline, and the same bytes for the same labels.
        assert!(
            text.starts_with("{\n  \"blocks\": [\n    {\n      \"path\""),
            "{text}"
        );
        assert!(text.ends_with("}\n"));
        let again = ed.add("src/a.py", 3, 4, None, Map::new()).unwrap();
        assert!(!again.changed, "{}", again.summary);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        // A missing file is created; a bad one is never written over.
        std::fs::write(&file, "{\"blocks\": [{\"path\": 3}]}").unwrap();
        let err = ed.add("src/a.py", 1, 1, None, Map::new()).unwrap_err();
        assert!(
            err.contains("labels.json") && err.contains("blocks[0].path"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{\"blocks\": [{\"path\": 3}]}"
        );
        assert!(ed.add("../x.py", 1, 1, None, Map::new()).is_err());
        assert!(ed.add("x.py", 3, 1, None, Map::new()).is_err());
    }

    #[test]
    fn removes_renotes_and_undoes_its_own_changes_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("labels.json");
        let mut ann = LabelEditor::new(&file, "ann");
        let mut bob = LabelEditor::new(&file, "bob");
        ann.add("a.py", 1, 2, Some("first".into()), Map::new())
            .unwrap();
        bob.add("a.py", 1, 2, None, Map::new()).unwrap();
        bob.add("b.py", 7, 9, None, Map::new()).unwrap();
        assert_eq!(
            lines_of(&file).len(),
            3,
            "the same lines by two annotators are two labels"
        );

        // ann re-notes her label, then removes it; bob's label on the same lines stays.
        let r = ann
            .set_note(key("a.py", 1, 2, Some("ann")), Some("second".into()))
            .unwrap();
        assert_eq!(r.summary, "noted a.py:1-2 by ann: second");
        let edited = read_labels(&file).unwrap().blocks[0].clone();
        assert_eq!(edited.note.as_deref(), Some("second"));
        assert_eq!(edited.extra["edited_by"], "ann");
        ann.remove(key("a.py", 1, 2, Some("ann"))).unwrap();
        assert_eq!(
            lines_of(&file),
            vec![
                ("a.py".into(), 1, 2, Some("bob".into())),
                ("b.py".into(), 7, 9, Some("bob".into()))
            ]
        );
        // Meanwhile bob labels more; ann's undo brings her label back with its note and
        // leaves bob's new label alone.
        bob.add("c.py", 4, 4, None, Map::new()).unwrap();
        let r = ann.undo().unwrap();
        assert!(
            r.summary
                .starts_with("undid: restored the label a.py:1-2 by ann"),
            "{}",
            r.summary
        );
        let back = read_labels(&file).unwrap();
        assert_eq!(back.blocks.len(), 4);
        assert_eq!(back.blocks[0].note.as_deref(), Some("second"));
        // The next undo restores the old note; then the label goes; then nothing is left.
        ann.undo().unwrap();
        assert_eq!(
            read_labels(&file).unwrap().blocks[0].note.as_deref(),
            Some("first")
        );
        ann.undo().unwrap();
        assert_eq!(lines_of(&file).len(), 3);
        let err = ann.undo().unwrap_err();
        assert!(err.contains("nothing to undo"), "{err}");
        // Removing what is not there says so and writes nothing.
        let err = ann.remove(key("a.py", 1, 2, Some("ann"))).unwrap_err();
        assert!(err.contains("no label a.py:1-2 by ann"), "{err}");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["blocks"].as_array().unwrap().len(), 3, "{}", json!(v));
    }

    #[test]
    fn two_writers_interleaving_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("labels.json");
        let threads: Vec<_> = ["ann", "bob", "cy"]
            .iter()
            .map(|who| {
                let file = file.clone();
                let who = who.to_string();
                std::thread::spawn(move || {
                    let mut ed = LabelEditor::new(&file, &who);
                    for i in 1..=40u32 {
                        ed.add("src/x.py", i, i, Some(format!("{who} {i}")), Map::new())
                            .unwrap();
                        if i % 5 == 0 {
                            // Every fifth label is taken back again.
                            ed.undo().unwrap();
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let labels = read_labels(&file).unwrap();
        assert_eq!(labels.blocks.len(), 3 * 32);
        for who in ["ann", "bob", "cy"] {
            let mine: Vec<u32> = labels
                .blocks
                .iter()
                .filter(|b| b.annotator.as_deref() == Some(who))
                .map(|b| b.start_line)
                .collect();
            let want: Vec<u32> = (1..=40).filter(|i| i % 5 != 0).collect();
            assert_eq!(mine, want, "{who}");
        }
        assert!(!dir.path().join("labels.json.lock").exists());
    }
}

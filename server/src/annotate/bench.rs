//! `distdebug bench annotate`: what labeling costs. Label changes through the labels editor
//! (lock, re-read, merge, fsync'd atomic write) on a `labels.json` that already holds many
//! blocks, one writer and two at once; snapping a selection in a large source file (a cold
//! parse, as after an edit, and on the parsed model, as the server's cache serves it); and
//! agreement over many labels. Prints figures; asserts nothing about time.

use super::label_store::{read_labels, render, LabelEditor};
use crate::code::parse_file;
use crate::incident::{LabelBlock, Labels};
use serde::Serialize;
use serde_json::Map;
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct AnnotateBenchSpec {
    /// Blocks already in `labels.json`.
    pub existing: usize,
    /// Label changes timed (each writer makes this many in the concurrent run).
    pub writes: usize,
    /// Lines of the generated Java file snapped in.
    pub source_lines: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

fn latency(mut v: Vec<Duration>) -> Latency {
    v.sort_unstable();
    let at = |q: f64| {
        v.get(((v.len() as f64 - 1.0) * q).round() as usize)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    };
    Latency {
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        max_ms: at(1.0),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct AnnotateBenchReport {
    pub existing_blocks: usize,
    pub labels_json_bytes: usize,
    /// One writer: each change from lock to written file.
    pub one_writer: Latency,
    /// Two writers on two threads at once, `writes` changes each: wall time and changes/s.
    pub two_writers_seconds: f64,
    pub two_writers_changes_per_second: f64,
    pub two_writers_lost: usize,
    pub source_lines: usize,
    /// Parse and snap a selection (the first code action after an edit).
    pub snap_cold: Latency,
    /// Snap on the parsed model (code actions while the document is unchanged).
    pub snap_warm: Latency,
    pub agreement_labels: usize,
    pub agreement_ms: f64,
}

fn block(path: String, line: u32, who: &str) -> LabelBlock {
    LabelBlock {
        path,
        start_line: line,
        end_line: line + 2,
        note: Some("generated".to_string()),
        annotator: Some(who.to_string()),
        extra: Map::new(),
    }
}

/// A Java class with `n` lines of methods holding statements and `if`s.
fn java_source(n: usize) -> String {
    let mut s = String::from("class Big {\n");
    let mut i = 0;
    while s.lines().count() + 8 < n {
        s.push_str(&format!(
            "  int m{i}(int x) {{\n    int y = x + {i};\n    if (y > 2) {{\n      y = y * 2;\n    }}\n    return y;\n  }}\n\n"
        ));
        i += 1;
    }
    s.push_str("}\n");
    s
}

pub fn run(dir: &Path, spec: &AnnotateBenchSpec) -> Result<AnnotateBenchReport, String> {
    let file = dir.join("labels.json");
    let existing = Labels {
        blocks: (0..spec.existing)
            .map(|i| {
                block(
                    format!("src/f{}.java", i % 50),
                    (i / 50 * 4 + 1) as u32,
                    "seed",
                )
            })
            .collect(),
        extra: Map::new(),
    };
    crate::util::fs::write_atomic(&file, render(&existing)?.as_bytes())
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let bytes = std::fs::metadata(&file)
        .map(|m| m.len() as usize)
        .unwrap_or(0);

    let mut ed = LabelEditor::new(&file, "one");
    let mut times = Vec::with_capacity(spec.writes);
    for i in 0..spec.writes {
        let t = Instant::now();
        ed.add(&format!("src/w{i}.java"), 1, 3, None, Map::new())?;
        times.push(t.elapsed());
    }
    let one_writer = latency(times);

    let started = Instant::now();
    let writers: Vec<_> = ["two-a", "two-b"]
        .iter()
        .map(|who| {
            let file = file.clone();
            let who = who.to_string();
            let n = spec.writes;
            std::thread::spawn(move || -> Result<(), String> {
                let mut ed = LabelEditor::new(&file, &who);
                for i in 0..n {
                    ed.add(
                        &format!("src/{who}.java"),
                        (i * 4 + 1) as u32,
                        (i * 4 + 2) as u32,
                        None,
                        Map::new(),
                    )?;
                }
                Ok(())
            })
        })
        .collect();
    for w in writers {
        w.join()
            .map_err(|_| "a writer thread panicked".to_string())??;
    }
    let two = started.elapsed().as_secs_f64();
    let after = read_labels(&file)?;
    let written = after
        .blocks
        .iter()
        .filter(|b| {
            b.annotator
                .as_deref()
                .is_some_and(|a| a.starts_with("two-"))
        })
        .count();

    let text = java_source(spec.source_lines);
    let lines = crate::util::text::line_count(text.as_bytes());
    let path = Path::new("src/Big.java");
    let rounds = 30;
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    let model = parse_file(path, &text);
    for r in 0..rounds {
        let line = 2 + (r as u32 * 97) % lines.saturating_sub(4).max(1);
        let t = Instant::now();
        let _ = parse_file(path, &text).snap(line, line + 1);
        cold.push(t.elapsed());
        let t = Instant::now();
        for _ in 0..100 {
            let _ = model.snap(line, line + 1);
        }
        warm.push(t.elapsed() / 100);
    }

    let t = Instant::now();
    let g = super::agreement("bench", &after.blocks, &|_| Some(10_000));
    let agreement_ms = t.elapsed().as_secs_f64() * 1000.0;
    if g.pairs.is_empty() {
        return Err("agreement found no pair of annotators".to_string());
    }
    Ok(AnnotateBenchReport {
        existing_blocks: spec.existing,
        labels_json_bytes: bytes,
        one_writer,
        two_writers_seconds: two,
        two_writers_changes_per_second: (2 * spec.writes) as f64 / two.max(1e-9),
        two_writers_lost: 2 * spec.writes - written,
        source_lines: lines as usize,
        snap_cold: latency(cold),
        snap_warm: latency(warm),
        agreement_labels: after.blocks.len(),
        agreement_ms,
    })
}

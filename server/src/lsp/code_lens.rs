//! `textDocument/codeLens`: a lens above each predicted block of the current attempt
//! (`◆ agent <name> #<attempt>: <rationale>`, with its rank) and, once the attempt is scored,
//! a lens at the top of each affected file with the attempt's figures and the file's counts;
//! at the top of each file the agent read, where it looked (`read 3x, lines 40-120`). While
//! two attempts are compared: a lens above each compared region and one at the top of each
//! affected file with both sides' scores and their overlap.

use super::attempts::{shorten, Attempt, AttemptScore};
use super::positions;
use super::session::State;
use super::view::Code;
use serde_json::json;
use tower_lsp_server::ls_types::{CodeLens, Command, Position, Range};

pub fn code_lenses(state: &State, uri: &str) -> Vec<CodeLens> {
    let Some(rel) = state
        .workspace
        .as_ref()
        .and_then(|ws| ws.rel_path_of_uri(uri))
    else {
        return Vec::new();
    };
    let annotations = state.view.file(&rel);
    if let Some(c) = &state.compare {
        return compare_lenses(c, &rel, annotations);
    }
    let Some(current) = state.current_attempt() else {
        return Vec::new();
    };
    // Clip to the open document so that a lens never points past its end.
    let last_line = state
        .docs
        .get(uri)
        .map(|d| positions::visible_lines(&d.rope) as u32)
        .unwrap_or(u32::MAX);
    let show = json!({"config": current.key.config, "attempt": current.key.attempt});
    let total = current.blocks.len();
    let mut out = Vec::new();
    if let Some(score) = &current.score {
        let count = |c: Code| annotations.iter().filter(|a| a.code == c).count();
        let title = format!(
            "◆ {}{}",
            score_title(current, score),
            file_counts(
                count(Code::Hit),
                count(Code::FalsePositive),
                count(Code::Missed)
            )
        );
        out.push(lens(
            0,
            title,
            "distdebug.score",
            json!({"config": current.key.config, "attempt": current.key.attempt}),
        ));
    }
    if let Some(f) = current.looked.file(&rel) {
        let title = format!(
            "◆ agent {} #{} read this file {}x, {} (first at step {})",
            current.agent,
            current.key.attempt,
            f.reads,
            f.describe_lines(4),
            f.first_step
        );
        out.push(lens(0, title, "distdebug.showAttempt", show.clone()));
    }
    for a in annotations {
        let super::view::Origin::Block(i) = a.origin else {
            continue;
        };
        let Some(b) = current.blocks.get(i) else {
            continue;
        };
        let rationale = b
            .rationale
            .as_deref()
            .map(|r| shorten(r, 100))
            .unwrap_or_else(|| "predicted causal block".to_string());
        let mut title = format!(
            "◆ agent {} #{}: {} (rank {} of {}",
            current.agent,
            current.key.attempt,
            rationale,
            i + 1,
            total
        );
        if let Some(c) = b.confidence {
            title.push_str(&format!(", confidence {:.0}%", c * 100.0));
        }
        if a.code != Code::Predicted {
            title.push_str(&format!(", {}", a.code.as_str()));
        }
        title.push(')');
        let line = a.start_line.clamp(1, last_line.max(1)) - 1;
        out.push(lens(line, title, "distdebug.showAttempt", show.clone()));
    }
    out
}

/// The lenses of a comparison in one file: the file's summary, then one per region.
fn compare_lenses(
    c: &super::compare::CompareView,
    rel: &str,
    annotations: &[super::view::Annotation],
) -> Vec<CodeLens> {
    let regions: Vec<(usize, u32)> = annotations
        .iter()
        .filter_map(|a| match a.origin {
            super::view::Origin::Region(i) => Some((i, a.start_line)),
            _ => None,
        })
        .collect();
    if regions.is_empty() {
        return Vec::new();
    }
    let mut out = vec![lens(0, c.file_lens(rel), "distdebug.compare", c.args())];
    for (i, start) in regions {
        if let Some(title) = c.region_lens(i) {
            out.push(lens(start.max(1) - 1, title, "distdebug.compare", c.args()));
        }
    }
    out
}

/// `score baseline #1: block coverage 50.0%, precision 25.0%, hit rate 50.0%, file coverage 100.0%`
pub fn score_title(a: &Attempt, s: &AttemptScore) -> String {
    let mut t = format!(
        "score {} #{}: block coverage {}, precision {}, hit rate {}, file coverage {}",
        a.agent,
        a.key.attempt,
        pct(s.block_coverage),
        pct(s.block_precision),
        pct(s.block_hit_rate),
        pct(s.file_coverage)
    );
    let looked = &s.json["looked"];
    if looked.is_object() {
        match looked["first_look_step"].as_u64() {
            Some(step) => t.push_str(&format!(", first read a labeled line at step {step}")),
            None => t.push_str(", never read a labeled line"),
        }
    }
    if let Some(first) = s.leakage.first() {
        t.push_str(&format!(" · flagged by the leakage guard ({first})"));
    }
    t
}

fn file_counts(hits: usize, false_positives: usize, missed: usize) -> String {
    format!(" · this file: {hits} hit, {false_positives} false positive, {missed} missed")
}

/// A fraction as a percentage with one decimal (the scoring rules, docs/scoring.md).
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn lens(line: u32, title: String, command: &str, arg: serde_json::Value) -> CodeLens {
    let at = Position::new(line, 0);
    CodeLens {
        range: Range::new(at, at),
        command: Some(Command {
            title,
            command: command.to_string(),
            arguments: Some(vec![arg]),
        }),
        data: None,
    }
}

//! `textDocument/hover` over a predicted block or a label: the rationale, the confidence, the
//! trajectory step that produced the block and the evidence that led there; for labels, the
//! note and who labeled it. Markdown when the client renders it, plain text otherwise.

use super::code_lens::pct;
use super::positions;
use super::session::State;
use super::view::{Code, Origin};
use tower_lsp_server::ls_types::{
    Hover, HoverContents, MarkupContent, MarkupKind, Position, Range,
};

pub fn hover(state: &State, uri: &str, pos: Position) -> Option<Hover> {
    let rel = state.workspace.as_ref()?.rel_path_of_uri(uri)?;
    let line = pos.line.checked_add(1)?;
    let md = state.caps.markdown_hover;
    let bold = |s: &str| {
        if md {
            format!("**{s}**")
        } else {
            s.to_string()
        }
    };
    let current = state.current_attempt();
    let mut sections = Vec::new();
    let mut span: Option<(u32, u32)> = None;
    for a in state
        .view
        .file(&rel)
        .iter()
        .filter(|a| a.covers(line) && a.code != Code::Looked)
    {
        span = Some(match span {
            Some((s, e)) => (s.min(a.start_line), e.max(a.end_line)),
            None => (a.start_line, a.end_line),
        });
        let mut lines = Vec::new();
        match a.origin {
            Origin::Block(i) => {
                let (Some(c), Some(b)) = (current, current.and_then(|c| c.blocks.get(i))) else {
                    continue;
                };
                let status = match a.code {
                    Code::Predicted => String::new(),
                    other => format!(" · {}", other.as_str()),
                };
                lines.push(format!(
                    "{} agent {} #{} · rank {} of {}{}",
                    bold("distdebug"),
                    c.agent,
                    c.key.attempt,
                    i + 1,
                    c.blocks.len(),
                    status
                ));
                lines.push(
                    b.rationale
                        .clone()
                        .unwrap_or_else(|| "predicted causal block (no rationale given)".into()),
                );
                if let Some(conf) = b.confidence {
                    lines.push(format!("confidence: {}", pct(conf)));
                }
                lines.push(format!(
                    "lines {}-{} of {}",
                    b.start_line, b.end_line, b.path
                ));
                if let Some(step) = b.step {
                    match c.step(step) {
                        Some(s) => {
                            lines.push(format!("trajectory step {}: {}", s.index, s.summary()))
                        }
                        None => lines.push(format!("trajectory step {step}")),
                    }
                }
                for e in &b.evidence {
                    lines.push(format!("evidence: {}:{}", e.path, e.line));
                }
            }
            Origin::Label(i) => {
                let Some(l) = state.labels.as_ref().and_then(|s| s.blocks.get(i)) else {
                    continue;
                };
                let title = if a.code == Code::Missed {
                    "label · missed: no prediction reached it"
                } else {
                    "label"
                };
                lines.push(format!("{} {}", bold("distdebug"), title));
                if let Some(n) = &l.note {
                    lines.push(n.clone());
                }
                if let Some(who) = &l.annotator {
                    lines.push(format!("annotator: {who}"));
                }
                lines.push(format!(
                    "lines {}-{} of {}",
                    l.start_line, l.end_line, l.path
                ));
            }
            Origin::Region(i) => {
                let Some(c) = state.compare.as_ref() else {
                    continue;
                };
                let (Some(msg), Some(r)) = (c.region_message(i), c.result.regions.get(i)) else {
                    continue;
                };
                lines.push(format!("{} compare", bold("distdebug")));
                lines.push(msg);
                for (side, blocks, ix) in [
                    ("A", &c.a_blocks, &r.a_blocks),
                    ("B", &c.b_blocks, &r.b_blocks),
                ] {
                    for &j in ix {
                        if let Some(b) = blocks.get(j) {
                            lines.push(format!(
                                "{side} block {} (lines {}-{}): {}",
                                j + 1,
                                b.start_line,
                                b.end_line,
                                b.rationale.as_deref().unwrap_or("no rationale")
                            ));
                        }
                    }
                }
            }
            Origin::Looked(_) => continue,
        }
        sections.push(lines.join(if md { "  \n" } else { "\n" }));
    }
    let (s, e) = span?;
    let separator = if md { "\n\n---\n\n" } else { "\n\n" };
    let range = match state.docs.get(uri) {
        // Clip to the open document: the end of the block's last line.
        Some(d) => {
            let n = positions::visible_lines(&d.rope) as u32;
            let (s, e) = (s.clamp(1, n), e.clamp(1, n));
            let width = positions::line_width(&d.rope, (e - 1) as usize, state.caps.encoding);
            Range::new(Position::new(s - 1, 0), Position::new(e - 1, width))
        }
        None => Range::new(Position::new(s - 1, 0), Position::new(e, 0)),
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: if md {
                MarkupKind::Markdown
            } else {
                MarkupKind::PlainText
            },
            value: sections.join(separator),
        }),
        range: Some(range),
    })
}

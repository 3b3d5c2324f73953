//! Diagnostics (docs/lsp.md): each predicted block of the current attempt and each label is a
//! diagnostic over its lines with source `distdebug` and its code, on every affected file,
//! open or not; open documents get their version. Files that had diagnostics and no longer do
//! are cleared.

use super::outbox::{Outbox, Outgoing};
use super::positions::{self, Encoding};
use super::session::State;
use super::view::{Annotation, Code, Origin};
use super::workspace::FileInfo;
use ropey::Rope;
use std::collections::HashMap;
use std::str::FromStr;
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticRelatedInformation, Location, NumberOrString, Position,
    PublishDiagnosticsParams, Range, Uri,
};

pub const SOURCE: &str = "distdebug";

/// Publishes every file of the view, and clears files that had diagnostics before.
pub fn publish_all(state: &mut State, outbox: &Outbox) {
    let mut now: HashMap<String, Uri> = HashMap::new();
    let rels: Vec<String> = state.view.files.keys().cloned().collect();
    if let Some(ws) = state.workspace.as_mut() {
        let closed: Vec<&str> = rels
            .iter()
            .map(String::as_str)
            .filter(|r| !state.open_rel.contains_key(*r))
            .collect();
        ws.prefetch(&closed);
    }
    for rel in rels {
        if let Some(p) = file_diagnostics(state, &rel) {
            now.insert(p.uri.as_str().to_string(), p.uri.clone());
            outbox.send(Outgoing::Publish(p));
        }
    }
    let old = std::mem::take(&mut state.published);
    let mut gone: Vec<(String, Uri)> = old
        .into_iter()
        .filter(|(k, _)| !now.contains_key(k))
        .collect();
    gone.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, uri) in gone {
        let version = state.docs.get(&key).map(|d| d.version);
        outbox.send(Outgoing::Publish(PublishDiagnosticsParams::new(
            uri,
            Vec::new(),
            version,
        )));
    }
    state.published = now;
}

/// Publishes one file again (it was opened or changed: new version, new line lengths).
pub fn publish_file(state: &mut State, outbox: &Outbox, rel: &str) {
    if state.view.file(rel).is_empty() {
        return;
    }
    if let Some(p) = file_diagnostics(state, rel) {
        state
            .published
            .insert(p.uri.as_str().to_string(), p.uri.clone());
        outbox.send(Outgoing::Publish(p));
    }
}

/// The line facts a range needs: from the open document, else from the file on disk.
enum Lines<'a> {
    Open(&'a Rope),
    Disk(FileInfo),
}

impl Lines<'_> {
    fn count(&self) -> u32 {
        match self {
            Lines::Open(r) => positions::visible_lines(r) as u32,
            Lines::Disk(f) => f.lines.max(1),
        }
    }

    /// The range over lines `start..=end` (1-based), clipped to the file: from the start of
    /// the first line to the end of the last.
    fn range(&self, start: u32, end: u32, enc: Encoding) -> Range {
        let n = self.count();
        let s = start.clamp(1, n);
        let e = end.clamp(s, n);
        let begin = Position::new(s - 1, 0);
        let finish = match self {
            Lines::Open(r) => Position::new(e - 1, positions::line_width(r, (e - 1) as usize, enc)),
            Lines::Disk(_) if e < n => Position::new(e, 0),
            Lines::Disk(f) => Position::new(
                e - 1,
                match enc {
                    Encoding::Utf8 => f.last_line_utf8,
                    Encoding::Utf16 => f.last_line_utf16,
                },
            ),
        };
        Range::new(begin, finish)
    }
}

/// The diagnostics of one file, or `None` when the file is neither open nor on disk.
fn file_diagnostics(state: &mut State, rel: &str) -> Option<PublishDiagnosticsParams> {
    let enc = state.caps.encoding;
    let related = state.caps.related_information;
    let open_uri = state.open_rel.get(rel).cloned();
    let ws = state.workspace.as_mut()?;
    let (uri, lines, version) = match open_uri
        .as_ref()
        .and_then(|u| Some((u, state.docs.get(u)?)))
    {
        Some((u, doc)) => (
            Uri::from_str(u).ok()?,
            Lines::Open(&doc.rope),
            Some(doc.version),
        ),
        None => {
            let info = ws.file_info(rel)?;
            (ws.cached_uri(rel)?, Lines::Disk(info), None)
        }
    };
    let current = state.current.as_ref().and_then(|k| state.attempts.get(k));
    // The evidence files' URIs, made once per file rather than once per block.
    let mut evidence_uris: HashMap<&str, Uri> = HashMap::new();
    if related {
        for a in state.view.file(rel) {
            let Origin::Block(i) = a.origin else { continue };
            for e in current
                .and_then(|c| c.blocks.get(i))
                .map(|b| b.evidence.as_slice())
                .unwrap_or(&[])
            {
                if !evidence_uris.contains_key(e.path.as_str()) {
                    if let Some(u) = ws.cached_uri(&e.path) {
                        evidence_uris.insert(e.path.as_str(), u);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for a in state.view.file(rel) {
        let range = lines.range(a.start_line, a.end_line, enc);
        let (message, evidence) = match a.origin {
            Origin::Block(i) => {
                let Some(b) = current.and_then(|c| c.blocks.get(i)) else {
                    continue;
                };
                let msg = b
                    .rationale
                    .clone()
                    .unwrap_or_else(|| "predicted causal block".to_string());
                (msg, b.evidence.as_slice())
            }
            Origin::Label(i) => {
                let Some(l) = state.labels.as_ref().and_then(|s| s.blocks.get(i)) else {
                    continue;
                };
                let who = l
                    .annotator
                    .as_deref()
                    .map(|a| format!(" by {a}"))
                    .unwrap_or_default();
                let what = l.note.as_deref().unwrap_or("labeled causal block");
                let msg = match a.code {
                    Code::Missed => {
                        format!("missed: no prediction reached this label{who}: {what}")
                    }
                    _ => format!("label{who}: {what}"),
                };
                (msg, &[][..])
            }
            Origin::Region(i) => {
                let Some(msg) = state.compare.as_ref().and_then(|c| c.region_message(i)) else {
                    continue;
                };
                (msg, &[][..])
            }
            Origin::Looked(i) => {
                let Some(msg) = current.and_then(|c| looked_message(c, rel, i)) else {
                    continue;
                };
                (msg, &[][..])
            }
        };
        let related_information = if related && !evidence.is_empty() {
            let items: Vec<DiagnosticRelatedInformation> = evidence
                .iter()
                .filter_map(|e| {
                    let line = e.line.saturating_sub(1);
                    Some(DiagnosticRelatedInformation {
                        location: Location::new(
                            evidence_uris.get(e.path.as_str())?.clone(),
                            Range::new(Position::new(line, 0), Position::new(line + 1, 0)),
                        ),
                        message: format!("evidence: {}:{}", file_name(&e.path), e.line),
                    })
                })
                .collect();
            (!items.is_empty()).then_some(items)
        } else {
            None
        };
        out.push(Diagnostic {
            range,
            severity: Some(severity_of(state, a)),
            code: Some(NumberOrString::String(a.code.as_str().to_string())),
            code_description: None,
            source: Some(SOURCE.to_string()),
            message,
            related_information,
            tags: None,
            data: None,
        });
    }
    Some(PublishDiagnosticsParams::new(uri, out, version))
}

/// `agent baseline #1 read lines 40-120 (3 reads of this file, first at step 4)`
fn looked_message(a: &super::attempts::Attempt, rel: &str, i: usize) -> Option<String> {
    let f = a.looked.file(rel)?;
    let (s, e) = *f.ranges.get(i)?;
    let lines = match (s, e) {
        (1, u32::MAX) => "the whole file".to_string(),
        (s, u32::MAX) => format!("lines {s}-end"),
        (s, e) if s == e => format!("line {s}"),
        (s, e) => format!("lines {s}-{e}"),
    };
    Some(format!(
        "agent {} #{} read {lines} ({} read{} of this file, first at step {})",
        a.agent,
        a.key.attempt,
        f.reads,
        if f.reads == 1 { "" } else { "s" },
        f.first_step
    ))
}

/// The last component of a relative path, for short messages.
fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

fn severity_of(state: &State, a: &Annotation) -> tower_lsp_server::ls_types::DiagnosticSeverity {
    if a.code == Code::Looked {
        tower_lsp_server::ls_types::DiagnosticSeverity::HINT
    } else if a.code.is_prediction() {
        state.config.severity
    } else {
        state.config.label_severity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_clipped_and_end_at_the_end_of_the_last_line() {
        let rope = Rope::from_str("a\nbé😀\nc\n");
        let open = Lines::Open(&rope);
        assert_eq!(
            open.range(2, 2, Encoding::Utf16),
            Range::new(Position::new(1, 0), Position::new(1, 4))
        );
        assert_eq!(
            open.range(2, 2, Encoding::Utf8),
            Range::new(Position::new(1, 0), Position::new(1, 7))
        );
        // Past the end: clipped to the last line.
        assert_eq!(
            open.range(9, 12, Encoding::Utf8),
            Range::new(Position::new(2, 0), Position::new(2, 1))
        );
        let disk = Lines::Disk(FileInfo::from_bytes("a\nbé😀\nc\n".as_bytes()));
        assert_eq!(
            disk.range(1, 2, Encoding::Utf16),
            Range::new(Position::new(0, 0), Position::new(2, 0))
        );
        assert_eq!(
            disk.range(3, 40, Encoding::Utf16),
            Range::new(Position::new(2, 0), Position::new(2, 1))
        );
    }
}

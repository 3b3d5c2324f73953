//! Stage 0, the signals: the repository index, the evidence as templates, the log
//! statements its lines match, the stack frames inside the repository and BM25 of the files
//! against the report. Everything later stages score comes from here.

use super::super::bm25::{self, Corpus, Query};
use super::super::context::{action, quote, read, timed, Sink, Stop, REPORT};
use super::super::drift;
use super::super::evidence::{self, Templates};
use super::super::frames::{self, Frame, FrameKind};
use super::super::logmatch::{self, LogSearch};
use super::super::named;
use super::super::symbols;
use super::super::BaselineConfig;
use crate::agent::AgentInput;
use crate::code::RepoIndex;
use serde_json::json;
use std::time::Instant;

/// What the evidence says, resolved against the repository.
pub struct Signals {
    pub index: RepoIndex,
    pub templates: Templates,
    pub query: Query,
    pub logs: LogSearch,
    /// Every frame and file:line mention with the file it resolves to and how surely.
    pub frames: Vec<(Frame, usize, f64)>,
    /// The evidence files and the report, in the order frames number them.
    pub sources: Vec<String>,
    pub corpus: Corpus,
    /// Files the report names, by path or by the type they are named after.
    pub report_files: Vec<usize>,
}

/// Reads the repository and the evidence, recording a step for each.
pub fn gather(
    cfg: &BaselineConfig,
    input: &AgentInput,
    sink: &Sink,
    started: &Instant,
) -> Result<Signals, Stop> {
    let index = index_repository(cfg, input, sink, started)?;
    let (templates, query) = template_evidence(input, sink, started);
    sink.check()?;
    let logs = match_logs(&index, &templates, sink, started);
    sink.check()?;
    let (frames, sources) = stack_frames(&index, input, &templates, &logs, sink, started);
    sink.check()?;
    let corpus = bm25_files(&index, &query, sink, started);
    sink.check()?;
    let report_files = named::report_files(&index, &input.report);
    Ok(Signals {
        index,
        templates,
        query,
        logs,
        frames,
        sources,
        corpus,
        report_files,
    })
}

fn index_repository(
    cfg: &BaselineConfig,
    input: &AgentInput,
    sink: &Sink,
    started: &Instant,
) -> Result<RepoIndex, Stop> {
    sink.step(action("index", json!({"root": "."})));
    let index = RepoIndex::build(&input.workspace, &cfg.index).map_err(Stop::Failed)?;
    let literals: usize = index.files.iter().map(|f| f.literals.len()).sum();
    sink.step(timed(started, format!(
        "indexed {} files ({:.1} MB, {} string literals) in {:.2} s; skipped {} binary, {} too large, {} links out of the workspace",
        index.files.len(),
        index.bytes() as f64 / 1e6,
        literals,
        started.elapsed().as_secs_f64(),
        index.skipped.binary,
        index.skipped.too_large,
        index.skipped.symlink_outside
    )));
    sink.check()?;
    Ok(index)
}

/// The evidence as templates, and the report as a BM25 query.
fn template_evidence(input: &AgentInput, sink: &Sink, started: &Instant) -> (Templates, Query) {
    let mut templates = Templates::default();
    templates.set_report_times(&input.report);
    let query = Query::from_report(&input.report);
    let mut subjects: Vec<String> = query.terms.keys().cloned().collect();
    evidence::subject_words(&input.report, |w| subjects.push(w));
    templates.set_report_terms(subjects);
    let mut read_ev = action(
        "read_evidence",
        json!({"files": input.evidence.iter().map(|e| e.name.clone()).collect::<Vec<_>>()}),
    );
    for ev in &input.evidence {
        templates.add_source(&ev.name, &ev.text, false);
        let lines = crate::util::text::line_count(ev.text.as_bytes());
        if lines > 0 {
            read_ev.paths_read.push(read(&ev.name, 1, lines));
        }
    }
    templates.add_source(REPORT, &input.report, true);
    sink.step(read_ev);
    let errors = templates
        .templates
        .iter()
        .filter(|t| t.level >= evidence::Level::Warn)
        .count();
    sink.step(timed(
        started,
        format!(
            "{} lines in {} distinct templates ({} at warning level or worse){}",
            templates.total_lines,
            templates.templates.len(),
            errors,
            if templates.dropped_lines > 0 {
                format!(
                    "; {} lines past the template limit only counted",
                    templates.dropped_lines
                )
            } else {
                String::new()
            } + &if templates.skipped_bytes > 0 {
                format!(
                    "; skipped {:.1} MB in the middle of very large files",
                    templates.skipped_bytes as f64 / 1e6
                )
            } else {
                String::new()
            }
        ),
    ));
    (templates, query)
}

/// Log lines -> logging and error statements.
fn match_logs(
    index: &RepoIndex,
    templates: &Templates,
    sink: &Sink,
    started: &Instant,
) -> LogSearch {
    sink.step(action(
        "match_log_statements",
        json!({"templates": templates.templates.len()}),
    ));
    let logs = logmatch::search(index, templates);
    let mut obs = timed(started, format!(
        "{} of {} string literals share words with the evidence, in {} files; parsed them: {} call sites with a message, {} match evidence lines; {} message constants matched, raised at {} lines",
        logs.candidate_literals,
        logs.literals,
        logs.files_parsed.len(),
        logs.sites_tried,
        logs.hits.len(),
        logs.constants.len(),
        logs.constant_uses.len()
    ));
    for h in logs.hits.iter().take(8) {
        obs.paths_read
            .push(read(&index.files[h.file].path, h.line, h.end_line));
    }
    let mut lines: Vec<String> = Vec::new();
    for h in logs.hits.iter().take(5) {
        let t = &templates.templates[h.template];
        lines.push(format!(
            "{}:{} {} ({}/{} words) <- {}:{} \"{}\"",
            index.files[h.file].path,
            h.line,
            h.callee,
            h.matched,
            h.total,
            templates.sources[t.source],
            t.line,
            quote(&t.example, 100)
        ));
    }
    if !lines.is_empty() {
        obs.text = Some(format!(
            "{}\n{}",
            obs.text.unwrap_or_default(),
            lines.join("\n")
        ));
    }
    sink.step(obs);
    logs
}

/// Stack frames and file:line mentions, resolved to files of the repository.
fn stack_frames(
    index: &RepoIndex,
    input: &AgentInput,
    templates: &Templates,
    logs: &LogSearch,
    sink: &Sink,
    started: &Instant,
) -> (Vec<(Frame, usize, f64)>, Vec<String>) {
    sink.step(action("parse_stack_frames", json!({})));
    let mut all_frames = Vec::new();
    let mut next_trace = 0;
    let sources: Vec<(&str, &str)> = input
        .evidence
        .iter()
        .map(|e| (e.name.as_str(), e.text.as_str()))
        .chain(std::iter::once((REPORT, input.report.as_str())))
        .collect();
    for (i, (_, text)) in sources.iter().enumerate() {
        // The same head and tail of very large files as the templates.
        let (head, tail, tail_line) = evidence::head_and_tail(text);
        let mut f = frames::parse(head, i, next_trace);
        if !tail.is_empty() {
            let after = f
                .iter()
                .filter(|x| x.kind == FrameKind::Stack)
                .map(|x| x.trace + 1)
                .max()
                .unwrap_or(next_trace);
            for mut x in frames::parse(tail, i, after) {
                x.source_line += tail_line as u32;
                f.push(x);
            }
        }
        next_trace = f
            .iter()
            .filter(|x| x.kind == FrameKind::Stack)
            .map(|x| x.trace + 1)
            .max()
            .unwrap_or(next_trace);
        all_frames.extend(f);
    }
    let mut resolved: Vec<(frames::Frame, usize, f64)> = all_frames
        .iter()
        .flat_map(|f| {
            if f.line == 0 && f.kind == FrameKind::Stack {
                // A frame that names its function but no line: the line is inferred.
                return symbols::locate(index, f)
                    .into_iter()
                    .map(|(file, line, sure)| (Frame { line, ..f.clone() }, file, sure))
                    .collect::<Vec<_>>();
            }
            frames::resolve(index, f)
                .into_iter()
                .map(|(file, sure)| (f.clone(), file, sure))
                .collect()
        })
        .collect();
    drift::reanchor(index, &all_frames, &mut resolved);
    drift::reanchor_mentions(templates, &logs.hits, &mut resolved);
    let n_stack = all_frames
        .iter()
        .filter(|f| f.kind == FrameKind::Stack)
        .count();
    let in_repo_stack = resolved
        .iter()
        .filter(|r| r.0.kind == FrameKind::Stack)
        .count();
    let mut obs = timed(started, format!(
        "{} stack frames, {} inside the repository; {} file:line mentions, {} inside the repository",
        n_stack,
        in_repo_stack,
        all_frames.len() - n_stack,
        resolved.len() - in_repo_stack
    ));
    for r in resolved.iter().take(8) {
        obs.paths_read
            .push(read(&index.files[r.1].path, r.0.line, r.0.line));
    }
    sink.step(obs);
    let names = sources.iter().map(|s| s.0.to_string()).collect();
    (resolved, names)
}

/// BM25 of every file against the report.
fn bm25_files(index: &RepoIndex, query: &Query, sink: &Sink, started: &Instant) -> Corpus {
    let mut top_terms: Vec<(&String, &f64)> = query.terms.iter().collect();
    top_terms.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
    sink.step(action(
        "bm25_search",
        json!({"terms": top_terms.iter().take(20).map(|t| t.0.clone()).collect::<Vec<_>>(),
               "identifiers": query.identifiers}),
    ));
    let corpus = if query.is_empty() {
        Corpus::default()
    } else {
        bm25::score_files(index, query)
    };
    sink.step(timed(
        started,
        format!(
            "best files for the report's words: {}",
            corpus
                .files
                .iter()
                .take(5)
                .map(|(f, s)| format!("{} ({s:.1})", index.files[*f].path))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ));
    corpus
}

//! The offline baseline agent: localizes with no model at all. It matches the evidence's log
//! lines to the repository's logging and error statements, maps stack frames to blocks,
//! widens to the enclosing error-handling construct, follows one level of callers and
//! callees, uses BM25 from the report's words as fallback and tie-breaker, and names only the
//! few best small blocks, each with the evidence that led there.

pub mod bm25;
pub mod dataflow;
pub mod evidence;
pub mod frames;
pub mod logmatch;
pub mod patterns;
pub mod related;
pub mod smells;
pub mod trace;

use super::{AgentInput, AgentOutput};
use crate::attempt::{
    Diagnosis, DiagnosisBlock, Exit, PathRead, Step, StepKind, TrajectoryRecorder, Usage,
};
use crate::code::{BlockKind, IndexOptions, RepoIndex};
use bm25::{Corpus, Query};
use evidence::Templates;
use frames::FrameKind;
use serde_json::json;
use std::collections::HashMap;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The knobs of the baseline. The defaults were chosen on the whole bundled corpus, never for
/// one incident.
#[derive(Debug, Clone)]
pub struct BaselineConfig {
    /// At most this many blocks are named.
    pub max_blocks: usize,
    /// Blocks longer than this are narrowed (to a branch, a statement, or the line itself).
    pub max_block_lines: u32,
    /// Candidates scoring below this share of the best one are not named.
    pub min_relative_score: f64,
    pub index: IndexOptions,
}

impl Default for BaselineConfig {
    fn default() -> BaselineConfig {
        BaselineConfig {
            max_blocks: 3,
            max_block_lines: 12,
            min_relative_score: 0.35,
            index: IndexOptions::default(),
        }
    }
}

impl BaselineConfig {
    /// The settings as recorded in `run.json`.
    pub fn settings(&self) -> serde_json::Value {
        json!({
            "max_blocks": self.max_blocks,
            "max_block_lines": self.max_block_lines,
            "min_relative_score": self.min_relative_score,
            "max_file_bytes": self.index.max_file_bytes,
        })
    }
}

/// The best log matches that become candidates (the others add nothing but noise).
const MAX_LOG_CANDIDATES: usize = 40;
/// Extra weight of a log statement on an error path.
const ERROR_PATH_BOOST: f64 = 1.25;
/// The score of the innermost in-repository frame of the first trace (a log match scores up
/// to 1). Below 1: in the corpus the crash site is mostly where the failure shows, not
/// where it was caused.
const FRAME_WEIGHT: f64 = 0.7;
/// Each later stack trace counts this much less than the one before.
const TRACE_DECAY: f64 = 0.5;
/// The score of a definition the report names surely (a qualified or called name).
const NAMED_SCORE: f64 = 0.5;
/// Extra weight of evidence inside a definition the report names.
const NAMED_BOOST: f64 = 1.5;
/// Log matches and stack frames whose data flow is followed back.
const MAX_FLOW_SEEDS: usize = 12;
const MAX_FLOW_FRAMES: usize = 3;
/// Blocks reached by data flow that become candidates, and their weight.
const MAX_FLOW_CANDIDATES: usize = 40;
const FLOW_WEIGHT: f64 = 1.0;
/// Writers of state the report names (`next_idx`), per unit of how surely the word is code.
const NAMED_STATE_WEIGHT: f64 = 0.5;

/// How many of the best candidates the trajectory lists (named or not).
const RANKED_SHOWN: usize = 60;
/// How much a candidate's BM25 (relative to the best) adds to its score.
const BM25_TIE_BREAK: f64 = 0.5;

/// Why the localizer stopped early.
enum Stop {
    Cancelled,
    Failed(String),
}

/// Hands steps from the blocking localizer to the async side, which records them as they
/// come; and tells the localizer when the attempt was cancelled.
struct Sink {
    tx: mpsc::UnboundedSender<Step>,
    cancel: CancellationToken,
}

impl Sink {
    fn step(&self, s: Step) {
        // The receiver is gone only when the attempt was abandoned; nothing to record then.
        let _ = self.tx.send(s);
    }

    fn check(&self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            Err(Stop::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Runs the baseline on a blocking thread, recording its steps as they happen. Cancelling
/// `cancel` ends the attempt at once with exit `cancelled`.
pub async fn run(
    cfg: &BaselineConfig,
    input: &AgentInput,
    recorder: &mut TrajectoryRecorder,
    cancel: &CancellationToken,
) -> AgentOutput {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let sink = Sink {
        tx,
        cancel: cancel.clone(),
    };
    let (cfg2, input2) = (cfg.clone(), input.clone());
    let mut handle =
        tokio::task::spawn_blocking(move || localize(&cfg2, &input2, &sink).map(|(d, _)| d));
    let result = loop {
        tokio::select! {
            biased;
            Some(step) = rx.recv() => {
                recorder.record(step);
            }
            _ = cancel.cancelled() => {
                while let Ok(step) = rx.try_recv() {
                    recorder.record(step);
                }
                break Err(Stop::Cancelled);
            }
            joined = &mut handle => {
                while let Ok(step) = rx.try_recv() {
                    recorder.record(step);
                }
                break match joined {
                    Ok(r) => r,
                    Err(e) => Err(Stop::Failed(format!("the baseline stopped unexpectedly: {e}"))),
                };
            }
        }
    };
    match result {
        Ok(diagnosis) => AgentOutput {
            diagnosis: Some(diagnosis),
            exit: Exit::Submitted,
            usage: Usage::default(),
            model: None,
            error: None,
        },
        Err(Stop::Cancelled) => AgentOutput {
            diagnosis: None,
            exit: Exit::Cancelled,
            usage: Usage::default(),
            model: None,
            error: None,
        },
        Err(Stop::Failed(e)) => AgentOutput {
            diagnosis: None,
            exit: Exit::Error,
            usage: Usage::default(),
            model: None,
            error: Some(e),
        },
    }
}

/// Where a candidate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Log,
    Frame,
    Mention,
    Named,
    Related,
    Flow,
    Bm25,
}

#[derive(Debug, Clone)]
struct Candidate {
    file: usize,
    start: u32,
    end: u32,
    score: f64,
    source: Source,
    reason: String,
}

fn action(tool: &str, args: serde_json::Value) -> Step {
    Step::new(StepKind::Action).with_tool(tool, args)
}

fn observation(text: String) -> Step {
    Step::new(StepKind::Observation).with_text(text)
}

/// An observation stamped with the time since the attempt started.
fn timed(started: &Instant, text: String) -> Step {
    observation(format!("[{:.2} s] {text}", started.elapsed().as_secs_f64()))
}

fn read(path: &str, start: u32, end: u32) -> PathRead {
    PathRead {
        path: path.to_string(),
        start_line: Some(start.max(1)),
        end_line: Some(end.max(start).max(1)),
    }
}

fn quote(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.len() <= max {
        return s.to_string();
    }
    let mut e = max;
    while !s.is_char_boundary(e) {
        e -= 1;
    }
    format!("{}…", &s[..e])
}

/// The name the report goes by in rationales (its path in the workspace).
const REPORT: &str = ".distdebug/report.md";

/// One attempt on the calling thread, with what each stage produced (for `distdebug eval`).
pub fn localize_traced(
    cfg: &BaselineConfig,
    input: &AgentInput,
) -> Result<(Diagnosis, trace::StageTrace), String> {
    let (tx, _rx) = mpsc::unbounded_channel();
    let sink = Sink {
        tx,
        cancel: CancellationToken::new(),
    };
    localize(cfg, input, &sink).map_err(|e| match e {
        Stop::Cancelled => "cancelled".to_string(),
        Stop::Failed(e) => e,
    })
}

fn localize(
    cfg: &BaselineConfig,
    input: &AgentInput,
    sink: &Sink,
) -> Result<(Diagnosis, trace::StageTrace), Stop> {
    sink.check()?;
    let started = Instant::now();

    // 1. The repository.
    sink.step(action("index", json!({"root": "."})));
    let index = RepoIndex::build(&input.workspace, &cfg.index).map_err(Stop::Failed)?;
    let literals: usize = index.files.iter().map(|f| f.literals.len()).sum();
    sink.step(timed(&started, format!(
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

    // 2. The evidence as templates.
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
        &started,
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
    sink.check()?;

    // 3. Log lines -> logging and error statements.
    sink.step(action(
        "match_log_statements",
        json!({"templates": templates.templates.len()}),
    ));
    let logs = logmatch::search(&index, &templates);
    let mut obs = timed(&started, format!(
        "{} of {} string literals share words with the evidence, in {} files; parsed them: {} call sites with a message, {} match evidence lines",
        logs.candidate_literals,
        logs.literals,
        logs.files_parsed.len(),
        logs.sites_tried,
        logs.hits.len()
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
    sink.check()?;

    // 4. Stack frames and file:line mentions.
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
    let resolved: Vec<(frames::Frame, usize, f64)> = all_frames
        .iter()
        .flat_map(|f| {
            frames::resolve(&index, f)
                .into_iter()
                .map(move |(file, sure)| (f.clone(), file, sure))
        })
        .collect();
    let n_stack = all_frames
        .iter()
        .filter(|f| f.kind == FrameKind::Stack)
        .count();
    let in_repo_stack = resolved
        .iter()
        .filter(|r| r.0.kind == FrameKind::Stack)
        .count();
    let mut obs = timed(&started, format!(
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
    sink.check()?;

    // 5. BM25 from the report.
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
        bm25::score_files(&index, &query)
    };
    sink.step(timed(
        &started,
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
    sink.check()?;

    // 6. Candidates from each kind of evidence.
    let scorer = BlockScorer::new(&index, &query, &corpus);
    let mut cands: Vec<Candidate> = Vec::new();
    let max = cfg.max_block_lines;

    let top_log = logs.hits.first().map(|h| h.score).unwrap_or(0.0);
    for h in logs.hits.iter().take(MAX_LOG_CANDIDATES) {
        let m = index.model(h.file);
        let (s, e, what) = related::widen_log(&m, h.line, max);
        // Most catastrophic failures come from the handling of a non-fatal error (Yuan et
        // al., OSDI'14): a log on an error path weighs more.
        let error_path = related::in_error_path(&m, &index.files[h.file].text, h.line);
        let t = &templates.templates[h.template];
        let more = if h.lines > 1 {
            format!(", {} lines like it", h.lines)
        } else {
            String::new()
        };
        let kind = match h.kind {
            crate::code::SiteKind::Log => "logging call",
            crate::code::SiteKind::Error => "error raised",
            crate::code::SiteKind::Other => "message",
        };
        cands.push(Candidate {
            file: h.file,
            start: s,
            end: e,
            score: h.score / top_log.max(f64::MIN_POSITIVE)
                * if error_path { ERROR_PATH_BOOST } else { 1.0 },
            source: Source::Log,
            reason: format!(
                "the line \"{}\" ({}:{}{}) matches the {} `{}` at line {} ({}/{} constant words{}); named with {}",
                quote(&t.example, 90),
                templates.sources[t.source],
                t.line,
                more,
                kind,
                quote(&h.callee, 40),
                h.line,
                h.matched,
                h.total,
                if error_path { ", on an error path" } else { "" },
                what
            ),
        });
    }

    // Stack frames: the innermost frames inside the repository count most.
    let mut rank_in_trace: HashMap<usize, usize> = HashMap::new();
    // Traces in the order they appear: the first failure is the one to explain, later ones
    // are often its consequences (poisoned locks, cascading timeouts).
    let mut trace_order: Vec<usize> = Vec::new();
    for (f, _, _) in &resolved {
        if f.kind == FrameKind::Stack && !trace_order.contains(&f.trace) {
            trace_order.push(f.trace);
        }
    }
    let mut mention_counts: HashMap<(usize, u32), (usize, f64, frames::Frame)> = HashMap::new();
    let mut frame_seeds: Vec<(usize, u32, u32, f64, bool)> = Vec::new();
    for (f, file, sure) in &resolved {
        match f.kind {
            FrameKind::Stack => {
                let r = rank_in_trace.entry(f.trace).or_insert(0);
                if *r >= 4 {
                    continue;
                }
                let order = trace_order.iter().position(|&t| t == f.trace).unwrap_or(0);
                let weight =
                    FRAME_WEIGHT * sure / (1.0 + *r as f64) / (1.0 + TRACE_DECAY * order as f64)
                        * if logmatch::is_test_path(&index.files[*file].path) {
                            0.3
                        } else {
                            1.0
                        };
                let m = index.model(*file);
                let (s, e, what) = related::widen(&m, f.line, max);
                frame_seeds.push((
                    *file,
                    s,
                    e,
                    weight,
                    dataflow::speaks_of_absence(f.header.as_deref().unwrap_or("")),
                ));
                cands.push(Candidate {
                    file: *file,
                    start: s,
                    end: e,
                    score: weight,
                    source: Source::Frame,
                    reason: format!(
                        "frame {} inside the repository of the trace{} ({}:{}) is at line {}; named with {}",
                        *r + 1,
                        f.header
                            .as_ref()
                            .map(|h| format!(" \"{}\"", quote(h, 80)))
                            .unwrap_or_default(),
                        sources[f.source].0,
                        f.source_line,
                        f.line,
                        what
                    ),
                });
                *r += 1;
            }
            FrameKind::Mention => {
                let e = mention_counts
                    .entry((*file, f.line))
                    .or_insert((0, *sure, f.clone()));
                e.0 += 1;
            }
        }
    }
    let total_mentions: usize = mention_counts.values().map(|v| v.0).sum();
    let mut mentions: Vec<_> = mention_counts.into_iter().collect();
    mentions.sort_by(|a, b| a.1 .0.cmp(&b.1 .0).then(a.0.cmp(&b.0)));
    for ((file, line), (count, sure, f)) in mentions.into_iter().take(8) {
        let n = total_mentions.max(2) as f64;
        let rarity = (1.0 + n / count as f64).ln() / (1.0 + n).ln();
        let m = index.model(file);
        let (s, e, what) = related::widen(&m, line, max);
        cands.push(Candidate {
            file,
            start: s,
            end: e,
            score: 0.5 * sure * rarity,
            source: Source::Mention,
            reason: format!(
                "{}:{} points at {}:{} ({} mention{}); named with {}",
                sources[f.source].0,
                f.source_line,
                f.file,
                line,
                count,
                if count == 1 { "" } else { "s" },
                what
            ),
        });
    }

    // 7. Data flow: from what the failure reads or prints back to the code that wrote it.
    let mut seeds: Vec<dataflow::Seed> = Vec::new();
    for h in logs
        .hits
        .iter()
        .take(MAX_FLOW_SEEDS)
        // Only statements surely behind their line: data flow multiplies a wrong guess.
        .filter(|h| h.matched >= 3 || h.matched == h.total)
    {
        seeds.push(dataflow::Seed {
            file: h.file,
            start: h.line,
            end: h.end_line,
            score: h.score / top_log.max(f64::MIN_POSITIVE),
            what: format!("the log at {}:{} prints", index.files[h.file].path, h.line),
            skip_call: Some(crate::code::sites::last_segment(&h.callee).to_string()),
            absence: dataflow::speaks_of_absence(&templates.templates[h.template].example),
        });
    }
    for &(file, start, end, score, absence) in frame_seeds.iter().take(MAX_FLOW_FRAMES) {
        seeds.push(dataflow::Seed {
            file,
            start,
            end,
            score,
            what: format!("the crash at {}:{} reads", index.files[file].path, start),
            skip_call: None,
            absence,
        });
    }
    sink.check()?;
    let flow = dataflow::Tracer::new(&index, max).trace(&seeds);
    let mut flow_step = action("follow_data_flow", json!({"seeds": seeds.len()}));
    for f in flow.iter().take(16) {
        flow_step
            .paths_read
            .push(read(&index.files[f.file].path, f.start, f.end));
    }
    sink.step(flow_step);
    sink.step(timed(
        &started,
        format!(
            "data flow from {} seeds reached {} blocks{}",
            seeds.len(),
            flow.len(),
            flow.first()
                .map(|f| format!(
                    "; the strongest: {}:{}-{} ({})",
                    index.files[f.file].path,
                    f.start,
                    f.end,
                    quote(&f.reason, 120)
                ))
                .unwrap_or_default()
        ),
    ));
    for f in flow.into_iter().take(MAX_FLOW_CANDIDATES) {
        cands.push(Candidate {
            file: f.file,
            start: f.start,
            end: f.end,
            score: f.score * FLOW_WEIGHT,
            source: Source::Flow,
            reason: f.reason,
        });
    }

    // Definitions the report names; names that are no function may be state.
    let mut named_regions: Vec<(usize, u32, u32, String, f64)> = Vec::new();
    let mut named_state: Vec<(String, f64)> = Vec::new();
    for (id, strength) in query.identifiers.iter().take(16) {
        let name = id.rsplit(['.', ':']).next().unwrap_or(id);
        let defs = related::definitions_named(&index, name, 48);
        if defs.is_empty() {
            // Not a function: perhaps state (`next_idx`, `pendingQueue`); its writers below.
            named_state.push((name.to_string(), *strength));
            continue;
        }
        if defs.len() > 3 {
            continue;
        }
        for (file, def) in &defs {
            let d = &index.model(*file).blocks[*def];
            named_regions.push((*file, d.start_line, d.end_line, id.clone(), *strength));
            if let Some((s, e)) = scorer.best_inside(*file, *def, max) {
                cands.push(Candidate {
                    file: *file,
                    start: s,
                    end: e,
                    score: NAMED_SCORE * strength / defs.len() as f64,
                    source: Source::Named,
                    reason: format!(
                        "the report names `{}`; this is the part of it closest to the report's words",
                        quote(id, 60)
                    ),
                });
            }
        }
    }

    // State the report names: the statements that write it.
    if !named_state.is_empty() {
        let found = dataflow::Tracer::new(&index, max).writers_of_named(&named_state);
        for f in found {
            cands.push(Candidate {
                file: f.file,
                start: f.start,
                end: f.end,
                score: f.score * NAMED_STATE_WEIGHT,
                source: Source::Flow,
                reason: f.reason,
            });
        }
    }

    // One level of callers and callees around the strongest evidence.
    let mut strongest: Vec<Candidate> = cands
        .iter()
        .filter(|c| matches!(c.source, Source::Log | Source::Frame))
        .cloned()
        .collect();
    strongest.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut related_paths = Vec::new();
    for c in strongest.iter().take(3) {
        sink.check()?;
        for (name, file, def) in related::callees(&index, c.file, c.start, c.end, 3) {
            if let Some((s, e)) = scorer.best_inside(file, def, max) {
                related_paths.push(read(&index.files[file].path, s, e));
                cands.push(Candidate {
                    file,
                    start: s,
                    end: e,
                    score: 0.3 * c.score,
                    source: Source::Related,
                    reason: format!(
                        "`{}` is called from {}:{}, where {}",
                        name,
                        index.files[c.file].path,
                        c.start,
                        first_clause(&c.reason)
                    ),
                });
            }
        }
        for (name, file, line) in related::callers(&index, c.file, c.start, c.end) {
            let m = index.model(file);
            let (s, e, _) = related::widen(&m, line, max);
            related_paths.push(read(&index.files[file].path, s, e));
            cands.push(Candidate {
                file,
                start: s,
                end: e,
                score: 0.3 * c.score,
                source: Source::Related,
                reason: format!(
                    "calls `{}` ({}:{}), where {}",
                    name,
                    index.files[c.file].path,
                    c.start,
                    first_clause(&c.reason)
                ),
            });
        }
    }
    if !related_paths.is_empty() {
        let mut s = action("follow_calls", json!({"from": strongest.len().min(3)}));
        related_paths.truncate(16);
        s.paths_read = related_paths;
        sink.step(s);
    }

    // BM25 blocks: the fallback when nothing else points anywhere, a weak vote otherwise.
    for (file, s, e, score, words) in scorer.best_blocks(12, 10, max) {
        cands.push(Candidate {
            file,
            start: s,
            end: e,
            score: 0.3 * score,
            source: Source::Bm25,
            reason: format!("shares the report's words: {}", words.join(", ")),
        });
    }
    sink.check()?;

    // Evidence inside a definition the report names is worth more.
    for c in cands.iter_mut() {
        if c.source == Source::Named {
            continue;
        }
        if let Some((_, _, _, id, strength)) = named_regions
            .iter()
            .find(|(f, s, e, _, _)| *f == c.file && *s <= c.start && c.end <= *e)
        {
            c.score *= 1.0 + (NAMED_BOOST - 1.0) * strength;
            c.reason = format!(
                "{} (inside `{}`, which the report names)",
                c.reason,
                quote(id, 60)
            );
        }
    }

    // 8. Rank: evidence that converges on a block adds up; BM25 breaks ties.
    let picked = select(cfg, &index, &scorer, cands);
    let ranked: Vec<String> = picked
        .ranked
        .iter()
        .map(|c| {
            format!(
                "{:.3} {}:{}-{} {:?}: {}",
                c.score,
                index.files[c.file].path,
                c.start,
                c.end,
                c.source,
                quote(&c.reason, 140)
            )
        })
        .collect();
    let mut thought = Step::new(StepKind::Thought).with_text(format!(
        "{} candidate blocks after merging; naming the best {}. Ranked:\n{}",
        picked.considered,
        picked.chosen.len(),
        ranked.join("\n")
    ));
    let blocks: Vec<DiagnosisBlock> = picked
        .chosen
        .iter()
        .map(|c| {
            let mut b = DiagnosisBlock::new(index.files[c.file].path.clone(), c.start, c.end);
            b.rationale = Some(c.reason.clone());
            b.confidence =
                Some((c.score / picked.top.max(f64::MIN_POSITIVE) * 0.7).clamp(0.05, 0.9));
            b
        })
        .collect();
    thought.blocks = Some(blocks.clone());
    sink.step(thought);
    let summary = summarize(&picked.chosen, &index);
    let mut submit = Step::new(StepKind::Submit).with_text(summary.clone());
    submit.blocks = Some(blocks.clone());
    sink.step(submit);
    let stages = stage_trace(&index, &picked.all);
    Ok((
        Diagnosis {
            incident: input.incident.clone(),
            summary,
            blocks,
            extra: Default::default(),
        },
        stages,
    ))
}

/// The files, functions and blocks of the ranked candidates, each in order of first
/// appearance.
fn stage_trace(index: &RepoIndex, ranked: &[Candidate]) -> trace::StageTrace {
    let mut t = trace::StageTrace::default();
    for c in ranked {
        let path = &index.files[c.file].path;
        if !t.files.contains(path) {
            t.files.push(path.clone());
        }
        let m = index.model(c.file);
        let f = m
            .covering(c.start, c.end)
            .and_then(|i| m.function_of(i))
            .map(|i| (m.blocks[i].start_line, m.blocks[i].end_line))
            .unwrap_or((c.start, c.end));
        let span = trace::Span::new(path.clone(), f.0, f.1);
        if !t.functions.contains(&span) {
            t.functions.push(span);
        }
        t.blocks
            .push(trace::Span::new(path.clone(), c.start, c.end));
    }
    t
}

/// The reason up to its first `;` (what the evidence was, without how the block was cut).
fn first_clause(reason: &str) -> String {
    reason.split(';').next().unwrap_or(reason).to_string()
}

fn summarize(chosen: &[Candidate], index: &RepoIndex) -> String {
    if chosen.is_empty() {
        return "Neither the logs, the stack traces nor the report's words point at any code; nothing named.".to_string();
    }
    let what = |s: Source| match s {
        Source::Log => "a matching log statement",
        Source::Frame => "a stack frame",
        Source::Mention => "a file:line mention",
        Source::Named => "a definition the report names",
        Source::Related => "a caller or callee of the evidence",
        Source::Flow => "data flow back from the evidence",
        Source::Bm25 => "the report's words",
    };
    let parts: Vec<String> = chosen
        .iter()
        .map(|c| {
            format!(
                "{}:{}-{} ({})",
                index.files[c.file].path,
                c.start,
                c.end,
                what(c.source)
            )
        })
        .collect();
    format!("Most likely cause: {}.", parts.join("; "))
}

struct Picked {
    chosen: Vec<Candidate>,
    /// The best candidates after merging, named or not (recorded in the trajectory).
    ranked: Vec<Candidate>,
    /// Every candidate after merging, best first.
    all: Vec<Candidate>,
    considered: usize,
    top: f64,
}

/// Merges candidates that overlap (their scores add up, at half weight for the weaker),
/// adds BM25 as a tie-breaker, and keeps the best few above the relative threshold.
fn select(
    cfg: &BaselineConfig,
    index: &RepoIndex,
    scorer: &BlockScorer,
    mut cands: Vec<Candidate>,
) -> Picked {
    // An evidence-backed candidate outranks pure BM25 guesses; BM25 only nudges its score.
    let bm: Vec<f64> = cands
        .iter()
        .map(|c| scorer.range_score(c.file, c.start, c.end))
        .collect();
    let max_bm = bm.iter().cloned().fold(0.0, f64::max);
    for (c, b) in cands.iter_mut().zip(bm) {
        if c.source != Source::Bm25 && max_bm > 0.0 {
            c.score *= 1.0 + BM25_TIE_BREAK * b / max_bm;
        }
    }
    cands.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.file.cmp(&b.file))
            .then(a.start.cmp(&b.start))
    });
    let mut clusters: Vec<Candidate> = Vec::new();
    for c in cands {
        match clusters.iter_mut().find(|k| same_place(k, &c)) {
            Some(k) => {
                k.score += 0.5 * c.score;
                if k.source == Source::Bm25 && c.source != Source::Bm25 {
                    k.source = c.source;
                }
                if !k.reason.contains(&c.reason) && k.reason.len() < 600 {
                    k.reason = format!("{}; also {}", k.reason, c.reason);
                }
            }
            None => clusters.push(c),
        }
    }
    // Evidence on neighbouring statements of one function points at one piece of code (a
    // log and the removal right after it): join them while the whole stays small.
    {
        let mut joined: Vec<Candidate> = Vec::new();
        for c in clusters {
            let near = joined.iter_mut().find(|k| {
                k.file == c.file
                    && k.source != Source::Bm25
                    && c.source != Source::Bm25
                    && (c.start == k.end + 1 || k.start == c.end + 1)
                    && k.end.max(c.end) - k.start.min(c.start) < related::LOG_CONTEXT_LINES
                    && function_at(index, k.file, k.start, k.end)
                        == function_at(index, c.file, c.start, c.end)
            });
            match near {
                Some(k) => {
                    k.start = k.start.min(c.start);
                    k.end = k.end.max(c.end);
                    k.score += 0.5 * c.score;
                    if !k.reason.contains(&c.reason) && k.reason.len() < 600 {
                        k.reason = format!("{}; also {}", k.reason, c.reason);
                    }
                }
                None => joined.push(c),
            }
        }
        clusters = joined;
    }
    // A block that drops an error on the floor is worth pointing out; on the corpus the smell
    // did not change which blocks rank first, so it annotates and does not score.
    for c in clusters.iter_mut() {
        let f = &index.files[c.file];
        if let Some(sm) = smells::find(&f.text, f.lang, c.start, c.end).first() {
            c.reason = format!("{}; note line {}: {}", c.reason, sm.line, sm.what);
        }
    }
    clusters.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.file.cmp(&b.file))
            .then(a.start.cmp(&b.start))
    });
    let considered = clusters.len();
    let top = clusters.first().map(|c| c.score).unwrap_or(0.0);
    let ranked: Vec<Candidate> = clusters.iter().take(RANKED_SHOWN).cloned().collect();
    let all = clusters.clone();
    // One block per function: three blocks around one symptom are one guess; a fault and
    // its symptom usually sit in different functions.
    let eligible: Vec<Candidate> = clusters
        .into_iter()
        .filter(|c| c.start >= 1 && c.end <= index.files[c.file].line_count.max(c.start))
        .collect();
    let mut chosen: Vec<Candidate> = Vec::new();
    let mut functions: Vec<(usize, Option<usize>)> = Vec::new();
    let mut used = vec![false; eligible.len()];
    for slot in 0..cfg.max_blocks {
        // The last place goes to where the data flow leads, unless a flow block already
        // made it on its own.
        let want_flow = slot >= 1
            && slot + 1 == cfg.max_blocks
            && !chosen.iter().any(|c| c.source == Source::Flow);
        let mut pick = None;
        for pass in 0..2 {
            for (k, c) in eligible.iter().enumerate() {
                if used[k] {
                    continue;
                }
                let flow_pass = want_flow && pass == 0;
                if flow_pass && c.source != Source::Flow || c.score < cfg.min_relative_score * top {
                    continue;
                }
                let function = function_at(index, c.file, c.start, c.end);
                if functions.contains(&function) {
                    continue;
                }
                pick = Some((k, function));
                break;
            }
            if pick.is_some() || !want_flow {
                break;
            }
        }
        let Some((k, function)) = pick else { break };
        used[k] = true;
        functions.push(function);
        let mut c = eligible[k].clone();
        // Inside a function picked for its words or its name, a statement that writes the
        // state the evidence reads says more than the words do.
        if function.1.is_some() && !matches!(c.source, Source::Flow | Source::Log | Source::Frame) {
            let writer = eligible.iter().find(|w| {
                w.source == Source::Flow
                    && w.score >= cfg.min_relative_score * c.score
                    && function_at(index, w.file, w.start, w.end) == function
            });
            if let Some(w) = writer {
                c = Candidate {
                    reason: format!("{}; also {}", w.reason, c.reason),
                    ..w.clone()
                };
                c.score = eligible[k].score;
            }
        }
        chosen.push(c);
    }
    Picked {
        chosen,
        ranked,
        all,
        considered,
        top,
    }
}

/// The function (definition) that holds lines `start..=end` of `file`, if any.
fn function_at(index: &RepoIndex, file: usize, start: u32, end: u32) -> (usize, Option<usize>) {
    let m = index.model(file);
    let f = m.covering(start, end).and_then(|i| m.function_of(i));
    (file, f)
}

/// Whether two candidates name mostly the same lines: they overlap by at least half of the
/// smaller one (a block that only touches another names different code).
fn same_place(a: &Candidate, b: &Candidate) -> bool {
    if a.file != b.file || a.start > b.end || b.start > a.end {
        return false;
    }
    let overlap = a.end.min(b.end) - a.start.max(b.start) + 1;
    let smaller = (a.end - a.start + 1).min(b.end - b.start + 1);
    2 * overlap >= smaller
}

/// BM25 of blocks of the repository against the report.
struct BlockScorer<'a> {
    index: &'a RepoIndex,
    query: &'a Query,
    corpus: &'a Corpus,
    /// The best file's score, for normalising.
    top_file: f64,
}

/// Assumed average length of a block in terms, for BM25's length normalisation.
const AVG_BLOCK_TERMS: f64 = 40.0;

impl<'a> BlockScorer<'a> {
    fn new(index: &'a RepoIndex, query: &'a Query, corpus: &'a Corpus) -> BlockScorer<'a> {
        BlockScorer {
            index,
            query,
            corpus,
            top_file: corpus.files.first().map(|f| f.1).unwrap_or(0.0),
        }
    }

    fn text_score(&self, text: &str) -> (f64, Vec<String>) {
        if self.query.is_empty() {
            return (0.0, Vec::new());
        }
        let (tf, len) = bm25::count_terms(text, self.query, &mut String::new());
        let s = bm25::bm25(&tf, len, AVG_BLOCK_TERMS, self.query, self.corpus);
        let mut words: Vec<(String, f64)> = tf
            .keys()
            .map(|t| (t.clone(), self.corpus.idf(t) * self.query.terms[t]))
            .collect();
        words.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        (s, words.into_iter().take(5).map(|w| w.0).collect())
    }

    /// BM25 of lines `start..=end` of a file.
    fn range_score(&self, file: usize, start: u32, end: u32) -> f64 {
        let f = &self.index.files[file];
        let text = lines_text(&f.text, start, end);
        self.text_score(text).0
    }

    /// Inside definition `def` of `file`: the block (at most `max` lines) that best matches
    /// the report; the definition itself when it is short and nothing inside matches better.
    fn best_inside(&self, file: usize, def: usize, max: u32) -> Option<(u32, u32)> {
        let m = self.index.model(file);
        let f = &self.index.files[file];
        let d = &m.blocks[def];
        let mut best: Option<(f64, u32, u32)> = None;
        for b in m.blocks.iter().skip(def + 1) {
            if b.start_byte >= d.end_byte {
                break;
            }
            if b.lines() > max {
                continue;
            }
            let (s, _) = self.text_score(f.text.get(b.start_byte..b.end_byte).unwrap_or(""));
            if s > 0.0 && best.is_none_or(|x| s > x.0) {
                best = Some((s, b.start_line, b.end_line));
            }
        }
        match best {
            Some((_, s, e)) => Some((s, e)),
            None if d.lines() <= 2 * max => Some((d.start_line, d.end_line)),
            None => None,
        }
    }

    /// The best small blocks of the best `files` files: (file, start, end, score 0..1, words).
    fn best_blocks(
        &self,
        files: usize,
        keep: usize,
        max: u32,
    ) -> Vec<(usize, u32, u32, f64, Vec<String>)> {
        if self.query.is_empty() || self.top_file <= 0.0 {
            return Vec::new();
        }
        let top: Vec<(usize, f64)> = self
            .corpus
            .files
            .iter()
            .filter(|(f, _)| self.index.files[*f].lang.grammar().is_some())
            .take(files)
            .cloned()
            .collect();
        let ids: Vec<usize> = top.iter().map(|t| t.0).collect();
        self.index.parse_many(&ids);
        let mut out: Vec<(usize, u32, u32, f64, Vec<String>)> = Vec::new();
        for (file, fscore) in top {
            let m = self.index.model(file);
            let f = &self.index.files[file];
            let test = if logmatch::is_test_path(&f.path) {
                0.3
            } else {
                1.0
            };
            // The enclosing function's own score gives context to its statements.
            let mut fn_scores: HashMap<usize, f64> = HashMap::new();
            for (i, b) in m.blocks.iter().enumerate() {
                if b.lines() > max
                    || b.kind == BlockKind::Definition
                        && b.def_kind
                            .is_some_and(|k| !matches!(k, "function" | "method" | "constructor"))
                {
                    continue;
                }
                let (s, words) =
                    self.text_score(f.text.get(b.start_byte..b.end_byte).unwrap_or(""));
                if s <= 0.0 {
                    continue;
                }
                let fn_score = match m.function_of(i) {
                    Some(fi) => *fn_scores.entry(fi).or_insert_with(|| {
                        let fb = &m.blocks[fi];
                        self.text_score(f.text.get(fb.start_byte..fb.end_byte).unwrap_or(""))
                            .0
                    }),
                    None => s,
                };
                let score = s
                    * (1.0 + fn_score / (fn_score + 10.0))
                    * (0.5 + 0.5 * fscore / self.top_file)
                    * test;
                out.push((file, b.start_line, b.end_line, score, words));
            }
        }
        out.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        // Nested blocks score alike; keep the best of each overlapping group.
        let mut kept: Vec<(usize, u32, u32, f64, Vec<String>)> = Vec::new();
        for c in out {
            if kept.iter().any(|k| k.0 == c.0 && k.1 <= c.2 && c.1 <= k.2) {
                continue;
            }
            kept.push(c);
            if kept.len() >= keep {
                break;
            }
        }
        let top = kept.first().map(|k| k.3).unwrap_or(1.0);
        for k in &mut kept {
            k.3 /= top;
        }
        kept
    }
}

/// Lines `start..=end` (1-based) of `text`.
fn lines_text(text: &str, start: u32, end: u32) -> &str {
    let mut line = 1u32;
    let mut from = if start <= 1 { Some(0) } else { None };
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            line += 1;
            if line == start {
                from = Some(i + 1);
            }
            if line == end + 1 {
                return from.and_then(|f| text.get(f..i)).unwrap_or("");
            }
        }
    }
    from.and_then(|f| text.get(f..)).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_text_cuts_exact_lines() {
        let t = "a\nb\nc\nd";
        assert_eq!(lines_text(t, 2, 3), "b\nc");
        assert_eq!(lines_text(t, 1, 1), "a");
        assert_eq!(lines_text(t, 4, 9), "d");
        assert_eq!(lines_text(t, 7, 9), "");
    }

    fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, t) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        }
        dir
    }

    fn input(dir: &std::path::Path, report: &str, evidence: &[(&str, String)]) -> AgentInput {
        AgentInput {
            incident: "t".into(),
            attempt: 1,
            workspace: dir.to_path_buf(),
            report: report.into(),
            evidence: evidence
                .iter()
                .map(|(n, t)| crate::incident::EvidenceFile {
                    name: n.to_string(),
                    text: t.clone(),
                })
                .collect(),
            output_dir: dir.to_path_buf(),
        }
    }

    const LEASE: &str = "import logging\nlog = logging.getLogger('lease')\n\nclass LeaseTable:\n    def grant(self, client, now):\n        expiry = now + self.ttl * 1000\n        self.leases[client] = expiry\n        log.info(\"granted lease to %s until %s\", client, expiry)\n        return expiry\n";

    fn run_blocking(i: &AgentInput) -> (AgentOutput, Vec<Step>) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut rec = TrajectoryRecorder::in_memory();
        let out = rt.block_on(run(
            &BaselineConfig::default(),
            i,
            &mut rec,
            &CancellationToken::new(),
        ));
        (out, rec.into_steps())
    }

    #[test]
    fn names_the_statement_behind_a_log_line_with_a_rationale() {
        let dir = workspace(&[
            ("src/lease.py", LEASE),
            ("src/other.py", "def f():\n    return 1\n"),
        ]);
        let i = input(
            dir.path(),
            "The lock is never released.",
            &[(
                "ev/server.log",
                "10:00 INFO lease granted lease to client-a until 1762077600001.0\n".into(),
            )],
        );
        let (out, steps) = run_blocking(&i);
        assert_eq!(out.exit, Exit::Submitted);
        let d = out.diagnosis.unwrap();
        assert!(!d.blocks.is_empty() && d.blocks.len() <= 3);
        let b = &d.blocks[0];
        // The log statement and the two statements before it (what it reports on).
        assert_eq!(
            (b.path.as_str(), b.start_line, b.end_line),
            ("src/lease.py", 6, 8)
        );
        let why = b.rationale.as_deref().unwrap();
        assert!(
            why.contains("granted lease") && why.contains("just before"),
            "{why}"
        );
        assert!(steps
            .iter()
            .any(|s| s.tool.as_deref() == Some("match_log_statements")));
        assert!(steps
            .iter()
            .any(|s| s.paths_read.iter().any(|p| p.path == "src/lease.py")));
        assert_eq!(steps.last().unwrap().kind, StepKind::Submit);
    }

    /// Four functions of ten lines each, lines 1-10, 11-20, 21-30, 31-40.
    fn four_functions() -> RepoIndex {
        let mut src = String::new();
        for f in 0..4 {
            src.push_str(&format!("def f{f}(x):\n"));
            for k in 0..9 {
                src.push_str(&format!("    v{k} = x + {k}\n"));
            }
        }
        RepoIndex::from_texts(std::path::Path::new("/ws"), vec![("a.py".into(), src)])
    }

    fn cand(start: u32, end: u32, score: f64, source: Source) -> Candidate {
        Candidate {
            file: 0,
            start,
            end,
            score,
            source,
            reason: format!("{source:?} {start}"),
        }
    }

    fn picked(cands: Vec<Candidate>) -> Vec<(u32, u32, Source)> {
        let index = four_functions();
        let query = Query::from_report("");
        let corpus = Corpus::default();
        let scorer = BlockScorer::new(&index, &query, &corpus);
        select(&BaselineConfig::default(), &index, &scorer, cands)
            .chosen
            .iter()
            .map(|c| (c.start, c.end, c.source))
            .collect()
    }

    #[test]
    fn one_block_per_function_and_one_place_for_data_flow() {
        let got = picked(vec![
            cand(2, 2, 1.0, Source::Log),
            cand(8, 8, 0.95, Source::Log),
            cand(12, 12, 0.9, Source::Log),
            cand(22, 22, 0.8, Source::Log),
            cand(32, 32, 0.5, Source::Flow),
        ]);
        // 8 shares its function with 2; the last place goes to where data flow leads.
        assert_eq!(
            got,
            [
                (2, 2, Source::Log),
                (12, 12, Source::Log),
                (32, 32, Source::Flow)
            ]
        );
        // A flow block too weak to be named on its own is not forced in.
        let got = picked(vec![
            cand(2, 2, 1.0, Source::Log),
            cand(12, 12, 0.9, Source::Log),
            cand(22, 22, 0.8, Source::Log),
            cand(32, 32, 0.1, Source::Flow),
        ]);
        assert_eq!(got.last(), Some(&(22, 22, Source::Log)));
    }

    #[test]
    fn neighbouring_evidence_joins_and_a_writer_speaks_for_a_named_function() {
        let got = picked(vec![
            cand(3, 4, 1.0, Source::Log),
            cand(5, 5, 0.6, Source::Flow),
            cand(13, 15, 0.9, Source::Named),
            cand(18, 18, 0.5, Source::Flow),
        ]);
        // The log and the write right after it are one block; inside the function the
        // report names, the statement that writes state is named rather than the words.
        assert_eq!(got[0], (3, 5, Source::Log));
        assert_eq!(got[1], (18, 18, Source::Flow));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn empty_report_and_no_evidence_submit_an_empty_diagnosis() {
        let dir = workspace(&[("src/lease.py", LEASE)]);
        let (out, _) = run_blocking(&input(dir.path(), "", &[]));
        assert_eq!(out.exit, Exit::Submitted);
        assert!(out.diagnosis.unwrap().blocks.is_empty());
    }

    #[test]
    fn a_stack_frame_names_its_innermost_block() {
        let dir = workspace(&[("src/lease.py", LEASE)]);
        let tb = "Traceback (most recent call last):\n  File \"/srv/app/src/lease.py\", line 7, in grant\nKeyError: 'x'\n";
        let (out, _) = run_blocking(&input(dir.path(), "crash", &[("ev/tb.txt", tb.into())]));
        let d = out.diagnosis.unwrap();
        // The crashing statement, joined with the statement that computed what it stores.
        assert_eq!((d.blocks[0].start_line, d.blocks[0].end_line), (6, 7));
        let why = d.blocks[0].rationale.as_deref().unwrap();
        assert!(why.contains("frame 1"), "{why}");
        assert!(why.contains("assigns `expiry`"), "{why}");
    }

    #[test]
    fn bm25_is_the_fallback_without_logs_or_frames() {
        let dir = workspace(&[
            ("src/lease.py", LEASE),
            (
                "src/net.py",
                "def connect(host):\n    return socket(host)\n",
            ),
        ]);
        let (out, _) = run_blocking(&input(
            dir.path(),
            "The lease expiry is computed wrong for the ttl.",
            &[],
        ));
        let d = out.diagnosis.unwrap();
        assert!(!d.blocks.is_empty());
        assert_eq!(d.blocks[0].path, "src/lease.py");
        assert!(d.blocks.iter().all(|b| b.end_line - b.start_line < 12));
    }

    #[test]
    fn huge_and_binary_evidence_is_handled() {
        let dir = workspace(&[("src/lease.py", LEASE)]);
        std::fs::write(dir.path().join("src/blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
        let chunk: String = (0..20)
            .map(|k| {
                format!(
                    "2024-01-01 00:00:{k:02} INFO heartbeat from node-{} seq {k}\n",
                    k % 7
                )
            })
            .collect();
        let mut big = chunk.repeat(50 * 1024 * 1024 / chunk.len() + 1);
        big.push_str("10:00 INFO lease granted lease to client-a until 17.0\n");
        let garbage = String::from_utf8_lossy(&[0xff, 0xfe, b'a', 0, b'\n', 0xc3]).into_owned();
        let i = input(dir.path(), "x", &[("big.log", big), ("bad.log", garbage)]);
        let (out, _) = run_blocking(&i);
        assert_eq!(out.exit, Exit::Submitted);
        let d = out.diagnosis.unwrap();
        assert_eq!(d.blocks[0].path, "src/lease.py");
    }

    #[test]
    fn cancelling_ends_the_attempt() {
        let dir = workspace(&[("src/lease.py", LEASE)]);
        let i = input(dir.path(), "x", &[]);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut rec = TrajectoryRecorder::in_memory();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let out = rt.block_on(run(&BaselineConfig::default(), &i, &mut rec, &cancel));
        assert_eq!(out.exit, Exit::Cancelled);
        assert!(out.diagnosis.is_none());
    }

    #[test]
    fn a_missing_workspace_is_an_error_exit() {
        let i = input(std::path::Path::new("/no/such/workspace"), "x", &[]);
        let (out, _) = run_blocking(&i);
        assert_eq!(out.exit, Exit::Error);
        assert!(out.error.unwrap().contains("/no/such/workspace"));
    }
}

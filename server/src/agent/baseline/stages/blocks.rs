//! Stage 1, candidate blocks: every kind of evidence proposes blocks (log statements with
//! what they report on, stack frames, file:line mentions, data flow back to the writers,
//! definitions and state the report names, callers and callees, BM25 blocks), each with its
//! raw strength and a rationale. How much each kind counts is the ranking's business.

use super::super::context::{
    action, first_clause, quote, read, timed, Candidate, Sink, Source, Stop,
};
use super::super::frames::{self, FrameKind};
use super::super::scorer::BlockScorer;
use super::super::{dataflow, logmatch, named, related, together, BaselineConfig};
use super::signals::Signals;
use serde_json::json;
use std::collections::HashMap;
use std::time::Instant;

/// The best log matches that become candidates (the others add nothing but noise).
const MAX_LOG_CANDIDATES: usize = 40;
/// Extra weight of a log statement on an error path.
const ERROR_PATH_BOOST: f64 = 1.25;
/// Each later stack trace counts this much less than the one before.
const TRACE_DECAY: f64 = 0.5;
/// Log matches and stack frames whose data flow is followed back.
const MAX_FLOW_SEEDS: usize = 12;
const MAX_FLOW_FRAMES: usize = 3;
/// Blocks reached by data flow that become candidates.
const MAX_FLOW_CANDIDATES: usize = 40;
/// Blocks proposed inside each definition the report names.
const NAMED_PARTS: usize = 3;
/// At most this many runs of lines that use report-named names together.
const MAX_TOGETHER: usize = 16;
/// Files and blocks BM25 proposes.
const BM25_FILES: usize = 16;
const BM25_BLOCKS: usize = 16;
/// Functions BM25 proposes, each as its best block.
const BM25_FUNCTIONS: usize = 16;
/// Files the evidence points at (log statements, frames, mentions) whose best-matching
/// functions BM25 also proposes, and how many functions of each.
const EVIDENCE_FILES: usize = 6;
const EVIDENCE_FILE_FUNCTIONS: usize = 2;

/// A crashing frame's block, kept as a seed of the data flow: (file, start, end, strength,
/// whether the failure speaks of something missing).
type FrameSeed = (usize, u32, u32, f64, bool);

/// A definition the report names: (file, start, end, the name, how surely it is code).
pub type NamedRegion = (usize, u32, u32, String, f64);

/// All raw candidates, and the definitions the report names.
pub fn propose(
    cfg: &BaselineConfig,
    sig: &Signals,
    scorer: &BlockScorer,
    sink: &Sink,
    started: &Instant,
) -> Result<(Vec<Candidate>, Vec<NamedRegion>), Stop> {
    let max = cfg.max_block_lines;
    let mut cands = log_candidates(sig, max);
    let (frame_cands, frame_seeds) = frame_candidates(sig, max);
    cands.extend(frame_cands);
    sink.check()?;
    cands.extend(flow_candidates(sig, &frame_seeds, max, sink, started));
    sink.check()?;
    let (named, regions) = named_candidates(sig, scorer, max);
    cands.extend(named);
    cands.extend(together_candidates(sig));
    let related = related_candidates(sig, scorer, &cands, max, sink)?;
    cands.extend(related);
    let blocks = scorer.best_blocks(BM25_FILES, BM25_BLOCKS, max);
    let functions = scorer.best_functions(BM25_FILES, BM25_FUNCTIONS, max);
    let bm25 = (blocks.into_iter().map(|b| (b, "shares"))).chain(
        functions
            .into_iter()
            .map(|b| (b, "lies in a function that shares")),
    );
    let in_evidence_files = evidence_file_functions(scorer, &cands, max);
    let bm25 = bm25.chain(in_evidence_files.into_iter().map(|b| {
        (
            b,
            "lies in a file the evidence points at, in a function that shares",
        )
    }));
    for ((file, s, e, score, words), what) in bm25 {
        cands.push(Candidate {
            file,
            start: s,
            end: e,
            score,
            source: Source::Bm25,
            reason: format!("{what} the report's words: {}", words.join(", ")),
        });
    }
    sink.check()?;
    Ok((cands, regions))
}

/// The best-matching functions of the files the evidence points at: a log line or a frame
/// often lands in the right file but in the function that reports the failure, not in the
/// one that causes it. Functions that already hold a candidate are left out.
fn evidence_file_functions(
    scorer: &BlockScorer,
    cands: &[Candidate],
    max: u32,
) -> Vec<super::super::scorer::ScoredBlock> {
    let mut strongest: Vec<&Candidate> = cands
        .iter()
        .filter(|c| matches!(c.source, Source::Log | Source::Frame | Source::Mention))
        .collect();
    strongest.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.file.cmp(&b.file)));
    let mut files: Vec<usize> = Vec::new();
    for c in strongest {
        if !files.contains(&c.file) {
            files.push(c.file);
        }
        if files.len() >= EVIDENCE_FILES {
            break;
        }
    }
    let taken = |file: usize, start: u32, end: u32| {
        cands
            .iter()
            .any(|c| c.file == file && c.start <= end && start <= c.end)
    };
    scorer.best_functions_in(&files, EVIDENCE_FILE_FUNCTIONS, max, taken)
}

/// Log statements the evidence's lines match, widened to what they report on.
fn log_candidates(sig: &Signals, max: u32) -> Vec<Candidate> {
    let mut cands = Vec::new();
    let prose = |h: &logmatch::SiteHit| sig.templates.templates[h.template].prose;
    // Output the evidence shows and sentences of the report are measured each against the
    // best of its own kind: a paraphrase is no log line.
    let top = |want: bool| {
        sig.logs
            .hits
            .iter()
            .filter(|h| prose(h) == want)
            .map(|h| h.score)
            .fold(0.0, f64::max)
    };
    let (top_log, top_prose) = (top(false), top(true));
    for h in sig.logs.hits.iter().take(MAX_LOG_CANDIDATES) {
        let is_prose = prose(h);
        let top_log = if is_prose { top_prose } else { top_log };
        let m = sig.index.model(h.file);
        let (s, e, what) = related::widen_log(&m, h.line, max);
        // Most catastrophic failures come from the handling of a non-fatal error (Yuan et
        // al., OSDI'14): a log on an error path weighs more.
        let error_path = related::in_error_path(&m, &sig.index.files[h.file].text, h.line);
        let t = &sig.templates.templates[h.template];
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
            source: if is_prose { Source::Prose } else { Source::Log },
            reason: format!(
                "the {} \"{}\" ({}:{}{}) matches the {} `{}` at line {} ({}/{} constant words{}); named with {}",
                if is_prose { "sentence" } else { "line" },
                quote(&t.example, 90),
                sig.templates.sources[t.source],
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
    cands
}

/// The innermost frames inside the repository of each trace, and the lines file:line
/// mentions point at (rare ones count more).
fn frame_candidates(sig: &Signals, max: u32) -> (Vec<Candidate>, Vec<FrameSeed>) {
    let mut cands = Vec::new();
    // Stack frames: the innermost frames inside the repository count most.
    let mut rank_in_trace: HashMap<usize, usize> = HashMap::new();
    // Traces in the order they appear: the first failure is the one to explain, later ones
    // are often its consequences (poisoned locks, cascading timeouts).
    let mut trace_order: Vec<usize> = Vec::new();
    for (f, _, _) in &sig.frames {
        if f.kind == FrameKind::Stack && !trace_order.contains(&f.trace) {
            trace_order.push(f.trace);
        }
    }
    let mut mention_counts: HashMap<(usize, u32), (usize, f64, frames::Frame)> = HashMap::new();
    let mut frame_seeds: Vec<(usize, u32, u32, f64, bool)> = Vec::new();
    for (f, file, sure) in &sig.frames {
        match f.kind {
            FrameKind::Stack => {
                let r = rank_in_trace.entry(f.trace).or_insert(0);
                if *r >= 4 {
                    continue;
                }
                let order = trace_order.iter().position(|&t| t == f.trace).unwrap_or(0);
                let weight = sure / (1.0 + *r as f64) / (1.0 + TRACE_DECAY * order as f64)
                    * if logmatch::is_test_path(&sig.index.files[*file].path) {
                        0.3
                    } else {
                        1.0
                    };
                let m = sig.index.model(*file);
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
                        "frame {} inside the repository of the trace{} ({}:{}) is at line {}{}; named with {}",
                        *r + 1,
                        f.header
                            .as_ref()
                            .map(|h| format!(" \"{}\"", quote(h, 80)))
                            .unwrap_or_default(),
                        sig.sources[f.source],
                        f.source_line,
                        f.line,
                        moved(f),
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
        let m = sig.index.model(file);
        let (s, e, what) = related::widen(&m, line, max);
        cands.push(Candidate {
            file,
            start: s,
            end: e,
            score: 0.5 * sure * rarity,
            source: Source::Mention,
            reason: format!(
                "{}:{} points at {}:{} ({} mention{}){}; named with {}",
                sig.sources[f.source],
                f.source_line,
                f.file,
                line,
                count,
                if count == 1 { "" } else { "s" },
                moved(&f),
                what
            ),
        });
    }
    (cands, frame_seeds)
}

/// What a frame or mention that `drift.rs` moved says about it (the line the evidence gave);
/// nothing for one left in place.
fn moved(f: &frames::Frame) -> String {
    match (f.moved_from, f.kind, f.function.as_deref()) {
        (None, _, _) => String::new(),
        (Some(l), FrameKind::Mention, _) => format!(
            " (it says line {l}, where no statement logs that line: printed by another version of the code)"
        ),
        (Some(l), _, Some(name)) => format!(
            " (the trace gave line {l}, which does not lie in `{name}` or call the frame inside it here: printed by another version of the code)"
        ),
        (Some(l), _, None) => format!(" (the trace gave line {l})"),
    }
}

/// Data flow: from what the failure reads or prints back to the code that wrote it.
fn flow_candidates(
    sig: &Signals,
    frame_seeds: &[FrameSeed],
    max: u32,
    sink: &Sink,
    started: &Instant,
) -> Vec<Candidate> {
    let mut cands = Vec::new();
    let top_log = sig.logs.hits.first().map(|h| h.score).unwrap_or(0.0);
    let mut seeds: Vec<dataflow::Seed> = Vec::new();
    for h in sig
        .logs
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
            what: format!(
                "the log at {}:{} prints",
                sig.index.files[h.file].path, h.line
            ),
            skip_call: Some(crate::code::sites::last_segment(&h.callee).to_string()),
            absence: dataflow::speaks_of_absence(&sig.templates.templates[h.template].example),
        });
    }
    for &(file, start, end, score, absence) in frame_seeds.iter().take(MAX_FLOW_FRAMES) {
        seeds.push(dataflow::Seed {
            file,
            start,
            end,
            score,
            what: format!(
                "the crash at {}:{} reads",
                sig.index.files[file].path, start
            ),
            skip_call: None,
            absence,
        });
    }
    let flow = dataflow::Tracer::new(&sig.index, max).trace(&seeds);
    let mut flow_step = action("follow_data_flow", json!({"seeds": seeds.len()}));
    for f in flow.iter().take(16) {
        flow_step
            .paths_read
            .push(read(&sig.index.files[f.file].path, f.start, f.end));
    }
    sink.step(flow_step);
    sink.step(timed(
        started,
        format!(
            "data flow from {} seeds reached {} blocks{}",
            seeds.len(),
            flow.len(),
            flow.first()
                .map(|f| format!(
                    "; the strongest: {}:{}-{} ({})",
                    sig.index.files[f.file].path,
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
            score: f.score,
            source: Source::Flow,
            reason: f.reason,
        });
    }
    cands
}

/// Definitions the report names (their parts closest to the report's words), and the
/// writers of names the report uses that are no function (state: `next_idx`).
fn named_candidates(
    sig: &Signals,
    scorer: &BlockScorer,
    max: u32,
) -> (Vec<Candidate>, Vec<NamedRegion>) {
    let mut cands = Vec::new();
    let mut named_regions: Vec<(usize, u32, u32, String, f64)> = Vec::new();
    let mut named_state: Vec<(String, f64)> = Vec::new();
    let evidence_files: Vec<usize> = sig.frames.iter().map(|f| f.1).collect();
    for (id, strength) in sig.query.identifiers.iter().take(16) {
        let name = id.rsplit(['.', ':']).next().unwrap_or(id);
        let mut defs = related::definitions_qualified(&sig.index, id, 48);
        if defs.is_empty() {
            defs = related::definitions_named(&sig.index, name, 48);
        }
        if defs.is_empty() {
            // Not a function: perhaps state (`next_idx`, `pendingQueue`); its writers below.
            named_state.push((name.to_string(), *strength));
            continue;
        }
        // A name defined in many places: the report's files, then the evidence's, say which.
        let (defs, spread) = named::narrow(&sig.index, defs, &sig.report_files, &evidence_files);
        if spread > 3 {
            continue;
        }
        for (file, def) in &defs {
            let d = &sig.index.model(*file).blocks[*def];
            named_regions.push((*file, d.start_line, d.end_line, id.clone(), *strength));
        }
        for (file, s, e) in best_parts(scorer, &defs, max) {
            cands.push(Candidate {
                file,
                start: s,
                end: e,
                score: strength / spread as f64,
                source: Source::Named,
                reason: format!(
                    "the report names `{}`; this is the part of it closest to the report's words",
                    quote(id, 60)
                ),
            });
        }
    }

    // State the report names: the statements that write it.
    if !named_state.is_empty() {
        let found = dataflow::Tracer::new(&sig.index, max).writers_of_named(&named_state);
        for f in found {
            cands.push(Candidate {
                file: f.file,
                start: f.start,
                end: f.end,
                score: f.score,
                source: Source::State,
                reason: f.reason,
            });
        }
    }
    (cands, named_regions)
}

/// The parts of a name's definitions closest to the report's words: `NAMED_PARTS` per file,
/// so that a method's overloads in one file share them instead of each adding its own.
fn best_parts(
    scorer: &BlockScorer,
    defs: &[named::Definition],
    max: u32,
) -> Vec<(usize, u32, u32)> {
    // Per file, the scored parts of all its definitions of the name.
    type ScoredParts = Vec<(f64, u32, u32)>;
    let mut by_file: Vec<(usize, ScoredParts)> = Vec::new();
    for &(file, def) in defs {
        let parts = scorer.best_inside_scored(file, def, max, NAMED_PARTS);
        match by_file.iter_mut().find(|(f, _)| *f == file) {
            Some((_, all)) => all.extend(parts),
            None => by_file.push((file, parts)),
        }
    }
    let mut out = Vec::new();
    for (file, mut parts) in by_file {
        parts.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        out.extend(
            parts
                .into_iter()
                .take(NAMED_PARTS)
                .map(|(_, s, e)| (file, s, e)),
        );
    }
    out
}

/// Lines that use two or more of the names the report writes as code (a call passing two
/// settings it names, a condition over two of its fields).
fn together_candidates(sig: &Signals) -> Vec<Candidate> {
    let names: Vec<(String, f64)> = sig
        .query
        .identifiers
        .iter()
        .take(16)
        .map(|(id, w)| (id.rsplit(['.', ':']).next().unwrap_or(id).to_string(), *w))
        .collect();
    together::find(&sig.index, &names)
        .into_iter()
        .take(MAX_TOGETHER)
        .map(|t| Candidate {
            file: t.file,
            start: t.start,
            end: t.end,
            score: t.score,
            source: Source::Together,
            reason: format!(
                "uses {} together, as the report names them",
                t.names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        })
        .collect()
}

/// One level of callers and callees around the strongest evidence.
fn related_candidates(
    sig: &Signals,
    scorer: &BlockScorer,
    cands: &[Candidate],
    max: u32,
    sink: &Sink,
) -> Result<Vec<Candidate>, Stop> {
    let mut out = Vec::new();
    let mut strongest: Vec<Candidate> = cands
        .iter()
        .filter(|c| matches!(c.source, Source::Log | Source::Frame))
        .cloned()
        .collect();
    strongest.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut related_paths = Vec::new();
    for c in strongest.iter().take(3) {
        sink.check()?;
        for (name, file, def) in related::callees(&sig.index, c.file, c.start, c.end, 3) {
            if let Some((s, e)) = scorer.best_inside(file, def, max, 1).first().copied() {
                related_paths.push(read(&sig.index.files[file].path, s, e));
                out.push(Candidate {
                    file,
                    start: s,
                    end: e,
                    score: c.score,
                    source: Source::Related,
                    reason: format!(
                        "`{}` is called from {}:{}, where {}",
                        name,
                        sig.index.files[c.file].path,
                        c.start,
                        first_clause(&c.reason)
                    ),
                });
            }
        }
        for (name, file, line) in related::callers(&sig.index, c.file, c.start, c.end) {
            let m = sig.index.model(file);
            let (s, e, _) = related::widen(&m, line, max);
            related_paths.push(read(&sig.index.files[file].path, s, e));
            out.push(Candidate {
                file,
                start: s,
                end: e,
                score: c.score,
                source: Source::Related,
                reason: format!(
                    "calls `{}` ({}:{}), where {}",
                    name,
                    sig.index.files[c.file].path,
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
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::super::bm25::{self, Query};
    use super::*;
    use crate::code::RepoIndex;
    use std::path::Path;

    #[test]
    fn overloads_in_one_file_share_the_named_parts() {
        // Three overloads of `register`, each with two statements that use the report's words.
        let mut src = String::from("class Registry {\n");
        for arity in 1..=3 {
            let params = (0..arity)
                .map(|i| format!("String p{i}"))
                .collect::<Vec<_>>();
            src.push_str(&format!(
                "  void register({}) {{\n    watchers.add(p0);\n    if (watchers.size() > limit) {{\n      evictWatcher(p0);\n    }}\n  }}\n",
                params.join(", ")
            ));
        }
        src.push_str("}\n");
        let index =
            RepoIndex::from_texts(Path::new("/ws"), vec![("src/Registry.java".into(), src)]);
        let query = Query::from_report(
            "`register` adds watchers beyond the limit and evictWatcher never runs",
        );
        let corpus = bm25::score_files(&index, &query);
        let scorer = BlockScorer::new(&index, &query, &corpus);
        let defs = related::definitions_named(&index, "register", 48);
        assert_eq!(defs.len(), 3, "three overloads");
        let each: usize = defs
            .iter()
            .map(|&(f, d)| scorer.best_inside(f, d, 12, NAMED_PARTS).len())
            .sum();
        assert!(
            each > NAMED_PARTS,
            "alone, the overloads would name {each} parts"
        );
        let parts = best_parts(&scorer, &defs, 12);
        assert_eq!(parts.len(), NAMED_PARTS);
        assert!(parts.iter().all(|p| p.0 == 0));
    }

    #[test]
    fn the_file_a_log_line_lands_in_proposes_its_best_other_function() {
        // The log line reports the failure in `report`; the cause, `expire`, is in the same
        // file and shares the report's words, but no evidence lands in it.
        let src = "class Sessions {\n  void report(long id) {\n    LOG.warn(\"session expired early\");\n  }\n  void expire(long id) {\n    long deadline = now + timeoutMs / ticks;\n    expiry.put(id, deadline);\n  }\n  void unrelated() {\n    counter++;\n  }\n}\n";
        let index = RepoIndex::from_texts(
            Path::new("/ws"),
            vec![("src/Sessions.java".into(), src.into())],
        );
        let query =
            Query::from_report("sessions expire early: the expiry deadline ignores timeoutMs");
        let corpus = bm25::score_files(&index, &query);
        let scorer = BlockScorer::new(&index, &query, &corpus);
        let log = Candidate {
            file: 0,
            start: 3,
            end: 3,
            score: 1.0,
            source: Source::Log,
            reason: String::new(),
        };
        let found = evidence_file_functions(&scorer, std::slice::from_ref(&log), 12);
        assert!(
            found.iter().any(|b| b.0 == 0 && b.1 >= 6 && b.2 <= 7),
            "the body of `expire` is proposed: {found:?}"
        );
        assert!(
            found.iter().all(|b| b.1 > 4),
            "`report`, where the evidence already is, is not proposed again: {found:?}"
        );
        let elsewhere = Candidate {
            start: 6,
            end: 6,
            ..log.clone()
        };
        let found = evidence_file_functions(&scorer, &[log, elsewhere], 12);
        assert!(
            found.iter().all(|b| b.1 > 7),
            "a function that already holds a candidate is not proposed: {found:?}"
        );
    }
}

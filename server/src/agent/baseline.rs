//! The offline baseline agent: localizes with no model at all. A pipeline of stages
//! (`stages/`): the signals (log lines matched to logging and error statements, stack
//! frames, BM25 from the report), candidate blocks from each kind of evidence (with data flow
//! back to the writers, report-named definitions, callers and callees), candidate files and
//! functions, a fitted ranking and a selection by expected coverage and precision. Each stage
//! is a step of the trajectory; each named block carries the evidence that led there.

pub mod bm25;
pub mod conditions;
pub mod constants;
pub mod context;
pub mod dataflow;
pub mod drift;
pub mod evidence;
pub mod frames;
pub mod logmatch;
pub mod named;
pub mod patterns;
pub mod related;
pub mod scorer;
pub mod smells;
pub mod stages;
pub mod symbols;
pub mod together;
pub mod trace;

use super::{AgentInput, AgentOutput};
use crate::attempt::{Diagnosis, DiagnosisBlock, Exit, Step, StepKind, TrajectoryRecorder, Usage};
use crate::code::IndexOptions;
use context::{quote, timed, Sink, Stop};
use scorer::BlockScorer;
use serde_json::json;
use stages::places::Place;
use stages::rank::Model;
use stages::select::{FilePointer, Selection};
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The knobs of the baseline. The ranking's weights and the labels the selection expects are
/// fitted by `distdebug eval --fit` on the corpus, never set for one incident.
#[derive(Debug, Clone)]
pub struct BaselineConfig {
    /// At most this many blocks are named.
    pub max_blocks: usize,
    /// Blocks longer than this are narrowed (to a branch, a statement, or the line itself).
    pub max_block_lines: u32,
    /// Labeled blocks expected per incident: with the places' chances, how many to name.
    /// `None` names the best `max_blocks`.
    pub expected_labels: Option<f64>,
    /// At most this many named blocks in one function.
    pub per_function: usize,
    /// At most this many named blocks in one file.
    pub per_file: usize,
    /// The ranking's weights.
    pub model: Model,
    /// When to name one line of one more file (`None`: never).
    pub pointer: Option<FilePointer>,
    pub index: IndexOptions,
}

impl Default for BaselineConfig {
    fn default() -> BaselineConfig {
        BaselineConfig {
            max_blocks: stages::rank::FITTED_MAX_BLOCKS,
            max_block_lines: 12,
            expected_labels: Some(stages::rank::FITTED_EXPECTED_LABELS),
            per_function: stages::rank::FITTED_PER_FUNCTION,
            per_file: stages::rank::FITTED_PER_FILE,
            model: stages::rank::FITTED,
            pointer: Some(stages::rank::FITTED_POINTER),
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
            "expected_labels": self.expected_labels,
            "per_function": self.per_function,
            "per_file": self.per_file,
            "max_file_bytes": self.index.max_file_bytes,
            "ranking": self.model.describe(),
            "pointer": self.pointer,
        })
    }

    pub fn selection(&self) -> Selection {
        Selection {
            max_blocks: self.max_blocks,
            per_function: self.per_function,
            per_file: self.per_file,
            expected_labels: self.expected_labels,
            pointer: self.pointer,
        }
    }
}

/// How many of the best places the trajectory lists (named or not).
const RANKED_SHOWN: usize = 60;
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
    localize(cfg, input, &sink).map_err(stop_text)
}

fn stop_text(e: Stop) -> String {
    match e {
        Stop::Cancelled => "cancelled".to_string(),
        Stop::Failed(e) => e,
    }
}

/// The stages up to the ranking: the places with their features, unranked (for
/// `distdebug eval`, which ranks and selects them with weights fitted on other incidents).
pub fn gather_places(cfg: &BaselineConfig, input: &AgentInput) -> Result<Vec<Place>, String> {
    let (tx, _rx) = mpsc::unbounded_channel();
    let sink = Sink {
        tx,
        cancel: CancellationToken::new(),
    };
    candidates(cfg, input, &sink, &Instant::now()).map_err(stop_text)
}

/// Signals, candidate blocks, places, and the file and function features.
fn candidates(
    cfg: &BaselineConfig,
    input: &AgentInput,
    sink: &Sink,
    started: &Instant,
) -> Result<Vec<Place>, Stop> {
    let sig = stages::signals::gather(cfg, input, sink, started)?;
    let scorer = BlockScorer::new(&sig.index, &sig.query, &sig.corpus);
    let (raw, named) = stages::blocks::propose(cfg, &sig, &scorer, sink, started)?;
    let n_raw = raw.len();
    let mut places = stages::places::merge(&sig.index, &scorer, raw, &named, cfg.max_block_lines);
    stages::files::annotate(&mut places, &sig.corpus);
    stages::functions::annotate(&mut places);
    sink.step(timed(
        started,
        format!(
            "{n_raw} candidate blocks from the evidence, {} places after merging",
            places.len()
        ),
    ));
    Ok(places)
}

/// Ranks and selects `places`: the indices named, and the trace of every stage.
pub fn rank_and_select(
    cfg: &BaselineConfig,
    places: &mut [Place],
) -> (Vec<usize>, trace::StageTrace) {
    stages::rank::rank(places, &cfg.model);
    let sel = cfg.selection();
    let mut chosen = stages::select::select(places, &sel);
    let trace = trace::StageTrace {
        files: stages::files::ranked(places)
            .into_iter()
            .map(|f| f.0)
            .collect(),
        functions: stages::functions::ranked(places)
            .into_iter()
            .map(|f| f.0)
            .collect(),
        blocks: places
            .iter()
            .map(|p| trace::Span::new(p.path.clone(), p.start, p.end))
            .collect(),
    };
    // After the trace, so the stages' recall sees the place whole.
    if let Some(fp) = &sel.pointer {
        if let Some(i) = stages::select::pointer(places, &chosen, fp) {
            stages::select::narrow_to_pointer(&mut places[i], fp);
            chosen.push(i);
        }
    }
    (chosen, trace)
}

/// The diagnosis blocks of the chosen places.
pub fn diagnosis_blocks(places: &[Place], chosen: &[usize]) -> Vec<DiagnosisBlock> {
    chosen
        .iter()
        .map(|&i| {
            let p = &places[i];
            let mut b = DiagnosisBlock::new(p.path.clone(), p.start, p.end);
            b.rationale = Some(p.reason.clone());
            b.confidence = Some(p.score.clamp(0.05, 0.95));
            b
        })
        .collect()
}

fn localize(
    cfg: &BaselineConfig,
    input: &AgentInput,
    sink: &Sink,
) -> Result<(Diagnosis, trace::StageTrace), Stop> {
    sink.check()?;
    let started = Instant::now();
    let mut places = candidates(cfg, input, sink, &started)?;
    sink.check()?;
    let (chosen, trace) = rank_and_select(cfg, &mut places);
    record_stages(sink, &places, &chosen, cfg);
    let blocks = diagnosis_blocks(&places, &chosen);
    let summary = summarize(&places, &chosen);
    let mut submit = Step::new(StepKind::Submit).with_text(summary.clone());
    submit.blocks = Some(blocks.clone());
    sink.step(submit);
    Ok((
        Diagnosis {
            incident: input.incident.clone(),
            summary,
            blocks,
            extra: Default::default(),
        },
        trace,
    ))
}

/// The candidate files, candidate functions, ranked places and the selection as steps.
fn record_stages(sink: &Sink, places: &[Place], chosen: &[usize], cfg: &BaselineConfig) {
    let files: Vec<String> = stages::files::ranked(places)
        .iter()
        .take(10)
        .map(|(f, s)| format!("{f} ({s:.2})"))
        .collect();
    sink.step(
        Step::new(StepKind::Thought)
            .with_text(format!("candidate files, best first: {}", files.join(", "))),
    );
    let functions: Vec<String> = stages::functions::ranked(places)
        .iter()
        .take(10)
        .map(|(f, s)| format!("{}:{}-{} ({s:.2})", f.path, f.start, f.end))
        .collect();
    sink.step(Step::new(StepKind::Thought).with_text(format!(
        "candidate functions, best first: {}",
        functions.join(", ")
    )));
    let ranked: Vec<String> = places
        .iter()
        .take(RANKED_SHOWN)
        .map(|p| {
            format!(
                "{:.3} {}:{}-{} {:?}: {}",
                p.score,
                p.path,
                p.start,
                p.end,
                p.source,
                quote(&p.reason, 140)
            )
        })
        .collect();
    sink.step(Step::new(StepKind::Thought).with_text(format!(
        "{} candidate blocks ranked ({}). Ranked:\n{}",
        places.len(),
        cfg.model.describe(),
        ranked.join("\n")
    )));
    let how = match cfg.expected_labels {
        Some(labels) => format!(
            "as many as make the expected coverage plus precision largest ({labels:.2} labeled blocks expected)"
        ),
        None => format!("the best {}", cfg.max_blocks),
    };
    let mut thought = Step::new(StepKind::Thought).with_text(format!(
        "naming {} block{}: at most {} per function and {} per file, {how}",
        chosen.len(),
        if chosen.len() == 1 { "" } else { "s" },
        cfg.per_function,
        cfg.per_file,
    ));
    thought.blocks = Some(diagnosis_blocks(places, chosen));
    sink.step(thought);
}

fn summarize(places: &[Place], chosen: &[usize]) -> String {
    if chosen.is_empty() {
        return "Neither the logs, the stack traces nor the report's words point at any code; nothing named.".to_string();
    }
    let parts: Vec<String> = chosen
        .iter()
        .map(|&i| {
            let p = &places[i];
            format!("{}:{}-{} ({})", p.path, p.start, p.end, p.source.describe())
        })
        .collect();
    format!("Most likely cause: {}.", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_report_sentence_matching_a_log_statement_is_prose_not_a_log_line() {
        let dir = workspace(&[("src/lease.py", LEASE)]);
        let report = "The server granted lease to client-a until far too late.\n";
        let i = input(dir.path(), report, &[]);
        let (out, _) = run_blocking(&i);
        let d = out.diagnosis.unwrap();
        let why = d.blocks[0].rationale.as_deref().unwrap();
        assert!(why.contains("the sentence \"The server granted"), "{why}");
        // The same words as a line of the evidence are a log line.
        let i = input(
            dir.path(),
            "x",
            &[("ev/server.log", format!("10:00 INFO {report}"))],
        );
        let (out, _) = run_blocking(&i);
        let d = out.diagnosis.unwrap();
        let why = d.blocks[0].rationale.as_deref().unwrap();
        assert!(why.contains("the line \"10:00 INFO"), "{why}");
    }

    /// Four functions of ten lines each, lines 1-10, 11-20, 21-30, 31-40.
    fn four_functions() -> crate::code::RepoIndex {
        let mut src = String::new();
        for f in 0..4 {
            src.push_str(&format!("def f{f}(x):\n"));
            for k in 0..9 {
                src.push_str(&format!("    v{k} = x + {k}\n"));
            }
        }
        crate::code::RepoIndex::from_texts(std::path::Path::new("/ws"), vec![("a.py".into(), src)])
    }

    fn cand(start: u32, end: u32, score: f64, source: context::Source) -> context::Candidate {
        context::Candidate {
            file: 0,
            start,
            end,
            score,
            source,
            reason: format!("{source:?} {start}"),
        }
    }

    fn places(cands: Vec<context::Candidate>) -> Vec<Place> {
        let index = four_functions();
        let query = bm25::Query::from_report("");
        let corpus = bm25::Corpus::default();
        let scorer = BlockScorer::new(&index, &query, &corpus);
        let mut p = stages::places::merge(&index, &scorer, cands, &[], 12);
        stages::functions::annotate(&mut p);
        p
    }

    #[test]
    fn neighbouring_evidence_joins_and_overlapping_evidence_merges_its_features() {
        use context::Source;
        let p = places(vec![
            cand(3, 4, 1.0, Source::Log),
            cand(5, 5, 0.6, Source::Flow),
            cand(13, 15, 0.9, Source::Named),
            cand(14, 15, 0.5, Source::Frame),
        ]);
        // The log and the write right after it are one place, with both kinds of evidence.
        assert_eq!((p[0].start, p[0].end), (3, 5));
        assert_eq!(p[0].features[Source::Log.feature()], 1.0);
        assert_eq!(p[0].features[Source::Flow.feature()], 0.6);
        assert_eq!(p[0].function, Some((1, 10)));
        // A frame inside the named block merges into it.
        assert_eq!((p[1].start, p[1].end), (13, 15));
        assert_eq!(p[1].features[Source::Frame.feature()], 0.5);
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn selection_names_one_block_per_function_while_the_expected_gain_lasts() {
        use context::Source;
        let mut p = places(vec![
            cand(2, 2, 1.0, Source::Log),
            cand(8, 8, 0.95, Source::Log),
            cand(12, 12, 0.9, Source::Log),
            cand(22, 22, 0.8, Source::Log),
            cand(32, 32, 0.05, Source::Log),
        ]);
        let cfg = BaselineConfig::default();
        let model = Model {
            bias: -2.0,
            weights: std::array::from_fn(|k| if k == Source::Log.feature() { 4.0 } else { 0.0 }),
            untraced: [0.0; stages::places::K],
        };
        stages::rank::rank(&mut p, &model);
        let sel = Selection {
            max_blocks: 3,
            per_function: 1,
            per_file: usize::MAX,
            expected_labels: Some(3.0),
            pointer: None,
        };
        let got: Vec<u32> = stages::select::select(&p, &sel)
            .iter()
            .map(|&i| p[i].start)
            .collect();
        // 8 shares its function with 2; 32's low chance would add less coverage than it
        // costs precision.
        assert_eq!(got, [2, 12, 22]);
        let sel = Selection {
            max_blocks: 5,
            ..sel
        };
        assert_eq!(stages::select::select(&p, &sel).len(), 3);
        // With one label expected, the second place already covers it as likely as not.
        let sel = Selection {
            expected_labels: Some(1.0),
            ..sel
        };
        assert_eq!(stages::select::select(&p, &sel).len(), 2);
        assert!(cfg.settings()["ranking"].as_str().unwrap().contains("log="));
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

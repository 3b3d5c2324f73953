//! Templating the evidence: each log line becomes its constant tokens (time, level, thread,
//! numbers and ids left out), identical templates are counted once, and each keeps where it
//! was first seen and how severe it looked.

use crate::code::tokens::message_tokens;
use std::collections::HashMap;

/// Lines longer than this are cut before templating (a 1 MB JSON blob on one line is data).
const MAX_LINE_CHARS: usize = 2000;
/// At most this many distinct templates are kept; later new ones are only counted.
const MAX_TEMPLATES: usize = 100_000;
/// Of a larger source only the head and the tail are read (a failure shows near the end of a
/// log; its start says how the system was set up); the middle is skipped and counted.
const MAX_SOURCE_BYTES: usize = 16 * 1024 * 1024;
const HEAD_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    pub fn weight(self) -> f64 {
        match self {
            Level::Debug => 0.8,
            Level::Info => 1.0,
            Level::Warn => 1.3,
            Level::Error => 1.6,
        }
    }
}

/// One distinct template of the evidence.
#[derive(Debug, Clone)]
pub struct Template {
    pub tokens: Vec<String>,
    /// How many lines had this template.
    pub count: usize,
    /// Where it was first seen: source name and 1-based line.
    pub source: usize,
    pub line: u32,
    /// The first line's text, cut, for rationales.
    pub example: String,
    pub level: Level,
    /// From the report rather than an evidence file.
    pub from_report: bool,
    /// Every line of it is a sentence of the report's own text, not output the report quotes
    /// (a code block, an indented block, a stamped or levelled line): a paraphrase at best.
    pub prose: bool,
    /// Some line of it is stamped within a time the report mentions.
    pub near_time: bool,
    /// Some line of it comes just before the first failures of its file (an error, a panic,
    /// an exception), or carries a value (an id) of one.
    pub near_failure: bool,
    /// The most distinct report words one of its lines holds, values included (the report's
    /// `billing-events`, `orders-5` pick out the lines about the same things).
    pub report_words: usize,
}

/// The templates of every source, and how many lines they came from.
#[derive(Debug, Default)]
pub struct Templates {
    pub sources: Vec<String>,
    pub templates: Vec<Template>,
    pub total_lines: usize,
    /// Lines whose template was new after the cap was reached.
    pub dropped_lines: usize,
    /// Bytes skipped in the middle of very large sources.
    pub skipped_bytes: usize,
    /// Times of day the report mentions: (second of the day, tolerance in seconds).
    pub report_times: Vec<(u32, u32)>,
    /// The report's search terms.
    pub report_terms: std::collections::HashSet<String>,
}

/// Lines before a failure that count as leading up to it.
const BEFORE_FAILURE: usize = 5;
/// How far back a line sharing a value with a failure still counts.
const VALUE_WINDOW: usize = 40;
/// Failures of a file looked at (the first ones: later ones are mostly consequences).
const FAILURES: usize = 3;

impl Templates {
    /// Notes the times of day the report mentions (`at 14:02`, `~17:52:31`), so that log lines
    /// stamped around them stand out.
    pub fn set_report_times(&mut self, report: &str) {
        self.report_times = times_in(report)
            .into_iter()
            .map(|(t, has_seconds)| if has_seconds { (t, 20) } else { (t + 30, 60) })
            .collect();
    }

    /// Notes the report's words, so that log lines about the same things stand out.
    pub fn set_report_terms(&mut self, terms: impl IntoIterator<Item = String>) {
        self.report_terms = terms.into_iter().collect();
    }

    /// Templates the lines of `text` (named `name`) into `self`.
    pub fn add_source(&mut self, name: &str, text: &str, from_report: bool) {
        let source = self.sources.len();
        self.sources.push(name.to_string());
        let mut seen: HashMap<Vec<String>, usize> = HashMap::new();
        for t in self.templates.iter().enumerate() {
            seen.insert(t.1.tokens.clone(), t.0);
        }
        let (head, tail, tail_first_line) = head_and_tail(text);
        self.skipped_bytes += text.len() - head.len() - tail.len();
        let numbered = head.lines().enumerate().chain(
            tail.lines()
                .enumerate()
                .map(|(i, l)| (i + tail_first_line, l)),
        );
        let all: Vec<(usize, &str)> = numbered.collect();
        let near_failure = if from_report {
            vec![false; all.len()]
        } else {
            lines_near_failures(&all)
        };
        let quoted = if from_report {
            quoted_output(&all)
        } else {
            vec![true; all.len()]
        };
        for (k, (i, raw)) in all.into_iter().enumerate() {
            let line = cut(raw.trim(), MAX_LINE_CHARS);
            if line.is_empty() {
                continue;
            }
            let unmarked;
            let line = if from_report && line.contains('{') {
                unmarked = without_jira_markers(line);
                unmarked.as_str()
            } else {
                line
            };
            let tokens = message_tokens(line);
            if tokens.is_empty() {
                continue;
            }
            self.total_lines += 1;
            let level = level_of(line);
            let near_time = !from_report
                && time_of_line(line).is_some_and(|t| {
                    self.report_times
                        .iter()
                        .any(|&(r, tol)| t + tol >= r && t <= r + tol)
                });
            let near_fail = near_failure[k];
            let words = if from_report || self.report_terms.is_empty() {
                0
            } else {
                let mut found: Vec<String> = Vec::new();
                subject_words(strip_time_prefix(line), |t| {
                    if self.report_terms.contains(&t) && !found.contains(&t) {
                        found.push(t);
                    }
                });
                found.len()
            };
            match seen.get(&tokens) {
                Some(&j) => {
                    let t = &mut self.templates[j];
                    t.count += 1;
                    t.level = t.level.max(level);
                    // Rationales quote the occurrence that made the template stand out.
                    if (near_fail && !t.near_failure)
                        || (near_time && !t.near_time && !t.near_failure)
                    {
                        t.source = source;
                        t.line = i as u32 + 1;
                        t.example = cut(line, 160).to_string();
                    }
                    t.near_time |= near_time;
                    t.near_failure |= near_fail;
                    t.prose &= !quoted[k];
                    t.report_words = t.report_words.max(words);
                }
                None if self.templates.len() < MAX_TEMPLATES => {
                    seen.insert(tokens.clone(), self.templates.len());
                    self.templates.push(Template {
                        tokens,
                        count: 1,
                        source,
                        line: i as u32 + 1,
                        example: cut(line, 160).to_string(),
                        level,
                        from_report,
                        prose: !quoted[k],
                        near_time,
                        near_failure: near_fail,
                        report_words: words,
                    });
                }
                None => self.dropped_lines += 1,
            }
        }
    }

    /// Every token of every template, with the templates it occurs in.
    pub fn inverted(&self) -> HashMap<&str, Vec<u32>> {
        let mut map: HashMap<&str, Vec<u32>> = HashMap::new();
        for (i, t) in self.templates.iter().enumerate() {
            let mut last: Option<&str> = None;
            let mut toks: Vec<&str> = t.tokens.iter().map(|s| s.as_str()).collect();
            toks.sort_unstable();
            for tok in toks {
                if last != Some(tok) {
                    map.entry(tok).or_default().push(i as u32);
                }
                last = Some(tok);
            }
        }
        map
    }
}

/// The words a report and a log line can share about the same things: search terms, and
/// values of three characters or more (`1004` of `acct:1004`, `0x2f1c`), lowercase.
pub fn subject_words(text: &str, mut f: impl FnMut(String)) {
    crate::code::tokens::terms(text, &mut f);
    crate::code::tokens::for_each_word(text, |w| {
        if w.len() >= 3 && crate::code::tokens::is_variable(w)
            || w.len() >= 3 && w.bytes().all(|b| b.is_ascii_digit())
        {
            f(w.to_ascii_lowercase());
        }
    });
}

/// Which of `lines` lead up to the first failures of the file: the few lines before each,
/// and lines a little earlier that carry one of its values (a session id, a request number).
fn lines_near_failures(lines: &[(usize, &str)]) -> Vec<bool> {
    let mut near = vec![false; lines.len()];
    let failures: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(k, (_, l))| is_failure(l) && (*k == 0 || !is_failure(lines[k - 1].1)))
        .map(|(k, _)| k)
        .take(FAILURES)
        .collect();
    for &f in &failures {
        for flag in near
            .iter_mut()
            .take(f)
            .skip(f.saturating_sub(BEFORE_FAILURE))
        {
            *flag = true;
        }
        let values = values_of(lines[f].1);
        if values.is_empty() {
            continue;
        }
        for k in f.saturating_sub(VALUE_WINDOW)..f {
            if values_of(lines[k].1).iter().any(|v| values.contains(v)) {
                near[k] = true;
            }
        }
    }
    near
}

/// Which lines of a report are output it quotes rather than its own sentences: lines of a
/// fenced or indented code block (Markdown's, or JIRA's `{code}` and `{noformat}`, as reports
/// pasted from the Apache projects' trackers write them), and lines stamped with a time or
/// carrying a log level.
fn quoted_output(lines: &[(usize, &str)]) -> Vec<bool> {
    let mut in_fence = false;
    lines
        .iter()
        .map(|(_, raw)| {
            let t = raw.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                in_fence = !in_fence;
                return true;
            }
            let jira = jira_markers(t);
            if jira > 0 {
                // `{noformat}…{noformat}` on one line opens and closes a block.
                in_fence ^= jira % 2 == 1;
                return true;
            }
            in_fence
                || raw.starts_with("    ")
                || raw.starts_with('\t')
                || time_of_line(t).is_some()
                || has_level_word(t)
        })
        .collect()
}

/// JIRA's block markers: `{noformat}` as it is, `{code}` also with a language (`{code:java}`).
const JIRA_NOFORMAT: &str = "{noformat}";
const JIRA_CODE: &str = "{code";

/// How many JIRA block markers a line holds (each opens or closes a block).
fn jira_markers(line: &str) -> usize {
    line.matches(JIRA_NOFORMAT).count() + line.matches(JIRA_CODE).count()
}

/// A report's line without JIRA's block markers, whose words are markup, not output.
fn without_jira_markers(line: &str) -> String {
    let mut out = line.replace(JIRA_NOFORMAT, " ");
    while let Some(start) = out.find(JIRA_CODE) {
        let end = out[start..].find('}').map_or(out.len(), |e| start + e + 1);
        out.replace_range(start..end, " ");
    }
    out
}

/// A log level written as logs write it, in capitals (`ERROR`, `INFO`), among the first
/// words, or a panic, cause or exception line; a sentence's "the error" is no level.
fn has_level_word(line: &str) -> bool {
    const LEVELS: [&str; 12] = [
        "ERROR", "ERR", "FATAL", "SEVERE", "CRITICAL", "PANIC", "WARN", "WARNING", "INFO", "DEBUG",
        "TRACE", "CRIT",
    ];
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(6)
        .any(|w| LEVELS.contains(&w))
        || line.starts_with("panic:")
        || line.starts_with("Caused by")
        || line.split_whitespace().next().is_some_and(|w| {
            // `java.lang.IllegalStateException: …`, `KeeperException$NoNodeException: …`
            w.ends_with(':') && (w.contains("Exception") || w.contains("Error"))
        })
}

/// A line that reports a failure: error level, an exception, a panic.
fn is_failure(line: &str) -> bool {
    level_of(line) == Level::Error
}

/// The values of a line worth following: long words with digits (ids, hashes, offsets).
fn values_of(line: &str) -> Vec<&str> {
    let body = strip_time_prefix(line);
    body.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 5 && crate::code::tokens::is_variable(w))
        .collect()
}

/// The line without a leading timestamp (its digits are no id).
fn strip_time_prefix(line: &str) -> &str {
    match time_re().find(line) {
        Some(m) if m.start() < 40 => &line[m.end()..],
        _ => line,
    }
}

fn time_re() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        // A constant expression: compiling it cannot fail at run time.
        regex::Regex::new(
            r"(?:^|[^\d.:])([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:[.,]\d+)?)?(?:[^\d:]|$)",
        )
        .unwrap_or_else(|e| panic!("time regex: {e}"))
    })
}

/// Times of day in `text`: (second of the day, whether seconds were given).
pub fn times_in(text: &str) -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    for c in time_re().captures_iter(text) {
        let h: u32 = c[1].parse().unwrap_or(0);
        let m: u32 = c[2].parse().unwrap_or(0);
        let s = c.get(3).and_then(|x| x.as_str().parse::<u32>().ok());
        let t = h * 3600 + m * 60 + s.unwrap_or(0);
        if !out.iter().any(|x: &(u32, bool)| x.0 == t) {
            out.push((t, s.is_some()));
        }
    }
    out
}

/// The time of day a log line is stamped with (in its first 40 bytes).
pub fn time_of_line(line: &str) -> Option<u32> {
    let c = time_re().captures(line)?;
    if c.get(0)?.start() > 40 {
        return None;
    }
    let h: u32 = c[1].parse().ok()?;
    let m: u32 = c[2].parse().ok()?;
    let s: u32 = c.get(3)?.as_str().parse().ok()?;
    Some(h * 3600 + m * 60 + s)
}

/// A source as (head, tail, 0-based line number of the tail's first line): the whole text
/// as head when it is small enough.
pub fn head_and_tail(text: &str) -> (&str, &str, usize) {
    if text.len() <= MAX_SOURCE_BYTES {
        return (text, "", 0);
    }
    let head_end = line_boundary(text, HEAD_BYTES);
    let tail_start = line_boundary(text, text.len() - (MAX_SOURCE_BYTES - HEAD_BYTES));
    let tail_first = memchr::memchr_iter(b'\n', &text.as_bytes()[..tail_start]).count();
    (&text[..head_end], &text[tail_start..], tail_first)
}

/// The start of the line at or after byte `at`.
fn line_boundary(text: &str, at: usize) -> usize {
    match memchr::memchr(b'\n', &text.as_bytes()[at..]) {
        Some(i) => at + i + 1,
        None => text.len(),
    }
}

/// The severity a log line shows in its first words (`ERROR`, `W0917`, `[warn]`, `panic:`),
/// or by naming an exception.
pub fn level_of(line: &str) -> Level {
    let mut found: Option<Level> = None;
    for (i, w) in line
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        if i >= 8 {
            break;
        }
        let up = w.to_ascii_uppercase();
        let l = match up.as_str() {
            "ERROR" | "ERR" | "FATAL" | "SEVERE" | "CRITICAL" | "PANIC" | "CRIT" | "EMERG"
            | "ALERT" => Level::Error,
            "WARN" | "WARNING" => Level::Warn,
            "DEBUG" | "TRACE" | "FINE" | "FINER" | "FINEST" => Level::Debug,
            // glog: E0917 12:00:00.000 …
            _ if i == 0 && up.len() == 5 && up[1..].bytes().all(|b| b.is_ascii_digit()) => {
                match up.as_bytes()[0] {
                    b'E' | b'F' => Level::Error,
                    b'W' => Level::Warn,
                    _ => Level::Info,
                }
            }
            _ => continue,
        };
        found = Some(found.map_or(l, |f| f.max(l)));
    }
    let mut level = found.unwrap_or(Level::Info);
    if level < Level::Error
        && (line.contains("Exception")
            || line.contains("panic:")
            || line.contains("panicked at")
            || line.contains("Traceback"))
    {
        level = Level::Error;
    }
    level
}

fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut e = max;
    while !s.is_char_boundary(e) {
        e -= 1;
    }
    &s[..e]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_differing_in_values_share_a_template() {
        let mut t = Templates::default();
        t.add_source(
            "server.log",
            "2026-11-02 10:00:12,443 WARNING server lock held by client-a, refusing client-b\n\n2026-11-02 11:00:12,443 WARNING server lock held by client-a, refusing client-b\n2026-11-02 11:00:13,000 INFO lease granted 42\n",
            false,
        );
        assert_eq!(t.templates.len(), 2);
        assert_eq!(t.templates[0].count, 2);
        assert_eq!(t.templates[0].level, Level::Warn);
        assert_eq!(t.templates[0].line, 1);
        assert_eq!(t.templates[1].line, 4);
        assert_eq!(t.total_lines, 3);
        assert!(t.inverted()["lock"].contains(&0));
    }

    /// Whether the template holding word `w` of a report is prose (`None`: no template has it).
    fn prose_of_report(report: &str, w: &str) -> Option<bool> {
        let mut t = Templates::default();
        t.add_source(".distdebug/report.md", report, true);
        t.templates
            .iter()
            .find(|x| x.tokens.contains(&w.to_string()))
            .map(|x| x.prose)
    }

    #[test]
    fn the_reports_own_sentences_are_prose_and_the_output_it_quotes_is_not() {
        let report = "# Lease never released\n\n**Observed.** The error says the lease was granted twice.\n\n```\nlease granted twice to client-a\n```\n\n    refusing client-b, lock held\n2024-01-01 10:00:00 WARN slow sync of 30 ms\nERROR quota exceeded for tenant t1\njava.lang.IllegalStateException: fencing token went backwards\n";
        let prose_of = |w: &str| prose_of_report(report, w);
        // A sentence, even one starting "The error": prose.
        assert_eq!(prose_of("observed"), Some(true));
        // Fenced, indented, stamped and levelled lines are output the report quotes.
        assert_eq!(prose_of("client"), Some(false), "fenced and indented lines");
        assert_eq!(prose_of("sync"), Some(false));
        assert_eq!(prose_of("quota"), Some(false));
        assert_eq!(prose_of("fencing"), Some(false));
        // JIRA's blocks quote output too; the sentence after one is prose again.
        let jira = "The broker stalls.\n{noformat}\nreplica fetcher stopped for partition p0\n{noformat}\n{code:java}\nsession expired for member m1\n{code}\nThe member rejoins later.\n{noformat}offsets reset to earliest{noformat}\n";
        let jira_prose = |w: &str| prose_of_report(jira, w);
        assert_eq!(jira_prose("fetcher"), Some(false));
        assert_eq!(jira_prose("expired"), Some(false));
        assert_eq!(jira_prose("earliest"), Some(false));
        assert_eq!(jira_prose("rejoins"), Some(true));
        assert_eq!(jira_prose("stalls"), Some(true));
        assert_eq!(jira_prose("noformat"), None, "markers are no words");
        assert_eq!(jira_prose("java"), None);
        // Lines of an evidence file are never prose, and a template seen in one is not.
        let mut e = Templates::default();
        e.add_source(
            ".distdebug/report.md",
            "the lease was granted twice\n",
            true,
        );
        e.add_source("server.log", "the lease was granted twice\n", false);
        assert_eq!(e.templates.len(), 1);
        assert!(!e.templates[0].prose);
    }

    #[test]
    fn times_in_reports_and_lines() {
        assert_eq!(
            times_in("at about 14:02:07 UTC, and again ~17:52; node 10.4.0.11:7946 port 8080"),
            vec![(14 * 3600 + 2 * 60 + 7, true), (17 * 3600 + 52 * 60, false)]
        );
        assert_eq!(
            time_of_line("2024-09-18 14:10:10.219 [x] INFO y"),
            Some(51010)
        );
        assert_eq!(
            time_of_line("I1130 07:33:03.120021 27183 metad.cc:128] x"),
            Some(27183)
        );
        assert_eq!(time_of_line("no time here 1:2"), None);
    }

    #[test]
    fn lines_before_a_failure_and_sharing_its_values_stand_out() {
        let mut t = Templates::default();
        t.set_report_times("It broke at 10:00:30.");
        t.add_source(
            "s.log",
            "09:00:00 INFO started node\n09:00:01 INFO touched session 0x2f1c9a\n09:00:02 INFO tick\n09:00:03 INFO tick\n09:00:04 INFO tick\n09:00:05 INFO tick\n09:00:06 INFO tick\n09:00:07 INFO tick\n10:00:31 ERROR request for session 0x2f1c9a failed\n",
            false,
        );
        let by = |w: &str| {
            t.templates
                .iter()
                .find(|x| x.tokens.contains(&w.to_string()))
                .unwrap()
        };
        assert!(!by("started").near_failure);
        assert!(by("touched").near_failure, "shares the session id");
        assert!(by("tick").near_failure, "just before the error");
        assert!(by("failed").near_time);
        assert!(!by("started").near_time);
    }

    #[test]
    fn levels_from_common_log_shapes() {
        assert_eq!(level_of("E0917 12:00:00.1 raft.go:12] boom"), Level::Error);
        assert_eq!(level_of("[2024-01-01] [warn] slow disk"), Level::Warn);
        assert_eq!(level_of("java.lang.NullPointerException: x"), Level::Error);
        assert_eq!(
            level_of("{\"level\":\"debug\",\"msg\":\"tick\"}"),
            Level::Debug
        );
        assert_eq!(level_of("all good"), Level::Info);
    }

    #[test]
    fn the_middle_of_a_huge_source_is_skipped_and_line_numbers_stay_true() {
        let mut text = String::new();
        let mut n = 0;
        while text.len() < MAX_SOURCE_BYTES + 1024 * 1024 {
            text.push_str(&format!("INFO tick {n} of the clock\n"));
            n += 1;
        }
        text.push_str("ERROR the very last line\n");
        let mut t = Templates::default();
        t.add_source("big.log", &text, false);
        assert!(t.skipped_bytes > 0);
        let last = t
            .templates
            .iter()
            .find(|x| x.level == Level::Error)
            .unwrap();
        assert_eq!(last.line as usize, n + 1);
    }

    #[test]
    fn huge_lines_and_invalid_text_are_cut_not_fatal() {
        let mut t = Templates::default();
        let long = format!("ERROR {}", "x".repeat(10_000));
        t.add_source("a", &format!("{long}\n\u{fffd}\u{fffd}\n"), false);
        assert_eq!(t.templates.len(), 1);
        assert!(t.templates[0].example.len() <= 160);
    }
}

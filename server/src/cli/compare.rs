//! `distdebug compare <results/A> <results/B>`: two configurations (e.g. a person's
//! `results/human-ann` and `results/baseline`) incident by incident: both sides' scores, the
//! code regions both named, only A, only B (and whether they hit labels), and the line-level
//! overlap (Jaccard).

use super::{CliError, CliResult, IncidentsDirArg};
use crate::annotate::compare_dirs::{compare_dirs, AttemptChoice, DirsComparison};
use crate::annotate::Presence;
use crate::score::Metrics;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Results folder of configuration A, e.g. results/human-ann
    #[arg(value_name = "RESULTS/A")]
    pub a: PathBuf,
    /// Results folder of configuration B, e.g. results/baseline
    #[arg(value_name = "RESULTS/B")]
    pub b: PathBuf,
    /// Attempt of A to compare (default: each incident's first attempt)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub attempt_a: Option<u32>,
    /// Attempt of B to compare (default: each incident's first attempt)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub attempt_b: Option<u32>,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dir: IncidentsDirArg,
}

pub fn run(a: CompareArgs) -> CliResult {
    let incidents = crate::incident::incidents_dir(a.dir.dir.as_deref());
    let choice = AttemptChoice {
        a: a.attempt_a,
        b: a.attempt_b,
    };
    let c = compare_dirs(&a.a, &a.b, &incidents, choice).map_err(|e| CliError {
        status: 1,
        messages: e.lines().map(str::to_string).collect(),
    })?;
    for w in &c.warnings {
        eprintln!("{w}");
    }
    if a.json {
        let text = serde_json::to_string_pretty(&c)
            .map_err(|e| CliError::bad_input(format!("cannot serialise the comparison: {e}")))?;
        println!("{text}");
    } else {
        print!("{}", render(&c));
    }
    Ok(())
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn scores(m: &Option<Metrics>) -> String {
    match m {
        Some(m) => format!(
            "block coverage {}, precision {}, hit rate {}, file coverage {}",
            pct(m.block_coverage),
            pct(m.block_precision),
            pct(m.block_hit_rate),
            pct(m.file_coverage)
        ),
        None => "no scores (no labels)".to_string(),
    }
}

fn hit(h: Option<bool>, side: &str) -> Option<String> {
    h.map(|h| format!("{side} {}", if h { "hits a label" } else { "no label" }))
}

/// The text form: per incident, both sides' scores, the counts, Jaccard and each region.
pub fn render(c: &DirsComparison) -> String {
    let mut out = format!("A = {}, B = {}\n", c.a, c.b);
    for i in &c.incidents {
        let x = &i.comparison;
        out.push_str(&format!(
            "{}: A #{} vs B #{}\n",
            i.incident, i.a_attempt, i.b_attempt
        ));
        for (side, s, err) in [("A", &x.a, &i.a_error), ("B", &x.b, &i.b_error)] {
            out.push_str(&format!(
                "  {side} {}: {} ({} blocks, {} lines)\n",
                s.name,
                scores(&s.scores),
                s.blocks,
                s.lines
            ));
            if let Some(e) = err {
                out.push_str(&format!(
                    "    not schema-valid, compared as naming nothing: {e}\n"
                ));
            }
        }
        if let Some(why) = &i.unscored {
            out.push_str(&format!("  no scores: {why}\n"));
        }
        let jaccard = x
            .jaccard
            .map(pct)
            .unwrap_or_else(|| "n/a (no lines named)".to_string());
        out.push_str(&format!(
            "  blocks: {} both, {} only A, {} only B; lines: Jaccard {} (A {}, B {}, both {})\n",
            x.both, x.only_a, x.only_b, jaccard, x.a.lines, x.b.lines, x.both_lines
        ));
        for r in &x.regions {
            let tag = match r.presence {
                Presence::Both => "both  ",
                Presence::OnlyA => "only A",
                Presence::OnlyB => "only B",
            };
            let hits: Vec<String> = [hit(r.a_hit, "A"), hit(r.b_hit, "B")]
                .into_iter()
                .flatten()
                .collect();
            out.push_str(&format!(
                "    {tag}  {}:{}-{}{}\n",
                r.path,
                r.start_line,
                r.end_line,
                if hits.is_empty() {
                    String::new()
                } else {
                    format!("  {}", hits.join(", "))
                }
            ));
        }
    }
    if !c.only_in_a.is_empty() {
        out.push_str(&format!("only in A: {}\n", c.only_in_a.join(", ")));
    }
    if !c.only_in_b.is_empty() {
        out.push_str(&format!("only in B: {}\n", c.only_in_b.join(", ")));
    }
    if c.incidents.is_empty() {
        out.push_str("no incident has attempts on both sides\n");
    }
    out
}

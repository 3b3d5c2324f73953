//! `distdebug agreement <incident>...`: agreement between the annotators of each incident's
//! `labels.json` (block coverage each way, line-level Cohen's kappa, where they disagree).

use super::{CliError, CliResult, IncidentsDirArg};
use crate::annotate::compare_dirs::incident_agreement;
use crate::annotate::Agreement;
use crate::incident::{incidents_dir, resolve_incident_dir};
use clap::Args;

#[derive(Debug, Args)]
pub struct AgreementArgs {
    /// Incident ids (under --dir) or incident folders
    #[arg(value_name = "INCIDENT", required = true)]
    pub incidents: Vec<String>,
    /// Print one JSON object: {"incidents": [...]}
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub dir: IncidentsDirArg,
}

pub fn run(a: AgreementArgs) -> CliResult {
    let root = incidents_dir(a.dir.dir.as_deref());
    let mut results = Vec::new();
    let mut errors = Vec::new();
    for arg in &a.incidents {
        match resolve_incident_dir(arg, &root).and_then(|d| incident_agreement(&d)) {
            Ok(g) => results.push(g),
            Err(e) => errors.push(e),
        }
    }
    if a.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "incidents": results }))
            .map_err(|e| CliError::bad_input(format!("cannot serialise agreement: {e}")))?;
        println!("{text}");
    } else {
        for g in &results {
            print!("{}", render(g));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CliError {
            status: 1,
            messages: errors,
        })
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// The text form: one paragraph per incident, one block per pair.
pub fn render(g: &Agreement) -> String {
    let mut out = String::new();
    let who: Vec<String> = g
        .annotators
        .iter()
        .map(|a| format!("{} ({} blocks, {} lines)", a.annotator, a.blocks, a.lines))
        .collect();
    out.push_str(&format!(
        "{}: {} annotator{}: {}\n",
        g.incident,
        g.annotators.len(),
        if g.annotators.len() == 1 { "" } else { "s" },
        if who.is_empty() {
            "none".to_string()
        } else {
            who.join(", ")
        }
    ));
    if g.pairs.is_empty() {
        out.push_str("  agreement needs blocks from two annotators\n");
    }
    for p in &g.pairs {
        let kappa = match p.kappa {
            Some(k) => format!("{k:.3}"),
            None => "undefined".to_string(),
        };
        out.push_str(&format!(
            "  {} vs {}: {} reaches {} of {}'s blocks, {} reaches {} of {}'s; line kappa {} (observed {}, chance {}) over {} lines of {} file{}\n",
            p.a, p.b, p.a, pct(p.a_covers_b), p.b, p.b, pct(p.b_covers_a), p.a,
            kappa, pct(p.observed), pct(p.expected), p.lines, p.files.len(),
            if p.files.len() == 1 { "" } else { "s" }
        ));
        if !p.files_without_length.is_empty() {
            out.push_str(&format!(
                "    length unknown (last labeled line used): {}\n",
                p.files_without_length.join(", ")
            ));
        }
        for name in [&p.a, &p.b] {
            let only: Vec<String> = p
                .disagreements
                .iter()
                .filter(|d| &d.only == name)
                .map(|d| {
                    if d.start_line == d.end_line {
                        format!("{}:{}", d.path, d.start_line)
                    } else {
                        format!("{}:{}-{}", d.path, d.start_line, d.end_line)
                    }
                })
                .collect();
            if !only.is_empty() {
                out.push_str(&format!("    only {name}: {}\n", only.join(", ")));
            }
        }
    }
    out
}

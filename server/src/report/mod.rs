//! The HTML report of one or more scored configurations (`distdebug report`): one
//! self-contained file with inline CSS and SVG that reads without JavaScript or network.
//!
//! Every figure comes from the scoring library (`crate::score`), so the report shows exactly
//! what `distdebug score --json` prints for the same folders and options. Sections: the
//! leaderboard, the localization gap, coverage by report evidence, run-to-run variation, and
//! per configuration the tables by system, by tag and by incident with links to the files.

pub mod charts;
pub mod html;

use crate::attempt::layout::{attempt_dir, RunInfo, DIAGNOSIS, RUN_INFO, SCORES, TRAJECTORY};
use crate::score::protocol::{score_group, ConfigScore, GroupScore, IncidentScore, IncidentStatus};
use crate::score::table::{gap, pct, tokens, with_ci};
use crate::score::{score_configs, ScoreOptions, ScoreReport};
use charts::{colour, EvidenceGroup, GapRow};
use html::{esc, link};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

const STYLE: &str = include_str!("style.css");

/// The tags the evidence figure is about (docs/incident-format.md), in the order it shows them.
/// "No causal code named" is every incident without `causal-method-named`.
pub const CAUSAL_METHOD_NAMED: &str = "causal-method-named";
enum Evidence {
    Tag(&'static str),
    Without(&'static str),
}
const EVIDENCE: [(&str, &str, Evidence); 4] = [
    (
        "causal-method-named",
        "causal method named: the report names a causal method",
        Evidence::Tag(CAUSAL_METHOD_NAMED),
    ),
    (
        "no-causal-code-named",
        "no causal code named: the report names no causal method",
        Evidence::Without(CAUSAL_METHOD_NAMED),
    ),
    (
        "no-internal-stack-trace",
        "no internal stack trace: no evidence frame inside the project",
        Evidence::Tag("no-internal-stack-trace"),
    ),
    (
        "cross-component",
        "cross-component: the failure surfaces away from its cause",
        Evidence::Tag("cross-component"),
    ),
];

/// One configuration as the report shows it: its scores, its results folder (for links) and
/// its `run.json` when that could be read.
pub struct ReportConfig<'a> {
    pub score: &'a ConfigScore,
    pub dir: PathBuf,
    pub run: Option<RunInfo>,
}

/// Everything a page is made of.
pub struct ReportPage<'a> {
    pub configs: Vec<ReportConfig<'a>>,
    pub options: ScoreOptions,
    /// The folder the page is written to: links to attempt files are relative to it.
    pub out_dir: PathBuf,
    pub generated_at: String,
}

/// Reads `results/<config>/run.json`, or `None` when it is missing or not a run record.
pub fn read_run_info(config_dir: &Path) -> Option<RunInfo> {
    let text = std::fs::read_to_string(config_dir.join(RUN_INFO)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Scores `config_dirs` (writing each attempt's `diagnosis_scores.json`, as `score` does) and
/// renders the page that will live at `out`. Returns the page and the scores behind it.
pub fn build_report(
    config_dirs: &[PathBuf],
    incidents_dir: &Path,
    opts: &ScoreOptions,
    out: &Path,
) -> Result<(String, ScoreReport), String> {
    let scores = score_configs(config_dirs, incidents_dir, opts)?;
    let out_dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let configs = scores
        .configs
        .iter()
        .zip(config_dirs)
        .map(|(score, dir)| ReportConfig {
            score,
            dir: dir.clone(),
            run: read_run_info(dir),
        })
        .collect();
    let page = ReportPage {
        configs,
        options: *opts,
        out_dir,
        generated_at: crate::util::now_rfc3339(),
    };
    let text = render(&page);
    Ok((text, scores))
}

/// Writes the page atomically (a reader never sees half a report).
pub fn write_report(out: &Path, html: &str) -> Result<(), String> {
    crate::util::fs::write_atomic(out, html.as_bytes())
        .map_err(|e| format!("{}: cannot write the report: {e}", out.display()))
}

/// The configurations in leaderboard order: block coverage, best first; ties by name.
fn ranked<'p, 'a>(page: &'p ReportPage<'a>) -> Vec<&'p ReportConfig<'a>> {
    let mut v: Vec<&ReportConfig> = page.configs.iter().collect();
    v.sort_by(|a, b| {
        b.score
            .block_coverage
            .mean
            .total_cmp(&a.score.block_coverage.mean)
            .then_with(|| a.score.config.cmp(&b.score.config))
    });
    v
}

/// Renders the whole page.
pub fn render(page: &ReportPage) -> String {
    let configs = ranked(page);
    let mut out = String::with_capacity(64 * 1024);
    let title = match configs.as_slice() {
        [one] => format!("distdebug report: {}", one.score.config),
        _ => format!("distdebug report: {} configurations", configs.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"distdebug {v}\">\n<title>{t}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>{t}</h1>\n<p class=\"meta\">Generated {g} by distdebug {v}. Protocol: the first {n} schema-valid attempts of each incident count; attempts flagged by the leakage guard are discarded; 95% intervals are percentile bootstrap over incidents (B = {b}, seed {s}).</p>\n",
        t = esc(&title),
        v = esc(env!("CARGO_PKG_VERSION")),
        g = esc(&page.generated_at),
        n = page.options.attempts,
        b = page.options.bootstrap,
        s = page.options.seed,
    );
    out.push_str("<nav><a href=\"#leaderboard\">Leaderboard</a><a href=\"#gap\">Localization gap</a><a href=\"#evidence\">Coverage by evidence</a><a href=\"#variation\">Run-to-run variation</a>");
    for (i, c) in configs.iter().enumerate() {
        let _ = write!(out, "<a href=\"#config-{i}\">{}</a>", esc(&c.score.config));
    }
    out.push_str("</nav>\n</header>\n<main>\n");
    leaderboard(&mut out, &configs);
    gap_section(&mut out, &configs);
    evidence_section(&mut out, &configs, &page.options);
    variation_section(&mut out, &configs);
    for (i, c) in configs.iter().enumerate() {
        config_section(&mut out, i, c, &page.out_dir);
    }
    out.push_str("</main>\n<footer>Block coverage: the share of labeled causal blocks the diagnosis reached. Precision: the share of named lines that are labeled. File coverage: the share of labeled files named. Gap: file coverage minus block coverage, in percentage points. An incident is flaky when its block coverage spans more than 20 points across its scored attempts. See docs/scoring.md in distdebug for every rule.</footer>\n</body>\n</html>\n");
    out
}

fn swatch(i: usize) -> String {
    format!(
        "<span class=\"swatch\" style=\"background:{}\"></span>",
        colour(i)
    )
}

/// "agent baseline · model gpt-x · harness h" from `run.json`, when there is one.
fn run_line(run: &Option<RunInfo>) -> String {
    let Some(r) = run else {
        return String::new();
    };
    let mut parts: Vec<String> = Vec::new();
    if !r.agent.is_empty() {
        parts.push(format!("agent {}", r.agent));
    }
    if let Some(m) = &r.model {
        if !m.is_empty() {
            parts.push(format!("model {m}"));
        }
    }
    if !r.harness.is_empty() && r.harness != r.agent {
        parts.push(format!("harness {}", r.harness));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("<div class=\"sub run\">{}</div>", esc(&parts.join(" · ")))
}

fn leaderboard(out: &mut String, configs: &[&ReportConfig]) {
    out.push_str("<section id=\"leaderboard\">\n<h2>Leaderboard</h2>\n<p class=\"lead\">Configurations by block coverage, best first. The bar shows the 95% interval and the mean.</p>\n<table class=\"leaderboard\">\n<thead><tr><th class=\"num\">#</th><th>configuration</th><th class=\"num\">incidents</th><th class=\"num\">block coverage [95% CI]</th><th class=\"num\">precision</th><th class=\"num\">hit rate</th><th class=\"num\">file coverage</th><th class=\"num\">gap pp</th><th class=\"num\">tokens/run</th><th class=\"num\">flaky</th></tr></thead>\n<tbody>\n");
    for (i, c) in configs.iter().enumerate() {
        let s = c.score;
        let _ = writeln!(
            out,
            "<tr data-config=\"{name}\"><td class=\"num rank\">{rank}</td><td class=\"config\">{sw}<a href=\"#config-{i}\">{name}</a>{run}</td><td class=\"num incidents\">{inc}</td><td class=\"num block-coverage\">{cov}{bar}</td><td class=\"num precision\">{prec}</td><td class=\"num hit-rate\">{hit}</td><td class=\"num file-coverage\">{file}</td><td class=\"num gap\">{gap}</td><td class=\"num tokens\">{tok}</td><td class=\"num flaky-count\">{flaky}</td></tr>",
            name = esc(&s.config),
            rank = i + 1,
            sw = swatch(i),
            run = run_line(&c.run),
            inc = s.incidents,
            cov = with_ci(&s.block_coverage),
            bar = charts::ci_bar(&s.block_coverage, i),
            prec = pct(s.block_precision.mean),
            hit = pct(s.block_hit_rate.mean),
            file = pct(s.file_coverage.mean),
            gap = gap(s.gap_pp),
            tok = tokens(s.tokens_per_run),
            flaky = s.flaky,
        );
    }
    if configs.is_empty() {
        out.push_str("<tr><td colspan=\"10\">no configurations</td></tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn gap_section(out: &mut String, configs: &[&ReportConfig]) {
    out.push_str("<section id=\"gap\">\n<h2>Localization gap</h2>\n<p class=\"lead\">How often the right file was found but not the right block: file coverage and block coverage side by side; the gap is their difference in percentage points.</p>\n");
    let rows: Vec<GapRow> = configs
        .iter()
        .map(|c| GapRow {
            config: &c.score.config,
            file_coverage: c.score.file_coverage.mean,
            block_coverage: c.score.block_coverage.mean,
            gap_pp: c.score.gap_pp,
        })
        .collect();
    out.push_str(&charts::gap_chart(&rows));
    out.push_str("\n</section>\n");
}

/// The score of one configuration over the incidents in one evidence group, or `None` when
/// it has none there. Tag groups are the ones `score` computes; the complement group is
/// computed the same way (same bootstrap seed and count).
fn evidence_score(c: &ConfigScore, ev: &Evidence, opts: &ScoreOptions) -> Option<GroupScore> {
    match ev {
        Evidence::Tag(t) => c.by_tag.get(*t).filter(|g| g.incidents > 0).cloned(),
        Evidence::Without(t) => {
            let rest: Vec<&IncidentScore> = c
                .per_incident
                .iter()
                .filter(|i| !i.tags.iter().any(|x| x == t))
                .collect();
            (!rest.is_empty()).then(|| score_group(&rest, opts))
        }
    }
}

fn evidence_section(out: &mut String, configs: &[&ReportConfig], opts: &ScoreOptions) {
    out.push_str("<section id=\"evidence\">\n<h2>Coverage by report evidence</h2>\n<p class=\"lead\">Block coverage over the incidents whose report and evidence have each property (the incident tags), with the 95% interval as whiskers and the number of incidents.</p>\n");
    let groups: Vec<EvidenceGroup> = EVIDENCE
        .iter()
        .map(|(key, title, ev)| EvidenceGroup {
            key,
            title,
            scores: configs
                .iter()
                .map(|c| (c.score.config.as_str(), evidence_score(c.score, ev, opts)))
                .collect(),
        })
        .collect();
    out.push_str(&charts::evidence_chart(&groups));
    out.push_str("\n</section>\n");
}

fn variation_section(out: &mut String, configs: &[&ReportConfig]) {
    out.push_str("<section id=\"variation\">\n<h2>Run-to-run variation</h2>\n<p class=\"lead\">Per incident, the block coverage of each scored attempt (a dot), their range (the line) and the population standard deviation. Shaded rows are flaky: coverage spans more than 20 points.</p>\n");
    for (i, c) in configs.iter().enumerate() {
        let _ = writeln!(
            out,
            "<h3>{}{} <span class=\"sub\">{} flaky of {} incidents</span></h3>",
            swatch(i),
            esc(&c.score.config),
            c.score.flaky,
            c.score.incidents
        );
        out.push_str(&charts::variation_chart(
            &c.score.config,
            i,
            &c.score.per_incident,
        ));
        out.push('\n');
    }
    out.push_str("</section>\n");
}

fn group_table(out: &mut String, what: &str, groups: &BTreeMap<String, GroupScore>) {
    let _ = writeln!(
        out,
        "<table class=\"by-{what}\">\n<thead><tr><th>{what}</th><th class=\"num\">incidents</th><th class=\"num\">block coverage [95% CI]</th><th class=\"num\">precision</th><th class=\"num\">hit rate</th><th class=\"num\">file coverage</th><th class=\"num\">gap pp</th></tr></thead>\n<tbody>"
    );
    for (k, g) in groups {
        let _ = writeln!(
            out,
            "<tr data-{what}=\"{k}\"><td>{k}</td><td class=\"num incidents\">{}</td><td class=\"num block-coverage\">{}</td><td class=\"num precision\">{}</td><td class=\"num hit-rate\">{}</td><td class=\"num file-coverage\">{}</td><td class=\"num gap\">{}</td></tr>",
            g.incidents,
            with_ci(&g.block_coverage),
            pct(g.block_precision.mean),
            pct(g.block_hit_rate.mean),
            pct(g.file_coverage.mean),
            gap(g.gap_pp),
            k = esc(k),
        );
    }
    if groups.is_empty() {
        out.push_str("<tr><td colspan=\"7\">none</td></tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The attempts of an incident, each linking to its `diagnosis.json` (or its folder when the
/// agent wrote none), marked when it was not schema-valid, discarded or not counted.
fn attempt_links(out: &mut String, c: &ReportConfig, inc: &IncidentScore, out_dir: &Path) {
    for a in &inc.attempts {
        let dir = attempt_dir(&c.dir, &inc.incident, a.attempt);
        let diagnosis = dir.join(DIAGNOSIS);
        let (mark, class, why) = if !a.schema_valid {
            ("✗", "bad", "not schema-valid")
        } else if a.flagged && a.counted {
            ("⚑", "bad", "leakage: discarded")
        } else if a.flagged {
            ("⚑", "bad", "leakage: not counted")
        } else if !a.counted {
            ("", "", "not counted")
        } else {
            ("", "", "scored")
        };
        let label = format!("#{}{}", a.attempt, mark);
        let title = format!(
            "attempt {}: {why}; block coverage {}",
            a.attempt,
            pct(a.block_coverage)
        );
        let _ = write!(out, "<span class=\"attempt {class}\">");
        if diagnosis.is_file() {
            out.push_str(&link(out_dir, &diagnosis, &label, &title));
        } else {
            out.push_str(&link(
                out_dir,
                &dir,
                &label,
                &format!("{title} (no diagnosis.json)"),
            ));
        }
        let scores = dir.join(SCORES);
        if scores.is_file() {
            out.push_str("<sup>");
            out.push_str(&link(out_dir, &scores, "s", "diagnosis_scores.json"));
            out.push_str("</sup>");
        }
        let traj = dir.join(TRAJECTORY);
        if traj.is_file() {
            out.push_str("<sup>");
            out.push_str(&link(out_dir, &traj, "t", "trajectory.json"));
            out.push_str("</sup>");
        }
        out.push_str("</span>");
    }
}

fn config_section(out: &mut String, i: usize, c: &ReportConfig, out_dir: &Path) {
    let s = c.score;
    let _ = writeln!(
        out,
        "<section id=\"config-{i}\" class=\"config\" data-config=\"{}\">\n<h2>{}{}</h2>{}",
        esc(&s.config),
        swatch(i),
        esc(&s.config),
        run_line(&c.run)
    );
    let _ = writeln!(
        out,
        "<p class=\"meta\">Results: {}. Block coverage {}; file coverage {}; gap {} pp; {} flaky.</p>",
        link(out_dir, &c.dir, &c.dir.display().to_string(), "the results folder"),
        with_ci(&s.block_coverage),
        pct(s.file_coverage.mean),
        gap(s.gap_pp),
        s.flaky
    );
    out.push_str("<h3>By system</h3>\n");
    group_table(out, "system", &s.by_system);
    out.push_str("<h3>By tag</h3>\n");
    group_table(out, "tag", &s.by_tag);
    out.push_str("<h3>Per incident</h3>\n<p class=\"note\">#k links to attempt k's diagnosis.json; <sup>s</sup> its scores, <sup>t</sup> its trajectory. ✗ not schema-valid, ⚑ flagged by the leakage guard.</p>\n<table class=\"per-incident\">\n<thead><tr><th>incident <span class=\"sub\">and tags</span></th><th>system</th><th class=\"num\">block coverage</th><th class=\"num\">precision</th><th class=\"num\">hit rate</th><th class=\"num\">file coverage</th><th class=\"num\">coverage sd</th><th class=\"num\">flaky</th><th class=\"num\">scored</th><th class=\"num\">tokens/run</th><th>attempts</th></tr></thead>\n<tbody>\n");
    for inc in &s.per_incident {
        let folder = c.dir.join(&inc.incident);
        let tags: String = inc
            .tags
            .iter()
            .map(|t| format!("<span class=\"tag\">{}</span>", esc(t)))
            .collect();
        let status = if inc.status == IncidentStatus::Scored {
            String::new()
        } else {
            format!(
                "<div class=\"sub bad\">scores 0: {}</div>",
                esc(inc.status.as_str())
            )
        };
        let _ = write!(
            out,
            "<tr data-incident=\"{id}\"><td class=\"incident\">{idlink}{status}<div class=\"tags\">{tags}</div></td><td>{sys}</td><td class=\"num block-coverage\">{cov}</td><td class=\"num precision\">{prec}</td><td class=\"num hit-rate\">{hit}</td><td class=\"num file-coverage\">{file}</td><td class=\"num coverage-sd\">{sd}</td><td class=\"num flaky-cell{fc}\">{flaky}</td><td class=\"num scored\">{n}</td><td class=\"num tokens\">{tok}</td><td class=\"attempts\">",
            id = esc(&inc.incident),
            idlink = link(out_dir, &folder, &inc.incident, "the incident's results folder"),
            sys = esc(&inc.system),
            cov = pct(inc.block_coverage),
            prec = pct(inc.block_precision),
            hit = pct(inc.block_hit_rate),
            file = pct(inc.file_coverage),
            sd = pct(inc.coverage_sd),
            fc = if inc.flaky { " flaky" } else { "" },
            flaky = if inc.flaky { "yes" } else { "no" },
            n = inc.scored_attempts,
            tok = tokens(inc.tokens_per_run),
        );
        attempt_links(out, c, inc, out_dir);
        out.push_str("</td></tr>\n");
    }
    if s.per_incident.is_empty() {
        out.push_str(
            "<tr><td colspan=\"11\">no incident folders in this results folder</td></tr>\n",
        );
    }
    out.push_str("</tbody>\n</table>\n");
    problems(out, s);
    out.push_str("</section>\n");
}

/// The attempts that did not count and why, as `score` prints them below its table.
fn problems(out: &mut String, s: &ConfigScore) {
    let mut items: Vec<String> = Vec::new();
    for inc in &s.per_incident {
        for a in &inc.attempts {
            if let Some(why) = &a.schema_error {
                items.push(format!(
                    "<li><code>{}</code> attempt {}: not schema-valid: {}</li>",
                    esc(&inc.incident),
                    a.attempt,
                    esc(why)
                ));
            }
            for f in &a.leakage {
                let fate = if a.counted {
                    "discarded"
                } else {
                    "not counted"
                };
                items.push(format!(
                    "<li><code>{}</code> attempt {}: leakage ({fate}), step {} [{}]: {}</li>",
                    esc(&inc.incident),
                    a.attempt,
                    f.step,
                    esc(&f.rule),
                    esc(&f.reason)
                ));
            }
        }
    }
    if items.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<h3>Attempts that did not count</h3>\n<ul class=\"problems\">\n{}\n</ul>",
        items.join("\n")
    );
}

#[cfg(test)]
mod tests;

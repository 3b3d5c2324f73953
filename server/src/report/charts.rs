//! The report's figures as inline SVG: the localization gap chart, coverage by report evidence
//! with interval whiskers, run-to-run variation per incident, and the small interval bar of
//! the leaderboard. Horizontal bars on a 0–100% axis, so long names fit on the left.
//!
//! Each mark carries a class (`bar file-coverage`, `whisker`, `attempt`…) and the name of its
//! configuration or group in a `data-` attribute, so a test can find it and read its geometry.

use super::html::{esc, num};
use crate::score::protocol::{GroupScore, IncidentScore, IncidentStatus, MeanCi};
use crate::score::table::{gap, pct, with_ci};
use std::fmt::Write;

/// Colour-blind-safe colours (Okabe–Ito and Tol), one per configuration, cycled.
const PALETTE: [&str; 10] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#44AA99",
    "#999933", "#332288",
];

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The figure's width in SVG units, where the axis starts and how long it is.
const WIDTH: f64 = 880.0;
const AXIS_X: f64 = 210.0;
const AXIS_W: f64 = 460.0;
/// Names longer than this are shortened on the figure (the full name is the tooltip).
const NAME_CHARS: usize = 30;

/// The x of a fraction (0..1) on the axis; values outside are clamped.
fn x_of(v: f64) -> f64 {
    let v = if v.is_finite() {
        v.clamp(0.0, 1.0)
    } else {
        0.0
    };
    AXIS_X + v * AXIS_W
}

fn short(name: &str) -> String {
    if name.chars().count() <= NAME_CHARS {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(NAME_CHARS - 1).collect();
        s.push('…');
        s
    }
}

/// A name on the left of a row, right-aligned against the axis, with its full text as tooltip.
fn row_label(out: &mut String, y: f64, name: &str, class: &str) {
    let _ = write!(
        out,
        "<text class=\"{class}\" x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\"><title>{}</title>{}</text>",
        num(AXIS_X - 8.0),
        num(y),
        esc(name),
        esc(&short(name))
    );
}

/// Gridlines at 0, 25, 50, 75 and 100% from `top` to `bottom`, labelled below.
fn axis(out: &mut String, top: f64, bottom: f64) {
    out.push_str("<g class=\"axis\">");
    for k in 0..=4 {
        let v = k as f64 / 4.0;
        let x = x_of(v);
        let _ = write!(
            out,
            "<line x1=\"{x}\" y1=\"{t}\" x2=\"{x}\" y2=\"{b}\" class=\"grid\"/><text x=\"{x}\" y=\"{ty}\" text-anchor=\"middle\" class=\"tick\">{k25}%</text>",
            x = num(x),
            t = num(top),
            b = num(bottom),
            ty = num(bottom + 14.0),
            k25 = k * 25
        );
    }
    out.push_str("</g>");
}

fn open_svg(out: &mut String, height: f64, class: &str, label: &str) {
    let _ = write!(
        out,
        "<svg class=\"chart {class}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{l}\">",
        w = num(WIDTH),
        h = num(height),
        l = esc(label)
    );
}

/// One configuration's figures for the gap chart.
pub struct GapRow<'a> {
    pub config: &'a str,
    pub file_coverage: f64,
    pub block_coverage: f64,
    pub gap_pp: f64,
}

/// Per configuration: file coverage and block coverage as paired bars, the gap between them
/// hatched, and the gap in percentage points on the right.
pub fn gap_chart(rows: &[GapRow]) -> String {
    const BAR: f64 = 14.0;
    const ROW: f64 = 2.0 * BAR + 18.0;
    const TOP: f64 = 30.0;
    let bottom = TOP + ROW * rows.len() as f64;
    let mut out = String::new();
    open_svg(
        &mut out,
        bottom + 24.0,
        "gap-chart",
        "Localization gap: file coverage and block coverage per configuration",
    );
    out.push_str(
        "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#555\" stroke-width=\"1.5\"/></pattern></defs>",
    );
    // Legend.
    let _ = write!(
        out,
        "<g class=\"legend\"><rect x=\"{x0}\" y=\"6\" width=\"12\" height=\"12\" fill=\"#777\" fill-opacity=\"0.35\"/><text x=\"{t0}\" y=\"16\">file coverage</text><rect x=\"{x1}\" y=\"6\" width=\"12\" height=\"12\" fill=\"#777\"/><text x=\"{t1}\" y=\"16\">block coverage</text><rect x=\"{x2}\" y=\"6\" width=\"12\" height=\"12\" fill=\"url(#hatch)\"/><text x=\"{t2}\" y=\"16\">gap (file found, block missed)</text></g>",
        x0 = num(AXIS_X),
        t0 = num(AXIS_X + 16.0),
        x1 = num(AXIS_X + 110.0),
        t1 = num(AXIS_X + 126.0),
        x2 = num(AXIS_X + 230.0),
        t2 = num(AXIS_X + 246.0),
    );
    axis(&mut out, TOP - 4.0, bottom);
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let c = colour(i);
        let _ = write!(
            out,
            "<g class=\"gap-config\" data-config=\"{}\">",
            esc(r.config)
        );
        row_label(&mut out, y + BAR, r.config, "name");
        let fx = x_of(r.file_coverage);
        let bx = x_of(r.block_coverage);
        let _ = write!(
            out,
            "<rect class=\"bar file-coverage\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{c}\" fill-opacity=\"0.35\"><title>file coverage {v}</title></rect><text class=\"value file-coverage\" x=\"{tx}\" y=\"{ty}\" dominant-baseline=\"middle\">{v}</text>",
            x = num(AXIS_X),
            y = num(y),
            w = num(fx - AXIS_X),
            h = num(BAR),
            tx = num(fx + 4.0),
            ty = num(y + BAR / 2.0),
            v = pct(r.file_coverage)
        );
        let by = y + BAR + 2.0;
        let _ = write!(
            out,
            "<rect class=\"bar block-coverage\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{c}\"><title>block coverage {v}</title></rect>",
            x = num(AXIS_X),
            y = num(by),
            w = num(bx - AXIS_X),
            h = num(BAR),
            v = pct(r.block_coverage)
        );
        let (lo, hi) = (fx.min(bx), fx.max(bx));
        if hi - lo > 0.05 {
            let _ = write!(
                out,
                "<rect class=\"gap-span\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#hatch)\"/>",
                num(lo),
                num(by),
                num(hi - lo),
                num(BAR)
            );
        }
        let _ = write!(
            out,
            "<text class=\"value block-coverage\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>",
            num(hi + 4.0),
            num(by + BAR / 2.0),
            pct(r.block_coverage)
        );
        let _ = write!(
            out,
            "<text class=\"gap-label\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">gap {} pp</text></g>",
            num(AXIS_X + AXIS_W + 60.0),
            num(y + BAR + 1.0),
            gap(r.gap_pp)
        );
    }
    out.push_str("</svg>");
    out
}

/// One evidence group: its key, its heading, and each configuration's score over it
/// (`None` when no incident of the configuration falls in the group).
pub struct EvidenceGroup<'a> {
    pub key: &'a str,
    pub title: &'a str,
    pub scores: Vec<(&'a str, Option<GroupScore>)>,
}

/// Block coverage per evidence group and configuration: a bar for the mean and a whisker for
/// the 95% interval, the figures and the number of incidents on the right.
pub fn evidence_chart(groups: &[EvidenceGroup]) -> String {
    const BAR: f64 = 12.0;
    const ROW: f64 = 20.0;
    const HEAD: f64 = 24.0;
    const TOP: f64 = 10.0;
    let rows: usize = groups.iter().map(|g| g.scores.len()).sum();
    let bottom = TOP + HEAD * groups.len() as f64 + ROW * rows as f64 + 6.0;
    let mut out = String::new();
    open_svg(
        &mut out,
        bottom + 24.0,
        "evidence-chart",
        "Block coverage by report evidence, with 95% intervals",
    );
    axis(&mut out, TOP, bottom);
    let mut y = TOP;
    for g in groups {
        let _ = write!(
            out,
            "<g class=\"evidence-group\" data-group=\"{}\"><text class=\"group-title\" x=\"8\" y=\"{}\">{}</text>",
            esc(g.key),
            num(y + 16.0),
            esc(g.title)
        );
        y += HEAD;
        for (i, (config, score)) in g.scores.iter().enumerate() {
            let mid = y + ROW / 2.0;
            let _ = write!(
                out,
                "<g class=\"evidence-bar\" data-config=\"{}\">",
                esc(config)
            );
            row_label(&mut out, mid, config, "name");
            match score {
                Some(s) => {
                    let m = &s.block_coverage;
                    let (lo, hi) = (x_of(m.ci95[0]), x_of(m.ci95[1]));
                    let _ = write!(
                        out,
                        "<rect class=\"bar\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{c}\" fill-opacity=\"0.8\"/><line class=\"whisker\" x1=\"{lo}\" y1=\"{mid}\" x2=\"{hi}\" y2=\"{mid}\"/><line class=\"cap\" x1=\"{lo}\" y1=\"{t}\" x2=\"{lo}\" y2=\"{b}\"/><line class=\"cap\" x1=\"{hi}\" y1=\"{t}\" x2=\"{hi}\" y2=\"{b}\"/><text class=\"value\" x=\"{tx}\" y=\"{mid}\" dominant-baseline=\"middle\">{v} · n={n}</text>",
                        x = num(AXIS_X),
                        y = num(mid - BAR / 2.0),
                        w = num(x_of(m.mean) - AXIS_X),
                        h = num(BAR),
                        c = colour(i),
                        lo = num(lo),
                        hi = num(hi),
                        mid = num(mid),
                        t = num(mid - 5.0),
                        b = num(mid + 5.0),
                        tx = num(AXIS_X + AXIS_W + 12.0),
                        v = with_ci(m),
                        n = s.incidents
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        "<text class=\"value none\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">no incidents in this group</text>",
                        num(AXIS_X + 6.0),
                        num(mid)
                    );
                }
            }
            out.push_str("</g>");
            y += ROW;
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
}

/// Per incident of one configuration: the block coverage of each scored attempt as a dot,
/// the range between them as a line, and the standard deviation on the right. Flaky incidents
/// (a span over 20 points) are shaded.
pub fn variation_chart(config: &str, index: usize, incidents: &[IncidentScore]) -> String {
    const ROW: f64 = 18.0;
    const TOP: f64 = 8.0;
    let bottom = TOP + ROW * incidents.len().max(1) as f64;
    let mut out = String::new();
    open_svg(
        &mut out,
        bottom + 24.0,
        "variation-chart",
        &format!("Run-to-run variation of block coverage per incident for {config}"),
    );
    let _ = write!(out, "<g data-config=\"{}\">", esc(config));
    for (r, inc) in incidents.iter().enumerate() {
        if inc.flaky {
            let _ = write!(
                out,
                "<rect class=\"flaky-row\" x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                num(TOP + ROW * r as f64),
                num(WIDTH),
                num(ROW)
            );
        }
    }
    axis(&mut out, TOP, bottom);
    let c = colour(index);
    for (r, inc) in incidents.iter().enumerate() {
        let mid = TOP + ROW * r as f64 + ROW / 2.0;
        let _ = write!(
            out,
            "<g class=\"variation\" data-incident=\"{}\">",
            esc(&inc.incident)
        );
        row_label(&mut out, mid, &inc.incident, "name");
        let scored: Vec<(u32, f64)> = inc
            .attempts
            .iter()
            .filter(|a| a.counted && !a.flagged)
            .map(|a| (a.attempt, a.block_coverage))
            .collect();
        if inc.status != IncidentStatus::Scored || scored.is_empty() {
            let _ = write!(
                out,
                "<text class=\"value none\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text></g>",
                num(AXIS_X + 6.0),
                num(mid),
                esc(inc.status.as_str())
            );
            continue;
        }
        let min = scored.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
        let max = scored.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
        let _ = write!(
            out,
            "<line class=\"range\" x1=\"{}\" y1=\"{m}\" x2=\"{}\" y2=\"{m}\" stroke=\"{c}\"/>",
            num(x_of(min)),
            num(x_of(max)),
            m = num(mid)
        );
        for (j, (k, v)) in scored.iter().enumerate() {
            // Equal values would hide each other: offset the dots a little in height.
            let dy = (j % 3) as f64 * 3.0 - 3.0;
            let _ = write!(
                out,
                "<circle class=\"attempt\" data-attempt=\"{k}\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{c}\"><title>attempt {k}: {}</title></circle>",
                num(x_of(*v)),
                num(mid + dy),
                pct(*v)
            );
        }
        let _ = write!(
            out,
            "<text class=\"value sd\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">sd {}{}</text></g>",
            num(AXIS_X + AXIS_W + 12.0),
            num(mid),
            pct(inc.coverage_sd),
            if inc.flaky { " · flaky" } else { "" }
        );
    }
    if incidents.is_empty() {
        let _ = write!(
            out,
            "<text class=\"value none\" x=\"{}\" y=\"{}\">no incidents</text>",
            num(AXIS_X + 6.0),
            num(TOP + ROW / 2.0)
        );
    }
    out.push_str("</g></svg>");
    out
}

/// A small inline bar for a table cell: the interval as a line, the mean as a dot.
pub fn ci_bar(m: &MeanCi, index: usize) -> String {
    const W: f64 = 100.0;
    let x = |v: f64| 2.0 + v.clamp(0.0, 1.0) * (W - 4.0);
    format!(
        "<svg class=\"ci-bar\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} 12\" width=\"{w}\" height=\"12\" aria-hidden=\"true\"><line x1=\"2\" y1=\"6\" x2=\"{e}\" y2=\"6\" class=\"track\"/><line x1=\"{lo}\" y1=\"6\" x2=\"{hi}\" y2=\"6\" class=\"interval\" stroke=\"{c}\"/><circle cx=\"{m}\" cy=\"6\" r=\"3\" fill=\"{c}\"/></svg>",
        w = num(W),
        e = num(W - 2.0),
        lo = num(x(m.ci95[0])),
        hi = num(x(m.ci95[1])),
        m = num(x(m.mean)),
        c = colour(index)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::protocol::AttemptSummary;

    /// The attribute `name` of the first element whose opening tag contains `marker`.
    fn attr(svg: &str, marker: &str, name: &str) -> f64 {
        let at = svg
            .find(marker)
            .unwrap_or_else(|| panic!("{marker} not in {svg}"));
        let tag_start = svg[..at].rfind('<').unwrap();
        let tag = &svg[tag_start..tag_start + svg[tag_start..].find('>').unwrap()];
        let key = format!(" {name}=\"");
        let v = &tag[tag.find(&key).unwrap() + key.len()..];
        v[..v.find('"').unwrap()].parse().unwrap()
    }

    fn mean_ci(mean: f64, lo: f64, hi: f64) -> MeanCi {
        MeanCi {
            mean,
            ci95: [lo, hi],
        }
    }

    fn group(n: usize, cov: MeanCi) -> GroupScore {
        GroupScore {
            incidents: n,
            block_coverage: cov,
            block_precision: cov,
            block_hit_rate: cov,
            file_coverage: cov,
            gap_pp: 0.0,
        }
    }

    #[test]
    fn gap_bars_are_as_long_as_the_coverages_and_the_gap_is_labelled() {
        let svg = gap_chart(&[
            GapRow {
                config: "a<b>",
                file_coverage: 0.875,
                block_coverage: 0.375,
                gap_pp: 50.0,
            },
            GapRow {
                config: "z",
                file_coverage: 0.25,
                block_coverage: 0.5,
                gap_pp: -25.0,
            },
        ]);
        assert_eq!(attr(&svg, "bar file-coverage", "width"), 0.875 * AXIS_W);
        assert_eq!(attr(&svg, "bar block-coverage", "width"), 0.375 * AXIS_W);
        assert!(svg.contains(">gap +50.0 pp</text>"));
        assert!(
            svg.contains(">gap -25.0 pp</text>"),
            "a negative gap keeps its sign"
        );
        assert!(svg.contains("data-config=\"a&lt;b&gt;\""));
        assert!(!svg.contains("a<b>"), "names are escaped");
        // The hatched gap spans from block to file coverage.
        assert_eq!(attr(&svg, "gap-span", "x"), x_of(0.375));
        assert_eq!(attr(&svg, "gap-span", "width"), 0.5 * AXIS_W);
    }

    #[test]
    fn whiskers_span_the_interval_and_empty_groups_say_so() {
        let svg = evidence_chart(&[
            EvidenceGroup {
                key: "cross-component",
                title: "cross-component",
                scores: vec![("cfg", Some(group(4, mean_ci(0.5, 0.25, 0.75))))],
            },
            EvidenceGroup {
                key: "causal-method-named",
                title: "causal method named",
                scores: vec![("cfg", None)],
            },
        ]);
        assert_eq!(attr(&svg, "class=\"whisker\"", "x1"), x_of(0.25));
        assert_eq!(attr(&svg, "class=\"whisker\"", "x2"), x_of(0.75));
        assert_eq!(attr(&svg, "class=\"bar\"", "width"), 0.5 * AXIS_W);
        assert!(svg.contains("50.0% [25.0, 75.0] · n=4"));
        assert!(svg.contains("no incidents in this group"));
    }

    fn incident(id: &str, covs: &[(f64, bool, bool)], sd: f64, flaky: bool) -> IncidentScore {
        IncidentScore {
            incident: id.into(),
            system: "S".into(),
            category: "logic".into(),
            tags: vec![],
            status: if covs
                .iter()
                .any(|(_, counted, flagged)| *counted && !flagged)
            {
                IncidentStatus::Scored
            } else {
                IncidentStatus::AllFlagged
            },
            block_coverage: 0.0,
            block_precision: 0.0,
            block_hit_rate: 0.0,
            file_coverage: 0.0,
            scored_attempts: 0,
            coverage_sd: sd,
            flaky,
            tokens_per_run: None,
            attempts: covs
                .iter()
                .enumerate()
                .map(|(k, (c, counted, flagged))| AttemptSummary {
                    attempt: k as u32 + 1,
                    schema_valid: true,
                    schema_error: None,
                    counted: *counted,
                    flagged: *flagged,
                    leakage: vec![],
                    block_coverage: *c,
                    block_precision: 0.0,
                    block_hit_rate: 0.0,
                    file_coverage: 0.0,
                    tokens: None,
                })
                .collect(),
        }
    }

    #[test]
    fn variation_draws_only_scored_attempts_and_shades_flaky_incidents() {
        let incs = [
            incident(
                "wobbly",
                &[(0.5, true, false), (1.0, true, true), (0.0, true, false)],
                0.25,
                true,
            ),
            incident("leaky", &[(1.0, true, true)], 0.0, false),
        ];
        let svg = variation_chart("cfg", 0, &incs);
        // Attempts 1 and 3 are drawn; attempt 2 was flagged and is not.
        assert_eq!(svg.matches("class=\"attempt\"").count(), 2);
        assert!(!svg.contains("data-attempt=\"2\""));
        assert_eq!(attr(&svg, "data-attempt=\"1\"", "cx"), x_of(0.5));
        assert_eq!(attr(&svg, "class=\"range\"", "x1"), x_of(0.0));
        assert_eq!(attr(&svg, "class=\"range\"", "x2"), x_of(0.5));
        assert!(svg.contains("sd 25.0% · flaky"));
        assert_eq!(svg.matches("class=\"flaky-row\"").count(), 1);
        assert!(svg.contains(">every counted attempt flagged</text>"));
    }

    #[test]
    fn long_names_are_shortened_with_the_full_name_as_tooltip() {
        let long = "a-configuration-name-that-goes-on-and-on";
        let svg = gap_chart(&[GapRow {
            config: long,
            file_coverage: 0.0,
            block_coverage: 0.0,
            gap_pp: 0.0,
        }]);
        assert!(svg.contains(&format!("<title>{long}</title>")));
        assert!(svg.contains(&format!("{}…</text>", &long[..NAME_CHARS - 1])));
        assert!(!svg.contains("gap-span"), "no gap, nothing hatched");
    }
}

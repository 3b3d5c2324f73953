//! The corpus at a glance: one row per incident (system, language, category, tags, labeled
//! blocks) and the corpus's shares next to the figures of the benchmark it serves, as text or
//! Markdown (`distdebug incidents table`).

use super::{Incident, RepositorySource};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The benchmark's real incidents per system (120 over 11 systems).
pub const BENCHMARK_SYSTEMS: [(&str, usize); 11] = [
    ("Ray", 21),
    ("Elasticsearch", 19),
    ("ZooKeeper", 18),
    ("TiKV", 11),
    ("HDFS", 10),
    ("Kubernetes", 10),
    ("etcd", 8),
    ("Kafka", 8),
    ("Ignite 3", 7),
    ("HBase", 5),
    ("Ignite", 3),
];
/// Shares of the benchmark's incidents, in percent: reports that never name the causal method,
/// evidence without a stack trace from inside the project, more than one causal block.
pub const BENCHMARK_NO_METHOD_NAMED_PCT: f64 = 69.0;
pub const BENCHMARK_NO_INTERNAL_TRACE_PCT: f64 = 63.0;
pub const BENCHMARK_MULTI_BLOCK_PCT: f64 = 45.0;
/// The median labeled block of the benchmark, in lines.
pub const BENCHMARK_MEDIAN_BLOCK_LINES: f64 = 5.0;

/// One incident as the table shows it.
#[derive(Debug, Clone)]
pub struct CorpusRow {
    pub id: String,
    pub system: String,
    pub language: String,
    pub category: String,
    pub tags: Vec<String>,
    pub upstream: bool,
    /// The length in lines of each labeled block, in labels.json order.
    pub label_lines: Vec<u32>,
}

impl CorpusRow {
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }
}

/// Loads the rows of the incident folders `dirs`; the first unreadable manifest or labels file
/// is the error (run `incidents validate` for all problems).
pub fn load_rows(dirs: &[PathBuf]) -> Result<Vec<CorpusRow>, String> {
    let mut rows = Vec::new();
    for d in dirs {
        let inc = Incident::load(d).map_err(|p| p.to_string())?;
        let labels = inc.load_labels().map_err(|p| p.to_string())?;
        let m = &inc.manifest;
        rows.push(CorpusRow {
            id: m.id.clone(),
            system: m.system.clone(),
            language: m.language.clone(),
            category: m.category.as_str().to_string(),
            tags: m.tags.clone(),
            upstream: matches!(m.repository, RepositorySource::Git { .. }),
            label_lines: labels
                .blocks
                .iter()
                .map(|b| b.end_line.saturating_sub(b.start_line) + 1)
                .collect(),
        });
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(rows)
}

/// The shares of a set of incidents that the benchmark's figures are compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct Shares {
    pub incidents: usize,
    pub no_method_named_pct: f64,
    pub no_internal_trace_pct: f64,
    pub multi_block_pct: f64,
    pub median_block_lines: f64,
}

pub fn shares<'a>(rows: impl IntoIterator<Item = &'a CorpusRow>) -> Shares {
    let rows: Vec<&CorpusRow> = rows.into_iter().collect();
    let n = rows.len();
    let pct = |k: usize| {
        if n == 0 {
            0.0
        } else {
            100.0 * k as f64 / n as f64
        }
    };
    let count = |f: &dyn Fn(&CorpusRow) -> bool| rows.iter().filter(|r| f(r)).count();
    let mut lines: Vec<u32> = rows.iter().flat_map(|r| r.label_lines.clone()).collect();
    lines.sort_unstable();
    let median = match lines.len() {
        0 => 0.0,
        l if l % 2 == 1 => f64::from(lines[l / 2]),
        l => (f64::from(lines[l / 2 - 1]) + f64::from(lines[l / 2])) / 2.0,
    };
    Shares {
        incidents: n,
        no_method_named_pct: pct(count(&|r| !r.has_tag("causal-method-named"))),
        no_internal_trace_pct: pct(count(&|r| r.has_tag("no-internal-stack-trace"))),
        multi_block_pct: pct(count(&|r| r.label_lines.len() > 1)),
        median_block_lines: median,
    }
}

/// One tab-separated line per incident: id, system, language, category, tags, #labels and
/// the lines of each label.
pub fn text_table(rows: &[CorpusRow]) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            r.id,
            r.system,
            r.language,
            r.category,
            r.tags.join(","),
            r.label_lines.len(),
            join_lines(&r.label_lines)
        ));
    }
    out
}

fn join_lines(lines: &[u32]) -> String {
    lines
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Markdown of docs/corpus.md's generated part: the incident tables (self-contained, then
/// upstream), the shares against the benchmark, and the count per system.
pub fn markdown(rows: &[CorpusRow]) -> String {
    let mut out = String::new();
    let (upstream, own): (Vec<&CorpusRow>, Vec<&CorpusRow>) = rows.iter().partition(|r| r.upstream);
    for (title, part) in [("Self-contained", &own), ("Upstream", &upstream)] {
        out.push_str(&format!("### {title} ({})\n\n", part.len()));
        out.push_str("| id | system | language | category | tags | #labels | lines per label |\n");
        out.push_str("|---|---|---|---|---|---|---|\n");
        for r in part.iter() {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                r.id,
                r.system,
                r.language,
                r.category,
                r.tags.join(", "),
                r.label_lines.len(),
                join_lines(&r.label_lines)
            ));
        }
        out.push('\n');
    }
    out.push_str(&shares_markdown(rows));
    out.push('\n');
    out.push_str(&systems_markdown(rows));
    out
}

fn shares_markdown(rows: &[CorpusRow]) -> String {
    let benchmark_systems: Vec<&str> = BENCHMARK_SYSTEMS.iter().map(|(s, _)| *s).collect();
    let from_benchmark = shares(
        rows.iter()
            .filter(|r| r.upstream && benchmark_systems.contains(&r.system.as_str())),
    );
    let upstream = shares(rows.iter().filter(|r| r.upstream));
    let all = shares(rows);
    let mut out = String::from("### Shares against the benchmark\n\n");
    out.push_str(&format!(
        "| measure | benchmark (120) | upstream from its systems ({}) | all upstream ({}) | all ({}) |\n",
        from_benchmark.incidents, upstream.incidents, all.incidents
    ));
    out.push_str("|---|---|---|---|---|\n");
    let sets = [&from_benchmark, &upstream, &all];
    let line = |what: &str, bench: String, cells: Vec<String>| {
        format!("| {what} | {bench} | {} |\n", cells.join(" | "))
    };
    let pct = |v: f64| format!("{v:.0}%");
    out.push_str(&line(
        "report never names the causal method",
        pct(BENCHMARK_NO_METHOD_NAMED_PCT),
        sets.iter().map(|s| pct(s.no_method_named_pct)).collect(),
    ));
    out.push_str(&line(
        "no stack trace from inside the project",
        pct(BENCHMARK_NO_INTERNAL_TRACE_PCT),
        sets.iter().map(|s| pct(s.no_internal_trace_pct)).collect(),
    ));
    out.push_str(&line(
        "more than one labeled block",
        pct(BENCHMARK_MULTI_BLOCK_PCT),
        sets.iter().map(|s| pct(s.multi_block_pct)).collect(),
    ));
    out.push_str(&line(
        "median lines per labeled block",
        BENCHMARK_MEDIAN_BLOCK_LINES.to_string(),
        sets.iter()
            .map(|s| s.median_block_lines.to_string())
            .collect(),
    ));
    out
}

fn systems_markdown(rows: &[CorpusRow]) -> String {
    let mut upstream: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.upstream) {
        *upstream.entry(r.system.as_str()).or_default() += 1;
    }
    let mut out = String::from(
        "### Incidents per system\n\n| system | benchmark | upstream here |\n|---|---|---|\n",
    );
    for (system, n) in BENCHMARK_SYSTEMS {
        let here = upstream.remove(system).unwrap_or(0);
        out.push_str(&format!("| {system} | {n} | {here} |\n"));
    }
    for (system, here) in upstream {
        out.push_str(&format!(
            "| {system} (not in the benchmark) | 0 | {here} |\n"
        ));
    }
    let own = rows.iter().filter(|r| !r.upstream).count();
    out.push_str(&format!(
        "| self-contained systems written for distdebug | 0 | {own} (not upstream) |\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, tags: &[&str], lines: &[u32]) -> CorpusRow {
        CorpusRow {
            id: id.into(),
            system: "ZooKeeper".into(),
            language: "java".into(),
            category: "logic".into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            upstream: true,
            label_lines: lines.to_vec(),
        }
    }

    #[test]
    fn shares_count_tags_blocks_and_the_median_block() {
        let rows = [
            row("a", &["no-internal-stack-trace"], &[3, 9]),
            row("b", &["internal-stack-trace", "causal-method-named"], &[5]),
            row("c", &["no-internal-stack-trace"], &[1]),
            row("d", &["no-internal-stack-trace"], &[20]),
        ];
        let s = shares(&rows);
        assert_eq!(s.incidents, 4);
        assert_eq!(s.no_method_named_pct, 75.0);
        assert_eq!(s.no_internal_trace_pct, 75.0);
        assert_eq!(s.multi_block_pct, 25.0);
        assert_eq!(s.median_block_lines, 5.0); // 1 3 5 9 20
        let md = markdown(&rows);
        assert!(
            md.contains("| a | ZooKeeper | java | logic | no-internal-stack-trace | 2 | 3, 9 |"),
            "{md}"
        );
        assert!(md.contains("| ZooKeeper | 18 | 4 |"), "{md}");
        assert!(
            md.contains("| report never names the causal method | 69% | 75% | 75% | 75% |"),
            "{md}"
        );
    }
}

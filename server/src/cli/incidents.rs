//! `distdebug incidents list`, `distdebug incidents validate [--deep]` and
//! `distdebug incidents table`.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::incident::{self, corpus_table, deep, validate::validate_incident, Incident};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum IncidentsCommand {
    /// One line per incident: id, system, language, category, #labels
    List {
        #[command(flatten)]
        dir: IncidentsDirArg,
    },
    /// Validate incidents (all under the incidents folder when no PATH is given)
    Validate {
        /// Incident folders or ids
        paths: Vec<String>,
        /// Also check label ranges, evidence stack frames and the fix commit against the code
        /// at the buggy revision (git-url incidents: when the repository cache holds it)
        #[arg(long)]
        deep: bool,
        #[command(flatten)]
        dir: IncidentsDirArg,
    },
    /// All incidents: id, system, language, category, tags, #labels, lines per label
    Table {
        /// Markdown tables with the corpus's shares against the benchmark (docs/corpus.md)
        #[arg(long)]
        markdown: bool,
        #[command(flatten)]
        dir: IncidentsDirArg,
    },
}

pub fn run(cmd: IncidentsCommand) -> CliResult {
    match cmd {
        IncidentsCommand::List { dir } => list(dir),
        IncidentsCommand::Validate { paths, dir, deep } => validate(paths, dir, deep),
        IncidentsCommand::Table { markdown, dir } => table(markdown, dir),
    }
}

fn all_incident_dirs(dir: &std::path::Path) -> Result<Vec<PathBuf>, CliError> {
    incident::list_incident_dirs(dir)
        .map_err(|e| CliError::bad_input(format!("{}: cannot list incidents: {e}", dir.display())))
}

fn list(dir: IncidentsDirArg) -> CliResult {
    let root = incident::incidents_dir(dir.dir.as_deref());
    let mut errors = Vec::new();
    for d in all_incident_dirs(&root)? {
        match Incident::load_for_listing(&d) {
            Ok(inc) => {
                let labels = inc
                    .load_labels()
                    .map(|l| l.blocks.len().to_string())
                    .unwrap_or_else(|_| "?".to_string());
                let m = &inc.manifest;
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    m.id,
                    m.system,
                    m.language,
                    m.category.as_str(),
                    labels
                );
            }
            Err(p) => errors.push(p.to_string()),
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

fn table(markdown: bool, dir: IncidentsDirArg) -> CliResult {
    let root = incident::incidents_dir(dir.dir.as_deref());
    let rows = corpus_table::load_rows(&all_incident_dirs(&root)?).map_err(CliError::bad_input)?;
    if markdown {
        print!("{}", corpus_table::markdown(&rows));
    } else {
        print!("{}", corpus_table::text_table(&rows));
    }
    Ok(())
}

fn validate(paths: Vec<String>, dir: IncidentsDirArg, deep: bool) -> CliResult {
    let root = incident::incidents_dir(dir.dir.as_deref());
    let dirs = if paths.is_empty() {
        all_incident_dirs(&root)?
    } else {
        let mut v = Vec::new();
        for p in &paths {
            let as_path = PathBuf::from(p);
            // A folder given by path is validated even when its incident.json is missing,
            // so that the error names what is missing.
            if as_path.is_dir() {
                v.push(as_path);
            } else {
                v.push(incident::resolve_incident_dir(p, &root).map_err(CliError::bad_input)?);
            }
        }
        v
    };
    let mut problems = Vec::new();
    let mut summary = DeepSummary::default();
    for d in &dirs {
        let mut shape = validate_incident(d);
        if deep {
            let found = deep_problems(d, &mut summary);
            // Where both checks found a problem at one place (a label range), the deep one
            // says more (e.g. that the file's content is missing from the cache, not the file).
            shape.retain(|s| {
                !found
                    .iter()
                    .any(|p| p.file == s.file && p.location == s.location)
            });
            shape.extend(found);
        }
        problems.extend(shape.into_iter().map(|p| p.to_string()));
    }
    if deep {
        summary.print();
    }
    if problems.is_empty() {
        eprintln!("{} incident(s) valid", dirs.len());
        Ok(())
    } else {
        Err(CliError {
            status: 1,
            messages: problems,
        })
    }
}

/// What `validate --deep` checked, for the closing lines on stderr.
#[derive(Default)]
struct DeepSummary {
    checked: usize,
    frames_checked: usize,
    frames_external: usize,
    calls_checked: usize,
    not_cached: Vec<String>,
    notes: Vec<String>,
}

impl DeepSummary {
    fn print(&self) {
        eprintln!(
            "deep check: {} incident(s) checked against their code ({} stack frame(s) in the project checked, {} outside it skipped, {} JVM caller line(s) checked for the call)",
            self.checked, self.frames_checked, self.frames_external, self.calls_checked
        );
        for n in &self.notes {
            eprintln!("note: {n}");
        }
        if !self.not_cached.is_empty() {
            eprintln!(
                "not checked deeply, the repository cache lacks the buggy commit ({} incident(s); fill it with `distdebug cache add <url> <mirror>` or one `distdebug prepare` online):",
                self.not_cached.len()
            );
            for id in &self.not_cached {
                eprintln!("  {id}");
            }
        }
    }
}

/// The deep check of one incident whose manifest loads.
fn deep_problems(dir: &std::path::Path, summary: &mut DeepSummary) -> Vec<incident::Problem> {
    let Ok(inc) = Incident::load(dir) else {
        return Vec::new(); // the shape check reported it
    };
    match deep::deep_check(&inc) {
        deep::DeepOutcome::NotCached(_) => {
            summary.not_cached.push(inc.id().to_string());
            Vec::new()
        }
        deep::DeepOutcome::Checked(f) => {
            summary.checked += 1;
            summary.frames_checked += f.frames_checked;
            summary.frames_external += f.frames_external;
            summary.calls_checked += f.calls_checked;
            summary.notes.extend(f.notes);
            f.problems
        }
    }
}

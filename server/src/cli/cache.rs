//! `distdebug cache add <url> <mirror>` and `distdebug cache list`: the repository cache that
//! git-url incidents are prepared from, filled from local mirrors on machines without network.

use super::{CliError, CliResult, IncidentsDirArg};
use crate::incident::repo_cache::{cache_path, cache_root, ensure_commit};
use crate::incident::repo_mirror::{add_from_mirror, cached_repositories};
use crate::incident::{self, Incident, RepositorySource};
use clap::Subcommand;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Fill the cache entry of <URL> from a local bare repository or clone (idempotent)
    Add {
        /// The repository URL the incidents name, e.g. https://github.com/apache/kafka.git
        url: String,
        /// A local bare repository (mirror) or clone of it
        mirror: PathBuf,
        /// Borrow the mirror's objects instead of linking or copying them (keep the mirror then)
        #[arg(long)]
        shared: bool,
        #[command(flatten)]
        dir: IncidentsDirArg,
    },
    /// What the cache holds, which incidents each entry serves, and which have no entry
    List {
        #[command(flatten)]
        dir: IncidentsDirArg,
    },
}

pub fn run(cmd: CacheCommand) -> CliResult {
    match cmd {
        CacheCommand::Add {
            url,
            mirror,
            shared,
            dir,
        } => add(&url, &mirror, shared, dir),
        CacheCommand::List { dir } => list(dir),
    }
}

/// The git-url incidents under the incidents folder, as (id, url, commit); unreadable
/// manifests are skipped here (`incidents validate` reports them).
fn git_incidents(dir: &IncidentsDirArg) -> Vec<(String, String, String)> {
    let root = incident::incidents_dir(dir.dir.as_deref());
    let dirs = incident::list_incident_dirs(&root).unwrap_or_default();
    dirs.iter()
        .filter_map(|d| Incident::load(d).ok())
        .filter_map(|inc| match &inc.manifest.repository {
            RepositorySource::Git { url, commit } => {
                Some((inc.id().to_string(), url.clone(), commit.clone()))
            }
            RepositorySource::Path(_) => None,
        })
        .collect()
}

fn add(url: &str, mirror: &std::path::Path, shared: bool, dir: IncidentsDirArg) -> CliResult {
    let added = add_from_mirror(url, mirror, shared).map_err(CliError::bad_input)?;
    println!(
        "{} {} from {} ({} object file(s) {}, {} refs)",
        if added.created { "created" } else { "updated" },
        added.path.display(),
        mirror.display(),
        added.files_added,
        if shared { "borrowed" } else { "added" },
        added.refs
    );
    let served: Vec<_> = git_incidents(&dir)
        .into_iter()
        .filter(|(_, u, _)| cache_path(&cache_root(), u) == added.path)
        .collect();
    let missing: Vec<_> = served
        .iter()
        .filter(|(_, u, c)| ensure_commit(u, c, true).is_err())
        .collect();
    println!(
        "it serves {} incident(s); {} of them lack their buggy commit",
        served.len(),
        missing.len()
    );
    for (id, _, commit) in &missing {
        println!("  {id}: commit {commit} is not in {}", mirror.display());
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(CliError::bad_input(format!(
            "{} does not hold the buggy commit of {} incident(s); is it a mirror of {url}, and up to date?",
            mirror.display(),
            missing.len()
        )))
    }
}

fn list(dir: IncidentsDirArg) -> CliResult {
    let root = cache_root();
    println!("repository cache: {}", root.display());
    let mut by_entry: BTreeMap<PathBuf, Vec<(String, String, String)>> = BTreeMap::new();
    for inc in git_incidents(&dir) {
        by_entry
            .entry(cache_path(&root, &inc.1))
            .or_default()
            .push(inc);
    }
    let mut uncached: Vec<String> = Vec::new();
    for entry in cached_repositories(&root) {
        let rel = entry
            .strip_prefix(&root)
            .unwrap_or(&entry)
            .display()
            .to_string();
        let incidents = by_entry.remove(&entry).unwrap_or_default();
        let (ready, lacking): (Vec<_>, Vec<_>) = incidents
            .iter()
            .partition(|(_, u, c)| ensure_commit(u, c, true).is_ok());
        println!("{rel}: serves {} incident(s)", ready.len());
        for (id, _, _) in &ready {
            println!("  {id}");
        }
        for (id, url, commit) in lacking {
            uncached.push(format!("{id}: {url} lacks commit {commit}"));
        }
    }
    for incidents in by_entry.into_values() {
        for (id, url, _) in incidents {
            uncached.push(format!("{id}: {url} is not cached"));
        }
    }
    uncached.sort();
    println!(
        "incidents without their repository in the cache: {}",
        uncached.len()
    );
    for u in &uncached {
        println!("  {u}");
    }
    if !uncached.is_empty() {
        println!(
            "add one with `distdebug cache add <url> <local mirror>`, or run `distdebug prepare <id>` once with network"
        );
    }
    Ok(())
}

//! Prepared workspaces kept between evaluation runs: `<work>/<id>/`, re-made only when the
//! incident's revision, report or evidence changed (a stamp beside the workspace says which).

use crate::incident::prepare::{prepare_workspace, PrepareOptions};
use crate::incident::{repo_cache, Incident, RepositorySource};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// Why an incident cannot be evaluated here (its repository is not in the cache).
pub fn unavailable(incident: &Incident) -> Option<String> {
    match &incident.manifest.repository {
        RepositorySource::Path(_) => None,
        RepositorySource::Git { url, commit } => repo_cache::ensure_commit(url, commit, true)
            .err()
            .map(|_| format!("{url} at {commit} is not in the repository cache")),
    }
}

/// What the workspace is made of: the revision, the report and the evidence. Self-contained
/// incidents are small and always re-made.
fn stamp(incident: &Incident) -> Option<String> {
    let RepositorySource::Git { url, commit } = &incident.manifest.repository else {
        return None;
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    url.hash(&mut h);
    commit.hash(&mut h);
    let m = &incident.manifest;
    for rel in std::iter::once(&m.report).chain(m.evidence.iter()) {
        rel.hash(&mut h);
        std::fs::read(incident.dir.join(rel)).ok().hash(&mut h);
    }
    Some(format!("{commit} {:016x}\n", h.finish()))
}

/// The prepared workspace of `incident` under `work`, made (offline) when missing or stale.
pub fn ensure(incident: &Incident, work: &Path) -> Result<PathBuf, String> {
    let out = work.join(incident.id());
    let stamp_file = work.join(format!("{}.stamp", incident.id()));
    let want = stamp(incident);
    if let Some(w) = &want {
        let have = std::fs::read_to_string(&stamp_file).ok();
        if have.as_deref() == Some(w.as_str()) && out.join(".distdebug/workspace.json").is_file() {
            return Ok(out);
        }
    }
    std::fs::create_dir_all(work).map_err(|e| format!("{}: cannot create: {e}", work.display()))?;
    let opts = PrepareOptions {
        force: true,
        offline: true,
    };
    prepare_workspace(incident, &out, &opts)?;
    if let Some(w) = want {
        crate::util::fs::write_atomic(&stamp_file, w.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", stamp_file.display()))?;
    }
    Ok(out)
}

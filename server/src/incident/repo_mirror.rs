//! Filling the repository cache from a local mirror (a bare repository or a clone), for
//! machines without network: the mirror's pack files are linked or copied into the cache entry
//! (or, with `shared`, borrowed through `objects/info/alternates`) and all its refs recorded.

use super::repo_cache::{cache_path, cache_root};
use git2::Repository;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `add_from_mirror` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorAdded {
    /// The cache entry, `<root>/<host>/<owner>/<name>.git`.
    pub path: PathBuf,
    /// Whether the entry was created now (false: it existed and was updated).
    pub created: bool,
    /// Object files (packs and loose objects) linked or copied now.
    pub files_added: usize,
    /// Refs the entry holds after the update.
    pub refs: usize,
}

/// Adds the repository at `mirror` to the cache as the repository of `url`. Running it again
/// adds only what is new. With `shared`, objects stay in the mirror (like `git clone --shared`),
/// so the mirror must be kept; without it the entry stands alone.
pub fn add_from_mirror(url: &str, mirror: &Path, shared: bool) -> Result<MirrorAdded, String> {
    let src = Repository::open(mirror).map_err(|e| {
        format!(
            "{}: not a git repository ({}); expected a bare repository or a clone",
            mirror.display(),
            e.message()
        )
    })?;
    let src_objects = src
        .path()
        .join("objects")
        .canonicalize()
        .map_err(|e| format!("{}: cannot read its objects: {e}", mirror.display()))?;
    let dest = cache_path(&cache_root(), url);
    let created = !dest.exists();
    if created {
        create_bare_atomically(&dest)?;
    }
    let repo = Repository::open_bare(&dest).map_err(|e| {
        format!(
            "{}: exists but is not a bare git repository ({}); remove it and try again",
            dest.display(),
            e.message()
        )
    })?;
    let mut files_added = 0;
    let mut alternates: Vec<String> = read_lines(&src_objects.join("info/alternates"));
    if shared {
        alternates.insert(0, src_objects.to_string_lossy().into_owned());
    } else {
        files_added = copy_objects(&src_objects, &dest.join("objects"))?;
    }
    add_alternates(&dest.join("objects/info/alternates"), &alternates)?;
    // A shallow fetch marked its commits as history boundaries; a whole mirror removes them.
    let shallow = dest.join("shallow");
    if !src.is_shallow() && shallow.exists() {
        std::fs::remove_file(&shallow)
            .map_err(|e| format!("{}: cannot remove: {e}", shallow.display()))?;
    }
    let refs = merge_refs(&src, &repo, &dest)?;
    Ok(MirrorAdded {
        path: dest,
        created,
        files_added,
        refs,
    })
}

/// Makes an empty bare repository at `dest` by building it beside and renaming it into place,
/// so that an interrupted add leaves no half-made entry behind.
fn create_bare_atomically(dest: &Path) -> Result<(), String> {
    let parent = dest
        .parent()
        .ok_or_else(|| format!("{}: has no parent folder", dest.display()))?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("{}: cannot create: {e}", parent.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(".distdebug-cache-")
        .tempdir_in(parent)
        .map_err(|e| format!("{}: cannot make a temp folder: {e}", parent.display()))?;
    Repository::init_bare(tmp.path())
        .map_err(|e| format!("{}: cannot create a bare repository: {e}", dest.display()))?;
    let staged = tmp.keep();
    std::fs::rename(&staged, dest).map_err(|e| {
        let _ = std::fs::remove_dir_all(&staged);
        format!(
            "{}: cannot move the new repository into place: {e}",
            dest.display()
        )
    })
}

/// Links (or, across file systems, copies) every pack file and loose object the cache entry
/// lacks. Pack files never change once written, so sharing their inodes is safe; each file is
/// written under a temp name and renamed, and a pack's `.idx` comes after its `.pack`.
fn copy_objects(src: &Path, dest: &Path) -> Result<usize, String> {
    let mut added = 0;
    let pack_src = src.join("pack");
    if pack_src.is_dir() {
        let mut names: Vec<String> = list_names(&pack_src)?;
        // `.idx` makes git see the pack, so it comes after the `.pack` it indexes.
        names.sort_by_key(|n| (n.ends_with(".idx"), n.clone()));
        std::fs::create_dir_all(dest.join("pack"))
            .map_err(|e| format!("{}: cannot create: {e}", dest.display()))?;
        for name in names {
            added += usize::from(link_or_copy(
                &pack_src.join(&name),
                &dest.join("pack").join(&name),
            )?);
        }
    }
    for dir in list_names(src)? {
        if dir.len() != 2 || !dir.chars().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        std::fs::create_dir_all(dest.join(&dir))
            .map_err(|e| format!("{}: cannot create: {e}", dest.display()))?;
        for name in list_names(&src.join(&dir))? {
            added += usize::from(link_or_copy(
                &src.join(&dir).join(&name),
                &dest.join(&dir).join(&name),
            )?);
        }
    }
    Ok(added)
}

fn list_names(dir: &Path) -> Result<Vec<String>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
        if e.file_type()
            .map(|t| t.is_file() || t.is_dir())
            .unwrap_or(false)
        {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(out)
}

/// True when the file was added, false when the destination already had it.
fn link_or_copy(from: &Path, to: &Path) -> Result<bool, String> {
    if to.exists() || from.is_dir() {
        return Ok(false);
    }
    let tmp = to.with_extension("distdebug-tmp");
    let _ = std::fs::remove_file(&tmp);
    if std::fs::hard_link(from, &tmp).is_err() {
        std::fs::copy(from, &tmp)
            .map_err(|e| format!("{}: cannot copy to {}: {e}", from.display(), tmp.display()))?;
    }
    std::fs::rename(&tmp, to).map_err(|e| format!("{}: cannot write: {e}", to.display()))?;
    Ok(true)
}

fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| {
            t.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Adds the object folders to the entry's `objects/info/alternates` that it does not list yet.
fn add_alternates(file: &Path, extra: &[String]) -> Result<(), String> {
    let mut lines = read_lines(file);
    let before = lines.len();
    for a in extra {
        if !lines.contains(a) {
            lines.push(a.clone());
        }
    }
    if lines.len() == before {
        return Ok(());
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    crate::util::fs::write_atomic(file, text.as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", file.display()))
}

/// Records every ref of the mirror in the entry's `packed-refs` (a mirror may hold tens of
/// thousands, too many for one file each), keeping the refs the entry had. Refs keep the
/// objects reachable, so a `git gc` in the cache does not drop them.
fn merge_refs(src: &Repository, repo: &Repository, dest: &Path) -> Result<usize, String> {
    let mut refs: BTreeMap<String, String> = BTreeMap::new();
    let mut collect = |r: &Repository, what: &Path| -> Result<(), String> {
        let iter = r
            .references()
            .map_err(|e| format!("{}: cannot list refs: {e}", what.display()))?;
        for reference in iter.flatten() {
            if let (Ok(name), Some(oid)) = (reference.name(), reference.target()) {
                if name.starts_with("refs/") {
                    refs.insert(name.to_string(), oid.to_string());
                }
            }
        }
        Ok(())
    };
    collect(repo, dest)?;
    collect(src, src.path())?;
    let mut text = String::from("# pack-refs with: sorted \n");
    for (name, oid) in &refs {
        text.push_str(&format!("{oid} {name}\n"));
    }
    let file = dest.join("packed-refs");
    crate::util::fs::write_atomic(&file, text.as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", file.display()))?;
    Ok(refs.len())
}

/// The cache entries under `root`: every `*.git` folder up to `<host>/<owner>/<name>.git`.
pub fn cached_repositories(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        for d in dirs {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.starts_with('.') {
                continue; // temp folders of an add in progress
            }
            if name.ends_with(".git") {
                out.push(d);
            } else if depth < 6 {
                walk(&d, depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, 0, &mut out);
    out
}

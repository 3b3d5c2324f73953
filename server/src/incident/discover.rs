//! Finding incidents: the incidents folder (`--dir`, `$DISTDEBUG_INCIDENTS`, `./incidents`)
//! and an incident named by id or by path.

use std::path::{Path, PathBuf};

/// The folder that holds the incidents: the flag, else `$DISTDEBUG_INCIDENTS`, else `incidents/`.
pub fn incidents_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(d) = flag {
        return d.to_path_buf();
    }
    match std::env::var_os("DISTDEBUG_INCIDENTS") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from("incidents"),
    }
}

/// Every incident folder directly under `dir`, sorted by name. Hidden folders are skipped. A
/// symbolic link to a folder counts as the folder (a subset of a corpus is often a folder of
/// links); a link that leads nowhere is skipped like a file.
pub fn list_incident_dirs(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        let is_dir = kind.is_dir() || (kind.is_symlink() && entry.path().is_dir());
        if is_dir {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

/// Resolves `<incident>` as the command line documents it: a path to an incident folder (one holding
/// `incident.json`), else an id under `dir`.
pub fn resolve_incident_dir(arg: &str, dir: &Path) -> Result<PathBuf, String> {
    let as_path = Path::new(arg);
    if as_path.join("incident.json").is_file() {
        return Ok(as_path.to_path_buf());
    }
    let under = dir.join(arg);
    if under.join("incident.json").is_file() {
        return Ok(under);
    }
    if as_path.is_dir() {
        return Err(format!(
            "{arg}: not an incident folder (no incident.json inside)"
        ));
    }
    Err(format!(
        "no incident {arg:?}: neither a folder with incident.json nor an id under {}",
        dir.display()
    ))
}

// Symbolic links are made with the Unix call.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn lists_folders_and_links_to_folders_but_not_files_hidden_or_dangling_links() {
        let root = std::env::temp_dir().join(format!("dd-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(root.join("corpus/b-real")).unwrap();
        std::fs::create_dir_all(root.join("corpus/.hidden")).unwrap();
        std::fs::create_dir_all(elsewhere.join("a-linked")).unwrap();
        std::fs::write(root.join("corpus/notes.md"), "x").unwrap();
        std::os::unix::fs::symlink(elsewhere.join("a-linked"), root.join("corpus/a-linked"))
            .unwrap();
        std::os::unix::fs::symlink(root.join("missing"), root.join("corpus/c-dangling")).unwrap();
        let names: Vec<String> = list_incident_dirs(&root.join("corpus"))
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["a-linked", "b-real"]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}

//! The incident workspace the server has open: a folder made by `distdebug prepare` (it holds
//! `.distdebug/workspace.json`), the mapping between URIs and repository-relative paths, where
//! results go, and the line facts of files that are not open in the editor.

use crate::incident::prepare::{WorkspaceInfo, META_DIR};
use crate::util::paths::normalize_rel;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use tower_lsp_server::ls_types::Uri;

/// What the server needs to know of a file that is not open: its line count and the width of
/// its last line (the only line whose end a diagnostic cannot express as "start of the next").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileInfo {
    pub lines: u32,
    pub last_line_utf8: u32,
    pub last_line_utf16: u32,
}

impl FileInfo {
    pub fn from_bytes(bytes: &[u8]) -> FileInfo {
        let lines = crate::util::text::line_count(bytes);
        let mut body = bytes;
        if let Some(b) = body.strip_suffix(b"\n") {
            body = b;
        }
        let start = body
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        let mut last = &body[start..];
        if let Some(l) = last.strip_suffix(b"\r") {
            last = l;
        }
        let text = String::from_utf8_lossy(last);
        FileInfo {
            lines,
            last_line_utf8: text.len() as u32,
            last_line_utf16: text.chars().map(|c| c.len_utf16() as u32).sum(),
        }
    }
}

#[derive(Debug)]
pub struct Workspace {
    pub root: PathBuf,
    /// The root with links resolved, to recognise URIs a client built from the real path.
    canonical: PathBuf,
    pub info: WorkspaceInfo,
    /// The results root: `<results>/<config>/<incident>/attempt-<k>/`.
    pub results: PathBuf,
    files: HashMap<String, Option<FileInfo>>,
    uris: HashMap<String, Uri>,
}

impl Workspace {
    /// Whether `folder` is a prepared workspace (it has `.distdebug/workspace.json`).
    pub fn is_prepared(folder: &Path) -> bool {
        folder.join(META_DIR).join("workspace.json").is_file()
    }

    /// Opens the prepared workspace at `root`. `results` overrides where attempts are kept
    /// (default: `results/` beside the workspace, so that agents working inside the
    /// workspace never see earlier attempts).
    pub fn open(root: &Path, results: Option<&Path>) -> Result<Workspace, String> {
        let info = WorkspaceInfo::load(root)?;
        let root = absolute(root);
        let canonical = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        let results = match results {
            Some(r) => absolute(r),
            None => root
                .parent()
                .map(|p| p.join("results"))
                .unwrap_or_else(|| root.join(META_DIR).join("results")),
        };
        Ok(Workspace {
            root,
            canonical,
            info,
            results,
            files: HashMap::new(),
            uris: HashMap::new(),
        })
    }

    /// The repository-relative path (with `/`) of a file inside the workspace.
    pub fn rel_path(&self, path: &Path) -> Option<String> {
        let rel = path
            .strip_prefix(&self.root)
            .or_else(|_| path.strip_prefix(&self.canonical))
            .ok()?;
        let s = normalize_rel(&rel.to_string_lossy());
        (!s.is_empty()).then_some(s)
    }

    pub fn rel_path_of_uri(&self, uri: &str) -> Option<String> {
        self.rel_path(&uri_to_path(uri)?)
    }

    pub fn abs_path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn uri_of(&self, rel: &str) -> Option<Uri> {
        Uri::from_file_path(self.abs_path(rel))
    }

    /// `uri_of`, remembered: publishing asks for the same files again and again.
    pub fn cached_uri(&mut self, rel: &str) -> Option<Uri> {
        if let Some(u) = self.uris.get(rel) {
            return Some(u.clone());
        }
        let u = self.uri_of(rel)?;
        self.uris.insert(rel.to_string(), u.clone());
        Some(u)
    }

    /// The config folder of `config` in the results tree.
    pub fn config_dir(&self, config: &str) -> PathBuf {
        self.results.join(config)
    }

    /// Line facts of a file on disk, read once and cached; `None` when it does not exist.
    pub fn file_info(&mut self, rel: &str) -> Option<FileInfo> {
        if let Some(known) = self.files.get(rel) {
            return *known;
        }
        let info = std::fs::read(self.abs_path(rel))
            .ok()
            .map(|b| FileInfo::from_bytes(&b));
        self.files.insert(rel.to_string(), info);
        info
    }

    /// Reads the line facts of the files not known yet, in parallel: the first publication of
    /// a large attempt would otherwise read hundreds of files one after the other.
    pub fn prefetch(&mut self, rels: &[&str]) {
        use rayon::prelude::*;
        let missing: Vec<&str> = rels
            .iter()
            .copied()
            .filter(|r| !self.files.contains_key(*r))
            .collect();
        let root = &self.root;
        let read: Vec<(String, Option<FileInfo>)> = missing
            .par_iter()
            .map(|r| {
                let info = std::fs::read(root.join(r))
                    .ok()
                    .map(|b| FileInfo::from_bytes(&b));
                (r.to_string(), info)
            })
            .collect();
        self.files.extend(read);
    }

    /// Forgets what is cached of a file (it was saved or changed on disk).
    pub fn forget_file(&mut self, rel: &str) {
        self.files.remove(rel);
    }
}

/// The path of a `file:` URI; `None` for other schemes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    if !uri.starts_with("file:") {
        return None;
    }
    let parsed = Uri::from_str(uri).ok()?;
    parsed.to_file_path().map(|p| p.into_owned())
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_info_counts_lines_and_measures_the_last_one() {
        let f = FileInfo::from_bytes("a\nbé😀\n".as_bytes());
        assert_eq!((f.lines, f.last_line_utf8, f.last_line_utf16), (2, 7, 4));
        let f = FileInfo::from_bytes(b"a\r\nxyz");
        assert_eq!((f.lines, f.last_line_utf8), (2, 3));
        assert_eq!(FileInfo::from_bytes(b"").lines, 0);
    }

    #[test]
    fn maps_uris_to_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        let meta = dir.path().join(".distdebug");
        std::fs::create_dir_all(&meta).unwrap();
        std::fs::write(
            meta.join("workspace.json"),
            r#"{"incident":"x","system":"s","language":"go","report":".distdebug/report.md","evidence":[],"prepared_at":"","distdebug_version":""}"#,
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("src dir")).unwrap();
        std::fs::write(dir.path().join("src dir/a é.go"), "x\n").unwrap();
        let mut ws = Workspace::open(dir.path(), None).unwrap();
        let uri = ws.uri_of("src dir/a é.go").unwrap();
        assert!(uri.as_str().contains("%20"), "{}", uri.as_str());
        assert_eq!(
            ws.rel_path_of_uri(uri.as_str()).as_deref(),
            Some("src dir/a é.go")
        );
        assert_eq!(ws.rel_path_of_uri("untitled:Untitled-1"), None);
        assert_eq!(ws.file_info("src dir/a é.go").unwrap().lines, 1);
        assert_eq!(ws.file_info("missing.go"), None);
        assert_eq!(ws.results, dir.path().parent().unwrap().join("results"));
    }
}

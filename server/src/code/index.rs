//! The repository index: every text file of a workspace (respecting `.gitignore`, skipping
//! binaries, files over a size limit and symlinks that lead out of the workspace), read and
//! scanned for string literals in parallel. Files are parsed with tree-sitter on demand and
//! the result kept, so an agent pays for parsing only the files it looks at.

use super::blocks::FileModel;
use super::lang::Lang;
use super::lexer::{self, Literal};
use super::parse::parse_as;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Files larger than this are skipped (generated code, data dumps).
    pub max_file_bytes: u64,
}

impl Default for IndexOptions {
    fn default() -> IndexOptions {
        IndexOptions {
            max_file_bytes: 2 * 1024 * 1024,
        }
    }
}

/// One indexed file.
#[derive(Debug)]
pub struct SourceFile {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub lang: Lang,
    /// The contents; invalid UTF-8 replaced.
    pub text: String,
    pub line_count: u32,
    pub literals: Vec<Literal>,
}

/// Why files were left out, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub binary: usize,
    pub too_large: usize,
    pub unreadable: usize,
    pub symlink_outside: usize,
}

pub struct RepoIndex {
    pub root: PathBuf,
    pub files: Vec<SourceFile>,
    pub skipped: Skipped,
    by_path: HashMap<String, usize>,
    models: Vec<OnceLock<Arc<FileModel>>>,
}

enum Outcome {
    File(SourceFile),
    Skip(fn(&mut Skipped)),
}

impl RepoIndex {
    /// Indexes the workspace at `root`.
    pub fn build(root: &Path, opts: &IndexOptions) -> Result<RepoIndex, String> {
        let meta = std::fs::metadata(root)
            .map_err(|e| format!("{}: cannot read the workspace: {e}", root.display()))?;
        if !meta.is_dir() {
            return Err(format!("{}: expected a folder to index", root.display()));
        }
        let canonical_root = root
            .canonicalize()
            .map_err(|e| format!("{}: {e}", root.display()))?;
        let mut paths: Vec<(PathBuf, bool)> = Vec::new();
        let walker = ignore::WalkBuilder::new(root)
            .hidden(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .require_git(false)
            .parents(false)
            .follow_links(false)
            .build();
        for entry in walker.flatten() {
            let Some(ft) = entry.file_type() else {
                continue;
            };
            if ft.is_file() {
                paths.push((entry.into_path(), false));
            } else if ft.is_symlink() {
                paths.push((entry.into_path(), true));
            }
        }
        let outcomes: Vec<Outcome> = paths
            .par_iter()
            .map(|(p, link)| read_one(root, &canonical_root, p, *link, opts))
            .collect();
        let mut files = Vec::with_capacity(outcomes.len());
        let mut skipped = Skipped::default();
        for o in outcomes {
            match o {
                Outcome::File(f) => files.push(f),
                Outcome::Skip(count) => count(&mut skipped),
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(RepoIndex::assemble(root.to_path_buf(), files, skipped))
    }

    /// An index over files given in memory (tests, editors with unsaved buffers).
    pub fn from_texts(root: &Path, texts: Vec<(String, String)>) -> RepoIndex {
        let mut files: Vec<SourceFile> = texts
            .into_iter()
            .map(|(path, text)| make_file(path, text))
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        RepoIndex::assemble(root.to_path_buf(), files, Skipped::default())
    }

    fn assemble(root: PathBuf, files: Vec<SourceFile>, skipped: Skipped) -> RepoIndex {
        let by_path = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.clone(), i))
            .collect();
        let models = (0..files.len()).map(|_| OnceLock::new()).collect();
        RepoIndex {
            root,
            files,
            skipped,
            by_path,
            models,
        }
    }

    pub fn file_id(&self, rel_path: &str) -> Option<usize> {
        self.by_path
            .get(&crate::util::paths::normalize_rel(rel_path))
            .copied()
    }

    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.text.len() as u64).sum()
    }

    /// The parsed model of file `id`, parsed on first use.
    pub fn model(&self, id: usize) -> Arc<FileModel> {
        self.models[id]
            .get_or_init(|| {
                let f = &self.files[id];
                Arc::new(parse_as(f.lang, &f.text))
            })
            .clone()
    }

    /// Parses the given files in parallel (those not parsed yet).
    pub fn parse_many(&self, ids: &[usize]) {
        ids.par_iter().for_each(|&i| {
            self.model(i);
        });
    }

    /// Parses every file (benchmarks, tools that want all blocks); returns the block count.
    pub fn parse_all(&self) -> usize {
        (0..self.files.len())
            .into_par_iter()
            .map(|i| self.model(i).blocks.len())
            .sum()
    }

    /// Files whose path ends with `suffix` at a path-component boundary.
    pub fn files_ending_with(&self, suffix: &str) -> Vec<usize> {
        let suffix = crate::util::paths::normalize_rel(suffix);
        if suffix.is_empty() {
            return Vec::new();
        }
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.path == suffix
                    || f.path.ends_with(&suffix)
                        && f.path.as_bytes()[f.path.len() - suffix.len() - 1] == b'/'
            })
            .map(|(i, _)| i)
            .collect()
    }
}

fn read_one(
    root: &Path,
    canonical_root: &Path,
    path: &Path,
    is_link: bool,
    opts: &IndexOptions,
) -> Outcome {
    if is_link {
        // A link is indexed only when what it points to is a file inside the workspace.
        match path.canonicalize() {
            Ok(target) if target.starts_with(canonical_root) && target.is_file() => {}
            _ => return Outcome::Skip(|s| s.symlink_outside += 1),
        }
    }
    let size = match std::fs::metadata(path) {
        Ok(m) => m.len(),
        Err(_) => return Outcome::Skip(|s| s.unreadable += 1),
    };
    if size > opts.max_file_bytes {
        return Outcome::Skip(|s| s.too_large += 1);
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(_) => return Outcome::Skip(|s| s.unreadable += 1),
    };
    if is_binary(&bytes) {
        return Outcome::Skip(|s| s.binary += 1);
    }
    let rel = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Outcome::File(make_file(rel, text))
}

fn make_file(path: String, text: String) -> SourceFile {
    let lang = Lang::from_path(Path::new(&path));
    SourceFile {
        line_count: crate::util::text::line_count(text.as_bytes()),
        literals: lexer::literals(&text, lang),
        path,
        lang,
        text,
    }
}

/// A file is binary when its first 8 KiB hold a NUL byte (as git decides).
pub fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_text_files_and_skips_what_it_must() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/a.py"),
            "def f():\n    log.info('hello there')\n",
        )
        .unwrap();
        std::fs::write(root.join("src/blob.bin"), b"\x00\x01\x02abc").unwrap();
        std::fs::write(root.join("src/big.txt"), vec![b'a'; 5000]).unwrap();
        std::fs::write(
            root.join("src/latin1.java"),
            b"class A { String s = \"caf\xe9 ok\"; }\n",
        )
        .unwrap();
        std::fs::write(root.join("ignored.log"), "x").unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::create_dir_all(root.join(".distdebug")).unwrap();
        std::fs::write(root.join(".distdebug/report.md"), "secret").unwrap();
        std::fs::write(dir.path().join("outside.py"), "x = 1\n").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("outside.py"), root.join("out.py")).unwrap();
            std::os::unix::fs::symlink(root.join("src/a.py"), root.join("in.py")).unwrap();
        }
        let idx = RepoIndex::build(
            &root,
            &IndexOptions {
                max_file_bytes: 4096,
            },
        )
        .unwrap();
        let paths: Vec<_> = idx.files.iter().map(|f| f.path.as_str()).collect();
        #[cfg(unix)]
        assert_eq!(paths, ["in.py", "src/a.py", "src/latin1.java"]);
        assert_eq!(idx.skipped.binary, 1);
        assert_eq!(idx.skipped.too_large, 1);
        #[cfg(unix)]
        assert_eq!(idx.skipped.symlink_outside, 1);
        let a = idx.file_id("./src/a.py").unwrap();
        assert_eq!(idx.files[a].literals[0].text, "hello there");
        assert_eq!(idx.model(a).definitions()[0].name, "f");
        let j = idx.file_id("src/latin1.java").unwrap();
        assert!(idx.files[j].text.contains('\u{fffd}'));
        assert_eq!(idx.model(j).definitions()[0].name, "A");
        assert_eq!(idx.files_ending_with("a.py"), vec![1]);
        assert_eq!(idx.files_ending_with("src/a.py"), vec![1]);
        assert_eq!(idx.files_ending_with("c/a.py"), Vec::<usize>::new());
        assert!(idx.parse_all() >= 3);
    }

    #[test]
    fn a_missing_root_is_a_clear_error() {
        let err = RepoIndex::build(Path::new("/no/such/dir"), &IndexOptions::default())
            .err()
            .unwrap();
        assert!(err.contains("/no/such/dir"), "{err}");
    }
}

//! Repository-relative paths: normalisation and the check that a path stays inside its root.

/// Normalises a repository-relative path as the scoring rules compare them:
/// backslashes become `/`, leading and inner `./` components and empty components are dropped.
pub fn normalize_rel(path: &str) -> String {
    let unified = path.replace('\\', "/");
    unified
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// Why a path given as repository-relative is not acceptable, or `None` when it is.
/// A path must be relative (no leading `/`, no drive letter) and must not contain a `..`
/// component, so it can never leave the repository.
pub fn unsafe_rel_path_reason(path: &str) -> Option<String> {
    let unified = path.replace('\\', "/");
    if unified.trim().is_empty() {
        return Some("path is empty".to_string());
    }
    if unified.starts_with('/') {
        return Some(format!(
            "path {path:?} is absolute; expected a path relative to the repository root"
        ));
    }
    let bytes = unified.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Some(format!(
            "path {path:?} has a drive letter; expected a path relative to the repository root"
        ));
    }
    if unified.split('/').any(|c| c == "..") {
        return Some(format!(
            "path {path:?} contains '..' and could leave the repository"
        ));
    }
    None
}

/// Why a path is not acceptable as a labeled (or annotated) block's file: the rules of
/// [`unsafe_rel_path_reason`], and nothing inside the repository's `.git/` or distdebug's
/// `.distdebug/` folder, which are not source code.
pub fn label_path_reason(path: &str) -> Option<String> {
    if let Some(why) = unsafe_rel_path_reason(path) {
        return Some(why);
    }
    let norm = normalize_rel(path);
    let first = norm.split('/').find(|c| *c == ".git" || *c == ".distdebug");
    first.map(|dir| format!("path {path:?} lies inside {dir}/, which is not source code"))
}

/// Why `name` is not acceptable as a configuration name under a results folder
/// (`results/<config>/`): relative, no `..`, not inside `.git/`.
pub fn config_name_reason(name: &str) -> Option<String> {
    let unified = name.replace('\\', "/");
    if unified.trim().is_empty() {
        return Some("the configuration name is empty".to_string());
    }
    if unified.starts_with('/') || unified.split('/').any(|c| c == ".." || c == ".git") {
        return Some(format!(
            "the configuration name {name:?} must be a folder name inside the results folder (no '/' at the start, no '..', no .git)"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_dot_slash_and_backslashes() {
        assert_eq!(normalize_rel("./src\\main/./A.java"), "src/main/A.java");
        assert_eq!(normalize_rel("a//b"), "a/b");
    }

    #[test]
    fn labels_and_configs_stay_in_their_place() {
        assert!(label_path_reason(".git/config").unwrap().contains(".git/"));
        assert!(label_path_reason("./.git/hooks/x").is_some());
        assert!(label_path_reason(".distdebug/report.md").is_some());
        assert!(label_path_reason("src/.gitignore").is_none());
        assert!(config_name_reason("../outside").is_some());
        assert!(config_name_reason("/abs").is_some());
        assert!(config_name_reason("").is_some());
        assert!(config_name_reason("gpt-4o/run1").is_none());
    }

    #[test]
    fn rejects_paths_that_leave_the_repository() {
        assert!(unsafe_rel_path_reason("/etc/passwd").is_some());
        assert!(unsafe_rel_path_reason("a/../../b").is_some());
        assert!(unsafe_rel_path_reason("C:\\x").is_some());
        assert!(unsafe_rel_path_reason("").is_some());
        assert!(unsafe_rel_path_reason("src/..foo/a.rs").is_none());
        assert!(unsafe_rel_path_reason("src/a.rs").is_none());
    }
}

//! Stack frames found in evidence text (Java/Scala, Go, Rust, Python, C/C++): the file a frame
//! names, as trailing path components to match against a repository, and its line.

use regex::Regex;
use std::sync::OnceLock;

/// One `file:line` reference found in an evidence file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// 1-based line of the evidence file the frame is on.
    pub evidence_line: usize,
    /// The frame as written (for messages), e.g. `QuorumPeer.java:1194`.
    pub text: String,
    /// Path components to match against repository paths, last one the file name. For Java
    /// frames these are the package directories and the file; for path frames, the path.
    pub components: Vec<String>,
    /// How many trailing components must match a repository path for the frame to count as
    /// the project's: all of them for a Java frame (its package is exact), at most two for a
    /// path frame (build machines prefix their own folders).
    pub min_match: usize,
    /// The 1-based line in the source file.
    pub line: u32,
    /// The path is in a toolchain or dependency folder (Rust's `rustlib`, Cargo's registry,
    /// Go's standard library), so it is never the project's, whatever its name.
    pub known_external: bool,
    /// For a JVM frame, the method it is in (`start`, `<init>`, `lambda$restore$0`).
    pub method: Option<String>,
    /// For a JVM frame, the simple name of the innermost class (`FileTxnIterator` of
    /// `FileTxnLog$FileTxnIterator`).
    pub class: Option<String>,
    /// The reference is a log line's call site (zap's `"caller":"x.go:12"`, TiKV's
    /// `[x.rs:12]`), so the line should hold a logging call.
    pub log_call_site: bool,
}

impl Frame {
    /// The name a caller's line spells when it calls this frame's method: the method, or the
    /// class for a constructor; `None` for synthetic methods (lambdas, accessors, Scala's
    /// `$anonfun$`), which no source line names.
    pub fn called_name(&self) -> Option<String> {
        let method = self.method.as_deref()?;
        if method.contains('$') {
            return None;
        }
        if method == "<init>" {
            return self.class.clone();
        }
        (!method.starts_with('<')).then(|| method.to_string())
    }
}

fn java_frame() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    // `org.apache.zookeeper.server.quorum.QuorumPeer.start(QuorumPeer.java:1194)`; a module
    // prefix such as `java.base/` stops the match, so the qualified name starts after it.
    R.get_or_init(|| {
        Regex::new(
            r"([A-Za-z_$][\w$]*(?:\.[\w$<>-]+)+)\(([\w$-]+\.(?:java|scala|kt|groovy)):(\d+)\)",
        )
        .expect("static regex")
    })
}

fn python_frame() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r#"File "([^"]+)", line (\d+)"#).expect("static regex"))
}

fn path_frame() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    // Go `etcdserver/server.go:1424`, Rust `src/x.rs:123:45`, C++ `src/x.cc:12`.
    R.get_or_init(|| {
        Regex::new(r"((?:[\w.@+-]+/)*[\w.@+-]+\.(?:go|rs|py|c|cc|cpp|cxx|h|hpp)):(\d+)")
            .expect("static regex")
    })
}

/// Every frame in `text`, in order of appearance.
pub fn find_frames(text: &str) -> Vec<Frame> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let evidence_line = i + 1;
        for c in java_frame().captures_iter(line) {
            let (Some(qualified), Some(file), Some(n)) = (c.get(1), c.get(2), c.get(3)) else {
                continue;
            };
            let Ok(n) = n.as_str().parse::<u32>() else {
                continue;
            };
            let mut components = java_package(qualified.as_str(), file.as_str());
            components.push(file.as_str().to_string());
            out.push(Frame {
                evidence_line,
                text: format!("{}:{n}", file.as_str()),
                min_match: components.len(),
                components,
                line: n,
                known_external: false,
                method: qualified.as_str().rsplit('.').next().map(str::to_string),
                class: qualified
                    .as_str()
                    .rsplit('.')
                    .nth(1)
                    .and_then(|c| c.rsplit('$').next())
                    .filter(|c| !c.is_empty())
                    .map(str::to_string),
                log_call_site: false,
            });
        }
        let python: Vec<_> = python_frame().captures_iter(line).collect();
        for c in &python {
            if let (Some(path), Some(n)) = (c.get(1), c.get(2)) {
                push_path_frame(&mut out, evidence_line, path.as_str(), n.as_str(), false);
            }
        }
        if !python.is_empty() {
            continue;
        }
        for c in path_frame().captures_iter(line) {
            if let (Some(whole), Some(path), Some(n)) = (c.get(0), c.get(1), c.get(2)) {
                let before = &line[..whole.start()];
                let after = &line[whole.end()..];
                let log_call_site = before.ends_with("\"caller\":\"")
                    || (before.ends_with('[') && after.starts_with(']'));
                push_path_frame(
                    &mut out,
                    evidence_line,
                    path.as_str(),
                    n.as_str(),
                    log_call_site,
                );
            }
        }
    }
    out
}

fn push_path_frame(
    out: &mut Vec<Frame>,
    evidence_line: usize,
    path: &str,
    n: &str,
    log_call_site: bool,
) {
    let Ok(n) = n.parse::<u32>() else {
        return;
    };
    let components: Vec<String> = path
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        // Go module caches write `client/v3@v3.5.0/`: the version is not a folder of the repo.
        .map(|p| p.split('@').next().unwrap_or(p).to_string())
        .filter(|p| !p.is_empty())
        .collect();
    if components.is_empty() {
        return;
    }
    out.push(Frame {
        evidence_line,
        text: format!("{path}:{n}"),
        min_match: components.len().min(2),
        known_external: is_toolchain_or_dependency(&components),
        components,
        method: None,
        class: None,
        log_call_site,
        line: n,
    });
}

/// True for paths of Rust's toolchain (`/rustc/<hash>/library/...`, `rustlib/`), Cargo's
/// registry and git checkouts (`grpcio-0.10.4/src/...`), and Go's standard library
/// (`go/src/net/http/...`, whose first package has no dot, unlike `go/src/github.com/...`).
fn is_toolchain_or_dependency(components: &[String]) -> bool {
    let dirs = &components[..components.len().saturating_sub(1)];
    let crate_dir = |c: &str| {
        c.rsplit_once('-').is_some_and(|(name, version)| {
            !name.is_empty()
                && version.split('.').count() >= 3
                && version
                    .split('.')
                    .all(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
        })
    };
    dirs.iter()
        .any(|c| matches!(c.as_str(), "rustc" | "rustlib" | ".cargo" | "registry") || crate_dir(c))
        || dirs
            .windows(3)
            .any(|w| w[0] == "go" && w[1] == "src" && !w[2].contains('.'))
}

/// The package folders of a JVM frame's qualified name: the segments before the class whose
/// name (up to a `$`) is the file's stem, else the leading lower-case segments.
fn java_package(qualified: &str, file: &str) -> Vec<String> {
    let stem = file.rsplit_once('.').map(|(s, _)| s).unwrap_or(file);
    let mut segments: Vec<&str> = qualified.split('.').collect();
    segments.pop(); // the method
    let class_at = segments
        .iter()
        .rposition(|s| s.split('$').next() == Some(stem));
    let package: Vec<&str> = match class_at {
        Some(i) => segments[..i].to_vec(),
        None => segments
            .iter()
            .take_while(|s| s.starts_with(|c: char| c.is_ascii_lowercase()))
            .copied()
            .collect(),
    };
    package.into_iter().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_frames_carry_their_package() {
        let f = find_frames(
            "\tat org.apache.zookeeper.server.quorum.QuorumPeer$1.run(QuorumPeer.java:1194)\n\
             \tat java.base/java.lang.Thread.run(Thread.java:833)\n\
             \tat kafka.server.KafkaApis.$anonfun$handle$1(KafkaApis.scala:77)\n\
             \tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n",
        );
        assert_eq!(f.len(), 3);
        assert_eq!(
            f[0].components,
            [
                "org",
                "apache",
                "zookeeper",
                "server",
                "quorum",
                "QuorumPeer.java"
            ]
        );
        assert_eq!(
            (f[0].line, f[0].min_match, f[0].evidence_line),
            (1194, 6, 1)
        );
        assert_eq!(f[1].components, ["java", "lang", "Thread.java"]);
        assert_eq!(f[2].components, ["kafka", "server", "KafkaApis.scala"]);
        assert_eq!(f[0].class.as_deref(), Some("1"));
        assert_eq!(f[0].called_name().as_deref(), Some("run"));
        assert_eq!(
            f[2].called_name(),
            None,
            "synthetic methods are never spelled"
        );
        let ctor = find_frames("at a.b.FileTxnLog$FileTxnIterator.<init>(FileTxnLog.java:646)");
        assert_eq!(ctor[0].called_name().as_deref(), Some("FileTxnIterator"));
    }

    #[test]
    fn path_frames_of_go_rust_and_python() {
        let f = find_frames(
            "{\"caller\":\"etcdserver/server.go:1424\"}\n\
             \t/go/pkg/mod/go.etcd.io/etcd/client/v3@v3.5.0/retry_interceptor.go:62 +0x1a\n\
             \tat /home/ci/tikv/components/tikv_util/src/lib.rs:477:9\n\
             [gc_worker.rs:1140]\n\
             File \"/opt/app/site-packages/leasekit/rpc.py\", line 84, in call\n",
        );
        let got: Vec<(Vec<String>, u32)> =
            f.iter().map(|f| (f.components.clone(), f.line)).collect();
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(got[0], (owned(&["etcdserver", "server.go"]), 1424));
        assert_eq!(
            got[1].0[..4],
            owned(&["go", "pkg", "mod", "go.etcd.io"])[..]
        );
        assert!(got[1]
            .0
            .ends_with(&owned(&["client", "v3", "retry_interceptor.go"])));
        assert_eq!(got[2].1, 477);
        assert_eq!(got[3], (owned(&["gc_worker.rs"]), 1140));
        let sites: Vec<bool> = f.iter().map(|f| f.log_call_site).collect();
        assert_eq!(sites, [true, false, false, true, false]);
        assert_eq!(f[3].min_match, 1);
        assert!(got[4].0.ends_with(&owned(&["leasekit", "rpc.py"])));
        assert_eq!(got[4].1, 84);
        assert_eq!(f.len(), 5, "the Python frame is not counted twice");
        assert!(f.iter().all(|f| !f.known_external));
    }

    #[test]
    fn toolchain_and_dependency_paths_are_external() {
        let f = find_frames(
            "at /rustc/129f3b99/library/std/src/panicking.rs:652\n\
             /cargo/registry/src/github.com-1ecc6299db9ec823/grpcio-0.10.4/src/server.rs:196\n\
             /usr/local/go/src/net/http/server.go:3210 +0x1a\n\
             /build/go/src/github.com/pingcap/tikv/src/server/service/kv.rs:207\n",
        );
        let external: Vec<bool> = f.iter().map(|f| f.known_external).collect();
        assert_eq!(external, [true, true, true, false]);
    }
}

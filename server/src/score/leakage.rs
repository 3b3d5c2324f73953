//! The leakage guard (CONTRACT §4): flags an attempt whose trajectory shows it reaching what an
//! agent must not see. It reads steps only; it never decides for itself that an attempt is bad
//! beyond the rules below, and every flag names the step and the reason.
//!
//! Rules (each a `rule` name in the output):
//! - `labels`: a step reads or names the incident's `labels.json`;
//! - `fix-patch`: a step reads or names the incident's fix patch file (`fix.patch`);
//! - `fix-commit`: a step (observations included) holds the upstream fix commit's id or a
//!   prefix of it of at least 7 hex digits;
//! - `git-history`: a command reaches git history beyond the buggy revision: `fetch`, `pull`,
//!   `clone`, `ls-remote`, remote updates, the reflog, tags, `--all`/`--branches`/`--remotes`
//!   walks, remote-tracking refs, or a commit id the workspace never showed the agent;
//! - `repo-cache`: a step names distdebug's repository cache (full upstream history);
//! - `network`: a command or tool touches the network (curl, wget, ssh, `pip download`,
//!   `git clone <url>`, web tools, inline HTTP code…) other than the model's own endpoint.
//!
//! A file in the repository that merely shares a name (`labels.go`, or a `labels.json` that
//! exists in the repository at the buggy revision) is not a leak.

use crate::attempt::{Step, StepKind};
use crate::incident::{FixSource, Incident, RepositorySource};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// What the guard needs to know about the incident and the configuration.
pub struct LeakageContext<'a> {
    /// The file name of the fix patch (`fix.patch`), when the incident has one.
    pub fix_patch: Option<String>,
    /// The upstream fix commit id (lowercase hex), when the incident names one.
    pub fix_commit: Option<String>,
    /// The buggy revision's commit id (lowercase hex), for git-url incidents.
    pub buggy_commit: Option<String>,
    /// Hosts (with optional `:port`) the attempt may contact: the model's endpoint.
    pub allowed_hosts: Vec<String>,
    /// True when a normalised repository-relative path is a file at the buggy revision.
    pub repo_has_file: &'a dyn Fn(&str) -> bool,
}

impl<'a> LeakageContext<'a> {
    pub fn for_incident(
        incident: &Incident,
        allowed_hosts: Vec<String>,
        repo_has_file: &'a dyn Fn(&str) -> bool,
    ) -> LeakageContext<'a> {
        let m = &incident.manifest;
        let (fix_patch, fix_commit) = match &m.fix {
            Some(FixSource::Patch(p)) => {
                let name = p.replace('\\', "/");
                let name = name.rsplit('/').next().unwrap_or(&name).to_string();
                (Some(name), None)
            }
            Some(FixSource::Commit(c)) => (None, Some(c.to_ascii_lowercase())),
            None => (None, None),
        };
        let buggy_commit = match &m.repository {
            RepositorySource::Git { commit, .. } => Some(commit.to_ascii_lowercase()),
            RepositorySource::Path(_) => None,
        };
        LeakageContext {
            fix_patch,
            fix_commit,
            buggy_commit,
            allowed_hosts,
            repo_has_file,
        }
    }
}

/// One flag: the step (its `index` in the trajectory), the rule and a readable reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeakageFlag {
    pub step: u32,
    pub rule: String,
    pub reason: String,
}

/// The guard's verdict for one attempt, as written in `diagnosis_scores.json`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Leakage {
    pub flagged: bool,
    pub reasons: Vec<LeakageFlag>,
}

/// A step as the guard reads it: borrowed from the trajectory's text where it can be (a
/// results tree holds hundreds of megabytes of trajectories), and lenient about step kinds
/// it does not know: those are checked like actions, so an odd kind cannot hide a command.
#[derive(Debug, Clone, Deserialize)]
pub struct StepView<'a> {
    #[serde(default)]
    pub index: u32,
    #[serde(borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub tool: Option<Cow<'a, str>>,
    #[serde(default)]
    pub args: Option<serde_json::Value>,
    #[serde(borrow, default)]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub paths_read: Vec<PathView<'a>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PathView<'a> {
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    /// Read as any JSON value so that an odd line number never makes the step unreadable
    /// (which would hide it from the guard); `lines` keeps what is a line number.
    #[serde(default)]
    pub start_line: Option<serde_json::Value>,
    #[serde(default)]
    pub end_line: Option<serde_json::Value>,
}

impl PathView<'_> {
    /// The start and end lines when they are integers that fit a line number.
    pub fn lines(&self) -> (Option<u32>, Option<u32>) {
        let line = |v: &Option<serde_json::Value>| {
            v.as_ref()
                .and_then(|v| v.as_u64())
                .and_then(|n| u32::try_from(n).ok())
        };
        (line(&self.start_line), line(&self.end_line))
    }
}

impl<'a> StepView<'a> {
    pub fn from_step(step: &'a Step) -> StepView<'a> {
        let kind = match step.kind {
            StepKind::Thought => "thought",
            StepKind::Action => "action",
            StepKind::Observation => "observation",
            StepKind::Submit => "submit",
            StepKind::Error => "error",
        };
        StepView {
            index: step.index,
            kind: Some(Cow::Borrowed(kind)),
            tool: step.tool.as_deref().map(Cow::Borrowed),
            args: step.args.clone(),
            text: step.text.as_deref().map(Cow::Borrowed),
            paths_read: step
                .paths_read
                .iter()
                .map(|p| PathView {
                    path: Cow::Borrowed(p.path.as_str()),
                    start_line: p.start_line.map(serde_json::Value::from),
                    end_line: p.end_line.map(serde_json::Value::from),
                })
                .collect(),
        }
    }

    fn is_observation(&self) -> bool {
        self.kind.as_deref() == Some("observation")
    }

    /// Actions, and any kind the contract does not name.
    fn is_action(&self) -> bool {
        !matches!(
            self.kind.as_deref(),
            Some("thought" | "observation" | "submit" | "error")
        )
    }
}

/// Checks every step of a trajectory against the rules of this module.
pub fn check(ctx: &LeakageContext, steps: &[Step]) -> Leakage {
    let views: Vec<StepView> = steps.iter().map(StepView::from_step).collect();
    check_views(ctx, &views)
}

/// `check` over steps as read straight from `trajectory.json` / `trajectory.jsonl`.
pub fn check_views(ctx: &LeakageContext, steps: &[StepView]) -> Leakage {
    let mut flags: Vec<LeakageFlag> = Vec::new();
    // What tools printed so far: a commit id found there is the workspace's own commit.
    let mut printed: Vec<&str> = Vec::new();
    for step in steps {
        let mut add = |rule: &str, reason: String| {
            // One flag per rule and step keeps the report short.
            if !flags.iter().any(|f| f.step == step.index && f.rule == rule) {
                flags.push(LeakageFlag {
                    step: step.index,
                    rule: rule.to_string(),
                    reason,
                });
            }
        };
        let named = named_texts(step);
        for text in &named {
            check_names(ctx, text, &mut add);
        }
        if let Some(fix) = &ctx.fix_commit {
            let mut all = named.clone();
            if step.is_observation() {
                all.extend(step.text.as_deref());
            }
            for text in all {
                if let Some(tok) = names_commit(text, fix) {
                    add(
                        "fix-commit",
                        format!("names {tok}, the id of the upstream fix commit"),
                    );
                }
            }
        }
        check_refused_connection(step, &mut add);
        if step.is_action() {
            check_tool(ctx, step, &mut add);
            for cmd in command_strings(step) {
                for words in simple_commands(&cmd) {
                    check_command(ctx, &words, &printed, &mut add);
                }
                check_inline_network(ctx, &cmd, &mut add);
            }
        }
        if step.is_observation() {
            printed.extend(step.text.as_deref());
        }
    }
    Leakage {
        flagged: !flags.is_empty(),
        reasons: flags,
    }
}

/// The texts in which a step reads or names something: its text (not for observations, whose
/// text is what a tool printed), every string in its tool arguments, and the paths it read.
fn named_texts<'s>(step: &'s StepView) -> Vec<&'s str> {
    let mut out = Vec::new();
    if !step.is_observation() {
        out.extend(step.text.as_deref());
        if let Some(a) = &step.args {
            json_strings(a, &mut out);
        }
    }
    out.extend(step.paths_read.iter().map(|p| p.path.as_ref()));
    out
}

/// True when a tool printed a commit id that `rev` abbreviates (or that abbreviates `rev`).
fn was_printed(printed: &[&str], rev: &str) -> bool {
    printed.iter().any(|t| {
        hex_tokens(t).any(|tok| {
            let tok = tok.to_ascii_lowercase();
            tok.starts_with(rev) || rev.starts_with(tok.as_str())
        })
    })
}

fn json_strings<'v>(v: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| json_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| json_strings(x, out)),
        _ => {}
    }
}

fn check_names(ctx: &LeakageContext, text: &str, add: &mut impl FnMut(&str, String)) {
    if let Some(p) = file_mention(text, "labels.json", ctx.repo_has_file) {
        add(
            "labels",
            format!("reads or names {p}, the incident's labels"),
        );
    }
    if let Some(name) = &ctx.fix_patch {
        if let Some(p) = file_mention(text, name, ctx.repo_has_file) {
            add(
                "fix-patch",
                format!("reads or names {p}, the incident's fix"),
            );
        }
    }
    if text.contains("distdebug/repos") {
        add(
            "repo-cache",
            "names distdebug's repository cache, which holds upstream history".to_string(),
        );
    }
}

/// Finds a path-like token in `text` whose last component is `name` (ASCII case-insensitive).
/// Returns it unless it is a relative path to a file that exists in the repository.
fn file_mention(text: &str, name: &str, repo_has_file: &dyn Fn(&str) -> bool) -> Option<String> {
    let bytes = text.as_bytes();
    for at in find_ignore_case(bytes, name.as_bytes()) {
        let end = at + name.len();
        let before_ok = at == 0 || !is_name_byte(bytes[at - 1]);
        let after_ok =
            end == bytes.len() || !(bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_');
        if !before_ok || !after_ok {
            continue;
        }
        let start = text[..at]
            .rfind(|c: char| c.is_whitespace() || "\"'`=,;()<>|&[]{}".contains(c))
            .map(|i| i + 1)
            .unwrap_or(0);
        let token = &text[start..end];
        let rel = crate::util::paths::normalize_rel(token);
        let relative = !token.starts_with('/') && !token.starts_with('~') && !token.contains(':');
        if relative
            && crate::util::paths::unsafe_rel_path_reason(&rel).is_none()
            && repo_has_file(&rel)
        {
            continue;
        }
        return Some(token.to_string());
    }
    None
}

/// Start offsets of `needle` in `hay`, ASCII case-insensitive, without copying either.
fn find_ignore_case<'h>(hay: &'h [u8], needle: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
    let first = needle.first().copied().unwrap_or(0);
    hay.windows(needle.len().max(1))
        .enumerate()
        .filter(move |(_, w)| w[0].eq_ignore_ascii_case(&first) && w.eq_ignore_ascii_case(needle))
        .map(|(i, _)| i)
}

/// The stand-alone hex token in `text` that is a prefix (7 digits or more) of `commit`, if
/// any. A quick search for the first 7 digits rules out almost every text first.
fn names_commit<'t>(text: &'t str, commit: &str) -> Option<&'t str> {
    // Ids are printed in lowercase (git) or, rarely, uppercase; std's substring search is fast.
    let head = commit.get(..7)?.to_ascii_lowercase();
    if !text.contains(&head) && !text.contains(&head.to_ascii_uppercase()) {
        return None;
    }
    hex_tokens(text).find(|t| commit.starts_with(&t.to_ascii_lowercase()))
}

/// Bytes that continue a file name (so `my-labels.json` is not `labels.json`).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Maximal runs of 7 to 40 hex digits that stand alone (not inside a longer word).
fn hex_tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| (7..=40).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Tools whose name says they reach the web.
fn is_web_tool(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "web", "http", "browse", "internet", "url", "google", "download", "wget", "curl",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// Tools that run shell commands (their arguments are command lines).
fn is_shell_tool(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let exact = [
        "sh", "bash", "zsh", "shell", "terminal", "exec", "execute", "run", "cmd", "command",
    ];
    exact.contains(&n.as_str())
        || ["bash", "shell", "terminal", "command", "exec"]
            .iter()
            .any(|w| n.contains(w))
}

/// The tool name of the steps the sandbox records for refused connections.
pub const SANDBOX_NETWORK_TOOL: &str = "network";

/// The sandbox records each connection its network gate refused as an error step of the
/// `network` tool.
fn check_refused_connection(step: &StepView, add: &mut impl FnMut(&str, String)) {
    if step.tool.as_deref() != Some(SANDBOX_NETWORK_TOOL) || step.kind.as_deref() != Some("error") {
        return;
    }
    let target = step
        .args
        .as_ref()
        .and_then(|a| a.get("target"))
        .and_then(|t| t.as_str())
        .unwrap_or("an unknown host");
    add(
        "network",
        format!("the sandbox refused a connection to {target}"),
    );
}

fn check_tool(ctx: &LeakageContext, step: &StepView, add: &mut impl FnMut(&str, String)) {
    let Some(tool) = step.tool.as_deref() else {
        return;
    };
    if !is_web_tool(tool) {
        return;
    }
    let mut strings = Vec::new();
    if let Some(a) = &step.args {
        json_strings(a, &mut strings);
    }
    let urls: Vec<String> = strings.iter().flat_map(|s| url_hosts(s)).collect();
    if urls.is_empty() || urls.iter().any(|h| !host_allowed(ctx, h)) {
        add("network", format!("uses the web tool {tool:?}"));
    }
}

/// The command lines of an action step: every string argument of a shell-like tool (or of a
/// step with no tool name) and its text, else only the arguments named like a command.
/// An argv array is joined with spaces.
fn command_strings(step: &StepView) -> Vec<String> {
    let shell = step.tool.as_deref().is_none_or(is_shell_tool);
    let as_command = |v: &serde_json::Value| -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(a) => {
                let words: Option<Vec<&str>> = a.iter().map(|x| x.as_str()).collect();
                words.map(|w| w.join(" "))
            }
            _ => None,
        }
    };
    let mut out = Vec::new();
    match &step.args {
        Some(serde_json::Value::Object(o)) => {
            for (k, v) in o {
                let commandish =
                    matches!(k.as_str(), "command" | "cmd" | "script" | "shell" | "argv");
                if shell || commandish {
                    out.extend(as_command(v));
                }
            }
        }
        Some(v) if shell => out.extend(as_command(v)),
        _ => {}
    }
    if shell {
        out.extend(step.text.as_deref().map(str::to_string));
    }
    out
}

/// Splits a command line into simple commands (words, quotes removed), on `;`, `&&`, `||`,
/// `|`, `&`, newlines, parentheses, backquotes and `$(`. `sh -c '...'` is looked into.
pub(crate) fn simple_commands(line: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let flush_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some('"') if c == '\\' => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            Some(_) => word.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    in_word = true;
                }
                '\\' => {
                    if let Some(n) = chars.next() {
                        if n != '\n' {
                            word.push(n);
                            in_word = true;
                        }
                    }
                }
                ';' | '|' | '&' | '\n' | '(' | ')' | '`' => {
                    flush_word(&mut word, &mut in_word, &mut words);
                    if !words.is_empty() {
                        out.push(std::mem::take(&mut words));
                    }
                }
                '$' if chars.peek() == Some(&'(') => {
                    flush_word(&mut word, &mut in_word, &mut words);
                    if !words.is_empty() {
                        out.push(std::mem::take(&mut words));
                    }
                }
                c if c.is_whitespace() => flush_word(&mut word, &mut in_word, &mut words),
                c => {
                    word.push(c);
                    in_word = true;
                }
            },
        }
    }
    flush_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        out.push(words);
    }
    // Look inside `bash -c "..."`, `sh -c '...'` and friends.
    let mut nested = Vec::new();
    for w in &out {
        let w = strip_wrappers(w);
        if let Some(prog) = w.first().map(|p| program_name(p)) {
            if matches!(prog, "sh" | "bash" | "zsh" | "dash" | "ksh") {
                if let Some(i) = w.iter().position(|a| a == "-c" || a == "-lc" || a == "-ic") {
                    if let Some(script) = w.get(i + 1) {
                        nested.extend(simple_commands(script));
                    }
                }
            }
        }
    }
    out.extend(nested);
    out
}

/// The basename of a program path (`/usr/bin/git` -> `git`).
fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Drops leading variable assignments and wrappers (`env`, `sudo`, `timeout 10`, `xargs`…).
fn strip_wrappers(words: &[String]) -> &[String] {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let prog = program_name(w);
        if is_assignment(w) {
            i += 1; // VAR=value
        } else if matches!(
            prog,
            "env" | "sudo" | "time" | "nohup" | "nice" | "command" | "exec" | "xargs" | "stdbuf"
        ) {
            i += 1;
            while i < words.len() && words[i].starts_with('-') {
                i += 1;
            }
        } else if prog == "timeout" {
            i += 1;
            while i < words.len() && words[i].starts_with('-') {
                i += 1;
            }
            i += 1; // the duration
        } else {
            break;
        }
    }
    &words[i.min(words.len())..]
}

/// `NAME=value`, a variable assignment before a command.
fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut c = name.chars();
            c.next()
                .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
                && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
        }
        None => false,
    }
}

const NET_PROGRAMS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "telnet", "ssh", "scp", "sftp", "ftp", "aria2c",
    "http", "https", "xh", "lynx", "w3m", "links", "socat",
];

/// Git subcommands whose arguments name revisions.
const REV_SUBCOMMANDS: &[&str] = &[
    "show",
    "log",
    "diff",
    "checkout",
    "switch",
    "cat-file",
    "ls-tree",
    "rev-list",
    "shortlog",
    "whatchanged",
    "blame",
    "format-patch",
    "cherry-pick",
    "merge-base",
    "reset",
    "restore",
    "archive",
    "name-rev",
    "rev-parse",
    "difftool",
    "range-diff",
    "branch",
    "worktree",
];

/// Git subcommands that walk refs, where `--all`, `--tags`… reach beyond the buggy revision.
const WALK_SUBCOMMANDS: &[&str] = &[
    "log",
    "show",
    "rev-list",
    "shortlog",
    "whatchanged",
    "show-branch",
    "describe",
    "for-each-ref",
    "branch",
    "name-rev",
];

/// Options of git commands that take a value that is not a revision (a search string…).
const VALUE_OPTIONS: &[&str] = &[
    "-S",
    "-G",
    "--grep",
    "--author",
    "--committer",
    "-n",
    "--max-count",
    "--since",
    "--until",
    "--after",
    "--before",
    "--format",
    "--pretty",
    "-L",
];

fn check_command(
    ctx: &LeakageContext,
    words: &[String],
    printed: &[&str],
    add: &mut impl FnMut(&str, String),
) {
    let words = strip_wrappers(words);
    let Some(first) = words.first() else {
        return;
    };
    let prog = program_name(first);
    let args = &words[1..];
    let shown = words.join(" ");
    let hosts: Vec<String> = args.iter().flat_map(|a| url_hosts(a)).collect();
    let all_allowed = !hosts.is_empty() && hosts.iter().all(|h| host_allowed(ctx, h));

    if NET_PROGRAMS.contains(&prog) && !all_allowed {
        add(
            "network",
            format!("runs `{}`, which reaches the network", clip(&shown)),
        );
        return;
    }
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(|s| s.as_str());
    let downloads = match prog {
        "pip" | "pip3" | "uv" => matches!(sub, Some("download" | "install")),
        p if p.starts_with("python") => args.windows(3).any(|w| {
            w[0] == "-m" && w[1] == "pip" && matches!(w[2].as_str(), "download" | "install")
        }),
        "npm" | "pnpm" | "yarn" => matches!(sub, Some("install" | "i" | "ci" | "add" | "fetch")),
        "go" => {
            matches!(sub, Some("get"))
                || args.windows(2).any(|w| w[0] == "mod" && w[1] == "download")
        }
        "cargo" => matches!(sub, Some("install" | "fetch")),
        "gem" | "brew" | "conda" => matches!(sub, Some("install")),
        "apt" | "apt-get" => matches!(sub, Some("install" | "download" | "update" | "source")),
        _ => false,
    };
    if downloads {
        add(
            "network",
            format!("runs `{}`, which downloads from the network", clip(&shown)),
        );
        return;
    }
    if prog == "git" {
        check_git(ctx, args, &shown, &hosts, printed, add);
    }
}

fn check_git(
    ctx: &LeakageContext,
    args: &[String],
    shown: &str,
    hosts: &[String],
    printed: &[&str],
    add: &mut impl FnMut(&str, String),
) {
    // Skip git's global options (`-C dir`, `-c k=v`, `--git-dir dir`, `--no-pager`…).
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        let takes_value = matches!(
            args[i].as_str(),
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
        );
        i += if takes_value { 2 } else { 1 };
    }
    let Some(sub) = args.get(i).map(|s| s.as_str()) else {
        return;
    };
    let rest = &args[(i + 1).min(args.len())..];
    let shown = clip(shown);
    let history = |why: &str| format!("runs `{shown}`: {why}");
    match sub {
        "fetch" | "pull" | "clone" | "ls-remote" => {
            add(
                "git-history",
                history("reaches history beyond the buggy revision"),
            );
            if hosts.iter().any(|h| !host_allowed(ctx, h))
                || rest.iter().any(|a| a.contains('@') && a.contains(':'))
            {
                add("network", history("contacts a remote repository"));
            }
            return;
        }
        "remote" | "submodule"
            if rest.first().is_some_and(|a| {
                matches!(
                    a.as_str(),
                    "add" | "update" | "set-url" | "show" | "prune" | "sync" | "fetch"
                )
            }) =>
        {
            add("git-history", history("reaches a remote repository"));
            return;
        }
        "reflog" => {
            add("git-history", history("reads the reflog"));
            return;
        }
        "tag" => {
            add("git-history", history("reads tags"));
            return;
        }
        _ => {}
    }
    let before_dashdash: Vec<&String> = rest.iter().take_while(|a| *a != "--").collect();
    if WALK_SUBCOMMANDS.contains(&sub) {
        let walk = before_dashdash.iter().find(|a| {
            matches!(
                a.as_str(),
                "--all"
                    | "--branches"
                    | "--remotes"
                    | "--tags"
                    | "--reflog"
                    | "--walk-reflogs"
                    | "-g"
                    | "-a"
                    | "-r"
                    | "--contains"
            ) || a.starts_with("--glob")
                || a.starts_with("--branches=")
                || a.starts_with("--tags=")
                || a.starts_with("--remotes=")
        });
        if let Some(w) = walk {
            add(
                "git-history",
                history(&format!("`{w}` walks refs beyond the buggy revision")),
            );
            return;
        }
    }
    let mut skip_next = false;
    for a in &before_dashdash {
        if skip_next {
            skip_next = false;
            continue;
        }
        if VALUE_OPTIONS.contains(&a.as_str()) {
            skip_next = true;
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        if a.contains("@{") {
            add("git-history", history("names a reflog entry"));
            return;
        }
        let beyond = [
            "refs/tags",
            "refs/remotes",
            "refs/original",
            "FETCH_HEAD",
            "ORIG_HEAD",
            "origin/",
            "upstream/",
        ];
        if let Some(r) = beyond
            .iter()
            .find(|r| a.starts_with(**r) || a.contains(&format!(":{r}")))
        {
            add(
                "git-history",
                history(&format!("names {r}, a ref beyond the buggy revision")),
            );
            return;
        }
        if REV_SUBCOMMANDS.contains(&sub) {
            for rev in revisions(a) {
                let rev = rev.to_ascii_lowercase();
                let is_buggy = ctx
                    .buggy_commit
                    .as_deref()
                    .is_some_and(|b| b.starts_with(&rev));
                if !is_buggy && !was_printed(printed, &rev) {
                    add(
                        "git-history",
                        history(&format!(
                            "names commit {rev}, which the workspace never showed"
                        )),
                    );
                    return;
                }
            }
        }
    }
}

/// The hex commit ids in a revision argument (`abc1234`, `a..b`, `abc^`, `abc~2:path`).
fn revisions(arg: &str) -> Vec<&str> {
    let spec = arg.split(':').next().unwrap_or(arg);
    spec.split("..")
        .map(|r| r.trim_start_matches('.'))
        .map(|r| r.split(['^', '~']).next().unwrap_or(r))
        .filter(|r| (7..=40).contains(&r.len()) && r.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect()
}

/// Inline code that opens connections (`python -c "urllib.request.urlopen(...)"`, `/dev/tcp`).
fn check_inline_network(ctx: &LeakageContext, cmd: &str, add: &mut impl FnMut(&str, String)) {
    const SIGNS: &[&str] = &[
        "urllib.request",
        "urlopen(",
        "requests.get(",
        "requests.post(",
        "http.client",
        "/dev/tcp/",
        "socket.create_connection",
        "http.Get(",
        "Net::HTTP",
        "httpx.",
    ];
    if let Some(sign) = SIGNS.iter().find(|s| cmd.contains(**s)) {
        let hosts = url_hosts(cmd);
        if hosts.is_empty() || hosts.iter().any(|h| !host_allowed(ctx, h)) {
            add(
                "network",
                format!("runs code that opens a connection ({sign})"),
            );
        }
    }
}

/// Hosts (`host` or `host:port`, lowercase) of the URLs in a string: `scheme://[user@]host…`
/// and scp-like `user@host:path`.
fn url_hosts(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let after = &rest[i + 3..];
        let end = after
            .find(['/', '?', '#', '"', '\'', ' ', ')'])
            .unwrap_or(after.len());
        let authority = &after[..end];
        let host = authority.rsplit('@').next().unwrap_or(authority);
        if !host.is_empty() {
            out.push(host.to_ascii_lowercase());
        }
        rest = &after[end..];
    }
    if out.is_empty() && !s.contains("://") {
        if let Some((user_host, _)) = s.split_once(':') {
            if let Some((_, host)) = user_host.split_once('@') {
                if !host.is_empty() && !host.contains(char::is_whitespace) && !host.contains('/') {
                    out.push(host.to_ascii_lowercase());
                }
            }
        }
    }
    out
}

fn host_allowed(ctx: &LeakageContext, host: &str) -> bool {
    let bare = host.split(':').next().unwrap_or(host);
    ctx.allowed_hosts.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        a == host || (!a.contains(':') && a == bare)
    })
}

fn clip(s: &str) -> String {
    const MAX: usize = 80;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempt::PathRead;
    use serde_json::json;

    const FIX: &str = "76f1249811314330929f91ff8f8c2cfafb488d22";
    const BUGGY: &str = "d9907d6ac6baaebc3c9fd4e67acaa4154d2b3cd3";

    fn repo_files(p: &str) -> bool {
        matches!(p, "src/labels.go" | "testdata/labels.json" | "src/raft.go")
    }

    fn ctx_patch() -> LeakageContext<'static> {
        LeakageContext {
            fix_patch: Some("fix.patch".into()),
            fix_commit: None,
            buggy_commit: None,
            allowed_hosts: vec!["localhost:8000".into(), "api.example.com".into()],
            repo_has_file: &repo_files,
        }
    }

    fn ctx_commit() -> LeakageContext<'static> {
        LeakageContext {
            fix_patch: None,
            fix_commit: Some(FIX.into()),
            buggy_commit: Some(BUGGY.into()),
            ..ctx_patch()
        }
    }

    fn bash(cmd: &str) -> Step {
        Step::new(StepKind::Action).with_tool("bash", json!({ "command": cmd }))
    }

    fn read(path: &str) -> Step {
        let mut s = Step::new(StepKind::Action).with_tool("read_file", json!({ "path": path }));
        s.paths_read.push(PathRead {
            path: path.into(),
            start_line: None,
            end_line: None,
        });
        s
    }

    fn observe(text: &str) -> Step {
        Step::new(StepKind::Observation).with_text(text)
    }

    /// Numbers the steps as a recorder would and returns the rules flagged, in order.
    fn rules(ctx: &LeakageContext, steps: Vec<Step>) -> Vec<(u32, String)> {
        let steps: Vec<Step> = steps
            .into_iter()
            .enumerate()
            .map(|(i, mut s)| {
                s.index = i as u32;
                s
            })
            .collect();
        let l = check(ctx, &steps);
        assert_eq!(l.flagged, !l.reasons.is_empty());
        l.reasons.into_iter().map(|f| (f.step, f.rule)).collect()
    }

    fn flagged(ctx: &LeakageContext, steps: Vec<Step>, rule: &str) -> bool {
        rules(ctx, steps).iter().any(|(_, r)| r == rule)
    }

    #[test]
    fn labels_json_read_or_named_is_flagged() {
        let c = ctx_patch();
        assert_eq!(
            rules(
                &c,
                vec![read("src/raft.go"), read("../incidents/x/labels.json")]
            ),
            [(1, "labels".to_string())]
        );
        assert!(flagged(
            &c,
            vec![bash("cat /work/incidents/x/labels.json | head")],
            "labels"
        ));
        assert!(flagged(
            &c,
            vec![Step::new(StepKind::Thought).with_text("Let me peek at labels.json first")],
            "labels"
        ));
        assert!(flagged(
            &c,
            vec![bash("find / -name 'LABELS.JSON'")],
            "labels"
        ));
    }

    #[test]
    fn repository_files_that_share_the_name_are_not_flagged() {
        let c = ctx_patch();
        for s in [
            read("src/labels.go"),
            read("./testdata/labels.json"), // exists in the repository
            bash("grep -n Labels src/labels.go"),
            bash("cat my-labels.json old.labels.json labels.jsonl"),
            // An observation that prints the word is what a tool printed, not the agent's act.
            observe("see labels.json in the docs"),
        ] {
            assert_eq!(rules(&c, vec![s.clone()]), [], "{s:?}");
        }
    }

    #[test]
    fn fix_patch_read_or_named_is_flagged() {
        let c = ctx_patch();
        assert!(flagged(
            &c,
            vec![bash("git apply ../fix.patch")],
            "fix-patch"
        ));
        assert!(flagged(&c, vec![read("/tmp/inc/fix.patch")], "fix-patch"));
        assert!(!flagged(
            &c,
            vec![bash("ls src/ && cat prefix.patch fix.patches")],
            "fix-patch"
        ));
        // An incident whose fix is a commit has no patch file to leak.
        assert!(!flagged(
            &ctx_commit(),
            vec![read("/tmp/fix.patch")],
            "fix-patch"
        ));
    }

    #[test]
    fn the_fix_commit_id_is_flagged_wherever_it_appears() {
        let c = ctx_commit();
        assert!(flagged(
            &c,
            vec![bash(&format!("git show {}", &FIX[..7]))],
            "fix-commit"
        ));
        assert!(flagged(
            &c,
            vec![observe(&format!("commit {FIX}\nAuthor: x"))],
            "fix-commit"
        ));
        assert!(flagged(
            &c,
            vec![Step::new(StepKind::Submit).with_text(format!("fixed upstream in {}", &FIX[..10]))],
            "fix-commit"
        ));
        // Six digits are too short to be an id; another id is not the fix.
        assert!(!flagged(
            &c,
            vec![observe(&format!("x {} y", &FIX[..6]))],
            "fix-commit"
        ));
        assert!(!flagged(
            &c,
            vec![observe("commit 1234567890abcdef")],
            "fix-commit"
        ));
        // Inside a longer word it is not an id.
        assert!(!flagged(
            &c,
            vec![observe(&format!("{}zz", &FIX[..8]))],
            "fix-commit"
        ));
    }

    #[test]
    fn git_commands_that_reach_beyond_the_buggy_revision_are_flagged() {
        let c = ctx_commit();
        for cmd in [
            "git log --all --oneline",
            "cd repo && git --no-pager log --branches",
            "git fetch origin",
            "git pull",
            "git reflog",
            "git log -g",
            "git tag -l",
            "git describe --tags",
            "git show origin/main:src/raft.go",
            "git show HEAD@{1}",
            "git rev-list FETCH_HEAD",
            "git show 0123abcd9",
            "git diff 0123abcd9..HEAD -- src",
            "bash -c 'git log --all'",
            "git -C /tmp/other ls-remote https://github.com/etcd-io/raft",
            "git clone /home/u/.cache/distdebug/repos/github.com/etcd-io/raft.git /tmp/r",
        ] {
            assert!(flagged(&c, vec![bash(cmd)], "git-history"), "{cmd}");
        }
    }

    #[test]
    fn ordinary_git_use_in_the_workspace_is_not_flagged() {
        let c = ctx_commit();
        for cmd in [
            "git log --oneline",
            "git status && git diff",
            "git grep -n deadbeef1234 -- src",
            "git log -S 0123abcd9 -- src/raft.go",
            "git show HEAD:src/raft.go",
            "git blame -L 10,20 src/raft.go",
            "git add --all",
            &format!("git show {}", &BUGGY[..8]),
        ] {
            assert_eq!(rules(&c, vec![bash(cmd)]), [], "{cmd}");
        }
        // A commit id the workspace printed (its one commit) may be used afterwards.
        assert_eq!(
            rules(
                &c,
                vec![
                    bash("git log -1"),
                    observe("commit 5f0e1d2c3b4a59687766554433221100ffeeddcc\n    buggy revision"),
                    bash("git show 5f0e1d2c"),
                ]
            ),
            []
        );
    }

    #[test]
    fn network_use_is_flagged() {
        let c = ctx_patch();
        for cmd in [
            "curl -s https://github.com/etcd-io/raft/commit/abc",
            "wget http://example.org/x.tar.gz",
            "pip download raft==1.0",
            "python3 -m pip install requests",
            "sudo apt-get install -y jq",
            "git clone https://github.com/etcd-io/raft.git",
            "python -c \"import urllib.request; urllib.request.urlopen('https://x.org')\"",
            "ssh build@host.example",
            "echo x > /dev/tcp/10.0.0.1/80",
            "env HTTPS_PROXY=x timeout 5 curl example.org",
        ] {
            assert!(flagged(&c, vec![bash(cmd)], "network"), "{cmd}");
        }
        let web = Step::new(StepKind::Action).with_tool(
            "web_search",
            json!({"query": "etcd raft inflight bytes bug"}),
        );
        assert!(flagged(&c, vec![web], "network"));
    }

    #[test]
    fn the_model_endpoint_and_local_work_are_not_network_leaks() {
        let c = ctx_patch();
        for cmd in [
            "curl -s http://localhost:8000/v1/chat/completions -d @req.json",
            "curl https://api.example.com/v1/models",
            "grep -rn 'https://github.com' src/",
            "go test ./...",
            "cat src/curl.c",
            "pip list",
        ] {
            assert_eq!(rules(&c, vec![bash(cmd)]), [], "{cmd}");
        }
        // A search tool over the repository is not a web tool.
        let s = Step::new(StepKind::Action)
            .with_tool("grep", json!({"pattern": "wget", "path": "src"}));
        assert_eq!(rules(&c, vec![s]), []);
        // A thought may mention a command without running it.
        let t = Step::new(StepKind::Thought).with_text("I cannot curl the upstream repo offline");
        assert_eq!(rules(&c, vec![t]), []);
    }

    #[test]
    fn the_repository_cache_is_flagged() {
        let c = ctx_patch();
        assert!(flagged(
            &c,
            vec![bash("ls ~/.cache/distdebug/repos")],
            "repo-cache"
        ));
        assert!(!flagged(&c, vec![bash("ls ~/.cache/pip")], "repo-cache"));
    }

    #[test]
    fn each_flag_records_its_step_and_reason() {
        let c = ctx_commit();
        let steps = vec![
            Step::new(StepKind::Thought).with_text("start"),
            bash("git log --all"),
            bash("git log --all; git reflog"),
        ];
        let steps: Vec<Step> = steps
            .into_iter()
            .enumerate()
            .map(|(i, mut s)| {
                s.index = i as u32 + 10;
                s
            })
            .collect();
        let l = check(&c, &steps);
        assert!(l.flagged);
        assert_eq!(
            l.reasons.len(),
            2,
            "one flag per rule and step: {:?}",
            l.reasons
        );
        assert_eq!(l.reasons[0].step, 11);
        assert!(
            l.reasons[0].reason.contains("git log --all"),
            "{}",
            l.reasons[0].reason
        );
        assert_eq!(l.reasons[1].step, 12);
    }

    #[test]
    fn steps_of_kinds_the_contract_does_not_name_are_checked_like_actions() {
        let c = ctx_patch();
        let text = r#"{"index": 3, "kind": "tool_call", "tool": "bash", "args": {"command": "curl https://example.org"}}"#;
        let step: StepView = serde_json::from_str(text).unwrap();
        let l = check_views(&c, &[step]);
        assert_eq!(l.reasons.len(), 1);
        assert_eq!(
            (l.reasons[0].step, l.reasons[0].rule.as_str()),
            (3, "network")
        );
        // A step with no kind at all, too.
        let step: StepView = serde_json::from_str(r#"{"args": ["git", "fetch"]}"#).unwrap();
        assert!(check_views(&c, &[step]).flagged);
    }

    #[test]
    fn simple_commands_respect_quotes_and_separators() {
        let got = simple_commands("a 'b;c' && d \"e f\" | g $(h i) `j`");
        let got: Vec<String> = got.iter().map(|w| w.join(",")).collect();
        assert_eq!(got, ["a,b;c", "d,e f", "g", "h,i", "j"]);
    }

    #[test]
    fn context_for_an_incident_takes_the_patch_file_name_and_commits() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/incidents/tiny-lease");
        let inc = Incident::load(&dir).unwrap();
        let ctx = LeakageContext::for_incident(&inc, vec![], &|_| false);
        assert_eq!(ctx.fix_patch.as_deref(), Some("fix.patch"));
        assert_eq!(ctx.fix_commit, None);
    }
}

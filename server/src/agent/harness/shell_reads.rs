//! Which files (and lines) a harness's shell command showed the agent: `cat`, `nl`, `head`,
//! `tail`, `sed -n 'A,Bp'`, `nl -ba F | sed -n 'A,Bp'`, and the hits that `grep`/`rg` printed.
//! Redirection targets and heredoc bodies are not reads, so `cat > out.json <<'EOF'` reads
//! nothing. Absolute paths inside the workspace become relative; others are kept as written,
//! because the leakage guard looks at them.

use crate::attempt::PathRead;
use std::path::Path;

/// One simple command's words, and how it is joined to the next (`|` or not).
#[derive(Debug, Clone, PartialEq)]
struct Command {
    words: Vec<String>,
    piped_to_next: bool,
}

/// The files a command line reads, with line ranges where the command says them.
pub fn paths_read_by(command: &str, workspace: &Path) -> Vec<PathRead> {
    let commands = parse(command);
    let mut out = Vec::new();
    for (i, c) in commands.iter().enumerate() {
        let next = commands
            .get(i + 1)
            .filter(|_| c.piped_to_next)
            .map(|n| n.words.as_slice());
        let piped_in = i > 0 && commands[i - 1].piped_to_next;
        if piped_in {
            continue; // it reads its input, not files (`| sed -n`, `| head`)
        }
        reads_of(&c.words, next, workspace, &mut out);
    }
    out
}

/// The hits a search command printed (`path:line:text`, or `line:text` for one file), as
/// one-line reads. `command` decides whether the output is a search's.
pub fn search_hits(command: &str, output: &str, workspace: &Path) -> Vec<PathRead> {
    let commands = parse(command);
    let Some(search) = commands.iter().find(|c| is_search(&c.words)) else {
        return Vec::new();
    };
    let files: Vec<&String> = operands(&search.words[1..]).into_iter().skip(1).collect();
    // One file searched: its hits print as `line:text`, without the path.
    let single_file = (files.len() == 1)
        .then(|| files[0].as_str())
        .filter(|f| workspace.join(f).is_file());
    let mut out: Vec<PathRead> = Vec::new();
    for line in output.lines().take(2000) {
        let hit = single_file
            .and_then(|f| {
                line.split_once([':', '-'])
                    .and_then(|(n, _)| n.parse::<u32>().ok())
                    .map(|n| (f.to_string(), n))
            })
            .or_else(|| path_line_prefix(line));
        if let Some((path, n)) = hit.filter(|(_, n)| *n >= 1) {
            let r = read(&path, Some(n), Some(n), workspace);
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

/// `path:12:` or `path-12-` at the start of a line (grep -n / rg -n output).
fn path_line_prefix(line: &str) -> Option<(String, u32)> {
    let (path, rest) = line.split_once(':')?;
    if path.is_empty() || path.contains(char::is_whitespace) {
        return None;
    }
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let after = rest[digits.len()..].chars().next();
    if digits.is_empty() || !matches!(after, Some(':') | Some('-')) {
        return None;
    }
    Some((path.to_string(), digits.parse().ok()?))
}

fn is_search(words: &[String]) -> bool {
    match words.first().map(|w| program(w)) {
        Some("grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack") => true,
        Some("git") => words.get(1).is_some_and(|w| w == "grep"),
        _ => false,
    }
}

fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The words that are not options (and not the values of `-n N`, `-e P`, `-A N`…).
fn operands(words: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut skip = false;
    for w in words {
        if skip {
            skip = false;
            continue;
        }
        if matches!(
            w.as_str(),
            "-n" | "-e" | "-f" | "-A" | "-B" | "-C" | "-m" | "-g" | "--glob" | "-t" | "--type"
        ) {
            skip = w != "-n";
            continue;
        }
        if w.starts_with('-') && w.len() > 1 {
            continue;
        }
        out.push(w);
    }
    out
}

fn reads_of(words: &[String], next: Option<&[String]>, workspace: &Path, out: &mut Vec<PathRead>) {
    let Some(first) = words.first() else { return };
    let args = &words[1..];
    let range_after = next.and_then(|n| sed_range(n).or_else(|| head_range(n)));
    match program(first) {
        "cat" | "nl" | "less" | "more" | "bat" | "batcat" => {
            for f in args.iter().filter(|w| !w.starts_with('-')) {
                let (s, e) = range_after.unzip();
                out.push(read(f, s, e, workspace));
            }
        }
        "sed" => {
            if let (Some((s, e)), Some(f)) = (sed_range(words), args.last()) {
                if !f.starts_with('-') && sed_script(args) != Some(f.as_str()) {
                    out.push(read(f, Some(s), Some(e), workspace));
                }
            }
        }
        "head" => {
            if let (Some((s, e)), Some(f)) = (head_range(words), last_file(args)) {
                out.push(read(f, Some(s), Some(e), workspace));
            }
        }
        "tail" => {
            if let Some(f) = last_file(args) {
                let from = args
                    .windows(2)
                    .find(|w| w[0] == "-n")
                    .and_then(|w| w[1].strip_prefix('+'))
                    .and_then(|n| n.parse::<u32>().ok());
                out.push(read(f, from, None, workspace));
            }
        }
        _ => {}
    }
}

/// The last word when it is a file operand (not an option, not a count).
fn last_file(args: &[String]) -> Option<&String> {
    let f = args.last()?;
    let is_count_value = args.len() >= 2 && args[args.len() - 2] == "-n";
    (!f.starts_with('-') && !is_count_value && f.parse::<i64>().is_err()).then_some(f)
}

/// The script word of `sed -n SCRIPT FILE`.
fn sed_script(args: &[String]) -> Option<&str> {
    args.iter()
        .find(|w| !w.starts_with('-'))
        .map(|s| s.as_str())
}

/// `sed -n 'A,Bp'` (or `Ap`).
fn sed_range(ws: &[String]) -> Option<(u32, u32)> {
    if ws.first().map(|w| program(w)) != Some("sed") || !ws.iter().any(|w| w == "-n") {
        return None;
    }
    ws.iter().find_map(|w| {
        let body = w.strip_suffix('p')?;
        let (a, b) = body.split_once(',').unwrap_or((body, body));
        let (a, b) = (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?);
        (a >= 1 && a <= b).then_some((a, b))
    })
}

/// `head -n N`, `head -N` (default 10 lines).
fn head_range(ws: &[String]) -> Option<(u32, u32)> {
    if ws.first().map(|w| program(w)) != Some("head") {
        return None;
    }
    let n = ws
        .windows(2)
        .find(|w| w[0] == "-n")
        .and_then(|w| w[1].parse::<u32>().ok())
        .or_else(|| {
            ws.iter()
                .find_map(|w| w.strip_prefix('-').and_then(|n| n.parse::<u32>().ok()))
        })
        .unwrap_or(10);
    Some((1, n.max(1)))
}

pub fn read(path: &str, start: Option<u32>, end: Option<u32>, workspace: &Path) -> PathRead {
    let p = Path::new(path);
    let path = if p.is_absolute() {
        match p.strip_prefix(workspace) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string(),
        }
    } else {
        crate::util::paths::normalize_rel(path)
    };
    PathRead {
        path,
        start_line: start,
        end_line: end,
    }
}

/// Splits a command line into simple commands: quotes are removed, redirections and their
/// targets dropped, heredoc bodies skipped, and `bash -lc '…'` looked into.
fn parse(line: &str) -> Vec<Command> {
    let mut p = Parser::default();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = p.quote {
            match c {
                c if c == q => p.quote = None,
                '\\' if q == '"' => {
                    if let Some(n) = chars.next() {
                        p.word.push(n);
                    }
                }
                c => p.word.push(c),
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                p.quote = Some(c);
                p.in_word = true;
            }
            '\\' => {
                if let Some(n) = chars.next().filter(|n| *n != '\n') {
                    p.word.push(n);
                    p.in_word = true;
                }
            }
            '\n' => {
                p.end_command(false);
                // A heredoc's body runs from the next line to its delimiter.
                for delim in std::mem::take(&mut p.heredocs) {
                    let mut body_line = String::new();
                    for n in chars.by_ref() {
                        if n == '\n' {
                            if body_line.trim() == delim {
                                break;
                            }
                            body_line.clear();
                        } else {
                            body_line.push(n);
                        }
                    }
                }
            }
            '|' => {
                let or = chars.peek() == Some(&'|');
                if or {
                    chars.next();
                }
                p.end_command(!or);
            }
            ';' | '&' | '(' | ')' | '`' => {
                if c == '&' && chars.peek() == Some(&'>') {
                    chars.next();
                    p.flush_word();
                    p.redirect = true;
                    continue;
                }
                p.end_command(false);
            }
            '$' if chars.peek() == Some(&'(') => p.end_command(false),
            '<' | '>' => {
                // A redirection: drop a file-descriptor number before it (`2>`), then its target.
                if p.word.chars().all(|d| d.is_ascii_digit()) && p.in_word {
                    p.word.clear();
                    p.in_word = false;
                } else {
                    p.flush_word();
                }
                if c == '<' && chars.peek() == Some(&'<') {
                    chars.next();
                    if chars.peek() == Some(&'<') {
                        chars.next(); // `<<<` a here-string: its word is not a file
                        p.redirect = true;
                        continue;
                    }
                    if chars.peek() == Some(&'-') {
                        chars.next();
                    }
                    p.heredoc_next = true;
                    continue;
                }
                while matches!(chars.peek(), Some('>') | Some('&') | Some('|')) {
                    chars.next();
                }
                p.redirect = true;
            }
            c if c.is_whitespace() => p.flush_word(),
            c => {
                p.word.push(c);
                p.in_word = true;
            }
        }
    }
    p.end_command(false);
    let mut out = Vec::new();
    for c in p.commands {
        let nested = nested_script(&c.words);
        out.push(c);
        if let Some(script) = nested {
            out.extend(parse(&script));
        }
    }
    out
}

/// The script of `bash -lc '…'` / `sh -c '…'`.
fn nested_script(words: &[String]) -> Option<String> {
    let prog = program(words.first()?);
    if !matches!(prog, "sh" | "bash" | "zsh" | "dash") {
        return None;
    }
    let i = words
        .iter()
        .position(|a| a == "-c" || a == "-lc" || a == "-ic")?;
    words.get(i + 1).cloned()
}

#[derive(Default)]
struct Parser {
    commands: Vec<Command>,
    words: Vec<String>,
    word: String,
    in_word: bool,
    quote: Option<char>,
    /// The next word is a redirection's target.
    redirect: bool,
    /// The next word is a heredoc's delimiter.
    heredoc_next: bool,
    /// Delimiters of heredocs whose bodies start at the next newline.
    heredocs: Vec<String>,
}

impl Parser {
    fn flush_word(&mut self) {
        if !self.in_word {
            return;
        }
        let w = std::mem::take(&mut self.word);
        self.in_word = false;
        if self.heredoc_next {
            self.heredoc_next = false;
            self.heredocs.push(w);
        } else if self.redirect {
            self.redirect = false;
        } else {
            self.words.push(w);
        }
    }

    fn end_command(&mut self, piped: bool) {
        self.flush_word();
        self.redirect = false;
        if !self.words.is_empty() {
            let words = std::mem::take(&mut self.words);
            // Leading assignments (`FOO=1 cat f`) are not the program.
            let start = words
                .iter()
                .position(|w| !is_assignment(w))
                .unwrap_or(words.len());
            self.commands.push(Command {
                words: words[start..].to_vec(),
                piped_to_next: piped,
            });
        } else if let Some(last) = self.commands.last_mut() {
            last.piped_to_next = last.piped_to_next || piped;
        }
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(n, _)| {
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !n.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> &'static Path {
        Path::new("/ws")
    }

    fn pr(path: &str, s: Option<u32>, e: Option<u32>) -> PathRead {
        PathRead {
            path: path.into(),
            start_line: s,
            end_line: e,
        }
    }

    #[test]
    fn reading_commands_name_their_files_and_lines() {
        let cases: Vec<(&str, Vec<PathRead>)> = vec![
            ("cat src/a.py", vec![pr("src/a.py", None, None)]),
            (
                "sed -n '10,20p' src/lease.py",
                vec![pr("src/lease.py", Some(10), Some(20))],
            ),
            (
                "nl -ba /ws/src/L.java | sed -n '100,140p'",
                vec![pr("src/L.java", Some(100), Some(140))],
            ),
            (
                "head -n 20 ./src/a.go",
                vec![pr("src/a.go", Some(1), Some(20))],
            ),
            ("head -5 a.go", vec![pr("a.go", Some(1), Some(5))]),
            ("tail -n +30 a.go", vec![pr("a.go", Some(30), None)]),
            ("cat a.py | head -n 3", vec![pr("a.py", Some(1), Some(3))]),
            (
                "/bin/bash -lc \"sed -n '5,9p' b.rs\"",
                vec![pr("b.rs", Some(5), Some(9))],
            ),
            (
                "cd src && cat x.py; FOO=1 cat y.py 2>/dev/null",
                vec![pr("x.py", None, None), pr("y.py", None, None)],
            ),
        ];
        for (cmd, want) in cases {
            assert_eq!(paths_read_by(cmd, ws()), want, "{cmd}");
        }
    }

    #[test]
    fn redirections_and_heredocs_are_not_reads() {
        let cmd = "cat > \"$DISTDEBUG_OUTPUT/diagnosis.json\" <<'EOF'\n{\"blocks\": [], \"x\": \"cat secret.txt\"}\nEOF";
        assert_eq!(paths_read_by(cmd, ws()), vec![]);
        let cmd = "cat <<EOF > out.txt\ncat inner.txt\nEOF\ncat after.txt";
        assert_eq!(paths_read_by(cmd, ws()), vec![pr("after.txt", None, None)]);
        assert_eq!(
            paths_read_by("cat a.txt >> b.txt 2>&1", ws()),
            vec![pr("a.txt", None, None)]
        );
        assert_eq!(paths_read_by("grep -rn foo . | head", ws()), vec![]);
    }

    #[test]
    fn search_hits_come_from_the_output() {
        let out = "src/lease.py:17:        log.info(\"granted\")\nsrc/server.py:4:x\nBinary file y matches\n";
        assert_eq!(
            search_hits("grep -rn 'granted lease' src", out, ws()),
            vec![
                pr("src/lease.py", Some(17), Some(17)),
                pr("src/server.py", Some(4), Some(4))
            ]
        );
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/lease.py"), "x\n").unwrap();
        assert_eq!(
            search_hits(
                "grep -n ttl src/lease.py",
                "10:        self.ttl = t\n15:x",
                d.path()
            ),
            vec![
                pr("src/lease.py", Some(10), Some(10)),
                pr("src/lease.py", Some(15), Some(15))
            ]
        );
        assert_eq!(
            search_hits("/bin/bash -lc \"rg -n ttl\"", "/ws/src/a.rs:3:ttl", ws()),
            vec![pr("src/a.rs", Some(3), Some(3))]
        );
        assert!(search_hits("cat a.txt", "a.txt:1:x", ws()).is_empty());
    }
}

//! Network for a sandboxed agent: the model endpoint and nothing else. The sandbox has its own
//! network namespace with only loopback. Inside it, `distdebug sandbox-net` listens on the
//! endpoint's loopback port (when the endpoint is on loopback) and on an HTTP proxy port
//! (named by `HTTP(S)_PROXY`), and carries each connection over a Unix socket to the gate
//! outside, which distdebug runs. The gate connects only to the endpoint; every other request
//! is answered 403 and recorded, and the attempt is flagged for it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The socket's file name inside the gate's folder.
pub const SOCKET_NAME: &str = "net.sock";
/// The longest request head the gate reads before it refuses.
const HEAD_MAX: usize = 64 * 1024;

/// The one place an agent may connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    /// The host and port of a base URL such as `http://127.0.0.1:8080/v1`.
    pub fn from_url(url: &str) -> Option<Endpoint> {
        let (scheme, rest) = url.split_once("://")?;
        let authority = rest.split(['/', '?', '#']).next()?;
        let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let default = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        let (host, port) = split_host_port(authority, default)?;
        Some(Endpoint { host, port })
    }

    /// Whether the endpoint is on this machine's loopback (then the sandbox forwards its port).
    pub fn is_loopback(&self) -> bool {
        matches!(
            self.host.as_str(),
            "127.0.0.1" | "localhost" | "::1" | "[::1]"
        )
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        port == self.port
            && (host.eq_ignore_ascii_case(&self.host) || (self.is_loopback() && is_loopback(host)))
    }
}

fn is_loopback(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "localhost" | "::1" | "[::1]")
}

fn split_host_port(authority: &str, default: u16) -> Option<(String, u16)> {
    if authority.is_empty() {
        return None;
    }
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Some((h.to_string(), p.parse().ok()?)),
        None => Some((authority.to_string(), default)),
    }
}

/// A connection the gate refused.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Blocked {
    /// `host:port` the agent asked for.
    pub target: String,
    /// How it asked: `CONNECT`, `GET`, …, or `direct` for a loopback port.
    pub method: String,
}

/// The outside half: a Unix socket in a private folder, served by a thread.
pub struct Gate {
    dir: tempfile::TempDir,
    blocked: Arc<Mutex<Vec<Blocked>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    endpoint: Option<Endpoint>,
}

impl Gate {
    /// Starts a gate that lets connections through to `endpoint` only.
    pub fn start(endpoint: Option<Endpoint>) -> std::io::Result<Gate> {
        let dir = tempfile::Builder::new()
            .prefix("distdebug-net-")
            .tempdir()?;
        let listener = UnixListener::bind(dir.path().join(SOCKET_NAME))?;
        let blocked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s, e) = (blocked.clone(), stop.clone(), endpoint.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (b, e) = (b.clone(), e.clone());
                std::thread::spawn(move || serve_one(conn, e.as_ref(), &b));
            }
        });
        Ok(Gate {
            dir,
            blocked,
            stop,
            thread: Some(thread),
            endpoint,
        })
    }

    /// The host folder to bind at [`super::NET_DIR_INSIDE`].
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The arguments of `distdebug sandbox-net` inside the sandbox, before `--` and the
    /// agent's command.
    pub fn inside_args(&self) -> Vec<String> {
        let socket = Path::new(super::NET_DIR_INSIDE).join(SOCKET_NAME);
        let mut a = vec![
            "sandbox-net".to_string(),
            "--socket".to_string(),
            socket.to_string_lossy().into_owned(),
        ];
        if let Some(e) = self.endpoint.as_ref().filter(|e| e.is_loopback()) {
            a.extend(["--forward".to_string(), e.port.to_string()]);
        }
        a
    }

    /// Stops the gate and returns what it refused.
    pub fn finish(mut self) -> Vec<Blocked> {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = UnixStream::connect(self.dir.path().join(SOCKET_NAME));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.blocked.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

/// One connection from inside: a header line, then either bytes for the endpoint or an HTTP
/// proxy request.
fn serve_one(conn: UnixStream, endpoint: Option<&Endpoint>, blocked: &Mutex<Vec<Blocked>>) {
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut header = String::new();
    if reader.by_ref().take(256).read_line(&mut header).is_err() {
        return;
    }
    let header = header.trim();
    let record = |target: String, method: &str| {
        if let Ok(mut b) = blocked.lock() {
            if b.len() < 1000 {
                b.push(Blocked {
                    target,
                    method: method.to_string(),
                });
            }
        }
    };
    if let Some(port) = header.strip_prefix("DIRECT ") {
        let port: u16 = port.parse().unwrap_or(0);
        match endpoint.filter(|e| e.is_loopback() && e.port == port) {
            Some(e) => {
                if let Ok(up) = TcpStream::connect((e.host.trim_matches(['[', ']']), e.port)) {
                    pipe(reader, conn, up);
                }
            }
            None => record(format!("127.0.0.1:{port}"), "direct"),
        }
        return;
    }
    if header != "PROXY" {
        return;
    }
    let Some(head) = read_head(&mut reader) else {
        return;
    };
    let request_line = String::from_utf8_lossy(&head)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let Some((host, port)) = proxy_target(method, target) else {
        return refuse(conn, &request_line);
    };
    match endpoint.filter(|e| e.matches(&host, port)) {
        Some(e) => {
            let Ok(mut up) = TcpStream::connect((e.host.trim_matches(['[', ']']), e.port)) else {
                return;
            };
            let mut down = conn;
            if method.eq_ignore_ascii_case("CONNECT") {
                let _ = down.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
                pipe(reader, down, up);
            } else {
                let _ = up.write_all(&head);
                pipe(reader, down, up);
            }
        }
        None => {
            record(format!("{host}:{port}"), method);
            refuse(conn, &format!("{host}:{port}"));
        }
    }
}

/// `host, port` of a proxy request: `CONNECT host:port` or an absolute `http://host/...`.
fn proxy_target(method: &str, target: &str) -> Option<(String, u16)> {
    if method.eq_ignore_ascii_case("CONNECT") {
        return split_host_port(target, 443);
    }
    let e = Endpoint::from_url(target)?;
    Some((e.host, e.port))
}

fn read_head(r: &mut BufReader<UnixStream>) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = r.by_ref().take(8192).read_until(b'\n', &mut line).ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&line);
        if line == b"\r\n" || line == b"\n" {
            return Some(head);
        }
        if head.len() > HEAD_MAX {
            return None;
        }
    }
}

fn refuse(mut conn: UnixStream, what: &str) {
    let body = format!(
        "distdebug sandbox: the connection to {what} was refused; only the model endpoint is reachable\n"
    );
    let _ = write!(
        conn,
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = conn.shutdown(Shutdown::Both);
}

/// Copies both ways until either side closes. `reader` holds bytes already read from `down`.
fn pipe(reader: BufReader<UnixStream>, down: UnixStream, up: TcpStream) {
    let (Ok(up2), Ok(down2)) = (up.try_clone(), down.try_clone()) else {
        return;
    };
    let t = std::thread::spawn(move || {
        let mut reader = reader;
        let mut up2 = up2;
        let _ = std::io::copy(&mut reader, &mut up2);
        let _ = up2.shutdown(Shutdown::Write);
    });
    let mut up = up;
    let mut down2 = down2;
    let _ = std::io::copy(&mut up, &mut down2);
    let _ = down2.shutdown(Shutdown::Write);
    let _ = t.join();
    let _ = down.shutdown(Shutdown::Both);
}

/// The inside half (`distdebug sandbox-net`): listens on loopback, starts the agent with the
/// proxy variables set, and returns its exit status.
pub fn serve_inside(socket: PathBuf, forward: &[u16], argv: &[String]) -> Result<i32, String> {
    let proxy = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("sandbox-net: cannot listen on loopback: {e}"))?;
    let proxy_port = proxy
        .local_addr()
        .map_err(|e| format!("sandbox-net: {e}"))?
        .port();
    spawn_acceptor(proxy, socket.clone(), "PROXY".to_string());
    for port in forward {
        let l = TcpListener::bind(("127.0.0.1", *port))
            .map_err(|e| format!("sandbox-net: cannot listen on 127.0.0.1:{port}: {e}"))?;
        spawn_acceptor(l, socket.clone(), format!("DIRECT {port}"));
    }
    let Some((program, args)) = argv.split_first() else {
        return Err("sandbox-net: no command to run".to_string());
    };
    let url = format!("http://127.0.0.1:{proxy_port}");
    let no_proxy = "localhost,127.0.0.1,::1";
    let status = std::process::Command::new(program)
        .args(args)
        .envs(
            ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]
                .iter()
                .flat_map(|v| [v.to_string(), v.to_lowercase()])
                .map(|v| (v, url.clone())),
        )
        .env("NO_PROXY", no_proxy)
        .env("no_proxy", no_proxy)
        .status()
        .map_err(|e| format!("cannot start the agent command {program:?}: {e}"))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

fn spawn_acceptor(listener: TcpListener, socket: PathBuf, header: String) {
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let (socket, header) = (socket.clone(), header.clone());
            std::thread::spawn(move || {
                let Ok(mut out) = UnixStream::connect(&socket) else {
                    return;
                };
                if out.write_all(format!("{header}\n").as_bytes()).is_err() {
                    return;
                }
                relay(conn, out);
            });
        }
    });
}

fn relay(tcp: TcpStream, unix: UnixStream) {
    let (Ok(mut tcp2), Ok(mut unix2)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let t = std::thread::spawn(move || {
        let _ = std::io::copy(&mut tcp2, &mut unix2);
        let _ = unix2.shutdown(Shutdown::Write);
    });
    let (mut tcp, mut unix) = (tcp, unix);
    let _ = std::io::copy(&mut unix, &mut tcp);
    let _ = tcp.shutdown(Shutdown::Write);
    let _ = t.join();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_from_urls() {
        let e = Endpoint::from_url("http://127.0.0.1:8080/v1").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.is_loopback()),
            ("127.0.0.1", 8080, true)
        );
        let e = Endpoint::from_url("https://user:pw@api.example.com/v1").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("api.example.com", 443));
        assert!(!e.is_loopback());
        assert!(e.matches("API.example.com", 443) && !e.matches("evil.example", 443));
        assert_eq!(Endpoint::from_url("http://[::1]:9/x").unwrap().port, 9);
        assert!(Endpoint::from_url("not a url").is_none());
    }

    #[test]
    fn the_gate_refuses_and_records_other_hosts() {
        let gate = Gate::start(Some(Endpoint {
            host: "api.example.com".into(),
            port: 443,
        }))
        .unwrap();
        let mut c = UnixStream::connect(gate.dir().join(SOCKET_NAME)).unwrap();
        c.write_all(b"PROXY\nCONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        c.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        let mut d = UnixStream::connect(gate.dir().join(SOCKET_NAME)).unwrap();
        d.write_all(b"DIRECT 5432\n").unwrap();
        drop(d);
        std::thread::sleep(std::time::Duration::from_millis(100));
        let blocked = gate.finish();
        assert!(blocked.contains(&Blocked {
            target: "evil.example:443".into(),
            method: "CONNECT".into()
        }));
        assert!(
            blocked.iter().any(|b| b.target == "127.0.0.1:5432"),
            "{blocked:?}"
        );
    }

    #[test]
    fn the_gate_carries_the_endpoint() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = server.accept().unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).unwrap();
            s.write_all(&buf).unwrap();
        });
        let gate = Gate::start(Some(Endpoint {
            host: "127.0.0.1".into(),
            port,
        }))
        .unwrap();
        let mut c = UnixStream::connect(gate.dir().join(SOCKET_NAME)).unwrap();
        c.write_all(format!("DIRECT {port}\nhello").as_bytes())
            .unwrap();
        let mut echo = [0u8; 5];
        c.read_exact(&mut echo).unwrap();
        assert_eq!(&echo, b"hello");
        assert!(gate.finish().is_empty());
    }
}

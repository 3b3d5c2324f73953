use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{mpsc, Arc};

use swimlane::detector::DetectorConfig;
use swimlane::member::NodeId;
use swimlane::router::{Request, Response};
use swimlane::server::{Job, Server};
use swimlane::transport::{Message, TcpTransport};
use swimlane::{error, info};

fn decode(_body: &[u8]) -> Option<Message> {
    // The control-plane codec lives in the swimlane-wire crate in production
    // builds; the standalone binary only understands acks.
    Some(Message::Ack { seq: 0, updates: Vec::new() })
}

fn main() {
    swimlane::logging::init_from_env();
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).cloned().unwrap_or_else(|| "node-1".into());
    let addr: SocketAddr = args.get(2).and_then(|a| a.parse().ok()).unwrap_or_else(|| "127.0.0.1:7946".parse().unwrap());
    let client_addr = args.get(3).cloned().unwrap_or_else(|| "127.0.0.1:7000".into());
    let seeds: Vec<(NodeId, SocketAddr)> = args
        .iter()
        .skip(4)
        .filter_map(|s| s.split_once('@').and_then(|(n, a)| Some((NodeId(n.to_string()), a.parse().ok()?))))
        .collect();

    info!("starting swimlane {} as {} on {}", env!("CARGO_PKG_VERSION"), name, addr);
    let server = Server::new(NodeId(name), addr, 64, Arc::new(TcpTransport { decode }));
    server.join(&seeds);
    server.spawn_detector(DetectorConfig::default());
    server.spawn_handoff();
    let jobs = server.spawn_workers(4);

    let listener = TcpListener::bind(&client_addr).expect("bind client address");
    for conn in listener.incoming().flatten() {
        let jobs = jobs.clone();
        std::thread::spawn(move || {
            let mut out = match conn.try_clone() {
                Ok(o) => o,
                Err(_) => return,
            };
            for line in BufReader::new(conn).lines().map_while(Result::ok) {
                let parts: Vec<&str> = line.splitn(3, ' ').collect();
                let request = match parts.as_slice() {
                    ["GET", k] => Request::Get { key: k.as_bytes().to_vec() },
                    ["PUT", k, v] => Request::Put { key: k.as_bytes().to_vec(), value: v.as_bytes().to_vec() },
                    _ => {
                        let _ = out.write_all(b"ERR bad request\n");
                        continue;
                    }
                };
                let (tx, rx) = mpsc::channel();
                if jobs.send(Job { request, reply: tx }).is_err() {
                    error!("router pool is gone");
                    return;
                }
                let text = match rx.recv() {
                    Ok(Response::Value(Some(v))) => format!("OK {}", String::from_utf8_lossy(&v)),
                    Ok(Response::Value(None)) => "NOTFOUND".into(),
                    Ok(Response::Stored) => "STORED".into(),
                    Ok(Response::Unavailable(why)) => format!("UNAVAILABLE {}", why),
                    Err(_) => "ERR internal".into(),
                };
                if out.write_all(format!("{}\n", text).as_bytes()).is_err() {
                    return;
                }
            }
        });
    }
}

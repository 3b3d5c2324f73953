use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ferrokv::config::Config;
use ferrokv::pd::{PdClient, PdError, PdTransport};
use ferrokv::raftstore::{Region, Store};
use ferrokv::storage::Engine;
use ferrokv::transport::{read_messages, TcpTransport};
use ferrokv::{error, info};

/// Static PD used by single-binary deployments: IDs come from a local counter.
struct LocalPd {
    next: Mutex<u64>,
}

impl PdTransport for LocalPd {
    fn alloc_ids(&self, count: usize) -> Result<Vec<u64>, PdError> {
        let mut n = self.next.lock().unwrap();
        let ids = (*n..*n + count as u64).collect();
        *n += count as u64;
        Ok(ids)
    }
    fn region_changed(&self, _region: &Region) -> Result<(), PdError> {
        Ok(())
    }
    fn store_heartbeat(&self, _s: u64, _r: usize, _l: usize) -> Result<(), PdError> {
        Ok(())
    }
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "ferrokv.toml".into());
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let cfg = match Config::from_str(&text) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("invalid config {}: {}", path, e);
            std::process::exit(2);
        }
    };
    if let Ok(level) = cfg.server.log_level.parse() {
        ferrokv::trace::set_max_level(level);
    }
    info!("starting ferrokv {} store {} on {}", env!("CARGO_PKG_VERSION"), cfg.server.store_id, cfg.server.addr);

    let store_addrs: HashMap<u64, String> = std::env::var("FERROKV_STORES")
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| s.split_once('=').and_then(|(id, a)| Some((id.parse().ok()?, a.to_string()))))
        .collect();
    let pd = PdClient::new(cfg.server.pd_endpoints.clone(), Arc::new(LocalPd { next: Mutex::new(cfg.server.store_id * 1000) }));
    let raft_cfg = Arc::new(cfg.raftstore.clone());
    let store = Store::new(cfg.server.store_id, raft_cfg.clone(), Engine::new(), pd, Box::new(TcpTransport::new(store_addrs.clone())));
    let store = Arc::new(Mutex::new(store));
    {
        let mut ids: Vec<u64> = store_addrs.keys().copied().collect();
        ids.sort();
        let region = Region { id: 2, start_key: vec![], end_key: vec![], version: 1, peers: ids.iter().map(|s| (s + 2, *s)).collect() };
        store.lock().unwrap().create_peer(region, Instant::now());
    }

    let ticker = store.clone();
    let tick = raft_cfg.raft_base_tick_interval.0;
    std::thread::spawn(move || loop {
        std::thread::sleep(tick);
        ticker.lock().unwrap().on_tick(Instant::now());
    });

    let listener = match TcpListener::bind(&cfg.server.addr) {
        Ok(l) => l,
        Err(e) => {
            error!("failed to bind {}: {}", cfg.server.addr, e);
            std::process::exit(1);
        }
    };
    for conn in listener.incoming().flatten() {
        let store = store.clone();
        std::thread::spawn(move || {
            let mut peek = [0u8; 4];
            if conn.peek(&mut peek).ok() == Some(4) && &peek == b"RAFT" {
                read_messages(conn, |m| store.lock().unwrap().on_raft_message(m, Instant::now()));
                return;
            }
            let mut out = conn.try_clone().expect("clone client stream");
            for line in BufReader::new(conn).lines().flatten() {
                let parts: Vec<&str> = line.splitn(3, ' ').collect();
                let reply = match parts.as_slice() {
                    ["GET", k] => match store.lock().unwrap().get(k.as_bytes(), Instant::now()) {
                        Ok(Some(v)) => format!("OK {}", String::from_utf8_lossy(&v)),
                        Ok(None) => "NOTFOUND".to_string(),
                        Err(e) => format!("ERR {:?}", e),
                    },
                    ["PUT", k, v] => match store.lock().unwrap().put(k.as_bytes(), v.as_bytes(), Instant::now()) {
                        Ok(i) => format!("OK {}", i),
                        Err(e) => format!("ERR {:?}", e),
                    },
                    _ => "ERR bad request".to_string(),
                };
                if out.write_all(format!("{}\n", reply).as_bytes()).is_err() {
                    break;
                }
            }
        });
    }
}

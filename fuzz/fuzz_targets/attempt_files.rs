//! What agents write: `diagnosis.json`, `trajectory.json`, `trajectory.jsonl` lines, and
//! mini-swe-agent trajectories through the importer. Any text gives a result or an error.
#![no_main]

use distdebug::attempt::trajectory::{Step, Trajectory};
use distdebug::attempt::Diagnosis;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((d, _ignored)) = Diagnosis::parse_reporting(text) {
        for b in &d.blocks {
            assert!(1 <= b.start_line && b.start_line <= b.end_line);
        }
    }
    let _ = serde_json::from_str::<Trajectory>(text);
    for line in text.lines() {
        let _ = serde_json::from_str::<Step>(line);
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        if distdebug::agent::mini_swe::is_mini_swe(&v) {
            let _ = distdebug::agent::mini_swe::import(&v, Path::new("/nonexistent-workspace"));
        }
    }
});

//! `incident.json` and `labels.json` as the validator reads them: any JSON gives a result or
//! problems, never a panic.
#![no_main]

use distdebug::incident::labels::Labels;
use distdebug::incident::manifest::Manifest;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let _ = Manifest::from_value(Path::new("incident.json"), &v);
    let _ = Labels::from_value(Path::new("labels.json"), &v);
});

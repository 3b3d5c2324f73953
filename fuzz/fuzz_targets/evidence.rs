//! Evidence templating and stack-frame parsing over any log text.
#![no_main]

use distdebug::agent::baseline::evidence::Templates;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut t = Templates::default();
    t.set_report_times(&text);
    t.add_source("evidence/a.log", &text, false);
    t.add_source("report.md", &text, true);
    let _ = t.inverted();
    let _ = distdebug::agent::baseline::frames::parse(&text, 0, 0);
});

//! The code model over all six grammars: any text parses into blocks that lie inside the
//! file and snap to lines inside it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

const FILES: [&str; 6] = ["A.java", "a.go", "a.rs", "a.py", "a.cpp", "A.scala"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let name = FILES[usize::from(pick) % FILES.len()];
    let m = distdebug::code::parse_file(Path::new(name), &text);
    for b in &m.blocks {
        assert!(b.start_line >= 1 && b.start_line <= b.end_line, "{name}: {b:?}");
        assert!(b.end_line <= m.line_count.max(1), "{name}: {b:?} past {}", m.line_count);
    }
    let n = m.line_count.max(1);
    let (s, e) = m.snap(1, n);
    assert!(s >= 1 && s <= e, "{name}: snapped to {s}-{e}");
});

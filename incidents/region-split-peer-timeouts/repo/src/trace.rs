//! A small, dependency-free stand-in for `tracing` + `tracing-subscriber`'s
//! fmt layer. The macros mirror the `tracing` ones for the subset of syntax
//! the server uses (`info!("...", args)` and `info!(target: "...", ...)`),
//! and the output matches the default fmt format:
//! `2024-11-05T09:14:02.118342Z  INFO ferrokv::raftstore::peer: message`.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
    Trace = 5,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Debug => "DEBUG",
            Level::Trace => "TRACE",
        };
        f.pad(s)
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "error" => Ok(Level::Error),
            "warn" | "warning" => Ok(Level::Warn),
            "info" => Ok(Level::Info),
            "debug" => Ok(Level::Debug),
            "trace" => Ok(Level::Trace),
            other => Err(format!("unknown log level {:?}", other)),
        }
    }
}

static MAX_LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);

pub fn set_max_level(level: Level) {
    MAX_LEVEL.store(level as u8, Ordering::Relaxed);
}

pub fn enabled(level: Level) -> bool {
    level as u8 <= MAX_LEVEL.load(Ordering::Relaxed)
}

/// Formats a UNIX timestamp as RFC 3339 with microseconds, in UTC.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days, Howard Hinnant's algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        year,
        month,
        day,
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

pub fn event(level: Level, target: &str, args: fmt::Arguments<'_>) {
    if !enabled(level) {
        return;
    }
    let line = format!("{} {:>5} {}: {}\n", rfc3339(SystemTime::now()), level, target, args);
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

#[macro_export]
macro_rules! event {
    (target: $target:expr, $lvl:expr, $($arg:tt)+) => {
        $crate::trace::event($lvl, $target, format_args!($($arg)+))
    };
    ($lvl:expr, $($arg:tt)+) => {
        $crate::trace::event($lvl, module_path!(), format_args!($($arg)+))
    };
}

#[macro_export]
macro_rules! error {
    (target: $target:expr, $($arg:tt)+) => { $crate::event!(target: $target, $crate::trace::Level::Error, $($arg)+) };
    ($($arg:tt)+) => { $crate::event!($crate::trace::Level::Error, $($arg)+) };
}

#[macro_export]
macro_rules! warn {
    (target: $target:expr, $($arg:tt)+) => { $crate::event!(target: $target, $crate::trace::Level::Warn, $($arg)+) };
    ($($arg:tt)+) => { $crate::event!($crate::trace::Level::Warn, $($arg)+) };
}

#[macro_export]
macro_rules! info {
    (target: $target:expr, $($arg:tt)+) => { $crate::event!(target: $target, $crate::trace::Level::Info, $($arg)+) };
    ($($arg:tt)+) => { $crate::event!($crate::trace::Level::Info, $($arg)+) };
}

#[macro_export]
macro_rules! debug {
    (target: $target:expr, $($arg:tt)+) => { $crate::event!(target: $target, $crate::trace::Level::Debug, $($arg)+) };
    ($($arg:tt)+) => { $crate::event!($crate::trace::Level::Debug, $($arg)+) };
}

//! Minimal `log`/`env_logger`-compatible logging. Lines look like
//! `[2024-12-02T11:04:17.120Z INFO  swimlane::detector] message`.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error = 1,
    Warn,
    Info,
    Debug,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Debug => "DEBUG",
        }
    }
}

static MAX: AtomicUsize = AtomicUsize::new(Level::Info as usize);

pub fn init_from_env() {
    let lvl = match std::env::var("SWIMLANE_LOG").unwrap_or_default().as_str() {
        "error" => Level::Error,
        "warn" => Level::Warn,
        "debug" => Level::Debug,
        _ => Level::Info,
    };
    MAX.store(lvl as usize, Ordering::Relaxed);
}

fn timestamp() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        year,
        month,
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

pub fn log(level: Level, target: &str, args: fmt::Arguments<'_>) {
    if level as usize > MAX.load(Ordering::Relaxed) {
        return;
    }
    let line = format!("[{} {:<5} {}] {}\n", timestamp(), level.as_str(), target, args);
    let _ = std::io::stderr().write_all(line.as_bytes());
}

#[macro_export]
macro_rules! error { ($($a:tt)+) => { $crate::logging::log($crate::logging::Level::Error, module_path!(), format_args!($($a)+)) } }
#[macro_export]
macro_rules! warn { ($($a:tt)+) => { $crate::logging::log($crate::logging::Level::Warn, module_path!(), format_args!($($a)+)) } }
#[macro_export]
macro_rules! info { ($($a:tt)+) => { $crate::logging::log($crate::logging::Level::Info, module_path!(), format_args!($($a)+)) } }
#[macro_export]
macro_rules! debug { ($($a:tt)+) => { $crate::logging::log($crate::logging::Level::Debug, module_path!(), format_args!($($a)+)) } }

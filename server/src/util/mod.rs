//! Small helpers shared by every concern: atomic file writes and repository-relative paths.

pub mod fs;
pub mod paths;
pub mod secrets;
pub mod text;
pub mod untrusted;

/// The current UTC time as RFC 3339 (`2026-11-30T07:09:44Z`), for timestamps in written files.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

//! swimlane: SWIM-style membership with consistent-hash request routing.

pub mod logging;

pub mod detector;
pub mod handoff;
pub mod member;
pub mod membership;
pub mod ring;
pub mod router;
pub mod server;
pub mod store;
pub mod transport;

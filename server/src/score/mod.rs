//! Scoring (CONTRACT §3–§4): per-attempt metrics, the protocol across attempts, bootstrap, leakage guard.

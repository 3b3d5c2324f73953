//! The HTML report of one or more scored configurations.

//! Pieces several algorithms share, written once.

pub mod bandwidth_filter;

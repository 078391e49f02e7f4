//! Pieces several algorithms share, written once.

//! The AQT IPv4 option (layout, writer, parser): defined once in
//! `quic_ext::aqt_ip_option`, shared with the apps that read it.

pub use quic_ext::aqt_ip_option::*;

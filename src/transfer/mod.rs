//! Sans-IO application logic on a `&mut quiche::Connection`: no sockets and
//! no clock, so that the real-socket loops and the simulator share it.
//!
//! After anything that may have changed a connection (a datagram received, a
//! timeout handled) the driver calls `on_progress(&mut conn)` of the
//! connection's [`ServerSession`] or [`ClientSession`], then sends what quiche
//! has to send.
//!
//! Two application protocols are spoken:
//! - HTTP/3 (ALPN `h3`) through `quiche::h3`;
//! - hq-interop (ALPN `hq-interop`): HTTP/0.9 over QUIC, where the client
//!   sends `GET /path\r\n` on a bidirectional stream and the server answers
//!   with the bare body. A missing file is answered by resetting the stream
//!   with [`HQ_NOT_FOUND`], since HTTP/0.9 has no status line.

mod client;
mod content;
mod datagram;
pub mod request;
mod server;
mod sink;

use std::fmt;
use std::str::FromStr;

pub use client::{
    ClientSession, RequestOptions, RequestOutcome, ResponseRecord, ResponseSummary,
    MAX_RECORDED_BODY,
};
pub use content::{
    Body, ContentSource, DirSource, Lookup, SyntheticReader, SyntheticSource, DEFAULT_INDEX,
};
pub use datagram::{DatagramExchange, DgramProto, DGRAM_QUEUE_LEN};
pub use server::ServerSession;
pub use sink::{dump_file_name, BodySink};

/// ALPN of HTTP/3.
pub const ALPN_H3: &[u8] = b"h3";
/// ALPN of HTTP/0.9 over QUIC, as the QUIC interop runner names it.
pub const ALPN_HQ: &[u8] = b"hq-interop";

/// Stream error code of an hq-interop response for a path that is not found.
pub const HQ_NOT_FOUND: u64 = 404;
/// Stream error code of an hq-interop request that is malformed.
pub const HQ_BAD_REQUEST: u64 = 400;
/// Stream error code of an hq-interop response that failed on the server.
pub const HQ_SERVER_ERROR: u64 = 500;

/// Application protocol of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpVersion {
    /// HTTP/3 (`h3`).
    Http3,
    /// HTTP/0.9 over QUIC (`hq-interop`).
    Http09,
}

impl HttpVersion {
    pub fn alpn(self) -> &'static [u8] {
        match self {
            HttpVersion::Http3 => ALPN_H3,
            HttpVersion::Http09 => ALPN_HQ,
        }
    }

    pub fn from_alpn(alpn: &[u8]) -> Option<Self> {
        match alpn {
            ALPN_H3 => Some(HttpVersion::Http3),
            ALPN_HQ => Some(HttpVersion::Http09),
            _ => None,
        }
    }
}

impl fmt::Display for HttpVersion {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            HttpVersion::Http3 => "HTTP/3",
            HttpVersion::Http09 => "HTTP/0.9",
        })
    }
}

impl FromStr for HttpVersion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "HTTP/3" | "h3" => Ok(HttpVersion::Http3),
            "HTTP/0.9" | "hq-interop" => Ok(HttpVersion::Http09),
            _ => Err(format!(
                "unknown HTTP version '{s}'; valid versions: HTTP/3, HTTP/0.9"
            )),
        }
    }
}

/// Size of the chunks bodies are read and received in.
pub(crate) const CHUNK: usize = 64 * 1024;

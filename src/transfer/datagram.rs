//! quiche's apps' `--dgram-proto oneway`, `--dgram-count N` and
//! `--dgram-data DATA`: over HTTP/3, each side sends N DATAGRAM frames
//! (RFC 9221) carrying DATA as HTTP/3 datagrams (RFC 9297: the quarter
//! stream ID, here 0, as a varint, then the data), and counts what it
//! receives. Datagrams are unreliable and never retransmitted: the count
//! received is what arrived.

use std::fmt;
use std::str::FromStr;

/// Datagrams each side may have queued to send, or received and not yet
/// read (quiche's apps use the same).
pub const DGRAM_QUEUE_LEN: usize = 1000;

/// `--dgram-proto`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DgramProto {
    /// No DATAGRAM frames: none offered, none sent.
    #[default]
    None,
    /// Offer DATAGRAM frames and send `--dgram-count` of them.
    Oneway,
}

impl FromStr for DgramProto {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(DgramProto::None),
            "oneway" => Ok(DgramProto::Oneway),
            _ => Err(format!(
                "unknown DATAGRAM protocol '{s}'; valid: none, oneway"
            )),
        }
    }
}

impl fmt::Display for DgramProto {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            DgramProto::None => "none",
            DgramProto::Oneway => "oneway",
        })
    }
}

impl DgramProto {
    /// Offers DATAGRAM frames in `config` when on.
    pub fn apply(self, config: &mut quiche::Config) {
        if self == DgramProto::Oneway {
            config.enable_dgram(true, DGRAM_QUEUE_LEN, DGRAM_QUEUE_LEN);
        }
    }
}

/// The datagrams one side of a connection sends and receives.
#[derive(Clone, Debug)]
pub struct DatagramExchange {
    /// Datagrams to send in all.
    count: u64,
    /// Each one's payload: the quarter stream ID 0, then the data.
    payload: Vec<u8>,
    sent: u64,
    received: u64,
    received_bytes: u64,
    /// Sending stopped: the peer takes no DATAGRAM frames, or they are too
    /// large for it.
    stopped: bool,
    buf: Vec<u8>,
}

impl DatagramExchange {
    /// `count` datagrams of `data` each.
    pub fn new(count: u64, data: &[u8]) -> Self {
        // The varint 0 is one zero byte.
        let mut payload = Vec::with_capacity(1 + data.len());
        payload.push(0);
        payload.extend_from_slice(data);
        DatagramExchange {
            count,
            payload,
            sent: 0,
            received: 0,
            received_bytes: 0,
            stopped: false,
            buf: Vec::new(),
        }
    }

    /// Reads what arrived and queues what is left to send, as far as
    /// quiche's send queue allows (the rest on a later call).
    pub fn progress(&mut self, conn: &mut quiche::Connection) {
        if self.buf.is_empty() {
            self.buf = vec![0; 65_536];
        }
        while let Ok(n) = conn.dgram_recv(&mut self.buf) {
            self.received += 1;
            self.received_bytes += n as u64;
        }
        while !self.stopped && self.sent < self.count {
            match conn.dgram_send(&self.payload) {
                Ok(()) => self.sent += 1,
                // The queue is full: more on a later call.
                Err(quiche::Error::Done) => break,
                Err(e) => {
                    log::warn!(
                        "{} cannot send DATAGRAM frames ({e}): {} of {} sent",
                        conn.trace_id(),
                        self.sent,
                        self.count
                    );
                    self.stopped = true;
                }
            }
        }
    }

    /// Datagrams handed to quiche to send.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Datagrams received, and their bytes (quarter stream ID included).
    pub fn received(&self) -> (u64, u64) {
        (self.received, self.received_bytes)
    }
}

impl fmt::Display for DatagramExchange {
    /// `sent N, received M (B bytes)`.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "sent {}, received {} ({} bytes)",
            self.sent, self.received, self.received_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_parse_and_payloads_carry_quarter_stream_id_zero() {
        assert_eq!("oneway".parse(), Ok(DgramProto::Oneway));
        assert_eq!("none".parse(), Ok(DgramProto::None));
        assert!("twoway".parse::<DgramProto>().is_err());
        let d = DatagramExchange::new(3, b"quack");
        assert_eq!(d.payload, b"\0quack");
        assert_eq!(d.to_string(), "sent 0, received 0 (0 bytes)");
    }
}

//! The QUEUEING_TIME frame: RoVegas's AQT-echo in QUIC (docs/extensions.md).
//!
//! ```text
//! QUEUEING_TIME Frame {
//!   Type (i) = 0x1a8bf1c9,
//!   Largest Packet Number (i),
//!   Entry Count (i),                       // 1 ..= peer's max_queueing_times_per_frame
//!   Queueing Time Entry (..) ...,
//! }
//! Queueing Time Entry {
//!   Packet Number Delta (i),               // packet = Largest Packet Number - this
//!   Forward Queueing Time (i),             // microseconds
//! }
//! ```
//!
//! The data receiver sends it in a 1-RTT packet, immediately before the ACK
//! (or ACK_RECEIVE_TIMESTAMPS) frame it annotates. Each entry is a packet that
//! ACK frame acknowledges and the queueing time that packet's datagram
//! accumulated on AQT-enabled routers, as those routers reported it outside
//! the encrypted packet. Entries come most recently received first; every
//! packet number appears at most once; Largest Packet Number is the largest
//! among them.

use std::time::Duration;

use crate::codepoints::FRAME_TYPE_QUEUEING_TIME;
use crate::error::FrameError;

/// One packet's forward queueing time as the peer's routers reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueingTimeEntry {
    pub packet_number: u64,
    pub forward_queueing_us: u64,
}

impl QueueingTimeEntry {
    pub fn forward_queueing(&self) -> Duration {
        Duration::from_micros(self.forward_queueing_us)
    }
}

/// A QUEUEING_TIME frame: at least one entry, distinct packet numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueingTimeFrame {
    entries: Vec<QueueingTimeEntry>,
}

impl QueueingTimeFrame {
    /// A frame reporting `entries` (in the order given: most recent first).
    pub fn new(entries: Vec<QueueingTimeEntry>) -> Result<Self, FrameError> {
        if entries.is_empty() {
            return Err(FrameError::NoEntries);
        }
        check_distinct(&entries)?;
        let entries = entries
            .into_iter()
            .map(|e| QueueingTimeEntry {
                packet_number: e.packet_number.min(octets::MAX_VAR_INT),
                forward_queueing_us: e.forward_queueing_us.min(octets::MAX_VAR_INT),
            })
            .collect();
        Ok(QueueingTimeFrame { entries })
    }

    pub fn entries(&self) -> &[QueueingTimeEntry] {
        &self.entries
    }

    pub fn largest_packet_number(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| e.packet_number)
            .max()
            .unwrap_or(0)
    }

    /// Checks the entry count against the max_queueing_times_per_frame we
    /// advertised (`None`: we did not, so the frame is not allowed at all).
    pub fn check_limit(&self, limit: Option<u64>) -> Result<(), FrameError> {
        let limit = limit.ok_or(FrameError::NotNegotiated)?;
        if self.entries.len() as u64 > limit {
            return Err(FrameError::TooManyEntries { limit });
        }
        Ok(())
    }

    /// Keeps the first entries only, so that the frame takes at most
    /// `max_len` bytes; `None` when not even one entry fits.
    pub fn truncated_to_fit(mut self, max_len: usize) -> Option<Self> {
        while self.wire_len() > max_len && self.entries.len() > 1 {
            self.entries.pop();
        }
        (self.wire_len() <= max_len).then_some(self)
    }

    /// Parses the frame after its type.
    pub fn parse(b: &mut octets::Octets) -> Result<Self, FrameError> {
        let largest = b.get_varint()?;
        let count = b.get_varint()?;
        if count == 0 {
            return Err(FrameError::NoEntries);
        }
        // Each entry takes at least two bytes: the loop ends with the buffer.
        let mut entries = Vec::new();
        for _ in 0..count {
            let delta = b.get_varint()?;
            let forward_queueing_us = b.get_varint()?;
            let packet_number = largest
                .checked_sub(delta)
                .ok_or(FrameError::InvalidPacketNumber)?;
            entries.push(QueueingTimeEntry {
                packet_number,
                forward_queueing_us,
            });
        }
        check_distinct(&entries)?;
        Ok(QueueingTimeFrame { entries })
    }

    /// Writes the frame, type included, and returns the bytes written.
    pub fn encode(&self, b: &mut octets::OctetsMut) -> Result<usize, octets::BufferTooShortError> {
        let before = b.off();
        let largest = self.largest_packet_number();
        b.put_varint(FRAME_TYPE_QUEUEING_TIME)?;
        b.put_varint(largest)?;
        b.put_varint(self.entries.len() as u64)?;
        for e in &self.entries {
            b.put_varint(largest - e.packet_number)?;
            b.put_varint(e.forward_queueing_us)?;
        }
        Ok(b.off() - before)
    }

    /// Bytes [`encode`](Self::encode) writes.
    pub fn wire_len(&self) -> usize {
        let largest = self.largest_packet_number();
        octets::varint_len(FRAME_TYPE_QUEUEING_TIME)
            + octets::varint_len(largest)
            + octets::varint_len(self.entries.len() as u64)
            + self
                .entries
                .iter()
                .map(|e| {
                    octets::varint_len(largest - e.packet_number)
                        + octets::varint_len(e.forward_queueing_us)
                })
                .sum::<usize>()
    }
}

fn check_distinct(entries: &[QueueingTimeEntry]) -> Result<(), FrameError> {
    let mut numbers: Vec<u64> = entries.iter().map(|e| e.packet_number).collect();
    numbers.sort_unstable();
    match numbers.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(FrameError::DuplicatePacketNumber(w[0])),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(packet_number: u64, forward_queueing_us: u64) -> QueueingTimeEntry {
        QueueingTimeEntry {
            packet_number,
            forward_queueing_us,
        }
    }

    fn round_trip(frame: &QueueingTimeFrame) -> QueueingTimeFrame {
        let mut out = vec![0; frame.wire_len()];
        let written = frame
            .encode(&mut octets::OctetsMut::with_slice(&mut out))
            .unwrap();
        assert_eq!(written, out.len());
        let mut b = octets::Octets::with_slice(&out);
        assert_eq!(b.get_varint().unwrap(), FRAME_TYPE_QUEUEING_TIME);
        let parsed = QueueingTimeFrame::parse(&mut b).unwrap();
        assert_eq!(b.cap(), 0);
        parsed
    }

    #[test]
    fn entries_round_trip_in_order_even_out_of_packet_order() {
        let frame =
            QueueingTimeFrame::new(vec![entry(95, 1_500), entry(100, 0), entry(99, 42_000)])
                .unwrap();
        assert_eq!(frame.largest_packet_number(), 100);
        assert_eq!(round_trip(&frame), frame);
    }

    #[test]
    fn empty_duplicate_and_negative_frames_are_rejected() {
        assert_eq!(QueueingTimeFrame::new(vec![]), Err(FrameError::NoEntries));
        assert_eq!(
            QueueingTimeFrame::new(vec![entry(3, 1), entry(3, 2)]),
            Err(FrameError::DuplicatePacketNumber(3))
        );
        let wire = |fields: &[u64]| {
            let mut out = vec![0; 64];
            let mut b = octets::OctetsMut::with_slice(&mut out);
            for f in fields {
                b.put_varint(*f).unwrap();
            }
            let len = b.off();
            out.truncate(len);
            out
        };
        let parse = |bytes: &[u8]| QueueingTimeFrame::parse(&mut octets::Octets::with_slice(bytes));
        assert_eq!(parse(&wire(&[5, 0])), Err(FrameError::NoEntries));
        assert_eq!(
            parse(&wire(&[5, 1, 6, 10])),
            Err(FrameError::InvalidPacketNumber)
        );
        assert_eq!(
            parse(&wire(&[5, 2, 1, 10, 1, 11])),
            Err(FrameError::DuplicatePacketNumber(4))
        );
        assert_eq!(
            parse(&wire(&[5, octets::MAX_VAR_INT, 0])),
            Err(FrameError::Truncated)
        );
    }

    #[test]
    fn limit_is_enforced() {
        let frame = QueueingTimeFrame::new(vec![entry(1, 1), entry(2, 2)]).unwrap();
        assert_eq!(frame.check_limit(None), Err(FrameError::NotNegotiated));
        assert_eq!(
            frame.check_limit(Some(1)),
            Err(FrameError::TooManyEntries { limit: 1 })
        );
        assert_eq!(frame.check_limit(Some(2)), Ok(()));
    }

    #[test]
    fn truncation_keeps_the_first_entries() {
        let entries: Vec<_> = (0..100).rev().map(|pn| entry(pn, pn * 1000)).collect();
        let frame = QueueingTimeFrame::new(entries.clone()).unwrap();
        let small = frame.clone().truncated_to_fit(40).unwrap();
        assert!(small.wire_len() <= 40);
        assert_eq!(small.entries(), &entries[..small.entries().len()]);
        assert!(frame.truncated_to_fit(3).is_none());
    }
}

//! The ACK_RECEIVE_TIMESTAMPS frame of draft-ietf-quic-receive-ts-02.
//!
//! ```text
//! ACK_RECEIVE_TIMESTAMPS Frame {
//!   Type (i) = 0x03178307..0x03178308,
//!   Largest Acknowledged (i),
//!   ACK Delay (i),
//!   ACK Range Count (i),
//!   First ACK Range (i),
//!   ACK Range (..) ...,
//!   [ECN Counts (..)],                       // type 0x03178308 only
//!   Timestamp Range Count (i),
//!   Timestamp Range (..) ...,
//! }
//! Timestamp Range {
//!   Delta Largest Acknowledged (i),          // range's largest packet
//!                                            // = Largest Acknowledged - this
//!   Timestamp Delta Count (i),
//!   Timestamp Delta (i) ...,                 // descending packet numbers
//! }
//! ```
//!
//! The first delta of the frame is the receive time of its packet minus the
//! sender's receive_timestamp_basis; every other delta is the previous
//! timestamp minus this one; all in units of 2^exponent microseconds, where
//! the exponent is the receive_timestamps_exponent of the frame's *receiver*.
//! So the timestamps of a frame never increase: the most recently received
//! packet comes first, and packets received out of order start a range of
//! their own ahead of the packets received before them (the draft's example
//! with packets 92-95 arriving after 100).
//!
//! Parsing ([`AckReceiveTimestampsFrame::parse`]) checks only the wire
//! structure; [`AckReceiveTimestampsFrame::receive_times`] applies the
//! negotiated limit and exponent. Either failing is a FRAME_ENCODING_ERROR.
//! Neither allocates more than the frame's own length can justify.

use std::time::Duration;

use crate::codepoints::{FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS, FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN};
use crate::error::FrameError;

/// Packets `smallest..=largest`, acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRange {
    pub smallest: u64,
    pub largest: u64,
}

/// ECN counts of an ACK frame (RFC 9000 section 19.3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    pub ect0: u64,
    pub ect1: u64,
    pub ce: u64,
}

/// One Timestamp Range as on the wire (deltas not yet scaled).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimestampRange {
    pub delta_largest_acknowledged: u64,
    pub deltas: Vec<u64>,
}

/// One packet's receive time on the peer's clock, relative to its basis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketReceiveTime {
    pub packet_number: u64,
    pub receive_time: Duration,
}

/// An ACK_RECEIVE_TIMESTAMPS frame. The ACK ranges are non-empty, in
/// descending order, and separated by at least one missing packet, as in an
/// ACK frame; [`new`](Self::new) and [`parse`](Self::parse) enforce it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckReceiveTimestampsFrame {
    ack_delay: u64,
    ack_ranges: Vec<AckRange>,
    ecn_counts: Option<EcnCounts>,
    timestamp_ranges: Vec<TimestampRange>,
    /// What [`wire_len`](Self::wire_len) returns, measured whenever the
    /// fields change: quiche asks for a frame's length several times per
    /// packet, and each measure walks every range and timestamp.
    wire_len: usize,
}

fn check_ack_ranges(ranges: &[AckRange]) -> Result<(), FrameError> {
    let Some(first) = ranges.first() else {
        return Err(FrameError::InvalidAckRange);
    };
    if first.smallest > first.largest || first.largest > octets::MAX_VAR_INT {
        return Err(FrameError::InvalidAckRange);
    }
    for pair in ranges.windows(2) {
        let (above, below) = (pair[0], pair[1]);
        // At least one missing packet between two ranges (gap >= 0 on the wire).
        if below.smallest > below.largest || below.largest.saturating_add(2) > above.smallest {
            return Err(FrameError::InvalidAckRange);
        }
    }
    Ok(())
}

impl AckReceiveTimestampsFrame {
    /// A frame from its parts; the ACK ranges must be well formed (see the
    /// type's documentation), the timestamp ranges are taken as they are.
    pub fn new(
        ack_delay: u64,
        ack_ranges: Vec<AckRange>,
        ecn_counts: Option<EcnCounts>,
        timestamp_ranges: Vec<TimestampRange>,
    ) -> Result<Self, FrameError> {
        check_ack_ranges(&ack_ranges)?;
        Ok(AckReceiveTimestampsFrame::measured(
            ack_delay.min(octets::MAX_VAR_INT),
            ack_ranges,
            ecn_counts,
            timestamp_ranges,
        ))
    }

    /// The frame with its length measured.
    fn measured(
        ack_delay: u64,
        ack_ranges: Vec<AckRange>,
        ecn_counts: Option<EcnCounts>,
        timestamp_ranges: Vec<TimestampRange>,
    ) -> Self {
        let mut frame = AckReceiveTimestampsFrame {
            ack_delay,
            ack_ranges,
            ecn_counts,
            timestamp_ranges,
            wire_len: 0,
        };
        frame.wire_len = frame.ack_part_len() + timestamps_len(&frame.timestamp_ranges);
        frame
    }

    /// A frame acknowledging `ack_ranges` that reports `selection`: packets
    /// with their receive times in microseconds since our basis, most
    /// recently received first (as
    /// [`ReceivedPacketLog::select_timestamps`](crate::ReceivedPacketLog::select_timestamps)
    /// returns them), encoded with the peer's `exponent`. Times are quantised
    /// as absolute values (`time >> exponent`), so decoding loses less than
    /// 2^exponent microseconds per timestamp and rounding never accumulates.
    pub fn build(
        ack_delay: u64,
        ack_ranges: Vec<AckRange>,
        ecn_counts: Option<EcnCounts>,
        selection: &[(u64, u64)],
        exponent: u32,
    ) -> Result<Self, FrameError> {
        let exponent = exponent.min(crate::params::MAX_RECEIVE_TIMESTAMPS_EXPONENT as u32);
        let largest_acknowledged = ack_ranges.first().map_or(0, |r| r.largest);
        let mut timestamp_ranges: Vec<TimestampRange> = Vec::new();
        let mut previous: Option<(u64, u64)> = None; // (packet number, quantised time)
        for &(packet_number, time_us) in selection {
            if packet_number > largest_acknowledged {
                continue;
            }
            let quantised = time_us >> exponent;
            // A selection that is not newest-first cannot be encoded; such a
            // time is clamped to its predecessor's rather than wrapping.
            let delta = previous.map_or(quantised, |(_, p)| p.saturating_sub(quantised));
            let continues_range =
                previous.is_some_and(|(prev_pn, _)| prev_pn.checked_sub(1) == Some(packet_number));
            match timestamp_ranges.last_mut() {
                Some(range) if continues_range => range.deltas.push(delta),
                _ => timestamp_ranges.push(TimestampRange {
                    delta_largest_acknowledged: largest_acknowledged - packet_number,
                    deltas: vec![delta],
                }),
            }
            let kept = previous.map_or(quantised, |(_, p)| p - delta);
            previous = Some((packet_number, kept));
        }
        Self::new(ack_delay, ack_ranges, ecn_counts, timestamp_ranges)
    }

    /// Drops timestamps from the oldest end until the frame takes at most
    /// `max_len` bytes. Returns whether it fits (a frame without timestamps
    /// may still be too long).
    pub fn truncate_to_fit(&mut self, max_len: usize) -> bool {
        if self.wire_len <= max_len {
            return true;
        }
        // Binary search on how many timestamps to keep; the ACK part's
        // length does not change.
        let ack_part = self.ack_part_len();
        let total = self.timestamp_count() as usize;
        let all = std::mem::take(&mut self.timestamp_ranges);
        let (mut fits, mut too_many) = (0usize, total);
        while too_many - fits > 1 {
            let mid = (fits + too_many) / 2;
            if ack_part + first_timestamps_len(&all, mid) <= max_len {
                fits = mid;
            } else {
                too_many = mid;
            }
        }
        self.timestamp_ranges = keep_first(&all, fits);
        self.wire_len = ack_part + timestamps_len(&self.timestamp_ranges);
        self.wire_len <= max_len
    }

    pub fn frame_type(&self) -> u64 {
        if self.ecn_counts.is_some() {
            FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN
        } else {
            FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS
        }
    }

    /// ACK Delay as on the wire (in units of the sender's ack_delay_exponent).
    pub fn ack_delay(&self) -> u64 {
        self.ack_delay
    }

    /// Acknowledged packets, largest range first.
    pub fn ack_ranges(&self) -> &[AckRange] {
        &self.ack_ranges
    }

    pub fn largest_acknowledged(&self) -> u64 {
        self.ack_ranges.first().map_or(0, |r| r.largest)
    }

    pub fn ecn_counts(&self) -> Option<EcnCounts> {
        self.ecn_counts
    }

    pub fn timestamp_ranges(&self) -> &[TimestampRange] {
        &self.timestamp_ranges
    }

    /// Number of receive timestamps in the frame.
    pub fn timestamp_count(&self) -> u64 {
        self.timestamp_ranges
            .iter()
            .fold(0u64, |n, r| n.saturating_add(r.deltas.len() as u64))
    }

    /// Whether the frame acknowledges `packet_number`.
    pub fn acknowledges(&self, packet_number: u64) -> bool {
        ranges_contain(&self.ack_ranges, packet_number)
    }

    /// Parses the frame after its type (`frame_type` is one of the two
    /// ACK_RECEIVE_TIMESTAMPS types).
    pub fn parse(frame_type: u64, b: &mut octets::Octets) -> Result<Self, FrameError> {
        let with_ecn = match frame_type {
            FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS => false,
            FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN => true,
            other => return Err(FrameError::UnknownFrameType(other)),
        };
        let largest_acknowledged = b.get_varint()?;
        let ack_delay = b.get_varint()?;
        let ack_range_count = b.get_varint()?;
        let first_ack_range = b.get_varint()?;
        let mut smallest = largest_acknowledged
            .checked_sub(first_ack_range)
            .ok_or(FrameError::InvalidAckRange)?;
        let mut ack_ranges = vec![AckRange {
            smallest,
            largest: largest_acknowledged,
        }];
        // Each further range takes at least two bytes, so this loop ends when
        // the buffer does, whatever the count claims.
        for _ in 0..ack_range_count {
            let gap = b.get_varint()?;
            let length = b.get_varint()?;
            let largest = smallest
                .checked_sub(gap)
                .and_then(|v| v.checked_sub(2))
                .ok_or(FrameError::InvalidAckRange)?;
            smallest = largest
                .checked_sub(length)
                .ok_or(FrameError::InvalidAckRange)?;
            ack_ranges.push(AckRange { smallest, largest });
        }
        let ecn_counts = if with_ecn {
            Some(EcnCounts {
                ect0: b.get_varint()?,
                ect1: b.get_varint()?,
                ce: b.get_varint()?,
            })
        } else {
            None
        };
        let timestamp_range_count = b.get_varint()?;
        let mut timestamp_ranges = Vec::new();
        for _ in 0..timestamp_range_count {
            let delta_largest_acknowledged = b.get_varint()?;
            let count = b.get_varint()?;
            let range_largest = largest_acknowledged
                .checked_sub(delta_largest_acknowledged)
                .ok_or(FrameError::InvalidTimestampRange)?;
            // Packets range_largest, range_largest - 1, ...: none below 0.
            if count > range_largest.saturating_add(1) {
                return Err(FrameError::InvalidTimestampRange);
            }
            // No capacity from `count`: it is the peer's word, not bytes read.
            let mut deltas = Vec::new();
            for _ in 0..count {
                deltas.push(b.get_varint()?);
            }
            timestamp_ranges.push(TimestampRange {
                delta_largest_acknowledged,
                deltas,
            });
        }
        Ok(AckReceiveTimestampsFrame::measured(
            ack_delay,
            ack_ranges,
            ecn_counts,
            timestamp_ranges,
        ))
    }

    /// Writes the frame, type included, and returns the bytes written.
    pub fn encode(&self, b: &mut octets::OctetsMut) -> Result<usize, octets::BufferTooShortError> {
        let before = b.off();
        b.put_varint(self.frame_type())?;
        let first = self.ack_ranges.first().copied().unwrap_or(AckRange {
            smallest: 0,
            largest: 0,
        });
        b.put_varint(first.largest)?;
        b.put_varint(self.ack_delay)?;
        b.put_varint(self.ack_ranges.len().saturating_sub(1) as u64)?;
        b.put_varint(first.largest.saturating_sub(first.smallest))?;
        for pair in self.ack_ranges.windows(2) {
            let (above, below) = (pair[0], pair[1]);
            b.put_varint(
                above
                    .smallest
                    .saturating_sub(below.largest)
                    .saturating_sub(2),
            )?;
            b.put_varint(below.largest.saturating_sub(below.smallest))?;
        }
        if let Some(ecn) = self.ecn_counts {
            b.put_varint(ecn.ect0.min(octets::MAX_VAR_INT))?;
            b.put_varint(ecn.ect1.min(octets::MAX_VAR_INT))?;
            b.put_varint(ecn.ce.min(octets::MAX_VAR_INT))?;
        }
        b.put_varint(self.timestamp_ranges.len() as u64)?;
        for range in &self.timestamp_ranges {
            b.put_varint(range.delta_largest_acknowledged.min(octets::MAX_VAR_INT))?;
            b.put_varint(range.deltas.len() as u64)?;
            for &delta in &range.deltas {
                b.put_varint(delta.min(octets::MAX_VAR_INT))?;
            }
        }
        Ok(b.off() - before)
    }

    /// Bytes [`encode`](Self::encode) writes.
    pub fn wire_len(&self) -> usize {
        self.wire_len
    }

    /// Bytes of the frame up to its timestamp ranges (type, ACK ranges,
    /// ECN counts).
    fn ack_part_len(&self) -> usize {
        let len = |v: u64| octets::varint_len(v.min(octets::MAX_VAR_INT));
        let first = self.ack_ranges.first().copied().unwrap_or(AckRange {
            smallest: 0,
            largest: 0,
        });
        let mut n = len(self.frame_type())
            + len(first.largest)
            + len(self.ack_delay)
            + len(self.ack_ranges.len().saturating_sub(1) as u64)
            + len(first.largest.saturating_sub(first.smallest));
        for pair in self.ack_ranges.windows(2) {
            let (above, below) = (pair[0], pair[1]);
            n += len(above
                .smallest
                .saturating_sub(below.largest)
                .saturating_sub(2))
                + len(below.largest.saturating_sub(below.smallest));
        }
        if let Some(ecn) = self.ecn_counts {
            n += len(ecn.ect0) + len(ecn.ect1) + len(ecn.ce);
        }
        n
    }

    /// The receive times this frame reports, newest first, for the packets
    /// it acknowledges. `limit` is the max_receive_timestamps_per_ack we
    /// advertised and `exponent` our receive_timestamps_exponent. Timestamps
    /// of packets outside the frame's ACK ranges (which the draft does not
    /// allow a receiver to send) are skipped, not trusted.
    pub fn receive_times(
        &self,
        limit: u64,
        exponent: u32,
        out: &mut Vec<PacketReceiveTime>,
    ) -> Result<(), FrameError> {
        if self.timestamp_count() > limit {
            return Err(FrameError::TooManyTimestamps { limit });
        }
        let unit = 1u64 << exponent.min(crate::params::MAX_RECEIVE_TIMESTAMPS_EXPONENT as u32);
        let largest_acknowledged = self.largest_acknowledged();
        let mut previous: Option<u64> = None;
        for range in &self.timestamp_ranges {
            let range_largest = largest_acknowledged
                .checked_sub(range.delta_largest_acknowledged)
                .ok_or(FrameError::InvalidTimestampRange)?;
            for (i, &delta) in range.deltas.iter().enumerate() {
                let packet_number = range_largest
                    .checked_sub(i as u64)
                    .ok_or(FrameError::InvalidTimestampRange)?;
                let scaled = delta
                    .checked_mul(unit)
                    .ok_or(FrameError::TimestampOverflow)?;
                let time_us = match previous {
                    None => scaled,
                    Some(p) => p
                        .checked_sub(scaled)
                        .ok_or(FrameError::TimestampBeforeBasis)?,
                };
                previous = Some(time_us);
                if self.acknowledges(packet_number) {
                    out.push(PacketReceiveTime {
                        packet_number,
                        receive_time: Duration::from_micros(time_us),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Whether descending, disjoint `ranges` contain `packet_number`.
pub fn ranges_contain(ranges: &[AckRange], packet_number: u64) -> bool {
    // Descending: the first range whose smallest is <= pn is the only candidate.
    let i = ranges.partition_point(|r| r.smallest > packet_number);
    ranges.get(i).is_some_and(|r| packet_number <= r.largest)
}

/// Bytes of the timestamp ranges on the wire, their count included.
fn timestamps_len(ranges: &[TimestampRange]) -> usize {
    let len = |v: u64| octets::varint_len(v.min(octets::MAX_VAR_INT));
    let mut n = len(ranges.len() as u64);
    for range in ranges {
        n += len(range.delta_largest_acknowledged) + len(range.deltas.len() as u64);
        n += range.deltas.iter().map(|&d| len(d)).sum::<usize>();
    }
    n
}

/// `timestamps_len(&keep_first(ranges, n))` without making the ranges:
/// the truncation's binary search asks it at every step.
fn first_timestamps_len(ranges: &[TimestampRange], mut n: usize) -> usize {
    let len = |v: u64| octets::varint_len(v.min(octets::MAX_VAR_INT));
    let (mut bytes, mut kept_ranges) = (0, 0u64);
    for range in ranges {
        if n == 0 {
            break;
        }
        let take = n.min(range.deltas.len());
        if take > 0 {
            kept_ranges += 1;
            bytes += len(range.delta_largest_acknowledged) + len(take as u64);
            bytes += range.deltas[..take].iter().map(|&d| len(d)).sum::<usize>();
        }
        n -= take;
    }
    bytes + len(kept_ranges)
}

/// The first `n` timestamps of `ranges`, as ranges.
fn keep_first(ranges: &[TimestampRange], mut n: usize) -> Vec<TimestampRange> {
    let mut kept = Vec::new();
    for range in ranges {
        if n == 0 {
            break;
        }
        let take = n.min(range.deltas.len());
        if take > 0 {
            kept.push(TimestampRange {
                delta_largest_acknowledged: range.delta_largest_acknowledged,
                deltas: range.deltas[..take].to_vec(),
            });
        }
        n -= take;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(frame: &AckReceiveTimestampsFrame) -> Vec<u8> {
        let mut out = vec![0; frame.wire_len()];
        let written = frame
            .encode(&mut octets::OctetsMut::with_slice(&mut out))
            .unwrap();
        assert_eq!(written, out.len());
        out
    }

    fn parse(bytes: &[u8]) -> Result<AckReceiveTimestampsFrame, FrameError> {
        let mut b = octets::Octets::with_slice(bytes);
        let ty = b.get_varint()?;
        AckReceiveTimestampsFrame::parse(ty, &mut b)
    }

    fn times(frame: &AckReceiveTimestampsFrame, exponent: u32) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        frame.receive_times(1000, exponent, &mut out).unwrap();
        out.iter()
            .map(|t| (t.packet_number, t.receive_time.as_micros() as u64))
            .collect()
    }

    /// The draft's example (section "Examples"): packets 87-91 and 96-100.
    #[test]
    fn draft_example_first_ack() {
        let received: Vec<(u64, u64)> = vec![
            (100, 380),
            (99, 370),
            (98, 360),
            (97, 355),
            (96, 350),
            (91, 330),
            (90, 320),
            (89, 310),
            (88, 305),
            (87, 300),
        ];
        let ranges = vec![
            AckRange {
                smallest: 96,
                largest: 100,
            },
            AckRange {
                smallest: 87,
                largest: 91,
            },
        ];
        let frame = AckReceiveTimestampsFrame::build(0, ranges, None, &received, 0).unwrap();
        assert_eq!(
            frame.timestamp_ranges(),
            &[
                TimestampRange {
                    delta_largest_acknowledged: 0,
                    deltas: vec![380, 10, 10, 5, 5]
                },
                TimestampRange {
                    delta_largest_acknowledged: 9,
                    deltas: vec![20, 10, 10, 5, 5]
                },
            ]
        );
        let decoded = parse(&encode(&frame)).unwrap();
        assert_eq!(decoded, frame);
        assert_eq!(times(&decoded, 0), received);
    }

    /// The draft's example continued: 92-95 arrive late, after 100.
    #[test]
    fn draft_example_out_of_order_arrivals_come_first() {
        let received: Vec<(u64, u64)> = vec![
            (95, 395),
            (94, 394),
            (93, 392),
            (92, 390),
            (100, 380),
            (99, 370),
            (98, 360),
            (97, 355),
            (96, 350),
            (91, 330),
            (90, 320),
            (89, 310),
            (88, 305),
            (87, 300),
        ];
        let ranges = vec![AckRange {
            smallest: 87,
            largest: 100,
        }];
        let frame = AckReceiveTimestampsFrame::build(0, ranges, None, &received, 0).unwrap();
        let deltas: Vec<(u64, Vec<u64>)> = frame
            .timestamp_ranges()
            .iter()
            .map(|r| (r.delta_largest_acknowledged, r.deltas.clone()))
            .collect();
        assert_eq!(
            deltas,
            vec![
                (5, vec![395, 1, 2, 2]),
                (0, vec![10, 10, 10, 5, 5]),
                (9, vec![20, 10, 10, 5, 5]),
            ]
        );
        assert_eq!(times(&parse(&encode(&frame)).unwrap(), 0), received);
    }

    #[test]
    fn exponent_scales_and_quantises_without_accumulating_error() {
        let received: Vec<(u64, u64)> = (0..50).rev().map(|pn| (pn, 1_000 + pn * 1_003)).collect();
        let ranges = vec![AckRange {
            smallest: 0,
            largest: 49,
        }];
        for exponent in [0u32, 3, 10] {
            let frame =
                AckReceiveTimestampsFrame::build(0, ranges.clone(), None, &received, exponent)
                    .unwrap();
            let decoded = times(&parse(&encode(&frame)).unwrap(), exponent);
            for ((pn, sent), (dpn, got)) in received.iter().zip(&decoded) {
                assert_eq!(pn, dpn);
                assert!(got <= sent && sent - got < (1 << exponent), "{sent} {got}");
            }
        }
    }

    #[test]
    fn ecn_variant_round_trips() {
        let ecn = Some(EcnCounts {
            ect0: 1,
            ect1: 2,
            ce: 3,
        });
        let frame = AckReceiveTimestampsFrame::build(
            7,
            vec![AckRange {
                smallest: 0,
                largest: 3,
            }],
            ecn,
            &[(3, 10), (2, 9)],
            0,
        )
        .unwrap();
        let bytes = encode(&frame);
        assert_eq!(
            octets::Octets::with_slice(&bytes).get_varint().unwrap(),
            FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN
        );
        assert_eq!(parse(&bytes).unwrap(), frame);
    }

    #[test]
    fn timestamps_for_unacknowledged_packets_are_skipped() {
        // Packet 5 is not acknowledged by the frame's ranges.
        let frame = AckReceiveTimestampsFrame::new(
            0,
            vec![
                AckRange {
                    smallest: 6,
                    largest: 8,
                },
                AckRange {
                    smallest: 0,
                    largest: 4,
                },
            ],
            None,
            vec![TimestampRange {
                delta_largest_acknowledged: 2,
                deltas: vec![50, 1, 1],
            }],
        )
        .unwrap();
        assert_eq!(times(&frame, 0), vec![(6, 50), (4, 48)]);
    }

    #[test]
    fn hostile_frames_are_rejected() {
        let ranges = vec![AckRange {
            smallest: 0,
            largest: 10,
        }];
        // More timestamps than allowed.
        let frame = AckReceiveTimestampsFrame::build(
            0,
            ranges.clone(),
            None,
            &[(10, 5), (9, 4), (8, 3)],
            0,
        )
        .unwrap();
        let mut out = Vec::new();
        assert_eq!(
            frame.receive_times(2, 0, &mut out),
            Err(FrameError::TooManyTimestamps { limit: 2 })
        );
        // A delta that goes below the basis.
        let frame = AckReceiveTimestampsFrame::new(
            0,
            ranges.clone(),
            None,
            vec![TimestampRange {
                delta_largest_acknowledged: 0,
                deltas: vec![5, 6],
            }],
        )
        .unwrap();
        assert_eq!(
            frame.receive_times(10, 0, &mut out),
            Err(FrameError::TimestampBeforeBasis)
        );
        // A delta that overflows once scaled.
        let frame = AckReceiveTimestampsFrame::new(
            0,
            ranges,
            None,
            vec![TimestampRange {
                delta_largest_acknowledged: 0,
                deltas: vec![octets::MAX_VAR_INT],
            }],
        )
        .unwrap();
        assert_eq!(
            frame.receive_times(10, 20, &mut out),
            Err(FrameError::TimestampOverflow)
        );
    }

    #[test]
    fn malformed_wire_frames_are_errors_not_panics() {
        let t = FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS;
        let cases: Vec<(Vec<u64>, FrameError)> = vec![
            // largest 5, first range 6: below 0.
            (vec![t, 5, 0, 0, 6, 0], FrameError::InvalidAckRange),
            // gap below 0.
            (vec![t, 5, 0, 1, 0, 4, 0, 0], FrameError::InvalidAckRange),
            // timestamp range starting above the largest acknowledged.
            (
                vec![t, 5, 0, 0, 0, 1, 6, 1, 0],
                FrameError::InvalidTimestampRange,
            ),
            // timestamp range reaching below packet 0.
            (
                vec![t, 5, 0, 0, 5, 1, 0, 7, 1, 1, 1, 1, 1, 1, 1],
                FrameError::InvalidTimestampRange,
            ),
            // huge counts with nothing behind them.
            (vec![t, 5, 0, octets::MAX_VAR_INT], FrameError::Truncated),
            (
                vec![t, 5, 0, 0, 0, octets::MAX_VAR_INT],
                FrameError::Truncated,
            ),
            (vec![t, 5, 0, 0, 0, 1, 0, 6], FrameError::Truncated),
        ];
        for (fields, expected) in cases {
            let mut bytes = vec![0; 128];
            let mut b = octets::OctetsMut::with_slice(&mut bytes);
            for f in &fields {
                b.put_varint(*f).unwrap();
            }
            let len = b.off();
            assert_eq!(parse(&bytes[..len]), Err(expected), "{fields:?}");
        }
    }

    #[test]
    fn first_timestamps_len_is_the_length_of_the_kept_ranges() {
        // Ranges as a peer may send them: one empty, deltas of every
        // varint size, a range offset past 63.
        let ranges = vec![
            TimestampRange {
                delta_largest_acknowledged: 0,
                deltas: vec![70_000, 3, 20_000],
            },
            TimestampRange {
                delta_largest_acknowledged: 5,
                deltas: vec![],
            },
            TimestampRange {
                delta_largest_acknowledged: 100,
                deltas: vec![1, 1 << 31, 64],
            },
        ];
        for n in 0..=8 {
            assert_eq!(
                first_timestamps_len(&ranges, n),
                timestamps_len(&keep_first(&ranges, n)),
                "{n}"
            );
        }
    }

    #[test]
    fn truncation_keeps_the_newest_timestamps_and_fits() {
        let received: Vec<(u64, u64)> = (0..200).rev().map(|pn| (pn, 100_000 + pn * 997)).collect();
        let mut frame = AckReceiveTimestampsFrame::build(
            0,
            vec![AckRange {
                smallest: 0,
                largest: 199,
            }],
            None,
            &received,
            0,
        )
        .unwrap();
        assert!(frame.wire_len() > 100);
        assert!(frame.truncate_to_fit(100));
        assert!(frame.wire_len() <= 100);
        // The length kept with the frame is what encoding writes.
        assert_eq!(encode(&frame).len(), frame.wire_len());
        let kept = times(&frame, 0);
        assert!(!kept.is_empty());
        assert_eq!(kept[..], received[..kept.len()]);
        // As many as fit: one timestamp more, encoded, is too long.
        let one_more = AckReceiveTimestampsFrame::build(
            0,
            vec![AckRange {
                smallest: 0,
                largest: 199,
            }],
            None,
            &received[..kept.len() + 1],
            0,
        )
        .unwrap();
        assert!(encode(&one_more).len() > 100);
    }

    #[test]
    fn acknowledges_follows_the_ranges() {
        let frame = AckReceiveTimestampsFrame::new(
            0,
            vec![
                AckRange {
                    smallest: 10,
                    largest: 12,
                },
                AckRange {
                    smallest: 2,
                    largest: 5,
                },
            ],
            None,
            vec![],
        )
        .unwrap();
        let acked: Vec<u64> = (0..15).filter(|&pn| frame.acknowledges(pn)).collect();
        assert_eq!(acked, vec![2, 3, 4, 5, 10, 11, 12]);
    }
}

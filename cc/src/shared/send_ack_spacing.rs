//! The send and receive spacing of the packets just before a lost one
//! (Vegas-W's loss classification, 003_5b3b63821b3b4570.txt, section IV.C):
//! send and ACK times of the recent packets, in packet-number order, kept
//! only while a loss could still need them.
//!
//! A record is dropped once the two packets after it are resolved
//! (acknowledged or lost), so about one window is tracked, and never more
//! than the capacity (the oldest go first). When loss detection declares a
//! packet lost, every unacknowledged packet below it is lost too (RFC 9002's
//! thresholds are monotonic in packet number and send time). A packet number
//! not above the last one sent (a new packet-number space during the
//! handshake) starts the record afresh; ACKs are matched by packet number
//! and send time, so a packet of another space is never mistaken for one of
//! ours. The "receiving time" of a packet is the peer's receive timestamp
//! when both packets of the pair carry one, else the arrival of the ACK
//! frame that acknowledged it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::events::AckedPacket;

/// The spacing of two consecutive packets, sent and received.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairSpacing {
    pub source: SpacingSource,
    /// `sent(second) − sent(first)`, seconds.
    pub send_spacing_secs: f64,
    /// Their receive (or ACK arrival) spacing, seconds; negative if
    /// reordered.
    pub ack_spacing_secs: f64,
}

/// Where the "receiving time" of a loss's two preceding packets came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpacingSource {
    /// The peer's receive timestamps of both packets.
    ReceiveTimestamps,
    /// The arrival times of the ACKs that acknowledged them.
    AckArrival,
    /// Not observable: a packet not acknowledged or not tracked, or both
    /// acknowledged at the same instant without receive timestamps.
    None,
}

impl SpacingSource {
    pub fn as_str(self) -> &'static str {
        match self {
            SpacingSource::ReceiveTimestamps => "receive_timestamps",
            SpacingSource::AckArrival => "ack_arrival",
            SpacingSource::None => "none",
        }
    }
}

/// `later − earlier` in seconds, negative if `later` is earlier.
fn signed_secs(later: Instant, earlier: Instant) -> f64 {
    if later >= earlier {
        later.duration_since(earlier).as_secs_f64()
    } else {
        -earlier.duration_since(later).as_secs_f64()
    }
}

/// `later − earlier` for two offsets on the peer's clock, in seconds.
fn signed_offset_secs(later: Duration, earlier: Duration) -> f64 {
    later.as_secs_f64() - earlier.as_secs_f64()
}

/// What became of a tracked packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    InFlight,
    Acked {
        time_acked: Instant,
        receive_time: Option<Duration>,
    },
    Lost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PacketRecord {
    pkt_num: u64,
    time_sent: Instant,
    fate: Fate,
}

impl PacketRecord {
    fn resolved(&self) -> bool {
        self.fate != Fate::InFlight
    }
}

/// Send and ACK times of the recent packets, in packet-number order, kept
/// only while a loss could still need them (see the module documentation).
#[derive(Clone, Debug)]
pub struct SpacingLog {
    records: VecDeque<PacketRecord>,
    capacity: usize,
}

impl SpacingLog {
    /// Keeps at most `capacity` (at least 3) packets.
    pub fn new(capacity: usize) -> Self {
        SpacingLog {
            records: VecDeque::new(),
            capacity: capacity.max(3),
        }
    }

    /// Packets tracked.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// A packet that counts towards bytes in flight was sent.
    pub fn on_sent(&mut self, pkt_num: u64, time_sent: Instant) {
        if self.records.back().is_some_and(|r| pkt_num <= r.pkt_num) {
            // A new packet-number space (or a stack restarting its
            // numbering): the old records cannot be the new ones'
            // predecessors.
            self.records.clear();
        }
        self.records.push_back(PacketRecord {
            pkt_num,
            time_sent,
            fate: Fate::InFlight,
        });
        while self.records.len() > self.capacity {
            self.records.pop_front();
        }
    }

    /// Index of the record of `pkt_num` sent at `time_sent`.
    fn find(&self, pkt_num: u64, time_sent: Instant) -> Option<usize> {
        // Every packet sent is recorded, so the number's offset from the
        // first record is its index but after a packet number QUIC skipped:
        // look there before searching.
        let offset = pkt_num.checked_sub(self.records.front()?.pkt_num)?;
        let index = match usize::try_from(offset) {
            Ok(i) if self.records.get(i).is_some_and(|r| r.pkt_num == pkt_num) => i,
            _ => self
                .records
                .binary_search_by_key(&pkt_num, |r| r.pkt_num)
                .ok()?,
        };
        (self.records[index].time_sent == time_sent).then_some(index)
    }

    /// The ACK frame that arrived at `now` acknowledged `acked`. Its arrival
    /// is each packet's ACK time (the frame's `now`, not a per-packet stamp).
    pub fn on_acked(&mut self, now: Instant, acked: &[AckedPacket]) {
        for packet in acked {
            if let Some(index) = self.find(packet.pkt_num, packet.time_sent) {
                self.records[index].fate = Fate::Acked {
                    time_acked: now,
                    receive_time: packet.receive_time,
                };
            }
        }
        self.prune();
    }

    /// Loss detection declared `pkt_num` lost: it and every packet before it
    /// still unacknowledged are lost.
    pub fn on_lost(&mut self, pkt_num: u64, time_sent: Instant) {
        if let Some(index) = self.find(pkt_num, time_sent) {
            for record in self.records.range_mut(..=index) {
                if record.fate == Fate::InFlight {
                    record.fate = Fate::Lost;
                }
            }
        }
        self.prune();
    }

    /// Drops the oldest record while the two after it are resolved: it can
    /// then never be a lost packet's predecessor.
    fn prune(&mut self) {
        while self.records.len() >= 3 && self.records[1].resolved() && self.records[2].resolved() {
            self.records.pop_front();
        }
    }

    /// The send spacing of the two packets sent just before `pkt_num` (sent
    /// at `time_sent`) and the spacing at which they were received: `None`
    /// if `pkt_num` or a predecessor is not tracked or a predecessor is not
    /// acknowledged. The source is [`SpacingSource::None`] when the receive
    /// spacing is not observable (both acknowledged at the same instant,
    /// without receive timestamps).
    pub fn spacing_before(&self, pkt_num: u64, time_sent: Instant) -> Option<PairSpacing> {
        let index = self.find(pkt_num, time_sent)?;
        if index < 2 {
            return None;
        }
        let (first, second) = (self.records[index - 2], self.records[index - 1]);
        let (
            Fate::Acked {
                time_acked: acked_first,
                receive_time: received_first,
            },
            Fate::Acked {
                time_acked: acked_second,
                receive_time: received_second,
            },
        ) = (first.fate, second.fate)
        else {
            return None;
        };
        let send_spacing = signed_secs(second.time_sent, first.time_sent);
        let (source, ack_spacing) = match (received_first, received_second) {
            (Some(r1), Some(r2)) => (SpacingSource::ReceiveTimestamps, signed_offset_secs(r2, r1)),
            _ => (
                SpacingSource::AckArrival,
                signed_secs(acked_second, acked_first),
            ),
        };
        let observable = source == SpacingSource::ReceiveTimestamps || acked_first != acked_second;
        Some(PairSpacing {
            source: if observable {
                source
            } else {
                SpacingSource::None
            },
            send_spacing_secs: send_spacing,
            ack_spacing_secs: ack_spacing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn packet_log_keeps_only_what_a_loss_can_need() {
        let t0 = Instant::now();
        let mut log = SpacingLog::new(1000);
        for n in 0..10 {
            log.on_sent(n, t0 + ms(n));
        }
        let acked: Vec<AckedPacket> = (0..10)
            .map(|n| AckedPacket::new(n, 1000, t0 + ms(n), t0 + ms(100 + n)))
            .collect();
        log.on_acked(t0 + ms(200), &acked);
        assert_eq!(log.len(), 2, "the two predecessors of the next packet");
        // A new packet-number space starts afresh.
        log.on_sent(3, t0 + ms(50));
        assert_eq!(log.len(), 1);
        // A bounded log forgets the oldest.
        let mut small = SpacingLog::new(3);
        for n in 0..10 {
            small.on_sent(n, t0);
        }
        assert_eq!(small.len(), 3);
        assert_eq!(small.records[0].pkt_num, 7);
    }

    #[test]
    fn packets_are_found_past_skipped_numbers_and_only_with_their_send_time() {
        let t0 = Instant::now();
        let mut log = SpacingLog::new(1000);
        // QUIC skipped 3 and 6: after them a number is not at its offset.
        let numbers = [0, 1, 2, 4, 5, 7, 8];
        for (i, &n) in numbers.iter().enumerate() {
            log.on_sent(n, t0 + ms(i as u64));
        }
        for (i, &n) in numbers.iter().enumerate() {
            assert_eq!(log.find(n, t0 + ms(i as u64)), Some(i), "packet {n}");
            assert_eq!(log.find(n, t0 + ms(100)), None, "packet {n}, other time");
        }
        for missing in [3, 6, 9, 100] {
            assert_eq!(log.find(missing, t0), None, "packet {missing}");
        }
        // After pruning, offsets count from the first record kept.
        let acked: Vec<AckedPacket> = numbers[..4]
            .iter()
            .enumerate()
            .map(|(i, &n)| AckedPacket::new(n, 1000, t0 + ms(i as u64), t0 + ms(50)))
            .collect();
        log.on_acked(t0 + ms(50), &acked);
        assert_eq!(log.find(0, t0), None, "pruned");
        assert_eq!(log.find(8, t0 + ms(6)), Some(log.len() - 1));
    }

    #[test]
    fn spacing_needs_two_acknowledged_predecessors() {
        let t0 = Instant::now();
        let mut log = SpacingLog::new(1000);
        for n in 0..4 {
            log.on_sent(n, t0 + ms(10 * n));
        }
        // Packet 2's predecessors (0, 1) are not acknowledged yet.
        assert_eq!(log.spacing_before(2, t0 + ms(20)), None);
        let acked = [
            AckedPacket::new(0, 1000, t0, t0 + ms(100)),
            AckedPacket::new(1, 1000, t0 + ms(10), t0 + ms(130)),
        ];
        log.on_acked(t0 + ms(100), &acked[..1]);
        log.on_acked(t0 + ms(130), &acked[1..]);
        let spacing = log
            .spacing_before(2, t0 + ms(20))
            .expect("both acknowledged");
        assert_eq!(spacing.source, SpacingSource::AckArrival);
        assert!((spacing.send_spacing_secs - 0.010).abs() < 1e-12);
        assert!((spacing.ack_spacing_secs - 0.030).abs() < 1e-12);
        // A wrong send time is another packet.
        assert_eq!(log.spacing_before(2, t0 + ms(21)), None);
        // Packet 1 has only one predecessor.
        assert_eq!(log.spacing_before(1, t0 + ms(10)), None);
    }

    #[test]
    fn one_ack_instant_without_timestamps_is_not_observable() {
        let t0 = Instant::now();
        let mut log = SpacingLog::new(1000);
        for n in 0..3 {
            log.on_sent(n, t0 + ms(n));
        }
        let acked = [
            AckedPacket::new(0, 1000, t0, t0 + ms(100)),
            AckedPacket::new(1, 1000, t0 + ms(1), t0 + ms(100)),
        ];
        log.on_acked(t0 + ms(100), &acked);
        let spacing = log
            .spacing_before(2, t0 + ms(2))
            .expect("both acknowledged");
        assert_eq!(spacing.source, SpacingSource::None);
        assert_eq!(spacing.ack_spacing_secs, 0.0);
    }
}

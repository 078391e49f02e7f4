//! The send and receive spacing of the packets just before a lost one
//! (Vegas-W's loss classification, 003_5b3b63821b3b4570.txt, section IV.C):
//! send and ACK times of the recent packets, in packet-number order, kept
//! only while a loss could still need them.
//!
//! A record may go once the two packets after it are resolved
//! (acknowledged or lost), so about one window is tracked, and never more
//! than the capacity (the oldest go first). The records are a ring indexed
//! by packet number ([`SpacingLog`]): an ACK finds its packets in one step
//! and removes nothing, and a slot is reused only by a packet sent when the
//! one in it can no longer be needed, else the ring doubles. When loss detection declares a
//! packet lost, every unacknowledged packet below it is lost too (RFC 9002's
//! thresholds are monotonic in packet number and send time). A packet number
//! not above the last one sent (a new packet-number space during the
//! handshake) starts the record afresh; ACKs are matched by packet number
//! and send time, so a packet of another space is never mistaken for one of
//! ours. The "receiving time" of a packet is the peer's receive timestamp
//! when both packets of the pair carry one, else the arrival of the ACK
//! frame that acknowledged it.

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

/// What became of a tracked packet (a lost one stays `InFlight` in its
/// record: see `SpacingLog::resolved_below`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    InFlight,
    Acked {
        time_acked: Instant,
        receive_time: Option<Duration>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PacketRecord {
    pkt_num: u64,
    /// How many packets were recorded before this one since the log
    /// (re)started: the capacity counts packets sent, not packet numbers.
    seq: u64,
    time_sent: Instant,
    fate: Fate,
}

/// Slots the ring starts with; it doubles when a packet still needed is in
/// the way.
const INITIAL_SLOTS: usize = 64;

/// Send and ACK times of the recent packets, kept only while a loss could
/// still need them (see the module documentation).
///
/// A ring indexed by packet number: packet `n` lives in slot `n mod slots`,
/// so an ACK finds its packets without a search and nothing is removed per
/// ACK. A slot is reused by the packet `slots` numbers later, unless the
/// packet in it could still be a loss's predecessor, in which case the ring
/// doubles. A packet can be such a predecessor while it or one of the two
/// packets sent after it is in flight (after that, every loss that could
/// name it as a predecessor is already past): the rule by which the
/// records used to be dropped, so the same packets are there when a loss
/// looks them up.
#[derive(Clone, Debug)]
pub struct SpacingLog {
    slots: Vec<Option<PacketRecord>>,
    /// Packets recorded since the log (re)started.
    recorded: u64,
    newest_pkt_num: Option<u64>,
    /// Every packet below this number is resolved: loss detection declared
    /// the one below it lost, and with it every older one still in flight.
    resolved_below: u64,
    capacity: usize,
    /// The ring grows no further: `capacity` packets with as many skipped
    /// packet numbers among them.
    max_slots: usize,
}

impl SpacingLog {
    /// Keeps at most `capacity` (at least 3) packets.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(3);
        SpacingLog {
            slots: Vec::new(),
            recorded: 0,
            newest_pkt_num: None,
            resolved_below: 0,
            capacity,
            max_slots: capacity
                .checked_next_power_of_two()
                .and_then(|slots| slots.checked_mul(2))
                .unwrap_or(usize::MAX),
        }
    }

    /// Packets tracked: those a loss could still need (walks the ring; for
    /// tests and diagnostics).
    pub fn len(&self) -> usize {
        self.slots
            .iter()
            .flatten()
            .filter(|r| self.within_capacity(r) && self.may_be_needed(r))
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots allocated (memory held).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    fn slot_of(&self, pkt_num: u64) -> usize {
        // The length is a power of two: the low bits are the slot.
        (pkt_num as usize) & (self.slots.len() - 1)
    }

    /// The record of packet `pkt_num`, if the ring still holds it.
    fn record(&self, pkt_num: u64) -> Option<&PacketRecord> {
        if self.slots.is_empty() {
            return None;
        }
        self.slots[self.slot_of(pkt_num)]
            .as_ref()
            .filter(|r| r.pkt_num == pkt_num)
    }

    /// Neither acknowledged nor declared lost.
    fn in_flight(&self, record: &PacketRecord) -> bool {
        record.fate == Fate::InFlight && record.pkt_num >= self.resolved_below
    }

    /// Among the last `capacity` packets recorded (older ones count as
    /// forgotten, as when the oldest went first).
    fn within_capacity(&self, record: &PacketRecord) -> bool {
        record.seq + self.capacity as u64 >= self.recorded
    }

    /// Whether `record` or one of the (up to) two packets recorded after it
    /// is in flight, or fewer than two were recorded after it: it may then
    /// still be a loss's predecessor.
    fn may_be_needed(&self, record: &PacketRecord) -> bool {
        if self.in_flight(record) || record.seq + 2 >= self.recorded {
            return true;
        }
        let mut found = 0;
        let mut pkt_num = record.pkt_num;
        // The next two recorded follow within the ring (a skipped number
        // leaves its slot to an older or newer packet).
        for _ in 1..self.slots.len() {
            pkt_num = pkt_num.wrapping_add(1);
            if let Some(next) = self.record(pkt_num) {
                if next.seq > record.seq {
                    if self.in_flight(next) {
                        return true;
                    }
                    found += 1;
                    if found == 2 {
                        return false;
                    }
                }
            }
        }
        // Not both found: keep it.
        true
    }

    /// A packet that counts towards bytes in flight was sent.
    pub fn on_sent(&mut self, pkt_num: u64, time_sent: Instant) {
        if self.newest_pkt_num.is_some_and(|newest| pkt_num <= newest) {
            // A new packet-number space (or a stack restarting its
            // numbering): the old records cannot be the new ones'
            // predecessors.
            self.slots.fill(None);
            self.recorded = 0;
            self.resolved_below = 0;
        }
        if self.slots.is_empty() {
            self.slots = vec![None; INITIAL_SLOTS.min(self.max_slots)];
        }
        let record = PacketRecord {
            pkt_num,
            seq: self.recorded,
            time_sent,
            fate: Fate::InFlight,
        };
        self.newest_pkt_num = Some(pkt_num);
        self.recorded += 1;
        loop {
            let slot = self.slot_of(pkt_num);
            let keep = self.slots[slot]
                .as_ref()
                .is_some_and(|r| self.within_capacity(r) && self.may_be_needed(r));
            if !keep || self.slots.len() >= self.max_slots {
                self.slots[slot] = Some(record);
                return;
            }
            self.grow();
        }
    }

    /// Doubles the ring; every record moves to its slot in the new one.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![None; old.len() * 2];
        for record in old.into_iter().flatten() {
            let slot = self.slot_of(record.pkt_num);
            self.slots[slot] = Some(record);
        }
    }

    /// The record of `pkt_num` sent at `time_sent`, among the last
    /// `capacity` packets.
    fn find(&self, pkt_num: u64, time_sent: Instant) -> Option<&PacketRecord> {
        self.record(pkt_num)
            .filter(|r| r.time_sent == time_sent && self.within_capacity(r))
    }

    /// The ACK frame that arrived at `now` acknowledged `acked`. Its arrival
    /// is each packet's ACK time (the frame's `now`, not a per-packet stamp).
    pub fn on_acked(&mut self, now: Instant, acked: &[AckedPacket]) {
        if self.slots.is_empty() {
            return;
        }
        let mask = self.slots.len() - 1;
        for packet in acked {
            if let Some(record) = &mut self.slots[(packet.pkt_num as usize) & mask] {
                if record.pkt_num == packet.pkt_num && record.time_sent == packet.time_sent {
                    record.fate = Fate::Acked {
                        time_acked: now,
                        receive_time: packet.receive_time,
                    };
                }
            }
        }
    }

    /// Loss detection declared `pkt_num` lost: it and every packet before it
    /// still unacknowledged are lost (which frees their slots).
    pub fn on_lost(&mut self, pkt_num: u64, time_sent: Instant) {
        if self.find(pkt_num, time_sent).is_some() {
            self.resolved_below = self.resolved_below.max(pkt_num.saturating_add(1));
        }
    }

    /// The packet recorded just before `record`, if the ring holds it.
    fn recorded_before(&self, record: &PacketRecord) -> Option<&PacketRecord> {
        let seq = record.seq.checked_sub(1)?;
        let mut pkt_num = record.pkt_num;
        // Numbers QUIC skipped lie between; their slots hold other packets.
        for _ in 1..self.slots.len() {
            pkt_num = pkt_num.checked_sub(1)?;
            if let Some(previous) = self.record(pkt_num) {
                // The highest number below is the packet recorded just
                // before, unless that one is gone.
                return (previous.seq == seq).then_some(previous);
            }
        }
        None
    }

    /// The send spacing of the two packets sent just before `pkt_num` (sent
    /// at `time_sent`) and the spacing at which they were received: `None`
    /// if `pkt_num` or a predecessor is not tracked or a predecessor is not
    /// acknowledged. The source is [`SpacingSource::None`] when the receive
    /// spacing is not observable (both acknowledged at the same instant,
    /// without receive timestamps).
    pub fn spacing_before(&self, pkt_num: u64, time_sent: Instant) -> Option<PairSpacing> {
        let lost = self.find(pkt_num, time_sent)?;
        let second = *self.recorded_before(lost)?;
        let first = *self.recorded_before(&second)?;
        if !self.within_capacity(&first) {
            return None;
        }
        pair_spacing(&first, &second)
    }
}

/// The spacing of `first` and `second` (sent in that order), if both are
/// acknowledged.
fn pair_spacing(first: &PacketRecord, second: &PacketRecord) -> Option<PairSpacing> {
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
        assert!(small.find(7, t0).is_some());
        assert!(small.find(6, t0).is_none(), "beyond the capacity");
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
            let found = log.find(n, t0 + ms(i as u64)).map(|r| (r.pkt_num, r.seq));
            assert_eq!(found, Some((n, i as u64)), "packet {n}");
            assert!(
                log.find(n, t0 + ms(100)).is_none(),
                "packet {n}, other time"
            );
        }
        for missing in [3, 6, 9, 100] {
            assert!(log.find(missing, t0).is_none(), "packet {missing}");
        }
        // The packets recorded before 7 are 5 and 4, past the skipped 6.
        let seven = *log.find(7, t0 + ms(5)).expect("7");
        let before = log.recorded_before(&seven).expect("5");
        assert_eq!(before.pkt_num, 5);
        assert_eq!(log.recorded_before(before).map(|r| r.pkt_num), Some(4));
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

    /// The log as it was written before the ring, kept here as the
    /// reference: records in a deque, each dropped once the two after it
    /// are resolved, the oldest going first beyond the capacity.
    struct DequeLog {
        /// Each record with whether it was declared lost.
        records: std::collections::VecDeque<(PacketRecord, bool)>,
        capacity: usize,
    }

    impl DequeLog {
        fn on_sent(&mut self, pkt_num: u64, time_sent: Instant) {
            if self.records.back().is_some_and(|r| pkt_num <= r.0.pkt_num) {
                self.records.clear();
            }
            let record = PacketRecord {
                pkt_num,
                seq: 0,
                time_sent,
                fate: Fate::InFlight,
            };
            self.records.push_back((record, false));
            while self.records.len() > self.capacity {
                self.records.pop_front();
            }
        }

        fn find(&self, pkt_num: u64, time_sent: Instant) -> Option<usize> {
            let i = self
                .records
                .binary_search_by_key(&pkt_num, |r| r.0.pkt_num)
                .ok()?;
            (self.records[i].0.time_sent == time_sent).then_some(i)
        }

        fn resolved(&self, i: usize) -> bool {
            let (record, lost) = self.records[i];
            lost || record.fate != Fate::InFlight
        }

        fn prune(&mut self) {
            while self.records.len() >= 3 && self.resolved(1) && self.resolved(2) {
                self.records.pop_front();
            }
        }

        fn on_acked(&mut self, now: Instant, acked: &[AckedPacket]) {
            for p in acked {
                if let Some(i) = self.find(p.pkt_num, p.time_sent) {
                    self.records[i].0.fate = Fate::Acked {
                        time_acked: now,
                        receive_time: p.receive_time,
                    };
                }
            }
            self.prune();
        }

        fn on_lost(&mut self, pkt_num: u64, time_sent: Instant) {
            if let Some(i) = self.find(pkt_num, time_sent) {
                for r in self.records.range_mut(..=i) {
                    r.1 = true;
                }
            }
            self.prune();
        }

        /// The two records before the lost one.
        fn before(&self, pkt_num: u64, time_sent: Instant) -> Option<(PacketRecord, PacketRecord)> {
            let i = self.find(pkt_num, time_sent)?;
            (i >= 2).then(|| (self.records[i - 2].0, self.records[i - 1].0))
        }
    }

    /// Against the deque it replaces, on long random runs (skipped packet
    /// numbers, ACKs out of order and in bursts, losses of the oldest
    /// packets in flight, new packet-number spaces, a small capacity): every
    /// loss finds the same two predecessors with the same send and ACK
    /// times. Without the ring's growth (a slot reused whatever it holds)
    /// the predecessors of an old loss are gone and this fails.
    #[test]
    fn ring_finds_what_the_deque_found() {
        let t0 = Instant::now();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        let mut compared = 0;
        for capacity in [3, 8, 50, 16_384] {
            let mut ring = SpacingLog::new(capacity);
            let mut deque = DequeLog {
                records: Default::default(),
                capacity: capacity.max(3),
            };
            let mut in_flight: Vec<(u64, Instant)> = Vec::new();
            let mut pkt_num = 0u64;
            // Packets kept in flight: from a few to several times the
            // ring's first size.
            let mut window = 0;
            for step in 0..20_000u64 {
                let now = t0 + Duration::from_micros(step * 100);
                if step % 2_000 == 0 {
                    window = next(150) as usize;
                }
                match (next(1_000), in_flight.len()) {
                    (0, _) => {
                        // A new packet-number space.
                        pkt_num = next(3);
                        in_flight.clear();
                    }
                    (16..=600, n) if n > window => {
                        // An ACK of a few packets, mostly the oldest.
                        let mut acked = Vec::new();
                        for _ in 0..1 + next(3) {
                            if in_flight.is_empty() {
                                break;
                            }
                            let i = if next(4) == 0 {
                                next(in_flight.len() as u64) as usize
                            } else {
                                0
                            };
                            let (n, sent) = in_flight.remove(i);
                            let mut p = AckedPacket::new(n, 1000, sent, now);
                            p.receive_time = (next(3) == 0).then(|| Duration::from_micros(step));
                            acked.push(p);
                        }
                        acked.sort_by_key(|p| p.pkt_num);
                        ring.on_acked(now, &acked);
                        deque.on_acked(now, &acked);
                    }
                    (1..=15, n) if n > 0 => {
                        // A loss: the largest lost and every packet before
                        // it still in flight.
                        let i = if next(4) == 0 {
                            next(in_flight.len().min(4) as u64) as usize
                        } else {
                            0
                        };
                        let (n, sent) = in_flight[i];
                        let want = deque.before(n, sent);
                        let got = ring.spacing_before(n, sent);
                        let reference =
                            want.and_then(|(first, second)| pair_spacing(&first, &second));
                        assert_eq!(got, reference, "capacity {capacity}, step {step}");
                        compared += usize::from(got.is_some());
                        ring.on_lost(n, sent);
                        deque.on_lost(n, sent);
                        in_flight.drain(..=i);
                    }
                    _ => {
                        // QUIC skips a number now and then.
                        pkt_num += 1 + u64::from(next(20) == 0);
                        ring.on_sent(pkt_num, now);
                        deque.on_sent(pkt_num, now);
                        in_flight.push((pkt_num, now));
                    }
                }
                // About the packets in flight (fewer than 150 here), not
                // all ever sent.
                assert!(ring.slots() <= 512, "{} slots", ring.slots());
            }
        }
        assert!(compared > 200, "{compared} losses classified");
    }
}

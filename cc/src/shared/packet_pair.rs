//! The bottleneck's capacity from packet pairs, measured by the receiver.
//!
//! Two packets sent back to back leave the slowest link of the path spaced
//! by the time that link takes to serialise the second one (the packet-pair
//! principle: Keshav, "A control-theoretic approach to flow control",
//! SIGCOMM 1991; Jacobson's "packet conservation" spacing). The receiver's
//! own stamps (draft-ietf-quic-receive-ts, `AckedPacket::receive_time`)
//! measure that spacing without the return path's noise, so
//! `capacity = size / (R₂ − R₁)` for packets `n` and `n+1` that were sent
//! much closer together than they arrived. A paced sender that releases
//! packets two at a time (the Vegas family's bursts of two, 004 section 3.4)
//! produces such a pair every pacing interval, whatever its average rate.
//!
//! Cross traffic that slips between the two packets makes the spacing wider
//! (the estimate lower); jitter on the path and a receiver that stamps a
//! batch of packets at once make it narrower or wider. None of that is rare,
//! so the capacity is the median of the last `window` pairs, and there is
//! none before `min_pairs` pairs were measured.
//!
//! Stamps come from the peer and were judged by the host before they got
//! here ([`crate::shared::peer_clock`]): a stamp the host refused arrives as
//! none and breaks the pair, so a spacing longer than the round trips allow
//! never gets here, and two stamps on different clocks of the peer (a step
//! the host believed between them) form no pair. A pair whose stamps go
//! backwards, whose spacing is zero or whose rate exceeds
//! [`MAX_PLAUSIBLE_BYTES_PER_SEC`] gives no sample either. The worst a lying
//! peer can do is mislead its own download.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::events::AckedPacket;

/// 1 Tbit/s: no pair arrives faster than this over a real path.
pub const MAX_PLAUSIBLE_BYTES_PER_SEC: f64 = 125e9;

/// Two packets count as sent back to back when their send times differ by at
/// most their spacing at the receiver divided by this: half of it. The
/// spacing is the bottleneck's when the second packet reaches it while the
/// first is still being serialised there: a send gap below the
/// serialisation time; half of it leaves room for jitter. A real server
/// (qlog on) takes 170-220 µs between the two packets of a train, and a
/// 1350-byte packet takes 540 µs at 20 Mbit/s: a quarter (135 µs), the
/// first value, refused every pair of the real start-up over `vegas-emu`,
/// and the capacity was known one round trip later than in the simulator,
/// whose trains leave at one instant. Compared in whole nanoseconds
/// (`gap > spacing / 2` is `2 × gap > spacing` exactly), which is the
/// verdict the fraction in seconds gave (its conversions never merge
/// durations half a nanosecond apart) without two conversions per packet.
const BACK_TO_BACK_DIVISOR: u32 = 2;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Stamped {
    pkt_num: u64,
    time_sent: Instant,
    receive_time: Duration,
    clock_epoch: u32,
}

/// Capacity estimate from receive-timestamp packet pairs.
#[derive(Clone, Debug)]
pub struct PacketPairEstimator {
    previous: Option<Stamped>,
    /// The last `window` samples, oldest first.
    recent: VecDeque<f64>,
    /// The same samples in ascending order, kept on insert: the capacity is
    /// read on every packet sent (through the pacer), so it must cost
    /// neither a sort nor an allocation there.
    sorted: Vec<f64>,
    /// The median of `sorted` once there are `min_pairs`, made when a
    /// sample enters: read far more often than a pair is measured.
    capacity: Option<f64>,
    window: usize,
    min_pairs: usize,
    samples: u64,
    /// Judge "back to back" against the capacity's own serialisation time
    /// once there is a capacity (see [`PacketPairEstimator::with_gap_from_capacity`]).
    gap_from_capacity: bool,
    /// Half the serialisation time of a byte at `capacity`, in nanoseconds:
    /// a send gap up to `size ×` this is back to back.
    half_nanos_per_byte: Option<f64>,
}

/// The median of values in ascending order.
fn median_of_sorted(sorted: &[f64]) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    })
}

impl PacketPairEstimator {
    /// An estimator whose capacity is the median of the last `window`
    /// pairs, once there are at least `min_pairs` (both at least 1).
    pub fn new(window: usize, min_pairs: usize) -> Self {
        let window = window.max(1);
        PacketPairEstimator {
            previous: None,
            recent: VecDeque::with_capacity(window),
            sorted: Vec::with_capacity(window),
            capacity: None,
            window,
            min_pairs: min_pairs.clamp(1, window),
            samples: 0,
            gap_from_capacity: false,
            half_nanos_per_byte: None,
        }
    }

    /// Once a capacity is known, a pair is back to back when its send gap
    /// is at most half the time the capacity takes to serialise the second
    /// packet, not half the pair's own spacing at the receiver. Judged by
    /// its own spacing, a pair whose spacing jitter widened passes more
    /// often than one whose jitter narrowed, and the median reads low: on
    /// a 100 Mbit/s link (110 µs a packet) with the simulator's 0.1 ms of
    /// delay jitter, 80.6 Mbit/s of 98 (LEO matrix, seed 5). The
    /// capacity's serialisation time does not depend on the pair's jitter.
    /// Until the first capacity, the pair's own spacing decides.
    pub fn with_gap_from_capacity(mut self, on: bool) -> Self {
        self.gap_from_capacity = on;
        self
    }

    /// One newly acknowledged packet, in ascending packet-number order.
    /// Packets smaller than `min_size` (control packets) neither form nor
    /// close a pair. Returns the pair's capacity sample in bytes per second.
    #[inline]
    pub fn on_packet(&mut self, packet: &AckedPacket, min_size: usize) -> Option<f64> {
        // Decided where the caller's loop runs: most packets of an ACK may
        // be small or unstamped, and a call for each costs more than the
        // test (the caller runs this on every acknowledged packet).
        match packet.receive_time {
            Some(receive_time) if packet.size >= min_size => self.on_stamped(packet, receive_time),
            _ => {
                self.previous = None;
                None
            }
        }
    }

    /// [`PacketPairEstimator::on_packet`] of a stamped packet of at least
    /// the minimum size, `receive_time` its stamp.
    fn on_stamped(&mut self, packet: &AckedPacket, receive_time: Duration) -> Option<f64> {
        let current = Stamped {
            pkt_num: packet.pkt_num,
            time_sent: packet.time_sent,
            receive_time,
            clock_epoch: packet.clock_epoch,
        };
        let previous = self.previous.replace(current)?;
        if previous.pkt_num.checked_add(1) != Some(current.pkt_num)
            || previous.clock_epoch != current.clock_epoch
        {
            return None;
        }
        let spacing = current.receive_time.checked_sub(previous.receive_time)?;
        if spacing.is_zero() {
            return None;
        }
        let largest_gap = match self.half_nanos_per_byte {
            Some(per_byte) => Duration::from_nanos((packet.size as f64 * per_byte) as u64),
            None => spacing / BACK_TO_BACK_DIVISOR,
        };
        // The send gap `current − previous` must be neither negative nor
        // above `largest_gap`, asked as `previous + largest_gap < current`:
        // the same verdict (instants are exact), and adding a duration to an
        // instant costs about half of subtracting two instants.
        if current.time_sent < previous.time_sent
            || previous
                .time_sent
                .checked_add(largest_gap)
                .is_some_and(|latest| current.time_sent > latest)
        {
            // Sent out of order, or spaced by the sender: the spacing is
            // the sender's, not the path's.
            return None;
        }
        let rate = packet.size as f64 / spacing.as_secs_f64();
        if !(rate.is_finite() && rate <= MAX_PLAUSIBLE_BYTES_PER_SEC) {
            return None;
        }
        self.samples = self.samples.saturating_add(1);
        let at = self.sorted.partition_point(|v| v.total_cmp(&rate).is_lt());
        let oldest = if self.recent.len() == self.window {
            self.recent.pop_front()
        } else {
            None
        };
        match oldest {
            // The window slides: the oldest sample's place is taken by
            // moving the ones between it and the new one's place by one,
            // in one move (a removal and an insertion would move the tail
            // of the window twice).
            Some(oldest) => {
                let gone = self
                    .sorted
                    .partition_point(|v| v.total_cmp(&oldest).is_lt());
                let place = if gone < at {
                    self.sorted.copy_within(gone + 1..at, gone);
                    at - 1
                } else {
                    self.sorted.copy_within(at..gone, at + 1);
                    at
                };
                if let Some(v) = self.sorted.get_mut(place) {
                    *v = rate;
                }
            }
            None => self.sorted.insert(at, rate),
        }
        self.recent.push_back(rate);
        self.capacity = if self.recent.len() < self.min_pairs {
            None
        } else {
            median_of_sorted(&self.sorted)
        };
        if self.gap_from_capacity {
            self.half_nanos_per_byte = self
                .capacity
                .map(|c| 1e9 / (f64::from(BACK_TO_BACK_DIVISOR) * c));
        }
        Some(rate)
    }

    /// The capacity in bytes per second: the median of the last `window`
    /// pairs; `None` before `min_pairs` pairs.
    pub fn capacity(&self) -> Option<f64> {
        self.capacity
    }

    /// Pairs measured since creation.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Forgets the path (its capacity may have changed).
    pub fn reset(&mut self) {
        self.previous = None;
        self.recent.clear();
        self.sorted.clear();
        self.capacity = None;
        self.half_nanos_per_byte = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(t0: Instant, n: u64, sent_us: u64, recv_us: Option<u64>, size: usize) -> AckedPacket {
        let sent = t0 + Duration::from_micros(sent_us);
        let mut p = AckedPacket::new(n, size, sent, sent + Duration::from_millis(600));
        p.receive_time = recv_us.map(Duration::from_micros);
        p
    }

    #[test]
    fn back_to_back_pair_measures_the_bottleneck() {
        let t0 = Instant::now();
        let mut e = PacketPairEstimator::new(3, 1);
        // 1350 bytes 540 µs apart at the receiver: 2.5 MB/s (20 Mbit/s).
        assert_eq!(e.on_packet(&packet(t0, 1, 0, Some(1000), 1350), 675), None);
        let rate = e
            .on_packet(&packet(t0, 2, 0, Some(1540), 1350), 675)
            .unwrap();
        assert!((rate - 1350.0 / 540e-6).abs() < 1e-6);
        assert_eq!(e.capacity(), Some(rate));
    }

    /// Pairs over a link of 100 µs a packet whose delay jitter makes the
    /// spacing at the receiver 60, 100 and 160 µs in turn: three sent at
    /// once (every rule admits them: the first capacity, after
    /// `min_pairs` = 3), then twelve sent 35 µs apart. Returns the
    /// estimator's capacity over its window of 9.
    fn jittered_pairs(gap_from_capacity: bool) -> Option<f64> {
        let t0 = Instant::now();
        let mut e = PacketPairEstimator::new(9, 3).with_gap_from_capacity(gap_from_capacity);
        let (mut sent, mut received) = (0u64, 1000u64);
        e.on_packet(&packet(t0, 0, sent, Some(received), 1375), 675);
        for n in 1..=15u64 {
            sent += if n <= 3 { 0 } else { 35 };
            received += [60, 100, 160][(n as usize - 1) % 3];
            e.on_packet(&packet(t0, n, sent, Some(received), 1375), 675);
        }
        e.capacity()
    }

    #[test]
    fn jitter_of_a_packet_time_biases_pairs_judged_by_their_own_spacing() {
        // The reference: 1375 bytes in 100 µs. Half the capacity's time (50
        // µs) admits every pair sent 35 µs apart; the last nine are three
        // of each spacing, whose median is 100 µs.
        let truth = 1375.0 / 100e-6;
        let judged_by_capacity = jittered_pairs(true).unwrap();
        assert!(
            (judged_by_capacity / truth - 1.0).abs() < 1e-9,
            "{judged_by_capacity}"
        );
        // By its own spacing a 60 µs pair (half: 30 µs, less than the 35 µs
        // gap) is refused: the last nine admitted are the third start-up
        // pair (160 µs) and four each of 100 and 160 µs, median 160 µs.
        let judged_by_spacing = jittered_pairs(false).unwrap();
        assert!(
            (judged_by_spacing - 1375.0 / 160e-6).abs() < 1e-6,
            "{judged_by_spacing}"
        );
    }

    #[test]
    fn stamps_on_two_clocks_of_the_peer_are_no_pair() {
        let t0 = Instant::now();
        let mut e = PacketPairEstimator::new(3, 1);
        e.on_packet(&packet(t0, 1, 0, Some(1000), 1350), 675);
        // The host believed the peer's clock stepped between packets 1 and
        // 2: their 540 µs spacing mixes two clocks.
        let mut stepped = packet(t0, 2, 0, Some(1540), 1350);
        stepped.clock_epoch = 1;
        assert_eq!(e.on_packet(&stepped, 675), None);
        // Packets 2 and 3 are on the same clock.
        let mut next = packet(t0, 3, 0, Some(2080), 1350);
        next.clock_epoch = 1;
        let rate = e.on_packet(&next, 675).expect("a pair");
        assert!((rate - 1350.0 / 540e-6).abs() < 1e-6);
        // Without the clock's number, the same stamps form a pair.
        let mut blind = PacketPairEstimator::new(3, 1);
        blind.on_packet(&packet(t0, 1, 0, Some(1000), 1350), 675);
        assert!(blind
            .on_packet(&packet(t0, 2, 0, Some(1540), 1350), 675)
            .is_some());
    }

    #[test]
    fn paced_packets_are_not_a_pair() {
        let t0 = Instant::now();
        let mut e = PacketPairEstimator::new(3, 1);
        e.on_packet(&packet(t0, 1, 0, Some(1000), 1350), 675);
        // Sent 1 ms apart, received 1 ms apart: the sender's spacing.
        assert_eq!(
            e.on_packet(&packet(t0, 2, 1000, Some(2000), 1350), 675),
            None
        );
        // Sent 300 µs apart, received 540 µs apart: 300 > 0.5 × 540.
        assert_eq!(
            e.on_packet(&packet(t0, 3, 1300, Some(2540), 1350), 675),
            None
        );
        // 200 µs <= 270 µs (a real server's gap within a train): back to back.
        let rate = e
            .on_packet(&packet(t0, 4, 1500, Some(3080), 1350), 675)
            .expect("a pair");
        assert!((rate - 1350.0 / 540e-6).abs() < 1.0, "{rate}");
    }

    #[test]
    fn a_send_gap_of_exactly_half_the_spacing_is_back_to_back() {
        let t0 = Instant::now();
        let spacing = Duration::from_nanos(540_001);
        // The reference: 2 × gap against the spacing, in whole nanoseconds.
        for gap_ns in [270_000u64, 270_001] {
            let back_to_back = 2 * gap_ns <= spacing.as_nanos() as u64;
            let mut e = PacketPairEstimator::new(3, 1);
            let mut first = packet(t0, 1, 0, None, 1350);
            first.receive_time = Some(Duration::from_micros(1000));
            e.on_packet(&first, 675);
            let mut second = packet(t0, 2, 0, None, 1350);
            second.time_sent = t0 + Duration::from_nanos(gap_ns);
            second.receive_time = Some(Duration::from_micros(1000) + spacing);
            assert_eq!(
                e.on_packet(&second, 675).is_some(),
                back_to_back,
                "{gap_ns}"
            );
        }
    }

    #[test]
    fn a_pair_whose_second_packet_left_first_is_no_pair() {
        let t0 = Instant::now();
        // The reference: the gap as a difference of instants, none when
        // the second packet left before the first.
        for second_ns in [999u64, 1_000, 1_001] {
            let first_sent = t0 + Duration::from_nanos(1_000);
            let second_sent = t0 + Duration::from_nanos(second_ns);
            let back_to_back = second_sent.checked_duration_since(first_sent).is_some();
            let mut e = PacketPairEstimator::new(3, 1);
            let mut first = packet(t0, 1, 0, Some(1000), 1350);
            first.time_sent = first_sent;
            e.on_packet(&first, 675);
            let mut second = packet(t0, 2, 0, Some(1540), 1350);
            second.time_sent = second_sent;
            assert_eq!(
                e.on_packet(&second, 675).is_some(),
                back_to_back,
                "{second_ns}"
            );
        }
    }

    #[test]
    fn gaps_small_packets_missing_and_bad_stamps_give_no_sample() {
        let t0 = Instant::now();
        let mut e = PacketPairEstimator::new(3, 1);
        e.on_packet(&packet(t0, 1, 0, Some(1000), 1350), 675);
        // Packet 2 lost: 1 and 3 are no pair.
        assert_eq!(e.on_packet(&packet(t0, 3, 0, Some(2080), 1350), 675), None);
        // A small packet closes nothing.
        assert_eq!(e.on_packet(&packet(t0, 4, 0, Some(2600), 60), 675), None);
        assert_eq!(e.on_packet(&packet(t0, 5, 0, Some(3200), 1350), 675), None);
        // Stamps backwards, equal, or missing.
        assert_eq!(e.on_packet(&packet(t0, 6, 0, Some(3100), 1350), 675), None);
        assert_eq!(e.on_packet(&packet(t0, 7, 0, Some(3100), 1350), 675), None);
        assert_eq!(e.on_packet(&packet(t0, 8, 0, None, 1350), 675), None);
        assert_eq!(e.on_packet(&packet(t0, 9, 0, Some(9000), 1350), 675), None);
        // Faster than 1 Tbit/s: a stamp that lies.
        let mut fast = packet(t0, 10, 0, None, 1350);
        fast.receive_time = Some(Duration::from_nanos(9_000_001));
        assert_eq!(e.on_packet(&fast, 675), None);
        assert_eq!(e.samples(), 0);
        assert_eq!(e.capacity(), None);
    }

    #[test]
    fn capacity_matches_a_sorted_copy_of_the_window_as_it_slides() {
        let t0 = Instant::now();
        let (window, min_pairs) = (7, 3);
        let mut e = PacketPairEstimator::new(window, min_pairs);
        let mut kept: VecDeque<f64> = VecDeque::new();
        // Spacings from a small LCG, repeats included, so that equal
        // samples enter and leave the window.
        let mut x = 12345u64;
        for i in 0..200u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let spacing_us = 100 + (x >> 33) % 13 * 20;
            let n = 10 + i * 3;
            let recv = 1_000 + i * 10_000;
            e.on_packet(&packet(t0, n, 0, Some(recv), 1000), 500);
            let rate = e
                .on_packet(&packet(t0, n + 1, 0, Some(recv + spacing_us), 1000), 500)
                .expect("a pair");
            kept.push_back(rate);
            if kept.len() > window {
                kept.pop_front();
            }
            let mut reference: Vec<f64> = kept.iter().copied().collect();
            reference.sort_by(|a, b| a.total_cmp(b));
            let mid = reference.len() / 2;
            let median = if reference.len() % 2 == 1 {
                reference[mid]
            } else {
                (reference[mid - 1] + reference[mid]) / 2.0
            };
            let expected = (reference.len() >= min_pairs).then_some(median);
            assert_eq!(e.capacity(), expected, "after pair {i}");
            // The whole window, not only its median, as the sorted copy.
            assert_eq!(e.sorted, reference, "after pair {i}");
        }
    }

    #[test]
    fn capacity_is_the_median_of_the_last_pairs() {
        let t0 = Instant::now();
        let mut e = PacketPairEstimator::new(5, 3);
        let mut n = 0;
        let mut recv = 0;
        let mut pair = |e: &mut PacketPairEstimator, spacing_us: u64| {
            // A gap in the numbers between pairs: only pairs form pairs.
            n += 3;
            recv += 10_000;
            e.on_packet(&packet(t0, n, 0, Some(recv), 1000), 500);
            e.on_packet(&packet(t0, n + 1, 0, Some(recv + spacing_us), 1000), 500)
        };
        assert!(pair(&mut e, 100).is_some());
        pair(&mut e, 400);
        assert_eq!(e.capacity(), None, "fewer than min_pairs");
        pair(&mut e, 200);
        // 1000 bytes per 100, 400, 200 µs: the median is 5 MB/s.
        assert!((e.capacity().unwrap() - 1000.0 / 200e-6).abs() < 1e-3);
        for spacing in [50, 50, 50] {
            pair(&mut e, spacing);
        }
        // The window keeps 400, 200, 50, 50, 50: the median is 20 MB/s.
        assert!((e.capacity().unwrap() - 1000.0 / 50e-6).abs() < 1e-3);
        assert_eq!(e.samples(), 6);
        e.reset();
        assert_eq!(e.capacity(), None);
    }
}

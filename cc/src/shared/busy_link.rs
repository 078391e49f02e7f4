//! Is the link already busy? What the initial window's own packets did to
//! the delay, read before a start-up jump.
//!
//! A start-up jump sized from the bottleneck's capacity (half its BDP) is
//! right on an idle link and wrong on one that other flows already fill:
//! packet pairs measure the link's capacity, not what is free, and the
//! jump's excess arrives a whole round before any ACK can show it. At GEO a
//! joiner's jump to 548 packets onto a 20 Mbit/s link its neighbour already
//! filled dropped 727 packets of a 25-packet buffer, and in a 500-packet
//! buffer left 400 packets standing that both flows' path probes then took
//! for the path (docs/satellite.md, "Where vegas-sat still loses").
//!
//! The initial window tells the two apart. On an idle link its packets
//! leave the bottleneck as they came: the delay each meets is the same,
//! but for the second of a back-to-back pair, which waits one packet's time
//! behind the first. On a link the others keep busy, every packet we add
//! is more than the link serves, and it stays in the queue until the
//! others slow down (a round later at best): each packet of ours meets the
//! ones we sent before it, so the delay climbs by a packet's time `s / C`
//! for every packet sent (the self-loading that pathload and the probe-gap
//! models of available bandwidth read; Jain and Dovrolis 2002, Strauss et
//! al. 2003). Measured on the joins scenario (GEO 20/2, seed 1, one flow
//! already there): the joiner's forward delay rose by 6.6 ms over its first
//! ten packets (0.55 ms each); alone, the first packets of the pairs stayed
//! within 0.1 ms of each other.
//!
//! The test compares the smallest delay of the later half of the samples
//! with that of the earlier half, each the second smallest, so that one
//! outlier does not decide (on picoquic's idle 250/3 path the one
//! full-size packet sent with the handshake, a round before the initial
//! window, met a millisecond less than the rest). On an idle link the
//! smallest of each half is a first of a pair, so the pairs' own wait
//! cancels. The link is busy when the rise is at least `BUSY_FRACTION` of
//! what a saturated link would add for the packets sent between the two
//! halves, and at least `MIN_RISE` (the delay noise of a path, which at
//! 250 Mbit/s is longer than a packet's time). Medians, tried, miss a
//! joiner more often: a half's median moves with the others' queue, its
//! smallest only with what the link kept of ours.
//!
//! The delay is one-way with receive stamps (the stamp less the send time:
//! only differences count, so the clocks' offset cancels), else the RTT of
//! each ACK's largest packet less the ACK delay the peer reported (the
//! return path's noise is in it; an idle return carrying only our few ACKs
//! adds none). Samples come only from the first round's full-size packets;
//! fewer than `MIN_SAMPLES` (a thinning peer acknowledges the initial
//! window in one or two ACKs) give no verdict.

use std::time::Duration;

/// Samples kept: the initial window and a little more.
const MAX_SAMPLES: usize = 32;

/// Fewer samples than this give no verdict.
const MIN_SAMPLES: usize = 6;

/// A rise of at least this fraction of a saturated link's is "busy": the
/// others' own queue moves too, and half the expected rise leaves room for
/// it either way.
const BUSY_FRACTION: f64 = 0.5;

/// A rise below this is noise, whatever the link's rate: the simulator's
/// link jitter is up to 0.1 ms a datagram, and at 250 Mbit/s ten packets
/// take 0.44 ms.
const MIN_RISE: Duration = Duration::from_micros(250);

/// One delay sample: when the packet was sent (nanoseconds, one clock per
/// connection) and the delay it met (nanoseconds, any fixed offset).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    sent_nanos: i64,
    delay_nanos: i128,
}

/// The verdict's parts, for the qlog and the tests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BusyVerdict {
    pub busy: bool,
    /// The later half's second smallest delay less the earlier half's.
    pub rise: Duration,
    /// What a saturated link would have added for the packets between.
    pub saturated_rise: Duration,
}

/// The first round's delay samples and the verdict on them.
#[derive(Clone, Debug, Default)]
pub struct BusyLinkTest {
    samples: Vec<Sample>,
}

impl BusyLinkTest {
    pub fn new() -> Self {
        BusyLinkTest {
            samples: Vec::with_capacity(MAX_SAMPLES),
        }
    }

    /// One full-size packet's delay: `delay_nanos` on any fixed offset
    /// (a receive stamp less the send time, or an RTT). Kept while fewer
    /// than `MAX_SAMPLES` are.
    pub fn on_sample(&mut self, sent_nanos: i64, delay_nanos: i128) {
        if self.samples.len() < MAX_SAMPLES {
            self.samples.push(Sample {
                sent_nanos,
                delay_nanos,
            });
        }
    }

    /// Samples so far.
    pub fn samples(&self) -> usize {
        self.samples.len()
    }

    /// No more samples are kept.
    pub fn is_full(&self) -> bool {
        self.samples.len() >= MAX_SAMPLES
    }

    /// The verdict at capacity `capacity` (bytes/s) for packets of
    /// `packet_bytes`; `None` with too few samples or no capacity.
    pub fn verdict(&self, capacity: f64, packet_bytes: f64) -> Option<BusyVerdict> {
        let usable = |x: f64| x.is_finite() && x > 0.0;
        if self.samples.len() < MIN_SAMPLES || !usable(capacity) || !usable(packet_bytes) {
            return None;
        }
        let mut sorted = self.samples.clone();
        sorted.sort_by_key(|s| s.sent_nanos);
        let half = sorted.len() / 2;
        let (earlier, later) = sorted.split_at(half);
        let rise_nanos = second_smallest_delay(later)? - second_smallest_delay(earlier)?;
        let rise = Duration::from_nanos(u64::try_from(rise_nanos.max(0)).unwrap_or(u64::MAX));
        // The packets sent from the earlier half's start to the later's.
        // A capacity from a lying peer may be absurdly small: saturate.
        let saturated_rise = Duration::try_from_secs_f64(half as f64 * packet_bytes / capacity)
            .unwrap_or(Duration::MAX);
        let busy =
            rise >= MIN_RISE && rise.as_secs_f64() >= BUSY_FRACTION * saturated_rise.as_secs_f64();
        Some(BusyVerdict {
            busy,
            rise,
            saturated_rise,
        })
    }
}

/// The second smallest delay of `part` (its smallest with one outlier
/// set aside), or the only one.
fn second_smallest_delay(part: &[Sample]) -> Option<i128> {
    let mut delays: Vec<i128> = part.iter().map(|s| s.delay_nanos).collect();
    delays.sort_unstable();
    delays.get(1).or(delays.first()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MDS: f64 = 1378.0;
    /// 20 Mbit/s: 551 µs a packet.
    const C: f64 = 2.5e6;

    fn packet_time() -> f64 {
        MDS / C
    }

    /// The initial window as five pairs 60 ms apart; `queue_at(i)` the
    /// queueing delay packet `i` meets before its own service, in seconds.
    fn window(queue_at: impl Fn(usize) -> f64) -> BusyLinkTest {
        let mut t = BusyLinkTest::new();
        for i in 0..10 {
            let sent = (i / 2) as f64 * 0.060;
            // The second of a pair waits for the first.
            let pair_wait = if i % 2 == 1 { packet_time() } else { 0.0 };
            let delay = 0.300 + queue_at(i) + pair_wait;
            t.on_sample((sent * 1e9) as i64, (delay * 1e9) as i128);
        }
        t
    }

    #[test]
    fn an_idle_link_is_not_busy() {
        // Only the pairs' own wait: packets 0-4 meet 0, 1, 0, 1, 0 and
        // packets 5-9 meet 1, 0, 1, 0, 1 packets; each half's second
        // smallest is 0.
        let v = window(|_| 0.0).verdict(C, MDS).unwrap();
        assert!(!v.busy, "{v:?}");
        assert_eq!(v.rise, Duration::ZERO);
    }

    #[test]
    fn one_early_sample_does_not_make_a_rise() {
        // An idle 250 Mbit/s path (44 µs a packet): the initial window as
        // pairs, and one packet sent with the handshake a round earlier
        // that met a millisecond less.
        let fast = 250e6 / 8.0;
        let per_packet = MDS / fast;
        let mut t = BusyLinkTest::new();
        t.on_sample(-600_000_000, 299_000_000);
        for i in 0..10u64 {
            let wait = if i % 2 == 1 { per_packet } else { 0.0 };
            let sent = (i / 2) as f64 * 0.060;
            t.on_sample((sent * 1e9) as i64, ((0.300 + wait) * 1e9) as i128);
        }
        let v = t.verdict(fast, MDS).unwrap();
        assert!(!v.busy, "{v:?}");
        // The smallest delays of the halves would rise by the whole
        // millisecond, far above both thresholds.
        assert!(Duration::from_millis(1) >= MIN_RISE);
        assert!(1e-3 >= BUSY_FRACTION * v.saturated_rise.as_secs_f64());
    }

    #[test]
    fn a_saturated_link_keeps_every_packet_we_add() {
        // Others fill the link with 8 packets standing: each packet of ours
        // meets those and all of ours sent before it.
        let v = window(|i| (8 + i) as f64 * packet_time())
            .verdict(C, MDS)
            .unwrap();
        assert!(v.busy, "{v:?}");
        // Packets 0-4 meet 8, 10, 10, 12, 12 packets (each second of a
        // pair one more, behind its first): second smallest 10. Packets 5-9
        // meet 14, 14, 16, 16, 18: second smallest 14, 4 more.
        let expected = 4.0 * packet_time();
        assert!((v.rise.as_secs_f64() - expected).abs() < 1e-6, "{v:?}");
        // A saturated link: a packet's time for each of the five between.
        let saturated = 5.0 * packet_time();
        assert!((v.saturated_rise.as_secs_f64() - saturated).abs() < 1e-6);
    }

    #[test]
    fn a_rise_below_half_a_saturated_links_is_not_busy() {
        // Room for most of what we send: the queue climbs by a third of a
        // packet's time per packet.
        let v = window(|i| i as f64 * packet_time() / 3.0)
            .verdict(C, MDS)
            .unwrap();
        assert!(!v.busy, "{v:?}");
    }

    #[test]
    fn jitter_below_the_floor_is_not_busy_on_a_fast_link() {
        // 250 Mbit/s: 44 µs a packet; up to 0.1 ms of jitter a packet.
        let fast = 250e6 / 8.0;
        let mut t = BusyLinkTest::new();
        for i in 0..10 {
            let jitter = [30, 90, 10, 100, 60, 0, 80, 20, 100, 50][i] as f64 * 1e-6;
            t.on_sample(
                (i as f64 * 0.03 * 1e9) as i64,
                ((0.3 + jitter) * 1e9) as i128,
            );
        }
        let v = t.verdict(fast, MDS).unwrap();
        assert!(!v.busy, "{v:?}");
    }

    #[test]
    fn too_few_samples_or_no_capacity_give_no_verdict() {
        let mut t = BusyLinkTest::new();
        for i in 0..(MIN_SAMPLES - 1) {
            t.on_sample(i as i64, (i as i128) * 1_000_000);
        }
        assert_eq!(t.verdict(C, MDS), None);
        t.on_sample(99, 99_000_000);
        assert!(t.verdict(C, MDS).is_some());
        assert_eq!(t.verdict(0.0, MDS), None);
    }

    #[test]
    fn an_absurd_capacity_gives_a_verdict_not_a_panic() {
        let t = window(|_| 0.0);
        let v = t.verdict(1e-300, MDS).unwrap();
        assert!(!v.busy);
        assert_eq!(v.saturated_rise, Duration::MAX);
        assert_eq!(t.verdict(f64::NAN, MDS), None);
        assert_eq!(t.verdict(f64::INFINITY, MDS), None);
        assert_eq!(t.verdict(C, f64::NAN), None);
    }

    #[test]
    fn samples_beyond_the_first_round_are_not_kept() {
        let mut t = BusyLinkTest::new();
        for i in 0..(2 * MAX_SAMPLES) {
            t.on_sample(i as i64, 0);
        }
        assert_eq!(t.samples(), MAX_SAMPLES);
        assert!(t.is_full());
    }
}

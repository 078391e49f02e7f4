//! Forward and backward queueing times estimated from ACK receive timestamps
//! (draft-ietf-quic-receive-ts) and ACK delay, for when no router reports
//! them (RoVegas, 002_7f811f836ada7a25.txt, section 3, gets them from AQT
//! options; the QUIC form of those is the queueing-time extension).
//!
//! # The two samples
//!
//! The peer reports when it received each packet, on its own clock, relative
//! to a basis of its choosing. Our clock and the peer's differ by an unknown
//! offset, so a one-way delay computed across the two clocks is the true delay
//! plus that offset:
//!
//! - **forward**, per acknowledged packet: `receive_time − time_sent`
//!   (the peer's clock minus ours);
//! - **backward**, per ACK: `ACK arrival − (receive time of the largest
//!   acknowledged + ACK delay)` (ours minus the peer's). The peer sent the ACK
//!   ACK delay after it received the largest acknowledged packet, so this is
//!   the ACK's own trip.
//!
//! A one-way delay is a fixed part (propagation, transmission, processing)
//! plus queueing. The smallest delay seen is the fixed part plus the offset
//! (plus whatever queueing even the least-queued packet met), so **queueing =
//! sample − minimum** removes the offset without knowing it. That is the same
//! reasoning Vegas applies to BaseRTT, once per direction.
//!
//! # Clock drift: a minimum that may rise
//!
//! Two hosts' clocks also run at slightly different rates (tens of ppm for
//! undisciplined quartz). Over a long transfer the offset therefore moves: by
//! 180 ms per hour at 50 ppm, more than a GEO link's queueing. In the
//! direction where it shrinks the delay, the minimum simply follows. In the
//! other, a plain minimum would stay behind and every later sample would look
//! queued. So [`DelayFloor`] is a *rising* minimum: between samples the floor
//! creeps up at `clock_drift_ppm` of the time elapsed (on our clock), and any
//! sample below the risen floor becomes the new floor. As long as the path is
//! occasionally free of queue and the real drift is below `clock_drift_ppm`,
//! the floor tracks the fixed delay; the error of an estimate is at most
//! (`clock_drift_ppm` + real drift) × the time since the last queue-free
//! sample. The price: a queue that never drains is slowly taken for fixed
//! delay (at `clock_drift_ppm`: 100 µs per second at the default 100 ppm),
//! which makes the estimate smaller, never larger, i.e. towards plain Vegas.
//!
//! # Values that cannot be right
//!
//! Receive timestamps come from the peer and may be wrong (a stepped clock, a
//! bug, a hostile peer). None of them can disturb the controller by more than
//! the round trip itself allows:
//!
//! - **Impossible delays.** Every sample must pass the one plausibility rule
//!   for peer stamps against the floor sample,
//!   [`crate::shared::peer_reports::judge`]: no more than the packet's RTT
//!   above the floor, no more than the floor sample's RTT below it, each
//!   widened by the granularity and the drift allowed since the floor was
//!   set. A sample that fails is rejected, and so is an ACK delay not
//!   shorter than the RTT of the largest acknowledged packet
//!   ([`crate::shared::peer_reports::ack_delay_possible`]).
//! - **Going backwards.** Successive new largest acknowledged packets were
//!   received in order (an ACK that reported one as largest was sent before
//!   the next arrived), so a receive time of the largest acknowledged below the
//!   previous one means the peer's clock went back: the ACK's samples are
//!   rejected.
//! - **Jumps.** A clock that really stepped makes every sample impossible or
//!   backwards from then on. After `resync_after` consecutive ACKs with a
//!   rejected sample, the estimator forgets both floors and starts over on the
//!   new clock.
//! - **Both directions together** cannot have queued more than the round trip
//!   exceeded its minimum: for every packet, forward + backward is at most
//!   `RTT − min RTT`, a bound on our clock alone that the peer cannot
//!   influence. When an ACK's estimates exceed it, all of them are scaled down
//!   by the same factor until none does
//!   ([`crate::shared::peer_reports::bound_jointly`]). A peer lying within the other limits
//!   can thus at worst shift queueing between the two directions or hide it.
//! - Arithmetic is in signed 128-bit nanoseconds, which holds any sum of
//!   `Duration`s without overflow.
//!
//! Backward samples are taken only from ACKs whose largest newly acknowledged
//! packet is larger than any acknowledged before: only then is it certainly the
//! frame's largest acknowledged, the packet ACK delay is measured from. (The
//! event carries newly acknowledged packets only; after reordering, an ACK may
//! newly acknowledge a packet received after the frame's largest, and using
//! that receive time would understate the ACK's trip.)

use std::time::{Duration, Instant};

use crate::events::AckEvent;
use crate::shared::peer_reports::{self, nanos, nanos_since, DelaySample, GRANULARITY};

/// Default of [`EstimatorConfig::clock_drift_ppm`]: twice the 50 ppm a pair
/// of ordinary quartz oscillators may differ by.
pub const DEFAULT_CLOCK_DRIFT_PPM: f64 = 100.0;
/// Default of [`EstimatorConfig::resync_after`].
pub const DEFAULT_RESYNC_AFTER: u32 = 8;

/// Settings of a [`QueueingEstimator`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimatorConfig {
    /// How fast, in parts per million of elapsed time, the delay floors may
    /// rise: the largest rate difference between the two clocks tolerated.
    pub clock_drift_ppm: f64,
    /// Consecutive ACKs with a rejected sample after which the floors are
    /// forgotten (the peer's clock is taken to have stepped).
    pub resync_after: u32,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        EstimatorConfig {
            clock_drift_ppm: DEFAULT_CLOCK_DRIFT_PPM,
            resync_after: DEFAULT_RESYNC_AFTER,
        }
    }
}

impl EstimatorConfig {
    /// The drift rate in ppm, 0 if not a finite non-negative number.
    fn drift_ppm(&self) -> f64 {
        if self.clock_drift_ppm.is_finite() && self.clock_drift_ppm > 0.0 {
            self.clock_drift_ppm
        } else {
            0.0
        }
    }
}

/// Non-negative nanoseconds as a `Duration`, saturating.
fn duration_from_nanos(v: i128) -> Duration {
    Duration::from_nanos(u64::try_from(v.max(0)).unwrap_or(u64::MAX))
}

/// `elapsed × drift_ppm / 10⁶` in nanoseconds.
fn drift_allowance(elapsed: Duration, drift_ppm: f64) -> i128 {
    // An f64 to integer cast saturates (NaN gives 0).
    (elapsed.as_nanos() as f64 * drift_ppm / 1e6) as i128
}

/// Why a sample was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejected {
    /// Further from the floor than a round trip allows.
    ImpossibleDelay,
    /// The peer's receive time of the largest acknowledged went back.
    WentBackwards,
}

/// The rising minimum of one direction's one-way delay samples (see the
/// module documentation). Samples are signed nanoseconds on mixed clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelayFloor {
    /// The floor sample, when it was taken (our clock), and the RTT of its
    /// packet (a bound on the queueing it may have contained).
    floor: Option<(i128, Instant, Duration)>,
}

impl DelayFloor {
    pub fn new() -> Self {
        Self::default()
    }

    /// The floor at `now`, risen by `drift_ppm` since it was set.
    pub fn floor(&self, now: Instant, drift_ppm: f64) -> Option<i128> {
        self.floor.map(|(value, at, _)| {
            value.saturating_add(drift_allowance(
                now.saturating_duration_since(at),
                drift_ppm,
            ))
        })
    }

    /// Offers the one-way delay `delay` of a packet whose round trip took
    /// `rtt`, observed at `now`, and returns its queueing time: how far it is
    /// above the floor (zero if it sets a new floor).
    pub fn offer(
        &mut self,
        now: Instant,
        delay: i128,
        rtt: Duration,
        drift_ppm: f64,
    ) -> Result<Duration, Rejected> {
        let Some((raw, at, floor_rtt)) = self.floor else {
            self.floor = Some((delay, now, rtt));
            return Ok(Duration::ZERO);
        };
        let elapsed = now.saturating_duration_since(at);
        let drift = drift_allowance(elapsed, drift_ppm);
        // Both samples are one-way delays (plus the clocks' offset) of
        // packets with known RTTs; the clocks drifted at most `drift` since
        // the floor was taken.
        let slack = GRANULARITY.saturating_add(duration_from_nanos(drift));
        let verdict = peer_reports::judge(
            DelaySample {
                delay_nanos: raw,
                rtt: floor_rtt,
            },
            DelaySample {
                delay_nanos: delay,
                rtt,
            },
            slack,
        );
        if !verdict.is_plausible() {
            return Err(Rejected::ImpossibleDelay);
        }
        let risen = raw.saturating_add(drift);
        if delay <= risen {
            self.floor = Some((delay, now, rtt));
            return Ok(Duration::ZERO);
        }
        let queueing = delay.saturating_sub(risen);
        Ok(duration_from_nanos(queueing))
    }

    pub fn reset(&mut self) {
        self.floor = None;
    }
}

/// Forward and backward queueing times from receive timestamps and ACK delay;
/// see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct QueueingEstimator {
    config: EstimatorConfig,
    /// Origin of our clock's side of the mixed-clock delays.
    epoch: Option<Instant>,
    forward: DelayFloor,
    backward: DelayFloor,
    /// Smallest RTT sample seen, for the joint bound.
    min_rtt: Option<Duration>,
    /// Largest packet number acknowledged so far.
    largest_acked: Option<u64>,
    /// Receive time of the last new largest acknowledged packet used.
    largest_receive_time: Option<Duration>,
    consecutive_rejecting_acks: u32,
    rejected_samples: u64,
    resyncs: u64,
}

impl QueueingEstimator {
    pub fn new(config: EstimatorConfig) -> Self {
        QueueingEstimator {
            config,
            ..Self::default()
        }
    }

    pub fn config(&self) -> EstimatorConfig {
        self.config
    }

    /// Samples rejected so far (impossible or backwards).
    pub fn rejected_samples(&self) -> u64 {
        self.rejected_samples
    }

    /// How often the floors were forgotten after a run of rejections.
    pub fn resyncs(&self) -> u64 {
        self.resyncs
    }

    /// Estimates the queueing of one ACK. `forward` is cleared and filled with
    /// one entry per `ack.acked` packet: its forward queueing time, `None`
    /// without a (usable) receive time. Returns the ACK's backward queueing
    /// time, `None` if it has none. An ACK without any receive time leaves the
    /// estimator untouched.
    pub fn on_ack(
        &mut self,
        ack: &AckEvent<'_>,
        forward: &mut Vec<Option<Duration>>,
    ) -> Option<Duration> {
        forward.clear();
        forward.resize(ack.acked.len(), None);
        let largest = ack.acked.iter().max_by_key(|p| p.pkt_num)?;
        let new_largest = self.largest_acked.is_none_or(|l| largest.pkt_num > l);
        if new_largest {
            self.largest_acked = Some(largest.pkt_num);
        }
        if ack.acked.iter().all(|p| p.receive_time.is_none()) {
            return None;
        }
        let epoch = *self.epoch.get_or_insert(ack.now);
        if let Some(rtt) = ack
            .acked
            .iter()
            .map(|p| p.rtt)
            .filter(|r| !r.is_zero())
            .min()
        {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        let drift_ppm = self.config.drift_ppm();
        let mut rejections = 0u64;

        // Backward: ACK arrival − (receive time of the largest acknowledged +
        // ACK delay), ours minus the peer's clock.
        let mut backward = None;
        if let (true, Some(received)) = (new_largest, largest.receive_time) {
            // The peer's clock went back, or it claims to have held the ACK
            // longer than the whole round trip took.
            let went_backwards = self
                .largest_receive_time
                .is_some_and(|prev| received < prev);
            let impossible_ack_delay =
                !peer_reports::ack_delay_possible(ack.ack_delay, largest.rtt);
            if largest.rtt.is_zero() {
                // No bound to check it against.
            } else if went_backwards || impossible_ack_delay {
                rejections += 1;
            } else {
                self.largest_receive_time = Some(received);
                let delay = nanos_since(ack.now, epoch)
                    .saturating_sub(nanos(received))
                    .saturating_sub(nanos(ack.ack_delay));
                match self.backward.offer(ack.now, delay, largest.rtt, drift_ppm) {
                    Ok(q) => backward = Some(q),
                    Err(_) => rejections += 1,
                }
            }
        }

        // Forward, per packet: receive time − send time, the peer's clock
        // minus ours.
        for (slot, packet) in forward.iter_mut().zip(ack.acked) {
            let Some(received) = packet.receive_time else {
                continue;
            };
            if packet.rtt.is_zero() {
                continue;
            }
            let delay = peer_reports::forward_delay_nanos(received, packet.time_sent, epoch);
            match self.forward.offer(ack.now, delay, packet.rtt, drift_ppm) {
                Ok(q) => *slot = Some(q),
                Err(_) => rejections += 1,
            }
        }

        backward = self.bound_jointly(ack, forward, backward);

        if rejections > 0 {
            self.rejected_samples = self.rejected_samples.saturating_add(rejections);
            self.consecutive_rejecting_acks = self.consecutive_rejecting_acks.saturating_add(1);
            if self.consecutive_rejecting_acks >= self.config.resync_after.max(1) {
                self.resync();
            }
        } else {
            self.consecutive_rejecting_acks = 0;
        }
        backward
    }

    /// Scales the ACK's estimates down by one factor so that for every packet
    /// forward + backward ≤ RTT − min RTT.
    fn bound_jointly(
        &self,
        ack: &AckEvent<'_>,
        forward: &mut [Option<Duration>],
        backward: Option<Duration>,
    ) -> Option<Duration> {
        let min_rtt = self.min_rtt.unwrap_or(Duration::ZERO);
        peer_reports::bound_jointly(forward, backward, |i| {
            let rtt = ack.acked.get(i)?.rtt;
            (!rtt.is_zero()).then(|| rtt.saturating_sub(min_rtt))
        })
    }

    /// Forgets both floors and the last receive time: the peer's clock is
    /// taken to have stepped.
    pub fn resync(&mut self) {
        self.forward.reset();
        self.backward.reset();
        self.largest_receive_time = None;
        self.consecutive_rejecting_acks = 0;
        self.resyncs = self.resyncs.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{AckedPacket, RttSnapshot};

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    /// A path with fixed one-way delays, a peer clock `offset + (1 + drift) ×
    /// t` (t since `start`), and per-packet injected queueing.
    struct Path {
        start: Instant,
        forward_fixed: Duration,
        backward_fixed: Duration,
        ack_delay: Duration,
        offset: Duration,
        drift: f64,
        next_pkt: u64,
    }

    impl Path {
        fn new(offset: Duration, drift: f64) -> Self {
            Path {
                start: Instant::now(),
                forward_fixed: ms(270),
                backward_fixed: ms(280),
                ack_delay: ms(2),
                offset,
                drift,
                next_pkt: 0,
            }
        }

        fn peer_clock(&self, t: Instant) -> Duration {
            let since = t.duration_since(self.start).as_secs_f64();
            self.offset + Duration::from_secs_f64(since * (1.0 + self.drift))
        }

        /// One packet sent at `sent_after` (from start) that queues `qf`
        /// forward, acknowledged alone by an ACK that queues `qb` backward.
        /// Returns the estimator's (forward, backward).
        fn exchange(
            &mut self,
            est: &mut QueueingEstimator,
            sent_after: Duration,
            qf: Duration,
            qb: Duration,
        ) -> (Option<Duration>, Option<Duration>) {
            let sent = self.start + sent_after;
            let received = sent + self.forward_fixed + qf;
            let arrival = received + self.ack_delay + self.backward_fixed + qb;
            let mut packet = AckedPacket::new(self.next_pkt, 1200, sent, arrival);
            packet.receive_time = Some(self.peer_clock(received));
            self.next_pkt += 1;
            let acked = [packet];
            let ack = AckEvent {
                now: arrival,
                acked: &acked,
                summary: crate::events::AckSummary::of(&acked, 0),
                ack_delay: self.ack_delay,
                rtt: RttSnapshot::uniform(packet.rtt),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            };
            let mut forward = Vec::new();
            let backward = est.on_ack(&ack, &mut forward);
            (forward[0], backward)
        }
    }

    fn close(got: Option<Duration>, want: Duration, tolerance: Duration) -> bool {
        got.is_some_and(|g| g.abs_diff(want) <= tolerance)
    }

    #[test]
    fn injected_delays_are_recovered_despite_a_clock_offset() {
        let mut est = QueueingEstimator::new(EstimatorConfig::default());
        // The peer's clock is 3 hours ahead of ours, no drift.
        let mut path = Path::new(Duration::from_secs(3 * 3600), 0.0);
        assert_eq!(
            path.exchange(&mut est, ms(0), ms(0), ms(0)),
            (Some(ms(0)), Some(ms(0))),
            "the first sample sets both floors"
        );
        // 40 ms forward, 25 ms backward, 100 ms later. The floors have risen
        // by 100 ppm x 0.1 s = 10 us and more since the first exchange.
        let (f, b) = path.exchange(&mut est, ms(700), ms(40), ms(25));
        assert!(close(f, ms(40), us(200)), "{f:?}");
        assert!(close(b, ms(25), us(200)), "{b:?}");
        let (f, b) = path.exchange(&mut est, ms(1400), ms(0), ms(60));
        assert!(close(f, ms(0), us(200)), "{f:?}");
        assert!(close(b, ms(60), us(300)), "{b:?}");
        assert_eq!(est.rejected_samples(), 0);
    }

    #[test]
    fn a_small_drift_over_a_long_transfer_is_tracked() {
        // Peer clock 50 ppm fast: forward delays grow by 180 ms per hour,
        // backward delays shrink as much. One exchange a second for an hour;
        // every tenth second the path is free of queue, otherwise 30 ms
        // forward and 20 ms backward are injected.
        let drift = 50e-6;
        let mut est = QueueingEstimator::new(EstimatorConfig::default());
        let mut plain = QueueingEstimator::new(EstimatorConfig {
            clock_drift_ppm: 0.0,
            ..EstimatorConfig::default()
        });
        let mut path = Path::new(ms(5), drift);
        let mut path_plain = Path::new(ms(5), drift);
        path_plain.start = path.start;
        let mut last = (None, None);
        let mut last_plain = (None, None);
        for second in 0..3600u64 {
            let queue_free = second % 10 == 0;
            let (qf, qb) = if queue_free {
                (ms(0), ms(0))
            } else {
                (ms(30), ms(20))
            };
            let at = Duration::from_secs(second);
            last = path.exchange(&mut est, at, qf, qb);
            last_plain = path_plain.exchange(&mut plain, at, qf, qb);
        }
        // The last exchange (second 3599) is about 9.05 s after a queue-free
        // one: the error is at most (100 + 50) ppm x 9.05 s = 1.36 ms.
        assert!(close(last.0, ms(30), us(1400)), "{last:?}");
        assert!(close(last.1, ms(20), us(1400)), "{last:?}");
        // A plain minimum (no rise) is off by the drift of the whole hour in
        // the forward direction, until the joint bound caps it: forward +
        // backward never exceed the 50 ms the round trip is above its minimum.
        let f = last_plain.0.unwrap();
        let b = last_plain.1.unwrap();
        assert!(f > ms(45), "plain minimum forward {f:?}");
        assert!(f + b <= ms(50) + us(1), "{f:?} + {b:?}");
        assert_eq!(est.rejected_samples(), 0);
    }

    #[test]
    fn joint_bound_caps_the_sum_at_the_round_trip_excess() {
        let mut est = QueueingEstimator::new(EstimatorConfig::default());
        let mut path = Path::new(ms(0), 0.0);
        path.offset = Duration::from_secs(10);
        path.exchange(&mut est, ms(0), ms(0), ms(0));
        // The peer now reports receive times 100 ms early for a packet that
        // met 40 ms forward queueing and 10 ms backward: forward looks like
        // -60 (a new floor), backward like 110 ms. RTT is 50 ms above its
        // minimum, so backward is capped at 50.
        let sent = path.start + ms(1000);
        let received = sent + path.forward_fixed + ms(40);
        let arrival = received + path.ack_delay + path.backward_fixed + ms(10);
        let mut p = AckedPacket::new(1, 1200, sent, arrival);
        p.receive_time = Some(path.peer_clock(received) - ms(100));
        let ack = AckEvent {
            now: arrival,
            acked: &[p],
            summary: crate::events::AckSummary::of(&[p], 0),
            ack_delay: path.ack_delay,
            rtt: RttSnapshot::uniform(p.rtt),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        };
        let mut forward = Vec::new();
        let b = est.on_ack(&ack, &mut forward);
        assert_eq!(forward, vec![Some(Duration::ZERO)]);
        assert_eq!(b, Some(ms(50)));
    }

    #[test]
    fn backwards_and_impossible_timestamps_are_rejected_then_resynced() {
        let config = EstimatorConfig {
            resync_after: 3,
            ..EstimatorConfig::default()
        };
        let mut est = QueueingEstimator::new(config);
        let mut path = Path::new(Duration::from_secs(100), 0.0);
        path.exchange(&mut est, ms(0), ms(0), ms(0));
        assert_eq!(
            path.exchange(&mut est, ms(1000), ms(10), ms(10))
                .1
                .map(|d| d > ms(9)),
            Some(true)
        );
        // The peer's clock steps back by 50 s: the receive time of the new
        // largest acknowledged goes backwards, and the backward delay grows
        // by 50 s, far beyond any RTT.
        path.offset = Duration::from_secs(50);
        let (f, b) = path.exchange(&mut est, ms(2000), ms(10), ms(10));
        assert_eq!(b, None, "backwards receive time rejected");
        assert_eq!(f, None, "forward delay 50 s below its floor rejected");
        assert_eq!(est.rejected_samples(), 2);
        path.exchange(&mut est, ms(3000), ms(10), ms(10));
        assert_eq!(est.resyncs(), 0);
        path.exchange(&mut est, ms(4000), ms(10), ms(10));
        assert_eq!(est.resyncs(), 1, "three rejecting ACKs in a row");
        // On the new clock: the first exchange sets the floors again, the
        // next measures against them.
        assert_eq!(
            path.exchange(&mut est, ms(5000), ms(0), ms(0)),
            (Some(ms(0)), Some(ms(0)))
        );
        let (f, b) = path.exchange(&mut est, ms(6000), ms(30), ms(15));
        assert!(close(f, ms(30), us(200)), "{f:?}");
        assert!(close(b, ms(15), us(200)), "{b:?}");
    }

    #[test]
    fn hostile_values_never_panic_or_exceed_the_rtt() {
        let t0 = Instant::now();
        let mut est = QueueingEstimator::new(EstimatorConfig::default());
        let mut forward = Vec::new();
        let cases = [
            (Duration::MAX, Duration::ZERO),
            (Duration::ZERO, Duration::MAX),
            (Duration::MAX, Duration::MAX),
            (Duration::ZERO, ms(99)),
            (ms(1), ms(100)),
            (Duration::from_secs(u64::MAX / 2), ms(1)),
        ];
        for (k, (receive, ack_delay)) in cases.into_iter().enumerate() {
            let sent = t0 + ms(k as u64 * 10);
            let mut p = AckedPacket::new(k as u64, 1200, sent, sent + ms(100));
            p.receive_time = Some(receive);
            let ack = AckEvent {
                now: sent + ms(100),
                acked: &[p],
                summary: crate::events::AckSummary::of(&[p], 0),
                ack_delay,
                rtt: RttSnapshot::uniform(ms(100)),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            };
            let b = est.on_ack(&ack, &mut forward);
            for q in forward.iter().flatten().chain(b.iter()) {
                assert!(*q < ms(100), "case {k}: {q:?}");
            }
        }
        // A packet "sent" after it was acknowledged, with a zero RTT.
        let p = AckedPacket {
            receive_time: Some(ms(5)),
            ..AckedPacket::new(99, 1200, t0 + ms(500), t0)
        };
        let ack = AckEvent {
            now: t0,
            acked: &[p],
            summary: crate::events::AckSummary::of(&[p], 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(Duration::ZERO),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        };
        assert_eq!(est.on_ack(&ack, &mut forward), None);
        assert_eq!(forward, vec![None]);
    }

    #[test]
    fn without_receive_times_nothing_is_estimated() {
        let t0 = Instant::now();
        let mut est = QueueingEstimator::new(EstimatorConfig::default());
        let p = AckedPacket::new(0, 1200, t0, t0 + ms(10));
        let ack = AckEvent {
            now: t0 + ms(10),
            acked: &[p, p],
            summary: crate::events::AckSummary::of(&[p, p], 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(ms(10)),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        };
        let mut forward = vec![Some(ms(1))];
        assert_eq!(est.on_ack(&ack, &mut forward), None);
        assert_eq!(forward, vec![None, None]);
        let empty = AckEvent {
            acked: &[],
            summary: crate::events::AckSummary::default(),
            ..ack
        };
        assert_eq!(est.on_ack(&empty, &mut forward), None);
        assert!(forward.is_empty());
    }

    #[test]
    fn floor_rises_with_the_allowed_drift_and_follows_lower_samples() {
        let t0 = Instant::now();
        let mut floor = DelayFloor::new();
        let drift = 100.0;
        assert_eq!(floor.offer(t0, 1_000_000, ms(10), drift), Ok(ms(0)));
        // 10 s later the floor has risen by 1 ms: a sample 1.5 ms above the
        // old floor is 0.5 ms of queueing.
        let t1 = t0 + Duration::from_secs(10);
        assert_eq!(floor.floor(t1, drift), Some(2_000_000));
        assert_eq!(floor.offer(t1, 2_500_000, ms(10), drift), Ok(us(500)));
        // A sample below the risen floor becomes the floor.
        assert_eq!(floor.offer(t1, 1_800_000, ms(10), drift), Ok(ms(0)));
        assert_eq!(floor.floor(t1, drift), Some(1_800_000));
        // More than the RTT (plus the 1 ms granularity) above, or below by
        // more than the floor sample's RTT (plus granularity): impossible.
        let rtt_and_granularity = 10_000_000 + 1_000_000;
        assert_eq!(
            floor.offer(t1, 1_800_000 + rtt_and_granularity, ms(10), drift),
            Ok(Duration::from_nanos(rtt_and_granularity as u64))
        );
        assert_eq!(
            floor.offer(t1, 1_800_000 + rtt_and_granularity + 1, ms(10), drift),
            Err(Rejected::ImpossibleDelay)
        );
        assert_eq!(
            floor.offer(t1, 1_800_000 - rtt_and_granularity, ms(10), drift),
            Ok(Duration::ZERO)
        );
        // (That sample became the floor; start again from 1.8 ms.)
        floor.reset();
        assert_eq!(floor.offer(t1, 1_800_000, ms(10), drift), Ok(ms(0)));
        assert_eq!(
            floor.offer(t1, 1_800_000 - rtt_and_granularity - 1, ms(10), drift),
            Err(Rejected::ImpossibleDelay)
        );
        floor.reset();
        assert_eq!(floor.floor(t1, drift), None);
    }
}

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
//! bug, a hostile peer). The host judges every one before it gets here
//! ([`crate::shared::peer_clock`]): an implausible stamp arrives as none, and
//! when the host believes the peer's clock stepped, the packet's
//! [`AckedPacket::clock_epoch`](crate::events::AckedPacket::clock_epoch)
//! is newer and both floors start over from it (a stamp of an older clock,
//! still in flight, is not used). What is left here is this estimator's
//! own:
//!
//! - an ACK delay not shorter than the RTT of the largest acknowledged
//!   packet is impossible ([`crate::shared::peer_reports::ack_delay_possible`]):
//!   the ACK gives no backward sample;
//! - **both directions together** cannot have queued more than the round
//!   trip exceeded its minimum: for every packet, forward + backward is at
//!   most `RTT − min RTT`, a bound on our clock alone that the peer cannot
//!   influence. When an ACK's estimates exceed it, all of them are scaled
//!   down by the same factor until none does
//!   ([`crate::shared::peer_reports::bound_jointly`]). A peer lying within
//!   the host's limits can thus at worst shift queueing between the two
//!   directions or hide it;
//! - arithmetic is in signed 64-bit nanoseconds (±292 years), saturating:
//!   exact for every stamp the host believes, and a value beyond saturates
//!   instead of wrapping.
//!
//! Backward samples are taken only from ACKs whose largest newly acknowledged
//! packet is larger than any acknowledged before: only then is it certainly the
//! frame's largest acknowledged, the packet ACK delay is measured from. (The
//! event carries newly acknowledged packets only; after reordering, an ACK may
//! newly acknowledge a packet received after the frame's largest, and using
//! that receive time would understate the ACK's trip.)

use std::time::Duration;

use crate::events::{AckEvent, AckedPacket};
use crate::shared::peer_reports;

/// Default of [`EstimatorConfig::clock_drift_ppm`]: twice the 50 ppm a pair
/// of ordinary quartz oscillators may differ by.
pub const DEFAULT_CLOCK_DRIFT_PPM: f64 = 100.0;

/// Settings of a [`QueueingEstimator`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimatorConfig {
    /// How fast, in parts per million of elapsed time, the delay floors may
    /// rise: the largest rate difference between the two clocks tolerated.
    pub clock_drift_ppm: f64,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        EstimatorConfig {
            clock_drift_ppm: DEFAULT_CLOCK_DRIFT_PPM,
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

/// Signed nanoseconds of `d`, saturating at `i64::MAX` (292 years, beyond
/// any delay the host's clock judge believes).
fn nanos(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

/// Nanoseconds of one of our own RTT samples (or a part of one), which
/// fits a u64: 584 years, more than any process lives.
fn rtt_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Durations of fewer seconds (34 years) are below 2^60 ns, and so are
/// send times below this many nanoseconds times 2^30: small times, whose
/// sums and differences (a few each) cannot overflow an i64.
const SMALL_SECS: u64 = 1 << 30;

/// Floors whose values are within ± this (2^62) are "small": every value
/// computed from small times is, and rising them cannot overflow.
const SMALL_FLOOR: i64 = 1 << 62;

/// The largest drift rate for which a small floor rises without overflow
/// over any elapsed time below 2^63 ns (1 %, the parameter's maximum).
const PLAIN_DRIFT_PPM: f64 = 10_000.0;

/// Whether `floor` is set at values within ±[`SMALL_FLOOR`].
fn small_floor(floor: &DelayFloor) -> bool {
    let small = |t: i64| (-SMALL_FLOOR..SMALL_FLOOR).contains(&t);
    floor.get().is_some_and(|(raw, at)| small(raw) && small(at))
}

/// Nanoseconds of `d`, shorter than [`SMALL_SECS`]: two instructions.
#[inline]
fn plain_nanos(d: Duration) -> i64 {
    d.as_secs() as i64 * 1_000_000_000 + i64::from(d.subsec_nanos())
}

/// `elapsed × drift_ppm / 10⁶` in nanoseconds, for `elapsed_nanos` of
/// our time (none if negative).
#[inline]
fn drift_allowance(elapsed_nanos: i64, drift_ppm: f64) -> i64 {
    // An f64 to integer cast saturates (NaN gives 0).
    (elapsed_nanos.max(0) as f64 * drift_ppm / 1e6) as i64
}

/// The rising minimum of one direction's one-way delay samples (see the
/// module documentation). Samples are signed nanoseconds on mixed clocks,
/// times signed nanoseconds of our clock since any fixed instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelayFloor {
    /// The floor sample and when it was taken, if `set` (both zero if
    /// not): apart, so that the usual ACK reads them without a branch.
    raw: i64,
    at: i64,
    set: bool,
}

impl DelayFloor {
    pub fn new() -> Self {
        Self::default()
    }

    /// The floor sample and when it was taken, `None` before the first.
    #[inline]
    fn get(&self) -> Option<(i64, i64)> {
        self.set.then_some((self.raw, self.at))
    }

    #[inline]
    fn set_to(&mut self, delay: i64, now: i64) {
        *self = DelayFloor {
            raw: delay,
            at: now,
            set: true,
        };
    }

    /// The floor at `now`, risen by `drift_ppm` since it was set.
    pub fn floor(&self, now: i64, drift_ppm: f64) -> Option<i64> {
        self.get().map(|(value, at)| {
            value.saturating_add(drift_allowance(now.saturating_sub(at), drift_ppm))
        })
    }

    /// Offers the one-way delay `delay` observed at `now` and returns its
    /// queueing time: how far it is above the risen floor (zero if it sets
    /// a new floor).
    pub fn offer(&mut self, now: i64, delay: i64, drift_ppm: f64) -> Duration {
        Duration::from_nanos(self.offer_nanos(now, delay, drift_ppm))
    }

    /// [`DelayFloor::offer`] in nanoseconds. Inlined: two per ACK.
    #[inline(always)]
    fn offer_nanos(&mut self, now: i64, delay: i64, drift_ppm: f64) -> u64 {
        let Some((raw, at)) = self.get() else {
            self.set_to(delay, now);
            return 0;
        };
        let risen = raw.saturating_add(drift_allowance(now.saturating_sub(at), drift_ppm));
        if delay <= risen {
            self.set_to(delay, now);
            return 0;
        }
        delay.saturating_sub(risen).unsigned_abs()
    }

    /// [`DelayFloor::offer_nanos`] on a floor that is set and small
    /// ([`small_floor`]) no later than `now`, with `now` and `delay` within
    /// ±2^62 and a drift of
    /// at most [`PLAIN_DRIFT_PPM`]: the same value without saturating
    /// arithmetic, which none of these sums can need.
    #[inline(always)]
    fn offer_plain(&mut self, now: i64, delay: i64, drift_ppm: f64) -> u64 {
        // Set at or before `now` (the caller's check): no negative time.
        let risen = self.raw + ((now - self.at) as f64 * drift_ppm / 1e6) as i64;
        if delay <= risen {
            self.set_to(delay, now);
            return 0;
        }
        (delay - risen) as u64
    }

    pub fn reset(&mut self) {
        *self = DelayFloor::default();
    }
}

/// A packet without a forward estimate in
/// [`QueueingEstimator::forward_nanos`] (estimates are below 2^63 ns).
pub const NO_ESTIMATE: u64 = u64::MAX;

/// One ACK's estimates in nanoseconds ([`QueueingEstimator::on_ack_nanos`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckEstimate {
    /// The ACK's backward queueing time, `None` if it has none.
    pub backward: Option<u64>,
    /// Whether some packet of the ACK has a forward queueing time.
    pub any_forward: bool,
    /// Among the packets with a non-zero RTT of at least the size asked
    /// for, the first with the smallest RTT − (backward + forward queueing)
    /// (a missing value counts as zero): that difference and the packet's
    /// forward queueing time. RoVegas's baseRTTtemp.
    pub least_queued: Option<(u64, u64)>,
}

/// Forward and backward queueing times from receive timestamps and ACK delay;
/// see the module documentation.
#[derive(Clone, Debug)]
pub struct QueueingEstimator {
    config: EstimatorConfig,
    /// `config`'s drift rate as used ([`EstimatorConfig::drift_ppm`]).
    drift_ppm: f64,
    forward: DelayFloor,
    backward: DelayFloor,
    /// The peer's clock the floors are on.
    clock_epoch: u32,
    /// Smallest RTT sample seen, for the joint bound, in nanoseconds
    /// (`u64::MAX` before the first).
    min_rtt: u64,
    /// Largest packet number acknowledged so far.
    /// (A packet number and whether there is one, apart: the usual ACK
    /// reads only the number, known to be there.)
    largest_acked: u64,
    any_acked: bool,
    rejected_samples: u64,
    clock_steps: u64,
    /// The last ACK's forward estimates, one per packet ([`NO_ESTIMATE`]
    /// where none): kept for the joint bound, which may scale them all.
    forward_nanos: Vec<u64>,
    /// Instead, the one estimate of a usual ACK
    /// ([`QueueingEstimator::on_usual_ack`]): one store, not a vector's.
    single_forward: Option<u64>,
    /// Whether the drift rate allows plain arithmetic on the floors.
    plain_drift: bool,
    /// Whether both floors are small ([`small_floor`]) and the drift rate
    /// allows plain arithmetic: kept by the walk, which alone may make
    /// them otherwise (a usual ACK sets small values only).
    plain_floors: bool,
    /// With `plain_floors`, a time no earlier than both floors were set.
    floors_set_by: i64,
}

impl Default for QueueingEstimator {
    fn default() -> Self {
        Self::new(EstimatorConfig::default())
    }
}

impl QueueingEstimator {
    pub fn new(config: EstimatorConfig) -> Self {
        QueueingEstimator {
            config,
            drift_ppm: config.drift_ppm(),
            forward: DelayFloor::new(),
            backward: DelayFloor::new(),
            clock_epoch: 0,
            min_rtt: u64::MAX,
            largest_acked: 0,
            any_acked: false,
            rejected_samples: 0,
            clock_steps: 0,
            forward_nanos: Vec::new(),
            single_forward: None,
            plain_drift: config.drift_ppm() <= PLAIN_DRIFT_PPM,
            plain_floors: false,
            floors_set_by: 0,
        }
    }

    pub fn config(&self) -> EstimatorConfig {
        self.config
    }

    /// Backward samples refused for an impossible ACK delay.
    pub fn rejected_samples(&self) -> u64 {
        self.rejected_samples
    }

    /// How often the floors started over on a new peer clock.
    pub fn clock_steps(&self) -> u64 {
        self.clock_steps
    }

    /// The last ACK's forward queueing times in nanoseconds, one per
    /// packet, [`NO_ESTIMATE`] where there is none.
    pub fn forward_nanos(&self) -> &[u64] {
        match &self.single_forward {
            Some(single) => std::slice::from_ref(single),
            None => &self.forward_nanos,
        }
    }

    /// Whether a stamp on the peer's clock `clock_epoch` can be compared
    /// with the floors: on their clock, or on a newer one, which restarts
    /// them.
    #[inline]
    fn on_clock(&mut self, clock_epoch: u32) -> bool {
        if clock_epoch > self.clock_epoch {
            self.new_clock(clock_epoch);
        }
        clock_epoch == self.clock_epoch
    }

    /// The host believes the peer's clock stepped (rare): both floors
    /// start over.
    #[cold]
    #[inline(never)]
    fn new_clock(&mut self, clock_epoch: u32) {
        self.clock_epoch = clock_epoch;
        self.clock_steps = self.clock_steps.saturating_add(1);
        self.forward.reset();
        self.backward.reset();
    }

    /// Estimates the queueing of one ACK. `forward` is cleared and filled with
    /// one entry per `ack.acked` packet: its forward queueing time, `None`
    /// without a receive time. Returns the ACK's backward queueing time,
    /// `None` if it has none. An ACK without any receive time leaves the
    /// estimator untouched.
    ///
    /// Every value returned is possible for its ACK: for each packet with a
    /// non-zero RTT, forward + backward ≤ RTT − (smallest RTT seen) < RTT
    /// (the joint bound; the smallest RTT is never zero).
    pub fn on_ack(
        &mut self,
        ack: &AckEvent<'_>,
        forward: &mut Vec<Option<Duration>>,
    ) -> Option<Duration> {
        let estimate = self.on_ack_nanos(ack, usize::MAX);
        forward.clear();
        forward.extend(
            self.forward_nanos()
                .iter()
                .map(|&q| (q != NO_ESTIMATE).then(|| Duration::from_nanos(q))),
        );
        estimate.backward.map(Duration::from_nanos)
    }

    /// [`QueueingEstimator::on_ack`] in nanoseconds: the forward times are
    /// left in [`QueueingEstimator::forward_nanos`]; with them comes the
    /// least queued packet of at least `min_size` bytes
    /// ([`AckEstimate::least_queued`]), found in the same walk.
    #[inline]
    pub fn on_ack_nanos(&mut self, ack: &AckEvent<'_>, min_size: usize) -> AckEstimate {
        if let [packet] = ack.acked {
            if let Some((estimate, forward)) = self.on_usual_ack(ack, packet, min_size) {
                self.single_forward = Some(forward);
                return estimate;
            }
        }
        self.walk(ack, min_size)
    }

    /// [`QueueingEstimator::on_ack_nanos`] for the usual ACK: one new
    /// largest packet, stamped on the floors' clock, acknowledged at the
    /// ACK's arrival, with an ACK delay shorter than its RTT, every time
    /// small (see [`SMALL_SECS`]) and floors set, at small values,
    /// with a drift of at most [`PLAIN_DRIFT_PPM`]: then the walk's
    /// saturating arithmetic cannot saturate, and plain arithmetic gives the
    /// same values. `None`, with nothing changed, for any other ACK. With
    /// the estimate comes the packet's forward queueing time, which is not
    /// kept for [`QueueingEstimator::forward_nanos`] (a store fewer for a
    /// caller that does not need it).
    #[inline(always)]
    pub(crate) fn on_usual_ack(
        &mut self,
        ack: &AckEvent<'_>,
        packet: &AckedPacket,
        min_size: usize,
    ) -> Option<(AckEstimate, u64)> {
        let received = packet.receive_time?;
        let (rtt, ack_delay) = (packet.rtt, ack.ack_delay);
        // Floors are set only after a largest acknowledged: with them, it
        // is there. A send time from 0 to 2^60 ns is small too (one test
        // with the durations'; the host's clock starts at 0).
        let sent = packet.sent_nanos;
        if !self.plain_floors
            || (received.as_secs() | rtt.as_secs() | ack_delay.as_secs() | (sent as u64 >> 30))
                >= SMALL_SECS
            || packet.clock_epoch != self.clock_epoch
            || packet.pkt_num <= self.largest_acked
        {
            return None;
        }
        let (received, rtt, ack_delay) = (
            plain_nanos(received),
            plain_nanos(rtt),
            plain_nanos(ack_delay),
        );
        let now = sent + rtt;
        if ack_delay >= rtt || packet.time_acked != ack.now || now < self.floors_set_by {
            return None;
        }
        self.largest_acked = packet.pkt_num;
        // Both floors are set at or before `now` (and stay so if one is set
        // now): no elapsed time is negative.
        self.floors_set_by = now;
        let drift_ppm = self.drift_ppm;
        let qt_backward = self
            .backward
            .offer_plain(now, now - received - ack_delay, drift_ppm);
        let qt_forward = self.forward.offer_plain(now, received - sent, drift_ppm);
        // Positive (above the ACK delay), below 2^60: unsigned from here.
        let rtt = rtt as u64;
        let min_rtt = self.min_rtt.min(rtt);
        self.min_rtt = min_rtt;
        let (qt_forward, qt_backward) = if qt_forward + qt_backward <= rtt - min_rtt {
            (qt_forward, qt_backward)
        } else {
            Self::bound_one(qt_forward, qt_backward, rtt - min_rtt)
        };
        // Within the joint bound, so RTT − backward − forward ≥ min RTT.
        let estimate = AckEstimate {
            backward: Some(qt_backward),
            any_forward: true,
            least_queued: (packet.size >= min_size)
                .then(|| (rtt - qt_backward - qt_forward, qt_forward)),
        };
        Some((estimate, qt_forward))
    }

    /// The joint bound of [`QueueingEstimator::bound_jointly`] for one
    /// packet: both values scaled by `excess / (forward + backward)`.
    /// Inlined: on paths that queue in both directions, most ACKs need it.
    #[inline(always)]
    fn bound_one(qt_forward: u64, qt_backward: u64, excess: u64) -> (u64, u64) {
        let scale = (excess, qt_forward + qt_backward);
        (
            peer_reports::scale_nanos(qt_forward, scale),
            peer_reports::scale_nanos(qt_backward, scale),
        )
    }

    /// [`QueueingEstimator::on_ack_nanos`] for any ACK: every packet in
    /// turn, then whether the floors allow the usual ACK's arithmetic.
    #[inline(never)]
    fn walk(&mut self, ack: &AckEvent<'_>, min_size: usize) -> AckEstimate {
        let estimate = self.walk_packets(ack, min_size);
        self.plain_floors =
            self.plain_drift && small_floor(&self.forward) && small_floor(&self.backward);
        self.floors_set_by = self.forward.at.max(self.backward.at);
        estimate
    }

    /// [`QueueingEstimator::walk`]'s walk.
    #[inline(always)]
    fn walk_packets(&mut self, ack: &AckEvent<'_>, min_size: usize) -> AckEstimate {
        self.single_forward = None;
        self.forward_nanos.clear();
        // Packets come in ascending packet-number order.
        let Some(largest) = ack.acked.last() else {
            return AckEstimate::default();
        };
        let new_largest = !self.any_acked || largest.pkt_num > self.largest_acked;
        if new_largest {
            self.largest_acked = largest.pkt_num;
            self.any_acked = true;
        }
        // Peers often stamp only the largest: look from there.
        if !ack.acked.iter().rev().any(|p| p.receive_time.is_some()) {
            self.forward_nanos.resize(ack.acked.len(), NO_ESTIMATE);
            return AckEstimate::default();
        }
        // Our clock is the host's send clock of the packets' `sent_nanos`:
        // the ACK's arrival is a packet's send time plus its RTT sample,
        // without a subtraction of instants (some 50 instructions). Only
        // differences of these times are taken (the floors remove the
        // clocks' offsets), so any fixed origin gives the same estimates.
        let Some(now) = ack.now_nanos() else {
            return AckEstimate::default();
        };
        let drift_ppm = self.drift_ppm;

        // Backward: ACK arrival − (receive time of the largest acknowledged +
        // ACK delay), ours minus the peer's clock.
        let mut backward = None;
        if let (true, Some(received)) = (new_largest, largest.receive_time) {
            if largest.rtt.is_zero() {
                // No bound to check the ACK delay against.
            } else if !peer_reports::ack_delay_possible(ack.ack_delay, largest.rtt) {
                // It claims to have held the ACK longer than the whole
                // round trip took.
                self.rejected_samples = self.rejected_samples.saturating_add(1);
            } else if self.on_clock(largest.clock_epoch) {
                let delay = now
                    .saturating_sub(nanos(received))
                    .saturating_sub(nanos(ack.ack_delay));
                backward = Some(self.backward.offer_nanos(now, delay, drift_ppm));
            }
        }

        // Forward, per packet: receive time − send time, the peer's clock
        // minus ours. The same walk takes the ACK's RTTs into the minimum,
        // checks the joint bound against the minimum so far (the final one
        // is no larger, so a packet within this bound is within that) and
        // finds the least queued packet. In nanoseconds throughout: each
        // `Duration` is read once.
        let qt_backward = backward.unwrap_or(0);
        let mut min_rtt = self.min_rtt;
        let mut within_bound = true;
        let mut any_forward = false;
        // RTT − forward queueing of the least queued packet, and the latter.
        let mut least: Option<(u64, u64)> = None;
        for packet in ack.acked {
            let rtt = rtt_nanos(packet.rtt);
            if rtt == 0 {
                self.forward_nanos.push(NO_ESTIMATE);
                continue;
            }
            min_rtt = min_rtt.min(rtt);
            let qt_forward = match packet.receive_time {
                Some(received) if self.on_clock(packet.clock_epoch) => {
                    let delay = nanos(received).saturating_sub(packet.sent_nanos);
                    any_forward = true;
                    self.forward.offer_nanos(now, delay, drift_ppm)
                }
                _ => NO_ESTIMATE,
            };
            self.forward_nanos.push(qt_forward);
            let qf = if qt_forward == NO_ESTIMATE {
                0
            } else {
                qt_forward
            };
            // Neither term exceeds i64::MAX: the sum fits.
            within_bound &= qf + qt_backward <= rtt - min_rtt;
            if packet.size >= min_size {
                // Within the bound, RTT − forward ≥ backward: the order of
                // these is that of RTT − (backward + forward). Beyond it,
                // the joint bound finds the packet again.
                let rest = rtt.wrapping_sub(qf);
                if least.is_none_or(|(best, _)| rest < best) {
                    least = Some((rest, qf));
                }
            }
        }
        self.min_rtt = min_rtt;
        if !within_bound {
            return self.bound_jointly(ack, backward, any_forward, min_size);
        }
        AckEstimate {
            backward,
            any_forward,
            least_queued: least.map(|(rest, qf)| (rest - qt_backward, qf)),
        }
    }

    /// Scales the ACK's estimates (the forward ones kept, and `backward`)
    /// down by one factor so that for every packet forward + backward ≤
    /// RTT − min RTT ([`peer_reports::bound_jointly`], here on the
    /// nanoseconds the estimator keeps), and finds the least queued packet
    /// of at least `min_size` bytes among the scaled values.
    #[cold]
    #[inline(never)]
    fn bound_jointly(
        &mut self,
        ack: &AckEvent<'_>,
        mut backward: Option<u64>,
        any_forward: bool,
        min_size: usize,
    ) -> AckEstimate {
        let qt_backward = backward.unwrap_or(0);
        let min_rtt = self.min_rtt;
        let forward = &mut self.forward_nanos;
        // Each forward value is a u64 of nanoseconds (below 2^63) and so is
        // the backward one: the sum fits.
        let pairs = ack
            .acked
            .iter()
            .zip(forward.iter())
            .filter_map(|(packet, &qf)| {
                let rtt = rtt_nanos(packet.rtt);
                let qf = if qf == NO_ESTIMATE { 0 } else { qf };
                (rtt != 0).then(|| (qf + qt_backward, rtt - min_rtt))
            });
        if let Some(scale) = peer_reports::joint_scale(pairs) {
            for qf in forward.iter_mut().filter(|q| **q != NO_ESTIMATE) {
                *qf = peer_reports::scale_nanos(*qf, scale);
            }
            backward = backward.map(|b| peer_reports::scale_nanos(b, scale));
        }
        let qt_backward = backward.unwrap_or(0);
        let mut least: Option<(u64, u64)> = None;
        for (packet, &qf) in ack.acked.iter().zip(forward.iter()) {
            let rtt = rtt_nanos(packet.rtt);
            if rtt == 0 || packet.size < min_size {
                continue;
            }
            let qf = if qf == NO_ESTIMATE { 0 } else { qf };
            let temp = rtt.saturating_sub(qt_backward).saturating_sub(qf);
            if least.is_none_or(|(best, _)| temp < best) {
                least = Some((temp, qf));
            }
        }
        AckEstimate {
            backward,
            any_forward,
            least_queued: least,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{AckedPacket, RttSnapshot};
    use std::time::Instant;

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
        /// The host's number of the peer's clock.
        clock_epoch: u32,
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
                clock_epoch: 0,
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
            packet.clock_epoch = self.clock_epoch;
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
    fn a_new_peer_clock_restarts_both_floors() {
        let mut est = QueueingEstimator::new(EstimatorConfig::default());
        let mut path = Path::new(Duration::from_secs(100), 0.0);
        path.exchange(&mut est, ms(0), ms(0), ms(0));
        let (f, b) = path.exchange(&mut est, ms(1000), ms(10), ms(10));
        assert!(close(f, ms(10), us(200)) && close(b, ms(10), us(200)));
        // The host believed the peer's clock stepped back by 50 s (clock
        // 1): both floors start over from the first packet on it, and the
        // next measures against them.
        path.offset = Duration::from_secs(50);
        path.clock_epoch = 1;
        assert_eq!(
            path.exchange(&mut est, ms(2000), ms(10), ms(10)),
            (Some(ms(0)), Some(ms(0)))
        );
        assert_eq!(est.clock_steps(), 1);
        let (f, b) = path.exchange(&mut est, ms(3000), ms(30), ms(15));
        assert!(close(f, ms(20), us(200)), "{f:?}");
        assert!(close(b, ms(5), us(200)), "{b:?}");
        // A stamp of the old clock still in flight is not used.
        path.clock_epoch = 0;
        assert_eq!(
            path.exchange(&mut est, ms(4000), ms(30), ms(15)),
            (None, None)
        );
        assert_eq!(est.clock_steps(), 1);
        // Without the clock's number the step is read as queueing: the
        // forward delay fell by 50 s (a new floor), the backward one rose
        // by as much (cut to the round trip's excess by the joint bound).
        let mut blind = QueueingEstimator::new(EstimatorConfig::default());
        let mut path = Path::new(Duration::from_secs(100), 0.0);
        path.exchange(&mut blind, ms(0), ms(0), ms(0));
        path.offset = Duration::from_secs(50);
        let (_, b) = path.exchange(&mut blind, ms(2000), ms(10), ms(10));
        assert!(b.is_some_and(|b| b > ms(15)), "{b:?}");
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
    fn send_times_from_the_rtt_and_from_the_instant_agree() {
        // Without drift the forward queueing is exactly (R - S) - (R0 - S0)
        // in nanoseconds. One ACK holds a packet it acknowledges itself
        // (time_acked = now: the ACK's arrival is its send time plus its
        // RTT) and, first, one whose RTT was measured at an earlier
        // instant (the arrival is converted from the instant): both must
        // give the exact value computed here.
        let t0 = Instant::now();
        let mut est = QueueingEstimator::new(EstimatorConfig {
            clock_drift_ppm: 0.0,
        });
        let peer = |at: Duration| Duration::from_secs(7) + at;
        let ns = |d: Duration| d.as_nanos() as i128;
        let mut first = AckedPacket::new(0, 1200, t0, t0 + ms(600));
        first.receive_time = Some(peer(ms(300)));
        fn event(acked: &[AckedPacket], now: Instant) -> AckEvent<'_> {
            AckEvent {
                now,
                acked,
                summary: crate::events::AckSummary::of(acked, 0),
                ack_delay: Duration::ZERO,
                rtt: RttSnapshot::uniform(ms(600)),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            }
        }
        let mut forward = Vec::new();
        est.on_ack(&event(&[first], t0 + ms(600)), &mut forward);
        // The floors: 300 ms forward (R0 - S0, S0 = t0) and 300 backward.
        let floor = ns(peer(ms(300)));
        // Sent at 1 s + 123 ns and 1 s + 2 ms, received 320.000 456 ms and
        // 307 ms later; the ACK arrives at 1.61 s (1 ms of backward
        // queueing). The first packet's RTT was measured at 1.65 s.
        let now = t0 + ms(1_610);
        let sent_a = t0 + ms(1_000) + Duration::from_nanos(123);
        let sent_b = t0 + ms(1_002);
        let mut a = AckedPacket::new(1, 1200, sent_a, t0 + ms(1_650));
        let mut b = AckedPacket::new(2, 1200, sent_b, now);
        a.receive_time = Some(peer(ms(1_320) + Duration::from_nanos(456 + 123)));
        b.receive_time = Some(peer(ms(1_309)));
        assert_ne!(a.time_acked, now);
        let backward = est.on_ack(&event(&[a, b], now), &mut forward);
        let want = |p: &AckedPacket, sent: Instant| {
            let delay = ns(p.receive_time.unwrap()) - ns(sent - t0);
            Duration::from_nanos((delay - floor) as u64)
        };
        assert_eq!(forward, [Some(want(&a, sent_a)), Some(want(&b, sent_b))]);
        assert_eq!(forward[0], Some(ms(20) + Duration::from_nanos(456)));
        assert_eq!(forward[1], Some(ms(7)));
        // Within the joint bound (the RTTs are 50 and 8 ms above 600).
        assert_eq!(backward, Some(ms(1)));
    }

    /// Everything an estimate leaves behind, to compare two estimators.
    fn state(est: &QueueingEstimator) -> impl PartialEq + std::fmt::Debug {
        (
            (est.forward, est.backward, est.clock_epoch, est.min_rtt),
            (est.any_acked, est.largest_acked),
            (est.rejected_samples, est.clock_steps),
            est.forward_nanos().to_vec(),
        )
    }

    #[test]
    fn usual_acks_give_what_the_walk_gives() {
        // One estimator takes the usual ACK's plain arithmetic where it can,
        // the other walks every ACK (the general code): every estimate and
        // every state must agree, on usual ACKs and on the others mixed in
        // (old packets, ACK delays beyond the RTT, a new peer clock, times
        // too large for plain arithmetic, a lying peer that trips the joint
        // bound, small packets, several packets).
        let t0 = Instant::now();
        let mut fast = QueueingEstimator::new(EstimatorConfig::default());
        let mut walked = fast.clone();
        let mut usual = 0;
        let mut pkt = 0u64;
        for k in 0u64..4000 {
            // Now and then an ACK arrives before the floors were set
            // (a clock that went back): not a usual ACK.
            let back = if k % 211 == 71 {
                ms(30)
            } else {
                Duration::ZERO
            };
            let sent = t0 + ms(30 + k * 3) + Duration::from_nanos(k * 7919 % 1_000_000) - back;
            // Queueing that swells and drains, in both directions.
            let qf = us((k * 37) % 9000);
            let qb = us((k * 53) % 7000);
            let rtt = ms(550) + qf + qb;
            let count = if k % 97 == 0 { 3 } else { 1 };
            let mut packets = Vec::new();
            for i in 0..count {
                let mut p =
                    AckedPacket::new(pkt, if k % 5 == 0 { 600 } else { 1200 }, sent, sent + rtt);
                p.receive_time = Some(Duration::from_secs(40) + (sent - t0) + ms(270) + qf + us(i));
                p.clock_epoch = u32::from(k >= 2500);
                pkt += 1;
                packets.push(p);
            }
            let last = packets.len() - 1;
            match k % 211 {
                // An old packet again: not a new largest.
                13 => packets[last].pkt_num = 0,
                // A stamp far beyond plain arithmetic: it also sets a
                // backward floor beyond (no usual ACK until the new clock).
                29 if k == 2139 => packets[last].receive_time = Some(Duration::from_secs(1 << 40)),
                // A peer that reports receiving 50 ms early.
                41 => packets[last].receive_time = packets[last].receive_time.map(|r| r - ms(50)),
                // Acknowledged at another instant than the ACK's arrival.
                57 => packets[last].time_acked += ms(1),
                _ => {}
            }
            let ack_delay = if k % 131 == 0 { rtt + ms(1) } else { ms(2) };
            let now = sent + rtt;
            let ack = AckEvent {
                now,
                acked: &packets,
                summary: crate::events::AckSummary::of(&packets, 0),
                ack_delay,
                rtt: RttSnapshot::uniform(rtt),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            };
            let min_size = 1000;
            let got = fast.on_ack_nanos(&ack, min_size);
            if fast.single_forward.is_some() {
                usual += 1;
            }
            let want = walked.walk(&ack, min_size);
            assert_eq!(got, want, "ACK {k}");
            assert_eq!(state(&fast), state(&walked), "ACK {k}");
        }
        // Most ACKs took the usual path.
        assert!(usual > 3000, "{usual}");
    }

    #[test]
    fn floor_rises_with_the_allowed_drift_and_follows_lower_samples() {
        let mut floor = DelayFloor::new();
        let drift = 100.0;
        let t0 = 5_000_000_000;
        assert_eq!(floor.offer(t0, 1_000_000, drift), ms(0));
        // 10 s later the floor has risen by 100 ppm x 10 s = 1 ms: a sample
        // 1.5 ms above the old floor is 0.5 ms of queueing.
        let t1 = t0 + 10_000_000_000;
        let risen = 1_000_000 + 10_000_000_000i64 * 100 / 1_000_000;
        assert_eq!(floor.floor(t1, drift), Some(risen));
        assert_eq!(floor.offer(t1, 2_500_000, drift), us(500));
        // A sample below the risen floor becomes the floor.
        assert_eq!(floor.offer(t1, 1_800_000, drift), ms(0));
        assert_eq!(floor.floor(t1, drift), Some(1_800_000));
        // Without drift allowed, the floor stays where it was set; nor does
        // it rise for a time before it was set.
        assert_eq!(floor.floor(t1 + 100_000_000_000, 0.0), Some(1_800_000));
        assert_eq!(floor.floor(t0, drift), Some(1_800_000));
        floor.reset();
        assert_eq!(floor.floor(t1, drift), None);
    }
}

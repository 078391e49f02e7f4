//! What a peer may report about timing, judged once for every user: the
//! plausibility rule for receive timestamps (draft-ietf-quic-receive-ts) and
//! the bound on queueing times (RoVegas's AQT and AQT-echo, our
//! queueing-time extension).
//!
//! # The rule for receive timestamps
//!
//! Let `S` be when we sent a packet (our clock), `R` when the peer says it
//! received it (its clock, unknown offset `θ` to ours) and `A` when its ACK
//! reached us, so its RTT sample is `A − S`. Then `R − S = owd + θ` with the
//! true one-way delay `0 ≤ owd ≤ A − S`. For two packets `a` and `b`, the
//! offset cancels in the change of that quantity,
//!
//! ```text
//! D = (R_b − S_b) − (R_a − S_a) = owd_b − owd_a,
//! ```
//!
//! and so, whatever the clocks' offset,
//!
//! ```text
//! −(RTT_a + slack) ≤ D ≤ RTT_b + slack.
//! ```
//!
//! Read as times: `D ≤ RTT_b` is `R_b − R_a ≤ A_b − S_a`, the peer cannot
//! have received `b` later after `a` than `b`'s ACK reached us after we sent
//! `a` (no stamp after the ACK that reports it arrived); `D ≥ −RTT_a` is
//! `R_b − R_a ≥ S_b − A_a`, it cannot have received `b` earlier after `a`
//! than we sent `b` after `a`'s ACK came back (no stamp before the packet
//! was sent). Both bounds use only our own measurements (`S`, the RTTs),
//! which the peer does not control. `slack` is the stamps' and timers'
//! granularity ([`GRANULARITY`], RFC 9002's kGranularity); an estimator that
//! compares samples far apart in time adds the clocks' possible drift.
//!
//! The same rule holds for one-way delays measured the other way (our ACK
//! arrival minus the peer's send time, for the ACK path), and for a sample
//! against a reference that is not the previous packet (a minimum, a
//! baseline): any two one-way delays on mixed clocks.
//!
//! Out of the rule on purpose: the order of stamps. Two packets may be
//! reordered on the path, so `R_b < R_a` for `b` sent after `a` is possible;
//! consumers that need ordered stamps (a relative delay, a packet pair, the
//! largest acknowledged of successive ACKs) say so themselves.
//!
//! # The bound for queueing times
//!
//! A queueing time is part of a round trip, and the sender measures round
//! trips itself (RFC 9002 section 5): queueing in both directions together
//! can add at most what the round trip currently exceeds its minimum,
//! `smoothed_rtt − min_rtt`, plus its variation `rttvar`. Every reported
//! queueing time (AQT-echo per packet, AQT per ACK) is clamped to
//! [`queueing_bound`], and a packet's forward plus the ACK's backward
//! queueing together too ([`bound_jointly`]), before any controller sees
//! them. A receiver that lies, or an on-path attacker who rewrites the
//! unauthenticated AQT IP option, can then at most shift that much queueing
//! between the directions or hide it; it cannot make an idle path look
//! congested (`docs/extensions.md`, "Trust model").
//!
//! # Where this lives
//!
//! In `vegas-cc` (`shared/`), not in the wire crate `quic-ext`: the rule is
//! about delays and RTT samples, the controller's own quantities. The wire
//! side only decodes what the peer sent; the host judges every report of an
//! ACK once, with [`PeerReportJudge`], as it builds the ACK's event, so
//! `quic-ext` does not depend on this crate. Receive times are judged by
//! the host's [`PeerClock`] (`shared/peer_clock.rs`), which also holds the
//! one policy for a peer clock that steps; the estimators read its verdicts
//! and apply the rule only to what is not the peer's stamp (VenoDB's local
//! stand-in, on our clock).

use std::time::{Duration, Instant};

use crate::events::{PeerStamp, RttSnapshot};
use crate::shared::peer_clock::PeerClock;

/// RFC 9002's kGranularity: the slack of the plausibility bounds.
pub const GRANULARITY: Duration = Duration::from_millis(1);

/// One one-way-delay sample on mixed clocks (offset included) and the RTT
/// of the packet it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelaySample {
    /// The one-way delay plus the clocks' offset, in nanoseconds.
    pub delay_nanos: i128,
    /// The packet's RTT as the sender measured it.
    pub rtt: Duration,
}

/// What the rule says about the change from one sample to a later one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Plausible,
    /// `D > RTT_later + slack`: received after its ACK came back.
    AboveRoundTrip,
    /// `D < −(RTT_earlier + slack)`: received before it was sent.
    BelowRoundTrip,
}

impl Verdict {
    pub fn is_plausible(self) -> bool {
        self == Verdict::Plausible
    }
}

/// The rule: whether the one-way delay can have changed from `earlier` to
/// `later` (see the module documentation).
pub fn judge(earlier: DelaySample, later: DelaySample, slack: Duration) -> Verdict {
    judge_reaches(
        earlier.delay_nanos,
        reach(earlier.rtt, slack),
        later.delay_nanos,
        reach(later.rtt, slack),
    )
}

/// How far a sample's one-way delay may lie above an earlier one's (or an
/// earlier one's below it): its RTT plus `slack`, in nanoseconds.
pub fn reach(rtt: Duration, slack: Duration) -> i128 {
    nanos(rtt).saturating_add(nanos(slack))
}

/// [`judge`] on delays and [`reach`]es already in nanoseconds, for a judge
/// that keeps its samples that way.
pub fn judge_reaches(
    earlier_delay: i128,
    earlier_reach: i128,
    later_delay: i128,
    later_reach: i128,
) -> Verdict {
    let change = later_delay.saturating_sub(earlier_delay);
    if change > later_reach {
        Verdict::AboveRoundTrip
    } else if change < -earlier_reach {
        Verdict::BelowRoundTrip
    } else {
        Verdict::Plausible
    }
}

/// `R − S` of a packet in nanoseconds, with `S` counted from `epoch` (any
/// fixed instant of ours): the forward one-way delay plus the clocks'
/// offset (and the epoch's, which cancels in every comparison).
pub fn forward_delay_nanos(receive_time: Duration, time_sent: Instant, epoch: Instant) -> i128 {
    nanos(receive_time).saturating_sub(nanos_since(time_sent, epoch))
}

/// Whether an ACK delay is possible for a packet whose round trip took
/// `rtt`: the peer held the ACK for less than the whole round trip.
pub fn ack_delay_possible(ack_delay: Duration, rtt: Duration) -> bool {
    ack_delay < rtt
}

/// Whether a queueing time reported for a packet (or, for the ACK path, for
/// an ACK) whose round trip took `rtt` is possible at all: no longer than
/// that round trip. Larger values are not clamped but refused: they come
/// from a broken or lying source, not from a queue.
pub fn queueing_possible(queueing: Duration, rtt: Duration) -> bool {
    queueing <= rtt
}

/// The most queueing, both directions together, that one report may carry:
/// `smoothed_rtt − min_rtt + rttvar` of the sender's own RTT estimator.
pub fn queueing_bound(rtt: &RttSnapshot) -> Duration {
    rtt.smoothed_rtt
        .saturating_sub(rtt.min_rtt)
        .saturating_add(rtt.rttvar)
}

/// The most queueing, both directions together, that a report for one
/// packet whose round trip took `packet_rtt` may carry: what its own round
/// trip exceeded the path's minimum by, or [`queueing_bound`] if that is
/// more, plus `rttvar`. A queue that really held the packet lengthened its
/// round trip by as much, so an honest report of a momentary peak passes
/// (the smoothed RTT alone lags such peaks); a receiver cannot lengthen the
/// sender's own measurement of the round trip without slowing its own
/// download.
pub fn packet_queueing_bound(rtt: &RttSnapshot, packet_rtt: Duration) -> Duration {
    packet_rtt
        .saturating_sub(rtt.min_rtt)
        .max(rtt.smoothed_rtt.saturating_sub(rtt.min_rtt))
        .saturating_add(rtt.rttvar)
}

/// Scales one ACK's queueing times down by one common factor until, for
/// every packet `i`, `forward[i] + backward ≤ allowed(i)` (packets for which
/// `allowed` gives `None` are not bounded). Scaling all by the same factor
/// keeps their proportions, so the split between the directions the report
/// claims is kept while its total is cut to what the round trip allows.
/// Returns the bounded backward time; `forward` is changed in place.
pub fn bound_jointly(
    forward: &mut [Option<Duration>],
    backward: Option<Duration>,
    mut allowed: impl FnMut(usize) -> Option<Duration>,
) -> Option<Duration> {
    // Nanoseconds in u64 (584 years) hold every real queueing time and
    // round trip: the usual case, without 128-bit arithmetic but for the
    // products (one instruction each). Values beyond are done again in
    // u128, which holds every `Duration`: the same factor either way.
    let scale = match tightest_scale_u64(forward, backward, &mut allowed) {
        Some(scale) => scale.map(|(num, den)| (u128::from(num), u128::from(den))),
        None => tightest_scale_u128(forward, backward, &mut allowed),
    };
    let Some((num, den)) = scale else {
        return backward;
    };
    let den = den.max(1);
    let shrink = |d: Duration| {
        let nanos = d.as_nanos();
        // In u64 when it fits (the usual case: a u128 division is a library
        // call), the same quotient.
        let small = (u64::try_from(nanos), u64::try_from(num), u64::try_from(den));
        let scaled = match small {
            (Ok(n), Ok(num), Ok(den)) => u128::from(scale_nanos(n, (num, den))),
            _ => nanos.saturating_mul(num) / den,
        };
        Duration::from_nanos(u64::try_from(scaled).unwrap_or(u64::MAX))
    };
    for qf in forward.iter_mut() {
        *qf = qf.map(shrink);
    }
    backward.map(shrink)
}

/// [`bound_jointly`]'s factor on nanoseconds: of the `(claimed, allowed)`
/// pairs (forward + backward, and its limit, one per bounded packet), the
/// tightest ratio allowed / claimed among those claiming more than allowed,
/// as a fraction `(num, den)` with `num < den`; `None` if none does. For
/// an estimator that keeps its values in nanoseconds.
pub fn joint_scale(pairs: impl IntoIterator<Item = (u64, u64)>) -> Option<(u64, u64)> {
    let mut scale: Option<(u64, u64)> = None;
    for (claimed, limit) in pairs {
        if claimed <= limit {
            continue;
        }
        // Cross products of two u64s fit a u128 exactly.
        let tighter = scale.is_none_or(|(num, den)| {
            u128::from(limit) * u128::from(den) < u128::from(num) * u128::from(claimed)
        });
        if tighter {
            scale = Some((limit, claimed));
        }
    }
    scale
}

/// `nanos × num / den` rounded down, for a [`joint_scale`] factor: no
/// larger than `nanos`.
pub fn scale_nanos(nanos: u64, (num, den): (u64, u64)) -> u64 {
    let product = u128::from(nanos) * u128::from(num);
    let den = den.max(1);
    match u64::try_from(product) {
        Ok(small) => small / den,
        // num < den: the quotient is below `nanos`, so it fits.
        Err(_) => u64::try_from(product / u128::from(den)).unwrap_or(u64::MAX),
    }
}

/// `d` in nanoseconds if that fits a u64.
fn nanos_u64(d: Duration) -> Option<u64> {
    u64::try_from(d.as_nanos()).ok()
}

/// [`bound_jointly`]'s tightest factor by [`joint_scale`]; `None` if a
/// value or a sum of two does not fit a u64 (then [`tightest_scale_u128`]
/// decides).
fn tightest_scale_u64(
    forward: &[Option<Duration>],
    backward: Option<Duration>,
    allowed: &mut impl FnMut(usize) -> Option<Duration>,
) -> Option<Option<(u64, u64)>> {
    let qb = match backward {
        Some(d) => nanos_u64(d)?,
        None => 0,
    };
    let mut fits = true;
    // A packet without a forward time still bounds the backward time.
    let pairs = forward.iter().enumerate().filter_map(|(i, qf)| {
        let limit = allowed(i)?;
        let claimed = match qf {
            Some(d) => nanos_u64(*d).and_then(|qf| qf.checked_add(qb)),
            None => Some(qb),
        };
        match (claimed, nanos_u64(limit)) {
            (Some(claimed), Some(limit)) => Some((claimed, limit)),
            _ => {
                fits = false;
                None
            }
        }
    });
    let scale = joint_scale(pairs);
    fits.then_some(scale)
}

/// The same factor in u128, saturating, for any `Duration`s.
fn tightest_scale_u128(
    forward: &[Option<Duration>],
    backward: Option<Duration>,
    allowed: &mut impl FnMut(usize) -> Option<Duration>,
) -> Option<(u128, u128)> {
    let qb = backward.map_or(0, |d| d.as_nanos());
    let mut scale: Option<(u128, u128)> = None;
    for (i, qf) in forward.iter().enumerate() {
        let Some(limit) = allowed(i) else { continue };
        let claimed = qf.map_or(0, |d| d.as_nanos()).saturating_add(qb);
        let limit = limit.as_nanos();
        if claimed <= limit {
            continue;
        }
        let tighter =
            scale.is_none_or(|(num, den)| limit.saturating_mul(den) < num.saturating_mul(claimed));
        if tighter {
            scale = Some((limit, claimed));
        }
    }
    scale
}

/// What the judge handed to the controller, and what it refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JudgedCounts {
    pub receive_times: u64,
    pub forward_queueing: u64,
    pub backward_queueing: u64,
    pub rejected_receive_times: u64,
    pub rejected_forward_queueing: u64,
    pub rejected_backward_queueing: u64,
}

/// Judges what the peer reports with each ACK before any controller sees it
/// (each refused value becomes "unknown", and the controller behaves as
/// without the extension for that packet):
/// - receive times: by the [`PeerClock`], which also decides, with one
///   policy for every estimator, when the peer's clock stepped
///   ([`crate::shared::peer_clock`]);
/// - queueing times (AQT and AQT-echo) are parts of a round trip: one larger
///   than the RTT sample it belongs to is impossible ([`queueing_possible`]).
///   What a possible but exaggerated one can do is bounded afterwards by the
///   host with the sender's RTT estimates ([`queueing_bound`]).
#[derive(Clone, Debug, Default)]
pub struct PeerReportJudge {
    clock: PeerClock,
    counts: JudgedCounts,
}

impl PeerReportJudge {
    pub fn counts(&self) -> JudgedCounts {
        // The clock counts the receive times it believed and refused (every
        // verdict is one or the other), so they are not counted twice.
        let clock = self.clock.counts();
        JudgedCounts {
            receive_times: clock.believed,
            rejected_receive_times: clock.refused,
            ..self.counts
        }
    }

    /// The reports of one more ACK frame follow.
    #[inline]
    pub fn begin_ack(&mut self) {
        self.clock.on_ack_frame();
    }

    /// The peer's clock as judged so far.
    pub fn clock(&self) -> &PeerClock {
        &self.clock
    }

    /// The number of the peer's clock the receive time `receive_time` it
    /// reported for a packet sent at `time_sent` (RTT sample `rtt`) is on,
    /// if believed. Call in ascending packet-number
    /// order, once per acknowledged packet of the ACK begun last
    /// ([`PeerReportJudge::begin_ack`]).
    #[inline]
    pub fn receive_time(
        &mut self,
        receive_time: Duration,
        time_sent: Instant,
        rtt: Duration,
    ) -> Option<u32> {
        self.clock.judge(receive_time, time_sent, rtt)
    }

    /// The forward queueing time (AQT-echo) reported for a packet, if no
    /// larger than the packet's RTT sample `rtt`.
    pub fn forward_queueing(&mut self, queueing: Duration, rtt: Duration) -> Option<Duration> {
        if !queueing_possible(queueing, rtt) {
            self.counts.rejected_forward_queueing += 1;
            return None;
        }
        self.counts.forward_queueing += 1;
        Some(queueing)
    }

    /// The backward queueing time (AQT of the ACK's datagram), if known and
    /// no larger than `rtt`, the largest RTT sample of the ACK.
    pub fn backward_queueing(
        &mut self,
        queueing: Option<Duration>,
        rtt: Duration,
    ) -> Option<Duration> {
        let queueing = queueing?;
        if !queueing_possible(queueing, rtt) {
            self.counts.rejected_backward_queueing += 1;
            return None;
        }
        self.counts.backward_queueing += 1;
        Some(queueing)
    }
}

/// The values of stamps (ascending packet numbers) for ascending packet
/// numbers, found in one walk over both.
#[derive(Clone, Copy, Debug)]
pub struct StampCursor<'a> {
    rest: &'a [PeerStamp],
}

impl<'a> StampCursor<'a> {
    pub fn new(stamps: &'a [PeerStamp]) -> Self {
        StampCursor { rest: stamps }
    }

    /// The value stamped for `pkt_num`; call with ascending packet numbers.
    pub fn value(&mut self, pkt_num: u64) -> Option<Duration> {
        while let Some((first, rest)) = self.rest.split_first() {
            if first.pkt_num > pkt_num {
                return None;
            }
            self.rest = rest;
            if first.pkt_num == pkt_num {
                return Some(first.value);
            }
        }
        None
    }
}

/// A duration in signed nanoseconds (any `Duration` fits).
pub fn nanos(d: Duration) -> i128 {
    i128::try_from(d.as_nanos()).unwrap_or(i128::MAX)
}

/// `later − earlier` in signed nanoseconds, negative if `later` is earlier.
pub fn nanos_since(later: Instant, earlier: Instant) -> i128 {
    match later.checked_duration_since(earlier) {
        Some(d) => nanos(d),
        None => -nanos(earlier.saturating_duration_since(later)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    const MS: i128 = 1_000_000;

    /// A packet sent at `sent_ms`, received at `received_ms` on a peer clock
    /// `offset_ms` ahead, acknowledged at `acked_ms`: its sample, with the
    /// RTT and `R − S` computed here from the times, not by the module.
    fn packet(sent_ms: i128, received_ms: i128, acked_ms: i128, offset_ms: i128) -> DelaySample {
        DelaySample {
            delay_nanos: (received_ms + offset_ms - sent_ms) * MS,
            rtt: Duration::from_nanos(((acked_ms - sent_ms) * MS) as u64),
        }
    }

    #[test]
    fn real_one_way_delays_are_always_plausible() {
        // Every pair of one-way delays within [0, RTT] of its own packet, on
        // a peer clock 5 s ahead: the rule accepts each.
        let offset = 5_000;
        for owd_a in [0, 1, 299, 600] {
            for owd_b in [0, 1, 300, 600] {
                let a = packet(0, owd_a, 600, offset);
                let b = packet(10, 10 + owd_b, 610, offset);
                assert_eq!(
                    judge(a, b, Duration::ZERO),
                    Verdict::Plausible,
                    "{owd_a} {owd_b}"
                );
            }
        }
    }

    #[test]
    fn a_stamp_after_its_ack_arrived_is_above_the_round_trip() {
        let a = packet(0, 300, 600, 0);
        // a took 300 ms one way. b (sent at 10, acknowledged at 610)
        // claims a receive time of 911: D = (911 - 10) - 300 = 601 ms, more
        // than b's whole 600 ms round trip.
        let b = packet(10, 911, 610, 0);
        let d = (911 - 10) - 300;
        assert!(d > 600);
        assert_eq!(judge(a, b, Duration::ZERO), Verdict::AboveRoundTrip);
        // The granularity slack lets exactly that much more through.
        let slack = Duration::from_millis((d - 600) as u64);
        assert_eq!(judge(a, b, slack), Verdict::Plausible);
        assert_eq!(
            judge(a, b, slack - Duration::from_nanos(1)),
            Verdict::AboveRoundTrip
        );
    }

    #[test]
    fn a_stamp_before_the_packet_was_sent_is_below_the_round_trip() {
        // a's one-way delay 600 ms (all of its RTT), b claims -1 ms.
        let a = packet(0, 600, 600, 0);
        let b = packet(10, 9, 610, 0);
        let d = (9 - 10) - 600;
        assert!(d < -600);
        assert_eq!(judge(a, b, Duration::ZERO), Verdict::BelowRoundTrip);
        assert_eq!(judge(a, b, ms(1)), Verdict::Plausible);
        // The lower bound is the earlier packet's RTT, not the later one's.
        let short_b = DelaySample { rtt: ms(1), ..b };
        assert_eq!(judge(a, short_b, ms(1)), Verdict::Plausible);
        let short_a = DelaySample { rtt: ms(1), ..a };
        assert_eq!(judge(short_a, b, ms(1)), Verdict::BelowRoundTrip);
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        // The largest one-way delays `Duration`s can express, both ways.
        let max = nanos(Duration::MAX);
        let huge = DelaySample {
            delay_nanos: max,
            rtt: Duration::MAX,
        };
        let tiny = DelaySample {
            delay_nanos: -max,
            rtt: Duration::ZERO,
        };
        // Change 2 × max against RTT_later + slack = 2 × max: just plausible.
        assert_eq!(judge(tiny, huge, Duration::MAX), Verdict::Plausible);
        assert_eq!(judge(tiny, huge, Duration::ZERO), Verdict::AboveRoundTrip);
        assert_eq!(judge(huge, tiny, Duration::ZERO), Verdict::BelowRoundTrip);
        // Beyond anything real: saturates instead of overflowing.
        let beyond = DelaySample {
            delay_nanos: i128::MIN,
            rtt: Duration::MAX,
        };
        let above = DelaySample {
            delay_nanos: i128::MAX,
            rtt: Duration::MAX,
        };
        assert_eq!(judge(beyond, above, Duration::MAX), Verdict::AboveRoundTrip);
        assert_eq!(judge(above, beyond, Duration::MAX), Verdict::BelowRoundTrip);
    }

    #[test]
    fn forward_delay_is_receive_time_minus_send_time_since_the_epoch() {
        let epoch = Instant::now();
        let later = epoch + ms(250);
        assert_eq!(
            forward_delay_nanos(ms(1_000), later, epoch),
            (1_000 - 250) * MS
        );
        // A packet sent before the epoch counts negative time.
        let earlier = epoch.checked_sub(ms(50)).unwrap_or(epoch);
        let expected = if earlier == epoch { 1_000 } else { 1_050 };
        assert_eq!(
            forward_delay_nanos(ms(1_000), earlier, epoch),
            expected * MS
        );
    }

    #[test]
    fn ack_delay_and_queueing_limits() {
        assert!(ack_delay_possible(ms(599), ms(600)));
        assert!(!ack_delay_possible(ms(600), ms(600)));
        assert!(queueing_possible(ms(600), ms(600)));
        assert!(!queueing_possible(ms(601), ms(600)));
    }

    #[test]
    fn the_queueing_bound_is_the_rtt_excess_plus_its_variation() {
        let rtt = RttSnapshot {
            min_rtt: ms(600),
            smoothed_rtt: ms(650),
            latest_rtt: ms(700),
            rttvar: ms(20),
        };
        assert_eq!(queueing_bound(&rtt), ms(650 - 600 + 20));
        // A smoothed RTT below the minimum (a new minimum not yet smoothed
        // in) gives no negative excess.
        let below = RttSnapshot {
            smoothed_rtt: ms(590),
            ..rtt
        };
        assert_eq!(queueing_bound(&below), ms(20));
    }

    #[test]
    fn reports_within_the_limit_are_unchanged() {
        let mut forward = [Some(ms(10)), None, Some(ms(30))];
        let backward = bound_jointly(&mut forward, Some(ms(20)), |_| Some(ms(50)));
        assert_eq!(backward, Some(ms(20)));
        assert_eq!(forward, [Some(ms(10)), None, Some(ms(30))]);
    }

    #[test]
    fn reports_above_the_limit_are_scaled_by_the_tightest_packet() {
        // Packet 0: 40 + 60 = 100 against 50 (factor 1/2); packet 1:
        // 90 + 60 = 150 against 100 (factor 2/3). The tighter, 1/2, applies
        // to all.
        let limits = [ms(50), ms(100), ms(1)];
        let mut forward = [Some(ms(40)), Some(ms(90)), Some(ms(0))];
        let backward = bound_jointly(&mut forward, Some(ms(60)), |i| (i < 2).then_some(limits[i]));
        assert_eq!(backward, Some(ms(30)));
        assert_eq!(forward, [Some(ms(20)), Some(ms(45)), Some(ms(0))]);
        for (i, qf) in forward.iter().enumerate().take(2) {
            let total = qf.unwrap_or_default() + ms(30);
            assert!(total <= limits[i], "packet {i}");
        }
    }

    #[test]
    fn a_backward_time_alone_is_cut_to_the_limit() {
        let mut forward = [None, None];
        let backward = bound_jointly(&mut forward, Some(ms(10_000)), |_| Some(ms(70)));
        assert_eq!(backward, Some(ms(70)));
        assert_eq!(forward, [None, None]);
    }

    #[test]
    fn a_zero_limit_removes_all_queueing() {
        let mut forward = [Some(ms(5))];
        assert_eq!(
            bound_jointly(&mut forward, Some(ms(5)), |_| Some(Duration::ZERO)),
            Some(Duration::ZERO)
        );
        assert_eq!(forward, [Some(Duration::ZERO)]);
    }

    #[test]
    fn the_factor_is_exact_where_u64_products_would_overflow() {
        // Limits and claims of several seconds: their cross products
        // (5e9 x 1e10 ns) exceed a u64, and wrapped they would order
        // packets 0 and 1 the wrong way. Packet 0: 9 s claimed against 5 s
        // (5/9); packet 1: 10 s against 4 s (2/5, the tightest); packet 2:
        // 13 s against 5.4 s (27/65).
        let s = Duration::from_secs;
        let limits = [s(5), s(4), Duration::from_millis(5_400)];
        let mut forward = [Some(s(5)), Some(s(6)), Some(s(9))];
        let backward = bound_jointly(&mut forward, Some(s(4)), |i| Some(limits[i]));
        // Reference: the smallest limit / claim, compared as exact rationals.
        let claims = [9u128, 10, 13].map(|c| c * 1_000_000_000);
        let nanos = limits.map(|l| l.as_nanos());
        let tightest = (0..3)
            .min_by(|&a, &b| (nanos[a] * claims[b]).cmp(&(nanos[b] * claims[a])))
            .unwrap();
        assert_eq!(tightest, 1);
        let scaled = |v: u128| Duration::from_nanos((v * nanos[1] / claims[1]) as u64);
        assert_eq!(backward, Some(scaled(4_000_000_000)));
        assert_eq!(
            forward,
            [5u128, 6, 9].map(|v| Some(scaled(v * 1_000_000_000)))
        );
        // The same pairs on nanoseconds.
        let pairs = (0..3).map(|i| (claims[i] as u64, nanos[i] as u64));
        assert_eq!(
            joint_scale(pairs),
            Some((nanos[1] as u64, claims[1] as u64))
        );
    }

    #[test]
    fn durations_beyond_u64_nanoseconds_take_the_wide_path() {
        // 2^64 ns is 584 years: a backward time of 1000 years and a forward
        // one of 600 do not fit a u64; the factor (1 / 1600 of the limit)
        // is computed in u128, the same rule.
        let year = Duration::from_secs(365 * 86_400);
        let mut forward = [Some(year * 600), None];
        let limit = year * 2;
        let backward = bound_jointly(&mut forward, Some(year * 1000), |_| Some(limit));
        let (num, den) = (limit.as_nanos(), (year * 1600).as_nanos());
        let scaled = |d: Duration| Duration::from_nanos((d.as_nanos() * num / den) as u64);
        assert_eq!(backward, Some(scaled(year * 1000)));
        assert_eq!(forward, [Some(scaled(year * 600)), None]);
        let total = forward[0].unwrap_or_default() + backward.unwrap_or_default();
        assert!(total <= limit);
    }

    #[test]
    fn scaling_nanoseconds_rounds_down_without_overflow() {
        assert_eq!(scale_nanos(10, (1, 3)), 3);
        // A product beyond u64, a quotient that fits.
        let big = u64::MAX / 2;
        assert_eq!(
            scale_nanos(big, (1_000_000_007, 1_000_000_009)),
            (u128::from(big) * 1_000_000_007 / 1_000_000_009) as u64
        );
        assert_eq!(
            scale_nanos(u64::MAX, (u64::MAX - 1, u64::MAX)),
            u64::MAX - 1
        );
    }

    /// A judge's view of `times` as the stack hands them over: sorted.
    fn stamps(times: &[(u64, u64)]) -> Vec<PeerStamp> {
        let mut v: Vec<PeerStamp> = times
            .iter()
            .map(|&(pkt_num, t)| PeerStamp {
                pkt_num,
                value: ms(t),
            })
            .collect();
        v.sort_by_key(|s| s.pkt_num);
        v
    }

    #[test]
    fn the_cursor_finds_what_a_search_finds() {
        let stamps = stamps(&[(2, 20), (3, 30), (7, 70), (9, 90)]);
        for start in 0..11 {
            let mut cursor = StampCursor::new(&stamps);
            for pkt_num in start..11 {
                let searched = stamps
                    .binary_search_by_key(&pkt_num, |s| s.pkt_num)
                    .ok()
                    .map(|i| stamps[i].value);
                assert_eq!(cursor.value(pkt_num), searched, "{start} {pkt_num}");
            }
        }
        // Packets the cursor skips are never looked at again.
        let mut cursor = StampCursor::new(&stamps);
        assert_eq!(cursor.value(7), Some(ms(70)));
        assert_eq!(cursor.value(9), Some(ms(90)));
    }

    #[test]
    fn receive_times_are_counted_by_their_verdicts() {
        // Believed, refused (an hour late), believed again: the counts are
        // the verdicts the judge handed out, computed here.
        let mut j = PeerReportJudge::default();
        let t0 = Instant::now();
        let mut verdicts = Vec::new();
        for (n, late_s) in [0, 0, 3_600, 0, 3_600, 3_600, 0].into_iter().enumerate() {
            j.begin_ack();
            let sent = t0 + ms(10 * n as u64);
            let received = ms(300 + 10 * n as u64) + Duration::from_secs(late_s);
            verdicts.push(j.receive_time(received, sent, ms(600)));
        }
        let believed = verdicts.iter().filter(|v| v.is_some()).count() as u64;
        let refused = verdicts.iter().filter(|v| v.is_none()).count() as u64;
        assert_eq!((believed, refused), (4, 3));
        let counts = j.counts();
        assert_eq!(
            (counts.receive_times, counts.rejected_receive_times),
            (believed, refused)
        );
    }

    #[test]
    fn queueing_times_larger_than_the_rtt_are_rejected() {
        let mut j = PeerReportJudge::default();
        assert_eq!(j.forward_queueing(ms(50), ms(600)), Some(ms(50)));
        assert_eq!(j.forward_queueing(ms(900), ms(600)), None);
        assert_eq!(j.backward_queueing(Some(ms(20)), ms(600)), Some(ms(20)));
        assert_eq!(j.backward_queueing(Some(ms(20)), ms(10)), None);
        assert_eq!(j.backward_queueing(None, ms(600)), None);
        let counts = j.counts();
        assert_eq!(
            (counts.forward_queueing, counts.rejected_forward_queueing),
            (1, 1)
        );
        assert_eq!(
            (counts.backward_queueing, counts.rejected_backward_queueing),
            (1, 1)
        );
    }
}

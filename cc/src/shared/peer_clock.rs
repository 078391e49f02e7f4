//! The peer's clock as the host believes it: every receive time the peer
//! reports (draft-ietf-quic-receive-ts) is judged here once, with the one
//! plausibility rule ([`crate::shared::peer_reports::judge`]), and handed to
//! the controllers with the clock it is on. No estimator judges a stamp
//! again or decides on its own that the peer's clock stepped.
//!
//! # What is judged
//!
//! With `x = R − S` (the peer's receive time minus our send time: the
//! one-way delay plus the clocks' offset), a stamp is believed when
//!
//! - against the last stamp believed, its change of one-way delay passes
//!   the rule (no stamp after its ACK came back, none before its packet
//!   left), and
//! - it lies no more than its own round trip above the smallest `x`
//!   believed on the same clock (the floor: a real sample of the fixed
//!   delay plus the offset, so no honest stamp is further above it). The
//!   floor may be old, so this bound is widened by the drift two quartz
//!   clocks may have accumulated since: [`DRIFT_PPM`] of our time between
//!   the two packets' sending.
//!
//! The second check stops a peer that raises its stamps by a little less
//! than a round trip at a time; the first catches a step down, which the
//! floor (the smallest value) cannot see.
//!
//! # One policy for a clock that steps
//!
//! What the estimators that read the stamps need (the forward queue and
//! RoVegas's queueing estimate keep a minimum of `x` for a whole transfer;
//! VenoDB's relative delay and the packet pairs compare consecutive
//! stamps):
//!
//! - one wild stamp (a bug, a lie) must not cost them their minimum: it is
//!   refused (handed over as no stamp) and nothing else changes;
//! - a clock that really stepped, forwards or backwards, makes every stamp
//!   from then on implausible against the old clock. The estimators must
//!   start over once, on the new clock, and never compare a stamp of one
//!   clock with one of the other: a minimum carried across the step would
//!   misread every later stamp by the step (a translation by the measured
//!   step would misread them by the one-way delay's change across it, up to
//!   a round trip, for the rest of the transfer);
//! - a clock that drifts is not a step: within [`DRIFT_PPM`] every stamp is
//!   believed on the same clock, and the estimators that keep a minimum
//!   follow the drift themselves (RoVegas's rising floor).
//!
//! So: implausible stamps are refused; when [`STEP_CONFIRMED_AFTER`] of
//! them in a row agree with each other (each plausible against the one
//! before it: one clock, however wrong) and came in more than one ACK, the
//! last of them is believed as the first stamp of a new clock, and every
//! stamp from then on carries the new clock's number
//! ([`crate::events::AckedPacket::clock_epoch`]). An estimator that sees the
//! number change starts over. A run of implausible stamps that disagree (a
//! peer sending noise) never becomes a clock, nor does one frame of wrong
//! stamps however many it holds (a peer's bug, a frame spoilt on the way).
//! A real step costs at least `STEP_CONFIRMED_AFTER − 1` stamps and at most
//! the rest of the ACK in which it was first seen, a few packets of one
//! round trip.
//!
//! What follows from it: a clock drifting faster than [`DRIFT_PPM`] is
//! taken to step once its stamps are a round trip above the floor, and
//! starts a new clock there; a peer whose stamps creep up by less than a
//! round trip each agrees with itself and gets a new clock every
//! [`STEP_CONFIRMED_AFTER`] stamps, so the estimators keep starting over
//! (it hides its queueing, the most any receiver that lies can do), but no
//! stamp further above its clock's floor than its round trip is believed.

use std::time::{Duration, Instant};

use crate::shared::peer_reports::GRANULARITY;

/// The how-many-th implausible stamp in a row, all agreeing with each other,
/// is believed as the first of a new clock.
pub const STEP_CONFIRMED_AFTER: u32 = 8;

/// The rate difference between the two clocks tolerated, in parts per
/// million: twice the 50 ppm two ordinary quartz oscillators may differ by.
pub const DRIFT_PPM: i64 = 100;

/// [`GRANULARITY`] in nanoseconds.
const GRANULARITY_NANOS: i64 = GRANULARITY.as_nanos() as i64;

/// One stamp on mixed clocks, in signed nanoseconds: every value of a
/// stamp believed fits an `i64` (292 years), and the judge's arithmetic on
/// them is then a few instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    /// `x = R − S`, `S` counted from the origin.
    delay: i64,
    /// `S`, since the origin.
    sent: i64,
    /// The packet's RTT plus the granularity: how far above an earlier
    /// one-way delay this one may lie.
    reach: i64,
}

impl Stamp {
    /// The rule ([`crate::shared::peer_reports::judge`], here on `i64`)
    /// for the change from `earlier` to `self`: at most `self`'s round
    /// trip up, at most `earlier`'s down.
    fn possible_after(&self, earlier: &Stamp) -> bool {
        let change = self.delay.saturating_sub(earlier.delay);
        change <= self.reach && change >= earlier.reach.saturating_neg()
    }
}

/// `later − earlier` in signed nanoseconds, saturated beyond 292 years:
/// the send times the judge compares, as [`PeerClock::judge_sent_at`]
/// takes them.
pub fn signed_nanos_since(later: Instant, earlier: Instant) -> i64 {
    match later.checked_duration_since(earlier) {
        Some(d) => nanos(d).unwrap_or(i64::MAX),
        None => nanos(earlier.saturating_duration_since(later)).map_or(i64::MIN, |n| -n),
    }
}

/// Signed nanoseconds of `d`, `None` beyond 292 years.
#[inline]
pub fn nanos(d: Duration) -> Option<i64> {
    // The same value as `d.as_nanos()` narrowed, without its 128-bit
    // arithmetic (three of these per stamp, on every ACK).
    i64::try_from(d.as_secs())
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(i64::from(d.subsec_nanos()))
}

/// What the judge counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockCounts {
    pub believed: u64,
    pub refused: u64,
    /// Steps of the peer's clock believed.
    pub steps: u64,
}

/// The stamps believed on the current clock: the last one, and the one with
/// the smallest `x` (the floor). Both exist from the first stamp believed
/// on, so one `Option` holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Believed {
    last: Stamp,
    floor: Stamp,
}

/// A run of implausible stamps that agree with each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    /// Its last stamp.
    last: Stamp,
    len: u32,
    /// The ACK frame that brought its first stamp.
    since: u64,
}

/// The judge of the peer's receive times; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct PeerClock {
    /// Our side's zero for `S`: the first stamped packet's send time.
    origin: Option<Instant>,
    /// `None` until a stamp is believed.
    believed: Option<Believed>,
    /// `None` unless the last stamp judged was refused as implausible (the
    /// one place a believed stamp writes: a single tag).
    run: Option<Run>,
    /// ACK frames begun ([`PeerClock::on_ack_frame`]).
    frames: u64,
    epoch: u32,
    counts: ClockCounts,
}

impl PeerClock {
    /// The number of the clock the peer's stamps are on now.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    pub fn counts(&self) -> ClockCounts {
        self.counts
    }

    /// An ACK frame's stamps follow.
    #[inline]
    pub fn on_ack_frame(&mut self) {
        self.frames = self.frames.wrapping_add(1);
    }

    /// Judges the receive time `receive_time` (peer's clock) of a packet we
    /// sent at `time_sent` whose round trip took `rtt`, reported by the
    /// current ACK frame. Returns the number of the clock it is on if
    /// believed, `None` if refused. Call in ascending packet-number order.
    #[inline]
    pub fn judge(
        &mut self,
        receive_time: Duration,
        time_sent: Instant,
        rtt: Duration,
    ) -> Option<u32> {
        let origin = *self.origin.get_or_insert(time_sent);
        self.judge_sent_at(receive_time, signed_nanos_since(time_sent, origin), rtt)
    }

    /// [`PeerClock::judge`] for a caller that keeps its send times as
    /// `sent_nanos`, signed nanoseconds since an instant of its own choosing
    /// (the same one for every call on this clock, and not mixed with
    /// [`PeerClock::judge`]): the verdicts are the same, since the rule only
    /// compares differences of send times. The host does, so that judging a
    /// stamp takes no subtraction of two `Instant`s (a call into the
    /// standard library of some 55 instructions, per stamp).
    #[inline]
    pub fn judge_sent_at(
        &mut self,
        receive_time: Duration,
        sent_nanos: i64,
        rtt: Duration,
    ) -> Option<u32> {
        // A receive time or a round trip beyond 292 years is no clock's.
        let (Some(received), Some(rtt)) = (nanos(receive_time), nanos(rtt)) else {
            self.counts.refused += 1;
            return None;
        };
        let sent = sent_nanos;
        let stamp = Stamp {
            delay: received.saturating_sub(sent),
            sent,
            reach: rtt.saturating_add(GRANULARITY_NANOS),
        };
        // The usual case, kept short: a plausible stamp on the clock.
        if let Some(believed) = &mut self.believed {
            if plausible(&believed.last, &believed.floor, &stamp) {
                believed.last = stamp;
                if stamp.delay <= believed.floor.delay {
                    believed.floor = stamp;
                }
                self.run = None;
                self.counts.believed += 1;
                return Some(self.epoch);
            }
        } else {
            return Some(self.believe_first(stamp));
        }
        self.refused_or_stepped(stamp)
    }

    /// An implausible stamp: refused, or the first of a new clock when it
    /// ends a run that agrees with itself across more than one frame.
    #[cold]
    fn refused_or_stepped(&mut self, stamp: Stamp) -> Option<u32> {
        let run = match self.run {
            Some(run) if stamp.possible_after(&run.last) => Run {
                last: stamp,
                len: run.len + 1,
                since: run.since,
            },
            _ => Run {
                last: stamp,
                len: 1,
                since: self.frames,
            },
        };
        self.run = Some(run);
        if run.len < STEP_CONFIRMED_AFTER || run.since == self.frames {
            self.counts.refused += 1;
            return None;
        }
        // The clock stepped: this stamp is the new clock's first.
        self.epoch = self.epoch.wrapping_add(1);
        self.counts.steps += 1;
        Some(self.believe_first(stamp))
    }

    fn believe_first(&mut self, stamp: Stamp) -> u32 {
        self.believed = Some(Believed {
            last: stamp,
            floor: stamp,
        });
        self.run = None;
        self.counts.believed += 1;
        self.epoch
    }
}

/// Both checks of the module documentation.
#[inline]
fn plausible(last: &Stamp, floor: &Stamp, stamp: &Stamp) -> bool {
    if !stamp.possible_after(last) {
        return false;
    }
    // The upper half of the rule against the floor, its bound widened by
    // DRIFT_PPM of the time between the floor's sending and this one's
    // (worked out only for a stamp the plain bound does not let through).
    let above = stamp.delay.saturating_sub(floor.delay);
    if above <= stamp.reach {
        return true;
    }
    let drift = stamp.sent.saturating_sub(floor.sent).max(0) / (1_000_000 / DRIFT_PPM);
    above <= stamp.reach.saturating_add(drift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_is_as_nanos_narrowed() {
        let max = Duration::from_nanos(i64::MAX as u64);
        for d in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::new(1, 999_999_999),
            Duration::from_secs(600),
            max - Duration::from_nanos(1),
            max,
            max + Duration::from_nanos(1),
            Duration::new(u64::MAX, 999_999_999),
        ] {
            assert_eq!(nanos(d), i64::try_from(d.as_nanos()).ok(), "{d:?}");
        }
    }

    const RTT_MS: f64 = 600.0;
    const GRANULARITY_MS: f64 = 1.0;

    /// A GEO path as the test sees it: packet `n` leaves at `10 n` ms (our
    /// clock) and meets `owd(n)` ms one way and a 600 ms round trip; the
    /// peer stamps it on its clock, `peer(n, t)` ms at our time `t`.
    struct Path {
        t0: Instant,
        owd: fn(u64) -> f64,
        peer: fn(u64, f64) -> f64,
    }

    impl Path {
        fn sent_ms(n: u64) -> f64 {
            10.0 * n as f64
        }

        /// `x = R − S` of packet `n`, in ms, computed here.
        fn x(&self, n: u64) -> f64 {
            let sent = Self::sent_ms(n);
            (self.peer)(n, sent + (self.owd)(n)) - sent
        }

        /// The judge's verdicts for packets `0..count`.
        fn judge(&self, count: u64) -> (PeerClock, Vec<Option<u32>>) {
            let mut clock = PeerClock::default();
            let verdicts = (0..count)
                .map(|n| {
                    let sent = Self::sent_ms(n);
                    let received = (self.peer)(n, sent + (self.owd)(n));
                    let sent = self.t0 + Duration::from_secs_f64(sent / 1e3);
                    let rtt = Duration::from_secs_f64(RTT_MS / 1e3);
                    // Each packet acknowledged alone.
                    clock.on_ack_frame();
                    clock.judge(Duration::from_secs_f64(received / 1e3), sent, rtt)
                })
                .collect();
            (clock, verdicts)
        }
    }

    fn steady(_: u64) -> f64 {
        300.0
    }

    /// The reference: the policy of the module documentation written out
    /// on the test's own `x` values (ms, floating point).
    fn reference(path: &Path, count: u64) -> Vec<Option<u32>> {
        let mut out = Vec::new();
        let (mut last, mut floor) = (None::<(f64, f64)>, None::<(f64, f64)>);
        let (mut candidate, mut run, mut epoch) = (None::<f64>, 0, 0);
        for n in 0..count {
            let x = path.x(n);
            let sent = Path::sent_ms(n);
            let plausible = match (last, floor) {
                (Some((l, _)), Some((f, f_sent))) => {
                    let drift = (sent - f_sent) * DRIFT_PPM as f64 * 1e-6;
                    x - l <= RTT_MS + GRANULARITY_MS
                        && x - l >= -(RTT_MS + GRANULARITY_MS)
                        && x - f <= RTT_MS + GRANULARITY_MS + drift
                }
                _ => {
                    last = Some((x, sent));
                    floor = Some((x, sent));
                    out.push(Some(epoch));
                    continue;
                }
            };
            if plausible {
                candidate = None;
                run = 0;
                last = Some((x, sent));
                if floor.is_some_and(|(f, _)| x <= f) {
                    floor = Some((x, sent));
                }
                out.push(Some(epoch));
                continue;
            }
            let agrees = candidate.is_some_and(|c: f64| (x - c).abs() <= RTT_MS + GRANULARITY_MS);
            run = if agrees { run + 1 } else { 1 };
            candidate = Some(x);
            if run < STEP_CONFIRMED_AFTER {
                out.push(None);
            } else {
                epoch += 1;
                candidate = None;
                run = 0;
                last = Some((x, sent));
                floor = Some((x, sent));
                out.push(Some(epoch));
            }
        }
        out
    }

    fn check(path: &Path, count: u64) -> (PeerClock, Vec<Option<u32>>) {
        let (clock, verdicts) = path.judge(count);
        assert_eq!(verdicts, reference(path, count));
        (clock, verdicts)
    }

    #[test]
    fn an_honest_clock_far_ahead_is_believed_throughout() {
        // An hour ahead, one-way delays between 270 and 870 ms (a queue up
        // to the whole round trip).
        let path = Path {
            t0: Instant::now(),
            owd: |n| 270.0 + (n * 37 % 601) as f64,
            peer: |_, t| 3_600_000.0 + t,
        };
        let (clock, verdicts) = check(&path, 2_000);
        assert!(verdicts.iter().all(|v| *v == Some(0)));
        assert_eq!(clock.counts().refused, 0);
    }

    #[test]
    fn a_clock_that_jumps_forward_is_refused_then_believed_as_a_new_clock() {
        // From packet 100 on, the peer's clock reads 5 s more.
        let path = Path {
            t0: Instant::now(),
            owd: steady,
            peer: |n, t| t + if n >= 100 { 5_000.0 } else { 0.0 },
        };
        let (clock, verdicts) = check(&path, 200);
        let confirmed = 100 + u64::from(STEP_CONFIRMED_AFTER) - 1;
        for (n, v) in verdicts.iter().enumerate() {
            let n = n as u64;
            let want = match n {
                _ if n < 100 => Some(0),
                _ if n < confirmed => None,
                _ => Some(1),
            };
            assert_eq!(*v, want, "packet {n}");
        }
        assert_eq!(clock.counts().steps, 1);
        assert_eq!(clock.epoch(), 1);
    }

    #[test]
    fn a_clock_that_jumps_backward_is_refused_then_believed_as_a_new_clock() {
        // From packet 100 on, the peer's clock reads 2 s less.
        let path = Path {
            t0: Instant::now(),
            owd: steady,
            peer: |n, t| 10_000.0 + t - if n >= 100 { 2_000.0 } else { 0.0 },
        };
        let (clock, verdicts) = check(&path, 200);
        assert_eq!(verdicts[99], Some(0));
        assert!(verdicts[100..107].iter().all(Option::is_none));
        assert!(verdicts[107..].iter().all(|v| *v == Some(1)));
        assert_eq!(clock.counts().steps, 1);
        // A step back by less than a round trip is a delay change to the
        // rule: nothing is refused.
        let small = Path {
            t0: Instant::now(),
            owd: steady,
            peer: |n, t| 10_000.0 + t - if n >= 100 { 250.0 } else { 0.0 },
        };
        let (clock, _) = check(&small, 200);
        assert_eq!(clock.counts().refused, 0);
    }

    #[test]
    fn a_drift_within_the_tolerance_is_one_clock_and_beyond_it_steps() {
        // 80 ppm fast, one stamp every 6 minutes for 10 hours: 2.9 s of
        // drift against the floor set at the start (five round trips), one
        // clock throughout: the floor's bound widens with the time since it
        // was set.
        let mut long = PeerClock::default();
        let t0 = Instant::now();
        for hour_tenth in 0..=100u64 {
            let sent_s = hour_tenth as f64 * 360.0;
            let received = (sent_s + 0.3) * (1.0 + 80e-6);
            let sent = t0 + Duration::from_secs_f64(sent_s);
            long.on_ack_frame();
            let verdict = long.judge(
                Duration::from_secs_f64(received),
                sent,
                Duration::from_millis(600),
            );
            assert_eq!(verdict, Some(0), "at {sent_s} s");
        }
        // 1000 ppm (a broken oscillator) is not one clock: the judge steps.
        let mut broken = PeerClock::default();
        let mut steps_at = Vec::new();
        for second in 0..=3_600u64 {
            let received = (second as f64 + 0.3) * (1.0 + 1000e-6);
            let before = broken.counts().steps;
            let sent = t0 + Duration::from_secs(second);
            broken.on_ack_frame();
            broken.judge(
                Duration::from_secs_f64(received),
                sent,
                Duration::from_millis(600),
            );
            if broken.counts().steps > before {
                steps_at.push(second);
            }
        }
        // x − floor exceeds 600 + 1 ms + 100 ppm of the time since the
        // floor at (1000 − 100) ppm × t > 601 ms: t > 668 s; confirmed
        // seven seconds (packets) later, and again 675 s after each step.
        let first = (601.0_f64 / ((1000.0 - 100.0) * 1e-6) / 1e3).ceil() as u64;
        assert_eq!(steps_at.first(), Some(&(first + 7)));
        assert!(
            steps_at.windows(2).all(|w| w[1] - w[0] == first + 7),
            "{steps_at:?}"
        );
    }

    #[test]
    fn a_lying_peer_never_makes_a_clock() {
        // Every fourth stamp is an hour off, alternately ahead and behind;
        // the others are honest.
        let path = Path {
            t0: Instant::now(),
            owd: steady,
            peer: |n, t| match n % 8 {
                3 => 36_000_000.0 + t + 3_600_000.0,
                7 => 36_000_000.0 + t - 3_600_000.0,
                _ => 36_000_000.0 + t,
            },
        };
        let (clock, verdicts) = check(&path, 800);
        for (n, v) in verdicts.iter().enumerate() {
            let wild = n % 8 == 3 || n % 8 == 7;
            assert_eq!(v.is_none(), wild, "packet {n}");
        }
        assert_eq!(clock.counts().steps, 0);
        // Only noise, each stamp far from the one before: no two agree.
        let noise = Path {
            t0: Instant::now(),
            owd: steady,
            peer: |n, t| t + (n * 7_919 % 1_000) as f64 * 1_000.0,
        };
        let (clock, _) = check(&noise, 500);
        assert_eq!(clock.counts().steps, 0);
        // Stamps that creep up by 0.9 of a round trip each: every change
        // is possible, their sum is not.
        let creeping = Path {
            t0: Instant::now(),
            owd: steady,
            peer: |n, t| t + 540.0 * n as f64,
        };
        let (_, verdicts) = check(&creeping, 100);
        assert_eq!(verdicts[1], Some(0));
        assert_eq!(verdicts[2], None, "1080 ms above the floor");
        // They agree with each other, so every eighth is taken for a new
        // clock (the estimators start over: queueing hidden, the most a
        // peer can do), but no stamp is believed further above the first
        // of its clock than a round trip.
        let mut first_of_clock = std::collections::HashMap::new();
        for (n, v) in verdicts.iter().enumerate() {
            if let Some(clock) = v {
                let first = *first_of_clock.entry(*clock).or_insert(creeping.x(n as u64));
                assert!(
                    creeping.x(n as u64) - first <= RTT_MS + GRANULARITY_MS,
                    "packet {n}"
                );
            }
        }
        assert!(first_of_clock.len() > 1);
    }

    #[test]
    fn one_frame_of_wrong_stamps_is_no_clock() {
        let t0 = Instant::now();
        let rtt = Duration::from_millis(600);
        let stamp = |n: u64, offset_ms: u64| {
            let sent = t0 + Duration::from_millis(n);
            (Duration::from_millis(300 + n + offset_ms), sent)
        };
        for frames in [1, 2] {
            let mut clock = PeerClock::default();
            let (r, sent) = stamp(0, 0);
            clock.on_ack_frame();
            assert_eq!(clock.judge(r, sent, rtt), Some(0));
            // 16 stamps 10 s late that agree with each other, in one ACK
            // or in two.
            clock.on_ack_frame();
            let verdicts: Vec<Option<u32>> = (1..=16)
                .map(|n| {
                    if frames == 2 && n == 9 {
                        clock.on_ack_frame();
                    }
                    let (r, sent) = stamp(n, 10_000);
                    clock.judge(r, sent, rtt)
                })
                .collect();
            if frames == 1 {
                assert!(verdicts.iter().all(Option::is_none));
                assert_eq!(clock.counts().steps, 0);
            } else {
                // The first stamp of the second frame is the eighth or
                // later in the run: a new clock.
                assert!(verdicts[..8].iter().all(Option::is_none));
                assert!(verdicts[8..].iter().all(|v| *v == Some(1)));
            }
        }
    }
}

//! Relative delay: how much the one-way delay changed from one packet to the
//! next, written once for VenoDB (001_8629d53d83e82638.txt, section 3.1.A)
//! and for RoVegas's estimate of queueing times from receive timestamps
//! (002_7f811f836ada7a25.txt).
//!
//! VenoDB's eq. (1) and (2):
//!
//! ```text
//! D_n  = (R_n − R_{n−1}) − (S_n − S_{n−1}) = (R_n − S_n) − (R_{n−1} − S_{n−1})
//! ΔD_n = D_n − D_{n−1}
//! ```
//!
//! where `S` is when the sender sent a packet (sender's clock) and `R` when
//! the receiver received it (receiver's clock). `R_n − S_n` is the one-way
//! delay plus the unknown offset between the two clocks; the offset cancels in
//! `D_n`, which is therefore the change of the true one-way delay between the
//! two packets: positive while a queue on the path grows, negative while it
//! drains.
//!
//! # Sources of `R`
//!
//! - [`ReceiveStamp::Peer`]: the receiver's own time stamp, from the ACK
//!   receive-timestamps extension (draft-ietf-quic-receive-ts, our
//!   `AckedPacket::receive_time`). This is the paper's method.
//! - [`ReceiveStamp::Local`]: a local stand-in when the peer reports no
//!   stamps: the arrival of the ACK, minus the ACK delay the peer reported.
//!   Then `D` also contains the change of the return path's delay, which is
//!   what the paper (section 2.2, item ii) warns about for ACK-spacing
//!   estimates, but it is the best a sender can do alone.
//!
//! The two are on different clocks, so a pair never mixes them: a change of
//! source starts afresh.
//!
//! # Robustness
//!
//! Every stamp is either turned into a `D`, or becomes the new reference
//! without producing one (*anchored*), or is dropped (*ignored*).
//!
//! - **Order.** Pairs follow the sending order: `(time_sent, pkt_num)` on the
//!   sender's own clock, which the peer cannot influence. A packet sent before
//!   the reference (acknowledged out of order, e.g. a hole filled late) is
//!   ignored; so is the reference packet itself reported again (a duplicate).
//!   Packets in between that were lost or not stamped are simply skipped:
//!   `D` between packets `n−2` and `n` is still the change of the one-way
//!   delay, as `D` telescopes.
//! - **The peer's stamps** were judged by the host before they got here
//!   ([`crate::shared::peer_clock`]): an implausible one never arrives, and
//!   one on a clock the host believes the peer stepped to (a newer
//!   `clock_epoch`) becomes the new reference without a `D`, so a step
//!   costs one sample; one of an older clock is ignored.
//! - **The local stand-in** is ours to check, with the same rule for
//!   one-way delays, [`crate::shared::peer_reports::judge`]:
//!   `−RTT_{n−1} − slack ≤ D_n ≤ RTT_n + slack`, `slack` the stamps'
//!   granularity; a `D` outside (an ACK delay that was not what the peer
//!   said) cannot be a delay change, and a stand-in that goes backwards
//!   (`R_n < R_{n−1}`: the ACK delays of two ACKs disagree) gives none. Such
//!   a stand-in becomes the new reference.
//! - Arithmetic is done in `i128` nanoseconds and results saturate to `i64`,
//!   so no stamp overflows anything.
//!
//! Clock drift between the hosts (tens of ppm) changes `D` by nanoseconds per
//! millisecond between the two packets and is ignored.
//!
//! # Cost
//!
//! `D` is wanted for every stamped packet, and a subtraction of two
//! `Instant`s costs tens of instructions. So the estimator keeps its times
//! as integer nanoseconds on one clock of its own ([`SenderClock`]): each
//! instant is converted once, and every interval after that is an integer
//! subtraction. A caller that has the times in nanoseconds on a clock of its
//! own (VenoDB: each packet's `AckedPacket::sent_nanos`, on the host's send
//! clock) offers them as a [`TimedPacket`]; only differences of times are
//! taken, and integer nanoseconds are exact, so `D` is the same either way.

use std::time::{Duration, Instant};

use crate::shared::peer_reports::{self, DelaySample};

/// The default slack of the plausibility bounds: the rule's own.
pub const DEFAULT_SLACK: Duration = peer_reports::GRANULARITY;

/// Where a receive time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiveStamp {
    /// The peer's receive time, on the peer's clock relative to its basis,
    /// as the host believed it, and the number of the peer's clock it is on
    /// ([`crate::events::AckedPacket::clock_epoch`]).
    Peer {
        received: Duration,
        clock_epoch: u32,
    },
    /// A local stand-in on the sender's clock (ACK arrival minus ACK delay).
    Local(Instant),
}

/// Which source a controller's delay signal came from, as reported in qlog
/// (`delay_source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelaySource {
    /// Peer receive timestamps (draft-ietf-quic-receive-ts).
    ReceiveTimestamps,
    /// Queueing times reported by AQT-enabled routers (RoVegas).
    Aqt,
    /// ACK arrival spacing, when the peer reports no receive timestamps.
    AckArrival,
    /// No delay signal yet.
    None,
}

impl DelaySource {
    pub fn as_str(self) -> &'static str {
        match self {
            DelaySource::ReceiveTimestamps => "receive_timestamps",
            DelaySource::Aqt => "aqt",
            DelaySource::AckArrival => "ack_arrival",
            DelaySource::None => "none",
        }
    }
}

/// One packet with its send time and receive time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StampedPacket {
    pub pkt_num: u64,
    /// `S_n`, on the sender's clock.
    pub time_sent: Instant,
    /// `R_n`.
    pub received: ReceiveStamp,
    /// The packet's RTT as the sender measured it; bounds the plausible `D`.
    pub rtt: Duration,
}

/// A [`StampedPacket`] whose times are integer nanoseconds on one clock:
/// the estimator's ([`RelativeDelayEstimator::nanos_of`]) or the caller's
/// (VenoDB: the host's send clock), the same for every packet offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedPacket {
    pub pkt_num: u64,
    /// `S_n`.
    pub sent_nanos: i128,
    /// `R_n`.
    pub received: TimedStamp,
    /// The packet's RTT as the sender measured it; bounds the plausible `D`.
    pub rtt: Duration,
}

/// A [`ReceiveStamp`] with a local stand-in in nanoseconds on the
/// estimator's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimedStamp {
    /// As [`ReceiveStamp::Peer`].
    Peer {
        received: Duration,
        clock_epoch: u32,
    },
    /// As [`ReceiveStamp::Local`].
    Local(i128),
}

/// The sender's clock in integer nanoseconds: signed nanoseconds since the
/// first instant it was asked about. Converting an instant costs one
/// subtraction of instants; every interval between converted instants is an
/// exact integer subtraction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderClock {
    origin: Option<Instant>,
}

impl SenderClock {
    /// `t` in nanoseconds since the clock's origin (negative before it).
    pub fn nanos(&mut self, t: Instant) -> i128 {
        match self.origin {
            Some(origin) => peer_reports::nanos_since(t, origin),
            None => {
                self.origin = Some(t);
                0
            }
        }
    }
}

/// Which clock a reference's `R` is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StampClock {
    /// The peer's, with the host's number of it.
    Peer(u32),
    /// Ours (a local stand-in).
    Local,
}

/// The packet that the next `D` is taken against, its times in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Reference {
    pkt_num: u64,
    sent_nanos: i128,
    received_nanos: i128,
    clock: StampClock,
    rtt: Duration,
}

/// One relative delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelativeDelaySample {
    pub pkt_num: u64,
    /// `D_n`, nanoseconds.
    pub delay_nanos: i64,
    /// `ΔD_n = D_n − D_{n−1}`, nanoseconds; `None` when packet `n−1` gave no
    /// `D` (it was the first stamp, or anchored after a rejection).
    pub delay_change_nanos: Option<i64>,
}

/// The most recent `D` as kept: `ΔD` is taken when asked for
/// ([`RelativeDelayEstimator::latest`]), not on every stamp (VenoDB, on
/// every stamped packet, reads only `D`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LatestDelay {
    pkt_num: u64,
    delay_nanos: i64,
    /// `D_{n−1}`, when packet `n−1` gave one.
    previous_nanos: Option<i64>,
}

impl LatestDelay {
    #[inline(always)]
    fn sample(&self) -> RelativeDelaySample {
        RelativeDelaySample {
            pkt_num: self.pkt_num,
            delay_nanos: self.delay_nanos,
            delay_change_nanos: self
                .previous_nanos
                .map(|previous| saturate(i128::from(self.delay_nanos) - i128::from(previous))),
        }
    }
}

/// Why a stamp became the reference without giving a `D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorReason {
    /// Nothing to pair with yet.
    First,
    /// The previous stamp came from the other clock.
    SourceChanged,
    /// `R_n < R_{n−1}`.
    Backwards,
    /// `D_n` outside `−RTT_{n−1} ..= RTT_n` (plus slack).
    Implausible,
    /// The peer's clock stepped (the host's verdict).
    ClockStepped,
}

/// Why a stamp was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IgnoreReason {
    /// The reference packet reported again.
    Duplicate,
    /// Sent before the reference.
    OutOfOrder,
    /// On a peer clock older than the reference's.
    OldClock,
}

/// What became of one stamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Delay(RelativeDelaySample),
    Anchored(AnchorReason),
    Ignored(IgnoreReason),
}

/// Turns stamped packets into `D_n` and `ΔD_n`; see the module documentation.
#[derive(Clone, Debug)]
pub struct RelativeDelayEstimator {
    slack: Duration,
    clock: SenderClock,
    reference: Option<Reference>,
    /// `D` of the reference packet, if it gave one.
    reference_delay: Option<i64>,
    latest: Option<LatestDelay>,
    delays: u64,
    rejected: u64,
}

impl Default for RelativeDelayEstimator {
    fn default() -> Self {
        Self::new(DEFAULT_SLACK)
    }
}

impl RelativeDelayEstimator {
    /// An estimator whose plausibility bounds are widened by `slack`.
    pub fn new(slack: Duration) -> Self {
        RelativeDelayEstimator {
            slack,
            clock: SenderClock::default(),
            reference: None,
            reference_delay: None,
            latest: None,
            delays: 0,
            rejected: 0,
        }
    }

    /// `t` on the estimator's clock (see [`SenderClock`]), for
    /// [`TimedPacket`]s.
    pub fn nanos_of(&mut self, t: Instant) -> i128 {
        self.clock.nanos(t)
    }

    /// Offers one stamped packet.
    pub fn on_packet(&mut self, packet: StampedPacket) -> Outcome {
        let sent_nanos = self.nanos_of(packet.time_sent);
        let received = match packet.received {
            ReceiveStamp::Peer {
                received,
                clock_epoch,
            } => TimedStamp::Peer {
                received,
                clock_epoch,
            },
            ReceiveStamp::Local(arrived) => TimedStamp::Local(self.nanos_of(arrived)),
        };
        self.on_timed_packet(TimedPacket {
            pkt_num: packet.pkt_num,
            sent_nanos,
            received,
            rtt: packet.rtt,
        })
    }

    /// Offers one stamped packet whose times are on the estimator's clock.
    pub fn on_timed_packet(&mut self, packet: TimedPacket) -> Outcome {
        let (received_nanos, clock) = match packet.received {
            TimedStamp::Peer {
                received,
                clock_epoch,
            } => (peer_reports::nanos(received), StampClock::Peer(clock_epoch)),
            TimedStamp::Local(arrived) => (arrived, StampClock::Local),
        };
        let stamp = Reference {
            pkt_num: packet.pkt_num,
            sent_nanos: packet.sent_nanos,
            received_nanos,
            clock,
            rtt: packet.rtt,
        };
        let Some(reference) = self.reference else {
            return self.anchor(stamp, AnchorReason::First);
        };
        let order =
            (stamp.sent_nanos, stamp.pkt_num).cmp(&(reference.sent_nanos, reference.pkt_num));
        match order {
            std::cmp::Ordering::Equal => return self.ignore(IgnoreReason::Duplicate),
            std::cmp::Ordering::Less => return self.ignore(IgnoreReason::OutOfOrder),
            std::cmp::Ordering::Greater => {}
        }
        let send_interval = stamp.sent_nanos - reference.sent_nanos;
        let receive_interval = stamp.received_nanos - reference.received_nanos;
        let delay = match (stamp.clock, reference.clock) {
            (StampClock::Peer(clock_epoch), StampClock::Peer(reference_clock)) => {
                match clock_epoch.cmp(&reference_clock) {
                    std::cmp::Ordering::Greater => {
                        return self.anchor(stamp, AnchorReason::ClockStepped)
                    }
                    std::cmp::Ordering::Less => return self.ignore(IgnoreReason::OldClock),
                    std::cmp::Ordering::Equal => {}
                }
                receive_interval - send_interval
            }
            (StampClock::Local, StampClock::Local) => {
                if receive_interval < 0 {
                    return self.anchor(stamp, AnchorReason::Backwards);
                }
                let delay = receive_interval - send_interval;
                let verdict = peer_reports::judge(
                    DelaySample {
                        delay_nanos: 0,
                        rtt: reference.rtt,
                    },
                    DelaySample {
                        delay_nanos: delay,
                        rtt: stamp.rtt,
                    },
                    self.slack,
                );
                if !verdict.is_plausible() {
                    return self.anchor(stamp, AnchorReason::Implausible);
                }
                delay
            }
            _ => return self.anchor(stamp, AnchorReason::SourceChanged),
        };
        Outcome::Delay(self.take_delay(stamp, delay))
    }

    /// [`Self::on_timed_packet`] for a peer's stamp, returning its `D_n` if
    /// it gave one. The common case, a packet sent after the reference on
    /// the reference's clock, is worked out here, inline: the general path
    /// would find the same `D_n` after building and matching its
    /// [`Outcome`]. Everything else takes the general path.
    #[inline(always)]
    pub fn on_peer_stamp(
        &mut self,
        pkt_num: u64,
        sent_nanos: i128,
        received: Duration,
        clock_epoch: u32,
        rtt: Duration,
    ) -> Option<i64> {
        if let Some(reference) = self.reference {
            if reference.clock == StampClock::Peer(clock_epoch)
                && (sent_nanos, pkt_num) > (reference.sent_nanos, reference.pkt_num)
            {
                let stamp = Reference {
                    pkt_num,
                    sent_nanos,
                    received_nanos: peer_reports::nanos(received),
                    clock: StampClock::Peer(clock_epoch),
                    rtt,
                };
                let delay = (stamp.received_nanos - reference.received_nanos)
                    - (sent_nanos - reference.sent_nanos);
                return Some(self.take_delay(stamp, delay).delay_nanos);
            }
        }
        let outcome = self.on_timed_packet(TimedPacket {
            pkt_num,
            sent_nanos,
            received: TimedStamp::Peer {
                received,
                clock_epoch,
            },
            rtt,
        });
        match outcome {
            Outcome::Delay(sample) => Some(sample.delay_nanos),
            Outcome::Anchored(_) | Outcome::Ignored(_) => None,
        }
    }

    /// `stamp` gave the delay `delay` (`D_n` before saturation) against the
    /// reference, and becomes the reference.
    #[inline(always)]
    fn take_delay(&mut self, stamp: Reference, delay: i128) -> RelativeDelaySample {
        let delay_nanos = saturate(delay);
        let latest = LatestDelay {
            pkt_num: stamp.pkt_num,
            delay_nanos,
            previous_nanos: self.reference_delay,
        };
        self.reference = Some(stamp);
        self.reference_delay = Some(delay_nanos);
        self.latest = Some(latest);
        self.delays = self.delays.saturating_add(1);
        latest.sample()
    }

    fn anchor(&mut self, stamp: Reference, reason: AnchorReason) -> Outcome {
        if reason != AnchorReason::First {
            self.rejected = self.rejected.saturating_add(1);
        }
        self.reference = Some(stamp);
        self.reference_delay = None;
        Outcome::Anchored(reason)
    }

    fn ignore(&mut self, reason: IgnoreReason) -> Outcome {
        self.rejected = self.rejected.saturating_add(1);
        Outcome::Ignored(reason)
    }

    /// The most recent `D` (and `ΔD`).
    pub fn latest(&self) -> Option<RelativeDelaySample> {
        self.latest.map(|latest| latest.sample())
    }

    /// How many stamps gave a `D`.
    pub fn delays(&self) -> u64 {
        self.delays
    }

    /// How many stamps were rejected: ignored, or anchored for any reason
    /// but being the first.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// Forgets the reference; the next stamp starts afresh. Counters stay.
    pub fn reset(&mut self) {
        self.reference = None;
        self.reference_delay = None;
    }
}

/// The sum of the `D`s over an interval (e.g. one RTT). Because `D`
/// telescopes, the sum is the change of the one-way delay from the packet
/// before the interval's first sample to its last one: eq. (1) for two
/// packets further apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelaySum {
    sum_nanos: i64,
    samples: u64,
}

impl DelaySum {
    pub fn add(&mut self, sample: &RelativeDelaySample) {
        self.add_nanos(sample.delay_nanos);
    }

    /// Adds one `D`, in nanoseconds.
    pub fn add_nanos(&mut self, delay_nanos: i64) {
        self.sum_nanos = self.sum_nanos.saturating_add(delay_nanos);
        self.samples = self.samples.saturating_add(1);
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The sum so far; `None` without samples.
    pub fn sum_nanos(&self) -> Option<i64> {
        (self.samples > 0).then_some(self.sum_nanos)
    }

    /// The sum so far, and starts a new interval.
    pub fn take(&mut self) -> Option<i64> {
        let sum = self.sum_nanos();
        *self = Self::default();
        sum
    }
}

/// Nanoseconds as milliseconds, for qlog.
pub fn nanos_to_millis(nanos: i64) -> f64 {
    nanos as f64 / 1e6
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::AckedPacket;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    struct Peer {
        t0: Instant,
        estimator: RelativeDelayEstimator,
        /// The host's number of the peer's clock.
        clock_epoch: u32,
        /// Stamp the ACK's arrival (minus ACK delay) instead.
        local: bool,
    }

    impl Peer {
        fn new() -> Self {
            Peer {
                t0: Instant::now(),
                estimator: RelativeDelayEstimator::default(),
                clock_epoch: 0,
                local: false,
            }
        }

        /// Packet `n` sent at `sent_ms`, received at `received_ms` on the
        /// peer's clock (or, local, on ours), with an RTT of 600 ms.
        fn offer(&mut self, n: u64, sent_ms: u64, received_ms: u64) -> Outcome {
            let received = if self.local {
                ReceiveStamp::Local(self.t0 + ms(received_ms))
            } else {
                ReceiveStamp::Peer {
                    received: ms(received_ms),
                    clock_epoch: self.clock_epoch,
                }
            };
            self.estimator.on_packet(StampedPacket {
                pkt_num: n,
                time_sent: self.t0 + ms(sent_ms),
                received,
                rtt: ms(600),
            })
        }
    }

    fn delay(outcome: Outcome) -> (i64, Option<i64>) {
        match outcome {
            Outcome::Delay(s) => (s.delay_nanos, s.delay_change_nanos),
            other => panic!("expected a delay, got {other:?}"),
        }
    }

    const MS: i64 = 1_000_000;

    #[test]
    fn delay_is_receive_interval_minus_send_interval() {
        let mut p = Peer::new();
        // Peer clock 5 s ahead; one-way delays 300, 302, 301, 301 ms.
        assert_eq!(p.offer(0, 0, 5_300), Outcome::Anchored(AnchorReason::First));
        assert_eq!(delay(p.offer(1, 10, 5_312)), (2 * MS, None));
        assert_eq!(delay(p.offer(2, 20, 5_321)), (-MS, Some(-3 * MS)));
        assert_eq!(delay(p.offer(3, 30, 5_331)), (0, Some(MS)));
        assert_eq!(p.estimator.delays(), 3);
        assert_eq!(p.estimator.rejected(), 0);
        assert_eq!(p.estimator.latest().unwrap().pkt_num, 3);
    }

    #[test]
    fn out_of_order_and_duplicates_are_ignored() {
        let mut p = Peer::new();
        p.offer(0, 0, 300);
        p.offer(2, 20, 320);
        assert_eq!(
            p.offer(1, 10, 311),
            Outcome::Ignored(IgnoreReason::OutOfOrder)
        );
        assert_eq!(
            p.offer(2, 20, 999),
            Outcome::Ignored(IgnoreReason::Duplicate)
        );
        // The reference is still packet 2: D of packet 3 is against it, and
        // ΔD still chains.
        assert_eq!(delay(p.offer(3, 30, 331)), (MS, Some(MS)));
        assert_eq!(p.estimator.rejected(), 2);
    }

    #[test]
    fn equal_stamps_of_different_packets_are_data() {
        let mut p = Peer::new();
        p.offer(0, 0, 300);
        // Received within the same stamp unit: D = -(S_n - S_{n-1}).
        assert_eq!(delay(p.offer(1, 1, 300)), (-MS, None));
    }

    #[test]
    fn a_new_peer_clock_reanchors_and_an_old_one_is_ignored() {
        let mut p = Peer::new();
        p.offer(0, 0, 10_300);
        p.offer(1, 10, 10_310);
        // The host believed the peer's clock stepped back by 10 s.
        p.clock_epoch = 1;
        assert_eq!(
            p.offer(2, 20, 320),
            Outcome::Anchored(AnchorReason::ClockStepped)
        );
        assert_eq!(delay(p.offer(3, 30, 331)), (MS, None));
        // A stamp of the old clock, still in flight.
        p.clock_epoch = 0;
        assert_eq!(
            p.offer(4, 40, 10_341),
            Outcome::Ignored(IgnoreReason::OldClock)
        );
        assert_eq!(p.estimator.rejected(), 2);
        // Without the host's number the step is a 10 s delay change.
        let mut blind = Peer::new();
        blind.offer(0, 0, 10_300);
        blind.offer(1, 10, 10_310);
        assert_eq!(
            delay(blind.offer(2, 20, 320)),
            (-10_000 * MS, Some(-10_000 * MS))
        );
    }

    #[test]
    fn a_peer_stamp_before_the_reference_is_a_delay_change() {
        // Packet 1 overtook packet 0 on the path: on one clock that is a
        // real change of one-way delay, D = (305 - 310) - (10 - 0).
        let mut p = Peer::new();
        p.offer(0, 0, 310);
        assert_eq!(delay(p.offer(1, 10, 305)), (-15 * MS, None));
        assert_eq!(p.estimator.rejected(), 0);
    }

    #[test]
    fn a_local_stand_in_that_goes_backwards_reanchors() {
        let mut p = Peer::new();
        p.local = true;
        p.offer(0, 0, 300);
        p.offer(1, 10, 310);
        assert_eq!(
            p.offer(2, 20, 305),
            Outcome::Anchored(AnchorReason::Backwards)
        );
        assert_eq!(delay(p.offer(3, 30, 316)), (MS, None));
    }

    #[test]
    fn local_plausibility_bounds_are_the_rtts_plus_slack() {
        let mut p = Peer::new();
        p.local = true;
        p.offer(0, 0, 1_000);
        // D = +601 ms: one-way delay cannot grow by more than the 600 ms RTT
        // (+1 ms slack) ...
        assert_eq!(delay(p.offer(1, 10, 1_611)), (601 * MS, None));
        // ... but +602 ms it cannot.
        assert_eq!(
            p.offer(2, 20, 2_223),
            Outcome::Anchored(AnchorReason::Implausible)
        );
        // Nor shrink by more than the reference's RTT: sent 1000 ms later,
        // received 398 ms later, D = -602 ms.
        p.offer(3, 30, 2_243);
        assert_eq!(
            p.offer(4, 1_030, 2_641),
            Outcome::Anchored(AnchorReason::Implausible)
        );
        // The peer's stamps are the host's to judge: the same +602 ms is
        // taken as it comes.
        let mut peer = Peer::new();
        peer.offer(0, 0, 1_000);
        assert_eq!(delay(peer.offer(1, 10, 1_612)), (602 * MS, None));
    }

    #[test]
    fn sources_never_mix() {
        let t0 = Instant::now();
        let mut e = RelativeDelayEstimator::default();
        let local = |n: u64, sent: u64, arrived: u64| StampedPacket {
            pkt_num: n,
            time_sent: t0 + ms(sent),
            received: ReceiveStamp::Local(t0 + ms(arrived)),
            rtt: ms(600),
        };
        e.on_packet(local(0, 0, 600));
        assert_eq!(delay(e.on_packet(local(1, 10, 612))), (2 * MS, None));
        let peer = StampedPacket {
            received: ReceiveStamp::Peer {
                received: ms(5),
                clock_epoch: 0,
            },
            ..local(2, 20, 0)
        };
        assert_eq!(
            e.on_packet(peer),
            Outcome::Anchored(AnchorReason::SourceChanged)
        );
        e.reset();
        assert_eq!(
            e.on_packet(local(3, 30, 640)),
            Outcome::Anchored(AnchorReason::First)
        );
    }

    #[test]
    fn huge_stamps_do_not_overflow() {
        let t0 = Instant::now();
        let mut e = RelativeDelayEstimator::new(Duration::MAX);
        let packet = |n: u64, received: Duration| StampedPacket {
            pkt_num: n,
            time_sent: t0,
            received: ReceiveStamp::Peer {
                received,
                clock_epoch: 0,
            },
            rtt: Duration::MAX,
        };
        e.on_packet(packet(0, Duration::ZERO));
        let (d, _) = delay(e.on_packet(packet(1, Duration::MAX)));
        assert_eq!(d, i64::MAX);
        let (d, dd) = delay(e.on_packet(packet(2, Duration::MAX)));
        assert_eq!((d, dd), (0, Some(-i64::MAX)));
    }

    #[test]
    fn timed_packets_give_the_delays_of_instants() {
        // The same stamps offered as instants and as nanoseconds, the send
        // times the packets' own (`AckedPacket::sent_nanos`): the same
        // outcomes, rejections included.
        let t0 = Instant::now() + ms(10_000);
        let mut by_instants = RelativeDelayEstimator::default();
        let mut by_nanos = RelativeDelayEstimator::default();
        // And through the inline path for peers' stamps.
        let mut by_peer_stamps = RelativeDelayEstimator::default();
        // (packet, sent, acked, received on the peer's clock, clock), ms;
        // packet 3 is reported out of order, packet 5 on a new clock, and
        // packet 6 is "acknowledged" before it was sent (RTT zero).
        let packets = [
            (0, 0, 600, 5_300, 0),
            (1, 10, 612, 5_312, 0),
            (2, 20, 630, 5_319, 0),
            (3, 15, 630, 5_316, 0),
            (4, 30, 640, 5_333, 0),
            (5, 40, 650, 340, 1),
            (6, 700, 650, 345, 1),
            (7, 60, 700, 362, 1),
        ];
        for (n, sent, acked, received, clock_epoch) in packets {
            let mut packet = AckedPacket::new(n, 1200, t0 + ms(sent), t0 + ms(acked));
            packet.receive_time = Some(ms(received));
            packet.clock_epoch = clock_epoch;
            let stamp = ReceiveStamp::Peer {
                received: ms(received),
                clock_epoch,
            };
            let expected = by_instants.on_packet(StampedPacket {
                pkt_num: n,
                time_sent: packet.time_sent,
                received: stamp,
                rtt: packet.rtt,
            });
            // On the packets' own clock, whose origin is not the
            // estimator's: only differences count.
            let sent_nanos = i128::from(packet.sent_nanos);
            let got = by_nanos.on_timed_packet(TimedPacket {
                pkt_num: n,
                sent_nanos,
                received: TimedStamp::Peer {
                    received: ms(received),
                    clock_epoch,
                },
                rtt: packet.rtt,
            });
            assert_eq!(got, expected, "packet {n}");
            let delay =
                by_peer_stamps.on_peer_stamp(n, sent_nanos, ms(received), clock_epoch, packet.rtt);
            let expected_delay = match expected {
                Outcome::Delay(sample) => Some(sample.delay_nanos),
                Outcome::Anchored(_) | Outcome::Ignored(_) => None,
            };
            assert_eq!(delay, expected_delay, "packet {n}");
            assert_eq!(by_peer_stamps.latest(), by_instants.latest(), "packet {n}");
        }
        assert_eq!(by_nanos.delays(), by_instants.delays());
        assert_eq!(by_nanos.rejected(), by_instants.rejected());
        assert_eq!(by_peer_stamps.delays(), by_instants.delays());
        assert_eq!(by_peer_stamps.rejected(), by_instants.rejected());
        // The rest of the state: the next stamp gives the same outcome.
        let next = StampedPacket {
            pkt_num: 8,
            time_sent: t0 + ms(70),
            received: ReceiveStamp::Peer {
                received: ms(375),
                clock_epoch: 1,
            },
            rtt: ms(600),
        };
        assert_eq!(by_peer_stamps.on_packet(next), by_instants.on_packet(next));
    }

    #[test]
    fn the_sender_clock_counts_from_its_first_instant() {
        let t0 = Instant::now() + ms(10_000);
        let mut clock = SenderClock::default();
        assert_eq!(clock.nanos(t0), 0);
        assert_eq!(clock.nanos(t0 + ms(3)), 3 * i128::from(MS));
        assert_eq!(clock.nanos(t0 - ms(2)), -2 * i128::from(MS));
    }

    #[test]
    fn delay_sum_telescopes() {
        let mut p = Peer::new();
        let mut sum = DelaySum::default();
        assert_eq!(sum.sum_nanos(), None);
        // One-way delays 300, 305, 303, 310: the sum is 310 - 300.
        for (n, (s, r)) in [(0, 300), (10, 315), (20, 323), (30, 340)]
            .into_iter()
            .enumerate()
        {
            if let Outcome::Delay(d) = p.offer(n as u64, s, r) {
                sum.add(&d);
            }
        }
        assert_eq!(sum.samples(), 3);
        assert_eq!(sum.take(), Some(10 * MS));
        assert_eq!(sum.take(), None);
        assert_eq!(nanos_to_millis(2_500_000), 2.5);
    }
}

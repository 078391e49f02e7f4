//! TCP VenoDB, 001_8629d53d83e82638.txt, section 3: Veno whose additive
//! increase and multiplicative decrease also look at the relative delay `D`
//! (3.1.A), its change `ΔD`, and a Westwood-style bandwidth estimate
//! `bwe(t)` against `bwe(t − RTT)` (3.1.B), with NewReno's partial-ACK
//! recovery (3.2).
//!
//! VenoDB is Veno's skeleton ([`Veno`] in `veno.rs`: N = Diff × BaseRTT,
//! Reno's slow start, recovery epochs) with its own [`VenoRules`]; where
//! section 3.1 says VenoDB does "the same way with Veno", these rules call
//! Veno's ([`ClassicVeno`]). The pseudo-code of 3.1, as implemented (the
//! increases are per RTT, in packets; each number is a parameter):
//!
//! ```text
//! // The refined AI, once per RTT in congestion avoidance
//! if N >= beta:                                        // close to saturation
//!     if D < 0 or bwe(t) > bwe(t−RTT):                  // State 1: decreasing
//!         cwnd += 1                                     //   ai_decreasing
//!     elif D = 0 or bwe(t) = bwe(t−RTT):                // State 2: stable
//!         if ΔD < 0:  cwnd += 1                         //   ai_stable_dd_negative
//!         else:       cwnd += 1/2                       //   increase_at_beta (Veno's)
//!     elif D > 0 or bwe(t) < bwe(t−RTT):                // State 3: increasing
//!         if ΔD <= 0: cwnd += 1/4                       //   ai_increasing_dd_nonpositive
//!         else:       cwnd += 0                         //   ai_increasing_dd_positive
//! else:                                                 // not yet saturated
//!     if ΔD < 0:      cwnd += 2                         //   ai_unsaturated_dd_negative
//!     else:           cwnd += 1                         //   increase_below_beta (Veno's)
//!
//! // The refined MD, on a loss (of a new recovery epoch)
//! if N >= beta:                                         // congestion loss
//!     if D >= 0:      cwnd = cwnd × 1/2                 //   congestion_loss_factor
//!     else:           cwnd = cwnd × 4/5                 //   congestion_d_negative_loss_factor
//! else:               cwnd = cwnd × 4/5                 // random loss: random_loss_factor
//! ```
//!
//! # The signals
//!
//! - **D and ΔD** come from the shared [`RelativeDelayEstimator`]:
//!   `D_n = (R_n − R_{n−1}) − (S_n − S_{n−1})` per packet, with `R` the
//!   peer's receive time of the packet from the ACK receive-timestamps
//!   extension (`AckedPacket::receive_time`, peer clock) and `S` our send
//!   time. Implausible stamps are refused by the host before they get
//!   here, and a step of the peer's clock is the host's verdict
//!   (`shared/peer_clock.rs`): the estimator starts a new pair on the new
//!   clock; out of order and duplicated stamps are ignored there. None
//!   reaches the decisions.
//! - **Without receive timestamps** (the extension not negotiated, or the
//!   peer stopped reporting) VenoDB falls back to ACK arrival spacing: one
//!   sample per ACK, for the largest packet it newly acknowledges, with
//!   `R = time the ACK arrived − the ACK delay the peer reported` (the ACK
//!   delay is capped at the packet's RTT). That `D` also contains the change
//!   of the return path's delay — exactly the weakness of ACK-spacing
//!   estimates the paper's section 2.2 (item ii) points out — but it is the
//!   best a sender can do alone. Once a stamp has been seen, ACKs without
//!   stamps contribute nothing (the two clocks must not mix); a whole round
//!   without any stamp returns to ACK arrival spacing. qlog's
//!   `delay_source` says which is in use: `receive_timestamps`,
//!   `ack_arrival`, or `none` before any sample. Its counts
//!   `delay_samples` and `delay_samples_rejected` are reported as they
//!   stood at the end of the last round, the grain of `D` they make up, so
//!   that qlog does not write an event on every ACK for them.
//! - **bwe(t)**: per-ACK bandwidth samples (bytes newly acknowledged over the
//!   time since the previous ACK; ACKs arriving at the same instant are
//!   merged) smoothed by an EWMA, from the shared `bandwidth_filter`.
//! - **Time** is integer nanoseconds on the host's send clock: each packet
//!   comes with its send time on it (`AckedPacket::sent_nanos`), the ACK's
//!   arrival is a packet's send time plus its RTT sample, and the bandwidth
//!   sample's interval is an integer subtraction. Subtracting two
//!   `Instant`s costs tens of instructions; integers are exact, so every
//!   `D` and every sample is the same (see "Cost" in
//!   `shared/relative_delay.rs`).
//!
//! # Partial-ACK recovery (3.2) in QUIC
//!
//! NewReno's point is to cut the window once when several packets of one
//! window are lost: on the first loss it remembers the highest sequence
//! number sent ("recover"), treats ACKs below it as partial ACKs that
//! retransmit the next hole without another reduction, and leaves recovery
//! at the first ACK that covers "recover". In QUIC:
//!
//! - Detection and retransmission belong to the stack (RFC 9002): every lost
//!   packet is declared lost by packet or time threshold, and its frames are
//!   sent again in new packets. There is nothing for the controller to
//!   retransmit, and no fast-recovery window inflation is needed, because
//!   lost packets leave bytes in flight when they are declared lost.
//! - "recover" is the instant of the reduction: a loss whose largest lost
//!   packet was sent before it belongs to the same epoch and is ignored
//!   (however many congestion events report it); ACKs of packets sent before
//!   it are the partial ACKs — the window stays fixed and rounds are not
//!   evaluated; the ACK of a packet sent after it is the full ACK that ends
//!   recovery. This is the shared
//!   [`RecoveryEpoch`](crate::shared::recovery_epoch::RecoveryEpoch) that
//!   Veno keeps.
//! - QUIC never reuses a packet number: a retransmission travels in a new
//!   packet with its own send time. So there is no retransmission
//!   ambiguity — every ACK names the packet it acknowledges, RTT samples and
//!   receive stamps are never attributed to the wrong transmission, and a
//!   retransmission that is itself lost is a packet sent after the reduction,
//!   which rightly opens a new epoch (where NewReno would need a timeout).
//!
//! # Where the paper is ambiguous
//!
//! - **Overlapping states.** The three states of the AI are written as
//!   separate `if`s whose conditions overlap (e.g. `D > 0` while
//!   `bwe(t) > bwe(t−RTT)` satisfies both State 1 and State 3). The text
//!   calls them three states, so exactly one applies: the first that
//!   matches, in the order written (State 1, 2, 3), as an `if … else if`
//!   chain. Running the `if`s one after the other would instead add the
//!   increases of every matching state.
//! - **N = beta** is "close to saturation": the pseudo-code tests `N >= β`
//!   and `N < β` (the prose says `N > β`).
//! - **Per packet or per RTT.** D and ΔD are defined per packet, the
//!   increases per RTT ("add 1 every 4 RTTs"). Decisions are made once per
//!   RTT, at the end of Veno's round, from D = the sum of the round's `D_n`.
//!   The sum telescopes: it is eq. (1) for the last packets of two
//!   consecutive rounds, i.e. how much the one-way delay grew over the RTT
//!   (a single pair's `D_n` would be mostly noise). ΔD is eq. (2) for
//!   consecutive rounds: this round's D minus the previous round's.
//!   The D used by the MD on a loss is that of the last completed round.
//! - **bwe(t − RTT)** is the estimate at the end of the previous round, one
//!   RTT earlier; bwe(t) the estimate at the end of this one.
//! - **Equality** (`D = 0`, `ΔD = 0`, `bwe(t) = bwe(t−RTT)`) is exact by
//!   default, as written. Measured values are rarely exactly equal, so two
//!   tolerances can be set: `|D|` (and `|ΔD|`) up to `delay_tolerance_ms`
//!   count as 0, and bandwidths that differ by at most `bwe_tolerance` of the
//!   larger count as equal.
//! - **Missing signals.** A term whose signal is unknown is false: no D in
//!   the round (no stamp accepted, or none yet) makes `D < 0`, `D = 0`,
//!   `D > 0` false; no bwe(t − RTT) yet makes the bandwidth terms false. An
//!   unknown ΔD (no D in this or the previous round) counts as 0. If no state
//!   matches at all, VenoDB does what Veno does at `N >= β` (1/2 packet per
//!   RTT) and reports the state `unknown`. On a loss, an unknown D takes the
//!   `D >= 0` branch (halve), as Veno would.
//! - **bwe's filter.** The paper says "an exponentially weighted moving
//!   average" after Westwood without a weight; 7/8 on the old value
//!   (Westwood+'s) is the default of `bwe_history_weight`.
//! - **Everything 3.1 does not refine** is Veno's, with Veno's choices (see
//!   `veno.rs`): Reno's slow start, N per round, losses before any N are
//!   congestion losses (halve), persistent congestion resets to the minimum
//!   window with ssthresh = cwnd / 2, fractional increases accumulate as
//!   credit, application-limited ACKs do not grow the window. "After 3
//!   dup-ACKs" is any loss QUIC's loss detection declares.
//! - **Pacing** is Veno's (see "Pacing profile" in `veno.rs`): 001 does not
//!   pace, and `profile=paper` does not; by default (`profile=quic`) VenoDB
//!   paces as RFC 9002 section 7.7 asks, slow start at 2 × cwnd / RTT, the
//!   rest at 1.25 × cwnd / RTT.

use std::cmp::Ordering;
use std::time::Instant;

use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{CongestionController, Internals, KeyedGeneration};
use crate::events::{AckEvent, AckedPacket};
use crate::params::{Key, ParamInfo, ParamKind, ParamValues};
use crate::shared::bandwidth_filter::{Ewma, PerAckSampler, WESTWOOD_PLUS_HISTORY_WEIGHT};
use crate::shared::pacing_profile::UNPACED_PAPER_PARAMS;
use crate::shared::peer_clock;
use crate::shared::relative_delay::{
    nanos_to_millis, DelaySource, DelaySum, Outcome, RelativeDelayEstimator, TimedPacket,
    TimedStamp,
};
use crate::veno::{
    Backlog, ClassicVeno, LossClass, LossReaction, Veno, VenoKeys, VenoRules, BETA,
    CONGESTION_LOSS_FACTOR, INCREASE_AT_BETA, INCREASE_BELOW_BETA, INCREASE_RANGE, MIN_RTT_SAMPLES,
    RANDOM_LOSS_FACTOR, TIMEOUT_SSTHRESH_FACTOR,
};

pub const NAME: &str = "venodb";

/// Parameters of `venodb`, with the paper's defaults: Veno's, then those of
/// section 3.1.
pub const PARAMS: &[ParamInfo] = &[
    BETA,
    ParamInfo {
        name: "ai_decreasing",
        default: 1.0,
        kind: INCREASE_RANGE,
        description: "packets per RTT at N >= beta in State 1, decreasing congestion \
                      (D < 0 or bwe(t) > bwe(t-RTT)): 1",
    },
    ParamInfo {
        name: "ai_stable_dd_negative",
        default: 1.0,
        kind: INCREASE_RANGE,
        description: "packets per RTT at N >= beta in State 2, stable (D = 0 or bwe equal), \
                      when dD < 0: 1",
    },
    ParamInfo {
        description: "packets per RTT at N >= beta in State 2, stable, when dD >= 0: 1/2 \
                      (Veno's every other RTT)",
        ..INCREASE_AT_BETA
    },
    ParamInfo {
        name: "ai_increasing_dd_nonpositive",
        default: 0.25,
        kind: INCREASE_RANGE,
        description: "packets per RTT at N >= beta in State 3, increasing congestion \
                      (D > 0 or bwe(t) < bwe(t-RTT)), when dD <= 0: 1/4",
    },
    ParamInfo {
        name: "ai_increasing_dd_positive",
        default: 0.0,
        kind: INCREASE_RANGE,
        description: "packets per RTT at N >= beta in State 3 when dD > 0: 0 (no change)",
    },
    ParamInfo {
        name: "ai_unsaturated_dd_negative",
        default: 2.0,
        kind: INCREASE_RANGE,
        description: "packets per RTT at N < beta when dD < 0: 2",
    },
    ParamInfo {
        description: "packets per RTT at N < beta when dD >= 0: 1 (as Veno)",
        ..INCREASE_BELOW_BETA
    },
    ParamInfo {
        description: "cwnd and ssthresh become cwnd x this on a loss at N >= beta with D >= 0 \
                      (congestion increasing: 1/2)",
        ..CONGESTION_LOSS_FACTOR
    },
    ParamInfo {
        name: "congestion_d_negative_loss_factor",
        default: 0.8,
        kind: ParamKind::Number { min: 0.0, max: 1.0 },
        description: "cwnd and ssthresh become cwnd x this on a loss at N >= beta with D < 0 \
                      (congestion decreasing: 4/5)",
    },
    ParamInfo {
        description: "cwnd and ssthresh become cwnd x this on a loss at N < beta \
                      (random loss, as Veno: 4/5)",
        ..RANDOM_LOSS_FACTOR
    },
    ParamInfo {
        name: "bwe_history_weight",
        default: WESTWOOD_PLUS_HISTORY_WEIGHT,
        kind: ParamKind::Number {
            min: 0.0,
            max: 0.999,
        },
        description: "weight of the old value in bwe's EWMA (paper gives none; Westwood+'s 7/8)",
    },
    ParamInfo {
        name: "delay_tolerance_ms",
        default: 0.0,
        kind: ParamKind::Number {
            min: 0.0,
            max: 10_000.0,
        },
        description: "|D| and |dD| up to this many ms count as 0 (paper: exact comparison)",
    },
    ParamInfo {
        name: "bwe_tolerance",
        default: 0.0,
        kind: ParamKind::Number { min: 0.0, max: 1.0 },
        description: "bwe(t) and bwe(t-RTT) differing by at most this fraction of the larger \
                      count as equal (paper: exact comparison)",
    },
    TIMEOUT_SSTHRESH_FACTOR,
    MIN_RTT_SAMPLES,
    // Veno's pacing profile: 001 does not pace.
    UNPACED_PAPER_PARAMS[0],
    UNPACED_PAPER_PARAMS[1],
    UNPACED_PAPER_PARAMS[2],
    UNPACED_PAPER_PARAMS[3],
];

pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: NAME,
    description: "TCP VenoDB: Veno whose AIMD also uses the relative delay D and dD from \
                  receive timestamps (else ACK spacing) and bwe(t) vs bwe(t-RTT); \
                  one reduction per recovery epoch",
    params: PARAMS,
    validate,
    build,
};

const VENO_KEYS: VenoKeys = VenoKeys::in_table(PARAMS);
const AI_DECREASING: Key<f64> = Key::in_table(PARAMS, "ai_decreasing");
const AI_STABLE_DD_NEGATIVE: Key<f64> = Key::in_table(PARAMS, "ai_stable_dd_negative");
const AI_INCREASING_DD_NONPOSITIVE: Key<f64> =
    Key::in_table(PARAMS, "ai_increasing_dd_nonpositive");
const AI_INCREASING_DD_POSITIVE: Key<f64> = Key::in_table(PARAMS, "ai_increasing_dd_positive");
const AI_UNSATURATED_DD_NEGATIVE: Key<f64> = Key::in_table(PARAMS, "ai_unsaturated_dd_negative");
const CONGESTION_D_NEGATIVE_LOSS_FACTOR: Key<f64> =
    Key::in_table(PARAMS, "congestion_d_negative_loss_factor");
const BWE_HISTORY_WEIGHT: Key<f64> = Key::in_table(PARAMS, "bwe_history_weight");
const DELAY_TOLERANCE_MS: Key<f64> = Key::in_table(PARAMS, "delay_tolerance_ms");
const BWE_TOLERANCE: Key<f64> = Key::in_table(PARAMS, "bwe_tolerance");

fn validate(params: &ParamValues) -> Result<(), String> {
    VENO_KEYS.validate(params)
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(venodb(params, window))
}

/// TCP VenoDB: Veno's skeleton with [`VenoDbRules`].
pub type VenoDb = Veno<VenoDbRules>;

/// VenoDB with `params` from [`PARAMS`].
pub fn venodb(params: &ParamValues, window: WindowConfig) -> VenoDb {
    Veno::with_rules(VenoDbRules::from_params(params), params, &VENO_KEYS, window)
}

/// The network state of section 3.1.C/D.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkState {
    /// No round evaluated yet, or no signal to tell the states apart.
    Unknown,
    /// N < beta: bandwidth not yet saturated.
    Unsaturated,
    /// State 1.
    DecreasingCongestion,
    /// State 2.
    Stable,
    /// State 3.
    IncreasingCongestion,
}

impl NetworkState {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkState::Unknown => "unknown",
            NetworkState::Unsaturated => "unsaturated",
            NetworkState::DecreasingCongestion => "decreasing_congestion",
            NetworkState::Stable => "stable",
            NetworkState::IncreasingCongestion => "increasing_congestion",
        }
    }
}

/// The numbers of section 3.1 that are not Veno's.
#[derive(Clone, Copy, Debug)]
struct Config {
    ai_decreasing: f64,
    ai_stable_dd_negative: f64,
    ai_increasing_dd_nonpositive: f64,
    ai_increasing_dd_positive: f64,
    ai_unsaturated_dd_negative: f64,
    congestion_d_negative_loss_factor: f64,
    delay_tolerance_nanos: i64,
    bwe_tolerance: f64,
}

/// VenoDB's decisions and the signals they need; see the module
/// documentation.
#[derive(Debug)]
pub struct VenoDbRules {
    /// Veno's decisions, for the branches that are Veno's.
    veno: ClassicVeno,
    config: Config,
    estimator: RelativeDelayEstimator,
    /// Sum of the `D_n` of the round in progress.
    round_delay: DelaySum,
    /// D and ΔD of the last completed round.
    delay_nanos: Option<i64>,
    delay_change_nanos: Option<i64>,
    /// Receive timestamps have been seen and not been missing for a round.
    prefer_stamps: bool,
    stamps_this_round: bool,
    source: DelaySource,
    sampler: PerAckSampler,
    bwe: Ewma,
    /// bwe(t) and bwe(t − RTT) at the end of the last round.
    bwe_now: Option<f64>,
    bwe_rtt_ago: Option<f64>,
    state: NetworkState,
    /// The estimator's samples and rejections at the end of the last round,
    /// for qlog.
    delay_counts_at_round_end: DelayCounts,
    internals_generation: KeyedGeneration<InternalsKey>,
}

/// How many delay samples the estimator took and how many stamps it
/// rejected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct DelayCounts {
    delays: u64,
    rejected: u64,
}

/// Everything VenoDB's own qlog fields are made of.
#[derive(Clone, Copy, Debug, PartialEq)]
struct InternalsKey {
    source: DelaySource,
    delay_nanos: Option<i64>,
    delay_change_nanos: Option<i64>,
    bwe_now: Option<f64>,
    bwe_rtt_ago: Option<f64>,
    state: NetworkState,
    delay_counts: DelayCounts,
}

impl VenoDbRules {
    /// From parameters of [`PARAMS`].
    pub fn from_params(params: &ParamValues) -> Self {
        let tolerance_nanos = (params.value(DELAY_TOLERANCE_MS) * 1e6).round();
        VenoDbRules {
            veno: ClassicVeno::from_params(params, &VENO_KEYS),
            config: Config {
                ai_decreasing: params.value(AI_DECREASING),
                ai_stable_dd_negative: params.value(AI_STABLE_DD_NEGATIVE),
                ai_increasing_dd_nonpositive: params.value(AI_INCREASING_DD_NONPOSITIVE),
                ai_increasing_dd_positive: params.value(AI_INCREASING_DD_POSITIVE),
                ai_unsaturated_dd_negative: params.value(AI_UNSATURATED_DD_NEGATIVE),
                congestion_d_negative_loss_factor: params.value(CONGESTION_D_NEGATIVE_LOSS_FACTOR),
                // Parameter range keeps this far inside i64.
                delay_tolerance_nanos: tolerance_nanos as i64,
                bwe_tolerance: params.value(BWE_TOLERANCE),
            },
            estimator: RelativeDelayEstimator::default(),
            round_delay: DelaySum::default(),
            delay_nanos: None,
            delay_change_nanos: None,
            prefer_stamps: false,
            stamps_this_round: false,
            source: DelaySource::None,
            sampler: PerAckSampler::default(),
            bwe: Ewma::new(params.value(BWE_HISTORY_WEIGHT)),
            bwe_now: None,
            bwe_rtt_ago: None,
            state: NetworkState::Unknown,
            delay_counts_at_round_end: DelayCounts::default(),
            internals_generation: KeyedGeneration::default(),
        }
    }

    /// D of the last completed round, nanoseconds.
    pub fn relative_delay_nanos(&self) -> Option<i64> {
        self.delay_nanos
    }

    /// ΔD of the last completed round, nanoseconds.
    pub fn relative_delay_change_nanos(&self) -> Option<i64> {
        self.delay_change_nanos
    }

    /// bwe(t) and bwe(t − RTT) at the end of the last round, bytes per second.
    pub fn bandwidth_estimates(&self) -> (Option<f64>, Option<f64>) {
        (self.bwe_now, self.bwe_rtt_ago)
    }

    pub fn network_state(&self) -> NetworkState {
        self.state
    }

    pub fn delay_source(&self) -> DelaySource {
        self.source
    }

    pub fn estimator(&self) -> &RelativeDelayEstimator {
        &self.estimator
    }

    /// Offers `packet`, received at `received` (on the clock of its
    /// `sent_nanos`), to the estimator.
    fn feed(&mut self, packet: &AckedPacket, received: TimedStamp) {
        let outcome = self.estimator.on_timed_packet(TimedPacket {
            pkt_num: packet.pkt_num,
            sent_nanos: i128::from(packet.sent_nanos),
            received,
            rtt: packet.rtt,
        });
        if let Outcome::Delay(sample) = outcome {
            self.round_delay.add(&sample);
        }
    }

    /// `D` from ACK arrival spacing, for a peer that sends no receive
    /// times: the largest packet newly acknowledged, "received" when the
    /// ACK left the peer. Out of line: with receive times (the common case
    /// with our client) it is never run, and inlined it would cost every
    /// ACK the registers it needs.
    #[inline(never)]
    fn observe_ack_arrival(&mut self, ack: &AckEvent<'_>) {
        if let Some(packet) = ack.acked.iter().max_by_key(|p| p.pkt_num) {
            // Held no longer than the packet's RTT, so the ACK left the
            // peer no earlier than the packet was sent.
            let held = peer_clock::nanos(ack.ack_delay.min(packet.rtt)).unwrap_or(i64::MAX);
            let left_peer = packet.acked_nanos().saturating_sub(held);
            let received = TimedStamp::Local(i128::from(left_peer));
            self.source = DelaySource::AckArrival;
            self.feed(packet, received);
        }
    }

    /// The sign of a delay, with the tolerance; `None` if unknown.
    fn delay_sign(&self, nanos: Option<i64>) -> Option<Ordering> {
        let nanos = nanos?;
        Some(
            if nanos.unsigned_abs() <= self.config.delay_tolerance_nanos.unsigned_abs() {
                Ordering::Equal
            } else {
                nanos.cmp(&0)
            },
        )
    }

    /// bwe(t) compared with bwe(t − RTT), with the tolerance.
    fn bwe_trend(&self) -> Option<Ordering> {
        let (now, before) = (self.bwe_now?, self.bwe_rtt_ago?);
        if (now - before).abs() <= self.config.bwe_tolerance * now.max(before) {
            return Some(Ordering::Equal);
        }
        now.partial_cmp(&before)
    }

    /// The refined AI of section 3.1 for one round.
    fn additive_increase(&self, backlog: Backlog) -> (NetworkState, f64) {
        let c = &self.config;
        // An unknown ΔD counts as 0.
        let dd = self
            .delay_sign(self.delay_change_nanos)
            .unwrap_or(Ordering::Equal);
        if !backlog.saturated() {
            // The network is not yet saturated.
            let increase = if dd == Ordering::Less {
                c.ai_unsaturated_dd_negative
            } else {
                self.veno.increase_below_beta
            };
            return (NetworkState::Unsaturated, increase);
        }
        // The network is close to saturation.
        let d = self.delay_sign(self.delay_nanos);
        let bwe = self.bwe_trend();
        if d == Some(Ordering::Less) || bwe == Some(Ordering::Greater) {
            (NetworkState::DecreasingCongestion, c.ai_decreasing)
        } else if d == Some(Ordering::Equal) || bwe == Some(Ordering::Equal) {
            let increase = if dd == Ordering::Less {
                c.ai_stable_dd_negative
            } else {
                self.veno.increase_at_beta
            };
            (NetworkState::Stable, increase)
        } else if d == Some(Ordering::Greater) || bwe == Some(Ordering::Less) {
            let increase = if dd == Ordering::Greater {
                c.ai_increasing_dd_positive
            } else {
                c.ai_increasing_dd_nonpositive
            };
            (NetworkState::IncreasingCongestion, increase)
        } else {
            // Neither D nor bwe(t − RTT) known: Veno's rule at N >= beta.
            (NetworkState::Unknown, self.veno.increase(backlog))
        }
    }
}

impl VenoRules for VenoDbRules {
    fn name(&self) -> &'static str {
        NAME
    }

    fn initial_increase(&self) -> f64 {
        self.veno.increase_below_beta
    }

    fn observe_ack(&mut self, ack: &AckEvent<'_>) {
        // Times in integer nanoseconds on the clock of the packets'
        // `sent_nanos` (the host's): the ACK's arrival, for the bandwidth
        // sample's interval, and every send time below, without a
        // subtraction of instants. The skeleton hands over no empty ACK.
        let Some(now_nanos) = ack.now_nanos() else {
            return;
        };
        if let Some(rate) = self.sampler.on_ack_rate(now_nanos, ack.summary.acked_bytes) {
            self.bwe.update_usable(rate);
        }

        let mut stamped = false;
        for packet in ack.acked {
            if let Some(received) = packet.receive_time {
                stamped = true;
                let delay = self.estimator.on_peer_stamp(
                    packet.pkt_num,
                    i128::from(packet.sent_nanos),
                    received,
                    packet.clock_epoch,
                    packet.rtt,
                );
                if let Some(delay) = delay {
                    self.round_delay.add_nanos(delay);
                }
            }
        }
        if stamped {
            self.prefer_stamps = true;
            self.stamps_this_round = true;
            self.source = DelaySource::ReceiveTimestamps;
        } else if !self.prefer_stamps {
            self.observe_ack_arrival(ack);
        }
    }

    fn on_round_end(&mut self, _now: Instant, backlog: Option<Backlog>) -> Option<f64> {
        // Eq. (1) over the round and eq. (2) between consecutive rounds.
        let delay = self.round_delay.take();
        self.delay_change_nanos = delay
            .zip(self.delay_nanos)
            .map(|(now, before)| now.saturating_sub(before));
        self.delay_nanos = delay;
        // A whole round without stamps: the peer no longer sends them.
        if self.prefer_stamps && !self.stamps_this_round {
            self.prefer_stamps = false;
        }
        self.stamps_this_round = false;
        self.bwe_rtt_ago = self.bwe_now;
        self.bwe_now = self.bwe.value();
        self.delay_counts_at_round_end = DelayCounts {
            delays: self.estimator.delays(),
            rejected: self.estimator.rejected(),
        };

        let backlog = backlog?;
        let (state, increase) = self.additive_increase(backlog);
        self.state = state;
        Some(increase)
    }

    fn loss_reaction(&mut self, backlog: Option<Backlog>) -> LossReaction {
        match backlog {
            Some(b)
                if b.saturated() && self.delay_sign(self.delay_nanos) == Some(Ordering::Less) =>
            {
                // Congestion loss while congestion is decreasing.
                LossReaction {
                    class: LossClass::Congestion,
                    factor: self.config.congestion_d_negative_loss_factor,
                }
            }
            // N >= beta with D >= 0 (or unknown), N < beta, or no N: Veno's.
            _ => self.veno.classify(backlog),
        }
    }

    fn internals(&self, out: &mut Internals) {
        out.text("delay_source", self.source.as_str());
        if let Some(d) = self.delay_nanos {
            out.float("relative_delay_ms", nanos_to_millis(d));
        }
        if let Some(dd) = self.delay_change_nanos {
            out.float("relative_delay_diff_ms", nanos_to_millis(dd));
        }
        if let Some(bwe) = self.bwe_now {
            out.float("bwe_bytes_per_s", bwe);
        }
        if let Some(bwe) = self.bwe_rtt_ago {
            out.float("bwe_rtt_ago_bytes_per_s", bwe);
        }
        out.text("network_state", self.state.as_str());
        out.int("delay_samples", self.delay_counts_at_round_end.delays);
        out.int(
            "delay_samples_rejected",
            self.delay_counts_at_round_end.rejected,
        );
    }

    fn internals_generation(&self) -> Option<u64> {
        Some(self.internals_generation.of(InternalsKey {
            source: self.source,
            delay_nanos: self.delay_nanos,
            delay_change_nanos: self.delay_change_nanos,
            bwe_now: self.bwe_now,
            bwe_rtt_ago: self.bwe_rtt_ago,
            state: self.state,
            delay_counts: self.delay_counts_at_round_end,
        }))
    }
}

//! TCP Vegas (Brakmo, O'Malley, Peterson), 004_039b3aff67042154.txt.
//!
//! `vegas` is the paper's algorithm. BaseRTT is the smallest RTT seen; once
//! per RTT Vegas computes Diff = (Expected − Actual) × BaseRTT in packets and
//! moves cwnd by one packet towards `alpha <= Diff <= beta` (section 3.5.2).
//! Slow start doubles the window only every other RTT and ends when Diff
//! exceeds `gamma` (section 3.5.3). Only losses of packets sent after the
//! last decrease shrink the window (section 3.3). Outside slow start, at most
//! two segments leave per SegSpacing = RTT × MaxSegment / WindowSize (section
//! 3.4), i.e. a pacing rate of twice cwnd / RTT.
//!
//! # One skeleton for the family
//!
//! This file is also the skeleton every Vegas of this crate is built on:
//! [`Vegas`] owns the window, the rounds, BaseRTT, the recovery epochs of
//! section 3.3, slow start's growth and holding rounds and its gamma exit,
//! and pacing; a [`VegasRules`] makes the decisions a member changes. The
//! paper's own rules are [`PaperVegas`]. The other members, each in its own
//! file reading like its paper: `vegas_linux.rs` (Linux's `tcp_vegas.c`),
//! `vegas_a.rs` and `vegas_l.rs` (000: the congestion-avoidance step),
//! `rovegas.rs` (002: the RTT samples and BaseRTT probing) and `vegas_w.rs`
//! (003: slow-start extension, route change, loss classification). A change
//! to the skeleton reaches every member that does not override that hook.
//!
//! The hooks, in the order an ACK meets them: [`VegasRules::observe_ack`]
//! (estimators), [`VegasRules::rtt_adjustment`] (the ACK's RTT samples),
//! [`VegasRules::on_base_rtt_sample`], then at the end of a round
//! [`VegasRules::diff`], [`VegasRules::slow_start_round`] or
//! [`VegasRules::congestion_avoidance_round`], and
//! [`VegasRules::on_round_end`] (every round, those ending in recovery
//! too), then [`VegasRules::slow_start_ack`] after slow start's growth; on
//! a loss [`VegasRules::loss_reaction`], on a spurious one
//! [`VegasRules::spurious_loss_undone`]; for the stack
//! [`VegasRules::pacing`]; for qlog [`VegasRules::internals`].
//! [`VegasRules::in_slow_start`] says which of slow start and congestion
//! avoidance the member is in. Every hook defaults to the paper's Vegas, so
//! a member overrides only what its paper changes; `vegas_sat.rs` (ours,
//! for GEO links) overrides the most.
//!
//! Vegas paces as a good QUIC sender by default (`profile=quic`: slow start
//! paced too, RFC 9002 section 7.7); `profile=paper` sends exactly as the
//! paper's TCP (see "Pacing profile" below).
//!
//! The once-per-RTT round is [`RoundClock`]'s: a round ends when a packet sent
//! after it began is acknowledged. The RTT compared with BaseRTT is the
//! parameter `round_rtt`: `distinguished` for `vegas` (section 3.5.2 divides
//! by the RTT of the one distinguished segment), `minimum` for `vegas-linux`
//! (Linux's `tcp_vegas.c` takes the round's smallest sample, filtering
//! delayed ACKs); members built on the paper's Vegas whose papers simulated
//! with ns-2 take ns-2's mean of the round. RTT samples, BaseRTT's included,
//! come only from packets of at least half the datagram size (a tiny
//! control packet's RTT reads the path short; see the round clock). Diff
//! itself is [`VegasDiff`]'s, cwnd and ssthresh are a [`Window`], and section
//! 3.3's "last decrease" is a [`RecoveryEpoch`].
//!
//! The pseudo-code, per round:
//!
//! ```text
//! if slow start:
//!     if this was a growth round:  next round holds cwnd       (3.5.3)
//!     elif Diff > gamma:           cwnd -= cwnd/8; leave slow start
//!     else:                        next round grows cwnd
//! else:
//!     if Diff < alpha:             cwnd += 1 packet             (3.5.2)
//!     elif Diff > beta:            cwnd -= 1 packet
//!     else:                        cwnd unchanged
//! ```
//!
//! and per ACK in a growth round of slow start, cwnd grows by the bytes
//! acknowledged, which doubles it over the round.
//!
//! # Where the paper is silent
//!
//! Section 3 describes mechanisms in prose; these are the choices this file
//! makes where it does not say. Each is a parameter where it is a number.
//!
//! - **Reduction on loss** (`loss_factor`, 3/4). Section 3.3 says when to
//!   decrease but not by how much. We take 3/4, the factor ns-2's Vegas
//!   (ported from USC's NetBSD Vegas) applies to a first retransmission; the
//!   paper's "decrease less often than Reno" reasoning fits a gentler cut than
//!   Reno's 1/2. ssthresh is set to the reduced window, so a loss in slow
//!   start ends slow start.
//! - **What counts as "the last decrease"** (section 3.3): loss reductions,
//!   persistent congestion and the reduction on leaving slow start. The
//!   once-per-RTT linear decrease of congestion avoidance does not: it happens
//!   every round Diff > beta, so counting it would make nearly every loss look
//!   "old" and Vegas would never react to loss. A packet sent at the very
//!   instant of the decrease counts as sent after it (the stack sends it after
//!   the controller has reacted).
//! - **Recovery.** After a decrease, while the ACKs still acknowledge packets
//!   sent before it, [`CongestionController::state`] reports `Recovery`, the
//!   window does not grow, and rounds that end are not evaluated (their RTTs
//!   describe the old window). The first ACK of a packet sent after the
//!   decrease ends recovery and restarts the round clock, as Linux restarts its
//!   Vegas round when loss recovery ends.
//! - **Persistent congestion** is TCP's retransmission timeout: ssthresh =
//!   cwnd × `timeout_ssthresh_factor` (1/2, Reno's, which Vegas kept for its
//!   coarse timeout, section 3.2), cwnd = the minimum window, slow start again.
//! - **Leaving slow start** (`ss_exit_factor`, 7/8). Section 3.5.3 only says
//!   Vegas "changes to linear increase/decrease mode" when Diff > gamma. We cut
//!   cwnd by 1/8 as ns-2's Vegas implementation does: the window that
//!   produced Diff > gamma already queues more than gamma packets. ssthresh
//!   becomes the new cwnd, and the cut counts as a decrease (above).
//! - **Which slow-start rounds are checked.** Diff is compared with gamma at
//!   the end of the rounds in which cwnd was held, which is when section 3.5.3
//!   says the comparison is valid. Round 0 is nominally a growth round, but it
//!   ends at the very first ACK, so the initial window is acknowledged in a
//!   holding round and the first doubling happens during the second RTT (ns-2's
//!   Vegas also holds at its first round boundary). With a window acknowledged
//!   per RTT, cwnd runs W, W, 2W, 2W, 4W, ...
//! - **Linear increase/decrease "during the next RTT"** is applied at once at
//!   the round boundary (as Linux does); spike suppression spreads the extra
//!   packet over the RTT anyway.
//! - **Diff for the thresholds** uses cwnd as WindowSize (the paper assumes
//!   the window equals the bytes in transit). When the sender is
//!   application-limited that assumption fails, so neither slow start nor
//!   congestion avoidance grows cwnd on application-limited ACKs or rounds
//!   (RFC 9002, section 7.8); decreases still apply. Application-limited is
//!   decided per packet when it is sent, by the host
//!   ([`crate::host::ControllerHost`]): a packet held back by cwnd or by the
//!   pacer is not application-limited; an ACK is when all its packets were,
//!   a round when all its ACKs were.
//! - **Too few samples.** `min_rtt_samples` (1 for the paper: one
//!   distinguished segment suffices) RTT samples are needed to evaluate a
//!   round; a round with fewer is skipped. `vegas-linux` gives such a round
//!   Reno's increase instead ([`RenoFallback`]) and raises ssthresh after
//!   the others ([`SsthreshFloor`]), as `tcp_vegas.c` does: two settings of
//!   the skeleton ([`Vegas::with_linux_round_ends`]), not rules, because
//!   they act on the window around the rules' decision.
//! - **Spike suppression rate.** SegSpacing = RTT × MaxSegment / WindowSize,
//!   and "only allowing twice MaxSegment bytes on each SegSpacing interval
//!   [...] so the current number of bytes in transit can catch up" (section
//!   3.4): the pacing rate is `spike_burst_packets` (2) × cwnd / RTT, with
//!   bursts of that many segments; cwnd still bounds what is in flight
//!   ([`crate::shared::pacing_profile`]). RTT is the stack's smoothed RTT
//!   (section 3.1's fine-grained estimate), BaseRTT before there is one. The
//!   paper does not pace slow start (below).
//! - **gamma** (1). Section 3.5.3 names the threshold but gives it no value;
//!   1 is Linux's `tcp_vegas.c` default (alpha 2, beta 4, gamma 1), which
//!   the paper's experiments with alpha 1, beta 3 do not contradict.
//! - **alpha and beta** (1, 3). Section 3.5.2 says "we set alpha to two and
//!   beta to four", the setting of its Table 1 runs; Table 2 runs that
//!   (Vegas-2,4) and 1, 3 (Vegas-1,3), and finds little difference. The
//!   default is Vegas-1,3, the setting Table 2 reports first;
//!   `--cc-param alpha=2 --cc-param beta=4` is section 3.5.2's (the
//!   reproduction runs Table 1 so).
//! - **Retransmission decisions** (sections 3.1 and 3.2) belong to the QUIC
//!   stack's loss detection, which already uses fine-grained per-packet
//!   timing; nothing of them is here. ns-2 halves instead of cutting by 1/4
//!   when a retransmission is itself lost; QUIC never retransmits a packet
//!   under its own number, so that case cannot be told apart and is not
//!   modelled.
//! - **Pacing profile** (`profile`, [`crate::shared::pacing_profile`]). The
//!   paper leaves slow start unpaced: each ACK releases a burst, and a
//!   doubling round queues as many packets as the window grows by. On a long
//!   path with a small buffer (GEO, 600 ms RTT, 25 packets) that overflows
//!   the buffer long before the window reaches the path's capacity, and
//!   Vegas then grows one packet per 600 ms. QUIC senders should pace
//!   everything (RFC 9002, section 7.7), so by default (`profile=quic`) slow
//!   start is paced at `slow_start_pacing_gain` (2, so that the window can
//!   double in a round) × cwnd / RTT, and a queue only forms once that rate
//!   exceeds the bottleneck, which is what Diff > gamma is meant to detect.
//!   Outside slow start both profiles pace with spike suppression (the
//!   paper's own pacing). `profile=paper` is the paper's sending exactly:
//!   slow start unpaced; the reproduction (`scripts/reproduce`) runs it.
//!   `vegas-linux` has no spike suppression (Linux has none): with
//!   `profile=quic` it paces outside slow start at RFC 9002's `pacing_gain`
//!   (1.25) × cwnd / RTT, with `profile=paper` not at all.
//! - **Zero RTTs** are ignored as samples (below clock granularity).
//! - **Window units.** cwnd is kept in bytes; Diff uses cwnd / max datagram
//!   size as WindowSize in packets, fractions included. On a change of the
//!   datagram size the window keeps its packet count.
//!
//! - **Spurious loss**: the window and ssthresh the host saved are restored,
//!   the decrease is forgotten and recovery ends.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{CcState, CongestionController, Internals, Pacing};
use crate::events::{AckEvent, AckSummary, AckedPacket, CongestionEvent, PacketSent};
use crate::params::{concat_params, Key, ParamInfo, ParamKind, ParamValues};
use crate::shared::base_rtt::BaseRttTracker;
use crate::shared::pacing_profile::{self, PacingKeys, PacingProfile, SPIKE_SUPPRESSION_PARAMS};
use crate::shared::recovery_epoch::{AckedRound, RecoveryEpoch, SentAtReduction};
use crate::shared::round_clock::{smallest_rtt_sample, CompletedRound, RoundClock, RoundRtt};
use crate::shared::vegas_diff::VegasDiff;
use crate::shared::window::Window;

pub(crate) const THRESHOLD_RANGE: ParamKind = ParamKind::Number {
    min: 0.0,
    max: 1000.0,
};
pub(crate) const FACTOR_RANGE: ParamKind = ParamKind::Number { min: 0.0, max: 1.0 };
pub(crate) const SAMPLES_RANGE: ParamKind = ParamKind::Integer { min: 1, max: 1000 };

/// The `round_rtt` parameter: which RTT of a round Diff is computed from.
pub const fn round_rtt_param(default: RoundRtt, description: &'static str) -> ParamInfo {
    ParamInfo {
        name: "round_rtt",
        default: default.index() as f64,
        kind: ParamKind::Choice(RoundRtt::WORDS),
        description,
    }
}

/// 004's own choice.
pub const ROUND_RTT_DISTINGUISHED: ParamInfo = round_rtt_param(
    RoundRtt::Distinguished,
    "the round's RTT for Diff: minimum, mean or distinguished (section 3.5.2 times one \
     distinguished segment per RTT)",
);

/// ns-2's Vegas, with which 000, 002 and 003 were simulated.
pub const ROUND_RTT_MEAN: ParamInfo = round_rtt_param(
    RoundRtt::Mean,
    "the round's RTT for Diff: minimum, mean or distinguished (mean: ns-2's Vegas, \
     which the paper's simulations ran)",
);

/// Linux's `tcp_vegas.c` (and Veno's Linux implementation).
pub const ROUND_RTT_MINIMUM: ParamInfo = round_rtt_param(
    RoundRtt::Minimum,
    "the round's RTT for Diff: minimum, mean or distinguished (minimum: Linux's \
     tcp_vegas.c, which filters delayed ACKs)",
);

/// Parameters of the paper's Vegas that every member built on it shares,
/// with the paper's defaults; `round_rtt` is not among them because members
/// take it from their own papers' simulators.
pub const PAPER_COMMON_PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "alpha",
        default: 1.0,
        kind: THRESHOLD_RANGE,
        description: "packets queued below which cwnd grows by one packet per RTT \
                      (1: Table 2's Vegas-1,3; section 3.5.2 and Table 1 use 2, Vegas-2,4)",
    },
    ParamInfo {
        name: "beta",
        default: 3.0,
        kind: THRESHOLD_RANGE,
        description: "packets queued above which cwnd shrinks by one packet per RTT \
                      (3: Table 2's Vegas-1,3; section 3.5.2 and Table 1 use 4, Vegas-2,4)",
    },
    ParamInfo {
        name: "gamma",
        default: 1.0,
        kind: THRESHOLD_RANGE,
        description: "packets queued above which slow start ends (section 3.5.3 gives no \
                      value; 1 is Linux's tcp_vegas.c default)",
    },
    ParamInfo {
        name: "ss_exit_factor",
        default: 0.875,
        kind: FACTOR_RANGE,
        description: "cwnd is multiplied by this on leaving slow start because Diff > gamma \
                      (paper silent; 7/8 as in ns-2's Vegas)",
    },
    ParamInfo {
        name: "loss_factor",
        default: 0.75,
        kind: FACTOR_RANGE,
        description: "cwnd is multiplied by this on a loss of a packet sent after the last \
                      decrease (section 3.3 gives no factor; 3/4 as in ns-2's Vegas)",
    },
    ParamInfo {
        name: "timeout_ssthresh_factor",
        default: 0.5,
        kind: FACTOR_RANGE,
        description: "on persistent congestion ssthresh = cwnd x this, cwnd = minimum window \
                      (Reno's coarse timeout, kept by Vegas)",
    },
    ParamInfo {
        name: "min_rtt_samples",
        default: 1.0,
        kind: SAMPLES_RANGE,
        description: "RTT samples a round needs before Diff is computed from it",
    },
    SPIKE_SUPPRESSION_PARAMS[0],
    SPIKE_SUPPRESSION_PARAMS[1],
    SPIKE_SUPPRESSION_PARAMS[2],
    SPIKE_SUPPRESSION_PARAMS[3],
    SPIKE_SUPPRESSION_PARAMS[4],
];

/// Parameters of `vegas`, with the paper's defaults.
pub const PAPER_PARAMS: &[ParamInfo] = &concat_params::<{ PAPER_COMMON_PARAMS.len() + 1 }>(
    PAPER_COMMON_PARAMS,
    &[ROUND_RTT_DISTINGUISHED],
);

/// Where a table keeps alpha and beta.
#[derive(Clone, Copy, Debug)]
pub struct ThresholdKeys {
    pub alpha: Key<f64>,
    pub beta: Key<f64>,
}

impl ThresholdKeys {
    pub const fn in_table(table: &[ParamInfo]) -> Self {
        ThresholdKeys {
            alpha: Key::in_table(table, "alpha"),
            beta: Key::in_table(table, "beta"),
        }
    }

    /// alpha and beta bound the queue from below and above.
    pub fn validate(&self, params: &ParamValues) -> Result<(), String> {
        let (alpha, beta) = (params.value(self.alpha), params.value(self.beta));
        if alpha <= beta {
            Ok(())
        } else {
            Err(format!(
                "alpha ({alpha}) must not exceed beta ({beta}): alpha is the lower bound \
                 of the packets to keep queued, beta the upper"
            ))
        }
    }
}

/// Where a table keeps the parameters of the skeleton ([`VegasConfig`]).
#[derive(Clone, Copy, Debug)]
pub struct VegasKeys {
    pub gamma: Key<f64>,
    /// `None`: slow start is never left by a factor (Linux), 1.
    pub ss_exit_factor: Option<Key<f64>>,
    /// `None`: one RTT sample is enough for a round.
    pub min_rtt_samples: Option<Key<u64>>,
    pub round_rtt: Key<RoundRtt>,
    pub pacing: PacingKeys,
}

impl VegasKeys {
    /// A table holding [`PAPER_COMMON_PARAMS`]' skeleton entries and a
    /// `round_rtt`.
    pub const fn paper(table: &[ParamInfo]) -> Self {
        VegasKeys {
            gamma: Key::in_table(table, "gamma"),
            ss_exit_factor: Some(Key::in_table(table, "ss_exit_factor")),
            min_rtt_samples: Some(Key::in_table(table, "min_rtt_samples")),
            round_rtt: Key::in_table(table, "round_rtt"),
            pacing: PacingKeys::spike_suppression(table),
        }
    }
}

/// Where a table keeps [`ScaledLoss`]'s factors.
#[derive(Clone, Copy, Debug)]
pub struct LossKeys {
    pub loss_factor: Key<f64>,
    pub timeout_ssthresh_factor: Key<f64>,
}

impl LossKeys {
    pub const fn in_table(table: &[ParamInfo]) -> Self {
        LossKeys {
            loss_factor: Key::in_table(table, "loss_factor"),
            timeout_ssthresh_factor: Key::in_table(table, "timeout_ssthresh_factor"),
        }
    }
}

/// Where a table keeps the paper's Vegas: the skeleton's parameters,
/// alpha/beta and the loss factors. `vegas` and `rovegas` have them all.
#[derive(Clone, Copy, Debug)]
pub struct PaperKeys {
    pub vegas: VegasKeys,
    pub thresholds: ThresholdKeys,
    pub loss: LossKeys,
}

impl PaperKeys {
    pub const fn in_table(table: &[ParamInfo]) -> Self {
        PaperKeys {
            vegas: VegasKeys::paper(table),
            thresholds: ThresholdKeys::in_table(table),
            loss: LossKeys::in_table(table),
        }
    }

    /// Vegas's checks: the thresholds, and the pacing settings
    /// ([`pacing_profile::validate`]).
    pub fn validate(&self, params: &ParamValues) -> Result<(), String> {
        self.thresholds.validate(params)?;
        pacing_profile::validate(params, self.vegas.pacing)
    }
}

/// [`PAPER_PARAMS`]' keys.
pub const PAPER_KEYS: PaperKeys = PaperKeys::in_table(PAPER_PARAMS);

fn validate(params: &ParamValues) -> Result<(), String> {
    PAPER_KEYS.validate(params)
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(Vegas::<PaperVegas>::new(params, window))
}

/// `vegas`: the paper's algorithm.
pub static VEGAS: AlgorithmInfo = AlgorithmInfo {
    name: "vegas",
    description: "TCP Vegas as in the paper: Diff once per RTT against alpha/beta (1,3), \
                  slow start growing every other RTT until Diff > gamma, spike suppression",
    params: PAPER_PARAMS,
    validate,
    build,
};

/// What the skeleton itself reads: slow start's exit, how rounds are
/// measured, and pacing.
#[derive(Clone, Copy, Debug)]
pub struct VegasConfig {
    /// Packets queued above which slow start may end (section 3.5.3).
    pub gamma: f64,
    /// cwnd × this on leaving slow start by [`SlowStartStep::ExitScaled`].
    pub ss_exit_factor: f64,
    /// RTT samples a round needs before Diff is computed from it.
    pub min_rtt_samples: u64,
    pub pacing: PacingProfile,
    /// Which RTT of a round Diff is computed from.
    pub round_rtt: RoundRtt,
}

impl VegasConfig {
    /// From the parameters `keys` locate.
    pub fn read(params: &ParamValues, keys: &VegasKeys) -> Self {
        VegasConfig {
            gamma: params.value(keys.gamma),
            ss_exit_factor: keys.ss_exit_factor.map_or(1.0, |key| params.value(key)),
            min_rtt_samples: keys.min_rtt_samples.map_or(1, |key| params.value(key)),
            pacing: PacingProfile::read(params, keys.pacing),
            round_rtt: params.value(keys.round_rtt),
        }
    }
}

/// How slow start grows cwnd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStartGrowth {
    /// Section 3.5.3: a round that doubles cwnd, then one that holds it and
    /// is compared with gamma.
    EveryOtherRound,
    /// Every ACK grows cwnd and every round is compared (Linux).
    EveryRound,
}

/// A slow-start decision, as the rules take it at a round's end
/// ([`VegasRules::slow_start_round`]) or after an ACK's growth
/// ([`VegasRules::slow_start_ack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStartStep {
    /// Stay in slow start; at a round's end, the next round grows.
    Continue,
    /// cwnd = this many bytes (a jump towards an estimate of the path), and
    /// slow start goes on as [`SlowStartStep::Continue`].
    JumpTo(usize),
    /// Leave slow start: cwnd = ssthresh = cwnd × `ss_exit_factor`, a
    /// decrease in section 3.3's sense if it shrank cwnd.
    ExitScaled,
    /// cwnd = min(cwnd, this many bytes), then ssthresh = min(ssthresh,
    /// cwnd); not a decrease (Linux's exit).
    ExitToWindow(usize),
    /// cwnd = this many bytes, above or below cwnd, and ssthresh = cwnd;
    /// not a decrease (the member ends slow start at a window it computed).
    ExitAt(usize),
}

/// How a congestion-avoidance round changes cwnd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowChange {
    /// cwnd grows by this many bytes.
    Increase(usize),
    /// cwnd shrinks by this many bytes, to the minimum window at most, and
    /// ssthresh to at most cwnd: a decrease too small to take a byte still
    /// caps ssthresh (vegas-sat's FAST update, whose steps are fractions of
    /// a packet).
    Decrease(usize),
    /// cwnd and ssthresh stay.
    Hold,
}

impl From<i64> for WindowChange {
    /// Bytes, positive to grow, negative to shrink, zero to hold.
    fn from(bytes: i64) -> Self {
        let size = usize::try_from(bytes.unsigned_abs()).unwrap_or(usize::MAX);
        match bytes.signum() {
            1 => WindowChange::Increase(size),
            -1 => WindowChange::Decrease(size),
            _ => WindowChange::Hold,
        }
    }
}

/// The skeleton's state at a congestion event, for the rules' reaction.
#[derive(Clone, Copy, Debug)]
pub struct LossView<'a> {
    pub window: &'a Window,
    pub base_rtt: Option<Duration>,
    /// Whether the lost packet was sent after the last decrease (section
    /// 3.3): a [`LossResponse::Reduce`] applies only then, so a member that
    /// counts or classifies losses can leave the others out.
    pub sent_after_decrease: bool,
}

/// What the rules want done about a congestion event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossResponse {
    /// A timeout: ssthresh = this, cwnd = the minimum window, slow start
    /// again from a growth round, whenever the lost packets were sent.
    Timeout { ssthresh: usize },
    /// If the lost packet was sent after the last decrease (section 3.3):
    /// cwnd and ssthresh become these, and a new epoch begins.
    Reduce { cwnd: usize, ssthresh: usize },
    /// Leave the window as it is.
    Keep,
}

/// A correction of one ACK's RTT samples (RoVegas's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttAdjustment {
    /// Subtracted from every non-zero RTT of the ACK before the skeleton
    /// (BaseRTT, the round) sees it. Shorter than every RTT sample of the
    /// ACK, it costs a subtraction where an RTT is read; a longer one
    /// makes the skeleton copy the ACK's packets.
    pub subtract: Duration,
    /// A BaseRTT sample measured besides the ACK's RTTs, offered first.
    pub base_rtt_probe: Option<Duration>,
}

/// Diff of one round, as a member computes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundDiff {
    /// Diff in packets, compared with the thresholds.
    pub diff_packets: f64,
    /// Expected and Actual behind it; `None` for a member that measures
    /// the queue otherwise (vegas-sat: the receiver's stamps).
    pub rates: Option<VegasDiff>,
}

/// What a finished round measured, for the rules' Diff.
#[derive(Clone, Copy, Debug)]
pub struct RoundMeasurement<'a> {
    pub round: &'a CompletedRound,
    pub window: &'a Window,
    pub base_rtt: Option<Duration>,
    /// The round's RTT as `round_rtt` defines it; `None` also when the
    /// round has fewer than `min_rtt_samples` samples.
    pub round_rtt: Option<Duration>,
}

/// Section 3.5.2's Diff from cwnd in packets, fractions included.
pub fn paper_diff(window: &Window, base_rtt: Duration, round_rtt: Duration) -> Option<RoundDiff> {
    let rates = VegasDiff::compute(window.cwnd_packets(), base_rtt, round_rtt)?;
    Some(RoundDiff {
        diff_packets: rates.diff_packets,
        rates: Some(rates),
    })
}

/// The skeleton's state when the stack asks for a pacing rate.
#[derive(Clone, Copy, Debug)]
pub struct PacingView<'a> {
    pub window: &'a Window,
    /// The stack's smoothed RTT, BaseRTT before there is one.
    pub rtt: Option<Duration>,
    pub base_rtt: Option<Duration>,
    /// As [`VegasRules::in_slow_start`] says.
    pub in_slow_start: bool,
    /// The member's pacing parameters.
    pub profile: &'a PacingProfile,
}

/// A round that ended outside recovery, as the rules see it.
#[derive(Clone, Copy, Debug)]
pub struct RoundView<'a> {
    pub round: CompletedRound,
    /// Diff of the round, `None` if it measured too little.
    pub diff_packets: Option<f64>,
    pub window: &'a Window,
    pub base_rtt: Option<Duration>,
    /// The round's RTT as `round_rtt` defines it.
    pub round_rtt: Option<Duration>,
    pub gamma: f64,
    /// Bytes acknowledged by the ACK that ended the round.
    pub acked_bytes: usize,
}

/// Reno's increase for a congestion-avoidance round too few RTT samples
/// measured (Linux's `tcp_vegas.c`: `cntRTT <= 2` runs
/// `tcp_reno_cong_avoid`): one packet per cwnd of bytes acknowledged,
/// counted over the ACKs that end such rounds. The paper's Vegas holds
/// cwnd in such a round instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenoFallback {
    /// Bytes acknowledged towards the next one-packet increase.
    acked_bytes: usize,
}

impl RenoFallback {
    /// The change for a round without a Diff; application-limited rounds
    /// neither grow nor count (RFC 9002 section 7.8).
    pub fn round(&mut self, round: &RoundView<'_>) -> WindowChange {
        if round.round.app_limited {
            return WindowChange::Hold;
        }
        self.acked_bytes = self.acked_bytes.saturating_add(round.acked_bytes);
        let cwnd = round.window.cwnd();
        if self.acked_bytes >= cwnd {
            self.acked_bytes -= cwnd;
            WindowChange::Increase(round.window.max_datagram_size())
        } else {
            WindowChange::Hold
        }
    }

    /// The window was decreased, restored or rescaled: a partial increase
    /// counted against the old window no longer applies.
    pub fn forget(&mut self) {
        self.acked_bytes = 0;
    }
}

/// What happens to ssthresh after a round with a Diff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SsthreshFloor {
    /// It stays (the paper).
    #[default]
    None,
    /// It is raised to at least 3/4 of cwnd (Linux's
    /// `tcp_current_ssthresh`, which `tcp_vegas.c` assigns after every
    /// Vegas round).
    ThreeQuartersOfCwnd,
}

impl SsthreshFloor {
    /// The least ssthresh for a window of `cwnd` bytes.
    pub fn floor(self, cwnd: usize) -> usize {
        match self {
            SsthreshFloor::None => 0,
            SsthreshFloor::ThreeQuartersOfCwnd => cwnd / 2 + cwnd / 4,
        }
    }
}

/// What a member of the Vegas family decides; everything else is
/// [`Vegas`]'s. The defaults are the paper's.
pub trait VegasRules: Debug + Send {
    /// The algorithm's name as selected on the command line.
    fn name(&self) -> &'static str;

    /// How slow start grows.
    fn slow_start_growth(&self) -> SlowStartGrowth {
        SlowStartGrowth::EveryOtherRound
    }

    /// Whether the member is in slow start: by default while cwnd <
    /// ssthresh. A member with a start-up phase of its own says so here; the
    /// skeleton asks it for the round's decision, slow start's growth, the
    /// state it reports and pacing. One user, and needed: vegas-sat's
    /// start-up ends at a target window (capacity × BaseRTT + the aim, the
    /// capacity from packet pairs), at a queue, or at a congestive loss,
    /// never at an ssthresh, and its jump puts cwnd where no ssthresh could
    /// say which phase it is in.
    fn in_slow_start(&self, window: &Window) -> bool {
        window.in_slow_start()
    }

    /// Sees every packet sent, after the round clock.
    fn on_packet_sent(&mut self, _sent: &PacketSent) {}

    /// Sees every ACK that acknowledges something (RTTs as measured), before
    /// the skeleton acts on it: the place for estimators.
    fn observe_ack(&mut self, _ack: &AckEvent<'_>, _window: &Window) {}

    /// How the ACK's RTT samples are to be read; `min_sample_size` is the
    /// smallest packet that gives one.
    fn rtt_adjustment(&mut self, _ack: &AckEvent<'_>, _min_sample_size: usize) -> RttAdjustment {
        RttAdjustment::default()
    }

    /// The ACK's BaseRTT sample (its smallest full-size RTT, adjusted);
    /// section 3.5.2: BaseRTT is the minimum of all.
    fn on_base_rtt_sample(
        &mut self,
        rtt: Duration,
        _now: Instant,
        _window: &Window,
        base_rtt: &mut BaseRttTracker,
    ) {
        base_rtt.on_rtt_sample(rtt);
    }

    /// Diff of a finished round, `None` if it measured too little: by
    /// default section 3.5.2's from cwnd, BaseRTT and the round's RTT. A
    /// member that measures the queue otherwise (vegas-sat: forward delay
    /// from the receiver's stamps) computes it here, and may keep what it
    /// measured for its decisions and qlog.
    fn diff(&mut self, round: &RoundMeasurement<'_>) -> Option<RoundDiff> {
        paper_diff(round.window, round.base_rtt?, round.round_rtt?)
    }

    /// A slow-start round that is compared with gamma ended (section 3.5.3:
    /// Diff > gamma ends slow start).
    fn slow_start_round(&mut self, round: &RoundView<'_>) -> SlowStartStep {
        match round.diff_packets {
            Some(diff) if diff > round.gamma => SlowStartStep::ExitScaled,
            _ => SlowStartStep::Continue,
        }
    }

    /// Slow start grew cwnd by an ACK's bytes (outside recovery, not
    /// application-limited): a member may jump or end slow start at once,
    /// without waiting for the round. By default nothing more happens. One
    /// user, and needed: on a 600 ms path a round is too late for what one
    /// ACK can show, so vegas-sat jumps to half its target window at the
    /// first capacity (the packet-pair estimate; the jump start of
    /// Careful Resume, draft-ietf-tsvwg-careful-resume, made from a
    /// measurement) and leaves at the ACK whose queue passes the threshold
    /// (HyStart++'s per-ACK delay exit, RFC 9406, on the queue it measures).
    fn slow_start_ack(&mut self, _window: &Window, _base_rtt: Option<Duration>) -> SlowStartStep {
        SlowStartStep::Continue
    }

    /// A congestion-avoidance round with a Diff ended: the change of cwnd
    /// (from bytes: `i64::into`). A decrease stops at the minimum window.
    /// A round without a Diff holds cwnd, or gets Reno's increase
    /// ([`RenoFallback`]).
    fn congestion_avoidance_round(&mut self, round: &RoundView<'_>, diff: f64) -> WindowChange;

    /// Every round's end, after its decision: rounds that end in recovery
    /// too, which the skeleton does not evaluate (and so does not hand to
    /// [`VegasRules::diff`]). One user, and needed for two things the
    /// decision hooks cannot do: estimators that count per round whatever
    /// the phase (vegas-sat's forward queue, whose round mean a round in
    /// recovery must not carry into the next), and a BaseRTT taken anew
    /// from the round's smallest RTT when a queue does not drain (vegas-sat's
    /// rebase, after Vegas-W's BaseRTT refresh on a route change, 003).
    fn on_round_end(&mut self, _round: &CompletedRound, _base_rtt: &mut BaseRttTracker) {}

    /// The member's cut on loss if it is section 3.3's by a factor
    /// ([`ScaledLoss`]), which the default [`VegasRules::loss_reaction`]
    /// applies. A member with a reaction of its own overrides that instead
    /// and leaves this `None`.
    fn scaled_loss(&self) -> Option<&ScaledLoss> {
        None
    }

    /// A congestion event: by default [`VegasRules::scaled_loss`]'s
    /// response, the window kept where there is none.
    fn loss_reaction(&mut self, loss: &CongestionEvent, vegas: &LossView<'_>) -> LossResponse {
        self.scaled_loss().map_or(LossResponse::Keep, |scaled| {
            scaled.response(loss, vegas.window)
        })
    }

    /// A loss was spurious: the window and ssthresh the host saved are back
    /// and the decrease is forgotten. The other half of
    /// [`VegasRules::in_slow_start`]: a member whose phase is its own, not
    /// ssthresh's, restores it here (vegas-sat goes back to start-up when the
    /// restored window is one of slow start and its jump is still to come).
    fn spurious_loss_undone(&mut self, _window: &Window) {}

    /// The host set the window (Careful Resume's jump validated: the
    /// window is what was in flight), not the member's own rules. One
    /// user: vegas-sat keeps such a window above a first capacity reading
    /// taken while its trains fill.
    fn window_set_by_host(&mut self, _window: &Window) {}

    /// The pacing the stack is asked for: by default the member's pacing
    /// profile ([`crate::shared::pacing_profile`]: gain × cwnd / RTT in
    /// bursts). One user, and needed: vegas-sat's rate is capped at a
    /// multiple of the capacity it measured (the profile knows no capacity),
    /// and without receive stamps its bursts grow to ACK trains long enough
    /// to arrive at the bottleneck's spacing; with stamps they are the
    /// packet pairs (Keshav, SIGCOMM 1991) its capacity is measured from.
    fn pacing(&self, vegas: &PacingView<'_>) -> Option<Pacing> {
        vegas
            .profile
            .pacing(vegas.in_slow_start, vegas.window.cwnd(), vegas.rtt)
    }

    /// Fields for qlog: the rules write all of them, with the help of
    /// [`VegasView`]'s writers, so that each member keeps its names.
    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals);

    /// The generation of what the rules' own state adds to [`Self::internals`]
    /// (the skeleton keys the [`VegasView`] itself): it only grows, and grows
    /// whenever that state could write something else. `None`, the default,
    /// fills on every ACK.
    fn internals_generation(&self) -> Option<u64> {
        None
    }
}

/// Section 3.5.2's step: one packet towards `alpha <= Diff <= beta`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearStep {
    pub alpha: f64,
    pub beta: f64,
}

impl LinearStep {
    pub fn from_params(params: &ParamValues, keys: &ThresholdKeys) -> Self {
        LinearStep {
            alpha: params.value(keys.alpha),
            beta: params.value(keys.beta),
        }
    }

    /// +1 packet if Diff < alpha (not when application-limited), −1 if
    /// Diff > beta, else 0; in bytes.
    pub fn step(&self, round: &RoundView<'_>, diff: f64) -> i64 {
        let packet = i64::try_from(round.window.max_datagram_size()).unwrap_or(i64::MAX);
        if diff < self.alpha {
            // Too little extra data in the network: increase linearly.
            if round.round.app_limited {
                0
            } else {
                packet
            }
        } else if diff > self.beta {
            // Too much extra data in the network: decrease linearly.
            -packet
        } else {
            // alpha <= Diff <= beta: leave cwnd unchanged.
            0
        }
    }

    pub fn internals(&self, out: &mut Internals) {
        out.float("alpha", self.alpha);
        out.float("beta", self.beta);
    }
}

/// The loss reaction of this file's Vegas: cwnd = ssthresh = cwnd ×
/// `loss_factor` once per epoch; on a timeout ssthresh = cwnd ×
/// `timeout_ssthresh_factor`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaledLoss {
    pub loss_factor: f64,
    pub timeout_ssthresh_factor: f64,
}

impl ScaledLoss {
    pub fn from_params(params: &ParamValues, keys: &LossKeys) -> Self {
        ScaledLoss {
            loss_factor: params.value(keys.loss_factor),
            timeout_ssthresh_factor: params.value(keys.timeout_ssthresh_factor),
        }
    }

    pub fn response(&self, loss: &CongestionEvent, window: &Window) -> LossResponse {
        if loss.persistent_congestion {
            // Like TCP's retransmission timeout.
            return LossResponse::Timeout {
                ssthresh: window.scaled(self.timeout_ssthresh_factor),
            };
        }
        let reduced = window.scaled(self.loss_factor);
        LossResponse::Reduce {
            cwnd: reduced,
            ssthresh: reduced,
        }
    }
}

/// The paper's Vegas (004, section 3): the skeleton's defaults, section
/// 3.5.2's step and the loss reduction above.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperVegas {
    pub step: LinearStep,
    pub loss: ScaledLoss,
}

impl PaperVegas {
    pub fn from_params(params: &ParamValues, keys: &PaperKeys) -> Self {
        PaperVegas {
            step: LinearStep::from_params(params, &keys.thresholds),
            loss: ScaledLoss::from_params(params, &keys.loss),
        }
    }
}

impl VegasRules for PaperVegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn congestion_avoidance_round(&mut self, round: &RoundView<'_>, diff: f64) -> WindowChange {
        self.step.step(round, diff).into()
    }

    fn scaled_loss(&self) -> Option<&ScaledLoss> {
        Some(&self.loss)
    }

    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals) {
        out.text("flavour", "paper");
        vegas.write_cwnd(out);
        self.step.internals(out);
        vegas.write_measurements("round_rtt_ms", out);
        vegas.write_growth_round(out);
    }

    fn internals_generation(&self) -> Option<u64> {
        // The step's thresholds are parameters: nothing of its own moves.
        Some(0)
    }
}

/// What the last evaluated round found, for qlog.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// Diff as the member computes it, in packets.
    pub diff_packets: f64,
    /// Expected and Actual, when Diff came from them.
    pub expected_bits_per_sec: Option<f64>,
    pub actual_bits_per_sec: Option<f64>,
}

/// The skeleton's state, read-only, for the rules' qlog fields.
#[derive(Clone, Copy, Debug)]
pub struct VegasView<'a> {
    pub window: &'a Window,
    pub base_rtt: Option<Duration>,
    /// The RTT of the last completed round, as `round_rtt` defines it.
    pub round_rtt: Option<Duration>,
    pub decision: Option<Decision>,
    /// Index of the current round.
    pub round: Option<u64>,
    pub ss_growth_round: bool,
    pub gamma: f64,
}

impl VegasView<'_> {
    /// `cwnd_packets`.
    pub fn write_cwnd(&self, out: &mut Internals) {
        out.float("cwnd_packets", self.window.cwnd_packets());
    }

    /// `gamma`, `base_rtt_ms`, the round's RTT under `round_rtt_name`,
    /// `diff_packets`, `expected_bps`, `actual_bps` and `round`.
    pub fn write_measurements(&self, round_rtt_name: &'static str, out: &mut Internals) {
        out.float("gamma", self.gamma);
        if let Some(base) = self.base_rtt {
            out.millis("base_rtt_ms", base);
        }
        if let Some(round_rtt) = self.round_rtt {
            out.millis(round_rtt_name, round_rtt);
        }
        if let Some(d) = self.decision {
            out.float("diff_packets", d.diff_packets);
            if let (Some(expected), Some(actual)) = (d.expected_bits_per_sec, d.actual_bits_per_sec)
            {
                if expected.is_finite() && actual.is_finite() {
                    out.float("expected_bps", expected);
                    out.float("actual_bps", actual);
                }
            }
        }
        if let Some(round) = self.round {
            out.int("round", round);
        }
    }

    /// `ss_growth_round`: whether the current slow-start round doubles cwnd.
    pub fn write_growth_round(&self, out: &mut Internals) {
        out.int("ss_growth_round", u64::from(self.ss_growth_round));
    }
}

/// The Vegas skeleton; see the module documentation. `Vegas` alone is the
/// paper's TCP Vegas.
#[derive(Debug)]
pub struct Vegas<R: VegasRules = PaperVegas> {
    rules: R,
    config: VegasConfig,
    window: Window,
    base_rtt: BaseRttTracker,
    rounds: RoundClock,
    /// Every-other-round slow start: whether the current round is one that
    /// doubles cwnd (the others hold it).
    ss_growth_round: bool,
    /// When cwnd was last decreased (section 3.3); in recovery while ACKs
    /// still acknowledge only packets sent before that.
    epoch: RecoveryEpoch,
    smoothed_rtt: Option<Duration>,
    last_decision: Option<Decision>,
    /// The ACK's packets with adjusted RTTs, reused between ACKs (only for
    /// an adjustment some RTT sample does not exceed).
    adjusted: Vec<AckedPacket>,
    /// The last completed round's RTT as `round_rtt` defines it, adjusted
    /// as its ACKs were ([`VegasRules::rtt_adjustment`]).
    last_round_rtt: Option<Duration>,
    /// A congestion-avoidance round without a Diff: `None` holds cwnd (the
    /// paper), `Some` gives it Reno's increase (Linux).
    reno_fallback: Option<RenoFallback>,
    ssthresh_floor: SsthreshFloor,
    /// Grows whenever what [`VegasView`] shows may have changed (bumped
    /// where the skeleton changes it), so that qlog's generation is one
    /// addition instead of comparing the view on every ACK and packet.
    view_changes: u64,
}

impl Vegas<PaperVegas> {
    /// The paper's Vegas with `params` from [`PAPER_PARAMS`].
    pub fn new(params: &ParamValues, window: WindowConfig) -> Self {
        Vegas::with_rules(
            PaperVegas::from_params(params, &PAPER_KEYS),
            VegasConfig::read(params, &PAPER_KEYS.vegas),
            window,
        )
    }
}

impl<R: VegasRules> Vegas<R> {
    /// A controller making `rules`' decisions.
    pub fn with_rules(rules: R, config: VegasConfig, window: WindowConfig) -> Self {
        Vegas {
            rules,
            config,
            window: Window::new(window),
            base_rtt: BaseRttTracker::new(),
            rounds: RoundClock::for_datagram_size(window.max_datagram_size),
            ss_growth_round: true,
            // A packet sent at the instant of a decrease counts as after it.
            epoch: RecoveryEpoch::new(SentAtReduction::CountsAsAfter),
            smoothed_rtt: None,
            last_decision: None,
            adjusted: Vec::new(),
            last_round_rtt: None,
            reno_fallback: None,
            ssthresh_floor: SsthreshFloor::None,
            view_changes: 0,
        }
    }

    /// Linux's `tcp_vegas.c` around the rules' round decision: a round
    /// without a Diff gets Reno's increase ([`RenoFallback`]), and after a
    /// round with one ssthresh is at least 3/4 of cwnd
    /// ([`SsthreshFloor::ThreeQuartersOfCwnd`]).
    pub fn with_linux_round_ends(mut self) -> Self {
        self.reno_fallback = Some(RenoFallback::default());
        self.ssthresh_floor = SsthreshFloor::ThreeQuartersOfCwnd;
        self
    }

    pub fn rules(&self) -> &R {
        &self.rules
    }

    /// BaseRTT: the smallest RTT seen (section 3.5.2), as the rules keep it.
    pub fn base_rtt(&self) -> Option<Duration> {
        self.base_rtt.base_rtt()
    }

    /// What [`VegasView`] shows may have changed: qlog is to look again.
    fn view_changed(&mut self) {
        self.view_changes = self.view_changes.wrapping_add(1);
    }

    /// A decrease that counts as "the last decrease" of section 3.3.
    fn record_decrease(&mut self, now: Instant) {
        self.epoch.begin(now);
        self.forget_increase_credit();
    }

    /// The window and ssthresh as the host gives them back or sets them;
    /// the decrease in progress, if any, is undone.
    fn restore_window(&mut self, cwnd: usize, ssthresh: usize) {
        self.window.restore(cwnd, ssthresh);
        self.view_changed();
        self.epoch.undo();
        self.forget_increase_credit();
    }

    /// The window was decreased, restored or rescaled: drop any partial
    /// increase counted towards the next packet.
    fn forget_increase_credit(&mut self) {
        if let Some(reno) = &mut self.reno_fallback {
            reno.forget();
        }
    }

    /// Diff for a finished round, if the round measured enough (section
    /// 3.5.2: once per RTT, from BaseRTT and the round's RTT).
    fn evaluate(&mut self, round: &CompletedRound) -> Option<f64> {
        let enough_samples = round.rtt_samples >= self.config.min_rtt_samples;
        let measured = RoundMeasurement {
            round,
            window: &self.window,
            base_rtt: self.base_rtt.base_rtt(),
            round_rtt: round.rtt(self.config.round_rtt).filter(|_| enough_samples),
        };
        let diff = self.rules.diff(&measured)?;
        let bits_per_packet = self.window.max_datagram_size() as f64 * 8.0;
        self.last_decision = Some(Decision {
            diff_packets: diff.diff_packets,
            expected_bits_per_sec: diff
                .rates
                .map(|r| r.expected_packets_per_sec * bits_per_packet),
            actual_bits_per_sec: diff
                .rates
                .map(|r| r.actual_packets_per_sec * bits_per_packet),
        });
        Some(diff.diff_packets)
    }

    /// Applies a slow-start decision of the rules.
    fn apply_slow_start_step(&mut self, step: SlowStartStep, now: Instant) {
        match step {
            SlowStartStep::Continue => {}
            SlowStartStep::JumpTo(bytes) => self.window.set_cwnd(bytes),
            SlowStartStep::ExitScaled => {
                // 3.5.3: "Vegas changes from slow-start mode to linear
                // increase/decrease mode", here with a cut.
                let reduced = self.window.scaled(self.config.ss_exit_factor);
                let decreased = reduced < self.window.cwnd();
                self.window.set_cwnd(reduced);
                self.window.set_ssthresh(reduced);
                if decreased {
                    self.record_decrease(now);
                }
            }
            SlowStartStep::ExitToWindow(bytes) => {
                self.window.set_cwnd(self.window.cwnd().min(bytes));
                self.window
                    .set_ssthresh(self.window.ssthresh().min(self.window.cwnd()));
            }
            SlowStartStep::ExitAt(bytes) => {
                self.window.set_cwnd(bytes);
                self.window.set_ssthresh(self.window.cwnd());
            }
        }
    }

    /// The once-per-RTT step (sections 3.5.2 and 3.5.3), with the rules'
    /// decisions.
    fn evaluate_round(&mut self, round: &CompletedRound, acked_bytes: usize, now: Instant) {
        let diff = self.evaluate(round);
        self.decide_round(round, diff, acked_bytes, now);
    }

    /// A round's decision, once its Diff is known.
    fn decide_round(
        &mut self,
        round: &CompletedRound,
        diff: Option<f64>,
        acked_bytes: usize,
        now: Instant,
    ) {
        let view = RoundView {
            round: *round,
            diff_packets: diff,
            window: &self.window,
            base_rtt: self.base_rtt.base_rtt(),
            round_rtt: round.rtt(self.config.round_rtt),
            gamma: self.config.gamma,
            acked_bytes,
        };
        if self.rules.in_slow_start(&self.window) {
            // 3.5.3: "Vegas allows exponential growth only every other RTT. In
            // between, the congestion window stays fixed so a valid comparison
            // of the expected and actual rates can be made."
            if self.rules.slow_start_growth() == SlowStartGrowth::EveryOtherRound
                && self.ss_growth_round
            {
                self.ss_growth_round = false;
                return;
            }
            let step = self.rules.slow_start_round(&view);
            if matches!(step, SlowStartStep::Continue | SlowStartStep::JumpTo(_)) {
                self.ss_growth_round = true;
            }
            self.apply_slow_start_step(step, now);
        } else {
            let change = match (diff, &mut self.reno_fallback) {
                (Some(diff), _) => self.rules.congestion_avoidance_round(&view, diff),
                (None, Some(reno)) => reno.round(&view),
                (None, None) => WindowChange::Hold,
            };
            match change {
                WindowChange::Increase(bytes) => self.window.increase(bytes),
                WindowChange::Decrease(bytes) => self.window.decrease(bytes),
                WindowChange::Hold => {}
            }
        }
        if diff.is_some() {
            let floor = self.ssthresh_floor.floor(self.window.cwnd());
            if floor > self.window.ssthresh() {
                self.window.set_ssthresh(floor);
            }
        }
    }

    fn view(&self) -> VegasView<'_> {
        VegasView {
            window: &self.window,
            base_rtt: self.base_rtt.base_rtt(),
            round_rtt: self.last_round_rtt,
            decision: self.last_decision,
            round: self.rounds.current().map(|r| r.index),
            ss_growth_round: self.ss_growth_round,
            gamma: self.config.gamma,
        }
    }
}

/// The skeleton's state for a member's unit tests, which set up the
/// situation a decision is taken in.
#[cfg(test)]
impl<R: VegasRules> Vegas<R> {
    pub(crate) fn rules_mut(&mut self) -> &mut R {
        &mut self.rules
    }

    pub(crate) fn window(&self) -> &Window {
        &self.window
    }

    pub(crate) fn window_mut(&mut self) -> &mut Window {
        self.view_changed();
        &mut self.window
    }

    pub(crate) fn base_rtt_mut(&mut self) -> &mut BaseRttTracker {
        self.view_changed();
        &mut self.base_rtt
    }

    pub(crate) fn set_smoothed_rtt(&mut self, rtt: Option<Duration>) {
        self.smoothed_rtt = rtt;
    }

    /// The end of `round` outside recovery, measured as the skeleton
    /// measures it.
    pub(crate) fn complete_round(&mut self, round: &CompletedRound, now: Instant) {
        self.view_changed();
        self.evaluate_round(round, 0, now);
        self.rules.on_round_end(round, &mut self.base_rtt);
    }

    /// The end of `round` outside recovery with the Diff `diff`.
    pub(crate) fn complete_round_with_diff(
        &mut self,
        round: &CompletedRound,
        diff: f64,
        now: Instant,
    ) {
        self.view_changed();
        self.decide_round(round, Some(diff), 0, now);
        self.rules.on_round_end(round, &mut self.base_rtt);
    }

    /// What the rules decide after slow start's growth on an ACK, applied.
    pub(crate) fn after_slow_start_growth(&mut self, now: Instant) {
        let step = self
            .rules
            .slow_start_ack(&self.window, self.base_rtt.base_rtt());
        self.apply_slow_start_step(step, now);
        self.view_changed();
    }
}

impl<R: VegasRules> CongestionController for Vegas<R> {
    fn name(&self) -> &'static str {
        self.rules.name()
    }

    fn on_packet_sent(&mut self, sent: &PacketSent) {
        // The first packet begins round 0, which the view shows.
        let first = self.rounds.current().is_none();
        self.rounds
            .on_sized_packet_sent(sent.pkt_num, sent.time_sent, sent.size);
        if first {
            self.view_changed();
        }
        self.rules.on_packet_sent(sent);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.acked.is_empty() {
            return;
        }
        if !ack.rtt.smoothed_rtt.is_zero() {
            self.smoothed_rtt = Some(ack.rtt.smoothed_rtt);
        }
        // BaseRTT, which the rules may move on any ACK (the window moves
        // only at a round's end or in slow start, both bumped below).
        let base_rtt_before = self.base_rtt.base_rtt();
        self.rules.observe_ack(ack, &self.window);
        let min_sample_size = self.rounds.min_sample_size();
        let adjustment = self.rules.rtt_adjustment(ack, min_sample_size);
        if let Some(probe) = adjustment.base_rtt_probe {
            self.base_rtt.on_rtt_sample(probe);
        }
        // An adjustment makes a second event. RTTs are read in two places:
        // the summary's smallest sample (BaseRTT, the round's minimum and
        // mean) and the distinguished packet's (the round clock). When
        // every sample stays above zero (RoVegas makes QTb shorter than
        // every RTT of its ACK) both are the host's minus the adjustment:
        // the event keeps the host's packets and only the summary moves;
        // the distinguished RTT is corrected when the round ends. Otherwise
        // the packets are copied with their adjusted RTTs (the reused
        // buffer), as before.
        let subtract = adjustment.subtract;
        let mut adjusted = Vec::new();
        let mut distinguished_correction = Duration::ZERO;
        let adjusted_ack;
        let ack = if subtract.is_zero() {
            ack
        } else if min_sample_size == ack.summary.full_size
            && ack.summary.min_rtt.is_none_or(|min| subtract < min)
        {
            distinguished_correction = subtract;
            adjusted_ack = AckEvent {
                summary: AckSummary {
                    min_rtt: ack.summary.min_rtt.map(|min| min - subtract),
                    ..ack.summary
                },
                ..*ack
            };
            &adjusted_ack
        } else {
            adjusted = std::mem::take(&mut self.adjusted);
            adjusted.clear();
            adjusted.extend(ack.acked.iter().map(|p| {
                let mut packet = *p;
                if !p.rtt.is_zero() {
                    packet.rtt = p.rtt.saturating_sub(subtract);
                }
                packet
            }));
            // Some sample fell to zero (or sizes differ): the smallest is
            // looked for again among the copies.
            adjusted_ack = AckEvent {
                acked: &adjusted,
                summary: AckSummary {
                    min_rtt: smallest_rtt_sample(&adjusted, ack.summary.full_size),
                    ..ack.summary
                },
                ..*ack
            };
            &adjusted_ack
        };

        // 3.5.2: BaseRTT is the minimum of all measured round trip times.
        if let Some(rtt) = ack.summary.min_rtt_from(ack.acked, min_sample_size) {
            self.rules
                .on_base_rtt_sample(rtt, ack.now, &self.window, &mut self.base_rtt);
        }
        if self.base_rtt.base_rtt() != base_rtt_before {
            self.view_changed();
        }
        let acked_bytes = ack.summary.acked_bytes;

        // Rounds ending in recovery are not evaluated, and the end of
        // recovery restarts the round.
        let (round, evaluated) = match self.epoch.on_ack_with_rounds(ack, &mut self.rounds) {
            AckedRound::Ended(round) => (Some(round), true),
            AckedRound::EndedInRecovery(round) => (Some(round), false),
            AckedRound::RecoveryEnded => {
                // A new round (index) begins.
                self.view_changed();
                (None, false)
            }
            AckedRound::InProgress => (None, false),
        };
        if let Some(mut round) = round {
            // The round's RTT, the decision, the index and the growth round.
            self.view_changed();
            // The round clock read the distinguished packet's RTT from the
            // host's packets: it is a sample, so above the subtraction.
            round.distinguished_rtt = round
                .distinguished_rtt
                .map(|rtt| rtt.saturating_sub(distinguished_correction));
            self.last_round_rtt = round.rtt(self.config.round_rtt);
            if evaluated {
                self.evaluate_round(&round, acked_bytes, ack.now);
            }
            self.rules.on_round_end(&round, &mut self.base_rtt);
        }

        // Slow start grows in growth rounds only, not in recovery and not
        // when the window is not being used.
        let growth_round = match self.rules.slow_start_growth() {
            SlowStartGrowth::EveryOtherRound => self.ss_growth_round,
            SlowStartGrowth::EveryRound => true,
        };
        if self.rules.in_slow_start(&self.window)
            && growth_round
            && !self.epoch.in_recovery()
            && !ack.app_limited
        {
            self.window.slow_start(acked_bytes);
            self.view_changed();
            let step = self
                .rules
                .slow_start_ack(&self.window, self.base_rtt.base_rtt());
            self.apply_slow_start_step(step, ack.now);
        }
        // The buffer goes back if it was taken (it then holds this ACK's
        // packets, so it has a capacity).
        if adjusted.capacity() > 0 {
            self.adjusted = adjusted;
        }
    }

    fn on_congestion_event(&mut self, loss: &CongestionEvent) {
        let sent_after_decrease = self.epoch.sent_after_reduction(loss.largest_lost_time_sent);
        let view = LossView {
            window: &self.window,
            base_rtt: self.base_rtt.base_rtt(),
            sent_after_decrease,
        };
        match self.rules.loss_reaction(loss, &view) {
            LossResponse::Timeout { ssthresh } => {
                // Back to the minimum window and slow start, whenever the
                // lost packets were sent.
                self.window.set_ssthresh(ssthresh);
                self.window.set_cwnd(self.window.minimum());
                self.ss_growth_round = true;
                self.record_decrease(loss.now);
                self.view_changed();
            }
            LossResponse::Reduce { cwnd, ssthresh } => {
                // 3.3: "Vegas only decreases the congestion window if the
                // retransmitted segment was previously sent after the last
                // decrease."
                if sent_after_decrease {
                    self.window.set_cwnd(cwnd);
                    self.window.set_ssthresh(ssthresh);
                    self.record_decrease(loss.now);
                    self.view_changed();
                }
            }
            LossResponse::Keep => {}
        }
    }

    fn on_spurious_loss(&mut self, cwnd: usize, ssthresh: usize) -> bool {
        self.restore_window(cwnd, ssthresh);
        self.rules.spurious_loss_undone(&self.window);
        true
    }

    fn set_window(&mut self, cwnd: usize, ssthresh: usize) {
        self.restore_window(cwnd, ssthresh);
        self.rules.window_set_by_host(&self.window);
    }

    fn cwnd(&self) -> usize {
        self.window.cwnd()
    }

    fn ssthresh(&self) -> usize {
        self.window.ssthresh()
    }

    fn state(&self) -> CcState {
        if self.epoch.in_recovery() {
            CcState::Recovery
        } else if self.rules.in_slow_start(&self.window) {
            CcState::SlowStart
        } else {
            CcState::CongestionAvoidance
        }
    }

    /// Section 3.4, spike suppression: SegSpacing = RTT × MaxSegment /
    /// WindowSize, at most `spike_burst_packets` per SegSpacing, not in slow
    /// start.
    ///
    /// With `profile=quic` (the default, see the module docs), slow start is
    /// paced too, at `slow_start_pacing_gain` × cwnd / RTT.
    ///
    /// A member may pace otherwise ([`VegasRules::pacing`]).
    fn pacing(&self) -> Option<Pacing> {
        self.rules.pacing(&PacingView {
            window: &self.window,
            rtt: self.smoothed_rtt.or(self.base_rtt.base_rtt()),
            base_rtt: self.base_rtt.base_rtt(),
            in_slow_start: self.rules.in_slow_start(&self.window),
            profile: &self.config.pacing,
        })
    }

    fn internals(&self, out: &mut Internals) {
        self.rules.internals(&self.view(), out);
    }

    fn internals_generation(&self) -> Option<u64> {
        let rules = self.rules.internals_generation()?;
        // Both only grow: the sum moves when either does.
        Some(self.view_changes.wrapping_add(rules))
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: usize) {
        // Vegas counts in packets: keep the window's packet count.
        self.window.rescale_to(max_datagram_size);
        self.view_changed();
        self.rounds.set_max_datagram_size(max_datagram_size);
        self.forget_increase_credit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MDS: usize = 1000;

    /// A congestion-avoidance round of a 10-packet window whose ending ACK
    /// acknowledged `acked_bytes`.
    fn round_without_diff(
        reno: &mut RenoFallback,
        acked_bytes: usize,
        app_limited: bool,
    ) -> WindowChange {
        let window = Window::new(WindowConfig {
            max_datagram_size: MDS,
            initial_cwnd_packets: 10,
        });
        let now = Instant::now();
        let round = CompletedRound {
            index: 1,
            start: now,
            end: now,
            min_rtt: None,
            mean_rtt: None,
            distinguished_rtt: None,
            rtt_samples: 0,
            bytes_acked: acked_bytes as u64,
            app_limited,
        };
        reno.round(&RoundView {
            round,
            diff_packets: None,
            window: &window,
            base_rtt: None,
            round_rtt: None,
            gamma: 1.0,
            acked_bytes,
        })
    }

    #[test]
    fn reno_fallback_grows_a_packet_per_window_acknowledged() {
        let mut reno = RenoFallback::default();
        // 4, 8, 12 (one packet, 2 left), 6, 10 (one packet, 0 left) of a
        // 10-packet window.
        let mut credit = 0;
        for acked in [4, 4, 4, 4, 4] {
            credit += acked;
            let expected = if credit >= 10 {
                credit -= 10;
                WindowChange::Increase(MDS)
            } else {
                WindowChange::Hold
            };
            assert_eq!(round_without_diff(&mut reno, acked * MDS, false), expected);
        }
        assert_eq!(credit, 0);
    }

    #[test]
    fn reno_fallback_neither_grows_nor_counts_application_limited_rounds() {
        let mut reno = RenoFallback::default();
        assert_eq!(
            round_without_diff(&mut reno, 20 * MDS, true),
            WindowChange::Hold
        );
        assert_eq!(
            round_without_diff(&mut reno, 5 * MDS, false),
            WindowChange::Hold,
            "the limited round's bytes were not counted"
        );
        reno.forget();
        assert_eq!(
            round_without_diff(&mut reno, 5 * MDS, false),
            WindowChange::Hold,
            "forgotten"
        );
    }

    #[test]
    fn ssthresh_floor_is_three_quarters_of_cwnd_for_linux_and_none_for_the_paper() {
        for cwnd in [0, 3, 4, 14_999, 15_000] {
            assert_eq!(SsthreshFloor::None.floor(cwnd), 0);
            // Linux's (cwnd >> 1) + (cwnd >> 2).
            assert_eq!(
                SsthreshFloor::ThreeQuartersOfCwnd.floor(cwnd),
                (cwnd >> 1) + (cwnd >> 2)
            );
        }
    }
}

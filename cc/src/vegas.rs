//! TCP Vegas (Brakmo, O'Malley, Peterson), 004_039b3aff67042154.txt.
//!
//! Two algorithms share this file through [`VegasFlavour`]:
//!
//! - `vegas`: the paper. BaseRTT is the smallest RTT seen; once per RTT Vegas
//!   computes Diff = (Expected − Actual) × BaseRTT in packets and moves cwnd by
//!   one packet towards `alpha <= Diff <= beta` (section 3.5.2). Slow start
//!   doubles the window only every other RTT and ends when Diff exceeds
//!   `gamma` (section 3.5.3). Only losses of packets sent after the last
//!   decrease shrink the window (section 3.3). Outside slow start, at most
//!   two segments leave per SegSpacing = RTT × MaxSegment / WindowSize
//!   (section 3.4), i.e. a pacing rate of twice cwnd / RTT.
//! - `vegas-linux`: Linux's `tcp_vegas.c` behaviour. alpha 2, beta 4, gamma 1,
//!   ordinary slow start (growth on every ACK), Diff in Linux's integer form
//!   (cwnd × (RTT − BaseRTT) / BaseRTT), and on a slow-start exit cwnd is cut
//!   to min(cwnd, target + 1) with target = cwnd × BaseRTT / RTT. A round with
//!   fewer than three RTT samples falls back to Reno, as in Linux. Loss
//!   reaction is Reno's halving. No spike suppression (Linux has none).
//!
//! Both pace as good QUIC senders by default (`profile=quic`: slow start
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
//! The pseudo-code, per round (paper flavour):
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
//!   round; a round with fewer is skipped (Linux flavour: Reno for that round).
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
//! # The Linux flavour
//!
//! Where `vegas-linux` departs from the list above, it follows `tcp_vegas.c`:
//! Diff and the slow-start target are computed in whole packets from RTTs in
//! whole microseconds (Linux adds 1 µs to every sample; we ignore zero
//! samples instead); `diff > gamma` in slow start sets cwnd to
//! min(cwnd, target + 1) and ssthresh to min(ssthresh, cwnd), which is not a
//! "decrease" for the loss filter (Linux filters losses by recovery episode,
//! which the loss reaction here reproduces); after each evaluated round
//! ssthresh is raised to at least 3/4 of cwnd (Linux's `tcp_current_ssthresh`);
//! a round with fewer than `min_rtt_samples` (3) samples gets Reno's increase
//! from the ACK that ends it; a loss sets cwnd = ssthresh = cwnd / 2 (Reno's
//! end of fast recovery, without PRR's gradual approach). Not modelled:
//! Linux's reset of BaseRTT when a sender restarts from idle, which needs an
//! idle-restart event this interface does not carry.
//! - **Spurious loss**: the window and ssthresh the host saved are restored,
//!   the decrease is forgotten and recovery ends.
//!
//! # Other rules for congestion avoidance
//!
//! Members of the family that keep Vegas's slow start, loss handling and
//! spike suppression and change only the once-per-RTT step of congestion
//! avoidance (Vegas-A and Vegas-L, 000_625d42b67da1ab13.txt) plug in a
//! [`CongestionAvoidanceRule`] with [`Vegas::with_congestion_avoidance`]; the
//! rule then replaces the `Diff < alpha` / `Diff > beta` step above, and
//! everything else stays this file's.

use std::time::{Duration, Instant};

use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{CcState, CongestionController, Internals, Pacing};
use crate::events::{AckEvent, CongestionEvent, PacketSent};
use crate::params::{concat_params, ParamInfo, ParamKind, ParamValues};
use crate::shared::base_rtt::BaseRttTracker;
use crate::shared::pacing_profile::{
    self, PacingProfile, PACING_GAIN, PROFILE, SLOW_START_PACING_GAIN, SPIKE_SUPPRESSION_PARAMS,
};
use crate::shared::recovery_epoch::{AckedRound, RecoveryEpoch, SentAtReduction};
use crate::shared::round_clock::{smallest_rtt_sample, CompletedRound, RoundClock, RoundRtt};
use crate::shared::vegas_diff::{linux_diff_packets, linux_target_window_packets, VegasDiff};
use crate::shared::window::Window;

/// Which Vegas: the paper's or Linux's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VegasFlavour {
    /// 004_039b3aff67042154.txt, section 3.
    Paper,
    /// Linux's `net/ipv4/tcp_vegas.c`.
    Linux,
}

impl VegasFlavour {
    fn algorithm_name(self) -> &'static str {
        match self {
            VegasFlavour::Paper => "vegas",
            VegasFlavour::Linux => "vegas-linux",
        }
    }
}

const THRESHOLD_RANGE: ParamKind = ParamKind::Number {
    min: 0.0,
    max: 1000.0,
};
const FACTOR_RANGE: ParamKind = ParamKind::Number { min: 0.0, max: 1.0 };
const SAMPLES_RANGE: ParamKind = ParamKind::Integer { min: 1, max: 1000 };
const BURST_RANGE: ParamKind = ParamKind::Integer { min: 1, max: 64 };
const ON_OFF: ParamKind = ParamKind::Choice(&["on", "off"]);

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
                      (section 3.5.2; Vegas-1,3 of Table 2, the paper's other setting is 2)",
    },
    ParamInfo {
        name: "beta",
        default: 3.0,
        kind: THRESHOLD_RANGE,
        description: "packets queued above which cwnd shrinks by one packet per RTT \
                      (section 3.5.2; Vegas-1,3, the other setting is 4)",
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

/// Parameters of `vegas-linux`, with `tcp_vegas.c`'s defaults.
pub const LINUX_PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "alpha",
        default: 2.0,
        kind: THRESHOLD_RANGE,
        description: "Linux's alpha: packets queued below which cwnd grows by one per RTT",
    },
    ParamInfo {
        name: "beta",
        default: 4.0,
        kind: THRESHOLD_RANGE,
        description: "Linux's beta: packets queued above which cwnd shrinks by one per RTT",
    },
    ParamInfo {
        name: "gamma",
        default: 1.0,
        kind: THRESHOLD_RANGE,
        description: "Linux's gamma: packets queued above which slow start ends",
    },
    ParamInfo {
        name: "loss_factor",
        default: 0.5,
        kind: FACTOR_RANGE,
        description: "cwnd and ssthresh become cwnd x this on loss (Linux uses Reno's 1/2)",
    },
    ParamInfo {
        name: "timeout_ssthresh_factor",
        default: 0.5,
        kind: FACTOR_RANGE,
        description: "on persistent congestion ssthresh = cwnd x this, cwnd = minimum window",
    },
    ParamInfo {
        name: "min_rtt_samples",
        default: 3.0,
        kind: SAMPLES_RANGE,
        description: "RTT samples a round needs for Vegas; fewer and the round is Reno's \
                      (Linux: more than two)",
    },
    ParamInfo {
        name: "spike_suppression",
        default: 1.0,
        kind: ON_OFF,
        description: "pace at spike_burst_packets x cwnd/RTT outside slow start, as the \
                      paper's Vegas does (section 3.4; Linux's Vegas does not)",
    },
    ParamInfo {
        name: "spike_burst_packets",
        default: 2.0,
        kind: BURST_RANGE,
        description: "packets allowed per spacing interval when spike suppression is on; also \
                      the burst of profile=quic's pacing",
    },
    PROFILE,
    SLOW_START_PACING_GAIN,
    PACING_GAIN,
    ROUND_RTT_MINIMUM,
];

/// alpha and beta bound the queue from below and above.
fn validate_thresholds(params: &ParamValues) -> Result<(), String> {
    let (alpha, beta) = (params.get("alpha"), params.get("beta"));
    if alpha <= beta {
        Ok(())
    } else {
        Err(format!(
            "alpha ({alpha}) must not exceed beta ({beta}): alpha is the lower bound \
             of the packets to keep queued, beta the upper"
        ))
    }
}

/// Vegas's checks: the thresholds, and the pacing settings
/// ([`pacing_profile::validate`]).
pub(crate) fn validate(params: &ParamValues) -> Result<(), String> {
    validate_thresholds(params)?;
    pacing_profile::validate(params)
}

fn build_paper(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(Vegas::new(VegasFlavour::Paper, params, window))
}

fn build_linux(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(Vegas::new(VegasFlavour::Linux, params, window))
}

/// `vegas`: the paper's algorithm.
pub static VEGAS: AlgorithmInfo = AlgorithmInfo {
    name: "vegas",
    description: "TCP Vegas as in the paper: Diff once per RTT against alpha/beta (1,3), \
                  slow start growing every other RTT until Diff > gamma, spike suppression",
    params: PAPER_PARAMS,
    validate,
    build: build_paper,
};

/// `vegas-linux`: Linux's `tcp_vegas.c`.
pub static VEGAS_LINUX: AlgorithmInfo = AlgorithmInfo {
    name: "vegas-linux",
    description: "TCP Vegas as in Linux's tcp_vegas.c: alpha/beta/gamma 2/4/1, every-RTT \
                  slow start left at min(cwnd, target+1), Reno loss reaction",
    params: LINUX_PARAMS,
    validate,
    build: build_linux,
};

/// The parameters, read once.
#[derive(Clone, Copy, Debug)]
struct Config {
    alpha: f64,
    beta: f64,
    gamma: f64,
    /// Paper flavour only: Linux leaves slow start at target + 1.
    ss_exit_factor: f64,
    loss_factor: f64,
    timeout_ssthresh_factor: f64,
    min_rtt_samples: u64,
    pacing: PacingProfile,
    round_rtt: RoundRtt,
}

impl Config {
    fn read(flavour: VegasFlavour, params: &ParamValues) -> Self {
        Config {
            alpha: params.get("alpha"),
            beta: params.get("beta"),
            gamma: params.get("gamma"),
            ss_exit_factor: match flavour {
                VegasFlavour::Paper => params.get("ss_exit_factor"),
                VegasFlavour::Linux => 1.0,
            },
            loss_factor: params.get("loss_factor"),
            timeout_ssthresh_factor: params.get("timeout_ssthresh_factor"),
            min_rtt_samples: params.get("min_rtt_samples") as u64,
            pacing: PacingProfile::read_spike_suppression(params),
            round_rtt: RoundRtt::from_index(params.get("round_rtt") as usize)
                .unwrap_or(RoundRtt::Distinguished),
        }
    }
}

/// What the last evaluated round found, for qlog.
#[derive(Clone, Copy, Debug)]
struct Decision {
    /// Diff as this flavour computes it, in packets.
    diff_packets: f64,
    expected_bits_per_sec: f64,
    actual_bits_per_sec: f64,
}

/// One round of congestion avoidance that Vegas evaluated (paper flavour), as
/// handed to a [`CongestionAvoidanceRule`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CongestionAvoidanceRound {
    pub round: CompletedRound,
    /// Diff of the round (section 3.5.2), in packets.
    pub diff_packets: f64,
    /// cwnd during the round, in packets (fractions included).
    pub cwnd_packets: f64,
    pub max_datagram_size: usize,
}

/// A replacement for section 3.5.2's once-per-RTT step in congestion
/// avoidance. Vegas calls it at the end of every round it evaluates in
/// congestion avoidance (not in slow start, not in recovery, not for rounds
/// with too few RTT samples) and applies the change of cwnd it returns.
pub trait CongestionAvoidanceRule: Send + std::fmt::Debug {
    /// The algorithm's name, reported instead of `vegas`.
    fn name(&self) -> &'static str;

    /// The change of cwnd in bytes for the round. A decrease stops at the
    /// minimum window and also lowers ssthresh to cwnd, as Vegas's own linear
    /// decrease does. The rule decides what application-limited rounds may do.
    fn on_round(&mut self, round: &CongestionAvoidanceRound) -> i64;

    /// The rule's internals for qlog, its thresholds among them (they replace
    /// Vegas's fixed `alpha` and `beta`).
    fn internals(&self, out: &mut Internals);
}

/// TCP Vegas; see the module documentation.
#[derive(Debug)]
pub struct Vegas {
    flavour: VegasFlavour,
    config: Config,
    window: Window,
    base_rtt: BaseRttTracker,
    rounds: RoundClock,
    /// Paper slow start: whether the current round is one that doubles cwnd
    /// (the others hold it).
    ss_growth_round: bool,
    /// When cwnd was last decreased (section 3.3); in recovery while ACKs
    /// still acknowledge only packets sent before that.
    epoch: RecoveryEpoch,
    smoothed_rtt: Option<Duration>,
    last_decision: Option<Decision>,
    /// Linux flavour, Reno fallback: bytes acknowledged towards the next
    /// one-packet increase.
    reno_acked_bytes: usize,
    /// Replaces section 3.5.2's step, if set.
    congestion_avoidance: Option<Box<dyn CongestionAvoidanceRule>>,
}

impl Vegas {
    /// A controller of the given flavour; `params` must come from that
    /// flavour's table ([`PAPER_PARAMS`] or [`LINUX_PARAMS`]).
    pub fn new(flavour: VegasFlavour, params: &ParamValues, window: WindowConfig) -> Self {
        Vegas {
            flavour,
            config: Config::read(flavour, params),
            window: Window::new(window),
            base_rtt: BaseRttTracker::new(),
            rounds: RoundClock::for_datagram_size(window.max_datagram_size),
            ss_growth_round: true,
            // A packet sent at the instant of a decrease counts as after it.
            epoch: RecoveryEpoch::new(SentAtReduction::CountsAsAfter),
            smoothed_rtt: None,
            last_decision: None,
            reno_acked_bytes: 0,
            congestion_avoidance: None,
        }
    }

    /// The paper's Vegas with section 3.5.2's step replaced by `rule`.
    /// `params` must name every parameter of [`PAPER_PARAMS`]; `alpha` and
    /// `beta` among them are then the rule's business only.
    pub fn with_congestion_avoidance(
        params: &ParamValues,
        window: WindowConfig,
        rule: Box<dyn CongestionAvoidanceRule>,
    ) -> Self {
        let mut vegas = Self::new(VegasFlavour::Paper, params, window);
        vegas.congestion_avoidance = Some(rule);
        vegas
    }

    pub fn flavour(&self) -> VegasFlavour {
        self.flavour
    }

    /// BaseRTT: the smallest RTT seen (section 3.5.2).
    pub fn base_rtt(&self) -> Option<Duration> {
        self.base_rtt.base_rtt()
    }

    /// Packets smaller than this give no RTT sample (see the round clock).
    pub fn min_sample_size(&self) -> usize {
        self.rounds.min_sample_size()
    }

    /// Offers a BaseRTT sample measured outside the ACKs' RTTs, for variants
    /// that know more of the path's fixed delay (RoVegas subtracts the
    /// queueing times routers report). BaseRTT stays the minimum of all
    /// samples. Returns whether it lowered BaseRTT.
    pub fn offer_base_rtt_sample(&mut self, rtt: Duration) -> bool {
        self.base_rtt.on_rtt_sample(rtt)
    }

    /// A decrease that counts as "the last decrease" of section 3.3.
    fn record_decrease(&mut self, now: Instant) {
        self.epoch.begin(now);
        self.reno_acked_bytes = 0;
    }

    /// Diff for a finished round, if the round measured enough (section
    /// 3.5.2: once per RTT, from BaseRTT and the round's RTT).
    fn evaluate(&mut self, round: &CompletedRound) -> Option<f64> {
        if round.rtt_samples < self.config.min_rtt_samples {
            return None;
        }
        let base_rtt = self.base_rtt.base_rtt()?;
        let round_rtt = round.rtt(self.config.round_rtt)?;
        let diff = match self.flavour {
            VegasFlavour::Paper => {
                VegasDiff::compute(self.window.cwnd_packets(), base_rtt, round_rtt)?
            }
            VegasFlavour::Linux => {
                // Linux counts cwnd in whole packets.
                let window = self.window.cwnd_whole_packets() as f64;
                VegasDiff::compute(window, base_rtt, round_rtt)?
            }
        };
        let diff_packets = match self.flavour {
            VegasFlavour::Paper => diff.diff_packets,
            VegasFlavour::Linux => {
                linux_diff_packets(diff.window_packets as u64, base_rtt, round_rtt) as f64
            }
        };
        let bits_per_packet = self.window.max_datagram_size() as f64 * 8.0;
        self.last_decision = Some(Decision {
            diff_packets,
            expected_bits_per_sec: diff.expected_packets_per_sec * bits_per_packet,
            actual_bits_per_sec: diff.actual_packets_per_sec * bits_per_packet,
        });
        Some(diff_packets)
    }

    /// The paper's once-per-RTT step (sections 3.5.2 and 3.5.3).
    fn paper_round_end(&mut self, round: &CompletedRound, now: Instant) {
        let diff = self.evaluate(round);
        if self.window.in_slow_start() {
            // 3.5.3: "Vegas allows exponential growth only every other RTT. In
            // between, the congestion window stays fixed so a valid comparison
            // of the expected and actual rates can be made."
            if self.ss_growth_round {
                self.ss_growth_round = false;
                return;
            }
            match diff {
                Some(diff) if diff > self.config.gamma => {
                    // 3.5.3: "Vegas changes from slow-start mode to linear
                    // increase/decrease mode", here with a 1/8 cut.
                    let reduced = self.window.scaled(self.config.ss_exit_factor);
                    let decreased = reduced < self.window.cwnd();
                    self.window.set_cwnd(reduced);
                    self.window.set_ssthresh(reduced);
                    if decreased {
                        self.record_decrease(now);
                    }
                }
                _ => self.ss_growth_round = true,
            }
            return;
        }
        let Some(diff) = diff else { return };
        if self.congestion_avoidance.is_some() {
            self.apply_congestion_avoidance_rule(round, diff);
            return;
        }
        if diff < self.config.alpha {
            // Too little extra data in the network: increase linearly.
            if !round.app_limited {
                self.window.increase(self.window.max_datagram_size());
            }
        } else if diff > self.config.beta {
            // Too much extra data in the network: decrease linearly.
            self.window.decrease(self.window.max_datagram_size());
        }
        // alpha <= Diff <= beta: leave cwnd unchanged.
    }

    /// `tcp_vegas.c`'s once-per-RTT step.
    fn linux_round_end(&mut self, round: &CompletedRound, acked_bytes: usize) {
        let Some(diff) = self.evaluate(round) else {
            // Too few samples to trust (likely delayed ACKs): Reno this round.
            // Slow start grows on this ACK as on every other.
            if !self.window.in_slow_start() && !round.app_limited {
                self.reno_additive_increase(acked_bytes);
            }
            return;
        };
        let packet = self.window.max_datagram_size();
        if self.window.in_slow_start() {
            if diff > self.config.gamma {
                // Going too fast: set cwnd to the actual rate times BaseRTT,
                // plus one for the truncation, and leave slow start.
                if let (Some(base), Some(rtt)) =
                    (self.base_rtt.base_rtt(), round.rtt(self.config.round_rtt))
                {
                    let window = self.window.cwnd_whole_packets() as u64;
                    let target = linux_target_window_packets(window, base, rtt).saturating_add(1);
                    let target_bytes = usize::try_from(target)
                        .unwrap_or(usize::MAX)
                        .saturating_mul(packet);
                    self.window.set_cwnd(self.window.cwnd().min(target_bytes));
                    self.window
                        .set_ssthresh(self.window.ssthresh().min(self.window.cwnd()));
                    // Not a decrease for section 3.3's loss filter: Linux
                    // filters losses by recovery episode only.
                }
            }
        } else if diff > self.config.beta {
            self.window.decrease(packet);
        } else if diff < self.config.alpha && !round.app_limited {
            self.window.increase(packet);
        }
        // Linux's tcp_current_ssthresh: ssthresh keeps at least 3/4 of cwnd.
        let cwnd = self.window.cwnd();
        self.window
            .set_ssthresh(self.window.ssthresh().max(cwnd / 2 + cwnd / 4));
    }

    /// Asks the plugged-in rule for the round's step and applies it.
    fn apply_congestion_avoidance_rule(&mut self, round: &CompletedRound, diff: f64) {
        let input = CongestionAvoidanceRound {
            round: *round,
            diff_packets: diff,
            cwnd_packets: self.window.cwnd_packets(),
            max_datagram_size: self.window.max_datagram_size(),
        };
        let Some(rule) = self.congestion_avoidance.as_mut() else {
            return;
        };
        let change = rule.on_round(&input);
        let bytes = usize::try_from(change.unsigned_abs()).unwrap_or(usize::MAX);
        if change > 0 {
            self.window.increase(bytes);
        } else if change < 0 {
            self.window.decrease(bytes);
        }
    }

    /// Reno's congestion avoidance: one packet per window acknowledged.
    fn reno_additive_increase(&mut self, acked_bytes: usize) {
        self.reno_acked_bytes = self.reno_acked_bytes.saturating_add(acked_bytes);
        let cwnd = self.window.cwnd();
        if self.reno_acked_bytes >= cwnd {
            self.reno_acked_bytes -= cwnd;
            self.window.increase(self.window.max_datagram_size());
        }
    }
}

impl CongestionController for Vegas {
    fn name(&self) -> &'static str {
        match &self.congestion_avoidance {
            Some(rule) => rule.name(),
            None => self.flavour.algorithm_name(),
        }
    }

    fn on_packet_sent(&mut self, sent: &PacketSent) {
        self.rounds
            .on_sized_packet_sent(sent.pkt_num, sent.time_sent, sent.size);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.acked.is_empty() {
            return;
        }
        if !ack.rtt.smoothed_rtt.is_zero() {
            self.smoothed_rtt = Some(ack.rtt.smoothed_rtt);
        }
        // 3.5.2: BaseRTT is the minimum of all measured round trip times.
        if let Some(rtt) = smallest_rtt_sample(ack.acked, self.rounds.min_sample_size()) {
            self.base_rtt.on_rtt_sample(rtt);
        }
        let acked_bytes = ack
            .acked
            .iter()
            .fold(0usize, |sum, p| sum.saturating_add(p.size));

        // Rounds ending in recovery are not evaluated, and the end of
        // recovery restarts the round.
        if let AckedRound::Ended(round) = self.epoch.on_ack_with_rounds(ack, &mut self.rounds) {
            match self.flavour {
                VegasFlavour::Paper => self.paper_round_end(&round, ack.now),
                VegasFlavour::Linux => self.linux_round_end(&round, acked_bytes),
            }
        }

        // Slow start: the paper grows only in alternate rounds, Linux on every
        // ACK. Not in recovery and not when the window is not being used.
        let growth_round = match self.flavour {
            VegasFlavour::Paper => self.ss_growth_round,
            VegasFlavour::Linux => true,
        };
        if self.window.in_slow_start()
            && growth_round
            && !self.epoch.in_recovery()
            && !ack.app_limited
        {
            self.window.slow_start(acked_bytes);
        }
    }

    fn on_congestion_event(&mut self, loss: &CongestionEvent) {
        if loss.persistent_congestion {
            // Like TCP's retransmission timeout: back to the minimum window
            // and slow start, whenever the lost packets were sent.
            self.window
                .set_ssthresh(self.window.scaled(self.config.timeout_ssthresh_factor));
            self.window.set_cwnd(self.window.minimum());
            self.ss_growth_round = true;
            self.record_decrease(loss.now);
            return;
        }
        // 3.3: "Vegas only decreases the congestion window if the
        // retransmitted segment was previously sent after the last decrease."
        if !self.epoch.sent_after_reduction(loss.largest_lost_time_sent) {
            return;
        }
        let reduced = self.window.scaled(self.config.loss_factor);
        self.window.set_cwnd(reduced);
        self.window.set_ssthresh(reduced);
        self.record_decrease(loss.now);
    }

    fn on_spurious_loss(&mut self, cwnd: usize, ssthresh: usize) -> bool {
        self.window.restore(cwnd, ssthresh);
        self.epoch.undo();
        self.reno_acked_bytes = 0;
        true
    }

    fn cwnd(&self) -> usize {
        self.window.cwnd()
    }

    fn ssthresh(&self) -> usize {
        self.window.ssthresh()
    }

    fn state(&self) -> CcState {
        self.window.state(self.epoch.in_recovery())
    }

    /// Section 3.4, spike suppression: SegSpacing = RTT × MaxSegment /
    /// WindowSize, at most `spike_burst_packets` per SegSpacing, not in slow
    /// start.
    ///
    /// With `profile=quic` (the default, see the module docs), slow start is
    /// paced too, at `slow_start_pacing_gain` × cwnd / RTT.
    fn pacing(&self) -> Option<Pacing> {
        let rtt = self.smoothed_rtt.or(self.base_rtt.base_rtt());
        self.config
            .pacing
            .pacing(self.window.in_slow_start(), self.window.cwnd(), rtt)
    }

    fn internals(&self, out: &mut Internals) {
        out.text(
            "flavour",
            match self.flavour {
                VegasFlavour::Paper => "paper",
                VegasFlavour::Linux => "linux",
            },
        );
        out.float("cwnd_packets", self.window.cwnd_packets());
        match &self.congestion_avoidance {
            Some(rule) => rule.internals(out),
            None => {
                out.float("alpha", self.config.alpha);
                out.float("beta", self.config.beta);
            }
        }
        out.float("gamma", self.config.gamma);
        if let Some(base) = self.base_rtt.base_rtt() {
            out.millis("base_rtt_ms", base);
        }
        if let Some(round_rtt) = self
            .rounds
            .last_completed()
            .and_then(|r| r.rtt(self.config.round_rtt))
        {
            out.millis("round_rtt_ms", round_rtt);
        }
        if let Some(d) = self.last_decision {
            out.float("diff_packets", d.diff_packets);
            if d.expected_bits_per_sec.is_finite() && d.actual_bits_per_sec.is_finite() {
                out.float("expected_bps", d.expected_bits_per_sec);
                out.float("actual_bps", d.actual_bits_per_sec);
            }
        }
        if let Some(round) = self.rounds.current() {
            out.int("round", round.index);
        }
        if self.flavour == VegasFlavour::Paper {
            out.int("ss_growth_round", u64::from(self.ss_growth_round));
        }
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: usize) {
        // Vegas counts in packets: keep the window's packet count.
        self.window.rescale_to(max_datagram_size);
        self.rounds.set_max_datagram_size(max_datagram_size);
        self.reno_acked_bytes = 0;
    }
}

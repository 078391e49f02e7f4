//! RoVegas (Chan, Chan, Chen, Chiu; "Design and performance evaluation of an
//! improved TCP congestion avoidance scheme"), 002_7f811f836ada7a25.txt,
//! section 3.
//!
//! Vegas mistakes queueing on the ACK path for queueing of its own data and
//! shrinks its window for nothing. RoVegas splits the round trip into forward
//! and backward queueing times and changes two things of Vegas, nothing else:
//!
//! - **BaseRTT** from probing ACKs (section 3's pseudo-code):
//!
//!   ```text
//!   if (the ACK is a probing packet)
//!       baseRTTtemp = RTT − (AQT + AQT-echo)
//!       if (baseRTTtemp < baseRTT) baseRTT = baseRTTtemp
//!   else
//!       if (RTT < baseRTT) baseRTT = RTT
//!   ```
//!
//!   AQT is the backward queueing time QTb the ACK accumulated, AQT-echo the
//!   forward queueing time QTf the acknowledged packet accumulated.
//! - **actual' = CWND / (RTT − QTb)** (eq. 2), the throughput without the
//!   backward queueing, and diff = (expected − actual') × baseRTT with
//!   expected = CWND / baseRTT; then eq. (3) once per RTT:
//!
//!   ```text
//!   w_next = w_cur + 1   if diff < alpha
//!            w_cur − 1   if diff > beta
//!            w_cur       if alpha <= diff <= beta
//!   ```
//!
//! Everything else is Vegas's ([`crate::vegas`], 004_039b3aff67042154.txt):
//! the once-per-RTT round, slow start and its gamma exit, loss reaction,
//! persistent congestion, pacing (spike suppression, and the `profile`:
//! slow start paced by default as RFC 9002 section 7.7 asks, unpaced with
//! `profile=paper` as in the paper). The controller is the Vegas skeleton
//! with [`RoVegasRules`], which change only how an ACK's RTTs are read
//! ([`VegasRules::rtt_adjustment`]): every packet's RTT becomes RTT − QTb,
//! which is exactly eq. (2) (Vegas's Actual computed on that RTT *is*
//! actual'), and the probing sample RTT − (QTb + QTf) is offered to BaseRTT
//! first. Vegas's own BaseRTT sample from the same ACK is then RTT − QTb,
//! never smaller, so BaseRTT is exactly the pseudo-code's minimum. Diff is
//! Vegas's [`crate::shared::vegas_diff`], the round is its
//! [`crate::shared::round_clock`], and eq. (3) is Vegas's linear step.
//!
//! # Where the queueing times come from
//!
//! Per ACK, the first of these that yields a usable value:
//!
//! 1. `aqt`: the queueing-time extension (issue 4's QUIC form of the AQT IP
//!    option): [`AckedPacket::forward_queueing`](crate::events::AckedPacket::forward_queueing) is AQT-echo,
//!    [`AckEvent::backward_queueing`] is AQT.
//! 2. `receive_timestamps`: estimated by
//!    [`crate::shared::queueing_estimate`] from the peer's receive timestamps
//!    and ACK delay (forward: one-way delay minus its rising minimum;
//!    backward: ACK arrival − (receive time of the largest acknowledged + ACK
//!    delay), minus its rising minimum). Robust to the clocks' offset and to
//!    their drift over a long transfer (see that module). The estimator is fed
//!    with every ACK that carries receive times, even while AQT is used, so
//!    that it is ready when AQT disappears.
//! 3. `none`: no correction; RoVegas is then exactly `vegas` (the tests
//!    compare the two event by event).
//!
//! `delay_source` restricts this to one source (`aqt`, `receive_timestamps`)
//! or none at all; the default `auto` is the order above. qlog reports
//! `delay_source`, `qt_forward_ms` and `qt_backward_ms` (the source, QTf and
//! QTb applied to an ACK; zero with `none`), besides Vegas's `base_rtt_ms`,
//! `diff_packets` (RoVegas's diff), `alpha`, `beta`, `gamma`, `expected_bps`
//! and `actual_bps` (actual'). Vegas's `round_rtt_ms` is reported as
//! `rtt_minus_qtb_ms`: the round's RTT − QTb, the denominator of actual'.
//!
//! QTf and QTb move on nearly every ACK (by microseconds: each ACK is a new
//! sample), so qlog shows the three as they were applied at the points
//! where the algorithm reads them for a decision — at every round whose
//! diff is computed (the ACK that ended it; eq. 3 or slow start's gamma
//! test reads that diff) and on every ACK that changed BaseRTT (whose
//! RTT − (QTb + QTf) became the minimum, the pseudo-code's baseRTTtemp) —
//! and in between when the source changed or QTf or QTb moved from the
//! value shown by more than a [`SHOW_MOVE_DIVISOR`]th of it and at least
//! [`SHOW_MOVE_AT_LEAST`]. Each ACK's own values are what the rules use;
//! only what qlog shows is coarser.
//!
//! # Where the paper is ambiguous
//!
//! - **Slow start.** Section 3 changes only congestion avoidance; RoVegas is
//!   Vegas otherwise, so slow start is Vegas's (growth every other RTT) and its
//!   exit compares *RoVegas's* diff with gamma: backward queueing does not end
//!   slow start either. Tested.
//! - **One ACK, several packets.** In QUIC one ACK acknowledges many packets;
//!   AQT-echo is per packet, AQT per ACK (it is the ACK datagram's). The
//!   ACK's BaseRTT sample is the smallest RTT − QTb − QTf over its packets;
//!   the RTT Vegas sees for each packet is its RTT − QTb. `qt_forward_ms`
//!   reports the QTf of the packet that gave the BaseRTT sample.
//! - **"Newly measured RTT".** The round's RTT (now RTT − QTb) is Vegas's:
//!   the distinguished packet's by default (`round_rtt`), so that without
//!   queueing information RoVegas is exactly `vegas`. Section 4 simulates
//!   RoVegas and Vegas with ns-2, which averages the round's RTTs;
//!   `round_rtt=mean` on both gives that reading.
//! - **A probing ACK with only one of the two values** (one direction without
//!   AQT-enabled routers, or an ACK that echoes no packet's AQT): the missing
//!   one counts as zero queueing. RTT − (known queueing) is still at least the
//!   fixed delay, so the BaseRTT minimum stays correct, merely less tight; the
//!   paper's non-probing case is the case where both are missing.
//! - **Partial deployment** (section 4.3): values from AQT routers that see
//!   only part of the queue are used as they are; they under-correct, which
//!   is towards Vegas, never past it.
//! - **Which source, when several are present**: one per ACK, in the order
//!   above; the two directions are not mixed from different sources.
//! - **Impossible values.** The paper trusts its routers. Here QTb must be
//!   shorter than every RTT sample of its ACK, and QTf + QTb shorter than
//!   the packet's RTT (so that RTT − QTb and baseRTTtemp stay positive); a
//!   value that is not is ignored for that ACK (counted in
//!   `queueing_rejects`), and if nothing of a source is left, the next source
//!   is tried. Estimated values are bounded much more tightly by the
//!   estimator. A receiver that reports large but possible AQT-echo values
//!   lowers BaseRTT and only slows its own transfer, like one that inflates
//!   its ACK delay.
//! - **ACK delay.** Vegas's RTTs include the peer's ACK delay; so do
//!   RoVegas's, so that with no queueing information the two are identical.
//!   The estimator uses ACK delay only to split the round trip.
//! - **Spike suppression** paces at 2 × cwnd / smoothed RTT as in `vegas`, with
//!   the stack's smoothed RTT (backward queueing included): pacing only
//!   spreads the window over the RTT the ACKs actually take.
//! - **Constants.** The paper's only constants are alpha and beta (1 and 3 in
//!   section 4, Vegas's). The parameter table is `vegas`'s in full (gamma and
//!   the silent-paper factors keep Vegas's defaults and meaning) plus
//!   `delay_source` and the estimator's `clock_drift_ppm` (when the
//!   peer's clock stepped is the host's verdict, `shared/peer_clock.rs`,
//!   the same for every controller).

use std::time::{Duration, Instant};

use crate::choice_param_type;
use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{CongestionController, Internals, KeyedGeneration};
use crate::events::AckEvent;
use crate::params::{concat_params, ChoiceParam, Key, ParamInfo, ParamKind, ParamValues};
use crate::shared::base_rtt::BaseRttTracker;
use crate::shared::peer_reports::GRANULARITY;
use crate::shared::queueing_estimate::{
    AckEstimate, EstimatorConfig, QueueingEstimator, DEFAULT_CLOCK_DRIFT_PPM,
};
use crate::shared::window::Window;
use crate::vegas::{
    paper_diff, LinearStep, PaperKeys, RoundDiff, RoundMeasurement, RoundView, RttAdjustment,
    ScaledLoss, Vegas, VegasConfig, VegasRules, VegasView, WindowChange, PAPER_COMMON_PARAMS,
    ROUND_RTT_DISTINGUISHED,
};

/// Values of the `delay_source` parameter, in the order of its indices.
const SOURCE_WORDS: &[&str] = &["auto", "aqt", "receive_timestamps", "none"];

/// RoVegas's own parameters, after Vegas's.
const OWN_PARAMS: &[ParamInfo] = &[
    // Vegas's own round RTT: RoVegas changes BaseRTT and Actual, nothing
    // else (002 simulated it and its Vegas in ns-2, which averages the
    // round: `round_rtt=mean` for both gives that reading).
    ROUND_RTT_DISTINGUISHED,
    ParamInfo {
        name: "delay_source",
        default: 0.0,
        kind: ParamKind::Choice(SOURCE_WORDS),
        description: "where QTf and QTb come from: auto (aqt, else receive_timestamps, \
                      else none), or only the one named (none: behave as vegas)",
    },
    ParamInfo {
        name: "clock_drift_ppm",
        default: DEFAULT_CLOCK_DRIFT_PPM,
        kind: ParamKind::Number {
            min: 0.0,
            max: 10_000.0,
        },
        description: "receive_timestamps: largest clock rate difference tolerated; the \
                      one-way delay minimum rises at this rate (ppm of elapsed time)",
    },
];

const PARAM_COUNT: usize = PAPER_COMMON_PARAMS.len() + OWN_PARAMS.len();

/// Vegas's paper parameters followed by [`OWN_PARAMS`], so that every
/// parameter the embedded [`Vegas`] reads is present with Vegas's default.
const PARAM_TABLE: [ParamInfo; PARAM_COUNT] = concat_params(PAPER_COMMON_PARAMS, OWN_PARAMS);

/// Parameters of `rovegas`: `vegas`'s, then `delay_source` and
/// `clock_drift_ppm`.
pub static PARAMS: &[ParamInfo] = &PARAM_TABLE;

/// Where [`PARAMS`] keeps Vegas's parameters and RoVegas's own.
#[derive(Clone, Copy, Debug)]
pub struct RoVegasKeys {
    pub paper: PaperKeys,
    delay_source: Key<SourcePolicy>,
    clock_drift_ppm: Key<f64>,
}

/// [`PARAMS`]' keys.
pub const KEYS: RoVegasKeys = RoVegasKeys {
    paper: PaperKeys::in_table(&PARAM_TABLE),
    delay_source: Key::in_table(&PARAM_TABLE, "delay_source"),
    clock_drift_ppm: Key::in_table(&PARAM_TABLE, "clock_drift_ppm"),
};

/// Vegas's checks (alpha <= beta, pacing) apply unchanged.
fn validate(params: &ParamValues) -> Result<(), String> {
    KEYS.paper.validate(params)
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(RoVegas::new(params, window))
}

/// `rovegas`.
pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: "rovegas",
    description: "RoVegas: Vegas with BaseRTT = RTT - (AQT + AQT-echo) and actual' = \
                  cwnd / (RTT - QTb), queueing times from the AQT extension, else receive \
                  timestamps, else none (then Vegas)",
    params: PARAMS,
    validate,
    build,
};

/// Where the queueing times of an ACK came from, as reported in qlog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelaySource {
    Aqt,
    ReceiveTimestamps,
    None,
}

impl DelaySource {
    pub fn as_str(self) -> &'static str {
        match self {
            DelaySource::Aqt => "aqt",
            DelaySource::ReceiveTimestamps => "receive_timestamps",
            DelaySource::None => "none",
        }
    }
}

/// The `delay_source` parameter: which sources may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SourcePolicy {
    Auto,
    Only(DelaySource),
}

impl ChoiceParam for SourcePolicy {
    const WORDS: &'static [&'static str] = SOURCE_WORDS;

    fn from_index(index: usize) -> Option<Self> {
        [
            SourcePolicy::Auto,
            SourcePolicy::Only(DelaySource::Aqt),
            SourcePolicy::Only(DelaySource::ReceiveTimestamps),
            SourcePolicy::Only(DelaySource::None),
        ]
        .get(index)
        .copied()
    }
}

choice_param_type!(SourcePolicy, SourcePolicy::Auto);

impl SourcePolicy {
    fn permits(self, source: DelaySource) -> bool {
        match self {
            SourcePolicy::Auto => true,
            SourcePolicy::Only(only) => only == source,
        }
    }
}

/// The queueing times applied to an ACK, in nanoseconds (a queueing time
/// is shorter than an RTT sample of ours, so it fits a u64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Applied {
    source: DelaySource,
    /// QTf of the packet that gave the ACK's BaseRTT sample.
    qt_forward: u64,
    qt_backward: u64,
}

/// Between the decided points, qlog shows QTf or QTb anew when it moved from
/// the value shown by more than the value shown divided by this (10 %)...
pub const SHOW_MOVE_DIVISOR: u64 = 10;

/// ...and by at least this much: the timers' granularity (RFC 9002's
/// kGranularity), below which a queueing time is noise.
pub const SHOW_MOVE_AT_LEAST: Duration = GRANULARITY;

/// Nanoseconds of a queueing time (see [`Applied`]), saturating.
fn queueing_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Applied {
    const NONE: Applied = Applied {
        source: DelaySource::None,
        qt_forward: 0,
        qt_backward: 0,
    };

    /// The values qlog may stay at while it shows `self`: for QTf and QTb,
    /// the lowest and highest within a [`SHOW_MOVE_DIVISOR`]th of the
    /// value shown and at least [`SHOW_MOVE_AT_LEAST`] (see the module
    /// documentation).
    fn unmoved_ranges(&self) -> UnmovedRanges {
        const AT_LEAST: u64 = SHOW_MOVE_AT_LEAST.as_nanos() as u64;
        let range = |shown: u64| {
            let tolerance = (shown / SHOW_MOVE_DIVISOR).max(AT_LEAST);
            (
                shown.saturating_sub(tolerance),
                shown.saturating_add(tolerance),
            )
        };
        [range(self.qt_forward), range(self.qt_backward)]
    }

    /// Whether qlog, showing `shown` with `unmoved` (its
    /// [`Applied::unmoved_ranges`]), is to show `self` between decided
    /// points: one of the values left its range (moved from the value shown
    /// by more than the tolerance) or the source changed.
    #[inline]
    fn moved_from(&self, shown: &Applied, unmoved: &UnmovedRanges) -> bool {
        let out = |value: u64, (low, high): (u64, u64)| value < low || value > high;
        self.source != shown.source
            || out(self.qt_forward, unmoved[0])
            || out(self.qt_backward, unmoved[1])
    }
}

/// [`Applied::unmoved_ranges`]: (lowest, highest) of QTf, then of QTb.
type UnmovedRanges = [(u64, u64); 2];

/// The `rovegas` controller: the Vegas skeleton with RoVegas's rules.
pub type RoVegas = Vegas<RoVegasRules>;

impl Vegas<RoVegasRules> {
    /// `rovegas` with `params` from [`PARAMS`].
    pub fn new(params: &ParamValues, window: WindowConfig) -> Self {
        Vegas::with_rules(
            RoVegasRules::new(params, &KEYS),
            VegasConfig::read(params, &KEYS.paper.vegas),
            window,
        )
    }

    /// The source used for the last ACK.
    pub fn delay_source(&self) -> DelaySource {
        self.rules().applied.source
    }
}

/// RoVegas's rules; see the module documentation.
#[derive(Debug)]
pub struct RoVegasRules {
    /// Eq. (3): Vegas's linear step on RoVegas's diff.
    step: LinearStep,
    loss: ScaledLoss,
    policy: SourcePolicy,
    /// Whether `policy` permits receive timestamps.
    timestamps: bool,
    estimator: QueueingEstimator,
    /// What the last ACK applied.
    applied: Applied,
    /// What qlog shows (the module documentation says when it is updated).
    shown: Applied,
    /// `shown`'s [`Applied::unmoved_ranges`], kept with it.
    shown_unmoved: UnmovedRanges,
    /// How often `shown` changed.
    shown_changes: u64,
    /// BaseRTT as last seen, to tell the ACKs that changed it.
    base_rtt_seen: Option<Duration>,
    /// `base_rtt_seen` in nanoseconds, `u64::MAX` before the first.
    base_rtt_seen_nanos: u64,
    /// Extension values ignored as impossible.
    rejected_values: u64,
    /// Per packet of the ACK being handled: QTf from the AQT extension.
    forward: Vec<Option<Duration>>,
    internals_generation: KeyedGeneration<OwnInternalsKey>,
}

/// RoVegas's own qlog fields (alpha and beta are parameters) change only
/// when one of these counters grows: `shown_changes`, the rejects of both
/// kinds and the estimator's restarts. Their sum, compared instead of
/// filling the fields, moves exactly then (each only grows).
type OwnInternalsKey = u64;

impl RoVegasRules {
    /// From a table holding [`PARAMS`]' entries where `keys` say.
    pub fn new(params: &ParamValues, keys: &RoVegasKeys) -> Self {
        let estimator = QueueingEstimator::new(EstimatorConfig {
            clock_drift_ppm: params.value(keys.clock_drift_ppm),
        });
        let policy: SourcePolicy = params.value(keys.delay_source);
        RoVegasRules {
            step: LinearStep::from_params(params, &keys.paper.thresholds),
            loss: ScaledLoss::from_params(params, &keys.paper.loss),
            policy,
            timestamps: policy.permits(DelaySource::ReceiveTimestamps),
            estimator,
            applied: Applied::NONE,
            shown: Applied::NONE,
            shown_unmoved: Applied::NONE.unmoved_ranges(),
            shown_changes: 0,
            base_rtt_seen: None,
            base_rtt_seen_nanos: u64::MAX,
            rejected_values: 0,
            forward: Vec::new(),
            internals_generation: KeyedGeneration::default(),
        }
    }

    /// `queueing_rejects` of qlog: extension values and estimator samples
    /// refused as impossible.
    fn queueing_rejects(&self) -> u64 {
        self.rejected_values
            .saturating_add(self.estimator.rejected_samples())
    }

    /// Keeps what is possible of one source's values for `ack` in
    /// `self.forward` and returns the usable QTb, and whether anything at all
    /// is usable. QTb must be below every RTT of the ACK; QTf + QTb below its
    /// packet's RTT.
    fn keep_possible(
        &mut self,
        ack: &AckEvent<'_>,
        backward: Option<Duration>,
    ) -> (Duration, bool) {
        let shortest_rtt = ack
            .acked
            .iter()
            .map(|p| p.rtt)
            .filter(|r| !r.is_zero())
            .min();
        let Some(shortest_rtt) = shortest_rtt else {
            // No RTT to correct.
            return (Duration::ZERO, false);
        };
        let qt_backward = match backward {
            Some(q) if q < shortest_rtt => Some(q),
            Some(_) => {
                self.rejected_values = self.rejected_values.saturating_add(1);
                None
            }
            None => None,
        };
        let qb = qt_backward.unwrap_or(Duration::ZERO);
        let mut any_forward = false;
        for (slot, packet) in self.forward.iter_mut().zip(ack.acked) {
            let Some(qf) = *slot else { continue };
            let possible = !packet.rtt.is_zero() && qf.saturating_add(qb) < packet.rtt;
            if possible {
                any_forward = true;
            } else {
                *slot = None;
                if !packet.rtt.is_zero() {
                    self.rejected_values = self.rejected_values.saturating_add(1);
                }
            }
        }
        (qb, qt_backward.is_some() || any_forward)
    }

    /// Shows `applied` in qlog from now on.
    fn show_applied(&mut self) {
        if self.shown != self.applied {
            self.shown = self.applied;
            self.shown_unmoved = self.shown.unmoved_ranges();
            self.shown_changes = self.shown_changes.wrapping_add(1);
        }
    }

    /// Applies `applied` to the ACK, shown in qlog if it moved.
    #[inline]
    fn apply(&mut self, applied: Applied) {
        self.applied = applied;
        if applied.moved_from(&self.shown, &self.shown_unmoved) {
            self.show_applied();
        }
    }

    /// [`VegasRules::rtt_adjustment`] for any ACK.
    #[inline(never)]
    fn any_rtt_adjustment(&mut self, ack: &AckEvent<'_>, min_sample_size: usize) -> RttAdjustment {
        // The estimator sees every ACK, so that it is ready when AQT is not.
        let estimate = if self.timestamps {
            self.estimator.on_ack_nanos(ack, min_sample_size)
        } else {
            AckEstimate::default()
        };
        let aqt_present = ack.backward_queueing.is_some()
            || ack.acked.iter().any(|p| p.forward_queueing.is_some());
        if aqt_present && self.policy.permits(DelaySource::Aqt) {
            if let Some(adjustment) = self.aqt_adjustment(ack, min_sample_size) {
                return adjustment;
            }
        }
        // Source 2 (an estimate exists only if the policy permits it).
        if estimate.backward.is_some() || estimate.any_forward {
            return self.estimated(estimate);
        }
        // Non-probing ACK: "if (RTT < baseRTT) baseRTT = RTT", and
        // actual' = actual. Exactly Vegas.
        self.apply(Applied::NONE);
        RttAdjustment::default()
    }

    /// Source 2, the estimator's values: a probing ACK. They are possible
    /// by construction (its joint bound: QTf + QTb <= RTT - min RTT < RTT
    /// for every packet with an RTT), so every term of baseRTTtemp (the
    /// estimator's least queued packet) is positive.
    #[inline(always)]
    fn estimated(&mut self, estimate: AckEstimate) -> RttAdjustment {
        let qt_backward = estimate.backward.unwrap_or(0);
        self.apply(Applied {
            source: DelaySource::ReceiveTimestamps,
            qt_forward: estimate.least_queued.map_or(0, |(_, qf)| qf),
            qt_backward,
        });
        RttAdjustment {
            // Eq. (2): Vegas's Actual on RTT − QTb is actual'. The skeleton
            // reads only RTT samples (packets of its sample size with an
            // RTT); an ACK without one has no least queued packet, nothing
            // to subtract from, and is spared the adjusted event.
            subtract: if estimate.least_queued.is_some() {
                Duration::from_nanos(qt_backward)
            } else {
                Duration::ZERO
            },
            // "if (baseRTTtemp < baseRTT) baseRTT = baseRTTtemp": a sample
            // not below BaseRTT is not offered. BaseRTT moves only by this
            // probe and by on_base_rtt_sample(), which follows every ACK
            // with a probe and keeps `base_rtt_seen` (the skeleton's only
            // other writer of BaseRTT, a rule's round end, is not used).
            base_rtt_probe: estimate
                .least_queued
                .filter(|&(temp, _)| temp < self.base_rtt_seen_nanos)
                .map(|(temp, _)| Duration::from_nanos(temp)),
        }
    }

    /// Source 1, AQT, for an ACK that carries some: the adjustment, `None`
    /// if nothing of it is usable. Out of line: the extension is rare.
    #[inline(never)]
    fn aqt_adjustment(
        &mut self,
        ack: &AckEvent<'_>,
        min_sample_size: usize,
    ) -> Option<RttAdjustment> {
        self.forward.clear();
        self.forward
            .extend(ack.acked.iter().map(|p| p.forward_queueing));
        let (qt_backward, usable) = self.keep_possible(ack, ack.backward_queueing);
        if !usable {
            return None;
        }
        // baseRTTtemp = RTT − (AQT + AQT-echo), the smallest over the
        // ACK's packets. keep_possible() made every term positive. Only
        // full-size packets' RTTs are samples, as in Vegas.
        let mut base_sample: Option<(Duration, Duration)> = None;
        for (packet, qf) in ack.acked.iter().zip(&self.forward) {
            if packet.rtt.is_zero() || packet.size < min_sample_size {
                continue;
            }
            let qf = qf.unwrap_or(Duration::ZERO);
            let temp = packet.rtt.saturating_sub(qt_backward).saturating_sub(qf);
            if base_sample.is_none_or(|(best, _)| temp < best) {
                base_sample = Some((temp, qf));
            }
        }
        self.apply(Applied {
            source: DelaySource::Aqt,
            qt_forward: base_sample.map_or(0, |(_, qf)| queueing_nanos(qf)),
            qt_backward: queueing_nanos(qt_backward),
        });
        Some(RttAdjustment {
            subtract: qt_backward,
            base_rtt_probe: base_sample.map(|(temp, _)| temp),
        })
    }
}

impl VegasRules for RoVegasRules {
    fn name(&self) -> &'static str {
        INFO.name
    }

    /// Picks the ACK's source (module documentation, sources 1 to 3); a
    /// probing ACK gives BaseRTT the sample RTT − (AQT + AQT-echo) and every
    /// RTT becomes RTT − QTb (eq. 2). Inlined into the skeleton's ACK:
    /// the adjustment then stays in registers.
    #[inline(always)]
    fn rtt_adjustment(&mut self, ack: &AckEvent<'_>, min_sample_size: usize) -> RttAdjustment {
        // The usual ACK: one packet, no AQT, the estimator's usual case
        // (which needs floors, so an estimator fed before: only if the
        // policy permits receive timestamps).
        if let [packet] = ack.acked {
            if ack.backward_queueing.is_none() && packet.forward_queueing.is_none() {
                if let Some((estimate, _)) =
                    self.estimator.on_usual_ack(ack, packet, min_sample_size)
                {
                    return self.estimated(estimate);
                }
            }
        }
        self.any_rtt_adjustment(ack, min_sample_size)
    }

    /// The pseudo-code's "if (RTT < baseRTT) baseRTT = RTT" (002, section
    /// 3), Vegas's minimum; an ACK that changed BaseRTT (by its probe,
    /// offered before, or by this sample) is shown in qlog.
    fn on_base_rtt_sample(
        &mut self,
        rtt: Duration,
        _now: Instant,
        _window: &Window,
        base_rtt: &mut BaseRttTracker,
    ) {
        base_rtt.on_rtt_sample(rtt);
        let current = base_rtt.base_rtt();
        if current != self.base_rtt_seen {
            self.base_rtt_seen = current;
            self.base_rtt_seen_nanos = current.map_or(u64::MAX, queueing_nanos);
            self.show_applied();
        }
    }

    /// diff = (expected − actual') × baseRTT (002, section 3): Vegas's Diff
    /// on the skeleton's RTT − QTb, which makes Actual actual' (eq. 2). The
    /// round's decision reads the queueing times here, so qlog shows those
    /// of the ACK that ended the round.
    fn diff(&mut self, round: &RoundMeasurement<'_>) -> Option<RoundDiff> {
        self.show_applied();
        paper_diff(round.window, round.base_rtt?, round.round_rtt?)
    }

    fn congestion_avoidance_round(&mut self, round: &RoundView<'_>, diff: f64) -> WindowChange {
        self.step.step(round, diff).into()
    }

    fn scaled_loss(&self) -> Option<&ScaledLoss> {
        Some(&self.loss)
    }

    /// Vegas's fields, the round's RTT − QTb as `rtt_minus_qtb_ms`, then
    /// RoVegas's own.
    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals) {
        vegas.write_cwnd(out);
        self.step.internals(out);
        vegas.write_measurements("rtt_minus_qtb_ms", out);
        vegas.write_growth_round(out);
        out.text("delay_source", self.shown.source.as_str());
        out.millis("qt_forward_ms", Duration::from_nanos(self.shown.qt_forward));
        out.millis(
            "qt_backward_ms",
            Duration::from_nanos(self.shown.qt_backward),
        );
        out.int("queueing_rejects", self.queueing_rejects());
        // The floors restarted on a new peer clock (the host's verdict).
        out.int("estimator_resyncs", self.estimator.clock_steps());
    }

    fn internals_generation(&self) -> Option<u64> {
        Some(
            self.internals_generation.of(self
                .shown_changes
                .wrapping_add(self.rejected_values)
                .wrapping_add(self.estimator.rejected_samples())
                .wrapping_add(self.estimator.clock_steps())),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_holds_every_vegas_parameter_with_its_default() {
        for vegas in PAPER_COMMON_PARAMS {
            let ours = PARAMS
                .iter()
                .find(|p| p.name == vegas.name)
                .unwrap_or_else(|| panic!("{} missing", vegas.name));
            assert_eq!(ours, vegas);
        }
        for own in OWN_PARAMS {
            assert_eq!(PARAMS.iter().filter(|p| p.name == own.name).count(), 1);
        }
        let values = ParamValues::defaults(INFO.name, PARAMS);
        assert_eq!(values.value(KEYS.delay_source), SourcePolicy::Auto);
        assert_eq!(
            values.value(KEYS.paper.thresholds.alpha),
            1.0,
            "section 4: a = 1"
        );
        assert_eq!(
            values.value(KEYS.paper.thresholds.beta),
            3.0,
            "section 4: b = 3"
        );
    }

    #[test]
    fn qlog_shows_a_value_anew_exactly_when_it_moved_beyond_the_tolerance() {
        // The reference: |value − shown| > max(shown / 10, 1 ms).
        let moved = |value: u64, shown: u64| {
            value.abs_diff(shown) > (shown / SHOW_MOVE_DIVISOR).max(1_000_000)
        };
        let values = [
            0,
            1,
            999_999,
            1_000_000,
            1_000_001,
            9_999_999,
            10_000_000,
            11_000_000,
            11_000_001,
            u64::MAX / 2,
            u64::MAX - 1,
            u64::MAX,
        ];
        let applied = |qt_forward, qt_backward| Applied {
            source: DelaySource::ReceiveTimestamps,
            qt_forward,
            qt_backward,
        };
        for &shown in &values {
            for &value in &values {
                let shown_applied = applied(shown, 0);
                let ranges = shown_applied.unmoved_ranges();
                assert_eq!(
                    applied(value, 0).moved_from(&shown_applied, &ranges),
                    moved(value, shown),
                    "forward {value} shown {shown}"
                );
                let shown_applied = applied(0, shown);
                let ranges = shown_applied.unmoved_ranges();
                assert_eq!(
                    applied(0, value).moved_from(&shown_applied, &ranges),
                    moved(value, shown),
                    "backward {value} shown {shown}"
                );
            }
        }
        let shown = applied(5, 5);
        let none = Applied::NONE;
        assert!(none.moved_from(&shown, &shown.unmoved_ranges()), "source");
    }

    #[test]
    fn base_rtt_is_the_minimum_of_every_probe_and_sample() {
        // RoVegas offers BaseRTT only the probes below it (and takes its
        // usual ACKs apart from the others): BaseRTT must still be the
        // pseudo-code's minimum over every probe RTT − (QTb + QTf) and every
        // sample RTT − QTb, computed here with an estimator of its own.
        use crate::controller::WindowConfig;
        use crate::events::{AckSummary, AckedPacket, RttSnapshot};
        let params = ParamValues::defaults(INFO.name, PARAMS);
        let mut rules = RoVegasRules::new(&params, &KEYS);
        let mut reference = QueueingEstimator::new(EstimatorConfig::default());
        let window = Window::new(WindowConfig {
            max_datagram_size: 1200,
            initial_cwnd_packets: 10,
        });
        let mut base_rtt = BaseRttTracker::new();
        let mut want: Option<Duration> = None;
        let full = 1000;
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let us = Duration::from_micros;
        let mut pkt = 0;
        for k in 0u64..3000 {
            // The path's fixed delay falls now and then (BaseRTT follows),
            // queueing swells and drains in both directions.
            let fixed = ms(600) - ms(k / 300 * 7);
            let (qf, qb) = (us((k * 37) % 9000), us((k * 53) % 7000));
            let sent = t0 + ms(k * 3);
            let rtt = fixed + qf + qb;
            let count = if k % 89 == 0 { 2 } else { 1 };
            let mut packets = Vec::new();
            for _ in 0..count {
                let size = if k % 4 == 0 { 600 } else { 1200 };
                let mut p = AckedPacket::new(pkt, size, sent, sent + rtt);
                p.receive_time = Some(ms(9_000) + (sent - t0) + fixed / 2 + qf);
                packets.push(p);
                pkt += 1;
            }
            let ack = AckEvent {
                now: sent + rtt,
                acked: &packets,
                summary: AckSummary::of(&packets, full),
                ack_delay: ms(1),
                rtt: RttSnapshot::uniform(rtt),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            };
            // As the skeleton does: the probe, then the ACK's sample.
            let adjustment = rules.rtt_adjustment(&ack, full);
            if let Some(probe) = adjustment.base_rtt_probe {
                base_rtt.on_rtt_sample(probe);
            }
            if let Some(sample) = ack.summary.min_rtt {
                rules.on_base_rtt_sample(
                    sample - adjustment.subtract,
                    ack.now,
                    &window,
                    &mut base_rtt,
                );
            }
            // The reference.
            let mut forward = Vec::new();
            let backward = reference.on_ack(&ack, &mut forward);
            let qb = backward.unwrap_or(Duration::ZERO);
            // QTb is subtracted from RTT samples: an ACK without one
            // (only small packets) needs none.
            let sampled = packets.iter().any(|p| p.size >= full);
            let want_subtract = if sampled { qb } else { Duration::ZERO };
            assert_eq!(adjustment.subtract, want_subtract, "ACK {k}");
            for (p, qf) in packets.iter().zip(&forward) {
                if p.size >= full {
                    let temp = p.rtt - qb - qf.unwrap_or(Duration::ZERO);
                    want = Some(want.map_or(temp, |w| w.min(temp)));
                }
            }
            assert_eq!(base_rtt.base_rtt(), want, "ACK {k}");
        }
        // BaseRTT followed the path down (to its last fixed delay, 537 ms).
        assert!(want.is_some_and(|w| w < ms(545)), "{want:?}");
    }

    #[test]
    fn source_names_are_the_qlog_words() {
        assert_eq!(DelaySource::Aqt.as_str(), "aqt");
        assert_eq!(
            DelaySource::ReceiveTimestamps.as_str(),
            "receive_timestamps"
        );
        assert_eq!(DelaySource::None.as_str(), "none");
        assert_eq!(SOURCE_WORDS[1..], ["aqt", "receive_timestamps", "none"]);
    }
}

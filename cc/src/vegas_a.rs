//! TCP Vegas-A (Srijith, Jacob, Ananda) as 000_625d42b67da1ab13.txt (Li, Zhu,
//! He) gives it in section II.B, Fig. 1: Vegas whose thresholds α and β are
//! not fixed but move with the throughput of this round, Th(i), against the
//! throughput of the last round, Th(i − 1). α never drops below 1.
//!
//! Once per RTT in congestion avoidance (000_625d42b67da1ab13.txt, Fig. 1):
//!
//! ```text
//!  1: if α < Diff < β then
//!  2:     if Th(i) > Th(i−1) then
//!  3:         Cwnd(i+1) = Cwnd(i) + 1, α = α + 1, β = β + 1
//!  4:     else
//!  5:         no update of Cwnd(i+1), α and β
//!  7: else if Diff < α then
//!  8:     if α > 1 then
//!  9:         if Th(i) > Th(i−1) then
//! 10:             Cwnd(i+1) = Cwnd(i) + 1
//! 11:         else
//! 12:             Cwnd(i+1) = Cwnd(i) − 1, α = α − 1, β = β − 1
//! 14:     else if α = 1 then
//! 15:         Cwnd(i+1) = Cwnd(i) + 1
//! 17: else if Diff > β then
//! 18:     if α > 1 then
//! 19:         Cwnd(i+1) = Cwnd(i) − 1, α = α − 1, β = β − 1
//! 20:     else
//! 21:         no update of Cwnd(i+1), α and β
//! ```
//!
//! [`Fig1::decide`] is this listing line for line. It returns a [`Step`] that
//! names the line taken; [`VegasA::apply`] carries the step out. Vegas-L
//! ([`crate::vegas_l`]) takes the same decision and scales it before applying
//! it.
//!
//! Where the inputs come from:
//!
//! - Diff = (Expected_Th − Actual_Th) × Base (eqs. 1–3), in packets, is
//!   [`VegasDiff`](crate::shared::vegas_diff::VegasDiff)'s as Vegas computes
//!   it for the round: Base is the smallest RTT seen
//!   ([`BaseRttTracker`](crate::shared::base_rtt::BaseRttTracker)), the
//!   round's RTT is the distinguished segment's, as Vegas's (004) is
//!   (`round_rtt`, below).
//! - Th(i) is the throughput of round i: the bytes acknowledged in the round
//!   over the round's duration ([`CompletedRound::throughput_bytes_per_sec`],
//!   rounds of the [`RoundClock`](crate::shared::round_clock::RoundClock)).
//!   [`ThroughputHistory`] keeps Th(i), Th(i − 1) and Th(i − 2).
//! - Everything that is not Fig. 1 — slow start, the reaction to loss,
//!   persistent congestion, spike suppression — is Vegas's
//!   (004_039b3aff67042154.txt, [`crate::vegas`]), unchanged and with Vegas's
//!   parameters: the controller is the Vegas skeleton with [`VegasA`] as its
//!   rules, which replace only the congestion-avoidance round
//!   ([`VegasRules::congestion_avoidance_round`]) and the qlog fields. The
//!   paper describes Vegas-A only by Fig. 1.
//! - Pacing too is Vegas's ([`crate::shared::pacing_profile`]): by default
//!   (`profile=quic`) slow start is paced as RFC 9002 section 7.7 asks, and
//!   spike suppression paces the rest; `profile=paper` leaves slow start
//!   unpaced, as Vegas's paper (and hence 000's Vegas-A) does.
//!
//! # Where the paper is ambiguous
//!
//! - **Diff equal to α or to β.** Every comparison of Fig. 1 is strict, so
//!   Diff = α or Diff = β takes no branch and nothing is updated
//!   ([`Fig1Line::Boundary`]); Vegas's eq. (4) leaves the same gap.
//! - **"α > 1" and "α = 1", and the floor.** α never goes below `alpha_min`
//!   (1), so lines 8 and 18 read α > `alpha_min` and lines 14 and 20 cover
//!   the rest, which is α = `alpha_min`. The initial α must be at least
//!   `alpha_min`. A decrease that would take α below `alpha_min` (only
//!   possible with a fractional α or with Vegas-L's doubled steps) stops α at
//!   `alpha_min`, and β moves by what α actually moved, so that β − α keeps
//!   its configured width.
//! - **Th(i) = Th(i − 1)** is not "Th(i) > Th(i − 1)": lines 5 and 12.
//! - **No Th(i − 1).** Round i − 1 must be the round just before round i,
//!   and both must be congestion-avoidance rounds Vegas evaluated. There is
//!   none for the first round after slow start, after the recovery from a
//!   loss (whose rounds Vegas does not evaluate), after a round with too few
//!   RTT samples or of zero duration. Then the lines that compare throughputs
//!   (2–5 and 9–12) update nothing ([`Fig1Line::NoPreviousThroughput`]), and
//!   lines 15, 19 and 21, which do not compare them, act as usual.
//! - **Units.** α, β and their step are packets, Diff's unit. The cwnd step
//!   is packets of the maximum datagram size, added to the window in bytes;
//!   fractions of a byte (Vegas-L's half steps with an odd datagram size) are
//!   carried to the next step ([`PacketStepAccumulator`]). Th is bytes per
//!   second (bits per second in qlog).
//! - **Application-limited rounds.** In a round in which the sender was
//!   application-limited, a step that grows cwnd (lines 3, 10, 15) is not
//!   taken at all, α and β included: the throughput says nothing about the
//!   path then (RFC 9002 section 7.8; Vegas does the same). Decreases apply.
//!   The round's throughput still becomes Th(i − 1) for the next round.
//! - **Line 21** (`above_beta_at_alpha_min`). Taken as printed, Diff > β with
//!   α = 1 updates nothing: once α is at its floor nothing shrinks the
//!   window, and Vegas-A keeps whatever queue it has. `hold` is line 21 as
//!   printed in 000; `decrease` is Vegas's own rule for Diff > β (Cwnd − 1,
//!   as line 19 does while α > 1), α and β left at the floor. We could not
//!   read Vegas-A's original publication (Srijith, Jacob, Ananda) here to
//!   tell which it meant. The default, `by_profile`, takes the paper as
//!   printed under `profile=paper` (`hold`, what the reproduction runs) and
//!   Vegas's rule under `profile=quic` (`decrease`). Neither bounds the
//!   queue as Vegas's fixed β does: on the RoVegas VBR scenario
//!   (`vegas-sim run interop/scenarios/rovegas-single-bottleneck-vbr.toml
//!   --cc vegas-a --cc-param above_beta_at_alpha_min=decrease|hold --seed
//!   1`, measured before the papers' scenarios took a 2-packet initial
//!   window) the flow's mean queueing delay was 216.6 ms with `decrease`
//!   and 53.1 ms with `hold`, against Vegas's 19.7 ms. Each decrease lowers
//!   the throughput, the next round's regain raises it, and Fig. 1 answers a
//!   rising throughput with α + 1, β + 1: α climbed to 43 packets within
//!   30 s (qlog `alpha`), so the decrease at the floor feeds the
//!   thresholds' ratchet. With `hold` α stays at 1-2 and the window rests
//!   on the queue slow start left.
//! - **Losses** leave α and β where they are; Fig. 1 moves them only in
//!   congestion avoidance.
//! - **When Cwnd(i + 1) takes effect.** At the end of round i, at once, as
//!   Vegas applies its own step.

use crate::choice_param_type;
use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{CongestionController, Internals, KeyedGeneration};
use crate::params::{param_named, ChoiceParam, Key, ParamInfo, ParamKind, ParamValues};
use crate::shared::pacing_profile;
use crate::shared::round_clock::CompletedRound;
use crate::vegas::{
    LossKeys, RoundView, ScaledLoss, ThresholdKeys, Vegas, VegasConfig, VegasKeys, VegasRules,
    VegasView, WindowChange, PAPER_PARAMS as VEGAS_PARAMS, ROUND_RTT_DISTINGUISHED,
};

pub const NAME: &str = "vegas-a";

const PACKETS: ParamKind = ParamKind::Number {
    min: 0.0,
    max: 1000.0,
};

/// Parameters of `vegas-a`: Fig. 1's constants, then Vegas's own for slow
/// start, losses and spike suppression (shared with `vegas`, same defaults).
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "alpha",
        default: 1.0,
        kind: PACKETS,
        description: "initial alpha, in packets (Vegas's 1, section II.A); Fig. 1 then moves it",
    },
    ParamInfo {
        name: "beta",
        default: 3.0,
        kind: PACKETS,
        description: "initial beta, in packets (Vegas's 3, section II.A); Fig. 1 then moves it",
    },
    ParamInfo {
        name: "alpha_min",
        default: 1.0,
        kind: PACKETS,
        description: "alpha never goes below this: the 1 of Fig. 1's 'alpha > 1' and 'alpha = 1'",
    },
    ParamInfo {
        name: "cwnd_step_packets",
        default: 1.0,
        kind: PACKETS,
        description: "Fig. 1's Cwnd(i+1) = Cwnd(i) +/- 1, in packets",
    },
    ParamInfo {
        name: "threshold_step_packets",
        default: 1.0,
        kind: PACKETS,
        description: "Fig. 1's alpha +/- 1 and beta +/- 1, in packets",
    },
    ParamInfo {
        name: "above_beta_at_alpha_min",
        default: 2.0,
        kind: ParamKind::Choice(AboveBetaAtFloor::WORDS),
        description: "Fig. 1 line 21, Diff > beta with alpha at its floor: decrease (cwnd - 1, \
                      Vegas's rule), hold (line 21 as printed: no update) or by_profile (hold \
                      under profile=paper, decrease under profile=quic); see the module docs \
                      for what each does to the queue",
    },
    param_named(VEGAS_PARAMS, "gamma"),
    param_named(VEGAS_PARAMS, "ss_exit_factor"),
    param_named(VEGAS_PARAMS, "loss_factor"),
    param_named(VEGAS_PARAMS, "timeout_ssthresh_factor"),
    param_named(VEGAS_PARAMS, "min_rtt_samples"),
    param_named(VEGAS_PARAMS, "profile"),
    param_named(VEGAS_PARAMS, "spike_suppression"),
    param_named(VEGAS_PARAMS, "spike_burst_packets"),
    param_named(VEGAS_PARAMS, "slow_start_pacing_gain"),
    param_named(VEGAS_PARAMS, "pacing_gain"),
    // Vegas's own round RTT (004: the distinguished segment's): Fig. 1
    // changes only the thresholds. 000 simulated Vegas-A and the Vegas it is
    // compared with in ns-2, which averages the round: `round_rtt=mean` for
    // both gives that reading.
    ROUND_RTT_DISTINGUISHED,
];

pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: NAME,
    description: "TCP Vegas-A (000_625d42b67da1ab13.txt, Fig. 1): Vegas whose alpha/beta move \
                  with this round's throughput against the last, alpha >= 1",
    params: PARAMS,
    validate,
    build,
};

/// Fig. 1 line 21's two readings (`above_beta_at_alpha_min`), or the one
/// the pacing profile implies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AboveBetaAtFloor {
    /// cwnd − 1, Vegas's rule for Diff > β.
    Decrease,
    /// No update, as Fig. 1 is printed.
    Hold,
    /// `Hold` under `profile=paper` (the paper as printed), `Decrease`
    /// under `profile=quic`.
    ByProfile,
}

impl AboveBetaAtFloor {
    /// Whether line 21 shrinks cwnd under `profile`.
    pub fn shrinks(self, profile: pacing_profile::Profile) -> bool {
        match self {
            AboveBetaAtFloor::Decrease => true,
            AboveBetaAtFloor::Hold => false,
            AboveBetaAtFloor::ByProfile => profile == pacing_profile::Profile::Quic,
        }
    }
}

impl ChoiceParam for AboveBetaAtFloor {
    const WORDS: &'static [&'static str] = &["decrease", "hold", "by_profile"];

    fn from_index(index: usize) -> Option<Self> {
        [
            AboveBetaAtFloor::Decrease,
            AboveBetaAtFloor::Hold,
            AboveBetaAtFloor::ByProfile,
        ]
        .get(index)
        .copied()
    }
}

choice_param_type!(AboveBetaAtFloor, AboveBetaAtFloor::ByProfile);

/// Where a table keeps Vegas-A's parameters: Fig. 1's, and Vegas's that
/// Vegas-A keeps. Vegas-L's table has them too.
#[derive(Clone, Copy, Debug)]
pub struct VegasAKeys {
    pub vegas: VegasKeys,
    pub thresholds: ThresholdKeys,
    pub loss: LossKeys,
    alpha_min: Key<f64>,
    cwnd_step_packets: Key<f64>,
    threshold_step_packets: Key<f64>,
    above_beta_at_alpha_min: Key<AboveBetaAtFloor>,
}

impl VegasAKeys {
    /// A table holding every entry of [`PARAMS`] by name.
    pub const fn in_table(table: &[ParamInfo]) -> Self {
        VegasAKeys {
            vegas: VegasKeys::paper(table),
            thresholds: ThresholdKeys::in_table(table),
            loss: LossKeys::in_table(table),
            alpha_min: Key::in_table(table, "alpha_min"),
            cwnd_step_packets: Key::in_table(table, "cwnd_step_packets"),
            threshold_step_packets: Key::in_table(table, "threshold_step_packets"),
            above_beta_at_alpha_min: Key::in_table(table, "above_beta_at_alpha_min"),
        }
    }

    /// `alpha_min <= alpha <= beta`, and Vegas's pacing settings.
    pub fn validate(&self, params: &ParamValues) -> Result<(), String> {
        let alpha = params.value(self.thresholds.alpha);
        let alpha_min = params.value(self.alpha_min);
        if alpha < alpha_min {
            return Err(format!(
                "alpha ({alpha}) must not be below alpha_min ({alpha_min}): alpha never goes \
                 below it"
            ));
        }
        // Vegas's alpha <= beta, and its pacing settings.
        self.thresholds.validate(params)?;
        pacing_profile::validate(params, self.vegas.pacing)
    }
}

/// [`PARAMS`]' keys.
pub const KEYS: VegasAKeys = VegasAKeys::in_table(PARAMS);

fn validate(params: &ParamValues) -> Result<(), String> {
    KEYS.validate(params)
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(Vegas::with_rules(
        VegasA::new(params, &KEYS),
        VegasConfig::read(params, &KEYS.vegas),
        window,
    ))
}

/// Which way a step moves cwnd, α and β.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Increase,
    Decrease,
    NoUpdate,
}

/// The line of Fig. 1 that decided a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fig1Line {
    /// α < Diff < β and Th(i) > Th(i − 1): Cwnd + 1, α + 1, β + 1.
    Line3,
    /// α < Diff < β, otherwise: no update.
    Line5,
    /// Diff < α, α > 1 and Th(i) > Th(i − 1): Cwnd + 1.
    Line10,
    /// Diff < α, α > 1, otherwise: Cwnd − 1, α − 1, β − 1.
    Line12,
    /// Diff < α and α = 1: Cwnd + 1.
    Line15,
    /// Diff > β and α > 1: Cwnd − 1, α − 1, β − 1.
    Line19,
    /// Diff > β and α = 1: no update as Fig. 1 is printed, Cwnd − 1 where
    /// `above_beta_at_alpha_min` reads Vegas's rule (see the module docs).
    Line21,
    /// Diff = α or Diff = β: Fig. 1 has no branch; no update.
    Boundary,
    /// Lines 2 and 9 without a Th(i − 1) to compare with: no update.
    NoPreviousThroughput,
}

impl Fig1Line {
    /// The line's number in Fig. 1; 0 where Fig. 1 has no line.
    pub fn number(self) -> u64 {
        match self {
            Fig1Line::Line3 => 3,
            Fig1Line::Line5 => 5,
            Fig1Line::Line10 => 10,
            Fig1Line::Line12 => 12,
            Fig1Line::Line15 => 15,
            Fig1Line::Line19 => 19,
            Fig1Line::Line21 => 21,
            Fig1Line::Boundary | Fig1Line::NoPreviousThroughput => 0,
        }
    }

    pub fn direction(self) -> Direction {
        match self {
            Fig1Line::Line3 | Fig1Line::Line10 | Fig1Line::Line15 => Direction::Increase,
            Fig1Line::Line12 | Fig1Line::Line19 => Direction::Decrease,
            Fig1Line::Line5
            | Fig1Line::Line21
            | Fig1Line::Boundary
            | Fig1Line::NoPreviousThroughput => Direction::NoUpdate,
        }
    }
}

/// What one round does to cwnd, α and β.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub line: Fig1Line,
    /// Change of cwnd, in packets.
    pub cwnd_packets: f64,
    /// Change of α and of β, in packets.
    pub threshold_packets: f64,
}

impl Step {
    fn no_update(line: Fig1Line) -> Self {
        Step {
            line,
            cwnd_packets: 0.0,
            threshold_packets: 0.0,
        }
    }

    /// Which way the step moves cwnd (or, if not cwnd, α and β).
    pub fn direction(&self) -> Direction {
        let moved = if self.cwnd_packets != 0.0 {
            self.cwnd_packets
        } else {
            self.threshold_packets
        };
        if moved > 0.0 {
            Direction::Increase
        } else if moved < 0.0 {
            Direction::Decrease
        } else {
            Direction::NoUpdate
        }
    }

    /// The same step, `factor` times as large (Vegas-L's cases).
    pub fn scaled(self, factor: f64) -> Self {
        Step {
            line: self.line,
            cwnd_packets: self.cwnd_packets * factor,
            threshold_packets: self.threshold_packets * factor,
        }
    }
}

/// α and β, in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    pub alpha: f64,
    pub beta: f64,
}

impl Thresholds {
    /// α and β move by `by`, but α not below `alpha_min`; β moves by what α
    /// moved.
    pub fn shift(&mut self, by: f64, alpha_min: f64) {
        let alpha = (self.alpha + by).max(alpha_min);
        let moved = alpha - self.alpha;
        if !moved.is_finite() {
            return;
        }
        self.alpha = alpha;
        self.beta += moved;
    }
}

/// The constants of Fig. 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fig1 {
    /// The "1" of "α > 1" and "α = 1": α's floor.
    pub alpha_min: f64,
    /// The "1" of "Cwnd(i) ± 1", in packets.
    pub cwnd_step_packets: f64,
    /// The "1" of "α ± 1" and "β ± 1", in packets.
    pub threshold_step_packets: f64,
    /// Line 21 (Diff > β at α's floor) shrinks cwnd by one step instead of
    /// leaving it (see the module docs).
    pub shrink_above_beta_at_floor: bool,
}

impl Fig1 {
    pub fn from_params(params: &ParamValues, keys: &VegasAKeys) -> Self {
        Fig1 {
            alpha_min: params.value(keys.alpha_min),
            cwnd_step_packets: params.value(keys.cwnd_step_packets),
            threshold_step_packets: params.value(keys.threshold_step_packets),
            shrink_above_beta_at_floor: params
                .value(keys.above_beta_at_alpha_min)
                .shrinks(pacing_profile::PacingProfile::read(params, keys.vegas.pacing).profile),
        }
    }

    /// Fig. 1 for one round: Diff in packets, the current α and β, and
    /// whether Th(i) > Th(i − 1) (`None` if there is no Th(i − 1)).
    pub fn decide(&self, diff: f64, t: Thresholds, throughput_rose: Option<bool>) -> Step {
        let grow_all = |line| Step {
            line,
            cwnd_packets: self.cwnd_step_packets,
            threshold_packets: self.threshold_step_packets,
        };
        let grow_cwnd = |line| Step {
            line,
            cwnd_packets: self.cwnd_step_packets,
            threshold_packets: 0.0,
        };
        let shrink_all = |line| Step {
            line,
            cwnd_packets: -self.cwnd_step_packets,
            threshold_packets: -self.threshold_step_packets,
        };
        let no_previous = Step::no_update(Fig1Line::NoPreviousThroughput);

        if t.alpha < diff && diff < t.beta {
            // Line 2: if Th(i) > Th(i-1).
            match throughput_rose {
                Some(true) => grow_all(Fig1Line::Line3),
                Some(false) => Step::no_update(Fig1Line::Line5),
                None => no_previous,
            }
        } else if diff < t.alpha {
            if t.alpha > self.alpha_min {
                // Line 9: if Th(i) > Th(i-1).
                match throughput_rose {
                    Some(true) => grow_cwnd(Fig1Line::Line10),
                    Some(false) => shrink_all(Fig1Line::Line12),
                    None => no_previous,
                }
            } else {
                // Line 14: α = 1 (α is never below it).
                grow_cwnd(Fig1Line::Line15)
            }
        } else if diff > t.beta {
            if t.alpha > self.alpha_min {
                shrink_all(Fig1Line::Line19)
            } else if self.shrink_above_beta_at_floor {
                // Vegas's own rule: Diff > β shrinks the window.
                Step {
                    line: Fig1Line::Line21,
                    cwnd_packets: -self.cwnd_step_packets,
                    threshold_packets: 0.0,
                }
            } else {
                Step::no_update(Fig1Line::Line21)
            }
        } else {
            // Diff = α or Diff = β (or Diff is not a number).
            Step::no_update(Fig1Line::Boundary)
        }
    }
}

/// Th(i), Th(i − 1) and Th(i − 2): the throughputs of the latest rounds, in
/// bytes per second, as long as they are consecutive. A round that does not
/// directly follow the last one recorded (by [`CompletedRound::index`]), or
/// that has no throughput, starts the history afresh.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThroughputHistory {
    /// Newest first: Th(i), Th(i − 1), Th(i − 2).
    th: [Option<f64>; 3],
    last_index: Option<u64>,
}

impl ThroughputHistory {
    pub fn record(&mut self, round: &CompletedRound) {
        let follows = self.last_index.and_then(|i| i.checked_add(1)) == Some(round.index);
        let th = round
            .throughput_bytes_per_sec()
            .filter(|t| t.is_finite() && *t >= 0.0);
        self.th = match (follows, th) {
            (true, Some(_)) => [th, self.th[0], self.th[1]],
            _ => [th, None, None],
        };
        self.last_index = Some(round.index);
    }

    /// Th(i − `back`).
    pub fn th(&self, back: usize) -> Option<f64> {
        self.th.get(back).copied().flatten()
    }

    /// Diff_Now = Th(i) − Th(i − 1) (000_625d42b67da1ab13.txt, eq. 5).
    pub fn diff_now(&self) -> Option<f64> {
        Some(self.th(0)? - self.th(1)?)
    }

    /// Diff_Before = Th(i − 1) − Th(i − 2) (eq. 6).
    pub fn diff_before(&self) -> Option<f64> {
        Some(self.th(1)? - self.th(2)?)
    }
}

/// Turns steps of cwnd in packets, fractional ones included, into whole
/// bytes, and carries what is left of a byte into the next step, so that
/// fractional steps add up instead of vanishing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PacketStepAccumulator {
    /// Bytes owed to the window, in (−1, 1).
    carry: f64,
}

impl PacketStepAccumulator {
    /// The whole bytes of `packets` (plus what was carried), saturating.
    pub fn bytes(&mut self, packets: f64, max_datagram_size: usize) -> i64 {
        let exact = packets * max_datagram_size as f64 + self.carry;
        if !exact.is_finite() {
            return 0;
        }
        let whole = exact.trunc();
        self.carry = exact - whole;
        // `as` saturates at the ends of i64.
        whole as i64
    }

    pub fn carry(&self) -> f64 {
        self.carry
    }
}

/// Fig. 1 as Vegas's congestion-avoidance round: Vegas-A's α, β and
/// throughput history, and Vegas's loss reaction. The `vegas-a` controller
/// is [`Vegas`] with these rules.
/// α and β, Th(i) and the line of Fig. 1 taken: what Vegas-A's qlog
/// fields are made of.
pub type Fig1Key = (Thresholds, Option<f64>, Option<u64>);

#[derive(Clone, Debug)]
pub struct VegasA {
    fig1: Fig1,
    loss: ScaledLoss,
    thresholds: Thresholds,
    history: ThroughputHistory,
    accumulator: PacketStepAccumulator,
    last_line: Option<Fig1Line>,
    fig1_generation: KeyedGeneration<Fig1Key>,
}

impl VegasA {
    /// From a table holding [`PARAMS`]' entries where `keys` say.
    pub fn new(params: &ParamValues, keys: &VegasAKeys) -> Self {
        let fig1 = Fig1::from_params(params, keys);
        VegasA {
            fig1,
            loss: ScaledLoss::from_params(params, &keys.loss),
            thresholds: Thresholds {
                alpha: params.value(keys.thresholds.alpha).max(fig1.alpha_min),
                beta: params.value(keys.thresholds.beta),
            },
            history: ThroughputHistory::default(),
            accumulator: PacketStepAccumulator::default(),
            last_line: None,
            fig1_generation: KeyedGeneration::default(),
        }
    }

    pub fn fig1(&self) -> Fig1 {
        self.fig1
    }

    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    pub fn history(&self) -> &ThroughputHistory {
        &self.history
    }

    /// Records Th(i) for the round that ended, with Diff `diff`, and returns
    /// Fig. 1's decision for it.
    pub fn decide(&mut self, round: &RoundView<'_>, diff: f64) -> Step {
        self.history.record(&round.round);
        let throughput_rose = self.history.diff_now().map(|d| d > 0.0);
        let step = self.fig1.decide(diff, self.thresholds, throughput_rose);
        self.last_line = Some(step.line);
        step
    }

    /// Carries out `step` (Fig. 1's, or one Vegas-L scaled): moves α and β
    /// and returns the change of cwnd in bytes. A growing step in an
    /// application-limited round is not taken.
    pub fn apply(&mut self, step: Step, round: &RoundView<'_>) -> i64 {
        if round.round.app_limited && step.direction() == Direction::Increase {
            return 0;
        }
        self.thresholds
            .shift(step.threshold_packets, self.fig1.alpha_min);
        self.accumulator
            .bytes(step.cwnd_packets, round.window.max_datagram_size())
    }

    /// What [`Self::write_fig1`] writes, to compare instead of writing it.
    pub fn fig1_key(&self) -> Fig1Key {
        (
            self.thresholds,
            self.history.th(0),
            self.last_line.map(|line| line.number()),
        )
    }

    /// Fig. 1's fields for qlog: α, β, Th(i) and the line taken.
    pub fn write_fig1(&self, out: &mut Internals) {
        out.float("alpha", self.thresholds.alpha);
        out.float("beta", self.thresholds.beta);
        if let Some(th) = self.history.th(0) {
            out.float("throughput_bps", th * 8.0);
        }
        if let Some(line) = self.last_line {
            out.int("fig1_line", line.number());
        }
    }
}

impl VegasRules for VegasA {
    fn name(&self) -> &'static str {
        NAME
    }

    fn congestion_avoidance_round(&mut self, round: &RoundView<'_>, diff: f64) -> WindowChange {
        let step = self.decide(round, diff);
        self.apply(step, round).into()
    }

    /// Vegas's loss reaction, which Vegas-A keeps.
    fn scaled_loss(&self) -> Option<&ScaledLoss> {
        Some(&self.loss)
    }

    /// Vegas's fields, with Fig. 1's moving α and β (and Th, the line) in
    /// place of Vegas's fixed thresholds.
    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals) {
        out.text("flavour", "paper");
        vegas.write_cwnd(out);
        self.write_fig1(out);
        vegas.write_measurements("round_rtt_ms", out);
        vegas.write_growth_round(out);
    }

    fn internals_generation(&self) -> Option<u64> {
        Some(self.fig1_generation.of(self.fig1_key()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::concat_params;

    #[test]
    fn tables_share_vegas_entries() {
        assert_eq!(PARAMS.len(), 17);
        for name in [
            "gamma",
            "ss_exit_factor",
            "loss_factor",
            "timeout_ssthresh_factor",
            "min_rtt_samples",
            "profile",
            "spike_suppression",
            "spike_burst_packets",
            "slow_start_pacing_gain",
            "pacing_gain",
        ] {
            let ours = PARAMS.iter().find(|p| p.name == name);
            let vegas = VEGAS_PARAMS.iter().find(|p| p.name == name);
            assert!(ours.is_some() && ours == vegas, "{name}");
        }
        let both: [ParamInfo; 3] = concat_params(&PARAMS[..1], &PARAMS[3..5]);
        assert_eq!(
            both.map(|p| p.name),
            ["alpha", "cwnd_step_packets", "threshold_step_packets"]
        );
    }

    #[test]
    fn accumulator_carries_fractions_of_a_byte() {
        let mut acc = PacketStepAccumulator::default();
        assert_eq!(acc.bytes(0.5, 1201), 600);
        assert_eq!(acc.bytes(0.5, 1201), 601);
        assert_eq!(acc.bytes(-0.5, 1201), -600);
        assert_eq!(acc.bytes(-0.5, 1201), -601);
        assert_eq!(acc.carry(), 0.0);
        assert_eq!(acc.bytes(f64::NAN, 1201), 0);
        assert_eq!(acc.bytes(2000.0, usize::MAX), i64::MAX);
    }

    #[test]
    fn thresholds_keep_their_width_at_the_floor() {
        let mut t = Thresholds {
            alpha: 1.5,
            beta: 3.5,
        };
        t.shift(-1.0, 1.0);
        assert_eq!(
            t,
            Thresholds {
                alpha: 1.0,
                beta: 3.0
            }
        );
        t.shift(2.0, 1.0);
        assert_eq!(
            t,
            Thresholds {
                alpha: 3.0,
                beta: 5.0
            }
        );
    }

    #[test]
    fn line_21_is_the_paper_as_printed_under_the_paper_profile() {
        // (profile, above_beta_at_alpha_min, whether line 21 shrinks cwnd)
        let cases = [
            (None, None, true),
            (Some("paper"), None, false),
            (Some("quic"), None, true),
            (Some("paper"), Some("decrease"), true),
            (Some("quic"), Some("hold"), false),
            (Some("paper"), Some("by_profile"), false),
        ];
        let floor = Thresholds {
            alpha: 1.0,
            beta: 3.0,
        };
        for (profile, line_21, shrinks) in cases {
            let mut params = ParamValues::defaults(NAME, PARAMS);
            if let Some(p) = profile {
                params.set("profile", p).expect("a valid profile");
            }
            if let Some(l) = line_21 {
                params
                    .set("above_beta_at_alpha_min", l)
                    .expect("a valid reading");
            }
            let fig1 = Fig1::from_params(&params, &KEYS);
            assert_eq!(
                fig1.shrink_above_beta_at_floor, shrinks,
                "{profile:?} {line_21:?}"
            );
            // Diff > β at α's floor: line 21, cwnd − 1 only where it shrinks.
            let step = fig1.decide(5.0, floor, Some(true));
            assert_eq!(step.line, Fig1Line::Line21);
            let expected = if shrinks { -1.0 } else { 0.0 };
            assert_eq!(step.cwnd_packets, expected, "{profile:?} {line_21:?}");
            assert_eq!(step.threshold_packets, 0.0);
        }
    }
}

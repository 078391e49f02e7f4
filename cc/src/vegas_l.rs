//! TCP Vegas-L (Li, Zhu, He), 000_625d42b67da1ab13.txt, section III, Fig. 2
//! and cases 1–6: Vegas-A ([`crate::vegas_a`], Fig. 1) with a longer memory.
//! From the throughputs of the last three rounds,
//!
//! ```text
//! Diff_Now    = Th(i)   − Th(i−1)                                    (5)
//! Diff_Before = Th(i−1) − Th(i−2)                                    (6)
//! ```
//!
//! and once per RTT in congestion avoidance (Fig. 2):
//!
//! ```text
//!  1: if Diff_Now > 0 then
//!  2:     if Diff_Before > 0 then
//!  3:         if Diff_Now > Diff_Before then
//!  4:             Case 1
//!  5:         else
//!  6:             Case 2
//!  8:     else
//!  9:         Case 3
//! 11: else
//! 12:     if Diff_Before > 0 then
//! 13:         Case 4
//! 14:     else
//! 15:         if Diff_Now > Diff_Before then
//! 16:             Case 5
//! 17:         else
//! 18:             Case 6
//! ```
//!
//! Each case sets how fast Cwnd, α and β move, relative to what Vegas-A
//! does in the same round:
//!
//! - Fig. 2, case 1 (throughput grew twice, faster the second time): twice
//!   Vegas-A's growth when Th(i) > Th(i−1).
//! - Fig. 2, case 2 (grew twice, slower the second time): Vegas-A's growth.
//! - Fig. 2, case 3 (fell, then grew): half Vegas-A's growth.
//! - Fig. 2, case 4 (grew, then fell): half Vegas-A's reduction when
//!   Th(i) < Th(i−1).
//! - Fig. 2, case 5 (fell twice, less the second time): Vegas-A's reduction.
//! - Fig. 2, case 6 (fell twice, more the second time): twice Vegas-A's
//!   reduction.
//!
//! So one round is: Vegas-A decides ([`VegasA::decide`], Fig. 1 from Diff,
//! α, β and whether Diff_Now > 0, i.e. Th(i) > Th(i−1)); Fig. 2 picks the
//! case ([`Case::classify`]); the case scales Vegas-A's [`Step`] — cwnd, α
//! and β alike — and Vegas-A carries it out ([`VegasA::apply`]: α never
//! below 1). Slow start, losses and pacing (spike suppression, and the
//! `profile` that decides whether slow start is paced) are Vegas's, as for
//! Vegas-A. Th(i) is the round's throughput (bytes acknowledged over the
//! round's duration, [`ThroughputHistory`]). Fig. 1's line 21 is read as
//! Vegas-A reads it (`above_beta_at_alpha_min`, [`crate::vegas_a`]): as
//! printed (no update) under `profile=paper`, Vegas's cwnd − 1 under
//! `profile=quic`.
//!
//! # Where the paper is ambiguous
//!
//! - **Which of Vegas-A's steps a case scales.** Cases 1–3 scale a step that
//!   grows the window (Fig. 1, lines 3, 10 and 15) and cases 4–6 one that
//!   shrinks it (lines 12 and 19): the paper speaks of the "growth rate" in
//!   cases 1–3 and the "reduction rate" in cases 4–6. A step in the other
//!   direction — line 19 (Diff > β) while throughput grows, line 15 (α = 1,
//!   Diff < α) while it falls — is Vegas-A's, unscaled.
//! - **Ties.** Fig. 2's comparisons are strict and its else branches take
//!   the rest: Diff_Now = 0 belongs to cases 4–6 (as Th(i) = Th(i−1) is not
//!   "Th(i) > Th(i−1)" in Vegas-A), Diff_Before = 0 to case 3 or cases 5–6,
//!   Diff_Now = Diff_Before to case 2 or case 6. Three rounds of exactly
//!   equal throughput are therefore case 6 and double any reduction.
//! - **Fewer than three consecutive rounds.** Without Th(i−2) there is no
//!   Diff_Before and no case: the round is Vegas-A's, unscaled (qlog `case`
//!   0). The rounds must be consecutive congestion-avoidance rounds, as for
//!   Vegas-A's Th(i−1) (see [`crate::vegas_a`]).
//! - **Fractional steps.** Halving gives steps of half a packet to cwnd, α and
//!   β. α and β are kept as fractions; cwnd is in bytes, and what a step
//!   leaves of a byte is carried to the next
//!   ([`PacketStepAccumulator`](vegas_a::PacketStepAccumulator)), so
//!   two half steps always add up to one packet.
//! - **The floor.** A doubled reduction at α = 2 would take α to 0: α stops
//!   at 1 (`alpha_min`) and β moves by what α moved. cwnd takes the whole
//!   doubled step, down to the minimum window.
//! - **"Twice" and "half"** are parameters (`case1_scale`, `case3_scale`,
//!   `case4_scale`, `case6_scale`); cases 2 and 5 "follow" Vegas-A, a scale
//!   of exactly 1, which is not a constant of the paper.
//! - **Units.** Diff_Now and Diff_Before are bytes per second (bits per
//!   second in qlog); only their signs and their order matter.

use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{CongestionController, Internals, KeyedGeneration};
use crate::params::{concat_params, Key, ParamInfo, ParamKind, ParamValues};
use crate::vegas::{
    RoundView, ScaledLoss, Vegas, VegasConfig, VegasRules, VegasView, WindowChange,
};
use crate::vegas_a::{self, Direction, Fig1Key, Step, ThroughputHistory, VegasA, VegasAKeys};

pub const NAME: &str = "vegas-l";

const SCALE: ParamKind = ParamKind::Number {
    min: 0.0,
    max: 100.0,
};

/// Vegas-L's own constants: the "twice" and "half" of its cases.
const CASE_PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "case1_scale",
        default: 2.0,
        kind: SCALE,
        description:
            "case 1 (growth accelerating): Vegas-A's growth of cwnd, alpha, beta times this",
    },
    ParamInfo {
        name: "case3_scale",
        default: 0.5,
        kind: SCALE,
        description: "case 3 (growth after a fall): Vegas-A's growth times this",
    },
    ParamInfo {
        name: "case4_scale",
        default: 0.5,
        kind: SCALE,
        description: "case 4 (fall after growth): Vegas-A's reduction times this",
    },
    ParamInfo {
        name: "case6_scale",
        default: 2.0,
        kind: SCALE,
        description: "case 6 (fall accelerating): Vegas-A's reduction times this",
    },
];

/// Parameters of `vegas-l`: Vegas-A's (Fig. 1 and Vegas's), then the cases'.
pub const PARAMS: &[ParamInfo] =
    &concat_params::<{ vegas_a::PARAMS.len() + CASE_PARAMS.len() }>(vegas_a::PARAMS, CASE_PARAMS);

pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: NAME,
    description:
        "TCP Vegas-L (000_625d42b67da1ab13.txt, Fig. 2): Vegas-A whose steps are doubled, \
                  kept or halved by the trend of the last three rounds' throughput",
    params: PARAMS,
    validate,
    build,
};

/// Where a table keeps Vegas-L's parameters: Vegas-A's, then the cases'.
#[derive(Clone, Copy, Debug)]
pub struct VegasLKeys {
    pub vegas_a: VegasAKeys,
    case1: Key<f64>,
    case3: Key<f64>,
    case4: Key<f64>,
    case6: Key<f64>,
}

impl VegasLKeys {
    pub const fn in_table(table: &[ParamInfo]) -> Self {
        VegasLKeys {
            vegas_a: VegasAKeys::in_table(table),
            case1: Key::in_table(table, "case1_scale"),
            case3: Key::in_table(table, "case3_scale"),
            case4: Key::in_table(table, "case4_scale"),
            case6: Key::in_table(table, "case6_scale"),
        }
    }
}

/// [`PARAMS`]' keys.
pub const KEYS: VegasLKeys = VegasLKeys::in_table(PARAMS);

/// Vegas-A's checks.
fn validate(params: &ParamValues) -> Result<(), String> {
    KEYS.vegas_a.validate(params)
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(Vegas::with_rules(
        VegasL::new(params, &KEYS),
        VegasConfig::read(params, &KEYS.vegas_a.vegas),
        window,
    ))
}

/// The six network states of Fig. 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    One,
    Two,
    Three,
    Four,
    Five,
    Six,
}

impl Case {
    /// Fig. 2, line for line.
    pub fn classify(diff_now: f64, diff_before: f64) -> Case {
        if diff_now > 0.0 {
            if diff_before > 0.0 {
                if diff_now > diff_before {
                    Case::One
                } else {
                    Case::Two
                }
            } else {
                Case::Three
            }
        } else if diff_before > 0.0 {
            Case::Four
        } else if diff_now > diff_before {
            Case::Five
        } else {
            Case::Six
        }
    }

    pub fn number(self) -> u64 {
        match self {
            Case::One => 1,
            Case::Two => 2,
            Case::Three => 3,
            Case::Four => 4,
            Case::Five => 5,
            Case::Six => 6,
        }
    }

    /// The direction of Vegas-A's steps the case scales: growth in cases 1–3,
    /// reduction in cases 4–6.
    pub fn scales(self) -> Direction {
        match self {
            Case::One | Case::Two | Case::Three => Direction::Increase,
            Case::Four | Case::Five | Case::Six => Direction::Decrease,
        }
    }
}

/// How much each case scales Vegas-A's step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CaseScales {
    pub case1: f64,
    pub case3: f64,
    pub case4: f64,
    pub case6: f64,
}

impl CaseScales {
    pub fn from_params(params: &ParamValues, keys: &VegasLKeys) -> Self {
        CaseScales {
            case1: params.value(keys.case1),
            case3: params.value(keys.case3),
            case4: params.value(keys.case4),
            case6: params.value(keys.case6),
        }
    }

    pub fn of(&self, case: Case) -> f64 {
        match case {
            Case::One => self.case1,
            // "Follow the strategy of Vegas-A."
            Case::Two | Case::Five => 1.0,
            Case::Three => self.case3,
            Case::Four => self.case4,
            Case::Six => self.case6,
        }
    }

    /// The factor for a step of Vegas-A in `direction` in `case`: the
    /// case's if it scales that direction, else 1 (also without a case).
    pub fn factor(&self, case: Option<Case>, direction: Direction) -> f64 {
        match case {
            Some(case) if case.scales() == direction => self.of(case),
            _ => 1.0,
        }
    }

    /// Vegas-A's `step` as `case` scales it.
    pub fn apply(&self, case: Option<Case>, step: Step) -> Step {
        step.scaled(self.factor(case, step.direction()))
    }
}

/// Fig. 2 around Vegas-A's decision, as Vegas's congestion-avoidance round;
/// the rest is Vegas-A's, i.e. Vegas's. The `vegas-l` controller is
/// [`Vegas`] with these rules.
#[derive(Clone, Debug)]
pub struct VegasL {
    vegas_a: VegasA,
    scales: CaseScales,
    last_case: Option<Case>,
    last_scale: f64,
    internals_generation: KeyedGeneration<VegasLInternalsKey>,
}

/// Everything of [`VegasL`] its qlog fields are made of: Fig. 1's, the
/// case and its scale (Diff_Now and Diff_Before are Th's history).
type VegasLInternalsKey = (Fig1Key, Option<f64>, Option<f64>, Option<u64>, f64);

impl VegasL {
    /// From a table holding [`PARAMS`]' entries where `keys` say.
    pub fn new(params: &ParamValues, keys: &VegasLKeys) -> Self {
        VegasL {
            vegas_a: VegasA::new(params, &keys.vegas_a),
            scales: CaseScales::from_params(params, keys),
            last_case: None,
            last_scale: 1.0,
            internals_generation: KeyedGeneration::default(),
        }
    }

    fn history(&self) -> &ThroughputHistory {
        self.vegas_a.history()
    }
}

impl VegasRules for VegasL {
    fn name(&self) -> &'static str {
        NAME
    }

    fn congestion_avoidance_round(&mut self, round: &RoundView<'_>, diff: f64) -> WindowChange {
        let vegas_a_step = self.vegas_a.decide(round, diff);
        let history = self.history();
        let case = history
            .diff_now()
            .zip(history.diff_before())
            .map(|(now, before)| Case::classify(now, before));
        let factor = self.scales.factor(case, vegas_a_step.direction());
        self.last_case = case;
        self.last_scale = factor;
        self.vegas_a
            .apply(vegas_a_step.scaled(factor), round)
            .into()
    }

    fn scaled_loss(&self) -> Option<&ScaledLoss> {
        self.vegas_a.scaled_loss()
    }

    /// Vegas-A's fields, then the case's.
    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals) {
        out.text("flavour", "paper");
        vegas.write_cwnd(out);
        self.vegas_a.write_fig1(out);
        out.int("case", self.last_case.map_or(0, Case::number));
        if let Some(now) = self.history().diff_now() {
            out.float("diff_now_bps", now * 8.0);
        }
        if let Some(before) = self.history().diff_before() {
            out.float("diff_before_bps", before * 8.0);
        }
        out.float("step_scale", self.last_scale);
        vegas.write_measurements("round_rtt_ms", out);
        vegas.write_growth_round(out);
    }

    fn internals_generation(&self) -> Option<u64> {
        Some(self.internals_generation.of((
            self.vegas_a.fig1_key(),
            self.history().th(1),
            self.history().th(2),
            self.last_case.map(Case::number),
            self.last_scale,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vegas_a::Fig1Line;

    #[test]
    fn table_is_vegas_a_then_cases() {
        assert_eq!(PARAMS.len(), vegas_a::PARAMS.len() + 4);
        assert_eq!(&PARAMS[..vegas_a::PARAMS.len()], vegas_a::PARAMS);
        assert_eq!(PARAMS.last().map(|p| p.name), Some("case6_scale"));
    }

    #[test]
    fn opposite_direction_is_not_scaled() {
        let scales = CaseScales {
            case1: 2.0,
            case3: 0.5,
            case4: 0.5,
            case6: 2.0,
        };
        let shrink = Step {
            line: Fig1Line::Line19,
            cwnd_packets: -1.0,
            threshold_packets: -1.0,
        };
        assert_eq!(scales.apply(Some(Case::One), shrink), shrink);
        assert_eq!(scales.apply(Some(Case::Six), shrink).cwnd_packets, -2.0);
        assert_eq!(scales.apply(None, shrink), shrink);
    }
}

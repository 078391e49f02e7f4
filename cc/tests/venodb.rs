//! VenoDB (001_8629d53d83e82638.txt, section 3) against a model of its
//! pseudo-code (section 3.1) written again here. Scenarios are windows sent
//! at once and acknowledged by one ACK one RTT later, with receive
//! timestamps on the peer's clock (1000 s ahead of ours) that put each
//! window's packets `owd` after their send time. Within a window every `D_n`
//! is 0; across windows `D = owd_k − owd_{k−1}`. Each branch test picks RTTs
//! (hence N and the bandwidth samples) and one-way delays (hence D and ΔD)
//! that lead the model through one branch of 3.1, asserts that the model did
//! take that branch, and compares the controller with the model after every
//! step.

mod common;

use std::cmp::Ordering;
use std::time::{Duration, Instant};

use common::random_events::{self, check_invariants};
use common::{build, ms, Flow, FrameExtras, MDS};
use proptest::prelude::*;
use vegas_cc::shared::peer_clock::PeerClock as HostClock;
use vegas_cc::{AckedPacket, CcState, ControllerSpec, InternalValue, MINIMUM_WINDOW_PACKETS};

// Section 3.1's numbers, written out rather than taken from the crate.
const BETA: f64 = 3.0;
/// N >= beta, State 1 (D < 0 or bwe(t) > bwe(t−RTT)).
const AI_DECREASING: f64 = 1.0;
/// N >= beta, State 2 (D = 0 or bwe(t) = bwe(t−RTT)), ΔD < 0 and ΔD >= 0.
const AI_STABLE_DD_NEGATIVE: f64 = 1.0;
const AI_STABLE: f64 = 0.5;
/// N >= beta, State 3 (D > 0 or bwe(t) < bwe(t−RTT)), ΔD <= 0 and ΔD > 0.
const AI_INCREASING_DD_NONPOSITIVE: f64 = 0.25;
const AI_INCREASING_DD_POSITIVE: f64 = 0.0;
/// N < beta, ΔD < 0 and ΔD >= 0.
const AI_UNSATURATED_DD_NEGATIVE: f64 = 2.0;
const AI_UNSATURATED: f64 = 1.0;
/// The refined MD.
const MD_CONGESTION: f64 = 1.0 / 2.0;
const MD_CONGESTION_D_NEGATIVE: f64 = 4.0 / 5.0;
const MD_RANDOM: f64 = 4.0 / 5.0;
/// Westwood+'s weight, the default of the EWMA.
const BWE_WEIGHT: f64 = 7.0 / 8.0;

const PEER_CLOCK_AHEAD: Duration = Duration::from_secs(1000);

/// One step of a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// A window sent at once and acknowledged after `rtt` ms, each packet
    /// received `owd` ms after it was sent.
    Round { rtt: u64, owd: u64 },
    /// A window whose first packet is declared lost `rtt / 2` ms after it
    /// was sent; the rest is acknowledged after `rtt` ms.
    LossRound { rtt: u64, owd: u64 },
}

use Step::{LossRound, Round};

/// Where D comes from in the model.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Source {
    /// One-way delays from receive timestamps.
    Stamps,
    /// ACK arrival minus ACK delay of the largest packet, one per ACK:
    /// `D = (rtt_k − ack_delay_k) − (rtt_{k−1} − ack_delay_{k−1})`. The
    /// step's `owd` is then the ACK delay.
    AckArrival,
}

/// What the model decided at the end of a round.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Decision {
    state: &'static str,
    increase: f64,
    n: f64,
}

/// Section 3.1 (and the choices the crate documents for what it leaves
/// open), one ACK per window.
#[derive(Debug)]
struct Model {
    source: Source,
    weight: f64,
    cwnd: usize,
    ssthresh: usize,
    /// Acknowledged bytes × increase not yet turned into packets.
    credit: f64,
    increase: f64,
    base_ms: u64,
    n: Option<f64>,
    in_recovery: bool,
    /// Previous window's one-way delay (stamps) or RTT − ACK delay.
    previous_delay_ms: Option<i64>,
    d_ms: Option<i64>,
    dd_ms: Option<i64>,
    acks_seen: u64,
    bwe: Option<f64>,
    bwe_now: Option<f64>,
    bwe_rtt_ago: Option<f64>,
    state: &'static str,
    last_loss: Option<(&'static str, f64)>,
}

impl Model {
    fn new(source: Source, weight: f64) -> Self {
        Model {
            source,
            weight,
            cwnd: 10 * MDS,
            ssthresh: usize::MAX,
            credit: 0.0,
            increase: AI_UNSATURATED,
            base_ms: u64::MAX,
            n: None,
            in_recovery: false,
            previous_delay_ms: None,
            d_ms: None,
            dd_ms: None,
            acks_seen: 0,
            bwe: None,
            bwe_now: None,
            bwe_rtt_ago: None,
            state: "unknown",
            last_loss: None,
        }
    }

    /// One ACK of `packets` packets: the bandwidth sample, D and ΔD, and
    /// the end of a round (every ACK here ends one).
    fn signals(&mut self, packets: usize, rtt: u64, owd: u64) {
        self.base_ms = self.base_ms.min(rtt);
        // bwe: bytes acknowledged over the time since the previous ACK,
        // which is the RTT (each window leaves when the last ACK arrives).
        if self.acks_seen > 0 {
            let sample = (packets * MDS) as f64 / (rtt as f64 / 1e3);
            self.bwe = Some(match self.bwe {
                None => sample,
                Some(old) => self.weight * old + (1.0 - self.weight) * sample,
            });
        }
        self.acks_seen += 1;
        // D over the round: eq. (1) across the two windows' boundary; the
        // pairs within a window contribute 0.
        let delay = match self.source {
            Source::Stamps => owd as i64,
            Source::AckArrival => rtt as i64 - owd as i64,
        };
        let d = match (self.previous_delay_ms, self.source) {
            (Some(previous), _) => Some(delay - previous),
            (None, Source::Stamps) => (packets >= 2).then_some(0),
            (None, Source::AckArrival) => None,
        };
        self.previous_delay_ms = Some(delay);
        self.dd_ms = d.zip(self.d_ms).map(|(now, before)| now - before);
        self.d_ms = d;
        self.bwe_rtt_ago = self.bwe_now;
        self.bwe_now = self.bwe;
    }

    /// The refined AI of 3.1, first matching state in the order written.
    fn decide(&mut self, rtt: u64) -> Decision {
        let w = self.cwnd as f64 / MDS as f64;
        let base = self.base_ms as f64 / 1e3;
        let n = (w / base - w / (rtt as f64 / 1e3)) * base;
        let dd = self.dd_ms.map_or(Ordering::Equal, |dd| dd.cmp(&0));
        let d = self.d_ms.map(|d| d.cmp(&0));
        let bwe = self
            .bwe_now
            .zip(self.bwe_rtt_ago)
            .map(|(now, ago)| now.partial_cmp(&ago).unwrap());
        let (state, increase) = if n < BETA {
            let inc = if dd == Ordering::Less {
                AI_UNSATURATED_DD_NEGATIVE
            } else {
                AI_UNSATURATED
            };
            ("unsaturated", inc)
        } else if d == Some(Ordering::Less) || bwe == Some(Ordering::Greater) {
            ("decreasing_congestion", AI_DECREASING)
        } else if d == Some(Ordering::Equal) || bwe == Some(Ordering::Equal) {
            let inc = if dd == Ordering::Less {
                AI_STABLE_DD_NEGATIVE
            } else {
                AI_STABLE
            };
            ("stable", inc)
        } else if d == Some(Ordering::Greater) || bwe == Some(Ordering::Less) {
            let inc = if dd == Ordering::Greater {
                AI_INCREASING_DD_POSITIVE
            } else {
                AI_INCREASING_DD_NONPOSITIVE
            };
            ("increasing_congestion", inc)
        } else {
            ("unknown", AI_STABLE)
        };
        self.n = Some(n);
        self.state = state;
        self.increase = increase;
        Decision { state, increase, n }
    }

    /// Reno's slow start up to ssthresh, then `increase` packets per window
    /// of acknowledged bytes.
    fn grow(&mut self, mut bytes: usize) {
        if self.cwnd < self.ssthresh {
            let ss = bytes.min(self.ssthresh - self.cwnd);
            self.cwnd += ss;
            bytes -= ss;
        }
        if bytes == 0 {
            return;
        }
        self.credit += bytes as f64 * self.increase;
        let packets = (self.credit / self.cwnd as f64).floor();
        self.credit -= packets * self.cwnd as f64;
        self.cwnd += packets as usize * MDS;
    }

    /// The refined MD of 3.1.
    fn lose(&mut self) {
        let (class, factor) = match self.n {
            Some(n) if n >= BETA => {
                if self.d_ms.is_some_and(|d| d < 0) {
                    ("congestion", MD_CONGESTION_D_NEGATIVE)
                } else {
                    ("congestion", MD_CONGESTION)
                }
            }
            Some(_) => ("random", MD_RANDOM),
            None => ("congestion", MD_CONGESTION),
        };
        let reduced =
            ((self.cwnd as f64 * factor).floor() as usize).max(MINIMUM_WINDOW_PACKETS * MDS);
        self.cwnd = reduced;
        self.ssthresh = reduced;
        self.credit = 0.0;
        self.in_recovery = true;
        self.last_loss = Some((class, factor));
    }

    fn step(&mut self, step: Step) -> Option<Decision> {
        match step {
            Round { rtt, owd } => {
                let packets = self.cwnd / MDS;
                self.signals(packets, rtt, owd);
                let decision = if self.in_recovery {
                    // The full ACK ends recovery; the round is not evaluated.
                    self.in_recovery = false;
                    None
                } else {
                    Some(self.decide(rtt))
                };
                self.grow(packets * MDS);
                decision
            }
            LossRound { rtt, owd } => {
                let packets = self.cwnd / MDS;
                self.lose();
                // Partial ACK: the rest of the window, sent before the
                // reduction. Not evaluated, no growth.
                self.signals(packets - 1, rtt, owd);
                None
            }
        }
    }
}

/// Receive stamps `owd` after each packet's send time, on the peer's clock.
fn stamps(start: Instant, owd: u64) -> impl FnMut(&mut [AckedPacket]) -> FrameExtras {
    move |acked: &mut [AckedPacket]| {
        for p in acked.iter_mut() {
            p.receive_time = Some(p.time_sent.duration_since(start) + ms(owd) + PEER_CLOCK_AHEAD);
        }
        FrameExtras::default()
    }
}

/// No stamps; the ACK delay is `owd`.
fn ack_delay_only(delay: u64) -> impl FnMut(&mut [AckedPacket]) -> FrameExtras {
    move |_: &mut [AckedPacket]| FrameExtras {
        ack_delay: ms(delay),
        backward_queueing: None,
    }
}

fn text(flow: &Flow, name: &str) -> &'static str {
    match flow.internals().get(name) {
        Some(InternalValue::Text(t)) => t,
        other => panic!("{name}: {other:?}"),
    }
}

/// Drives `flow` through `step`, with stamps or without.
fn drive(flow: &mut Flow, step: Step, source: Source) {
    let start = flow.start;
    match step {
        Round { rtt, owd } => {
            let window = flow.send_window();
            match source {
                Source::Stamps => flow.ack_with(&window, ms(rtt), stamps(start, owd)),
                Source::AckArrival => flow.ack_with(&window, ms(rtt), ack_delay_only(owd)),
            }
        }
        LossRound { rtt, owd } => {
            let window = flow.send_window();
            flow.advance(ms(rtt / 2));
            flow.lose(&window[..1], false);
            match source {
                Source::Stamps => flow.ack_with(&window[1..], ms(rtt), stamps(start, owd)),
                Source::AckArrival => flow.ack_with(&window[1..], ms(rtt), ack_delay_only(owd)),
            }
        }
    }
}

/// Compares the controller with the model after one step.
fn check(flow: &Flow, model: &Model, k: usize) {
    assert_eq!(flow.cwnd(), model.cwnd, "cwnd after step {k}");
    assert_eq!(
        flow.cc.ssthresh(),
        model.ssthresh,
        "ssthresh after step {k}"
    );
    assert_eq!(
        text(flow, "network_state"),
        model.state,
        "state after step {k}"
    );
    assert_eq!(
        flow.internal("increase_per_rtt"),
        Some(model.increase),
        "increase after step {k}"
    );
    assert_eq!(
        flow.internal("relative_delay_ms"),
        model.d_ms.map(|d| d as f64),
        "D after step {k}"
    );
    assert_eq!(
        flow.internal("relative_delay_diff_ms"),
        model.dd_ms.map(|d| d as f64),
        "dD after step {k}"
    );
    assert_eq!(
        flow.internal("bwe_bytes_per_s"),
        model.bwe_now,
        "bwe(t) after step {k}"
    );
    assert_eq!(
        flow.internal("bwe_rtt_ago_bytes_per_s"),
        model.bwe_rtt_ago,
        "bwe(t-RTT) after step {k}"
    );
    if let Some((class, factor)) = model.last_loss {
        assert_eq!(text(flow, "loss_class"), class, "loss class after step {k}");
        assert_eq!(flow.internal("loss_factor"), Some(factor));
    }
}

/// Runs `steps` on `venodb` with `pairs` and on the model; returns the flow
/// and the model's decision at each step.
fn run(
    pairs: &[&str],
    weight: f64,
    source: Source,
    steps: &[Step],
) -> (Flow, Vec<Option<Decision>>) {
    let mut flow = Flow::new(build("venodb", pairs));
    let mut model = Model::new(source, weight);
    let mut decisions = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        drive(&mut flow, *step, source);
        decisions.push(model.step(*step));
        check(&flow, &model, k);
    }
    (flow, decisions)
}

/// Slow start at 100 ms to 80 packets, a loss at N = 0 (random, × 4/5:
/// 64 packets), the recovery round (+1 at N < beta): 65 packets in
/// congestion avoidance, all at a one-way delay of 40 ms.
const INTO_CA: [Step; 5] = [
    Round { rtt: 100, owd: 40 },
    Round { rtt: 100, owd: 40 },
    Round { rtt: 100, owd: 40 },
    LossRound { rtt: 100, owd: 40 },
    Round { rtt: 100, owd: 40 },
];

/// [`INTO_CA`] then `more`; with bwe's filter weight `weight` (0: bwe(t) is
/// the last sample, so that its direction is the sample's).
fn from_ca(weight: f64, more: &[Step]) -> (Flow, Vec<Option<Decision>>) {
    let steps: Vec<Step> = INTO_CA.iter().chain(more).copied().collect();
    let weight_param = format!("bwe_history_weight={weight}");
    let (flow, decisions) = run(&[&weight_param], weight, Source::Stamps, &steps);
    (flow, decisions[INTO_CA.len()..].to_vec())
}

fn decision(decisions: &[Option<Decision>], k: usize) -> Decision {
    decisions[k].unwrap_or_else(|| panic!("step {k} was not evaluated"))
}

#[test]
fn the_way_into_congestion_avoidance() {
    let (flow, _) = run(&[], BWE_WEIGHT, Source::Stamps, &INTO_CA);
    assert_eq!(flow.cwnd(), 65 * MDS);
    assert_eq!(flow.cc.ssthresh(), 64 * MDS);
    assert_eq!(text(&flow, "loss_class"), "random");
    assert_eq!(text(&flow, "delay_source"), "receive_timestamps");
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
}

// ---- The refined AI, N >= beta ----

#[test]
fn state_1_negative_d_grows_one_packet_per_rtt() {
    // D = 35 - 40 < 0; bwe falls (65 packets in 110 ms after 64 in 100 ms),
    // so only D puts this in State 1.
    let (_, d) = from_ca(
        0.0,
        &[Round { rtt: 110, owd: 35 }, Round { rtt: 110, owd: 30 }],
    );
    for k in 0..2 {
        let decision = decision(&d, k);
        assert!(decision.n >= BETA);
        assert_eq!(
            (decision.state, decision.increase),
            ("decreasing_congestion", AI_DECREASING)
        );
    }
}

#[test]
fn state_1_rising_bandwidth_wins_over_positive_d() {
    // Ambiguous in the paper: D > 0 (State 3's condition) while bwe(t) >
    // bwe(t-RTT) (State 1's). The first state written wins.
    let (_, d) = from_ca(
        0.0,
        &[
            Round { rtt: 120, owd: 40 },
            // RTT back down: 65 packets in 110 ms beat 65 in 120 ms.
            Round { rtt: 110, owd: 45 },
        ],
    );
    let decision = decision(&d, 1);
    assert!(decision.n >= BETA);
    assert_eq!(
        (decision.state, decision.increase),
        ("decreasing_congestion", AI_DECREASING)
    );
}

#[test]
fn state_2_zero_d_with_falling_dd_grows_one_packet_per_rtt() {
    let (_, d) = from_ca(
        0.0,
        &[
            // D = +5 ms (State 3) ...
            Round { rtt: 110, owd: 45 },
            // ... then D = 0, ΔD = -5 ms, bwe still falling.
            Round { rtt: 115, owd: 45 },
        ],
    );
    assert_eq!(decision(&d, 0).state, "increasing_congestion");
    let decision = decision(&d, 1);
    assert_eq!(
        (decision.state, decision.increase),
        ("stable", AI_STABLE_DD_NEGATIVE)
    );
}

#[test]
fn state_2_zero_d_otherwise_grows_every_other_rtt() {
    // D = 0 and ΔD = 0 while bwe falls: stable, 1/2 packet per RTT.
    let (flow, d) = from_ca(
        0.0,
        &[
            Round { rtt: 110, owd: 40 },
            Round { rtt: 115, owd: 40 },
            Round { rtt: 120, owd: 40 },
        ],
    );
    for k in 0..3 {
        let decision = decision(&d, k);
        assert_eq!((decision.state, decision.increase), ("stable", AI_STABLE));
    }
    assert_eq!(
        flow.cwnd(),
        66 * MDS,
        "one packet in the three rounds, then credit"
    );
}

#[test]
fn state_2_equal_bandwidth_wins_over_positive_d() {
    // Ambiguous: D > 0 (State 3) with bwe(t) = bwe(t-RTT) (State 2). State 2
    // is written first. The round before added nothing (State 3, ΔD > 0),
    // so the same window in the same RTT gives exactly the same sample.
    let (_, d) = from_ca(
        0.0,
        &[Round { rtt: 110, owd: 45 }, Round { rtt: 110, owd: 50 }],
    );
    assert_eq!(
        (decision(&d, 0).state, decision(&d, 0).increase),
        ("increasing_congestion", AI_INCREASING_DD_POSITIVE)
    );
    let decision = decision(&d, 1);
    assert_eq!((decision.state, decision.increase), ("stable", AI_STABLE));
}

#[test]
fn state_3_positive_d_with_steady_dd_grows_every_fourth_rtt() {
    let (flow, d) = from_ca(
        0.0,
        &[
            Round { rtt: 110, owd: 45 },
            // D = +5 again: ΔD = 0 <= 0. bwe keeps falling with the RTT.
            Round { rtt: 115, owd: 50 },
            Round { rtt: 120, owd: 55 },
            Round { rtt: 125, owd: 60 },
            Round { rtt: 130, owd: 65 },
            Round { rtt: 135, owd: 70 },
        ],
    );
    for k in 1..6 {
        let decision = decision(&d, k);
        assert_eq!(
            (decision.state, decision.increase),
            ("increasing_congestion", AI_INCREASING_DD_NONPOSITIVE),
            "step {k}"
        );
    }
    // A quarter packet per RTT for five RTTs: one packet.
    assert_eq!(flow.cwnd(), 66 * MDS);
}

#[test]
fn state_3_positive_d_with_rising_dd_holds_the_window() {
    let (flow, d) = from_ca(
        0.0,
        &[
            Round { rtt: 110, owd: 45 },
            Round { rtt: 115, owd: 55 },
            Round { rtt: 120, owd: 70 },
        ],
    );
    for k in 0..3 {
        let decision = decision(&d, k);
        assert_eq!(
            (decision.state, decision.increase),
            ("increasing_congestion", AI_INCREASING_DD_POSITIVE),
            "step {k}"
        );
    }
    assert_eq!(flow.cwnd(), 65 * MDS);
}

// ---- The refined AI, N < beta ----

#[test]
fn unsaturated_with_falling_dd_grows_two_packets_per_rtt() {
    let (flow, d) = from_ca(
        BWE_WEIGHT,
        &[
            Round { rtt: 100, owd: 45 },
            // D from +5 to 0: ΔD < 0.
            Round { rtt: 100, owd: 45 },
        ],
    );
    assert_eq!(
        (decision(&d, 0).state, decision(&d, 0).increase),
        ("unsaturated", AI_UNSATURATED)
    );
    let decision = decision(&d, 1);
    assert!(decision.n < BETA);
    assert_eq!(
        (decision.state, decision.increase),
        ("unsaturated", AI_UNSATURATED_DD_NEGATIVE)
    );
    assert_eq!(flow.cwnd(), (65 + 1 + 2) * MDS);
}

#[test]
fn unsaturated_otherwise_grows_one_packet_per_rtt() {
    let (flow, d) = from_ca(
        BWE_WEIGHT,
        &[
            Round { rtt: 100, owd: 40 },
            Round { rtt: 101, owd: 43 },
            Round { rtt: 101, owd: 46 },
        ],
    );
    for k in 0..3 {
        let decision = decision(&d, k);
        assert!(decision.n < BETA);
        assert_eq!(
            (decision.state, decision.increase),
            ("unsaturated", AI_UNSATURATED)
        );
    }
    assert_eq!(flow.cwnd(), (65 + 3) * MDS);
}

#[test]
fn with_the_default_filter_the_model_and_controller_agree_throughout() {
    let mut more = Vec::new();
    for (rtt, owd) in [
        (110, 45),
        (120, 55),
        (130, 60),
        (125, 50),
        (140, 70),
        (150, 70),
        (140, 60),
        (100, 40),
        (100, 40),
        (160, 90),
    ] {
        more.push(Round { rtt, owd });
    }
    more.push(LossRound { rtt: 160, owd: 95 });
    more.push(Round { rtt: 150, owd: 80 });
    more.push(Round { rtt: 120, owd: 60 });
    let (_, d) = from_ca(BWE_WEIGHT, &more);
    let states: Vec<&str> = d.iter().flatten().map(|d| d.state).collect();
    assert!(states.contains(&"decreasing_congestion"));
    assert!(states.contains(&"unsaturated"));
}

// ---- The refined MD ----

/// [`INTO_CA`], one more round, then a loss; returns (cwnd before the loss,
/// flow).
fn loss_after(round: Step) -> (usize, Flow) {
    let (flow, _) = from_ca(BWE_WEIGHT, &[round]);
    let cwnd = flow.cwnd();
    let (flow, _) = from_ca(BWE_WEIGHT, &[round, LossRound { rtt: 110, owd: 40 }]);
    (cwnd, flow)
}

#[test]
fn congestion_loss_with_d_at_least_zero_halves() {
    for owd in [45, 40] {
        // N = 5.9 >= beta; D = +5 ms, then D = 0 (D >= 0 includes 0).
        let (cwnd, flow) = loss_after(Round { rtt: 110, owd });
        assert_eq!(flow.cc.ssthresh(), cwnd / 2, "owd {owd}");
        assert_eq!(text(&flow, "loss_class"), "congestion");
        assert_eq!(flow.internal("loss_factor"), Some(MD_CONGESTION));
    }
}

#[test]
fn congestion_loss_with_negative_d_cuts_by_a_fifth() {
    let (cwnd, flow) = loss_after(Round { rtt: 110, owd: 30 });
    assert_eq!(flow.cc.ssthresh(), (cwnd as f64 * 0.8) as usize);
    assert_eq!(text(&flow, "loss_class"), "congestion");
    assert_eq!(flow.internal("loss_factor"), Some(MD_CONGESTION_D_NEGATIVE));
}

#[test]
fn random_loss_cuts_by_a_fifth() {
    let (cwnd, flow) = loss_after(Round { rtt: 100, owd: 45 });
    assert_eq!(flow.cc.ssthresh(), (cwnd as f64 * 0.8) as usize);
    assert_eq!(text(&flow, "loss_class"), "random");
    assert_eq!(flow.internal("loss_factor"), Some(MD_RANDOM));
}

#[test]
fn loss_before_any_n_halves() {
    let mut flow = Flow::new(build("venodb", &[]));
    let window = flow.send_window();
    flow.advance(ms(300));
    flow.lose(&window[..2], false);
    assert_eq!(flow.cwnd(), 5 * MDS);
    assert_eq!(text(&flow, "loss_class"), "congestion");
    assert_eq!(text(&flow, "network_state"), "unknown");
    assert_eq!(text(&flow, "delay_source"), "none");
}

// ---- Missing signals (ambiguous) ----

#[test]
fn without_d_or_earlier_bandwidth_the_state_is_unknown_and_veno_decides() {
    // Round 0 is stamped, round 1 is not: D is unknown in round 1 (an
    // unstamped ACK adds nothing once stamps have been seen), and bwe(t-RTT)
    // does not exist yet (round 0's ACK only opened the first sample). N =
    // 20 × (1 - 100/200) = 10 >= beta. Veno's rule: 1/2 packet per RTT.
    let mut flow = Flow::new(build("venodb", &[]));
    let start = flow.start;
    let window = flow.send_window();
    flow.ack_with(&window, ms(100), stamps(start, 40));
    flow.round(ms(200));
    assert_eq!(text(&flow, "network_state"), "unknown");
    assert_eq!(flow.internal("increase_per_rtt"), Some(AI_STABLE));
    assert_eq!(flow.internal("relative_delay_ms"), None);
    assert_eq!(flow.internal("n_packets"), Some(10.0));
    assert_eq!(text(&flow, "delay_source"), "receive_timestamps");
    // A loss now, at N >= beta with D unknown: the D >= 0 branch, halve.
    let cwnd = flow.cwnd();
    let window = flow.send_window();
    flow.advance(ms(10));
    flow.lose(&window[..1], false);
    assert_eq!(flow.cwnd(), cwnd / 2);
    // A whole round went by without stamps: back to ACK arrival spacing.
    flow.ack(&window[1..], ms(200));
    assert_eq!(text(&flow, "delay_source"), "ack_arrival");
}

// ---- Partial-ACK recovery (3.2) ----

#[test]
fn several_losses_in_one_window_cause_one_reduction() {
    let (mut flow, _) = from_ca(BWE_WEIGHT, &[Round { rtt: 110, owd: 45 }]);
    let cwnd = flow.cwnd();
    let start = flow.start;
    let window = flow.send_window();
    flow.advance(ms(40));
    flow.lose(&window[5..6], false);
    let reduced = cwnd / 2;
    assert_eq!(flow.cwnd(), reduced);
    assert_eq!(flow.cc.state(), CcState::Recovery);
    // NewReno's partial ACKs: some of the window acknowledged, more holes
    // found, each in its own congestion event. No second reduction.
    flow.ack_with(&window[..5], ms(110), stamps(start, 45));
    for (k, lost) in [&window[9..10], &window[20..23], &window[40..41]]
        .iter()
        .enumerate()
    {
        flow.advance(ms(10));
        flow.lose(lost, false);
        assert_eq!(flow.cwnd(), reduced, "hole {k}");
        assert_eq!(flow.cc.ssthresh(), reduced);
        assert_eq!(flow.cc.state(), CcState::Recovery);
    }
    let rest: Vec<_> = flow.in_flight().to_vec();
    flow.ack_with(&rest, ms(110), stamps(start, 45));
    assert_eq!(flow.cc.state(), CcState::Recovery);
    assert_eq!(flow.cwnd(), reduced, "partial ACKs keep the window fixed");
    // The full ACK: a packet sent after the reduction.
    let next = flow.send_window();
    flow.ack_with(&next[..1], ms(110), stamps(start, 45));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    // A retransmission lost later is a packet sent after the reduction: a
    // new epoch, a new reduction.
    flow.advance(ms(40));
    flow.lose(&next[1..2], false);
    assert!(flow.cwnd() < reduced);
}

// ---- Fallback to ACK arrival spacing ----

#[test]
fn without_receive_timestamps_ack_arrival_spacing_gives_d() {
    // No stamps: D = (RTT_k − ACK delay_k) − (RTT_{k−1} − ACK delay_{k−1}).
    // The step's `owd` is the ACK delay here.
    let steps = [
        Round { rtt: 100, owd: 0 },
        Round { rtt: 100, owd: 5 },
        Round { rtt: 100, owd: 0 },
        LossRound { rtt: 100, owd: 0 },
        Round { rtt: 100, owd: 0 },
        Round { rtt: 110, owd: 0 },
        Round { rtt: 120, owd: 25 },
        Round { rtt: 125, owd: 0 },
        Round { rtt: 120, owd: 0 },
    ];
    let (flow, d) = run(&["bwe_history_weight=0"], 0.0, Source::AckArrival, &steps);
    assert_eq!(text(&flow, "delay_source"), "ack_arrival");
    assert_eq!(d[0].map(|d| d.state), Some("unsaturated"));
    // The ACK delay is taken out: 120 − 25 after 110 − 0 is D = −15 ms.
    let states: Vec<&str> = d.iter().flatten().map(|d| d.state).collect();
    assert!(states.contains(&"decreasing_congestion"), "{states:?}");
    assert!(states.contains(&"increasing_congestion"), "{states:?}");
    assert_eq!(flow.internal("relative_delay_ms"), Some(-5.0));
}

#[test]
fn ack_delay_beyond_the_rtt_is_capped() {
    // A peer claiming an ACK delay longer than the RTT: held for the RTT at
    // most, so D stays within what a path can do.
    let steps = [Round { rtt: 100, owd: 0 }, Round { rtt: 100, owd: 0 }];
    let (mut flow, _) = run(&[], BWE_WEIGHT, Source::AckArrival, &steps);
    let window = flow.send_window();
    flow.ack_with(&window, ms(100), ack_delay_only(1_000_000));
    assert_eq!(flow.internal("relative_delay_ms"), Some(-100.0));
    assert_eq!(flow.internal("delay_samples_rejected"), Some(0.0));
}

// ---- Hostile stamps ----

/// Stamps as [`stamps`], except that packets 3 and 6 of a frame (never its
/// first or last) go back to the peer's basis and jump an hour ahead, and
/// from packet `step_from` on the peer's clock is 500 s further ahead;
/// judged by `judge` as the host judges them.
fn hostile_stamps(
    start: Instant,
    owd: u64,
    step_from: u64,
    judge: &mut HostClock,
) -> impl FnMut(&mut [AckedPacket]) -> FrameExtras + '_ {
    move |acked: &mut [AckedPacket]| {
        let len = acked.len();
        for (i, p) in acked.iter_mut().enumerate() {
            let clean = p.time_sent.duration_since(start) + ms(owd) + PEER_CLOCK_AHEAD;
            let stepped = if p.pkt_num >= step_from {
                clean + Duration::from_secs(500)
            } else {
                clean
            };
            p.receive_time = Some(match i {
                3 if len > 8 => Duration::ZERO,
                6 if len > 8 => stepped + Duration::from_secs(3600),
                _ => stepped,
            });
        }
        judge.on_ack_frame();
        for p in acked.iter_mut() {
            if let Some(received) = p.receive_time {
                let verdict = judge.judge(received, p.time_sent, p.rtt);
                p.receive_time = verdict.map(|_| received);
                p.clock_epoch = verdict.unwrap_or(0);
            }
        }
        FrameExtras::default()
    }
}

#[test]
fn hostile_stamps_do_not_disturb_the_window() {
    let mut steps: Vec<Step> = INTO_CA.to_vec();
    for (rtt, owd) in [
        (110, 45),
        (115, 45),
        (120, 50),
        (110, 35),
        (100, 40),
        (120, 60),
    ] {
        steps.push(Round { rtt, owd });
    }
    steps.push(LossRound { rtt: 120, owd: 65 });
    steps.push(Round { rtt: 110, owd: 50 });
    // Two ACK frames per window: the host's judge believes a new clock only
    // once the run of stamps that agree with it spans two frames, and then
    // from the first stamp of the second (the delay change between the
    // last stamp before the step and that one is lost: two clocks). Here
    // the step falls in a window's first frame, and the one-way delay is
    // the same over both.
    let mut clean = Flow::new(build("venodb", &[])).with_acks_per_window(2);
    let mut hostile = Flow::new(build("venodb", &[])).with_acks_per_window(2);
    let mut judge = HostClock::default();
    // The peer's clock steps in the middle of the first frame of the first
    // window sent after packet 400.
    let mut step_from = u64::MAX;
    for step in &steps {
        drive(&mut clean, *step, Source::Stamps);
        let start = hostile.start;
        let window = hostile.send_window();
        if step_from == u64::MAX && window[0].pkt_num > 400 {
            step_from = window[window.len() / 4].pkt_num;
        }
        match *step {
            Round { rtt, owd } => {
                hostile.ack_with(
                    &window,
                    ms(rtt),
                    hostile_stamps(start, owd, step_from, &mut judge),
                );
            }
            LossRound { rtt, owd } => {
                hostile.advance(ms(rtt / 2));
                hostile.lose(&window[..1], false);
                let frame = &window[1..];
                hostile.ack_with(
                    frame,
                    ms(rtt),
                    hostile_stamps(start, owd, step_from, &mut judge),
                );
            }
        }
        assert_eq!(hostile.cwnd(), clean.cwnd(), "{step:?}");
        assert_eq!(hostile.cc.ssthresh(), clean.cc.ssthresh());
        for name in [
            "relative_delay_ms",
            "relative_delay_diff_ms",
            "increase_per_rtt",
        ] {
            assert_eq!(
                hostile.internal(name),
                clean.internal(name),
                "{name} {step:?}"
            );
        }
        assert_eq!(
            text(&hostile, "network_state"),
            text(&clean, "network_state")
        );
    }
    assert_ne!(step_from, u64::MAX, "the clock step happened");
    assert!(judge.counts().refused > 10);
    assert_eq!(judge.counts().steps, 1);
    assert_eq!(clean.internal("delay_samples_rejected"), Some(0.0));
}

// ---- Parameters and registration ----

#[test]
fn defaults_and_parameters() {
    let spec = ControllerSpec::new("venodb").unwrap();
    let p = spec.params();
    for (name, value) in [
        ("beta", BETA),
        ("ai_decreasing", AI_DECREASING),
        ("ai_stable_dd_negative", AI_STABLE_DD_NEGATIVE),
        ("increase_at_beta", AI_STABLE),
        ("ai_increasing_dd_nonpositive", AI_INCREASING_DD_NONPOSITIVE),
        ("ai_increasing_dd_positive", AI_INCREASING_DD_POSITIVE),
        ("ai_unsaturated_dd_negative", AI_UNSATURATED_DD_NEGATIVE),
        ("increase_below_beta", AI_UNSATURATED),
        ("congestion_loss_factor", MD_CONGESTION),
        (
            "congestion_d_negative_loss_factor",
            MD_CONGESTION_D_NEGATIVE,
        ),
        ("random_loss_factor", MD_RANDOM),
        ("bwe_history_weight", BWE_WEIGHT),
        ("delay_tolerance_ms", 0.0),
        ("bwe_tolerance", 0.0),
    ] {
        assert_eq!(p.number(name), Some(value), "{name}");
    }
    assert_eq!(build("venodb", &[]).name(), "venodb");
    assert!(vegas_cc::registry::all_names().contains(&"venodb"));
}

#[test]
fn delay_tolerance_turns_small_d_into_zero() {
    // D = +2 ms is State 3 by default, State 2 with a 2 ms tolerance.
    let strict = from_ca(0.0, &[Round { rtt: 110, owd: 42 }]).1;
    assert_eq!(decision(&strict, 0).state, "increasing_congestion");
    let steps: Vec<Step> = INTO_CA
        .iter()
        .copied()
        .chain([Round { rtt: 110, owd: 42 }])
        .collect();
    let mut flow = Flow::new(build(
        "venodb",
        &["bwe_history_weight=0", "delay_tolerance_ms=2"],
    ));
    for step in steps {
        drive(&mut flow, step, Source::Stamps);
    }
    assert_eq!(text(&flow, "network_state"), "stable");
    assert_eq!(flow.internal("relative_delay_ms"), Some(2.0));
}

// ---- Robustness ----

/// Receive stamps for a frame in a property test.
#[derive(Clone, Debug)]
enum StampMode {
    None,
    Clean { owd_us: u64 },
    Garbage(Vec<u64>),
}

#[derive(Clone, Debug)]
enum Op {
    Common(random_events::Op),
    StampedAck {
        packets: usize,
        rtt_us: u64,
        ack_delay_us: u64,
        stamps: StampMode,
    },
}

fn stamp_mode() -> impl Strategy<Value = StampMode> {
    prop_oneof![
        Just(StampMode::None),
        (0u64..2_000_000).prop_map(|owd_us| StampMode::Clean { owd_us }),
        prop::collection::vec(any::<u64>(), 1..8).prop_map(StampMode::Garbage),
    ]
}

fn venodb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => random_events::op().prop_map(Op::Common),
        2 => (0usize..40, 0u64..3_000_000, prop_oneof![Just(u64::MAX), 0u64..1_000_000], stamp_mode())
            .prop_map(|(packets, rtt_us, ack_delay_us, stamps)| Op::StampedAck {
                packets, rtt_us, ack_delay_us, stamps
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_events_and_stamps_keep_the_window_sane(
        pairs in prop_oneof![
            Just(vec![]),
            Just(vec!["beta=0", "random_loss_factor=0", "congestion_loss_factor=0",
                      "congestion_d_negative_loss_factor=0", "bwe_history_weight=0"]),
            Just(vec!["beta=1000", "ai_unsaturated_dd_negative=100", "increase_below_beta=100",
                      "delay_tolerance_ms=10000", "bwe_tolerance=1"]),
        ],
        ops in prop::collection::vec(venodb_op(), 1..120),
    ) {
        let mut flow = Flow::new(build("venodb", &pairs));
        let mut max_datagram_size = MDS;
        for op in &ops {
            match op {
                Op::Common(op) => random_events::apply(&mut flow, op, &mut max_datagram_size),
                Op::StampedAck { packets, rtt_us, ack_delay_us, stamps } => {
                    let chosen: Vec<_> = flow.in_flight().iter().take(*packets).copied().collect();
                    let start = flow.start;
                    let ack_delay = Duration::from_micros(*ack_delay_us);
                    flow.ack_with(&chosen, Duration::from_micros(*rtt_us), |acked| {
                        for (i, p) in acked.iter_mut().enumerate() {
                            p.receive_time = match stamps {
                                StampMode::None => None,
                                StampMode::Clean { owd_us } => Some(
                                    p.time_sent.saturating_duration_since(start)
                                        + Duration::from_micros(*owd_us),
                                ),
                                StampMode::Garbage(values) => {
                                    values.get(i % values.len()).map(|v| Duration::from_nanos(*v))
                                }
                            };
                        }
                        FrameExtras { ack_delay, backward_queueing: None }
                    });
                }
            }
            check_invariants(flow.cc.as_ref());
        }
    }
}

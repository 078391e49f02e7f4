//! The Vegas skeleton (`vegas::Vegas<R: VegasRules>`) with scripted rules:
//! each test makes the rules answer one way and checks that the skeleton
//! carries the answer out, with the expected window computed here from the
//! test's own numbers.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{ms, reference_diff_packets, Flow, INITIAL_WINDOW_PACKETS, MDS, WINDOW};
use vegas_cc::events::{
    AckEvent, AckSummary, AckedPacket, CongestionEvent, PacketSent, RttSnapshot,
};
use vegas_cc::shared::base_rtt::BaseRttTracker;
use vegas_cc::shared::round_clock::{full_size_floor, CompletedRound, RoundRtt};
use vegas_cc::shared::window::Window;
use vegas_cc::vegas::{
    LossResponse, LossView, PacingView, RoundView, RttAdjustment, ScaledLoss, SlowStartGrowth,
    SlowStartStep, Vegas, VegasConfig, VegasRules, VegasView, WindowChange, PAPER_KEYS,
    PAPER_PARAMS,
};
use vegas_cc::{CcState, Internals, Pacing, ParamValues};

/// What the scripted rules answer.
#[derive(Clone, Copy, Debug)]
struct Script {
    growth: SlowStartGrowth,
    slow_start: SlowStartStep,
    /// Change of cwnd per congestion-avoidance round with a Diff.
    ca_change: WindowChange,
    loss: LossResponse,
    adjustment: RttAdjustment,
    /// The rules' own answer to "in slow start?", `None`: the default.
    in_slow_start: Option<bool>,
    /// The answer after each ACK's slow-start growth.
    ack_step: SlowStartStep,
    /// BaseRTT set anew at every round's end.
    rebase_to: Option<Duration>,
    /// The pacing asked for, `None`: the default.
    pacing: Option<Pacing>,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            growth: SlowStartGrowth::EveryOtherRound,
            slow_start: SlowStartStep::Continue,
            ca_change: WindowChange::Hold,
            loss: LossResponse::Keep,
            adjustment: RttAdjustment::default(),
            in_slow_start: None,
            ack_step: SlowStartStep::Continue,
            rebase_to: None,
            pacing: None,
        }
    }
}

/// What the skeleton asked of the rules.
#[derive(Clone, Debug, Default)]
struct Calls {
    /// Diff handed to each slow-start round.
    slow_start: Vec<Option<f64>>,
    /// Diff handed to each congestion-avoidance round.
    congestion_avoidance: Vec<f64>,
    /// The smallest RTT of each ACK as `observe_ack` saw it.
    observed_rtts: Vec<Duration>,
    /// The number of every round that ended.
    round_end_calls: Vec<u64>,
    /// `sent_after_decrease` of every congestion event.
    losses_after_decrease: Vec<bool>,
    /// cwnd the rules saw after each ACK's slow-start growth.
    grown_windows: Vec<usize>,
    /// cwnd and ssthresh the rules saw after each spurious loss.
    restored: Vec<(usize, usize)>,
}

#[derive(Debug)]
struct Scripted {
    script: Script,
    calls: Arc<Mutex<Calls>>,
}

impl Scripted {
    fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls
            .lock()
            .expect("no test thread panicked holding it")
    }
}

impl VegasRules for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn slow_start_growth(&self) -> SlowStartGrowth {
        self.script.growth
    }

    fn observe_ack(&mut self, ack: &AckEvent<'_>, _window: &Window) {
        if let Some(rtt) = ack.acked.iter().map(|p| p.rtt).min() {
            self.calls().observed_rtts.push(rtt);
        }
    }

    fn rtt_adjustment(&mut self, _ack: &AckEvent<'_>, _min_sample_size: usize) -> RttAdjustment {
        self.script.adjustment
    }

    fn slow_start_round(&mut self, round: &RoundView<'_>) -> SlowStartStep {
        self.calls().slow_start.push(round.diff_packets);
        self.script.slow_start
    }

    fn congestion_avoidance_round(&mut self, _round: &RoundView<'_>, diff: f64) -> WindowChange {
        self.calls().congestion_avoidance.push(diff);
        self.script.ca_change
    }

    fn in_slow_start(&self, window: &Window) -> bool {
        self.script
            .in_slow_start
            .unwrap_or_else(|| window.in_slow_start())
    }

    fn slow_start_ack(&mut self, window: &Window, _base_rtt: Option<Duration>) -> SlowStartStep {
        self.calls().grown_windows.push(window.cwnd());
        self.script.ack_step
    }

    fn on_round_end(&mut self, round: &CompletedRound, base_rtt: &mut BaseRttTracker) {
        self.calls().round_end_calls.push(round.index);
        if let Some(rtt) = self.script.rebase_to {
            base_rtt.refresh(rtt);
        }
    }

    fn spurious_loss_undone(&mut self, window: &Window) {
        self.calls()
            .restored
            .push((window.cwnd(), window.ssthresh()));
    }

    fn pacing(&self, vegas: &PacingView<'_>) -> Option<Pacing> {
        self.script.pacing.or_else(|| {
            vegas
                .profile
                .pacing(vegas.in_slow_start, vegas.window.cwnd(), vegas.rtt)
        })
    }

    fn loss_reaction(&mut self, _loss: &CongestionEvent, vegas: &LossView<'_>) -> LossResponse {
        self.calls()
            .losses_after_decrease
            .push(vegas.sent_after_decrease);
        self.script.loss
    }

    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals) {
        vegas.write_cwnd(out);
        vegas.write_measurements("round_rtt_ms", out);
    }
}

/// The paper's skeleton settings, with `adjust` applied.
fn config(adjust: impl FnOnce(&mut VegasConfig)) -> VegasConfig {
    let values = ParamValues::defaults("vegas", PAPER_PARAMS);
    let mut config = VegasConfig::read(&values, &PAPER_KEYS.vegas);
    adjust(&mut config);
    config
}

/// A flow whose controller is the skeleton with `script`'s rules.
fn flow(script: Script, config: VegasConfig) -> (Flow, Arc<Mutex<Calls>>) {
    flow_with(script, config, false)
}

/// [`flow`], with Linux's round ends ([`Vegas::with_linux_round_ends`]) if
/// `linux`.
fn flow_with(script: Script, config: VegasConfig, linux: bool) -> (Flow, Arc<Mutex<Calls>>) {
    let calls = Arc::new(Mutex::new(Calls::default()));
    let rules = Scripted {
        script,
        calls: Arc::clone(&calls),
    };
    let cc = Vegas::with_rules(rules, config, WINDOW);
    let cc = if linux {
        cc.with_linux_round_ends()
    } else {
        cc
    };
    (Flow::new(Box::new(cc)), calls)
}

fn calls(calls: &Arc<Mutex<Calls>>) -> Calls {
    calls.lock().expect("not poisoned").clone()
}

const W: usize = INITIAL_WINDOW_PACKETS * MDS;

#[test]
fn every_round_growth_doubles_and_asks_the_rules_each_round() {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        ..Script::default()
    };
    let (mut f, log) = flow(script, config(|_| {}));
    let cwnds = f.rounds(&[ms(100); 3]);
    // Every ACK of the whole window doubles it.
    assert_eq!(cwnds, [2 * W, 4 * W, 8 * W]);
    assert_eq!(calls(&log).slow_start.len(), 3);
}

#[test]
fn every_other_round_growth_holds_between_doublings() {
    let (mut f, log) = flow(Script::default(), config(|_| {}));
    let cwnds = f.rounds(&[ms(100); 5]);
    // Round 0 ends at the first ACK and is a growth round turned holding;
    // the rules are asked at the end of holding rounds only.
    assert_eq!(cwnds, [W, 2 * W, 2 * W, 4 * W, 4 * W]);
    assert_eq!(calls(&log).slow_start.len(), 2);
}

/// Slow start left by `script`'s answers on the ACK of nine packets of
/// the first window: the window and state then, and whether the loss of the
/// tenth (sent before the exit) still reduced the window, as it does when
/// the exit was no decrease.
fn exit_then_an_earlier_loss(script: Script) -> ((usize, usize), CcState, bool) {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        loss: LossResponse::Reduce {
            cwnd: 3 * MDS,
            ssthresh: 3 * MDS,
        },
        ..script
    };
    let (mut f, _) = flow(script, config(|_| {}));
    let window = f.send_window();
    f.ack(&window[..9], ms(100));
    let after_exit = ((f.cc.cwnd(), f.cc.ssthresh()), f.cc.state());
    f.lose(&window[9..], false);
    let reduced = (f.cc.cwnd(), f.cc.ssthresh()) == (3 * MDS, 3 * MDS);
    (after_exit.0, after_exit.1, reduced)
}

#[test]
fn exit_to_window_caps_cwnd_and_is_not_a_decrease() {
    let script = Script {
        slow_start: SlowStartStep::ExitToWindow(7 * MDS),
        ..Script::default()
    };
    assert_eq!(
        exit_then_an_earlier_loss(script),
        ((7 * MDS, 7 * MDS), CcState::CongestionAvoidance, true)
    );
}

#[test]
fn exit_to_a_larger_window_keeps_cwnd() {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        slow_start: SlowStartStep::ExitToWindow(100 * MDS),
        ..Script::default()
    };
    let (mut f, _) = flow(script, config(|_| {}));
    f.round(ms(100));
    // cwnd = min(cwnd, 100 packets); ssthresh = min(ssthresh, cwnd).
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (W, W));
}

#[test]
fn exit_scaled_cuts_by_the_factor_and_counts_as_a_decrease() {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        slow_start: SlowStartStep::ExitScaled,
        loss: LossResponse::Reduce {
            cwnd: 3 * MDS,
            ssthresh: 3 * MDS,
        },
        ..Script::default()
    };
    let (mut f, _) = flow(script, config(|c| c.ss_exit_factor = 0.5));
    let window = f.send_window();
    f.ack(&window[..9], ms(100));
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (W / 2, W / 2));
    assert_eq!(f.cc.state(), CcState::Recovery);
    // Sent before the decrease: section 3.3 ignores its loss.
    f.lose(&window[9..], false);
    assert_eq!(f.cc.cwnd(), W / 2);
}

#[test]
fn exit_scaled_by_one_leaves_slow_start_without_a_decrease() {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        slow_start: SlowStartStep::ExitScaled,
        ..Script::default()
    };
    let (mut f, _) = flow(script, config(|c| c.ss_exit_factor = 1.0));
    f.round(ms(100));
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (W, W));
    assert_eq!(f.cc.state(), CcState::CongestionAvoidance);
}

/// A flow out of slow start after its first round, cwnd = W.
fn in_congestion_avoidance(script: Script, config: VegasConfig) -> (Flow, Arc<Mutex<Calls>>) {
    in_congestion_avoidance_with(script, config, false)
}

/// [`in_congestion_avoidance`], with Linux's round ends if `linux`.
fn in_congestion_avoidance_with(
    script: Script,
    config: VegasConfig,
    linux: bool,
) -> (Flow, Arc<Mutex<Calls>>) {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        slow_start: SlowStartStep::ExitToWindow(W),
        ..script
    };
    let (mut f, log) = flow_with(script, config, linux);
    f.round(ms(100));
    assert_eq!(f.cc.state(), CcState::CongestionAvoidance);
    (f, log)
}

#[test]
fn congestion_avoidance_change_is_applied_with_the_rounds_diff() {
    let script = Script {
        ca_change: WindowChange::Increase(600),
        ..Script::default()
    };
    let (mut f, log) = in_congestion_avoidance(script, config(|_| {}));
    f.round(ms(150));
    f.round(ms(150));
    assert_eq!(f.cc.cwnd(), W + 2 * 600);
    // BaseRTT 100 ms, the round's (distinguished) RTT 150 ms, cwnd during
    // the round W, then W + 600 bytes.
    let expected = [
        reference_diff_packets(W as f64 / MDS as f64, 100.0, 150.0),
        reference_diff_packets((W + 600) as f64 / MDS as f64, 100.0, 150.0),
    ];
    let got = calls(&log).congestion_avoidance;
    assert_eq!(got.len(), 2);
    for (got, expected) in got.iter().zip(expected) {
        assert!((got - expected).abs() < 1e-9, "{got} vs {expected}");
    }
}

#[test]
fn a_decrease_stops_at_the_minimum_window() {
    let script = Script {
        ca_change: WindowChange::Decrease(100 * MDS),
        ..Script::default()
    };
    let (mut f, _) = in_congestion_avoidance(script, config(|_| {}));
    f.round(ms(100));
    assert_eq!(f.cc.cwnd(), 2 * MDS);
}

#[test]
fn rounds_without_a_diff_hold_cwnd_and_ask_no_rules() {
    let script = Script {
        ca_change: WindowChange::Increase(5 * MDS),
        ..Script::default()
    };
    // One ACK per window gives one sample per round: never enough here.
    let (mut f, log) = in_congestion_avoidance(script, config(|c| c.min_rtt_samples = 2));
    f.round(ms(100));
    f.round(ms(100));
    assert!(calls(&log).congestion_avoidance.is_empty());
    assert_eq!(f.cc.cwnd(), W);
}

/// Linux's round ends, a window of `W` in congestion avoidance, and rounds
/// that never have enough samples for a Diff.
fn linux_rounds_without_a_diff() -> (Flow, Arc<Mutex<Calls>>) {
    let script = Script {
        ca_change: WindowChange::Increase(5 * MDS),
        loss: LossResponse::Reduce {
            cwnd: W,
            ssthresh: W,
        },
        ..Script::default()
    };
    // Never enough samples, however the window is acknowledged.
    in_congestion_avoidance_with(script, config(|c| c.min_rtt_samples = 1000), true)
}

#[test]
fn linux_rounds_without_a_diff_get_renos_increase() {
    let (mut f, log) = linux_rounds_without_a_diff();
    let ssthresh = f.cc.ssthresh();
    // Each round's one ACK acknowledges the whole window: one packet per
    // cwnd acknowledged, so one per round.
    f.round(ms(100));
    f.round(ms(100));
    assert!(calls(&log).congestion_avoidance.is_empty());
    assert_eq!(f.cc.cwnd(), W + 2 * MDS);
    // No Diff: no ssthresh floor either.
    assert_eq!(f.cc.ssthresh(), ssthresh);
}

#[test]
fn linux_renos_credit_carries_over_and_a_decrease_forgets_it() {
    // Half a window acknowledged by the ACK ending each round: an increase
    // every second round, the half carried over between them.
    let half_window_rounds = |f: &mut Flow, rounds: usize| {
        for _ in 0..rounds {
            let sent = f.send_window();
            let half = sent.len() / 2;
            f.ack(&sent[..half], ms(100));
            f.ack(&sent[half..], ms(100));
        }
    };
    let (mut f, _) = linux_rounds_without_a_diff();
    // Round ends fall on the first ACK of each window (half of it).
    half_window_rounds(&mut f, 1);
    let after_one = f.cc.cwnd();
    half_window_rounds(&mut f, 1);
    assert_eq!(f.cc.cwnd(), after_one + MDS, "two halves make one increase");
    // Now half a window of credit again, then a decrease: the credit goes.
    half_window_rounds(&mut f, 1);
    let credit_left = f.cc.cwnd();
    f.advance(ms(1));
    let lost = f.send(1);
    f.lose(&lost, false);
    assert_eq!(f.cc.cwnd(), W);
    // Recovery ends at the first packet sent after the decrease; the rounds
    // after it need two halves again, not one.
    let sent = f.send_window();
    f.ack(&sent, ms(100));
    let before = f.cc.cwnd();
    half_window_rounds(&mut f, 1);
    assert_eq!(
        f.cc.cwnd(),
        before,
        "the credit before the decrease is gone"
    );
    assert!(credit_left > W);
}

#[test]
fn the_ssthresh_floor_only_raises_after_rounds_with_a_diff() {
    // A loss leaves ssthresh (2 packets) below 3/4 of cwnd (12 packets).
    let script = Script {
        loss: LossResponse::Reduce {
            cwnd: 12 * MDS,
            ssthresh: 2 * MDS,
        },
        ..Script::default()
    };
    let lossy = |min_rtt_samples: u64, linux: bool| {
        let (mut f, _) = in_congestion_avoidance_with(
            script,
            config(|c| c.min_rtt_samples = min_rtt_samples),
            linux,
        );
        f.advance(ms(1));
        let lost = f.send(1);
        f.lose(&lost, false);
        // Out of recovery, then one round with (or without) a Diff.
        let sent = f.send_window();
        f.ack(&sent, ms(100));
        f.round(ms(100));
        f
    };
    let linux = lossy(1, true);
    assert_eq!(linux.cc.cwnd(), 12 * MDS);
    assert_eq!(linux.cc.ssthresh(), 12 * MDS / 2 + 12 * MDS / 4);
    // The paper's Vegas leaves it, and so does Linux after a round without
    // a Diff.
    assert_eq!(lossy(1, false).cc.ssthresh(), 2 * MDS);
    assert_eq!(lossy(1000, true).cc.ssthresh(), 2 * MDS);
}

#[test]
fn adjusted_rtts_are_what_base_rtt_and_the_round_see() {
    let script = Script {
        ca_change: WindowChange::Hold,
        adjustment: RttAdjustment {
            subtract: ms(40),
            base_rtt_probe: Some(ms(30)),
        },
        ..Script::default()
    };
    let (mut f, log) = in_congestion_avoidance(script, config(|_| {}));
    f.round(ms(100));
    let log = calls(&log);
    // The rules' estimators see the RTT as measured.
    assert!(log.observed_rtts.iter().all(|r| *r == ms(100)));
    // BaseRTT is the probe (30 ms), below every adjusted RTT (60 ms); the
    // round's RTT is the adjusted one.
    let expected = reference_diff_packets(W as f64 / MDS as f64, 30.0, 60.0);
    assert_eq!(log.congestion_avoidance.len(), 1);
    assert!((log.congestion_avoidance[0] - expected).abs() < 1e-9);
}

/// Acknowledges `packets` in one ACK `rtt` later, summed as the host sums
/// them (RTT samples from full-size packets only; the test flow's ACKs count
/// every packet, which makes the skeleton copy the packets to adjust them).
fn ack_summed_as_the_host_does(f: &mut Flow, packets: &[PacketSent], rtt: Duration) {
    let acked: Vec<AckedPacket> = packets
        .iter()
        .map(|p| {
            let mut a = AckedPacket::new(p.pkt_num, p.size, p.time_sent, p.time_sent + rtt);
            a.rtt = rtt;
            a
        })
        .collect();
    let now = acked.iter().map(|a| a.time_acked).max().expect("packets");
    f.cc.on_ack(&AckEvent {
        now,
        acked: &acked,
        summary: AckSummary::of(&acked, full_size_floor(MDS)),
        ack_delay: Duration::ZERO,
        rtt: RttSnapshot::uniform(rtt),
        bytes_in_flight: 0,
        app_limited: false,
        backward_queueing: None,
    });
}

#[test]
fn every_round_rtt_is_read_adjusted_and_shown_adjusted() {
    // The skeleton subtracts the adjustment where it reads an RTT instead
    // of copying the packets: the round's minimum and mean come from the
    // ACKs' adjusted samples, the distinguished packet's is corrected when
    // the round ends, and qlog shows what Diff used. Copied packets (the
    // test flow's ACKs) give the same.
    for round_rtt in [RoundRtt::Minimum, RoundRtt::Mean, RoundRtt::Distinguished] {
        for as_the_host in [true, false] {
            let case = format!("{round_rtt:?}, summed as the host does: {as_the_host}");
            let script = Script {
                adjustment: RttAdjustment {
                    subtract: ms(40),
                    base_rtt_probe: Some(ms(30)),
                },
                ..Script::default()
            };
            let (mut f, log) = in_congestion_avoidance(script, config(|c| c.round_rtt = round_rtt));
            if as_the_host {
                let window = f.send_window();
                ack_summed_as_the_host_does(&mut f, &window, ms(100));
            } else {
                f.round(ms(100));
            }
            let expected = reference_diff_packets(W as f64 / MDS as f64, 30.0, 60.0);
            let log = calls(&log);
            assert_eq!(log.congestion_avoidance.len(), 1, "{case}");
            assert!(
                (log.congestion_avoidance[0] - expected).abs() < 1e-9,
                "{case}: Diff {} against {expected}",
                log.congestion_avoidance[0]
            );
            assert_eq!(f.internal("round_rtt_ms"), Some(60.0), "{case}");
            assert_eq!(f.internal("base_rtt_ms"), Some(30.0), "{case}");
        }
    }
}

#[test]
fn an_adjustment_as_long_as_the_rtts_leaves_no_sample() {
    // Every RTT minus 100 ms is zero, which is no sample: the round has no
    // RTT, so no Diff and the rules are not asked; BaseRTT is the probe.
    let script = Script {
        adjustment: RttAdjustment {
            subtract: ms(100),
            base_rtt_probe: Some(ms(30)),
        },
        ..Script::default()
    };
    let (mut f, log) = in_congestion_avoidance(script, config(|_| {}));
    f.round(ms(100));
    assert!(calls(&log).congestion_avoidance.is_empty());
    assert_eq!(f.internal("base_rtt_ms"), Some(30.0));
    // The round that just ended had no RTT to show.
    assert_eq!(f.internal("round_rtt_ms"), None);
}

#[test]
fn keep_leaves_the_window_alone() {
    let (mut f, _) = in_congestion_avoidance(Script::default(), config(|_| {}));
    let window = f.send_window();
    f.lose(&window[..1], false);
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (W, W));
    assert_eq!(f.cc.state(), CcState::CongestionAvoidance);
}

#[test]
fn reduce_applies_once_per_epoch() {
    let script = Script {
        loss: LossResponse::Reduce {
            cwnd: 6 * MDS,
            ssthresh: 5 * MDS,
        },
        ..Script::default()
    };
    let (mut f, _) = in_congestion_avoidance(script, config(|_| {}));
    let window = f.send_window();
    f.advance(ms(1));
    f.lose(&window[..1], false);
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (6 * MDS, 5 * MDS));
    assert_eq!(f.cc.state(), CcState::Recovery);
    // Same window, sent before the reduction: no second cut.
    f.advance(ms(1));
    f.lose(&window[1..2], false);
    assert_eq!(f.cc.cwnd(), 6 * MDS);
}

#[test]
fn timeout_goes_back_to_the_minimum_window_and_slow_start() {
    let script = Script {
        loss: LossResponse::Timeout { ssthresh: 8 * MDS },
        ..Script::default()
    };
    let (mut f, _) = in_congestion_avoidance(script, config(|_| {}));
    let window = f.send_window();
    f.advance(ms(500));
    f.lose(&window, true);
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (2 * MDS, 8 * MDS));
    // A packet sent after the timeout ends recovery; slow start then grows
    // from a growth round.
    let sent = f.send_window();
    f.ack(&sent, ms(100));
    assert_eq!(f.cc.state(), CcState::SlowStart);
    let sent = f.send_window();
    f.ack(&sent, ms(100));
    assert!(f.cc.cwnd() > 2 * MDS, "cwnd {}", f.cc.cwnd());
}

#[test]
fn spurious_loss_restores_and_a_new_datagram_size_keeps_the_packet_count() {
    let (mut f, _) = in_congestion_avoidance(Script::default(), config(|_| {}));
    assert!(f.cc.on_spurious_loss(12 * MDS, 11 * MDS));
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (12 * MDS, 11 * MDS));
    f.cc.on_max_datagram_size(1000);
    assert_eq!(f.cc.cwnd(), 12 * 1000);
}

/// Half a window of Reno credit under Linux's round ends, then `reset`:
/// whether the next half-window round still earned an increase.
fn credit_after(reset: impl FnOnce(&mut Flow)) -> bool {
    let (mut f, _) = linux_rounds_without_a_diff();
    let half_window_round = |f: &mut Flow| {
        let sent = f.send_window();
        let half = sent.len() / 2;
        f.ack(&sent[..half], ms(100));
        f.ack(&sent[half..], ms(100));
    };
    half_window_round(&mut f);
    reset(&mut f);
    let before = f.cc.cwnd();
    half_window_round(&mut f);
    f.cc.cwnd() > before
}

#[test]
fn a_restore_and_a_new_datagram_size_forget_renos_credit() {
    assert!(credit_after(|_| {}), "half a window twice is an increase");
    assert!(!credit_after(|f| {
        let (cwnd, ssthresh) = (f.cc.cwnd(), f.cc.ssthresh());
        assert!(f.cc.on_spurious_loss(cwnd, ssthresh));
    }));
    assert!(!credit_after(|f| f.cc.on_max_datagram_size(MDS)));
}

#[test]
fn window_changes_from_bytes_keep_their_sign() {
    assert_eq!(WindowChange::from(600), WindowChange::Increase(600));
    assert_eq!(WindowChange::from(-600), WindowChange::Decrease(600));
    assert_eq!(WindowChange::from(0), WindowChange::Hold);
    let most = usize::try_from(i64::MIN.unsigned_abs()).expect("64-bit usize");
    assert_eq!(WindowChange::from(i64::MIN), WindowChange::Decrease(most));
}

/// In congestion avoidance with ssthresh restored above cwnd and the rules
/// saying they are out of slow start, a round changes cwnd by `change`.
fn after_a_restore(change: WindowChange) -> Flow {
    let script = Script {
        ca_change: change,
        in_slow_start: Some(false),
        ..Script::default()
    };
    let (mut f, _) = in_congestion_avoidance(script, config(|_| {}));
    assert!(f.cc.on_spurious_loss(W, 20 * MDS));
    f.round(ms(100));
    f
}

#[test]
fn a_decrease_of_no_bytes_still_caps_ssthresh_and_hold_does_not() {
    let f = after_a_restore(WindowChange::Decrease(0));
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (W, W));
    let f = after_a_restore(WindowChange::Hold);
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (W, 20 * MDS));
}

#[test]
fn the_rules_say_whether_slow_start_runs() {
    // cwnd < ssthresh, but the rules say avoidance: no growth, a
    // congestion-avoidance round, and the state says so.
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        in_slow_start: Some(false),
        ca_change: WindowChange::Increase(MDS),
        ..Script::default()
    };
    let (mut f, log) = flow(script, config(|_| {}));
    assert_eq!(f.cc.state(), CcState::CongestionAvoidance);
    f.round(ms(100));
    assert_eq!(f.cc.cwnd(), W + MDS);
    assert_eq!(f.cc.ssthresh(), usize::MAX);
    let log = calls(&log);
    assert_eq!(
        (log.slow_start.len(), log.congestion_avoidance.len()),
        (0, 1)
    );
    assert!(log.grown_windows.is_empty());
    // cwnd >= ssthresh, but the rules say slow start: it grows.
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        slow_start: SlowStartStep::ExitToWindow(W),
        in_slow_start: Some(true),
        ..Script::default()
    };
    let (mut f, _) = flow(script, config(|_| {}));
    f.round(ms(100));
    assert_eq!(f.cc.ssthresh(), W);
    assert_eq!(f.cc.state(), CcState::SlowStart);
    let sent = f.send_window();
    f.ack(&sent, ms(100));
    // Window::slow_start stops at ssthresh: what grows past it is the
    // rules' (the ACK step); here nothing does.
    assert_eq!(f.cc.cwnd(), W);
}

#[test]
fn an_ack_step_jumps_after_the_growth() {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        ack_step: SlowStartStep::JumpTo(25 * MDS),
        ..Script::default()
    };
    let (mut f, log) = flow(script, config(|_| {}));
    let window = f.send_window();
    f.ack(&window[..9], ms(100));
    // The rules saw the window grown by the nine packets, then jumped it.
    assert_eq!(calls(&log).grown_windows, [W + 9 * MDS]);
    assert_eq!(f.cc.cwnd(), 25 * MDS);
    assert_eq!(f.cc.ssthresh(), usize::MAX);
    assert_eq!(f.cc.state(), CcState::SlowStart);
}

#[test]
fn an_ack_step_exits_at_its_window_without_a_decrease() {
    let script = Script {
        ack_step: SlowStartStep::ExitAt(30 * MDS),
        ..Script::default()
    };
    // Above cwnd too: cwnd = ssthresh = the rules' window.
    assert_eq!(
        exit_then_an_earlier_loss(script),
        ((30 * MDS, 30 * MDS), CcState::CongestionAvoidance, true)
    );
}

#[test]
fn no_ack_step_in_recovery_or_when_application_limited() {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        loss: LossResponse::Reduce {
            cwnd: 30 * MDS,
            ssthresh: usize::MAX,
        },
        ..Script::default()
    };
    let (mut f, log) = flow(script, config(|_| {}));
    f.app_limited = true;
    f.round(ms(100));
    assert!(calls(&log).grown_windows.is_empty());
    f.app_limited = false;
    let window = f.send_window();
    f.advance(ms(1));
    f.lose(&window[..1], false);
    assert_eq!(f.cc.state(), CcState::Recovery);
    f.ack(&window[1..], ms(100));
    assert!(calls(&log).grown_windows.is_empty());
}

#[test]
fn a_round_exit_at_a_window_above_cwnd_takes_it() {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        slow_start: SlowStartStep::ExitAt(40 * MDS),
        ..Script::default()
    };
    let (mut f, _) = flow(script, config(|_| {}));
    let window = f.send_window();
    f.ack(&window[..1], ms(100));
    assert_eq!((f.cc.cwnd(), f.cc.ssthresh()), (40 * MDS, 40 * MDS));
    assert_eq!(f.cc.state(), CcState::CongestionAvoidance);
}

#[test]
fn a_round_jump_sets_cwnd_and_slow_start_goes_on() {
    let script = Script {
        growth: SlowStartGrowth::EveryRound,
        slow_start: SlowStartStep::JumpTo(40 * MDS),
        ..Script::default()
    };
    let (mut f, log) = flow(script, config(|_| {}));
    let window = f.send_window();
    // The first ACK ends round 0: the jump, then that ACK's growth.
    f.ack(&window[..1], ms(100));
    assert_eq!(f.cc.cwnd(), 40 * MDS + MDS);
    assert_eq!(f.cc.state(), CcState::SlowStart);
    assert_eq!(calls(&log).slow_start.len(), 1);
}

#[test]
fn every_round_end_reaches_the_rules_in_recovery_too() {
    let script = Script {
        loss: LossResponse::Reduce {
            cwnd: 6 * MDS,
            ssthresh: 6 * MDS,
        },
        ..Script::default()
    };
    let (mut f, log) = in_congestion_avoidance(script, config(|_| {}));
    let ended = calls(&log).round_end_calls.clone();
    assert_eq!(ended.len(), 1);
    let evaluated = calls(&log).congestion_avoidance.len();
    let window = f.send_window();
    f.advance(ms(1));
    f.lose(&window[..1], false);
    // The rest of the window was sent before the reduction: the round it
    // ends, ends in recovery, and is not evaluated.
    f.ack(&window[1..], ms(100));
    assert_eq!(f.cc.state(), CcState::Recovery);
    let log = calls(&log);
    // The next round reached the rules, and was not evaluated.
    assert_eq!(log.round_end_calls, [ended[0], ended[0] + 1]);
    assert_eq!(log.congestion_avoidance.len(), evaluated);
}

#[test]
fn on_round_end_may_set_base_rtt_anew() {
    let script = Script {
        rebase_to: Some(ms(150)),
        ..Script::default()
    };
    let (mut f, log) = in_congestion_avoidance(script, config(|_| {}));
    // BaseRTT 150 ms from the first round's end on: a round at 150 ms
    // queues nothing, whatever the smallest RTT seen (100 ms).
    f.round(ms(150));
    let log = calls(&log);
    assert_eq!(log.congestion_avoidance.len(), 1);
    assert!(log.congestion_avoidance[0].abs() < 1e-9);
}

#[test]
fn the_loss_view_says_whether_the_lost_packet_is_new() {
    let script = Script {
        loss: LossResponse::Keep,
        ..Script::default()
    };
    let (mut f, log) = in_congestion_avoidance(script, config(|_| {}));
    let window = f.send_window();
    f.advance(ms(1));
    f.lose(&window[..1], false);
    // Keep is no decrease: the next loss of the window is new too.
    f.lose(&window[1..2], false);
    assert_eq!(calls(&log).losses_after_decrease, [true, true]);
    let script = Script {
        loss: LossResponse::Reduce {
            cwnd: 6 * MDS,
            ssthresh: 6 * MDS,
        },
        ..Script::default()
    };
    let (mut f, log) = in_congestion_avoidance(script, config(|_| {}));
    let window = f.send_window();
    f.advance(ms(1));
    f.lose(&window[..1], false);
    f.advance(ms(1));
    f.lose(&window[1..2], false);
    assert_eq!(calls(&log).losses_after_decrease, [true, false]);
}

#[test]
fn a_spurious_loss_shows_the_rules_the_restored_window() {
    let (mut f, log) = in_congestion_avoidance(Script::default(), config(|_| {}));
    assert!(f.cc.on_spurious_loss(12 * MDS, 11 * MDS));
    assert_eq!(calls(&log).restored, [(12 * MDS, 11 * MDS)]);
}

#[test]
fn the_rules_may_pace_otherwise() {
    let own = Pacing::trains(1000.0, 2);
    let script = Script {
        pacing: Some(own),
        ..Script::default()
    };
    let (mut f, _) = flow(script, config(|_| {}));
    f.round(ms(100));
    assert_eq!(f.cc.pacing(), Some(own));
    // The default: the profile's rate from the smoothed RTT, with the
    // rules' answer to "in slow start?".
    let script = Script {
        in_slow_start: Some(false),
        ..Script::default()
    };
    let cfg = config(|_| {});
    let (mut f, _) = flow(script, cfg);
    f.round(ms(100));
    let rtt = f.rtt().expect("an RTT").smoothed_rtt;
    assert_eq!(
        f.cc.pacing(),
        cfg.pacing.pacing(false, f.cc.cwnd(), Some(rtt))
    );
    assert!(f.cc.pacing().is_some());
}

/// Rules that override nothing of the loss path but `scaled_loss`.
#[derive(Debug)]
struct LossByFactor(Option<ScaledLoss>);

impl VegasRules for LossByFactor {
    fn name(&self) -> &'static str {
        "loss-by-factor"
    }

    fn congestion_avoidance_round(&mut self, _round: &RoundView<'_>, _diff: f64) -> WindowChange {
        WindowChange::Hold
    }

    fn scaled_loss(&self) -> Option<&ScaledLoss> {
        self.0.as_ref()
    }

    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals) {
        vegas.write_cwnd(out);
    }
}

/// cwnd and ssthresh after a loss, then after a timeout, of a flow in
/// slow start at 2W whose rules are `rules`.
fn loss_then_timeout(rules: LossByFactor) -> [(usize, usize); 2] {
    let mut f = Flow::new(Box::new(Vegas::with_rules(rules, config(|_| {}), WINDOW)));
    f.rounds(&[ms(100); 2]);
    assert_eq!(f.cc.cwnd(), 2 * W);
    let window = f.send_window();
    f.advance(ms(1));
    f.lose(&window[..1], false);
    let after_loss = (f.cc.cwnd(), f.cc.ssthresh());
    f.advance(ms(1));
    f.lose(&window[1..2], true);
    [after_loss, (f.cc.cwnd(), f.cc.ssthresh())]
}

#[test]
fn the_default_loss_reaction_is_the_scaled_loss_or_none() {
    let scaled = ScaledLoss {
        loss_factor: 0.75,
        timeout_ssthresh_factor: 0.5,
    };
    // cwnd × 3/4 on the loss; on the timeout ssthresh = that × 1/2 and
    // cwnd the minimum window.
    let reduced = (2 * W) * 3 / 4;
    assert_eq!(
        loss_then_timeout(LossByFactor(Some(scaled))),
        [(reduced, reduced), (2 * MDS, reduced / 2)]
    );
    // Without one the window stays, whatever the loss.
    assert_eq!(
        loss_then_timeout(LossByFactor(None)),
        [(2 * W, usize::MAX), (2 * W, usize::MAX)]
    );
}

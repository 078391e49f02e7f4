//! Vegas-A (000_625d42b67da1ab13.txt, Fig. 1), driven round by round with
//! hand-built events. Each test takes one line of Fig. 1 (or one of the
//! choices the crate documents where the paper is ambiguous) and checks cwnd,
//! alpha and beta after every round against `common::vegas_a_model`, which
//! computes them again from the paper's formulas.
//!
//! Every scenario starts in congestion avoidance with cwnd 17.5 packets
//! (21000 bytes, 17 packets sent per round) and BaseRTT 100 ms, so that Diff
//! is 17.5 x (RTT - 100) / RTT: 0.83 at 105 ms, 1.59 at 110 ms, 2.92 at
//! 120 ms, 4.04 at 130 ms. Throughput is steered separately by idling
//! before a round: Th = packets x 1200 / (idle + RTT).

mod common;

use common::random_events::{apply, check_invariants, op};
use common::vegas_a_model::{diff_packets, in_congestion_avoidance, BASE_RTT_MS};
use common::{build, ms, Flow, MDS};
use proptest::prelude::*;
use vegas_cc::{registry, CcState, ControllerSpec};

fn lines(outcomes: &[common::vegas_a_model::Outcome]) -> Vec<u32> {
    outcomes.iter().map(|o| o.fig1.line).collect()
}

/// The scenario's flow and model with Vegas-A's initial alpha and beta.
fn vegas_a(alpha: f64, beta: f64) -> (Flow, common::vegas_a_model::Model) {
    let a = format!("alpha={alpha}");
    let b = format!("beta={beta}");
    in_congestion_avoidance("vegas-a", &[&a, &b], alpha, beta)
}

// ---- Fig. 1, line by line ----

#[test]
fn line_3_rising_throughput_between_thresholds_grows_cwnd_alpha_beta() {
    let (mut flow, mut model) = vegas_a(1.0, 3.0);
    // Round 0 has no Th(i-1); round 1 has a higher throughput (no idle).
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(50, 110), (0, 110)]);
    assert_eq!(lines(&out), [0, 3]);
    assert!(out[1].throughput > out[0].throughput);
    assert!(1.0 < out[1].diff && out[1].diff < 3.0);
    assert_eq!(flow.cwnd(), 21_000 + MDS);
    assert_eq!(flow.internal("alpha"), Some(2.0));
    assert_eq!(flow.internal("beta"), Some(4.0));
}

#[test]
fn line_5_falling_throughput_between_thresholds_updates_nothing() {
    let (mut flow, mut model) = vegas_a(1.0, 3.0);
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(0, 110), (50, 110)]);
    assert_eq!(lines(&out), [0, 5]);
    assert!(out[1].throughput < out[0].throughput);
    assert_eq!(flow.cwnd(), 21_000);
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));
}

#[test]
fn line_10_rising_throughput_below_alpha_above_one_grows_cwnd_only() {
    let (mut flow, mut model) = vegas_a(2.0, 4.0);
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(50, 110), (0, 110)]);
    assert_eq!(lines(&out), [0, 10]);
    assert!(out[1].diff < 2.0);
    assert_eq!(flow.cwnd(), 21_000 + MDS);
    assert_eq!(flow.internal("alpha"), Some(2.0));
    assert_eq!(flow.internal("beta"), Some(4.0));
}

#[test]
fn line_12_falling_throughput_below_alpha_above_one_shrinks_all() {
    let (mut flow, mut model) = vegas_a(2.0, 4.0);
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(0, 110), (50, 110)]);
    assert_eq!(lines(&out), [0, 12]);
    assert_eq!(flow.cwnd(), 21_000 - MDS);
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));
    assert!(
        flow.cc.ssthresh() <= flow.cwnd(),
        "still congestion avoidance"
    );
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
}

#[test]
fn line_15_below_alpha_at_one_grows_cwnd_whatever_the_throughput() {
    let (mut flow, mut model) = vegas_a(1.0, 3.0);
    // No Th(i-1), then falling, then rising throughput: line 15 each time.
    let out = common::vegas_a_model::check_rounds(
        &mut flow,
        &mut model,
        &[(0, 105), (80, 105), (0, 105)],
    );
    assert_eq!(lines(&out), [15, 15, 15]);
    assert!(out[1].throughput < out[0].throughput && out[2].throughput > out[1].throughput);
    assert_eq!(flow.cwnd(), 21_000 + 3 * MDS);
    assert_eq!(flow.internal("alpha"), Some(1.0));
}

#[test]
fn line_19_above_beta_above_one_shrinks_all_even_with_rising_throughput() {
    let (mut flow, mut model) = vegas_a(2.0, 4.0);
    // Round 0: Diff 2.92 between the thresholds, no Th(i-1). Round 1: Diff
    // 4.04 > beta with a higher throughput: line 19 does not look at it.
    // Round 2: alpha is 1 now, so Diff > beta is line 21.
    let out = common::vegas_a_model::check_rounds(
        &mut flow,
        &mut model,
        &[(60, 120), (0, 130), (0, 130)],
    );
    assert_eq!(lines(&out), [0, 19, 21]);
    assert!(out[1].throughput > out[0].throughput);
    // Line 19, then line 21 with the default reading: two packets less.
    assert_eq!(flow.cwnd(), 21_000 - 2 * MDS);
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));
}

#[test]
fn line_21_above_beta_at_one_shrinks_cwnd_by_default() {
    // Vegas's rule for Diff > beta (the default reading of line 21): cwnd
    // shrinks by a packet each round, alpha and beta stay at the floor.
    let (mut flow, mut model) = vegas_a(1.0, 3.0);
    let out = common::vegas_a_model::check_rounds(
        &mut flow,
        &mut model,
        &[(0, 130), (50, 130), (0, 130)],
    );
    assert_eq!(lines(&out), [21, 21, 21]);
    assert_eq!(flow.cwnd(), 21_000 - 3 * MDS);
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));
}

#[test]
fn line_21_as_printed_updates_nothing() {
    let (mut flow, mut model) = in_congestion_avoidance(
        "vegas-a",
        &["alpha=1", "beta=3", "above_beta_at_alpha_min=hold"],
        1.0,
        3.0,
    );
    let out = common::vegas_a_model::check_rounds(
        &mut flow,
        &mut model,
        &[(0, 130), (50, 130), (0, 130)],
    );
    assert_eq!(lines(&out), [21, 21, 21]);
    assert_eq!(flow.cwnd(), 21_000);
}

// ---- Where the paper is ambiguous ----

#[test]
fn diff_equal_to_alpha_or_beta_takes_no_branch() {
    // Diff of a 17.5-packet window at 110 ms, exactly as the crate computes
    // it; alpha (then beta) is set to that very number.
    let diff = diff_packets(17.5, BASE_RTT_MS, 110.0);
    for (alpha, beta) in [(diff, 3.0), (1.25, diff)] {
        let (mut flow, mut model) = vegas_a(alpha, beta);
        // Rising throughput: line 3 (or 10 / 19) if a comparison were not
        // strict.
        let out =
            common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(50, 110), (0, 110)]);
        assert_eq!(out[1].diff, diff);
        assert!(out[1].throughput > out[0].throughput);
        assert_eq!(lines(&out), [0, 0], "alpha {alpha}, beta {beta}");
        assert_eq!(flow.internal("fig1_line"), Some(0.0));
        assert_eq!(flow.cwnd(), 21_000);
        assert_eq!(flow.internal("alpha"), Some(alpha));
        assert_eq!(flow.internal("beta"), Some(beta));
    }
}

#[test]
fn equal_throughput_is_not_a_rise() {
    let (mut flow, mut model) = vegas_a(1.0, 3.0);
    let out =
        common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(0, 110), (0, 110), (0, 110)]);
    assert_eq!(out[1].throughput, out[0].throughput);
    assert_eq!(lines(&out), [0, 5, 5]);
    // With alpha above one, a flat throughput below alpha is line 12.
    let (mut flow, mut model) = vegas_a(2.0, 4.0);
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(0, 110), (0, 110)]);
    assert_eq!(out[1].throughput, out[0].throughput);
    assert_eq!(lines(&out), [0, 12]);
}

#[test]
fn alpha_never_goes_below_one() {
    // Whole steps: at alpha 1 the decreasing lines give way to 15 and 21.
    let (mut flow, mut model) = vegas_a(2.0, 4.0);
    let out = common::vegas_a_model::check_rounds(
        &mut flow,
        &mut model,
        &[(0, 105), (50, 105), (100, 105), (0, 130), (0, 130)],
    );
    assert_eq!(lines(&out), [0, 12, 15, 21, 21]);
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));

    // A fractional alpha: 1.5 - 1 stops at 1, and beta moves by the same 0.5.
    let (mut flow, mut model) = vegas_a(1.5, 3.5);
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(0, 130)]);
    assert_eq!(lines(&out), [19]);
    assert_eq!(flow.cwnd(), 21_000 - MDS, "cwnd takes the whole step");
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));
}

#[test]
fn alpha_min_is_the_one_of_fig_1() {
    // alpha_min 2: alpha = 2 is Fig. 1's "alpha = 1" (line 15, not 10/12).
    let mut flow = Flow::new(build("vegas-a", &["alpha_min=2", "alpha=2", "beta=4"]));
    flow.rounds(&[ms(100), ms(110), ms(110), ms(110), ms(110)]);
    flow.advance(ms(50));
    flow.round(ms(110));
    assert_eq!(flow.internal("fig1_line"), Some(15.0));
    assert_eq!(flow.cwnd(), 21_000 + MDS);
    let err = ControllerSpec::with_params("vegas-a", &["alpha_min=2"]).unwrap_err();
    assert!(err.to_string().contains("alpha_min"), "{err}");
}

#[test]
fn after_a_loss_there_is_no_previous_throughput_and_alpha_beta_stay() {
    let (mut flow, mut model) = vegas_a(1.0, 3.0);
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(50, 110), (0, 110)]);
    assert_eq!(lines(&out), [0, 3]);
    // A loss of a packet sent after the last decrease: Vegas's 3/4 cut.
    let cwnd = flow.cwnd();
    let window = flow.send_window();
    flow.advance(ms(120));
    flow.lose(&window[..1], false);
    let cut = (cwnd as f64 * 0.75) as usize;
    assert_eq!(flow.cwnd(), cut);
    assert_eq!(flow.cc.state(), CcState::Recovery);
    assert_eq!(flow.internal("alpha"), Some(2.0), "a loss leaves alpha");
    assert_eq!(flow.internal("beta"), Some(4.0), "and beta");
    flow.ack(&window[1..], ms(110));
    flow.round(ms(110));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    assert_eq!(flow.cwnd(), cut, "the recovery round is not evaluated");

    // The rounds before the loss are not Th(i-1) of the first one after it.
    model.cwnd = cut as f64;
    model.forget_throughputs();
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(0, 105), (0, 105)]);
    assert_eq!(out[0].fig1.line, 0, "no Th(i-1) after recovery: {out:?}");
    assert_ne!(out[1].fig1.line, 0);
}

#[test]
fn application_limited_rounds_do_not_grow_but_decreases_apply() {
    let (mut flow, _) = vegas_a(2.0, 4.0);
    flow.app_limited = true;
    // Line 3 would grow cwnd, alpha and beta.
    flow.advance(ms(50));
    flow.round(ms(120));
    flow.round(ms(120));
    assert_eq!(flow.internal("fig1_line"), Some(3.0));
    assert_eq!(flow.cwnd(), 21_000);
    assert_eq!(flow.internal("alpha"), Some(2.0));
    assert_eq!(flow.internal("beta"), Some(4.0));
    // Line 19 still shrinks them.
    flow.round(ms(130));
    assert_eq!(flow.internal("fig1_line"), Some(19.0));
    assert_eq!(flow.cwnd(), 21_000 - MDS);
    assert_eq!(flow.internal("alpha"), Some(1.0));
}

#[test]
fn slow_start_and_losses_are_vegas() {
    // Slow start through 80 packets, and slow start left with the 1/8 cut
    // (then the recovery RTT): no round of congestion avoidance yet.
    for path in [
        &[100, 102, 102, 102, 102, 102][..],
        &[100, 110, 110, 110, 110],
    ] {
        let mut ours = Flow::new(build("vegas-a", &[]));
        let mut vegas = Flow::new(build("vegas", &[]));
        for rtt in path {
            ours.round(ms(*rtt));
            vegas.round(ms(*rtt));
            assert_eq!(ours.cwnd(), vegas.cwnd(), "RTT {rtt}");
            assert_eq!(ours.cc.ssthresh(), vegas.cc.ssthresh());
            assert_eq!(ours.cc.state(), vegas.cc.state());
        }
        for persistent in [false, true] {
            for flow in [&mut ours, &mut vegas] {
                let window = flow.send_window();
                flow.advance(ms(500));
                flow.lose(&window, persistent);
            }
            assert_eq!(ours.cwnd(), vegas.cwnd(), "persistent: {persistent}");
            assert_eq!(ours.cc.ssthresh(), vegas.cc.ssthresh());
            assert_eq!(ours.cc.state(), CcState::Recovery);
        }
    }
}

// ---- Parameters, registration, internals ----

#[test]
fn every_constant_is_a_parameter_with_the_paper_default() {
    let spec = ControllerSpec::new("vegas-a").unwrap();
    let p = spec.params();
    for (name, default) in [
        ("alpha", 1.0),
        ("beta", 3.0),
        ("alpha_min", 1.0),
        ("cwnd_step_packets", 1.0),
        ("threshold_step_packets", 1.0),
        ("gamma", 1.0),
        ("loss_factor", 0.75),
    ] {
        assert_eq!(p.number(name), Some(default), "{name}");
    }
    assert!(registry::all_names().contains(&"vegas-a"));
    assert_eq!(build("vegas-a", &[]).name(), "vegas-a");
    assert!(ControllerSpec::with_params("vegas-a", &["alpha=4", "beta=3"]).is_err());

    // Steps of two packets: line 15 adds two packets.
    let (mut flow, _) = in_congestion_avoidance("vegas-a", &["cwnd_step_packets=2"], 1.0, 3.0);
    flow.round(ms(105));
    assert_eq!(flow.internal("fig1_line"), Some(15.0));
    assert_eq!(flow.cwnd(), 21_000 + 2 * MDS);
}

#[test]
fn internals_for_qlog() {
    let (mut flow, mut model) = vegas_a(1.0, 3.0);
    let out = common::vegas_a_model::check_rounds(&mut flow, &mut model, &[(50, 110), (0, 120)]);
    assert_eq!(flow.internal("base_rtt_ms"), Some(100.0));
    assert_eq!(flow.internal("round_rtt_ms"), Some(120.0));
    assert_eq!(flow.internal("diff_packets"), Some(out[1].diff));
    assert_eq!(flow.internal("cwnd_packets"), Some(18.5));
    assert_eq!(flow.internal("alpha"), Some(2.0));
    assert_eq!(flow.internal("beta"), Some(4.0));
    // 17 packets of 1200 bytes in 120 ms, in bits per second.
    let th = flow.internal("throughput_bps").unwrap();
    assert!((th - 17.0 * 1200.0 * 8.0 / 0.12).abs() < 1e-6, "{th}");
    assert_eq!(flow.internal("fig1_line"), Some(3.0));
}

// ---- Robustness ----

fn variant() -> impl Strategy<Value = Vec<&'static str>> {
    prop_oneof![
        Just(vec![]),
        Just(vec!["spike_suppression=on"]),
        Just(vec!["alpha_min=0", "alpha=0", "beta=0", "gamma=0"]),
        Just(vec![
            "cwnd_step_packets=1000",
            "threshold_step_packets=1000",
            "loss_factor=0",
            "ss_exit_factor=0",
        ]),
        Just(vec!["alpha=1000", "beta=1000", "alpha_min=1000"]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_events_keep_the_window_sane(
        pairs in variant(),
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut flow = Flow::new(build("vegas-a", &pairs));
        let mut max_datagram_size = MDS;
        for op in &ops {
            apply(&mut flow, op, &mut max_datagram_size);
            check_invariants(flow.cc.as_ref());
            let alpha = flow.internal("alpha").unwrap_or(f64::NAN);
            let beta = flow.internal("beta").unwrap_or(f64::NAN);
            prop_assert!(alpha.is_finite() && beta.is_finite() && alpha <= beta);
            if pairs.is_empty() {
                prop_assert!(alpha >= 1.0, "alpha {alpha}");
            }
        }
    }
}

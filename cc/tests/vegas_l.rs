//! Vegas-L (000_625d42b67da1ab13.txt, Fig. 2 and cases 1-6), driven round
//! by round with hand-built events. Each test takes one case of Fig. 2 (or
//! one of the choices the crate documents where the paper is ambiguous) and
//! checks cwnd, alpha, beta and the case after every round against
//! `common::vegas_a_model`, which computes them again from Fig. 1 and
//! Fig. 2.
//!
//! As for Vegas-A, every scenario starts in congestion avoidance with cwnd
//! 17.5 packets and BaseRTT 100 ms; idling before a round lowers its
//! throughput without changing its Diff. A case needs three consecutive
//! rounds, so it is decided at the third round of each scenario.

mod common;

use std::time::Duration;

use common::random_events::{apply, check_invariants, op};
use common::vegas_a_model::{check_rounds, in_congestion_avoidance, Model, Outcome};
use common::{build, ms, Flow, MDS};
use proptest::prelude::*;
use vegas_cc::{registry, CcState, ControllerSpec, WindowConfig};

fn vegas_l(alpha: f64, beta: f64) -> (Flow, Model) {
    let a = format!("alpha={alpha}");
    let b = format!("beta={beta}");
    in_congestion_avoidance("vegas-l", &[&a, &b], alpha, beta)
}

fn cases(outcomes: &[Outcome]) -> Vec<u32> {
    outcomes.iter().map(|o| o.case).collect()
}

fn lines(outcomes: &[Outcome]) -> Vec<u32> {
    outcomes.iter().map(|o| o.fig1.line).collect()
}

/// cwnd in bytes after `packets` packets of change from 17.5 packets.
fn cwnd_after(packets: f64) -> usize {
    ((17.5 + packets) * MDS as f64) as usize
}

// ---- Fig. 2, case by case ----

#[test]
fn case_1_accelerating_growth_doubles_vegas_a_growth() {
    let (mut flow, mut model) = vegas_l(1.0, 3.0);
    // Th rises twice, more the second time; Diff 2.92 between alpha 2 and
    // beta 4 at the third round: line 3, doubled.
    let out = check_rounds(&mut flow, &mut model, &[(200, 110), (100, 110), (0, 120)]);
    assert_eq!(cases(&out), [0, 0, 1]);
    assert_eq!(lines(&out), [0, 3, 3]);
    assert_eq!(out[2].scale, 2.0);
    assert_eq!(flow.cwnd(), cwnd_after(1.0 + 2.0));
    assert_eq!(flow.internal("alpha"), Some(4.0));
    assert_eq!(flow.internal("beta"), Some(6.0));
    assert_eq!(flow.internal("step_scale"), Some(2.0));
}

#[test]
fn case_2_decelerating_growth_follows_vegas_a() {
    let (mut flow, mut model) = vegas_l(1.0, 3.0);
    let out = check_rounds(&mut flow, &mut model, &[(200, 110), (0, 110), (0, 115)]);
    assert_eq!(cases(&out), [0, 0, 2]);
    assert_eq!(lines(&out), [0, 3, 3]);
    assert_eq!(flow.cwnd(), cwnd_after(2.0));
    assert_eq!(flow.internal("alpha"), Some(3.0));
    assert_eq!(flow.internal("beta"), Some(5.0));
}

#[test]
fn case_3_growth_after_a_fall_halves_vegas_a_growth() {
    let (mut flow, mut model) = vegas_l(1.0, 3.0);
    let out = check_rounds(&mut flow, &mut model, &[(0, 110), (100, 110), (0, 110)]);
    assert_eq!(cases(&out), [0, 0, 3]);
    assert_eq!(lines(&out), [0, 5, 3]);
    assert_eq!(flow.cwnd(), cwnd_after(0.5));
    assert_eq!(flow.internal("alpha"), Some(1.5));
    assert_eq!(flow.internal("beta"), Some(3.5));
}

#[test]
fn case_4_fall_after_growth_halves_vegas_a_reduction() {
    let (mut flow, mut model) = vegas_l(2.0, 4.0);
    let out = check_rounds(&mut flow, &mut model, &[(100, 110), (0, 110), (50, 110)]);
    assert_eq!(cases(&out), [0, 0, 4]);
    assert_eq!(lines(&out), [0, 10, 12]);
    assert_eq!(flow.cwnd(), cwnd_after(1.0 - 0.5));
    assert_eq!(flow.internal("alpha"), Some(1.5));
    assert_eq!(flow.internal("beta"), Some(3.5));
}

#[test]
fn case_5_slowing_fall_follows_vegas_a() {
    let (mut flow, mut model) = vegas_l(3.0, 5.0);
    let out = check_rounds(&mut flow, &mut model, &[(0, 110), (100, 110), (120, 110)]);
    assert_eq!(cases(&out), [0, 0, 5]);
    assert_eq!(lines(&out), [0, 12, 12]);
    assert_eq!(flow.cwnd(), cwnd_after(-2.0));
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));
}

#[test]
fn case_6_accelerating_fall_doubles_vegas_a_reduction() {
    let (mut flow, mut model) = vegas_l(4.0, 6.0);
    let out = check_rounds(&mut flow, &mut model, &[(0, 110), (20, 110), (200, 110)]);
    assert_eq!(cases(&out), [0, 0, 6]);
    assert_eq!(lines(&out), [0, 12, 12]);
    assert_eq!(flow.cwnd(), cwnd_after(-1.0 - 2.0));
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));
}

// ---- Where the paper is ambiguous ----

#[test]
fn a_step_against_the_case_direction_is_vegas_a_unscaled() {
    // Case 1 (growth accelerating) but Diff > beta with alpha > 1: line 19,
    // a reduction, which case 1 does not double.
    let (mut flow, mut model) = vegas_l(2.0, 4.0);
    let out = check_rounds(&mut flow, &mut model, &[(200, 120), (100, 120), (0, 140)]);
    assert_eq!(cases(&out), [0, 0, 1]);
    assert_eq!(lines(&out), [0, 3, 19]);
    assert_eq!(out[2].scale, 1.0);
    assert_eq!(flow.cwnd(), cwnd_after(1.0 - 1.0));
    assert_eq!(flow.internal("alpha"), Some(2.0));
    assert_eq!(flow.internal("step_scale"), Some(1.0));

    // Case 4 (fall after growth) but alpha = 1 and Diff < alpha: line 15, a
    // growth, which case 4 does not halve.
    let (mut flow, mut model) = vegas_l(1.0, 3.0);
    let out = check_rounds(&mut flow, &mut model, &[(100, 105), (0, 105), (50, 105)]);
    assert_eq!(cases(&out), [0, 0, 4]);
    assert_eq!(lines(&out), [15, 15, 15]);
    assert_eq!(flow.cwnd(), cwnd_after(3.0));
}

#[test]
fn growth_that_ignores_throughput_is_scaled_too() {
    // Line 15 (alpha = 1, Diff < alpha) grows cwnd whatever the throughput;
    // in case 1 that growth is doubled like any other.
    let (mut flow, mut model) = vegas_l(1.0, 3.0);
    let out = check_rounds(&mut flow, &mut model, &[(200, 105), (100, 105), (0, 105)]);
    assert_eq!(cases(&out), [0, 0, 1]);
    assert_eq!(lines(&out), [15, 15, 15]);
    assert_eq!(flow.cwnd(), cwnd_after(1.0 + 1.0 + 2.0));
}

#[test]
fn fewer_than_three_rounds_is_vegas_a_unscaled() {
    let (mut flow, mut model) = vegas_l(1.0, 3.0);
    let out = check_rounds(&mut flow, &mut model, &[(100, 110), (0, 110)]);
    assert_eq!(cases(&out), [0, 0]);
    assert_eq!(lines(&out), [0, 3]);
    assert_eq!(flow.cwnd(), cwnd_after(1.0));
    assert_eq!(flow.internal("case"), Some(0.0));
    assert_eq!(flow.internal("step_scale"), Some(1.0));
    assert!(flow.internal("diff_now_bps").is_some());
    assert_eq!(flow.internal("diff_before_bps"), None);
}

#[test]
fn flat_throughput_is_case_6() {
    // 17 packets in 2.125 s twice, then 16 packets in 2 s: the same 9600
    // bytes per second three times, exactly. Diff_Now = Diff_Before = 0 falls
    // to Fig. 2's last else: case 6, which doubles line 12's reduction.
    let (mut flow, mut model) = vegas_l(4.0, 6.0);
    let out = check_rounds(
        &mut flow,
        &mut model,
        &[(2015, 110), (2015, 110), (1890, 110)],
    );
    assert_eq!(out[0].throughput, 9600.0);
    assert_eq!(out[1].throughput, 9600.0);
    assert_eq!(out[2].throughput, 9600.0);
    assert_eq!(cases(&out), [0, 0, 6]);
    assert_eq!(lines(&out), [0, 12, 12]);
    assert_eq!(flow.cwnd(), cwnd_after(-1.0 - 2.0));
    assert_eq!(flow.internal("diff_now_bps"), Some(0.0));
    assert_eq!(flow.internal("diff_before_bps"), Some(0.0));
}

#[test]
fn doubled_reduction_stops_alpha_at_one() {
    // Case 6 at alpha 2: alpha - 2 would be 0; it stops at 1 and beta moves
    // by the same 1. cwnd takes the whole doubled step.
    let (mut flow, mut model) = vegas_l(3.0, 5.0);
    let out = check_rounds(&mut flow, &mut model, &[(0, 110), (20, 110), (200, 110)]);
    assert_eq!(cases(&out), [0, 0, 6]);
    assert_eq!(lines(&out), [0, 12, 12]);
    assert_eq!(flow.cwnd(), cwnd_after(-1.0 - 2.0));
    assert_eq!(flow.internal("alpha"), Some(1.0));
    assert_eq!(flow.internal("beta"), Some(3.0));
}

#[test]
fn half_steps_accumulate() {
    // Fall, rise (case 3: half of line 3), fall (case 4, line 5: nothing),
    // rise (case 3 again): two half steps make one packet, alpha and beta
    // move by one.
    let (mut flow, mut model) = vegas_l(1.0, 3.0);
    let out = check_rounds(
        &mut flow,
        &mut model,
        &[(0, 110), (100, 110), (0, 110), (100, 110), (0, 110)],
    );
    assert_eq!(cases(&out), [0, 0, 3, 4, 3]);
    assert_eq!(lines(&out), [0, 5, 3, 5, 3]);
    assert_eq!(flow.cwnd(), 21_000 + MDS);
    assert_eq!(flow.internal("alpha"), Some(2.0));
    assert_eq!(flow.internal("beta"), Some(4.0));
}

#[test]
fn fractions_of_a_byte_are_carried() {
    // With 1201-byte datagrams a half step is 600.5 bytes: 600 now, and the
    // half byte joins the next step.
    let window = WindowConfig {
        max_datagram_size: 1201,
        initial_cwnd_packets: 10,
    };
    let cc = ControllerSpec::new("vegas-l").unwrap().build(window);
    let mut flow = Flow::new(cc);
    flow.rounds(&[ms(100), ms(110), ms(110), ms(110), ms(110)]);
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    let start = flow.cwnd();
    let mut model = Model {
        vegas_l: true,
        line_21_holds: false,
        cwnd: start as f64,
        alpha: 1.0,
        beta: 3.0,
        throughputs: Vec::new(),
        max_datagram_size: 1201.0,
    };
    let mut grown = Vec::new();
    for (idle_ms, rtt_ms) in [(0, 110), (100, 110), (0, 110), (100, 110), (0, 110)] {
        flow.advance(ms(idle_ms));
        flow.round(ms(rtt_ms));
        let out = model.round(idle_ms, rtt_ms);
        assert_eq!(flow.internal("case"), Some(f64::from(out.case)), "{out:?}");
        assert_eq!(flow.internal("alpha"), Some(model.alpha));
        grown.push(flow.cwnd() - start);
    }
    assert_eq!(model.cwnd - start as f64, 1201.0);
    assert_eq!(grown, [0, 0, 600, 600, 1201]);
}

#[test]
fn losses_and_slow_start_are_vegas() {
    let mut ours = Flow::new(build("vegas-l", &[]));
    let mut vegas = Flow::new(build("vegas", &[]));
    for rtt in [100, 110, 110, 110, 110] {
        ours.round(ms(rtt));
        vegas.round(ms(rtt));
        assert_eq!(ours.cwnd(), vegas.cwnd());
        assert_eq!(ours.cc.state(), vegas.cc.state());
    }
    for flow in [&mut ours, &mut vegas] {
        let window = flow.send_window();
        flow.advance(ms(120));
        flow.lose(&window[..1], false);
    }
    assert_eq!(ours.cwnd(), vegas.cwnd());
    assert_eq!(ours.cc.ssthresh(), vegas.cc.ssthresh());
}

// ---- Parameters, registration, internals ----

#[test]
fn every_constant_is_a_parameter_with_the_paper_default() {
    let spec = ControllerSpec::new("vegas-l").unwrap();
    let p = spec.params();
    for (name, default) in [
        ("alpha", 1.0),
        ("beta", 3.0),
        ("alpha_min", 1.0),
        ("cwnd_step_packets", 1.0),
        ("threshold_step_packets", 1.0),
        ("case1_scale", 2.0),
        ("case3_scale", 0.5),
        ("case4_scale", 0.5),
        ("case6_scale", 2.0),
        ("gamma", 1.0),
    ] {
        assert_eq!(p.number(name), Some(default), "{name}");
    }
    assert!(registry::all_names().contains(&"vegas-l"));
    assert_eq!(build("vegas-l", &[]).name(), "vegas-l");
    assert!(ControllerSpec::with_params("vegas-l", &["alpha=4", "beta=3"]).is_err());

    // Case 3 at a quarter instead of a half.
    let (mut flow, _) = in_congestion_avoidance("vegas-l", &["case3_scale=0.25"], 1.0, 3.0);
    for idle_ms in [0, 100, 0] {
        flow.advance(ms(idle_ms));
        flow.round(ms(110));
    }
    assert_eq!(flow.internal("case"), Some(3.0));
    assert_eq!(flow.cwnd(), 21_000 + MDS / 4);
    assert_eq!(flow.internal("alpha"), Some(1.25));
}

#[test]
fn internals_for_qlog() {
    let (mut flow, mut model) = vegas_l(1.0, 3.0);
    let out = check_rounds(&mut flow, &mut model, &[(200, 110), (100, 110), (0, 120)]);
    for name in [
        "base_rtt_ms",
        "round_rtt_ms",
        "diff_packets",
        "alpha",
        "beta",
        "cwnd_packets",
        "throughput_bps",
    ] {
        assert!(flow.internal(name).is_some(), "{name}");
    }
    assert_eq!(flow.internal("case"), Some(1.0));
    let diff_now = (out[2].throughput - out[1].throughput) * 8.0;
    let diff_before = (out[1].throughput - out[0].throughput) * 8.0;
    let close = |name: &str, want: f64| {
        let got = flow.internal(name).unwrap_or(f64::NAN);
        assert!(
            (got - want).abs() <= 1e-9 * want.abs(),
            "{name}: {got} vs {want}"
        );
    };
    close("diff_now_bps", diff_now);
    close("diff_before_bps", diff_before);
}

// ---- Robustness ----

fn variant() -> impl Strategy<Value = Vec<&'static str>> {
    prop_oneof![
        Just(vec![]),
        Just(vec![
            "case1_scale=100",
            "case6_scale=100",
            "cwnd_step_packets=1000"
        ]),
        Just(vec![
            "case3_scale=0",
            "case4_scale=0.001",
            "alpha_min=0",
            "alpha=0"
        ]),
        Just(vec!["threshold_step_packets=0.3", "case3_scale=0.7"]),
        Just(vec!["alpha=1000", "beta=1000", "min_rtt_samples=1000"]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_events_keep_the_window_sane(
        pairs in variant(),
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut flow = Flow::new(build("vegas-l", &pairs));
        let mut max_datagram_size = MDS;
        for op in &ops {
            apply(&mut flow, op, &mut max_datagram_size);
            check_invariants(flow.cc.as_ref());
            let alpha = flow.internal("alpha").unwrap_or(f64::NAN);
            let beta = flow.internal("beta").unwrap_or(f64::NAN);
            prop_assert!(alpha.is_finite() && beta.is_finite() && alpha <= beta);
            let case = flow.internal("case").unwrap_or(f64::NAN);
            prop_assert!((0.0..=6.0).contains(&case));
        }
    }

    /// Long runs of whole rounds with random idle times and RTTs, so that
    /// the cases follow each other in random order.
    #[test]
    fn random_rounds_stay_sane(
        rounds in prop::collection::vec((0u64..300, 100u64..160), 1..200),
    ) {
        let mut flow = Flow::new(build("vegas-l", &[]));
        for (idle_ms, rtt_ms) in rounds {
            flow.advance(Duration::from_millis(idle_ms));
            flow.round(ms(rtt_ms));
            check_invariants(flow.cc.as_ref());
            prop_assert!(flow.internal("alpha").unwrap_or(0.0) >= 1.0);
        }
    }
}

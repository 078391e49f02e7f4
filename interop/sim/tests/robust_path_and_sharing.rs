//! vegas-sat when the path changes and when the bottleneck is shared
//! (issue 25), through the real stack: real quiche endpoints in the
//! simulator, the shipped `robust-*` scenarios. Each case also runs with
//! the mechanism switched off, so the test fails without it:
//! - a +5 ms step of the forward delay on the LEO path (100 Mbit/s, RTT
//!   32 ms) with 0.5 % random loss is learnt within a second
//!   (`path_probe=off`: the step's queue-like delay and the losses meeting
//!   it cut the window for seconds);
//! - a CUBIC flow filling a one-BDP GEO buffer does not starve vegas-sat
//!   (`path_probe=off`: the queue is never vegas-sat's, and it yields until
//!   almost nothing is left).
//!
//! The expected rates are computed here from the flows' delivered bytes.

mod common;

use std::path::PathBuf;

use common::{run_scenario, Run};
use vegas_sim::{Overrides, Scenario};

fn run(scenario: &str, seed: u64, params: &[&str], set: &[&str]) -> Run {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{scenario}.toml"));
    let overrides = Overrides {
        seed: Some(seed),
        cc: Some("vegas-sat".into()),
        cc_params: params.iter().map(|p| p.to_string()).collect(),
        set: set.iter().map(|s| s.to_string()).collect(),
    };
    let scenario = Scenario::load(&file, &overrides).unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&scenario)
}

/// Mbit/s a flow delivered between `from` and `to` seconds, from its
/// sampled delivered bytes.
fn goodput(run: &Run, flow: &str, from: f64, to: f64) -> f64 {
    let file = format!("flow-{flow}.csv");
    let times = run.column(&file, "time_s");
    let bytes = run.column(&file, "bytes_delivered");
    let at = |t: f64| {
        times
            .iter()
            .zip(&bytes)
            .take_while(|(time, _)| **time <= t + 1e-9)
            .last()
            .map_or(0.0, |(_, b)| *b)
    };
    (at(to) - at(from)) * 8.0 / (to - from) / 1e6
}

/// The download's rate in the second from 0.5 s to 1.5 s after the step at
/// 10 s, against its rate in the three seconds before it.
fn rate_after_step(params: &[&str]) -> f64 {
    let run = run(
        "robust-leo-step",
        2,
        params,
        &["duration_s=12", "links.forward.packet_loss=0.005"],
    );
    goodput(&run, "download", 10.5, 11.5) / goodput(&run, "download", 7.0, 10.0)
}

#[test]
fn a_five_ms_step_of_the_path_is_learnt_within_a_second() {
    let with_probe = rate_after_step(&[]);
    assert!(with_probe >= 0.9, "{with_probe:.3} of the rate before");
    let without = rate_after_step(&["path_probe=off"]);
    assert!(without < 0.8, "{without:.3} of the rate before");
}

/// vegas-sat's share of what both flows delivered from 30 s to 60 s beside
/// a CUBIC flow in a one-BDP buffer.
fn share_beside_cubic(params: &[&str]) -> f64 {
    let run = run("robust-geo-vs-cubic", 1, params, &["duration_s=60"]);
    let ours = goodput(&run, "download", 30.0, 60.0);
    let cubic = goodput(&run, "cubic", 30.0, 60.0);
    ours / (ours + cubic)
}

#[test]
fn a_cubic_flow_in_a_deep_buffer_does_not_starve_vegas_sat() {
    let with_probe = share_beside_cubic(&[]);
    assert!(with_probe >= 0.25, "share {with_probe:.3}");
    let without = share_beside_cubic(&["path_probe=off"]);
    assert!(without < 0.1, "share {without:.3}");
}

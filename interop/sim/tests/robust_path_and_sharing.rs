//! vegas-sat when the path changes and when the bottleneck is shared
//! (issue 25), through the real stack: real quiche endpoints in the
//! simulator, the shipped `robust-*` scenarios. Each case also runs with
//! the mechanism switched off, so the test fails without it:
//! - a +5 ms step of the forward delay on the LEO path (100 Mbit/s, RTT
//!   32 ms) with 0.5 % random loss is learnt within a second
//!   (`path_probe=off`: the step's queue-like delay and the losses meeting
//!   it cut the window for seconds);
//! - +0.5 ms steps of the LEO path (the matrix's small-steps cell) cost
//!   almost nothing without receive timestamps (`probe_short_window=off`:
//!   a path longer by more than the aim but less than beta is never
//!   probed, and the window shrinks to aim × RTT / added delay until the
//!   next step: the slot loses 8 %);
//! - a CUBIC flow filling a one-BDP GEO buffer does not starve vegas-sat
//!   (`path_probe=off`: the queue is never vegas-sat's, and it yields until
//!   almost nothing is left).
//! - a vegas-sat flow joining another on the fau-sat link (500-packet
//!   buffer) drops fewer than one buffer's worth of packets
//!   (`startup_queue_exit=off`: start-up goes on for a round into the busy
//!   link; `suspect_loss_budget=off`: the hundreds of losses the overfilled
//!   buffer brings all wait for the path probe);
//! - beside CUBIC on fau-sat's 25-packet buffers vegas-sat does not take
//!   CUBIC's share (`shallow_buffer_packets=0`: the probe rebases onto
//!   CUBIC's few packets of queue and its losses get the path change's
//!   grace).
//! - beside BBR2 on fau-sat's 25-packet buffers, with `shared_loss_rounds=3`
//!   (off by default), vegas-sat does not cut at every loss BBR2's
//!   bandwidth probes cause (`shared_loss_rounds=0`: each such loss meets
//!   a full buffer and costs a tenth of the window);
//! - beside BBR2 in a 2-BDP GEO buffer vegas-sat keeps a share, its pairs
//!   judged against the capacity (`pair_gap_from_capacity=on`, which reads
//!   the link right and, in this seed, lets the probe rebase onto BBR2's
//!   queue before the first loss; `loss_queue_from_path_floor=off`: a loss met after the probe had
//!   rebased onto BBR2's queue counted only the queue above the rebased
//!   BaseRTT, a few packets, so the 2-BDP buffer was taken for shallow,
//!   the probe stopped rebasing and BBR2's refills after each ProbeRTT
//!   left vegas-sat 3 % of the link).
//!
//! The expected rates are computed here from the flows' delivered bytes,
//! the drops from the forward link's cumulative count.

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

/// The download's share of what it and `competitor` delivered from `from`
/// to `to` seconds.
fn download_share(run: &Run, competitor: &str, from: f64, to: f64) -> f64 {
    let ours = goodput(run, "download", from, to);
    ours / (ours + goodput(run, competitor, from, to))
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

/// The download's goodput from 30 s to 45 s (the second reconfiguration's
/// four steps) against its rate from 12 s to 15 s, before the first.
fn second_slot_after_small_steps(seed: u64, params: &[&str], stamps: bool) -> f64 {
    let stamps = format!("flows.download.receive_timestamps={stamps}");
    let run = run("robust-leo-small-steps", seed, params, &[&stamps]);
    goodput(&run, "download", 30.0, 45.0) / goodput(&run, "download", 12.0, 15.0)
}

#[test]
fn small_steps_of_the_path_between_aim_and_beta_are_learnt() {
    let with = second_slot_after_small_steps(1, &[], false);
    assert!(with >= 0.99, "{with:.3} of the rate before");
    let without = second_slot_after_small_steps(1, &["probe_short_window=off"], false);
    assert!(without < 0.95, "{without:.3} of the rate before");
}

/// vegas-sat's share of what both flows delivered from 30 s to 60 s beside
/// a CUBIC flow in a one-BDP buffer.
fn share_beside_cubic(params: &[&str]) -> f64 {
    let run = run("robust-geo-vs-cubic", 1, params, &["duration_s=60"]);
    download_share(&run, "cubic", 30.0, 60.0)
}

#[test]
fn a_cubic_flow_in_a_deep_buffer_does_not_starve_vegas_sat() {
    let with_probe = share_beside_cubic(&[]);
    assert!(with_probe >= 0.25, "share {with_probe:.3}");
    let without = share_beside_cubic(&["path_probe=off"]);
    assert!(without < 0.1, "share {without:.3}");
}

/// Packets the forward buffer (500 packets) dropped from the second flow's
/// join at 20 s to 40 s.
fn join_drops(params: &[&str]) -> f64 {
    let run = run("robust-four-flows", 2, params, &["duration_s=40"]);
    let file = "queue-forward.csv";
    run.sampled(file, "dropped_packets", 40.0) - run.sampled(file, "dropped_packets", 20.0)
}

#[test]
fn a_joining_flow_does_not_overfill_the_buffer() {
    let buffer = 500.0;
    let with = join_drops(&[]);
    assert!(with < buffer, "{with} packets dropped");
    let no_exit = join_drops(&["startup_queue_exit=off"]);
    assert!(no_exit > 2.0 * buffer, "{no_exit} packets dropped");
    let no_budget = join_drops(&["suspect_loss_budget=off"]);
    assert!(no_budget > 1.2 * buffer, "{no_budget} packets dropped");
}

/// vegas-sat's share of what both flows delivered from 30 s to 60 s beside
/// a CUBIC flow on fau-sat's 25-packet buffers.
fn share_beside_cubic_in_a_shallow_buffer(params: &[&str]) -> f64 {
    let run = run("fau-sat-vs-cubic", 1, params, &["duration_s=60"]);
    download_share(&run, "cubic", 30.0, 60.0)
}

#[test]
fn in_a_shallow_buffer_vegas_sat_leaves_cubic_its_share() {
    let with = share_beside_cubic_in_a_shallow_buffer(&[]);
    assert!(with < 0.75, "share {with:.3}");
    let without = share_beside_cubic_in_a_shallow_buffer(&["shallow_buffer_packets=0"]);
    assert!(without > 0.8, "share {without:.3}");
}

/// vegas-sat's share of what both flows delivered from 60 s to 120 s
/// beside BBR2, the forward buffer two BDPs (the condition matrix's cell;
/// the return buffer large enough for every ACK).
fn share_beside_bbr2_in_a_deep_buffer(params: &[&str]) -> f64 {
    let run = run(
        "robust-geo-vs-bbr2",
        3,
        params,
        &[
            "links.forward.queue_packets=2177",
            "links.return.queue_packets=2500",
        ],
    );
    download_share(&run, "bbr2", 60.0, 120.0)
}

#[test]
fn a_deep_buffer_is_not_taken_for_shallow_after_a_rebase() {
    let pairs = "pair_gap_from_capacity=on";
    let with = share_beside_bbr2_in_a_deep_buffer(&[pairs]);
    assert!(with > 0.35, "share {with:.3}");
    let without = share_beside_bbr2_in_a_deep_buffer(&[pairs, "loss_queue_from_path_floor=off"]);
    assert!(without < 0.1, "share {without:.3}");
}

/// vegas-sat's share of what both flows delivered from 30 s to 60 s beside
/// BBR2 on fau-sat's 25-packet buffers.
fn share_beside_bbr2_in_a_shallow_buffer(params: &[&str]) -> f64 {
    let run = run("fau-sat-vs-bbr2", 1, params, &["duration_s=60"]);
    download_share(&run, "bbr2", 30.0, 60.0)
}

#[test]
fn isolated_losses_at_a_full_shallow_buffer_are_not_cut_for() {
    let with = share_beside_bbr2_in_a_shallow_buffer(&["shared_loss_rounds=3"]);
    assert!(with > 0.3, "share {with:.3}");
    let without = share_beside_bbr2_in_a_shallow_buffer(&["shared_loss_rounds=0"]);
    assert!(without < 0.26, "share {without:.3}");
}

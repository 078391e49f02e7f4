//! vegas-sat when the path changes and when the bottleneck is shared
//! (issue 25), through the real stack: real quiche endpoints in the
//! simulator, the shipped `robust-*` scenarios. Each case also runs with
//! the mechanism switched off, so the test fails without it, judged by the
//! mean over seeds 1-5 (ten seeds where the seeds spread wider than the
//! mechanism's effect):
//! - a +5 ms step of the forward delay on the LEO path (100 Mbit/s, RTT
//!   32 ms) with 0.5 % random loss is learnt within a second
//!   (`path_probe=off`: the step's queue-like delay and the losses meeting
//!   it cut the window for seconds);
//! - +0.5 ms steps of the LEO path (the matrix's small-steps cell) cost
//!   almost nothing without receive timestamps, by the short-window test
//!   alone (`probe_short_window=off` with `probe_underfill=0`:
//!   a path longer by more than the aim but less than beta is never
//!   probed, and the window shrinks to aim × RTT / added delay until the
//!   next step: the slot loses 8 %);
//! - a drift of the LEO path 4 ms longer over 10 s, with receive stamps,
//!   costs almost nothing (`probe_underfill=0`: the stamped pairs read
//!   80 of 100 Mbit/s, the window seems to explain the Diff the update
//!   holds at the aim, all of it path, and the link runs 1-5 % short);
//! - a CUBIC flow filling a one-BDP GEO buffer does not starve vegas-sat
//!   (`path_probe=off`: the queue is never vegas-sat's, and it yields until
//!   almost nothing is left).
//! - a vegas-sat flow joining another on the fau-sat link (500-packet
//!   buffer) drops about one buffer's worth of packets, not several
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
//!   the link right and, in seeds 3-5, lets the probe rebase onto BBR2's
//!   queue before the first loss; `loss_queue_from_path_floor=off`: a loss
//!   met after the probe had rebased onto BBR2's queue counted only the queue above the rebased
//!   BaseRTT, a few packets, so the 2-BDP buffer was taken for shallow,
//!   the probe stopped rebasing and BBR2's refills after each ProbeRTT
//!   left vegas-sat 3 % of the link).
//!
//! The expected rates are computed here from the flows' delivered bytes,
//! the drops from the forward link's cumulative count.

mod common;

use common::{over_seeds, run_vegas_sat, Run, SEEDS};

fn run(scenario: &str, seed: u64, params: &[&str], set: &[&str]) -> Run {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    run_vegas_sat(scenario, seed, params, &set)
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
fn rate_after_step(seed: u64, params: &[&str]) -> f64 {
    let run = run(
        "robust-leo-step",
        seed,
        params,
        &["duration_s=12", "links.forward.packet_loss=0.005"],
    );
    goodput(&run, "download", 10.5, 11.5) / goodput(&run, "download", 7.0, 10.0)
}

#[test]
fn a_five_ms_step_of_the_path_is_learnt_within_a_second() {
    let with_probe = over_seeds(&SEEDS, |seed| rate_after_step(seed, &[]));
    assert!(with_probe.mean() >= 0.9, "of the rate before: {with_probe}");
    let without = over_seeds(&SEEDS, |seed| rate_after_step(seed, &["path_probe=off"]));
    assert!(without.mean() < 0.8, "of the rate before: {without}");
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
    // The short-window test alone (the underfill test catches these steps
    // too: both are switched off for the case without).
    let with = over_seeds(&SEEDS, |seed| {
        second_slot_after_small_steps(seed, &["probe_underfill=0"], false)
    });
    assert!(with.mean() >= 0.99, "of the rate before: {with}");
    let without = over_seeds(&SEEDS, |seed| {
        second_slot_after_small_steps(
            seed,
            &["probe_short_window=off", "probe_underfill=0"],
            false,
        )
    });
    assert!(without.mean() < 0.95, "of the rate before: {without}");
}

/// The download's goodput from 10 s to 30 s (the forward delay drifts 4 ms
/// longer over 10-20 s) against its rate from 5 s to 10 s, before it.
fn rate_over_a_drift(seed: u64, params: &[&str]) -> f64 {
    let run = run("robust-leo-drift", seed, params, &[]);
    goodput(&run, "download", 10.0, 30.0) / goodput(&run, "download", 5.0, 10.0)
}

#[test]
fn a_path_drifting_longer_by_the_aims_delay_is_learnt() {
    // With stamps the pairs read about 80 of the 100 Mbit/s, so the window
    // seems to explain the Diff the update holds at the aim, all of it
    // path: only the rounds delivering under the flow's best start a probe.
    let with = over_seeds(&SEEDS, |seed| rate_over_a_drift(seed, &[]));
    assert!(with.mean() >= 0.997, "of the rate before: {with}");
    let without = over_seeds(&SEEDS, |seed| {
        rate_over_a_drift(seed, &["probe_underfill=0"])
    });
    assert!(without.mean() < 0.99, "of the rate before: {without}");
}

/// vegas-sat's share of what both flows delivered from 30 s to 60 s beside
/// a CUBIC flow in a one-BDP buffer.
fn share_beside_cubic(seed: u64, params: &[&str]) -> f64 {
    let run = run("robust-geo-vs-cubic", seed, params, &["duration_s=60"]);
    download_share(&run, "cubic", 30.0, 60.0)
}

#[test]
fn a_cubic_flow_in_a_deep_buffer_does_not_starve_vegas_sat() {
    let with_probe = over_seeds(&SEEDS, |seed| share_beside_cubic(seed, &[]));
    assert!(with_probe.mean() >= 0.25, "share {with_probe}");
    let without = over_seeds(&SEEDS, |seed| share_beside_cubic(seed, &["path_probe=off"]));
    assert!(without.mean() < 0.1, "share {without}");
}

/// Packets the forward buffer (500 packets) dropped from the second flow's
/// join at 20 s to 40 s.
fn join_drops(seed: u64, params: &[&str]) -> f64 {
    let run = run("robust-four-flows", seed, params, &["duration_s=40"]);
    let file = "queue-forward.csv";
    run.sampled(file, "dropped_packets", 40.0) - run.sampled(file, "dropped_packets", 20.0)
}

/// Seeds 1-5 drop 989, 264, 270, 984 and 373 packets: a mean of 1.15
/// buffers, short of issue 25's "fewer than one buffer" (docs/satellite.md,
/// "Where vegas-sat still loses"); without the exit or the budget several.
#[test]
fn a_joining_flow_drops_about_one_buffer_not_several() {
    let buffer = 500.0;
    let with = over_seeds(&SEEDS, |seed| join_drops(seed, &[]));
    assert!(with.mean() < 1.5 * buffer, "packets dropped: {with}");
    let no_exit = over_seeds(&SEEDS, |seed| join_drops(seed, &["startup_queue_exit=off"]));
    assert!(no_exit.mean() > 3.0 * buffer, "packets dropped: {no_exit}");
    let no_budget = over_seeds(&SEEDS, |seed| {
        join_drops(seed, &["suspect_loss_budget=off"])
    });
    assert!(
        no_budget.mean() > 1.5 * with.mean(),
        "packets dropped: {no_budget}, with the budget {with}"
    );
}

/// vegas-sat's share of what both flows delivered from 30 s to 60 s beside
/// a CUBIC flow on fau-sat's 25-packet buffers.
fn share_beside_cubic_in_a_shallow_buffer(seed: u64, params: &[&str]) -> f64 {
    let run = run("fau-sat-vs-cubic", seed, params, &["duration_s=60"]);
    download_share(&run, "cubic", 30.0, 60.0)
}

/// Over ten seeds: the shares vary by 0.25 from seed to seed, the
/// mechanism's effect is 0.17 in the mean (seeds 1-10: 0.70 against 0.87).
#[test]
fn in_a_shallow_buffer_vegas_sat_leaves_cubic_its_share() {
    let seeds: Vec<u64> = (1..=10).collect();
    let with = over_seeds(&seeds, |seed| {
        share_beside_cubic_in_a_shallow_buffer(seed, &[])
    });
    assert!(with.mean() < 0.78, "share {with}");
    let without = over_seeds(&seeds, |seed| {
        share_beside_cubic_in_a_shallow_buffer(seed, &["shallow_buffer_packets=0"])
    });
    assert!(without.mean() > 0.8, "share {without}");
}

/// vegas-sat's share of what both flows delivered from 60 s to 120 s
/// beside BBR2, the forward buffer two BDPs (the condition matrix's cell;
/// the return buffer large enough for every ACK).
fn share_beside_bbr2_in_a_deep_buffer(seed: u64, params: &[&str]) -> f64 {
    let run = run(
        "robust-geo-vs-bbr2",
        seed,
        params,
        &[
            "links.forward.queue_packets=2177",
            "links.return.queue_packets=2500",
        ],
    );
    download_share(&run, "bbr2", 60.0, 120.0)
}

/// In seeds 1 and 2 the probe never rebases onto BBR2's queue and both
/// variants run alike; in seeds 3-5 the variant without the floor falls
/// to 3 % of the link.
#[test]
fn a_deep_buffer_is_not_taken_for_shallow_after_a_rebase() {
    let pairs = "pair_gap_from_capacity=on";
    let with = over_seeds(&SEEDS, |seed| {
        share_beside_bbr2_in_a_deep_buffer(seed, &[pairs])
    });
    assert!(with.mean() > 0.45, "share {with}");
    let without = over_seeds(&SEEDS, |seed| {
        share_beside_bbr2_in_a_deep_buffer(seed, &[pairs, "loss_queue_from_path_floor=off"])
    });
    assert!(without.mean() < 0.35, "share {without}");
}

/// vegas-sat's share of what both flows delivered from 30 s to 60 s beside
/// BBR2 on fau-sat's 25-packet buffers.
fn share_beside_bbr2_in_a_shallow_buffer(seed: u64, params: &[&str]) -> f64 {
    let run = run("fau-sat-vs-bbr2", seed, params, &["duration_s=60"]);
    download_share(&run, "bbr2", 30.0, 60.0)
}

#[test]
fn isolated_losses_at_a_full_shallow_buffer_are_not_cut_for() {
    let with = over_seeds(&SEEDS, |seed| {
        share_beside_bbr2_in_a_shallow_buffer(seed, &["shared_loss_rounds=3"])
    });
    assert!(with.mean() > 0.29, "share {with}");
    let without = over_seeds(&SEEDS, |seed| {
        share_beside_bbr2_in_a_shallow_buffer(seed, &["shared_loss_rounds=0"])
    });
    assert!(without.mean() < 0.27, "share {without}");
}

//! Four vegas-sat flows joining 20 s apart on GEO 20/2 Mbit/s with a
//! 25-packet forward buffer (issue 25, "many flows"), through the real
//! stack: real quiche endpoints in the simulator, the shipped
//! `joins-geo-25` scenario (the condition matrix's cell). Each mechanism
//! also runs switched off, so the test fails without it, every figure the
//! mean over seeds 1-5 (one long shared run is chaotic: any change of
//! timing elsewhere moves a single seed by more than a mechanism does):
//! - a flow that joined late reaches an equal share
//!   (`equal_share_growth=off`: the fourth flow, whose start-up the full
//!   buffer ended early, stays far under the fair share with FAST's few
//!   packets a round; smallest share 0.89 with it, 0.60 without);
//! - four flows sharing the full buffer take its overflow for congestion
//!   (`random_loss_bottleneck_queue=off`: each holds under 10 of the 25
//!   queued packets, calls its losses random up to its budget every round,
//!   and the buffer drops several times more: 1 789 packets against
//!   11 553 after the fourth join).
//!
//! And on `joins-geo-500` (the 500-packet cell), the shared-queue rules,
//! off by default (beside a loss-based flow in a deep buffer they starve
//! vegas-sat; docs/satellite.md) and switched on here: each join's jump
//! overfills the buffer for everyone; with `probe_drain_share` each flow's
//! probe drains its own packets of the queue (not only the aim) and finds
//! the queue its own, and with `probe_others_inconclusive` a probe during
//! which the others moved the queue rebases nobody. Both off, the flows
//! rebase onto each other's queue and keep hundreds of packets standing
//! (147 packets dropped between two joins with them, 15 617 without).
//! With `regrowth_alone` the oldest flow does not regrow by half the BDP
//! whenever its neighbours' probes empty the queue (544 without it).
//!
//! And on `joins-geo-25` again, two more mechanisms, off by default
//! (docs/satellite.md, "A busy link before the jump"): with
//! `busy_link_test` a joiner whose initial window found the link full does
//! not jump to half the BDP (the 2 s after a join drop 151 packets with
//! it, 386 without), and with `shallow_growth_room` no flow's equal-share
//! step exceeds half the room the 25-packet buffer has left (1 037 packets
//! dropped between two joins with both, 2 775 without the room).
//!
//! Shares are computed here from the flows' delivered bytes over the last
//! 60 s, drops from the forward link's cumulative count.

mod common;

use common::{over_seeds, run_vegas_sat, without_stamps, OverSeeds, Run, SEEDS};

const FLOWS: [&str; 4] = ["flow1", "flow2", "flow3", "flow4"];

/// Both mechanisms on, whatever the defaults.
const BOTH: [&str; 2] = ["equal_share_growth=on", "random_loss_bottleneck_queue=on"];

fn run(seed: u64, params: &[&str], stamps: bool) -> Run {
    run_in("joins-geo-25", seed, params, stamps)
}

fn run_in(scenario: &str, seed: u64, params: &[&str], stamps: bool) -> Run {
    let set = if stamps {
        Vec::new()
    } else {
        without_stamps(&FLOWS)
    };
    run_vegas_sat(scenario, seed, params, &set)
}

/// The smallest flow's bytes delivered over the last 60 s, as a fraction
/// of the four flows' mean.
fn smallest_share(run: &Run) -> f64 {
    let delivered: Vec<f64> = FLOWS
        .iter()
        .map(|f| {
            let file = format!("flow-{f}.csv");
            run.sampled(&file, "bytes_delivered", 120.0)
                - run.sampled(&file, "bytes_delivered", 60.0)
        })
        .collect();
    let fair = delivered.iter().sum::<f64>() / delivered.len() as f64;
    delivered.iter().cloned().fold(f64::INFINITY, f64::min) / fair
}

/// Packets the forward buffer dropped from the fourth join (60 s) to the end.
fn drops_with_four_flows(run: &Run) -> f64 {
    let file = "queue-forward.csv";
    run.sampled(file, "dropped_packets", 120.0) - run.sampled(file, "dropped_packets", 60.0)
}

#[test]
fn a_flow_that_joined_late_reaches_an_equal_share() {
    let with = over_seeds(&SEEDS, |seed| smallest_share(&run(seed, &BOTH, true)));
    assert!(with.mean() > 0.85, "smallest flow's share: {with}");
    let without = over_seeds(&SEEDS, |seed| {
        let params = ["equal_share_growth=off", "random_loss_bottleneck_queue=on"];
        smallest_share(&run(seed, &params, true))
    });
    assert!(without.mean() < 0.75, "smallest flow's share: {without}");
}

#[test]
fn flows_sharing_a_full_buffer_take_its_overflow_for_congestion() {
    let with = over_seeds(&SEEDS, |seed| {
        drops_with_four_flows(&run(seed, &BOTH, false))
    });
    assert!(with.mean() < 5000.0, "packets dropped: {with}");
    let without = over_seeds(&SEEDS, |seed| {
        let params = [BOTH[0], "random_loss_bottleneck_queue=off"];
        drops_with_four_flows(&run(seed, &params, false))
    });
    assert!(without.mean() > 8000.0, "packets dropped: {without}");
}

/// The shared-queue rules (off by default: beside a loss-based flow in a
/// deep buffer they starve vegas-sat, docs/satellite.md).
const SHARED_QUEUE: [&str; 3] = [
    "probe_drain_share=on",
    "probe_others_inconclusive=on",
    "regrowth_alone=on",
];

/// The most packets the forward buffer dropped in `window` seconds from
/// one of the joins (20, 40 and 60 s).
fn most_dropped_after_a_join(run: &Run, window: f64) -> f64 {
    let file = "queue-forward.csv";
    [20.0, 40.0, 60.0]
        .iter()
        .map(|join| {
            run.sampled(file, "dropped_packets", join + window)
                - run.sampled(file, "dropped_packets", *join)
        })
        .fold(0.0, f64::max)
}

/// The most packets the forward buffer dropped between one join and the
/// next (or the end).
fn most_dropped_between_joins(run: &Run) -> f64 {
    let file = "queue-forward.csv";
    [20.0, 40.0, 60.0, 120.0]
        .windows(2)
        .map(|w| {
            run.sampled(file, "dropped_packets", w[1]) - run.sampled(file, "dropped_packets", w[0])
        })
        .fold(0.0, f64::max)
}

/// Seeds 1-5 with the rules: 103, 285, 94, 86 and 166 packets between two
/// joins (seeds 8 and 10, not judged here, drop 3 799 and 2 332:
/// docs/satellite.md). Without the probe's two rules over ten thousand;
/// without `regrowth_alone` 314, 398, 156, 1 698 and 155: the oldest flow
/// regrows by half the BDP into the queue its neighbours' probes emptied.
/// (Its effect on the shares is within the seeds' noise: the smallest
/// flow's share over seeds 1-12 is 0.81 with it and 0.79 without.)
#[test]
fn delay_based_flows_drain_the_queue_a_join_overfilled() {
    let drops = |params: &[&str]| {
        over_seeds(&SEEDS, |seed| {
            most_dropped_between_joins(&run_in("joins-geo-500", seed, params, true))
        })
    };
    let with = drops(&SHARED_QUEUE);
    assert!(
        with.mean() < 600.0,
        "packets dropped between two joins: {with}"
    );
    let no_probe_rules = drops(&[
        "probe_drain_share=off",
        "probe_others_inconclusive=off",
        "regrowth_alone=on",
    ]);
    assert!(
        no_probe_rules.mean() > 5000.0,
        "packets dropped between two joins: {no_probe_rules}"
    );
    let no_regrowth_rule = drops(&[SHARED_QUEUE[0], SHARED_QUEUE[1], "regrowth_alone=off"]);
    assert!(
        no_regrowth_rule.mean() > 2.0 * with.mean(),
        "packets dropped between two joins: {no_regrowth_rule}, with the rule {with}"
    );
}

/// The busy-link test judged by the drops in the 2 s after a join, where
/// the jump's would fall (seeds 1-5: 388, 324, 13, 15, 16 packets with it,
/// 378-404 without; in seeds 1 and 2 the initial window read one join's
/// link as free); the room by the drops until the next join.
#[test]
fn a_join_onto_a_busy_link_does_not_overfill_a_shallow_buffer() {
    let both = ["busy_link_test=on", "shallow_growth_room=on"];
    let runs_with: Vec<Run> = SEEDS.iter().map(|&seed| run(seed, &both, true)).collect();
    let from_runs_with = |measure: &dyn Fn(&Run) -> f64| OverSeeds {
        seeds: SEEDS.to_vec(),
        values: runs_with.iter().map(measure).collect(),
    };
    let at_the_jump = from_runs_with(&|run| most_dropped_after_a_join(run, 2.0));
    assert!(
        at_the_jump.mean() < 250.0,
        "dropped at the jump: {at_the_jump}"
    );
    let until_the_next = from_runs_with(&most_dropped_between_joins);
    assert!(
        until_the_next.mean() < 1500.0,
        "dropped between joins: {until_the_next}"
    );
    let no_test = over_seeds(&SEEDS, |seed| {
        let params = ["busy_link_test=off", "shallow_growth_room=on"];
        most_dropped_after_a_join(&run(seed, &params, true), 2.0)
    });
    assert!(no_test.mean() > 300.0, "dropped at the jump: {no_test}");
    let no_room = over_seeds(&SEEDS, |seed| {
        let params = ["busy_link_test=on", "shallow_growth_room=off"];
        most_dropped_between_joins(&run(seed, &params, true))
    });
    assert!(no_room.mean() > 2000.0, "dropped between joins: {no_room}");
}

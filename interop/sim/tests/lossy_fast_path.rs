//! picoquic's lossy 250/3 case (100 MB over 250 Mbit/s forward, 3 Mbit/s
//! return, 600 ms, 1 packet in 64 lost both ways) with a client that thins
//! its ACKs (ACK frequency) but sends no receive stamps, through the real
//! stack: real quiche endpoints in the simulator. Issue 24 asks for
//! picoquic's 8.0 s budget within 15 % (9.2 s) in the mean of seeds 1-5.
//!
//! What it takes (`random_loss_queue_ms`): a loss is random below ten
//! packets of queue and below a millisecond of the capacity. At 245
//! Mbit/s ten packets are 0.45 ms, as much as the 3 Mbit/s return link's
//! queue of ACKs adds to an RTT after a loss; in seed 4 a loss met 10.06
//! packets, was taken for another flow's congestion, and the window
//! waited at half the path for seven seconds (11.08 s against 9.28 s).

mod common;

use std::path::PathBuf;

use common::{over_seeds, run_scenario, SEEDS};
use vegas_sim::{Overrides, Scenario};

/// Completion time (s) of the download, checked intact.
fn completion(seed: u64, params: &[&str]) -> f64 {
    let file =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/picoquic-sat-250-3-loss.toml");
    let overrides = Overrides {
        seed: Some(seed),
        cc: Some("vegas-sat".into()),
        cc_params: params.iter().map(|p| p.to_string()).collect(),
        set: vec![
            "flows.download.receive_timestamps=false".into(),
            "flows.download.ack_frequency=true".into(),
        ],
    };
    let scenario = Scenario::load(&file, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let run = run_scenario(&scenario);
    let flow = run.flow("download");
    assert_eq!(
        flow.verified,
        Some(true),
        "seed {seed}: the file arrives whole"
    );
    flow.completion_s.expect("the download completes")
}

#[test]
fn a_thinned_ack_client_meets_picoquics_lossy_budget_within_15_percent() {
    let budget = 8.0 * 1.15;
    let with = over_seeds(&SEEDS, |seed| completion(seed, &[]));
    assert!(with.mean() < budget, "completion (s): {with}");
    // Ten packets alone: seed 4's loss at 10.06 packets cuts, and the
    // window waits (9.46 s in the mean).
    let packets_alone = over_seeds(&SEEDS, |seed| completion(seed, &["random_loss_queue_ms=0"]));
    assert!(
        packets_alone.mean() > with.mean() + 0.2,
        "completion (s): {packets_alone}, with the millisecond {with}"
    );
}

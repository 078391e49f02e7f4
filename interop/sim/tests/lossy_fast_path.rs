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
//! waited at half the path for seven seconds (11.08 s against 9.28 s,
//! before start-up's second jump once the ACKs thin; with it 10.30 s
//! against 8.21 s).

mod common;

use common::{over_seeds, thinned_ack_download, SEEDS};

/// Completion time (s) of the download, checked intact.
fn completion(seed: u64, params: &[&str]) -> f64 {
    thinned_ack_download("picoquic-sat-250-3-loss", seed, params).completion_s
}

#[test]
fn a_thinned_ack_client_meets_picoquics_lossy_budget_within_15_percent() {
    let budget = 8.0 * 1.15;
    let with = over_seeds(&SEEDS, |seed| completion(seed, &[]));
    assert!(with.mean() < budget, "completion (s): {with}");
    // Ten packets alone: seed 4's loss cuts, and the window waits (8.59 s
    // in the mean against 8.17; 9.46 against 9.10 before the second jump).
    let packets_alone = over_seeds(&SEEDS, |seed| completion(seed, &["random_loss_queue_ms=0"]));
    assert!(
        packets_alone.mean() > with.mean() + 0.2,
        "completion (s): {packets_alone}, with the millisecond {with}"
    );
}

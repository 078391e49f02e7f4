//! picoquic's 250/3 case (100 MB over 250 Mbit/s forward, 3 Mbit/s return,
//! 600 ms) with a client that thins its ACKs when asked (ACK frequency) but
//! sends no receive stamps, through the real stack: real quiche endpoints in
//! the simulator. Issue 24 asks for picoquic's 5.5 s budget within 15 %
//! (6.33 s) in the mean of seeds 1-5.
//!
//! What it takes (vegas-sat's `startup_resume_growth`,
//! `resume_after_ack_thinning`, `second_jump_fraction` and
//! `regrowth_slow_start_pace=after_second_jump`): the initial window's
//! ACKs, one a packet, leave the 3 Mbit/s return link at its own pace and
//! the first ACK-train estimate reads 57 of 245 Mbit/s. Once the client
//! thins its ACKs the trains read the link, and start-up jumps a second
//! time, to three quarters of the new target; after such a jump, with
//! nothing met that says the path is shared, avoidance closes the rest at
//! slow start's pace.

mod common;

use common::{over_seeds, thinned_ack_download, SEEDS};

/// Completion time (s) of the download, checked intact and with nothing
/// retransmitted.
fn completion(seed: u64, params: &[&str]) -> f64 {
    let download = thinned_ack_download("picoquic-sat-250-3", seed, params);
    assert_eq!(download.bytes_retransmitted, 0, "seed {seed}: nothing lost");
    download.completion_s
}

#[test]
fn a_thinned_ack_client_meets_picoquics_budget_within_15_percent() {
    let budget = 5.5 * 1.15;
    let with = over_seeds(&SEEDS, |seed| completion(seed, &[]));
    assert!(with.mean() < budget, "completion (s): {with}");
    // Without the second jump start-up ends at 8 000-8 300 packets of a
    // 13 600-packet target and avoidance closes half the gap a round (6.78
    // s in the mean).
    let one_jump = over_seeds(&SEEDS, |seed| {
        completion(seed, &["startup_resume_growth=0"])
    });
    assert!(
        one_jump.mean() > with.mean() + 0.2,
        "completion (s): {one_jump}, with the second jump {with}"
    );
    // Regrowth at half the gap a round instead of slow start's pace (6.37
    // s).
    let half_gap = over_seeds(&SEEDS, |seed| {
        completion(seed, &["regrowth_slow_start_pace=off"])
    });
    assert!(
        half_gap.mean() > with.mean() + 0.1,
        "completion (s): {half_gap}, at slow start's pace {with}"
    );
}

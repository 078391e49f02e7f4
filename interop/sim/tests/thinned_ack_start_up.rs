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
//!
//! Resumed (Careful Resume, picoquic's seeded case), the first ACK-train
//! reading can come under a window Careful Resume already validated, and
//! taken while the trains fill it reads low: `keep_window_above_first_estimate`
//! keeps the window there instead of cutting it to that reading's target.

mod common;

use common::{over_seeds, thinned_ack_download, thinned_ack_run, Download, SEEDS};

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

/// The second connection's completion time (s) of picoquic's seeded case
/// (Careful Resume from a first connection's 100 MB), both connections to
/// a thinned-ACK client without stamps, both files checked intact.
fn resumed_completion(seed: u64, params: &[&str]) -> f64 {
    let run = thinned_ack_run(
        "picoquic-sat-250-3-resume",
        &["first", "second"],
        seed,
        params,
    );
    Download::of(&run, "second").completion_s
}

#[test]
fn a_resumed_window_is_not_cut_to_the_first_ack_train_reading() {
    // picoquic's seeded budget, 4.9 s, within 15 %.
    let budget = 4.9 * 1.15;
    let with = over_seeds(&SEEDS, |seed| resumed_completion(seed, &[]));
    assert!(with.mean() < budget, "completion (s): {with}");
    // Cut to the first reading's target: in seed 3 it read 127 of 245
    // Mbit/s while the trains filled, and the window halved (6.27 s
    // against 4.94; 5.20 s in the mean).
    let cut = over_seeds(&SEEDS, |seed| {
        resumed_completion(seed, &["keep_window_above_first_estimate=off"])
    });
    assert!(
        cut.mean() > with.mean() + 0.15,
        "completion (s): {cut}, with the window kept {with}"
    );
}

//! vegas-sat's initial window and its start-up jump on picoquic's 250/3 path
//! (100 MB, 250 Mbit/s forward, 3 Mbit/s return, 600 ms), our client
//! (receive stamps and ACK frequency), through the real stack.
//!
//! `initial_window_pacing_gain` (off by default: joining flows then reach
//! their equal share worse, docs/satellite.md): paced at start-up's 2 ×
//! cwnd/RTT the initial window's pairs leave over 200 ms and the capacity,
//! which their stamps give, comes with the last of them; at 16 × they
//! leave within 40 ms.

mod common;

use common::{over_seeds, run_vegas_sat, Run, SEEDS};

/// Our client's download, `params` vegas-sat's.
fn download(seed: u64, params: &[&str]) -> Run {
    let set = [
        "flows.download.ack_frequency=true".into(),
        "qlog=false".into(),
    ];
    let run = run_vegas_sat("picoquic-sat-250-3", seed, params, &set);
    assert_eq!(run.flow("download").verified, Some(true), "seed {seed}");
    run
}

fn completion_s(run: &Run) -> f64 {
    run.flow("download").completion_s.expect("completes")
}

#[test]
fn the_initial_window_leaves_at_once_and_the_jump_comes_sooner() {
    let fast = over_seeds(&SEEDS, |seed| {
        completion_s(&download(seed, &["initial_window_pacing_gain=16"]))
    });
    // picoquic's budget is 5.5 s; 5.58 s measured.
    assert!(fast.mean() < 5.62, "completion (s): {fast}");
    // Paced at start-up's gain (the default) the download takes 5.76 s.
    let paced = over_seeds(&SEEDS, |seed| completion_s(&download(seed, &[])));
    assert!(
        paced.mean() > fast.mean() + 0.1,
        "completion (s): paced {paced}, at once {fast}"
    );
}

//! vegas-sat's first ACK-train capacity on a return link that releases ACKs
//! in clumps, through the real stack (real quiche endpoints in the
//! simulator, the shipped starlink-like scenario, a client without receive
//! timestamps).
//!
//! The up trace delivers ACKs about every 12 ms, several at once; the
//! initial window leaves back to back, so every step inside a clump passes
//! the busy test and reads the 1350 bytes of one packet over the tens of
//! microseconds between two ACKs of the clump. Without a guard the first
//! estimate is the median of such samples (95 Mbit/s on a 4-8 Mbit/s link,
//! seed 1). `ack_train_first_sum_cap` caps it by the busy steps' bytes over
//! their summed ACK gaps (the default); `ack_train_clump_guard` (off by
//! default, docs/satellite.md) counts only spans of at least twice the
//! longest busy ACK gap. Each is run alone and both are run off, so the
//! test fails with either mechanism switched off.

mod common;

use common::{run_vegas_sat, without_stamps, Run};
use serde_json::Value;

/// The down trace's fastest slot, in Mbit/s.
const FASTEST_SLOT_MBPS: f64 = 8.0;

fn run(cap: &str, guard: &str) -> Run {
    let params = [
        format!("ack_train_first_sum_cap={cap}"),
        format!("ack_train_clump_guard={guard}"),
    ];
    let params: Vec<&str> = params.iter().map(String::as_str).collect();
    let mut set = without_stamps(&["download"]);
    set.push("qlog=true".into());
    // The first estimate comes within the first second.
    set.push("duration_s=2".into());
    run_vegas_sat("starlink-like", 1, &params, &set)
}

/// The server's first capacity estimate (Mbit/s) in its qlog.
fn first_estimate_mbps(run: &Run) -> f64 {
    let text = std::fs::read_to_string(run.path("download-server.sqlog")).unwrap();
    text.split('\u{1e}')
        .filter_map(|record| serde_json::from_str::<Value>(record.trim()).ok())
        .find_map(|event| event["data"]["capacity_mbps"].as_f64())
        .expect("a capacity estimate")
}

#[test]
fn the_first_estimate_from_clumped_acks_is_not_many_times_the_link() {
    let capped = first_estimate_mbps(&run("on", "off"));
    assert!(
        capped <= 1.5 * FASTEST_SLOT_MBPS,
        "{capped:.1} Mbit/s with the step-sum cap"
    );
    let guarded = first_estimate_mbps(&run("off", "on"));
    assert!(
        guarded <= 1.5 * FASTEST_SLOT_MBPS,
        "{guarded:.1} Mbit/s with the span guard"
    );
    let neither = first_estimate_mbps(&run("off", "off"));
    assert!(
        neither > 4.0 * FASTEST_SLOT_MBPS,
        "{neither:.1} Mbit/s with neither"
    );
}

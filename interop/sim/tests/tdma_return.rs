//! vegas-sat without receive timestamps on a return link that releases the
//! ACKs in bunches (the shipped fau-sat-tdma-return-24ms scenario: fau-sat's
//! 2 Mbit/s return in 24 ms frames), through the real stack.
//!
//! A train's ACKs nearly always come in one frame, at one instant, so the
//! ACK-train steps read many times the link; `ack_train_bunch_guard` (on by
//! default) sees the bunched steps and runs without a capacity. With the
//! guard off the download retransmits several times the file; with it on,
//! a fraction of it (docs/satellite.md, "A return link that bunches the
//! ACKs"). Each run is one 10 MiB download, seed 1.

mod common;

use common::{run_vegas_sat, without_stamps, Run};

const FILE_BYTES: f64 = 10_485_760.0;

fn run(guard: &str) -> Run {
    let params = format!("ack_train_bunch_guard={guard}");
    let mut set = without_stamps(&["download"]);
    set.push("qlog=false".into());
    run_vegas_sat("fau-sat-tdma-return-24ms", 1, &[params.as_str()], &set)
}

/// Bytes retransmitted as a share of the file, after checking the download.
fn retransmitted_share(run: &Run) -> f64 {
    let flow = run.flow("download");
    assert_eq!(flow.verified, Some(true), "{flow:?}");
    flow.bytes_retransmitted as f64 / FILE_BYTES
}

#[test]
fn bunched_acks_do_not_make_the_sender_overrun_the_link() {
    let guarded = retransmitted_share(&run("on"));
    assert!(guarded < 0.5, "guard on: {guarded}");
    let plain = retransmitted_share(&run("off"));
    assert!(plain > 1.0, "guard off: {plain}");
}

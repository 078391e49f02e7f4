//! A lost handshake flight is a random loss on a lossy GEO link, not
//! congestion: vegas-sat keeps its start-up (measured before the fix: 50 s
//! for 10 MiB over fau-sat against 6.8 s, start-up ended at nine packets).

mod common;

use common::{run, FAU_SAT_LINKS};

/// fau-sat (600 ms RTT, 20/2 Mbit/s, 25-packet buffers), 10 MiB; with
/// `drop_first_flight` the forward link loses everything that leaves it
/// from 290 to 320 ms: the server's first flight (Initial and Handshake),
/// sent when the client's Initial arrives at 300 ms.
fn download(cc: &str, drop_first_flight: bool) -> f64 {
    let blackout = if drop_first_flight {
        "[[changes]]\nat_s = 0.29\nlink = \"forward\"\nblackout_s = 0.03\n"
    } else {
        ""
    };
    let run = run(&format!(
        r#"
        duration_s = 120
        {FAU_SAT_LINKS}
        [flows.download]
        cc = "{cc}"
        transfer_bytes = 10485760
        forward_path = ["forward"]
        return_path = ["return"]
        {blackout}
        "#
    ));
    let flow = run.flow("download");
    assert_eq!(flow.verified, Some(true));
    if drop_first_flight {
        assert!(flow.packets_lost >= 2, "the first flight was lost");
    }
    flow.completion_s.expect("completed")
}

#[test]
fn a_lost_first_flight_costs_vegas_sat_its_retransmission_not_its_start_up() {
    let clean = download("vegas-sat", false);
    let lost = download("vegas-sat", true);
    // The handshake's retransmission after a probe timeout (quiche's first
    // PTO on a 333 ms initial RTT estimate is about a second, doubled once)
    // and nothing more: at most 3 s later.
    assert!(
        lost < clean + 3.0,
        "{lost} s against {clean} s without the loss"
    );
}

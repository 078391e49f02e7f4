//! Tail repeat (`tail_repeat`, `quiche-server --tail-repeat`, patch 0013):
//! once the response is all sent, the last half round trip's
//! unacknowledged packets go once more, so a loss among the last packets
//! costs less than the round trip its detection and retransmission take.
//! Driven as the apps drive it, over a link that loses exactly the last
//! packets of the transfer.

mod common;

use common::{run, Run};

const RATE_MBPS: f64 = 10.0;
const ONE_WAY_MS: f64 = 100.0;
const TRANSFER_BYTES: f64 = 1_000_000.0;
/// A data packet on the wire: UDP payload plus the link's header bytes.
const WIRE_BYTES: f64 = 1350.0 + 28.0;

/// A 1 MB vegas-sat download over 10 Mbit/s and 200 ms RTT (its queue stays
/// a few packets, so half a round trip is what the link carries in 100 ms);
/// `blackout` drops every
/// datagram leaving the forward link during (start s, length s).
fn download(tail_repeat: bool, blackout: Option<(f64, f64)>) -> Run {
    let change = blackout.map_or(String::new(), |(at, length)| {
        format!(
            r#"
            [[changes]]
            at_s = {at}
            link = "forward"
            blackout_s = {length}
            "#
        )
    });
    run(&format!(
        r#"
        duration_s = 30
        [links.forward]
        rate_mbps = {RATE_MBPS}
        delay_ms = {ONE_WAY_MS}
        queue_packets = 100
        [links.return]
        rate_mbps = {RATE_MBPS}
        delay_ms = {ONE_WAY_MS}
        queue_packets = 100
        [flows.download]
        cc = "vegas-sat"
        transfer_bytes = {TRANSFER_BYTES}
        forward_path = ["forward"]
        return_path = ["return"]
        tail_repeat = {tail_repeat}
        {change}
        "#
    ))
}

fn completion(run: &Run) -> f64 {
    let flow = run.flow("download");
    assert_eq!(flow.verified, Some(true), "the download is intact");
    flow.completion_s.expect("completed")
}

#[test]
fn a_loss_at_the_very_end_costs_a_round_trip_without_the_repeat_and_less_with_it() {
    let rtt = 2.0 * ONE_WAY_MS / 1e3;
    let packet_time = WIRE_BYTES * 8.0 / (RATE_MBPS * 1e6);
    // Without loss, the last packet leaves the forward link one one-way
    // delay before the download completes: drop the three packets before it.
    let clean_run = download(false, None);
    assert_eq!(
        clean_run.flow("download").packets_lost,
        0,
        "a path without loss"
    );
    let clean = completion(&clean_run);
    let last_leaves = clean - ONE_WAY_MS / 1e3;
    let blackout = Some((last_leaves - 4.0 * packet_time, 3.0 * packet_time));

    let without = download(false, blackout);
    let with = download(true, blackout);
    assert!(
        without.flow("download").packets_lost >= 1,
        "the blackout dropped the tail"
    );
    // Without the repeat the lost packets wait for loss detection, then
    // cross the path again: most of a round trip at least.
    assert!(
        completion(&without) > clean + rtt / 2.0,
        "without: {} against {clean}",
        completion(&without)
    );
    // With it the copies of the last half round trip were already on the
    // way; quiche sends a stream's repeated ranges lowest offset first, so
    // the copy of the very last packet leaves up to half a round trip
    // after it: at least a quarter of a round trip saved here.
    assert!(
        completion(&with) < completion(&without) - rtt / 4.0,
        "with: {} without: {}",
        completion(&with),
        completion(&without)
    );
    assert!(
        completion(&with) <= clean + rtt / 2.0 + 4.0 * packet_time,
        "with: {} against {clean}",
        completion(&with)
    );
}

#[test]
fn the_repeat_is_at_most_half_a_round_trip_of_packets_and_changes_nothing_else() {
    let rtt = 2.0 * ONE_WAY_MS / 1e3;
    let off = download(false, None);
    let on = download(true, None);
    assert_eq!(off.flow("download").packets_lost, 0, "a path without loss");
    // No loss: the copies arrive after the original data; completion is
    // the same to the nanosecond.
    assert_eq!(completion(&on), completion(&off));
    assert_eq!(off.flow("download").bytes_retransmitted, 0);
    // The copies: the packets of the last half round trip (the smoothed
    // one, a few packets of queue above the path's), at most what the link
    // carries in that time, plus two packets of rounding.
    let srtt_s = off.flow("download").mean_rtt_ms.expect("RTT samples") / 1e3;
    assert!(srtt_s < rtt * 1.1, "a short queue: {srtt_s} s");
    let half_rtt_bytes = RATE_MBPS * 1e6 / 8.0 * srtt_s / 2.0 + 2.0 * 1350.0;
    let repeated = on.flow("download").bytes_retransmitted as f64;
    assert!(repeated > 0.0, "something was repeated");
    assert!(
        repeated <= half_rtt_bytes,
        "{repeated} bytes repeated against {half_rtt_bytes} per half round trip"
    );
}

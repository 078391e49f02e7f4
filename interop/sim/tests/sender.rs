//! The sender does not handicap its congestion controller: data packets are
//! full-size (patch 0006). Measured from the server's qlog, as a reader of
//! the run would.

mod common;

use common::{run, Run, FAU_SAT_LINKS};

/// UDP payload of every datagram (the apps' and the simulator's).
const MAX_DATAGRAM_BYTES: f64 = 1350.0;

/// A CUBIC download of 2 MB over the fau-sat link (600 ms RTT, 20/2 Mbit/s,
/// 25-packet buffers): its slow start overflows the buffer, and congestion
/// avoidance then grows the window a few bytes per ACK, which is what made
/// stock quiche send small packets.
fn cubic_download(full_size_packets: bool) -> Run {
    run(&format!(
        r#"
        duration_s = 60
        {FAU_SAT_LINKS}
        [flows.download]
        cc = "cubic"
        transfer_bytes = 2000000
        forward_path = ["forward"]
        return_path = ["return"]
        full_size_packets = {full_size_packets}
        "#
    ))
}

/// Sizes of the server's 1-RTT packets that carry stream data.
fn data_packet_sizes(run: &Run, flow: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(run.path(&format!("{flow}-server.sqlog"))).unwrap();
    let mut sizes = Vec::new();
    for record in text.split('\u{1e}') {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(record.trim()) else {
            continue;
        };
        let data = &event["data"];
        if event["name"] != "quic:packet_sent" || data["header"]["packet_type"] != "1RTT" {
            continue;
        }
        let carries_stream = data["frames"]
            .as_array()
            .is_some_and(|frames| frames.iter().any(|f| f["frame_type"] == "stream"));
        if carries_stream {
            sizes.push(data["raw"]["length"].as_f64().unwrap());
        }
    }
    sizes
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn bulk_download_data_packets_are_full_size() {
    let r = cubic_download(true);
    assert_eq!(r.flow("download").verified, Some(true));
    let sizes = data_packet_sizes(&r, "download");
    // Enough packets that the mean says something: 2 MB is ~1500 packets.
    assert!(sizes.len() > 1000, "{} data packets", sizes.len());
    let mean_size = mean(&sizes);
    assert!(
        mean_size >= 0.95 * MAX_DATAGRAM_BYTES,
        "mean data packet {mean_size:.0} bytes of {MAX_DATAGRAM_BYTES}"
    );
    // Short packets are exceptions (HTTP/3's control streams, the body's
    // last packet, a small retransmission with nothing in flight), not the
    // rule: at most 1% of data packets.
    let short = sizes
        .iter()
        .filter(|&&s| s < MAX_DATAGRAM_BYTES - 8.0)
        .count();
    assert!(
        short * 100 <= sizes.len(),
        "{short} short data packets of {}",
        sizes.len()
    );
}

#[test]
fn stock_packet_sizing_sends_small_packets_on_the_same_run() {
    // The reference the test above is against: stock quiche's sizing on the
    // same download sends many packets well below full size.
    let r = cubic_download(false);
    assert_eq!(r.flow("download").verified, Some(true));
    let sizes = data_packet_sizes(&r, "download");
    let mean_size = mean(&sizes);
    assert!(
        mean_size < 0.8 * MAX_DATAGRAM_BYTES,
        "mean data packet {mean_size:.0} bytes"
    );
}

/// What the client's qlog says of its 1-RTT packets: (time ms, packet
/// number) of each ack-eliciting packet received, and time of each packet
/// sent with an ACK frame.
struct ClientAcks {
    received: Vec<(f64, u64)>,
    acks_sent: Vec<f64>,
}

fn client_acks(run: &Run, flow: &str) -> ClientAcks {
    let text = std::fs::read_to_string(run.path(&format!("{flow}-client.sqlog"))).unwrap();
    let mut acks = ClientAcks {
        received: Vec::new(),
        acks_sent: Vec::new(),
    };
    for record in text.split('\u{1e}') {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(record.trim()) else {
            continue;
        };
        let data = &event["data"];
        if data["header"]["packet_type"] != "1RTT" {
            continue;
        }
        let time = event["time"].as_f64().unwrap();
        if event["name"] == "quic:packet_received" {
            let pn = data["header"]["packet_number"].as_u64().unwrap();
            // RFC 9002 section 2: all frames but ACK and PADDING elicit ACKs.
            let eliciting = data["frames"].as_array().is_some_and(|frames| {
                frames
                    .iter()
                    .any(|f| f["frame_type"] != "ack" && f["frame_type"] != "padding")
            });
            if eliciting {
                acks.received.push((time, pn));
            }
        } else if event["name"] == "quic:packet_sent" {
            let has_ack = data["frames"]
                .as_array()
                .is_some_and(|frames| frames.iter().any(|f| f["frame_type"] == "ack"));
            if has_ack {
                acks.acks_sent.push(time);
            }
        }
    }
    acks
}

/// A download over a clean path (no loss, buffers larger than the window
/// gets) with the client acknowledging every `ack_every` packets. ACK
/// frames without receive timestamps, so qlog names them `ack`.
fn download_acking_every(ack_every: u64, forward_mbps: f64, packet_loss: f64) -> Run {
    run(&format!(
        r#"
        duration_s = 120
        [links.forward]
        rate_mbps = {forward_mbps}
        delay_ms = 50
        queue_packets = 1000
        packet_loss = {packet_loss}
        [links.return]
        rate_mbps = 1
        delay_ms = 50
        queue_packets = 1000
        [flows.download]
        cc = "bbr2"
        transfer_bytes = 300000
        forward_path = ["forward"]
        return_path = ["return"]
        receive_timestamps = false
        queueing_time_frame = false
        ack_every = {ack_every}
        "#
    ))
}

#[test]
fn the_client_acknowledges_every_nth_packet() {
    for ack_every in [1, 4] {
        let r = download_acking_every(ack_every, 10.0, 0.0);
        assert_eq!(r.flow("download").verified, Some(true));
        let acks = client_acks(&r, "download");
        let received = acks.received.len() as f64;
        let expected = received / ack_every as f64;
        let sent = acks.acks_sent.len() as f64;
        // The count rule gives received/N ACKs; the max_ack_delay timer
        // adds some where the flight ends before the N-th packet (handshake,
        // the ends of the first flights, the last packet); packets that
        // arrive together (coalesced) share one.
        assert!(
            sent >= expected * 0.95 && sent <= expected * 1.1 + 10.0,
            "ack_every {ack_every}: {sent} ACKs for {received} packets"
        );
    }
}

#[test]
fn a_lone_packet_is_acknowledged_after_max_ack_delay() {
    // At 0.2 Mbit/s a 1378-byte datagram takes 55 ms on the link: no second
    // packet arrives within max_ack_delay (25 ms), so the timer, not the
    // count, sends each ACK, 25 ms after its packet.
    let r = download_acking_every(8, 0.2, 0.0);
    assert_eq!(r.flow("download").verified, Some(true));
    let acks = client_acks(&r, "download");
    let delays: Vec<f64> = acks
        .received
        .iter()
        .filter_map(|&(at, _)| {
            acks.acks_sent
                .iter()
                .find(|&&sent| sent >= at)
                .map(|sent| sent - at)
        })
        .collect();
    let timer_acks = delays.iter().filter(|&&d| (d - 25.0).abs() < 0.01).count();
    assert!(
        timer_acks * 10 >= delays.len() * 8,
        "{timer_acks} of {} packets acknowledged 25 ms later",
        delays.len()
    );
    assert!(delays.iter().all(|&d| d <= 25.0 + 0.01), "{delays:?}");
}

#[test]
fn a_packet_after_a_gap_is_acknowledged_at_once() {
    let r = download_acking_every(8, 10.0, 0.02);
    assert_eq!(r.flow("download").verified, Some(true));
    let acks = client_acks(&r, "download");
    let mut largest: Option<u64> = None;
    let mut after_gap = 0;
    for &(at, pn) in &acks.received {
        let out_of_order = largest.is_some_and(|l| pn != l + 1);
        if out_of_order {
            after_gap += 1;
            assert!(
                acks.acks_sent.contains(&at),
                "packet {pn} at {at} ms arrived after a gap and was not acknowledged at once"
            );
        }
        largest = Some(largest.map_or(pn, |l| l.max(pn)));
    }
    // 2% loss of ~230 packets: some gaps, or the test says nothing.
    assert!(after_gap >= 2, "{after_gap} packets after a gap");
}

#[test]
fn bbr2_start_up_doubles_per_round_trip_on_a_geo_path() {
    // 600 ms RTT, longer than quiche's 333 ms initial RTT, and buffers deep
    // enough that nothing is lost: start-up alone decides. When BBRv2's
    // min_rtt stayed the initial 333 ms (patch 0008 fixes it), its window
    // grew about 10% per round trip and this took 25 s.
    let rtt_s = 0.6;
    let rate_bps = 20e6;
    let body_bytes = 5_000_000.0;
    let r = run(&format!(
        r#"
        duration_s = 120
        [links.forward]
        rate_mbps = {forward_mbps}
        delay_ms = 300
        queue_packets = 2000
        [links.return]
        rate_mbps = 2
        delay_ms = 300
        queue_packets = 2000
        [flows.download]
        cc = "bbr2"
        transfer_bytes = {body_bytes}
        forward_path = ["forward"]
        return_path = ["return"]
        "#,
        forward_mbps = rate_bps / 1e6,
    ));
    let flow = r.flow("download");
    assert_eq!(flow.verified, Some(true));
    assert_eq!(flow.packets_lost, 0);
    // Doubling from the initial window of 10 packets reaches the BDP in
    // log2(BDP / 10) rounds; allow the handshake and request (2 RTT), four
    // rounds of slack (drain, the last flight) and the body's serialisation.
    let bdp_packets = rate_bps / 8.0 * rtt_s / MAX_DATAGRAM_BYTES;
    let rounds = (bdp_packets / 10.0).log2().ceil();
    let bound_s = (2.0 + rounds + 4.0) * rtt_s + body_bytes * 8.0 / rate_bps;
    let completion = flow.completion_s.unwrap();
    assert!(
        completion < bound_s,
        "completed in {completion:.2} s, bound {bound_s:.2} s"
    );
}

//! The sender does not handicap its congestion controller: data packets are
//! full-size (patch 0006). Measured from the server's qlog, as a reader of
//! the run would.

mod common;

use common::{run, Run};

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
        [links.forward]
        rate_mbps = 20
        delay_ms = 300
        queue_packets = 25
        [links.return]
        rate_mbps = 2
        delay_ms = 300
        queue_packets = 25
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

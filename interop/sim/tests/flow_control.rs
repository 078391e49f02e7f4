//! The receiver's flow-control window on a fast GEO path with random loss.
//! A receiver hands data on only in order and grants its window again only
//! once half of it has been read, so a hole (a lost packet, above all one
//! whose retransmission is lost too) holds the sender back unless the
//! window covers the round trips the hole stands. picoquic's 250/3 case
//! with 1 packet in 64 lost both ways, our client (stamps and ACK
//! frequency), real quiche endpoints in the simulator.

mod common;

use serde_json::Value;

fn run_lossy_250_3(set: &[&str]) -> common::Run {
    let mut sets: Vec<String> = [
        "flows.download.receive_timestamps=true",
        "flows.download.ack_frequency=true",
        "qlog=true",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    sets.extend(set.iter().map(|s| s.to_string()));
    common::run_vegas_sat("picoquic-sat-250-3-loss", 1, &[], &sets)
}

/// How many STREAM_DATA_BLOCKED and DATA_BLOCKED frames the server sent:
/// each says the sender had data and the window had no room.
fn blocked_frames_sent(run: &common::Run) -> usize {
    let text = std::fs::read_to_string(run.path("download-server.sqlog")).unwrap();
    text.split('\u{1e}')
        .filter_map(|record| serde_json::from_str::<Value>(record.trim()).ok())
        .filter(|event| event["name"] == "quic:packet_sent")
        .filter_map(|event| event["data"]["frames"].as_array().cloned())
        .flatten()
        .filter(|frame| {
            matches!(
                frame["frame_type"].as_str(),
                Some("stream_data_blocked" | "data_blocked")
            )
        })
        .count()
}

#[test]
fn a_fifty_megabyte_stream_window_blocks_a_lossy_250_mbit_download() {
    // The apps' default, 100 MB per stream (the connection's whole
    // window): never blocked, within picoquic's budget for this case
    // (8.0 s).
    let wide = run_lossy_250_3(&[]);
    let flow = wide.flow("download");
    assert_eq!(flow.verified, Some(true));
    assert_eq!(blocked_frames_sent(&wide), 0);
    let time = flow.completion_s.expect("the download completes");
    assert!(time < 8.0, "{time} s");
    // 50 MB per stream, the default until the window's measurement: the
    // sender stood blocked behind holes the receiver could not read past
    // (0.9 s and 0.35 s, seed 1).
    let narrow = run_lossy_250_3(&["flows.download.stream_window_bytes=50000000"]);
    assert!(blocked_frames_sent(&narrow) > 0);
    let slow = narrow
        .flow("download")
        .completion_s
        .expect("the download completes");
    assert!(slow > time + 1.0, "{time} s against {slow} s");
    assert_eq!(narrow.flow("download").verified, Some(true));
}

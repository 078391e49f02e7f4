//! What the simulator's qlogs say about time and losses: both endpoints'
//! reference times on the one simulated clock (not the UNIX epoch, which qlog
//! tools read as "unset"), and one `quic:packet_lost` per packet quiche
//! declared lost.

mod common;

use std::collections::HashSet;

use common::{run, serialisation_ms};
use serde_json::Value;

/// The records of an endpoint's qlog: the header first, then the events.
fn records(run: &common::Run, file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(run.path(file)).unwrap();
    text.split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .map(|r| serde_json::from_str::<Value>(r.trim()).unwrap())
        .collect()
}

/// Seconds after 2000-01-01T00:00:00Z of a qlog `wall_clock_time` within
/// that day's first minute (enough for these short runs).
fn seconds_after_2000(wall_clock_time: &str) -> f64 {
    let rest = wall_clock_time
        .strip_prefix("2000-01-01T00:00:")
        .and_then(|s| s.strip_suffix('Z'))
        .unwrap_or_else(|| panic!("unexpected wall_clock_time {wall_clock_time}"));
    rest.parse().unwrap()
}

fn reference_seconds(header: &Value) -> f64 {
    let time = header["trace"]["common_fields"]["reference_time"]["wall_clock_time"]
        .as_str()
        .expect("header without reference_time.wall_clock_time");
    seconds_after_2000(time)
}

const ONE_LINK_EACH_WAY: &str = r#"
    duration_s = 10
    # Exact times: no start or delay jitter.
    [jitter]
    enabled = false
    [links.down]
    rate_mbps = 4
    delay_ms = 40
    queue_packets = 100
    [links.up]
    rate_mbps = 1
    delay_ms = 40
    queue_packets = 100
    [flows.f]
    cc = "cubic"
    transfer_bytes = 20000
    start_s = 2
    forward_path = ["down"]
    return_path = ["up"]
"#;

#[test]
fn both_reference_times_are_on_the_simulated_clock() {
    let r = run(ONE_LINK_EACH_WAY);
    let client = records(&r, "f-client.sqlog");
    let server = records(&r, "f-server.sqlog");
    // The client connects at its start time; the server's connection is
    // made when the client's first datagram (1228 bytes on the wire) has
    // crossed the 1 Mbit/s, 40 ms up link.
    let client_ref = reference_seconds(&client[0]);
    let server_ref = reference_seconds(&server[0]);
    assert!(
        (client_ref - 2.0).abs() < 1e-9,
        "client reference {client_ref}"
    );
    let one_way_ms = 40.0 + serialisation_ms(1228.0, 1.0);
    assert!(
        ((server_ref - client_ref) * 1e3 - one_way_ms).abs() < 1e-6,
        "server reference {server_ref}, client {client_ref}, one way {one_way_ms} ms"
    );
    // On the shared clock the client's first Initial leaves before the
    // server receives it, by exactly the one-way time.
    let first = |events: &[Value], name: &str| -> f64 {
        events
            .iter()
            .find(|e| e["name"] == name && e["data"]["header"]["packet_type"] == "initial")
            .and_then(|e| e["time"].as_f64())
            .unwrap_or_else(|| panic!("no initial {name}"))
    };
    let sent = client_ref * 1e3 + first(&client[1..], "quic:packet_sent");
    let received = server_ref * 1e3 + first(&server[1..], "quic:packet_received");
    assert!(
        (received - sent - one_way_ms).abs() < 1e-3,
        "sent {sent}, received {received}"
    );
}

/// A lossy forward link: quiche's loss detection declares packets lost; its
/// own count (summary.json's packets_lost, from quiche's stats) must match
/// the qlog's events one for one.
fn check_every_loss_is_a_packet_lost_event(cc: &str) {
    let r = run(&format!(
        r#"
        duration_s = 20
        [links.down]
        rate_mbps = 4
        delay_ms = 20
        queue_packets = 8
        packet_loss = 0.05
        [links.up]
        rate_mbps = 1
        delay_ms = 20
        queue_packets = 100
        [flows.f]
        cc = "{cc}"
        transfer_bytes = 300000
        forward_path = ["down"]
        return_path = ["up"]
    "#
    ));
    let server = records(&r, "f-server.sqlog");
    let lost: Vec<&Value> = server
        .iter()
        .filter(|e| e["name"] == "quic:packet_lost")
        .collect();
    let expected = r.flow("f").packets_lost;
    assert!(expected > 0, "the scenario lost nothing");
    assert_eq!(lost.len() as u64, expected);
    let sent: HashSet<(String, u64)> = server
        .iter()
        .filter(|e| e["name"] == "quic:packet_sent")
        .map(|e| {
            let h = &e["data"]["header"];
            (
                h["packet_type"].as_str().unwrap().to_string(),
                h["packet_number"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut seen = HashSet::new();
    for e in &lost {
        let h = &e["data"]["header"];
        let key = (
            h["packet_type"].as_str().unwrap().to_string(),
            h["packet_number"].as_u64().unwrap(),
        );
        assert!(sent.contains(&key), "{e} was never sent");
        assert!(seen.insert(key), "{e} declared lost twice");
        let trigger = e["data"]["trigger"].as_str().unwrap();
        assert!(
            trigger == "reordering_threshold" || trigger == "time_threshold",
            "{e}"
        );
    }
    // Each loss is logged when it is declared, before the cwnd it cut.
    let last_lost = server
        .iter()
        .rposition(|e| e["name"] == "quic:packet_lost")
        .unwrap();
    assert!(server[last_lost + 1..]
        .iter()
        .any(|e| e["name"] == "quic:recovery_metrics_updated"));
}

#[test]
fn every_loss_is_a_packet_lost_event() {
    // Our plug-in controllers run in quiche's own recovery ...
    check_every_loss_is_a_packet_lost_event("vegas");
    // ... BBR2 in its gcongestion recovery: both log their losses.
    check_every_loss_is_a_packet_lost_event("bbr2");
}

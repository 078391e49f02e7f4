//! Careful Resume end to end in the simulator: a second connection between
//! the same endpoints resumes what the first measured, jumps, validates,
//! and retreats when the path changed.

mod common;

use serde_json::Value;

/// Two consecutive 2 MiB downloads over a 20 Mbit/s, 600 ms path with
/// 25-packet buffers; the second's forward link is `second_link`.
/// Vegas (its default quic profile paces slow start) fills the path on the
/// first connection, so that there is a capacity worth saving.
fn scenario(second_careful_resume: bool, second_link: &str) -> String {
    format!(
        r#"
seed = 1
duration_s = 200
qlog = true

[jitter]
enabled = false

[links.forward]
rate_mbps = 20
delay_ms = 300
queue_packets = 25

[links.narrow]
rate_mbps = 2
delay_ms = 300
queue_packets = 25

[links.return]
rate_mbps = 2
delay_ms = 300
queue_packets = 25

[flows.first]
cc = "vegas"
transfer_bytes = 2097152
forward_path = ["forward"]
return_path = ["return"]
careful_resume = true

[flows.second]
cc = "vegas"
transfer_bytes = 2097152
forward_path = ["{second_link}"]
return_path = ["return"]
careful_resume = {second_careful_resume}
after = "first"
start_s = 1
"#
    )
}

/// The server's Careful Resume phases in order, with their triggers.
fn phases(run: &common::Run, flow: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(run.path(&format!("{flow}-server.sqlog"))).unwrap();
    let mut out = Vec::new();
    for record in text.split('\u{1e}') {
        let Ok(event) = serde_json::from_str::<Value>(record.trim()) else {
            continue;
        };
        let data = &event["data"];
        if let Some(phase) = data["cr_phase"].as_str() {
            let trigger = data["cr_trigger"].as_str().unwrap_or("").to_string();
            out.push((phase.to_string(), trigger));
        }
    }
    out
}

#[test]
fn the_second_connection_jumps_and_validates() {
    let with = common::run(&scenario(true, "forward"));
    let without = common::run(&scenario(false, "forward"));
    let first = with.flow("first");
    let second = with.flow("second");
    let saved = first
        .careful_resume
        .and_then(|c| c.observed_cwnd_bytes)
        .expect("the first connection saved its path");
    // What it saved is at most the path's capacity per RTT plus its buffer.
    let capacity_per_rtt = 20e6 / 8.0 * 0.6 + 25.0 * 1378.0;
    assert!((saved as f64) <= capacity_per_rtt, "{saved}");
    let resumed = second.careful_resume.and_then(|c| c.resumed_cwnd_bytes);
    assert_eq!(resumed, Some(saved));
    let second_phases = phases(&with, "second");
    let names: Vec<&str> = second_phases.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        names,
        ["reconnaissance", "unvalidated", "validating", "normal"],
        "{second_phases:?}"
    );
    assert_eq!(second_phases[1].1, "congestion_window_limited");
    assert_eq!(second_phases[3].1, "last_unvalidated_packet_acknowledged");
    // The first connection had nothing to resume.
    assert_eq!(
        phases(&with, "first"),
        [("normal".to_string(), "no_saved_state".to_string())]
    );
    let (t_with, t_without) = (
        second.completion_s.unwrap(),
        without.flow("second").completion_s.unwrap(),
    );
    assert!(t_with < t_without, "{t_with} s with, {t_without} s without");
    assert_eq!(second.verified, Some(true));
}

#[test]
fn a_changed_path_makes_the_second_connection_retreat() {
    let run = common::run(&scenario(true, "narrow"));
    let second_phases = phases(&run, "second");
    let names: Vec<&str> = second_phases.iter().map(|(p, _)| p.as_str()).collect();
    assert!(names.contains(&"unvalidated"), "{second_phases:?}");
    assert!(names.contains(&"safe_retreat"), "{second_phases:?}");
    assert_eq!(names.last(), Some(&"normal"), "{second_phases:?}");
    let second = run.flow("second");
    assert_eq!(second.verified, Some(true));
    // No more packets lost than one unvalidated window (half the saved
    // window) holds.
    let saved = second
        .careful_resume
        .and_then(|c| c.resumed_cwnd_bytes)
        .unwrap();
    let unvalidated_packets = saved / 2 / 1350 + 1;
    assert!(
        second.packets_lost <= unvalidated_packets,
        "{} lost, one unvalidated window is {unvalidated_packets}",
        second.packets_lost
    );
}

#[test]
fn without_careful_resume_nothing_is_resumed() {
    let run = common::run(&scenario(false, "forward"));
    assert_eq!(run.flow("second").careful_resume, None);
    let text = std::fs::read_to_string(run.path("second-server.sqlog")).unwrap();
    assert!(!text.contains("cr_phase"));
}

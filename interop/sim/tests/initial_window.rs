//! `initial_window_packets`: every flow of a scenario starts with this many
//! packets of window (the papers' TCPs started with one or two segments),
//! for quiche's own algorithms and ours alike.

mod common;

use common::{run, scenario};

/// A download over a 200 ms round trip, sampled every 10 ms, with or
/// without the key.
fn download(cc: &str, initial_window: Option<usize>) -> String {
    let key = initial_window
        .map(|p| format!("initial_window_packets = {p}"))
        .unwrap_or_default();
    format!(
        r#"
        duration_s = 3
        sample_interval_ms = 10
        qlog = false
        max_datagram_bytes = 1200
        {key}
        [links.down]
        rate_mbps = 10
        delay_ms = 100
        queue_packets = 100
        [links.up]
        rate_mbps = 10
        delay_ms = 100
        queue_packets = 100
        [flows.download]
        cc = "{cc}"
        transfer_bytes = 1000000
        forward_path = ["down"]
        return_path = ["up"]
        "#
    )
}

/// The first window the flow's series records.
fn first_cwnd(cc: &str, initial_window: Option<usize>) -> f64 {
    let r = run(&download(cc, initial_window));
    let cwnd = r.column("flow-download.csv", "cwnd_bytes");
    *cwnd
        .iter()
        .find(|c| **c > 0.0)
        .expect("a window was recorded")
}

#[test]
fn the_key_sets_every_algorithms_first_window() {
    for cc in ["reno", "vegas"] {
        let two = first_cwnd(cc, Some(2));
        let default = first_cwnd(cc, None);
        // Before the first ACK of data the window is what it started with.
        assert_eq!(two, 2.0 * 1200.0, "{cc}");
        assert_eq!(default, 10.0 * 1200.0, "{cc}");
    }
}

#[test]
fn out_of_range_windows_are_refused() {
    for bad in [0, 1, 1001] {
        let text = download("reno", Some(bad));
        let err = vegas_sim::Scenario::parse(
            &text,
            std::path::Path::new("iw.toml"),
            &vegas_sim::Overrides::default(),
        )
        .expect_err("refused");
        assert!(err.to_string().contains("initial_window_packets"), "{err}");
    }
    // In range: accepted.
    let _ = scenario(&download("reno", Some(2)));
}

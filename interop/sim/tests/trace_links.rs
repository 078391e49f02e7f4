//! Trace-driven links in a run: a Mahimahi packet-delivery trace sets what
//! the link carries, and a delay trace's ramps show in the flow's RTT.

mod common;

use std::fmt::Write as _;

use common::{run_scenario, scenario_with};
use vegas_sim::Overrides;

/// A Mahimahi trace with `per_ms` opportunities every millisecond for 1 s.
fn constant_trace(per_ms: usize) -> String {
    let mut text = String::new();
    for ms in 1..=1000 {
        for _ in 0..per_ms {
            writeln!(text, "{ms}").unwrap();
        }
    }
    text
}

fn bulk_over(rate_line: &str, delay_lines: &str) -> String {
    bulk_with(rate_line, delay_lines, 100, "bbr2")
}

fn bulk_with(rate_line: &str, delay_lines: &str, queue: u32, cc: &str) -> String {
    format!(
        r#"
duration_s = 12
[links.down]
{rate_line}
delay_ms = 20
{delay_lines}
queue_packets = {queue}
[links.up]
rate_mbps = 10
delay_ms = 20
queue_packets = 100
[flows.bulk]
cc = "{cc}"
under_test = true
transfer_bytes = 100000000
forward_path = ["down"]
return_path = ["up"]
"#
    )
}

fn run_in(dir: &std::path::Path, text: &str) -> common::Run {
    let path = dir.join("trace.toml");
    std::fs::write(&path, text).unwrap();
    let scenario =
        vegas_sim::Scenario::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&scenario)
}

#[test]
fn a_mahimahi_trace_sets_the_rate() {
    let dir = tempfile::tempdir().unwrap();
    let mut goodputs = Vec::new();
    for per_ms in [1, 2] {
        std::fs::write(dir.path().join("link.mahimahi"), constant_trace(per_ms)).unwrap();
        let run = run_in(
            dir.path(),
            &bulk_over("rate_trace_file = \"link.mahimahi\"", ""),
        );
        let flow = run.flow("bulk");
        // One datagram (1378 bytes on the wire, 1350 of UDP payload) per
        // opportunity: per_ms x 1350 x 8 bit/ms at most, in UDP payload.
        let ceiling = per_ms as f64 * 1350.0 * 8.0 * 1000.0;
        assert!(
            flow.goodput_bps < ceiling && flow.goodput_bps > 0.75 * ceiling,
            "{per_ms}/ms: goodput {} against {ceiling}",
            flow.goodput_bps
        );
        // The summary's link rate is the trace's mean at 1500 bytes.
        goodputs.push(flow.goodput_bps);
    }
    assert!(goodputs[1] > 1.7 * goodputs[0], "{goodputs:?}");
}

#[test]
fn a_delay_ramp_moves_the_rtt_continuously() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(
        dir.path(),
        // A 5-packet buffer: RTTs are the path's, not a standing queue's.
        &bulk_with(
            "rate_mbps = 5",
            "delay_trace = [[0, 20], [4, 20], [10, 220]]",
            5,
            "cubic",
        ),
    );
    let times = run.column("flow-bulk.csv", "time_s");
    let min_rtt = run.column("flow-bulk.csv", "srtt_ms");
    let at = |t: f64| {
        let i = times.iter().position(|&x| x >= t).unwrap();
        min_rtt[i]
    };
    // Flat, then rising about 33 ms per second (forward delay only), never
    // by a step: consecutive samples differ little.
    assert!(at(3.0) < 120.0, "{}", at(3.0));
    assert!(at(9.5) > at(7.0) + 40.0, "{} then {}", at(7.0), at(9.5));
    let ramp: Vec<f64> = times
        .iter()
        .zip(&min_rtt)
        .filter(|(t, _)| (5.0..10.0).contains(*t))
        .map(|(_, r)| *r)
        .collect();
    let biggest_jump = ramp
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(0.0, f64::max);
    assert!(
        biggest_jump < 30.0,
        "jump {biggest_jump} ms between samples"
    );
}

#[test]
fn trace_keys_are_checked() {
    let bad = [
        (
            bulk_over("rate_mbps = 5\nrate_trace_file = \"x\"", ""),
            "expected one of rate_mbps, rate_trace_file and rate_trace, got several",
        ),
        (bulk_over("", ""), "expected a rate"),
        (
            bulk_over("rate_trace_file = \"missing.mahimahi\"", ""),
            "cannot read the rate trace",
        ),
        (
            bulk_over("rate_mbps = 5", "delay_trace = [[2, 20], [1, 30]]"),
            "delay_trace[1]: time 1 s comes before",
        ),
        (
            format!(
                "{}\n[[changes]]\nat_s = 1\nlink = \"down\"\ndelay_ms = 50\n",
                bulk_over("rate_mbps = 5", "delay_trace = [[0, 20]]")
            ),
            "follows a delay trace",
        ),
    ];
    for (text, expected) in bad {
        let e = vegas_sim::Scenario::parse(
            &text,
            std::path::Path::new("/nonexistent/t.toml"),
            &Overrides::default(),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
        assert!(e.contains(expected), "{e}");
    }
    let _ = scenario_with;
}

#[test]
fn an_inline_rate_trace_is_the_file_s_trace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.mahimahi"), "1\n1\n3\n8\n").unwrap();
    let link = |text: &str| {
        let path = dir.path().join("s.toml");
        std::fs::write(&path, text).unwrap();
        let s = vegas_sim::Scenario::load(&path, &Overrides::default())
            .unwrap_or_else(|e| panic!("{e}"));
        s.links[0].clone()
    };
    let from_file = link(&bulk_over("rate_trace_file = \"t.mahimahi\"", ""));
    let inline = link(&bulk_over("rate_trace = [1, 1, 3, 8]", ""));
    assert!(from_file.delivery_trace.is_some());
    assert_eq!(from_file, inline);
    let e = vegas_sim::Scenario::parse(
        &bulk_over("rate_trace = [3, 1]", ""),
        std::path::Path::new("t.toml"),
        &Overrides::default(),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("links.down.rate_trace: entry 1: 1 ms comes before"),
        "{e}"
    );
}

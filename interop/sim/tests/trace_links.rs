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

/// A bulk cubic flow (100-packet buffer: the link never runs dry after
/// slow start) over a forward trace of `per_ms` opportunities a ms and a
/// return trace of one opportunity every 10 ms, for `seconds`.
fn traced_bulk(dir: &std::path::Path, per_ms: usize, seconds: u32) -> common::Run {
    std::fs::write(dir.join("down.mahimahi"), constant_trace(per_ms)).unwrap();
    let up: String = (1..=100).map(|i| format!("{}\n", i * 10)).collect();
    std::fs::write(dir.join("up.mahimahi"), up).unwrap();
    let text = bulk_with("rate_trace_file = \"down.mahimahi\"", "", 100, "cubic")
        .replace("duration_s = 12", &format!("duration_s = {seconds}"))
        .replace(
            "[links.up]\nrate_mbps = 10",
            "[links.up]\nrate_trace_file = \"up.mahimahi\"",
        );
    assert!(text.contains("up.mahimahi") && text.contains(&format!("= {seconds}\n")));
    run_in(dir, &text)
}

#[test]
fn a_mahimahi_trace_sets_the_rate() {
    let dir = tempfile::tempdir().unwrap();
    for per_ms in [1, 2] {
        // The runs are deterministic, so a 12 s run is the 6 s run and
        // then 6 s more: the bytes between are what the link carried from
        // 6 to 12 s, long after slow start.
        let sent = |seconds| {
            let run = traced_bulk(dir.path(), per_ms, seconds);
            run.link("down").transmitted_bytes
        };
        let rate = (sent(12) - sent(6)) as f64 * 8.0 / 6.0;
        // Each opportunity carries 1504 bytes of IP datagrams (mm-link's
        // PACKET_SIZE): 1378-byte datagrams leave 126 bytes that the next
        // one takes. Carrying one datagram each, it would be 8.4 % less.
        let trace_rate = per_ms as f64 * 1504.0 * 8.0 * 1000.0;
        eprintln!("{per_ms}/ms: {rate:.0} bit/s on the wire, the trace {trace_rate:.0}");
        assert!(
            (rate / trace_rate - 1.0).abs() < 0.02,
            "{per_ms}/ms: {rate} bit/s on the wire against the trace's {trace_rate}"
        );
    }
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

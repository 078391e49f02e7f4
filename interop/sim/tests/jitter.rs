//! What a seed varies besides losses (the `[jitter]` table, per-flow
//! `start_jitter_ms`, per-link `delay_jitter_ms`): each flow's start, each
//! datagram's propagation delay, the phase of cross traffic.
//!
//! On a loss-free path two seeds must give different completion times (the
//! point of the jitter) while one seed still gives the same bytes in every
//! output (the point of the seed).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use vegas_sim::scenario::{DEFAULT_FLOW_START_JITTER_MS, DEFAULT_LINK_DELAY_JITTER_MS};
use vegas_sim::time::serialisation_time;
use vegas_sim::{Overrides, Scenario};

/// One download over a loss-free path, long enough for a few dozen round
/// trips.
const LOSS_FREE: &str = r#"
    duration_s = 30
    sample_interval_ms = 50
    [links.down]
    rate_mbps = 10
    delay_ms = 40
    queue_packets = 30
    [links.up]
    rate_mbps = 2
    delay_ms = 40
    queue_packets = 30
    [flows.download]
    cc = "cubic"
    under_test = true
    transfer_bytes = 1500000
    forward_path = ["down"]
    return_path = ["up"]
"#;

fn parse(text: &str, seed: u64) -> Scenario {
    let overrides = Overrides {
        seed: Some(seed),
        ..Default::default()
    };
    common::scenario_with(text, &overrides)
}

/// Every output file by name; summary.json without `wall_s`.
fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut bytes = std::fs::read(&path).unwrap();
        if name == "summary.json" {
            let mut summary: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            summary.as_object_mut().unwrap().remove("wall_s");
            bytes = serde_json::to_vec_pretty(&summary).unwrap();
        }
        files.insert(name, bytes);
    }
    files
}

#[test]
fn loss_free_seeds_differ_and_one_seed_repeats_byte_for_byte() {
    let run = |text: &str, seed| common::run_scenario(&parse(text, seed));
    let completion = |r: &common::Run| {
        let flow = r.flow("download");
        assert_eq!(flow.verified, Some(true), "{flow:?}");
        flow.completion_s.unwrap()
    };
    // The handshake's RTT without jitter: the client's Initial (padded to
    // 1200 bytes, 1228 on the wire) up at 2 Mbit/s, the server's down at
    // 10 Mbit/s, 40 ms each way.
    let exact_rtt_ms =
        80.0 + common::serialisation_ms(1228.0, 2.0) + common::serialisation_ms(1228.0, 10.0);
    // With it, each of the two links adds less than its bound.
    let bound_ms = 2.0 * DEFAULT_LINK_DELAY_JITTER_MS;

    let first = run(LOSS_FREE, 1);
    let again = run(LOSS_FREE, 1);
    let (a, b) = (outputs(first.dir.path()), outputs(again.dir.path()));
    assert!(a.contains_key("download-server.sqlog"), "{:?}", a.keys());
    for (name, bytes) in &a {
        assert!(
            bytes == &b[name],
            "{name} differs between two runs of seed 1"
        );
    }

    let runs: Vec<common::Run> = std::iter::once(first)
        .chain([2, 3, 4].map(|seed| run(LOSS_FREE, seed)))
        .collect();
    let times: Vec<f64> = runs.iter().map(completion).collect();
    let rtts: Vec<f64> = runs
        .iter()
        .map(|r| common::client_handshake_rtt_ms(r, "download"))
        .collect();
    for rtt in &rtts {
        assert!(
            *rtt >= exact_rtt_ms - 1e-3 && *rtt < exact_rtt_ms + bound_ms,
            "handshake RTT {rtt} ms outside [{exact_rtt_ms}, {exact_rtt_ms} + {bound_ms})"
        );
    }
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let (si, sj) = (i + 1, j + 1);
            assert!(
                times[i] != times[j],
                "seeds {si} and {sj} completed at the same time: {times:?}"
            );
            assert!(
                rtts[i] != rtts[j],
                "seeds {si} and {sj} had the same handshake RTT: {rtts:?}"
            );
        }
    }

    // Without jitter the seeds draw no timing: every handshake takes the
    // exact RTT.
    let off = format!("{LOSS_FREE}\n[jitter]\nenabled = false\n");
    for seed in [1, 2, 3] {
        let rtt = common::client_handshake_rtt_ms(&run(&off, seed), "download");
        assert!((rtt - exact_rtt_ms).abs() < 1e-3, "seed {seed}: {rtt} ms");
    }
}

#[test]
fn start_jitter_is_drawn_per_flow_within_its_bound() {
    let text = format!(
        "{LOSS_FREE}
        [flows.late]
        cc = \"reno\"
        start_s = 2
        start_jitter_ms = 200
        forward_path = [\"down\"]
        return_path = [\"up\"]
        "
    );
    let bound_default = (DEFAULT_FLOW_START_JITTER_MS * 1e6) as u64;
    let mut late_starts = Vec::new();
    for seed in 1..=200 {
        let s = parse(&text, seed);
        let (download, late) = (&s.flows[0], &s.flows[1]);
        assert!(download.start < bound_default, "{}", download.start);
        assert!(
            (2_000_000_000..2_200_000_000).contains(&late.start),
            "{}",
            late.start
        );
        // The same seed draws the same starts.
        assert_eq!(parse(&text, seed).flows, s.flows);
        late_starts.push((late.start - 2_000_000_000) as f64 / 1e6);
    }
    // Uniform on [0, 200) ms: mean 100 ms, standard deviation of the mean
    // 200 / sqrt(12 x 200) = 4.1 ms; within 4 of them.
    let mean = late_starts.iter().sum::<f64>() / late_starts.len() as f64;
    assert!((mean - 100.0).abs() < 16.4, "mean {mean}");
    let distinct: std::collections::BTreeSet<u64> =
        late_starts.iter().map(|s| (s * 1e3) as u64).collect();
    assert!(distinct.len() > 190, "{}", distinct.len());

    // Off: the start as written, whatever the seed.
    let off = format!("{text}\n[jitter]\nenabled = false\n");
    for seed in 1..=5 {
        let s = parse(&off, seed);
        assert_eq!(s.flows[0].start, 0);
        assert_eq!(s.flows[1].start, 2_000_000_000);
        assert!(s.links.iter().all(|l| l.delay_jitter == 0));
    }
    // A zero per-flow bound switches only that flow's jitter off.
    let zero = text.replace("start_jitter_ms = 200", "start_jitter_ms = 0");
    assert_eq!(parse(&zero, 3).flows[1].start, 2_000_000_000);
}

#[test]
fn link_delay_jitter_defaults_and_overrides() {
    let s = parse(LOSS_FREE, 1);
    let default = (DEFAULT_LINK_DELAY_JITTER_MS * 1e6) as u64;
    assert!(default > 0);
    assert!(s.links.iter().all(|l| l.delay_jitter == default));
    let text = LOSS_FREE.replace(
        "delay_ms = 40\n    queue_packets = 30\n    [links.up]",
        "delay_ms = 40\n    queue_packets = 30\n    delay_jitter_ms = 3\n    jitter_reorders = true\n    [links.up]",
    );
    let text = format!("{text}\n[jitter]\nlink_delay_ms = 0.25\n");
    let s = parse(&text, 1);
    assert_eq!(s.links[0].delay_jitter, 3_000_000);
    assert!(s.links[0].jitter_reorders);
    assert_eq!(s.links[1].delay_jitter, 250_000);
    assert!(!s.links[1].jitter_reorders);
}

#[test]
fn cross_traffic_phase_is_within_one_spacing() {
    // 1222 + 28 = 1250 wire bytes at 1 Mbit/s: one datagram per 10 ms.
    let text = format!(
        "{LOSS_FREE}
        [cross_traffic.cbr]
        kind = \"cbr\"
        rate_mbps = 1
        packet_bytes = 1222
        start_s = 5
        path = [\"up\"]
        "
    );
    let spacing = serialisation_time(1250, 1_000_000);
    assert_eq!(spacing, 10_000_000);
    let mut phases = std::collections::BTreeSet::new();
    for seed in 1..=50 {
        let start = parse(&text, seed).cross_traffic[0].start;
        assert!(
            (5_000_000_000..5_000_000_000 + spacing).contains(&start),
            "{start}"
        );
        phases.insert(start);
    }
    assert!(phases.len() > 45, "{}", phases.len());
    let off = format!("{text}\n[jitter]\ncross_phase = false\n");
    assert_eq!(parse(&off, 7).cross_traffic[0].start, 5_000_000_000);
    // Never past the stop time.
    let short = text.replace("start_s = 5\n", "start_s = 5\n        stop_s = 5.002\n");
    for seed in 1..=20 {
        let start = parse(&short, seed).cross_traffic[0].start;
        assert!((5_000_000_000..5_002_000_000).contains(&start), "{start}");
    }
}

#[test]
fn idle_timeout_per_flow() {
    let s = parse(LOSS_FREE, 1);
    assert_eq!(s.flows[0].idle_timeout_ms, 30_000);
    let text = LOSS_FREE.replace("transfer_bytes", "idle_timeout_s = 250\n    transfer_bytes");
    assert_eq!(parse(&text, 1).flows[0].idle_timeout_ms, 250_000);
}

#[test]
fn bad_jitter_keys_are_errors_naming_the_key() {
    let error =
        |text: &str| match Scenario::parse(text, Path::new("bad.toml"), &Overrides::default()) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e.to_string(),
        };
    let cases = [
        (
            format!("{LOSS_FREE}\n[jitter]\nflow_start_ms = -1\n"),
            vec!["jitter.flow_start_ms", "from 0"],
        ),
        (
            format!("{LOSS_FREE}\n[jitter]\nlink_delay_ms = nan\n"),
            vec!["jitter.link_delay_ms", "from 0"],
        ),
        (
            format!("{LOSS_FREE}\n[jitter]\nlink_delay = 1\n"),
            vec!["jitter", "link_delay", "link_delay_ms"],
        ),
        (
            format!("{LOSS_FREE}\n[jitter]\nenabled = \"no\"\n"),
            vec!["jitter.enabled", "true or false"],
        ),
        (
            LOSS_FREE.replace("transfer_bytes", "start_jitter_ms = -5\n    transfer_bytes"),
            vec!["flows.download.start_jitter_ms", "from 0"],
        ),
        (
            LOSS_FREE.replace("transfer_bytes", "idle_timeout_s = 0\n    transfer_bytes"),
            vec!["flows.download.idle_timeout_s", "positive"],
        ),
        (
            LOSS_FREE.replace(
                "transfer_bytes",
                "stop_s = 0.05\n    start_jitter_ms = 80\n    transfer_bytes",
            ),
            vec!["flows.download.stop_s", "start_jitter_ms"],
        ),
        (
            LOSS_FREE.replacen(
                "queue_packets = 30",
                "queue_packets = 30\ndelay_jitter_ms = -2",
                1,
            ),
            vec!["links.down.delay_jitter_ms", "from 0"],
        ),
    ];
    for (text, parts) in cases {
        let e = error(&text);
        assert!(e.starts_with("bad.toml: "), "{e}");
        for part in parts {
            assert!(e.contains(part), "'{part}' missing from: {e}");
        }
    }
}

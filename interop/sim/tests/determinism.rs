//! The same scenario and seed give the same bytes in every output file; a
//! different seed, with random loss, gives different ones.
//!
//! The links are AQT-enabled and the flows negotiate our extensions (the
//! default), so receive timestamps and queueing-time frames flow too.
//!
//! `summary.json` differs between two runs only by `wall_s` (the wall-clock
//! time the run took); the comparison removes that one key and nothing else.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use vegas_sim::Overrides;

const SCENARIO: &str = r#"
    duration_s = 20
    sample_interval_ms = 50
    [links.down]
    rate_mbps = 8
    delay_ms = 30
    queue_packets = 30
    packet_loss = 0.01
    aqt = true
    [links.up]
    rate_mbps = 2
    delay_ms = 30
    queue_packets = 30
    gilbert_elliott = { p_good_to_bad = 0.01, p_bad_to_good = 0.5 }
    aqt = true
    [flows.cubic]
    cc = "cubic"
    transfer_bytes = 400000
    forward_path = ["down"]
    return_path = ["up"]
    [flows.westwood]
    cc = "westwood"
    under_test = true
    transfer_bytes = 400000
    start_s = 0.25
    forward_path = ["down"]
    return_path = ["up"]
    [cross_traffic.backward]
    kind = "vbr"
    rate_mbps = 1.5
    mean_on_ms = 20
    mean_off_ms = 40
    path = ["up"]
"#;

/// Every output file by name; summary.json without `wall_s`.
fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut bytes = std::fs::read(&path).unwrap();
        if name == "summary.json" {
            let mut summary: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert!(summary["wall_s"].as_f64().is_some());
            summary.as_object_mut().unwrap().remove("wall_s");
            bytes = serde_json::to_vec_pretty(&summary).unwrap();
        }
        files.insert(name, bytes);
    }
    files
}

fn run_with_seed(seed: u64) -> common::Run {
    let overrides = Overrides {
        seed: Some(seed),
        ..Default::default()
    };
    common::run_scenario(&common::scenario_with(SCENARIO, &overrides))
}

#[test]
fn same_seed_same_bytes_other_seed_other_results() {
    let first = run_with_seed(7);
    let second = run_with_seed(7);
    let (a, b) = (outputs(first.dir.path()), outputs(second.dir.path()));
    let names: Vec<&String> = a.keys().collect();
    assert_eq!(
        names,
        [
            "cross-backward.csv",
            "cubic-client.sqlog",
            "cubic-server.sqlog",
            "flow-cubic.csv",
            "flow-westwood.csv",
            "queue-down.csv",
            "queue-up.csv",
            "summary.json",
            "westwood-client.sqlog",
            "westwood-server.sqlog",
        ]
    );
    for (name, bytes) in &a {
        assert!(
            bytes == &b[name],
            "{name} differs between two runs with the same seed"
        );
    }
    for flow in &first.summary.flows {
        assert_eq!(flow.verified, Some(true), "{flow:?}");
    }

    let other = run_with_seed(8);
    let c = outputs(other.dir.path());
    for name in [
        "summary.json",
        "flow-cubic.csv",
        "queue-down.csv",
        "cubic-server.sqlog",
    ] {
        assert!(a[name] != c[name], "{name} is the same with another seed");
    }
}

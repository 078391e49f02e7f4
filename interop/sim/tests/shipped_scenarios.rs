//! Every scenario shipped in interop/scenarios/ is valid, and the GEO
//! reference case runs to a verified download.

mod common;

use std::path::PathBuf;

use vegas_sim::{Overrides, Scenario};

fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

#[test]
fn every_shipped_scenario_is_valid() {
    let mut count = 0;
    for entry in std::fs::read_dir(scenario_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let scenario =
                Scenario::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
            assert!(!scenario.description.is_empty(), "{}", path.display());
            assert!(
                scenario.flows.iter().any(|f| f.under_test),
                "{}: no flow under test",
                path.display()
            );
            count += 1;
        }
    }
    assert!(count >= 15, "only {count} scenarios");
}

#[test]
fn fau_sat_downloads_ten_mebibytes() {
    let mut scenario =
        Scenario::load(&scenario_dir().join("fau-sat.toml"), &Overrides::default()).unwrap();
    scenario.qlog = false;
    let run = common::run_scenario(&scenario);
    let flow = run.flow("download");
    assert_eq!(flow.verified, Some(true), "{flow:?}");
    assert_eq!(flow.bytes_delivered, 10 * 1024 * 1024);
    // The RTT is at least the 600 ms of propagation.
    assert!(flow.mean_rtt_ms.unwrap() >= 600.0);
}

//! The flow cap, the open-file check and the qlog default for long
//! multi-flow runs: a clear refusal instead of a failure part-way, and no
//! gigabytes of qlog unless asked.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use vegas_sim::scenario::{MAX_FLOWS, QLOG_DEFAULT_OFF_AFTER_S};
use vegas_sim::{Overrides, Scenario};

const LINKS: &str = r#"
[links.down]
rate_mbps = 10
delay_ms = 20
queue_packets = 50
[links.up]
rate_mbps = 10
delay_ms = 20
queue_packets = 50
"#;

/// A scenario of `flows` bulk flows (the first under test).
fn scenario_text(flows: usize, duration_s: f64, qlog: Option<bool>) -> String {
    let mut text = format!("duration_s = {duration_s}\n");
    if let Some(q) = qlog {
        writeln!(text, "qlog = {q}").unwrap();
    }
    text.push_str(LINKS);
    for i in 0..flows {
        write!(
            text,
            "[flows.f{i}]\ncc = \"reno\"\nunder_test = {}\nforward_path = [\"down\"]\nreturn_path = [\"up\"]\n",
            i == 0
        )
        .unwrap();
    }
    text
}

fn parse(text: &str) -> Result<Scenario, String> {
    Scenario::parse(text, Path::new("many.toml"), &Overrides::default()).map_err(|e| e.to_string())
}

#[test]
fn more_flows_than_the_cap_are_refused_with_the_cap() {
    parse(&scenario_text(MAX_FLOWS, 10.0, Some(false))).unwrap();
    let e = parse(&scenario_text(MAX_FLOWS + 1, 10.0, Some(false))).unwrap_err();
    assert!(e.starts_with("many.toml: flows: 2001 flows"), "{e}");
    assert!(e.contains("at most 2000"), "{e}");
}

#[test]
fn qlog_is_off_by_default_only_for_long_runs_of_several_flows() {
    let long = QLOG_DEFAULT_OFF_AFTER_S + 1.0;
    let s = parse(&scenario_text(2, long, None)).unwrap();
    assert!(!s.qlog && s.qlog_off_by_default);
    // Asked for, written.
    let s = parse(&scenario_text(2, long, Some(true))).unwrap();
    assert!(s.qlog && !s.qlog_off_by_default);
    // One flow, or a short run: on as before.
    assert!(parse(&scenario_text(1, long, None)).unwrap().qlog);
    assert!(
        parse(&scenario_text(2, QLOG_DEFAULT_OFF_AFTER_S, None))
            .unwrap()
            .qlog
    );
}

fn vegas_sim_under_open_file_limit(
    limit: u32,
    scenario: &Path,
    extra: &str,
) -> std::process::Output {
    let out = scenario.with_extension("out");
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n {limit} && exec \"$0\" run \"$1\" --out \"$2\" {extra}"
        ))
        .arg(env!("CARGO_BIN_EXE_vegas-sim"))
        .arg(scenario)
        .arg(&out)
        .output()
        .unwrap()
}

#[test]
fn a_run_that_would_run_out_of_open_files_is_refused_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.toml");
    std::fs::write(&path, scenario_text(100, 1.0, Some(true))).unwrap();
    let output = vegas_sim_under_open_file_limit(200, &path, "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("100 flows need about 366 open files") && stderr.contains("may open 200"),
        "{stderr}"
    );
    assert!(stderr.contains("--no-qlog"), "{stderr}");
    assert!(!stderr.contains("TlsFail"), "{stderr}");
    // Without qlogs the same run fits (one CSV per flow).
    let output = vegas_sim_under_open_file_limit(200, &path, "--no-qlog");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

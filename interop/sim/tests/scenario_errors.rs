//! A malformed scenario is an error that names the file, the key and what
//! was expected; never a panic.

use std::path::Path;
use std::process::Command;

use vegas_sim::{Overrides, Scenario};

const GOOD: &str = r#"
duration_s = 10
[links.down]
rate_mbps = 10
delay_ms = 20
queue_packets = 50
[links.up]
rate_mbps = 10
delay_ms = 20
queue_packets = 50
[flows.f]
cc = "reno"
under_test = true
forward_path = ["down"]
return_path = ["up"]
"#;

fn error_of(text: &str, overrides: &Overrides) -> String {
    match Scenario::parse(text, Path::new("scenarios/bad.toml"), overrides) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// The error for GOOD with `from` replaced by `to`.
fn error_after(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    error_of(&GOOD.replacen(from, to, 1), &Overrides::default())
}

/// The error for GOOD with `line` added to flow f.
fn flow_error(line: &str) -> String {
    error_after(
        "return_path = [\"up\"]",
        &format!("return_path = [\"up\"]\n{line}"),
    )
}

/// GOOD with `line` added to flow f parses.
fn assert_flow_accepts(line: &str) {
    let text = GOOD.replacen(
        "return_path = [\"up\"]",
        &format!("return_path = [\"up\"]\n{line}"),
        1,
    );
    Scenario::parse(
        &text,
        Path::new("scenarios/good.toml"),
        &Overrides::default(),
    )
    .unwrap_or_else(|e| panic!("{line}: {e}"));
}

fn assert_mentions(message: &str, parts: &[&str]) {
    assert!(message.starts_with("scenarios/bad.toml: "), "{message}");
    for part in parts {
        assert!(message.contains(part), "'{part}' missing from: {message}");
    }
}

#[test]
fn the_good_scenario_is_accepted() {
    Scenario::parse(GOOD, Path::new("good.toml"), &Overrides::default()).unwrap();
}

#[test]
fn unknown_key_names_the_key_the_line_and_the_valid_keys() {
    let e = error_after(
        "rate_mbps = 10\ndelay_ms = 20",
        "rate_mbs = 10\ndelay_ms = 20",
    );
    assert_mentions(&e, &["links.down", "rate_mbs", "rate_mbps", "line 4"]);
}

#[test]
fn wrong_type_names_the_key_and_the_expected_type() {
    let e = error_after("delay_ms = 20", "delay_ms = \"twenty\"");
    assert_mentions(&e, &["links.down.delay_ms", "expected", "line 5"]);
}

#[test]
fn missing_key_is_named() {
    let e = error_after("duration_s = 10", "");
    assert_mentions(&e, &["duration_s"]);
    let e = error_after("queue_packets = 50\n[links.up]", "[links.up]");
    assert_mentions(&e, &["links.down", "queue_packets or queue_bytes"]);
}

#[test]
fn not_toml_names_the_line() {
    let e = error_of(
        "duration_s = 10\n[links.down\nrate_mbps = 1\n",
        &Overrides::default(),
    );
    assert_mentions(&e, &["line 2"]);
}

#[test]
fn semantic_errors_name_the_key_and_what_was_expected() {
    let cases = [
        (
            "rate_mbps = 10",
            "rate_mbps = -3",
            vec!["links.down.rate_mbps", "positive number"],
        ),
        (
            "delay_ms = 20",
            "delay_ms = -1",
            vec!["links.down.delay_ms", "from 0"],
        ),
        (
            "queue_packets = 50\n[links.up]",
            "queue_packets = 50\nqueue_bytes = 9000\n[links.up]",
            vec!["links.down", "one queue limit"],
        ),
        (
            "queue_packets = 50\n[links.up]",
            "queue_packets = 50\npacket_loss = 1.5\n[links.up]",
            vec!["links.down.packet_loss", "probability"],
        ),
        (
            "forward_path = [\"down\"]",
            "forward_path = [\"downn\"]",
            vec!["flows.f.forward_path", "unknown link 'downn'", "down, up"],
        ),
        (
            "cc = \"reno\"",
            "cc = \"tahoe\"",
            vec![
                "flows.f.cc",
                "unknown congestion control algorithm 'tahoe'",
                "vegas",
                "cubic",
            ],
        ),
        (
            "cc = \"reno\"",
            "cc = \"vegas\"\ncc_params = [\"alpah=2\"]",
            vec!["flows.f.cc", "alpah", "alpha"],
        ),
        ("[flows.f]", "[flows.\"f/..\"]", vec!["flows.f/..", "name"]),
        (
            "duration_s = 10",
            "duration_s = 0",
            vec!["duration_s", "positive"],
        ),
    ];
    for (from, to, parts) in cases {
        assert_mentions(&error_after(from, to), &parts);
    }
}

#[test]
fn bad_command_line_overrides_are_errors() {
    let unknown = Overrides {
        cc: Some("nope".into()),
        ..Default::default()
    };
    assert_mentions(
        &error_of(GOOD, &unknown),
        &["flows.f.cc", "unknown congestion control algorithm 'nope'"],
    );
    let bad_param = Overrides {
        cc: Some("vegas".into()),
        cc_params: vec!["beta=x".into()],
        ..Default::default()
    };
    assert_mentions(&error_of(GOOD, &bad_param), &["flows.f.cc", "beta"]);
    let nobody = Overrides {
        cc: Some("cubic".into()),
        ..Default::default()
    };
    assert_mentions(
        &error_of(&GOOD.replace("under_test = true\n", ""), &nobody),
        &["under_test"],
    );
    let bad_set = Overrides {
        set: vec!["links.down.rate_mbps=fast".into()],
        ..Default::default()
    };
    assert_mentions(
        &error_of(GOOD, &bad_set),
        &["links.down.rate_mbps", "--set"],
    );
    let not_a_table = Overrides {
        set: vec!["duration_s.x=1".into()],
        ..Default::default()
    };
    assert_mentions(
        &error_of(GOOD, &not_a_table),
        &["duration_s", "not a table"],
    );
}

#[test]
fn set_edits_the_scenario() {
    let overrides = Overrides {
        set: vec![
            "links.down.packet_loss=0.02".into(),
            "flows.f.cc=cubic".into(),
        ],
        ..Default::default()
    };
    let s = Scenario::parse(GOOD, Path::new("good.toml"), &overrides).unwrap();
    assert_eq!(
        s.links[0].loss,
        vegas_sim::scenario::LossModel::PacketErrorRate(0.02)
    );
    assert_eq!(s.flows[0].cc, "cubic");
}

#[test]
fn the_command_line_reports_the_file_and_exits_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.toml");
    std::fs::write(&file, GOOD.replace("delay_ms = 20", "delay_ms = [1, 2]")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_vegas-sim"))
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&*file.to_string_lossy()), "{stderr}");
    assert!(stderr.contains("links.down.delay_ms"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let missing = Command::new(env!("CARGO_BIN_EXE_vegas-sim"))
        .args(["run", "/nonexistent/scenario.toml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent/scenario.toml"), "{stderr}");
}

#[test]
fn ack_every_out_of_range_is_an_error() {
    for bad in ["0", "65"] {
        let e = flow_error(&format!("ack_every = {bad}"));
        assert_mentions(&e, &["flows.f.ack_every", "1 to 64", bad]);
    }
    // The bounds themselves are accepted.
    for good in ["1", "64"] {
        assert_flow_accepts(&format!("ack_every = {good}"));
    }
}

#[test]
fn a_flow_control_window_out_of_range_is_an_error() {
    for key in ["stream_window_bytes", "connection_window_bytes"] {
        for bad in ["0", "1349", "4611686018427387904"] {
            let e = flow_error(&format!("{key} = {bad}"));
            assert_mentions(&e, &[&format!("flows.f.{key}"), "1350 to", bad]);
        }
        // A negative window is not a whole number of bytes: refused too.
        assert_mentions(&flow_error(&format!("{key} = -1")), &[key]);
        assert_flow_accepts(&format!("{key} = 1350"));
    }
}

#[test]
fn an_unknown_careful_resume_loss_rule_is_an_error() {
    let e = error_after(
        "return_path = [\"up\"]",
        "return_path = [\"up\"]\ncareful_resume = true\ncareful_resume_loss = \"rfc\"",
    );
    assert_mentions(&e, &["flows.f.careful_resume_loss", "'rfc'", "any, queue"]);
    for good in ["any", "queue"] {
        assert_flow_accepts(&format!("careful_resume_loss = \"{good}\""));
    }
}

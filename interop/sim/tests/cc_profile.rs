//! `cc_profile`: one pacing profile for every flow of ours in a scenario,
//! background flows included (the reproduction runs `cc_profile = "paper"`).
//! The effective profile of each flow is read back from the algorithm's own
//! parameter parsing, not from the simulator's list.

use std::path::Path;

use vegas_sim::{Overrides, Scenario};

const FLOWS: &str = r#"
duration_s = 10
[links.down]
rate_mbps = 10
delay_ms = 20
queue_packets = 50
[links.up]
rate_mbps = 10
delay_ms = 20
queue_packets = 50
[flows.tested]
cc = "vegas"
under_test = true
forward_path = ["down"]
return_path = ["up"]
[flows.background]
cc = "veno"
forward_path = ["down"]
return_path = ["up"]
[flows.quiche]
cc = "reno"
forward_path = ["down"]
return_path = ["up"]
[flows.own-choice]
cc = "westwood"
cc_params = ["profile=quic"]
forward_path = ["down"]
return_path = ["up"]
"#;

fn parse(text: &str, overrides: &Overrides) -> Result<Scenario, String> {
    Scenario::parse(text, Path::new("profile.toml"), overrides).map_err(|e| e.to_string())
}

/// Each flow's profile as its algorithm reads it; `None` for quiche's own.
fn profiles(scenario: &Scenario) -> Vec<(String, Option<&'static str>)> {
    scenario
        .flows
        .iter()
        .map(|f| {
            let spec = vegas_cc::resolve(&f.cc, &f.cc_params)
                .unwrap_or_else(|e| panic!("{}: {e}", f.name));
            (
                f.name.clone(),
                spec.and_then(|s| s.params().word("profile")),
            )
        })
        .collect()
}

fn named(pairs: &[(&str, Option<&'static str>)]) -> Vec<(String, Option<&'static str>)> {
    pairs.iter().map(|(n, p)| (n.to_string(), *p)).collect()
}

#[test]
fn without_cc_profile_every_flow_keeps_its_algorithms_default() {
    let s = parse(FLOWS, &Overrides::default()).unwrap();
    assert_eq!(
        profiles(&s),
        named(&[
            ("tested", Some("quic")),
            ("background", Some("quic")),
            ("quiche", None),
            ("own-choice", Some("quic")),
        ])
    );
    assert!(s.flows[1].cc_params.is_empty());
}

#[test]
fn cc_profile_reaches_background_flows_and_yields_to_a_flows_own() {
    let text = format!("cc_profile = \"paper\"\n{FLOWS}");
    let s = parse(&text, &Overrides::default()).unwrap();
    assert_eq!(
        profiles(&s),
        named(&[
            ("tested", Some("paper")),
            ("background", Some("paper")),
            ("quiche", None),
            ("own-choice", Some("quic")),
        ])
    );
    // quiche's algorithms take no parameters: nothing is added to them.
    assert!(s.flows[2].cc_params.is_empty());
}

#[test]
fn cc_profile_can_be_set_on_the_command_line_beside_cc_overrides() {
    let overrides = Overrides {
        cc: Some("venodb".into()),
        cc_params: vec!["beta=2".into()],
        set: vec!["cc_profile=paper".into()],
        ..Default::default()
    };
    let s = parse(FLOWS, &overrides).unwrap();
    assert_eq!(s.flows[0].cc, "venodb");
    assert_eq!(
        profiles(&s),
        named(&[
            ("tested", Some("paper")),
            ("background", Some("paper")),
            ("quiche", None),
            ("own-choice", Some("quic")),
        ])
    );
    // A --cc-param profile for the flow under test wins too.
    let overrides = Overrides {
        cc_params: vec!["profile=quic".into()],
        set: vec!["cc_profile=paper".into()],
        ..Default::default()
    };
    let s = parse(FLOWS, &overrides).unwrap();
    assert_eq!(profiles(&s)[0], ("tested".to_string(), Some("quic")));
    assert_eq!(profiles(&s)[1], ("background".to_string(), Some("paper")));
}

#[test]
fn a_wrong_cc_profile_is_an_error_naming_the_choices() {
    let e = parse(
        &format!("cc_profile = \"tcp\"\n{FLOWS}"),
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(
        e.starts_with("profile.toml: cc_profile: expected one of \"quic\", \"paper\", got \"tcp\""),
        "{e}"
    );
}

#[test]
fn a_flow_setting_that_contradicts_the_paper_profile_is_an_error() {
    let text = format!("cc_profile = \"paper\"\n{FLOWS}").replace(
        "cc = \"veno\"",
        "cc = \"veno\"\ncc_params = [\"pacing_gain=1.5\"]",
    );
    let e = parse(&text, &Overrides::default()).unwrap_err();
    assert!(
        e.contains("flows.background.cc: veno: pacing_gain=1.5 applies only to profile=quic"),
        "{e}"
    );
}

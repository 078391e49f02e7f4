//! The `profile` parameter of every algorithm of ours: `quic` (the default)
//! paces as RFC 9002 section 7.7 asks, slow start included; `paper` sends
//! exactly as the paper's TCP did before profiles existed (Vegas members:
//! spike suppression outside slow start only; Linux's Vegas and the
//! Reno-based members: no pacing). Every expected rate is computed here from
//! the RFC's and the papers' formulas, not read from the crate.

mod common;

use common::{build, ms, Flow, MDS};
use vegas_cc::{resolve, ControllerSpec, Pacing};

/// Members whose paper paces outside slow start with Vegas's spike
/// suppression (004 section 3.4: two segments per SegSpacing).
const SPIKE_SUPPRESSED: &[&str] = &["vegas", "vegas-a", "vegas-l", "rovegas", "vegas-w"];
/// Members whose paper does not pace at all.
const UNPACED: &[&str] = &["vegas-linux", "veno", "venodb", "westwood"];

fn all_members() -> impl Iterator<Item = &'static str> {
    SPIKE_SUPPRESSED.iter().chain(UNPACED).copied()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    SlowStart,
    CongestionAvoidance,
}

/// The rate each profile asks for, as a multiple of cwnd / smoothed RTT;
/// `None`: unpaced.
fn reference_gain(name: &str, profile: &str, phase: Phase) -> Option<f64> {
    let spike = SPIKE_SUPPRESSED.contains(&name);
    match (profile, phase) {
        // The papers: ACK-clocked slow start; spike suppression's 2 x cwnd /
        // RTT where the paper has it.
        ("paper", Phase::SlowStart) => None,
        ("paper", Phase::CongestionAvoidance) => spike.then_some(2.0),
        // RFC 9002 section 7.7, slow start at 2 (the window may double per
        // RTT), the rest at the paper's own pacing or the RFC's N = 1.25.
        ("quic", Phase::SlowStart) => Some(2.0),
        ("quic", Phase::CongestionAvoidance) => Some(if spike { 2.0 } else { 1.25 }),
        _ => unreachable!("{profile}"),
    }
}

fn expected_pacing(flow: &Flow, gain: Option<f64>, burst: usize) -> Option<Pacing> {
    let srtt = flow
        .rtt()
        .expect("an RTT sample")
        .smoothed_rtt
        .as_secs_f64();
    gain.map(|g| Pacing::spaced(g * flow.cwnd() as f64 / srtt, burst))
}

fn assert_pacing(got: Option<Pacing>, want: Option<Pacing>, context: &str) {
    match (got, want) {
        (None, None) => {}
        (Some(g), Some(w)) => {
            assert!(
                (g.rate_bytes_per_sec - w.rate_bytes_per_sec).abs() <= 1e-9 * w.rate_bytes_per_sec,
                "{context}: {g:?} vs {w:?}"
            );
            assert_eq!(
                (g.burst_packets, g.train_packets),
                (w.burst_packets, 1),
                "{context}"
            );
        }
        _ => panic!("{context}: got {got:?}, expected {want:?}"),
    }
}

/// A flow after two loss-free rounds of 100 ms: still in slow start.
fn in_slow_start(name: &str, pairs: &[&str]) -> Flow {
    let mut flow = Flow::new(build(name, pairs));
    flow.rounds(&[ms(100), ms(100)]);
    assert!(flow.cwnd() < flow.cc.ssthresh(), "{name} {pairs:?}");
    flow
}

/// A flow brought out of slow start by a loss, then through recovery and
/// three more rounds.
fn in_congestion_avoidance(name: &str, pairs: &[&str]) -> Flow {
    let mut flow = Flow::new(build(name, pairs));
    flow.rounds(&[ms(100); 3]);
    let window = flow.send_window();
    flow.advance(ms(100));
    flow.lose(&window[..1], false);
    flow.ack(&window[1..], ms(100));
    flow.rounds(&[ms(100); 3]);
    assert!(
        flow.cwnd() >= flow.cc.ssthresh(),
        "{name} {pairs:?}: cwnd {} ssthresh {}",
        flow.cwnd(),
        flow.cc.ssthresh()
    );
    flow
}

#[test]
fn every_member_defaults_to_the_quic_profile() {
    for name in all_members() {
        let spec = ControllerSpec::new(name).expect("registered");
        assert_eq!(spec.params().word("profile"), Some("quic"), "{name}");
    }
}

#[test]
fn each_profile_paces_each_phase_as_its_reference() {
    for name in all_members() {
        for profile in ["quic", "paper"] {
            let pairs = [format!("profile={profile}")];
            let pairs: Vec<&str> = pairs.iter().map(String::as_str).collect();
            let context = format!("{name} profile={profile}");

            let flow = in_slow_start(name, &pairs);
            let want = expected_pacing(&flow, reference_gain(name, profile, Phase::SlowStart), 2);
            assert_pacing(flow.cc.pacing(), want, &format!("{context}, slow start"));

            let flow = in_congestion_avoidance(name, &pairs);
            let gain = reference_gain(name, profile, Phase::CongestionAvoidance);
            let want = expected_pacing(&flow, gain, 2);
            assert_pacing(
                flow.cc.pacing(),
                want,
                &format!("{context}, after slow start"),
            );
        }
    }
}

#[test]
fn no_pacing_before_the_first_rtt_sample_in_reno_members() {
    // Nothing to divide the window by yet: the initial window leaves as a
    // burst, in both profiles.
    for name in ["veno", "venodb", "westwood"] {
        assert_eq!(build(name, &[]).pacing(), None, "{name}");
    }
}

#[test]
fn paper_profile_is_the_old_default_pacing() {
    // Before profiles: Vegas members paced outside slow start at 2 x cwnd /
    // RTT with bursts of 2 and never in slow start; vegas-linux paced only
    // with spike_suppression=on; Veno, VenoDB and Westwood+ never paced.
    let flow = in_congestion_avoidance("vegas-linux", &["profile=paper", "spike_suppression=on"]);
    assert_pacing(
        flow.cc.pacing(),
        expected_pacing(&flow, Some(2.0), 2),
        "vegas-linux spike_suppression=on",
    );
    let flow = in_congestion_avoidance("vegas", &["profile=paper", "spike_burst_packets=3"]);
    assert_pacing(
        flow.cc.pacing(),
        expected_pacing(&flow, Some(3.0), 3),
        "vegas spike_burst_packets=3",
    );
    let flow = in_congestion_avoidance("vegas", &["profile=paper", "spike_suppression=off"]);
    assert_eq!(flow.cc.pacing(), None);
}

#[test]
fn quic_profile_gains_and_burst_are_parameters() {
    let flow = in_slow_start("vegas", &["slow_start_pacing_gain=3"]);
    assert_pacing(
        flow.cc.pacing(),
        expected_pacing(&flow, Some(3.0), 2),
        "vegas slow start",
    );
    // Without spike suppression Vegas has no pacing of its paper's outside
    // slow start: RFC 9002's N applies.
    let flow = in_congestion_avoidance("vegas", &["spike_suppression=off", "pacing_gain=1.5"]);
    assert_pacing(
        flow.cc.pacing(),
        expected_pacing(&flow, Some(1.5), 2),
        "vegas without spike suppression",
    );
    let flow = in_congestion_avoidance("veno", &["pacing_gain=1.5", "pacing_burst_packets=4"]);
    assert_pacing(
        flow.cc.pacing(),
        expected_pacing(&flow, Some(1.5), 4),
        "veno",
    );
    let flow = in_slow_start("westwood", &["slow_start_pacing_gain=2.5"]);
    assert_pacing(
        flow.cc.pacing(),
        expected_pacing(&flow, Some(2.5), 2),
        "westwood slow start",
    );
}

fn refusal(name: &str, pairs: &[&str]) -> String {
    match resolve(name, pairs) {
        Ok(spec) => panic!("{name} {pairs:?} accepted: {spec:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn contradictory_pacing_settings_are_refused_clearly() {
    // A quic-profile setting under profile=paper would silently do nothing.
    for (name, key) in [
        ("vegas", "slow_start_pacing_gain=3"),
        ("vegas-linux", "pacing_gain=1.5"),
        ("veno", "pacing_gain=1.5"),
        ("westwood", "pacing_burst_packets=4"),
        ("venodb", "slow_start_pacing_gain=3"),
    ] {
        let e = refusal(name, &["profile=paper", key]);
        assert!(
            e.starts_with(&format!("{name}: {key} applies only to profile=quic")),
            "{e}"
        );
    }
    // Spike suppression sets the rate outside slow start: pacing_gain would
    // do nothing.
    for name in SPIKE_SUPPRESSED {
        let e = refusal(name, &["pacing_gain=1.5"]);
        assert!(e.contains("only with spike_suppression=off"), "{e}");
    }
    // Each alone, or at its default, is fine.
    for pairs in [
        &["profile=paper", "slow_start_pacing_gain=2"][..],
        &["spike_suppression=off", "pacing_gain=1.5"],
        &["profile=paper", "spike_suppression=off"],
    ] {
        assert!(resolve("vegas", pairs).is_ok(), "{pairs:?}");
    }
    assert!(resolve("vegas-linux", &["pacing_gain=1.5"]).is_ok());
}

#[test]
fn retired_and_unknown_profiles_say_what_to_write() {
    let e = refusal("vegas", &["slow_start_pacing=on"]);
    assert!(e.contains("replaced by profile"), "{e}");
    assert!(
        e.contains("valid parameters:") && e.contains("profile"),
        "{e}"
    );
    let e = refusal("veno", &["profile=tcp"]);
    assert!(e.contains("expected one of quic, paper"), "{e}");
}

#[test]
fn reference_rates_match_rfc_9002_interval() {
    // RFC 9002 section 7.7: interval = (smoothed_rtt * packet_size /
    // congestion_window) / N. Checked once against the rate form used above.
    let flow = in_congestion_avoidance("westwood", &[]);
    let srtt = flow.rtt().expect("sampled").smoothed_rtt.as_secs_f64();
    let interval = (srtt * MDS as f64 / flow.cwnd() as f64) / 1.25;
    let got = flow.cc.pacing().expect("paced").rate_bytes_per_sec;
    assert!((got - MDS as f64 / interval).abs() <= 1e-9 * got);
}

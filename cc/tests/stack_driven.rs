//! The Vegas family driven as the real stack drives it: paced by the host,
//! application-limited decided per packet at send time (RFC 9002 section
//! 7.8), quiche's own ACK-time flag handed in and overridden. These are the
//! tests that a hand-driven sender, sending whole windows at one instant,
//! cannot fail.

mod common;

use std::time::Duration;

use common::stack::{Application, StackFlow};
use common::{ms, MDS, WINDOW};
use vegas_cc::{CcState, ControllerHost, ControllerSpec};

const GEO_RTT: Duration = Duration::from_millis(600);

fn host(name: &str, pairs: &[&str]) -> ControllerHost {
    let spec = ControllerSpec::with_params(name, pairs).unwrap_or_else(|e| panic!("{e}"));
    ControllerHost::new(&spec, WINDOW)
}

/// A flow on an uncongested GEO path, brought into congestion avoidance by
/// one loss after `rounds` round trips of slow start, then through the
/// recovery round trip.
fn in_congestion_avoidance(name: &str, pairs: &[&str], rounds: u32) -> StackFlow {
    let mut flow = StackFlow::new(host(name, pairs), GEO_RTT);
    flow.run_until(flow.start + GEO_RTT * rounds, |_| {});
    flow.lose_oldest();
    assert_eq!(flow.host.state(), CcState::Recovery, "{name}");
    // The loss's recovery ends with the first ACK of a packet sent after it.
    let until = flow.now + GEO_RTT + ms(50);
    flow.run_until(until, |_| {});
    assert_eq!(flow.host.state(), CcState::CongestionAvoidance, "{name}");
    flow
}

/// 004 section 3.5.2: Diff < alpha (no queue at all here) grows cwnd by one
/// packet every RTT. With spike suppression pacing the window, quiche's
/// ACK-time flag calls most ACKs application-limited; the host must not.
#[test]
fn paced_vegas_family_grows_one_packet_in_every_round() {
    // (Vegas-W is not here: its IV.C reads this driver's lone loss as a link
    // error and stays in slow start.)
    // Spike suppression paces congestion avoidance in both profiles.
    for (name, profile) in ["vegas", "vegas-a", "vegas-l", "rovegas"]
        .into_iter()
        .flat_map(|name| [(name, "profile=quic"), (name, "profile=paper")])
    {
        let mut flow = in_congestion_avoidance(name, &[profile], 6);
        let label = format!("{name} {profile}");
        let start_packets = flow.host.cwnd() / MDS;
        let rounds = 20u32;
        flow.run_until(flow.now + GEO_RTT * rounds, |_| {});
        let grown = flow.host.cwnd() / MDS - start_packets;
        // quiche's ACK-time flag was up now and then: taken as it is, each
        // such ACK would cost its round's increase.
        assert!(
            flow.quiche_app_limited_acks > 0,
            "{label}: the pacer never held bytes in flight below cwnd"
        );
        // One packet per round of one RTT: 20, give or take the round in
        // progress at each end. Vegas-A/L may step by more (their thresholds
        // move), never by less.
        assert!(
            grown + 1 >= rounds as usize,
            "{label}: grew {grown} packets in {rounds} rounds"
        );
        if name == "vegas" || name == "rovegas" {
            assert!(grown <= rounds as usize + 1, "{label}: grew {grown}");
        }
    }
}

/// Vegas's slow start (004 section 3.5.3) doubles the window every other
/// round; paced (`profile=quic`) it must still double, not grow by
/// x1.3-1.5 because paced ACKs look application-limited.
#[test]
fn paced_slow_start_doubles_in_each_growth_round() {
    for name in ["vegas", "vegas-w"] {
        let mut flow = StackFlow::new(host(name, &["profile=quic"]), GEO_RTT);
        // cwnd at the end of every round, by round index.
        let mut at_round_end: Vec<usize> = Vec::new();
        let mut last_round = 0u64;
        let mut last_cwnd = flow.host.cwnd();
        flow.run_until(flow.start + GEO_RTT * 14, |f| {
            let mut internals = vegas_cc::Internals::default();
            f.host.controller().internals(&mut internals);
            if let Some(vegas_cc::InternalValue::Int(round)) = internals.get("round") {
                if round != last_round {
                    at_round_end.push(last_cwnd);
                    last_round = round;
                }
            }
            last_cwnd = f.host.cwnd();
        });
        assert_eq!(flow.host.state(), CcState::SlowStart, "{name}");
        assert!(at_round_end.len() >= 10, "{name}: {at_round_end:?}");
        // Growth rounds alternate with holding rounds. In a growth round
        // every packet acknowledged adds its size: the packets sent in the
        // holding round before it, which is cwnd less the one or two still
        // unsent when that round ended.
        let mut growth_rounds = 0;
        for pair in at_round_end.windows(2) {
            let (before, after) = (pair[0], pair[1]);
            if after == before {
                continue;
            }
            growth_rounds += 1;
            let packets = before / MDS;
            assert!(
                after >= 2 * before - 2 * MDS && after <= 2 * before,
                "{name}: a growth round took cwnd from {packets} to {} packets ({at_round_end:?})",
                after / MDS
            );
        }
        assert!(growth_rounds >= 4, "{name}: {at_round_end:?}");
    }
}

/// The other side of RFC 9002 section 7.8: a sender that really has too
/// little to send does not grow its window, although every ACK is on time
/// and Diff < alpha.
#[test]
fn application_limited_sender_does_not_grow() {
    let mut flow = in_congestion_avoidance("vegas", &[], 6);
    // One packet per 100 ms: 6 packets per RTT, far below cwnd (~30).
    flow.set_application(Application::OnePacketEvery(ms(100)));
    flow.run_until(flow.now + GEO_RTT * 2, |_| {});
    let before = flow.host.cwnd();
    flow.run_until(flow.now + GEO_RTT * 20, |_| {});
    assert_eq!(flow.host.cwnd(), before);
}

/// Pacing bounded by a bottleneck: the queue Vegas keeps stays within
/// alpha..beta packets, and the link is used (the window is neither
/// starved by misread application limits nor allowed to run away).
#[test]
fn paced_vegas_settles_between_alpha_and_beta_at_a_bottleneck() {
    // 1 Mbit/s = 125 000 B/s, 100 ms propagation: BDP about 10 packets.
    let rate = 125_000.0;
    let mut flow = StackFlow::new(host("vegas", &[]), ms(100)).with_bottleneck(rate);
    flow.run_until(flow.start + Duration::from_secs(30), |_| {});
    let samples = flow.cwnd_every(Duration::from_secs(30), ms(100));
    // The path's own RTT includes one packet's serialisation at the
    // bottleneck, so its BDP is one packet more than rate x propagation.
    let bdp_packets = rate * 0.1 / MDS as f64 + 1.0;
    let mean_cwnd = samples.iter().sum::<usize>() as f64 / samples.len() as f64 / MDS as f64;
    let queued = mean_cwnd - bdp_packets;
    // alpha = 1 .. beta = 3 packets queued, give or take the one-packet
    // steps either side.
    assert!(
        (0.0..=4.0).contains(&queued),
        "mean cwnd {mean_cwnd:.1} packets over a BDP of {bdp_packets:.1}"
    );
}

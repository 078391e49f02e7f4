//! Vegas (004_039b3aff67042154.txt, section 3) and its Linux flavour, driven
//! round by round with hand-built events. Each test takes one branch of the
//! pseudo-code and checks cwnd and ssthresh against values computed here from
//! the paper's formulas (or tcp_vegas.c's, for `vegas-linux`), not read back
//! from the code under test.

mod common;

use std::time::Duration;

use common::{build, ms, Flow, INITIAL_WINDOW_PACKETS, MDS};
use vegas_cc::{CcState, ControllerSpec, InternalValue, Internals, MINIMUM_WINDOW_PACKETS};

const BASE_RTT_MS: f64 = 100.0;
/// Paper defaults (Vegas-1,3 of Table 2, gamma 1) and the choices where the
/// paper is silent, written out rather than taken from the crate.
const ALPHA: f64 = 1.0;
const BETA: f64 = 3.0;
const GAMMA: f64 = 1.0;
const SS_EXIT_FACTOR: f64 = 7.0 / 8.0;
const LOSS_FACTOR: f64 = 3.0 / 4.0;
const TIMEOUT_SSTHRESH_FACTOR: f64 = 1.0 / 2.0;

/// Section 3.5.2's congestion-avoidance step for one RTT, in bytes.
fn paper_ca_step(cwnd: usize, diff: f64) -> usize {
    if diff < ALPHA {
        cwnd + MDS
    } else if diff > BETA {
        (cwnd - MDS).max(MINIMUM_WINDOW_PACKETS * MDS)
    } else {
        cwnd
    }
}

/// `cwnd x factor` in whole bytes, as a window is cut.
fn cut(cwnd: usize, factor: f64) -> usize {
    ((cwnd as f64 * factor).floor() as usize).max(MINIMUM_WINDOW_PACKETS * MDS)
}

/// The paper's slow start (section 3.5.3) window by window, each window
/// acknowledged by one ACK after `rtts_ms[k]`: cwnd holds during one RTT and
/// doubles during the next. The first window's ACK ends the first round and
/// starts a holding one, so windows 1, 3, 5... are acknowledged in growth
/// rounds. At the end of each holding round (the ACK of windows 1, 3, 5...)
/// Diff from that window's RTT is compared with gamma; above it, cwnd is cut
/// by 1/8 and slow start ends. Returns cwnd after each window, and the window
/// whose ACK ended slow start.
fn paper_slow_start_reference(rtts_ms: &[f64]) -> (Vec<usize>, Option<usize>) {
    let mut cwnd = INITIAL_WINDOW_PACKETS * MDS;
    let mut after = Vec::new();
    for (k, rtt) in rtts_ms.iter().enumerate() {
        let base = rtts_ms[..=k].iter().copied().fold(f64::INFINITY, f64::min);
        if k % 2 == 1 {
            let diff = common::reference_diff_packets(cwnd as f64 / MDS as f64, base, *rtt);
            if diff > GAMMA {
                after.push(cut(cwnd, SS_EXIT_FACTOR));
                return (after, Some(k));
            }
            cwnd *= 2;
        }
        after.push(cwnd);
    }
    (after, None)
}

fn rtts(values_ms: &[u64]) -> Vec<Duration> {
    values_ms.iter().map(|v| ms(*v)).collect()
}

fn float(internals: &Internals, name: &str) -> f64 {
    match internals.get(name) {
        Some(InternalValue::Float(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

/// Drives `vegas` out of slow start (BaseRTT 100 ms, then 110 ms: Diff > gamma
/// at the second check) and through the one recovery RTT after the cut.
/// Returns the flow in congestion avoidance with cwnd 21000 bytes.
fn vegas_in_congestion_avoidance() -> Flow {
    let mut flow = Flow::new(build("vegas", &[]));
    let path = [100.0, 110.0, 110.0, 110.0];
    let (expected, exit) = paper_slow_start_reference(&path);
    assert_eq!(exit, Some(3), "the scenario leaves slow start at window 3");
    let got = flow.rounds(&rtts(&[100, 110, 110, 110]));
    assert_eq!(got, expected);
    // The window sent after the cut is acknowledged: recovery ends.
    flow.round(ms(110));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    assert_eq!(flow.cwnd(), 21_000);
    flow
}

// ---- Slow start (section 3.5.3) ----

#[test]
fn slow_start_grows_only_every_other_rtt() {
    let path = [BASE_RTT_MS; 7];
    let (expected, exit) = paper_slow_start_reference(&path);
    assert_eq!(exit, None);
    assert_eq!(
        expected.iter().map(|c| c / MDS).collect::<Vec<_>>(),
        vec![10, 20, 20, 40, 40, 80, 80]
    );
    for acks_per_window in [1, 4] {
        // The paper's sending: slow start is not paced.
        let mut flow =
            Flow::new(build("vegas", &["profile=paper"])).with_acks_per_window(acks_per_window);
        for (k, want) in expected.iter().enumerate() {
            flow.round(ms(100));
            assert_eq!(
                flow.cwnd(),
                *want,
                "window {k}, {acks_per_window} ACKs each"
            );
            assert_eq!(flow.cc.state(), CcState::SlowStart);
            assert_eq!(flow.cc.ssthresh(), usize::MAX);
            assert_eq!(flow.cc.pacing(), None, "no spike suppression in slow start");
        }
    }
}

#[test]
fn slow_start_continues_while_diff_is_at_most_gamma() {
    // 2 ms of queueing: Diff = 10, 20, 40 x (1 - 100/102) = 0.20, 0.39, 0.78.
    let path = [100.0, 102.0, 102.0, 102.0, 102.0, 102.0];
    let (expected, exit) = paper_slow_start_reference(&path);
    assert_eq!(exit, None);
    let diff_at_last_check = common::reference_diff_packets(40.0, 100.0, 102.0);
    assert!(diff_at_last_check <= GAMMA && diff_at_last_check > 0.5);
    let mut flow = Flow::new(build("vegas", &[]));
    assert_eq!(
        flow.rounds(&rtts(&[100, 102, 102, 102, 102, 102])),
        expected
    );
    assert_eq!(flow.cwnd(), 80 * MDS);
    assert_eq!(flow.cc.state(), CcState::SlowStart);
    let diff = flow.internal("diff_packets").unwrap();
    assert!((diff - diff_at_last_check).abs() < 1e-9, "{diff}");
}

#[test]
fn slow_start_ends_when_diff_exceeds_gamma() {
    // Diff at the checks: 10 x (1 - 100/110) = 0.91 <= gamma, then
    // 20 x (1 - 100/110) = 1.82 > gamma: cut by 1/8 and leave slow start.
    let path = [100.0, 110.0, 110.0, 110.0];
    let (expected, exit) = paper_slow_start_reference(&path);
    assert_eq!(exit, Some(3));
    assert_eq!(*expected.last().unwrap(), cut(20 * MDS, SS_EXIT_FACTOR));
    let mut flow = Flow::new(build("vegas", &[]));
    assert_eq!(flow.rounds(&rtts(&[100, 110, 110, 110])), expected);
    assert_eq!(flow.cwnd(), 21_000);
    assert_eq!(flow.cc.ssthresh(), 21_000);
    // The cut is a decrease: packets sent before it are still in flight.
    assert_eq!(flow.cc.state(), CcState::Recovery);
    flow.round(ms(110));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    assert_eq!(flow.cwnd(), 21_000, "no decision on the recovery RTT");
}

// ---- Congestion avoidance (section 3.5.2) ----

/// Runs rounds at `rtt_ms` from congestion avoidance and checks each against
/// the paper's step; returns the diffs seen.
fn check_ca_rounds(flow: &mut Flow, rtt_ms: u64, rounds: usize) -> Vec<f64> {
    let mut cwnd = flow.cwnd();
    let mut diffs = Vec::new();
    for k in 0..rounds {
        let diff =
            common::reference_diff_packets(cwnd as f64 / MDS as f64, BASE_RTT_MS, rtt_ms as f64);
        flow.round(ms(rtt_ms));
        cwnd = paper_ca_step(cwnd, diff);
        assert_eq!(flow.cwnd(), cwnd, "round {k} at {rtt_ms} ms, Diff {diff}");
        assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
        diffs.push(diff);
    }
    diffs
}

#[test]
fn diff_below_alpha_adds_one_packet_per_rtt() {
    let mut flow = vegas_in_congestion_avoidance();
    let diffs = check_ca_rounds(&mut flow, 100, 4);
    assert!(diffs.iter().all(|d| *d < ALPHA));
    assert_eq!(flow.cwnd(), 21_000 + 4 * MDS);
}

#[test]
fn diff_above_beta_removes_one_packet_per_rtt() {
    let mut flow = vegas_in_congestion_avoidance();
    // 30 ms of queueing: Diff = 17.5 x 30/130 = 4.04, falling by 0.23 per
    // packet removed until it is below beta after five rounds.
    let diffs = check_ca_rounds(&mut flow, 130, 7);
    assert!(diffs[..5].iter().all(|d| *d > BETA), "{diffs:?}");
    assert!(
        diffs[5..].iter().all(|d| *d <= BETA && *d >= ALPHA),
        "{diffs:?}"
    );
    assert_eq!(flow.cwnd(), 21_000 - 5 * MDS);
    assert!(flow.cc.ssthresh() <= flow.cwnd());
}

#[test]
fn diff_between_alpha_and_beta_keeps_the_window() {
    let mut flow = vegas_in_congestion_avoidance();
    // Diff = 17.5 x 10/110 = 1.59.
    let diffs = check_ca_rounds(&mut flow, 110, 4);
    assert!(diffs.iter().all(|d| (ALPHA..=BETA).contains(d)));
    assert_eq!(flow.cwnd(), 21_000);
}

#[test]
fn application_limited_rounds_do_not_grow_the_window() {
    let mut flow = vegas_in_congestion_avoidance();
    flow.app_limited = true;
    flow.rounds(&rtts(&[100, 100]));
    assert_eq!(
        flow.cwnd(),
        21_000,
        "Diff < alpha, but the window is not used"
    );
    flow.rounds(&rtts(&[130]));
    assert_eq!(flow.cwnd(), 21_000 - MDS, "decreases still apply");
}

// ---- Losses (section 3.3) ----

#[test]
fn loss_of_packet_sent_after_last_decrease_shrinks_window() {
    let mut flow = vegas_in_congestion_avoidance();
    // The last decrease was the slow-start cut; this window is sent after it.
    let window = flow.send_window();
    flow.advance(ms(120));
    flow.lose(&window[..1], false);
    let want = cut(21_000, LOSS_FACTOR);
    assert_eq!(flow.cwnd(), want);
    assert_eq!(flow.cc.ssthresh(), want);
    assert_eq!(flow.cc.state(), CcState::Recovery);
    // The rest of the window was sent before this decrease: still recovery.
    flow.ack(&window[1..], ms(110));
    assert_eq!(flow.cc.state(), CcState::Recovery);
    // A packet sent after the decrease is acknowledged: recovery ends.
    flow.round(ms(110));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    assert_eq!(flow.cwnd(), want);
}

#[test]
fn loss_of_packet_sent_before_last_decrease_is_ignored() {
    let mut flow = vegas_in_congestion_avoidance();
    let old_window = flow.send_window();
    flow.advance(ms(120));
    flow.lose(&old_window[..1], false);
    let after_first = cut(21_000, LOSS_FACTOR);
    assert_eq!(flow.cwnd(), after_first);
    // Sent before that decrease: no second cut.
    flow.lose(&old_window[1..3], false);
    assert_eq!(flow.cwnd(), after_first);
    assert_eq!(flow.cc.ssthresh(), after_first);
    flow.ack(&old_window[3..], ms(110));
    // A loss from a window sent after the decrease cuts again.
    let new_window = flow.send_window();
    flow.advance(ms(120));
    flow.lose(&new_window[..1], false);
    assert_eq!(flow.cwnd(), cut(after_first, LOSS_FACTOR));
}

#[test]
fn persistent_congestion_restarts_slow_start_from_the_minimum_window() {
    let mut flow = vegas_in_congestion_avoidance();
    let window = flow.send_window();
    flow.advance(ms(1000));
    // Even a packet sent before an earlier decrease: it is a timeout.
    flow.lose(&window, true);
    let minimum = MINIMUM_WINDOW_PACKETS * MDS;
    let ssthresh = cut(21_000, TIMEOUT_SSTHRESH_FACTOR);
    assert_eq!(flow.cwnd(), minimum);
    assert_eq!(flow.cc.ssthresh(), ssthresh);
    assert_eq!(flow.cc.state(), CcState::Recovery);
    // Slow start again, every other RTT, up to ssthresh: the first window
    // after the timeout is acknowledged in a growth round.
    let mut cwnd = minimum;
    let mut growth = true;
    for k in 0..5 {
        flow.round(ms(100));
        if growth {
            cwnd = (cwnd * 2).min(ssthresh);
        }
        growth = !growth;
        assert_eq!(flow.cwnd(), cwnd, "window {k} after the timeout");
        assert_eq!(flow.cc.ssthresh(), ssthresh);
    }
    assert_eq!(cwnd, ssthresh, "slow start stops at ssthresh");
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
}

#[test]
fn spurious_loss_restores_window_and_forgets_the_decrease() {
    let mut flow = vegas_in_congestion_avoidance();
    let window = flow.send_window();
    flow.advance(ms(120));
    let (cwnd, ssthresh) = (flow.cwnd(), flow.cc.ssthresh());
    flow.lose(&window[..1], false);
    assert!(flow.cwnd() < cwnd);
    assert!(flow.cc.on_spurious_loss(cwnd, ssthresh));
    assert_eq!((flow.cwnd(), flow.cc.ssthresh()), (cwnd, ssthresh));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    // The undone decrease no longer shields packets sent before it.
    flow.lose(&window[1..2], false);
    assert_eq!(flow.cwnd(), cut(cwnd, LOSS_FACTOR));
}

// ---- Spike suppression (section 3.4) ----

#[test]
fn spike_suppression_allows_two_segments_per_seg_spacing() {
    let flow = vegas_in_congestion_avoidance();
    let pacing = flow.cc.pacing().expect("paced outside slow start");
    assert_eq!(pacing.burst_packets, 2);
    // 004 section 3.4: SegSpacing = RTT x MaxSegment / WindowSize, and "twice
    // MaxSegment bytes on each SegSpacing interval": 2 x cwnd / RTT.
    let srtt = flow.rtt().unwrap().smoothed_rtt.as_secs_f64();
    let seg_spacing = srtt * MDS as f64 / 21_000.0;
    let want = 2.0 * MDS as f64 / seg_spacing;
    assert!((pacing.rate_bytes_per_sec - want).abs() < 1e-6 * want);

    let off = Flow::new(build("vegas", &["profile=paper", "spike_suppression=off"]));
    assert_eq!(off.cc.pacing(), None);
}

#[test]
fn slow_start_is_paced_in_the_quic_profile_only() {
    // The paper: slow start sends ACK-clocked bursts, no pacing.
    let mut paper = Flow::new(build("vegas", &["profile=paper"]));
    paper.round(ms(100));
    assert_eq!(paper.cc.state(), CcState::SlowStart);
    assert_eq!(paper.cc.pacing(), None);

    // The default, RFC 9002 section 7.7: gain x cwnd / smoothed RTT, bursts
    // of spike_burst_packets.
    let mut paced = Flow::new(build("vegas", &["profile=quic"]));
    paced.round(ms(100));
    assert_eq!(paced.cc.state(), CcState::SlowStart);
    let pacing = paced.cc.pacing().expect("slow start paced");
    let srtt = paced.rtt().unwrap().smoothed_rtt.as_secs_f64();
    let want = 2.0 * paced.cc.cwnd() as f64 / srtt;
    assert!((pacing.rate_bytes_per_sec - want).abs() < 1e-6 * want);
    assert_eq!(pacing.burst_packets, 2);
}

// ---- Internals ----

#[test]
fn internals_report_the_round() {
    let mut flow = vegas_in_congestion_avoidance();
    flow.round(ms(110));
    let internals = flow.internals();
    assert!((float(&internals, "base_rtt_ms") - 100.0).abs() < 1e-9);
    assert!((float(&internals, "round_rtt_ms") - 110.0).abs() < 1e-9);
    let want = common::reference_diff_packets(17.5, BASE_RTT_MS, 110.0);
    assert!((float(&internals, "diff_packets") - want).abs() < 1e-9);
    assert_eq!(float(&internals, "cwnd_packets"), 17.5);
    assert_eq!(float(&internals, "alpha"), ALPHA);
    assert_eq!(float(&internals, "beta"), BETA);
    assert_eq!(float(&internals, "gamma"), GAMMA);
    // Expected = 17.5 packets / 0.1 s, in bits per second.
    let expected_bps = 17.5 / 0.1 * MDS as f64 * 8.0;
    assert!((float(&internals, "expected_bps") - expected_bps).abs() < 1e-6);
    let actual_bps = 17.5 / 0.11 * MDS as f64 * 8.0;
    assert!((float(&internals, "actual_bps") - actual_bps).abs() < 1e-6);
}

// ---- Parameters and registration ----

#[test]
fn defaults_and_validation() {
    let paper = ControllerSpec::new("vegas").unwrap();
    assert_eq!(paper.params().number("alpha"), Some(1.0));
    assert_eq!(paper.params().number("beta"), Some(3.0));
    assert_eq!(paper.params().number("gamma"), Some(1.0));
    let linux = ControllerSpec::new("vegas-linux").unwrap();
    assert_eq!(linux.params().number("alpha"), Some(2.0));
    assert_eq!(linux.params().number("beta"), Some(4.0));
    assert_eq!(linux.params().number("gamma"), Some(1.0));
    assert!(ControllerSpec::with_params("vegas", &["alpha=2", "beta=4"]).is_ok());
    let err = ControllerSpec::with_params("vegas", &["alpha=4", "beta=3"]).unwrap_err();
    assert!(err.to_string().contains("alpha"), "{err}");
    assert!(ControllerSpec::with_params("vegas-linux", &["alpha=5"]).is_err());
    assert_eq!(build("vegas", &[]).name(), "vegas");
    assert_eq!(build("vegas-linux", &[]).name(), "vegas-linux");
}

#[test]
fn paper_alpha_beta_two_four_is_one_parameter_away() {
    let mut flow = Flow::new(build("vegas", &["alpha=2", "beta=4"]));
    flow.rounds(&rtts(&[100, 110, 110, 110, 110]));
    assert_eq!(flow.cwnd(), 21_000);
    // Diff = 17.5 x 10/110 = 1.59 < 2: now an increase.
    flow.round(ms(110));
    assert_eq!(flow.cwnd(), 21_000 + MDS);
}

// ---- Linux flavour (tcp_vegas.c) ----

const LINUX_GAMMA: u64 = 1;
const LINUX_ALPHA: u64 = 2;
const LINUX_BETA: u64 = 4;

/// tcp_vegas.c's Diff: cwnd x (RTT - BaseRTT) / BaseRTT, whole packets.
fn linux_diff(cwnd_packets: u64, base_us: u64, rtt_us: u64) -> u64 {
    cwnd_packets * (rtt_us - base_us) / base_us
}

/// With four ACKs per window, a round runs from the first ACK of one window
/// to the first ACK of the next: its smallest RTT is the smaller of the two
/// windows' RTTs.
fn linux_round_rtt_us(previous_ms: u64, current_ms: u64) -> u64 {
    previous_ms.min(current_ms) * 1000
}

#[test]
fn linux_flavour_slow_start_grows_every_rtt() {
    // Linux's sending, unpaced.
    let mut flow = Flow::new(build("vegas-linux", &["profile=paper"])).with_acks_per_window(4);
    let mut cwnd = INITIAL_WINDOW_PACKETS * MDS;
    for k in 0..4 {
        flow.round(ms(100));
        cwnd *= 2;
        assert_eq!(flow.cwnd(), cwnd, "window {k}");
        assert_eq!(flow.cc.state(), CcState::SlowStart);
    }
    assert_eq!(flow.cc.pacing(), None);
}

#[test]
fn linux_flavour_leaves_slow_start_at_target_plus_one() {
    let mut flow = Flow::new(build("vegas-linux", &[])).with_acks_per_window(4);
    let path_ms = [100, 100, 150, 150];
    let mut cwnd_packets = INITIAL_WINDOW_PACKETS as u64;
    let mut exited = false;
    for k in 0..path_ms.len() {
        flow.round(ms(path_ms[k]));
        // The decision at the first ACK of window k (round 0 has too few
        // samples and is Reno's: ordinary slow start).
        let diff = (k > 0).then(|| {
            let rtt = linux_round_rtt_us(path_ms[k - 1], path_ms[k]);
            (rtt, linux_diff(cwnd_packets, 100_000, rtt))
        });
        match diff {
            Some((rtt, diff)) if diff > LINUX_GAMMA => {
                let target = cwnd_packets * 100_000 / rtt;
                cwnd_packets = cwnd_packets.min(target + 1);
                exited = true;
                break;
            }
            _ => cwnd_packets *= 2,
        }
        assert_eq!(flow.cwnd(), cwnd_packets as usize * MDS, "window {k}");
    }
    assert!(exited);
    // 80 packets, RTT 150 ms: Diff 40 > 1, target 80 x 100/150 = 53, cwnd 54.
    assert_eq!(cwnd_packets, 54);
    assert_eq!(flow.cwnd(), 54 * MDS);
    assert_eq!(flow.cc.ssthresh(), 54 * MDS);
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    let diff = flow.internal("diff_packets").unwrap();
    assert_eq!(diff, 40.0);
}

#[test]
fn linux_flavour_congestion_avoidance_moves_one_packet_per_rtt() {
    let mut flow = Flow::new(build("vegas-linux", &[])).with_acks_per_window(4);
    flow.rounds(&rtts(&[100, 100, 150, 150]));
    assert_eq!(flow.cwnd(), 54 * MDS);
    let path_ms = [150, 150, 150, 100, 100, 104, 104];
    let mut previous = 150;
    let mut cwnd_packets = 54u64;
    let mut diffs = Vec::new();
    for rtt_ms in path_ms {
        let diff = linux_diff(cwnd_packets, 100_000, linux_round_rtt_us(previous, rtt_ms));
        flow.round(ms(rtt_ms));
        if diff > LINUX_BETA {
            cwnd_packets -= 1;
        } else if diff < LINUX_ALPHA {
            cwnd_packets += 1;
        }
        assert_eq!(flow.cwnd(), cwnd_packets as usize * MDS, "{rtt_ms} ms");
        assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
        previous = rtt_ms;
        diffs.push(diff);
    }
    // Down to 51 at 150 ms (Diff 27, 26, 26), up to 54 while the round's
    // smallest RTT is 100 ms, then Diff = 54 x 4/100 = 2 sits between alpha
    // and beta.
    assert_eq!(diffs[..3], [27, 26, 26]);
    assert_eq!(*diffs.last().unwrap(), 2);
    assert_eq!(cwnd_packets, 54);
}

#[test]
fn linux_flavour_halves_on_loss() {
    let mut flow = Flow::new(build("vegas-linux", &[])).with_acks_per_window(4);
    flow.rounds(&rtts(&[100, 100]));
    assert_eq!(flow.cwnd(), 40 * MDS);
    let window = flow.send_window();
    flow.advance(ms(100));
    flow.lose(&window[..1], false);
    assert_eq!(flow.cwnd(), 20 * MDS);
    assert_eq!(flow.cc.ssthresh(), 20 * MDS);
    assert_eq!(flow.cc.state(), CcState::Recovery);
    flow.lose(&window[1..2], false);
    assert_eq!(flow.cwnd(), 20 * MDS, "one reduction per recovery episode");
}

// ---- Robustness ----

// The random-event properties (determinism, no window opened by a loss,
// finite internals) are `tests/every_algorithm.rs`'s, for every algorithm.

// ---- RTT samples come from full-size packets ----

/// A 60-byte HTTP/3 control packet crosses the bottleneck faster than a
/// full one; its RTT is no sample of the path, or BaseRTT reads low and Diff
/// one to two packets high (module docs of `shared::round_clock`).
#[test]
fn base_rtt_ignores_small_packets() {
    for name in [
        "vegas",
        "vegas-linux",
        "vegas-a",
        "rovegas",
        "vegas-w",
        "veno",
    ] {
        let mut cc = build(name, &[]);
        let t0 = std::time::Instant::now();
        let sizes_and_rtts = [
            (60usize, 93u64),
            (MDS, 100),
            (MDS / 2 - 1, 95),
            (MDS / 2, 99),
        ];
        for (n, (size, _)) in sizes_and_rtts.iter().enumerate() {
            cc.on_packet_sent(&vegas_cc::PacketSent {
                pkt_num: n as u64,
                size: *size,
                time_sent: t0,
                bytes_in_flight: 0,
            });
        }
        for (n, (size, rtt)) in sizes_and_rtts.iter().enumerate() {
            let acked = [vegas_cc::AckedPacket::new(
                n as u64,
                *size,
                t0,
                t0 + ms(*rtt),
            )];
            cc.on_ack(&vegas_cc::AckEvent {
                now: t0 + ms(*rtt),
                acked: &acked,
                summary: vegas_cc::AckSummary::of(&acked, 0),
                ack_delay: Duration::ZERO,
                rtt: vegas_cc::RttSnapshot::uniform(ms(*rtt)),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            });
            let mut internals = Internals::default();
            cc.internals(&mut internals);
            // Only packets of at least half the datagram size are samples:
            // 100 ms, then 99 ms; never 93 or 95.
            let want = match n {
                0 => None,
                1 | 2 => Some(100.0),
                _ => Some(99.0),
            };
            let got = match internals.get("base_rtt_ms") {
                Some(InternalValue::Float(v)) => Some(v),
                _ => None,
            };
            assert_eq!(got, want, "{name} after packet {n}");
        }
    }
}

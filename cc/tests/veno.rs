//! Veno (001_8629d53d83e82638.txt, section 2.1), driven round by round with
//! hand-built events. Each test takes one branch — slow start, growth below
//! and at beta, random and congestion loss — and checks cwnd and ssthresh
//! against values computed here from the paper's formulas, not read back from
//! the code under test.

mod common;

use common::{build, ms, Flow, INITIAL_WINDOW_PACKETS, MDS};
use vegas_cc::{CcState, ControllerSpec, InternalValue, WindowConfig, MINIMUM_WINDOW_PACKETS};

/// Section 2.1's numbers, written out rather than taken from the crate.
const BETA: f64 = 3.0;
const RANDOM_LOSS_FACTOR: f64 = 4.0 / 5.0;
const CONGESTION_LOSS_FACTOR: f64 = 1.0 / 2.0;
/// One packet per RTT below beta, one every other RTT from beta on.
const INCREASE_BELOW_BETA: f64 = 1.0;
const INCREASE_AT_BETA: f64 = 1.0 / 2.0;
/// The choice for persistent congestion (Reno's timeout).
const TIMEOUT_SSTHRESH_FACTOR: f64 = 1.0 / 2.0;

/// `cwnd × factor` in whole bytes, never below the minimum window.
fn cut(cwnd: usize, factor: f64) -> usize {
    ((cwnd as f64 * factor).floor() as usize).max(MINIMUM_WINDOW_PACKETS * MDS)
}

fn text(flow: &Flow, name: &str) -> &'static str {
    match flow.internals().get(name) {
        Some(InternalValue::Text(t)) => t,
        other => panic!("{name}: {other:?}"),
    }
}

/// Congestion avoidance, one window acknowledged per RTT: the increase of
/// the round follows N against beta, and the window grows by
/// `increase × bytes acked / cwnd` packets, fractions kept for later rounds.
/// Returns cwnd after each round and the N of each round.
fn ca_reference(
    mut cwnd: usize,
    mut credit: f64,
    base_ms: f64,
    rtts_ms: &[f64],
) -> (Vec<usize>, Vec<f64>) {
    let mut after = Vec::new();
    let mut ns = Vec::new();
    for rtt in rtts_ms {
        let n = common::reference_diff_packets(cwnd as f64 / MDS as f64, base_ms, *rtt);
        let increase = if n < BETA {
            INCREASE_BELOW_BETA
        } else {
            INCREASE_AT_BETA
        };
        let acked = (cwnd / MDS * MDS) as f64;
        credit += acked * increase;
        let packets = (credit / cwnd as f64).floor();
        credit -= packets * cwnd as f64;
        cwnd += packets as usize * MDS;
        after.push(cwnd);
        ns.push(n);
    }
    (after, ns)
}

/// Slow start at 100 ms to 80 packets; a loss at N = 0 (random: 80 × 4/5 =
/// 64); the recovery round, whose window (sent after the reduction) ends
/// recovery and adds the one packet of N < beta. Returns the flow in
/// congestion avoidance at 65 packets with no credit left.
fn veno_in_congestion_avoidance() -> Flow {
    let mut flow = Flow::new(build("veno", &[]));
    assert_eq!(
        flow.rounds(&[ms(100); 3]),
        vec![20 * MDS, 40 * MDS, 80 * MDS]
    );
    let window = flow.send_window();
    flow.advance(ms(50));
    flow.lose(&window[..1], false);
    assert_eq!(flow.cwnd(), 64 * MDS);
    flow.ack(&window[1..], ms(100));
    assert_eq!(flow.cc.state(), CcState::Recovery);
    assert_eq!(flow.cwnd(), 64 * MDS, "partial ACKs do not grow the window");
    flow.round(ms(100));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    assert_eq!(flow.cwnd(), 65 * MDS);
    flow
}

// ---- Slow start: Reno's ----

#[test]
fn slow_start_is_renos_and_computes_n() {
    // Reno's sending, unpaced (the default quic profile would pace; see
    // tests/pacing_profile.rs).
    let mut flow = Flow::new(build("veno", &["profile=paper"]));
    let mut cwnd = INITIAL_WINDOW_PACKETS * MDS;
    // BaseRTT 100 ms, then 125 ms of RTT: N grows but slow start goes on.
    for (k, rtt) in [100.0, 125.0, 125.0, 125.0].iter().enumerate() {
        let n = common::reference_diff_packets(cwnd as f64 / MDS as f64, 100.0, *rtt);
        flow.round(ms(*rtt as u64));
        cwnd *= 2;
        assert_eq!(flow.cwnd(), cwnd, "window {k}");
        assert_eq!(flow.cc.state(), CcState::SlowStart);
        assert_eq!(flow.cc.ssthresh(), usize::MAX);
        let got = flow.internal("n_packets").unwrap();
        assert!((got - n).abs() < 1e-9, "N {got} vs {n}");
    }
    assert!(flow.internal("n_packets").unwrap() >= BETA);
    assert_eq!(flow.cc.pacing(), None);
}

// ---- Congestion avoidance (section 2.1) ----

#[test]
fn below_beta_grows_one_packet_per_rtt() {
    let mut flow = veno_in_congestion_avoidance();
    // 2 ms of queueing: N = 65 × 2/102 = 1.27 < beta.
    let rtts = [102.0, 102.0, 100.0, 102.0];
    let (want, ns) = ca_reference(flow.cwnd(), 0.0, 100.0, &rtts);
    assert!(ns.iter().all(|n| *n < BETA), "{ns:?}");
    for (k, rtt) in rtts.iter().enumerate() {
        flow.round(ms(*rtt as u64));
        assert_eq!(flow.cwnd(), want[k], "round {k}");
        assert_eq!(flow.internal("increase_per_rtt"), Some(INCREASE_BELOW_BETA));
    }
    assert_eq!(flow.cwnd(), (65 + 4) * MDS);
}

#[test]
fn from_beta_on_grows_one_packet_every_other_rtt() {
    let mut flow = veno_in_congestion_avoidance();
    // 10 ms of queueing: N = 65 × 10/110 = 5.9 >= beta.
    let rtts = [110.0; 6];
    let (want, ns) = ca_reference(flow.cwnd(), 0.0, 100.0, &rtts);
    assert!(ns.iter().all(|n| *n >= BETA), "{ns:?}");
    assert_eq!(
        want.iter().map(|c| c / MDS).collect::<Vec<_>>(),
        vec![65, 66, 66, 67, 67, 68]
    );
    for (k, rtt) in rtts.iter().enumerate() {
        flow.round(ms(*rtt as u64));
        assert_eq!(flow.cwnd(), want[k], "round {k}");
        let n = flow.internal("n_packets").unwrap();
        assert!((n - ns[k]).abs() < 1e-9);
        assert_eq!(flow.internal("increase_per_rtt"), Some(INCREASE_AT_BETA));
    }
}

#[test]
fn increases_accumulate_across_changes_of_n() {
    let mut flow = veno_in_congestion_avoidance();
    // Alternating between below and above beta: half-packet credit from a
    // round at beta is kept when the next round adds a whole packet.
    let rtts = [110.0, 100.0, 110.0, 110.0, 100.0, 110.0];
    let (want, ns) = ca_reference(flow.cwnd(), 0.0, 100.0, &rtts);
    assert!(ns[0] >= BETA && ns[1] < BETA);
    let got = flow.rounds(&rtts.map(|r| ms(r as u64)));
    assert_eq!(got, want);
}

// ---- Losses (section 2.1) ----

#[test]
fn loss_below_beta_is_random_and_cuts_by_a_fifth() {
    let mut flow = veno_in_congestion_avoidance();
    flow.round(ms(101));
    let n = common::reference_diff_packets(65.0, 100.0, 101.0);
    assert!(n < BETA);
    let cwnd = flow.cwnd();
    let window = flow.send_window();
    flow.advance(ms(60));
    flow.lose(&window[2..3], false);
    let want = cut(cwnd, RANDOM_LOSS_FACTOR);
    assert_eq!(flow.cwnd(), want);
    assert_eq!(flow.cc.ssthresh(), want);
    assert_eq!(text(&flow, "loss_class"), "random");
    assert_eq!(flow.internal("loss_factor"), Some(RANDOM_LOSS_FACTOR));
    assert_eq!(flow.cc.state(), CcState::Recovery);
}

#[test]
fn loss_from_beta_on_is_congestion_and_halves() {
    let mut flow = veno_in_congestion_avoidance();
    flow.round(ms(130));
    let n = common::reference_diff_packets(65.0, 100.0, 130.0);
    assert!(n >= BETA);
    let cwnd = flow.cwnd();
    let window = flow.send_window();
    flow.advance(ms(60));
    flow.lose(&window[..1], false);
    let want = cut(cwnd, CONGESTION_LOSS_FACTOR);
    assert_eq!(flow.cwnd(), want);
    assert_eq!(flow.cc.ssthresh(), want);
    assert_eq!(text(&flow, "loss_class"), "congestion");
}

#[test]
fn n_equal_to_beta_is_congestive() {
    // Where 2.1 ("N smaller than beta" is random) and 3.1 (N >= beta) meet:
    // a window of 6 packets at twice BaseRTT queues exactly 3.
    let window = WindowConfig {
        max_datagram_size: MDS,
        initial_cwnd_packets: 3,
    };
    let cc = ControllerSpec::new("veno").unwrap().build(window);
    let mut flow = Flow::new(cc);
    flow.round(ms(125));
    assert_eq!(flow.cwnd(), 6 * MDS);
    flow.round(ms(250));
    let n = common::reference_diff_packets(6.0, 125.0, 250.0);
    assert_eq!(n, BETA, "the reference itself is exact");
    assert_eq!(flow.internal("n_packets"), Some(BETA));
    assert_eq!(flow.internal("increase_per_rtt"), Some(INCREASE_AT_BETA));
    assert_eq!(flow.cwnd(), 12 * MDS);
    let window = flow.send_window();
    flow.advance(ms(10));
    flow.lose(&window[..1], false);
    assert_eq!(text(&flow, "loss_class"), "congestion");
    assert_eq!(flow.cwnd(), cut(12 * MDS, CONGESTION_LOSS_FACTOR));
}

#[test]
fn loss_before_any_n_is_a_congestion_loss() {
    let mut flow = Flow::new(build("veno", &[]));
    assert_eq!(text(&flow, "loss_class"), "none");
    let window = flow.send_window();
    flow.advance(ms(300));
    flow.lose(&window[..1], false);
    assert_eq!(flow.cwnd(), cut(10 * MDS, CONGESTION_LOSS_FACTOR));
    assert_eq!(text(&flow, "loss_class"), "congestion");
    assert_eq!(flow.internal("n_packets"), None);
}

#[test]
fn several_losses_in_one_window_reduce_once() {
    let mut flow = veno_in_congestion_avoidance();
    let cwnd = flow.cwnd();
    let window = flow.send_window();
    assert_eq!(window.len(), 65);
    flow.advance(ms(50));
    flow.lose(&window[3..4], false);
    let reduced = cut(cwnd, RANDOM_LOSS_FACTOR);
    assert_eq!(flow.cwnd(), reduced);
    // Three more congestion events for the same window: no further cut.
    for lost in [&window[10..12], &window[20..21], &window[40..45]] {
        flow.advance(ms(5));
        flow.lose(lost, false);
        assert_eq!(flow.cwnd(), reduced);
        assert_eq!(flow.cc.ssthresh(), reduced);
    }
    // Partial ACKs: the rest of the old window.
    let rest: Vec<_> = flow.in_flight().to_vec();
    flow.ack(&rest, ms(100));
    assert_eq!(flow.cc.state(), CcState::Recovery);
    assert_eq!(flow.cwnd(), reduced);
    // A loss in the next window is a new epoch.
    let next = flow.send_window();
    flow.advance(ms(50));
    flow.lose(&next[..1], false);
    assert_eq!(flow.cwnd(), cut(reduced, RANDOM_LOSS_FACTOR));
}

#[test]
fn persistent_congestion_restarts_slow_start() {
    let mut flow = veno_in_congestion_avoidance();
    let cwnd = flow.cwnd();
    let window = flow.send_window();
    flow.advance(ms(2000));
    flow.lose(&window, true);
    let minimum = MINIMUM_WINDOW_PACKETS * MDS;
    let ssthresh = cut(cwnd, TIMEOUT_SSTHRESH_FACTOR);
    assert_eq!(flow.cwnd(), minimum);
    assert_eq!(flow.cc.ssthresh(), ssthresh);
    assert_eq!(text(&flow, "loss_class"), "congestion");
    let mut want = minimum;
    for k in 0..5 {
        flow.round(ms(100));
        want = (want * 2).min(ssthresh);
        assert_eq!(flow.cwnd(), want, "round {k} after the timeout");
    }
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
}

#[test]
fn application_limited_acks_do_not_grow_the_window() {
    let mut flow = veno_in_congestion_avoidance();
    flow.app_limited = true;
    flow.rounds(&[ms(100), ms(100)]);
    assert_eq!(flow.cwnd(), 65 * MDS);
    flow.app_limited = false;
    flow.round(ms(100));
    assert_eq!(flow.cwnd(), 66 * MDS);
}

#[test]
fn spurious_loss_restores_the_window_and_the_epoch() {
    let mut flow = veno_in_congestion_avoidance();
    let (cwnd, ssthresh) = (flow.cwnd(), flow.cc.ssthresh());
    let window = flow.send_window();
    flow.advance(ms(50));
    flow.lose(&window[..1], false);
    assert!(flow.cwnd() < cwnd);
    assert!(flow.cc.on_spurious_loss(cwnd, ssthresh));
    assert_eq!((flow.cwnd(), flow.cc.ssthresh()), (cwnd, ssthresh));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    flow.lose(&window[1..2], false);
    assert_eq!(flow.cwnd(), cut(cwnd, RANDOM_LOSS_FACTOR));
}

// ---- Internals, parameters, registration ----

#[test]
fn internals_report_n_and_the_loss_class() {
    let mut flow = veno_in_congestion_avoidance();
    flow.round(ms(120));
    let internals = flow.internals();
    let float = |name: &str| match internals.get(name) {
        Some(InternalValue::Float(v)) => v,
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(float("base_rtt_ms"), 100.0);
    assert_eq!(float("round_rtt_ms"), 120.0);
    assert!((float("n_packets") - common::reference_diff_packets(65.0, 100.0, 120.0)).abs() < 1e-9);
    assert_eq!(float("cwnd_packets"), flow.cwnd() as f64 / MDS as f64);
    assert_eq!(float("ssthresh_packets"), 64.0);
    assert_eq!(float("beta"), BETA);
    assert_eq!(
        internals.get("loss_class"),
        Some(InternalValue::Text("random"))
    );
}

#[test]
fn defaults_and_parameters() {
    let spec = ControllerSpec::new("veno").unwrap();
    let p = spec.params();
    assert_eq!(p.number("beta"), Some(BETA));
    assert_eq!(p.number("random_loss_factor"), Some(RANDOM_LOSS_FACTOR));
    assert_eq!(
        p.number("congestion_loss_factor"),
        Some(CONGESTION_LOSS_FACTOR)
    );
    assert_eq!(p.number("increase_below_beta"), Some(INCREASE_BELOW_BETA));
    assert_eq!(p.number("increase_at_beta"), Some(INCREASE_AT_BETA));
    assert_eq!(build("veno", &[]).name(), "veno");
    assert!(ControllerSpec::with_params("veno", &["random_loss_factor=1.5"]).is_err());
    assert!(vegas_cc::registry::all_names().contains(&"veno"));

    // beta = 10: N = 40 x 10/110 = 3.6 is no longer congestive.
    let mut flow = Flow::new(build("veno", &["beta=10"]));
    flow.rounds(&[ms(100), ms(100), ms(110)]);
    let window = flow.send_window();
    flow.advance(ms(50));
    flow.lose(&window[..1], false);
    assert_eq!(text(&flow, "loss_class"), "random");
}

// ---- Robustness ----

// The random-event properties (determinism, no window opened by a loss,
// finite internals) are `tests/every_algorithm.rs`'s, for every algorithm.

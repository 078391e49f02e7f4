//! RoVegas (002_7f811f836ada7a25.txt, section 3), driven round by round with
//! hand-built events. Each test takes one branch of the paper's pseudo-code
//! (BaseRTT from probing and non-probing ACKs, eq. 3's three cases, Vegas's
//! slow start on RoVegas's diff) and checks cwnd, BaseRTT and diff against
//! values computed here from the paper's formulas. Then each source of
//! queueing times: AQT, receive timestamps (with a clock offset, with drift,
//! with hostile values) and none, which must be Vegas event for event.

mod common;

use std::time::{Duration, Instant};

use common::random_events::{self, check_invariants};
use common::{build, ms, Flow, FrameExtras, INITIAL_WINDOW_PACKETS, MDS};
use proptest::prelude::*;
use vegas_cc::registry::all_names;
use vegas_cc::shared::peer_clock::PeerClock as HostClock;
use vegas_cc::{
    AckedPacket, CcState, ControllerSpec, InternalValue, Internals, PacketSent,
    MINIMUM_WINDOW_PACKETS,
};

/// Section 4: a = 1, b = 3 (Vegas's); gamma and the cuts are Vegas's
/// defaults, written out rather than taken from the crate.
const ALPHA: f64 = 1.0;
const BETA: f64 = 3.0;
const GAMMA: f64 = 1.0;
const SS_EXIT_FACTOR: f64 = 7.0 / 8.0;
const LOSS_FACTOR: f64 = 3.0 / 4.0;
const TIMEOUT_SSTHRESH_FACTOR: f64 = 1.0 / 2.0;
const MINIMUM: usize = MINIMUM_WINDOW_PACKETS * MDS;

// ---- References, from the paper ----

/// The pseudo-code's baseRTTtemp = RTT − (AQT + AQT-echo); a non-probing ACK
/// is the case AQT = AQT-echo = 0 (baseRTT = RTT if smaller).
fn base_rtt_temp(rtt_ms: f64, aqt_echo_ms: f64, aqt_ms: f64) -> f64 {
    rtt_ms - (aqt_ms + aqt_echo_ms)
}

/// expected = CWND / baseRTT, actual' = CWND / (RTT − QTb) (eq. 2),
/// diff = (expected − actual') × baseRTT, in packets.
fn rovegas_diff(cwnd_packets: f64, base_rtt_ms: f64, rtt_ms: f64, qtb_ms: f64) -> f64 {
    let base = base_rtt_ms / 1e3;
    let expected = cwnd_packets / base;
    let actual = cwnd_packets / ((rtt_ms - qtb_ms) / 1e3);
    (expected - actual) * base
}

/// Eq. (3), one RTT, in bytes.
fn eq3_step(cwnd: usize, diff: f64) -> usize {
    if diff < ALPHA {
        cwnd + MDS
    } else if diff > BETA {
        (cwnd - MDS).max(MINIMUM)
    } else {
        cwnd
    }
}

fn cut(cwnd: usize, factor: f64) -> usize {
    ((cwnd as f64 * factor).floor() as usize).max(MINIMUM)
}

/// One window: its RTT, the AQT-echo (forward) and AQT (backward) of its
/// ACK, in ms.
#[derive(Clone, Copy, Debug)]
struct Window {
    rtt: f64,
    echo: f64,
    aqt: f64,
}

fn w(rtt: f64, echo: f64, aqt: f64) -> Window {
    Window { rtt, echo, aqt }
}

/// Vegas's slow start (holding every other RTT, exit when diff > gamma with
/// a 1/8 cut) with RoVegas's BaseRTT and diff, one ACK per window. The first
/// window's ACK ends the first round, so windows 1, 3, 5, ... end holding
/// rounds, where diff is checked. Returns cwnd after each window and the
/// window that ended slow start.
fn slow_start_reference(windows: &[Window]) -> (Vec<usize>, Option<usize>) {
    let mut cwnd = INITIAL_WINDOW_PACKETS * MDS;
    let mut base = f64::INFINITY;
    let mut after = Vec::new();
    for (k, win) in windows.iter().enumerate() {
        base = base.min(base_rtt_temp(win.rtt, win.echo, win.aqt));
        if k % 2 == 1 {
            let diff = rovegas_diff(cwnd as f64 / MDS as f64, base, win.rtt, win.aqt);
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

// ---- Driving ----

/// Extras of a frame carrying the queueing-time extension: AQT-echo on every
/// packet, AQT on the ACK.
fn aqt(echo_ms: Option<u64>, aqt_ms: Option<u64>) -> impl FnMut(&mut [AckedPacket]) -> FrameExtras {
    move |packets| {
        for p in packets.iter_mut() {
            p.forward_queueing = echo_ms.map(ms);
        }
        FrameExtras {
            ack_delay: Duration::ZERO,
            backward_queueing: aqt_ms.map(ms),
        }
    }
}

/// A round with the extension: RTT `rtt_ms`, AQT-echo and AQT as given.
fn probing_round(flow: &mut Flow, rtt_ms: u64, echo_ms: Option<u64>, aqt_ms: Option<u64>) {
    flow.round_with(ms(rtt_ms), aqt(echo_ms, aqt_ms));
}

fn float(internals: &Internals, name: &str) -> f64 {
    match internals.get(name) {
        Some(InternalValue::Float(v)) => v,
        Some(InternalValue::Int(v)) => v as f64,
        other => panic!("{name}: {other:?}"),
    }
}

fn text(flow: &Flow, name: &str) -> &'static str {
    match flow.internals().get(name) {
        Some(InternalValue::Text(t)) => t,
        other => panic!("{name}: {other:?}"),
    }
}

fn near(got: f64, want: f64) -> bool {
    (got - want).abs() < 1e-9
}

/// Drives `name` out of slow start without any queueing information (BaseRTT
/// 100 ms, then 110: Vegas's diff exceeds gamma at the second check) and
/// through the recovery RTT after the cut: congestion avoidance at 21000
/// bytes (17.5 packets).
fn in_congestion_avoidance(name: &str, pairs: &[&str]) -> Flow {
    let mut flow = Flow::new(build(name, pairs));
    let path = [
        w(100.0, 0.0, 0.0),
        w(110.0, 0.0, 0.0),
        w(110.0, 0.0, 0.0),
        w(110.0, 0.0, 0.0),
    ];
    let (expected, exit) = slow_start_reference(&path);
    assert_eq!(exit, Some(3));
    assert_eq!(flow.rounds(&[ms(100), ms(110), ms(110), ms(110)]), expected);
    flow.round(ms(110));
    assert_eq!(flow.cc.state(), CcState::CongestionAvoidance);
    assert_eq!(flow.cwnd(), 21_000);
    flow
}

/// The two controllers agree on everything Vegas decides and reports.
fn assert_same_as_vegas(rovegas: &Flow, vegas: &Flow, context: &str) {
    let (r, v) = (rovegas.cc.as_ref(), vegas.cc.as_ref());
    assert_eq!(r.cwnd(), v.cwnd(), "cwnd, {context}");
    assert_eq!(r.ssthresh(), v.ssthresh(), "ssthresh, {context}");
    assert_eq!(r.state(), v.state(), "state, {context}");
    assert_eq!(r.pacing(), v.pacing(), "pacing, {context}");
    let (ri, vi) = (rovegas.internals(), vegas.internals());
    for name in [
        "base_rtt_ms",
        "diff_packets",
        "expected_bps",
        "actual_bps",
        "cwnd_packets",
        "round",
        "ss_growth_round",
        "alpha",
        "beta",
        "gamma",
    ] {
        assert_eq!(ri.get(name), vi.get(name), "{name}, {context}");
    }
    assert_eq!(
        ri.get("rtt_minus_qtb_ms"),
        vi.get("round_rtt_ms"),
        "round RTT, {context}"
    );
}

// ---- BaseRTT (the pseudo-code of section 3) ----

#[test]
fn probing_ack_below_base_rtt_sets_it_to_rtt_minus_both_queueing_times() {
    let mut flow = Flow::new(build("rovegas", &[]));
    // 130 ms, of which 20 forward and 15 backward queueing.
    probing_round(&mut flow, 130, Some(20), Some(15));
    let want = base_rtt_temp(130.0, 20.0, 15.0);
    assert_eq!(want, 95.0);
    let internals = flow.internals();
    assert!(near(float(&internals, "base_rtt_ms"), want));
    assert_eq!(text(&flow, "delay_source"), "aqt");
    assert!(near(float(&internals, "qt_forward_ms"), 20.0));
    assert!(near(float(&internals, "qt_backward_ms"), 15.0));
    // A later probing ACK with a smaller baseRTTtemp lowers it again.
    probing_round(&mut flow, 130, Some(30), Some(10));
    let want = base_rtt_temp(130.0, 30.0, 10.0);
    assert!(near(flow.internal("base_rtt_ms").unwrap(), want));
}

#[test]
fn probing_ack_not_below_base_rtt_leaves_it() {
    let mut flow = Flow::new(build("rovegas", &[]));
    probing_round(&mut flow, 130, Some(20), Some(15));
    // baseRTTtemp = 140 - 30 = 110 >= 95. (RTT - QTb alone, 130, is not a
    // sample either.)
    let temp = base_rtt_temp(140.0, 10.0, 20.0);
    assert!(temp >= 95.0);
    probing_round(&mut flow, 140, Some(10), Some(20));
    assert!(near(flow.internal("base_rtt_ms").unwrap(), 95.0));
    assert!(near(flow.internal("qt_backward_ms").unwrap(), 20.0));
}

#[test]
fn non_probing_ack_below_base_rtt_sets_it_to_rtt() {
    let mut flow = Flow::new(build("rovegas", &[]));
    probing_round(&mut flow, 130, Some(20), Some(15));
    flow.round(ms(90));
    assert_eq!(text(&flow, "delay_source"), "none");
    assert!(near(flow.internal("base_rtt_ms").unwrap(), 90.0));
    assert!(near(flow.internal("qt_forward_ms").unwrap(), 0.0));
    assert!(near(flow.internal("qt_backward_ms").unwrap(), 0.0));
}

#[test]
fn non_probing_ack_not_below_base_rtt_leaves_it() {
    let mut flow = Flow::new(build("rovegas", &[]));
    probing_round(&mut flow, 130, Some(20), Some(15));
    flow.round(ms(120));
    assert_eq!(text(&flow, "delay_source"), "none");
    assert!(near(flow.internal("base_rtt_ms").unwrap(), 95.0));
}

#[test]
fn probing_sample_is_the_smallest_over_the_acks_packets() {
    // One ACK for ten packets; packet k echoes k ms of forward queueing.
    let mut flow = Flow::new(build("rovegas", &[]));
    let window = flow.send_window();
    assert_eq!(window.len(), 10);
    flow.ack_with(&window, ms(130), |packets| {
        for p in packets.iter_mut() {
            p.forward_queueing = Some(ms(p.pkt_num));
        }
        FrameExtras {
            ack_delay: Duration::ZERO,
            backward_queueing: Some(ms(5)),
        }
    });
    let want = (0..10)
        .map(|k| base_rtt_temp(130.0, k as f64, 5.0))
        .fold(f64::INFINITY, f64::min);
    assert_eq!(want, 116.0);
    assert!(near(flow.internal("base_rtt_ms").unwrap(), want));
    assert!(near(flow.internal("qt_forward_ms").unwrap(), 9.0));
}

#[test]
fn a_missing_queueing_time_counts_as_zero() {
    // AQT only (no AQT-echo): baseRTTtemp = RTT - AQT.
    let mut flow = Flow::new(build("rovegas", &[]));
    probing_round(&mut flow, 130, None, Some(20));
    assert_eq!(text(&flow, "delay_source"), "aqt");
    assert!(near(
        flow.internal("base_rtt_ms").unwrap(),
        base_rtt_temp(130.0, 0.0, 20.0)
    ));
    // AQT-echo only: baseRTTtemp = RTT - AQT-echo, and actual' = actual.
    let mut flow = Flow::new(build("rovegas", &[]));
    probing_round(&mut flow, 130, Some(25), None);
    assert!(near(
        flow.internal("base_rtt_ms").unwrap(),
        base_rtt_temp(130.0, 25.0, 0.0)
    ));
    assert!(near(flow.internal("qt_backward_ms").unwrap(), 0.0));
    assert!(near(flow.internal("rtt_minus_qtb_ms").unwrap(), 130.0));
}

// ---- Congestion avoidance: eq. (3) on diff with actual' ----

#[test]
fn diff_below_alpha_grows_where_vegas_would_shrink() {
    // 50 ms of backward queueing only: RTT 150, AQT 50.
    let mut rovegas = in_congestion_avoidance("rovegas", &[]);
    let mut vegas = in_congestion_avoidance("vegas", &[]);
    let diff = rovegas_diff(17.5, 100.0, 150.0, 50.0);
    assert!(diff < ALPHA, "{diff}");
    let vegas_diff = rovegas_diff(17.5, 100.0, 150.0, 0.0);
    assert!(vegas_diff > BETA, "{vegas_diff}");
    probing_round(&mut rovegas, 150, Some(0), Some(50));
    probing_round(&mut vegas, 150, Some(0), Some(50));
    assert_eq!(rovegas.cwnd(), eq3_step(21_000, diff));
    assert_eq!(rovegas.cwnd(), 21_000 + MDS);
    assert_eq!(vegas.cwnd(), eq3_step(21_000, vegas_diff));
    assert_eq!(vegas.cwnd(), 21_000 - MDS);
    assert!(near(rovegas.internal("diff_packets").unwrap(), diff));
    assert!(near(rovegas.internal("base_rtt_ms").unwrap(), 100.0));
}

#[test]
fn diff_above_beta_shrinks_on_forward_queueing() {
    // The same 50 ms, but forward: RTT 150, AQT-echo 50.
    let mut flow = in_congestion_avoidance("rovegas", &[]);
    let diff = rovegas_diff(17.5, 100.0, 150.0, 0.0);
    assert!(diff > BETA, "{diff}");
    probing_round(&mut flow, 150, Some(50), Some(0));
    assert_eq!(flow.cwnd(), eq3_step(21_000, diff));
    assert_eq!(flow.cwnd(), 21_000 - MDS);
    assert!(near(flow.internal("diff_packets").unwrap(), diff));
    assert!(near(flow.internal("base_rtt_ms").unwrap(), 100.0));
    assert_eq!(flow.cc.ssthresh(), flow.cwnd());
}

#[test]
fn diff_between_alpha_and_beta_holds() {
    // RTT 160: 50 backward, 10 forward. actual' on 110 ms.
    let mut flow = in_congestion_avoidance("rovegas", &[]);
    let diff = rovegas_diff(17.5, 100.0, 160.0, 50.0);
    assert!((ALPHA..=BETA).contains(&diff), "{diff}");
    probing_round(&mut flow, 160, Some(10), Some(50));
    assert_eq!(flow.cwnd(), 21_000);
    assert!(near(flow.internal("diff_packets").unwrap(), diff));
    assert!(near(flow.internal("rtt_minus_qtb_ms").unwrap(), 110.0));
    // Expected and actual' in bits per second.
    let internals = flow.internals();
    let bits = MDS as f64 * 8.0;
    assert!((float(&internals, "expected_bps") - 17.5 / 0.1 * bits).abs() < 1e-6);
    assert!((float(&internals, "actual_bps") - 17.5 / 0.11 * bits).abs() < 1e-6);
}

// ---- Slow start (Vegas's, on RoVegas's diff) ----

#[test]
fn slow_start_continues_through_backward_queueing() {
    let mut windows = vec![w(100.0, 0.0, 0.0)];
    windows.extend([w(150.0, 0.0, 50.0); 5]);
    let (expected, exit) = slow_start_reference(&windows);
    assert_eq!(exit, None);
    assert_eq!(
        expected.iter().map(|c| c / MDS).collect::<Vec<_>>(),
        vec![10, 20, 20, 40, 40, 80]
    );
    // Vegas, blind to the split, takes the 50 ms for its own queue.
    let blind: Vec<Window> = windows.iter().map(|x| w(x.rtt, 0.0, 0.0)).collect();
    let (vegas_expected, vegas_exit) = slow_start_reference(&blind);
    assert_eq!(vegas_exit, Some(1));

    let mut rovegas = Flow::new(build("rovegas", &[]));
    let mut vegas = Flow::new(build("vegas", &[]));
    for (k, win) in windows.iter().enumerate() {
        let (echo, aqt_ms) = (win.echo as u64, win.aqt as u64);
        probing_round(&mut rovegas, win.rtt as u64, Some(echo), Some(aqt_ms));
        assert_eq!(rovegas.cwnd(), expected[k], "rovegas, window {k}");
        assert_eq!(rovegas.cc.state(), CcState::SlowStart);
        if k < vegas_expected.len() {
            probing_round(&mut vegas, win.rtt as u64, Some(echo), Some(aqt_ms));
            assert_eq!(vegas.cwnd(), vegas_expected[k], "vegas, window {k}");
        }
    }
}

#[test]
fn slow_start_ends_when_diff_exceeds_gamma() {
    // 10 ms of forward queueing from the second window on.
    let windows = [
        w(100.0, 0.0, 0.0),
        w(110.0, 10.0, 0.0),
        w(110.0, 10.0, 0.0),
        w(110.0, 10.0, 0.0),
    ];
    let (expected, exit) = slow_start_reference(&windows);
    assert_eq!(exit, Some(3));
    assert_eq!(*expected.last().unwrap(), cut(20 * MDS, SS_EXIT_FACTOR));
    let mut flow = Flow::new(build("rovegas", &[]));
    for (k, win) in windows.iter().enumerate() {
        probing_round(&mut flow, win.rtt as u64, Some(win.echo as u64), Some(0));
        assert_eq!(flow.cwnd(), expected[k], "window {k}");
    }
    assert_eq!(flow.cc.ssthresh(), 21_000);
    assert_eq!(flow.cc.state(), CcState::Recovery);
    let diff = rovegas_diff(20.0, 100.0, 110.0, 0.0);
    assert!(near(flow.internal("diff_packets").unwrap(), diff));
}

// ---- Losses (Vegas's) ----

#[test]
fn losses_are_handled_as_vegas_does() {
    let mut flow = in_congestion_avoidance("rovegas", &[]);
    let window = flow.send_window();
    flow.advance(ms(120));
    flow.lose(&window[..1], false);
    let after_loss = cut(21_000, LOSS_FACTOR);
    assert_eq!(flow.cwnd(), after_loss);
    assert_eq!(flow.cc.ssthresh(), after_loss);
    assert_eq!(flow.cc.state(), CcState::Recovery);
    // Sent before that decrease: no second cut.
    flow.lose(&window[1..2], false);
    assert_eq!(flow.cwnd(), after_loss);
    flow.ack(&window[2..], ms(110));
    flow.round(ms(110));
    let later = flow.send_window();
    flow.advance(ms(1000));
    flow.lose(&later, true);
    assert_eq!(flow.cwnd(), MINIMUM);
    assert_eq!(flow.cc.ssthresh(), cut(after_loss, TIMEOUT_SSTHRESH_FACTOR));
}

// ---- Sources ----

#[test]
fn without_any_delay_information_rovegas_is_vegas() {
    let mut rovegas = Flow::new(build("rovegas", &[])).with_acks_per_window(3);
    let mut vegas = Flow::new(build("vegas", &[])).with_acks_per_window(3);
    let rtts = [100, 100, 104, 110, 120, 110, 100, 95, 130, 130, 96, 96, 96];
    for (k, rtt) in rtts.iter().enumerate() {
        rovegas.round(ms(*rtt));
        vegas.round(ms(*rtt));
        assert_same_as_vegas(&rovegas, &vegas, &format!("round {k}"));
        assert_eq!(text(&rovegas, "delay_source"), "none");
    }
    for flow in [&mut rovegas, &mut vegas] {
        let window = flow.send_window();
        flow.advance(ms(50));
        flow.lose(&window[..2], false);
        flow.ack(&window[2..], ms(100));
        flow.app_limited = true;
        flow.round(ms(97));
        flow.app_limited = false;
        flow.round(ms(97));
    }
    assert_same_as_vegas(&rovegas, &vegas, "after a loss");
    let (cwnd, ssthresh) = (rovegas.cwnd() * 2, rovegas.cc.ssthresh() * 2);
    assert_eq!(
        rovegas.cc.on_spurious_loss(cwnd, ssthresh),
        vegas.cc.on_spurious_loss(cwnd, ssthresh)
    );
    assert_same_as_vegas(&rovegas, &vegas, "after a spurious loss");
    for flow in [&mut rovegas, &mut vegas] {
        let window = flow.send_window();
        flow.advance(ms(2000));
        flow.lose(&window, true);
        flow.cc.on_max_datagram_size(1400);
        flow.rounds(&[ms(100), ms(100), ms(100)]);
    }
    assert_same_as_vegas(&rovegas, &vegas, "after persistent congestion");
}

#[test]
fn delay_source_none_ignores_the_extension() {
    let mut rovegas = Flow::new(build("rovegas", &["delay_source=none"]));
    let mut vegas = Flow::new(build("vegas", &[]));
    for (k, (rtt, echo, aqt_ms)) in [(100, 0, 0), (150, 10, 40), (150, 10, 40), (150, 10, 40)]
        .into_iter()
        .enumerate()
    {
        probing_round(&mut rovegas, rtt, Some(echo), Some(aqt_ms));
        probing_round(&mut vegas, rtt, Some(echo), Some(aqt_ms));
        assert_same_as_vegas(&rovegas, &vegas, &format!("round {k}"));
        assert_eq!(text(&rovegas, "delay_source"), "none");
    }
}

/// Fixed one-way delays, an ACK delay, and a peer whose clock reads
/// `offset + (1 + drift) × (t − start)`. Queueing is injected per round.
#[derive(Clone, Copy, Debug)]
struct TimestampPath {
    start: Instant,
    forward: Duration,
    backward: Duration,
    ack_delay: Duration,
    offset: Duration,
    drift: f64,
}

impl TimestampPath {
    fn new(
        start: Instant,
        forward_ms: u64,
        backward_ms: u64,
        offset: Duration,
        drift: f64,
    ) -> Self {
        TimestampPath {
            start,
            forward: ms(forward_ms),
            backward: ms(backward_ms),
            ack_delay: ms(2),
            offset,
            drift,
        }
    }

    fn peer_clock(&self, t: Instant) -> Duration {
        let since = t.saturating_duration_since(self.start).as_secs_f64();
        self.offset + Duration::from_secs_f64(since * (1.0 + self.drift))
    }

    /// RTT of a packet that queues `qf` forward and whose ACK queues `qb`.
    fn rtt(&self, qf: Duration, qb: Duration) -> Duration {
        self.forward + qf + self.ack_delay + self.backward + qb
    }

    /// The peer's receive timestamps for packets that queue `qf` forward,
    /// and its ACK delay. (The backward queueing is in the RTT.)
    fn extras(self, qf: Duration) -> impl FnMut(&mut [AckedPacket]) -> FrameExtras {
        move |packets| {
            for p in packets.iter_mut() {
                p.receive_time = Some(self.peer_clock(p.time_sent + self.forward + qf));
            }
            FrameExtras {
                ack_delay: self.ack_delay,
                backward_queueing: None,
            }
        }
    }

    fn round(&self, flow: &mut Flow, qf_ms: u64, qb_ms: u64) {
        let (qf, qb) = (ms(qf_ms), ms(qb_ms));
        flow.round_with(self.rtt(qf, qb), self.extras(qf));
    }
}

#[test]
fn receive_timestamps_split_the_queueing_despite_a_clock_offset() {
    // A GEO hop each way; the peer's clock is 5000 s ahead and 20 ppm fast.
    let mut rovegas = Flow::new(build("rovegas", &[]));
    let mut vegas = Flow::new(build("vegas", &[]));
    let path = TimestampPath::new(rovegas.start, 270, 280, Duration::from_secs(5000), 20e-6);
    let vegas_path = TimestampPath {
        start: vegas.start,
        ..path
    };
    for _ in 0..2 {
        path.round(&mut rovegas, 0, 0);
        vegas_path.round(&mut vegas, 0, 0);
    }
    assert_eq!(text(&rovegas, "delay_source"), "receive_timestamps");
    assert_eq!(rovegas.internal("qt_backward_ms"), Some(0.0));
    assert!(near(rovegas.internal("base_rtt_ms").unwrap(), 552.0));

    // 40 ms of backward queueing from now on. The estimate lags the truth
    // by at most the floor's rise: 100 ppm x a few seconds, well below 1 ms.
    for k in 0..4 {
        path.round(&mut rovegas, 0, 40);
        vegas_path.round(&mut vegas, 0, 40);
        let qb = rovegas.internal("qt_backward_ms").unwrap();
        let qf = rovegas.internal("qt_forward_ms").unwrap();
        assert!((qb - 40.0).abs() < 1.0, "round {k}: QTb {qb}");
        assert!(qf.abs() < 1.0, "round {k}: QTf {qf}");
        // RoVegas's diff is about zero; Vegas's is that of a 40 ms queue.
        let diff = rovegas.internal("diff_packets").unwrap();
        let reference = rovegas_diff(rovegas.cwnd_packets(), 552.0, 592.0, qb);
        assert!((diff - reference).abs() < 0.05, "{diff} vs {reference}");
    }
    assert_eq!(rovegas.cc.state(), CcState::SlowStart);
    assert_eq!(rovegas.cwnd(), 80 * MDS, "10, 20, 20, 40, 40, 80");
    assert_ne!(
        vegas.cc.state(),
        CcState::SlowStart,
        "Vegas left slow start"
    );
    assert!(vegas.cwnd() < rovegas.cwnd());

    // Now 30 ms forward instead: QTf follows, QTb returns to zero, and the
    // forward queue ends slow start as it would for Vegas.
    path.round(&mut rovegas, 30, 0);
    let qf = rovegas.internal("qt_forward_ms").unwrap();
    let qb = rovegas.internal("qt_backward_ms").unwrap();
    assert!((qf - 30.0).abs() < 1.0, "QTf {qf}");
    assert!(qb.abs() < 1e-9, "QTb {qb}");
    path.round(&mut rovegas, 30, 0);
    assert!(rovegas.cwnd() < 160 * MDS);
    assert_eq!(rovegas.cc.state(), CcState::Recovery);
    assert_eq!(rovegas.internal("queueing_rejects"), Some(0.0));
}

#[test]
fn receive_timestamps_track_a_clock_drift_over_a_long_transfer() {
    // The peer's clock runs 50 ppm fast. For ten minutes of rounds, every
    // tenth round is free of queue; the others queue 20 ms forward and 30 ms
    // backward. Over the transfer the drift adds up to tens of ms, which a
    // plain minimum would take for forward queueing.
    let drift = 50e-6;
    let mut tracked = Flow::new(build("rovegas", &[]));
    let mut plain = Flow::new(build("rovegas", &["clock_drift_ppm=0"]));
    let path = TimestampPath::new(tracked.start, 270, 280, Duration::from_secs(1), drift);
    let plain_path = TimestampPath {
        start: plain.start,
        ..path
    };
    let rounds = 1000;
    let mut worst = 0.0f64;
    for k in 0..rounds {
        let (qf, qb) = if k % 10 == 0 { (0, 0) } else { (20, 30) };
        path.round(&mut tracked, qf, qb);
        plain_path.round(&mut plain, qf, qb);
        if qf > 0 {
            let got_f = tracked.internal("qt_forward_ms").unwrap();
            let got_b = tracked.internal("qt_backward_ms").unwrap();
            worst = worst.max((got_f - 20.0).abs()).max((got_b - 30.0).abs());
        }
    }
    let elapsed = tracked.now.duration_since(tracked.start).as_secs_f64();
    assert!(elapsed > 550.0, "{elapsed} s");
    let accumulated_ms = drift * elapsed * 1e3;
    assert!(accumulated_ms > 25.0, "{accumulated_ms} ms of drift");
    // At most (100 + 50) ppm over the ~5.5 s since a queue-free round.
    assert!(worst < 1.0, "worst error {worst} ms");
    assert_eq!(text(&tracked, "delay_source"), "receive_timestamps");
    // Without the rising minimum, QTf is off by much more (the estimator's
    // joint bound keeps QTf + QTb within the 50 ms the RTT exceeds its
    // minimum, so the error is shared with QTb).
    let plain_f = plain.internal("qt_forward_ms").unwrap();
    assert!((plain_f - 20.0).abs() > 5.0, "plain QTf {plain_f}");
    for flow in [&tracked, &plain] {
        assert_eq!(flow.internal("queueing_rejects"), Some(0.0));
    }
}

#[test]
fn aqt_takes_precedence_over_receive_timestamps() {
    let mut flow = Flow::new(build("rovegas", &[]));
    let path = TimestampPath::new(flow.start, 48, 50, Duration::from_secs(7), 0.0);
    path.round(&mut flow, 0, 0);
    // Timestamps say 10 ms backward; AQT says 25 ms backward, 5 forward.
    let mut timestamps = path.extras(Duration::ZERO);
    flow.round_with(path.rtt(ms(0), ms(10)), |packets| {
        timestamps(packets);
        for p in packets.iter_mut() {
            p.forward_queueing = Some(ms(5));
        }
        FrameExtras {
            ack_delay: path.ack_delay,
            backward_queueing: Some(ms(25)),
        }
    });
    assert_eq!(text(&flow, "delay_source"), "aqt");
    assert!(near(flow.internal("qt_backward_ms").unwrap(), 25.0));
    assert!(near(flow.internal("qt_forward_ms").unwrap(), 5.0));
    // Without AQT, the timestamps are used.
    path.round(&mut flow, 0, 10);
    assert_eq!(text(&flow, "delay_source"), "receive_timestamps");
    let qb = flow.internal("qt_backward_ms").unwrap();
    assert!((qb - 10.0).abs() < 0.1, "{qb}");
}

#[test]
fn a_source_that_is_not_allowed_is_not_used() {
    // delay_source=aqt: receive timestamps alone give `none`, i.e. Vegas.
    let mut rovegas = Flow::new(build("rovegas", &["delay_source=aqt"]));
    let mut vegas = Flow::new(build("vegas", &[]));
    let path = TimestampPath::new(rovegas.start, 48, 50, Duration::from_secs(7), 0.0);
    for (qf, qb) in [(0, 0), (0, 40), (0, 40), (0, 40)] {
        path.round(&mut rovegas, qf, qb);
        path.round(&mut vegas, qf, qb);
        assert_same_as_vegas(&rovegas, &vegas, "aqt only");
        assert_eq!(text(&rovegas, "delay_source"), "none");
    }
    // delay_source=receive_timestamps: AQT is ignored.
    let mut flow = Flow::new(build("rovegas", &["delay_source=receive_timestamps"]));
    probing_round(&mut flow, 130, Some(20), Some(15));
    assert_eq!(text(&flow, "delay_source"), "none");
    assert!(near(flow.internal("base_rtt_ms").unwrap(), 130.0));
}

// ---- Hostile values ----

#[test]
fn impossible_aqt_values_are_ignored() {
    let mut rovegas = Flow::new(build("rovegas", &[]));
    let mut vegas = Flow::new(build("vegas", &[]));
    // AQT as long as the RTT, then AQT-echo of Duration::MAX: no usable
    // value, so both ACKs are non-probing.
    rovegas.round_with(ms(100), aqt(None, Some(100)));
    vegas.round(ms(100));
    assert_same_as_vegas(&rovegas, &vegas, "AQT = RTT");
    assert_eq!(text(&rovegas, "delay_source"), "none");
    let echoes = rovegas.round_with(ms(100), |packets| {
        for p in packets.iter_mut() {
            p.forward_queueing = Some(Duration::MAX);
        }
        FrameExtras {
            ack_delay: Duration::MAX,
            backward_queueing: Some(Duration::MAX),
        }
    });
    vegas.round(ms(100));
    assert_same_as_vegas(&rovegas, &vegas, "Duration::MAX");
    let rejects = rovegas.internal("queueing_rejects").unwrap();
    assert_eq!(echoes, 10);
    assert_eq!(
        rejects,
        1.0 + 1.0 + 10.0,
        "one AQT, then one AQT and 10 echoes"
    );
    // AQT possible, AQT-echo + AQT not: the echo is dropped, AQT kept.
    probing_round(&mut rovegas, 100, Some(60), Some(50));
    assert_eq!(text(&rovegas, "delay_source"), "aqt");
    assert!(near(rovegas.internal("qt_backward_ms").unwrap(), 50.0));
    assert!(near(rovegas.internal("qt_forward_ms").unwrap(), 0.0));
    assert!(near(rovegas.internal("base_rtt_ms").unwrap(), 50.0));
}

/// The receive times of `packets` judged as the host judges them: a
/// refused one is removed, a believed one carries its clock's number.
fn judge_stamps(judge: &mut HostClock, packets: &mut [AckedPacket]) {
    judge.on_ack_frame();
    for p in packets.iter_mut() {
        if let Some(received) = p.receive_time {
            let verdict = judge.judge(received, p.time_sent, p.rtt);
            p.receive_time = verdict.map(|_| received);
            p.clock_epoch = verdict.unwrap_or(0);
        }
    }
}

#[test]
fn hostile_receive_timestamps_do_not_disturb_the_controller() {
    // No queueing at all, so whatever RoVegas makes of the timestamps it
    // must act as Vegas. The path's extra 10 ms from the second round on is
    // forward queueing (it ends slow start, as for Vegas). The stamps are
    // judged by the host's clock judge first, as the stack does.
    let mut rovegas = Flow::new(build("rovegas", &[]));
    let mut vegas = Flow::new(build("vegas", &[]));
    let mut path = TimestampPath::new(rovegas.start, 48, 50, Duration::from_secs(10_000), 0.0);
    let mut judge = HostClock::default();
    fn round(
        rovegas: &mut Flow,
        vegas: &mut Flow,
        path: &TimestampPath,
        judge: &mut HostClock,
        qf: u64,
        k: usize,
    ) {
        let mut extras = path.extras(ms(qf));
        rovegas.round_with(path.rtt(ms(qf), Duration::ZERO), |packets| {
            let frame = extras(packets);
            judge_stamps(judge, packets);
            frame
        });
        vegas.round(path.rtt(ms(qf), Duration::ZERO));
        assert_same_as_vegas(rovegas, vegas, &format!("round {k}"));
    }
    let mut k = 0;
    round(&mut rovegas, &mut vegas, &path, &mut judge, 0, k);
    for _ in 0..5 {
        k += 1;
        round(&mut rovegas, &mut vegas, &path, &mut judge, 10, k);
    }
    // One ACK whose receive times are all zero: before the floor and going
    // backwards. Refused by the judge, nothing else changes.
    rovegas.round_with(path.rtt(ms(10), Duration::ZERO), |packets| {
        for p in packets.iter_mut() {
            p.receive_time = Some(Duration::ZERO);
        }
        judge_stamps(&mut judge, packets);
        FrameExtras {
            ack_delay: path.ack_delay,
            backward_queueing: None,
        }
    });
    vegas.round(path.rtt(ms(10), Duration::ZERO));
    assert_same_as_vegas(&rovegas, &vegas, "zero receive times");
    assert_eq!(text(&rovegas, "delay_source"), "none");
    assert!(judge.counts().refused > 0);
    assert_eq!(judge.counts().steps, 0);
    // The peer's clock steps back an hour, later forward two hours: each
    // time, the judge refuses the stamps until it believes the new clock,
    // and the estimator starts over on it.
    path.offset -= Duration::from_secs(3600);
    for _ in 0..12 {
        k += 1;
        round(&mut rovegas, &mut vegas, &path, &mut judge, 10, k);
    }
    assert_eq!(rovegas.internal("estimator_resyncs"), Some(1.0));
    assert_eq!(text(&rovegas, "delay_source"), "receive_timestamps");
    path.offset += Duration::from_secs(7200);
    for _ in 0..12 {
        k += 1;
        round(&mut rovegas, &mut vegas, &path, &mut judge, 10, k);
    }
    assert_eq!(rovegas.internal("estimator_resyncs"), Some(2.0));
    assert_eq!(judge.counts().steps, 2);
    // An ACK delay longer than the RTT: rejected.
    rovegas.round_with(path.rtt(ms(10), Duration::ZERO), |packets| {
        let mut timestamps = path.extras(ms(10));
        timestamps(packets);
        judge_stamps(&mut judge, packets);
        FrameExtras {
            ack_delay: Duration::MAX,
            backward_queueing: None,
        }
    });
    vegas.round(path.rtt(ms(10), Duration::ZERO));
    assert_same_as_vegas(&rovegas, &vegas, "ACK delay Duration::MAX");
    assert_eq!(rovegas.cc.state(), CcState::CongestionAvoidance);
}

// ---- Internals, parameters, registration ----

#[test]
fn internals_report_source_queueing_times_and_vegas_values() {
    let mut flow = in_congestion_avoidance("rovegas", &[]);
    probing_round(&mut flow, 160, Some(10), Some(50));
    let internals = flow.internals();
    assert_eq!(
        internals.get("delay_source"),
        Some(InternalValue::Text("aqt"))
    );
    for (name, want) in [
        ("qt_forward_ms", 10.0),
        ("qt_backward_ms", 50.0),
        ("base_rtt_ms", 100.0),
        ("alpha", ALPHA),
        ("beta", BETA),
        ("gamma", GAMMA),
        ("rtt_minus_qtb_ms", 110.0),
        ("diff_packets", rovegas_diff(17.5, 100.0, 160.0, 50.0)),
    ] {
        assert!(near(float(&internals, name), want), "{name}");
    }
    assert_eq!(internals.get("flavour"), None);
    assert_eq!(internals.get("round_rtt_ms"), None);
    assert_eq!(
        internals.get("queueing_rejects"),
        Some(InternalValue::Int(0))
    );
    assert_eq!(flow.cc.name(), "rovegas");
    let before = Flow::new(build("rovegas", &[]));
    assert_eq!(text(&before, "delay_source"), "none");
}

/// Whether qlog shows an ACK's QTf or QTb anew between decided points,
/// from the rule of the module documentation: it moved from the value
/// shown by more than 10 % of that and more than 1 ms.
fn moved_enough(now_ms: f64, shown_ms: f64) -> bool {
    (now_ms - shown_ms).abs() > (shown_ms / 10.0).max(1.0)
}

#[test]
fn qlog_shows_queueing_times_at_decided_points_and_large_moves() {
    let mut flow = Flow::new(build("rovegas", &[]));
    // BaseRTT 100 ms from a queue-free probing round.
    probing_round(&mut flow, 100, Some(0), Some(0));
    // Then one packet per ACK frame, each with its own RTT, AQT-echo and
    // AQT (µs). In the first seven: small moves (frames 1, 3, 5), a QTf
    // move of 4 ms > 10 % of 30 (2), a QTb move from 12 to 0.5 ms (4), and
    // BaseRTT lowered by a probe whose moves alone are small (6: 137 - 37 -
    // 0.9 = 99.1 < 100; every other probe is above 100). Then small moves
    // only, across round ends, and last the source turned to none.
    let designed: [(u64, Option<(u64, u64)>); 7] = [
        (160_000, Some((30_000, 12_000))),
        (160_000, Some((31_000, 12_500))),
        (160_000, Some((34_000, 12_000))),
        (160_000, Some((34_500, 12_900))),
        (160_000, Some((34_500, 500))),
        (160_000, Some((34_200, 900))),
        (137_000, Some((37_000, 900))),
    ];
    let small_moves = (0..60u64).map(|k| {
        // A distinct RTT per frame, so that each round's RTT differs.
        (
            160_000 + 10 * k,
            Some((37_000 + 100 * (k % 3), 900 + 50 * (k % 2))),
        )
    });
    let frames: Vec<(u64, Option<(u64, u64)>)> = designed
        .into_iter()
        .chain(small_moves)
        .chain([(160_000, None)])
        .collect();
    let mut shown = ("aqt", 0.0, 0.0);
    let (mut hidden, mut shown_at_round_end_only) = (Vec::new(), 0);
    for (k, (rtt_us, queueing)) in frames.into_iter().enumerate() {
        if flow.in_flight().is_empty() {
            flow.send_window();
        }
        let packet = flow.in_flight()[0];
        let round_rtt_before = flow.internal("rtt_minus_qtb_ms");
        let base_before = flow.internal("base_rtt_ms");
        flow.ack_with(&[packet], micros(rtt_us), |acked| {
            for p in acked.iter_mut() {
                p.forward_queueing = queueing.map(|(qf, _)| micros(qf));
            }
            FrameExtras {
                ack_delay: Duration::ZERO,
                backward_queueing: queueing.map(|(_, qb)| micros(qb)),
            }
        });
        let applied = match queueing {
            Some((qf, qb)) => ("aqt", qf as f64 / 1e3, qb as f64 / 1e3),
            None => ("none", 0.0, 0.0),
        };
        // Decided points: a round ended (a new round RTT) or BaseRTT moved.
        let round_ended = flow.internal("rtt_minus_qtb_ms") != round_rtt_before;
        let decided_point = round_ended || flow.internal("base_rtt_ms") != base_before;
        let moved = applied.0 != shown.0
            || moved_enough(applied.1, shown.1)
            || moved_enough(applied.2, shown.2);
        if decided_point || moved {
            shown_at_round_end_only += usize::from(round_ended && !moved);
            shown = applied;
        } else {
            hidden.push(k);
        }
        let internals = flow.internals();
        assert_eq!(
            internals.get("delay_source"),
            Some(InternalValue::Text(shown.0)),
            "frame {k}"
        );
        assert!(
            near(float(&internals, "qt_forward_ms"), shown.1),
            "frame {k}"
        );
        assert!(
            near(float(&internals, "qt_backward_ms"), shown.2),
            "frame {k}"
        );
    }
    assert_eq!(hidden[..3], [1, 3, 5]);
    assert!(hidden.len() > 20, "{hidden:?}");
    assert!(shown_at_round_end_only >= 2, "{shown_at_round_end_only}");
    assert!(near(
        flow.internal("base_rtt_ms").unwrap(),
        137.0 - 37.0 - 0.9
    ));
}

#[test]
fn registered_with_the_papers_defaults() {
    assert!(all_names().contains(&"rovegas"));
    let spec = ControllerSpec::new("rovegas").unwrap();
    let params = spec.params();
    assert_eq!(params.number("alpha"), Some(1.0));
    assert_eq!(params.number("beta"), Some(3.0));
    assert_eq!(params.number("gamma"), Some(1.0));
    assert_eq!(params.word("delay_source"), Some("auto"));
    assert_eq!(params.number("clock_drift_ppm"), Some(100.0));
    assert_eq!(params.word("spike_suppression"), Some("on"));
    assert!(ControllerSpec::with_params("rovegas", &["alpha=2", "beta=4"]).is_ok());
    let err = ControllerSpec::with_params("rovegas", &["alpha=4", "beta=3"]).unwrap_err();
    assert!(err.to_string().contains("alpha"), "{err}");
    assert!(ControllerSpec::with_params("rovegas", &["delay_source=router"]).is_err());
    assert!(ControllerSpec::with_params("rovegas", &["clock_drift_ppm=-1"]).is_err());
    // alpha and beta are the ones eq. (3) uses.
    let mut flow = in_congestion_avoidance("rovegas", &["alpha=2", "beta=4"]);
    let diff = rovegas_diff(17.5, 100.0, 160.0, 50.0);
    assert!(diff < 2.0);
    probing_round(&mut flow, 160, Some(10), Some(50));
    assert_eq!(flow.cwnd(), 21_000 + MDS);
}

// ---- Robustness ----

#[derive(Clone, Debug)]
struct Extension {
    echo_us: Option<u64>,
    aqt_us: Option<u64>,
    receive_us: Option<u64>,
    ack_delay_us: u64,
}

#[derive(Clone, Debug)]
enum Op {
    Common(random_events::Op),
    /// An ACK whose frames carry `ext`'s extension values.
    AckWithExtensions {
        packets: usize,
        rtt_us: u64,
        app_limited: bool,
        ext: Extension,
    },
    Hostile,
}

fn micros(v: u64) -> Duration {
    if v == u64::MAX {
        Duration::MAX
    } else {
        Duration::from_micros(v)
    }
}

fn value() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        Just(None),
        (0u64..200_000).prop_map(Some),
        Just(Some(u64::MAX)),
        any::<u64>().prop_map(Some),
    ]
}

fn extension() -> impl Strategy<Value = Extension> {
    (
        value(),
        value(),
        value(),
        prop_oneof![0u64..50_000, Just(u64::MAX)],
    )
        .prop_map(|(echo_us, aqt_us, receive_us, ack_delay_us)| Extension {
            echo_us,
            aqt_us,
            receive_us,
            ack_delay_us,
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => random_events::op().prop_map(Op::Common),
        6 => (0usize..40, prop_oneof![Just(0u64), 0u64..5_000_000], any::<bool>(), extension())
            .prop_map(|(packets, rtt_us, app_limited, ext)| Op::AckWithExtensions { packets, rtt_us, app_limited, ext }),
        1 => Just(Op::Hostile),
    ]
}

fn params() -> impl Strategy<Value = Vec<&'static str>> {
    prop_oneof![
        Just(vec![]),
        Just(vec!["spike_suppression=on"]),
        Just(vec!["clock_drift_ppm=0"]),
        Just(vec!["clock_drift_ppm=10000"]),
        Just(vec![
            "alpha=0",
            "beta=0",
            "gamma=0",
            "loss_factor=0",
            "ss_exit_factor=0"
        ]),
        Just(vec![
            "alpha=1000",
            "beta=1000",
            "gamma=1000",
            "min_rtt_samples=1000"
        ]),
    ]
}

/// Applies `op` to `flow`; `max_datagram_size` tracks the size the
/// controller was last told. Without extensions, ACKs carry none.
fn apply(flow: &mut Flow, op: &Op, max_datagram_size: &mut usize, with_extensions: bool) {
    match op {
        Op::Common(op) => random_events::apply(flow, op, max_datagram_size),
        Op::AckWithExtensions {
            packets,
            rtt_us,
            app_limited,
            ext,
        } => {
            let chosen: Vec<PacketSent> = flow.in_flight().iter().take(*packets).copied().collect();
            flow.app_limited = *app_limited;
            let ext = ext.clone();
            flow.ack_with(&chosen, Duration::from_micros(*rtt_us), |packets| {
                if !with_extensions {
                    return FrameExtras::default();
                }
                for (i, p) in packets.iter_mut().enumerate() {
                    p.forward_queueing = ext.echo_us.map(micros);
                    p.receive_time = ext
                        .receive_us
                        .map(|r| micros(r.saturating_add(i as u64 * 100)));
                }
                FrameExtras {
                    ack_delay: micros(ext.ack_delay_us),
                    backward_queueing: ext.aqt_us.map(micros),
                }
            });
        }
        Op::Hostile => {
            // A packet "sent" after it was acknowledged, every extension
            // value at its extreme.
            let mut packet = random_events::malformed_packet(flow.now);
            if with_extensions {
                packet.receive_time = Some(Duration::MAX);
                packet.forward_queueing = Some(Duration::MAX);
            }
            random_events::deliver_malformed(
                flow,
                packet,
                with_extensions.then_some(Duration::MAX),
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_events_keep_the_window_sane(
        pairs in params(),
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut flow = Flow::new(build("rovegas", &pairs));
        let mut max_datagram_size = MDS;
        for op in &ops {
            apply(&mut flow, op, &mut max_datagram_size, true);
            check_invariants(flow.cc.as_ref());
        }
    }

    #[test]
    fn random_events_without_extensions_match_vegas(
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut rovegas = Flow::new(build("rovegas", &[]));
        let mut vegas = Flow::new(build("vegas", &[]));
        let (mut rovegas_datagram_size, mut vegas_datagram_size) = (MDS, MDS);
        for (k, op) in ops.iter().enumerate() {
            apply(&mut rovegas, op, &mut rovegas_datagram_size, false);
            apply(&mut vegas, op, &mut vegas_datagram_size, false);
            assert_same_as_vegas(&rovegas, &vegas, &format!("op {k}: {op:?}"));
        }
    }
}

/// A probing ACK of a small packet gives no baseRTTtemp: as in Vegas, only
/// full-size packets' RTTs are samples of the path (a 60-byte packet crosses
/// the bottleneck faster and would read baseRTT low).
#[test]
fn probing_sample_ignores_small_packets() {
    let mut cc = build("rovegas", &[]);
    let t0 = std::time::Instant::now();
    for (n, size) in [(0u64, 60usize), (1, MDS)] {
        cc.on_packet_sent(&vegas_cc::PacketSent {
            pkt_num: n,
            size,
            time_sent: t0,
            bytes_in_flight: 0,
        });
    }
    for (n, size, rtt) in [(0u64, 60usize, 93u64), (1, MDS, 100)] {
        let mut packet = vegas_cc::AckedPacket::new(n, size, t0, t0 + ms(rtt));
        packet.forward_queueing = Some(Duration::ZERO);
        cc.on_ack(&vegas_cc::AckEvent {
            now: t0 + ms(rtt),
            acked: &[packet],
            summary: vegas_cc::AckSummary::of(&[packet], 0),
            ack_delay: Duration::ZERO,
            rtt: vegas_cc::RttSnapshot::uniform(ms(rtt)),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: Some(Duration::ZERO),
        });
    }
    let mut internals = vegas_cc::Internals::default();
    cc.internals(&mut internals);
    assert_eq!(
        internals.get("base_rtt_ms"),
        Some(vegas_cc::InternalValue::Float(100.0))
    );
}

/// `round_rtt=mean` (ns-2's reading, module documentation): the round's
/// RTT − QTb is the mean of its ACKs' samples, each the ACK's smallest RTT
/// minus that ACK's own QTb. Four ACKs a round with QTb 10, 20, 30 and
/// 40 ms on a 200 ms round trip: whichever four consecutive ACKs a round
/// holds, the reference mean is 200 − 25 = 175 ms (the distinguished
/// packet's alone would be 190 or 160, the uncorrected RTT 200). The
/// events carry the host's summary (RTT samples from full-size packets),
/// as the stack builds them: the skeleton's adjusted summary is read then.
#[test]
fn round_rtt_mean_averages_each_acks_rtt_minus_its_qtb() {
    use vegas_cc::shared::round_clock::full_size_floor;
    use vegas_cc::{AckEvent, AckSummary, RttSnapshot};
    let mut cc = build("rovegas", &["round_rtt=mean"]);
    let full_size = full_size_floor(MDS);
    let queued = [10u64, 20, 30, 40];
    let want = 200.0 - queued.iter().sum::<u64>() as f64 / queued.len() as f64;
    let mut now = Instant::now();
    let mut next = 0u64;
    for _ in 0..4 {
        let window = cc.cwnd() / MDS;
        let sent: Vec<PacketSent> = (0..window)
            .map(|i| {
                let p = PacketSent {
                    pkt_num: next,
                    size: MDS,
                    time_sent: now,
                    bytes_in_flight: i * MDS,
                };
                next += 1;
                cc.on_packet_sent(&p);
                p
            })
            .collect();
        let arrival = now + ms(200);
        let mut in_flight = window * MDS;
        for (chunk, qb) in sent.chunks(window.div_ceil(queued.len())).zip(queued) {
            let acked: Vec<AckedPacket> = chunk
                .iter()
                .map(|p| AckedPacket::new(p.pkt_num, p.size, p.time_sent, arrival))
                .collect();
            cc.on_ack(&AckEvent {
                now: arrival,
                acked: &acked,
                summary: AckSummary::of(&acked, full_size),
                ack_delay: Duration::ZERO,
                rtt: RttSnapshot::uniform(ms(200)),
                bytes_in_flight: in_flight,
                app_limited: false,
                backward_queueing: Some(ms(qb)),
            });
            in_flight -= chunk.len() * MDS;
        }
        now = arrival;
    }
    let mut internals = Internals::default();
    cc.internals(&mut internals);
    assert_eq!(
        internals.get("rtt_minus_qtb_ms"),
        Some(InternalValue::Float(want))
    );
}

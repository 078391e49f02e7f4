//! Vegas-W (003_5b3b63821b3b4570.txt, section IV), driven window by window
//! with hand-built events. Each test takes one branch of the paper's
//! mechanism and checks cwnd and ssthresh against values computed here: the
//! bandwidth estimate from eqs. 2-5 written out again in this file, Diff from
//! Vegas's formula, the route-change mean from the RTTs the test itself fed
//! in — never read back from the controller under test.

mod common;

use std::time::{Duration, Instant};

use common::random_events::{self, check_invariants};
use common::{build, ms, Flow, INITIAL_WINDOW_PACKETS, MDS, WINDOW};
use proptest::prelude::*;
use vegas_cc::registry::all_names;
use vegas_cc::vegas_w::VegasW;
use vegas_cc::{
    AckEvent, AckSummary, AckedPacket, CcState, CongestionController, CongestionEvent,
    ControllerSpec, InternalValue, Internals, PacketSent, RttSnapshot, MINIMUM_WINDOW_PACKETS,
};

/// The paper's constants and the file's documented choices, written out.
const ALPHA: f64 = 1.0;
const BETA: f64 = 3.0;
const GAMMA: f64 = 1.0;
const TAU_SECS: f64 = 0.5;
const M: usize = 20;
const N: f64 = 2.0;
const SS_EXIT_FACTOR: f64 = 7.0 / 8.0;
const MINIMUM: usize = MINIMUM_WINDOW_PACKETS * MDS;

// ---- Independent reference computations ----

/// Section III.B, written out: one sample per ACK, b_k = d_k / (t_k −
/// t_{k−1}) (eq. 2), filtered by b̂_k = α b̂_{k−1} + (1 − α)(b_k + b_{k−1})/2
/// with α = (2τ/Δ_k − 1)/(2τ/Δ_k + 1) (eqs. 3-5). The first ACK only starts
/// the clock and the first sample starts the filter; ACKs at the same instant
/// count together in the next sample. Times are seconds since the flow began.
#[derive(Clone, Debug)]
struct TustinReference {
    last_ack: Option<f64>,
    bytes: f64,
    estimate: Option<f64>,
    previous_sample: f64,
}

impl TustinReference {
    fn new() -> Self {
        TustinReference {
            last_ack: None,
            bytes: 0.0,
            estimate: None,
            previous_sample: 0.0,
        }
    }

    fn on_ack(&mut self, at: f64, bytes: usize) {
        let Some(last) = self.last_ack else {
            self.last_ack = Some(at);
            return;
        };
        self.bytes += bytes as f64;
        let delta = at - last;
        if delta <= 0.0 {
            return;
        }
        let sample = self.bytes / delta;
        self.bytes = 0.0;
        self.last_ack = Some(at);
        self.estimate = Some(match self.estimate {
            None => sample,
            Some(old) => {
                let ratio = 2.0 * TAU_SECS / delta;
                // Beyond 2τ eq. 4 turns negative; the filter clamps α at 0
                // (its documented choice). Only gaps after a timeout get there.
                let alpha = ((ratio - 1.0) / (ratio + 1.0)).max(0.0);
                alpha * old + (1.0 - alpha) * (sample + self.previous_sample) / 2.0
            }
        });
        self.previous_sample = sample;
    }
}

/// Vegas's Diff = (Expected − Actual) × BaseRTT, in packets.
fn paper_diff(window_packets: f64, base_rtt: f64, rtt: f64) -> f64 {
    (window_packets / base_rtt - window_packets / rtt) * base_rtt
}

/// Eq. 1 for one RTT, in bytes.
fn ca_step(cwnd: usize, diff: f64) -> usize {
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

/// IV.C's ssthresh = b̂ × RTTmin in bytes, at least the minimum window.
fn bdp_ssthresh(bwe: f64, rtt_min: f64) -> usize {
    ((bwe * rtt_min).round() as usize).max(MINIMUM)
}

/// How the packets of one window are acknowledged.
#[derive(Clone, Copy, Debug)]
enum Acking {
    /// One ACK frame for the whole window, `rtt` after it was sent.
    Single,
    /// One frame per packet: packet i arrives `rtt + i × spacing` after it
    /// was sent, as a bottleneck spreads a burst.
    Spread(Duration),
}

fn frames(packets: usize, rtt: Duration, acking: Acking) -> Vec<(Duration, usize)> {
    match acking {
        Acking::Single => vec![(rtt, packets)],
        Acking::Spread(spacing) => (0..packets)
            .map(|i| (rtt + spacing * i as u32, 1))
            .collect(),
    }
}

#[derive(Debug, PartialEq)]
struct SlowStartOutcome {
    /// cwnd after each window.
    cwnd_after: Vec<usize>,
    /// The window whose first ACK ended slow start.
    exit: Option<usize>,
    /// Times Diff exceeded gamma and slow start went on (IV.A).
    extensions: u64,
}

/// Vegas-W's slow start window by window, each window sent at once when the
/// previous one's last ACK arrived. Every window's first ACK ends a round
/// (the round's samples are the ACKs since the previous window's first ACK).
/// Rounds alternate between growing cwnd by the bytes acknowledged and
/// holding it (round 0, nominally growing, ends at the very first ACK); at
/// the end of a holding round Diff is compared with gamma, and past gamma
/// slow start goes on while cwnd < b̂ × BaseRTT (IV.A), otherwise cwnd is
/// cut by 1/8 and slow start ends.
fn slow_start_reference(path: &[(Duration, Acking)]) -> SlowStartOutcome {
    let mut bwe = TustinReference::new();
    let mut cwnd = INITIAL_WINDOW_PACKETS * MDS;
    let mut growth = true;
    let mut base = f64::INFINITY;
    let mut round: Vec<f64> = Vec::new();
    let mut sent_at = 0.0;
    let mut outcome = SlowStartOutcome {
        cwnd_after: Vec::new(),
        exit: None,
        extensions: 0,
    };
    for (k, (rtt, acking)) in path.iter().enumerate() {
        let mut last_arrival = sent_at;
        for (i, (frame_rtt, packets)) in frames(cwnd / MDS, *rtt, *acking).iter().enumerate() {
            let frame_rtt = frame_rtt.as_secs_f64();
            let arrival = sent_at + frame_rtt;
            bwe.on_ack(arrival, packets * MDS);
            base = base.min(frame_rtt);
            round.push(frame_rtt);
            if i == 0 {
                let round_min = round.iter().copied().fold(f64::INFINITY, f64::min);
                round.clear();
                if growth {
                    growth = false;
                } else if paper_diff(cwnd as f64 / MDS as f64, base, round_min) > GAMMA {
                    let target = bwe.estimate.map(|b| b * base);
                    if target.is_some_and(|t| (cwnd as f64) < t) {
                        outcome.extensions += 1;
                        growth = true;
                    } else {
                        cwnd = cut(cwnd, SS_EXIT_FACTOR);
                        outcome.cwnd_after.push(cwnd);
                        outcome.exit = Some(k);
                        return outcome;
                    }
                } else {
                    growth = true;
                }
            }
            if growth {
                cwnd += packets * MDS;
            }
            last_arrival = arrival;
        }
        outcome.cwnd_after.push(cwnd);
        sent_at = last_arrival;
    }
    outcome
}

/// Mean of the last `m` samples, in seconds.
fn mean_of_last(samples: &[Duration], m: usize) -> f64 {
    let last = &samples[samples.len() - m..];
    last.iter().map(|d| d.as_secs_f64()).sum::<f64>() / m as f64
}

// ---- Driver ----

/// A flow plus what the test fed it: the reference estimate over every ACK
/// frame, and one RTT sample per frame (IV.B's RTT_now sequence).
struct Run {
    flow: Flow,
    bwe: TustinReference,
    rtt_samples: Vec<Duration>,
}

impl Run {
    fn new(pairs: &[&str]) -> Self {
        Run {
            flow: Flow::new(build("vegas-w", pairs)),
            bwe: TustinReference::new(),
            rtt_samples: Vec::new(),
        }
    }

    fn secs(&self, t: Instant) -> f64 {
        t.duration_since(self.flow.start).as_secs_f64()
    }

    fn cwnd(&self) -> usize {
        self.flow.cwnd()
    }

    fn ssthresh(&self) -> usize {
        self.flow.cc.ssthresh()
    }

    fn bwe(&self) -> f64 {
        self.bwe.estimate.expect("a bandwidth sample")
    }

    /// `packets` acknowledged by one ACK frame, `rtt` after the last of
    /// them was sent.
    fn ack_frame(&mut self, packets: &[PacketSent], rtt: Duration) {
        let Some(last_sent) = packets.iter().map(|p| p.time_sent).max() else {
            return;
        };
        self.flow.ack(packets, rtt);
        let at = self.secs(last_sent + rtt);
        self.bwe.on_ack(at, packets.len() * MDS);
        self.rtt_samples.push(rtt);
    }

    /// Each packet acknowledged by its own frame, with its own RTT, in the
    /// order given (which must be the order of arrival).
    fn ack_each(&mut self, acks: &[(PacketSent, Duration)]) {
        for (packet, rtt) in acks {
            self.ack_frame(&[*packet], *rtt);
        }
    }

    /// `packets` acknowledged by one ACK frame arriving `rtt` after the last
    /// of them was sent, each carrying the peer's receive timestamp.
    fn ack_with_receive_times(
        &mut self,
        packets: &[PacketSent],
        rtt: Duration,
        received: &[Duration],
    ) {
        let arrival = packets[packets.len() - 1].time_sent + rtt;
        let acked: Vec<AckedPacket> = packets
            .iter()
            .zip(received)
            .map(|(p, r)| {
                let mut a = AckedPacket::new(p.pkt_num, p.size, p.time_sent, arrival);
                a.receive_time = Some(*r);
                a
            })
            .collect();
        self.flow.cc.on_ack(&AckEvent {
            now: arrival,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(rtt),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        });
        self.flow.now = self.flow.now.max(arrival);
        let at = self.secs(arrival);
        self.bwe.on_ack(at, packets.len() * MDS);
        self.rtt_samples.push(rtt);
    }

    /// Sends a window at once and acknowledges it as `acking` says.
    fn window(&mut self, rtt: Duration, acking: Acking) -> Vec<PacketSent> {
        let window = self.flow.send_window();
        match acking {
            Acking::Single => self.ack_frame(&window, rtt),
            Acking::Spread(_) => {
                let acks: Vec<(PacketSent, Duration)> = window
                    .iter()
                    .zip(frames(window.len(), rtt, acking))
                    .map(|(p, (frame_rtt, _))| (*p, frame_rtt))
                    .collect();
                self.ack_each(&acks);
            }
        }
        window
    }

    /// One window acknowledged by a single frame after `rtt`.
    fn round(&mut self, rtt: Duration) {
        self.window(rtt, Acking::Single);
    }

    /// Sends `count` packets `spacing` apart; `now` ends after the last.
    fn send_spaced(&mut self, count: usize, spacing: Duration) -> Vec<PacketSent> {
        let mut sent = Vec::new();
        for i in 0..count {
            if i > 0 {
                self.flow.advance(spacing);
            }
            sent.extend(self.flow.send(1));
        }
        sent
    }

    fn internals(&self) -> Internals {
        self.flow.internals()
    }

    fn float(&self, name: &str) -> f64 {
        match self.internals().get(name) {
            Some(InternalValue::Float(v)) => v,
            other => panic!("{name}: {other:?}"),
        }
    }

    fn int(&self, name: &str) -> u64 {
        match self.internals().get(name) {
            Some(InternalValue::Int(v)) => v,
            other => panic!("{name}: {other:?}"),
        }
    }

    fn text(&self, name: &str) -> &'static str {
        match self.internals().get(name) {
            Some(InternalValue::Text(v)) => v,
            other => panic!("{name}: {other:?}"),
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The path of [`in_congestion_avoidance`]: BaseRTT 100 ms, then 110 ms,
/// one ACK frame per window.
const CA_PATH_MS: [u64; 4] = [100, 110, 110, 110];

/// Slow start on [`CA_PATH_MS`] ends at window 3: Diff = 20 × 10/110 = 1.82 >
/// gamma while the estimate × BaseRTT (one window per 110 ms, lagging) is
/// below cwnd. Then the round after the 1/8 cut ends recovery: cwnd 21000 in
/// congestion avoidance, BaseRTT 100 ms.
fn in_congestion_avoidance(pairs: &[&str]) -> Run {
    let path: Vec<(Duration, Acking)> = CA_PATH_MS
        .iter()
        .map(|v| (ms(*v), Acking::Single))
        .collect();
    let expected = slow_start_reference(&path);
    assert_eq!(expected.exit, Some(3));
    assert_eq!(expected.extensions, 0);
    let mut run = Run::new(pairs);
    let mut got = Vec::new();
    for (rtt, acking) in &path {
        run.window(*rtt, *acking);
        got.push(run.cwnd());
    }
    assert_eq!(got, expected.cwnd_after);
    assert_eq!(run.cwnd(), 21_000);
    assert_eq!(run.ssthresh(), 21_000);
    assert_eq!(run.flow.cc.state(), CcState::Recovery);
    run.round(ms(110));
    assert_eq!(run.flow.cc.state(), CcState::CongestionAvoidance);
    assert_eq!(run.cwnd(), 21_000);
    run
}

// ---- Slow start (IV.A) ----

#[test]
fn slow_start_continues_past_gamma_while_cwnd_is_below_bwe_times_base_rtt() {
    // A bottleneck spreads each burst to one packet per ms (1.2 MB/s, a
    // 100-packet BDP at BaseRTT 100 ms) while the queue adds 10 ms: Diff
    // exceeds gamma from window 3 on, but cwnd is far below b̂ × BaseRTT.
    let mut path = vec![(ms(100), Acking::Spread(ms(1)))];
    path.extend([(ms(110), Acking::Spread(ms(1))); 11]);
    let expected = slow_start_reference(&path);
    let exit = expected
        .exit
        .expect("slow start ends once cwnd reaches b̂ × BaseRTT");
    assert!(expected.extensions >= 2, "{expected:?}");
    // Vegas would have left at window 3 with 21000 bytes.
    assert!(exit > 3 && *expected.cwnd_after.last().unwrap() > 21_000);

    let mut run = Run::new(&[]);
    for (k, (rtt, acking)) in path[..=exit].iter().enumerate() {
        run.window(*rtt, *acking);
        if k < exit {
            assert_eq!(run.cwnd(), expected.cwnd_after[k], "window {k}");
            assert_eq!(run.flow.cc.state(), CcState::SlowStart, "window {k}");
        }
    }
    assert_eq!(run.cwnd(), expected.cwnd_after[exit]);
    assert_eq!(run.ssthresh(), expected.cwnd_after[exit]);
    assert_eq!(run.int("ss_extensions"), expected.extensions);
    // Diff at the exit was above gamma.
    assert!(run.float("diff_packets") > GAMMA);
}

#[test]
fn slow_start_ends_when_diff_exceeds_gamma_and_cwnd_reaches_bwe_times_base_rtt() {
    // With one ACK per window the estimate is at most a window per RTT, so
    // b̂ × BaseRTT < cwnd when Diff first exceeds gamma: the exit is Vegas's.
    let run = in_congestion_avoidance(&[]);
    assert_eq!(run.int("ss_extensions"), 0);
}

#[test]
fn slow_start_continues_while_diff_is_at_most_gamma() {
    // 2 ms of queueing: Diff = 20 × 2/102 = 0.39, 40 × 2/102 = 0.78.
    let path: Vec<(Duration, Acking)> = [100, 102, 102, 102, 102, 102]
        .iter()
        .map(|v| (ms(*v), Acking::Single))
        .collect();
    let expected = slow_start_reference(&path);
    assert_eq!(expected.exit, None);
    assert_eq!(expected.extensions, 0);
    let mut run = Run::new(&[]);
    for (k, (rtt, acking)) in path.iter().enumerate() {
        run.window(*rtt, *acking);
        assert_eq!(run.cwnd(), expected.cwnd_after[k], "window {k}");
    }
    assert_eq!(run.cwnd(), 80 * MDS);
    assert_eq!(run.flow.cc.state(), CcState::SlowStart);
}

// ---- Congestion avoidance (eq. 1) ----

/// `rounds` single-frame rounds at `rtt_ms` against BaseRTT `base_ms`, each
/// checked against eq. 1; returns the Diffs.
fn check_ca_rounds(run: &mut Run, base_ms: f64, rtt_ms: u64, rounds: usize) -> Vec<f64> {
    let mut cwnd = run.cwnd();
    let mut diffs = Vec::new();
    for k in 0..rounds {
        let diff = paper_diff(cwnd as f64 / MDS as f64, base_ms / 1e3, rtt_ms as f64 / 1e3);
        run.round(ms(rtt_ms));
        cwnd = ca_step(cwnd, diff);
        assert_eq!(run.cwnd(), cwnd, "round {k} at {rtt_ms} ms, Diff {diff}");
        assert_eq!(run.flow.cc.state(), CcState::CongestionAvoidance);
        diffs.push(diff);
    }
    diffs
}

#[test]
fn diff_below_alpha_adds_one_packet_per_rtt() {
    let mut run = in_congestion_avoidance(&[]);
    let diffs = check_ca_rounds(&mut run, 100.0, 100, 4);
    assert!(diffs.iter().all(|d| *d < ALPHA));
    assert_eq!(run.cwnd(), 21_000 + 4 * MDS);
}

#[test]
fn diff_between_alpha_and_beta_keeps_the_window() {
    let mut run = in_congestion_avoidance(&[]);
    let diffs = check_ca_rounds(&mut run, 100.0, 110, 4);
    assert!(diffs.iter().all(|d| (ALPHA..=BETA).contains(d)));
    assert_eq!(run.cwnd(), 21_000);
}

#[test]
fn diff_above_beta_removes_one_packet_per_rtt() {
    let mut run = in_congestion_avoidance(&[]);
    // 130 ms is below 2 × the mean RTT: congestion, not a route change.
    let diffs = check_ca_rounds(&mut run, 100.0, 130, 7);
    assert!(diffs[..5].iter().all(|d| *d > BETA), "{diffs:?}");
    assert_eq!(run.cwnd(), 21_000 - 5 * MDS);
    assert!(run.ssthresh() <= run.cwnd());
    assert_eq!(run.int("route_change"), 0);
}

#[test]
fn application_limited_rounds_do_not_grow_the_window() {
    let mut run = in_congestion_avoidance(&[]);
    run.flow.app_limited = true;
    run.round(ms(100));
    assert_eq!(run.cwnd(), 21_000, "Diff < alpha, but the window is unused");
    run.round(ms(130));
    assert_eq!(run.cwnd(), 21_000 - MDS, "decreases still apply");
}

// ---- Route surveillance (IV.B) ----

/// [`in_congestion_avoidance`] followed by enough rounds at 110 ms (Diff
/// 1.59, cwnd held) that the last m RTT samples are all 110 ms.
fn steady_at_110_ms() -> Run {
    let mut run = in_congestion_avoidance(&[]);
    check_ca_rounds(&mut run, 100.0, 110, M);
    assert!(close(mean_of_last(&run.rtt_samples, M), 0.110));
    run
}

#[test]
fn route_change_refreshes_base_rtt() {
    let mut run = steady_at_110_ms();
    let mean = mean_of_last(&run.rtt_samples, M);
    // The new route is 250 ms: RTT_now > n × RTT_ave = 220 ms.
    assert!(0.250 > N * mean);
    // BaseRTT becomes 250 ms, so Diff = 0 < alpha: one more packet. Against
    // the old BaseRTT, Diff = 17.5 × 150/250 = 10.5 > beta would have cut.
    assert!(paper_diff(17.5, 0.100, 0.250) > BETA);
    check_ca_rounds(&mut run, 250.0, 250, 3);
    assert_eq!(run.cwnd(), 21_000 + 3 * MDS);
    assert!((run.float("base_rtt_ms") - 250.0).abs() < 1e-9);
    assert_eq!(
        run.int("route_change"),
        1,
        "one route change, not one per sample"
    );
    assert!((run.float("route_change_rtt_now_ms") - 250.0).abs() < 1e-9);
    assert!((run.float("route_change_rtt_ave_ms") - mean * 1e3).abs() < 1e-6);
    // After the refresh BaseRTT is again the minimum of what follows.
    check_ca_rounds(&mut run, 240.0, 240, 1);
    assert!((run.float("base_rtt_ms") - 240.0).abs() < 1e-9);
}

#[test]
fn small_rtt_rise_is_congestion_not_a_route_change() {
    let mut run = steady_at_110_ms();
    // 219 ms is not above 2 × 110 ms: BaseRTT stays 100 ms and Vegas's rule
    // sees 17.5 × 119/219 = 9.5 packets queued.
    assert!(0.219 <= N * mean_of_last(&run.rtt_samples, M));
    let diffs = check_ca_rounds(&mut run, 100.0, 219, 3);
    assert!(diffs.iter().all(|d| *d > BETA));
    assert_eq!(run.cwnd(), 21_000 - 3 * MDS);
    assert!((run.float("base_rtt_ms") - 100.0).abs() < 1e-9);
    assert_eq!(run.int("route_change"), 0);
}

#[test]
fn route_check_needs_m_samples() {
    // Right after slow start only five samples exist (four windows and the
    // recovery round): a jump to 300 ms is congestion for lack of a mean.
    let mut run = in_congestion_avoidance(&["m=6"]);
    assert_eq!(run.rtt_samples.len(), 5);
    check_ca_rounds(&mut run, 100.0, 300, 1);
    assert_eq!(run.int("route_change"), 0);
    // The sixth sample completed the history: now 2 × mean is exceeded.
    let mean = mean_of_last(&run.rtt_samples, 6);
    assert!(0.700 > N * mean);
    check_ca_rounds(&mut run, 700.0, 700, 1);
    assert_eq!(run.int("route_change"), 1);
}

#[test]
fn route_change_is_not_checked_in_slow_start() {
    // Ten ACK frames per window (Spread with no spacing: same instant): 20
    // samples of 100 ms, then a window at 250 ms while still in slow start.
    let mut run = Run::new(&[]);
    for _ in 0..2 {
        run.window(ms(100), Acking::Spread(Duration::ZERO));
    }
    assert_eq!(run.rtt_samples.len(), M);
    run.window(ms(250), Acking::Spread(Duration::ZERO));
    assert_eq!(run.flow.cc.state(), CcState::SlowStart);
    assert_eq!(run.int("route_change"), 0);
    assert!((run.float("base_rtt_ms") - 100.0).abs() < 1e-9);
}

// ---- Loss classification (IV.C) ----

/// In congestion avoidance, sends P0..P5 two ms apart; P0 and P1 are
/// acknowledged 110 ms after they left, P2 `p2_rtt` after. Returns P0..P5.
fn spaced_packets(run: &mut Run, p2_rtt: Duration) -> Vec<PacketSent> {
    let p = run.send_spaced(6, ms(2));
    run.ack_each(&[(p[0], ms(110)), (p[1], ms(110)), (p[2], p2_rtt)]);
    p
}

#[test]
fn loss_after_spreading_acks_is_congestion() {
    let mut run = in_congestion_avoidance(&[]);
    // P1 and P2 left 2 ms apart; their ACKs came 5 ms apart.
    let p = spaced_packets(&mut run, ms(113));
    assert_eq!(run.cwnd(), 21_000, "P0's round: Diff 1.59 holds cwnd");
    run.flow.lose(&p[3..4], false);
    let ssthresh = bdp_ssthresh(run.bwe(), 0.100);
    assert!(ssthresh < 21_000, "the scenario lowers the window");
    assert!(
        run.ssthresh().abs_diff(ssthresh) <= 1,
        "{} vs {ssthresh}",
        run.ssthresh()
    );
    assert_eq!(run.cwnd(), run.ssthresh(), "cwnd = ssthresh");
    assert_eq!(run.flow.cc.state(), CcState::Recovery);
    assert_eq!(run.text("loss_class"), "congestion");
    assert_eq!(run.text("loss_spacing_source"), "ack_arrival");
    assert!((run.float("loss_send_spacing_ms") - 2.0).abs() < 1e-9);
    assert!((run.float("loss_ack_spacing_ms") - 5.0).abs() < 1e-9);
    assert_eq!(run.int("congestion_losses"), 1);
}

#[test]
fn loss_without_spreading_is_a_link_error() {
    for (p2_rtt, ack_spacing) in [(ms(109), 1.0), (ms(110), 2.0)] {
        let mut run = in_congestion_avoidance(&[]);
        let p = spaced_packets(&mut run, p2_rtt);
        run.flow.lose(&p[3..4], false);
        // ACK spacing 1 ms < 2 ms, and 2 ms = 2 ms (not "less than").
        assert_eq!(run.cwnd(), 21_000, "ACK spacing {ack_spacing} ms");
        assert_eq!(run.ssthresh(), 21_000);
        assert_eq!(run.flow.cc.state(), CcState::CongestionAvoidance);
        assert_eq!(run.text("loss_class"), "link_error");
        assert!((run.float("loss_ack_spacing_ms") - ack_spacing).abs() < 1e-9);
        assert_eq!(run.int("link_error_losses"), 1);
    }
}

#[test]
fn spacing_margin_is_relative_to_the_send_spacing() {
    // Congestion only when ACK spacing > 2 ms × (1 + 2) = 6 ms.
    for (p2_rtt, class) in [(ms(113), "link_error"), (ms(115), "congestion")] {
        let mut run = in_congestion_avoidance(&["spacing_margin=2"]);
        let p = spaced_packets(&mut run, p2_rtt);
        run.flow.lose(&p[3..4], false);
        assert_eq!(run.text("loss_class"), class, "P2 after {p2_rtt:?}");
    }
}

#[test]
fn unacknowledged_predecessor_makes_the_loss_unclassifiable() {
    for (pairs, class) in [
        (vec![], "congestion"),
        (vec!["unclassified_loss=link_error"], "link_error"),
    ] {
        let mut run = in_congestion_avoidance(&pairs);
        let p = run.send_spaced(6, ms(2));
        // P2 is never acknowledged: it is lost with P3.
        run.ack_each(&[(p[0], ms(110)), (p[1], ms(110))]);
        run.flow.lose(&p[2..4], false);
        assert_eq!(run.text("loss_class"), class);
        assert_eq!(run.text("loss_spacing_source"), "none");
        if class == "congestion" {
            let ssthresh = bdp_ssthresh(run.bwe(), 0.100);
            assert!(run.ssthresh().abs_diff(ssthresh) <= 1);
            assert_eq!(run.cwnd(), run.ssthresh());
        } else {
            assert_eq!((run.cwnd(), run.ssthresh()), (21_000, 21_000));
        }
    }
}

#[test]
fn predecessors_acknowledged_together_have_no_observable_spacing() {
    let mut run = in_congestion_avoidance(&[]);
    let p = run.send_spaced(6, ms(2));
    run.ack_each(&[(p[0], ms(110))]);
    // One frame for P1 and P2: both ACKed at the same instant.
    run.ack_frame(&p[1..3], ms(110));
    run.flow.lose(&p[3..4], false);
    assert_eq!(run.text("loss_spacing_source"), "none");
    assert_eq!(run.text("loss_class"), "congestion", "the default class");
    let ssthresh = bdp_ssthresh(run.bwe(), 0.100);
    assert!(run.ssthresh().abs_diff(ssthresh) <= 1);
}

#[test]
fn receive_timestamps_give_the_spacing_when_present() {
    // P1 and P2 in one ACK frame, but the peer stamped their arrival.
    for (gap_us, class) in [(5_000, "congestion"), (1_000, "link_error")] {
        let mut run = in_congestion_avoidance(&[]);
        let p = run.send_spaced(6, ms(2));
        run.ack_each(&[(p[0], ms(110))]);
        let r1 = Duration::from_secs(7);
        run.ack_with_receive_times(&p[1..3], ms(110), &[r1, r1 + Duration::from_micros(gap_us)]);
        run.flow.lose(&p[3..4], false);
        assert_eq!(run.text("loss_spacing_source"), "receive_timestamps");
        assert_eq!(run.text("loss_class"), class, "{gap_us} us apart");
    }
}

#[test]
fn predecessors_skip_packet_numbers_quic_never_sent() {
    // Packet numbers 1_000_000, 1_000_002 and 1_000_005 (QUIC skips numbers,
    // and ACK-only packets never reach the controller): the lost packet's
    // predecessors are the two packets sent before it, not n−1 and n−2.
    let mut run = in_congestion_avoidance(&[]);
    let t = run.flow.now;
    let sent = |n: u64, at: Instant| PacketSent {
        pkt_num: n,
        size: MDS,
        time_sent: at,
        bytes_in_flight: 0,
    };
    let packets = [
        sent(1_000_000, t),
        sent(1_000_002, t + ms(2)),
        sent(1_000_005, t + ms(4)),
    ];
    for p in &packets {
        run.flow.cc.on_packet_sent(p);
    }
    let ack = |p: &PacketSent, rtt: Duration| {
        let arrival = p.time_sent + rtt;
        let acked = [AckedPacket::new(p.pkt_num, p.size, p.time_sent, arrival)];
        (arrival, acked)
    };
    for (p, rtt) in [(&packets[0], ms(110)), (&packets[1], ms(114))] {
        let (now, acked) = ack(p, rtt);
        run.flow.cc.on_ack(&AckEvent {
            now,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(rtt),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        });
    }
    run.flow.cc.on_congestion_event(&CongestionEvent {
        now: t + ms(200),
        lost_bytes: MDS,
        largest_lost_pkt_num: 1_000_005,
        largest_lost_time_sent: t + ms(4),
        persistent_congestion: false,
        bytes_in_flight: 0,
    });
    assert_eq!(run.text("loss_spacing_source"), "ack_arrival");
    assert!((run.float("loss_send_spacing_ms") - 2.0).abs() < 1e-9);
    assert!((run.float("loss_ack_spacing_ms") - 6.0).abs() < 1e-9);
    assert_eq!(run.text("loss_class"), "congestion");
}

#[test]
fn one_reduction_per_window_of_losses() {
    let mut run = in_congestion_avoidance(&[]);
    let p = spaced_packets(&mut run, ms(113));
    run.flow.lose(&p[3..4], false);
    let reduced = (run.cwnd(), run.ssthresh());
    assert!(reduced.0 < 21_000);
    // P5 was sent before the reduction: classified (its predecessors P3, P4
    // were lost, so by default congestion) but not reduced again.
    run.flow.lose(&p[4..6], false);
    assert_eq!((run.cwnd(), run.ssthresh()), reduced);
    assert_eq!(run.int("congestion_losses"), 2);
    assert_eq!(run.flow.cc.state(), CcState::Recovery);
}

#[test]
fn congestion_loss_never_raises_cwnd() {
    // A 100-packet bottleneck (one packet per ms) makes b̂ × RTTmin far larger
    // than a 20-packet window: ssthresh takes the estimate, cwnd stays.
    let mut run = Run::new(&[]);
    run.window(ms(100), Acking::Spread(ms(1)));
    run.window(ms(110), Acking::Spread(ms(1)));
    assert_eq!(run.cwnd(), 20 * MDS);
    let p = run.send_spaced(4, ms(1));
    run.ack_each(&[(p[0], ms(110)), (p[1], ms(110)), (p[2], ms(115))]);
    let cwnd = run.cwnd();
    run.flow.lose(&p[3..4], false);
    let ssthresh = bdp_ssthresh(run.bwe(), 0.100);
    assert!(ssthresh > cwnd);
    assert!(run.ssthresh().abs_diff(ssthresh) <= 1);
    assert_eq!(run.cwnd(), cwnd);
}

#[test]
fn congestion_loss_before_any_estimate_halves_the_window() {
    let mut run = Run::new(&[]);
    let p = run.send_spaced(4, ms(2));
    // The first ACK only starts the estimator's clock; P0 and P1 arrive at
    // the same instant in separate frames: merged, still no sample.
    run.ack_each(&[(p[0], ms(100)), (p[1], ms(98))]);
    // P2 is unacknowledged: unclassifiable, so congestion.
    run.flow.lose(&p[2..4], false);
    assert_eq!(run.bwe.estimate, None);
    assert_eq!(run.ssthresh(), INITIAL_WINDOW_PACKETS * MDS / 2);
    assert_eq!(run.cwnd(), INITIAL_WINDOW_PACKETS * MDS / 2);
}

#[test]
fn spurious_loss_restores_the_window_and_the_epoch() {
    let mut run = in_congestion_avoidance(&[]);
    let p = spaced_packets(&mut run, ms(113));
    let before = (run.cwnd(), run.ssthresh());
    run.flow.lose(&p[3..4], false);
    assert!(run.cwnd() < before.0);
    assert!(run.flow.cc.on_spurious_loss(before.0, before.1));
    assert_eq!((run.cwnd(), run.ssthresh()), before);
    assert_eq!(run.flow.cc.state(), CcState::CongestionAvoidance);
    // The undone reduction no longer shields P5.
    run.flow.lose(&p[4..6], false);
    assert!(run.cwnd() < before.0);
}

// ---- Persistent congestion ----

#[test]
fn persistent_congestion_returns_to_slow_start() {
    let mut run = in_congestion_avoidance(&[]);
    let window = run.flow.send_window();
    run.flow.advance(ms(1000));
    run.flow.lose(&window, true);
    let ssthresh = bdp_ssthresh(run.bwe(), 0.100);
    assert!(run.ssthresh().abs_diff(ssthresh) <= 1);
    let ssthresh = run.ssthresh();
    assert_eq!(run.cwnd(), MINIMUM);
    assert_eq!(run.text("loss_class"), "persistent_congestion");
    assert_eq!(run.flow.cc.state(), CcState::Recovery);
    // Vegas's slow start from a growth round (RTT = BaseRTT, so Diff = 0 at
    // every check), until cwnd reaches ssthresh.
    let mut cwnd = MINIMUM;
    let mut growth = true;
    let mut k = 0;
    while cwnd < ssthresh {
        run.round(ms(100));
        if growth {
            cwnd = (cwnd * 2).min(ssthresh);
        }
        growth = !growth;
        assert_eq!(run.cwnd(), cwnd, "window {k} after the timeout");
        assert_eq!(run.ssthresh(), ssthresh);
        if cwnd < ssthresh {
            assert_eq!(run.flow.cc.state(), CcState::SlowStart);
        }
        k += 1;
        assert!(k < 20);
    }
    assert!(k >= 3, "slow start took several rounds");
    assert_eq!(run.flow.cc.state(), CcState::CongestionAvoidance);
}

// ---- Estimation outside slow start ----

#[test]
fn estimate_freezes_outside_slow_start_when_asked() {
    // The reference of the slow-start phase: the estimate after window 3.
    let frozen_run = in_congestion_avoidance(&["bwe_in_congestion_avoidance=off"]);
    let mut at_exit = TustinReference::new();
    let mut t = 0.0;
    for (k, rtt) in CA_PATH_MS.iter().enumerate() {
        let packets = [10, 10, 20, 20][k];
        t += *rtt as f64 / 1e3;
        at_exit.on_ack(t, packets * MDS);
    }
    let frozen = at_exit.estimate.expect("estimate");
    let mut run = frozen_run;
    assert!(close(run.float("bwe_bytes_per_s"), frozen));
    check_ca_rounds(&mut run, 100.0, 100, 3);
    assert!(close(run.float("bwe_bytes_per_s"), frozen));
    let p = spaced_packets(&mut run, ms(113));
    run.flow.lose(&p[3..4], false);
    assert!(run.ssthresh().abs_diff(bdp_ssthresh(frozen, 0.100)) <= 1);

    // By default the estimate follows congestion avoidance too.
    let mut run = in_congestion_avoidance(&[]);
    check_ca_rounds(&mut run, 100.0, 100, 3);
    assert!(close(run.float("bwe_bytes_per_s"), run.bwe()));
    assert!(!close(run.bwe(), frozen));
}

// ---- Internals, parameters, registration ----

#[test]
fn internals_report_estimate_route_changes_and_loss_class() {
    let mut run = steady_at_110_ms();
    check_ca_rounds(&mut run, 250.0, 250, 1);
    let p = run.send_spaced(6, ms(2));
    run.ack_each(&[(p[0], ms(250)), (p[1], ms(250)), (p[2], ms(253))]);
    run.flow.lose(&p[3..4], false);
    let internals = run.internals();
    let names: Vec<&str> = internals.fields().iter().map(|(n, _)| *n).collect();
    for name in [
        "bwe_bytes_per_s",
        "base_rtt_ms",
        "diff_packets",
        "alpha",
        "beta",
        "gamma",
        "route_change",
        "route_change_rtt_now_ms",
        "route_change_rtt_ave_ms",
        "loss_class",
        "cwnd_packets",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(close(run.float("bwe_bytes_per_s"), run.bwe()));
    assert!(close(
        run.float("bwe_window_packets"),
        run.bwe() * 0.250 / MDS as f64
    ));
    assert!((run.float("base_rtt_ms") - 250.0).abs() < 1e-9);
    assert_eq!(run.float("alpha"), ALPHA);
    assert_eq!(run.float("beta"), BETA);
    assert_eq!(run.float("gamma"), GAMMA);
    assert_eq!(run.int("route_change"), 1);
    assert_eq!(run.text("loss_class"), "congestion");
    assert_eq!(run.float("cwnd_packets"), run.cwnd() as f64 / MDS as f64);
    // RTTmin is the refreshed BaseRTT, not the old route's 100 ms.
    assert!(run.ssthresh().abs_diff(bdp_ssthresh(run.bwe(), 0.250)) <= 1);
}

/// qlog shows b̂ (`bwe_bytes_per_s`) where a decision reads it: at each
/// decided round (IV.A compares it with cwnd there) and at each loss (IV.C's
/// ssthresh). The ACKs between move b̂ (one sample per ACK, eq. 2) and
/// leave the value shown. (Shown on every move, or on every move above a
/// fraction, the value would follow b̂ here and this fails.)
#[test]
fn qlog_shows_the_estimate_at_decided_rounds_and_losses() {
    let mut run = in_congestion_avoidance(&[]);
    // One packet every 2 ms, about three times b̂: each ACK moves b̂.
    let p = run.send_spaced(31, ms(2));
    let mut shown = 0.0;
    let mut moved = 0;
    for (i, packet) in p[..30].iter().enumerate() {
        let before = run.bwe();
        run.ack_each(&[(*packet, ms(110))]);
        if i == 0 {
            // The first packet sent in the round the last window's ACK
            // began: its ACK ends that round, whose decision shows b̂.
            shown = run.bwe();
        } else if !close(run.bwe(), before) {
            moved += 1;
        }
        assert!(close(run.float("bwe_bytes_per_s"), shown), "ACK {i}");
        assert!(close(
            run.float("bwe_window_packets"),
            shown * 0.100 / MDS as f64
        ));
    }
    assert!(moved >= 25, "b̂ moved on {moved} ACKs");
    assert!(!close(shown, run.bwe()), "the value shown is the round's");
    run.flow.lose(&p[30..], false);
    assert!(close(run.float("bwe_bytes_per_s"), run.bwe()));
}

#[test]
fn defaults_validation_and_registration() {
    let spec = ControllerSpec::new("vegas-w").unwrap();
    let p = spec.params();
    for (name, value) in [
        ("alpha", ALPHA),
        ("beta", BETA),
        ("gamma", GAMMA),
        ("tau_ms", TAU_SECS * 1e3),
        ("m", M as f64),
        ("n", N),
        ("ss_exit_factor", SS_EXIT_FACTOR),
        ("spacing_margin", 0.0),
    ] {
        assert_eq!(p.number(name), Some(value), "{name}");
    }
    assert_eq!(p.word("unclassified_loss"), Some("congestion"));
    assert_eq!(p.word("bwe_in_congestion_avoidance"), Some("on"));
    assert!(ControllerSpec::with_params("vegas-w", &["m=30", "n=3", "tau_ms=200"]).is_ok());
    let err = ControllerSpec::with_params("vegas-w", &["alpha=4", "beta=3"]).unwrap_err();
    assert!(err.to_string().contains("alpha"), "{err}");
    assert!(ControllerSpec::with_params("vegas-w", &["m=0"]).is_err());
    assert!(ControllerSpec::with_params("vegas-w", &["n=0.5"]).is_err());
    assert!(all_names().contains(&"vegas-w"));
    assert_eq!(build("vegas-w", &[]).name(), "vegas-w");
}

#[test]
fn packet_history_is_bounded() {
    let spec = ControllerSpec::new("vegas-w").unwrap();
    let mut cc = VegasW::new(spec.params(), WINDOW);
    let t0 = Instant::now();
    // 5000 packets, each acknowledged 100 ms later in frames of ten.
    for n in 0..5000u64 {
        let at = t0 + Duration::from_micros(100 * n);
        cc.on_packet_sent(&PacketSent {
            pkt_num: n,
            size: MDS,
            time_sent: at,
            bytes_in_flight: 0,
        });
        if n % 10 == 9 {
            let acked: Vec<AckedPacket> = (n - 9..=n)
                .map(|k| {
                    let sent = t0 + Duration::from_micros(100 * k);
                    AckedPacket::new(k, MDS, sent, at + ms(100))
                })
                .collect();
            cc.on_ack(&AckEvent {
                now: at + ms(100),
                acked: &acked,
                summary: AckSummary::of(&acked, 0),
                ack_delay: Duration::ZERO,
                rtt: RttSnapshot::uniform(ms(100)),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            });
            assert!(cc.tracked_packets() <= 2, "{}", cc.tracked_packets());
        }
    }

    // With nothing acknowledged, the cap holds; a loss of a packet no
    // longer tracked is unclassifiable.
    let spec = ControllerSpec::with_params("vegas-w", &["max_tracked_packets=16"]).unwrap();
    let mut cc = VegasW::new(spec.params(), WINDOW);
    for n in 0..100u64 {
        cc.on_packet_sent(&PacketSent {
            pkt_num: n,
            size: MDS,
            time_sent: t0,
            bytes_in_flight: 0,
        });
    }
    assert_eq!(cc.tracked_packets(), 16);
    cc.on_congestion_event(&CongestionEvent {
        now: t0 + ms(300),
        lost_bytes: MDS,
        largest_lost_pkt_num: 10,
        largest_lost_time_sent: t0,
        persistent_congestion: false,
        bytes_in_flight: 0,
    });
    let mut internals = Internals::default();
    cc.internals(&mut internals);
    assert_eq!(
        internals.get("loss_spacing_source"),
        Some(InternalValue::Text("none"))
    );
    assert_eq!(cc.cwnd(), INITIAL_WINDOW_PACKETS * MDS / 2);
}

// ---- Robustness ----

#[derive(Clone, Debug)]
enum Op {
    Common(random_events::Op),
    /// Packets acknowledged one ACK frame each, RTTs spaced `spacing_us`
    /// apart.
    AckEach {
        packets: usize,
        rtt_us: u64,
        spacing_us: u64,
    },
    /// One frame with arbitrary receive timestamps.
    AckStamped {
        packets: usize,
        rtt_us: u64,
        stamps: Vec<u64>,
    },
    Weird,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        14 => random_events::op().prop_map(Op::Common),
        3 => (0usize..40, 0u64..2_000_000, 0u64..20_000)
            .prop_map(|(packets, rtt_us, spacing_us)| Op::AckEach { packets, rtt_us, spacing_us }),
        2 => (1usize..6, 0u64..2_000_000, prop::collection::vec(any::<u64>(), 6))
            .prop_map(|(packets, rtt_us, stamps)| Op::AckStamped { packets, rtt_us, stamps }),
        1 => Just(Op::Weird),
    ]
}

fn parameters() -> impl Strategy<Value = Vec<&'static str>> {
    prop_oneof![
        Just(vec![]),
        Just(vec![
            "alpha=0",
            "beta=0",
            "gamma=0",
            "ss_exit_factor=0",
            "tau_ms=0",
            "m=1",
            "n=1",
        ]),
        Just(vec![
            "alpha=1000",
            "beta=1000",
            "gamma=1000",
            "tau_ms=60000",
            "m=10000",
            "n=1000",
            "spacing_margin=1000",
            "unclassified_loss=link_error",
            "bwe_in_congestion_avoidance=off",
            "max_tracked_packets=3",
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_events_keep_the_window_sane(
        pairs in parameters(),
        ops in prop::collection::vec(op(), 1..150),
    ) {
        let mut flow = Flow::new(build("vegas-w", &pairs));
        let mut max_datagram_size = MDS;
        for op in ops {
            match op {
                Op::Common(op) => random_events::apply(&mut flow, &op, &mut max_datagram_size),
                Op::AckEach { packets, rtt_us, spacing_us } => {
                    let chosen: Vec<PacketSent> =
                        flow.in_flight().iter().take(packets).copied().collect();
                    for (i, p) in chosen.iter().enumerate() {
                        let rtt = rtt_us + spacing_us * i as u64;
                        flow.ack(&[*p], Duration::from_micros(rtt));
                    }
                }
                Op::AckStamped { packets, rtt_us, stamps } => {
                    let now = flow.now;
                    let acked: Vec<AckedPacket> = flow
                        .in_flight()
                        .iter()
                        .take(packets)
                        .zip(&stamps)
                        .map(|(p, s)| {
                            let arrival = p.time_sent + Duration::from_micros(rtt_us);
                            let mut a = AckedPacket::new(p.pkt_num, p.size, p.time_sent, arrival);
                            a.receive_time = Some(Duration::from_nanos(*s));
                            a
                        })
                        .collect();
                    flow.cc.on_ack(&AckEvent {
                        now: now + Duration::from_micros(rtt_us),
                        acked: &acked,
                        summary: AckSummary::of(&acked, 0),
                        ack_delay: Duration::ZERO,
                        rtt: RttSnapshot::uniform(Duration::from_micros(rtt_us)),
                        bytes_in_flight: 0,
                        app_limited: false,
                        backward_queueing: None,
                    });
                }
                Op::Weird => {
                    // A packet "sent" after it was acknowledged, a zero RTT, a
                    // huge ACK delay, a packet number that wraps the log's
                    // order, and a loss of a packet never sent.
                    let mut packet = random_events::malformed_packet(flow.now);
                    packet.receive_time = Some(Duration::MAX);
                    flow.cc.on_packet_sent(&PacketSent {
                        pkt_num: 0,
                        size: usize::MAX,
                        time_sent: flow.now,
                        bytes_in_flight: usize::MAX,
                    });
                    random_events::deliver_malformed(&mut flow, packet, None);
                }
            }
            check_invariants(flow.cc.as_ref());
            if let Some(p) = flow.cc.pacing() {
                assert!(p.rate_bytes_per_sec.is_finite() && p.rate_bytes_per_sec > 0.0);
                assert_eq!(p.burst_packets, 2);
            }
        }
    }
}

//! Westwood+ against hand-built ACK trains and losses. Expected values are
//! computed here from the algorithm's equations, not read back from the code.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use vegas_cc::westwood::Westwood;
use vegas_cc::{
    AckEvent, AckSummary, AckedPacket, CcState, CongestionController, CongestionEvent,
    ControllerHost, ControllerSpec, InternalValue, Internals, RttSnapshot, WindowConfig,
};

const MSS: usize = 1200;
const WINDOW: WindowConfig = WindowConfig {
    max_datagram_size: MSS,
    initial_cwnd_packets: 10,
};
/// Westwood+'s filter weight, written out rather than taken from the crate.
const W: f64 = 7.0 / 8.0;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn westwood(pairs: &[&str]) -> Westwood {
    let spec = ControllerSpec::with_params("westwood", pairs).expect("valid westwood parameters");
    Westwood::new(spec.params(), WINDOW)
}

/// A sender driven by hand: a clock, packet numbers, and the RTT the path
/// reports.
struct Driver {
    t0: Instant,
    now: Instant,
    next_pkt: u64,
    rtt: RttSnapshot,
    app_limited: bool,
}

impl Driver {
    fn new(rtt: Duration, min_rtt: Duration) -> Self {
        let t0 = Instant::now();
        Driver {
            t0,
            now: t0,
            next_pkt: 0,
            rtt: RttSnapshot {
                min_rtt,
                ..RttSnapshot::uniform(rtt)
            },
            app_limited: false,
        }
    }

    /// Advances the clock by `dt` and delivers one ACK for `packets` packets
    /// of `size` bytes, each sent one RTT earlier.
    fn ack(
        &mut self,
        cc: &mut dyn CongestionController,
        dt: Duration,
        packets: usize,
        size: usize,
    ) {
        self.now += dt;
        let sent = self.now.checked_sub(self.rtt.latest_rtt).unwrap_or(self.t0);
        let acked: Vec<AckedPacket> = (0..packets)
            .map(|_| {
                self.next_pkt += 1;
                AckedPacket::new(self.next_pkt, size, sent, self.now)
            })
            .collect();
        cc.on_ack(&AckEvent {
            now: self.now,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay: Duration::ZERO,
            rtt: self.rtt,
            bytes_in_flight: cc.cwnd(),
            app_limited: self.app_limited,
            backward_queueing: None,
        });
    }

    /// `count` ACKs of one `size`-byte packet every `spacing`.
    fn ack_train(
        &mut self,
        cc: &mut dyn CongestionController,
        count: u32,
        spacing: Duration,
        size: usize,
    ) {
        for _ in 0..count {
            self.ack(cc, spacing, 1, size);
        }
    }

    /// Packets sent `age` before now were declared lost.
    fn loss(&self, age: Duration, persistent: bool) -> CongestionEvent {
        CongestionEvent {
            now: self.now,
            lost_bytes: MSS,
            largest_lost_pkt_num: self.next_pkt + 1,
            largest_lost_time_sent: self.now.checked_sub(age).unwrap_or(self.t0),
            persistent_congestion: persistent,
            bytes_in_flight: 0,
        }
    }
}

fn internal(cc: &dyn CongestionController, name: &str) -> f64 {
    let mut out = Internals::default();
    cc.internals(&mut out);
    match out.get(name) {
        Some(InternalValue::Float(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

fn assert_close(got: f64, expected: f64) {
    assert!(
        (got - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        "{got} vs {expected}"
    );
}

#[test]
fn registered_with_paper_defaults() {
    let spec = ControllerSpec::new("westwood").expect("westwood is registered");
    assert_eq!(
        spec.params().describe(),
        "min_sample_window_ms=50 filter_history_weight=0.875 filter_reference_window_ms=50 \
         min_ssthresh_packets=2 profile=quic slow_start_pacing_gain=2 pacing_gain=1.25 \
         pacing_burst_packets=2"
    );
    let cc = spec.build(WINDOW);
    assert_eq!(cc.name(), "westwood");
    assert_eq!(cc.cwnd(), 10 * MSS);
    assert_eq!(cc.ssthresh(), usize::MAX);
    assert_eq!(cc.state(), CcState::SlowStart);
    assert!(ControllerSpec::with_params("westwood", &["filter_history_weight=1.5"]).is_err());
    assert!(ControllerSpec::with_params("westwood", &["min_ssthresh_packets=1"]).is_err());
    assert!(ControllerSpec::with_params("westwood", &["filter_reference_window_ms=-1"]).is_err());
    assert!(ControllerSpec::with_params("westwood", &["filter_reference_window_ms=0.5"]).is_err());
}

#[test]
fn slow_start_then_congestion_avoidance_grow_like_reno() {
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(20), ms(20));
    d.ack(&mut cc, ms(1), 3, MSS);
    assert_eq!(
        cc.cwnd(),
        13 * MSS,
        "slow start adds the acknowledged bytes"
    );

    // Put the window at cwnd = ssthresh = 20 packets: congestion avoidance.
    cc.on_spurious_loss(20 * MSS, 20 * MSS);
    assert_eq!(cc.state(), CcState::CongestionAvoidance);
    // 19 packets acknowledged: not yet one window.
    d.ack(&mut cc, ms(1), 19, MSS);
    assert_eq!(cc.cwnd(), 20 * MSS);
    // The 20th completes a window: one mss more.
    d.ack(&mut cc, ms(1), 1, MSS);
    assert_eq!(cc.cwnd(), 21 * MSS);
    // Application-limited ACKs do not grow the window.
    d.app_limited = true;
    d.ack(&mut cc, ms(1), 100, MSS);
    assert_eq!(cc.cwnd(), 21 * MSS);
}

#[test]
fn constant_rate_acks_converge_to_the_rate() {
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(20), ms(20));
    // One 1200-byte packet per millisecond: 1.2 MB/s.
    d.ack_train(&mut cc, 2000, ms(1), MSS);
    let estimate = cc.bandwidth_estimate().expect("estimate after 2 s");
    assert_close(estimate, 1_200_000.0);
    assert_close(internal(&cc, "bwe_bytes_per_s"), estimate);
    assert_close(internal(&cc, "bwe_sample_bytes_per_s"), 1_200_000.0);
    assert_close(internal(&cc, "rtt_min_ms"), 20.0);
}

#[test]
fn rate_step_follows_the_two_stage_closed_form() {
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(20), ms(20));
    // The first ACK opens the window; five more 10 ms apart close the first
    // 50 ms sample at 1200 B / 10 ms = 120 kB/s.
    let (a, b) = (120_000.0, 360_000.0);
    d.ack(&mut cc, ms(0), 1, MSS);
    d.ack_train(&mut cc, 5, ms(10), MSS);
    assert_close(cc.bandwidth_estimate().expect("first sample"), a);
    // Then 3600 B every 10 ms: 360 kB/s, one sample per 50 ms.
    for k in 1..=12 {
        d.ack_train(&mut cc, 5, ms(10), 3 * MSS);
        // First stage x_k = b + (a − b)·W^k; the second stage
        // y_k = W·y_{k−1} + (1 − W)·x_k with y_0 = a solves to
        // y_k = b + (a − b)·W^k·(1 + k·(1 − W)).
        let wk = W.powi(k);
        let expected = b + (a - b) * wk * (1.0 + f64::from(k) * (1.0 - W));
        assert_close(cc.bandwidth_estimate().expect("estimate"), expected);
    }
}

#[test]
fn sample_window_is_at_least_50_ms() {
    let mut cc = westwood(&[]);
    // An RTT of 10 ms is shorter than the 50 ms minimum window.
    let mut d = Driver::new(ms(10), ms(10));
    d.ack(&mut cc, ms(0), 1, MSS);
    d.ack_train(&mut cc, 4, ms(10), MSS);
    assert_eq!(cc.bandwidth_estimate(), None, "40 ms: no sample yet");
    d.ack(&mut cc, ms(10), 1, MSS);
    assert_close(cc.bandwidth_estimate().expect("50 ms"), 120_000.0);

    // A smaller minimum window closes sooner.
    let mut cc = westwood(&["min_sample_window_ms=20"]);
    let mut d = Driver::new(ms(10), ms(10));
    d.ack(&mut cc, ms(0), 1, MSS);
    d.ack(&mut cc, ms(10), 1, MSS);
    assert_eq!(cc.bandwidth_estimate(), None);
    d.ack(&mut cc, ms(10), 1, MSS);
    assert_close(cc.bandwidth_estimate().expect("20 ms"), 120_000.0);

    // An RTT longer than 50 ms sets the window.
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(80), ms(80));
    d.ack(&mut cc, ms(0), 1, MSS);
    d.ack_train(&mut cc, 7, ms(10), MSS);
    assert_eq!(cc.bandwidth_estimate(), None, "70 ms < RTT");
    d.ack(&mut cc, ms(10), 1, MSS);
    assert_close(cc.bandwidth_estimate().expect("80 ms"), 120_000.0);
}

#[test]
fn loss_sets_ssthresh_to_estimate_times_rtt_min() {
    let mut cc = westwood(&[]);
    // Latest RTT 60 ms, but the smallest seen is 40 ms.
    let mut d = Driver::new(ms(60), ms(40));
    d.ack_train(&mut cc, 1000, ms(1), MSS);
    let cwnd_before = cc.cwnd();
    // 1.2 MB/s × 40 ms = 48 000 bytes, 40 packets.
    let expected = 1_200_000.0_f64 * 0.040;
    assert!(cwnd_before as f64 > expected, "still in slow start, large");
    cc.on_congestion_event(&d.loss(ms(60), false));
    assert!(
        (cc.ssthresh() as f64 - expected).abs() <= 1.0,
        "{}",
        cc.ssthresh()
    );
    assert_eq!(
        cc.cwnd(),
        cc.ssthresh(),
        "cwnd > ssthresh is cut to ssthresh"
    );
    assert_eq!(cc.state(), CcState::Recovery);
    assert_close(
        internal(&cc, "ssthresh_packets"),
        cc.ssthresh() as f64 / MSS as f64,
    );
    assert_close(internal(&cc, "cwnd_packets"), cc.cwnd() as f64 / MSS as f64);
    assert_close(internal(&cc, "rtt_min_ms"), 40.0);
}

#[test]
fn loss_never_raises_cwnd() {
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(200), ms(200));
    // 1.2 MB/s × 200 ms = 240 000 bytes, far above the 10-packet window,
    // which application-limited ACKs kept from growing.
    d.app_limited = true;
    d.ack_train(&mut cc, 1000, ms(1), MSS);
    assert_eq!(cc.cwnd(), 10 * MSS);
    cc.on_congestion_event(&d.loss(ms(200), false));
    assert!((cc.ssthresh() as f64 - 240_000.0).abs() <= 1.0);
    assert_eq!(cc.cwnd(), 10 * MSS);
}

#[test]
fn ssthresh_is_at_least_two_packets() {
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(10), ms(10));
    // 100 bytes per 10 ms = 10 kB/s; × 10 ms = 100 bytes, under 2 packets.
    d.ack_train(&mut cc, 100, ms(10), 100);
    assert_close(cc.bandwidth_estimate().expect("estimate"), 10_000.0);
    cc.on_congestion_event(&d.loss(ms(10), false));
    assert_eq!(cc.ssthresh(), 2 * MSS);
    assert_eq!(cc.cwnd(), 2 * MSS);
}

#[test]
fn loss_before_any_estimate_halves_like_reno() {
    let mut cc = westwood(&[]);
    let d = Driver::new(ms(20), ms(20));
    cc.on_congestion_event(&d.loss(Duration::ZERO, false));
    assert_eq!(cc.ssthresh(), 5 * MSS);
    assert_eq!(cc.cwnd(), 5 * MSS);
}

#[test]
fn one_reduction_per_recovery_epoch() {
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(50), ms(50));
    d.ack_train(&mut cc, 500, ms(1), MSS);
    cc.on_congestion_event(&d.loss(ms(50), false));
    let (cwnd, ssthresh) = (cc.cwnd(), cc.ssthresh());

    // More losses of packets sent before the reduction, while the estimate
    // keeps changing: no further reduction.
    for _ in 0..5 {
        d.ack(&mut cc, ms(10), 0, 0);
        cc.on_congestion_event(&d.loss(ms(100), false));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (cwnd, ssthresh));
        assert_eq!(cc.state(), CcState::Recovery);
    }
    // ACKs of packets sent before the reduction neither grow the window nor
    // end recovery.
    d.rtt.latest_rtt = ms(200);
    d.ack(&mut cc, ms(1), 10, MSS);
    assert_eq!(cc.cwnd(), cwnd);
    assert_eq!(cc.state(), CcState::Recovery);

    // An ACK of a packet sent after the reduction ends the epoch...
    d.rtt.latest_rtt = ms(50);
    d.ack(&mut cc, ms(100), 1, MSS);
    assert_ne!(cc.state(), CcState::Recovery);
    // ...after which a loss from the old epoch still changes nothing...
    let before = (cc.cwnd(), cc.ssthresh());
    cc.on_congestion_event(&d.loss(ms(200), false));
    assert_eq!((cc.cwnd(), cc.ssthresh()), before);
    assert_ne!(cc.state(), CcState::Recovery);
    // ...and a loss of a packet sent after the reduction starts a new one.
    cc.on_congestion_event(&d.loss(ms(10), false));
    assert_eq!(cc.state(), CcState::Recovery);
}

#[test]
fn persistent_congestion_collapses_to_minimum_window() {
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(30), ms(25));
    d.ack_train(&mut cc, 1000, ms(1), MSS);
    cc.on_congestion_event(&d.loss(ms(30), true));
    assert_eq!(cc.cwnd(), 2 * MSS);
    // 1.2 MB/s × 25 ms = 30 000 bytes.
    assert!((cc.ssthresh() as f64 - 30_000.0).abs() <= 1.0);
    assert_eq!(cc.state(), CcState::SlowStart);

    // Persistent congestion within an epoch still collapses the window.
    let mut cc = westwood(&[]);
    let mut d = Driver::new(ms(30), ms(25));
    d.ack_train(&mut cc, 1000, ms(1), MSS);
    cc.on_congestion_event(&d.loss(ms(30), false));
    assert!(cc.cwnd() > 2 * MSS);
    d.ack(&mut cc, ms(1), 0, 0);
    cc.on_congestion_event(&d.loss(ms(300), true));
    assert_eq!(cc.cwnd(), 2 * MSS);
}

#[test]
fn spurious_loss_restores_window_and_epoch() {
    let spec = ControllerSpec::new("westwood").expect("registered");
    let mut host = ControllerHost::new(&spec, WINDOW);
    let mut d = Driver::new(ms(20), ms(20));
    let t0 = d.t0;
    // Drive the host's controller through the host so that the host sees the
    // ACKs too.
    for i in 1..=1000u64 {
        d.now = t0 + ms(i);
        let sent = d.now - ms(20);
        let acked = [AckedPacket::new(i, MSS, sent, d.now)];
        host.on_ack(&AckEvent {
            now: d.now,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay: Duration::ZERO,
            rtt: d.rtt,
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        });
    }
    let before = (host.cwnd(), host.ssthresh());
    host.checkpoint();
    host.on_congestion_event(d.now, MSS, 1001, d.now - ms(5), 0);
    assert!(host.cwnd() < before.0);
    assert_eq!(host.state(), CcState::Recovery);
    assert!(host.rollback(), "the controller accepts the rollback");
    assert_eq!((host.cwnd(), host.ssthresh()), before);
    assert_eq!(host.state(), CcState::SlowStart);

    // The undone reduction no longer defines an epoch: the same loss
    // reduces again.
    host.on_congestion_event(d.now, MSS, 1001, d.now - ms(5), 0);
    assert!(host.cwnd() < before.0);

    // A rollback never goes below the minimum window.
    let mut cc = westwood(&[]);
    assert!(cc.on_spurious_loss(0, 0));
    assert_eq!((cc.cwnd(), cc.ssthresh()), (2 * MSS, 2 * MSS));
}

/// A GEO path as in fau-sat: 600 ms RTT, a 20 Mbit/s bottleneck, no queue.
const GEO_RTT: Duration = Duration::from_millis(600);
const GEO_RATE_BYTES_PER_SEC: f64 = 20e6 / 8.0;

/// Time one `MSS`-byte packet takes through the GEO bottleneck: 480 µs.
fn geo_spacing() -> Duration {
    Duration::from_nanos((MSS as f64 / GEO_RATE_BYTES_PER_SEC * 1e9).round() as u64)
}

/// A sender on the GEO path. The connection's first ACK (the handshake's)
/// arrives at `t0`; the packets of round `r` leave the bottleneck one
/// `geo_spacing()` apart and their ACKs arrive, as many ACK frames of one
/// packet each, from `t0 + (r + 1) × RTT` on, each packet's RTT exactly
/// 600 ms.
struct GeoPath {
    t0: Instant,
    now: Instant,
    next_pkt: u64,
    rounds: u32,
}

impl GeoPath {
    fn new() -> Self {
        let t0 = Instant::now();
        GeoPath {
            t0,
            now: t0,
            next_pkt: 0,
            rounds: 0,
        }
    }

    fn ack(
        &mut self,
        cc: &mut dyn CongestionController,
        at: Instant,
        size: usize,
        app_limited: bool,
    ) {
        self.now = at;
        self.next_pkt += 1;
        let acked = [AckedPacket::new(self.next_pkt, size, at - GEO_RTT, at)];
        cc.on_ack(&AckEvent {
            now: at,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(GEO_RTT),
            bytes_in_flight: cc.cwnd(),
            app_limited,
            backward_queueing: None,
        });
    }

    /// The ACK of the handshake: one small packet, at `t0`, sent when the
    /// sender had nothing else to send.
    fn handshake(&mut self, cc: &mut dyn CongestionController) {
        let t0 = self.t0;
        self.ack(cc, t0, 100, true);
    }

    /// The first `acks` ACKs of the next round.
    fn round(&mut self, cc: &mut dyn CongestionController, acks: usize) {
        self.rounds += 1;
        let start = self.t0 + GEO_RTT * self.rounds;
        for i in 0..acks {
            let at = start + geo_spacing() * u32::try_from(i).expect("small round");
            self.ack(cc, at, MSS, false);
        }
    }
}

/// Westwood+'s two-stage filter written again from its equations, for a
/// sample over a window of `interval_s` seconds each stage keeping
/// `weight_per_ref ^ (interval_s / ref_s)` of its old value (`ref_s` = 0: the
/// weight per sample). The first sample fills both stages.
fn reference_two_stage(samples: &[(f64, f64)], weight_per_ref: f64, ref_s: f64) -> f64 {
    let mut stages: Option<(f64, f64)> = None;
    for &(rate, interval_s) in samples {
        let w = if ref_s > 0.0 {
            (interval_s / ref_s * weight_per_ref.ln()).exp()
        } else {
            weight_per_ref
        };
        stages = Some(match stages {
            None => (rate, rate),
            Some((first, second)) => {
                let first = w * first + (1.0 - w) * rate;
                (first, w * second + (1.0 - w) * first)
            }
        });
    }
    stages.expect("at least one sample").1
}

#[test]
fn geo_paced_flow_estimate_reaches_the_rate_in_a_few_rounds() {
    // The data comes at exactly the bottleneck rate, one 1200-byte packet
    // every 480 µs, after a handshake ACK one RTT earlier: the window that
    // ACK opens holds one packet in 600 ms. Today's filter started from that
    // sample still reads 83% low five rounds (3 s) later; a filter with
    // Westwood+'s time constant (7/8 per 50 ms, about 374 ms) is within 1%.
    let per_round = (GEO_RATE_BYTES_PER_SEC * GEO_RTT.as_secs_f64() / MSS as f64).round() as usize;
    assert_eq!(per_round, 1250);
    let mut cc = westwood(&[]);
    let mut path = GeoPath::new();
    path.handshake(&mut cc);
    let mut estimates = Vec::new();
    for _ in 0..6 {
        path.round(&mut cc, per_round);
        estimates.push(cc.bandwidth_estimate().expect("a window closed"));
    }
    let error = |bwe: f64| (bwe - GEO_RATE_BYTES_PER_SEC).abs() / GEO_RATE_BYTES_PER_SEC;
    // After the first round only the handshake window has closed.
    assert_close(estimates[0], MSS as f64 / GEO_RTT.as_secs_f64());
    // Five samples of the true rate later.
    assert!(error(estimates[5]) < 0.01, "{estimates:?}");
    assert_close(
        internal(&cc, "bwe_sample_bytes_per_s"),
        GEO_RATE_BYTES_PER_SEC,
    );
}

/// Slow start on the GEO path from the handshake to a loss in the fifth
/// round (10, 20, 40, 80 packets, then 30 ACKs of the 160-packet round).
/// Returns the window after the loss and the samples the test expects
/// Westwood+ took, computed from the windowing rule: the handshake's window
/// holds the first ACK of round 0; every later window runs from the first
/// ACK of one round to the first ACK of the next, one RTT, and holds the
/// earlier round's packets.
fn geo_slow_start_then_loss(pairs: &[&str]) -> (Westwood, Vec<(f64, f64)>) {
    let mut cc = westwood(pairs);
    let mut path = GeoPath::new();
    path.handshake(&mut cc);
    let rtt_s = GEO_RTT.as_secs_f64();
    assert_eq!(cc.cwnd(), 10 * MSS);
    let mut samples = vec![(MSS as f64 / rtt_s, rtt_s)];
    let mut packets = 10;
    for _ in 0..4 {
        assert_eq!(cc.cwnd(), packets * MSS, "slow start doubles per round");
        path.round(&mut cc, packets);
        samples.push((packets as f64 * MSS as f64 / rtt_s, rtt_s));
        packets *= 2;
    }
    path.round(&mut cc, 30);
    assert_eq!(cc.state(), CcState::SlowStart);
    let sent = path.now - GEO_RTT + geo_spacing();
    cc.on_congestion_event(&CongestionEvent {
        now: path.now,
        lost_bytes: MSS,
        largest_lost_pkt_num: path.next_pkt + 1,
        largest_lost_time_sent: sent,
        persistent_congestion: false,
        bytes_in_flight: cc.cwnd(),
    });
    (cc, samples)
}

#[test]
fn geo_first_loss_keeps_the_rate_slow_start_reached() {
    let (cc, samples) = geo_slow_start_then_loss(&[]);
    let rtt_min_s = GEO_RTT.as_secs_f64();
    let bwe = reference_two_stage(&samples, W, 0.050);
    let expected = bwe * rtt_min_s;
    assert_eq!(cc.state(), CcState::Recovery);
    assert!(
        (cc.cwnd() as f64 - expected).abs() <= 1.0,
        "cwnd {} vs BWE x RTTmin {expected}",
        cc.cwnd()
    );
    assert_eq!(cc.cwnd(), cc.ssthresh());
    // The last full round delivered 80 packets in an RTT; the window keeps
    // at least half of that, not the 3 packets a filter that still holds
    // the handshake's sample gives.
    let last_round_packets = samples.last().expect("samples").0 * rtt_min_s / MSS as f64;
    assert_close(last_round_packets, 80.0);
    assert!(
        (cc.cwnd() as f64 / MSS as f64) >= last_round_packets / 2.0,
        "{} packets",
        (cc.cwnd() as f64 / MSS as f64)
    );
}

#[test]
fn geo_first_loss_with_the_per_sample_filter() {
    // filter_reference_window_ms=0 keeps 7/8 per sample whatever its window
    // (Linux's filter): on this path the estimate still sits near the
    // handshake's sample and the window collapses to a few packets.
    let (cc, samples) = geo_slow_start_then_loss(&["filter_reference_window_ms=0"]);
    let bwe = reference_two_stage(&samples, W, 0.0);
    let expected = bwe * GEO_RTT.as_secs_f64();
    assert!(
        (cc.cwnd() as f64 - expected).abs() <= 1.0,
        "cwnd {} vs BWE x RTTmin {expected}",
        cc.cwnd()
    );
    assert!((cc.cwnd() as f64 / MSS as f64) < 6.0);
}

#[test]
fn datagram_size_change_keeps_the_minimum_window() {
    let mut cc = westwood(&[]);
    let d = Driver::new(ms(20), ms(20));
    cc.on_congestion_event(&d.loss(Duration::ZERO, true));
    assert_eq!(cc.cwnd(), 2 * MSS);
    cc.on_max_datagram_size(1500);
    assert_eq!(cc.cwnd(), 3000);
    assert!(cc.ssthresh() >= 3000);
}

#[derive(Clone, Debug)]
enum Op {
    Ack {
        dt_us: u64,
        packets: usize,
        size: usize,
        rtt_ms: u64,
        min_rtt_ms: u64,
        sent_ago_ms: u64,
        app_limited: bool,
    },
    Loss {
        dt_us: u64,
        sent_ago_ms: u64,
        persistent: bool,
    },
    Spurious {
        cwnd: usize,
        ssthresh: usize,
    },
    DatagramSize(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let size = prop_oneof![0..=1500usize, Just(usize::MAX), Just(usize::MAX / 3)];
    prop_oneof![
        6 => (
            0..200_000u64,
            0..20usize,
            size,
            0..2_000u64,
            0..2_000u64,
            0..3_000u64,
            any::<bool>(),
        )
            .prop_map(
                |(dt_us, packets, size, rtt_ms, min_rtt_ms, sent_ago_ms, app_limited)| Op::Ack {
                    dt_us,
                    packets,
                    size,
                    rtt_ms,
                    min_rtt_ms,
                    sent_ago_ms,
                    app_limited,
                }
            ),
        2 => (0..500_000u64, 0..3_000u64, any::<bool>()).prop_map(
            |(dt_us, sent_ago_ms, persistent)| Op::Loss {
                dt_us,
                sent_ago_ms,
                persistent,
            }
        ),
        1 => (any::<usize>(), any::<usize>())
            .prop_map(|(cwnd, ssthresh)| Op::Spurious { cwnd, ssthresh }),
        1 => (1..=65_527usize).prop_map(Op::DatagramSize),
    ]
}

proptest! {
    #[test]
    fn random_events_keep_the_window_sane(
        ops in prop::collection::vec(op(), 1..200),
        history_weight in 0.0..0.999f64,
        min_window_ms in 0..200u64,
        reference_ms in 0..200u64,
    ) {
        let weight = format!("filter_history_weight={history_weight}");
        let window = format!("min_sample_window_ms={min_window_ms}");
        let reference = format!("filter_reference_window_ms={reference_ms}");
        let mut cc = westwood(&[&weight, &window, &reference]);
        let t0 = Instant::now();
        let mut now = t0;
        let mut mss = MSS;
        let mut pkt = 0u64;
        for op in ops {
            match op {
                Op::Ack { dt_us, packets, size, rtt_ms, min_rtt_ms, sent_ago_ms, app_limited } => {
                    now += Duration::from_micros(dt_us);
                    let sent = now.checked_sub(ms(sent_ago_ms)).unwrap_or(t0);
                    let acked: Vec<AckedPacket> = (0..packets)
                        .map(|_| {
                            pkt += 1;
                            AckedPacket::new(pkt, size, sent, now)
                        })
                        .collect();
                    cc.on_ack(&AckEvent {
                        now,
                        acked: &acked,
                        summary: AckSummary::of(&acked, 0),
                        ack_delay: Duration::ZERO,
                        rtt: RttSnapshot {
                            min_rtt: ms(min_rtt_ms),
                            ..RttSnapshot::uniform(ms(rtt_ms))
                        },
                        bytes_in_flight: 0,
                        app_limited,
                        backward_queueing: None,
                    });
                }
                Op::Loss { dt_us, sent_ago_ms, persistent } => {
                    now += Duration::from_micros(dt_us);
                    cc.on_congestion_event(&CongestionEvent {
                        now,
                        lost_bytes: mss,
                        largest_lost_pkt_num: pkt + 1,
                        largest_lost_time_sent: now.checked_sub(ms(sent_ago_ms)).unwrap_or(t0),
                        persistent_congestion: persistent,
                        bytes_in_flight: 0,
                    });
                }
                Op::Spurious { cwnd, ssthresh } => {
                    prop_assert!(cc.on_spurious_loss(cwnd, ssthresh));
                }
                Op::DatagramSize(size) => {
                    mss = size;
                    cc.on_max_datagram_size(size);
                }
            }
            if let Some(bwe) = cc.bandwidth_estimate() {
                prop_assert!(bwe.is_finite() && bwe >= 0.0, "bwe {bwe}");
            }
            let mut out = Internals::default();
            cc.internals(&mut out);
            for (name, value) in out.fields() {
                if let InternalValue::Float(v) = value {
                    prop_assert!(v.is_finite(), "{name} = {v}");
                }
            }
        }
    }
}

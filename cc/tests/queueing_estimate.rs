//! The fallback queueing estimate (`shared::queueing_estimate`, what RoVegas
//! runs without AQT-enabled routers) against known injected delays over long
//! transfers, with the peer's clock offset by up to an hour, drifting by ±50
//! and ±100 ppm, and stepping forward and back.
//!
//! A packet leaves every 10 ms over a GEO path (270 ms each way, up to 2 ms of
//! jitter each way); the peer acknowledges each one alone after 1, 11 or
//! 21 ms of ACK delay, which it measures on its own clock. ACKs are handed to
//! the estimator in the order they arrive, their receive times judged first
//! by the host's `PeerClock` as the stack does.

use std::time::{Duration, Instant};

use vegas_cc::shared::peer_clock::{PeerClock as HostClock, STEP_CONFIRMED_AFTER};
use vegas_cc::shared::queueing_estimate::{EstimatorConfig, QueueingEstimator};
use vegas_cc::{AckEvent, AckSummary, AckedPacket, RttSnapshot};

const ONE_WAY: f64 = 0.270; // seconds, each direction (GEO)
const SPACING: f64 = 0.010; // a packet every 10 ms
const JITTER: f64 = 0.002; // at most, each direction

/// The peer's clock: `offset` ahead of ours at t = 0, running `drift_ppm`
/// faster, optionally stepping by `step` seconds at `step_at`.
#[derive(Clone, Copy)]
struct PeerClock {
    offset: f64,
    drift_ppm: f64,
    step_at: f64,
    step: f64,
}

impl PeerClock {
    fn steady(offset: f64, drift_ppm: f64) -> Self {
        PeerClock {
            offset,
            drift_ppm,
            step_at: f64::INFINITY,
            step: 0.0,
        }
    }

    /// The peer's timestamp (seconds since its basis) at true time `t`.
    fn at(&self, t: f64) -> f64 {
        let stepped = if t >= self.step_at { self.step } else { 0.0 };
        self.offset + t * (1.0 + self.drift_ppm * 1e-6) + stepped
    }
}

/// Deterministic jitter in [0, 2) ms.
struct Jitter(u64);

impl Jitter {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % 2000) as f64 * 1e-6
    }
}

fn secs(v: f64) -> Duration {
    Duration::from_secs_f64(v)
}

/// One acknowledged packet and what the estimator made of it.
struct Sample {
    /// When the packet was sent (true time, seconds).
    at: f64,
    forward: Option<Duration>,
    backward: Option<Duration>,
    /// Whether its ACK acknowledged a new largest packet: only such ACKs
    /// give a backward sample (see the module documentation).
    new_largest: bool,
}

/// Runs a transfer of `duration` seconds with forward queueing `qf(t)` and
/// backward queueing `qb(t)` (seconds, by true time) through an estimator
/// with `config`, and returns it and its estimates in packet order.
fn run_with(
    config: EstimatorConfig,
    duration: f64,
    peer: PeerClock,
    qf: impl Fn(f64) -> f64,
    qb: impl Fn(f64) -> f64,
) -> (QueueingEstimator, Vec<Sample>) {
    let t0 = Instant::now();
    let mut jitter = Jitter(7);
    // (ACK arrival, packet, reported ACK delay) per packet.
    let mut acks = Vec::new();
    let mut sent = 0.0;
    let mut pkt_num = 0u64;
    while sent < duration {
        let arrival = sent + ONE_WAY + qf(sent) + jitter.next();
        let ack_delay = 0.001 + (sent * 1000.0) % 20.0 * 1e-3; // 1..21 ms
        let ack_sent = arrival + ack_delay;
        let ack_arrival = ack_sent + ONE_WAY + qb(ack_sent) + jitter.next();
        let mut packet = AckedPacket::new(pkt_num, 1200, t0 + secs(sent), t0 + secs(ack_arrival));
        packet.receive_time = Some(secs(peer.at(arrival)));
        // The peer measures its ACK delay with its own (monotonic) clock.
        let reported_ack_delay =
            secs((peer.at(ack_sent) - peer.at(arrival)).clamp(0.0, ack_delay * 2.0));
        acks.push((ack_arrival, sent, packet, reported_ack_delay));
        sent += SPACING;
        pkt_num += 1;
    }
    acks.sort_by(|a, b| a.0.total_cmp(&b.0));

    let mut estimator = QueueingEstimator::new(config);
    // The host's judge of the peer's clock, as the stack has it.
    let mut host_clock = HostClock::default();
    let mut samples = Vec::with_capacity(acks.len());
    let mut forward = Vec::new();
    let mut largest: Option<u64> = None;
    for (_, sent, mut packet, ack_delay) in acks {
        if let Some(received) = packet.receive_time {
            host_clock.on_ack_frame();
            let judged = host_clock.judge(received, packet.time_sent, packet.rtt);
            packet.receive_time = judged.map(|_| received);
            packet.clock_epoch = judged.unwrap_or(0);
        }
        let acked = [packet];
        let ack = AckEvent {
            now: packet.time_acked,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay,
            rtt: RttSnapshot::uniform(packet.rtt),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        };
        let backward = estimator.on_ack(&ack, &mut forward);
        let new_largest = largest.is_none_or(|l| packet.pkt_num > l);
        if new_largest {
            largest = Some(packet.pkt_num);
        }
        samples.push(Sample {
            at: sent,
            forward: forward[0],
            backward,
            new_largest,
        });
    }
    samples.sort_by(|a, b| a.at.total_cmp(&b.at));
    (estimator, samples)
}

fn run(
    duration: f64,
    peer: PeerClock,
    qf: impl Fn(f64) -> f64,
    qb: impl Fn(f64) -> f64,
) -> (QueueingEstimator, Vec<Sample>) {
    run_with(EstimatorConfig::default(), duration, peer, qf, qb)
}

fn ms(d: Option<Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

/// Every estimate of packets sent in [from, to) lies within `tolerance_ms(t)`
/// of the injected queueing; a backward estimate is required of every ACK of
/// a new largest packet.
fn check(
    label: &str,
    samples: &[Sample],
    (from, to): (f64, f64),
    (forward_ms, backward_ms): (f64, f64),
    tolerance_ms: impl Fn(f64) -> f64,
) {
    let mut checked = 0;
    for s in samples.iter().filter(|s| s.at >= from && s.at < to) {
        let tolerance = tolerance_ms(s.at);
        let f = ms(s.forward);
        assert!(
            (f - forward_ms).abs() <= tolerance,
            "{label}: t={:.2}s forward {f:.2} ms, expected {forward_ms} ± {tolerance:.2} ms",
            s.at
        );
        if s.new_largest || s.backward.is_some() {
            let b = ms(s.backward);
            assert!(
                (b - backward_ms).abs() <= tolerance,
                "{label}: t={:.2}s backward {b:.2} ms, expected {backward_ms} ± {tolerance:.2} ms",
                s.at
            );
        }
        checked += 1;
    }
    assert!(
        checked > 100,
        "{label}: only {checked} samples in [{from}, {to})"
    );
}

const FORWARD_BURST: (f64, f64) = (200.0, 230.0);
const BACKWARD_BURST: (f64, f64) = (400.0, 420.0);

fn forward_burst(t: f64) -> f64 {
    if (FORWARD_BURST.0..FORWARD_BURST.1).contains(&t) {
        0.080
    } else {
        0.0
    }
}

fn backward_burst(t: f64) -> f64 {
    if (BACKWARD_BURST.0..BACKWARD_BURST.1).contains(&t) {
        0.050
    } else {
        0.0
    }
}

/// The estimator's documented error bound (module documentation, "Clock
/// drift"): jitter, plus (`clock_drift_ppm` + real drift) × the time since
/// the last queue-free sample, here the time since the burst began.
fn bound_ms(drift_ppm: f64, burst_start: f64) -> impl Fn(f64) -> f64 {
    let rise_ppm = EstimatorConfig::default().clock_drift_ppm + drift_ppm.abs();
    move |t: f64| {
        let since_queue_free = (t - burst_start).max(0.0) + 1.0;
        JITTER * 1e3 + 0.1 + rise_ppm * 1e-6 * since_queue_free * 1e3
    }
}

#[test]
fn injected_queueing_is_recovered_despite_offset_and_drift() {
    for (offset, drift_ppm) in [
        (5.0, 0.0),
        (5.0, 50.0),
        (3700.0, -50.0),
        (0.5, 100.0),
        (12.0, -100.0),
    ] {
        let (estimator, samples) = run(
            600.0,
            PeerClock::steady(offset, drift_ppm),
            forward_burst,
            backward_burst,
        );
        let label = format!("offset {offset} s, drift {drift_ppm} ppm");
        // Queue-free: 2 ms of jitter plus what is left of the drift.
        let tol = |_| 3.0;
        check(&label, &samples, (60.0, 195.0), (0.0, 0.0), tol);
        check(&label, &samples, (240.0, 395.0), (0.0, 0.0), tol);
        check(&label, &samples, (430.0, 600.0), (0.0, 0.0), tol);
        // In a burst, the floor of the queued direction keeps rising at
        // clock_drift_ppm while the drift may lower the true one: the
        // documented bound, which grows over the burst.
        // Measured worst errors (ms, forward burst / backward burst): 2.87 /
        // 1.97 at 0 ppm, 1.98 / 2.86 at +50, 4.29 / 1.97 at -50, 2.00 / 3.83
        // at +100, 5.72 / 1.99 at -100: the direction whose fixed delay the
        // drift shrinks is underestimated by up to (100 + |drift|) ppm × the
        // burst's age.
        check(
            &label,
            &samples,
            (205.0, 229.0),
            (80.0, 0.0),
            bound_ms(drift_ppm, FORWARD_BURST.0),
        );
        check(
            &label,
            &samples,
            (405.0, 419.0),
            (0.0, 50.0),
            bound_ms(drift_ppm, BACKWARD_BURST.0),
        );
        assert_eq!(estimator.rejected_samples(), 0, "{label}");
    }
}

#[test]
fn a_drifting_peer_clock_is_followed_where_a_plain_minimum_is_not() {
    let drift_ppm = 80.0;
    let peer = PeerClock::steady(5.0, drift_ppm);
    let (estimator, samples) = run(600.0, peer, |_| 0.0, |_| 0.0);
    check("80 ppm", &samples, (100.0, 600.0), (0.0, 0.0), |_| 3.0);
    assert_eq!(estimator.rejected_samples(), 0);
    // The drift over 600 s: what a minimum that cannot rise reports as
    // forward queueing by the end (within what the joint bound lets through:
    // the RTT's excess over its minimum, ACK delay variation included).
    assert!(drift_ppm * 1e-6 * 600.0 * 1e3 > 40.0);
    let plain = EstimatorConfig {
        clock_drift_ppm: 0.0,
    };
    let (_, plain_samples) = run_with(plain, 600.0, peer, |_| 0.0, |_| 0.0);
    let late: Vec<f64> = plain_samples
        .iter()
        .filter(|s| s.at >= 500.0)
        .map(|s| ms(s.forward))
        .collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!(mean > 10.0, "plain minimum: mean forward {mean:.2} ms");
}

/// Exactly `STEP_CONFIRMED_AFTER − 1` of the packets that arrived after the
/// step at 300 s (sent after 299.72 s, 270 ms and up to 2 ms of jitter
/// before it) were `refused`, all among the first
/// ten sent.
fn assert_refused_just_after_the_step(samples: &[Sample], refused: impl Fn(&Sample) -> bool) {
    let after: Vec<&Sample> = samples.iter().filter(|s| s.at > 299.72).collect();
    let first: Vec<bool> = after.iter().take(10).map(|s| refused(s)).collect();
    let all = after.iter().filter(|s| refused(s)).count();
    let expected = (STEP_CONFIRMED_AFTER - 1) as usize;
    assert_eq!(all, expected, "{first:?}");
    assert_eq!(first.iter().filter(|r| **r).count(), expected, "{first:?}");
}

#[test]
fn a_peer_clock_stepping_forward_is_rejected_then_followed() {
    let peer = PeerClock {
        offset: 5.0,
        drift_ppm: 0.0,
        step_at: 300.0,
        step: 3.0,
    };
    let (estimator, samples) = run(400.0, peer, |_| 0.0, |_| 0.0);
    // The first packets to arrive after the step claim 3 s of forward
    // queueing in a 0.6 s RTT: refused by the host's judge, until the eighth
    // in a row (in the order their ACKs arrive) is believed as a new clock
    // and the estimator starts over.
    assert_refused_just_after_the_step(&samples, |s| s.forward.is_none());
    assert_eq!(estimator.clock_steps(), 1);
    check("+3 s", &samples, (301.0, 400.0), (0.0, 0.0), |_| 3.0);
}

#[test]
fn a_peer_clock_going_backwards_is_rejected_then_followed() {
    let peer = PeerClock {
        offset: 20.0,
        drift_ppm: 0.0,
        step_at: 300.0,
        step: -5.0,
    };
    let (estimator, samples) = run(400.0, peer, forward_burst, |_| 0.0);
    assert_refused_just_after_the_step(&samples, |s| s.forward.is_none() && s.backward.is_none());
    assert_eq!(estimator.clock_steps(), 1);
    check(
        "-5 s",
        &samples,
        (205.0, 229.0),
        (80.0, 0.0),
        bound_ms(0.0, FORWARD_BURST.0),
    );
    check("-5 s", &samples, (301.0, 400.0), (0.0, 0.0), |_| 3.0);
    // Estimates are never negative nor above the RTT.
    for s in &samples {
        for v in [s.forward, s.backward].into_iter().flatten() {
            assert!(v <= secs(2.0 * ONE_WAY + 0.2));
        }
    }
}

/// The joint bound (forward + backward <= RTT - min RTT, every packet)
/// holds for every packet of an ACK that acknowledges several, not only its
/// last (the estimator checks it while it walks the packets). Reference: the common factor computed here from the packets' figures.
#[test]
fn the_joint_bound_holds_for_every_packet_of_an_ack() {
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    let mut est = QueueingEstimator::new(EstimatorConfig::default());
    // Two queue-free exchanges set both floors (forward 270 ms, backward
    // 280 ms, peer clock 10 s ahead, 2 ms ACK delay) and a 552 ms minimum.
    let mut forward = Vec::new();
    for (n, sent) in [(0u64, 0u64), (1, 10)] {
        let sent = t0 + ms(sent);
        let arrival = sent + ms(552);
        let mut p = AckedPacket::new(n, 1200, sent, arrival);
        p.receive_time = Some(ms(10_000) + (sent - t0) + ms(270));
        let acked = [p];
        let ack = AckEvent {
            now: arrival,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay: ms(2),
            rtt: RttSnapshot::uniform(p.rtt),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        };
        est.on_ack(&ack, &mut forward);
    }
    // One ACK of three packets, arriving 1 s later with 10 ms of backward
    // queueing. The first packet claims 60 ms of forward queueing but its
    // round trip is only 30 ms above the minimum: 70 ms claimed, 30 allowed.
    // The second claims nothing and is 40 ms above; the third (largest)
    // claims 20 ms and is 30 ms above the minimum.
    let arrival = t0 + ms(1_600);
    let packets = [(2u64, 60u64, 30u64), (3, 0, 40), (4, 20, 30)];
    let acked: Vec<AckedPacket> = packets
        .iter()
        .map(|&(n, qf, excess)| {
            let rtt = ms(552 + excess);
            let sent = arrival - rtt;
            let mut p = AckedPacket::new(n, 1200, sent, arrival);
            p.receive_time = Some(ms(10_000) + (sent - t0) + ms(270 + qf));
            p
        })
        .collect();
    // The largest was received 270 + 20 ms after it was sent; the ACK left
    // 2 ms later and took 280 + 10 ms.
    assert_eq!(acked[2].rtt, ms(270 + 20 + 2 + 280 + 10));
    let ack = AckEvent {
        now: arrival,
        acked: &acked,
        summary: AckSummary::of(&acked, 0),
        ack_delay: ms(2),
        rtt: RttSnapshot::uniform(ms(552)),
        bytes_in_flight: 0,
        app_limited: false,
        backward_queueing: None,
    };
    let backward = est.on_ack(&ack, &mut forward);
    // The floors rose by 100 ppm of about 1.6 s (160 us) since they were
    // set, so the raw estimates are a little below 60/0/20 and 10 ms.
    let raw_forward = [ms(60), ms(0), ms(20)];
    let raw_backward = ms(10);
    let slack = Duration::from_micros(200);
    // The tightest packet: allowed / claimed, the first one's 30 / 70.
    let scale = packets
        .iter()
        .zip(raw_forward)
        .map(|(&(_, _, excess), qf)| excess as f64 / (qf + raw_backward).as_secs_f64() / 1e3)
        .fold(1.0f64, f64::min);
    assert!((scale - 30.0 / 70.0).abs() < 1e-9, "{scale}");
    for (i, (got, raw)) in forward.iter().zip(raw_forward).enumerate() {
        let got = got.unwrap_or_else(|| panic!("packet {i}: no estimate"));
        let want = raw.mul_f64(scale);
        assert!(
            got.abs_diff(want) <= slack,
            "packet {i}: {got:?}, want {want:?}"
        );
        let allowed = acked[i].rtt - ms(552);
        assert!(got + backward.unwrap() <= allowed, "packet {i}");
    }
    let b = backward.expect("a backward estimate");
    assert!(b.abs_diff(raw_backward.mul_f64(scale)) <= slack, "{b:?}");
}

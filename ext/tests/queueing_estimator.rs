//! The fallback queueing estimate against known injected delays, with the
//! peer's clock offset, drifting, and stepping.

use std::time::{Duration, Instant};

use quic_ext::estimator::{EstimatorConfig, QueueingEstimator};

const ONE_WAY: f64 = 0.270; // seconds, each direction (GEO)
const SPACING: f64 = 0.010; // a packet every 10 ms

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

struct Sample {
    at: f64,
    forward: Option<Duration>,
    backward: Option<Duration>,
}

/// Runs a transfer of `duration` seconds with forward queueing `qf(t)` and
/// backward queueing `qb(t)` (seconds, by true time) and returns the
/// estimates.
fn run(
    duration: f64,
    peer: PeerClock,
    qf: impl Fn(f64) -> f64,
    qb: impl Fn(f64) -> f64,
) -> (QueueingEstimator, Vec<Sample>) {
    let t0 = Instant::now();
    let mut estimator = QueueingEstimator::new(EstimatorConfig::default());
    let mut jitter = Jitter(7);
    let mut samples = Vec::new();
    let mut sent = 0.0;
    while sent < duration {
        let arrival = sent + ONE_WAY + qf(sent) + jitter.next();
        let ack_delay = 0.001 + (sent * 1000.0) % 20.0 * 1e-3; // 1..21 ms
        let ack_sent = arrival + ack_delay;
        let ack_arrival = ack_sent + ONE_WAY + qb(ack_sent) + jitter.next();
        let rtt = ack_arrival - sent;
        let receive_time = secs(peer.at(arrival));
        // The peer measures its ACK delay with its own (monotonic) clock.
        let reported_ack_delay =
            secs((peer.at(ack_sent) - peer.at(arrival)).clamp(0.0, ack_delay * 2.0));
        let forward = estimator.forward(t0 + secs(sent), receive_time, secs(rtt));
        let backward = estimator.backward(
            t0 + secs(ack_arrival),
            receive_time,
            reported_ack_delay,
            secs(rtt),
        );
        samples.push(Sample {
            at: sent,
            forward,
            backward,
        });
        sent += SPACING;
    }
    (estimator, samples)
}

fn ms(d: Option<Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

fn check(
    samples: &[Sample],
    from: f64,
    to: f64,
    forward_ms: f64,
    backward_ms: f64,
    tolerance_ms: f64,
) {
    let mut checked = 0;
    for s in samples.iter().filter(|s| s.at >= from && s.at < to) {
        let (f, b) = (ms(s.forward), ms(s.backward));
        assert!(
            (f - forward_ms).abs() <= tolerance_ms,
            "t={:.2}s forward {f:.2} ms, expected {forward_ms} ms",
            s.at
        );
        assert!(
            (b - backward_ms).abs() <= tolerance_ms,
            "t={:.2}s backward {b:.2} ms, expected {backward_ms} ms",
            s.at
        );
        checked += 1;
    }
    assert!(checked > 100, "only {checked} samples in [{from}, {to})");
}

fn forward_burst(t: f64) -> f64 {
    if (200.0..230.0).contains(&t) {
        0.080
    } else {
        0.0
    }
}

fn backward_burst(t: f64) -> f64 {
    if (400.0..420.0).contains(&t) {
        0.050
    } else {
        0.0
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
        let (_, samples) = run(
            600.0,
            PeerClock::steady(offset, drift_ppm),
            forward_burst,
            backward_burst,
        );
        // 3 ms: 2 ms of jitter plus what is left of the drift.
        let tol = 3.0;
        check(&samples, 60.0, 195.0, 0.0, 0.0, tol);
        check(&samples, 205.0, 229.0, 80.0, 0.0, tol);
        check(&samples, 240.0, 395.0, 0.0, 0.0, tol);
        check(&samples, 405.0, 419.0, 0.0, 50.0, tol);
        check(&samples, 430.0, 600.0, 0.0, 0.0, tol);
    }
}

#[test]
fn drift_is_estimated_and_a_plain_minimum_would_not_do() {
    let drift_ppm = 80.0;
    let (estimator, samples) = run(600.0, PeerClock::steady(5.0, drift_ppm), |_| 0.0, |_| 0.0);
    let forward_drift = estimator.forward_tracker().drift_ppm();
    let backward_drift = estimator.backward_tracker().drift_ppm();
    assert!(
        (forward_drift - drift_ppm).abs() < 10.0,
        "forward drift {forward_drift}"
    );
    assert!(
        (backward_drift + drift_ppm).abs() < 10.0,
        "backward drift {backward_drift}"
    );
    check(&samples, 100.0, 600.0, 0.0, 0.0, 3.0);
    // The uncompensated drift after 600 s: what a plain running minimum
    // would have reported as queueing.
    assert!(drift_ppm * 1e-6 * 600.0 * 1e3 > 40.0);
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
    // The first packets to arrive after the step claim 3 s of queueing in a
    // 0.6 s RTT: rejected, the eighth with a rebase.
    let just_after: Vec<&Sample> = samples.iter().filter(|s| s.at > 299.725).take(8).collect();
    assert!(just_after.iter().all(|s| s.forward.is_none()));
    let rejected = estimator.forward_tracker().rejected();
    assert!(
        rejected.impossible >= 7 && rejected.rebases >= 1,
        "{rejected:?}"
    );
    // The backward direction sees the peer clock jump too (its timestamps
    // now claim a negative delay, which is a new minimum, not a rejection).
    check(&samples, 301.0, 400.0, 0.0, 0.0, 3.0);
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
    let rejected = estimator.forward_tracker().rejected();
    assert!(
        rejected.backwards >= 7 && rejected.rebases >= 1,
        "{rejected:?}"
    );
    let backward_rejected = estimator.backward_tracker().rejected();
    assert!(backward_rejected.rebases >= 1, "{backward_rejected:?}");
    check(&samples, 301.0, 400.0, 0.0, 0.0, 3.0);
    // Estimates are never negative nor above the RTT.
    for s in &samples {
        for v in [s.forward, s.backward].into_iter().flatten() {
            assert!(v <= secs(2.0 * ONE_WAY + 0.2));
        }
    }
}

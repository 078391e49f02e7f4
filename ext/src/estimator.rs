//! Queueing times without AQT-enabled routers, estimated from receive
//! timestamps and ACK delay (docs/extensions.md, "Fallback estimate"):
//!
//! - forward, per acknowledged packet: one-way delay = R - S (peer's receive
//!   time minus our send time), minus its minimum;
//! - backward, per ACK: ACK arrival - (R of the largest acknowledged + ACK
//!   delay), minus its minimum.
//!
//! The two clocks differ by an unknown offset, which the minimum removes, and
//! drift apart slowly (crystals: tens of ppm; 50 ppm is 180 ms an hour, as much
//! as a satellite queue), which a plain running minimum would turn into a
//! growing phantom queue or a queue that seems to vanish. So each direction
//! keeps a *drift-compensated windowed minimum*: the one-way delay's minimum
//! in each window of [`EstimatorConfig::window`], for the last
//! [`EstimatorConfig::windows_kept`] windows; the drift is the Theil-Sen slope
//! (median of pairwise slopes, robust to the windows a queue inflated) through
//! those minima, clamped to [`EstimatorConfig::max_drift_ppm`]; the baseline is
//! the smallest drift-corrected minimum. A standing queue that lasts longer
//! than the whole history (window × windows_kept, 256 s by default) becomes
//! part of the baseline: the price of following drift and route changes.
//!
//! Hostile or broken timestamps never reach the controller as queueing:
//! - a peer timestamp more than [`EstimatorConfig::backwards_tolerance`]
//!   before the latest one (the peer clock went back) is rejected;
//! - a queueing estimate larger than the RTT sample it belongs to is
//!   impossible (the clock jumped forward, or lies) and is rejected;
//! - [`EstimatorConfig::rebase_after`] rejections in a row mean the peer clock
//!   stepped for good: the history is dropped and the estimate starts over.
//!
//! Estimates are clamped to [0, RTT sample].

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Tuning of the estimator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimatorConfig {
    pub window: Duration,
    pub windows_kept: usize,
    pub max_drift_ppm: f64,
    pub backwards_tolerance: Duration,
    pub rebase_after: u32,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        EstimatorConfig {
            window: Duration::from_secs(8),
            windows_kept: 32,
            max_drift_ppm: 200.0,
            backwards_tolerance: Duration::from_secs(1),
            rebase_after: 8,
        }
    }
}

/// Why a sample gave no estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RejectedSamples {
    /// Peer timestamps that went backwards.
    pub backwards: u64,
    /// Estimates above the RTT sample.
    pub impossible: u64,
    /// Times the history was dropped after repeated rejections.
    pub rebases: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct WindowMinimum {
    /// Seconds since the tracker's epoch (local clock).
    at: f64,
    /// One-way delay up to the clock offset, microseconds.
    delay: f64,
}

/// One direction's one-way delay up to the clock offset, and the queueing
/// above its drift-compensated minimum.
#[derive(Clone, Debug)]
pub struct OneWayDelayTracker {
    config: EstimatorConfig,
    epoch: Option<Instant>,
    window_start: f64,
    current: Option<WindowMinimum>,
    history: VecDeque<WindowMinimum>,
    /// Microseconds per second (ppm).
    drift: f64,
    latest_remote_us: Option<u64>,
    consecutive_rejections: u32,
    rejected: RejectedSamples,
}

impl OneWayDelayTracker {
    pub fn new(config: EstimatorConfig) -> Self {
        OneWayDelayTracker {
            config,
            epoch: None,
            window_start: 0.0,
            current: None,
            history: VecDeque::new(),
            drift: 0.0,
            latest_remote_us: None,
            consecutive_rejections: 0,
            rejected: RejectedSamples::default(),
        }
    }

    /// Microseconds from the epoch to `t` (negative before it); sets the
    /// epoch on first use.
    pub fn local_micros(&mut self, t: Instant) -> i64 {
        let epoch = *self.epoch.get_or_insert(t);
        let micros = |d: Duration| d.as_micros().min(i64::MAX as u128) as i64;
        if t >= epoch {
            micros(t - epoch)
        } else {
            -micros(epoch - t)
        }
    }

    /// The drift estimate, in ppm (microseconds of one-way delay per second).
    pub fn drift_ppm(&self) -> f64 {
        self.drift
    }

    pub fn rejected(&self) -> RejectedSamples {
        self.rejected
    }

    /// Adds a sample taken at `local_time`: `delay_us` is the one-way delay
    /// up to the clock offset, `remote_us` the peer timestamp it came from,
    /// `bound` the RTT sample that contains this one-way delay. Returns the
    /// queueing estimate, or `None` for a rejected sample.
    pub fn sample(
        &mut self,
        local_time: Instant,
        delay_us: i64,
        remote_us: u64,
        bound: Duration,
    ) -> Option<Duration> {
        let at = self.local_micros(local_time) as f64 / 1e6;
        let delay = delay_us as f64;
        let tolerance = self.config.backwards_tolerance.as_micros() as u64;
        if let Some(latest) = self.latest_remote_us {
            if remote_us.saturating_add(tolerance) < latest {
                self.rejected.backwards += 1;
                return self.reject();
            }
        }
        let bound_us = bound.as_micros() as f64;
        let queueing = self.queueing_above_baseline(at, delay).unwrap_or(0.0);
        if queueing > bound_us {
            self.rejected.impossible += 1;
            return self.reject();
        }
        self.consecutive_rejections = 0;
        self.latest_remote_us = Some(
            self.latest_remote_us
                .map_or(remote_us, |l| l.max(remote_us)),
        );
        self.add_to_window(WindowMinimum { at, delay });
        let queueing = self.queueing_above_baseline(at, delay).unwrap_or(0.0);
        Some(Duration::from_micros(queueing.clamp(0.0, bound_us) as u64))
    }

    fn reject(&mut self) -> Option<Duration> {
        self.consecutive_rejections += 1;
        if self.consecutive_rejections >= self.config.rebase_after {
            self.rejected.rebases += 1;
            self.consecutive_rejections = 0;
            self.current = None;
            self.history.clear();
            self.drift = 0.0;
            self.latest_remote_us = None;
        }
        None
    }

    /// (delay - drift·at) minus the smallest drift-corrected minimum.
    fn queueing_above_baseline(&self, at: f64, delay: f64) -> Option<f64> {
        let corrected = |m: &WindowMinimum| m.delay - self.drift * m.at;
        let baseline = self
            .history
            .iter()
            .chain(self.current.iter())
            .map(corrected)
            .fold(None, |min: Option<f64>, v| {
                Some(min.map_or(v, |m| m.min(v)))
            })?;
        Some(corrected(&WindowMinimum { at, delay }) - baseline)
    }

    fn add_to_window(&mut self, sample: WindowMinimum) {
        let window = self.config.window.as_secs_f64().max(1e-3);
        match self.current {
            None => {
                self.window_start = sample.at;
                self.current = Some(sample);
            }
            Some(current) if sample.at >= self.window_start + window => {
                self.history.push_back(current);
                while self.history.len() > self.config.windows_kept.max(1) {
                    self.history.pop_front();
                }
                self.drift = self.fit_drift();
                self.window_start = sample.at;
                self.current = Some(sample);
            }
            Some(current) => {
                if sample.delay < current.delay {
                    self.current = Some(sample);
                }
            }
        }
    }

    /// Theil-Sen slope through the window minima, clamped.
    fn fit_drift(&self) -> f64 {
        if self.history.len() < 4 {
            return 0.0;
        }
        let points: Vec<&WindowMinimum> = self.history.iter().collect();
        let mut slopes = Vec::with_capacity(points.len() * (points.len() - 1) / 2);
        for (i, a) in points.iter().enumerate() {
            for b in &points[i + 1..] {
                let dt = b.at - a.at;
                if dt > 1e-6 {
                    slopes.push((b.delay - a.delay) / dt);
                }
            }
        }
        if slopes.is_empty() {
            return 0.0;
        }
        slopes.sort_by(|a, b| a.total_cmp(b));
        let median = slopes[slopes.len() / 2];
        let max = self.config.max_drift_ppm.abs();
        if median.is_finite() {
            median.clamp(-max, max)
        } else {
            0.0
        }
    }
}

/// Forward and backward queueing estimates for one connection.
#[derive(Clone, Debug)]
pub struct QueueingEstimator {
    forward: OneWayDelayTracker,
    backward: OneWayDelayTracker,
}

impl Default for QueueingEstimator {
    fn default() -> Self {
        Self::new(EstimatorConfig::default())
    }
}

fn micros_u64(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl QueueingEstimator {
    pub fn new(config: EstimatorConfig) -> Self {
        QueueingEstimator {
            forward: OneWayDelayTracker::new(config),
            backward: OneWayDelayTracker::new(config),
        }
    }

    /// Forward queueing of a packet we sent at `time_sent` (our clock) that
    /// the peer received at `receive_time` (its clock, since its basis);
    /// `rtt` is the packet's RTT sample.
    pub fn forward(
        &mut self,
        time_sent: Instant,
        receive_time: Duration,
        rtt: Duration,
    ) -> Option<Duration> {
        let remote = micros_u64(receive_time);
        let sent = self.forward.local_micros(time_sent);
        let delay = (remote.min(i64::MAX as u64) as i64).saturating_sub(sent);
        self.forward.sample(time_sent, delay, remote, rtt)
    }

    /// Backward queueing of an ACK that arrived at `ack_arrival` (our clock)
    /// and acknowledged as its largest a packet the peer received at
    /// `largest_receive_time` (its clock), after which it waited `ack_delay`;
    /// `rtt` is the RTT sample of that packet.
    pub fn backward(
        &mut self,
        ack_arrival: Instant,
        largest_receive_time: Duration,
        ack_delay: Duration,
        rtt: Duration,
    ) -> Option<Duration> {
        let remote = micros_u64(largest_receive_time);
        let ack_sent_remote = remote.saturating_add(micros_u64(ack_delay));
        let arrival = self.backward.local_micros(ack_arrival);
        let delay = arrival.saturating_sub(ack_sent_remote.min(i64::MAX as u64) as i64);
        self.backward.sample(ack_arrival, delay, remote, rtt)
    }

    pub fn forward_tracker(&self) -> &OneWayDelayTracker {
        &self.forward
    }

    pub fn backward_tracker(&self) -> &OneWayDelayTracker {
        &self.backward
    }
}

//! Timing histograms and the run's statistics file.

use serde::Serialize;

use crate::engine::{CrossCounters, DirectionStats};

/// Microsecond-resolution histogram of non-negative durations, exact below
/// [`Histogram::RESOLVED_US`] and counted above.
#[derive(Clone, Debug)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

/// Summary of a [`Histogram`], in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: vec![0; Self::RESOLVED_US + 1],
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl Histogram {
    /// Values up to this many microseconds have a bucket each.
    pub const RESOLVED_US: usize = 20_000;

    pub fn record(&mut self, ns: u64) {
        let bucket = usize::try_from(ns / 1_000)
            .unwrap_or(usize::MAX)
            .min(Self::RESOLVED_US);
        self.buckets[bucket] += 1;
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q` quantile (0..=1) in microseconds, to the bucket (the upper
    /// end of the bucket: a bound, not an underestimate); the maximum when
    /// it falls above the resolved range.
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                if i == Self::RESOLVED_US {
                    break;
                }
                return ((i + 1) as f64).min(self.max_ns as f64 / 1e3);
            }
        }
        self.max_ns as f64 / 1e3
    }

    pub fn summary(&self) -> Summary {
        if self.count == 0 {
            return Summary::default();
        }
        Summary {
            count: self.count,
            mean_us: (self.sum_ns as f64 / self.count as f64) / 1e3,
            p50_us: self.quantile_us(0.5),
            p99_us: self.quantile_us(0.99),
            p999_us: self.quantile_us(0.999),
            max_us: self.max_ns as f64 / 1e3,
        }
    }
}

/// One link's counters over the run.
#[derive(Clone, Debug, Serialize)]
pub struct LinkReport {
    pub name: String,
    pub rate_bps: u64,
    pub delay_ms: f64,
    pub arrived_packets: u64,
    pub dropped_packets: u64,
    pub lost_packets: u64,
    pub blackout_packets: u64,
    pub transmitted_packets: u64,
    pub transmitted_bytes: u64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    pub mean_queueing_ms: f64,
    /// Busy time over the run's length.
    pub utilization: f64,
}

/// The statistics file (`--stats`), also summarised on stderr at exit.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub mode: String,
    pub scenario: String,
    pub forward_path: Vec<String>,
    pub return_path: Vec<String>,
    pub run_s: f64,
    pub to_client: DirectionStats,
    pub to_server: DirectionStats,
    pub links: Vec<LinkReport>,
    pub cross_traffic: Vec<CrossCounters>,
    /// How late deliveries left the emulator after the model's time.
    pub send_lateness: Summary,
    /// How long after the kernel received a datagram the emulator saw it
    /// (what kernel timestamps take out of the model's arrival times).
    pub receive_latency: Summary,
    /// Datagrams that got an AQT option.
    pub aqt_marked: u64,
    /// Datagrams whose AQT could not be written (no room, not IPv4, not
    /// permitted).
    pub aqt_failed: u64,
    /// Frames forwarded outside the model (ARP, ...).
    pub passthrough_frames: u64,
    /// UDP GSO super-frames cut into their datagrams.
    pub gso_superframes: u64,
    pub send_errors: u64,
    /// What the scheduler thread got (timer slack, real-time priority).
    pub thread_tuning: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles() {
        let mut h = Histogram::default();
        for us in 0..100u64 {
            h.record(us * 1_000 + 500);
        }
        let s = h.summary();
        assert_eq!(s.count, 100);
        assert!((s.mean_us - 50.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.p50_us, 50.0);
        assert_eq!(s.p99_us, 99.0);
        assert_eq!(s.max_us, 99.5);
        h.record(1_000_000_000);
        assert_eq!(h.quantile_us(1.0), 1_000_000.0);
    }
}

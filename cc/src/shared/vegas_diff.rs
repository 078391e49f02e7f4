//! Vegas's Expected, Actual and Diff (004_039b3aff67042154.txt, section 3.5.2),
//! written once for every algorithm that builds on them.
//!
//! - Expected = WindowSize / BaseRTT: the throughput if nothing of ours were
//!   queued.
//! - Actual = WindowSize / RTT: the throughput achieved. The paper divides the
//!   bytes sent during one distinguished segment's RTT by that RTT; like Linux
//!   we take the window for the bytes, and the round's RTT as each algorithm's
//!   `round_rtt` chooses (distinguished segment, minimum or mean of the round;
//!   see `round_clock`).
//! - Diff = (Expected − Actual) × BaseRTT: the paper expresses its thresholds
//!   "in terms of buffers", i.e. Diff scaled by BaseRTT is the number of this
//!   connection's packets sitting in queues. Algebraically
//!   Diff = WindowSize × (1 − BaseRTT / RTT).
//!
//! Veno's N (001_8629d53d83e82638.txt) is this Diff; Vegas-A, Vegas-L,
//! RoVegas and Vegas-W compare it with their own thresholds.
//!
//! Linux's `tcp_vegas.c` scales by the round's RTT instead of BaseRTT
//! (diff = cwnd × (RTT − BaseRTT) / BaseRTT) and works in whole packets and
//! microseconds; [`linux_diff_packets`] and [`linux_target_window_packets`]
//! give that form for `vegas-linux`.

use std::time::Duration;

/// One comparison of expected and actual throughput.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasDiff {
    /// Window used, in packets.
    pub window_packets: f64,
    pub base_rtt: Duration,
    pub rtt: Duration,
    /// Expected = WindowSize / BaseRTT, in packets per second.
    pub expected_packets_per_sec: f64,
    /// Actual = WindowSize / RTT, in packets per second.
    pub actual_packets_per_sec: f64,
    /// Diff = (Expected − Actual) × BaseRTT, in packets. Negative only if
    /// `rtt < base_rtt`, which the paper says means BaseRTT is stale.
    pub diff_packets: f64,
}

impl VegasDiff {
    /// Compares Expected and Actual for a window of `window_packets` packets.
    /// `None` if either RTT is zero or the window is not a finite,
    /// non-negative number: no rate can be computed then.
    pub fn compute(window_packets: f64, base_rtt: Duration, rtt: Duration) -> Option<Self> {
        if !window_packets.is_finite() || window_packets < 0.0 {
            return None;
        }
        let base_secs = base_rtt.as_secs_f64();
        let rtt_secs = rtt.as_secs_f64();
        if base_secs <= 0.0 || rtt_secs <= 0.0 {
            return None;
        }
        let expected = window_packets / base_secs;
        let actual = window_packets / rtt_secs;
        let diff = (expected - actual) * base_secs;
        [expected, actual, diff]
            .iter()
            .all(|v| v.is_finite())
            .then_some(VegasDiff {
                window_packets,
                base_rtt,
                rtt,
                expected_packets_per_sec: expected,
                actual_packets_per_sec: actual,
                diff_packets: diff,
            })
    }

    /// Actual × BaseRTT = WindowSize − Diff: the window that would achieve
    /// the actual rate with nothing queued.
    pub fn actual_window_packets(&self) -> f64 {
        self.actual_packets_per_sec * self.base_rtt.as_secs_f64()
    }
}

/// Whole microseconds, at least 1, so that neither RTT can be a zero divisor.
fn micros(d: Duration) -> u128 {
    d.as_micros().max(1)
}

/// Linux's Diff: `window_packets × (RTT − BaseRTT) / BaseRTT`, in whole
/// packets (rounded down), from RTTs in whole microseconds. Zero when `rtt`
/// is below `base_rtt`.
pub fn linux_diff_packets(window_packets: u64, base_rtt: Duration, rtt: Duration) -> u64 {
    let base = micros(base_rtt);
    let queueing = micros(rtt).saturating_sub(base);
    let diff = u128::from(window_packets).saturating_mul(queueing) / base;
    u64::try_from(diff).unwrap_or(u64::MAX)
}

/// Linux's target window on leaving slow start: `window_packets × BaseRTT /
/// RTT` (Actual × BaseRTT), in whole packets rounded down.
pub fn linux_target_window_packets(window_packets: u64, base_rtt: Duration, rtt: Duration) -> u64 {
    let target = u128::from(window_packets).saturating_mul(micros(base_rtt)) / micros(rtt);
    u64::try_from(target).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn diff_counts_queued_packets() {
        // 20 packets, BaseRTT 100 ms, RTT 125 ms: Expected 200 pkt/s, Actual
        // 160 pkt/s, Diff = 40 pkt/s x 0.1 s = 4 packets.
        let d = VegasDiff::compute(20.0, ms(100), ms(125)).unwrap();
        assert!((d.expected_packets_per_sec - 200.0).abs() < 1e-9);
        assert!((d.actual_packets_per_sec - 160.0).abs() < 1e-9);
        assert!((d.diff_packets - 4.0).abs() < 1e-9);
        assert!((d.actual_window_packets() - 16.0).abs() < 1e-9);
    }

    #[test]
    fn no_queue_no_diff() {
        let d = VegasDiff::compute(10.0, ms(80), ms(80)).unwrap();
        assert_eq!(d.diff_packets, 0.0);
    }

    #[test]
    fn degenerate_inputs_give_none() {
        assert_eq!(VegasDiff::compute(10.0, Duration::ZERO, ms(1)), None);
        assert_eq!(VegasDiff::compute(10.0, ms(1), Duration::ZERO), None);
        assert_eq!(VegasDiff::compute(f64::NAN, ms(1), ms(1)), None);
        assert_eq!(VegasDiff::compute(f64::INFINITY, ms(1), ms(1)), None);
        assert_eq!(VegasDiff::compute(-1.0, ms(1), ms(1)), None);
        let huge = VegasDiff::compute(f64::MAX, Duration::from_nanos(1), Duration::MAX);
        assert_eq!(huge, None, "an overflowing rate is refused, not NaN");
    }

    #[test]
    fn linux_forms_use_whole_packets() {
        // 80 x (150 - 100) / 100 = 40; 80 x 100 / 150 = 53.3 -> 53.
        assert_eq!(linux_diff_packets(80, ms(100), ms(150)), 40);
        assert_eq!(linux_target_window_packets(80, ms(100), ms(150)), 53);
        // 10 x 9 / 100 = 0.9 -> 0.
        assert_eq!(linux_diff_packets(10, ms(100), ms(109)), 0);
        assert_eq!(linux_diff_packets(10, ms(100), ms(90)), 0);
        assert_eq!(
            linux_diff_packets(u64::MAX, Duration::ZERO, Duration::MAX),
            u64::MAX
        );
        assert_eq!(
            linux_target_window_packets(7, Duration::ZERO, Duration::ZERO),
            7
        );
        assert_eq!(
            linux_target_window_packets(u64::MAX, Duration::MAX, Duration::from_nanos(1)),
            u64::MAX
        );
    }
}

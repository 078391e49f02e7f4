//! cwnd and ssthresh, the two numbers every algorithm of this crate owns.
//!
//! Both are in bytes and never below the minimum window (RFC 9002 section
//! 7.2, kMinimumWindow: [`MINIMUM_WINDOW_PACKETS`] packets of the current
//! maximum datagram size): every setter clamps, so no algorithm has to.
//! ssthresh is `usize::MAX` until the first exit from slow start. Slow start
//! is `cwnd < ssthresh`, and the state reported in qlog follows from that
//! and from whether the algorithm is in recovery
//! ([`crate::shared::recovery_epoch`]).
//!
//! The rules that move the window are the algorithms'; this type only holds
//! the steps several of them take the same way.

use crate::controller::WindowConfig;
use crate::controller::{CcState, MINIMUM_WINDOW_PACKETS};

/// The congestion window and slow-start threshold; see the module
/// documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    max_datagram_size: usize,
    cwnd: usize,
    ssthresh: usize,
}

/// The smallest window for packets of `max_datagram_size` bytes.
fn minimum_window(max_datagram_size: usize) -> usize {
    max_datagram_size.saturating_mul(MINIMUM_WINDOW_PACKETS)
}

/// `value × to / from` without overflow, saturating at `usize::MAX`.
fn rescale(value: usize, from: usize, to: usize) -> usize {
    let scaled = (value as u128).saturating_mul(to as u128) / from.max(1) as u128;
    usize::try_from(scaled).unwrap_or(usize::MAX)
}

impl Window {
    /// The stack's initial window (at least the minimum window), no ssthresh.
    pub fn new(config: WindowConfig) -> Self {
        let max_datagram_size = config.max_datagram_size.max(1);
        Window {
            max_datagram_size,
            cwnd: config.initial_cwnd().max(minimum_window(max_datagram_size)),
            ssthresh: usize::MAX,
        }
    }

    /// The packet size the window counts in, in bytes (at least 1).
    pub fn max_datagram_size(&self) -> usize {
        self.max_datagram_size
    }

    /// The minimum window, in bytes.
    pub fn minimum(&self) -> usize {
        minimum_window(self.max_datagram_size)
    }

    pub fn cwnd(&self) -> usize {
        self.cwnd
    }

    pub fn ssthresh(&self) -> usize {
        self.ssthresh
    }

    /// cwnd in packets, fractions included.
    pub fn cwnd_packets(&self) -> f64 {
        self.cwnd as f64 / self.max_datagram_size as f64
    }

    /// cwnd in whole packets (rounded down).
    pub fn cwnd_whole_packets(&self) -> usize {
        self.cwnd / self.max_datagram_size
    }

    /// ssthresh in packets, `None` before the first exit from slow start.
    pub fn ssthresh_packets(&self) -> Option<f64> {
        (self.ssthresh != usize::MAX).then(|| self.ssthresh as f64 / self.max_datagram_size as f64)
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// The state for qlog: `Recovery` while the algorithm says so, otherwise
    /// slow start or congestion avoidance as cwnd and ssthresh say.
    pub fn state(&self, in_recovery: bool) -> CcState {
        if in_recovery {
            CcState::Recovery
        } else if self.in_slow_start() {
            CcState::SlowStart
        } else {
            CcState::CongestionAvoidance
        }
    }

    /// cwnd × `factor`, never below the minimum window. (`as` saturates, so
    /// a huge product is `usize::MAX` and a negative or NaN one is 0.)
    pub fn scaled(&self, factor: f64) -> usize {
        ((self.cwnd as f64 * factor) as usize).max(self.minimum())
    }

    /// cwnd = `bytes`, at least the minimum window.
    pub fn set_cwnd(&mut self, bytes: usize) {
        self.cwnd = bytes.max(self.minimum());
    }

    /// ssthresh = `bytes`, at least the minimum window.
    pub fn set_ssthresh(&mut self, bytes: usize) {
        self.ssthresh = bytes.max(self.minimum());
    }

    /// cwnd += `bytes`, saturating.
    pub fn increase(&mut self, bytes: usize) {
        self.cwnd = self.cwnd.saturating_add(bytes);
    }

    /// cwnd −= `bytes`, down to the minimum window, and ssthresh no higher
    /// than the new cwnd, so that the smaller window is not mistaken for slow
    /// start.
    pub fn decrease(&mut self, bytes: usize) {
        self.set_cwnd(self.cwnd.saturating_sub(bytes));
        self.ssthresh = self.ssthresh.min(self.cwnd);
    }

    /// Slow start: cwnd grows by the `bytes` acknowledged, up to ssthresh.
    /// Returns the bytes left over for congestion avoidance (all of them
    /// when not in slow start).
    pub fn slow_start(&mut self, bytes: usize) -> usize {
        if !self.in_slow_start() {
            return bytes;
        }
        let grown = bytes.min(self.ssthresh - self.cwnd);
        self.cwnd += grown;
        bytes - grown
    }

    /// Goes back to a window saved before a reduction that proved spurious,
    /// each value at least the minimum window.
    pub fn restore(&mut self, cwnd: usize, ssthresh: usize) {
        self.set_cwnd(cwnd);
        self.set_ssthresh(ssthresh);
    }

    /// The datagram size changed; the window keeps its packet count, as
    /// algorithms that count in packets need (ssthresh too, once set).
    pub fn rescale_to(&mut self, max_datagram_size: usize) {
        let old = self.max_datagram_size;
        self.max_datagram_size = max_datagram_size.max(1);
        let new = self.max_datagram_size;
        self.set_cwnd(rescale(self.cwnd, old, new));
        if self.ssthresh != usize::MAX {
            self.set_ssthresh(rescale(self.ssthresh, old, new));
        }
    }

    /// The datagram size changed; the window keeps its bytes, only raised to
    /// the new minimum window, as algorithms that count in bytes need.
    pub fn set_max_datagram_size(&mut self, max_datagram_size: usize) {
        self.max_datagram_size = max_datagram_size.max(1);
        self.set_cwnd(self.cwnd);
        self.set_ssthresh(self.ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MDS: usize = 1200;
    const CONFIG: WindowConfig = WindowConfig {
        max_datagram_size: MDS,
        initial_cwnd_packets: 10,
    };

    #[test]
    fn starts_at_the_initial_window_in_slow_start() {
        let w = Window::new(CONFIG);
        assert_eq!(w.cwnd(), 10 * MDS);
        assert_eq!(w.ssthresh(), usize::MAX);
        assert_eq!(w.ssthresh_packets(), None);
        assert_eq!(w.max_datagram_size(), MDS);
        assert_eq!(w.minimum(), MINIMUM_WINDOW_PACKETS * MDS);
        assert!(w.in_slow_start());
        assert_eq!(w.state(false), CcState::SlowStart);
        assert_eq!(w.state(true), CcState::Recovery);
        // A tiny initial window is raised to the minimum; a zero datagram
        // size counts as 1 byte.
        let tiny = Window::new(WindowConfig {
            max_datagram_size: 0,
            initial_cwnd_packets: 1,
        });
        assert_eq!(tiny.max_datagram_size(), 1);
        assert_eq!(tiny.cwnd(), MINIMUM_WINDOW_PACKETS);
    }

    #[test]
    fn setters_never_go_below_the_minimum_window() {
        let mut w = Window::new(CONFIG);
        w.set_cwnd(0);
        w.set_ssthresh(1);
        assert_eq!(w.cwnd(), 2 * MDS);
        assert_eq!(w.ssthresh(), 2 * MDS);
        assert_eq!(w.state(false), CcState::CongestionAvoidance);
        w.restore(5, usize::MAX);
        assert_eq!((w.cwnd(), w.ssthresh()), (2 * MDS, usize::MAX));
        w.restore(30 * MDS, 20 * MDS);
        assert_eq!((w.cwnd(), w.ssthresh()), (30 * MDS, 20 * MDS));
    }

    #[test]
    fn packets_count_the_current_datagram_size() {
        let mut w = Window::new(CONFIG);
        w.set_cwnd(10 * MDS + MDS / 2);
        assert_eq!(w.cwnd_packets(), 10.5);
        assert_eq!(w.cwnd_whole_packets(), 10);
        w.set_ssthresh(4 * MDS);
        assert_eq!(w.ssthresh_packets(), Some(4.0));
    }

    #[test]
    fn scaled_is_at_least_the_minimum_and_saturates() {
        let mut w = Window::new(CONFIG);
        assert_eq!(w.scaled(0.5), 5 * MDS);
        assert_eq!(w.scaled(0.0), 2 * MDS);
        assert_eq!(w.scaled(f64::NAN), 2 * MDS);
        w.set_cwnd(usize::MAX);
        assert_eq!(w.scaled(2.0), usize::MAX);
    }

    #[test]
    fn increase_saturates_and_decrease_lowers_ssthresh_with_cwnd() {
        let mut w = Window::new(CONFIG);
        w.set_ssthresh(20 * MDS);
        w.increase(MDS);
        assert_eq!(w.cwnd(), 11 * MDS);
        assert_eq!(w.ssthresh(), 20 * MDS, "an increase leaves ssthresh");
        w.decrease(2 * MDS);
        assert_eq!((w.cwnd(), w.ssthresh()), (9 * MDS, 9 * MDS));
        assert!(!w.in_slow_start());
        w.decrease(usize::MAX);
        assert_eq!((w.cwnd(), w.ssthresh()), (2 * MDS, 2 * MDS));
        w.set_cwnd(usize::MAX - 1);
        w.increase(MDS);
        assert_eq!(w.cwnd(), usize::MAX);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut w = Window::new(CONFIG);
        assert_eq!(w.slow_start(5 * MDS), 0, "no ssthresh yet");
        assert_eq!(w.cwnd(), 15 * MDS);
        w.set_ssthresh(16 * MDS);
        assert_eq!(w.slow_start(3 * MDS), 2 * MDS);
        assert_eq!(w.cwnd(), 16 * MDS);
        // Outside slow start everything is left over.
        assert_eq!(w.slow_start(MDS), MDS);
        assert_eq!(w.cwnd(), 16 * MDS);
    }

    #[test]
    fn rescaling_keeps_the_packet_count() {
        let mut w = Window::new(CONFIG);
        w.rescale_to(1500);
        assert_eq!((w.cwnd(), w.ssthresh()), (10 * 1500, usize::MAX));
        w.set_ssthresh(20 * 1500);
        w.rescale_to(1000);
        assert_eq!((w.cwnd(), w.ssthresh()), (10 * 1000, 20 * 1000));
        assert_eq!(w.max_datagram_size(), 1000);
        // Absurd sizes neither overflow nor break the minimum.
        w.rescale_to(usize::MAX);
        assert_eq!((w.cwnd(), w.ssthresh()), (usize::MAX, usize::MAX));
        w.rescale_to(0);
        assert_eq!(w.max_datagram_size(), 1);
        assert!(w.cwnd() >= w.minimum());
    }

    #[test]
    fn a_new_datagram_size_can_keep_the_bytes() {
        let mut w = Window::new(CONFIG);
        w.set_ssthresh(3 * MDS);
        w.set_max_datagram_size(1500);
        assert_eq!((w.cwnd(), w.ssthresh()), (10 * MDS, 3 * MDS));
        w.set_max_datagram_size(6000);
        assert_eq!((w.cwnd(), w.ssthresh()), (12_000, 12_000));
        w.set_max_datagram_size(usize::MAX);
        assert_eq!(w.minimum(), usize::MAX);
        assert_eq!(w.cwnd(), usize::MAX);
    }
}

//! What a QUIC stack holds for one path: the controller plus the pieces every
//! algorithm shares and none should re-implement — pacing, the window saved for
//! spurious-loss rollback, persistent-congestion detection, and the qlog diff
//! of the controller's internals.
//!
//! The quiche adapter (`quiche-seam/plugin.rs`) only translates quiche's types
//! into these calls, so everything here is tested without quiche.

use std::time::{Duration, Instant};

use crate::controller::{CcState, CongestionController, InternalValue, Internals, Pacing};
use crate::events::{AckEvent, CongestionEvent, PacketSent, RttSnapshot};
use crate::registry::{ControllerSpec, WindowConfig};

/// RFC 9002 section 7.6.1: persistent congestion spans three PTOs.
const PERSISTENT_CONGESTION_THRESHOLD: u32 = 3;
/// RFC 9002 kGranularity.
const TIMER_GRANULARITY: Duration = Duration::from_millis(1);

/// Spaces packets so that at most `burst_packets` leave back to back and the
/// long-run rate is `rate_bytes_per_sec` (a generic cell-rate algorithm: each
/// packet advances a theoretical release time by its size over the rate).
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    theoretical_release: Option<Instant>,
    last_release: Option<Instant>,
    /// Earliest time a further packet of the same size may leave.
    next_release: Option<Instant>,
}

impl Pacer {
    /// Records a packet of `size` bytes that the stack wants to send at `now`
    /// and returns when it should actually leave.
    pub fn on_packet(&mut self, now: Instant, size: usize, pacing: Option<Pacing>) -> Instant {
        let Some(p) =
            pacing.filter(|p| p.rate_bytes_per_sec.is_finite() && p.rate_bytes_per_sec > 0.0)
        else {
            self.theoretical_release = None;
            self.last_release = Some(now);
            self.next_release = None;
            return now;
        };
        let interval = Duration::from_secs_f64((size as f64 / p.rate_bytes_per_sec).min(10.0));
        let tolerance = interval * (p.burst_packets.max(1) as u32 - 1);
        let tat = self.theoretical_release.map_or(now, |t| t.max(now));
        // A packet may leave as early as `tolerance` ahead of its theoretical
        // time, which lets `burst_packets` go together after an idle period.
        let release = tat.checked_sub(tolerance).map_or(now, |t| t.max(now));
        let release = self.last_release.map_or(release, |l| release.max(l));
        let next_tat = tat + interval;
        self.theoretical_release = Some(next_tat);
        self.last_release = Some(release);
        self.next_release = Some(
            next_tat
                .checked_sub(tolerance)
                .map_or(release, |t| t.max(release)),
        );
        release
    }

    /// When the next packet may leave, if pacing holds it back. A stack that
    /// builds packets only from this time on stamps them with the time they
    /// really leave, so holding them does not inflate RTT samples.
    pub fn next_release_time(&self) -> Option<Instant> {
        self.next_release
    }

    /// When the most recent packet should leave (never before `now`).
    pub fn release_time(&self, now: Instant) -> Instant {
        self.last_release.map_or(now, |t| t.max(now))
    }
}

/// A field of the controller's internals that changed since the last qlog
/// event.
pub type ChangedInternal = (&'static str, InternalValue);

#[derive(Debug)]
pub struct ControllerHost {
    controller: Box<dyn CongestionController>,
    pacer: Pacer,
    /// cwnd and ssthresh before the most recent loss reaction.
    checkpoint: Option<(usize, usize)>,
    last_rtt: Option<RttSnapshot>,
    max_ack_delay: Duration,
    /// Send time of the most recently sent packet acknowledged so far.
    latest_acked_time_sent: Option<Instant>,
    qlog_reported: Internals,
    scratch: Internals,
}

impl ControllerHost {
    pub fn new(spec: &ControllerSpec, window: WindowConfig) -> Self {
        Self::with_controller(spec.build(window))
    }

    pub fn with_controller(controller: Box<dyn CongestionController>) -> Self {
        ControllerHost {
            controller,
            pacer: Pacer::default(),
            checkpoint: None,
            last_rtt: None,
            max_ack_delay: Duration::ZERO,
            latest_acked_time_sent: None,
            qlog_reported: Internals::default(),
            scratch: Internals::default(),
        }
    }

    pub fn controller(&self) -> &dyn CongestionController {
        self.controller.as_ref()
    }

    pub fn cwnd(&self) -> usize {
        self.controller.cwnd()
    }

    pub fn ssthresh(&self) -> usize {
        self.controller.ssthresh()
    }

    pub fn state(&self) -> CcState {
        self.controller.state()
    }

    pub fn set_max_ack_delay(&mut self, max_ack_delay: Duration) {
        self.max_ack_delay = max_ack_delay;
    }

    pub fn on_packet_sent(&mut self, sent: &PacketSent) {
        self.controller.on_packet_sent(sent);
        self.pacer
            .on_packet(sent.time_sent, sent.size, self.controller.pacing());
    }

    /// When the packet just sent should leave the host.
    pub fn packet_send_time(&self, now: Instant) -> Instant {
        self.pacer.release_time(now)
    }

    /// When the stack should build its next packet; `None`: at once.
    pub fn next_release_time(&self) -> Option<Instant> {
        self.pacer.next_release_time()
    }

    pub fn pacing_rate(&self) -> Option<u64> {
        self.controller
            .pacing()
            .map(|p| p.rate_bytes_per_sec as u64)
    }

    pub fn on_ack(&mut self, ack: &AckEvent<'_>) {
        self.last_rtt = Some(ack.rtt);
        if let Some(latest) = ack.acked.iter().map(|p| p.time_sent).max() {
            self.latest_acked_time_sent = Some(
                self.latest_acked_time_sent
                    .map_or(latest, |t| t.max(latest)),
            );
        }
        self.controller.on_ack(ack);
    }

    /// Saves the window before a loss reaction, so that a spurious loss can be
    /// undone.
    pub fn checkpoint(&mut self) {
        self.checkpoint = Some((self.controller.cwnd(), self.controller.ssthresh()));
    }

    /// The losses reported by the last congestion event were spurious.
    pub fn rollback(&mut self) -> bool {
        match self.checkpoint.take() {
            Some((cwnd, ssthresh)) if self.controller.cwnd() < cwnd => {
                self.controller.on_spurious_loss(cwnd, ssthresh)
            }
            _ => false,
        }
    }

    /// Loss detection declared packets lost. `persistent_congestion` of the
    /// event is filled in here.
    pub fn on_congestion_event(
        &mut self,
        now: Instant,
        lost_bytes: usize,
        largest_lost_pkt_num: u64,
        largest_lost_time_sent: Instant,
        bytes_in_flight: usize,
    ) {
        let persistent_congestion = self.is_persistent_congestion(largest_lost_time_sent);
        self.controller.on_congestion_event(&CongestionEvent {
            now,
            lost_bytes,
            largest_lost_pkt_num,
            largest_lost_time_sent,
            persistent_congestion,
            bytes_in_flight,
        });
    }

    /// RFC 9002 section 7.6 approximated from what a congestion event carries:
    /// nothing sent in the persistent-congestion duration before the largest
    /// lost packet has been acknowledged. Packets in that span that are not
    /// acknowledged precede a lost packet by more than the time threshold, so
    /// loss detection declares them lost too. Needs an RTT sample (7.6.2).
    fn is_persistent_congestion(&self, largest_lost_time_sent: Instant) -> bool {
        let (Some(rtt), Some(acked_sent)) = (self.last_rtt, self.latest_acked_time_sent) else {
            return false;
        };
        let pto = rtt.smoothed_rtt + (rtt.rttvar * 4).max(TIMER_GRANULARITY) + self.max_ack_delay;
        let duration = pto * PERSISTENT_CONGESTION_THRESHOLD;
        largest_lost_time_sent.saturating_duration_since(acked_sent) > duration
    }

    pub fn on_max_datagram_size(&mut self, max_datagram_size: usize) {
        self.controller.on_max_datagram_size(max_datagram_size);
    }

    /// The internals that changed since the last call, for a qlog
    /// `recovery_metrics_updated` event; empty when nothing changed.
    pub fn changed_internals(&mut self) -> Vec<ChangedInternal> {
        self.scratch.clear();
        self.controller.internals(&mut self.scratch);
        let changed: Vec<ChangedInternal> = self
            .scratch
            .fields()
            .iter()
            .filter(|(name, value)| self.qlog_reported.get(name) != Some(*value))
            .copied()
            .collect();
        if !changed.is_empty() {
            std::mem::swap(&mut self.qlog_reported, &mut self.scratch);
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn pacer_allows_burst_then_spaces_at_rate() {
        let t0 = Instant::now();
        let mut p = Pacer::default();
        // 1200 bytes at 120_000 B/s: one packet every 10 ms, bursts of two.
        let pacing = Some(Pacing {
            rate_bytes_per_sec: 120_000.0,
            burst_packets: 2,
        });
        let releases: Vec<Duration> = (0..5).map(|_| p.on_packet(t0, 1200, pacing) - t0).collect();
        assert_eq!(releases, vec![ms(0), ms(0), ms(10), ms(20), ms(30)]);
        // The sixth may leave 10 ms after the fifth.
        assert_eq!(p.next_release_time(), Some(t0 + ms(40)));
        // After an idle gap, a burst of two is allowed again.
        let later = t0 + ms(500);
        assert_eq!(p.on_packet(later, 1200, pacing), later);
        assert_eq!(p.on_packet(later, 1200, pacing), later);
        assert_eq!(p.on_packet(later, 1200, pacing), later + ms(10));
    }

    #[test]
    fn pacer_without_pacing_releases_now() {
        let t0 = Instant::now();
        let mut p = Pacer::default();
        assert_eq!(p.on_packet(t0, 1200, None), t0);
        assert_eq!(p.next_release_time(), None);
        let bad = Some(Pacing {
            rate_bytes_per_sec: f64::NAN,
            burst_packets: 2,
        });
        assert_eq!(p.on_packet(t0, 1200, bad), t0);
        assert_eq!(p.release_time(t0 + ms(1)), t0 + ms(1));
    }
}

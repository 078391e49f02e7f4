//! Queueing delay on the forward path alone, from the receiver's stamps.
//!
//! RTT − BaseRTT counts the queues of both directions, so a congested return
//! link (a thin satellite uplink carrying ACKs and other traffic) reads as
//! forward congestion and a delay-based sender slows down for nothing.
//! RoVegas (002_7f811f836ada7a25.txt) solves this with router support (AQT);
//! with the receiver's stamps (draft-ietf-quic-receive-ts) the sender can do
//! it alone: `R − S` (receive stamp minus send time) is the one-way delay
//! plus the unknown offset between the two clocks, and its smallest recent
//! value is the one-way delay without a queue plus the same offset, so
//!
//! ```text
//! forward queueing = (R − S) − min(R − S)
//! ```
//!
//! (VenoDB's relative delay, 001 section 3.1.A, is the change of the same
//! quantity between two packets.) The minimum is kept until the owner
//! rebases it ([`ForwardQueue::rebase`]; vegas-sat does on a delay step), or,
//! with `new(rounds)` above 0, over the last `rounds` rounds
//! ([`WindowedMin`]). vegas-sat keeps it forever (`new(0)`): a minimum over a
//! few rounds of a standing queue would read the queue as the path.
//!
//! Stamps are the peer's and are not trusted: a queueing delay cannot exceed
//! the packet's own RTT (the upper half of the one plausibility rule,
//! [`crate::shared::peer_reports::above_round_trip`]; the baseline is a
//! minimum over many packets, whose RTTs the lower half would need), so a
//! larger one means the peer's clock jumped, and the baseline restarts from
//! that packet (one wrong sample at most); a stamp that jumps back simply
//! lowers the baseline. Clock drift (tens of ppm) is
//! ignored. Arithmetic is in `i128` nanoseconds: no stamp overflows it.

use std::time::{Duration, Instant};

use crate::events::AckedPacket;
use crate::shared::peer_reports::{self, DelaySample, GRANULARITY};
use crate::shared::windowed_min::WindowedMin;

/// Forward one-way queueing delay from receive stamps.
#[derive(Clone, Debug)]
pub struct ForwardQueue {
    /// The sender's time origin for `S`.
    epoch: Option<Instant>,
    /// `R − S` baseline, in nanoseconds.
    base_offset: WindowedMin<i128>,
    round_min: Option<Duration>,
    round_sum: Duration,
    round_samples: u64,
    last: Option<Duration>,
    clock_jumps: u64,
}

impl ForwardQueue {
    /// A baseline over the last `rounds` rounds (0: forever).
    pub fn new(rounds: usize) -> Self {
        ForwardQueue {
            epoch: None,
            base_offset: WindowedMin::new(rounds),
            round_min: None,
            round_sum: Duration::ZERO,
            round_samples: 0,
            last: None,
            clock_jumps: 0,
        }
    }

    /// One acknowledged packet; packets below `min_size` or without a stamp
    /// are skipped. Returns the packet's forward queueing delay.
    pub fn on_packet(&mut self, packet: &AckedPacket, min_size: usize) -> Option<Duration> {
        let receive = packet.receive_time?;
        if packet.size < min_size {
            return None;
        }
        let epoch = *self.epoch.get_or_insert(packet.time_sent);
        // Packets sent before the epoch (acknowledged out of order) are
        // skipped, as before the baseline existed.
        let since_epoch = packet.time_sent.checked_duration_since(epoch)?;
        // `forward_delay_nanos` for a packet sent after the epoch, without
        // taking the difference of the two instants again.
        let offset = peer_reports::nanos(receive).saturating_sub(peer_reports::nanos(since_epoch));
        self.base_offset.on_sample(offset);
        let base = self.base_offset.get().unwrap_or(offset);
        let queue_ns = offset - base;
        let sample = DelaySample {
            delay_nanos: offset,
            rtt: packet.rtt,
        };
        let queue = if peer_reports::above_round_trip(base, sample, GRANULARITY) {
            // Longer than the whole round trip: the peer's clock jumped.
            self.clock_jumps = self.clock_jumps.saturating_add(1);
            self.base_offset.reset_to(offset);
            Duration::ZERO
        } else {
            Duration::from_nanos(u64::try_from(queue_ns).unwrap_or(0))
        };
        self.round_min = Some(self.round_min.map_or(queue, |m| m.min(queue)));
        self.round_sum = self.round_sum.saturating_add(queue);
        self.round_samples = self.round_samples.saturating_add(1);
        self.last = Some(queue);
        Some(queue)
    }

    /// Smallest forward queueing delay of the round in progress and how many
    /// packets measured it.
    pub fn round_min(&self) -> Option<(Duration, u64)> {
        self.round_min.map(|m| (m, self.round_samples))
    }

    /// Mean forward queueing delay of the round in progress.
    pub fn round_mean(&self) -> Option<Duration> {
        let n = u32::try_from(self.round_samples).ok().filter(|n| *n > 0)?;
        Some(self.round_sum / n)
    }

    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.last
    }

    /// Ends the round: the baseline window moves on.
    pub fn on_round_end(&mut self) {
        self.base_offset.on_round_end();
        self.round_min = None;
        self.round_sum = Duration::ZERO;
        self.round_samples = 0;
    }

    /// Forgets the baseline: the next stamp starts a new one (a path change).
    pub fn rebase(&mut self) {
        self.epoch = None;
        self.base_offset = WindowedMin::new(self.window_rounds());
        self.round_min = None;
        self.round_sum = Duration::ZERO;
        self.round_samples = 0;
        self.last = None;
    }

    fn window_rounds(&self) -> usize {
        self.base_offset.rounds()
    }

    /// Stamps that implied a queue longer than the RTT.
    pub fn clock_jumps(&self) -> u64 {
        self.clock_jumps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(t0: Instant, n: u64, sent_ms: u64, owd_ms: u64, clock_offset_ms: u64) -> AckedPacket {
        let sent = t0 + Duration::from_millis(sent_ms);
        let mut p = AckedPacket::new(n, 1350, sent, sent + Duration::from_millis(owd_ms + 300));
        p.receive_time = Some(Duration::from_millis(sent_ms + owd_ms + clock_offset_ms));
        p
    }

    #[test]
    fn queueing_is_the_delay_above_the_smallest() {
        let t0 = Instant::now();
        let mut q = ForwardQueue::new(0);
        // The receiver's clock is 5 s ahead; one-way delays 300, 310, 304 ms.
        assert_eq!(
            q.on_packet(&packet(t0, 1, 0, 300, 5000), 675),
            Some(Duration::ZERO)
        );
        assert_eq!(
            q.on_packet(&packet(t0, 2, 10, 310, 5000), 675),
            Some(Duration::from_millis(10))
        );
        assert_eq!(
            q.on_packet(&packet(t0, 3, 20, 304, 5000), 675),
            Some(Duration::from_millis(4))
        );
        assert_eq!(q.round_min(), Some((Duration::ZERO, 3)));
        assert_eq!(q.round_mean(), Some(Duration::from_millis(14) / 3));
        q.on_round_end();
        assert_eq!(q.round_min(), None);
        assert_eq!(q.latest(), Some(Duration::from_millis(4)));
    }

    #[test]
    fn a_clock_jump_restarts_the_baseline() {
        let t0 = Instant::now();
        let mut q = ForwardQueue::new(0);
        q.on_packet(&packet(t0, 1, 0, 300, 0), 675);
        // The peer's clock jumps 10 s ahead: not a 10 s queue.
        assert_eq!(
            q.on_packet(&packet(t0, 2, 10, 300, 10_000), 675),
            Some(Duration::ZERO)
        );
        assert_eq!(q.clock_jumps(), 1);
        assert_eq!(
            q.on_packet(&packet(t0, 3, 20, 302, 10_000), 675),
            Some(Duration::from_millis(2))
        );
    }

    #[test]
    fn a_queue_up_to_the_rtt_plus_granularity_is_believed() {
        let t0 = Instant::now();
        let rtt = Duration::from_millis(600);
        // Packet 0 sets the baseline (one-way delay 300 ms); packet 1, sent
        // 10 ms later with a 600 ms RTT too, claims `extra` more.
        let stamped = |n: u64, sent_ms: u64, owd: Duration| {
            let sent = t0 + Duration::from_millis(sent_ms);
            let mut p = AckedPacket::new(n, 1350, sent, sent + rtt);
            p.receive_time = Some(Duration::from_millis(sent_ms) + owd);
            p
        };
        let owd = Duration::from_millis(300);
        let limit = rtt + Duration::from_millis(1);
        for (extra, believed) in [(limit, true), (limit + Duration::from_nanos(1), false)] {
            let mut q = ForwardQueue::new(0);
            q.on_packet(&stamped(0, 0, owd), 675);
            let queue = q.on_packet(&stamped(1, 10, owd + extra), 675);
            if believed {
                assert_eq!(queue, Some(extra));
                assert_eq!(q.clock_jumps(), 0);
            } else {
                assert_eq!(queue, Some(Duration::ZERO));
                assert_eq!(q.clock_jumps(), 1);
            }
        }
    }

    #[test]
    fn a_windowed_baseline_forgets_a_delay_step() {
        let t0 = Instant::now();
        let mut q = ForwardQueue::new(2);
        q.on_packet(&packet(t0, 1, 0, 300, 0), 675);
        q.on_round_end();
        // The path's delay steps up by 50 ms: a queue, until the window passes.
        assert_eq!(
            q.on_packet(&packet(t0, 2, 700, 350, 0), 675),
            Some(Duration::from_millis(50))
        );
        q.on_round_end();
        assert_eq!(
            q.on_packet(&packet(t0, 3, 1400, 350, 0), 675),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn small_or_unstamped_packets_are_skipped() {
        let t0 = Instant::now();
        let mut q = ForwardQueue::new(0);
        let mut small = packet(t0, 1, 0, 300, 0);
        small.size = 60;
        assert_eq!(q.on_packet(&small, 675), None);
        let mut unstamped = packet(t0, 2, 0, 300, 0);
        unstamped.receive_time = None;
        assert_eq!(q.on_packet(&unstamped, 675), None);
        assert_eq!(q.round_min(), None);
    }
}

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
//! Stamps are the peer's and are judged by the host before they get here
//! ([`crate::shared::peer_clock`]): a refused stamp arrives as none, so no
//! queue is longer than the round trip allows above the host's floor; when
//! the host believes the peer's clock stepped, the packet's
//! [`AckedPacket::clock_epoch`] changes and the baseline restarts from that
//! packet. Clock drift (tens of ppm) is ignored. Arithmetic is in `i128`
//! nanoseconds: no stamp overflows it.

use std::time::{Duration, Instant};

use crate::events::AckedPacket;
use crate::shared::peer_reports;
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
    /// The peer's clock the baseline is on.
    clock_epoch: u32,
    clock_steps: u64,
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
            clock_epoch: 0,
            clock_steps: 0,
        }
    }

    /// One acknowledged packet; packets below `min_size` or without a stamp
    /// are skipped. Returns the packet's forward queueing delay.
    #[inline]
    pub fn on_packet(&mut self, packet: &AckedPacket, min_size: usize) -> Option<Duration> {
        // Skipped where the caller's loop runs: most packets of an ACK may
        // be small or unstamped, and a call for each costs more than the
        // test (the caller runs this on every acknowledged packet).
        let receive = packet.receive_time?;
        if packet.size < min_size {
            return None;
        }
        self.on_stamped(packet, receive)
    }

    /// [`ForwardQueue::on_packet`] of a stamped packet of at least the
    /// minimum size, `receive` its stamp.
    fn on_stamped(&mut self, packet: &AckedPacket, receive: Duration) -> Option<Duration> {
        let epoch = *self.epoch.get_or_insert(packet.time_sent);
        // Packets sent before the epoch (acknowledged out of order) are
        // skipped, as before the baseline existed.
        let since_epoch = packet.time_sent.checked_duration_since(epoch)?;
        // `forward_delay_nanos` for a packet sent after the epoch, without
        // taking the difference of the two instants again.
        let offset = peer_reports::nanos(receive).saturating_sub(peer_reports::nanos(since_epoch));
        if packet.clock_epoch != self.clock_epoch {
            // The host believes the peer's clock stepped: a new baseline.
            self.clock_epoch = packet.clock_epoch;
            self.clock_steps = self.clock_steps.saturating_add(1);
            self.base_offset.reset_to(offset);
        } else {
            self.base_offset.on_sample(offset);
        }
        let base = self.base_offset.get().unwrap_or(offset);
        let queue = Duration::from_nanos(u64::try_from(offset - base).unwrap_or(0));
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

    /// Steps of the peer's clock the baseline restarted on.
    pub fn clock_steps(&self) -> u64 {
        self.clock_steps
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
    fn a_new_peer_clock_restarts_the_baseline() {
        let t0 = Instant::now();
        let mut q = ForwardQueue::new(0);
        q.on_packet(&packet(t0, 1, 0, 300, 0), 675);
        q.on_packet(&packet(t0, 2, 10, 310, 0), 675);
        // The host believed the peer's clock stepped 10 s ahead (clock 1):
        // not a 10 s queue but the first sample of a new baseline.
        let mut stepped = packet(t0, 3, 20, 305, 10_000);
        stepped.clock_epoch = 1;
        assert_eq!(q.on_packet(&stepped, 675), Some(Duration::ZERO));
        assert_eq!(q.clock_steps(), 1);
        let mut next = packet(t0, 4, 30, 307, 10_000);
        next.clock_epoch = 1;
        assert_eq!(q.on_packet(&next, 675), Some(Duration::from_millis(2)));
        // Without the clock's number the same stamp reads as the step.
        let mut blind = ForwardQueue::new(0);
        blind.on_packet(&packet(t0, 1, 0, 300, 0), 675);
        let queue = blind.on_packet(&packet(t0, 3, 20, 305, 10_000), 675);
        assert_eq!(queue, Some(Duration::from_millis(10_000 + 5)));
        assert_eq!(blind.clock_steps(), 0);
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

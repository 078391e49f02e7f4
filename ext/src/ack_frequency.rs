//! ACK frequency, draft-ietf-quic-ack-frequency-14: a data sender asks its
//! peer to acknowledge less (or more) often.
//!
//! ```text
//! ACK_FREQUENCY Frame {
//!   Type (i) = 0xaf,
//!   Sequence Number (i),
//!   Ack-Eliciting Threshold (i),     // ACK after more than this many ack-eliciting packets
//!   Requested Max Ack Delay (i),     // microseconds
//!   Reordering Threshold (i),        // 0: reordering never hurries an ACK; 1: RFC 9000
//! }
//! IMMEDIATE_ACK Frame {
//!   Type (i) = 0x1f,
//! }
//! ```
//!
//! Both frames are ack-eliciting and only go to a peer that advertised the
//! min_ack_delay transport parameter ([`crate::params`]). Three parts, none
//! of which knows a QUIC stack:
//! - the frames ([`AckFrequencyFrame`]; IMMEDIATE_ACK has no fields);
//! - the data receiver's ACK policy ([`AckPolicy`]): when an ack-eliciting
//!   packet asks for an ACK at once and when one is due at the latest, from
//!   the peer's last ACK_FREQUENCY frame or, before one arrived, from our own
//!   ACK ratio (`--ack-every`, patch 0007);
//! - the data sender's choice of what to ask for ([`AckFrequencySender`]):
//!   an ACK per 1/64 of the window (about 64 ACKs per round trip while the
//!   window limits the sender), at most every 64 packets, sent again only
//!   when the window, the RTT or the loss detector's packet threshold
//!   changed materially.
//!
//! docs/extensions.md has the design and the choices.

use std::time::{Duration, Instant};

use crate::codepoints::{FRAME_TYPE_ACK_FREQUENCY, FRAME_TYPE_IMMEDIATE_ACK};
use crate::error::FrameError;

/// Requested Max Ack Delay must stay below 2^14 ms, the bound RFC 9000
/// section 18.2 puts on max_ack_delay.
pub const MAX_REQUESTED_MAX_ACK_DELAY_US: u64 = (1 << 14) * 1000 - 1;

/// The min_ack_delay we advertise: 1 ms, RFC 9002's timer granularity,
/// which our timers (and quiche's) honour.
pub const DEFAULT_MIN_ACK_DELAY_US: u64 = 1000;

/// RFC 9002's packet threshold (kPacketThreshold), for a loss detector that
/// does not say its own.
pub const DEFAULT_PACKET_THRESHOLD: u64 = 3;

/// Fewest ack-eliciting packets the sender lets go unacknowledged: 1 is the
/// RFC 9000 default (an ACK every second packet).
pub const MIN_ACK_ELICITING_THRESHOLD: u64 = 1;

/// Most ack-eliciting packets the sender lets go unacknowledged: one ACK then
/// covers 64 packets, which is as many receive timestamps as our apps ask
/// for per ACK, so thinning never costs a timestamp.
pub const MAX_ACK_ELICITING_THRESHOLD: u64 = 63;

/// ACKs asked for per window: the threshold is the window in packets over
/// this. A window-limited sender waits on average half an ACK interval
/// longer for each ACK, so its round trip looks longer by half of 1/64 (0.8
/// %). With a quarter window per ACK (at most 63 packets) vegas-sat's fau-sat
/// download took 6.89 s instead of 6.81 s without ACK frequency (the window
/// sits at the bandwidth-delay product there, and an ACK every 63 packets is
/// every 34 ms at 20 Mbit/s); with 1/64 it takes 6.80 s (docs/extensions.md).
pub const ACKS_PER_WINDOW: u64 = 64;

/// ACKs asked for per window from a peer that sends no receive timestamps.
/// The sender's own capacity estimate then comes from the spacing of ACKs
/// (vegas-sat's ACK trains), and an ACK without stamps is about a quarter
/// of the bytes of one with 64, so four times as many cost the return link
/// no more. With 64 per window, a client offering ACK frequency without
/// stamps took 8.11 s on fau-sat (seeds 1-5) against 6.83 s for a client
/// without either extension; with 256, 6.85 s (seeds 1-3; docs/satellite.md).
pub const ACKS_PER_WINDOW_WITHOUT_STAMPS: u64 = 256;

/// The fewest ack-eliciting packets left unacknowledged for a peer that
/// does not stamp: 0, an ACK for every packet while the window is under
/// [`ACKS_PER_WINDOW_WITHOUT_STAMPS`] packets, as quiche acknowledges
/// without the extension; the first round's ACKs are the first ACK train.
pub const MIN_ACK_ELICITING_THRESHOLD_WITHOUT_STAMPS: u64 = 0;

/// A new ACK_FREQUENCY frame is sent only when the threshold or the delay it
/// would ask for differs from the one in effect by at least this factor (or
/// the reordering threshold changed), and at most once per smoothed RTT.
pub const MATERIAL_CHANGE_FACTOR: u64 = 2;

/// Received packet-number ranges the receiver keeps for its reordering test;
/// beyond this the oldest are forgotten (treated as reported).
const MAX_TRACKED_RANGES: usize = 64;

/// An ACK_FREQUENCY frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFrequencyFrame {
    pub sequence_number: u64,
    pub ack_eliciting_threshold: u64,
    /// Microseconds.
    pub request_max_ack_delay_us: u64,
    pub reordering_threshold: u64,
}

impl AckFrequencyFrame {
    /// Parses the fields after the type.
    pub fn parse(b: &mut octets::Octets) -> Result<Self, FrameError> {
        Ok(AckFrequencyFrame {
            sequence_number: b.get_varint()?,
            ack_eliciting_threshold: b.get_varint()?,
            request_max_ack_delay_us: b.get_varint()?,
            reordering_threshold: b.get_varint()?,
        })
    }

    fn fields(&self) -> [u64; 4] {
        [
            self.sequence_number,
            self.ack_eliciting_threshold,
            self.request_max_ack_delay_us,
            self.reordering_threshold,
        ]
        .map(|v| v.min(octets::MAX_VAR_INT))
    }

    /// Writes the frame, type included.
    pub fn encode(&self, b: &mut octets::OctetsMut) -> Result<usize, octets::BufferTooShortError> {
        let before = b.off();
        b.put_varint(FRAME_TYPE_ACK_FREQUENCY)?;
        for v in self.fields() {
            b.put_varint(v)?;
        }
        Ok(b.off() - before)
    }

    pub fn wire_len(&self) -> usize {
        octets::varint_len(FRAME_TYPE_ACK_FREQUENCY)
            + self
                .fields()
                .iter()
                .map(|&v| octets::varint_len(v))
                .sum::<usize>()
    }

    pub fn request_max_ack_delay(&self) -> Duration {
        Duration::from_micros(self.request_max_ack_delay_us)
    }
}

/// Writes an IMMEDIATE_ACK frame.
pub fn encode_immediate_ack(
    b: &mut octets::OctetsMut,
) -> Result<usize, octets::BufferTooShortError> {
    Ok(b.put_varint(FRAME_TYPE_IMMEDIATE_ACK)?.len())
}

/// Bytes of an IMMEDIATE_ACK frame.
pub fn immediate_ack_wire_len() -> usize {
    octets::varint_len(FRAME_TYPE_IMMEDIATE_ACK)
}

/// What the data sender asked of us, as the receiver applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRequest {
    pub ack_eliciting_threshold: u64,
    pub max_ack_delay: Duration,
    pub reordering_threshold: u64,
}

/// How the data receiver answered one ack-eliciting packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckDecision {
    /// Acknowledge at the next opportunity.
    Now,
    /// The ACK may wait, until [`AckPolicy::deadline`] at the latest.
    Later,
}

/// The data receiver's ACK policy for the application packet-number space.
///
/// Before any ACK_FREQUENCY frame it is our own: an ACK after every
/// `ack_every` ack-eliciting packets (an ack-eliciting threshold of
/// `ack_every - 1`), within our max_ack_delay, and at once for a packet out
/// of order or after a gap (a reordering threshold of 1, RFC 9000 section
/// 13.2.1). `ack_every = 1` is stock quiche: every ack-eliciting packet at
/// once. The newest ACK_FREQUENCY frame replaces all three.
#[derive(Clone, Debug, Default)]
pub struct AckPolicy {
    /// The peer's newest request and its sequence number.
    request: Option<(u64, AckRequest)>,
    immediate_requested: bool,
    unacked_ack_eliciting: u64,
    deadline: Option<Instant>,
    /// When the oldest packet waiting for the deadline arrived.
    waiting_since: Option<Instant>,
    largest_received: Option<u64>,
    /// Largest Unacked: the largest ack-eliciting packet received.
    largest_ack_eliciting: Option<u64>,
    /// Largest Acked: the largest packet an ACK we sent acknowledged.
    largest_acked: Option<u64>,
    /// Received packet numbers (ascending, end-exclusive ranges) above what
    /// the reordering test still needs.
    received: Vec<(u64, u64)>,
    stale_frames: u64,
}

impl AckPolicy {
    /// What is in effect: the peer's request, else ours from `ack_every` and
    /// `local_max_ack_delay`.
    pub fn in_effect(&self, ack_every: u64, local_max_ack_delay: Duration) -> AckRequest {
        match self.request {
            Some((_, r)) => r,
            None => AckRequest {
                ack_eliciting_threshold: ack_every.max(1) - 1,
                max_ack_delay: local_max_ack_delay,
                reordering_threshold: 1,
            },
        }
    }

    /// The peer's newest ACK_FREQUENCY frame in effect, with its sequence
    /// number.
    pub fn peer_request(&self) -> Option<(u64, AckRequest)> {
        self.request
    }

    /// ACK_FREQUENCY frames ignored because a newer one was already applied.
    pub fn stale_frames(&self) -> u64 {
        self.stale_frames
    }

    /// Applies a received ACK_FREQUENCY frame. `min_ack_delay_us` is what we
    /// advertised (`None`: we did not, and the frame is not ours to accept).
    /// A Requested Max Ack Delay below it or not below 2^14 ms is a
    /// PROTOCOL_VIOLATION (the draft, section 4); a frame not newer than the
    /// newest applied is ignored.
    pub fn on_ack_frequency(
        &mut self,
        frame: &AckFrequencyFrame,
        min_ack_delay_us: Option<u64>,
    ) -> Result<(), FrameError> {
        let min = min_ack_delay_us.ok_or(FrameError::NotNegotiated)?;
        if frame.request_max_ack_delay_us < min
            || frame.request_max_ack_delay_us > MAX_REQUESTED_MAX_ACK_DELAY_US
        {
            return Err(FrameError::InvalidRequestedMaxAckDelay(
                frame.request_max_ack_delay_us,
            ));
        }
        if let Some((newest, _)) = self.request {
            if frame.sequence_number <= newest {
                self.stale_frames += 1;
                return Ok(());
            }
        }
        self.request = Some((
            frame.sequence_number,
            AckRequest {
                ack_eliciting_threshold: frame.ack_eliciting_threshold,
                max_ack_delay: frame.request_max_ack_delay(),
                reordering_threshold: frame.reordering_threshold,
            },
        ));
        // Packets already waiting wait for the new delay.
        if let Some(since) = self.waiting_since {
            self.deadline = Some(since + frame.request_max_ack_delay());
        }
        Ok(())
    }

    /// A received IMMEDIATE_ACK frame (`min_ack_delay_us` as for
    /// [`on_ack_frequency`](Self::on_ack_frequency)): the packet carrying it
    /// is acknowledged at once.
    pub fn on_immediate_ack(&mut self, min_ack_delay_us: Option<u64>) -> Result<(), FrameError> {
        min_ack_delay_us.ok_or(FrameError::NotNegotiated)?;
        self.immediate_requested = true;
        Ok(())
    }

    /// A packet of the application space was accepted at `now`, after its
    /// frames were processed. For an ack-eliciting one: whether it asks for
    /// an ACK now; otherwise the ACK is due by [`deadline`](Self::deadline).
    /// `ack_every` and `local_max_ack_delay` are our own policy, in effect
    /// until the peer sends ACK_FREQUENCY.
    pub fn on_packet(
        &mut self,
        pn: u64,
        ack_eliciting: bool,
        now: Instant,
        ack_every: u64,
        local_max_ack_delay: Duration,
    ) -> AckDecision {
        let previous_largest = self.largest_received;
        self.record_received(pn);
        if !ack_eliciting {
            return AckDecision::Later;
        }
        self.unacked_ack_eliciting += 1;
        self.largest_ack_eliciting = Some(self.largest_ack_eliciting.map_or(pn, |l| l.max(pn)));
        let policy = self.in_effect(ack_every, local_max_ack_delay);

        let now_due = std::mem::take(&mut self.immediate_requested)
            || self.unacked_ack_eliciting > policy.ack_eliciting_threshold
            || self.reordering_calls_for_ack(pn, previous_largest, policy.reordering_threshold);
        if now_due {
            return AckDecision::Now;
        }
        if self.deadline.is_none() {
            self.waiting_since = Some(now);
            self.deadline = Some(now + policy.max_ack_delay);
        }
        AckDecision::Later
    }

    /// Draft section 6.2: with threshold 1, any packet out of order or after
    /// a gap (and the first packet of the space, whose predecessors are all
    /// missing to the receiver: an early first RTT sample, as patch 0007
    /// did); with 0, never; above 1, when the gap reaches the threshold or
    /// the packet is one the sender may already have declared lost.
    fn reordering_calls_for_ack(
        &self,
        pn: u64,
        previous_largest: Option<u64>,
        threshold: u64,
    ) -> bool {
        match threshold {
            0 => false,
            1 => previous_largest.is_none_or(|l| pn < l || pn > l.saturating_add(1)),
            _ => {
                if let Some(acked) = self.largest_acked {
                    if acked
                        .checked_sub(threshold)
                        .is_some_and(|floor| pn <= floor)
                    {
                        return true;
                    }
                }
                match (
                    self.smallest_unreported_missing(threshold),
                    self.largest_ack_eliciting,
                ) {
                    (Some(missing), Some(largest)) => largest.saturating_sub(missing) >= threshold,
                    _ => false,
                }
            }
        }
    }

    /// The smallest packet number above Largest Reported Missing (Largest
    /// Acked - threshold) and below Largest Unacked not received.
    fn smallest_unreported_missing(&self, threshold: u64) -> Option<u64> {
        let largest = self.largest_ack_eliciting?;
        let floor = match self.largest_acked {
            Some(acked) => acked.checked_sub(threshold).map_or(0, |f| f + 1),
            None => 0,
        };
        let mut candidate = floor;
        for &(start, end) in &self.received {
            if end <= candidate {
                continue;
            }
            if start > candidate {
                break;
            }
            candidate = end;
        }
        (candidate < largest).then_some(candidate)
    }

    fn record_received(&mut self, pn: u64) {
        self.largest_received = Some(self.largest_received.map_or(pn, |l| l.max(pn)));
        let end = pn.saturating_add(1);
        // Ranges stay sorted and disjoint; most packets extend the last one.
        let i = self.received.partition_point(|&(_, e)| e < pn);
        if i == self.received.len() {
            self.received.push((pn, end));
        } else {
            let (s, e) = self.received[i];
            if end < s {
                self.received.insert(i, (pn, end));
            } else {
                self.received[i] = (s.min(pn), e.max(end));
                // Joining the next range when the gap closed.
                if i + 1 < self.received.len() && self.received[i + 1].0 <= self.received[i].1 {
                    let next_end = self.received[i + 1].1;
                    self.received[i].1 = self.received[i].1.max(next_end);
                    self.received.remove(i + 1);
                }
            }
        }
        if self.received.len() > MAX_TRACKED_RANGES {
            self.received.remove(0);
        }
    }

    /// An ACK acknowledging up to `largest_acked` was sent: counting and the
    /// delay start anew.
    pub fn on_ack_sent(&mut self, largest_acked: u64) {
        self.unacked_ack_eliciting = 0;
        self.deadline = None;
        self.waiting_since = None;
        self.immediate_requested = false;
        self.largest_acked = Some(
            self.largest_acked
                .map_or(largest_acked, |l| l.max(largest_acked)),
        );
        // Below Largest Reported Missing the reordering test no longer looks.
        let threshold = self
            .request
            .map_or(1, |(_, r)| r.reordering_threshold.max(1));
        if let Some(floor) = self.largest_acked.and_then(|a| a.checked_sub(threshold)) {
            self.received.retain(|&(_, e)| e > floor);
        }
    }

    /// When an ACK of packets that did not ask for one at once is due.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The timer fired at `now`: whether an ACK is now due.
    pub fn on_timeout(&mut self, now: Instant) -> bool {
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                self.waiting_since = None;
                true
            }
            _ => false,
        }
    }
}

/// What the data sender knows when choosing what to ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderView {
    pub cwnd_bytes: usize,
    pub max_datagram_size: usize,
    pub smoothed_rtt: Duration,
    /// The loss detector's packet threshold (RFC 9002 section 6.1.1; quiche
    /// raises it after spurious losses).
    pub packet_threshold: u64,
    /// The peer's min_ack_delay and max_ack_delay transport parameters.
    pub peer_min_ack_delay: Duration,
    pub peer_max_ack_delay: Duration,
    /// Receive timestamps we asked for per ACK when the peer will send them
    /// (it offered the extension too): one ACK should not cover more
    /// packets than that. `None`: the peer's ACKs carry no stamps.
    pub receive_timestamps_per_ack: Option<u64>,
}

/// What the data sender asks for in view of `view`:
/// - Ack-Eliciting Threshold: the window in full-size packets over
///   [`ACKS_PER_WINDOW`], within
///   [`MIN_ACK_ELICITING_THRESHOLD`]..=[`MAX_ACK_ELICITING_THRESHOLD`] and
///   below the receive timestamps one ACK carries; for a peer that does
///   not stamp, over [`ACKS_PER_WINDOW_WITHOUT_STAMPS`] and from
///   [`MIN_ACK_ELICITING_THRESHOLD_WITHOUT_STAMPS`];
/// - Requested Max Ack Delay: a quarter of the smoothed RTT, within the
///   peer's min_ack_delay and max_ack_delay (never above the latter, so the
///   PTO, which already allows for it, needs no change);
/// - Reordering Threshold: the loss detector's packet threshold (draft
///   section 9), so a gap that can be declared lost is reported at once.
pub fn desired_request(view: &SenderView) -> AckRequest {
    let packets = (view.cwnd_bytes / view.max_datagram_size.max(1)) as u64;
    let mut ceiling = MAX_ACK_ELICITING_THRESHOLD;
    if let Some(per_ack) = view.receive_timestamps_per_ack {
        ceiling = ceiling.min(per_ack.saturating_sub(1));
    }
    let (acks_per_window, floor) = match view.receive_timestamps_per_ack {
        Some(_) => (ACKS_PER_WINDOW, MIN_ACK_ELICITING_THRESHOLD),
        None => (
            ACKS_PER_WINDOW_WITHOUT_STAMPS,
            MIN_ACK_ELICITING_THRESHOLD_WITHOUT_STAMPS,
        ),
    };
    let threshold = (packets / acks_per_window).min(ceiling).max(floor);
    let delay = (view.smoothed_rtt / 4)
        .min(view.peer_max_ack_delay)
        .max(view.peer_min_ack_delay);
    AckRequest {
        ack_eliciting_threshold: threshold,
        max_ack_delay: delay,
        reordering_threshold: view.packet_threshold,
    }
}

fn differs_materially(a: u64, b: u64) -> bool {
    let (lo, hi) = (a.min(b).max(1), a.max(b));
    hi >= lo.saturating_mul(MATERIAL_CHANGE_FACTOR)
}

/// The data sender's side: which ACK_FREQUENCY frame to send, and when.
#[derive(Clone, Debug, Default)]
pub struct AckFrequencySender {
    next_sequence: u64,
    /// The newest request sent, and when.
    sent: Option<(AckRequest, Instant)>,
    /// The newest frame was lost: send the request again.
    resend: bool,
    frames_sent: u64,
}

impl AckFrequencySender {
    /// The frame to send now, if one is due: the first one, a lost newest
    /// one again, a materially higher threshold at once, or another
    /// material change at most once per smoothed RTT. Call
    /// [`on_sent`](Self::on_sent) once it is in a packet.
    pub fn frame_to_send(&self, view: &SenderView, now: Instant) -> Option<AckFrequencyFrame> {
        let want = desired_request(view);
        let due = match self.sent {
            None => true,
            Some(_) if self.resend => true,
            Some((sent, at)) => {
                let changed =
                    differs_materially(sent.ack_eliciting_threshold, want.ack_eliciting_threshold)
                        || differs_materially(
                            sent.max_ack_delay.as_micros() as u64,
                            want.max_ack_delay.as_micros() as u64,
                        )
                        || sent.reordering_threshold != want.reordering_threshold;
                // Fewer ACKs go out at once: a window that jumped (Careful
                // Resume, a capacity jump) would otherwise be acknowledged
                // packet by packet for a round trip, more than a thin
                // return link carries.
                let thinner = want.ack_eliciting_threshold > sent.ack_eliciting_threshold
                    && differs_materially(
                        sent.ack_eliciting_threshold,
                        want.ack_eliciting_threshold,
                    );
                thinner || (changed && now.saturating_duration_since(at) >= view.smoothed_rtt)
            }
        };
        due.then(|| AckFrequencyFrame {
            sequence_number: self.next_sequence,
            ack_eliciting_threshold: want.ack_eliciting_threshold,
            request_max_ack_delay_us: u64::try_from(want.max_ack_delay.as_micros())
                .unwrap_or(u64::MAX),
            reordering_threshold: want.reordering_threshold,
        })
    }

    /// `frame`, from [`frame_to_send`](Self::frame_to_send), was put in a
    /// packet at `now`.
    pub fn on_sent(&mut self, frame: &AckFrequencyFrame, now: Instant) {
        // Sequence numbers only ever grow.
        self.next_sequence = self
            .next_sequence
            .max(frame.sequence_number.saturating_add(1));
        self.sent = Some((
            AckRequest {
                ack_eliciting_threshold: frame.ack_eliciting_threshold,
                max_ack_delay: frame.request_max_ack_delay(),
                reordering_threshold: frame.reordering_threshold,
            },
            now,
        ));
        self.resend = false;
        self.frames_sent += 1;
    }

    /// A packet carrying `frame` was declared lost: unless a newer frame was
    /// sent since, the request goes out again (with a new sequence number).
    pub fn on_lost(&mut self, frame: &AckFrequencyFrame) {
        if frame.sequence_number.saturating_add(1) == self.next_sequence {
            self.resend = true;
        }
    }

    /// The newest request sent.
    pub fn in_effect(&self) -> Option<AckRequest> {
        self.sent.map(|(r, _)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn frame(seq: u64, threshold: u64, delay_us: u64, reorder: u64) -> AckFrequencyFrame {
        AckFrequencyFrame {
            sequence_number: seq,
            ack_eliciting_threshold: threshold,
            request_max_ack_delay_us: delay_us,
            reordering_threshold: reorder,
        }
    }

    fn encoded(f: &AckFrequencyFrame) -> Vec<u8> {
        let mut out = vec![0; 64];
        let mut b = octets::OctetsMut::with_slice(&mut out);
        let len = f.encode(&mut b).unwrap();
        assert_eq!(len, f.wire_len());
        out.truncate(len);
        out
    }

    #[test]
    fn frame_round_trips_and_truncation_is_an_error() {
        let f = frame(7, 63, 25_000, 3);
        let bytes = encoded(&f);
        let mut b = octets::Octets::with_slice(&bytes);
        assert_eq!(b.get_varint().unwrap(), FRAME_TYPE_ACK_FREQUENCY);
        assert_eq!(AckFrequencyFrame::parse(&mut b), Ok(f));
        assert_eq!(b.cap(), 0);
        for cut in 2..bytes.len() {
            let mut b = octets::Octets::with_slice(&bytes[..cut]);
            b.get_varint().unwrap();
            assert_eq!(
                AckFrequencyFrame::parse(&mut b),
                Err(FrameError::Truncated),
                "cut at {cut}"
            );
        }
        let mut out = [0u8; 1];
        assert_eq!(immediate_ack_wire_len(), 1);
        assert_eq!(
            encode_immediate_ack(&mut octets::OctetsMut::with_slice(&mut out)),
            Ok(1)
        );
        assert_eq!(out[0], 0x1f);
    }

    #[test]
    fn fields_beyond_a_varint_are_clamped_on_encode() {
        let f = frame(u64::MAX, u64::MAX, u64::MAX, u64::MAX);
        let bytes = encoded(&f);
        let mut b = octets::Octets::with_slice(&bytes);
        b.get_varint().unwrap();
        let parsed = AckFrequencyFrame::parse(&mut b).unwrap();
        assert_eq!(parsed.sequence_number, octets::MAX_VAR_INT);
    }

    fn packets(policy: &mut AckPolicy, pns: &[u64], t: Instant, ack_every: u64) -> Vec<bool> {
        pns.iter()
            .map(|&pn| {
                let now = policy.on_packet(pn, true, t, ack_every, 25 * MS) == AckDecision::Now;
                if now {
                    policy.on_ack_sent(policy.largest_received.unwrap());
                }
                now
            })
            .collect()
    }

    #[test]
    fn without_a_frame_ack_every_is_the_policy() {
        let t = Instant::now();
        // Stock: every ack-eliciting packet at once.
        let mut p = AckPolicy::default();
        assert_eq!(packets(&mut p, &[0, 1, 2], t, 1), vec![true; 3]);
        // --ack-every 4: the first packet, every fourth after it, and the
        // packet after a gap at once.
        let mut p = AckPolicy::default();
        assert_eq!(
            packets(&mut p, &[0, 1, 2, 3, 4, 6, 7], t, 4),
            vec![true, false, false, false, true, true, false]
        );
        assert_eq!(p.deadline(), Some(t + 25 * MS));
        // Non-ack-eliciting packets never ask for an ACK nor start the timer.
        let mut p = AckPolicy::default();
        assert_eq!(p.on_packet(0, false, t, 1, 25 * MS), AckDecision::Later);
        assert_eq!(p.deadline(), None);
    }

    #[test]
    fn the_threshold_counts_ack_eliciting_packets_above_it() {
        let t = Instant::now();
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(0, 3, 10_000, 0), Some(1000))
            .unwrap();
        let got = packets(&mut p, &(0..8).collect::<Vec<_>>(), t, 1);
        assert_eq!(
            got,
            vec![false, false, false, true, false, false, false, true]
        );
        // The requested delay replaces ours.
        p.on_packet(8, true, t, 1, 25 * MS);
        assert_eq!(p.deadline(), Some(t + 10 * MS));
        assert!(!p.on_timeout(t + 9 * MS));
        assert!(p.on_timeout(t + 10 * MS));
        assert_eq!(p.deadline(), None);
    }

    #[test]
    fn stale_and_repeated_sequence_numbers_are_ignored() {
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(5, 9, 2000, 3), Some(1000))
            .unwrap();
        p.on_ack_frequency(&frame(4, 1, 2000, 1), Some(1000))
            .unwrap();
        p.on_ack_frequency(&frame(5, 1, 2000, 1), Some(1000))
            .unwrap();
        assert_eq!(p.peer_request().unwrap().1.ack_eliciting_threshold, 9);
        assert_eq!(p.stale_frames(), 2);
        p.on_ack_frequency(&frame(6, 2, 2000, 1), Some(1000))
            .unwrap();
        assert_eq!(p.peer_request().unwrap().0, 6);
    }

    #[test]
    fn invalid_delays_and_unnegotiated_frames_are_refused() {
        let mut p = AckPolicy::default();
        assert_eq!(
            p.on_ack_frequency(&frame(0, 9, 999, 1), Some(1000)),
            Err(FrameError::InvalidRequestedMaxAckDelay(999))
        );
        assert_eq!(
            p.on_ack_frequency(&frame(0, 9, 16_384_000, 1), Some(1000)),
            Err(FrameError::InvalidRequestedMaxAckDelay(16_384_000))
        );
        assert!(p
            .on_ack_frequency(&frame(0, 9, 16_383_999, 1), Some(1000))
            .is_ok());
        assert_eq!(
            p.on_ack_frequency(&frame(1, 9, 5000, 1), None),
            Err(FrameError::NotNegotiated)
        );
        assert_eq!(p.on_immediate_ack(None), Err(FrameError::NotNegotiated));
        assert!(FrameError::InvalidRequestedMaxAckDelay(1).is_protocol_violation());
        assert!(!FrameError::NotNegotiated.is_protocol_violation());
    }

    #[test]
    fn immediate_ack_acknowledges_the_packet_at_once() {
        let t = Instant::now();
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(0, 50, 25_000, 0), Some(1000))
            .unwrap();
        assert_eq!(p.on_packet(0, true, t, 1, 25 * MS), AckDecision::Later);
        p.on_immediate_ack(Some(1000)).unwrap();
        assert_eq!(p.on_packet(1, true, t, 1, 25 * MS), AckDecision::Now);
        assert_eq!(p.on_packet(2, true, t, 1, 25 * MS), AckDecision::Later);
    }

    #[test]
    fn reordering_threshold_zero_ignores_reordering_and_one_is_rfc9000() {
        let t = Instant::now();
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(0, 100, 25_000, 0), Some(1000))
            .unwrap();
        assert_eq!(packets(&mut p, &[0, 1, 5, 2, 9, 3], t, 1), vec![false; 6]);
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(0, 100, 25_000, 1), Some(1000))
            .unwrap();
        assert_eq!(
            packets(&mut p, &[0, 1, 3, 4, 2, 5], t, 1),
            vec![true, false, true, false, true, false]
        );
    }

    /// The draft's tables 1 and 2 (section 6.2.1), packet by packet.
    #[test]
    fn reordering_thresholds_three_and_five_follow_the_drafts_examples() {
        let t = Instant::now();
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(0, 1000, 25_000, 3), Some(1000))
            .unwrap();
        assert_eq!(
            packets(&mut p, &[0, 1, 3, 4, 5, 8, 9, 10], t, 1),
            vec![false, false, false, false, true, false, true, true]
        );
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(0, 1000, 25_000, 5), Some(1000))
            .unwrap();
        assert_eq!(
            packets(&mut p, &[0, 1, 3, 5, 6, 7, 8, 9], t, 1),
            vec![false, false, false, false, false, true, false, true]
        );
    }

    #[test]
    fn a_late_packet_the_sender_may_have_declared_lost_is_acknowledged_at_once() {
        let t = Instant::now();
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(0, 1000, 25_000, 3), Some(1000))
            .unwrap();
        // 2 is missing; 5 reports it (5 - 2 >= 3).
        assert_eq!(
            packets(&mut p, &[0, 1, 3, 4, 5, 6, 7, 8], t, 1),
            vec![false, false, false, false, true, false, false, false]
        );
        // 2 arrives after Largest Acked (5) - 3: at once.
        assert_eq!(p.on_packet(2, true, t, 1, 25 * MS), AckDecision::Now);
    }

    #[test]
    fn tracked_ranges_stay_bounded() {
        let t = Instant::now();
        let mut p = AckPolicy::default();
        p.on_ack_frequency(&frame(0, u64::MAX, 25_000, 0), Some(1000))
            .unwrap();
        for pn in (0..10_000).step_by(2) {
            p.on_packet(pn, true, t, 1, 25 * MS);
        }
        assert!(p.received.len() <= MAX_TRACKED_RANGES);
        // Ranges merge when the gaps fill.
        let mut p = AckPolicy::default();
        for pn in [0, 2, 4, 1, 3] {
            p.record_received(pn);
        }
        assert_eq!(p.received, vec![(0, 5)]);
    }

    fn view(cwnd_packets: usize, srtt_ms: u64) -> SenderView {
        SenderView {
            cwnd_bytes: cwnd_packets * 1350,
            max_datagram_size: 1350,
            smoothed_rtt: Duration::from_millis(srtt_ms),
            packet_threshold: 3,
            peer_min_ack_delay: MS,
            peer_max_ack_delay: 25 * MS,
            receive_timestamps_per_ack: Some(64),
        }
    }

    fn unstamped_view(cwnd_packets: usize) -> SenderView {
        SenderView {
            receive_timestamps_per_ack: None,
            ..view(cwnd_packets, 600)
        }
    }

    #[test]
    fn a_peer_without_stamps_is_asked_for_an_ack_per_256th_of_the_window_from_every_packet() {
        for cwnd in [
            1usize, 10, 255, 256, 511, 1100, 4032, 16_383, 16_384, 100_000,
        ] {
            // The reference: floor(cwnd / 256), never above 63; an ACK for
            // every packet (threshold 0) below 256 packets.
            let expected = ((cwnd / 256) as u64).min(63);
            assert_eq!(
                desired_request(&unstamped_view(cwnd)).ack_eliciting_threshold,
                expected,
                "{cwnd}"
            );
        }
        // A stamping peer with the same window is thinned four times as much.
        assert_eq!(
            desired_request(&view(1100, 600)).ack_eliciting_threshold,
            17
        );
        assert_eq!(
            desired_request(&unstamped_view(1100)).ack_eliciting_threshold,
            4
        );
    }

    #[test]
    fn the_sender_asks_for_an_ack_per_64th_of_the_window_bounded() {
        for (cwnd, threshold) in [
            (2, 1),
            (10, 1),
            (200, 3),
            (1100, 17),
            (4032, 63),
            (100_000, 63),
        ] {
            assert_eq!(
                desired_request(&view(cwnd, 600)).ack_eliciting_threshold,
                threshold,
                "{cwnd}"
            );
        }
        let mut v = view(1000, 600);
        v.receive_timestamps_per_ack = Some(16);
        assert_eq!(desired_request(&v).ack_eliciting_threshold, 15);
        // A quarter of the RTT, within the peer's bounds.
        assert_eq!(desired_request(&view(10, 600)).max_ack_delay, 25 * MS);
        assert_eq!(desired_request(&view(10, 20)).max_ack_delay, 5 * MS);
        assert_eq!(desired_request(&view(10, 2)).max_ack_delay, MS);
        assert_eq!(desired_request(&view(10, 2)).reordering_threshold, 3);
    }

    #[test]
    fn the_sender_updates_on_material_changes_at_most_once_per_rtt() {
        let t = Instant::now();
        let mut s = AckFrequencySender::default();
        let first = s.frame_to_send(&view(640, 600), t).unwrap();
        assert_eq!(
            (first.sequence_number, first.ack_eliciting_threshold),
            (0, 10)
        );
        s.on_sent(&first, t);
        // Small changes never; a halving only after a smoothed RTT; a
        // doubling at once.
        assert_eq!(s.frame_to_send(&view(960, 600), t + 700 * MS), None);
        assert_eq!(s.frame_to_send(&view(320, 600), t + 100 * MS), None);
        assert!(s.frame_to_send(&view(320, 600), t + 600 * MS).is_some());
        let second = s.frame_to_send(&view(1280, 600), t + 100 * MS).unwrap();
        assert_eq!(
            (second.sequence_number, second.ack_eliciting_threshold),
            (1, 20)
        );
        s.on_sent(&second, t + 600 * MS);
        // A changed packet threshold is material.
        let mut v = view(1280, 600);
        v.packet_threshold = 4;
        assert!(s.frame_to_send(&v, t + 1200 * MS).is_some());
        // Losing an older frame changes nothing; losing the newest resends.
        s.on_lost(&first);
        assert_eq!(s.frame_to_send(&view(1280, 600), t + 700 * MS), None);
        s.on_lost(&second);
        let again = s.frame_to_send(&view(1280, 600), t + 700 * MS).unwrap();
        assert_eq!(
            (again.sequence_number, again.ack_eliciting_threshold),
            (2, 20)
        );
        s.on_sent(&again, t + 700 * MS);
        assert_eq!(s.in_effect().unwrap().ack_eliciting_threshold, 20);
    }

    #[test]
    fn a_much_higher_threshold_goes_out_at_once_a_lower_one_after_a_round_trip() {
        let t = Instant::now();
        let mut s = AckFrequencySender::default();
        let first = s.frame_to_send(&unstamped_view(10), t).unwrap();
        assert_eq!(first.ack_eliciting_threshold, 0);
        s.on_sent(&first, t);
        // A window that jumped (Careful Resume) is thinned in the same
        // round trip: 8 000 packets over 256 is 31.
        let jump = s
            .frame_to_send(&unstamped_view(8000), t + MS)
            .expect("a jump's thinning waits for nothing");
        assert_eq!(jump.ack_eliciting_threshold, 31);
        s.on_sent(&jump, t + MS);
        // Less than double: nothing, whenever.
        assert_eq!(s.frame_to_send(&unstamped_view(12_000), t + 2 * MS), None);
        // A fall to a quarter asks for more ACKs, but only a smoothed RTT
        // after the last frame.
        assert_eq!(s.frame_to_send(&unstamped_view(2000), t + 100 * MS), None);
        let lower = s
            .frame_to_send(&unstamped_view(2000), t + MS + 600 * MS)
            .unwrap();
        assert_eq!(lower.ack_eliciting_threshold, 7);
    }
}

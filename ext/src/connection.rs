//! Everything one QUIC connection keeps for our extensions, in both roles,
//! without any QUIC stack: the stack calls in at a handful of points (a
//! datagram arrives, a 1-RTT packet was accepted, an ACK frame is built or
//! sent, an extension frame arrives) and does the wire work with the frames.

use std::time::{Duration, Instant};

use crate::ack_frequency::{
    AckDecision, AckFrequencyFrame, AckFrequencySender, AckPolicy, SenderView,
};
use crate::ack_receive_timestamps::{
    ranges_contain, AckRange, AckReceiveTimestampsFrame, PacketReceiveTime,
};
use crate::error::FrameError;
use crate::params::ExtensionParams;
use crate::queueing_time::QueueingTimeFrame;
use crate::received_packets::ReceivedPacketLog;

/// Most receive timestamps we put in one frame, whatever the peer allows.
pub const MAX_TIMESTAMPS_PER_FRAME_SENT: u64 = 255;

/// What the congestion controller's host judged of the peer's reports:
/// handed to the controller, and refused (filled in by the stack).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandedCounts {
    pub receive_times: u64,
    pub forward_queueing: u64,
    pub backward_queueing: u64,
    pub rejected_receive_times: u64,
    pub rejected_forward_queueing: u64,
    pub rejected_backward_queueing: u64,
}

/// Counters of one connection's extension traffic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtensionStats {
    /// The peer asked for receive timestamps (we send ACK_RECEIVE_TIMESTAMPS).
    pub sending_receive_timestamps: bool,
    /// The peer accepts QUEUEING_TIME frames.
    pub sending_queueing_times: bool,
    pub ack_receive_timestamps_frames_sent: u64,
    pub receive_timestamps_sent: u64,
    pub ack_receive_timestamps_frames_received: u64,
    pub receive_timestamps_received: u64,
    pub queueing_time_frames_sent: u64,
    pub queueing_times_sent: u64,
    pub queueing_time_frames_received: u64,
    pub queueing_times_received: u64,
    /// Datagrams that arrived with an AQT value from the routers.
    pub datagrams_with_queueing_time: u64,
    /// Packets currently in the receiver's record, and how many it dropped
    /// unreported because it was full.
    pub received_packets_logged: u64,
    pub received_packet_log_evictions: u64,
    /// What reached the congestion controller (filled in by the stack).
    pub handed: HandedCounts,
    /// ACK frequency (draft-ietf-quic-ack-frequency): both endpoints
    /// advertised min_ack_delay, so we send ACK_FREQUENCY as data sender.
    pub sending_ack_frequency: bool,
    pub ack_frequency_frames_sent: u64,
    pub ack_frequency_frames_received: u64,
    /// Received ACK_FREQUENCY frames ignored as not newer than one applied.
    pub ack_frequency_frames_stale: u64,
    pub immediate_acks_sent: u64,
    pub immediate_acks_received: u64,
    /// ACK frames (plain or with receive timestamps) we sent in the
    /// application packet-number space.
    pub application_acks_sent: u64,
    /// The Ack-Eliciting Threshold the peer asked of us (in effect), and the
    /// one we asked of the peer last.
    pub peer_ack_eliciting_threshold: Option<u64>,
    pub requested_ack_eliciting_threshold: Option<u64>,
}

/// Per-connection state of our extensions.
#[derive(Clone, Debug)]
pub struct ConnectionExtensions {
    basis: Instant,
    log: ReceivedPacketLog,
    next_datagram_queueing: Option<Duration>,
    datagram_queueing: Option<Duration>,
    /// When the next datagram reached the host (the kernel's stamp), and the
    /// current datagram's.
    next_datagram_received_at: Option<Instant>,
    datagram_received_at: Option<Instant>,
    /// Packet numbers in the frames built last, reported once those are sent.
    timestamps_in_last_frame: Vec<u64>,
    queueing_times_in_last_frame: Vec<u64>,
    received_times: Vec<PacketReceiveTime>,
    /// As data receiver: when our ACKs go out (ACK_FREQUENCY, --ack-every).
    ack_policy: AckPolicy,
    /// As data sender: what we ask the peer for.
    ack_frequency: AckFrequencySender,
    stats: ExtensionStats,
}

impl ConnectionExtensions {
    /// State for a connection created at `created_at`. The receive timestamp
    /// basis is 1 ms before that, so that it is below every receive time we
    /// will report, as the draft requires.
    pub fn new(created_at: Instant) -> Self {
        ConnectionExtensions {
            basis: created_at
                .checked_sub(Duration::from_millis(1))
                .unwrap_or(created_at),
            log: ReceivedPacketLog::default(),
            next_datagram_queueing: None,
            datagram_queueing: None,
            next_datagram_received_at: None,
            datagram_received_at: None,
            timestamps_in_last_frame: Vec::new(),
            queueing_times_in_last_frame: Vec::new(),
            received_times: Vec::new(),
            ack_policy: AckPolicy::default(),
            ack_frequency: AckFrequencySender::default(),
            stats: ExtensionStats::default(),
        }
    }

    /// Our receive_timestamp_basis (a local value, never sent).
    pub fn basis(&self) -> Instant {
        self.basis
    }

    /// `at` as a receive timestamp: microseconds since the basis.
    pub fn receive_timestamp(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.basis).as_micros()).unwrap_or(u64::MAX)
    }

    /// The AQT value that AQT-enabled routers reported for the next datagram
    /// the stack receives (set before handing the datagram over).
    pub fn set_next_datagram_queueing_time(&mut self, queueing: Duration) {
        self.next_datagram_queueing = Some(queueing);
    }

    /// When the next datagram the stack receives reached the host, e.g. the
    /// kernel's receive timestamp (set before handing the datagram over).
    /// Without it a packet's receive timestamp is when the stack processed
    /// it, which is later by however long the application took to read it:
    /// two packets read in one batch then look as if they arrived together.
    pub fn set_next_datagram_received_at(&mut self, at: Instant) {
        self.next_datagram_received_at = Some(at);
    }

    /// A datagram's processing starts: its AQT, if one was given for it.
    pub fn start_datagram(&mut self) -> Option<Duration> {
        self.datagram_received_at = self.next_datagram_received_at.take();
        self.datagram_queueing = self.next_datagram_queueing.take();
        if self.datagram_queueing.is_some() {
            self.stats.datagrams_with_queueing_time += 1;
        }
        self.datagram_queueing
    }

    /// A 1-RTT packet of the current datagram was accepted at `now`.
    pub fn on_packet_received(&mut self, packet_number: u64, now: Instant, peer: &ExtensionParams) {
        let timestamp_wanted = peer.receive_timestamps_request().is_some();
        let forward_queueing_us = peer
            .queueing_times_limit()
            .and(self.datagram_queueing)
            .map(|q| u64::try_from(q.as_micros()).unwrap_or(u64::MAX));
        // The datagram's arrival when the host knows it, never after `now`
        // nor before the basis (a clock that went wrong is not believed).
        let received_at = self
            .datagram_received_at
            .filter(|at| *at <= now && *at >= self.basis)
            .unwrap_or(now);
        let receive_time_us = self.receive_timestamp(received_at);
        self.log.record(
            packet_number,
            receive_time_us,
            timestamp_wanted,
            forward_queueing_us,
        );
    }

    /// The ACK_RECEIVE_TIMESTAMPS frame to send instead of an ACK frame with
    /// `ack_delay` and `ack_ranges` (descending), or `None` when the peer did
    /// not ask for timestamps. Timestamps are dropped, oldest first, until
    /// the frame takes at most `max_len` bytes.
    pub fn ack_receive_timestamps_frame(
        &mut self,
        peer: &ExtensionParams,
        ack_delay: u64,
        ack_ranges: &[AckRange],
        max_len: usize,
    ) -> Option<AckReceiveTimestampsFrame> {
        self.timestamps_in_last_frame.clear();
        let request = peer.receive_timestamps_request()?;
        if let Some(smallest) = ack_ranges.last().map(|r| r.smallest) {
            self.log.forget_below(smallest);
        }
        let max = request.max_per_ack.min(MAX_TIMESTAMPS_PER_FRAME_SENT) as usize;
        let selection = self
            .log
            .select_timestamps(|pn| ranges_contain(ack_ranges, pn), max);
        let mut frame = AckReceiveTimestampsFrame::build(
            ack_delay,
            ack_ranges.to_vec(),
            None,
            &selection,
            request.exponent,
        )
        .ok()?;
        frame.truncate_to_fit(max_len);
        let kept = frame.timestamp_count() as usize;
        self.timestamps_in_last_frame
            .extend(selection.iter().take(kept).map(|&(pn, _)| pn));
        Some(frame)
    }

    /// The frame [`ack_receive_timestamps_frame`](Self::ack_receive_timestamps_frame)
    /// built last went out.
    ///
    /// Receive times that did not fit (more than the peer allows per frame,
    /// or than the packet had room for) wait for the next ACK frame, which
    /// again takes the newest first. A sender hands a receive time to its
    /// controller with the ACK that newly acknowledges the packet, so older
    /// ones reported in a later ACK would be of no use to it: the newest are
    /// the ones worth the space.
    pub fn on_ack_receive_timestamps_sent(&mut self) {
        self.stats.ack_receive_timestamps_frames_sent += 1;
        self.stats.receive_timestamps_sent += self.timestamps_in_last_frame.len() as u64;
        let sent = std::mem::take(&mut self.timestamps_in_last_frame);
        self.log.mark_timestamps_reported(&sent);
    }

    /// The QUEUEING_TIME frame to send just before an ACK frame acknowledging
    /// `ack_ranges`, or `None` when the peer does not accept the frame or
    /// there is nothing to echo. At most `max_len` bytes.
    pub fn queueing_time_frame(
        &mut self,
        peer: &ExtensionParams,
        ack_ranges: &[AckRange],
        max_len: usize,
    ) -> Option<QueueingTimeFrame> {
        self.queueing_times_in_last_frame.clear();
        let limit = peer.queueing_times_limit()?;
        let entries = self
            .log
            .select_queueing_times(|pn| ranges_contain(ack_ranges, pn), limit as usize);
        let frame = QueueingTimeFrame::new(entries)
            .ok()?
            .truncated_to_fit(max_len)?;
        self.queueing_times_in_last_frame
            .extend(frame.entries().iter().map(|e| e.packet_number));
        Some(frame)
    }

    /// The frame [`queueing_time_frame`](Self::queueing_time_frame) built
    /// last went out.
    pub fn on_queueing_time_frame_sent(&mut self) {
        self.stats.queueing_time_frames_sent += 1;
        self.stats.queueing_times_sent += self.queueing_times_in_last_frame.len() as u64;
        let sent = std::mem::take(&mut self.queueing_times_in_last_frame);
        self.log.mark_queueing_times_reported(&sent);
    }

    /// Checks a received ACK_RECEIVE_TIMESTAMPS frame against our parameters
    /// and returns the receive times it reports for the packets it
    /// acknowledges.
    pub fn on_ack_receive_timestamps_received(
        &mut self,
        local: &ExtensionParams,
        frame: &AckReceiveTimestampsFrame,
    ) -> Result<&[PacketReceiveTime], FrameError> {
        let limit = local
            .receive_timestamps_limit()
            .ok_or(FrameError::NotNegotiated)?;
        self.received_times.clear();
        frame.receive_times(
            limit,
            local.receive_timestamps_exponent_or_default(),
            &mut self.received_times,
        )?;
        self.stats.ack_receive_timestamps_frames_received += 1;
        self.stats.receive_timestamps_received += self.received_times.len() as u64;
        Ok(&self.received_times)
    }

    /// Checks a received QUEUEING_TIME frame against our parameters.
    pub fn on_queueing_time_received(
        &mut self,
        local: &ExtensionParams,
        frame: &QueueingTimeFrame,
    ) -> Result<(), FrameError> {
        frame.check_limit(local.queueing_times_limit())?;
        self.stats.queueing_time_frames_received += 1;
        self.stats.queueing_times_received += frame.entries().len() as u64;
        Ok(())
    }

    /// A packet of the application space was accepted at `now` (its frames
    /// processed): whether it asks for an ACK at once. `ack_every` and
    /// `local_max_ack_delay` are our own ACK policy until the peer sends
    /// ACK_FREQUENCY; see [`AckPolicy`].
    pub fn on_application_packet(
        &mut self,
        pn: u64,
        ack_eliciting: bool,
        now: Instant,
        ack_every: u64,
        local_max_ack_delay: Duration,
    ) -> bool {
        self.ack_policy
            .on_packet(pn, ack_eliciting, now, ack_every, local_max_ack_delay)
            == AckDecision::Now
    }

    /// An ACK frame acknowledging up to `largest_acked` went out in the
    /// application space.
    pub fn on_application_ack_sent(&mut self, largest_acked: u64) {
        self.stats.application_acks_sent += 1;
        self.ack_policy.on_ack_sent(largest_acked);
    }

    /// When an ACK that was allowed to wait is due.
    pub fn ack_deadline(&self) -> Option<Instant> {
        self.ack_policy.deadline()
    }

    /// Timers fired at `now`: whether a waiting ACK is now due.
    pub fn on_ack_timeout(&mut self, now: Instant) -> bool {
        self.ack_policy.on_timeout(now)
    }

    /// A received ACK_FREQUENCY frame; `local` are our parameters.
    pub fn on_ack_frequency_received(
        &mut self,
        local: &ExtensionParams,
        frame: &AckFrequencyFrame,
    ) -> Result<(), FrameError> {
        self.ack_policy
            .on_ack_frequency(frame, local.min_ack_delay)?;
        self.stats.ack_frequency_frames_received += 1;
        Ok(())
    }

    /// A received IMMEDIATE_ACK frame; `local` are our parameters.
    pub fn on_immediate_ack_received(&mut self, local: &ExtensionParams) -> Result<(), FrameError> {
        self.ack_policy.on_immediate_ack(local.min_ack_delay)?;
        self.stats.immediate_acks_received += 1;
        Ok(())
    }

    /// Whether we send ACK_FREQUENCY and IMMEDIATE_ACK: we offer the
    /// extension ourselves (`local`) and the peer advertised min_ack_delay.
    pub fn sending_ack_frequency(local: &ExtensionParams, peer: &ExtensionParams) -> bool {
        local.min_ack_delay.is_some() && peer.min_ack_delay.is_some()
    }

    /// The ACK_FREQUENCY frame to send now, if one is due (see
    /// [`AckFrequencySender`]). `view` without the peer's min_ack_delay,
    /// which is taken from `peer`.
    pub fn ack_frequency_frame(
        &self,
        local: &ExtensionParams,
        peer: &ExtensionParams,
        view: SenderView,
        now: Instant,
    ) -> Option<AckFrequencyFrame> {
        if !Self::sending_ack_frequency(local, peer) {
            return None;
        }
        let view = SenderView {
            peer_min_ack_delay: peer.ack_frequency_min_delay()?,
            // A peer that did not offer the extension sends no stamps.
            receive_timestamps_per_ack: view
                .receive_timestamps_per_ack
                .filter(|_| peer.receive_timestamps_request().is_some()),
            ..view
        };
        self.ack_frequency.frame_to_send(&view, now)
    }

    /// An ACK_FREQUENCY frame went out at `now`.
    pub fn on_ack_frequency_sent(&mut self, frame: &AckFrequencyFrame, now: Instant) {
        self.ack_frequency.on_sent(frame, now);
        self.stats.ack_frequency_frames_sent += 1;
    }

    /// A packet with this ACK_FREQUENCY frame was declared lost.
    pub fn on_ack_frequency_lost(&mut self, frame: &AckFrequencyFrame) {
        self.ack_frequency.on_lost(frame);
    }

    /// An IMMEDIATE_ACK frame went out.
    pub fn on_immediate_ack_sent(&mut self) {
        self.stats.immediate_acks_sent += 1;
    }

    /// The counters, with what the parameters make us send; `local` are our
    /// parameters, `peer` the peer's.
    pub fn stats(&self, local: &ExtensionParams, peer: &ExtensionParams) -> ExtensionStats {
        ExtensionStats {
            sending_receive_timestamps: peer.receive_timestamps_request().is_some(),
            sending_queueing_times: peer.queueing_times_limit().is_some(),
            sending_ack_frequency: Self::sending_ack_frequency(local, peer),
            ack_frequency_frames_stale: self.ack_policy.stale_frames(),
            peer_ack_eliciting_threshold: self
                .ack_policy
                .peer_request()
                .map(|(_, r)| r.ack_eliciting_threshold),
            requested_ack_eliciting_threshold: self
                .ack_frequency
                .in_effect()
                .map(|r| r.ack_eliciting_threshold),
            received_packets_logged: self.log.len() as u64,
            received_packet_log_evictions: self.log.evicted(),
            ..self.stats
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(max: u64, exponent: u64, queueing: bool) -> ExtensionParams {
        let mut p = ExtensionParams::default();
        p.set_max_receive_timestamps_per_ack(max);
        p.set_receive_timestamps_exponent(exponent).unwrap();
        p.set_queueing_time_frame(queueing);
        p
    }

    /// Receiver and sender, without a QUIC stack in between: the times the
    /// receiver recorded are the times the sender decodes.
    #[test]
    fn receiver_records_and_sender_decodes_the_same_times() {
        let t0 = Instant::now();
        let sender_params = peer(16, 0, true);
        let mut receiver = ConnectionExtensions::new(t0);
        let mut sender = ConnectionExtensions::new(t0);
        let mut recorded = Vec::new();
        for pn in 0..10u64 {
            let at = t0 + Duration::from_micros(1_000 + pn * 1_234);
            receiver.set_next_datagram_queueing_time(Duration::from_micros(pn * 100));
            receiver.start_datagram();
            receiver.on_packet_received(pn, at, &sender_params);
            recorded.push((pn, receiver.receive_timestamp(at)));
        }
        let ranges = [AckRange {
            smallest: 0,
            largest: 9,
        }];
        let qt = receiver
            .queueing_time_frame(&sender_params, &ranges, 1200)
            .unwrap();
        receiver.on_queueing_time_frame_sent();
        let frame = receiver
            .ack_receive_timestamps_frame(&sender_params, 0, &ranges, 1200)
            .unwrap();
        receiver.on_ack_receive_timestamps_sent();

        sender
            .on_queueing_time_received(&sender_params, &qt)
            .unwrap();
        let mut decoded: Vec<(u64, u64)> = sender
            .on_ack_receive_timestamps_received(&sender_params, &frame)
            .unwrap()
            .iter()
            .map(|t| (t.packet_number, t.receive_time.as_micros() as u64))
            .collect();
        decoded.sort();
        assert_eq!(decoded, recorded);
        let mut echoed: Vec<(u64, u64)> = qt
            .entries()
            .iter()
            .map(|e| (e.packet_number, e.forward_queueing_us))
            .collect();
        echoed.sort();
        assert_eq!(echoed, (0..10).map(|pn| (pn, pn * 100)).collect::<Vec<_>>());

        // Everything was reported once: the next ACK carries nothing new.
        let again = receiver
            .ack_receive_timestamps_frame(&sender_params, 0, &ranges, 1200)
            .unwrap();
        assert_eq!(again.timestamp_count(), 0);
        assert!(receiver
            .queueing_time_frame(&sender_params, &ranges, 1200)
            .is_none());
        assert_eq!(
            receiver
                .stats(&ExtensionParams::default(), &sender_params)
                .received_packets_logged,
            0
        );
    }

    /// The host's arrival stamp of a datagram is its packets' receive time,
    /// unless it lies after the processing time or before the basis.
    #[test]
    fn a_datagram_stamp_is_the_receive_time_when_plausible() {
        let t0 = Instant::now();
        let params = peer(16, 0, false);
        let mut receiver = ConnectionExtensions::new(t0);
        let processed = t0 + Duration::from_millis(50);
        let cases = [
            // (stamp, recorded time)
            (
                Some(t0 + Duration::from_millis(20)),
                t0 + Duration::from_millis(20),
            ),
            (None, processed),
            (Some(processed + Duration::from_millis(1)), processed),
            (t0.checked_sub(Duration::from_secs(1)), processed),
        ];
        for (pn, (stamp, expected)) in cases.into_iter().enumerate() {
            if let Some(at) = stamp {
                receiver.set_next_datagram_received_at(at);
            }
            receiver.start_datagram();
            receiver.on_packet_received(pn as u64, processed, &params);
            let ranges = [AckRange {
                smallest: pn as u64,
                largest: pn as u64,
            }];
            let frame = receiver
                .ack_receive_timestamps_frame(&params, 0, &ranges, 1200)
                .unwrap();
            receiver.on_ack_receive_timestamps_sent();
            let mut times = Vec::new();
            frame.receive_times(16, 0, &mut times).unwrap();
            assert_eq!(
                times
                    .iter()
                    .map(|t| t.receive_time.as_micros() as u64)
                    .collect::<Vec<_>>(),
                vec![receiver.receive_timestamp(expected)],
                "case {pn}"
            );
        }
    }

    #[test]
    fn nothing_is_recorded_or_built_without_negotiation() {
        let t0 = Instant::now();
        let plain = ExtensionParams::default();
        let mut receiver = ConnectionExtensions::new(t0);
        receiver.set_next_datagram_queueing_time(Duration::from_millis(3));
        receiver.start_datagram();
        receiver.on_packet_received(0, t0, &plain);
        let ranges = [AckRange {
            smallest: 0,
            largest: 0,
        }];
        assert!(receiver
            .ack_receive_timestamps_frame(&plain, 0, &ranges, 1200)
            .is_none());
        assert!(receiver
            .queueing_time_frame(&plain, &ranges, 1200)
            .is_none());
        assert_eq!(receiver.stats(&plain, &plain).received_packets_logged, 0);
        // A frame we did not ask for is an error.
        let frame = AckReceiveTimestampsFrame::build(0, ranges.to_vec(), None, &[], 0).unwrap();
        assert_eq!(
            receiver
                .on_ack_receive_timestamps_received(&plain, &frame)
                .map(|t| t.len()),
            Err(FrameError::NotNegotiated)
        );
    }

    #[test]
    fn never_more_timestamps_than_the_peer_allows() {
        let t0 = Instant::now();
        let sender_params = peer(4, 0, false);
        let mut receiver = ConnectionExtensions::new(t0);
        for pn in 0..100u64 {
            receiver.start_datagram();
            receiver.on_packet_received(pn, t0 + Duration::from_millis(pn), &sender_params);
        }
        let ranges = [AckRange {
            smallest: 0,
            largest: 99,
        }];
        let frame = receiver
            .ack_receive_timestamps_frame(&sender_params, 0, &ranges, 1200)
            .unwrap();
        assert_eq!(frame.timestamp_count(), 4);
        receiver.on_ack_receive_timestamps_sent();
        // The next ACK takes the newest of the rest.
        let next = receiver
            .ack_receive_timestamps_frame(&sender_params, 0, &ranges, 1200)
            .unwrap();
        let mut out = Vec::new();
        next.receive_times(4, 0, &mut out).unwrap();
        assert_eq!(out[0].packet_number, 95);
        let mut out = Vec::new();
        frame.receive_times(4, 0, &mut out).unwrap();
        let pns: Vec<u64> = out.iter().map(|t| t.packet_number).collect();
        assert_eq!(pns, vec![99, 98, 97, 96]);
    }

    #[test]
    fn datagram_queueing_applies_to_one_datagram_only() {
        let mut ext = ConnectionExtensions::new(Instant::now());
        ext.set_next_datagram_queueing_time(Duration::from_millis(7));
        assert_eq!(ext.start_datagram(), Some(Duration::from_millis(7)));
        assert_eq!(ext.start_datagram(), None);
    }
}

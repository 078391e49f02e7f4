// quiche-vegas: the seam of our QUIC extensions.
//
// This file is ours. It is compiled as part of quiche (module
// `crate::extensions`, pulled in by patches/0003-*.patch) and connects
// quiche's frame handling, transport parameters, ACK generation and qlog to
// the `quic-ext` crate, where all the extension logic lives: the
// ACK_RECEIVE_TIMESTAMPS frame of draft-ietf-quic-receive-ts-02, our
// QUEUEING_TIME frame and the ACK_FREQUENCY and IMMEDIATE_ACK frames of
// draft-ietf-quic-ack-frequency with the application space's ACK policy
// (docs/extensions.md). Nothing here parses or encodes bytes itself.

use std::time::Duration;
use std::time::Instant;

use quic_ext::AckRange;
use quic_ext::ConnectionExtensions;
use quic_ext::ExtensionFrame;
use quic_ext::ExtensionParams;
use quic_ext::ExtensionStats;
use quic_ext::FrameError;
use quic_ext::ParamError;
use vegas_cc::PeerReport;
use vegas_cc::PeerStamp;

use crate::frame::Frame;
use crate::packet;
use crate::ranges::RangeSet;
use crate::recovery::Recovery;
use crate::recovery::RecoveryOps;
use crate::transport_params::TransportParams;
use crate::BufFactory;
use crate::Config;
use crate::Connection;
use crate::Error;
use crate::Result;

/// A malformed or out-of-range frame of ours: FRAME_ENCODING_ERROR, or
/// PROTOCOL_VIOLATION (quiche's `InvalidState` on the wire) for the values
/// the ACK frequency draft says so of.
fn frame_error(e: FrameError) -> Error {
    trace!("extension frame refused: {e}");
    if e.is_protocol_violation() {
        Error::InvalidState
    } else {
        Error::InvalidFrame
    }
}

/// A malformed or out-of-range transport parameter of ours:
/// TRANSPORT_PARAMETER_ERROR.
pub(crate) fn param_error(e: ParamError) -> Error {
    trace!("extension transport parameter refused: {e}");
    Error::InvalidTransportParam
}

/// Parses a frame of ours for `Frame::from_bytes`.
pub(crate) fn parse_frame(
    frame_type: u64, b: &mut octets::Octets,
) -> Result<Frame> {
    ExtensionFrame::parse(frame_type, b)
        .map(|f| Frame::Extension(Box::new(f)))
        .map_err(frame_error)
}

/// quiche's ACK ranges (ascending, end-exclusive) as ours (largest first).
fn ack_ranges(ranges: &RangeSet) -> Vec<AckRange> {
    ranges
        .iter()
        .rev()
        .filter(|r| r.end > r.start)
        .map(|r| AckRange {
            smallest: r.start,
            largest: r.end - 1,
        })
        .collect()
}

/// `stamps` as the host expects them: ascending packet numbers, the first
/// of a repeated number kept.
pub(crate) fn peer_stamps(
    out: &mut Vec<PeerStamp>, stamps: impl Iterator<Item = (u64, Duration)>,
) {
    out.clear();
    out.extend(stamps.map(|(pkt_num, value)| PeerStamp { pkt_num, value }));
    out.sort_by_key(|s| s.pkt_num);
    out.dedup_by_key(|s| s.pkt_num);
}

/// Our ACK ranges as quiche's.
fn range_set(ranges: &[AckRange]) -> RangeSet {
    let mut set = RangeSet::default();
    for r in ranges {
        set.insert(r.smallest..r.largest.saturating_add(1));
    }
    set
}

/// A frame of ours in qlog's frame list: qlog 0.18 has no extension frame
/// with fields, so it is an unknown frame with its type and length; the
/// fields go into the packet event's `extension_frames` (see
/// `Extensions::note_received_frame`).
#[cfg(feature = "qlog")]
pub(crate) fn frame_to_qlog(
    frame: &ExtensionFrame,
) -> qlog::events::quic::QuicFrame {
    qlog::events::quic::QuicFrame::Unknown {
        frame_type_bytes: Some(frame.frame_type()),
        raw: Some(Box::new(qlog::events::RawInfo {
            length: Some(frame.wire_len() as u64),
            payload_length: None,
            data: None,
        })),
    }
}

/// Our transport parameters in qlog's `parameters_set`, as the unknown
/// parameters they are to qlog: id and the value's wire bytes in hex.
#[cfg(feature = "qlog")]
pub(crate) fn params_to_qlog(
    params: &ExtensionParams,
) -> impl Iterator<Item = qlog::events::quic::UnknownTransportParameter> {
    params.entries().map(|(id, value)| {
        let mut bytes = [0u8; 8];
        let len = octets::varint_len(value);
        let _ = octets::OctetsMut::with_slice(&mut bytes).put_varint(value);
        qlog::events::quic::UnknownTransportParameter {
            id,
            value: qlog::HexSlice::maybe_string(Some(&bytes[..len]))
                .unwrap_or_default(),
        }
    })
}

/// Our transport parameters by name, for the `parameters_set` event's
/// `extensions` field; absent parameters are absent.
#[cfg(feature = "qlog")]
pub(crate) fn params_ex_data(params: &ExtensionParams) -> qlog::events::ExData {
    let mut fields = serde_json::Map::new();
    if let Some(v) = params.max_receive_timestamps_per_ack {
        fields.insert("max_receive_timestamps_per_ack".into(), v.into());
    }
    if let Some(v) = params.receive_timestamps_exponent {
        fields.insert("receive_timestamps_exponent".into(), v.into());
    }
    if let Some(v) = params.max_queueing_times_per_frame {
        fields.insert("max_queueing_times_per_frame".into(), v.into());
    }
    if let Some(v) = params.min_ack_delay {
        fields.insert("min_ack_delay_us".into(), v.into());
    }
    let mut ex = qlog::events::ExData::new();
    ex.insert("extensions".into(), serde_json::Value::Object(fields));
    ex
}

/// The fields of one of our frames for qlog; receive times are decoded with
/// `params`, the parameters of the frame's receiver.
#[cfg(feature = "qlog")]
fn frame_fields(
    frame: &ExtensionFrame, params: &ExtensionParams,
) -> serde_json::Value {
    use serde_json::json;
    match frame {
        ExtensionFrame::AckReceiveTimestamps(f) => {
            let exponent = params.receive_timestamps_exponent_or_default();
            let mut times = Vec::new();
            let decoded = f.receive_times(u64::MAX, exponent, &mut times);
            let mut acked: Vec<[u64; 2]> = f
                .ack_ranges()
                .iter()
                .map(|r| [r.smallest, r.largest])
                .collect();
            acked.reverse();
            let mut fields = json!({
                "frame_type": "ack_receive_timestamps",
                "frame_type_bytes": f.frame_type(),
                "ack_delay_raw": f.ack_delay(),
                "acked_ranges": acked,
                "receive_timestamps_exponent": exponent,
                "receive_timestamps_us": times
                    .iter()
                    .map(|t| [t.packet_number, t.receive_time.as_micros() as u64])
                    .collect::<Vec<_>>(),
            });
            if let Some(ecn) = f.ecn_counts() {
                fields["ect0"] = ecn.ect0.into();
                fields["ect1"] = ecn.ect1.into();
                fields["ce"] = ecn.ce.into();
            }
            if let Err(e) = decoded {
                fields["error"] = e.to_string().into();
            }
            fields
        },

        ExtensionFrame::QueueingTime(f) => json!({
            "frame_type": "queueing_time",
            "frame_type_bytes": quic_ext::codepoints::FRAME_TYPE_QUEUEING_TIME,
            "forward_queueing_us": f
                .entries()
                .iter()
                .map(|e| [e.packet_number, e.forward_queueing_us])
                .collect::<Vec<_>>(),
        }),

        ExtensionFrame::AckFrequency(f) => json!({
            "frame_type": "ack_frequency",
            "frame_type_bytes": quic_ext::codepoints::FRAME_TYPE_ACK_FREQUENCY,
            "sequence_number": f.sequence_number,
            "ack_eliciting_threshold": f.ack_eliciting_threshold,
            "request_max_ack_delay_us": f.request_max_ack_delay_us,
            "reordering_threshold": f.reordering_threshold,
        }),

        ExtensionFrame::ImmediateAck => json!({
            "frame_type": "immediate_ack",
            "frame_type_bytes": quic_ext::codepoints::FRAME_TYPE_IMMEDIATE_ACK,
        }),
    }
}

/// A connection's extension state, as a field of quiche's `Connection`.
pub(crate) struct Extensions {
    state: ConnectionExtensions,
    /// `Config::enable_extensions(false)`: behave as an endpoint without our
    /// extensions, whatever the peer advertises.
    disabled: bool,
    /// An ACK_FREQUENCY frame a test forces into the next 1-RTT packet,
    /// negotiated or not (`Connection::send_ack_frequency_frame_for_testing`).
    forced_ack_frequency: Option<quic_ext::AckFrequencyFrame>,
    /// What the peer reported for the ACK frame about to be processed, as
    /// received (the plug-in's host judges it): the receive times of an
    /// ACK_RECEIVE_TIMESTAMPS frame, the forward queueing times of the
    /// QUEUEING_TIME frame before it, the AQT of the datagram carrying it.
    /// Handed to recovery with the ACK ([`Extensions::peer_report`]); the
    /// per-packet ones are dropped after it and at the next datagram.
    receive_times: Vec<PeerStamp>,
    forward_queueing: Vec<PeerStamp>,
    datagram_queueing: Option<Duration>,
    /// Fields of the extension frames of the packet being received, for its
    /// qlog event; holds one packet's frames at most.
    #[cfg(feature = "qlog")]
    qlog_received: Vec<serde_json::Value>,
}

/// Stands for the peer's parameters when our extensions are disabled.
static NO_EXTENSIONS: ExtensionParams = ExtensionParams {
    max_receive_timestamps_per_ack: None,
    receive_timestamps_exponent: None,
    max_queueing_times_per_frame: None,
    min_ack_delay: None,
};

impl Extensions {
    /// What we act on of the peer's parameters: nothing when disabled.
    fn peer<'a>(&self, peer: &'a ExtensionParams) -> &'a ExtensionParams {
        if self.disabled {
            &NO_EXTENSIONS
        } else {
            peer
        }
    }

    pub(crate) fn new(config: &Config, created_at: Instant) -> Self {
        Extensions {
            state: ConnectionExtensions::new(created_at),
            disabled: !config.extensions_enabled,
            forced_ack_frequency: None,
            receive_times: Vec::new(),
            forward_queueing: Vec::new(),
            datagram_queueing: None,
            #[cfg(feature = "qlog")]
            qlog_received: Vec::new(),
        }
    }

    /// What the peer reported for the ACK frame being processed.
    pub(crate) fn peer_report(&self) -> PeerReport<'_> {
        PeerReport {
            receive_times: &self.receive_times,
            forward_queueing: &self.forward_queueing,
            backward_queueing: self.datagram_queueing,
        }
    }

    /// Forgets the per-packet reports (after their ACK was processed).
    pub(crate) fn clear_packet_reports(&mut self) {
        self.receive_times.clear();
        self.forward_queueing.clear();
    }

    /// The ACK frame to send for `ranges` with `ack_delay`: an
    /// ACK_RECEIVE_TIMESTAMPS frame in 1-RTT packets when the peer asked for
    /// receive timestamps, else quiche's plain ACK frame. At most `max_len`
    /// bytes of timestamps and ACK together.
    pub(crate) fn ack_frame(
        &mut self, pkt_type: packet::Type, peer: &ExtensionParams,
        ack_delay: u64, ranges: &RangeSet, max_len: usize,
    ) -> Frame {
        if pkt_type == packet::Type::Short {
            let peer = self.peer(peer);
            if let Some(frame) = self.state.ack_receive_timestamps_frame(
                peer,
                ack_delay,
                &ack_ranges(ranges),
                max_len,
            ) {
                return Frame::Extension(Box::new(
                    ExtensionFrame::AckReceiveTimestamps(frame),
                ));
            }
        }

        Frame::ACK {
            ack_delay,
            ranges: ranges.clone(),
            ecn_counts: None, // quiche does not send ECN counts
        }
    }

    /// The QUEUEING_TIME frame to send just before `ack` (in 1-RTT packets,
    /// to a peer that accepts it), at most `max_len` bytes.
    pub(crate) fn queueing_time_frame(
        &mut self, pkt_type: packet::Type, peer: &ExtensionParams, ack: &Frame,
        max_len: usize,
    ) -> Option<Frame> {
        if pkt_type != packet::Type::Short {
            return None;
        }
        let ranges = match ack {
            Frame::ACK { ranges, .. } => ack_ranges(ranges),
            Frame::Extension(f) => match f.as_ref() {
                ExtensionFrame::AckReceiveTimestamps(f) =>
                    f.ack_ranges().to_vec(),
                _ => return None,
            },
            _ => return None,
        };
        let peer = self.peer(peer);
        let frame = self.state.queueing_time_frame(peer, &ranges, max_len)?;
        Some(Frame::Extension(Box::new(ExtensionFrame::QueueingTime(
            frame,
        ))))
    }

    /// `frame` was just written into a packet at `now`.
    pub(crate) fn on_frame_sent(&mut self, frame: Option<&Frame>, now: Instant) {
        if let Some(Frame::Extension(f)) = frame {
            match f.as_ref() {
                ExtensionFrame::AckReceiveTimestamps(_) =>
                    self.state.on_ack_receive_timestamps_sent(),
                ExtensionFrame::QueueingTime(_) =>
                    self.state.on_queueing_time_frame_sent(),
                // A test's forced frame leaves our sender's state alone.
                ExtensionFrame::AckFrequency(f)
                    if self.forced_ack_frequency.as_ref() == Some(f) =>
                    self.forced_ack_frequency = None,
                ExtensionFrame::AckFrequency(f) =>
                    self.state.on_ack_frequency_sent(f, now),
                ExtensionFrame::ImmediateAck =>
                    self.state.on_immediate_ack_sent(),
            }
        }
    }

    /// `ack` (an ACK frame, plain or with receive timestamps) was just
    /// written into a 1-RTT or 0-RTT packet: the ACK policy starts anew.
    pub(crate) fn on_application_ack_sent(&mut self, ack: Option<&Frame>) {
        let largest = match ack {
            Some(Frame::ACK { ranges, .. }) => ranges.last(),
            Some(Frame::Extension(f)) => f.largest_acknowledged(),
            _ => None,
        };
        if let Some(largest) = largest {
            self.state.on_application_ack_sent(largest);
        }
    }

    /// A frame of ours was declared lost: whether it was an ACK (which
    /// quiche then sends again). A lost ACK_FREQUENCY is sent again unless a
    /// newer one went out; IMMEDIATE_ACK is not (the draft, section 5).
    pub(crate) fn on_frame_lost(&mut self, frame: &ExtensionFrame) -> bool {
        match frame {
            ExtensionFrame::AckReceiveTimestamps(_) |
            ExtensionFrame::QueueingTime(_) => true,
            ExtensionFrame::AckFrequency(f) => {
                self.state.on_ack_frequency_lost(f);
                false
            },
            ExtensionFrame::ImmediateAck => false,
        }
    }

    /// When a waiting application-space ACK is due (a timer of
    /// `timeout_instant()`).
    pub(crate) fn ack_deadline(&self) -> Option<Instant> {
        self.state.ack_deadline()
    }

    /// Timers fired at `now`: whether a waiting ACK is due now.
    pub(crate) fn on_ack_timeout(&mut self, now: Instant) -> bool {
        self.state.on_ack_timeout(now)
    }

    /// The ACK_FREQUENCY frame for the next 1-RTT packet, when we offer the
    /// extension, the peer advertised min_ack_delay and the window, the RTT
    /// of `recovery` changed materially (the
    /// choice is `quic_ext::ack_frequency::desired_request`).
    pub(crate) fn ack_frequency_frame(
        &mut self, local: &TransportParams, peer: &TransportParams,
        recovery: &Recovery, now: Instant,
    ) -> Option<Frame> {
        if let Some(forced) = self.forced_ack_frequency {
            return Some(Frame::Extension(Box::new(
                ExtensionFrame::AckFrequency(forced),
            )));
        }
        if self.disabled {
            return None;
        }
        let view = quic_ext::SenderView {
            cwnd_bytes: recovery.cwnd(),
            max_datagram_size: recovery.max_datagram_size(),
            smoothed_rtt: recovery.rtt(),
            // quiche's initial packet threshold: the one it raises after
            // spurious losses is visible to its tests only. A receiver
            // that reports a gap earlier than needed costs one more ACK.
            packet_threshold: quic_ext::ack_frequency::DEFAULT_PACKET_THRESHOLD,
            // Replaced by the peer's own value inside.
            peer_min_ack_delay: Duration::ZERO,
            peer_max_ack_delay: Duration::from_millis(peer.max_ack_delay),
            receive_timestamps_per_ack: local
                .extensions
                .receive_timestamps_limit(),
        };
        let frame = self.state.ack_frequency_frame(
            &local.extensions,
            &peer.extensions,
            view,
            now,
        )?;
        Some(Frame::Extension(Box::new(ExtensionFrame::AckFrequency(frame))))
    }

    /// IMMEDIATE_ACK for a 1-RTT PTO probe, when both offer ACK frequency.
    pub(crate) fn immediate_ack_frame(
        &self, pkt_type: packet::Type, local: &TransportParams,
        peer: &TransportParams,
    ) -> Option<Frame> {
        let sending = !self.disabled &&
            pkt_type == packet::Type::Short &&
            ConnectionExtensions::sending_ack_frequency(
                &local.extensions,
                &peer.extensions,
            );
        sending.then(|| Frame::Extension(Box::new(ExtensionFrame::ImmediateAck)))
    }

    /// Notes the fields of a received frame of ours for the packet's qlog
    /// event; `local` are our parameters (its receiver's).
    #[cfg(feature = "qlog")]
    pub(crate) fn note_received_frame(
        &mut self, frame: &Frame, local: &ExtensionParams,
    ) {
        if let Frame::Extension(f) = frame {
            self.qlog_received.push(frame_fields(f, local));
        }
    }

    /// The `extension_frames` field of a received packet's qlog event.
    #[cfg(feature = "qlog")]
    pub(crate) fn take_received_ex_data(&mut self) -> qlog::events::ExData {
        let frames = std::mem::take(&mut self.qlog_received);
        frames_ex_data(frames)
    }

    /// The `extension_frames` field of a sent packet's qlog event; `peer` are
    /// the parameters of the frames' receiver.
    #[cfg(feature = "qlog")]
    pub(crate) fn sent_ex_data(
        &self, frames: &[Frame], peer: &ExtensionParams,
    ) -> qlog::events::ExData {
        frames_ex_data(
            frames
                .iter()
                .filter_map(|f| match f {
                    Frame::Extension(f) => Some(frame_fields(f, peer)),
                    _ => None,
                })
                .collect(),
        )
    }
}

#[cfg(feature = "qlog")]
fn frames_ex_data(frames: Vec<serde_json::Value>) -> qlog::events::ExData {
    let mut ex = qlog::events::ExData::new();
    if !frames.is_empty() {
        ex.insert("extension_frames".into(), serde_json::Value::Array(frames));
    }
    ex
}

impl Config {
    /// Asks the peer for receive timestamps (draft-ietf-quic-receive-ts-02):
    /// up to `max` per ACK_RECEIVE_TIMESTAMPS frame, advertised in the
    /// max_receive_timestamps_per_ack transport parameter. 0 (the default)
    /// does not ask; values above 1024 are lowered to 1024. No effect while
    /// extensions are disabled.
    pub fn set_max_receive_timestamps_per_ack(&mut self, max: u64) {
        if self.extensions_enabled {
            self.local_transport_params
                .extensions
                .set_max_receive_timestamps_per_ack(max);
        }
    }

    /// The receive_timestamps_exponent we advertise: the peer sends deltas in
    /// units of 2^`exponent` microseconds. At most 20; absent means 0.
    pub fn set_receive_timestamps_exponent(
        &mut self, exponent: u64,
    ) -> Result<()> {
        if !self.extensions_enabled {
            return Ok(());
        }
        self.local_transport_params
            .extensions
            .set_receive_timestamps_exponent(exponent)
            .map_err(param_error)
    }

    /// Accepts QUEUEING_TIME frames (forward queueing times echoed by the
    /// peer, see docs/extensions.md) by advertising our
    /// max_queueing_times_per_frame transport parameter. No effect while
    /// extensions are disabled.
    pub fn enable_queueing_time_frame(&mut self, enabled: bool) {
        if self.extensions_enabled {
            self.local_transport_params
                .extensions
                .set_queueing_time_frame(enabled);
        }
    }

    /// Offers ACK frequency (draft-ietf-quic-ack-frequency): advertises
    /// min_ack_delay (1 ms), so the peer may send ACK_FREQUENCY and
    /// IMMEDIATE_ACK frames, which we then honour, and, as data sender,
    /// sends ACK_FREQUENCY to a peer that advertised min_ack_delay too. Off
    /// by default. No effect while extensions are disabled.
    pub fn enable_ack_frequency(&mut self, enabled: bool) {
        if self.extensions_enabled {
            self.local_transport_params.extensions.set_min_ack_delay(
                enabled
                    .then_some(quic_ext::ack_frequency::DEFAULT_MIN_ACK_DELAY_US),
            );
        }
    }

    /// With `false`, connections behave like stock quiche towards our
    /// extensions: they advertise none, send none of our frames whatever the
    /// peer asks, and treat ours as the unknown frames they then are
    /// (FRAME_ENCODING_ERROR). For experiments against an endpoint without
    /// the extensions. The default is `true` (each extension still needs its
    /// own setter to be advertised).
    pub fn enable_extensions(&mut self, enabled: bool) {
        self.extensions_enabled = enabled;
        if !enabled {
            self.local_transport_params.extensions = ExtensionParams::default();
        }
    }
}

impl<F: BufFactory> Connection<F> {
    /// Hands over the queueing time that AQT-enabled routers reported for
    /// the datagram the next [`recv()`] call takes (RoVegas's AQT, carried
    /// outside the encrypted packet like an IP option). It applies to that
    /// one datagram: as data receiver we echo it to the peer in QUEUEING_TIME
    /// frames; as data sender it is the backward queueing time of the ACKs
    /// the datagram carries. Datagrams without a call have no AQT.
    ///
    /// [`recv()`]: struct.Connection.html#method.recv
    pub fn set_next_datagram_queueing_time(&mut self, queueing: Duration) {
        self.ext.state.set_next_datagram_queueing_time(queueing);
    }

    /// When the next datagram handed to `recv` reached the host (e.g. the
    /// kernel's receive timestamp): the receive timestamps we report for its
    /// packets (draft-ietf-quic-receive-ts). Without it, the time `recv` runs.
    pub fn set_next_datagram_received_at(&mut self, at: Instant) {
        self.ext.state.set_next_datagram_received_at(at);
    }

    /// The first path's congestion window in bytes: `path_stats()`'s `cwnd`
    /// without building the path's whole statistics, for an application
    /// that looks at the window around every flush.
    pub fn congestion_window(&self) -> Option<usize> {
        self.paths.iter().next().map(|(_, p)| p.recovery.cwnd())
    }

    /// Counters of our extensions on this connection, and what the
    /// congestion controller was given.
    pub fn extension_stats(&self) -> ExtensionStats {
        let peer = self.ext.peer(&self.peer_transport_params.extensions);
        let mut stats = self
            .ext
            .state
            .stats(&self.local_transport_params.extensions, peer);
        for (_, p) in self.paths.iter() {
            if let Some(h) = p.recovery.judged_counts() {
                stats.handed.receive_times += h.receive_times;
                stats.handed.forward_queueing += h.forward_queueing;
                stats.handed.backward_queueing += h.backward_queueing;
                stats.handed.rejected_receive_times += h.rejected_receive_times;
                stats.handed.rejected_forward_queueing +=
                    h.rejected_forward_queueing;
                stats.handed.rejected_backward_queueing +=
                    h.rejected_backward_queueing;
            }
        }
        stats
    }

    /// For tests of the peer's checks only: the next 1-RTT packet carries
    /// this ACK_FREQUENCY frame, whether the peer advertised min_ack_delay or
    /// not and whatever its values. Our own sender never sends such a frame
    /// on its own.
    #[doc(hidden)]
    pub fn send_ack_frequency_frame_for_testing(
        &mut self, sequence_number: u64, ack_eliciting_threshold: u64,
        request_max_ack_delay_us: u64, reordering_threshold: u64,
    ) {
        self.ext.forced_ack_frequency = Some(quic_ext::AckFrequencyFrame {
            sequence_number,
            ack_eliciting_threshold,
            request_max_ack_delay_us,
            reordering_threshold,
        });
    }

    /// Our receive_timestamp_basis: the receive times we report are
    /// microseconds since this instant.
    pub fn receive_timestamp_basis(&self) -> Instant {
        self.ext.state.basis()
    }

    /// A datagram's processing starts (`recv()`): its AQT becomes the backward
    /// queueing time of the ACKs in it, and per-packet reports left over from
    /// the previous datagram are dropped.
    pub(crate) fn start_extension_datagram(&mut self) {
        self.ext.datagram_queueing = self.ext.state.start_datagram();
        self.ext.clear_packet_reports();
    }

    /// Packet `pn` of type `ty` in `epoch` was accepted at `now`: as data
    /// receiver, record it for the peer's receive timestamps and queueing
    /// times (1-RTT packets only).
    pub(crate) fn on_extension_packet_received(
        &mut self, epoch: packet::Epoch, ty: packet::Type, pn: u64, now: Instant,
    ) {
        #[cfg(feature = "qlog")]
        self.ext.qlog_received.clear();

        if epoch == packet::Epoch::Application && ty == packet::Type::Short {
            let peer = self.ext.peer(&self.peer_transport_params.extensions);
            self.ext.state.on_packet_received(pn, now, peer);
        }
    }

    /// Packet `pn` of `epoch` was accepted at `now` and its frames processed;
    /// `ack_elicited` says whether one of them was ack-eliciting. In the
    /// application space, whether it asks for an ACK at once: the peer's
    /// ACK_FREQUENCY frames, else `Config::set_ack_every` (patch 0007),
    /// decide (`quic_ext::AckPolicy`); an ACK allowed to wait is due at
    /// `Extensions::ack_deadline`.
    pub(crate) fn application_ack_now(
        &mut self, epoch: packet::Epoch, pn: u64, ack_elicited: bool,
        now: Instant,
    ) -> bool {
        if epoch != packet::Epoch::Application {
            return ack_elicited;
        }
        let local_max_ack_delay =
            Duration::from_millis(self.local_transport_params.max_ack_delay);
        self.ext.state.on_application_packet(
            pn,
            ack_elicited,
            now,
            self.ack_every,
            local_max_ack_delay,
        )
    }

    /// Processes a received frame of ours (quiche's `process_frame`).
    pub(crate) fn process_extension_frame(
        &mut self, frame: ExtensionFrame, epoch: packet::Epoch, now: Instant,
    ) -> Result<()> {
        match frame {
            ExtensionFrame::AckReceiveTimestamps(f) => {
                let times = self
                    .ext
                    .state
                    .on_ack_receive_timestamps_received(
                        &self.local_transport_params.extensions,
                        &f,
                    )
                    .map_err(frame_error)?;
                peer_stamps(
                    &mut self.ext.receive_times,
                    times.iter().map(|t| (t.packet_number, t.receive_time)),
                );
                // Its ranges and delay are an ACK frame's, processed as one
                // with the receive times beside them.
                self.process_ack_frame(
                    &range_set(f.ack_ranges()),
                    f.ack_delay(),
                    epoch,
                    now,
                )
            },

            ExtensionFrame::AckFrequency(f) => self
                .ext
                .state
                .on_ack_frequency_received(
                    &self.local_transport_params.extensions,
                    &f,
                )
                .map_err(frame_error),

            ExtensionFrame::ImmediateAck => self
                .ext
                .state
                .on_immediate_ack_received(&self.local_transport_params.extensions)
                .map_err(frame_error),

            ExtensionFrame::QueueingTime(f) => {
                self.ext
                    .state
                    .on_queueing_time_received(
                        &self.local_transport_params.extensions,
                        &f,
                    )
                    .map_err(frame_error)?;
                // Read by the ACK frame that follows in the same packet.
                peer_stamps(
                    &mut self.ext.forward_queueing,
                    f.entries()
                        .iter()
                        .map(|e| (e.packet_number, e.forward_queueing())),
                );
                Ok(())
            },
        }
    }
}

//! The QUIC extensions of quiche-vegas, independent of any QUIC stack so that
//! they can be unit-, property- and fuzz-tested alone (quiche pulls them in
//! through `quiche-seam/extensions.rs`):
//!
//! - ACK receive timestamps, draft-ietf-quic-receive-ts-02: the
//!   ACK_RECEIVE_TIMESTAMPS frame ([`ack_receive_timestamps`]), the
//!   receiver's bounded record of receive times ([`received_packets`]) and
//!   the sender's decoding (the checks of what the peer reports are the
//!   congestion controller host's: `vegas_cc::shared::peer_reports`, and
//!   for receive times `vegas_cc::shared::peer_clock`; this crate depends
//!   on no controller);
//! - RoVegas's queueing times (AQT) in QUIC: the QUEUEING_TIME frame
//!   ([`queueing_time`]) that echoes the forward queueing time AQT-enabled
//!   routers reported for each datagram (the fallback estimate of both
//!   directions from receive timestamps and ACK delay, without such routers,
//!   is the controller's: `vegas_cc::shared::queueing_estimate`);
//! - ACK frequency, draft-ietf-quic-ack-frequency-14: the ACK_FREQUENCY and
//!   IMMEDIATE_ACK frames, the data receiver's ACK policy and the data
//!   sender's choice of what to ask for ([`ack_frequency`]);
//! - their transport parameters ([`params`]) and codepoints, all in
//!   [`codepoints`];
//! - the per-connection state tying them together ([`connection`]);
//! - the IPv4 option in which AQT-enabled routers (the emulator) report a
//!   datagram's accumulated queueing time ([`aqt_ip_option`]).
//!
//! The design is documented in docs/extensions.md.

pub mod ack_frequency;
pub mod ack_receive_timestamps;
pub mod aqt_ip_option;
pub mod codepoints;
pub mod connection;
pub mod error;
pub mod frame;
pub mod params;
pub mod queueing_time;
pub mod received_packets;

pub use ack_frequency::{AckFrequencyFrame, AckPolicy, AckRequest, SenderView};
pub use ack_receive_timestamps::{
    AckRange, AckReceiveTimestampsFrame, EcnCounts, PacketReceiveTime, TimestampRange,
};
pub use connection::{ConnectionExtensions, ExtensionStats, HandedCounts};
pub use error::{FrameError, ParamError};
pub use frame::ExtensionFrame;
pub use params::{ExtensionParams, ReceiveTimestampsRequest};
pub use queueing_time::{QueueingTimeEntry, QueueingTimeFrame};
pub use received_packets::ReceivedPacketLog;

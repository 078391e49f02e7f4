//! Our extension frames behind one type, for a stack's frame dispatch.

use crate::ack_receive_timestamps::AckReceiveTimestampsFrame;
use crate::codepoints::{
    FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS, FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN,
    FRAME_TYPE_QUEUEING_TIME,
};
use crate::error::FrameError;
use crate::queueing_time::QueueingTimeFrame;

/// A frame of one of our extensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtensionFrame {
    AckReceiveTimestamps(AckReceiveTimestampsFrame),
    QueueingTime(QueueingTimeFrame),
}

impl ExtensionFrame {
    /// Parses the frame of type `frame_type` (already read from `b`).
    pub fn parse(frame_type: u64, b: &mut octets::Octets) -> Result<Self, FrameError> {
        match frame_type {
            FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS | FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN => {
                Ok(ExtensionFrame::AckReceiveTimestamps(
                    AckReceiveTimestampsFrame::parse(frame_type, b)?,
                ))
            }
            FRAME_TYPE_QUEUEING_TIME => {
                Ok(ExtensionFrame::QueueingTime(QueueingTimeFrame::parse(b)?))
            }
            other => Err(FrameError::UnknownFrameType(other)),
        }
    }

    /// Parses one whole frame, type included.
    pub fn from_bytes(bytes: &[u8]) -> Result<(Self, usize), FrameError> {
        let mut b = octets::Octets::with_slice(bytes);
        let frame_type = b.get_varint()?;
        let frame = Self::parse(frame_type, &mut b)?;
        Ok((frame, b.off()))
    }

    /// Writes the frame, type included, and returns the bytes written.
    pub fn encode(&self, b: &mut octets::OctetsMut) -> Result<usize, octets::BufferTooShortError> {
        match self {
            ExtensionFrame::AckReceiveTimestamps(f) => f.encode(b),
            ExtensionFrame::QueueingTime(f) => f.encode(b),
        }
    }

    pub fn wire_len(&self) -> usize {
        match self {
            ExtensionFrame::AckReceiveTimestamps(f) => f.wire_len(),
            ExtensionFrame::QueueingTime(f) => f.wire_len(),
        }
    }

    pub fn frame_type(&self) -> u64 {
        match self {
            ExtensionFrame::AckReceiveTimestamps(f) => f.frame_type(),
            ExtensionFrame::QueueingTime(_) => FRAME_TYPE_QUEUEING_TIME,
        }
    }

    /// The frame's name in logs and qlog.
    pub fn name(&self) -> &'static str {
        match self {
            ExtensionFrame::AckReceiveTimestamps(_) => "ack_receive_timestamps",
            ExtensionFrame::QueueingTime(_) => "queueing_time",
        }
    }

    /// For frames that acknowledge packets: the largest acknowledged.
    pub fn largest_acknowledged(&self) -> Option<u64> {
        match self {
            ExtensionFrame::AckReceiveTimestamps(f) => Some(f.largest_acknowledged()),
            ExtensionFrame::QueueingTime(_) => None,
        }
    }
}

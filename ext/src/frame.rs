//! Our extension frames behind one type, for a stack's frame dispatch.

use crate::ack_frequency::{self, AckFrequencyFrame};
use crate::ack_receive_timestamps::AckReceiveTimestampsFrame;
use crate::codepoints::{
    FRAME_TYPE_ACK_FREQUENCY, FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS,
    FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN, FRAME_TYPE_IMMEDIATE_ACK, FRAME_TYPE_QUEUEING_TIME,
};
use crate::error::FrameError;
use crate::queueing_time::QueueingTimeFrame;

/// A frame of one of our extensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtensionFrame {
    AckReceiveTimestamps(AckReceiveTimestampsFrame),
    QueueingTime(QueueingTimeFrame),
    AckFrequency(AckFrequencyFrame),
    ImmediateAck,
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
            FRAME_TYPE_ACK_FREQUENCY => {
                Ok(ExtensionFrame::AckFrequency(AckFrequencyFrame::parse(b)?))
            }
            FRAME_TYPE_IMMEDIATE_ACK => Ok(ExtensionFrame::ImmediateAck),
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
            ExtensionFrame::AckFrequency(f) => f.encode(b),
            ExtensionFrame::ImmediateAck => ack_frequency::encode_immediate_ack(b),
        }
    }

    pub fn wire_len(&self) -> usize {
        match self {
            ExtensionFrame::AckReceiveTimestamps(f) => f.wire_len(),
            ExtensionFrame::QueueingTime(f) => f.wire_len(),
            ExtensionFrame::AckFrequency(f) => f.wire_len(),
            ExtensionFrame::ImmediateAck => ack_frequency::immediate_ack_wire_len(),
        }
    }

    pub fn frame_type(&self) -> u64 {
        match self {
            ExtensionFrame::AckReceiveTimestamps(f) => f.frame_type(),
            ExtensionFrame::QueueingTime(_) => FRAME_TYPE_QUEUEING_TIME,
            ExtensionFrame::AckFrequency(_) => FRAME_TYPE_ACK_FREQUENCY,
            ExtensionFrame::ImmediateAck => FRAME_TYPE_IMMEDIATE_ACK,
        }
    }

    /// The frame's name in logs and qlog.
    pub fn name(&self) -> &'static str {
        match self {
            ExtensionFrame::AckReceiveTimestamps(_) => "ack_receive_timestamps",
            ExtensionFrame::QueueingTime(_) => "queueing_time",
            ExtensionFrame::AckFrequency(_) => "ack_frequency",
            ExtensionFrame::ImmediateAck => "immediate_ack",
        }
    }

    /// For frames that acknowledge packets: the largest acknowledged.
    pub fn largest_acknowledged(&self) -> Option<u64> {
        match self {
            ExtensionFrame::AckReceiveTimestamps(f) => Some(f.largest_acknowledged()),
            _ => None,
        }
    }

    /// Whether the frame asks for an ACK (RFC 9002 section 2): ACK_FREQUENCY
    /// and IMMEDIATE_ACK do; the ACK and its annotation do not.
    pub fn ack_eliciting(&self) -> bool {
        matches!(
            self,
            ExtensionFrame::AckFrequency(_) | ExtensionFrame::ImmediateAck
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ack_frequency_frames_parse_through_the_dispatch() {
        let f = ExtensionFrame::AckFrequency(AckFrequencyFrame {
            sequence_number: 1,
            ack_eliciting_threshold: 9,
            request_max_ack_delay_us: 25_000,
            reordering_threshold: 3,
        });
        for frame in [f, ExtensionFrame::ImmediateAck] {
            let mut out = vec![0; 32];
            let len = frame
                .encode(&mut octets::OctetsMut::with_slice(&mut out))
                .unwrap();
            assert_eq!(len, frame.wire_len());
            assert_eq!(
                ExtensionFrame::from_bytes(&out[..len]),
                Ok((frame.clone(), len))
            );
            assert!(frame.ack_eliciting());
            assert_eq!(frame.largest_acknowledged(), None);
        }
        // Truncated: FRAME_ENCODING_ERROR's kind.
        assert_eq!(
            ExtensionFrame::from_bytes(&[0x40, 0xaf, 0x01]),
            Err(FrameError::Truncated)
        );
    }
}

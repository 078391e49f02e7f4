//! Why a frame or a transport parameter of ours was refused. In QUIC terms
//! every [`FrameError`] is a FRAME_ENCODING_ERROR and every [`ParamError`] a
//! TRANSPORT_PARAMETER_ERROR; the finer kinds are for logs and tests.

use std::fmt;

/// A malformed or out-of-range extension frame (FRAME_ENCODING_ERROR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The frame ends before its fields do.
    Truncated,
    /// Not a frame type of ours.
    UnknownFrameType(u64),
    /// The frame arrived although we never advertised the extension.
    NotNegotiated,
    /// An ACK range or gap reaches below packet number 0.
    InvalidAckRange,
    /// A timestamp range starts above the largest acknowledged packet or
    /// reaches below packet number 0.
    InvalidTimestampRange,
    /// More receive timestamps than we allowed the peer to send.
    TooManyTimestamps { limit: u64 },
    /// A timestamp delta places a receive time before the peer's basis.
    TimestampBeforeBasis,
    /// A timestamp delta scaled by the exponent does not fit in 64 bits.
    TimestampOverflow,
    /// A QUEUEING_TIME frame without entries.
    NoEntries,
    /// More queueing-time entries than we allowed the peer to send.
    TooManyEntries { limit: u64 },
    /// A packet number appears twice in one QUEUEING_TIME frame.
    DuplicatePacketNumber(u64),
    /// A packet number delta points below packet number 0.
    InvalidPacketNumber,
    /// An ACK_FREQUENCY frame's Requested Max Ack Delay (µs) is below the
    /// min_ack_delay we advertised or not below 2^14 ms: a PROTOCOL_VIOLATION
    /// (draft-ietf-quic-ack-frequency section 4), not an encoding error.
    InvalidRequestedMaxAckDelay(u64),
}

impl FrameError {
    /// Whether the connection closes with PROTOCOL_VIOLATION rather than
    /// FRAME_ENCODING_ERROR.
    pub fn is_protocol_violation(&self) -> bool {
        matches!(self, FrameError::InvalidRequestedMaxAckDelay(_))
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FrameError::Truncated => write!(f, "frame truncated"),
            FrameError::UnknownFrameType(t) => write!(f, "unknown frame type {t:#x}"),
            FrameError::NotNegotiated => write!(f, "extension frame not negotiated"),
            FrameError::InvalidAckRange => write!(f, "ACK range below packet number 0"),
            FrameError::InvalidTimestampRange => write!(f, "timestamp range out of bounds"),
            FrameError::TooManyTimestamps { limit } => {
                write!(f, "more than the {limit} receive timestamps allowed")
            }
            FrameError::TimestampBeforeBasis => write!(f, "receive timestamp before the basis"),
            FrameError::TimestampOverflow => write!(f, "receive timestamp overflows"),
            FrameError::NoEntries => write!(f, "QUEUEING_TIME frame without entries"),
            FrameError::TooManyEntries { limit } => {
                write!(f, "more than the {limit} queueing-time entries allowed")
            }
            FrameError::DuplicatePacketNumber(pn) => {
                write!(f, "packet number {pn} twice in one frame")
            }
            FrameError::InvalidPacketNumber => write!(f, "packet number below 0"),
            FrameError::InvalidRequestedMaxAckDelay(us) => {
                write!(f, "requested max ack delay {us} us out of range")
            }
        }
    }
}

impl std::error::Error for FrameError {}

impl From<octets::BufferTooShortError> for FrameError {
    fn from(_: octets::BufferTooShortError) -> Self {
        FrameError::Truncated
    }
}

/// A malformed or out-of-range transport parameter of ours
/// (TRANSPORT_PARAMETER_ERROR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// The value is not exactly one varint.
    Malformed { id: u64 },
    /// receive_timestamps_exponent above 20 (draft-ietf-quic-receive-ts-02).
    ExponentTooLarge(u64),
    /// max_queueing_times_per_frame outside 1..=MAX_QUEUEING_TIMES_PER_FRAME.
    QueueingTimesOutOfRange(u64),
    /// The same parameter twice (RFC 9000 section 7.4).
    Duplicate { id: u64 },
    /// min_ack_delay (µs) above the same endpoint's max_ack_delay
    /// (draft-ietf-quic-ack-frequency section 3).
    MinAckDelayAboveMax { min_us: u64, max_us: u64 },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ParamError::Malformed { id } => {
                write!(f, "transport parameter {id:#x} is not one varint")
            }
            ParamError::ExponentTooLarge(e) => {
                write!(f, "receive_timestamps_exponent {e} is above 20")
            }
            ParamError::QueueingTimesOutOfRange(v) => {
                write!(f, "max_queueing_times_per_frame {v} out of range")
            }
            ParamError::Duplicate { id } => write!(f, "transport parameter {id:#x} repeated"),
            ParamError::MinAckDelayAboveMax { min_us, max_us } => {
                write!(
                    f,
                    "min_ack_delay {min_us} us above max_ack_delay {max_us} us"
                )
            }
        }
    }
}

impl std::error::Error for ParamError {}

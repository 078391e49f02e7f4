//! The transport parameters of our extensions: decoding with the draft's rules
//! for absent and invalid values, encoding, and what they mean for each side.
//!
//! draft-ietf-quic-receive-ts-02 section "Extension Negotiation":
//! - max_receive_timestamps_per_ack: the sender of the parameter wants
//!   ACK_RECEIVE_TIMESTAMPS frames with at most this many timestamps. Absent:
//!   the extension is not used towards that endpoint. We send plain ACK
//!   frames to a peer that advertised 0 (it allows no timestamps, so the
//!   longer frame would carry nothing).
//! - receive_timestamps_exponent: the exponent for timestamp deltas in frames
//!   sent *to* the endpoint that advertised it. Absent: 0 (microseconds).
//!   Above 20: invalid, TRANSPORT_PARAMETER_ERROR. Without
//!   max_receive_timestamps_per_ack it has no effect and is ignored.
//!
//! Ours (docs/extensions.md): max_queueing_times_per_frame, 1..=1024; the
//! endpoint that advertises it accepts QUEUEING_TIME frames with at most that
//! many entries. Absent: it does not understand QUEUEING_TIME. 0 or above 1024:
//! TRANSPORT_PARAMETER_ERROR.
//!
//! draft-ietf-quic-ack-frequency-14 section 3: min_ack_delay, in
//! microseconds; the endpoint that advertises it accepts ACK_FREQUENCY and
//! IMMEDIATE_ACK frames. It must not exceed the same endpoint's
//! max_ack_delay (an RFC 9000 parameter, in milliseconds, which the stack
//! decodes): [`ExtensionParams::check_against_max_ack_delay`] is called once
//! all parameters are decoded.
//!
//! Every value must be exactly one varint: trailing bytes or a truncated
//! varint are a TRANSPORT_PARAMETER_ERROR, as for RFC 9000's integer
//! parameters.

use crate::codepoints::{
    TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME,
    TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK, TRANSPORT_PARAMETER_MIN_ACK_DELAY,
    TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT,
};
use crate::error::ParamError;

/// Largest valid receive_timestamps_exponent (draft-ietf-quic-receive-ts-02).
pub const MAX_RECEIVE_TIMESTAMPS_EXPONENT: u64 = 20;

/// Largest max_receive_timestamps_per_ack we advertise; larger settings are
/// lowered to it. It bounds the work and memory of decoding one frame.
pub const MAX_ADVERTISED_RECEIVE_TIMESTAMPS_PER_ACK: u64 = 1024;

/// Largest valid max_queueing_times_per_frame.
pub const MAX_QUEUEING_TIMES_PER_FRAME: u64 = 1024;

/// max_queueing_times_per_frame we advertise when the frame is enabled.
pub const DEFAULT_MAX_QUEUEING_TIMES_PER_FRAME: u64 = 64;

/// Our transport parameters as advertised by one endpoint; `None` is absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtensionParams {
    pub max_receive_timestamps_per_ack: Option<u64>,
    pub receive_timestamps_exponent: Option<u64>,
    pub max_queueing_times_per_frame: Option<u64>,
    /// Microseconds (draft-ietf-quic-ack-frequency).
    pub min_ack_delay: Option<u64>,
}

/// What a peer's parameters ask of the ACK frames we send it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiveTimestampsRequest {
    /// Never more timestamps than this in one frame.
    pub max_per_ack: u64,
    /// Deltas are in units of 2^exponent microseconds.
    pub exponent: u32,
}

fn get_single_varint(id: u64, value: &[u8]) -> Result<u64, ParamError> {
    let mut b = octets::Octets::with_slice(value);
    let v = b.get_varint().map_err(|_| ParamError::Malformed { id })?;
    if b.cap() != 0 {
        return Err(ParamError::Malformed { id });
    }
    Ok(v)
}

impl ExtensionParams {
    /// Decodes the value of one transport parameter of ours into `self`.
    /// Ids that are not ours are ignored.
    pub fn decode_parameter(&mut self, id: u64, value: &[u8]) -> Result<(), ParamError> {
        match id {
            TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK => {
                self.max_receive_timestamps_per_ack = Some(get_single_varint(id, value)?);
            }
            TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT => {
                let exponent = get_single_varint(id, value)?;
                if exponent > MAX_RECEIVE_TIMESTAMPS_EXPONENT {
                    return Err(ParamError::ExponentTooLarge(exponent));
                }
                self.receive_timestamps_exponent = Some(exponent);
            }
            TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME => {
                let max = get_single_varint(id, value)?;
                if !(1..=MAX_QUEUEING_TIMES_PER_FRAME).contains(&max) {
                    return Err(ParamError::QueueingTimesOutOfRange(max));
                }
                self.max_queueing_times_per_frame = Some(max);
            }
            TRANSPORT_PARAMETER_MIN_ACK_DELAY => {
                self.min_ack_delay = Some(get_single_varint(id, value)?);
            }
            _ => (),
        }
        Ok(())
    }

    /// Decodes our parameters out of a whole transport-parameters blob
    /// (RFC 9000 section 18), skipping everyone else's. A blob whose framing
    /// is broken, or that repeats one of our parameters, is an error.
    pub fn decode_all(blob: &[u8]) -> Result<Self, ParamError> {
        let mut b = octets::Octets::with_slice(blob);
        let mut params = ExtensionParams::default();
        let mut seen = [false; crate::codepoints::TRANSPORT_PARAMETERS.len()];
        while b.cap() > 0 {
            let id = b
                .get_varint()
                .map_err(|_| ParamError::Malformed { id: 0 })?;
            let value = b
                .get_bytes_with_varint_length()
                .map_err(|_| ParamError::Malformed { id })?;
            if let Some(i) = crate::codepoints::TRANSPORT_PARAMETERS
                .iter()
                .position(|&ours| ours == id)
            {
                if seen[i] {
                    return Err(ParamError::Duplicate { id });
                }
                seen[i] = true;
                params.decode_parameter(id, value.buf())?;
            }
        }
        Ok(params)
    }

    /// The (id, value) pairs this endpoint advertises, in wire order.
    pub fn entries(&self) -> impl Iterator<Item = (u64, u64)> {
        let exponent = self
            .max_receive_timestamps_per_ack
            .and(self.receive_timestamps_exponent);
        [
            (
                TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK,
                self.max_receive_timestamps_per_ack,
            ),
            (TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT, exponent),
            (
                TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME,
                self.max_queueing_times_per_frame,
            ),
            (TRANSPORT_PARAMETER_MIN_ACK_DELAY, self.min_ack_delay),
        ]
        .into_iter()
        .filter_map(|(id, value)| value.map(|v| (id, v.min(octets::MAX_VAR_INT))))
    }

    /// Appends the parameters this endpoint advertises. The exponent is sent
    /// only together with max_receive_timestamps_per_ack, which gives it a
    /// meaning.
    pub fn encode(&self, out: &mut octets::OctetsMut) -> Result<(), octets::BufferTooShortError> {
        for (id, value) in self.entries() {
            out.put_varint(id)?;
            out.put_varint(octets::varint_len(value) as u64)?;
            out.put_varint(value)?;
        }
        Ok(())
    }

    /// Bytes [`encode`](Self::encode) writes.
    pub fn encoded_len(&self) -> usize {
        self.entries()
            .map(|(id, value)| {
                let len = octets::varint_len(value);
                octets::varint_len(id) + octets::varint_len(len as u64) + len
            })
            .sum()
    }

    /// As the peer's parameters: what it wants in the ACK frames we send it,
    /// or `None` when we send it plain ACK frames.
    pub fn receive_timestamps_request(&self) -> Option<ReceiveTimestampsRequest> {
        let max_per_ack = self.max_receive_timestamps_per_ack.filter(|&m| m > 0)?;
        Some(ReceiveTimestampsRequest {
            max_per_ack,
            exponent: self.receive_timestamps_exponent_or_default(),
        })
    }

    /// The exponent, 0 when absent (and never above 20).
    pub fn receive_timestamps_exponent_or_default(&self) -> u32 {
        self.receive_timestamps_exponent
            .unwrap_or(0)
            .min(MAX_RECEIVE_TIMESTAMPS_EXPONENT) as u32
    }

    /// As our own parameters: the most timestamps we accept in one frame, or
    /// `None` when we did not ask for timestamps (then an
    /// ACK_RECEIVE_TIMESTAMPS frame is a FRAME_ENCODING_ERROR).
    pub fn receive_timestamps_limit(&self) -> Option<u64> {
        self.max_receive_timestamps_per_ack.filter(|&m| m > 0)
    }

    /// The most entries one QUEUEING_TIME frame may carry to this endpoint,
    /// or `None` when it does not understand the frame.
    pub fn queueing_times_limit(&self) -> Option<u64> {
        self.max_queueing_times_per_frame
    }

    /// Asks the peer for up to `max` receive timestamps per ACK; 0 stops
    /// asking. Values above [`MAX_ADVERTISED_RECEIVE_TIMESTAMPS_PER_ACK`] are
    /// lowered to it.
    pub fn set_max_receive_timestamps_per_ack(&mut self, max: u64) {
        self.max_receive_timestamps_per_ack =
            (max > 0).then(|| max.min(MAX_ADVERTISED_RECEIVE_TIMESTAMPS_PER_ACK));
    }

    /// The exponent the peer must use for the timestamps it sends us.
    pub fn set_receive_timestamps_exponent(&mut self, exponent: u64) -> Result<(), ParamError> {
        if exponent > MAX_RECEIVE_TIMESTAMPS_EXPONENT {
            return Err(ParamError::ExponentTooLarge(exponent));
        }
        self.receive_timestamps_exponent = Some(exponent);
        Ok(())
    }

    /// Once every parameter is decoded: min_ack_delay must not exceed
    /// `max_ack_delay_ms` (the same endpoint's max_ack_delay).
    pub fn check_against_max_ack_delay(&self, max_ack_delay_ms: u64) -> Result<(), ParamError> {
        let max_us = max_ack_delay_ms.saturating_mul(1000);
        match self.min_ack_delay {
            Some(min_us) if min_us > max_us => {
                Err(ParamError::MinAckDelayAboveMax { min_us, max_us })
            }
            _ => Ok(()),
        }
    }

    /// As the peer's parameters: its min_ack_delay when it accepts
    /// ACK_FREQUENCY and IMMEDIATE_ACK frames, else `None`.
    pub fn ack_frequency_min_delay(&self) -> Option<std::time::Duration> {
        self.min_ack_delay.map(std::time::Duration::from_micros)
    }

    /// Advertises min_ack_delay = `min_us` (accepting ACK_FREQUENCY and
    /// IMMEDIATE_ACK), or stops advertising it with `None`.
    pub fn set_min_ack_delay(&mut self, min_us: Option<u64>) {
        self.min_ack_delay = min_us.map(|v| v.min(octets::MAX_VAR_INT));
    }

    /// Advertises (or stops advertising) that we accept QUEUEING_TIME frames.
    pub fn set_queueing_time_frame(&mut self, enabled: bool) {
        self.max_queueing_times_per_frame = enabled.then_some(DEFAULT_MAX_QUEUEING_TIMES_PER_FRAME);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(entries: &[(u64, &[u8])]) -> Vec<u8> {
        let mut out = vec![0; 256];
        let mut b = octets::OctetsMut::with_slice(&mut out);
        for (id, value) in entries {
            b.put_varint(*id).unwrap();
            b.put_varint(value.len() as u64).unwrap();
            b.put_bytes(value).unwrap();
        }
        let len = b.off();
        out.truncate(len);
        out
    }

    fn varint(v: u64) -> Vec<u8> {
        let mut out = vec![0; 8];
        let len = octets::OctetsMut::with_slice(&mut out)
            .put_varint(v)
            .unwrap()
            .len();
        out.truncate(len);
        out
    }

    #[test]
    fn absent_parameters_mean_no_extension_and_exponent_zero() {
        let p = ExtensionParams::decode_all(&[]).unwrap();
        assert_eq!(p, ExtensionParams::default());
        assert_eq!(p.receive_timestamps_request(), None);
        assert_eq!(p.receive_timestamps_exponent_or_default(), 0);
        assert_eq!(p.queueing_times_limit(), None);
    }

    #[test]
    fn max_without_exponent_defaults_the_exponent_to_zero() {
        let b = blob(&[(
            TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK,
            &varint(4),
        )]);
        let p = ExtensionParams::decode_all(&b).unwrap();
        assert_eq!(
            p.receive_timestamps_request(),
            Some(ReceiveTimestampsRequest {
                max_per_ack: 4,
                exponent: 0
            })
        );
    }

    #[test]
    fn exponent_without_max_is_ignored() {
        let b = blob(&[(TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT, &varint(3))]);
        let p = ExtensionParams::decode_all(&b).unwrap();
        assert_eq!(p.receive_timestamps_request(), None);
        assert_eq!(p.receive_timestamps_limit(), None);
    }

    #[test]
    fn max_zero_means_plain_acks() {
        let b = blob(&[(
            TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK,
            &varint(0),
        )]);
        let p = ExtensionParams::decode_all(&b).unwrap();
        assert_eq!(p.receive_timestamps_request(), None);
    }

    #[test]
    fn exponent_above_20_is_a_transport_parameter_error() {
        let b = blob(&[
            (
                TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK,
                &varint(4),
            ),
            (TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT, &varint(21)),
        ]);
        assert_eq!(
            ExtensionParams::decode_all(&b),
            Err(ParamError::ExponentTooLarge(21))
        );
        let b = blob(&[(TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT, &varint(20))]);
        assert!(ExtensionParams::decode_all(&b).is_ok());
    }

    #[test]
    fn values_must_be_exactly_one_varint() {
        for bad in [&[][..], &[0x40][..], &[0x01, 0x02][..]] {
            for id in crate::codepoints::TRANSPORT_PARAMETERS {
                let b = blob(&[(id, bad)]);
                assert_eq!(
                    ExtensionParams::decode_all(&b),
                    Err(ParamError::Malformed { id }),
                    "{id:#x} {bad:?}"
                );
            }
        }
    }

    #[test]
    fn queueing_times_must_be_between_1_and_1024() {
        for (value, ok) in [(0, false), (1, true), (1024, true), (1025, false)] {
            let b = blob(&[(
                TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME,
                &varint(value),
            )]);
            assert_eq!(ExtensionParams::decode_all(&b).is_ok(), ok, "{value}");
        }
    }

    #[test]
    fn repeated_parameter_is_an_error_and_foreign_ones_are_skipped() {
        let b = blob(&[
            (0x04, &varint(100_000)),
            (TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME, &varint(8)),
            (0x1b, b"grease"),
            (TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME, &varint(8)),
        ]);
        assert!(matches!(
            ExtensionParams::decode_all(&b),
            Err(ParamError::Duplicate { .. })
        ));
        let b = blob(&[(0x04, &varint(100_000)), (0x1b, b"grease")]);
        assert_eq!(
            ExtensionParams::decode_all(&b),
            Ok(ExtensionParams::default())
        );
    }

    #[test]
    fn encode_then_decode_gives_the_same_parameters() {
        let mut p = ExtensionParams::default();
        p.set_max_receive_timestamps_per_ack(32);
        p.set_receive_timestamps_exponent(3).unwrap();
        p.set_queueing_time_frame(true);
        let mut out = vec![0; 64];
        let mut b = octets::OctetsMut::with_slice(&mut out);
        p.encode(&mut b).unwrap();
        let len = b.off();
        assert_eq!(len, p.encoded_len());
        assert_eq!(ExtensionParams::decode_all(&out[..len]), Ok(p));
    }

    #[test]
    fn min_ack_delay_decodes_and_must_not_exceed_max_ack_delay() {
        let b = blob(&[(TRANSPORT_PARAMETER_MIN_ACK_DELAY, &varint(1000))]);
        let p = ExtensionParams::decode_all(&b).unwrap();
        assert_eq!(
            p.ack_frequency_min_delay(),
            Some(std::time::Duration::from_millis(1))
        );
        assert_eq!(p.check_against_max_ack_delay(1), Ok(()));
        assert_eq!(p.check_against_max_ack_delay(25), Ok(()));
        assert_eq!(
            p.check_against_max_ack_delay(0),
            Err(ParamError::MinAckDelayAboveMax {
                min_us: 1000,
                max_us: 0
            })
        );
        assert_eq!(ExtensionParams::default().ack_frequency_min_delay(), None);
        let mut q = ExtensionParams::default();
        q.set_min_ack_delay(Some(1000));
        let mut out = vec![0; 64];
        let mut w = octets::OctetsMut::with_slice(&mut out);
        q.encode(&mut w).unwrap();
        let len = w.off();
        assert_eq!(ExtensionParams::decode_all(&out[..len]), Ok(q));
    }

    #[test]
    fn setters_clamp_and_validate() {
        let mut p = ExtensionParams::default();
        p.set_max_receive_timestamps_per_ack(u64::MAX);
        assert_eq!(
            p.max_receive_timestamps_per_ack,
            Some(MAX_ADVERTISED_RECEIVE_TIMESTAMPS_PER_ACK)
        );
        p.set_max_receive_timestamps_per_ack(0);
        assert_eq!(p.max_receive_timestamps_per_ack, None);
        assert!(p.set_receive_timestamps_exponent(21).is_err());
        // The exponent alone is not advertised.
        p.set_receive_timestamps_exponent(2).unwrap();
        assert_eq!(p.entries().count(), 0);
    }
}

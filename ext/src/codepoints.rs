//! Every codepoint of our QUIC extensions, in one place.
//!
//! The receive-timestamp values are those of draft-ietf-quic-receive-ts-02.
//! Both of its transport parameter ids happen to have the form 31·N+27 that
//! RFC 9000 section 18.1 reserves for greasing: nothing of ours may ever send
//! them as grease (see [`grease_transport_parameter_id`]). quiche 0.29.3 itself
//! sends no reserved transport parameters at all (its `Config::grease` only
//! greases HTTP/3 frame types, settings and stream types), so the only
//! greasing that could collide is a peer's; docs/extensions.md discusses it.
//!
//! The queueing-time codepoints are ours: drawn at random from the 4-byte
//! varint range (2^14 .. 2^30 - 1) and checked not to have the greasing form.

/// ACK_RECEIVE_TIMESTAMPS without ECN counts (draft-ietf-quic-receive-ts-02).
pub const FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS: u64 = 0x0317_8307;

/// ACK_RECEIVE_TIMESTAMPS with ECN counts (draft-ietf-quic-receive-ts-02).
pub const FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN: u64 = 0x0317_8308;

/// QUEUEING_TIME: forward queueing times (RoVegas's AQT-echo) of
/// acknowledged packets. Ours; see docs/extensions.md.
pub const FRAME_TYPE_QUEUEING_TIME: u64 = 0x1a8b_f1c9;

/// ACK_FREQUENCY (draft-ietf-quic-ack-frequency-14).
pub const FRAME_TYPE_ACK_FREQUENCY: u64 = 0xaf;

/// IMMEDIATE_ACK (draft-ietf-quic-ack-frequency-14).
pub const FRAME_TYPE_IMMEDIATE_ACK: u64 = 0x1f;

/// min_ack_delay (draft-ietf-quic-ack-frequency-14): the endpoint accepts
/// ACK_FREQUENCY and IMMEDIATE_ACK frames.
pub const TRANSPORT_PARAMETER_MIN_ACK_DELAY: u64 = 0xff04_de1b;

/// max_receive_timestamps_per_ack (draft-ietf-quic-receive-ts-02).
pub const TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK: u64 = 0x4ac07;

/// receive_timestamps_exponent (draft-ietf-quic-receive-ts-02).
pub const TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT: u64 = 0x4ac26;

/// max_queueing_times_per_frame: the sender accepts QUEUEING_TIME frames with
/// at most this many entries. Ours; see docs/extensions.md.
pub const TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME: u64 = 0x1c5c_b867;

/// Every frame type of our extensions.
pub const FRAME_TYPES: [u64; 5] = [
    FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS,
    FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN,
    FRAME_TYPE_QUEUEING_TIME,
    FRAME_TYPE_ACK_FREQUENCY,
    FRAME_TYPE_IMMEDIATE_ACK,
];

/// Every transport parameter id of our extensions.
pub const TRANSPORT_PARAMETERS: [u64; 4] = [
    TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK,
    TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT,
    TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME,
    TRANSPORT_PARAMETER_MIN_ACK_DELAY,
];

/// Whether `frame_type` is one of ours.
pub fn is_extension_frame_type(frame_type: u64) -> bool {
    FRAME_TYPES.contains(&frame_type)
}

/// Whether `id` is one of our transport parameters.
pub fn is_extension_transport_parameter(id: u64) -> bool {
    TRANSPORT_PARAMETERS.contains(&id)
}

/// Whether `value` has the form 31·N+27 reserved for greasing (RFC 9000
/// sections 18.1 and 22.3).
pub fn has_greasing_form(value: u64) -> bool {
    value >= 27 && (value - 27).is_multiple_of(31)
}

/// A reserved transport parameter id (31·N+27) chosen by `random`, never one
/// that an extension of ours gives a meaning to. Anything of ours that greases
/// transport parameters must take its ids from here.
pub fn grease_transport_parameter_id(random: u64) -> u64 {
    // Largest N for which 31·N+27 is still a valid varint.
    let n_count = (octets::MAX_VAR_INT - 27) / 31 + 1;
    let mut n = random % n_count;
    loop {
        let id = 31 * n + 27;
        if !is_extension_transport_parameter(id) {
            return id;
        }
        n = (n + 1) % n_count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draft_codepoints_have_the_greasing_form() {
        assert!(has_greasing_form(
            TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK
        ));
        assert!(has_greasing_form(
            TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT
        ));
    }

    #[test]
    fn our_own_codepoints_are_4_byte_varints_without_the_greasing_form() {
        for value in [
            FRAME_TYPE_QUEUEING_TIME,
            TRANSPORT_PARAMETER_MAX_QUEUEING_TIMES_PER_FRAME,
        ] {
            assert_eq!(octets::varint_len(value), 4, "{value:#x}");
            assert!(!has_greasing_form(value), "{value:#x}");
        }
    }

    #[test]
    fn codepoints_are_distinct_and_not_rfc9000_ones() {
        for (i, a) in FRAME_TYPES.iter().enumerate() {
            // RFC 9000 uses 0x00..=0x1e, RFC 9221 0x30 and 0x31.
            assert!(
                *a > 0x1e && *a != 0x30 && *a != 0x31,
                "{a:#x} collides with RFC 9000 / 9221 frames"
            );
            assert!(FRAME_TYPES[i + 1..].iter().all(|b| b != a));
        }
        for (i, a) in TRANSPORT_PARAMETERS.iter().enumerate() {
            assert!(*a > 0x20, "{a:#x} collides with RFC 9000 / 9221 parameters");
            assert!(TRANSPORT_PARAMETERS[i + 1..].iter().all(|b| b != a));
        }
    }

    #[test]
    fn greasing_never_picks_our_parameters() {
        // The N of each draft parameter, and its neighbours.
        let draft_ns = [
            (TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK - 27) / 31,
            (TRANSPORT_PARAMETER_RECEIVE_TIMESTAMPS_EXPONENT - 27) / 31,
        ];
        for n in draft_ns {
            for random in n.saturating_sub(2)..n + 3 {
                let id = grease_transport_parameter_id(random);
                assert!(has_greasing_form(id));
                assert!(!is_extension_transport_parameter(id), "{id:#x}");
                assert!(id <= octets::MAX_VAR_INT);
            }
        }
        for random in [0, 1, u64::MAX, u64::MAX / 3, 0x1234_5678_9abc_def0] {
            let id = grease_transport_parameter_id(random);
            assert!(has_greasing_form(id) && !is_extension_transport_parameter(id));
            assert!(id <= octets::MAX_VAR_INT);
        }
    }
}

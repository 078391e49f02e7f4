//! ACK_FREQUENCY and IMMEDIATE_ACK from hostile bytes, and the receiver's
//! ACK policy driven by them: errors, never panics; whatever parses
//! re-encodes to the same frame; the policy's deadline never precedes the
//! packets that started it.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use quic_ext::ack_frequency::{AckDecision, DEFAULT_MIN_ACK_DELAY_US};
use quic_ext::{AckPolicy, ExtensionFrame};

fuzz_target!(|data: &[u8]| {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let Ok((frame, used)) = ExtensionFrame::from_bytes(body) else {
        return;
    };
    let mut out = vec![0; frame.wire_len()];
    let written = frame
        .encode(&mut octets::OctetsMut::with_slice(&mut out))
        .expect("wire_len is enough room");
    assert_eq!(written, out.len());
    let (again, again_used) = ExtensionFrame::from_bytes(&out).expect("own encoding parses");
    assert_eq!(again, frame);
    assert_eq!(again_used, out.len());

    // The rest of the input: packet numbers (2 bytes each) for a receiver
    // that applied the frame.
    let mut policy = AckPolicy::default();
    let applied = match &frame {
        ExtensionFrame::AckFrequency(f) => policy.on_ack_frequency(f, Some(DEFAULT_MIN_ACK_DELAY_US)),
        ExtensionFrame::ImmediateAck => policy.on_immediate_ack(Some(DEFAULT_MIN_ACK_DELAY_US)),
        _ => return,
    };
    if applied.is_err() {
        return;
    }
    let start = Instant::now();
    let ack_every = u64::from(control % 8) + 1;
    for (i, pair) in body[used..].chunks_exact(2).enumerate() {
        let now = start + Duration::from_millis(i as u64);
        let pn = u64::from(u16::from_be_bytes([pair[0], pair[1]]));
        let decision = policy.on_packet(pn, pair[0] & 1 == 0, now, ack_every, Duration::from_millis(25));
        if let Some(deadline) = policy.deadline() {
            assert!(deadline >= start);
        }
        if decision == AckDecision::Now || pair[1] & 7 == 0 {
            policy.on_ack_sent(pn);
            assert_eq!(policy.deadline(), None);
        }
        policy.on_timeout(now);
    }
});

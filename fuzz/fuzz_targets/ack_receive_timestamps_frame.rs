//! ACK_RECEIVE_TIMESTAMPS from hostile bytes: the parser and the decoder
//! return errors, never panic; whatever parses re-encodes to the same frame;
//! decoded times never increase and belong to acknowledged packets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quic_ext::codepoints::{
    FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS, FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN,
};
use quic_ext::{AckReceiveTimestampsFrame, ExtensionFrame};

fuzz_target!(|data: &[u8]| {
    // First byte: ECN variant, exponent and limit; the rest is the frame body.
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let frame_type = if control & 1 == 0 {
        FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS
    } else {
        FRAME_TYPE_ACK_RECEIVE_TIMESTAMPS_ECN
    };
    let exponent = u32::from(control >> 1) % 21;
    let limit = [0, 1, 8, 64, u64::MAX][usize::from(control >> 6) % 5];

    let mut b = octets::Octets::with_slice(body);
    let Ok(frame) = AckReceiveTimestampsFrame::parse(frame_type, &mut b) else {
        return;
    };

    let wrapped = ExtensionFrame::AckReceiveTimestamps(frame.clone());
    let mut out = vec![0; wrapped.wire_len()];
    let written = wrapped
        .encode(&mut octets::OctetsMut::with_slice(&mut out))
        .expect("wire_len is enough room");
    assert_eq!(written, out.len());
    let (reparsed, used) = ExtensionFrame::from_bytes(&out).expect("own encoding parses");
    assert_eq!(used, out.len());
    assert_eq!(reparsed, wrapped);

    let mut times = Vec::new();
    if frame.receive_times(limit, exponent, &mut times).is_ok() {
        assert!(times.len() as u64 <= limit);
        for pair in times.windows(2) {
            assert!(pair[1].receive_time <= pair[0].receive_time);
        }
        assert!(times.iter().all(|t| frame.acknowledges(t.packet_number)));
    }

    let mut truncated = frame;
    truncated.truncate_to_fit(body.len() / 2);
});

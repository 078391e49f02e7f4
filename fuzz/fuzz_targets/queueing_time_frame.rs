//! QUEUEING_TIME from hostile bytes: errors, never panics; whatever parses
//! has distinct packet numbers and re-encodes to the same frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quic_ext::codepoints::FRAME_TYPE_QUEUEING_TIME;
use quic_ext::{ExtensionFrame, QueueingTimeFrame};

fuzz_target!(|data: &[u8]| {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let mut b = octets::Octets::with_slice(body);
    let Ok(frame) = QueueingTimeFrame::parse(&mut b) else {
        return;
    };
    assert!(!frame.entries().is_empty());
    let mut numbers: Vec<u64> = frame.entries().iter().map(|e| e.packet_number).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), frame.entries().len());

    let wrapped = ExtensionFrame::QueueingTime(frame.clone());
    let mut out = vec![0; wrapped.wire_len()];
    let written = wrapped
        .encode(&mut octets::OctetsMut::with_slice(&mut out))
        .expect("wire_len is enough room");
    assert_eq!(written, out.len());
    let mut again = octets::Octets::with_slice(&out);
    assert_eq!(again.get_varint().expect("type"), FRAME_TYPE_QUEUEING_TIME);
    assert_eq!(
        QueueingTimeFrame::parse(&mut again).expect("own encoding parses"),
        frame
    );

    let _ = frame.check_limit(Some(u64::from(control)));
    if let Some(small) = frame.truncated_to_fit(usize::from(control)) {
        assert!(small.wire_len() <= usize::from(control));
    }
});

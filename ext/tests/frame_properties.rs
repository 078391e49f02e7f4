//! Round-trip properties of both frames and the transport parameters, and
//! that no input makes a parser panic.

use proptest::collection::{btree_set, vec};
use proptest::prelude::*;

use quic_ext::codepoints::FRAME_TYPES;
use quic_ext::{
    AckRange, AckReceiveTimestampsFrame, EcnCounts, ExtensionFrame, ExtensionParams,
    QueueingTimeEntry, QueueingTimeFrame, TimestampRange,
};

const MAX: u64 = (1 << 62) - 1;

fn encode(frame: &ExtensionFrame) -> Vec<u8> {
    let mut out = vec![0; frame.wire_len()];
    let written = frame
        .encode(&mut octets::OctetsMut::with_slice(&mut out))
        .expect("wire_len is enough room");
    assert_eq!(written, out.len(), "wire_len must match what encode writes");
    out
}

/// Well-formed ACK ranges: the largest, then (gap, length) pairs that stay
/// above packet number 0.
fn ack_ranges() -> impl Strategy<Value = Vec<AckRange>> {
    (0..=MAX, 0u64..1000, vec((0u64..1000, 0u64..1000), 0..20)).prop_map(
        |(largest, first, rest)| {
            let mut ranges = vec![AckRange {
                smallest: largest.saturating_sub(first),
                largest,
            }];
            for (gap, length) in rest {
                let smallest = ranges.last().map_or(0, |r| r.smallest);
                let Some(top) = smallest.checked_sub(gap + 2) else {
                    break;
                };
                ranges.push(AckRange {
                    smallest: top.saturating_sub(length),
                    largest: top,
                });
            }
            ranges
        },
    )
}

fn ack_receive_timestamps_frame() -> impl Strategy<Value = AckReceiveTimestampsFrame> {
    (
        0..=MAX,
        ack_ranges(),
        proptest::option::of((0..=MAX, 0..=MAX, 0..=MAX)),
        vec((any::<u64>(), vec(0..=MAX, 0..10)), 0..10),
    )
        .prop_map(|(ack_delay, ranges, ecn, raw_timestamp_ranges)| {
            let largest = ranges[0].largest;
            let timestamp_ranges = raw_timestamp_ranges
                .into_iter()
                .map(|(dla, mut deltas)| {
                    let delta_largest_acknowledged = dla % (largest + 1);
                    let range_largest = largest - delta_largest_acknowledged;
                    deltas.truncate((range_largest.saturating_add(1)).min(10) as usize);
                    TimestampRange {
                        delta_largest_acknowledged,
                        deltas,
                    }
                })
                .collect();
            let ecn = ecn.map(|(ect0, ect1, ce)| EcnCounts { ect0, ect1, ce });
            AckReceiveTimestampsFrame::new(ack_delay, ranges, ecn, timestamp_ranges)
                .expect("generated ranges are well formed")
        })
}

fn queueing_time_frame() -> impl Strategy<Value = QueueingTimeFrame> {
    (btree_set(0..=MAX, 1..40), vec(0..=MAX, 40)).prop_map(|(numbers, times)| {
        let entries = numbers
            .into_iter()
            .rev()
            .zip(times)
            .map(|(packet_number, forward_queueing_us)| QueueingTimeEntry {
                packet_number,
                forward_queueing_us,
            })
            .collect();
        QueueingTimeFrame::new(entries).expect("distinct, non-empty")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ack_receive_timestamps_round_trips(frame in ack_receive_timestamps_frame()) {
        let frame = ExtensionFrame::AckReceiveTimestamps(frame);
        let bytes = encode(&frame);
        let (parsed, used) = ExtensionFrame::from_bytes(&bytes).expect("own encoding parses");
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(parsed, frame);
    }

    #[test]
    fn queueing_time_round_trips(frame in queueing_time_frame()) {
        let frame = ExtensionFrame::QueueingTime(frame);
        let bytes = encode(&frame);
        let (parsed, used) = ExtensionFrame::from_bytes(&bytes).expect("own encoding parses");
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(parsed, frame);
    }

    /// Receive times built from a receiver's record decode to the recorded
    /// times, quantised down by less than 2^exponent µs.
    #[test]
    fn built_timestamps_decode_to_the_recorded_times(
        numbers in btree_set(0u64..5000, 1..200),
        gaps in vec(0u64..50_000, 200),
        order_swaps in vec((0usize..200, 0usize..200), 0..20),
        exponent in 0u32..=20,
    ) {
        // Arrival order: ascending packet numbers with a few swapped
        // (reordering); times ascend in arrival order.
        let mut arrivals: Vec<u64> = numbers.iter().copied().collect();
        for (a, b) in order_swaps {
            let n = arrivals.len();
            arrivals.swap(a % n, b % n);
        }
        let mut t = 1_000u64;
        let mut recorded = Vec::new();
        for (pn, gap) in arrivals.iter().zip(gaps) {
            t += gap;
            recorded.push((*pn, t));
        }
        let newest_first: Vec<(u64, u64)> = recorded.iter().rev().copied().collect();
        let largest = *numbers.iter().max().expect("non-empty");
        let ranges = vec![AckRange { smallest: 0, largest }];
        let frame = AckReceiveTimestampsFrame::build(3, ranges, None, &newest_first, exponent)
            .expect("valid ranges");
        let bytes = encode(&ExtensionFrame::AckReceiveTimestamps(frame));
        let (parsed, _) = ExtensionFrame::from_bytes(&bytes).expect("parses");
        let ExtensionFrame::AckReceiveTimestamps(parsed) = parsed else {
            panic!("wrong frame kind");
        };
        let mut decoded = Vec::new();
        parsed.receive_times(10_000, exponent, &mut decoded).expect("valid");
        prop_assert_eq!(decoded.len(), newest_first.len());
        for (d, (pn, time_us)) in decoded.iter().zip(&newest_first) {
            prop_assert_eq!(d.packet_number, *pn);
            let got = d.receive_time.as_micros() as u64;
            prop_assert!(got <= *time_us && time_us - got < (1 << exponent), "{} vs {}", got, time_us);
        }
    }

    #[test]
    fn transport_parameters_round_trip(
        max in proptest::option::of(1u64..=1024),
        exponent in proptest::option::of(0u64..=20),
        queueing in any::<bool>(),
    ) {
        let mut p = ExtensionParams::default();
        if let Some(max) = max {
            p.set_max_receive_timestamps_per_ack(max);
        }
        if let Some(e) = exponent {
            p.set_receive_timestamps_exponent(e).expect("valid exponent");
        }
        p.set_queueing_time_frame(queueing);
        let mut out = vec![0; p.encoded_len()];
        p.encode(&mut octets::OctetsMut::with_slice(&mut out)).expect("room");
        let decoded = ExtensionParams::decode_all(&out).expect("own encoding decodes");
        // The exponent is only advertised together with the maximum.
        let mut expected = p;
        if expected.max_receive_timestamps_per_ack.is_none() {
            expected.receive_timestamps_exponent = None;
        }
        prop_assert_eq!(decoded, expected);
    }

    /// Arbitrary bytes behind any of our frame types: an error or a frame
    /// that re-encodes to a frame equal to itself, never a panic.
    #[test]
    fn parsers_never_panic(ty in 0usize..3, body in vec(any::<u8>(), 0..300), exponent in 0u32..=20) {
        let mut bytes = vec![0u8; 8];
        let n = octets::OctetsMut::with_slice(&mut bytes).put_varint(FRAME_TYPES[ty]).expect("room").len();
        bytes.truncate(n);
        bytes.extend_from_slice(&body);
        if let Ok((frame, _)) = ExtensionFrame::from_bytes(&bytes) {
            let again = encode(&frame);
            let (reparsed, _) = ExtensionFrame::from_bytes(&again).expect("re-encoding parses");
            prop_assert_eq!(&reparsed, &frame);
            if let ExtensionFrame::AckReceiveTimestamps(f) = frame {
                let mut out = Vec::new();
                let _ = f.receive_times(u64::MAX, exponent, &mut out);
            }
        }
        let _ = ExtensionParams::decode_all(&body);
    }
}

//! Our transport parameters from hostile bytes: a whole parameter blob, and
//! the input as the value of each of our parameters. Errors, never panics;
//! what decodes re-encodes to the same parameters.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quic_ext::codepoints::TRANSPORT_PARAMETERS;
use quic_ext::ExtensionParams;

fn round_trip(params: &ExtensionParams) {
    let mut out = vec![0; params.encoded_len()];
    params
        .encode(&mut octets::OctetsMut::with_slice(&mut out))
        .expect("encoded_len is enough room");
    let decoded = ExtensionParams::decode_all(&out).expect("own encoding decodes");
    let mut expected = *params;
    if expected.max_receive_timestamps_per_ack.is_none() {
        // The exponent is only sent together with the maximum.
        expected.receive_timestamps_exponent = None;
    }
    assert_eq!(decoded, expected);
}

fuzz_target!(|data: &[u8]| {
    if let Ok(params) = ExtensionParams::decode_all(data) {
        assert!(params.receive_timestamps_exponent.unwrap_or(0) <= 20);
        assert!(params
            .max_queueing_times_per_frame
            .is_none_or(|m| (1..=1024).contains(&m)));
        let _ = params.receive_timestamps_request();
        round_trip(&params);
    }
    for id in TRANSPORT_PARAMETERS {
        let mut params = ExtensionParams::default();
        if params.decode_parameter(id, data).is_ok() {
            round_trip(&params);
        }
    }
});

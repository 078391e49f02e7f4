//! The quiche client configuration of the tests and benchmarks that
//! download over HTTP/3 with quiche itself (no app in between): one file
//! for the integration tests (`tests/common`) and `examples/stress.rs`
//! (which includes it by path).

/// A client offering h3 that does not verify the server (the apps' self-
/// signed certificate), with windows larger than a 1 MB download and room
/// for ten streams each way.
pub fn h3_client_config(idle_timeout_ms: u64) -> quiche::Config {
    let mut c = quiche::Config::new(quiche::PROTOCOL_VERSION).expect("a quiche configuration");
    c.verify_peer(false);
    c.set_application_protos(&[b"h3"])
        .expect("h3 is a valid ALPN");
    c.set_max_idle_timeout(idle_timeout_ms);
    c.set_initial_max_data(10_000_000);
    c.set_initial_max_stream_data_bidi_local(10_000_000);
    c.set_initial_max_stream_data_bidi_remote(10_000_000);
    c.set_initial_max_stream_data_uni(1_000_000);
    c.set_initial_max_streams_bidi(10);
    c.set_initial_max_streams_uni(10);
    c
}

//! ACK frequency (draft-ietf-quic-ack-frequency) between two real quiche
//! connections, in memory, on virtual time (`quiche::virtual_env`): the test
//! is the network. Negotiated between our endpoints, the data receiver's
//! ACKs thin to what the data sender asked for; a peer that never advertised
//! min_ack_delay is never sent the frames and acknowledges as before; a
//! frame the receiver did not agree to, or with a delay below its
//! min_ack_delay, closes the connection with the draft's error.

use std::collections::VecDeque;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

const MAX_DATAGRAM: usize = 1350;
const STREAM: u64 = 0;
const ONE_WAY: Duration = Duration::from_millis(20);
/// Forward bottleneck, so that the window, not the test loop, paces the data.
const FORWARD_RATE_BPS: u64 = 20_000_000;

/// FRAME_ENCODING_ERROR and PROTOCOL_VIOLATION (RFC 9000 section 20.1).
const FRAME_ENCODING_ERROR: u64 = 0x7;
const PROTOCOL_VIOLATION: u64 = 0xa;

#[derive(Clone, Default)]
struct SharedLog(Arc<Mutex<Vec<u8>>>);

impl Write for SharedLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log lock").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl SharedLog {
    fn events(&self) -> Vec<Value> {
        let bytes = self.0.lock().expect("log lock").clone();
        String::from_utf8_lossy(&bytes)
            .split('\u{1e}')
            .filter(|r| !r.trim().is_empty())
            .filter_map(|r| serde_json::from_str(r).ok())
            .collect()
    }
}

/// How one endpoint is configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// Offers ACK frequency (advertises min_ack_delay).
    AckFrequency,
    /// Offers ACK frequency but not receive stamps (picoquic's, quinn's,
    /// msquic's clients).
    AckFrequencyWithoutStamps,
    /// Our extensions, but not ACK frequency.
    WithoutAckFrequency,
    /// `Config::enable_extensions(false)`: like stock quiche.
    Stock,
}

struct Certificates {
    _dir: tempfile::TempDir,
    cert: String,
    key: String,
}

fn certificates() -> Certificates {
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("certificate");
    let dir = tempfile::tempdir().expect("temp dir");
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    std::fs::write(&cert, certified.cert.pem()).expect("write cert");
    std::fs::write(&key, certified.signing_key.serialize_pem()).expect("write key");
    Certificates {
        cert: cert.to_string_lossy().into_owned(),
        key: key.to_string_lossy().into_owned(),
        _dir: dir,
    }
}

fn config(side: Side, certs: &Certificates) -> quiche::Config {
    let mut c = quiche::Config::new(quiche::PROTOCOL_VERSION).expect("config");
    c.load_cert_chain_from_pem_file(&certs.cert).expect("cert");
    c.load_priv_key_from_pem_file(&certs.key).expect("key");
    c.set_application_protos(&[b"hq-interop"]).expect("alpn");
    c.verify_peer(false);
    c.set_max_idle_timeout(30_000);
    c.set_max_recv_udp_payload_size(MAX_DATAGRAM);
    c.set_max_send_udp_payload_size(MAX_DATAGRAM);
    c.set_initial_max_data(50_000_000);
    c.set_initial_max_stream_data_bidi_local(50_000_000);
    c.set_initial_max_stream_data_bidi_remote(50_000_000);
    c.set_initial_max_streams_bidi(10);
    c.set_cc_algorithm_name("cubic").expect("cubic");
    if side != Side::Stock && side != Side::AckFrequencyWithoutStamps {
        // Receive stamps as our apps ask for them: the thinning asked of a
        // stamping peer (a peer without them is asked for 4x more ACKs:
        // `a_peer_without_stamps_is_thinned_less`).
        c.set_max_receive_timestamps_per_ack(64);
    }
    match side {
        Side::AckFrequency | Side::AckFrequencyWithoutStamps => c.enable_ack_frequency(true),
        Side::WithoutAckFrequency => c.enable_ack_frequency(false),
        Side::Stock => c.enable_extensions(false),
    }
    c
}

fn content(i: usize) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

struct Endpoint {
    conn: quiche::Connection,
    log: SharedLog,
    deadline: Option<Duration>,
}

/// What a transfer left behind.
struct Outcome {
    client: Endpoint,
    server: Endpoint,
    /// The download arrived whole and intact.
    complete: bool,
}

/// A download of `size` bytes from server to client. `force` makes the
/// server put the given ACK_FREQUENCY fields (sequence number, threshold,
/// delay in µs, reordering threshold) in a 1-RTT packet once the client
/// has sent its request. The run ends when the download is complete (and
/// the last ACKs have landed) or a connection closed.
fn transfer(
    client_side: Side,
    server_side: Side,
    size: usize,
    force: Option<(u64, u64, u64, u64)>,
) -> Outcome {
    let certs = certificates();
    let start = Instant::now();
    let mut t = Duration::ZERO;
    let set_time = |t: Duration| quiche::virtual_env::set_virtual_time(Some((start + t, t)));
    set_time(t);
    quiche::virtual_env::set_random_seed(Some(7));

    let client_addr: SocketAddr = "10.0.0.1:4000".parse().expect("addr");
    let server_addr: SocketAddr = "10.0.0.2:443".parse().expect("addr");
    let mut client_config = config(client_side, &certs);
    let mut server_config = config(server_side, &certs);
    let scid = quiche::ConnectionId::from_ref(&[0xc1; 16]);
    let mut client = Endpoint {
        conn: quiche::connect(
            Some("localhost"),
            &scid,
            client_addr,
            server_addr,
            &mut client_config,
        )
        .expect("connect"),
        log: SharedLog::default(),
        deadline: None,
    };
    client
        .conn
        .set_qlog(Box::new(client.log.clone()), "client".into(), "test".into());
    let mut server: Option<Endpoint> = None;

    // (arrival, to the client, bytes)
    let mut in_flight: VecDeque<(Duration, bool, Vec<u8>)> = VecDeque::new();
    let mut bottleneck_free_at = Duration::ZERO;
    let mut received = Vec::with_capacity(size);
    let mut request_sent = false;
    let mut forced = force;
    let mut response_offset = 0usize;
    let mut buf = vec![0u8; 65_535];
    let mut finished_at: Option<Duration> = None;
    let limit = Duration::from_secs(60);

    loop {
        set_time(t);
        while in_flight.front().is_some_and(|d| d.0 <= t) {
            let (_, to_client, mut bytes) = in_flight.pop_front().expect("checked");
            let (from, to) = if to_client {
                (server_addr, client_addr)
            } else {
                (client_addr, server_addr)
            };
            if !to_client && server.is_none() {
                let scid = quiche::ConnectionId::from_ref(&[0x5e; 16]);
                let conn =
                    quiche::accept(&scid, None, server_addr, client_addr, &mut server_config)
                        .expect("accept");
                let mut s = Endpoint {
                    conn,
                    log: SharedLog::default(),
                    deadline: None,
                };
                s.conn
                    .set_qlog(Box::new(s.log.clone()), "server".into(), "test".into());
                server = Some(s);
            }
            let e = if to_client {
                &mut client
            } else {
                server.as_mut().expect("server exists")
            };
            // A refused frame closes the connection; the caller looks.
            let _ = e.conn.recv(&mut bytes, quiche::RecvInfo { from, to });
        }
        for e in std::iter::once(&mut client).chain(server.as_mut()) {
            if e.deadline.is_some_and(|d| d <= t) {
                e.conn.on_timeout();
            }
        }

        if client.conn.is_established() && !request_sent {
            client
                .conn
                .stream_send(STREAM, b"GET /\r\n", true)
                .expect("request");
            request_sent = true;
        }
        if let Some(s) = server.as_mut() {
            if s.conn.is_established() {
                let mut got_request = false;
                while let Ok((_, fin)) = s.conn.stream_recv(STREAM, &mut buf) {
                    got_request |= fin;
                }
                if got_request {
                    if let Some((seq, threshold, delay, reorder)) = forced.take() {
                        s.conn
                            .send_ack_frequency_frame_for_testing(seq, threshold, delay, reorder);
                    }
                }
                while response_offset < size {
                    let end = (response_offset + 16_384).min(size);
                    let chunk: Vec<u8> = (response_offset..end).map(content).collect();
                    match s.conn.stream_send(STREAM, &chunk, end == size) {
                        Ok(n) if n > 0 => response_offset += n,
                        _ => break,
                    }
                }
            }
        }
        while let Ok((n, _)) = client.conn.stream_recv(STREAM, &mut buf) {
            received.extend_from_slice(&buf[..n]);
        }

        for (is_server, e) in [(false, Some(&mut client)), (true, server.as_mut())] {
            let Some(e) = e else { continue };
            loop {
                match e.conn.send(&mut buf) {
                    Ok((n, _)) => {
                        let arrival = if is_server {
                            let leave = t.max(bottleneck_free_at);
                            bottleneck_free_at = leave
                                + Duration::from_nanos(
                                    n as u64 * 8 * 1_000_000_000 / FORWARD_RATE_BPS,
                                );
                            bottleneck_free_at + ONE_WAY
                        } else {
                            t + ONE_WAY
                        };
                        // In order per direction: arrivals only grow.
                        let at = in_flight.partition_point(|d| d.0 <= arrival);
                        in_flight.insert(at, (arrival, is_server, buf[..n].to_vec()));
                    }
                    Err(quiche::Error::Done) => break,
                    Err(e) => panic!("send failed: {e:?}"),
                }
            }
            e.deadline = e.conn.timeout().map(|d| t + d);
        }

        if received.len() == size && finished_at.is_none() {
            finished_at = Some(t);
        }
        let closed = client.conn.is_closed() || server.as_ref().is_some_and(|s| s.conn.is_closed());
        if closed || finished_at.is_some_and(|f| t >= f + Duration::from_millis(500)) {
            break;
        }
        let next = in_flight
            .iter()
            .map(|d| d.0)
            .chain(client.deadline)
            .chain(server.as_ref().and_then(|s| s.deadline))
            .min();
        match next {
            Some(next) => t = next.max(t),
            None => break,
        }
        assert!(t < limit, "transfer did not end in {limit:?}");
    }

    quiche::virtual_env::set_virtual_time(None);
    quiche::virtual_env::set_random_seed(None);
    let complete =
        received.len() == size && received.iter().enumerate().all(|(i, b)| *b == content(i));
    Outcome {
        client,
        server: server.expect("server was created"),
        complete,
    }
}

/// The extension frames of `frame_type` in an endpoint's packet events of
/// `name` (`quic:packet_sent` or `quic:packet_received`).
fn frames(log: &SharedLog, name: &str, frame_type: &str) -> Vec<Value> {
    log.events()
        .iter()
        .filter(|e| e["name"] == name)
        .filter_map(|e| e["extension_frames"].as_array().cloned())
        .flatten()
        .filter(|f| f["frame_type"] == frame_type)
        .collect()
}

/// 1-RTT packets the server sent.
fn server_packets(o: &Outcome) -> u64 {
    o.server.conn.stats().sent as u64
}

#[test]
fn a_peer_without_stamps_is_thinned_less() {
    // The same transfer to a client that stamps and to one that does not:
    // the server asks the first for an ACK per 1/64 of its window and the
    // second per 1/256, so the second's threshold is about a quarter
    // (window / 256 against window / 64, rounded down) and it sends more
    // ACKs.
    let size = 3_000_000;
    let stamped = transfer(Side::AckFrequency, Side::AckFrequency, size, None);
    let unstamped = transfer(
        Side::AckFrequency,
        Side::AckFrequencyWithoutStamps,
        size,
        None,
    );
    assert!(stamped.complete && unstamped.complete);
    let asked = |o: &Outcome| {
        o.server
            .conn
            .extension_stats()
            .requested_ack_eliciting_threshold
            .expect("a request")
    };
    let (with, without) = (asked(&stamped), asked(&unstamped));
    assert!(with >= 8, "{with}");
    assert!(without <= with / 4 + 1, "{without} against {with}");
    let acks = |o: &Outcome| o.client.conn.extension_stats().application_acks_sent;
    assert!(
        acks(&unstamped) > 2 * acks(&stamped),
        "{} against {}",
        acks(&unstamped),
        acks(&stamped)
    );
}

#[test]
fn negotiated_between_our_endpoints_the_receivers_acks_thin_to_the_request() {
    let size = 3_000_000;
    let on = transfer(Side::AckFrequency, Side::AckFrequency, size, None);
    let off = transfer(
        Side::WithoutAckFrequency,
        Side::WithoutAckFrequency,
        size,
        None,
    );
    assert!(on.complete && off.complete);

    let server = on.server.conn.extension_stats();
    let client = on.client.conn.extension_stats();
    assert!(server.sending_ack_frequency && client.sending_ack_frequency);
    assert!(server.ack_frequency_frames_sent >= 1);
    assert_eq!(
        client.ack_frequency_frames_received,
        server.ack_frequency_frames_sent
    );
    let threshold = client
        .peer_ack_eliciting_threshold
        .expect("the client applied the server's request");
    assert_eq!(Some(threshold), server.requested_ack_eliciting_threshold);
    assert!(
        threshold >= 8,
        "threshold {threshold} for a 20 Mbit/s x 40 ms window"
    );

    // Without the extension: about one ACK per data packet (stock quiche).
    let packets = server_packets(&off);
    let acks_off = off.client.conn.extension_stats().application_acks_sent;
    assert!(
        acks_off * 2 >= packets,
        "{acks_off} ACKs for {packets} packets"
    );
    // With it: about one per threshold + 1 packets once the window is open;
    // slow start's smaller thresholds and the delay timer add some.
    let acks_on = client.application_acks_sent;
    let ideal = server_packets(&on) / (threshold + 1);
    assert!(
        acks_on <= 3 * ideal,
        "{acks_on} ACKs, about {ideal} expected at threshold {threshold}"
    );
    assert!(acks_on * 4 < acks_off, "{acks_on} with, {acks_off} without");

    // qlog: the parameter on both sides, the frames with their fields.
    let sent = frames(&on.server.log, "quic:packet_sent", "ack_frequency");
    let got = frames(&on.client.log, "quic:packet_received", "ack_frequency");
    assert_eq!(sent.len() as u64, server.ack_frequency_frames_sent);
    assert_eq!(got.len(), sent.len());
    let last = got.last().expect("a frame");
    assert_eq!(last["ack_eliciting_threshold"], threshold);
    assert!(last["request_max_ack_delay_us"].as_u64().is_some());
    assert_eq!(last["reordering_threshold"], 3);
    let params = on
        .client
        .log
        .events()
        .into_iter()
        .filter(|e| e["name"] == "quic:parameters_set")
        .filter(|e| e["data"]["initiator"] == "remote")
        .filter_map(|e| e["extensions"]["min_ack_delay_us"].as_u64())
        .collect::<Vec<_>>();
    assert_eq!(params, vec![1000]);
}

#[test]
fn a_peer_that_never_advertised_min_ack_delay_is_left_alone() {
    let size = 1_000_000;
    for (client_side, server_side) in [
        (Side::WithoutAckFrequency, Side::AckFrequency),
        (Side::Stock, Side::AckFrequency),
        (Side::AckFrequency, Side::WithoutAckFrequency),
        (Side::AckFrequency, Side::Stock),
    ] {
        let o = transfer(client_side, server_side, size, None);
        let case = format!("client {client_side:?}, server {server_side:?}");
        assert!(o.complete, "{case}");
        for e in [&o.client, &o.server] {
            let stats = e.conn.extension_stats();
            assert!(!stats.sending_ack_frequency, "{case}");
            assert_eq!(stats.ack_frequency_frames_sent, 0, "{case}");
            assert_eq!(stats.immediate_acks_sent, 0, "{case}");
            assert_eq!(stats.ack_frequency_frames_received, 0, "{case}");
            assert_eq!(stats.peer_ack_eliciting_threshold, None, "{case}");
            assert!(frames(&e.log, "quic:packet_sent", "ack_frequency").is_empty());
        }
        // The receiver acknowledges as stock quiche does (where our
        // extensions are on, their counter shows it).
        if client_side != Side::Stock {
            let acks = o.client.conn.extension_stats().application_acks_sent;
            let packets = server_packets(&o);
            assert!(
                acks * 2 >= packets,
                "{case}: {acks} ACKs, {packets} packets"
            );
        }
    }
}

#[test]
fn an_ack_frequency_frame_the_receiver_never_agreed_to_is_a_frame_encoding_error() {
    for client_side in [Side::WithoutAckFrequency, Side::Stock] {
        let o = transfer(
            client_side,
            Side::AckFrequency,
            1_000_000,
            Some((100, 10, 25_000, 3)),
        );
        assert!(!o.complete);
        let error = o.client.conn.local_error().expect("the client closed");
        assert!(!error.is_app);
        assert_eq!(error.error_code, FRAME_ENCODING_ERROR, "{client_side:?}");
        let seen = o.server.conn.peer_error().expect("the server was told");
        assert_eq!(seen.error_code, FRAME_ENCODING_ERROR);
    }
}

#[test]
fn a_requested_delay_outside_the_receivers_bounds_is_a_protocol_violation() {
    // 999 µs is below the client's min_ack_delay (1 ms); 2^14 ms is above
    // what max_ack_delay may be.
    for delay_us in [999, 16_384_000] {
        let o = transfer(
            Side::AckFrequency,
            Side::AckFrequency,
            1_000_000,
            Some((100, 10, delay_us, 3)),
        );
        assert!(!o.complete);
        let error = o.client.conn.local_error().expect("the client closed");
        assert_eq!(error.error_code, PROTOCOL_VIOLATION, "{delay_us} us");
    }
    // At the bound it is accepted.
    let o = transfer(
        Side::AckFrequency,
        Side::AckFrequency,
        1_000_000,
        Some((100, 10, 1000, 3)),
    );
    assert!(o.complete);
    assert!(o.client.conn.local_error().is_none());
}

#[test]
fn a_stale_sequence_number_is_ignored() {
    // The server's own frames start at 0; a forced frame with a huge
    // sequence number is applied, and every later one of the server's is
    // stale.
    let o = transfer(
        Side::AckFrequency,
        Side::AckFrequency,
        2_000_000,
        Some((1 << 40, 0, 1000, 1)),
    );
    assert!(o.complete);
    let client = o.client.conn.extension_stats();
    assert_eq!(client.peer_ack_eliciting_threshold, Some(0));
    assert!(client.ack_frequency_frames_stale >= 1);
    assert_eq!(
        client.ack_frequency_frames_stale + 1,
        client.ack_frequency_frames_received
    );
}

//! Our QUIC extensions between two real quiche connections, in memory, on
//! virtual time (`quiche::virtual_env`): the test is the network. It checks
//! that the receive times the data sender decodes are the ones the receiver
//! recorded, that AQT values handed in with datagrams come back as echoes,
//! that the fallback queueing estimate finds a known injected delay, and that
//! every combination of peers with and without the extensions completes a
//! transfer, visibly in qlog.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use vegas_cc::shared::queueing_estimate::{EstimatorConfig, QueueingEstimator};
use vegas_cc::{AckEvent, AckSummary, AckedPacket, RttSnapshot};

const STREAM: u64 = 0;
const MAX_DATAGRAM: usize = 1350;

/// A qlog destination the test can read back.
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
    /// The JSON-SEQ records written so far.
    fn events(&self) -> Vec<Value> {
        let bytes = self.0.lock().expect("log lock").clone();
        String::from_utf8_lossy(&bytes)
            .split('\u{1e}')
            .filter(|r| !r.trim().is_empty())
            .filter_map(|r| serde_json::from_str(r).ok())
            .collect()
    }
}

/// What one endpoint advertises, and its congestion controller.
#[derive(Clone, Copy, Debug)]
struct Side {
    receive_timestamps: bool,
    queueing_time_frame: bool,
    /// `Config::enable_extensions(false)`: behaves like stock quiche.
    stock: bool,
    cc: &'static str,
}

impl Side {
    const ALL: Side = Side {
        receive_timestamps: true,
        queueing_time_frame: true,
        stock: false,
        cc: "westwood",
    };
    const NONE: Side = Side {
        receive_timestamps: false,
        queueing_time_frame: false,
        stock: false,
        cc: "westwood",
    };
    const STOCK: Side = Side {
        receive_timestamps: false,
        queueing_time_frame: false,
        stock: true,
        cc: "westwood",
    };
}

/// The network between the two endpoints.
struct Network {
    one_way: Duration,
    /// Extra forward (server to client) delay for a datagram leaving at the
    /// given time since the start.
    forward_extra: fn(Duration) -> Duration,
    /// Hand each forward datagram's queueing time to the client as AQT.
    aqt: bool,
    /// Keep forward datagrams in order (a FIFO queue) or let a later one
    /// overtake an earlier, more delayed one.
    fifo: bool,
    /// Forward bottleneck in bit/s: datagrams queue for it, one at a time.
    forward_rate: Option<u64>,
}

impl Network {
    fn plain() -> Self {
        Network {
            one_way: Duration::from_millis(20),
            forward_extra: |_| Duration::ZERO,
            aqt: false,
            fifo: true,
            forward_rate: None,
        }
    }
}

struct Datagram {
    arrival: Duration,
    to_client: bool,
    bytes: Vec<u8>,
    /// What AQT-enabled routers would report: the datagram's queueing.
    queueing: Duration,
}

struct Endpoint {
    conn: quiche::Connection,
    log: SharedLog,
    addr: SocketAddr,
    /// When its qlog started, since the test's start.
    qlog_start: Duration,
    deadline: Option<Duration>,
}

/// The outcome of one transfer.
struct Transfer {
    client: Endpoint,
    server: Endpoint,
    /// Forward datagrams delivered to the client: arrival (µs since start)
    /// and the queueing the network applied to it.
    forward_queueing_by_arrival: BTreeMap<u64, Duration>,
    start: Instant,
}

fn micros(d: Duration) -> u64 {
    d.as_micros() as u64
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
    c.set_cc_algorithm_name(side.cc).expect("our controller");
    if side.stock {
        c.enable_extensions(false);
    }
    if side.receive_timestamps {
        c.set_max_receive_timestamps_per_ack(64);
        c.set_receive_timestamps_exponent(0).expect("exponent");
    }
    c.enable_queueing_time_frame(side.queueing_time_frame);
    c
}

/// The byte at offset `i` of the response.
fn content(i: usize) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// Runs a download of `size` bytes from server to client over `net`.
fn transfer(client_side: Side, server_side: Side, net: Network, size: usize) -> Transfer {
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
        addr: client_addr,
        qlog_start: t,
        deadline: None,
    };
    client
        .conn
        .set_qlog(Box::new(client.log.clone()), "client".into(), "test".into());
    let mut server: Option<Endpoint> = None;

    let mut in_flight: VecDeque<Datagram> = VecDeque::new();
    let mut last_forward_arrival = Duration::ZERO;
    let mut bottleneck_free_at = Duration::ZERO;
    let mut forward_queueing_by_arrival = BTreeMap::new();
    let mut received = Vec::with_capacity(size);
    let mut request_sent = false;
    let mut response_offset = 0usize;
    let mut buf = vec![0u8; 65_535];
    let limit = Duration::from_secs(120);
    let mut finished_at: Option<Duration> = None;

    loop {
        set_time(t);

        // Deliver what has arrived by now.
        let mut i = 0;
        while i < in_flight.len() {
            if in_flight[i].arrival > t {
                i += 1;
                continue;
            }
            let mut d = in_flight.remove(i).expect("index checked");
            let to = if d.to_client {
                client_addr
            } else {
                server_addr
            };
            let from = if d.to_client {
                server_addr
            } else {
                client_addr
            };
            if !d.to_client && server.is_none() {
                let scid = quiche::ConnectionId::from_ref(&[0x5e; 16]);
                let conn =
                    quiche::accept(&scid, None, server_addr, client_addr, &mut server_config)
                        .expect("accept");
                let mut s = Endpoint {
                    conn,
                    log: SharedLog::default(),
                    addr: server_addr,
                    qlog_start: t,
                    deadline: None,
                };
                s.conn
                    .set_qlog(Box::new(s.log.clone()), "server".into(), "test".into());
                server = Some(s);
            }
            let endpoint = if d.to_client {
                &mut client
            } else {
                server.as_mut().expect("server exists")
            };
            if d.to_client {
                forward_queueing_by_arrival.insert(micros(t), d.queueing);
                if net.aqt {
                    endpoint.conn.set_next_datagram_queueing_time(d.queueing);
                }
            }
            // Errors close the connection; the checks below see that.
            let _ = endpoint
                .conn
                .recv(&mut d.bytes, quiche::RecvInfo { from, to });
        }

        // Timers.
        for e in std::iter::once(&mut client).chain(server.as_mut()) {
            if e.deadline.is_some_and(|d| d <= t) {
                e.conn.on_timeout();
            }
        }

        // The application: one request, one response.
        if client.conn.is_established() && !request_sent {
            client
                .conn
                .stream_send(STREAM, b"GET /\r\n", true)
                .expect("request");
            request_sent = true;
        }
        if let Some(s) = server.as_mut() {
            if s.conn.is_established() {
                while let Ok((_, _)) = s.conn.stream_recv(STREAM, &mut buf) {}
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
        while let Ok((n, _fin)) = client.conn.stream_recv(STREAM, &mut buf) {
            received.extend_from_slice(&buf[..n]);
        }

        // Everything that wants to leave leaves now.
        for e in std::iter::once(&mut client).chain(server.as_mut()) {
            let to_client = e.addr == server_addr;
            loop {
                match e.conn.send(&mut buf) {
                    Ok((n, _)) => {
                        let (arrival, queueing) = if to_client {
                            // Wait for the bottleneck, cross it, then the
                            // extra delay and the propagation.
                            let (waited, transmission) = match net.forward_rate {
                                Some(rate) => {
                                    let start = t.max(bottleneck_free_at);
                                    let transmission =
                                        Duration::from_nanos(n as u64 * 8 * 1_000_000_000 / rate);
                                    bottleneck_free_at = start + transmission;
                                    (start - t, transmission)
                                }
                                None => (Duration::ZERO, Duration::ZERO),
                            };
                            let extra = (net.forward_extra)(t);
                            let mut arrival = t + waited + transmission + extra + net.one_way;
                            if net.fifo {
                                arrival = arrival.max(last_forward_arrival);
                            }
                            last_forward_arrival = arrival;
                            (arrival, arrival - t - transmission - net.one_way)
                        } else {
                            (t + net.one_way, Duration::ZERO)
                        };
                        in_flight.push_back(Datagram {
                            arrival,
                            to_client,
                            bytes: buf[..n].to_vec(),
                            queueing,
                        });
                    }
                    Err(quiche::Error::Done) => break,
                    Err(e) => panic!("send failed: {e:?}"),
                }
            }
            e.deadline = e.conn.timeout().map(|d| t + d);
        }

        // Once everything arrived, let the last ACKs land too.
        if received.len() == size && finished_at.is_none() {
            finished_at = Some(t);
        }
        if finished_at.is_some_and(|f| t >= f + Duration::from_millis(500)) {
            break;
        }
        let closed = client.conn.is_closed() || server.as_ref().is_some_and(|s| s.conn.is_closed());
        assert!(
            !closed,
            "connection closed: client {:?} / {:?}, server {:?}",
            client.conn.local_error(),
            client.conn.peer_error(),
            server
                .as_ref()
                .map(|s| (s.conn.local_error(), s.conn.peer_error()))
        );

        // On to the next event.
        let next = in_flight
            .iter()
            .map(|d| d.arrival)
            .chain(client.deadline)
            .chain(server.as_ref().and_then(|s| s.deadline))
            .min();
        match next {
            Some(next) => t = next.max(t),
            None if finished_at.is_some() => break,
            None => panic!("nothing left to happen at {t:?}"),
        }
        assert!(t < limit, "transfer did not finish in {limit:?}");
    }

    assert!(
        received.iter().enumerate().all(|(i, b)| *b == content(i)),
        "content differs"
    );
    quiche::virtual_env::set_virtual_time(None);
    quiche::virtual_env::set_random_seed(None);
    Transfer {
        client,
        server: server.expect("server was created"),
        forward_queueing_by_arrival,
        start,
    }
}

/// Events of `name` from a qlog.
fn events<'a>(log: &'a [Value], name: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    log.iter().filter(move |e| e["name"] == name)
}

/// An event's time, in µs since the test's start.
fn event_time(e: &Value, qlog_start: Duration) -> u64 {
    let ms = e["time"].as_f64().expect("event time");
    micros(qlog_start) + (ms * 1000.0).round() as u64
}

/// `[[packet number, value], ...]` pairs of a field of every extension frame
/// of `frame_type` in `name` events.
fn extension_pairs(log: &[Value], name: &str, frame_type: &str, field: &str) -> Vec<(u64, u64)> {
    events(log, name)
        .filter_map(|e| e["extension_frames"].as_array())
        .flatten()
        .filter(|f| f["frame_type"] == frame_type)
        .filter_map(|f| f[field].as_array())
        .flatten()
        .map(|pair| {
            (
                pair[0].as_u64().expect("packet number"),
                pair[1].as_u64().expect("value"),
            )
        })
        .collect()
}

/// Packet number to receive time (µs since the test's start) of 1-RTT
/// packets, from an endpoint's own packet_received events.
fn arrivals(e: &Endpoint) -> BTreeMap<u64, u64> {
    events(&e.log.events(), "quic:packet_received")
        .filter(|ev| ev["data"]["header"]["packet_type"] == "1RTT")
        .map(|ev| {
            (
                ev["data"]["header"]["packet_number"].as_u64().expect("pn"),
                event_time(ev, e.qlog_start),
            )
        })
        .collect()
}

#[test]
fn decoded_receive_times_equal_the_times_the_receiver_recorded() {
    for fifo in [true, false] {
        let net = Network {
            // Variable delay; without FIFO, datagrams overtake each other.
            forward_extra: |t| Duration::from_micros((micros(t) * 7919) % 9_000),
            fifo,
            forward_rate: Some(50_000_000),
            ..Network::plain()
        };
        let run = transfer(Side::ALL, Side::ALL, net, 400_000);
        let client_log = run.client.log.events();
        let server_log = run.server.log.events();

        // What the receiver (client) put into its ACK_RECEIVE_TIMESTAMPS
        // frames, what the sender (server) decoded, and when the client's own
        // qlog says each packet arrived.
        let recorded: BTreeMap<u64, u64> = extension_pairs(
            &client_log,
            "quic:packet_sent",
            "ack_receive_timestamps",
            "receive_timestamps_us",
        )
        .into_iter()
        .collect();
        let decoded = extension_pairs(
            &server_log,
            "quic:packet_received",
            "ack_receive_timestamps",
            "receive_timestamps_us",
        );
        let arrived = arrivals(&run.client);
        // The basis is a little before the client's creation (the start).
        let basis = run.client.conn.receive_timestamp_basis();
        let start_after_basis = micros(run.start.duration_since(basis));

        assert!(
            decoded.len() > 200,
            "only {} receive times decoded",
            decoded.len()
        );
        for (pn, time_us) in &decoded {
            assert_eq!(
                recorded.get(pn),
                Some(time_us),
                "packet {pn}: decoded vs recorded"
            );
            let arrival = arrived.get(pn).expect("the client received it");
            assert_eq!(
                *time_us,
                arrival + start_after_basis,
                "packet {pn}: decoded vs arrival"
            );
        }
        // Nearly every data packet's receive time reached the sender.
        let data_packets = arrived.len();
        assert!(
            decoded.len() * 10 >= data_packets * 9,
            "{} of {}",
            decoded.len(),
            data_packets
        );

        let server_stats = run.server.conn.extension_stats();
        assert_eq!(
            server_stats.receive_timestamps_received,
            decoded.len() as u64
        );
        assert!(server_stats.handed.receive_times > 200, "{server_stats:?}");
        assert_eq!(
            server_stats.handed.rejected_receive_times, 0,
            "{server_stats:?}"
        );
        let client_stats = run.client.conn.extension_stats();
        assert!(client_stats.sending_receive_timestamps);
        assert!(client_stats.received_packets_logged <= 2048);
    }
}

/// Forward datagrams leaving in [1 s, 1.5 s) wait 40 ms more.
fn burst(t: Duration) -> Duration {
    if (Duration::from_millis(1000)..Duration::from_millis(1500)).contains(&t) {
        Duration::from_millis(40)
    } else {
        Duration::ZERO
    }
}

#[test]
fn aqt_values_come_back_as_echoes_and_reach_the_controller() {
    let net = Network {
        forward_extra: burst,
        aqt: true,
        forward_rate: Some(20_000_000),
        ..Network::plain()
    };
    let run = transfer(Side::ALL, Side::ALL, net, 3_000_000);
    let echoed = extension_pairs(
        &run.server.log.events(),
        "quic:packet_received",
        "queueing_time",
        "forward_queueing_us",
    );
    let arrived = arrivals(&run.client);
    assert!(echoed.len() > 200, "only {} echoes", echoed.len());
    let mut queued = 0;
    for (pn, q) in &echoed {
        let arrival = arrived.get(pn).expect("the client received it");
        let applied = run.forward_queueing_by_arrival[arrival];
        assert_eq!(*q, micros(applied), "packet {pn}");
        if *q >= 39_000 {
            queued += 1;
        }
    }
    assert!(queued > 10, "the 40 ms burst was echoed {queued} times");

    let stats = run.server.conn.extension_stats();
    assert_eq!(stats.queueing_times_received, echoed.len() as u64);
    assert!(stats.handed.forward_queueing > 200, "{stats:?}");
    // The client's datagrams crossed no AQT-enabled router in this test.
    assert_eq!(stats.handed.backward_queueing, 0);
    assert!(
        run.client
            .conn
            .extension_stats()
            .datagrams_with_queueing_time
            > 200
    );
}

#[test]
fn fallback_estimate_finds_the_injected_delay() {
    let net = Network {
        forward_extra: burst,
        forward_rate: Some(20_000_000),
        ..Network::plain()
    };
    let run = transfer(Side::ALL, Side::ALL, net, 3_000_000);
    let server_log = run.server.log.events();
    let arrived = arrivals(&run.client);

    // Send times of the server's 1-RTT packets.
    let sent: BTreeMap<u64, u64> = events(&server_log, "quic:packet_sent")
        .filter(|e| e["data"]["header"]["packet_type"] == "1RTT")
        .map(|e| {
            (
                e["data"]["header"]["packet_number"].as_u64().expect("pn"),
                event_time(e, run.server.qlog_start),
            )
        })
        .collect();

    // RoVegas's fallback estimator, fed as the seam feeds the controller: one
    // ACK event per ACK_RECEIVE_TIMESTAMPS frame, with the packets it reports
    // and the ACK delay it carries.
    let mut estimator = QueueingEstimator::new(EstimatorConfig::default());
    let mut forward = Vec::new();
    let (mut checked, mut in_burst, mut backward_checked) = (0, 0, 0);
    for ack in events(&server_log, "quic:packet_received") {
        let ack_arrival = event_time(ack, run.server.qlog_start);
        let Some(frames) = ack["extension_frames"].as_array() else {
            continue;
        };
        for frame in frames
            .iter()
            .filter(|f| f["frame_type"] == "ack_receive_timestamps")
        {
            let mut times: Vec<(u64, u64)> = frame["receive_timestamps_us"]
                .as_array()
                .expect("timestamps")
                .iter()
                .map(|p| (p[0].as_u64().expect("pn"), p[1].as_u64().expect("time")))
                .collect();
            times.sort();
            let now = run.start + Duration::from_micros(ack_arrival);
            let acked: Vec<AckedPacket> = times
                .iter()
                .filter_map(|&(pn, receive_us)| {
                    let sent_us = *sent.get(&pn)?;
                    let mut p = AckedPacket::new(
                        pn,
                        MAX_DATAGRAM,
                        run.start + Duration::from_micros(sent_us),
                        now,
                    );
                    p.receive_time = Some(Duration::from_micros(receive_us));
                    Some(p)
                })
                .collect();
            let Some(largest) = acked.last() else {
                continue;
            };
            // quiche's default ack_delay_exponent, 3.
            let ack_delay_raw = frame["ack_delay_raw"].as_u64().expect("ack delay");
            let event = AckEvent {
                now,
                acked: &acked,
                summary: AckSummary::of(&acked, 0),
                ack_delay: Duration::from_micros(ack_delay_raw << 3),
                rtt: RttSnapshot::uniform(largest.rtt),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            };
            let backward = estimator.on_ack(&event, &mut forward);
            // The ACKs cross no queue: the backward estimate is about zero.
            if let Some(b) = backward {
                assert!(b <= Duration::from_micros(700), "backward {b:?}");
                backward_checked += 1;
            }
            for (packet, estimate) in acked.iter().zip(&forward) {
                let pn = packet.pkt_num;
                let truth = run.forward_queueing_by_arrival[&arrived[&pn]];
                let estimate = estimate.expect("no reason to reject");
                let error = estimate.as_micros() as i64 - truth.as_micros() as i64;
                // Within the transmission time of one full datagram (0.54 ms
                // at 20 Mbit/s), which the one-way delay also contains.
                assert!(
                    error.abs() <= 700,
                    "packet {pn}: estimate {estimate:?}, truth {truth:?}"
                );
                checked += 1;
                if truth >= Duration::from_millis(39) {
                    in_burst += 1;
                }
            }
        }
    }
    assert_eq!(estimator.rejected_samples(), 0);
    assert!(
        backward_checked > 100,
        "{backward_checked} backward estimates"
    );
    assert!(
        checked > 1000 && in_burst > 10,
        "{checked} checked, {in_burst} in the burst"
    );
}

#[test]
fn every_combination_of_support_completes_and_shows_in_qlog() {
    let sides = [
        ("all", Side::ALL),
        ("none", Side::NONE),
        ("stock", Side::STOCK),
        (
            "timestamps only",
            Side {
                queueing_time_frame: false,
                ..Side::ALL
            },
        ),
        (
            "queueing only",
            Side {
                receive_timestamps: false,
                ..Side::ALL
            },
        ),
    ];
    for (client_name, client) in sides {
        for (server_name, server) in sides {
            let net = Network {
                aqt: true,
                ..Network::plain()
            };
            let run = transfer(client, server, net, 200_000);
            let label = format!("client {client_name}, server {server_name}");
            let server_stats = run.server.conn.extension_stats();
            let client_stats = run.client.conn.extension_stats();

            // The server (data sender) gets timestamps iff it asked and the
            // client honours requests (it is not stock).
            let timestamps_to_server = server.receive_timestamps && !client.stock;
            assert_eq!(
                server_stats.receive_timestamps_received > 0,
                timestamps_to_server,
                "{label}: {server_stats:?}"
            );
            assert_eq!(
                client_stats.sending_receive_timestamps, timestamps_to_server,
                "{label}"
            );
            let echoes_to_server = server.queueing_time_frame && !client.stock;
            assert_eq!(
                server_stats.queueing_times_received > 0,
                echoes_to_server,
                "{label}: {server_stats:?}"
            );
            // The client's request packets are acknowledged the same way.
            let timestamps_to_client = client.receive_timestamps && !server.stock;
            assert_eq!(
                client_stats.ack_receive_timestamps_frames_received > 0,
                timestamps_to_client,
                "{label}: {client_stats:?}"
            );

            // qlog: the server's view of both parameter sets, and extension
            // frames only when negotiated.
            let log = run.server.log.events();
            let params: Vec<&Value> = events(&log, "quic:parameters_set").collect();
            let local = params
                .iter()
                .find(|e| e["data"]["initiator"] == "local")
                .expect("local parameters");
            let remote = params
                .iter()
                .find(|e| e["data"]["initiator"] == "remote")
                .expect("remote parameters");
            assert_eq!(
                local["extensions"]
                    .get("max_receive_timestamps_per_ack")
                    .is_some(),
                server.receive_timestamps,
                "{label}"
            );
            assert_eq!(
                remote["extensions"]
                    .get("max_queueing_times_per_frame")
                    .is_some(),
                client.queueing_time_frame,
                "{label}"
            );
            let unknown_ids: Vec<u64> = remote["data"]["unknown_parameters"]
                .as_array()
                .map(|v| v.iter().filter_map(|p| p["id"].as_u64()).collect())
                .unwrap_or_default();
            assert_eq!(
                unknown_ids.contains(
                    &quic_ext::codepoints::TRANSPORT_PARAMETER_MAX_RECEIVE_TIMESTAMPS_PER_ACK
                ),
                client.receive_timestamps,
                "{label}"
            );
            let rx_ext_frames = events(&log, "quic:packet_received")
                .filter(|e| e.get("extension_frames").is_some())
                .count();
            assert_eq!(
                rx_ext_frames > 0,
                timestamps_to_server || echoes_to_server,
                "{label}"
            );
        }
    }
}

/// The delay-based controllers say in qlog which source their delay signal
/// came from: the fallback is visible.
#[test]
fn controllers_report_their_delay_source_in_qlog() {
    let cases = [
        // (server side, AQT routers on the path, expected delay sources)
        (Side::ALL, true, ["aqt", "receive_timestamps"]),
        (
            Side {
                queueing_time_frame: false,
                ..Side::ALL
            },
            false,
            ["receive_timestamps", "receive_timestamps"],
        ),
        (Side::NONE, false, ["none", "ack_arrival"]),
    ];
    for (server, aqt, [rovegas_source, venodb_source]) in cases {
        for (cc, expected) in [("rovegas", rovegas_source), ("venodb", venodb_source)] {
            let net = Network {
                aqt,
                forward_extra: burst,
                forward_rate: Some(20_000_000),
                ..Network::plain()
            };
            let server = Side { cc, ..server };
            let run = transfer(Side::ALL, server, net, 1_000_000);
            let log = run.server.log.events();
            let sources: Vec<&str> = events(&log, "quic:recovery_metrics_updated")
                .filter_map(|e| e["data"]["delay_source"].as_str())
                .collect();
            assert!(!sources.is_empty(), "{cc}: no delay_source in qlog");
            assert_eq!(
                sources.last().copied(),
                Some(expected),
                "{cc} with {server:?}, aqt {aqt}: {sources:?}"
            );
        }
    }
}

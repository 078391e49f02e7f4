//! A receiver that lies in every field of our QUIC extensions, against
//! every congestion controller: the apps' server session (quiche with our
//! patches and controllers) on one end, a bare quiche client on the other,
//! in memory on virtual time.
//!
//! The client lies about
//! - the queueing times it echoes in QUEUEING_TIME frames (zero, one
//!   microsecond, hours, 101 days, 2^62 - 1 µs, alternating), and
//! - its receive times in ACK receive timestamps, and the ACK delays it
//!   reports: its clock jumps back and forth by up to 800 ms at every
//!   datagram.
//!
//! Invariants, checked after every step: no panic; the server's congestion
//! window stays within [2 packets, initial window + bytes the client has
//! received]; the download arrives intact.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiche_vegas::cc_select::CcSelection;
use quiche_vegas::endpoint::Endpoint;
use quiche_vegas::settings::TransportSettings;
use quiche_vegas::tls::Identity;
use quiche_vegas::transfer::{SyntheticSource, ALPN_H3, ALPN_HQ};

const BODY: u64 = 300_000;
const MAX_DATAGRAM: usize = 1350;
const INITIAL_WINDOW: usize = 10 * MAX_DATAGRAM;
const MINIMUM_WINDOW: usize = 2 * MAX_DATAGRAM;
const ONE_WAY: Duration = Duration::from_millis(30);
/// Forward bottleneck, so that queues (and queueing times) exist.
const RATE_BPS: u64 = 20_000_000;

/// The queueing times the client claims, in turn.
fn lying_aqt(i: u64) -> Duration {
    const LIES: [u64; 7] = [
        0,
        1,
        3 * 3600 * 1_000_000,
        101 * 86_400 * 1_000_000,
        (1 << 62) - 1,
        250_000,
        17,
    ];
    Duration::from_micros(LIES[(i % LIES.len() as u64) as usize])
}

/// The client's clock: true time plus a jump of up to ±800 ms that changes
/// at every datagram.
fn lying_clock_offset(i: u64) -> i64 {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed;
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 32;
    (x % 1_600_001) as i64 - 800_000
}

fn client_config() -> quiche::Config {
    let mut c = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
    c.verify_peer(false);
    c.set_application_protos(&[b"hq-interop"]).unwrap();
    c.set_max_idle_timeout(30_000);
    c.set_max_recv_udp_payload_size(MAX_DATAGRAM);
    c.set_max_send_udp_payload_size(MAX_DATAGRAM);
    c.set_initial_max_data(10_000_000);
    c.set_initial_max_stream_data_bidi_local(10_000_000);
    c.set_initial_max_streams_bidi(10);
    // Ask for the most timestamps and the coarsest exponent the draft
    // allows, accept queueing-time frames: every extension on.
    c.set_max_receive_timestamps_per_ack(255);
    c.set_receive_timestamps_exponent(20).unwrap();
    c.enable_queueing_time_frame(true);
    c
}

struct Flight {
    arrival: Duration,
    to_client: bool,
    bytes: Vec<u8>,
}

/// Downloads BODY bytes from a server running `cc` to the lying client;
/// returns a description of the first broken invariant.
fn download_from_liar(cc: &str, identity: &Identity) -> Result<(), String> {
    let start = Instant::now() + Duration::from_secs(10);
    let true_time = |t: Duration| quiche::virtual_env::set_virtual_time(Some((start + t, t)));
    let lying_time = |t: Duration, i: u64| {
        let off = lying_clock_offset(i);
        let base = start + t;
        let now = if off >= 0 {
            base + Duration::from_micros(off as u64)
        } else {
            base - Duration::from_micros(off.unsigned_abs())
        };
        quiche::virtual_env::set_virtual_time(Some((now, t)));
    };
    quiche::virtual_env::set_random_seed(Some(3));
    let mut t = Duration::ZERO;
    true_time(t);

    let settings = TransportSettings {
        cc: CcSelection::new(cc),
        ..Default::default()
    };
    let (mut server_config, _) = settings
        .build_server_config(&[ALPN_H3, ALPN_HQ], identity)
        .map_err(|e| e.to_string())?;
    let mut client_config = client_config();
    let client_addr: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let server_addr: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let source = SyntheticSource::new(BODY, 11);

    let mut lies = 0u64;
    lying_time(t, lies);
    let mut client = quiche::connect(
        Some("localhost"),
        &quiche::ConnectionId::from_ref(&[0xc1; 16]),
        client_addr,
        server_addr,
        &mut client_config,
    )
    .map_err(|e| e.to_string())?;
    true_time(t);
    let mut server: Option<Endpoint<quiche_vegas::transfer::ServerSession>> = None;
    let mut flights: VecDeque<Flight> = VecDeque::new();
    let mut bottleneck_free = Duration::ZERO;
    let mut client_deadline: Option<Duration> = None;
    let mut received: Vec<u8> = Vec::with_capacity(BODY as usize);
    let mut request_sent = false;
    let mut fin = false;
    let mut buf = vec![0u8; 65_535];

    loop {
        // Deliver what has arrived.
        while let Some(pos) = flights.iter().position(|f| f.arrival <= t) {
            let Some(mut f) = flights.remove(pos) else {
                break;
            };
            if f.to_client {
                lies += 1;
                lying_time(t, lies);
                client.set_next_datagram_queueing_time(lying_aqt(lies));
                client
                    .recv(
                        &mut f.bytes,
                        quiche::RecvInfo {
                            from: server_addr,
                            to: client_addr,
                        },
                    )
                    .ok();
                true_time(t);
            } else {
                let ep = match server.as_mut() {
                    Some(ep) => ep,
                    None => {
                        let conn = quiche::accept(
                            &quiche::ConnectionId::from_ref(&[0x5e; 16]),
                            None,
                            server_addr,
                            client_addr,
                            &mut server_config,
                        )
                        .map_err(|e| e.to_string())?;
                        let session = quiche_vegas::transfer::ServerSession::new(Arc::new(source));
                        server.insert(Endpoint::new(conn, session, Duration::ZERO))
                    }
                };
                ep.on_datagram(&mut f.bytes, client_addr, server_addr);
            }
        }

        // The client: its timers and its one request, on its lying clock.
        lying_time(t, lies);
        if client_deadline.is_some_and(|d| d <= t) {
            client.on_timeout();
        }
        if client.is_established() && !request_sent {
            client
                .stream_send(0, b"GET /file\r\n", true)
                .map_err(|e| e.to_string())?;
            request_sent = true;
        }
        while let Ok((n, f)) = client.stream_recv(0, &mut buf) {
            received.extend_from_slice(&buf[..n]);
            fin |= f;
        }
        while let Ok((n, _)) = client.send(&mut buf) {
            flights.push_back(Flight {
                arrival: t + ONE_WAY,
                to_client: false,
                bytes: buf[..n].to_vec(),
            });
        }
        client_deadline = client.timeout().map(|d| t + d);
        true_time(t);

        // The server, on true time.
        if let Some(ep) = server.as_mut() {
            ep.on_timer(start + t);
            ep.flush(start + t, &mut |data, _| {
                let leave = t.max(bottleneck_free);
                bottleneck_free =
                    leave + Duration::from_nanos(data.len() as u64 * 8 * 1_000_000_000 / RATE_BPS);
                flights.push_back(Flight {
                    arrival: bottleneck_free + ONE_WAY,
                    to_client: true,
                    bytes: data.to_vec(),
                });
                Ok(())
            });
            if let Some(path) = ep.conn.path_stats().next() {
                let client_received = client
                    .path_stats()
                    .next()
                    .map_or(0, |p| p.recv_bytes as usize);
                if path.cwnd < MINIMUM_WINDOW || path.cwnd > INITIAL_WINDOW + client_received {
                    return Err(format!(
                        "cwnd {} outside [{MINIMUM_WINDOW}, {INITIAL_WINDOW} + {client_received}] \
                         at {t:?}",
                        path.cwnd
                    ));
                }
            }
            if ep.conn.is_closed() {
                return Err(format!(
                    "server closed: {:?} / {:?}",
                    ep.conn.local_error(),
                    ep.conn.peer_error()
                ));
            }
        }
        if fin {
            // The lies reached the server, and its controller.
            let stats = server
                .as_ref()
                .map(|s| s.conn.extension_stats())
                .ok_or("no server")?;
            if stats.queueing_times_received == 0 || stats.receive_timestamps_received == 0 {
                return Err(format!("the lies never arrived: {stats:?}"));
            }
            // quiche's own controllers take no extension input.
            let ours = vegas_cc::registry::find(cc).is_some();
            let handed = &stats.handed;
            if ours
                && (handed.receive_times == 0
                    || handed.forward_queueing + handed.rejected_forward_queueing == 0)
            {
                return Err(format!("the lies never reached the controller: {stats:?}"));
            }
            break;
        }
        if client.is_closed() {
            return Err(format!(
                "client closed: {:?} / {:?}",
                client.local_error(),
                client.peer_error()
            ));
        }
        let next = flights
            .iter()
            .map(|f| f.arrival)
            .chain(client_deadline)
            .chain(
                server
                    .as_ref()
                    .and_then(|s| s.next_wakeup())
                    .map(|w| w - start),
            )
            .min()
            .ok_or("nothing left to happen")?;
        t = next.max(t);
        if t > Duration::from_secs(300) {
            return Err(format!("no end after {t:?}; {} bytes", received.len()));
        }
        true_time(t);
    }
    quiche::virtual_env::set_virtual_time(None);
    quiche::virtual_env::set_random_seed(None);
    let mut expected = Vec::new();
    std::io::Read::read_to_end(&mut source.reader(), &mut expected).unwrap();
    if received != expected {
        return Err(format!(
            "body differs ({} bytes, expected {})",
            received.len(),
            expected.len()
        ));
    }
    Ok(())
}

#[test]
fn a_lying_receiver_breaks_no_controller() {
    let identity = Identity::self_signed().unwrap();
    let mut names = vec!["reno", "cubic", "bbr2"];
    names.extend(vegas_cc::registry::ALGORITHMS.iter().map(|a| a.name));
    let failures: Vec<String> = names
        .iter()
        .filter_map(|cc| {
            let outcome = std::panic::catch_unwind(|| download_from_liar(cc, &identity));
            match outcome {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(format!("{cc}: {e}")),
                Err(_) => Some(format!("{cc}: panicked")),
            }
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

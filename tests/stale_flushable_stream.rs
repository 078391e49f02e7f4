//! A response must not wait forever behind a stream that has nothing left
//! to send (`scripts/stress concurrent`: a few of 1,000 downloads got 0
//! bytes and timed out although the server had the request).
//!
//! What a stalled server connection showed: the QPACK decoder stream
//! (urgency 0) was in quiche's queue of streams with data to send although
//! it had none, its data queued again by a probe timeout and acknowledged
//! before it was re-sent; at the head of that queue it made every packet
//! end before any STREAM frame, and the response's stream (urgency 127)
//! was never sent. Replayed here: the server's first 1-RTT packets (HTTP/3
//! control and QPACK streams) are late, each probe timeout is answered by
//! one datagram (a paced sender holds the next), then the late originals
//! are acknowledged. The server had nothing in flight, the client nothing to
//! acknowledge: both waited for the idle timeout.
//!
//! The apps' server session (quiche with our patches) and a bare quiche
//! HTTP/3 client, in memory on virtual time. The reference is the body the
//! content source generates: it must arrive whole.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::h3_client::h3_client_config;
use quiche::h3::{self, NameValue};
use quiche_vegas::endpoint::Endpoint;
use quiche_vegas::settings::TransportSettings;
use quiche_vegas::tls::Identity;
use quiche_vegas::transfer::{ServerSession, SyntheticSource, ALPN_H3};
use sha2::{Digest, Sha256};

const BODY: u64 = 200_000;
/// Virtual time the download may take; it takes well under a second.
const GIVE_UP: Duration = Duration::from_secs(60);

struct Pair {
    start: Instant,
    t: Duration,
    client: quiche::Connection,
    server: Endpoint<ServerSession>,
    client_addr: SocketAddr,
    server_addr: SocketAddr,
}

impl Pair {
    fn set_time(&mut self, t: Duration) {
        self.t = t;
        quiche::virtual_env::set_virtual_time(Some((self.start + t, t)));
    }

    fn now(&self) -> Instant {
        self.start + self.t
    }

    /// Everything the client has to send, delivered to the server; whether
    /// there was any.
    fn client_to_server(&mut self) -> bool {
        let mut buf = [0; 1500];
        let mut any = false;
        while let Ok((n, _)) = self.client.send(&mut buf) {
            self.server
                .on_datagram(&mut buf[..n], self.client_addr, self.server_addr);
            any = true;
        }
        any
    }

    /// Up to `max` datagrams the server has to send, after its application
    /// has acted.
    fn server_out(&mut self, max: usize) -> Vec<Vec<u8>> {
        self.server.progress();
        let mut buf = [0; 1500];
        let mut out = Vec::new();
        while out.len() < max {
            match self.server.conn.send(&mut buf) {
                Ok((n, _)) => out.push(buf[..n].to_vec()),
                Err(_) => break,
            }
        }
        out
    }

    fn deliver_to_client(&mut self, datagrams: Vec<Vec<u8>>) {
        for mut d in datagrams {
            let info = quiche::RecvInfo {
                from: self.server_addr,
                to: self.client_addr,
            };
            self.client.recv(&mut d, info).ok();
        }
    }

    /// Moves time to the next timer of either end and runs it.
    fn next_timer(&mut self) {
        let next = [
            self.client.timeout_instant(),
            self.server.conn.timeout_instant(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(at) = next else {
            return;
        };
        let t = at.saturating_duration_since(self.start).max(self.t);
        self.set_time(t);
        let now = self.now();
        if self.client.timeout_instant().is_some_and(|a| a <= now) {
            self.client.on_timeout();
        }
        self.server.on_timer(now);
    }
}

/// The body's SHA-256 as the client received it (`None`: not all of it in
/// `GIVE_UP` of virtual time), after the server's first 1-RTT flight was
/// late by `probes` probe timeouts, each answered by one datagram.
fn download_after_late_first_flight(probes: usize) -> Option<String> {
    let identity = Identity::self_signed().unwrap();
    let (mut server_config, _) = TransportSettings::default()
        .build_server_config(&[ALPN_H3], &identity)
        .unwrap();
    let source = SyntheticSource::new(BODY, 7);
    let start = Instant::now() + Duration::from_secs(10);
    quiche::virtual_env::set_random_seed(Some(5));
    quiche::virtual_env::set_virtual_time(Some((start, Duration::ZERO)));
    let client_addr: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let server_addr: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let client = quiche::connect(
        Some("localhost"),
        &quiche::ConnectionId::from_ref(&[0xc1; 16]),
        client_addr,
        server_addr,
        &mut h3_client_config(30_000),
    )
    .unwrap();
    let conn = quiche::accept(
        &quiche::ConnectionId::from_ref(&[0x5e; 20]),
        None,
        server_addr,
        client_addr,
        &mut server_config,
    )
    .unwrap();
    let server = Endpoint::new(conn, ServerSession::new(Arc::new(source)), Duration::ZERO);
    let mut p = Pair {
        start,
        t: Duration::ZERO,
        client,
        server,
        client_addr,
        server_addr,
    };

    // The handshake, each flight arriving 10 ms after it left, until the
    // server has the client's Finished.
    let step = Duration::from_millis(10);
    while !p.server.conn.is_established() {
        assert!(p.t < Duration::from_secs(5), "no handshake");
        p.set_time(p.t + step);
        p.client_to_server();
        if p.server.conn.is_established() {
            break;
        }
        p.set_time(p.t + step);
        let out = p.server_out(usize::MAX);
        p.deliver_to_client(out);
    }
    // The server's first 1-RTT flight (HANDSHAKE_DONE, the HTTP/3 control
    // and QPACK streams, one STREAM frame a packet) is late...
    let mut late = p.server_out(usize::MAX);
    assert!(!late.is_empty());
    // ...long enough for probe timeouts; after each, a paced sender sends
    // one datagram and holds the next.
    for _ in 0..probes {
        let Some(at) = p.server.conn.timeout_instant() else {
            break;
        };
        p.set_time(at.saturating_duration_since(start));
        let now = p.now();
        p.server.on_timer(now);
        late.extend(p.server_out(1));
    }
    // Then it all arrives, and the client's acknowledgements go back.
    p.set_time(p.t + step);
    p.deliver_to_client(late);
    p.set_time(p.t + step);
    p.client_to_server();
    assert!(p.client.is_established());

    // Now the request.
    let mut h3_client =
        h3::Connection::with_transport(&mut p.client, &h3::Config::new().unwrap()).unwrap();
    let headers = [
        h3::Header::new(b":method", b"GET"),
        h3::Header::new(b":scheme", b"https"),
        h3::Header::new(b":authority", b"localhost"),
        h3::Header::new(b":path", b"/file"),
    ];
    h3_client
        .send_request(&mut p.client, &headers, true)
        .unwrap();
    let mut body = Sha256::new();
    let mut received = 0u64;
    let mut finished = false;
    let mut buf = vec![0; 65_536];
    while !finished && p.t < GIVE_UP && !p.client.is_closed() {
        p.set_time(p.t + Duration::from_millis(1));
        let moved_up = p.client_to_server();
        let out = p.server_out(usize::MAX);
        let moved_down = !out.is_empty();
        p.deliver_to_client(out);
        while let Ok((id, event)) = h3_client.poll(&mut p.client) {
            match event {
                h3::Event::Headers { list, .. } => {
                    assert!(list
                        .iter()
                        .any(|h| h.name() == b":status" && h.value() == b"200"));
                }
                h3::Event::Data => {
                    while let Ok(n) = h3_client.recv_body(&mut p.client, id, &mut buf) {
                        body.update(&buf[..n]);
                        received += n as u64;
                    }
                }
                h3::Event::Finished => finished = true,
                _ => {}
            }
        }
        if !moved_up && !moved_down {
            p.next_timer();
        }
    }
    quiche::virtual_env::set_virtual_time(None);
    quiche::virtual_env::set_random_seed(None);
    (finished && received == BODY).then(|| hex::encode(body.finalize()))
}

#[test]
fn a_response_is_sent_after_late_control_streams_were_acknowledged() {
    let expected = SyntheticSource::new(BODY, 7).sha256_hex();
    for probes in 0..=3 {
        assert_eq!(
            download_after_late_first_flight(probes).as_deref(),
            Some(expected.as_str()),
            "first flight late by {probes} probe timeouts: the response never came"
        );
    }
}

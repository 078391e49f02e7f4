//! The sans-IO layers without sockets: a client and a server `Endpoint` on a
//! simulated path (fixed delay, bottleneck rate) in virtual time, the way the
//! simulator drives them. Checks that responses arrive intact and that no
//! datagram leaves before its `SendInfo.at` while pacing holds some back.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiche_vegas::cc_select::CcSelection;
use quiche_vegas::endpoint::Endpoint;
use quiche_vegas::settings::TransportSettings;
use quiche_vegas::tls;
use quiche_vegas::transfer::{
    ClientSession, HttpVersion, ServerSession, SyntheticSource, ALPN_H3, ALPN_HQ,
};

const ONE_WAY_DELAY: Duration = Duration::from_millis(25);
const RATE_BITS_PER_SEC: f64 = 20e6;
const BODY_SIZE: u64 = 1_000_000;

/// One direction of the path: datagrams leave the bottleneck one after the
/// other at its rate and arrive a fixed delay later.
struct Link {
    free_at: Instant,
    queue: VecDeque<(Instant, Vec<u8>)>,
}

impl Link {
    fn new(now: Instant) -> Self {
        Link {
            free_at: now,
            queue: VecDeque::new(),
        }
    }

    fn send(&mut self, now: Instant, data: &[u8]) {
        let start = self.free_at.max(now);
        self.free_at = start + Duration::from_secs_f64(data.len() as f64 * 8.0 / RATE_BITS_PER_SEC);
        self.queue
            .push_back((self.free_at + ONE_WAY_DELAY, data.to_vec()));
    }

    fn next_arrival(&self) -> Option<Instant> {
        self.queue.front().map(|(t, _)| *t)
    }

    fn pop_due(&mut self, now: Instant) -> Option<Vec<u8>> {
        if self.next_arrival()? <= now {
            self.queue.pop_front().map(|(_, d)| d)
        } else {
            None
        }
    }
}

struct Outcome {
    sha256: Option<String>,
    /// Server flushes after which pacing held a datagram or deferred building
    /// one.
    server_holds: usize,
    /// Virtual time the download took.
    elapsed: Duration,
}

fn set_time(now: Instant, t0: Instant) {
    quiche::virtual_env::set_virtual_time(Some((now, now - t0)));
}

fn simulate(cc: &str, params: &[&str], version: HttpVersion) -> Outcome {
    let t0 = Instant::now();
    let mut now = t0;
    set_time(now, t0);
    quiche::virtual_env::set_random_seed(Some(7));

    let settings = TransportSettings {
        cc: CcSelection {
            name: cc.to_string(),
            params: params.iter().map(|p| p.to_string()).collect(),
        },
        ..Default::default()
    };
    let identity = tls::Identity::self_signed().unwrap();
    let (mut server_config, _) = settings
        .build_server_config(&[ALPN_H3, ALPN_HQ], &identity)
        .unwrap();
    let (mut client_config, _) = settings.build_config(&[version.alpn()]).unwrap();
    client_config.verify_peer(false);

    let client_addr: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let server_addr: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let source = SyntheticSource::new(BODY_SIZE, 42);

    let conn = quiche::connect(
        Some("localhost"),
        &quiche::ConnectionId::from_ref(&[1; 16]),
        client_addr,
        server_addr,
        &mut client_config,
    )
    .unwrap();
    let session = ClientSession::new(version, "localhost", &["/x".to_string()], None).unwrap();
    let mut client = Endpoint::new(conn, session, Duration::ZERO);
    let mut server: Option<Endpoint<ServerSession>> = None;
    let mut up = Link::new(now);
    let mut down = Link::new(now);
    let mut server_holds = 0;

    loop {
        while let Some(mut d) = up.pop_due(now) {
            let ep = server.get_or_insert_with(|| {
                let conn = quiche::accept(
                    &quiche::ConnectionId::from_ref(&[2; 16]),
                    None,
                    server_addr,
                    client_addr,
                    &mut server_config,
                )
                .unwrap();
                Endpoint::new(conn, ServerSession::new(Arc::new(source)), Duration::ZERO)
            });
            ep.on_datagram(&mut d, client_addr, server_addr);
        }
        while let Some(mut d) = down.pop_due(now) {
            client.on_datagram(&mut d, server_addr, client_addr);
        }
        client.on_timer(now);
        client.flush(now, &mut |data, info| {
            assert!(info.at <= now, "client datagram sent before its time");
            up.send(now, data);
            Ok(())
        });
        if let Some(ep) = server.as_mut() {
            ep.on_timer(now);
            ep.flush(now, &mut |data, info| {
                assert!(info.at <= now, "server datagram sent before its time");
                down.send(now, data);
                Ok(())
            });
            if ep.outbox.next_release().is_some() {
                server_holds += 1;
            }
        }
        if client.app.is_finished() || client.conn.is_closed() {
            break;
        }
        let next = [
            client.next_wakeup(),
            server.as_ref().and_then(|s| s.next_wakeup()),
            up.next_arrival(),
            down.next_arrival(),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("nothing left to happen");
        now = next.max(now);
        assert!(now - t0 < Duration::from_secs(120), "{cc}: no end in sight");
        set_time(now, t0);
    }
    let summary = client.app.summaries().remove(0);
    assert!(summary.is_success(), "{cc}: {summary:?}");
    quiche::virtual_env::set_virtual_time(None);
    quiche::virtual_env::set_random_seed(None);
    Outcome {
        sha256: summary.sha256().map(str::to_string),
        server_holds,
        elapsed: now - t0,
    }
}

fn check(cc: &str, params: &[&str], version: HttpVersion, expect_pacing: bool) {
    let outcome = simulate(cc, params, version);
    let expected = SyntheticSource::new(BODY_SIZE, 42).sha256_hex();
    assert_eq!(outcome.sha256.as_deref(), Some(expected.as_str()), "{cc}");
    // 1 MB over 20 Mbit/s takes 0.4 s plus a few round trips.
    assert!(
        outcome.elapsed > Duration::from_millis(400) && outcome.elapsed < Duration::from_secs(20),
        "{cc}: {:?}",
        outcome.elapsed
    );
    if expect_pacing {
        assert!(
            outcome.server_holds > 0,
            "{cc}: pacing never held a datagram"
        );
    }
}

#[test]
fn cubic_over_simulated_path() {
    check("cubic", &[], HttpVersion::Http3, false);
}

#[test]
fn bbr2_paces_over_simulated_path() {
    check("bbr2", &[], HttpVersion::Http3, true);
}

#[test]
fn hq_interop_over_simulated_path() {
    check("reno", &[], HttpVersion::Http09, false);
}

#[test]
fn our_algorithms_over_simulated_path() {
    for info in vegas_cc::registry::ALGORITHMS {
        check(info.name, &[], HttpVersion::Http3, false);
    }
    // Vegas in its default quic profile paces slow start: the outbox must
    // spread the ACK-clocked bursts of slow start. (In the paper profile
    // only spike suppression paces, at twice cwnd / RTT, which ACK-clocked
    // full-size packets never outrun here, so nothing is held on this path.)
    check("vegas", &["profile=quic"], HttpVersion::Http3, true);
}

#[test]
fn virtual_runs_repeat_exactly() {
    let a = simulate("cubic", &[], HttpVersion::Http3);
    let b = simulate("cubic", &[], HttpVersion::Http3);
    assert_eq!(a.elapsed, b.elapsed);
    assert_eq!(a.server_holds, b.server_holds);
}

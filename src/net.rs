//! The real-socket event loops: one UDP socket, real time, and the
//! [`Endpoint`]s it drives.
//!
//! Each loop waits for a datagram until the earliest wake-up any endpoint
//! asked for (quiche's timer, or the release time of a paced datagram held
//! by its [`crate::pacing::Outbox`]), handles what arrived, fires due timers,
//! then flushes every endpoint, which sends what is due and holds the rest.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use socket2::{Domain, Protocol, Socket, Type};

use crate::endpoint::Endpoint;
use crate::pacing::REAL_TIME_PACING_GRANULARITY;
use crate::qlog_output::{self, Role};
use crate::settings::MAX_RECV_DATAGRAM_SIZE;
use crate::transfer::{ClientSession, ContentSource, ServerSession};

/// Socket buffers asked for (the kernel may cap them at net.core.*mem_max).
const SOCKET_BUFFER_BYTES: usize = 8 << 20;
/// Most datagrams read in one go before timers and sending get their turn.
const MAX_READ_BATCH: usize = 256;
/// Smallest UDP payload carrying a client's first Initial packet (RFC 9000
/// section 14.1); smaller ones are not worth a connection.
const MIN_INITIAL_DATAGRAM: usize = 1200;
/// Length of the connection IDs the server picks.
const SERVER_CID_LEN: usize = quiche::MAX_CONN_ID_LEN;

/// Binds a UDP socket on `addr`, with large buffers.
pub fn bind_udp(addr: SocketAddr) -> anyhow::Result<UdpSocket> {
    let describe = |e: io::Error| match e.kind() {
        io::ErrorKind::AddrInUse => anyhow!("cannot listen on {addr}: address in use"),
        io::ErrorKind::AddrNotAvailable => {
            anyhow!("cannot listen on {addr}: address not available on this host")
        }
        io::ErrorKind::PermissionDenied => anyhow!("cannot listen on {addr}: permission denied"),
        _ => anyhow!("cannot listen on {addr}: {e}"),
    };
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(describe)?;
    // Best effort: a smaller buffer only costs drops under load.
    socket.set_recv_buffer_size(SOCKET_BUFFER_BYTES).ok();
    socket.set_send_buffer_size(SOCKET_BUFFER_BYTES).ok();
    socket.bind(&addr.into()).map_err(describe)?;
    Ok(socket.into())
}

/// A UDP socket that waits for datagrams with a deadline.
struct Wire {
    socket: UdpSocket,
    local: SocketAddr,
    nonblocking: bool,
}

impl Wire {
    fn new(socket: UdpSocket) -> anyhow::Result<Self> {
        let local = socket
            .local_addr()
            .context("cannot get the socket's local address")?;
        socket
            .set_nonblocking(true)
            .context("cannot configure the socket")?;
        Ok(Wire {
            socket,
            local,
            nonblocking: true,
        })
    }

    fn set_nonblocking(&mut self, nonblocking: bool) -> io::Result<()> {
        if self.nonblocking != nonblocking {
            self.socket.set_nonblocking(nonblocking)?;
            self.nonblocking = nonblocking;
        }
        Ok(())
    }

    /// The next datagram, waiting for it until `deadline` (forever if
    /// `None`); `None` when the deadline passed first.
    fn recv_until(
        &mut self,
        buf: &mut [u8],
        deadline: Option<Instant>,
    ) -> io::Result<Option<(usize, SocketAddr)>> {
        let timeout = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                // Below a microsecond a blocking wait is not worth it.
                Some(t) if t >= Duration::from_micros(1) => Some(t),
                _ => return self.try_recv(buf),
            },
            None => None,
        };
        self.set_nonblocking(false)?;
        self.socket.set_read_timeout(timeout)?;
        self.recv(buf)
    }

    /// A datagram if one is waiting.
    fn try_recv(&mut self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        self.set_nonblocking(true)?;
        self.recv(buf)
    }

    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        match self.socket.recv_from(buf) {
            Ok(v) => Ok(Some(v)),
            Err(e) => match e.kind() {
                io::ErrorKind::WouldBlock
                | io::ErrorKind::TimedOut
                | io::ErrorKind::Interrupted
                // An ICMP error for an earlier datagram; nothing to read.
                | io::ErrorKind::ConnectionRefused
                | io::ErrorKind::ConnectionReset => Ok(None),
                _ => Err(e),
            },
        }
    }

    /// Reads up to a batch of datagrams, the first waiting until `deadline`,
    /// and hands each to `handle`.
    fn read_batch(
        &mut self,
        buf: &mut [u8],
        deadline: Option<Instant>,
        handle: &mut dyn FnMut(&mut [u8], SocketAddr, &UdpSocket),
    ) -> anyhow::Result<usize> {
        let mut next = self
            .recv_until(buf, deadline)
            .context("cannot receive from the UDP socket")?;
        let mut count = 0;
        while let Some((len, from)) = next {
            handle(&mut buf[..len], from, &self.socket);
            count += 1;
            if count >= MAX_READ_BATCH {
                break;
            }
            next = self
                .try_recv(buf)
                .context("cannot receive from the UDP socket")?;
        }
        Ok(count)
    }
}

fn random_bytes<const N: usize>() -> anyhow::Result<[u8; N]> {
    let mut bytes = [0; N];
    getrandom::fill(&mut bytes).map_err(|e| anyhow!("no randomness from the system: {e}"))?;
    Ok(bytes)
}

/// Everything the server loop needs besides its socket.
pub struct ServerSetup {
    pub config: quiche::Config,
    pub source: Arc<dyn ContentSource>,
    /// qlog directory (`QLOGDIR`), if logging.
    pub qlog_dir: Option<PathBuf>,
    /// The congestion controller, for the logs.
    pub cc_description: String,
    /// Print a line on stderr when a connection closes.
    pub report_connections: bool,
}

struct ServerConn {
    endpoint: Endpoint<ServerSession>,
    /// The connection ID the client first sent to, until the client uses ours.
    original_dcid: Vec<u8>,
    started: Instant,
}

/// Serves connections on `socket` until an I/O error on the socket.
pub fn run_server(socket: UdpSocket, mut setup: ServerSetup) -> anyhow::Result<()> {
    let mut wire = Wire::new(socket)?;
    let local = wire.local;
    let mut conns: HashMap<Vec<u8>, ServerConn> = HashMap::new();
    let mut aliases: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut buf = vec![0; MAX_RECV_DATAGRAM_SIZE];
    loop {
        let deadline = conns
            .values()
            .filter_map(|c| c.endpoint.next_wakeup())
            .min();
        wire.read_batch(&mut buf, deadline, &mut |data, from, socket| {
            server_datagram(
                &mut setup,
                &mut conns,
                &mut aliases,
                data,
                from,
                local,
                socket,
            )
        })?;
        let now = Instant::now();
        for c in conns.values_mut() {
            c.endpoint.on_timer(now);
            c.endpoint
                .flush(now, &mut |data, info| send(&wire.socket, data, info.to));
        }
        conns.retain(|_, c| {
            if !c.endpoint.is_done() {
                return true;
            }
            aliases.remove(&c.original_dcid);
            if setup.report_connections {
                eprintln!("quiche-server: {}", connection_report(c, now));
            }
            false
        });
    }
}

fn send(socket: &UdpSocket, data: &[u8], to: SocketAddr) -> io::Result<()> {
    socket.send_to(data, to).map(|_| ())
}

/// Routes one datagram to its connection, making a connection for a new
/// client's Initial packet.
fn server_datagram(
    setup: &mut ServerSetup,
    conns: &mut HashMap<Vec<u8>, ServerConn>,
    aliases: &mut HashMap<Vec<u8>, Vec<u8>>,
    data: &mut [u8],
    from: SocketAddr,
    local: SocketAddr,
    socket: &UdpSocket,
) {
    let len = data.len();
    let hdr = match quiche::Header::from_slice(data, SERVER_CID_LEN) {
        Ok(h) => h,
        Err(e) => {
            log::debug!("datagram from {from} without a QUIC header: {e}");
            return;
        }
    };
    let dcid = hdr.dcid.to_vec();
    let key = if conns.contains_key(&dcid) {
        dcid
    } else if let Some(key) = aliases.get(&dcid) {
        key.clone()
    } else {
        if hdr.ty != quiche::Type::Initial {
            log::debug!("{:?} packet from {from} for no connection", hdr.ty);
            return;
        }
        if !quiche::version_is_supported(hdr.version) {
            let mut out = [0; 256];
            match quiche::negotiate_version(&hdr.scid, &hdr.dcid, &mut out) {
                Ok(n) => {
                    send(socket, &out[..n], from).ok();
                }
                Err(e) => log::debug!("cannot negotiate version with {from}: {e}"),
            }
            return;
        }
        if len < MIN_INITIAL_DATAGRAM {
            log::debug!("Initial datagram of {len} bytes from {from} is too short");
            return;
        }
        let scid = match random_bytes::<SERVER_CID_LEN>() {
            Ok(v) => v,
            Err(e) => {
                log::error!("{e}");
                return;
            }
        };
        let scid_ref = quiche::ConnectionId::from_ref(&scid);
        let mut conn = match quiche::accept(&scid_ref, None, local, from, &mut setup.config) {
            Ok(c) => c,
            Err(e) => {
                log::warn!("cannot accept a connection from {from}: {e}");
                return;
            }
        };
        if let Some(dir) = &setup.qlog_dir {
            let detail = format!("cc={}", setup.cc_description);
            if let Err(e) =
                qlog_output::attach(&mut conn, dir, Role::Server, "quiche-server", &detail)
            {
                log::warn!("{e:#}");
            }
        }
        log::info!("{} new connection from {from}", conn.trace_id());
        let key = scid.to_vec();
        aliases.insert(dcid.clone(), key.clone());
        let session = ServerSession::new(Arc::clone(&setup.source));
        conns.insert(
            key.clone(),
            ServerConn {
                endpoint: Endpoint::new(conn, session, REAL_TIME_PACING_GRANULARITY),
                original_dcid: dcid,
                started: Instant::now(),
            },
        );
        key
    };
    if let Some(c) = conns.get_mut(&key) {
        c.endpoint.on_datagram(data, from, local);
    }
}

fn connection_report(c: &ServerConn, now: Instant) -> String {
    let conn = &c.endpoint.conn;
    let stats = conn.stats();
    let mut line = format!(
        "connection {} from {} closed after {:.3} s: {} requests, sent {} packets \
         ({} bytes), lost {}, retransmitted {}",
        hex::encode(conn.source_id().as_ref()),
        conn.path_stats()
            .next()
            .map_or_else(|| "?".to_string(), |p| p.peer_addr.to_string()),
        now.duration_since(c.started).as_secs_f64(),
        c.endpoint.app.requests(),
        stats.sent,
        stats.sent_bytes,
        stats.lost,
        stats.retrans,
    );
    if let Some(path) = conn.path_stats().next() {
        line.push_str(&format!(
            ", srtt {:.1} ms, cwnd {} bytes",
            path.rtt.as_secs_f64() * 1e3,
            path.cwnd
        ));
    }
    if let Some(e) = conn.peer_error().filter(|e| !is_clean_close(e)) {
        line.push_str(&format!("; peer error: {}", describe_error(e)));
    }
    if let Some(e) = conn.local_error().filter(|e| !is_clean_close(e)) {
        line.push_str(&format!("; local error: {}", describe_error(e)));
    }
    if conn.is_timed_out() {
        line.push_str("; idle timeout");
    }
    line
}

/// Everything `run_client` needs besides the configuration and session.
#[derive(Clone, Debug)]
pub struct ClientSetup {
    pub peer: SocketAddr,
    /// TLS server name (SNI), `None` for an IP address.
    pub server_name: Option<String>,
    pub qlog_dir: Option<PathBuf>,
    /// The congestion controller, for the logs.
    pub cc_description: String,
    /// For error messages.
    pub idle_timeout_ms: u64,
    /// How often `on_tick` is called, if at all.
    pub tick: Option<Duration>,
}

/// What a finished client connection measured.
#[derive(Debug)]
pub struct ClientReport {
    /// From the first packet to the end of the last response.
    pub elapsed: Duration,
    /// From the first packet to the end of the handshake.
    pub handshake: Option<Duration>,
    pub stats: quiche::Stats,
    pub path: Option<quiche::PathStats>,
    pub qlog: Option<PathBuf>,
}

/// Runs one client connection until every request has ended (its outcomes
/// are in the returned session) or the connection has failed (an error that
/// says why). `on_tick` sees the session every `setup.tick`.
pub fn run_client(
    config: &mut quiche::Config,
    session: ClientSession,
    setup: &ClientSetup,
    on_tick: &mut dyn FnMut(&ClientSession, Duration),
) -> anyhow::Result<(ClientSession, ClientReport)> {
    let bind_addr: SocketAddr = if setup.peer.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = bind_udp(bind_addr).context("cannot open a local UDP socket")?;
    let mut wire = Wire::new(socket)?;
    let local = wire.local;
    let scid = random_bytes::<{ quiche::MAX_CONN_ID_LEN }>()?;
    let scid = quiche::ConnectionId::from_ref(&scid);
    let mut conn = quiche::connect(
        setup.server_name.as_deref(),
        &scid,
        local,
        setup.peer,
        config,
    )
    .map_err(|e| anyhow!("cannot start a connection to {}: {e}", setup.peer))?;
    let qlog = match &setup.qlog_dir {
        Some(dir) => {
            let detail = format!("cc={}", setup.cc_description);
            Some(qlog_output::attach(
                &mut conn,
                dir,
                Role::Client,
                "quiche-client",
                &detail,
            )?)
        }
        None => None,
    };
    let mut endpoint = Endpoint::new(conn, session, REAL_TIME_PACING_GRANULARITY);
    let peer = setup.peer;
    let start = Instant::now();
    let mut handshake = None;
    let mut finished = None;
    let mut next_tick = setup.tick.map(|t| start + t);
    let mut buf = vec![0; MAX_RECV_DATAGRAM_SIZE];
    endpoint.flush(start, &mut |data, info| send(&wire.socket, data, info.to));
    loop {
        let deadline = match (endpoint.next_wakeup(), next_tick) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        wire.read_batch(&mut buf, deadline, &mut |data, from, _| {
            endpoint.on_datagram(data, from, local)
        })?;
        let now = Instant::now();
        endpoint.on_timer(now);
        endpoint.flush(now, &mut |data, info| send(&wire.socket, data, info.to));
        if handshake.is_none() && endpoint.conn.is_established() {
            handshake = Some(now - start);
        }
        if finished.is_none() && endpoint.app.is_finished() {
            finished = Some(now - start);
        }
        if let (Some(tick), Some(at)) = (setup.tick, next_tick) {
            if now >= at {
                on_tick(&endpoint.app, now - start);
                next_tick = Some(now + tick);
            }
        }
        // Once every request has ended the session closes the connection;
        // waiting out the draining period would add nothing.
        if endpoint.conn.is_closed() || (finished.is_some() && endpoint.conn.is_draining()) {
            break;
        }
    }
    let Endpoint {
        conn,
        app: mut session,
        app_error,
        ..
    } = endpoint;
    let elapsed = match finished {
        Some(elapsed) => elapsed,
        None => {
            let mut reason = close_reason(&conn, setup, peer, start.elapsed());
            if let Some(e) = app_error {
                reason = format!("{reason} ({e})");
            }
            session.abandon(&reason);
            let received = session.bytes_received();
            if received > 0 {
                bail!("{reason}; {received} response bytes had arrived");
            }
            bail!("{reason}");
        }
    };
    let report = ClientReport {
        elapsed,
        handshake,
        stats: conn.stats(),
        path: conn.path_stats().next(),
        qlog,
    };
    // Dropping the connection flushes its qlog.
    drop(conn);
    Ok((session, report))
}

/// Why a client connection ended before its requests did.
fn close_reason(
    conn: &quiche::Connection,
    setup: &ClientSetup,
    peer: SocketAddr,
    elapsed: Duration,
) -> String {
    let established = conn.is_established();
    let what = if established {
        "connection".to_string()
    } else {
        format!("handshake with {peer}")
    };
    if let Some(e) = conn.peer_error() {
        return format!("{what} failed: the server closed it: {}", describe_error(e));
    }
    if let Some(e) = conn.local_error() {
        let mut reason = format!("{what} failed: {}", describe_error(e));
        if !established && !e.is_app && is_certificate_alert(e.error_code) {
            reason.push_str(
                " (the server's certificate could not be verified; --no-verify skips this check)",
            );
        }
        return reason;
    }
    if conn.is_timed_out() {
        return if established {
            format!(
                "connection timed out: nothing heard from {peer} for {} ms (idle timeout)",
                setup.idle_timeout_ms
            )
        } else {
            // quiche waits at least three probe timeouts, which can be longer
            // than the idle timeout.
            format!(
                "{what} failed: no answer in {:.1} s (idle timeout {} ms); is a QUIC server \
                 listening there?",
                elapsed.as_secs_f64(),
                setup.idle_timeout_ms
            )
        };
    }
    format!("{what} ended before all responses arrived")
}

fn is_clean_close(e: &quiche::ConnectionError) -> bool {
    // Transport NO_ERROR, or application codes 0 (hq-interop) and 0x100
    // (H3_NO_ERROR).
    e.error_code == 0 || (e.is_app && e.error_code == 0x100)
}

fn is_certificate_alert(code: u64) -> bool {
    // TLS alerts bad_certificate .. unknown_ca (42..=48) as QUIC errors.
    (0x100 + 42..=0x100 + 48).contains(&code)
}

/// A CONNECTION_CLOSE error in words.
pub fn describe_error(e: &quiche::ConnectionError) -> String {
    let code = e.error_code;
    let mut text = if e.is_app {
        match code {
            0x100 => "HTTP/3 no error".to_string(),
            0x101..=0x110 => format!("HTTP/3 error {code:#x}"),
            _ => format!("application error {code:#x}"),
        }
    } else {
        match code {
            0x0 => "no error".to_string(),
            0x1 => "internal error".to_string(),
            0x2 => "connection refused".to_string(),
            0x3 => "flow control error".to_string(),
            0x4 => "stream limit error".to_string(),
            0x5 => "stream state error".to_string(),
            0x6 => "final size error".to_string(),
            0x7 => "frame encoding error".to_string(),
            0x8 => "transport parameter error".to_string(),
            0x9 => "connection ID limit error".to_string(),
            0xa => "protocol violation".to_string(),
            0xb => "invalid token".to_string(),
            0xc => "application error".to_string(),
            0xd => "crypto buffer exceeded".to_string(),
            0xe => "key update error".to_string(),
            0xf => "AEAD limit reached".to_string(),
            0x10 => "no viable path".to_string(),
            0x100..=0x1ff => format!("TLS alert {}{}", code - 0x100, tls_alert_name(code - 0x100)),
            _ => format!("transport error {code:#x}"),
        }
    };
    if !e.reason.is_empty() {
        text.push_str(&format!(" ('{}')", String::from_utf8_lossy(&e.reason)));
    }
    text
}

fn tls_alert_name(alert: u64) -> &'static str {
    match alert {
        10 => " (unexpected_message)",
        40 => " (handshake_failure)",
        42 => " (bad_certificate)",
        43 => " (unsupported_certificate)",
        44 => " (certificate_revoked)",
        45 => " (certificate_expired)",
        46 => " (certificate_unknown)",
        47 => " (illegal_parameter)",
        48 => " (unknown_ca)",
        50 => " (decode_error)",
        51 => " (decrypt_error)",
        70 => " (protocol_version)",
        80 => " (internal_error)",
        109 => " (missing_extension)",
        120 => " (no_application_protocol)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_in_use_is_named() {
        let first = bind_udp("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = first.local_addr().unwrap();
        let e = bind_udp(addr).unwrap_err().to_string();
        assert_eq!(e, format!("cannot listen on {addr}: address in use"));
    }

    #[test]
    fn errors_in_words() {
        let e = quiche::ConnectionError {
            is_app: false,
            error_code: 0x100 + 48,
            reason: Vec::new(),
        };
        assert_eq!(describe_error(&e), "TLS alert 48 (unknown_ca)");
        let e = quiche::ConnectionError {
            is_app: true,
            error_code: 0x100,
            reason: b"done".to_vec(),
        };
        assert_eq!(describe_error(&e), "HTTP/3 no error ('done')");
        assert!(is_clean_close(&e));
    }
}

//! Load figures for quiche-server (run by `scripts/stress`; prints, never
//! asserts on time): an Initial flood, connections abandoned mid-transfer,
//! and a thousand concurrent downloads at `--max-connections`.
//!
//!   stress SERVER_BINARY [flood|abandon|concurrent]...

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use quiche::h3::{self, NameValue};
use sha2::{Digest, Sha256};

const FILE_SIZE: usize = 1_000_000;

/// The server under test, killed on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
    /// The server's stderr lines after its first (connection reports when
    /// started without `--quiet`).
    lines: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(binary: &Path, root: &Path, extra: &[&str]) -> Server {
        Server::start_with(binary, root, &[&["--quiet"], extra].concat())
    }

    /// Without `--quiet` in `args`, the server reports every connection it
    /// closes (kept in `lines`).
    fn start_with(binary: &Path, root: &Path, args: &[&str]) -> Server {
        let mut child = Command::new(binary)
            .args(["--listen", "127.0.0.1:0", "--root"])
            .arg(root)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env_remove("QLOGDIR")
            .env_remove("RUST_LOG")
            .spawn()
            .expect("cannot start the server");
        let stderr = child.stderr.take().expect("piped");
        let mut lines = BufReader::new(stderr).lines();
        let addr = loop {
            let line = lines
                .next()
                .and_then(|l| l.ok())
                .expect("the server said nothing");
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest
                    .split(',')
                    .next()
                    .and_then(|a| a.parse().ok())
                    .expect("no address");
            }
        };
        // Keep draining stderr so that the server never blocks on it.
        let kept = Arc::new(Mutex::new(Vec::new()));
        let sink = kept.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Ok(mut v) = sink.lock() {
                    v.push(line);
                }
            }
        });
        Server {
            child,
            addr,
            lines: kept,
        }
    }

    /// Resident set size in MB.
    fn rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }

    /// CPU time (user + system) the server has used, in ms.
    fn cpu_ms(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the parenthesised command name; utime and stime are
        // the 14th and 15th of the line, in clock ticks (100 per second).
        let rest = stat.rsplit(')').next().unwrap_or("");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = [11, 12]
            .iter()
            .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<f64>().ok()))
            .sum();
        ticks * 10.0
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// Idle timeout of both ends in the concurrent phase (`STRESS_IDLE_TIMEOUT_MS`,
/// default the apps' 30 s).
fn idle_timeout_ms() -> u64 {
    std::env::var("STRESS_IDLE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30_000)
}

fn client_config() -> quiche::Config {
    let mut c = quiche::Config::new(quiche::PROTOCOL_VERSION).expect("config");
    c.verify_peer(false);
    c.set_application_protos(&[b"h3"]).expect("alpn");
    c.set_max_idle_timeout(idle_timeout_ms());
    c.set_initial_max_data(10_000_000);
    c.set_initial_max_stream_data_bidi_local(10_000_000);
    c.set_initial_max_stream_data_bidi_remote(10_000_000);
    c.set_initial_max_stream_data_uni(1_000_000);
    c.set_initial_max_streams_bidi(10);
    c.set_initial_max_streams_uni(10);
    c
}

/// One client connection on its own socket, driven by the calling thread.
struct Client {
    socket: UdpSocket,
    conn: quiche::Connection,
    h3: Option<h3::Connection>,
    local: SocketAddr,
    body: Sha256,
    bytes: usize,
    finished: bool,
    /// When the last datagram arrived, for failure reports.
    last_datagram: Option<Instant>,
    /// Datagrams sent.
    datagrams_out: usize,
}

impl Client {
    fn connect(peer: SocketAddr) -> Client {
        // With the apps' socket buffers (quiche-client's own).
        let socket =
            quiche_vegas::net::bind_udp("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let local = socket.local_addr().expect("local");
        let mut scid = [0u8; 16];
        getrandom::fill(&mut scid).expect("random");
        let conn = quiche::connect(
            Some("localhost"),
            &quiche::ConnectionId::from_ref(&scid),
            local,
            peer,
            &mut client_config(),
        )
        .expect("connect");
        Client {
            socket,
            conn,
            h3: None,
            local,
            body: Sha256::new(),
            bytes: 0,
            finished: false,
            last_datagram: None,
            datagrams_out: 0,
        }
    }

    fn flush(&mut self) {
        let mut out = [0; 1500];
        while let Ok((n, info)) = self.conn.send(&mut out) {
            self.socket.send_to(&out[..n], info.to).ok();
            self.datagrams_out += 1;
        }
    }

    /// Exchanges packets until `done`, a close, or `timeout`.
    fn run_until(&mut self, timeout: Duration, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let mut buf = [0; 65535];
        loop {
            self.read_responses();
            self.flush();
            if done(self) {
                return true;
            }
            if self.conn.is_closed() || Instant::now() >= deadline {
                return false;
            }
            let wait = self
                .conn
                .timeout()
                .unwrap_or(Duration::from_millis(20))
                .clamp(Duration::from_millis(1), Duration::from_millis(20));
            self.socket.set_read_timeout(Some(wait)).ok();
            match self.socket.recv_from(&mut buf) {
                Ok((n, from)) => {
                    self.last_datagram = Some(Instant::now());
                    let info = quiche::RecvInfo {
                        from,
                        to: self.local,
                    };
                    self.conn.recv(&mut buf[..n], info).ok();
                    // Drain what else is waiting.
                    self.socket.set_nonblocking(true).ok();
                    while let Ok((n, from)) = self.socket.recv_from(&mut buf) {
                        let info = quiche::RecvInfo {
                            from,
                            to: self.local,
                        };
                        self.conn.recv(&mut buf[..n], info).ok();
                    }
                    self.socket.set_nonblocking(false).ok();
                }
                Err(_) => self.conn.on_timeout(),
            }
        }
    }

    /// How the connection ended, for failure reports.
    fn why(&self) -> String {
        let stats = self.conn.stats();
        let path = self.conn.path_stats().next();
        format!(
            "closed={} timed_out={} local_error={:?} peer_error={:?}; client port {}: \
             received {} packets, sent {} (lost {}), srtt {:.0} ms, last datagram {:.1} s \
             ago, socket drops {}",
            self.conn.is_closed(),
            self.conn.is_timed_out(),
            self.conn.local_error(),
            self.conn.peer_error(),
            self.local.port(),
            stats.recv,
            stats.sent,
            stats.lost,
            path.map_or(0.0, |p| p.rtt.as_secs_f64() * 1e3),
            self.last_datagram
                .map_or(f64::NAN, |t| t.elapsed().as_secs_f64()),
            udp_drops(self.local.port()).map_or("?".to_string(), |d| d.to_string()),
        )
    }

    fn establish(&mut self) -> bool {
        if !self.run_until(Duration::from_secs(20), |c| c.conn.is_established()) {
            return false;
        }
        match h3::Connection::with_transport(&mut self.conn, &h3::Config::new().expect("h3")) {
            Ok(h3) => {
                self.h3 = Some(h3);
                true
            }
            Err(_) => false,
        }
    }

    fn get(&mut self, path: &str) {
        let headers = [
            h3::Header::new(b":method", b"GET"),
            h3::Header::new(b":scheme", b"https"),
            h3::Header::new(b":authority", b"localhost"),
            h3::Header::new(b":path", path.as_bytes()),
        ];
        if let Some(h3) = self.h3.as_mut() {
            h3.send_request(&mut self.conn, &headers, true).ok();
        }
    }

    fn read_responses(&mut self) {
        let Some(h3) = self.h3.as_mut() else { return };
        let mut buf = [0; 65536];
        while let Ok((id, event)) = h3.poll(&mut self.conn) {
            match event {
                h3::Event::Data => {
                    while let Ok(n) = h3.recv_body(&mut self.conn, id, &mut buf) {
                        self.body.update(&buf[..n]);
                        self.bytes += n;
                    }
                }
                h3::Event::Finished => self.finished = true,
                h3::Event::Headers { list, .. } => {
                    let ok = list
                        .iter()
                        .any(|h| h.name() == b":status" && h.value() == b"200");
                    if !ok {
                        self.finished = true;
                    }
                }
                _ => {}
            }
        }
    }

    /// Downloads `path` to the end; its SHA-256 if complete.
    fn download(&mut self, path: &str, timeout: Duration) -> Option<String> {
        self.get(path);
        self.run_until(timeout, |c| c.finished);
        let digest = std::mem::take(&mut self.body).finalize();
        (self.finished && self.bytes == FILE_SIZE).then(|| hex::encode(digest))
    }
}

/// Datagrams the kernel dropped for the local UDP socket on `port` (its
/// receive buffer was full), from /proc/net/udp.
fn udp_drops(port: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/udp").ok()?;
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let local_port = fields.get(1)?.rsplit(':').next()?;
        (u16::from_str_radix(local_port, 16).ok()? == port)
            .then(|| fields.last()?.parse().ok())
            .flatten()
    })
}

/// An established connection downloads the file once more; the time from
/// request to the end of the response, or `None` on failure.
fn timed_request(c: &mut Client, sha: &str) -> Option<Duration> {
    let start = Instant::now();
    c.finished = false;
    c.bytes = 0;
    let got = c.download("/file", Duration::from_secs(60))?;
    (got == sha).then(|| start.elapsed())
}

/// A fresh connection downloads the file; its time, or `None` on failure.
fn timed_download(addr: SocketAddr, sha: &str) -> Option<Duration> {
    let start = Instant::now();
    let mut c = Client::connect(addr);
    if !c.establish() {
        return None;
    }
    let got = c.download("/file", Duration::from_secs(60))?;
    (got == sha).then(|| start.elapsed())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn unloaded_time(addr: SocketAddr, sha: &str) -> Duration {
    median(
        (0..5)
            .map(|_| timed_download(addr, sha).expect("the unloaded download failed"))
            .collect(),
    )
}

/// Floods per measured download; the figures are medians over them.
const FLOOD_ROUNDS: usize = 5;
const FLOOD_INITIALS: usize = 5000;

/// 5,000 client Initials from one socket, each of a new connection, while
/// one download runs: on an established connection, then on a new one
/// (one measured download per flood, as unloaded). The control sends the
/// same floods to a socket nobody reads: what the flood costs the machine
/// (its sender and the loopback) without the server.
fn flood(binary: &Path, root: &Path, sha: &str, extra: &[&str], label: &str) {
    let server = Server::start(binary, root, extra);
    let addr = server.addr;
    let unloaded_new = unloaded_time(addr, sha);
    let mut established = Client::connect(addr);
    assert!(established.establish(), "no handshake");
    let unloaded_established = median(
        (0..FLOOD_ROUNDS)
            .map(|_| timed_request(&mut established, sha).expect("unloaded request failed"))
            .collect(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let before = server.rss_mb();
    let cpu_before = server.cpu_ms();
    let mut send_times = Vec::new();
    let mut during = |target: SocketAddr, new_connection: bool, c: &mut Client| {
        let times: Vec<Option<Duration>> = (0..FLOOD_ROUNDS)
            .map(|_| {
                let (sent_in, took) = during_flood(addr, target, || {
                    if new_connection {
                        timed_download(addr, sha)
                    } else {
                        timed_request(c, sha)
                    }
                });
                send_times.push(sent_in);
                took
            })
            .collect();
        let failed = times.iter().filter(|t| t.is_none()).count();
        let ok: Vec<Duration> = times.into_iter().flatten().collect();
        (failed, (!ok.is_empty()).then(|| median(ok)))
    };
    let at_server_established = during(addr, false, &mut established);
    let at_server_new = during(addr, true, &mut established);
    std::thread::sleep(Duration::from_millis(200));
    let cpu = server.cpu_ms() - cpu_before;
    std::thread::sleep(Duration::from_millis(500));
    let after = server.rss_mb();
    let sink = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let sink_addr = sink.local_addr().expect("local");
    let control_established = during(sink_addr, false, &mut established);
    let control_new = during(sink_addr, true, &mut established);
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    let measured = |(failed, time): (usize, Option<Duration>)| {
        let time = time.map_or("FAILED".to_string(), ms);
        if failed > 0 {
            format!("{time} ({failed} of {FLOOD_ROUNDS} FAILED)")
        } else {
            time
        }
    };
    println!(
        "flood ({label}): {FLOOD_ROUNDS} floods of {FLOOD_INITIALS} Initials per download \
         (each sent in {} median), server CPU {:.0} ms per flood; server RSS {before:.1} -> \
         {after:.1} MB (+{:.1} MB); 1 MB download on an established connection {} during the \
         flood, {} during the control flood, {} unloaded; on a new connection, handshake \
         included, {} during, {} control, {} unloaded (medians)",
        ms(median(send_times)),
        cpu / (2 * FLOOD_ROUNDS) as f64,
        after - before,
        measured(at_server_established),
        measured(control_established),
        ms(unloaded_established),
        measured(at_server_new),
        measured(control_new),
        ms(unloaded_new),
    );
}

/// Sends a flood of Initials (made for `server`) to `target` while
/// `measure` runs on another thread, both starting together; how long the
/// flood took to send and what `measure` returned.
fn during_flood<T: Send>(
    server: SocketAddr,
    target: SocketAddr,
    measure: impl FnOnce() -> T + Send,
) -> (Duration, T) {
    // Make the packets first, so that the flood is fast.
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let local = socket.local_addr().expect("local");
    let mut config = client_config();
    let initials: Vec<Vec<u8>> = (0..FLOOD_INITIALS)
        .map(|_| {
            let mut scid = [0u8; 16];
            getrandom::fill(&mut scid).expect("random");
            let mut conn = quiche::connect(
                Some("localhost"),
                &quiche::ConnectionId::from_ref(&scid),
                local,
                server,
                &mut config,
            )
            .expect("connect");
            let mut out = [0; 1500];
            let (n, _) = conn.send(&mut out).expect("initial");
            out[..n].to_vec()
        })
        .collect();
    let go = Barrier::new(2);
    std::thread::scope(|scope| {
        let measured = scope.spawn(|| {
            go.wait();
            measure()
        });
        go.wait();
        let flood_start = Instant::now();
        for p in &initials {
            socket.send_to(p, target).ok();
        }
        let sent_in = flood_start.elapsed();
        (sent_in, measured.join().expect("thread"))
    })
}

/// 1,000 connections request the file and vanish mid-transfer.
fn abandon(binary: &Path, root: &Path, sha: &str) {
    let idle_ms = 5000u64;
    let idle = idle_ms.to_string();
    let mut server = Server::start(
        binary,
        root,
        &[
            "--idle-timeout",
            &idle,
            "--max-connections",
            "2000",
            "--max-connections-per-ip",
            "2000",
            // Every client is on 127.0.0.1: no share for other addresses.
            "--busy-connections-per-ip",
            "2000",
        ],
    );
    timed_download(server.addr, sha).expect("warm-up download failed");
    std::thread::sleep(Duration::from_millis(1500));
    let baseline = server.rss_mb();
    let addr = server.addr;
    let abandoned = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let threads: Vec<_> = (0..1000)
        .map(|_| {
            let abandoned = abandoned.clone();
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                if c.establish() {
                    c.get("/file");
                    // Vanish after 100 KB: no close, no more ACKs.
                    if c.run_until(Duration::from_secs(60), |c| c.bytes >= 100_000) {
                        abandoned.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    // Meanwhile a well-behaved client keeps downloading.
    let mut served = 0;
    let mut failed = 0;
    let mut peak = 0f64;
    while threads.iter().any(|t| !t.is_finished()) {
        match timed_download(addr, sha) {
            Some(_) => served += 1,
            None => failed += 1,
        }
        peak = peak.max(server.rss_mb());
    }
    for t in threads {
        t.join().ok();
    }
    peak = peak.max(server.rss_mb());
    let abandon_time = started.elapsed();
    // The last abandoned connection times out idle_ms after its last
    // packet; memory is returned within a second of the reap.
    std::thread::sleep(Duration::from_millis(idle_ms + 5000));
    let after = server.rss_mb();
    let ok_after = timed_download(addr, sha).is_some();
    println!(
        "abandon: {} of 1000 connections abandoned after 100 KB of a 1 MB response \
         (in {:.1} s); meanwhile {served} downloads served, {failed} failed; server RSS \
         idle {baseline:.1} MB, peak {peak:.1} MB, {after:.1} MB at idle timeout ({idle_ms} \
         ms) + 5 s ({:.2}x idle); download afterwards {}; server {}",
        abandoned.load(Ordering::Relaxed),
        abandon_time.as_secs_f64(),
        after / baseline,
        if ok_after { "intact" } else { "FAILED" },
        if server.alive() { "alive" } else { "DEAD" }
    );
}

/// 1,000 connections open at once download the file; one more is refused.
fn concurrent(binary: &Path, root: &Path, sha: &str) {
    let n = 1000;
    let idle = idle_timeout_ms().to_string();
    // Not quiet: the server's report of each connection it closes tells
    // what it saw of the failed ones.
    let server = Server::start_with(
        binary,
        root,
        &[
            "--max-connections",
            "1000",
            "--max-connections-per-ip",
            "1000",
            // Every client is on 127.0.0.1: no share for other addresses.
            "--busy-connections-per-ip",
            "1000",
            "--idle-timeout",
            &idle,
        ],
    );
    let addr = server.addr;
    // Threads that have tried their handshake, and the signal to download.
    let tried = Arc::new(AtomicUsize::new(0));
    let go = Arc::new(AtomicBool::new(false));
    let client_datagrams = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let tried = tried.clone();
            let client_datagrams = client_datagrams.clone();
            let go = go.clone();
            let sha = sha.to_string();
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || {
                    let mut c = Client::connect(addr);
                    let ok = c.establish();
                    tried.fetch_add(1, Ordering::SeqCst);
                    // Keep the connection serviced while the others connect.
                    while ok && !go.load(Ordering::SeqCst) && !c.conn.is_closed() {
                        c.run_until(Duration::from_millis(100), |_| false);
                    }
                    if !ok {
                        return Err(format!("no handshake: {}", c.why()));
                    }
                    let outcome = c.download("/file", Duration::from_secs(300));
                    client_datagrams.fetch_add(c.datagrams_out, Ordering::Relaxed);
                    match outcome {
                        Some(got) if got == sha => Ok(()),
                        Some(_) => Err("wrong SHA-256".to_string()),
                        None => Err(format!("{} of {FILE_SIZE} bytes: {}", c.bytes, c.why())),
                    }
                })
                .expect("thread")
        })
        .collect();
    while tried.load(Ordering::SeqCst) < n {
        std::thread::sleep(Duration::from_millis(10));
    }
    let handshakes = start.elapsed();
    let drops_at_handshakes = udp_drops(addr.port());
    // Every one of the 1000 holds a connection: one more is refused.
    let mut extra = Client::connect(addr);
    let refused_start = Instant::now();
    extra.run_until(Duration::from_secs(10), |c| c.conn.peer_error().is_some());
    let refused = extra
        .conn
        .peer_error()
        .map(|e| (e.is_app, e.error_code, refused_start.elapsed()));
    go.store(true, Ordering::SeqCst);
    let start = Instant::now();
    let outcomes: Vec<Result<(), String>> = threads
        .into_iter()
        .map(|t| t.join().unwrap_or_else(|_| Err("panicked".into())))
        .collect();
    let intact = outcomes.iter().filter(|o| o.is_ok()).count();
    let reports = server.lines.lock().map(|v| v.clone()).unwrap_or_default();
    for e in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        println!("concurrent: a failed download: {e}");
        let port = e
            .split("client port ")
            .nth(1)
            .and_then(|r| r.split(':').next());
        if let Some(port) = port {
            let peer = format!("127.0.0.1:{port} ");
            for line in reports.iter().filter(|l| l.contains(&peer)) {
                println!("concurrent:   server: {line}");
            }
        }
    }
    let server_drops = udp_drops(addr.port());
    let server_cpu = server.cpu_ms() / 1e3;
    println!(
        "concurrent (idle timeout {idle} ms): {n} connections established in {:.1} s; the \
         {}st: {}; then {intact} of {n} 1 MB downloads intact (SHA-256) in {:.1} s; server \
         RSS {:.1} MB, CPU {server_cpu:.1} s; the clients sent {} datagrams, the server's \
         socket dropped {} of them ({} by the end of the handshakes)",
        handshakes.as_secs_f64(),
        n + 1,
        match refused {
            Some((false, 2, t)) =>
                format!("CONNECTION_REFUSED after {:.1} ms", t.as_secs_f64() * 1e3),
            Some((app, code, _)) => format!("closed with app={app} code {code:#x}"),
            None => "NOT refused".to_string(),
        },
        start.elapsed().as_secs_f64(),
        server.rss_mb(),
        client_datagrams.load(Ordering::Relaxed),
        server_drops.map_or("?".to_string(), |d| d.to_string()),
        drops_at_handshakes.map_or("?".to_string(), |d| d.to_string()),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(binary) = args.first() else {
        eprintln!("usage: stress SERVER_BINARY [flood|abandon|concurrent]...");
        std::process::exit(2);
    };
    let binary = Path::new(binary);
    let phases: Vec<&str> = if args.len() > 1 {
        args[1..].iter().map(String::as_str).collect()
    } else {
        vec!["flood", "abandon", "concurrent"]
    };
    let root = tempfile::tempdir().expect("tempdir");
    let mut data = vec![0u8; FILE_SIZE];
    getrandom::fill(&mut data).expect("random");
    std::fs::write(root.path().join("file"), &data).expect("write");
    let sha = hex::encode(Sha256::digest(&data));
    for phase in phases {
        match phase {
            "flood" => {
                flood(binary, root.path(), &sha, &[], "--retry auto, the default");
                flood(
                    binary,
                    root.path(),
                    &sha,
                    &["--retry", "always"],
                    "--retry always",
                );
                flood(binary, root.path(), &sha, &["--no-retry"], "--no-retry");
            }
            "abandon" => abandon(binary, root.path(), &sha),
            "concurrent" => concurrent(binary, root.path(), &sha),
            other => {
                eprintln!("unknown phase '{other}'");
                std::process::exit(2);
            }
        }
    }
}

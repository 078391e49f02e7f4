//! Load figures for quiche-server (run by `scripts/stress`; prints, never
//! asserts on time): an Initial flood, connections abandoned mid-transfer,
//! and a thousand concurrent downloads at `--max-connections`.
//!
//!   stress SERVER_BINARY [flood|abandon|concurrent]...
//!
//! (`flood-auto`, `flood-always`, `flood-never`: the flood phase with one
//! `--retry` mode only.)
//!
//! The flood phase separates what a flood costs the machine from what it
//! costs the server: the flood's sender has one CPU to itself and the
//! server and the measured client share the other, and each round measures
//! a download unloaded, during the flood and during the same flood sent to
//! a socket nobody reads (the control), so that flood / control is the
//! server's own share and flood / unloaded the figure asked for.

#[path = "../tests/common/h3_client.rs"]
mod h3_client;

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
    h3_client::h3_client_config(idle_timeout_ms())
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
            self.conn.local_error().map(describe_close),
            self.conn.peer_error().map(describe_close),
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

/// A CONNECTION_CLOSE, its reason as text.
fn describe_close(e: &quiche::ConnectionError) -> String {
    format!(
        "app={} code={:#x} \"{}\"",
        e.is_app,
        e.error_code,
        String::from_utf8_lossy(&e.reason)
    )
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
/// The connection is left to the server's idle timeout.
fn timed_download(addr: SocketAddr, sha: &str) -> Option<Duration> {
    new_connection_download(addr, sha).1.ok()
}

/// A fresh connection downloads the file, then closes: its time, or what
/// went wrong. (Left open, the flood rounds' connections from 127.0.0.1
/// filled `--max-connections-per-ip` before their idle timeout.)
fn timed_download_and_close(addr: SocketAddr, sha: &str) -> Result<Duration, String> {
    let (mut c, took) = new_connection_download(addr, sha);
    c.conn.close(false, 0, b"done").ok();
    c.flush();
    took
}

fn new_connection_download(addr: SocketAddr, sha: &str) -> (Client, Result<Duration, String>) {
    let start = Instant::now();
    let mut c = Client::connect(addr);
    if !c.establish() {
        let why = format!("no handshake: {}", c.why());
        return (c, Err(why));
    }
    let took = match c.download("/file", Duration::from_secs(60)) {
        Some(got) if got == sha => Ok(start.elapsed()),
        Some(_) => Err("wrong SHA-256".to_string()),
        None => Err(format!("{} of {FILE_SIZE} bytes: {}", c.bytes, c.why())),
    };
    (c, took)
}

/// The measured rounds of a flood row (`STRESS_FLOOD_ROUNDS`, default 25):
/// in each, one download of each kind unloaded, during the flood and during
/// the control flood, in an order that rotates from round to round.
fn flood_rounds() -> usize {
    std::env::var("STRESS_FLOOD_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(25)
}

/// The paced flood's rate in Initials a second (`STRESS_FLOOD_RATE`):
/// by default what one host fills a 1 Gbit/s link with. An Initial is a
/// 1,200-byte UDP payload, 1,266 bytes on an Ethernet wire with the IP, UDP
/// and Ethernet headers, FCS, preamble and gap: 10^9 / (1,266 x 8) = 98,700
/// a second. A flood faster than that needs more than one attacking host or
/// a faster link, and then a faster server than this 2-core machine.
fn flood_rate() -> u32 {
    std::env::var("STRESS_FLOOD_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&r| r > 0)
        .unwrap_or(100_000)
}

/// The old flood: this many Initials back to back, as fast as the sender
/// sends them (about 300,000 a second on this machine).
const MAX_RATE_INITIALS: usize = 5000;

/// A paced flood is made beforehand for this long; a download that takes
/// longer outlasts it (reported).
const PACED_FLOOD_FOR: Duration = Duration::from_millis(200);

/// How a flood is sent.
#[derive(Clone, Copy)]
enum Pace {
    /// `rate` Initials a second on schedule, from the measured download's
    /// start to its end.
    Paced { rate: u32 },
    /// `MAX_RATE_INITIALS` back to back, starting with the download.
    MaxRate,
}

impl Pace {
    fn initials(self) -> usize {
        match self {
            Pace::Paced { rate } => (rate as f64 * PACED_FLOOD_FOR.as_secs_f64()).ceil() as usize,
            Pace::MaxRate => MAX_RATE_INITIALS,
        }
    }

    fn describe(self) -> String {
        match self {
            Pace::Paced { rate } => format!(
                "paced at {rate} Initials/s ({:.2} Gbit/s of 1,266-byte Ethernet frames) for the \
                 whole download",
                rate as f64 * 1266.0 * 8.0 / 1e9
            ),
            Pace::MaxRate => format!(
                "{MAX_RATE_INITIALS} Initials back to back, as fast as the sender goes, from the \
                 download's start"
            ),
        }
    }
}

/// Which CPU sends the flood and which runs everything else (the server,
/// the measured client, this program's other threads): the flood's sending
/// and its loopback delivery (done by the kernel on the sending CPU) then
/// take nothing from the server but what the server itself does with it.
#[derive(Clone, Copy)]
struct Placement {
    flood_cpu: usize,
    other_cpu: usize,
}

/// The CPUs this thread may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity
    // writes at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Restricts the calling thread (and what it starts afterwards) to `cpus`.
fn pin_current_thread(cpus: &[usize]) -> bool {
    // SAFETY: as in allowed_cpus; CPU_SET is given indices below CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    let size = std::mem::size_of::<libc::cpu_set_t>();
    unsafe { libc::sched_setaffinity(0, size, &set) == 0 }
}

/// The flood's socket and the Initials it sends, each of a new connection
/// to `server` (made beforehand, so that making them costs the flood
/// nothing).
struct FloodPackets {
    socket: UdpSocket,
    initials: Vec<Vec<u8>>,
}

impl FloodPackets {
    fn make(server: SocketAddr, count: usize) -> FloodPackets {
        // A new socket for every flood: the server's Retry budget and kernel
        // filter are per client socket, so each flood starts from scratch.
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let local = socket.local_addr().expect("local");
        let mut config = client_config();
        let initials = (0..count)
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
        FloodPackets { socket, initials }
    }
}

/// What a flood's sender did.
struct FloodSent {
    initials: usize,
    took: Duration,
    /// A paced flood ran out of Initials before the download ended.
    ran_out: bool,
}

/// Sends `packets` to `target` paced as `pace` (on `placement`'s flood CPU)
/// while `measure` runs on this thread, both starting together.
fn during_flood<T>(
    packets: &FloodPackets,
    target: SocketAddr,
    pace: Pace,
    placement: Option<Placement>,
    measure: impl FnOnce() -> T,
) -> (FloodSent, T) {
    let go = Barrier::new(2);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let sender = scope.spawn(|| {
            if let Some(p) = placement {
                pin_current_thread(&[p.flood_cpu]);
            }
            go.wait();
            let start = Instant::now();
            let mut sent = 0;
            for (k, initial) in packets.initials.iter().enumerate() {
                if let Pace::Paced { rate } = pace {
                    // Spin to the k-th Initial's time: the flood's CPU is
                    // its own, and a sleep is far coarser than 10 us.
                    let due = start + Duration::from_secs_f64(k as f64 / rate as f64);
                    while Instant::now() < due && !done.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                    if done.load(Ordering::Relaxed) {
                        break;
                    }
                }
                packets.socket.send_to(initial, target).ok();
                sent += 1;
            }
            FloodSent {
                initials: sent,
                took: start.elapsed(),
                ran_out: matches!(pace, Pace::Paced { .. })
                    && sent == packets.initials.len()
                    && !done.load(Ordering::Relaxed),
            }
        });
        go.wait();
        let measured = measure();
        done.store(true, Ordering::Relaxed);
        (sender.join().expect("flood thread"), measured)
    })
}

/// Initials per flood, the time to send them and the rate achieved, over
/// `sent`.
fn describe_floods(sent: &[FloodSent]) -> String {
    if sent.is_empty() {
        return "none".to_string();
    }
    let mut initials: Vec<usize> = sent.iter().map(|s| s.initials).collect();
    initials.sort();
    let mut took: Vec<Duration> = sent.iter().map(|s| s.took).collect();
    took.sort();
    let ran_out = sent.iter().filter(|s| s.ran_out).count();
    let achieved = sent.iter().map(|s| s.initials).sum::<usize>() as f64
        / sent.iter().map(|s| s.took.as_secs_f64()).sum::<f64>();
    format!(
        "{} Initials median ({}-{}) in {:.1} ms median, {:.0} Initials/s achieved{}",
        initials[initials.len() / 2],
        initials[0],
        initials[initials.len() - 1],
        took[took.len() / 2].as_secs_f64() * 1e3,
        achieved,
        if ran_out > 0 {
            format!(
                "; {ran_out} of {} ran out before their download ended",
                sent.len()
            )
        } else {
            String::new()
        },
    )
}

/// The `q`-quantile of sorted `v` (nearest rank).
fn quantile(v: &[Duration], q: f64) -> Duration {
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Download times of one condition: medians and spread.
#[derive(Default)]
struct Times {
    ok: Vec<Duration>,
    failed: usize,
    /// Server CPU time over these downloads, in ms.
    server_cpu_ms: f64,
}

impl Times {
    fn median(&self) -> Option<Duration> {
        let mut v = self.ok.clone();
        v.sort();
        (!v.is_empty()).then(|| quantile(&v, 0.5))
    }

    /// `median [p25-p75]`, and the failures if any.
    fn describe(&self) -> String {
        let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
        let mut v = self.ok.clone();
        v.sort();
        let mut text = if v.is_empty() {
            "FAILED".to_string()
        } else {
            format!(
                "{} ms [{}-{}]",
                ms(quantile(&v, 0.5)),
                ms(quantile(&v, 0.25)),
                ms(quantile(&v, 0.75))
            )
        };
        if self.failed > 0 {
            text += &format!(" ({} of {} FAILED)", self.failed, self.failed + v.len());
        }
        text
    }

    fn cpu_per_download(&self) -> f64 {
        self.server_cpu_ms / (self.ok.len() + self.failed).max(1) as f64
    }
}

/// `a / b` of two medians, or "-" if either is missing.
fn ratio(a: &Times, b: &Times) -> String {
    match (a.median(), b.median()) {
        (Some(a), Some(b)) => format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64()),
        _ => "-".to_string(),
    }
}

/// This process's nice value and its session's scheduling group (Linux's
/// autogroup, whose own nice value orders it against other sessions).
fn scheduling() -> String {
    // SAFETY: getpriority has no memory arguments.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let autogroup = std::fs::read_to_string("/proc/self/autogroup")
        .map(|a| a.trim().to_string())
        .unwrap_or_else(|_| "none".to_string());
    format!("nice {nice}, {autogroup}")
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_string())
}

#[derive(Clone, Copy, PartialEq)]
enum Condition {
    Unloaded,
    /// The flood sent to the server.
    Flood,
    /// The same flood sent to a socket nobody reads: what it costs the
    /// machine without the server.
    Control,
}

/// One flood row: a server started with `extra`, a 1 MB download measured
/// unloaded, during a flood of client Initials (each of a new connection,
/// from one socket) and during the same flood sent to a socket nobody
/// reads, interleaved round by round; on an established connection and on
/// a new one (handshake included).
fn flood(
    binary: &Path,
    root: &Path,
    sha: &str,
    extra: &[&str],
    label: &str,
    pace: Pace,
    placement: Option<Placement>,
) {
    let load_before = load_average();
    let server = Server::start(binary, root, extra);
    let addr = server.addr;
    let mut established = Client::connect(addr);
    assert!(established.establish(), "no handshake");
    // Warm both kinds up once.
    timed_request(&mut established, sha).expect("warm-up request failed");
    timed_download(addr, sha).expect("warm-up download failed");
    std::thread::sleep(Duration::from_millis(300));
    let rss_before = server.rss_mb();
    let sink = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let sink_addr = sink.local_addr().expect("local");
    let conditions = [Condition::Unloaded, Condition::Flood, Condition::Control];
    // [kind][condition]: kind 0 an established connection, 1 a new one.
    let mut times: [[Times; 3]; 2] = Default::default();
    // What the flood's sender did, to the server and to the control.
    let mut sent: [Vec<FloodSent>; 2] = Default::default();
    let rounds = flood_rounds();
    let mut first_failures = Vec::new();
    for round in 0..rounds {
        for (kind, times) in times.iter_mut().enumerate() {
            // The flood and its control send the same Initials (the control
            // never reaches the server).
            let packets = FloodPackets::make(addr, pace.initials());
            for i in 0..conditions.len() {
                let c = (i + round) % conditions.len();
                let mut download = || {
                    if kind == 0 {
                        timed_request(&mut established, sha).ok_or_else(|| {
                            format!("on the established connection: {}", established.why())
                        })
                    } else {
                        timed_download_and_close(addr, sha)
                    }
                };
                let cpu_before = server.cpu_ms();
                let took = match conditions[c] {
                    Condition::Unloaded => download(),
                    target => {
                        let to = if target == Condition::Flood {
                            addr
                        } else {
                            sink_addr
                        };
                        let (flood_sent, took) =
                            during_flood(&packets, to, pace, placement, download);
                        sent[usize::from(target == Condition::Control)].push(flood_sent);
                        took
                    }
                };
                // The server's work on this download and its flood, if
                // quick, is done within this pause (10 ms clock ticks).
                std::thread::sleep(Duration::from_millis(30));
                times[c].server_cpu_ms += server.cpu_ms() - cpu_before;
                match took {
                    Ok(t) => times[c].ok.push(t),
                    Err(why) => {
                        times[c].failed += 1;
                        if first_failures.len() < 3 {
                            first_failures.push(why);
                        }
                    }
                }
            }
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let rss_after = server.rss_mb();
    println!(
        "flood ({label}; {}): {rounds} rounds, unloaded, flood and control interleaved; {}; \
         {}; load average {load_before} before, {} after",
        pace.describe(),
        match placement {
            Some(p) => format!(
                "flood sender on CPU {}, server and measured client on CPU {}",
                p.flood_cpu, p.other_cpu
            ),
            None => "no CPU placement (STRESS_FLOOD_PLACEMENT=none, or one CPU)".to_string(),
        },
        scheduling(),
        load_average(),
    );
    for (kind, name) in [
        (0, "an established connection"),
        (1, "a new connection, handshake included"),
    ] {
        let [unloaded, flood, control] = &times[kind];
        println!(
            "  1 MB download on {name}: unloaded {}, during the flood {}, during the control \
             {} (median [p25-p75] of {rounds}); flood/unloaded {}, control/unloaded {}, \
             flood/control {}; server CPU per download {:.1} ms unloaded, {:.1} flood, {:.1} \
             control",
            unloaded.describe(),
            flood.describe(),
            control.describe(),
            ratio(flood, unloaded),
            ratio(control, unloaded),
            ratio(flood, control),
            unloaded.cpu_per_download(),
            flood.cpu_per_download(),
            control.cpu_per_download(),
        );
    }
    for (sent, name) in sent.iter().zip(["to the server", "to the control"]) {
        println!("  floods sent {name}: {}", describe_floods(sent));
    }
    println!(
        "  server RSS {rss_before:.1} -> {rss_after:.1} MB (+{:.1} MB)",
        rss_after - rss_before
    );
    for why in first_failures {
        println!("  a failed download: {why}");
    }
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
        eprintln!(
            "usage: stress SERVER_BINARY [flood|flood-auto|flood-always|flood-never|abandon|\
             concurrent]..."
        );
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
            "flood" | "flood-auto" | "flood-always" | "flood-never" => {
                let allowed = allowed_cpus();
                // STRESS_FLOOD_PLACEMENT=none: every thread anywhere, to see
                // what the placement changes.
                let place = std::env::var("STRESS_FLOOD_PLACEMENT").map_or(true, |v| v != "none");
                let placement = (place && allowed.len() >= 2).then(|| Placement {
                    flood_cpu: allowed[0],
                    other_cpu: allowed[1],
                });
                // The server inherits this thread's CPUs when started.
                if let Some(p) = placement {
                    pin_current_thread(&[p.other_cpu]);
                }
                let modes: [(&str, &[&str], &str); 3] = [
                    ("flood-auto", &[], "--retry auto, the default"),
                    ("flood-always", &["--retry", "always"], "--retry always"),
                    ("flood-never", &["--no-retry"], "--no-retry"),
                ];
                for (_, extra, label) in modes
                    .into_iter()
                    .filter(|(name, _, _)| phase == "flood" || phase == *name)
                {
                    for pace in [Pace::Paced { rate: flood_rate() }, Pace::MaxRate] {
                        flood(binary, root.path(), &sha, extra, label, pace, placement);
                    }
                }
                pin_current_thread(&allowed);
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

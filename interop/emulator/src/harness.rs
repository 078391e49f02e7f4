//! Measuring the emulator against its configuration: probe datagrams sent
//! through a UDP-mode emulator on loopback, stamped by the kernel on both
//! sides, and compared with what the model says should have happened to the
//! same sends. Used by the accuracy tests and `vegas-emu measure`.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use vegas_sim::scenario::{LossModel, Scenario};
use vegas_sim::time::Nanos;

use crate::aqt;
use crate::clock::{tune_current_thread, Clock};
use crate::engine::{Direction, Engine, Paths};
use crate::runtime::Timing;
use crate::sockets::{prepare_receiving_socket, set_int_option, set_receive_timeout};
use crate::stats::{Histogram, RunReport};
use crate::udp::{self, UdpConfig};
use quiche_vegas::sockets::{timespec_nanos, SO_TIMESTAMPING};

/// What to send.
#[derive(Clone, Debug)]
pub struct ProbeSpec {
    pub direction: Direction,
    pub count: usize,
    /// UDP payload bytes of each probe (at least 4: the sequence number).
    pub payload: usize,
    /// Time between sends; zero sends back to back.
    pub gap: Duration,
}

/// One probe's fate.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRecord {
    pub seq: u32,
    /// When it was sent (harness clock).
    pub sent: Nanos,
    /// When the kernel received it at the far end (harness clock).
    pub received: Option<Nanos>,
    /// When the model, fed the same send times and without the loss
    /// model, delivers it (None: the model drops it in a queue).
    pub expected: Option<Nanos>,
    /// The AQT option it carried, microseconds.
    pub aqt_us: Option<u32>,
    /// The model's AQT for it, microseconds.
    pub expected_aqt_us: Option<u32>,
}

/// A probe run.
pub struct ProbeRun {
    pub records: Vec<ProbeRecord>,
    pub report: RunReport,
}

impl ProbeRun {
    pub fn received(&self) -> usize {
        self.records.iter().filter(|r| r.received.is_some()).count()
    }

    /// received − expected over the probes both have, nanoseconds (may be
    /// negative by the clocks' mapping error, a few microseconds).
    pub fn timing_errors(&self) -> Vec<i64> {
        self.records
            .iter()
            .filter_map(|r| Some(r.received? as i64 - r.expected? as i64))
            .collect()
    }

    /// |received − expected| as a histogram.
    pub fn error_histogram(&self) -> Histogram {
        let mut h = Histogram::default();
        for e in self.timing_errors() {
            h.record(e.unsigned_abs());
        }
        h
    }

    /// One-way delays (received − sent), nanoseconds.
    pub fn delays(&self) -> Vec<Nanos> {
        self.records
            .iter()
            .filter_map(|r| Some(r.received?.saturating_sub(r.sent)))
            .collect()
    }

    /// The rate at which the probes arrived, bit/s of link bytes
    /// (`wire_bytes` each), from the first arrival to the last.
    pub fn arrival_rate_bps(&self, wire_bytes: u32) -> Option<f64> {
        let mut times: Vec<Nanos> = self.records.iter().filter_map(|r| r.received).collect();
        times.sort_unstable();
        let (first, last) = (*times.first()?, *times.last()?);
        if times.len() < 2 || last <= first {
            return None;
        }
        Some((times.len() - 1) as f64 * f64::from(wire_bytes) * 8.0 / ((last - first) as f64 / 1e9))
    }
}

fn bind_probe_socket() -> anyhow::Result<UdpSocket> {
    let s = UdpSocket::bind("127.0.0.1:0").context("cannot bind a probe socket")?;
    prepare_receiving_socket(s.as_raw_fd()).context("cannot configure a probe socket")?;
    set_int_option(s.as_raw_fd(), libc::IPPROTO_IP, libc::IP_RECVOPTS, 1)
        .context("cannot ask for IP options")?;
    set_receive_timeout(s.as_raw_fd(), Duration::from_millis(50))?;
    Ok(s)
}

const SOF_TIMESTAMPING_TX_SOFTWARE: libc::c_int = 1 << 1;
const SOF_TIMESTAMPING_SOFTWARE: libc::c_int = 1 << 4;
const SOF_TIMESTAMPING_OPT_TSONLY: libc::c_int = 1 << 11;

/// Asks the kernel for a software timestamp of every datagram `socket`
/// sends, so that a probe's send time is when it left, not when the sending
/// thread read the clock (it may be preempted in between).
fn enable_send_timestamps(socket: &UdpSocket) -> bool {
    set_int_option(
        socket.as_raw_fd(),
        libc::SOL_SOCKET,
        SO_TIMESTAMPING,
        SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TSONLY,
    )
    .is_ok()
}

/// The kernel's send timestamp of the oldest datagram not yet collected
/// (from the socket's error queue), on `clock`.
fn collect_send_timestamp(socket: &UdpSocket, clock: &Clock) -> Option<Nanos> {
    let mut data = [0u8; 64];
    let r = quiche_vegas::sockets::receive(
        socket.as_raw_fd(),
        &mut data,
        libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
    )
    .ok()?;
    clock.from_kernel_timestamp(timespec_nanos(&r.software_time?))
}

/// A received probe: sequence number, kernel time, AQT (µs), sender.
type Probe = (u32, Nanos, Option<u32>, SocketAddr);

fn receive_probe(
    socket: &UdpSocket,
    clock: &Clock,
    buf: &mut [u8],
) -> anyhow::Result<Option<Probe>> {
    let r = match quiche_vegas::sockets::receive(socket.as_raw_fd(), buf, 0) {
        Ok(r) => r,
        Err(e) => {
            return match e.kind() {
                std::io::ErrorKind::WouldBlock
                | std::io::ErrorKind::TimedOut
                | std::io::ErrorKind::Interrupted => Ok(None),
                _ => Err(e).context("cannot receive a probe"),
            };
        }
    };
    let now = clock.now();
    let at = r
        .kernel_time
        .and_then(|t| clock.from_kernel_timestamp(timespec_nanos(&t)))
        .map_or(now, |t| t.min(now));
    let aqt_us = r.ip_options().and_then(aqt::find_in_ip_options);
    let n = r.len;
    if n < 4 {
        return Ok(None);
    }
    let seq = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    let from = r.source().context("probe from a strange address")?;
    Ok(Some((seq, at, aqt_us, from)))
}

/// Marks the registration datagram, which is not a probe.
const HELLO: u32 = u32::MAX;

/// Sends the probes through a UDP-mode emulator of `scenario` on loopback
/// and records what arrived. The scenario should have no cross traffic or
/// changes (the model's expectation assumes the probes are alone).
pub fn probe(
    scenario: &Scenario,
    paths: &Paths,
    timing: Timing,
    spec: &ProbeSpec,
) -> anyhow::Result<ProbeRun> {
    if spec.payload < 4 {
        bail!("probe payload must be at least 4 bytes");
    }
    // The links' delay jitter is drawn in the order datagrams leave each
    // link, which the model below cannot replay against real time: the
    // probes measure the emulator without it.
    let mut scenario = scenario.clone();
    for link in &mut scenario.links {
        link.delay_jitter = 0;
    }
    let scenario = &scenario;
    let client = bind_probe_socket()?;
    let server = bind_probe_socket()?;
    let server_addr = server.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let emulator = udp::start(
        scenario.clone(),
        paths.clone(),
        UdpConfig {
            listen: "127.0.0.1:0".parse()?,
            server: server_addr,
        },
        timing,
        stop,
    )?;
    let clock = Clock::new();
    let mut buf = vec![0u8; 65_536];

    // Register as a client: the hello crosses the return path, which tells
    // the server which address speaks for the client. Repeated in case a
    // lossy link eats it.
    let longest = scenario
        .links
        .iter()
        .map(|l| l.delay)
        .sum::<Nanos>()
        .saturating_mul(2)
        + 2_000_000_000;
    let mut hello_times = Vec::new();
    let mut upstream = None;
    for _ in 0..50 {
        let mut hello = vec![0u8; spec.payload.max(4)];
        hello[..4].copy_from_slice(&HELLO.to_be_bytes());
        hello_times.push(clock.now());
        client.send_to(&hello, emulator.listen)?;
        let until = clock.now() + longest / 10 + 200_000_000;
        while clock.now() < until {
            if let Some((seq, _, _, from)) = receive_probe(&server, &clock, &mut buf)? {
                if seq == HELLO {
                    upstream = Some(from);
                    break;
                }
            }
        }
        if upstream.is_some() {
            break;
        }
    }
    let Some(upstream) = upstream else {
        let _ = emulator.stop();
        bail!("the registration datagram never crossed the emulator");
    };
    // Late duplicates of the hello must not count as probes.
    let (tx_socket, rx_socket, to) = match spec.direction {
        Direction::ToServer => (&client, &server, emulator.listen),
        Direction::ToClient => (&server, &client, upstream),
    };

    let wire = u32::try_from(spec.payload)
        .unwrap_or(u32::MAX)
        .saturating_add(scenario.header_bytes);
    let received = std::thread::scope(|scope| -> anyhow::Result<_> {
        let receiver = scope.spawn(|| -> anyhow::Result<Vec<(u32, Nanos, Option<u32>)>> {
            tune_current_thread(true);
            let mut got = Vec::new();
            let mut buf = vec![0u8; 65_536];
            // The sends, the path's delays, a full queue's drain at the
            // slowest link, and a second to spare.
            let span = spec.gap.as_nanos() as u64 * spec.count as u64;
            let slowest = scenario
                .links
                .iter()
                .map(|l| l.rate_bps)
                .min()
                .unwrap_or(1)
                .max(1);
            let drain = (spec.count as u64)
                .saturating_mul(u64::from(wire) * 8)
                .saturating_mul(1_000_000_000)
                / slowest;
            let delays: Nanos = scenario.links.iter().map(|l| l.delay).sum();
            let deadline = clock.now() + 20_000_000 + span + delays + drain + 1_000_000_000;
            while clock.now() < deadline && got.len() < spec.count {
                if let Some((seq, at, aqt, _)) = receive_probe(rx_socket, &clock, &mut buf)? {
                    if seq != HELLO {
                        got.push((seq, at, aqt));
                    }
                }
            }
            Ok(got)
        });
        tune_current_thread(true);
        let kernel_stamps = enable_send_timestamps(tx_socket);
        let mut sent = Vec::with_capacity(spec.count);
        let mut payload = vec![0x5au8; spec.payload];
        let start = clock.now() + 20_000_000;
        let gap = spec.gap.as_nanos() as u64;
        for seq in 0..spec.count as u32 {
            let due = start + u64::from(seq) * gap;
            // Sleep, then spin the last 200 µs.
            loop {
                let now = clock.now();
                if now >= due {
                    break;
                }
                let left = due - now;
                if left > 300_000 {
                    std::thread::sleep(Duration::from_nanos(left - 200_000));
                } else {
                    std::hint::spin_loop();
                }
            }
            payload[..4].copy_from_slice(&seq.to_be_bytes());
            let t = clock.now();
            tx_socket.send_to(&payload, to)?;
            // The kernel's stamp when there is one, else the clock before
            // the send.
            let stamped = if kernel_stamps {
                collect_send_timestamp(tx_socket, &clock)
            } else {
                None
            };
            sent.push(stamped.map_or(t, |k| k.max(t)));
        }
        let got = receiver
            .join()
            .map_err(|_| anyhow::anyhow!("probe receiver panicked"))??;
        Ok((sent, got))
    })?;
    let report = emulator.stop()?;
    let (sent, got) = received;

    // What the model says about these sends, without its loss draws (which
    // real time cannot replay in the same order).
    let mut calm = scenario.clone();
    for link in &mut calm.links {
        link.loss = LossModel::None;
    }
    let mut model = Engine::new(&calm, paths);
    let mut out = Vec::new();
    for t in &hello_times {
        model.inject(
            *t,
            Direction::ToServer,
            0,
            HELLO.to_be_bytes().to_vec(),
            wire,
        );
    }
    for (seq, t) in sent.iter().enumerate() {
        let seq = seq as u32;
        model.inject(*t, spec.direction, 0, seq.to_be_bytes().to_vec(), wire);
    }
    model.run_until(u64::MAX);
    model.take_due(u64::MAX, &mut out);
    let mut expected = vec![None; sent.len()];
    for d in out {
        if d.direction == spec.direction {
            let seq = u32::from_be_bytes([d.payload[0], d.payload[1], d.payload[2], d.payload[3]]);
            if let Some(slot) = expected.get_mut(seq as usize) {
                *slot = Some((d.due, d.aqt.map(|a| (a / 1_000) as u32)));
            }
        }
    }
    let mut records: Vec<ProbeRecord> = sent
        .iter()
        .enumerate()
        .map(|(i, &t)| ProbeRecord {
            seq: i as u32,
            sent: t,
            received: None,
            expected: expected[i].map(|e| e.0),
            aqt_us: None,
            expected_aqt_us: expected[i].and_then(|e| e.1),
        })
        .collect();
    for (seq, at, aqt_us) in got {
        if let Some(r) = records.get_mut(seq as usize) {
            r.received = Some(at);
            r.aqt_us = aqt_us;
        }
    }
    Ok(ProbeRun { records, report })
}

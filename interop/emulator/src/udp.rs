//! UDP mode: the emulator as a UDP relay, for when network namespaces are
//! not available. Clients send to the emulator's listening address; each
//! client gets a socket of its own towards the server (so the server sees
//! one address per client, and replies find their way back); the link model
//! sits in between, both ways.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{anyhow, Context};
use vegas_sim::scenario::Scenario;

use crate::aqt;
use crate::clock::Clock;
use crate::engine::{Delivery, Direction, Engine, Paths};
use crate::runtime::{arrival_time, AqtOutcome, Msg, Output, Scheduler, SharedCounters, Timing};
use crate::sockets::{prepare_receiving_socket, receive, set_bytes_option, socket_addr};
use crate::stats::RunReport;

/// Most clients one emulator relays for; datagrams from further ones are
/// dropped (and counted as receive errors).
pub const MAX_CLIENTS: usize = 4096;
/// Largest datagram relayed.
const MAX_DATAGRAM: usize = 65_535;

/// Where the relay listens and where it forwards.
#[derive(Clone, Debug)]
pub struct UdpConfig {
    /// Clients send here (port 0: any free port; see [`Running::listen`]).
    pub listen: SocketAddr,
    /// The server the clients' datagrams go to.
    pub server: SocketAddr,
}

/// An emulator running in its own threads.
pub struct Running {
    /// The address clients send to.
    pub listen: SocketAddr,
    stop: Arc<AtomicBool>,
    scheduler: JoinHandle<anyhow::Result<RunReport>>,
}

impl Running {
    /// Stops the emulator and returns its statistics.
    pub fn stop(self) -> anyhow::Result<RunReport> {
        self.stop.store(true, Ordering::Relaxed);
        self.wait()
    }

    /// Waits for the emulator to stop by itself (duration, or the shared
    /// stop flag) and returns its statistics.
    pub fn wait(self) -> anyhow::Result<RunReport> {
        self.scheduler
            .join()
            .map_err(|_| anyhow!("the scheduler thread panicked"))?
    }
}

/// Starts the relay: binds `config.listen`, then runs the receive and
/// scheduler threads until `stop` is set or `timing.duration` has passed.
pub fn start(
    scenario: Scenario,
    paths: Paths,
    config: UdpConfig,
    timing: Timing,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<Running> {
    let listen = UdpSocket::bind(config.listen)
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    prepare_receiving_socket(listen.as_raw_fd()).context("cannot configure the socket")?;
    listen
        .set_nonblocking(true)
        .context("cannot configure the socket")?;
    let local = listen
        .local_addr()
        .context("cannot get the listening address")?;
    let listen = Arc::new(listen);
    let clock = Arc::new(Clock::new());
    let (tx, rx) = channel();

    let receiver = {
        let listen = Arc::clone(&listen);
        let clock = Arc::clone(&clock);
        let stop = Arc::clone(&stop);
        let header_bytes = scenario.header_bytes;
        let server = config.server;
        std::thread::Builder::new()
            .name("vegas-emu-recv".into())
            .spawn(move || receive_loop(&listen, server, header_bytes, &clock, &tx, &stop))
            .context("cannot start the receive thread")?
    };
    let scheduler = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("vegas-emu-sched".into())
            .spawn(move || -> anyhow::Result<RunReport> {
                let engine = Engine::new(&scenario, &paths);
                let mut output = UdpOutput {
                    listen,
                    server: config.server,
                    clients: Vec::new(),
                    options: HashMap::new(),
                };
                let counters = SharedCounters::default();
                let mut scheduler =
                    Scheduler::new(engine, &mut output, clock, timing, Arc::clone(&stop));
                let tuning = scheduler.run(&rx);
                // Whatever ended the run ends the receiver too.
                stop.store(true, Ordering::Relaxed);
                let report = scheduler.report("udp", &scenario, &paths, &counters, &tuning);
                drop(rx);
                receiver
                    .join()
                    .map_err(|_| anyhow!("the receive thread panicked"))??;
                Ok(report)
            })
            .context("cannot start the scheduler thread")?
    };
    Ok(Running {
        listen: local,
        stop,
        scheduler,
    })
}

struct Client {
    addr: SocketAddr,
    upstream: Arc<UdpSocket>,
}

/// Reads every socket (the listening one, and one per client towards the
/// server) and hands what arrives to the scheduler.
fn receive_loop(
    listen: &UdpSocket,
    server: SocketAddr,
    header_bytes: u32,
    clock: &Clock,
    tx: &Sender<Msg>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut clients: Vec<Client> = Vec::new();
    let mut by_addr: HashMap<SocketAddr, usize> = HashMap::new();
    let mut fds = vec![libc::pollfd {
        fd: listen.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    let wire = |len: usize| {
        u32::try_from(len)
            .unwrap_or(u32::MAX)
            .saturating_add(header_bytes)
    };
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: `fds` is a valid array of pollfd of the length given.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 100) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e).context("poll failed");
        }
        let ready: Vec<usize> = fds
            .iter()
            .enumerate()
            .filter(|(_, p)| p.revents != 0)
            .map(|(i, _)| i)
            .collect();
        for i in ready {
            fds[i].revents = 0;
            let fd = fds[i].fd;
            // Drain the socket.
            while let Some(r) = receive(fd, &mut buf).context("cannot receive")? {
                let now = clock.now();
                let (at, latency) = arrival_time(clock, r.kernel_time, now);
                let payload = buf[..r.len].to_vec();
                let msg = if i == 0 {
                    let Some(from) = socket_addr(&r.from) else {
                        continue;
                    };
                    let endpoint = match by_addr.get(&from) {
                        Some(&e) => e,
                        None => {
                            if clients.len() >= MAX_CLIENTS {
                                continue;
                            }
                            let upstream = upstream_socket(server)?;
                            let endpoint = clients.len();
                            fds.push(libc::pollfd {
                                fd: upstream.as_raw_fd(),
                                events: libc::POLLIN,
                                revents: 0,
                            });
                            clients.push(Client {
                                addr: from,
                                upstream: Arc::clone(&upstream),
                            });
                            by_addr.insert(from, endpoint);
                            if tx
                                .send(Msg::NewClient {
                                    endpoint,
                                    addr: from,
                                    upstream,
                                })
                                .is_err()
                            {
                                return Ok(());
                            }
                            endpoint
                        }
                    };
                    Msg::Arrival {
                        at,
                        latency,
                        direction: Direction::ToServer,
                        endpoint,
                        wire_bytes: wire(payload.len()),
                        payload,
                    }
                } else {
                    Msg::Arrival {
                        at,
                        latency,
                        direction: Direction::ToClient,
                        endpoint: i - 1,
                        wire_bytes: wire(payload.len()),
                        payload,
                    }
                };
                if tx.send(msg).is_err() {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// A client's socket towards the server: connected, so that it hears only
/// the server.
fn upstream_socket(server: SocketAddr) -> anyhow::Result<Arc<UdpSocket>> {
    let bind: SocketAddr = if server.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = UdpSocket::bind(bind).context("cannot open a socket towards the server")?;
    socket
        .connect(server)
        .with_context(|| format!("cannot address the server {server}"))?;
    prepare_receiving_socket(socket.as_raw_fd()).context("cannot configure a socket")?;
    socket
        .set_nonblocking(true)
        .context("cannot configure a socket")?;
    Ok(Arc::new(socket))
}

struct UdpOutput {
    listen: Arc<UdpSocket>,
    server: SocketAddr,
    clients: Vec<Option<Client>>,
    /// The IP options each socket currently sends with.
    options: HashMap<RawFd, [u8; aqt::OPTION_LEN]>,
}

impl UdpOutput {
    /// Makes `socket` send with the AQT option of `aqt_ns`, or without any
    /// option.
    fn set_aqt(&mut self, socket: &UdpSocket, aqt_ns: Option<u64>) -> AqtOutcome {
        let fd = socket.as_raw_fd();
        match aqt_ns {
            Some(ns) => {
                let option = aqt::encode_option(ns);
                if self.options.get(&fd) == Some(&option) {
                    return AqtOutcome::Marked;
                }
                match set_bytes_option(fd, libc::IPPROTO_IP, libc::IP_OPTIONS, &option) {
                    Ok(()) => {
                        self.options.insert(fd, option);
                        AqtOutcome::Marked
                    }
                    Err(_) => AqtOutcome::Failed,
                }
            }
            None => {
                if self.options.remove(&fd).is_some() {
                    set_bytes_option(fd, libc::IPPROTO_IP, libc::IP_OPTIONS, &[]).ok();
                }
                AqtOutcome::None
            }
        }
    }
}

impl Output for UdpOutput {
    fn send(&mut self, delivery: Delivery) -> (io::Result<()>, AqtOutcome) {
        let Some(Some(client)) = self.clients.get(delivery.endpoint) else {
            return (
                Err(io::Error::new(io::ErrorKind::NotFound, "unknown client")),
                AqtOutcome::None,
            );
        };
        let (socket, to) = match delivery.direction {
            Direction::ToClient => (Arc::clone(&self.listen), client.addr),
            Direction::ToServer => (Arc::clone(&client.upstream), self.server),
        };
        let aqt = self.set_aqt(&socket, delivery.aqt);
        let result = socket.send_to(&delivery.payload, to).map(|_| ());
        (result, aqt)
    }

    fn new_client(&mut self, endpoint: usize, addr: SocketAddr, upstream: Arc<UdpSocket>) {
        if self.clients.len() <= endpoint {
            self.clients.resize_with(endpoint + 1, || None);
        }
        self.clients[endpoint] = Some(Client { addr, upstream });
    }
}

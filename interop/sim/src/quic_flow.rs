//! A QUIC flow: a real quiche client and server, with the applications the
//! apps use (`quiche_vegas::endpoint`, `quiche_vegas::transfer`), driven on
//! virtual time.
//!
//! The client asks for one body over HTTP/3 or hq-interop; the server serves
//! `transfer_bytes` pseudo-random bytes (a `SyntheticSource`), or an endless
//! body for flows that run until their stop time. The client hashes a
//! finite body, and the flow checks the hash against the source's; an
//! endless body never completes, so it is only counted.
//!
//! Both endpoints offer our QUIC extensions as the flow's
//! `receive_timestamps` and `queueing_time_frame` say (both on by default),
//! and every datagram that crossed AQT-enabled routers reaches its endpoint
//! with the queueing time they accumulated
//! (`Endpoint::on_datagram_with_queueing_time`).
//!
//! Before every call into a connection the flow sets quiche's virtual time
//! and reseeds quiche's random generator with a number that depends only on
//! this endpoint and how many calls it has had, so that one flow's random
//! choices do not depend on what other flows did before.

use std::fs::File;
use std::io::BufWriter;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use quiche_vegas::cc_select::{CcSelection, ResolvedCc};
use quiche_vegas::endpoint::Endpoint;
use quiche_vegas::settings::{ExtensionSettings, TransportSettings};
use quiche_vegas::tls::CertFiles;
use quiche_vegas::transfer::{ClientSession, ServerSession, SyntheticSource};
use vegas_cc::SavedPath;

use crate::network::{Datagram, Owner};
use crate::random::{splitmix64, stream_seed, RandomStream};
use crate::report::ExtensionSummary;
use crate::scenario::FlowConfig;
use crate::time::Nanos;

/// Body size of a flow that runs until it is stopped: more than any link
/// carries in a simulated run.
const ENDLESS_BODY_BYTES: u64 = 1 << 50;

/// How early the outbox may release a paced datagram: not at all, since
/// the simulator wakes an endpoint at the exact nanosecond.
///
/// The apps' outbox asks quiche for the next datagram only when the held one
/// leaves. Asking for everything at once and scheduling each datagram at its
/// `SendInfo.at` instead would make quiche build (and timestamp) packets long
/// before they leave, so every RTT sample would include the pacing delay of
/// the whole flight; holding one datagram limits that to one pacing interval,
/// as on a real host.
const PACING_GRANULARITY: Duration = Duration::ZERO;

/// The two ends of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    fn index(self) -> usize {
        match self {
            Side::Client => 0,
            Side::Server => 1,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// Where the flow is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowState {
    NotStarted,
    Running,
    /// Transfer complete, stopped, or connection closed: no longer counted.
    Finished,
}

/// The simulator's clock as quiche sees it.
#[derive(Clone, Copy, Debug)]
pub struct VirtualClock {
    /// The `Instant` that stands for simulated time zero.
    pub base: Instant,
}

impl VirtualClock {
    pub fn instant(&self, now: Nanos) -> Instant {
        self.base + Duration::from_nanos(now)
    }

    /// Simulated time of `instant`, rounded down to the nanosecond.
    pub fn nanos(&self, instant: Instant) -> Nanos {
        u64::try_from(instant.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Randomness handed to quiche, one stream per endpoint.
#[derive(Clone, Copy, Debug)]
struct QuicheSeed {
    seed: u64,
    calls: u64,
}

impl QuicheSeed {
    fn next(&mut self) -> u64 {
        self.calls += 1;
        let mut state = self.seed ^ self.calls.wrapping_mul(0x2545_f491_4f6c_dd1d);
        splitmix64(&mut state)
    }
}

/// What happened in the flow that the simulator must act on.
#[derive(Default)]
pub struct FlowOutput {
    /// Datagrams to put on the network, with their departure times.
    pub datagrams: Vec<(Nanos, Datagram)>,
    /// Wake-up timers to set: side, and its new time (`None`: none).
    pub wakeups: Vec<(Side, Option<Nanos>)>,
    /// Payload buffers of delivered datagrams, reused for the next ones
    /// sent: a datagram then costs no allocation.
    pub spare_payloads: Vec<Vec<u8>>,
}

/// Spare payload buffers kept at most: more than a run has in flight only
/// when a flow's window collapses, and then they are freed.
const MAX_SPARE_PAYLOADS: usize = 4096;

impl FlowOutput {
    /// Keeps a delivered datagram's buffer for a later one.
    pub fn recycle(&mut self, payload: Vec<u8>) {
        if self.spare_payloads.len() < MAX_SPARE_PAYLOADS {
            self.spare_payloads.push(payload);
        }
    }
}

/// Running measures of a flow.
#[derive(Clone, Debug, Default)]
pub struct FlowMeasures {
    pub started_at: Option<Nanos>,
    pub completed_at: Option<Nanos>,
    pub finished_at: Option<Nanos>,
    /// Set when the transfer completed: the body's SHA-256 matched.
    pub verified: Option<bool>,
    pub failure: Option<String>,
    /// Sum and count of the sender's smoothed RTT, sampled whenever a
    /// datagram reached the server after the handshake.
    pub srtt_sum: f64,
    pub srtt_samples: u64,
    /// Ground truth from the network: queueing of the data-direction
    /// datagrams that reached the client.
    pub forward_queueing_sum: Nanos,
    pub forward_datagrams: u64,
    /// AQT values handed to each endpoint (sum, count).
    pub aqt_to_client: (Nanos, u64),
    pub aqt_to_server: (Nanos, u64),
}

pub struct QuicFlow {
    /// Index among the scenario's flows (datagrams name their flow by it).
    pub index: usize,
    pub config: FlowConfig,
    /// The controller as it runs, with its parameters (`vegas(alpha=1 ...)`).
    pub cc_description: String,
    /// The server's controller, for Careful Resume's per-connection spec.
    server_cc: ResolvedCc,
    /// What the server resumes (Careful Resume on, `Some`: saved state
    /// found), set by the simulation before the flow starts.
    pub resume_seed: Option<SavedPath>,
    /// What the server measured, as saved when the flow finished.
    pub saved_path: Option<SavedPath>,
    pub state: FlowState,
    pub forward_route: usize,
    pub return_route: usize,
    client_config: quiche::Config,
    server_config: quiche::Config,
    client_addr: SocketAddr,
    server_addr: SocketAddr,
    source: SyntheticSource,
    client: Option<Endpoint<ClientSession>>,
    server: Option<Endpoint<ServerSession>>,
    /// Per side: when the endpoint asked to be woken (the simulator's
    /// timer for it).
    wakeups: [Option<Nanos>; 2],
    quiche_seeds: [QuicheSeed; 2],
    connection_ids: RandomStream,
    /// Where the `.sqlog` files go, if anywhere.
    qlog_dir: Option<std::path::PathBuf>,
    header_bytes: u32,
    pub measures: FlowMeasures,
}

/// Settings every flow of a run shares.
pub struct FlowEnvironment<'a> {
    pub seed: u64,
    pub certificate: &'a CertFiles,
    pub max_datagram_bytes: usize,
    pub header_bytes: u32,
    pub qlog_dir: Option<&'a Path>,
}

impl QuicFlow {
    /// `address_index`: the flow whose endpoint addresses this one uses (its
    /// own index, or the first flow of its `after` chain).
    pub fn new(
        index: usize,
        address_index: usize,
        config: FlowConfig,
        forward_route: usize,
        return_route: usize,
        env: &FlowEnvironment,
    ) -> anyhow::Result<Self> {
        let settings = TransportSettings {
            cc: CcSelection {
                name: config.cc.clone(),
                params: config.cc_params.clone(),
            },
            extensions: ExtensionSettings {
                enabled: true,
                receive_timestamps: config.receive_timestamps,
                queueing_time_frame: config.queueing_time_frame,
                ack_frequency: config.ack_frequency,
            },
            idle_timeout_ms: config.idle_timeout_ms,
            full_size_packets: config.full_size_packets,
            ack_every: config.ack_every,
            max_stream_data: config.stream_window_bytes,
            max_data: config.connection_window_bytes,
            ..TransportSettings::default()
        };
        let alpn = [config.protocol.alpn()];
        // Neither end checks a certificate: no CA store to load.
        let (mut client_config, _) = settings
            .build_config_without_ca_store(&alpn)
            .with_context(|| format!("flow {}", config.name))?;
        let (mut server_config, resolved) = settings
            .build_config_without_ca_store(&alpn)
            .with_context(|| format!("flow {}", config.name))?;
        for c in [&mut client_config, &mut server_config] {
            c.set_max_send_udp_payload_size(env.max_datagram_bytes);
            if let Some(packets) = config.initial_window_packets {
                c.set_initial_congestion_window_packets(packets);
            }
        }
        // The simulated server's certificate is a fixed self-signed one.
        client_config.verify_peer(false);
        quiche_vegas::tls::load(&mut server_config, env.certificate)?;

        let name = &config.name;
        // Addresses only label the two ends inside the simulator; nothing is
        // sent to them. Loopback ones, so that no log suggests otherwise.
        let host = u8::try_from(address_index % 250).unwrap_or(0) + 1;
        let client_addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 1, 0, host)), 40_000);
        let server_addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 2, 0, host)), 443);
        let body = config.transfer_bytes.unwrap_or(ENDLESS_BODY_BYTES);
        Ok(QuicFlow {
            index,
            cc_description: resolved.to_string(),
            server_cc: resolved,
            resume_seed: None,
            saved_path: None,
            state: FlowState::NotStarted,
            forward_route,
            return_route,
            client_config,
            server_config,
            client_addr,
            server_addr,
            source: SyntheticSource::new(body, stream_seed(env.seed, &format!("flow:{name}:body"))),
            client: None,
            server: None,
            wakeups: [None; 2],
            quiche_seeds: [
                QuicheSeed {
                    seed: stream_seed(env.seed, &format!("flow:{name}:client:quiche")),
                    calls: 0,
                },
                QuicheSeed {
                    seed: stream_seed(env.seed, &format!("flow:{name}:server:quiche")),
                    calls: 0,
                },
            ],
            connection_ids: RandomStream::named(env.seed, &format!("flow:{name}:connection-ids")),
            qlog_dir: env.qlog_dir.map(Path::to_path_buf),
            header_bytes: env.header_bytes,
            measures: FlowMeasures::default(),
            config,
        })
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Sets quiche's clock and random seed for a call into `side`.
    fn enter(&mut self, clock: &VirtualClock, now: Nanos, side: Side) {
        // quiche's wall clock (qlog's reference time) is the second value.
        quiche::virtual_env::set_virtual_time(Some((
            clock.instant(now),
            crate::time::WALL_CLOCK_AT_ZERO + Duration::from_nanos(now),
        )));
        let seed = self.quiche_seeds[side.index()].next();
        quiche::virtual_env::set_random_seed(Some(seed));
    }

    fn new_connection_id(&mut self) -> quiche::ConnectionId<'static> {
        let mut id = Vec::with_capacity(quiche::MAX_CONN_ID_LEN);
        while id.len() < quiche::MAX_CONN_ID_LEN {
            id.extend_from_slice(&self.connection_ids.next_u64().to_le_bytes());
        }
        id.truncate(quiche::MAX_CONN_ID_LEN);
        quiche::ConnectionId::from_vec(id)
    }

    fn attach_qlog(&self, conn: &mut quiche::Connection, side: Side) -> anyhow::Result<()> {
        let Some(dir) = &self.qlog_dir else {
            return Ok(());
        };
        let path = dir.join(format!("{}-{}.sqlog", self.config.name, side.as_str()));
        let file =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        conn.set_qlog(
            Box::new(BufWriter::new(file)),
            format!("vegas-sim {} {}", self.config.name, side.as_str()),
            format!(
                "flow {} ({}), {}",
                self.config.name,
                side.as_str(),
                self.cc_description
            ),
        );
        Ok(())
    }

    /// The flow's start time: the client connects and sends its first
    /// flight.
    pub fn start(
        &mut self,
        clock: &VirtualClock,
        now: Nanos,
        out: &mut FlowOutput,
    ) -> anyhow::Result<()> {
        self.state = FlowState::Running;
        self.measures.started_at = Some(now);
        let scid = self.new_connection_id();
        self.enter(clock, now, Side::Client);
        let mut conn = quiche::connect(
            Some(crate::certificate::SERVER_NAME),
            &scid,
            self.client_addr,
            self.server_addr,
            &mut self.client_config,
        )
        .map_err(|e| anyhow!("flow {}: cannot start the client: {e}", self.config.name))?;
        self.attach_qlog(&mut conn, Side::Client)?;
        let path = format!("/{}", self.config.name);
        let app = ClientSession::new(
            self.config.protocol,
            crate::certificate::SERVER_NAME,
            &[path],
            None,
        )?;
        // An endless body never completes: no hash will be checked, so none
        // is computed (the summary says so). Finite downloads are verified.
        let app = if self.config.transfer_bytes.is_none() {
            app.without_body_hash()
        } else {
            app
        };
        self.client = Some(Endpoint::new(conn, app, PACING_GRANULARITY));
        self.service(clock, now, Side::Client, out);
        Ok(())
    }

    /// The stop time of a flow that is still running: the client closes the
    /// connection, and the flow counts what it delivered up to now.
    pub fn stop(&mut self, clock: &VirtualClock, now: Nanos, out: &mut FlowOutput) {
        if self.state != FlowState::Running {
            return;
        }
        self.enter(clock, now, Side::Client);
        if let Some(client) = self.client.as_mut() {
            client.app.abandon("stopped at the flow's stop time");
            let code = match self.config.protocol {
                quiche_vegas::transfer::HttpVersion::Http3 => 0x100,
                quiche_vegas::transfer::HttpVersion::Http09 => 0,
            };
            client.conn.close(true, code, b"stop time").ok();
        }
        self.finish(now);
        self.service(clock, now, Side::Client, out);
    }

    /// A datagram reached one of the endpoints.
    pub fn deliver(
        &mut self,
        clock: &VirtualClock,
        now: Nanos,
        mut datagram: Datagram,
        towards_client: bool,
        out: &mut FlowOutput,
    ) -> anyhow::Result<()> {
        let side = if towards_client {
            Side::Client
        } else {
            Side::Server
        };
        if let Some(aqt) = datagram.aqt {
            let (sum, count) = if towards_client {
                &mut self.measures.aqt_to_client
            } else {
                &mut self.measures.aqt_to_server
            };
            *sum += aqt;
            *count += 1;
        }
        if towards_client {
            self.measures.forward_queueing_sum += datagram.queueing;
            self.measures.forward_datagrams += 1;
        }
        // What the AQT-enabled routers it crossed reported, handed to quiche
        // with the datagram (the QUIC form of RoVegas's AQT IP option).
        let aqt = datagram.aqt.map(Duration::from_nanos);
        self.enter(clock, now, side);
        match side {
            Side::Client => {
                let Some(client) = self.client.as_mut() else {
                    return Ok(());
                };
                client.on_datagram_with_queueing_time(
                    &mut datagram.payload,
                    self.server_addr,
                    self.client_addr,
                    aqt,
                );
            }
            Side::Server => {
                if self.server.is_none() && !self.accept(&datagram.payload)? {
                    return Ok(());
                }
                let Some(server) = self.server.as_mut() else {
                    return Ok(());
                };
                server.on_datagram_with_queueing_time(
                    &mut datagram.payload,
                    self.client_addr,
                    self.server_addr,
                    aqt,
                );
                if server.conn.is_established() {
                    if let Some(path) = server.conn.path_stats().next() {
                        self.measures.srtt_sum += path.rtt.as_secs_f64();
                        self.measures.srtt_samples += 1;
                    }
                }
            }
        }
        out.recycle(datagram.payload);
        self.service(clock, now, side, out);
        Ok(())
    }

    /// Creates the server's connection for the client's first Initial.
    /// Returns false (datagram ignored) for anything else.
    fn accept(&mut self, payload: &[u8]) -> anyhow::Result<bool> {
        let mut header_bytes = payload.to_vec();
        let Ok(header) = quiche::Header::from_slice(&mut header_bytes, quiche::MAX_CONN_ID_LEN)
        else {
            return Ok(false);
        };
        if header.ty != quiche::Type::Initial {
            return Ok(false);
        }
        let scid = self.new_connection_id();
        if self.config.careful_resume {
            quiche_vegas::careful_resume::select_with_resume(
                &mut self.server_config,
                &self.server_cc,
                self.resume_seed,
                self.config.careful_resume_loss,
            );
        }
        let mut conn = quiche::accept(
            &scid,
            None,
            self.server_addr,
            self.client_addr,
            &mut self.server_config,
        )
        .map_err(|e| anyhow!("flow {}: the server cannot accept: {e}", self.config.name))?;
        self.attach_qlog(&mut conn, Side::Server)?;
        let app = ServerSession::new(Arc::new(self.source));
        let mut server = Endpoint::new(conn, app, PACING_GRANULARITY);
        server.set_tail_repeat(self.config.tail_repeat);
        self.server = Some(server);
        Ok(true)
    }

    /// The wake-up timer of `side` went off (the simulator holds only the
    /// latest one asked for).
    pub fn wake(&mut self, clock: &VirtualClock, now: Nanos, side: Side, out: &mut FlowOutput) {
        self.wakeups[side.index()] = None;
        self.enter(clock, now, side);
        let instant = clock.instant(now);
        match side {
            Side::Client => {
                if let Some(c) = self.client.as_mut() {
                    c.on_timer(instant)
                }
            }
            Side::Server => {
                if let Some(s) = self.server.as_mut() {
                    s.on_timer(instant)
                }
            }
        }
        self.service(clock, now, side, out);
    }

    /// After anything happened at `side`: let the application act, send what
    /// is due, note the transfer's progress and ask for the next wake-up.
    fn service(&mut self, clock: &VirtualClock, now: Nanos, side: Side, out: &mut FlowOutput) {
        let instant = clock.instant(now);
        let (route, towards_client) = match side {
            Side::Client => (self.return_route, false),
            Side::Server => (self.forward_route, true),
        };
        let (flow, header_bytes) = (self.index, self.header_bytes);
        let FlowOutput {
            datagrams,
            spare_payloads,
            ..
        } = out;
        let mut transmit = |data: &[u8], info: &quiche::SendInfo| -> std::io::Result<()> {
            let mut payload = spare_payloads.pop().unwrap_or_default();
            payload.clear();
            payload.extend_from_slice(data);
            datagrams.push((
                clock.nanos(info.at).max(now),
                Datagram {
                    wire_bytes: u32::try_from(data.len()).unwrap_or(u32::MAX) + header_bytes,
                    payload,
                    owner: Owner::Quic {
                        flow,
                        towards_client,
                    },
                    route,
                    hop: 0,
                    enqueued_at: now,
                    queueing: 0,
                    aqt: None,
                },
            ));
            Ok(())
        };
        let next_wakeup = match side {
            Side::Client => self.client.as_mut().map(|c| {
                c.flush(instant, &mut transmit);
                c.next_wakeup()
            }),
            Side::Server => self.server.as_mut().map(|s| {
                s.flush(instant, &mut transmit);
                s.next_wakeup()
            }),
        }
        .flatten();

        let wakeup = &mut self.wakeups[side.index()];
        let at = next_wakeup.map(|i| clock.nanos(i).max(now));
        if at != *wakeup {
            *wakeup = at;
            out.wakeups.push((side, at));
        }
        self.check_progress(now);
    }

    /// Notes completion, verification or failure of the transfer.
    fn check_progress(&mut self, now: Nanos) {
        if self.state != FlowState::Running {
            return;
        }
        let Some(client) = self.client.as_ref() else {
            return;
        };
        if client.app.is_finished() {
            let summaries = client.app.summaries();
            let expected = self.source.sha256_hex();
            let verified = client.app.all_succeeded()
                && summaries
                    .iter()
                    .all(|s| s.sha256() == Some(expected.as_str()));
            self.measures.verified = Some(verified);
            if verified {
                self.measures.completed_at = Some(now);
            } else {
                self.measures.failure = Some(format!("transfer failed: {summaries:?}"));
            }
            self.finish(now);
        } else if client.conn.is_closed() {
            let reason = client
                .conn
                .peer_error()
                .map(|e| format!("closed by the server: {e:?}"))
                .or_else(|| {
                    client
                        .conn
                        .local_error()
                        .map(|e| format!("closed by the client: {e:?}"))
                })
                .unwrap_or_else(|| "connection closed (idle timeout)".to_string());
            self.measures.failure = Some(reason);
            self.finish(now);
        }
    }

    fn finish(&mut self, now: Nanos) {
        self.state = FlowState::Finished;
        self.measures.finished_at = Some(now);
    }

    /// Whether the client hashes the body it receives (not for an endless
    /// one, whose hash no one checks).
    pub fn hashes_body(&self) -> bool {
        self.client.as_ref().is_none_or(|c| c.app.hashes_bodies())
    }

    /// Body bytes the client has received.
    pub fn bytes_delivered(&self) -> u64 {
        self.client.as_ref().map_or(0, |c| c.app.bytes_received())
    }

    /// The client's address: the key of what Careful Resume saves.
    pub fn client_ip(&self) -> std::net::IpAddr {
        self.client_addr.ip()
    }

    /// What the server measured of the path for the next connection.
    pub fn observed_path(&self) -> Option<SavedPath> {
        self.server
            .as_ref()
            .and_then(|s| quiche_vegas::careful_resume::observed_path(&s.conn))
    }

    /// The data sender's (the server's) view of the path, if it exists.
    pub fn sender_path(&self) -> Option<quiche::PathStats> {
        self.server
            .as_ref()
            .and_then(|s| s.conn.path_stats().next())
    }

    /// The data sender's connection counters.
    pub fn sender_stats(&self) -> Option<quiche::Stats> {
        self.server.as_ref().map(|s| s.conn.stats())
    }

    /// The flow's extension switches and what of them reached the data
    /// sender's controller.
    pub fn extension_summary(&self) -> ExtensionSummary {
        let handed = self
            .server
            .as_ref()
            .map(|s| s.conn.extension_stats().handed);
        // ACK frequency: what the server asked and how many ACKs the client
        // (the data receiver) sent.
        let server_ext = self.server.as_ref().map(|s| s.conn.extension_stats());
        let client_ext = self.client.as_ref().map(|c| c.conn.extension_stats());
        ExtensionSummary {
            receive_timestamps: self.config.receive_timestamps,
            queueing_time_frame: self.config.queueing_time_frame,
            receive_times_handed: handed.map_or(0, |h| h.receive_times),
            forward_queueing_handed: handed.map_or(0, |h| h.forward_queueing),
            backward_queueing_handed: handed.map_or(0, |h| h.backward_queueing),
            ack_frequency: self.config.ack_frequency,
            ack_frequency_frames_sent: server_ext.map_or(0, |e| e.ack_frequency_frames_sent),
            ack_eliciting_threshold: server_ext.and_then(|e| e.requested_ack_eliciting_threshold),
            receiver_acks_sent: client_ext.map_or(0, |e| e.application_acks_sent),
        }
    }

    /// Both endpoints have nothing more to do.
    pub fn is_quiet(&self) -> bool {
        self.client.as_ref().is_none_or(|c| c.is_done())
            && self.server.as_ref().is_none_or(|s| s.is_done())
    }
}

//! Transport settings shared by the apps and the simulator, and the
//! `quiche::Config` they make.

use anyhow::Context;

use crate::cc_select::{CcSelection, ResolvedCc, DEFAULT_CC_ALGORITHM};

/// Connection flow-control window. A 600 ms satellite path at 100 Mbit/s
/// holds 7.5 MB in flight; 100 MB leaves room for faster paths and deep
/// queues.
pub const DEFAULT_MAX_DATA: u64 = 100_000_000;
/// Per-stream flow-control window. A receiver reads only in order, and a
/// hole whose retransmission is lost again stands two round trips: at 250
/// Mbit/s and 600 ms that is 36 MB the sender must be allowed beyond it,
/// and the window is granted again only once half of it has been read.
/// With 50 MB the sender of picoquic's lossy 250/3 case (1 packet in 64)
/// stood blocked for 0.9 s and 0.35 s of an 8.3 s download; with 100 MB
/// it never blocks and takes 7.2 s (docs/satellite.md, "The lossy 250/3
/// row").
pub const DEFAULT_MAX_STREAM_DATA: u64 = 100_000_000;
/// Idle timeout in milliseconds (quiche's apps use the same default).
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 30_000;
/// Largest idle timeout the apps accept (10 minutes). 0, which QUIC reads as
/// "no idle timeout" and would keep a vanished peer's state forever, is
/// refused too.
pub const MAX_IDLE_TIMEOUT_MS: u64 = 600_000;
/// UDP payload size of every datagram (quiche's apps use the same).
pub const MAX_DATAGRAM_SIZE: usize = 1350;
/// Largest UDP datagram accepted on receive.
pub const MAX_RECV_DATAGRAM_SIZE: usize = 65_535;
/// The data receiver's ACK ratio: an ACK per ack-eliciting packet, as stock
/// quiche. Satellite scenarios thin it (docs/sender.md).
pub const DEFAULT_ACK_EVERY: u64 = 1;
/// Largest ACK ratio accepted: more packets per ACK than the receive
/// timestamps one ACK carries ([`RECEIVE_TIMESTAMPS_PER_ACK`]) would lose
/// timestamps.
pub const MAX_ACK_EVERY: u64 = 64;
/// Concurrent request streams each side allows the other.
pub const MAX_STREAMS_BIDI: u64 = 128;
/// Unidirectional streams (HTTP/3 control and QPACK streams).
pub const MAX_STREAMS_UNI: u64 = 16;

/// Receive timestamps we ask the peer for per ACK (the
/// max_receive_timestamps_per_ack we advertise): more than the packets an ACK
/// usually covers.
pub const RECEIVE_TIMESTAMPS_PER_ACK: u64 = 64;
/// The receive_timestamps_exponent we advertise: timestamps to the
/// microsecond.
pub const RECEIVE_TIMESTAMPS_EXPONENT: u64 = 0;

/// Our QUIC extensions (docs/extensions.md): what a connection offers the
/// peer. Whatever is set here, a peer without the extensions interoperates
/// unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtensionSettings {
    /// `false`: behave like stock quiche: advertise nothing and do not honour
    /// the peer's requests either (`Config::enable_extensions(false)`); the
    /// two fields below are then ignored.
    pub enabled: bool,
    /// Ask the peer for ACK receive timestamps (draft-ietf-quic-receive-ts-02):
    /// advertise max_receive_timestamps_per_ack = [`RECEIVE_TIMESTAMPS_PER_ACK`]
    /// with exponent [`RECEIVE_TIMESTAMPS_EXPONENT`]. Without it we still send
    /// them to a peer that asks.
    pub receive_timestamps: bool,
    /// Accept QUEUEING_TIME frames (the peer's echo of the forward queueing
    /// time AQT-enabled routers reported). Without it we still echo to a peer
    /// that accepts them.
    pub queueing_time_frame: bool,
    /// ACK frequency (draft-ietf-quic-ack-frequency): advertise
    /// min_ack_delay, so the peer may thin our ACKs with ACK_FREQUENCY
    /// (which we honour), and as data sender thin the ACKs of a peer that
    /// advertised it too, to about four per window (docs/extensions.md).
    pub ack_frequency: bool,
}

impl Default for ExtensionSettings {
    /// Everything on.
    fn default() -> Self {
        ExtensionSettings {
            enabled: true,
            receive_timestamps: true,
            queueing_time_frame: true,
            ack_frequency: true,
        }
    }
}

impl ExtensionSettings {
    /// Like stock quiche.
    pub const NONE: ExtensionSettings = ExtensionSettings {
        enabled: false,
        receive_timestamps: false,
        queueing_time_frame: false,
        ack_frequency: false,
    };

    /// Applies these settings to `config`.
    pub fn apply(&self, config: &mut quiche::Config) -> anyhow::Result<()> {
        config.enable_extensions(self.enabled);
        if !self.enabled {
            return Ok(());
        }
        if self.receive_timestamps {
            config.set_max_receive_timestamps_per_ack(RECEIVE_TIMESTAMPS_PER_ACK);
            config
                .set_receive_timestamps_exponent(RECEIVE_TIMESTAMPS_EXPONENT)
                .context("invalid receive_timestamps_exponent")?;
        } else {
            config.set_max_receive_timestamps_per_ack(0);
        }
        config.enable_queueing_time_frame(self.queueing_time_frame);
        config.enable_ack_frequency(self.ack_frequency);
        Ok(())
    }
}

impl std::fmt::Display for ExtensionSettings {
    /// `receive-timestamps, queueing-time-frame`, one of them, `offers none`
    /// or `none (stock)`.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if !self.enabled {
            return f.write_str("none (stock)");
        }
        let offered: Vec<&str> = [
            (self.receive_timestamps, "receive-timestamps"),
            (self.queueing_time_frame, "queueing-time-frame"),
            (self.ack_frequency, "ack-frequency"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if offered.is_empty() {
            f.write_str("offers none")
        } else {
            f.write_str(&offered.join(", "))
        }
    }
}

/// Command-line flags both apps take, named as in quiche's own apps where
/// they overlap: congestion control, flow control, idle timeout, extensions.
#[derive(clap::Args, Clone, Debug)]
pub struct TransportFlags {
    /// Congestion control algorithm (see --list-cc-algorithms); any case,
    /// quiche's aliases accepted (bbr and bbr2_gcongestion are bbr2).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_CC_ALGORITHM)]
    pub cc_algorithm: String,

    /// A parameter of the congestion control algorithm; repeatable.
    /// `--cc-param help` prints the parameters of --cc-algorithm (type,
    /// default, accepted values, meaning) and exits.
    #[arg(long, value_name = "KEY=VALUE")]
    pub cc_param: Vec<String>,

    /// Print the congestion control algorithms and exit.
    #[arg(long)]
    pub list_cc_algorithms: bool,

    /// Connection flow-control window in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_DATA)]
    pub max_data: u64,

    /// Stream flow-control window in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_STREAM_DATA)]
    pub max_stream_data: u64,

    /// Idle timeout in milliseconds, 1 to 600000 (0, no timeout, is
    /// refused: a vanished peer would be kept forever).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_IDLE_TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..=MAX_IDLE_TIMEOUT_MS))]
    pub idle_timeout: u64,

    #[command(flatten)]
    pub extensions: ExtensionFlags,

    /// Send packets as stock quiche does: each one cut to what the
    /// congestion window has left, and the application's buffer no larger
    /// than the window. By default, while the window has room and more data
    /// waits, a packet is full-size, overshooting the window by less than a
    /// packet (patch 0006, docs/sender.md).
    #[arg(long)]
    pub no_full_size_packets: bool,

    /// As data receiver, acknowledge every N-th ack-eliciting packet (or
    /// after max_ack_delay, 25 ms; out-of-order packets at once) instead of
    /// every packet: ACK thinning for thin return links (patch 0007,
    /// docs/sender.md). 1 is stock quiche.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ACK_EVERY,
          value_parser = clap::value_parser!(u64).range(1..=MAX_ACK_EVERY))]
    pub ack_every: u64,

    /// Read the accumulated queueing time AQT-enabled routers (vegas-emu)
    /// report in an IPv4 option (IP_RECVOPTS) of each received datagram and
    /// hand it to the connection. IPv4 only; off by default.
    #[arg(long)]
    pub aqt_from_ip_option: bool,

    #[command(flatten)]
    pub quiche: QuicheFlags,
}

/// quiche's own apps' transport flags (cloudflare/quiche `apps/src/args.rs`),
/// with their names and meanings, each applied to `quiche::Config`.
#[derive(clap::Args, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[command(next_help_heading = "quiche apps' transport flags")]
pub struct QuicheFlags {
    /// Initial congestion window, in packets (quiche's default 10); every
    /// algorithm starts from it.
    #[arg(long, value_name = "PACKETS",
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub initial_cwnd_packets: Option<u64>,

    /// Disable HyStart++ (quiche's CUBIC and Reno slow start exit; our
    /// algorithms have their own and ignore it).
    #[arg(long)]
    pub disable_hystart: bool,

    /// Connection flow-control window ceiling for quiche's autotuning, in
    /// bytes [default: --max-data, so the window stays what was asked].
    #[arg(long, value_name = "BYTES")]
    pub max_window: Option<u64>,

    /// Stream flow-control window ceiling for quiche's autotuning, in bytes
    /// [default: --max-stream-data].
    #[arg(long, value_name = "BYTES")]
    pub max_stream_window: Option<u64>,

    /// Bidirectional streams the peer may open [default: 128].
    #[arg(long, value_name = "N")]
    pub max_streams_bidi: Option<u64>,

    /// Unidirectional streams the peer may open [default: 16; HTTP/3 needs 3].
    #[arg(long, value_name = "N")]
    pub max_streams_uni: Option<u64>,

    /// Do not send GREASE values (quiche sends them by default).
    #[arg(long)]
    pub no_grease: bool,

    /// Connection IDs the peer may give us at once
    /// (active_connection_id_limit, at least 2) [default: quiche's 2].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(2..))]
    pub max_active_cids: Option<u64>,

    /// Do not pace: quiche hands out every packet at once (its send
    /// time is now) and our outbox holds nothing back.
    #[arg(long)]
    pub disable_pacing: bool,
}

impl QuicheFlags {
    /// Applies the flags given to `config`; `max_data` and
    /// `max_stream_data` are the windows the ceilings default to.
    pub fn apply(&self, config: &mut quiche::Config, max_data: u64, max_stream_data: u64) {
        if let Some(n) = self.initial_cwnd_packets {
            config.set_initial_congestion_window_packets(n as usize);
        }
        if self.disable_hystart {
            config.enable_hystart(false);
        }
        config.set_max_connection_window(self.max_window.unwrap_or(max_data));
        config.set_max_stream_window(self.max_stream_window.unwrap_or(max_stream_data));
        config.set_initial_max_streams_bidi(self.max_streams_bidi.unwrap_or(MAX_STREAMS_BIDI));
        config.set_initial_max_streams_uni(self.max_streams_uni.unwrap_or(MAX_STREAMS_UNI));
        if self.no_grease {
            config.grease(false);
        }
        if let Some(n) = self.max_active_cids {
            config.set_active_connection_id_limit(n);
        }
        if self.disable_pacing {
            config.enable_pacing(false);
        }
    }
}

impl TransportFlags {
    pub fn settings(&self) -> TransportSettings {
        TransportSettings {
            max_data: self.max_data,
            max_stream_data: self.max_stream_data,
            idle_timeout_ms: self.idle_timeout,
            cc: CcSelection {
                name: self.cc_algorithm.clone(),
                params: self.cc_param.clone(),
            },
            extensions: self.extensions.settings(),
            full_size_packets: !self.no_full_size_packets,
            ack_every: self.ack_every,
            quiche: self.quiche,
        }
    }
}

/// Command-line flags of [`ExtensionSettings`], shared by the apps.
#[derive(clap::Args, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[command(next_help_heading = "QUIC extensions (default: all on; see docs/extensions.md)")]
pub struct ExtensionFlags {
    /// Do not ask the peer for ACK receive timestamps
    /// (draft-ietf-quic-receive-ts-02). By default we ask for up to 64 per
    /// ACK, in microseconds; a peer that asks still gets them.
    #[arg(long)]
    pub no_receive_timestamps: bool,

    /// Do not accept QUEUEING_TIME frames (RoVegas's AQT-echo). By default we
    /// accept them; a peer that accepts them still gets them.
    #[arg(long)]
    pub no_queueing_time_frame: bool,

    /// Behave like stock quiche: offer none of our extensions and ignore
    /// the peer's requests for them.
    #[arg(long)]
    pub no_extensions: bool,

    /// Do not offer ACK frequency (draft-ietf-quic-ack-frequency): do not
    /// advertise min_ack_delay, so the peer cannot thin our ACKs, and do not
    /// ask a peer to thin its ACKs. By default both ways are offered;
    /// `--ack-every` still thins ours towards a peer without it.
    #[arg(long)]
    pub no_ack_frequency: bool,
}

impl ExtensionFlags {
    pub fn settings(&self) -> ExtensionSettings {
        if self.no_extensions {
            return ExtensionSettings::NONE;
        }
        ExtensionSettings {
            enabled: true,
            receive_timestamps: !self.no_receive_timestamps,
            queueing_time_frame: !self.no_queueing_time_frame,
            ack_frequency: !self.no_ack_frequency,
        }
    }
}

/// Everything about a connection's transport that the command line can set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportSettings {
    /// Connection receive window: `initial_max_data`, kept for the whole
    /// connection.
    pub max_data: u64,
    /// Stream receive window: `initial_max_stream_data_*`, likewise kept.
    pub max_stream_data: u64,
    pub idle_timeout_ms: u64,
    pub cc: CcSelection,
    /// Our QUIC extensions; all on by default.
    pub extensions: ExtensionSettings,
    /// Full-size data packets (`quiche::Config::enable_full_size_packets`,
    /// patch 0006): while the window has room and more data waits, a packet
    /// is full-size (the window overshot by less than a packet), and quiche
    /// holds a window plus one packet of the application's data. On by
    /// default; off is stock quiche, whose CUBIC then sends packets of a few
    /// bytes (docs/sender.md).
    pub full_size_packets: bool,
    /// As data receiver, ACK every this many ack-eliciting packets
    /// (`quiche::Config::set_ack_every`, patch 0007); 1 is stock quiche.
    pub ack_every: u64,
    /// quiche's own apps' transport flags; none given by default.
    pub quiche: QuicheFlags,
}

impl Default for TransportSettings {
    fn default() -> Self {
        TransportSettings {
            max_data: DEFAULT_MAX_DATA,
            max_stream_data: DEFAULT_MAX_STREAM_DATA,
            idle_timeout_ms: DEFAULT_IDLE_TIMEOUT_MS,
            cc: CcSelection::default(),
            extensions: ExtensionSettings::default(),
            full_size_packets: true,
            ack_every: DEFAULT_ACK_EVERY,
            quiche: QuicheFlags::default(),
        }
    }
}

impl TransportSettings {
    /// A quiche configuration offering `alpns` (in order of preference),
    /// with these settings and the selected congestion controller. TLS
    /// certificates and peer verification are left to the caller.
    pub fn build_config(&self, alpns: &[&[u8]]) -> anyhow::Result<(quiche::Config, ResolvedCc)> {
        self.build_config_for_version(quiche::PROTOCOL_VERSION, alpns)
    }

    /// Like [`Self::build_config`], offering QUIC `version` (a client's
    /// `--wire-version`; an unknown one draws a Version Negotiation).
    pub fn build_config_for_version(
        &self,
        version: u32,
        alpns: &[&[u8]],
    ) -> anyhow::Result<(quiche::Config, ResolvedCc)> {
        let config = quiche::Config::new(version).with_context(|| {
            format!("cannot create a QUIC configuration for version {version:#x}")
        })?;
        self.configure(config, alpns)
    }

    /// Like [`Self::build_config`], without the system's CA certificates:
    /// for endpoints that verify no peer's certificate (the simulator's
    /// client, and its server, which only presents its own). Loading them
    /// is most of what making a configuration costs (45 M instructions
    /// each under callgrind, a fixed cost of every simulated flow).
    pub fn build_config_without_ca_store(
        &self,
        alpns: &[&[u8]],
    ) -> anyhow::Result<(quiche::Config, ResolvedCc)> {
        let ctx = boring::ssl::SslContextBuilder::new(boring::ssl::SslMethod::tls())
            .map_err(|e| anyhow::anyhow!("cannot create a TLS context: {e}"))?;
        let config = quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, ctx)
            .context("cannot create the QUIC configuration")?;
        self.configure(config, alpns)
    }

    /// Like [`Self::build_config`], for a server presenting `identity`
    /// (certificate and key from memory).
    pub fn build_server_config(
        &self,
        alpns: &[&[u8]],
        identity: &crate::tls::Identity,
    ) -> anyhow::Result<(quiche::Config, ResolvedCc)> {
        let config = quiche::Config::with_boring_ssl_ctx_builder(
            quiche::PROTOCOL_VERSION,
            identity.tls_context()?,
        )
        .context("cannot create the QUIC configuration")?;
        self.configure(config, alpns)
    }

    fn configure(
        &self,
        mut config: quiche::Config,
        alpns: &[&[u8]],
    ) -> anyhow::Result<(quiche::Config, ResolvedCc)> {
        config
            .set_application_protos(alpns)
            .context("invalid ALPN list")?;
        config.set_max_idle_timeout(self.idle_timeout_ms);
        config.set_max_recv_udp_payload_size(MAX_DATAGRAM_SIZE);
        config.set_max_send_udp_payload_size(MAX_DATAGRAM_SIZE);
        config.set_initial_max_data(self.max_data);
        config.set_initial_max_stream_data_bidi_local(self.max_stream_data);
        config.set_initial_max_stream_data_bidi_remote(self.max_stream_data);
        config.set_initial_max_stream_data_uni(self.max_stream_data);
        // quiche autotunes its windows up to the ceilings (--max-window,
        // --max-stream-window), 24 MB and 16 MB by default, and clamps the
        // initial windows to them. Making the ceilings the initial windows
        // keeps the windows what was asked for.
        self.quiche
            .apply(&mut config, self.max_data, self.max_stream_data);
        config.set_disable_active_migration(true);
        config.enable_full_size_packets(self.full_size_packets);
        if !(1..=MAX_ACK_EVERY).contains(&self.ack_every) {
            anyhow::bail!(
                "ack_every {} out of range: 1 to {MAX_ACK_EVERY}",
                self.ack_every
            );
        }
        config.set_ack_every(self.ack_every);
        self.extensions.apply(&mut config)?;
        let resolved = self.cc.apply(&mut config)?;
        Ok((config, resolved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::in_memory::handshake;

    #[test]
    fn default_settings_build() {
        let (_, cc) = TransportSettings::default().build_config(&[b"h3"]).unwrap();
        assert_eq!(cc.name(), "cubic");
    }

    #[test]
    fn extension_flags_turn_extensions_off() {
        let flags = |r, q, n| ExtensionFlags {
            no_receive_timestamps: r,
            no_queueing_time_frame: q,
            no_extensions: n,
            no_ack_frequency: false,
        };
        assert_eq!(
            TransportSettings::default().extensions,
            ExtensionSettings::default()
        );
        assert_eq!(
            flags(false, false, false).settings(),
            ExtensionSettings::default()
        );
        assert_eq!(
            flags(false, false, false).settings().to_string(),
            "receive-timestamps, queueing-time-frame, ack-frequency"
        );
        let some = flags(true, false, false).settings();
        assert!(some.enabled && !some.receive_timestamps && some.queueing_time_frame);
        assert_eq!(some.to_string(), "queueing-time-frame, ack-frequency");
        assert_eq!(
            flags(true, true, false).settings().to_string(),
            "ack-frequency"
        );
        let no_ack_frequency = ExtensionFlags {
            no_ack_frequency: true,
            ..ExtensionFlags::default()
        }
        .settings();
        assert!(no_ack_frequency.enabled && !no_ack_frequency.ack_frequency);
        assert_eq!(
            no_ack_frequency.to_string(),
            "receive-timestamps, queueing-time-frame"
        );
        assert_eq!(
            flags(false, false, true).settings(),
            ExtensionSettings::NONE
        );
        assert_eq!(ExtensionSettings::NONE.to_string(), "none (stock)");
        for extensions in [ExtensionSettings::NONE, some] {
            let settings = TransportSettings {
                extensions,
                ..Default::default()
            };
            settings.build_config(&[b"h3"]).unwrap();
        }
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        transport: TransportFlags,
    }

    fn parse(args: &[&str]) -> Result<TransportSettings, clap::Error> {
        use clap::Parser;
        let argv = std::iter::once("app").chain(args.iter().copied());
        Cli::try_parse_from(argv).map(|cli| cli.transport.settings())
    }

    #[test]
    fn sender_flags_default_to_full_size_packets_and_an_ack_per_packet() {
        let settings = parse(&[]).unwrap();
        assert_eq!(settings, TransportSettings::default());
        assert!(settings.full_size_packets);
        assert_eq!(settings.ack_every, 1);
        let changed = parse(&["--no-full-size-packets", "--ack-every", "4"]).unwrap();
        assert!(!changed.full_size_packets);
        assert_eq!(changed.ack_every, 4);
        changed.build_config(&[b"h3"]).unwrap();
    }

    #[test]
    fn ack_every_out_of_range_is_an_error() {
        for bad in ["0", "65", "x"] {
            let Err(e) = parse(&["--ack-every", bad]) else {
                panic!("--ack-every {bad} was accepted");
            };
            assert!(e.to_string().contains("--ack-every"), "{e}");
        }
        assert_eq!(parse(&["--ack-every", "64"]).unwrap().ack_every, 64);
        // The same bounds hold for settings made in code.
        for bad in [0, MAX_ACK_EVERY + 1] {
            let settings = TransportSettings {
                ack_every: bad,
                ..Default::default()
            };
            let Err(e) = settings.build_config(&[b"h3"]) else {
                panic!("ack_every {bad} was accepted");
            };
            assert!(e.to_string().contains("ack_every"), "{e}");
        }
    }

    #[test]
    fn bad_cc_is_an_error() {
        let settings = TransportSettings {
            cc: CcSelection::new("nope"),
            ..Default::default()
        };
        let Err(e) = settings.build_config(&[b"h3"]) else {
            panic!("nope was accepted");
        };
        let e = e.to_string();
        assert!(e.contains("unknown congestion control algorithm"), "{e}");
    }

    #[test]
    fn quiche_app_flags_reach_the_connection() {
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "app",
            "--initial-cwnd-packets",
            "3",
            "--max-streams-bidi",
            "7",
            "--max-streams-uni",
            "5",
            "--max-active-cids",
            "4",
            "--disable-hystart",
            "--no-grease",
            "--disable-pacing",
            "--max-window",
            "200000000",
        ])
        .unwrap();
        let settings = cli.transport.settings();
        let identity = crate::tls::Identity::self_signed().unwrap();
        let (mut server, _) = settings.build_server_config(&[b"h3"], &identity).unwrap();
        let (mut client, _) = settings.build_config(&[b"h3"]).unwrap();
        client.verify_peer(false);
        let (c, _s) = handshake(&mut client, &mut server);
        let params = c.peer_transport_params().unwrap();
        assert_eq!(params.initial_max_streams_bidi, 7);
        assert_eq!(params.initial_max_streams_uni, 5);
        assert_eq!(params.active_conn_id_limit, 4);
        // Three packets where the default is ten.
        let cwnd = c.path_stats().next().unwrap().cwnd;
        assert!(cwnd <= 3 * MAX_DATAGRAM_SIZE, "cwnd {cwnd}");
        // Without the flags, quiche's and our defaults.
        let (mut server, _) = TransportSettings::default()
            .build_server_config(&[b"h3"], &identity)
            .unwrap();
        let (mut client, _) = TransportSettings::default().build_config(&[b"h3"]).unwrap();
        client.verify_peer(false);
        let (c, _s) = handshake(&mut client, &mut server);
        let params = c.peer_transport_params().unwrap();
        assert_eq!(params.initial_max_streams_bidi, MAX_STREAMS_BIDI);
        assert_eq!(params.initial_max_streams_uni, MAX_STREAMS_UNI);
        assert!(c.path_stats().next().unwrap().cwnd > 3 * MAX_DATAGRAM_SIZE);
    }
}

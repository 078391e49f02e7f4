//! quiche-server: serves files over HTTP/3 and hq-interop (HTTP/0.9 over
//! QUIC) with a selectable congestion controller.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

use quiche_vegas::careful_resume::{prepare_store_dir, LossRule, ResumeStore, StoreWriter};
use quiche_vegas::cc_select::{answer_cc_question, ResolvedCc};
use quiche_vegas::net::{
    bind_udp, run_server, stop_server_on_signals, CarefulResumeServer, PacketDump, RetryMode,
    ServerLimits, ServerSetup, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_IP,
};
use quiche_vegas::qlog_output::qlog_dir_from_env;
use quiche_vegas::qvis::{Converter, QvisWriter};
use quiche_vegas::retry::DEFAULT_NEW_TOKEN_LIFETIME_SECS;
use quiche_vegas::settings::TransportFlags;
use quiche_vegas::tls::{CertFiles, Identity};
use quiche_vegas::transfer::{DatagramExchange, DgramProto, DirSource, ALPN_H3, ALPN_HQ};

/// Serves the files under --root over QUIC (HTTP/3 and hq-interop).
///
/// With QLOGDIR set, each connection writes QLOGDIR/server-<id>.sqlog (and,
/// with --qvis, QLOGDIR/server-<id>-qvis.qlog).
#[derive(Parser, Debug)]
#[command(name = "quiche-server", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4433")]
    listen: SocketAddr,

    /// Directory whose files are served (required: nothing is served by
    /// accident). Dotfiles in it are not served unless --serve-dotfiles.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Serve files and directories whose names start with '.' too.
    #[arg(long)]
    serve_dotfiles: bool,

    /// The file served for a path that names a directory (quiche's
    /// server's --index).
    #[arg(long, value_name = "FILE", default_value = quiche_vegas::transfer::DEFAULT_INDEX)]
    index: String,

    /// TLS certificate chain (PEM). Without --cert and --key a self-signed
    /// certificate for localhost is made at start, in memory only.
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,

    /// TLS private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,

    #[command(flatten)]
    transport: TransportFlags,

    /// When to validate a new client's address with a Retry round trip
    /// before creating connection state: `always`; `auto`, only while the
    /// unvalidated load is high (32 handshakes from unvalidated addresses
    /// in progress, or a client socket over its Retry budget in the last
    /// 10 s), so that a satellite user does not pay a round trip when no
    /// attack is going on; `never`.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = parse_retry_mode,
          conflicts_with = "no_retry")]
    retry: RetryMode,

    /// The same as --retry never.
    #[arg(long)]
    no_retry: bool,

    /// Seconds a client's NEW_TOKEN token is honoured (RFC 9000 section
    /// 8.1.3): every client is sent one once its handshake is done, bound
    /// to its address (an IPv6 address's /64) and this server's key (drawn
    /// at start), and its next connection carrying it skips Retry, even
    /// under --retry always or a flood. 0: no tokens sent or honoured.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_NEW_TOKEN_LIFETIME_SECS,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(0..=30 * 86_400))]
    new_token_lifetime: u64,

    /// Connections held at once; one more is refused (CONNECTION_REFUSED).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_connections: usize,

    /// Connections held at once from one IP address (an IPv6 address's
    /// /64 counts as one); one more is refused.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS_PER_IP,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_connections_per_ip: usize,

    /// Once more than half of --max-connections are held, an address (IPv6:
    /// its /64) holding N or more gets no more, so that a few addresses
    /// cannot take every slot [default: --max-connections / 64, at least 2].
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    busy_connections_per_ip: Option<usize>,

    /// Do not print a line per closed connection on stderr.
    #[arg(long)]
    quiet: bool,

    /// Also write each connection's qlog as qvis loads it,
    /// QLOGDIR/server-<id>-qvis.qlog beside its .sqlog, once the connection
    /// has closed (needs QLOGDIR): on a thread of its own, never delaying
    /// the event loop (the qlogs of connections that closed during a
    /// conversion go in one run of the converter); at SIGTERM/SIGINT the connections
    /// closed then are converted before the server exits (a second signal
    /// exits at once). The converter is qlog-analysis's `to-qvis`, as for
    /// `vegas-sim run --qvis`: $VEGAS_QLOG_ANALYSIS, else the repository's
    /// qlog-analysis/.venv/bin/qlog-analysis above this program, else
    /// qlog-analysis on the PATH. If it cannot run, one line on stderr says
    /// so (once); a conversion that fails, one line; connections and their
    /// .sqlog files are not affected.
    #[arg(long)]
    qvis: bool,

    /// Careful Resume (RFC 9959, experimental): a client that comes back
    /// starts at half the capacity its earlier connection measured, after
    /// checking the path, and retreats safely if it was wrong. Our
    /// algorithms only (not quiche's reno, cubic, bbr2).
    #[arg(long)]
    careful_resume: bool,

    /// Keep Careful Resume's saved paths in DIR/careful-resume.store across
    /// restarts (written atomically by a thread of its own, at most once a
    /// second, and at shutdown; a corrupt file is ignored with a warning).
    /// DIR must belong to this user or root and be writable by nobody else
    /// (created 0700 if missing). Without it they live in memory only.
    #[arg(long, value_name = "DIR", requires = "careful_resume")]
    resume_store: Option<PathBuf>,

    /// Which losses during the jump and its validation make Careful Resume
    /// retreat: `any` (RFC 9959 as written) or `queue` (only a loss while
    /// the RTT shows a queue of more than min RTT / 8, or more losses than
    /// 5 % of the packets sent since the jump; random losses of a lossy
    /// link are left to the controller). See docs/careful-resume.md.
    #[arg(long, value_name = "RULE", default_value = "queue", requires = "careful_resume",
          value_parser = parse_loss_rule)]
    careful_resume_loss: LossRule,

    /// Tail repeat: when a connection has sent everything, the data of its
    /// packets of the last half round trip that are not acknowledged yet
    /// is sent once more, so that a random loss at the end of a transfer
    /// over a long, lossy path does not cost a round trip (about half a
    /// round trip's worth of extra packets per transfer; docs/sender.md).
    #[arg(long)]
    tail_repeat: bool,

    /// Accept 0-RTT early data from clients resuming a TLS session (their
    /// requests are answered before the handshake is done), as quiche's
    /// server.
    #[arg(long)]
    early_data: bool,

    /// Write each received UDP datagram, as it arrived, into DIR/N.pkt
    /// (N from 0, over all connections), as quiche's server.
    #[arg(long, value_name = "DIR")]
    dump_packets: Option<PathBuf>,

    /// Name of the server, shown in its start-up line. quiche's server
    /// lists the flag (default quic.tech) but uses it nowhere; accepted so
    /// that its command lines run unchanged.
    #[arg(long, value_name = "NAME", default_value = "quic.tech")]
    name: String,

    /// Do not use GSO (UDP segmentation offload). Our server never does:
    /// every datagram is its own send call, which is what quiche's server
    /// does with this flag; accepted so that its command lines run
    /// unchanged.
    #[arg(long)]
    disable_gso: bool,

    /// DATAGRAM application protocol, as quiche's apps: `none`, or
    /// `oneway` (HTTP/3 only: offer DATAGRAM frames, send --dgram-count of
    /// them as HTTP/3 datagrams, count those received).
    #[arg(long, value_name = "PROTO", default_value = "none")]
    dgram_proto: DgramProto,

    /// DATAGRAM frames to send with --dgram-proto oneway.
    #[arg(long, value_name = "COUNT", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    dgram_count: u64,

    /// Each DATAGRAM's data.
    #[arg(long, value_name = "DATA", default_value = "brrr")]
    dgram_data: String,

    /// How long saved paths may be reused, in seconds.
    #[arg(long, value_name = "S", default_value_t = 3600,
          requires = "careful_resume",
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=30 * 86_400))]
    resume_lifetime: u64,
}

fn parse_retry_mode(word: &str) -> Result<RetryMode, String> {
    RetryMode::from_word(word)
        .ok_or_else(|| format!("expected one of {}", RetryMode::WORDS.join(", ")))
}

fn parse_loss_rule(word: &str) -> Result<LossRule, String> {
    LossRule::from_word(word)
        .ok_or_else(|| format!("expected one of {}", LossRule::WORDS.join(", ")))
}

fn main() -> ExitCode {
    env_logger::init();
    let args = Args::parse();
    let flags = &args.transport;
    if let Some(exit) = answer_cc_question(
        "quiche-server",
        flags.list_cc_algorithms,
        &flags.cc_algorithm,
        &flags.cc_param,
    ) {
        return exit;
    }
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quiche-server: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let settings = args.transport.settings();
    let root = args.root.as_deref().context("--root is required")?;
    let source = DirSource::new(root)?
        .with_dotfiles(args.serve_dotfiles)
        .with_index(&args.index)?;
    let identity = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => Identity::from_files(&CertFiles {
            cert: cert.clone(),
            key: key.clone(),
        })?,
        _ => {
            eprintln!(
                "quiche-server: no --cert/--key given: using a self-signed certificate for \
                 localhost, kept in memory (clients need --no-verify)"
            );
            Identity::self_signed()?
        }
    };
    let (mut config, cc) = settings.build_server_config(&[ALPN_H3, ALPN_HQ], &identity)?;
    if args.early_data {
        config.enable_early_data();
    }
    args.dgram_proto.apply(&mut config);
    let datagrams = (args.dgram_proto == DgramProto::Oneway)
        .then(|| DatagramExchange::new(args.dgram_count, args.dgram_data.as_bytes()));
    let dump_packets = match &args.dump_packets {
        Some(dir) => Some(PacketDump::new(dir)?),
        None => None,
    };
    let careful_resume = if args.careful_resume {
        let lifetime = Duration::from_secs(args.resume_lifetime);
        let store = match &args.resume_store {
            None => ResumeStore::new(lifetime),
            Some(dir) => {
                prepare_store_dir(dir)?;
                ResumeStore::load(dir, lifetime).unwrap_or_else(|e| {
                    eprintln!("quiche-server: warning: ignoring the Careful Resume store: {e:#}");
                    ResumeStore::new(lifetime)
                })
            }
        };
        if matches!(cc, ResolvedCc::Quiche(_)) {
            eprintln!(
                "quiche-server: warning: --careful-resume has no effect with quiche's own {cc}"
            );
        }
        let writer = match &args.resume_store {
            Some(dir) => Some(StoreWriter::start(dir.clone(), store.clone())?),
            None => None,
        };
        Some(CarefulResumeServer {
            cc: cc.clone(),
            store,
            writer,
            loss_rule: args.careful_resume_loss,
        })
    } else {
        None
    };

    let retry = if args.no_retry {
        RetryMode::Never
    } else {
        args.retry
    };
    let mut limits = ServerLimits::new(args.max_connections, args.max_connections_per_ip);
    if let Some(n) = args.busy_connections_per_ip {
        limits.busy_connections_per_ip = n;
    }
    let socket = bind_udp(args.listen)?;
    stop_server_on_signals().context("cannot handle SIGINT and SIGTERM")?;
    let local = socket
        .local_addr()
        .context("cannot get the local address")?;
    let qlog_dir = qlog_dir_from_env();
    if args.qvis && qlog_dir.is_none() {
        anyhow::bail!("--qvis needs QLOGDIR: the directory the qlogs, and their qvis forms, go to");
    }
    let qvis = if args.qvis {
        // Its own process group: a Ctrl-C stopping the server must not kill
        // the conversions of the connections it closes.
        let converter = Converter::locate().in_own_process_group();
        Some(QvisWriter::start(converter, "quiche-server", !args.quiet)?)
    } else {
        None
    };
    eprintln!(
        "quiche-server: {} listening on {local}, serving {}, cc {cc}, HTTP/3 and hq-interop, \
         extensions: {}, retry {}, at most {} connections ({} per IP, {} once half full){}{}",
        args.name,
        source.root().display(),
        settings.extensions,
        retry,
        args.max_connections,
        limits.max_connections_per_ip,
        limits.busy_connections_per_ip,
        if args.tail_repeat {
            ", tail repeat"
        } else {
            ""
        },
        qlog_dir.as_ref().map_or_else(String::new, |d| format!(
            ", qlog{} to {}",
            if qvis.is_some() { " and qvis" } else { "" },
            d.display()
        ))
    );
    run_server(
        socket,
        ServerSetup {
            config,
            source: Arc::new(source),
            qlog_dir,
            cc_description: cc.to_string(),
            cc_name: cc.name().to_string(),
            report_connections: !args.quiet,
            aqt_from_ip_option: args.transport.aqt_from_ip_option,
            retry,
            new_token_lifetime_secs: args.new_token_lifetime,
            limits,
            careful_resume,
            tail_repeat: args.tail_repeat,
            dump_packets,
            datagrams,
            qvis,
        },
    )
}

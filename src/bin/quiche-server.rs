//! quiche-server: serves files over HTTP/3 and hq-interop (HTTP/0.9 over
//! QUIC) with a selectable congestion controller.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Parser;

use quiche_vegas::cc_select::{listing_text, CcSelection, DEFAULT_CC_ALGORITHM};
use quiche_vegas::net::{bind_udp, run_server, ServerSetup};
use quiche_vegas::qlog_output::qlog_dir_from_env;
use quiche_vegas::settings::{
    ExtensionFlags, TransportSettings, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_DATA,
    DEFAULT_MAX_STREAM_DATA,
};
use quiche_vegas::tls::{self, CertFiles};
use quiche_vegas::transfer::{DirSource, ALPN_H3, ALPN_HQ};

/// Serves the files under --root over QUIC (HTTP/3 and hq-interop).
///
/// With QLOGDIR set, each connection writes QLOGDIR/server-<id>.sqlog.
#[derive(Parser, Debug)]
#[command(name = "quiche-server", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4433")]
    listen: SocketAddr,

    /// Directory whose files are served.
    #[arg(long, value_name = "DIR", default_value = ".")]
    root: PathBuf,

    /// TLS certificate chain (PEM). Without --cert and --key a self-signed
    /// certificate for localhost is made at start.
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,

    /// TLS private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,

    /// Congestion control algorithm (see --list-cc-algorithms).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_CC_ALGORITHM)]
    cc_algorithm: String,

    /// A parameter of the congestion control algorithm; repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    cc_param: Vec<String>,

    /// Print the congestion control algorithms and exit.
    #[arg(long)]
    list_cc_algorithms: bool,

    /// Connection flow-control window in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_DATA)]
    max_data: u64,

    /// Stream flow-control window in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_STREAM_DATA)]
    max_stream_data: u64,

    /// Idle timeout in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_IDLE_TIMEOUT_MS)]
    idle_timeout: u64,

    /// Do not print a line per closed connection on stderr.
    #[arg(long)]
    quiet: bool,

    #[command(flatten)]
    extensions: ExtensionFlags,
}

fn main() -> ExitCode {
    env_logger::init();
    let args = Args::parse();
    if args.list_cc_algorithms {
        print!("{}", listing_text());
        return ExitCode::SUCCESS;
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
    let settings = TransportSettings {
        max_data: args.max_data,
        max_stream_data: args.max_stream_data,
        idle_timeout_ms: args.idle_timeout,
        cc: CcSelection {
            name: args.cc_algorithm.clone(),
            params: args.cc_param.clone(),
        },
        extensions: args.extensions.settings(),
    };
    let (mut config, cc) = settings.build_config(&[ALPN_H3, ALPN_HQ])?;
    let source = DirSource::new(&args.root)?;

    let cert = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => CertFiles {
            cert: cert.clone(),
            key: key.clone(),
        },
        (None, None) => {
            let files = tls::write_self_signed(&std::env::temp_dir())?;
            eprintln!(
                "quiche-server: no --cert/--key given: using a self-signed certificate for \
                 localhost written to {} (clients need --no-verify)",
                files.cert.display()
            );
            files
        }
        _ => bail!("--cert and --key go together"),
    };
    tls::load(&mut config, &cert)?;

    let socket = bind_udp(args.listen)?;
    let local = socket
        .local_addr()
        .context("cannot get the local address")?;
    let qlog_dir = qlog_dir_from_env();
    eprintln!(
        "quiche-server: listening on {local}, serving {}, cc {cc}, HTTP/3 and hq-interop, \
         extensions: {}{}",
        source.root().display(),
        settings.extensions,
        qlog_dir
            .as_ref()
            .map_or_else(String::new, |d| format!(", qlog to {}", d.display()))
    );
    run_server(
        socket,
        ServerSetup {
            config,
            source: Arc::new(source),
            qlog_dir,
            cc_description: cc.to_string(),
            report_connections: !args.quiet,
        },
    )
}

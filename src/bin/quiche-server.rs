//! quiche-server: serves files over HTTP/3 and hq-interop (HTTP/0.9 over
//! QUIC) with a selectable congestion controller.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Parser;

use quiche_vegas::cc_select::listing_text;
use quiche_vegas::net::{bind_udp, run_server, ServerSetup};
use quiche_vegas::qlog_output::qlog_dir_from_env;
use quiche_vegas::settings::TransportFlags;
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

    #[command(flatten)]
    transport: TransportFlags,

    /// Do not print a line per closed connection on stderr.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    env_logger::init();
    let args = Args::parse();
    if args.transport.list_cc_algorithms {
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
    let settings = args.transport.settings();
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
            aqt_from_ip_option: args.transport.aqt_from_ip_option,
        },
    )
}

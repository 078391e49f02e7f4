//! An HTTP/3 file server on Cloudflare's tokio-quiche that runs any of our
//! congestion controllers, selected with the apps' `--cc-algorithm` and
//! `--cc-param` (parsed and checked by `quiche_vegas::cc_select`).
//!
//! tokio-quiche builds the `quiche::Config` itself from its `QuicSettings`;
//! the one congestion-control input it passes on is
//! `QuicSettings::cc_algorithm`, handed to `Config::set_cc_algorithm_name`.
//! Our patched quiche reads `NAME(KEY=VALUE ...)` there (the form
//! `ResolvedCc` prints), so the algorithm and its parameters reach
//! `Config::set_cc_controller` through that one string.
//!
//!   tokio-h3-server --root DIR [--listen ADDR] [--cc-algorithm NAME]
//!                   [--cc-param KEY=VALUE]...
//!
//! With `QLOGDIR` set, tokio-quiche writes one qlog per connection there.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use boring::ssl::SslContextBuilder;
use bytes::Bytes;
use clap::Parser;
use futures::{SinkExt, StreamExt};
use quiche_vegas::cc_select::{self, CcSelection, ResolvedCc, DEFAULT_CC_ALGORITHM};
use quiche_vegas::qlog_output::qlog_dir_from_env;
use quiche_vegas::tls::{CertFiles, Identity};
use quiche_vegas::transfer::{ContentSource, DirSource, Lookup};
use tokio_quiche::buf_factory::BufFactory;
use tokio_quiche::http3::driver::{
    H3Event, IncomingH3Headers, OutboundFrame, OutboundFrameSender, ServerH3Event,
};
use tokio_quiche::http3::settings::Http3Settings;
use tokio_quiche::metrics::DefaultMetrics;
use tokio_quiche::quic::ConnectionHook;
use tokio_quiche::quiche::h3::{Header, NameValue};
use tokio_quiche::settings::{CertificateKind, Hooks, QuicSettings, TlsCertificatePaths};
use tokio_quiche::{ConnectionParams, ServerH3Driver};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "HTTP/3 file server on tokio-quiche with quiche-vegas's congestion controllers"
)]
struct Args {
    /// Address to listen on; port 0 picks a free port. The address in use is
    /// printed on stdout as `listening on ADDR`.
    #[arg(long, default_value = "127.0.0.1:4433")]
    listen: SocketAddr,

    /// Directory whose files are served (GET only).
    #[arg(long, required_unless_present = "list_cc_algorithms")]
    root: Option<PathBuf>,

    /// Certificate chain (PEM); without it, a self-signed certificate for
    /// localhost is made in memory.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,

    /// Private key (PEM) of --cert.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,

    /// Congestion control algorithm (see --list-cc-algorithms), as in
    /// quiche-server.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_CC_ALGORITHM)]
    cc_algorithm: String,

    /// A parameter of the congestion control algorithm; repeatable.
    /// `--cc-param help` lists them.
    #[arg(long, value_name = "KEY=VALUE")]
    cc_param: Vec<String>,

    /// Print the congestion control algorithms and exit.
    #[arg(long)]
    list_cc_algorithms: bool,
}

/// Hands tokio-quiche a TLS context made from memory: the key is never
/// written to disk. tokio-quiche asks for it only when `ConnectionParams`
/// carries certificate paths, and then uses the context instead of them.
struct InMemoryTls(Identity);

impl ConnectionHook for InMemoryTls {
    fn create_custom_ssl_context_builder(
        &self,
        _paths: TlsCertificatePaths<'_>,
    ) -> Option<SslContextBuilder> {
        match self.0.tls_context() {
            Ok(context) => Some(context),
            Err(e) => {
                log::error!("TLS context: {e:#}");
                None
            }
        }
    }
}

fn main() -> anyhow::Result<()> {
    env_logger::init();
    let args = Args::parse();
    if let Some(answer) =
        cc_select::cc_question(args.list_cc_algorithms, &args.cc_algorithm, &args.cc_param)
    {
        print!("{}", answer?);
        return Ok(());
    }
    let cc = CcSelection {
        name: args.cc_algorithm.clone(),
        params: args.cc_param.clone(),
    }
    .resolve()
    .map_err(|e| anyhow!("{e}"))?;
    let root = args.root.clone().context("--root is required")?;
    let source = Arc::new(DirSource::new(&root)?);
    let identity = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => Identity::from_files(&CertFiles {
            cert: cert.clone(),
            key: key.clone(),
        })?,
        _ => Identity::self_signed()?,
    };
    // Fail at start, not at the first connection.
    identity.tls_context()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    runtime.block_on(serve(args.listen, cc, identity, source))
}

/// tokio-quiche's settings for `cc`: every other setting is tokio-quiche's
/// default.
fn quic_settings(cc: &ResolvedCc) -> QuicSettings {
    let mut settings = QuicSettings::default();
    // `cubic`, or `vegas-sat(alpha=... ...)` with every parameter: the
    // patched `Config::set_cc_algorithm_name` reads both.
    settings.cc_algorithm = cc.to_string();
    settings.qlog_dir = qlog_dir_from_env().map(|d| d.to_string_lossy().into_owned());
    settings
}

async fn serve(
    listen: SocketAddr,
    cc: ResolvedCc,
    identity: Identity,
    source: Arc<DirSource>,
) -> anyhow::Result<()> {
    let socket = tokio::net::UdpSocket::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let local = socket.local_addr()?;
    let hooks = Hooks {
        connection_hook: Some(Arc::new(InMemoryTls(identity))),
    };
    // The paths are not read: the hook above supplies the context.
    let tls = TlsCertificatePaths {
        cert: "",
        private_key: "",
        kind: CertificateKind::X509,
    };
    let params = ConnectionParams::new_server(quic_settings(&cc), tls, hooks);
    let mut listeners = tokio_quiche::listen([socket], params, DefaultMetrics)
        .map_err(|e| anyhow!("tokio-quiche cannot listen: {e}"))?;
    let mut connections = listeners
        .pop()
        .context("tokio-quiche returned no listener")?;
    let server_header = format!("tokio-h3-server cc={cc}");
    println!("listening on {local}  cc={cc}");
    std::io::stdout().flush()?;
    while let Some(connection) = connections.next().await {
        let connection = match connection {
            Ok(c) => c,
            Err(e) => {
                log::warn!("connection refused: {e}");
                continue;
            }
        };
        let (driver, mut controller) = ServerH3Driver::new(Http3Settings::default());
        connection.start(driver);
        let source = Arc::clone(&source);
        let server_header = server_header.clone();
        tokio::spawn(async move {
            while let Some(event) = controller.event_receiver_mut().recv().await {
                match event {
                    ServerH3Event::Headers {
                        incoming_headers, ..
                    } => {
                        let source = Arc::clone(&source);
                        let server_header = server_header.clone();
                        // File reads block: each response on a thread of
                        // tokio's blocking pool.
                        tokio::task::spawn_blocking(move || {
                            respond(source.as_ref(), incoming_headers, &server_header)
                        });
                    }
                    ServerH3Event::Core(
                        H3Event::ConnectionShutdown(_) | H3Event::ConnectionError(_),
                    ) => break,
                    ServerH3Event::Core(_) => {}
                }
            }
        });
    }
    Ok(())
}

fn header<'a>(headers: &'a [Header], name: &[u8]) -> Option<&'a [u8]> {
    headers.iter().find(|h| h.name() == name).map(|h| h.value())
}

/// Answers one request: the file's bytes for a GET of a path `source`
/// holds, or a status without a body.
fn respond(source: &dyn ContentSource, request: IncomingH3Headers, server_header: &str) {
    let IncomingH3Headers {
        headers, mut send, ..
    } = request;
    let path = header(&headers, b":path").and_then(|p| std::str::from_utf8(p).ok());
    let (status, body) = match (header(&headers, b":method"), path) {
        (Some(b"GET"), Some(path)) => match source.open(path) {
            Ok(body) => (200, Some(body)),
            Err(Lookup::NotFound) => (404, None),
            Err(Lookup::Failed(e)) => {
                log::warn!("{path}: {e}");
                (500, None)
            }
        },
        (Some(_), Some(_)) => (405, None),
        _ => (400, None),
    };
    let length = body.as_ref().map_or(0, |b| b.len);
    let response = vec![
        Header::new(b":status", status.to_string().as_bytes()),
        Header::new(b"content-length", length.to_string().as_bytes()),
        Header::new(b"server", server_header.as_bytes()),
    ];
    if deliver(&mut send, OutboundFrame::Headers(response, None)).is_err() {
        return;
    }
    if let Some(mut body) = body {
        let mut chunk = vec![0; BufFactory::MAX_BUF_SIZE];
        let mut left = body.len;
        while left > 0 {
            let n = match body.reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    log::warn!("reading a response body: {e}");
                    break;
                }
            };
            left = left.saturating_sub(n as u64);
            let frame = OutboundFrame::Body(Bytes::copy_from_slice(&chunk[..n]), false);
            if deliver(&mut send, frame).is_err() {
                return;
            }
        }
        if left > 0 {
            // Short file: reset the stream rather than end it as complete.
            let _ = deliver(&mut send, OutboundFrame::PeerStreamError);
            return;
        }
    }
    let _ = deliver(&mut send, OutboundFrame::Body(Bytes::new(), true));
}

/// Sends one frame to tokio-quiche's driver, waiting while its queue is full.
/// Fails when the stream or connection is gone.
fn deliver(send: &mut OutboundFrameSender, frame: OutboundFrame) -> Result<(), ()> {
    futures::executor::block_on(send.send(frame)).map_err(|_| ())
}

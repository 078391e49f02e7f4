//! quinn-peer: the quinn peer of scripts/interop, an hq-interop (HTTP/0.9
//! over QUIC) client and server.
//!
//! ```text
//! quinn-peer client --url https://10.77.0.2:4433/file --out FILE
//! quinn-peer server --listen 10.77.0.2:4433 --root DIR --cert C --key K
//! ```
//!
//! The client downloads one URL into FILE and prints a JSON line with the
//! byte count and the time from the request to the last byte. The server
//! serves the files under DIR and prints each connection's statistics
//! (lost packets and bytes) as a JSON line on stderr when it closes. Both
//! raise quinn's flow-control windows far above a 600 ms satellite path's
//! bandwidth-delay product.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::{Endpoint, TransportConfig, VarInt};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tokio::io::AsyncWriteExt;

const ALPN: &[u8] = b"hq-interop";
/// 64 MiB per stream, 96 MiB per connection: 600 ms at 20 Mbit/s is 1.5 MB.
const STREAM_WINDOW: u32 = 64 << 20;
const CONNECTION_WINDOW: u32 = 96 << 20;

fn transport() -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.stream_receive_window(VarInt::from_u32(STREAM_WINDOW));
    t.receive_window(VarInt::from_u32(CONNECTION_WINDOW));
    t.send_window(u64::from(CONNECTION_WINDOW));
    t.max_idle_timeout(Some(VarInt::from_u32(60_000).into()));
    Arc::new(t)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The interop runs use throw-away self-signed certificates.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

struct Args {
    values: Vec<(String, String)>,
}

impl Args {
    fn parse(args: &[String]) -> anyhow::Result<Args> {
        let mut values = Vec::new();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let Some(name) = flag.strip_prefix("--") else {
                bail!("unexpected argument '{flag}'");
            };
            let value = it
                .next()
                .with_context(|| format!("--{name} needs a value"))?;
            values.push((name.to_string(), value.clone()));
        }
        Ok(Args { values })
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn required(&self, name: &str) -> anyhow::Result<&str> {
        self.get(name)
            .with_context(|| format!("--{name} is required"))
    }

    fn check_known(&self, known: &[&str]) -> anyhow::Result<()> {
        for (n, _) in &self.values {
            if !known.contains(&n.as_str()) {
                bail!(
                    "unknown option --{n}; expected one of --{}",
                    known.join(", --")
                );
            }
        }
        Ok(())
    }
}

async fn client(args: Args) -> anyhow::Result<()> {
    args.check_known(&["url", "out", "timeout"])?;
    let url = args.required("url")?;
    let out = PathBuf::from(args.required("out")?);
    let timeout: f64 = args
        .get("timeout")
        .unwrap_or("600")
        .parse()
        .context("--timeout: expected seconds")?;
    let rest = url
        .strip_prefix("https://")
        .with_context(|| format!("expected an https URL, got '{url}'"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let authority = if authority.contains(':') {
        authority.to_string()
    } else {
        format!("{authority}:443")
    };
    let server: SocketAddr = authority
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {authority}"))?
        .next()
        .with_context(|| format!("{authority} has no address"))?;

    let mut crypto = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider())))
        .with_no_client_auth();
    crypto.alpn_protocols = vec![ALPN.to_vec()];
    let mut config = quinn::ClientConfig::new(Arc::new(QuicClientConfig::try_from(crypto)?));
    config.transport_config(transport());
    let bind: SocketAddr = if server.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let endpoint = Endpoint::client(bind).context("cannot open a UDP socket")?;

    let transfer = async {
        let start = Instant::now();
        let conn = endpoint
            .connect_with(config, server, "localhost")?
            .await
            .context("handshake failed")?;
        let (mut send, mut recv) = conn.open_bi().await?;
        send.write_all(format!("GET {path}\r\n").as_bytes()).await?;
        send.finish()?;
        let mut file = tokio::fs::File::create(&out)
            .await
            .with_context(|| format!("cannot create {}", out.display()))?;
        let mut buf = vec![0u8; 1 << 16];
        let mut bytes = 0u64;
        while let Some(n) = recv.read(&mut buf).await? {
            file.write_all(&buf[..n]).await?;
            bytes += n as u64;
        }
        file.flush().await?;
        let elapsed = start.elapsed().as_secs_f64();
        conn.close(VarInt::from_u32(0), b"done");
        anyhow::Ok((bytes, elapsed))
    };
    let (bytes, elapsed) = tokio::time::timeout(Duration::from_secs_f64(timeout), transfer)
        .await
        .map_err(|_| anyhow!("timed out after {timeout} s"))??;
    // Give the endpoint a moment to send the CONNECTION_CLOSE, then exit
    // without waiting out the draining period (three PTOs: seconds on a
    // satellite path), so that the process ends with the transfer, as the
    // other clients do.
    tokio::time::sleep(Duration::from_millis(50)).await;
    println!(
        "{}",
        serde_json::json!({"bytes": bytes, "elapsed_s": elapsed})
    );
    Ok(())
}

async fn serve_connection(incoming: quinn::Incoming, root: Arc<PathBuf>) -> anyhow::Result<()> {
    let conn = incoming.await?;
    let remote = conn.remote_address();
    loop {
        let (mut send, mut recv) = match conn.accept_bi().await {
            Ok(s) => s,
            Err(_) => break,
        };
        let root = Arc::clone(&root);
        tokio::spawn(async move {
            let request = recv.read_to_end(4096).await.unwrap_or_default();
            let line = String::from_utf8_lossy(&request);
            let body = match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["GET", path, ..] => read_file(&root, path).await,
                _ => Vec::new(),
            };
            if send.write_all(&body).await.is_ok() {
                send.finish().ok();
                // Keep the stream until the peer has everything.
                send.stopped().await.ok();
            }
        });
    }
    let s = conn.stats();
    eprintln!(
        "quinn-peer: connection stats {}",
        serde_json::json!({
            "remote": remote.to_string(),
            "lost_packets": s.path.lost_packets,
            "lost_bytes": s.path.lost_bytes,
            "sent_packets": s.path.sent_packets,
            "udp_tx_bytes": s.udp_tx.bytes,
            "rtt_ms": s.path.rtt.as_secs_f64() * 1e3,
            "cwnd": s.path.cwnd,
        })
    );
    Ok(())
}

async fn read_file(root: &Path, path: &str) -> Vec<u8> {
    let relative = path.trim_start_matches('/');
    if relative.split('/').any(|c| c == "..") {
        return Vec::new();
    }
    tokio::fs::read(root.join(relative))
        .await
        .unwrap_or_default()
}

async fn server(args: Args) -> anyhow::Result<()> {
    args.check_known(&["listen", "root", "cert", "key"])?;
    let listen: SocketAddr = args
        .get("listen")
        .unwrap_or("127.0.0.1:4433")
        .parse()
        .context("--listen: expected ADDR:PORT")?;
    let root = PathBuf::from(args.required("root")?);
    if !root.is_dir() {
        bail!("--root {} is not a directory", root.display());
    }
    let cert = args.required("cert")?;
    let key = args.required("key")?;
    let certs = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("cannot read {cert}"))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("bad certificate in {cert}"))?;
    let key = PrivateKeyDer::from_pem_file(key).with_context(|| format!("cannot read {key}"))?;
    let mut crypto = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    crypto.alpn_protocols = vec![ALPN.to_vec()];
    let mut config =
        quinn::ServerConfig::with_crypto(Arc::new(QuicServerConfig::try_from(crypto)?));
    config.transport_config(transport());
    let endpoint =
        Endpoint::server(config, listen).with_context(|| format!("cannot listen on {listen}"))?;
    eprintln!(
        "quinn-peer: listening on {listen}, serving {}",
        root.display()
    );
    let root = Arc::new(root);
    while let Some(incoming) = endpoint.accept().await {
        let root = Arc::clone(&root);
        tokio::spawn(async move {
            if let Err(e) = serve_connection(incoming, root).await {
                eprintln!("quinn-peer: connection failed: {e:#}");
            }
        });
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = match argv.split_first() {
        Some((mode, rest)) if mode == "client" => match Args::parse(rest) {
            Ok(a) => client(a).await,
            Err(e) => Err(e),
        },
        Some((mode, rest)) if mode == "server" => match Args::parse(rest) {
            Ok(a) => server(a).await,
            Err(e) => Err(e),
        },
        _ => Err(anyhow!("usage: quinn-peer client|server [--flag value]...")),
    };
    if let Err(e) = result {
        eprintln!("quinn-peer: error: {e:#}");
        std::process::exit(1);
    }
}

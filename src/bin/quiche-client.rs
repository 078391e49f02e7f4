//! quiche-client: downloads URLs over HTTP/3 or hq-interop (HTTP/0.9 over
//! QUIC) with a selectable congestion controller and reports goodput and the
//! SHA-256 of every response.

use std::io::{IsTerminal, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;
use url::Url;

use quiche_vegas::cc_select::answer_cc_question;
use quiche_vegas::client_state::ClientState;
use quiche_vegas::net::{run_client, stop_client_on_signals, ClientReport, ClientSetup};
use quiche_vegas::qlog_output::qlog_dir_from_env;
use quiche_vegas::qvis::Converter;
use quiche_vegas::settings::TransportFlags;
use quiche_vegas::transfer::{
    ClientSession, DatagramExchange, DgramProto, HttpVersion, RequestOptions, RequestOutcome,
    ResponseRecord, ResponseSummary,
};

/// Downloads every URL (all on one server) over one QUIC connection.
///
/// Prints one line per response and a summary on stdout; exits non-zero if
/// any response is missing or not 2xx. With QLOGDIR set, the connection
/// writes QLOGDIR/client-<id>.sqlog (and, with --qvis,
/// QLOGDIR/client-<id>-qvis.qlog).
#[derive(Parser, Debug)]
#[command(name = "quiche-client", version)]
struct Args {
    /// URLs to download, e.g. https://127.0.0.1:4433/file.
    #[arg(value_name = "URL")]
    urls: Vec<String>,

    /// Do not verify the server's certificate.
    #[arg(long)]
    no_verify: bool,

    /// Save each response body into DIR, named after the URL's last
    /// segment: written to a temporary file there and renamed only once the
    /// response is complete (its content-length matched) and 2xx, so an
    /// existing file is replaced only by a good response.
    #[arg(long, value_name = "DIR")]
    dump_responses: Option<PathBuf>,

    /// Application protocol: HTTP/3 (ALPN h3) or HTTP/0.9 (ALPN hq-interop).
    #[arg(long, value_name = "VERSION", default_value = "HTTP/3")]
    http_version: HttpVersion,

    #[command(flatten)]
    transport: TransportFlags,

    /// Connect to ADDR instead of the URLs' host (which still names the
    /// server in TLS and HTTP).
    #[arg(long, value_name = "ADDR")]
    connect_to: Option<SocketAddr>,

    /// Also write the connection's qlog as qvis loads it,
    /// QLOGDIR/client-<id>-qvis.qlog beside its .sqlog, once the connection
    /// has ended (needs QLOGDIR). The converter is qlog-analysis's
    /// `to-qvis`, as for `vegas-sim run --qvis`: $VEGAS_QLOG_ANALYSIS, else
    /// the repository's qlog-analysis/.venv/bin/qlog-analysis above this
    /// program, else qlog-analysis on the PATH. If it cannot run or fails,
    /// one line on stderr says why; the download and the .sqlog are not
    /// affected.
    #[arg(long)]
    qvis: bool,

    #[command(flatten)]
    quiche_client: QuicheClientFlags,
}

/// quiche's own client's flags (cloudflare/quiche `apps/src/args.rs`), with
/// their meanings.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "quiche client flags")]
struct QuicheClientFlags {
    /// Send each URL's request N times (on the one connection).
    #[arg(short = 'n', long = "requests", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    requests: u64,

    /// Send from this local UDP port (default: any).
    #[arg(long, value_name = "PORT")]
    source_port: Option<u16>,

    /// Trust the CA certificates in this PEM file when verifying the server.
    #[arg(long, value_name = "FILE")]
    trust_origin_ca_pem: Option<PathBuf>,

    /// QUIC version to offer, in hex (e.g. babababa, to see version
    /// negotiation) [default: quiche's, 1].
    #[arg(long, value_name = "VERSION", value_parser = parse_wire_version)]
    wire_version: Option<u32>,

    /// HTTP request method (HTTP/3 only for anything but GET). Our server
    /// answers POST and PUT by counting and hashing the body (an upload
    /// measures the client-to-server direction).
    #[arg(long, value_name = "METHOD", default_value = "GET")]
    method: String,

    /// Send FILE's contents as every request's body (HTTP/3; with a
    /// content-length).
    #[arg(long, value_name = "FILE")]
    body: Option<PathBuf>,

    /// Add a request header field, "Name: value" (repeatable; the name is
    /// sent lowercase, as HTTP/3 requires).
    #[arg(short = 'H', long = "header", value_name = "HEADER", value_parser = parse_header)]
    headers: Vec<(String, String)>,

    /// Print the responses (header fields and body, the first 1 MiB of
    /// each, as UTF-8 with invalid bytes replaced) as one JSON document on
    /// stdout; the per-response lines and the summary then go to stderr.
    #[arg(long)]
    dump_json: bool,

    /// Resume the TLS session saved in FILE (if it is for this server) and
    /// save the new one there after the connection, as quiche's client;
    /// the server's NEW_TOKEN token is kept there too, unless
    /// --token-file. Our text format, mode 0600; quiche's raw session
    /// files are read too.
    #[arg(long, value_name = "FILE")]
    session_file: Option<PathBuf>,

    /// Keep the server's NEW_TOKEN token (RFC 9000 section 8.1.3) in FILE
    /// and send it in the next connection's first Initial, so that a
    /// server validating addresses skips its Retry round trip. A token is
    /// used once, and only for the server that gave it.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,

    /// With a session to resume (--session-file), send the requests as
    /// 0-RTT early data, before the handshake is done.
    #[arg(long)]
    early_data: bool,

    /// Write each received UDP datagram, as it arrived, into DIR/N.pkt
    /// (N from 0), as quiche's client.
    #[arg(long, value_name = "DIR")]
    dump_packets: Option<PathBuf>,

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
    #[arg(long, value_name = "DATA", default_value = "quack")]
    dgram_data: String,
}

/// "Name: value" → (lowercase name, value without surrounding blanks).
fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("header '{text}' is not 'Name: value'"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("header '{text}' has no name"));
    }
    Ok((name.to_ascii_lowercase(), value.trim().to_string()))
}

fn parse_wire_version(text: &str) -> Result<u32, String> {
    let digits = text.trim_start_matches("0x");
    u32::from_str_radix(digits, 16).map_err(|e| format!("'{text}' is not a hex version: {e}"))
}

fn main() -> ExitCode {
    env_logger::init();
    let args = Args::parse();
    let flags = &args.transport;
    if let Some(exit) = answer_cc_question(
        "quiche-client",
        flags.list_cc_algorithms,
        &flags.cc_algorithm,
        &flags.cc_param,
    ) {
        return exit;
    }
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("quiche-client: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The server all URLs are on, and their paths.
struct Target {
    host: String,
    port: u16,
    /// `host[:port]` as HTTP/3's `:authority`.
    authority: String,
    paths: Vec<String>,
    /// The host is a name (not an IP address): it goes into TLS's SNI.
    server_name: Option<String>,
}

fn parse_urls(urls: &[String]) -> anyhow::Result<Target> {
    let mut target: Option<Target> = None;
    for text in urls {
        let url = Url::parse(text).with_context(|| format!("invalid URL '{text}'"))?;
        if url.scheme() != "https" {
            bail!("URL '{text}' must use https");
        }
        let host = url
            .host_str()
            .with_context(|| format!("URL '{text}' has no host"))?
            .to_string();
        let port = url.port_or_known_default().unwrap_or(443);
        let mut path = url.path().to_string();
        if let Some(query) = url.query() {
            path.push('?');
            path.push_str(query);
        }
        match &mut target {
            Some(t) => {
                if t.host != host || t.port != port {
                    bail!(
                        "all URLs must be on one server: '{text}' is not on {}",
                        t.authority
                    );
                }
                t.paths.push(path);
            }
            None => {
                let authority = match url.port() {
                    Some(p) => format!("{host}:{p}"),
                    None => host.clone(),
                };
                target = Some(Target {
                    server_name: url.domain().map(str::to_string),
                    host,
                    port,
                    authority,
                    paths: vec![path],
                });
            }
        }
    }
    target.context("no URL given")
}

fn resolve(target: &Target) -> anyhow::Result<SocketAddr> {
    // `host_str` keeps IPv6 literals in brackets.
    let host = target.host.trim_start_matches('[').trim_end_matches(']');
    (host, target.port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {}", target.host))?
        .next()
        .with_context(|| format!("{} has no address", target.host))
}

fn run(args: Args) -> anyhow::Result<bool> {
    let mut target = parse_urls(&args.urls)?;
    let flags = &args.quiche_client;
    let once = target.paths.clone();
    for _ in 1..flags.requests {
        target.paths.extend(once.iter().cloned());
    }
    let settings = args.transport.settings();
    let (mut config, cc) = match flags.wire_version {
        Some(version) => settings.build_config_for_version(version, &[args.http_version.alpn()])?,
        None => settings.build_config(&[args.http_version.alpn()])?,
    };
    config.verify_peer(!args.no_verify);
    if flags.early_data {
        config.enable_early_data();
    }
    flags.dgram_proto.apply(&mut config);
    // Sessions and tokens belong to host and port (the default port named).
    let server_key = format!("{}:{}", target.host, target.port);
    let saved = |path: &Option<PathBuf>| match path.as_deref().map(ClientState::load) {
        Some(Ok(Some(state))) if state.is_for(&server_key) => Some(state),
        Some(Err(e)) => {
            eprintln!("quiche-client: warning: ignoring {e:#}");
            None
        }
        _ => None,
    };
    let from_session_file = saved(&flags.session_file);
    let token = if flags.token_file.is_some() {
        saved(&flags.token_file).and_then(|s| s.token)
    } else {
        from_session_file.as_ref().and_then(|s| s.token.clone())
    };
    let tls_session = from_session_file.and_then(|s| s.session);
    if let Some(pem) = &flags.trust_origin_ca_pem {
        let path = pem
            .to_str()
            .context("--trust-origin-ca-pem: the path is not UTF-8")?;
        config
            .load_verify_locations_from_file(path)
            .map_err(|e| anyhow::anyhow!("cannot load CA certificates from {path}: {e}"))?;
    }
    let peer = match args.connect_to {
        Some(addr) => addr,
        None => resolve(&target)?,
    };
    let body = match &flags.body {
        Some(path) => Some(
            std::fs::read(path)
                .with_context(|| format!("cannot read --body file {}", path.display()))?
                .into(),
        ),
        None => None,
    };
    let options = RequestOptions {
        method: Some(flags.method.clone()),
        headers: flags.headers.clone(),
        body,
        record: flags.dump_json,
    };
    let session = ClientSession::new(
        args.http_version,
        &target.authority,
        &target.paths,
        args.dump_responses.as_deref(),
    )?
    .with_options(options)?;
    let session = match flags.dgram_proto {
        DgramProto::Oneway => session.with_datagrams(DatagramExchange::new(
            flags.dgram_count,
            flags.dgram_data.as_bytes(),
        ))?,
        DgramProto::None => session,
    };
    stop_client_on_signals().context("cannot handle SIGINT/SIGTERM")?;
    let show_progress = std::io::stderr().is_terminal();
    let qlog_dir = qlog_dir_from_env();
    if args.qvis && qlog_dir.is_none() {
        bail!("--qvis needs QLOGDIR: the directory the qlog, and its qvis form, go to");
    }
    let setup = ClientSetup {
        peer,
        server_name: target.server_name.clone(),
        qlog_dir,
        cc_description: cc.to_string(),
        idle_timeout_ms: settings.idle_timeout_ms,
        tick: show_progress.then_some(Duration::from_millis(200)),
        aqt_from_ip_option: args.transport.aqt_from_ip_option,
        source_port: flags.source_port.unwrap_or(0),
        session: tls_session,
        token,
        dump_packets: flags.dump_packets.clone(),
        qvis: args.qvis.then(Converter::locate),
    };
    let result = run_client(&mut config, session, &setup, &mut progress_bar);
    if show_progress {
        eprint!("\r\x1b[2K");
    }
    let (session, report) = result?;
    save_client_state(flags, &server_key, &report);
    let summaries = session.summaries();
    let mut lines: Vec<String> = summaries
        .iter()
        .map(|s| response_line(&flags.method, s))
        .collect();
    if let Some(datagrams) = session.datagrams() {
        lines.push(format!("datagrams  {datagrams}"));
    }
    lines.push(summary_line(
        &summaries,
        &report,
        session.server_header(),
        args.http_version,
    ));
    if flags.dump_json {
        println!("{}", responses_json(&session.records()));
        for line in &lines {
            eprintln!("{line}");
        }
    } else {
        for line in &lines {
            println!("{line}");
        }
    }
    Ok(session.all_succeeded())
}

/// Keeps what the connection gave for the next one: the session in
/// `--session-file`, the NEW_TOKEN token in `--token-file` or else the
/// session file. A token not renewed is dropped (RFC 9000 section 8.1.3:
/// reusing one would link connections). A file that cannot be written is a
/// warning: the download itself succeeded.
fn save_client_state(flags: &QuicheClientFlags, server_key: &str, report: &ClientReport) {
    let mut writes = Vec::new();
    if let Some(path) = &flags.session_file {
        let token = if flags.token_file.is_none() {
            report.new_token.clone()
        } else {
            None
        };
        writes.push((path, report.session.clone(), token));
    }
    if let Some(path) = &flags.token_file {
        writes.push((path, None, report.new_token.clone()));
    }
    for (path, session, token) in writes {
        let state = ClientState {
            server: Some(server_key.to_string()),
            session,
            token,
        };
        if let Err(e) = state.save(path) {
            eprintln!("quiche-client: warning: {e:#}");
        }
    }
    if flags.session_file.is_some() {
        let early = if !flags.early_data {
            "not asked"
        } else if report.early_data_accepted {
            "accepted"
        } else {
            "not accepted"
        };
        eprintln!(
            "quiche-client: TLS session {}, 0-RTT {early}",
            if report.resumed { "resumed" } else { "new" }
        );
    }
}

/// `--dump-json`: `{"entries": [{"path", "headers": [[name, value]...],
/// "body", "body_truncated"}...]}`, one entry per request in order.
fn responses_json(records: &[&ResponseRecord]) -> String {
    let entries: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            serde_json::json!({
                "path": r.path,
                "headers": r.headers.iter().map(|(n, v)| [n, v]).collect::<Vec<_>>(),
                "body": String::from_utf8_lossy(&r.body),
                "body_truncated": r.body_truncated,
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "entries": entries }))
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot encode responses: {e}\"}}"))
}

fn response_line(method: &str, s: &ResponseSummary) -> String {
    let status = s
        .status
        .map_or_else(String::new, |st| format!("  status={st}"));
    match &s.outcome {
        Some(RequestOutcome::Complete { sha256 }) if s.is_success() => {
            format!(
                "{method} {}  {} bytes  sha256={sha256}{status}",
                s.path, s.bytes
            )
        }
        Some(RequestOutcome::Complete { .. }) => {
            format!(
                "{method} {}  FAILED: status {}  {} bytes",
                s.path,
                s.status.unwrap_or(0),
                s.bytes
            )
        }
        Some(RequestOutcome::Failed(reason)) => {
            format!("{method} {}  FAILED: {reason}  {} bytes", s.path, s.bytes)
        }
        None => format!("{method} {}  FAILED: unfinished  {} bytes", s.path, s.bytes),
    }
}

/// The summary names what the client knows of the sender: the server's
/// `server` header (ours says `quiche-vegas cc=NAME`), or that it does not
/// know (HTTP/0.9, or a server that does not say). The client's own
/// controller only paces its requests and ACKs, so it is not named here.
fn summary_line(
    summaries: &[ResponseSummary],
    report: &ClientReport,
    server_header: Option<&str>,
    version: HttpVersion,
) -> String {
    let bytes: u64 = summaries.iter().map(|s| s.bytes).sum();
    let secs = report.elapsed.as_secs_f64();
    let goodput = if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e6
    } else {
        0.0
    };
    let rtt = report.path.as_ref().map_or_else(String::new, |p| {
        format!("  srtt={:.1}ms", p.rtt.as_secs_f64() * 1e3)
    });
    let sender =
        server_header.map_or_else(|| "sender unknown".to_string(), |s| format!("sender: {s}"));
    format!(
        "total  {bytes} bytes  {secs:.3} s  goodput {goodput:.2} Mbit/s  packets lost {}  \
         (received {}, sent {}){rtt}  {sender}  {version}",
        report.stats.lost, report.stats.recv, report.stats.sent
    )
}

fn progress_bar(session: &ClientSession, elapsed: Duration) {
    let received = session.bytes_received();
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = received as f64 * 8.0 / secs / 1e6;
    let line = match session.bytes_expected().filter(|&t| t > 0) {
        Some(total) => {
            let fraction = (received as f64 / total as f64).min(1.0);
            let filled = (fraction * 30.0) as usize;
            format!(
                "[{}{}] {:5.1}%  {:.1}/{:.1} MB  {rate:.1} Mbit/s",
                "#".repeat(filled),
                " ".repeat(30 - filled),
                fraction * 100.0,
                received as f64 / 1e6,
                total as f64 / 1e6
            )
        }
        None => format!("{:.1} MB  {rate:.1} Mbit/s", received as f64 / 1e6),
    };
    let mut stderr = std::io::stderr();
    write!(stderr, "\r\x1b[2K{line}").ok();
    stderr.flush().ok();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_on_one_server() {
        let t = parse_urls(&[
            "https://127.0.0.1:4433/file".into(),
            "https://127.0.0.1:4433/a/b?x=1".into(),
        ])
        .unwrap();
        assert_eq!(t.paths, vec!["/file", "/a/b?x=1"]);
        assert_eq!(t.authority, "127.0.0.1:4433");
        assert_eq!(t.server_name, None);
        let t = parse_urls(&["https://localhost/".into()]).unwrap();
        assert_eq!((t.port, t.server_name.as_deref()), (443, Some("localhost")));
        assert!(parse_urls(&[
            "https://127.0.0.1:4433/file".into(),
            "https://127.0.0.1:4434/file".into()
        ])
        .is_err());
        assert!(parse_urls(&["http://127.0.0.1/".into()]).is_err());
        assert!(parse_urls(&["not a url".into()]).is_err());
    }

    #[test]
    fn ipv6_literal_resolves() {
        let t = parse_urls(&["https://[::1]:4433/".into()]).unwrap();
        assert_eq!(
            resolve(&t).unwrap(),
            "[::1]:4433".parse::<SocketAddr>().unwrap()
        );
    }
}

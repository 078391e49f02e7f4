//! NEW_TOKEN (RFC 9000 section 8.1.3), TLS session resumption with 0-RTT,
//! and quiche's `--dump-packets`, `--name` and `--disable-gso`, between the
//! real apps on loopback.
//!
//! Whether a connection went through Retry is read from the client's own
//! `--dump-packets` directory: every datagram it received, parsed here
//! with quiche's header parser.

mod common;

use std::path::Path;
use std::time::Duration;

use common::raw::LyingServer;
use common::*;

/// Packet types of the first packet of every datagram dumped in `dir`.
fn dumped_types(dir: &Path) -> Vec<quiche::Type> {
    let mut files: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let n = p
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("unexpected dump file {}", p.display()));
            (n, p)
        })
        .collect();
    files.sort();
    // Named 0.pkt, 1.pkt, ... without a gap.
    for (i, (n, _)) in files.iter().enumerate() {
        assert_eq!(*n, i as u64);
    }
    files
        .iter()
        .map(|(_, p)| {
            let mut data = std::fs::read(p).unwrap();
            quiche::Header::from_slice(&mut data, quiche::MAX_CONN_ID_LEN)
                .unwrap_or_else(|e| panic!("{} is no QUIC packet: {e}", p.display()))
                .ty
        })
        .collect()
}

/// Downloads `/f` with `extra` client flags, dumping received datagrams
/// into a fresh directory; whether a Retry came.
fn download_saw_retry(server: &Server, extra: &[&str]) -> bool {
    let dump = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--no-verify",
        "--dump-packets",
        dump.path().to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let url = server.url("/f");
    args.push(&url);
    let out = client(&args, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("GET /f  5 bytes"));
    dumped_types(dump.path()).contains(&quiche::Type::Retry)
}

/// What a test serves and keeps: a root serving `/f` ("hello", 5 bytes)
/// and a directory for its clients' files.
struct Site {
    root: tempfile::TempDir,
    files: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("f"), b"hello").unwrap();
        Site {
            root,
            files: tempfile::tempdir().unwrap(),
        }
    }

    /// A server of the root, with `flags` besides `--root`.
    fn serve(&self, flags: &[&str]) -> Server {
        let mut args = vec!["--root", self.root.path().to_str().unwrap()];
        args.extend_from_slice(flags);
        Server::start(&args, None)
    }

    /// The path of a client's file called `name` (not created).
    fn file(&self, name: &str) -> String {
        self.files.path().join(name).to_str().unwrap().to_string()
    }
}

fn token_of(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("token ").map(str::to_string))
}

#[test]
fn a_returning_client_skips_retry_with_its_token() {
    let site = Site::new();
    let tokens = &site.file("tokens");
    let server = site.serve(&["--retry", "always"]);
    assert!(download_saw_retry(&server, &["--token-file", tokens]));
    let first = token_of(Path::new(tokens)).expect("no token kept");
    // 49 bytes: version, issue time, 8 random bytes, MAC.
    assert_eq!(first.len(), 2 * 49);
    assert!(!download_saw_retry(&server, &["--token-file", tokens]));
    // Each connection brings a new token; the old one is not kept.
    let second = token_of(Path::new(tokens)).expect("no token kept");
    assert!(download_saw_retry(&server, &[]), "no token, a Retry");
    assert!(!download_saw_retry(&server, &["--token-file", tokens]));
    assert_ne!(token_of(Path::new(tokens)).unwrap(), second);

    // The session file keeps the token too.
    let session = &site.file("session");
    assert!(download_saw_retry(&server, &["--session-file", session]));
    assert!(!download_saw_retry(&server, &["--session-file", session]));

    // Switched off, every connection pays the Retry.
    let off = site.serve(&["--retry", "always", "--new-token-lifetime", "0"]);
    let off_tokens = &site.file("off");
    assert!(download_saw_retry(&off, &["--token-file", off_tokens]));
    assert_eq!(token_of(Path::new(off_tokens)), None);
    assert!(download_saw_retry(&off, &["--token-file", off_tokens]));
}

#[test]
fn expired_forged_and_other_servers_tokens_get_a_full_retry() {
    let site = Site::new();
    let tokens = &site.file("tokens");
    let a = site.serve(&["--retry", "always", "--new-token-lifetime", "1"]);
    assert!(download_saw_retry(&a, &["--token-file", tokens]));
    let token = token_of(Path::new(tokens)).unwrap();
    // Expired: the lifetime is 1 s, counted in whole seconds.
    std::thread::sleep(Duration::from_millis(2_500));
    assert!(download_saw_retry(&a, &["--token-file", tokens]));

    // A's token offered to B (the file says it is B's: the client itself
    // offers a token only to the server that gave it).
    let b = site.serve(&["--retry", "always"]);
    let write = |token: &str| {
        std::fs::write(
            tokens,
            format!(
                "quiche-vegas client state 1\nserver {}\ntoken {token}\n",
                b.addr
            ),
        )
        .unwrap();
    };
    write(&token);
    assert!(download_saw_retry(&b, &["--token-file", tokens]));
    // Forged: B's own token with one bit flipped; garbage of every shape.
    download_saw_retry(&b, &["--token-file", tokens]);
    let mut own = hex::decode(token_of(Path::new(tokens)).unwrap()).unwrap();
    write(&hex::encode(&own));
    assert!(
        !download_saw_retry(&b, &["--token-file", tokens]),
        "B's own token"
    );
    own[12] ^= 0x10;
    for forged in [
        hex::encode(&own),
        "02".repeat(49),
        "ff".into(),
        "2a".repeat(300),
    ] {
        write(&forged);
        assert!(
            download_saw_retry(&b, &["--token-file", tokens]),
            "token {forged}: no Retry"
        );
    }
    // The client never offers a token to a server it was not given by.
    std::fs::write(
        tokens,
        format!(
            "quiche-vegas client state 1\nserver 127.0.0.1:1\ntoken {}\n",
            hex::encode(&own)
        ),
    )
    .unwrap();
    assert!(download_saw_retry(&b, &["--token-file", tokens]));
}

#[test]
fn a_malformed_or_oversized_new_token_from_a_server_is_handled() {
    let site = Site::new();
    let tokens = &site.file("tokens");
    // An empty token: FRAME_ENCODING_ERROR (RFC 9000 section 19.7); the
    // client fails with one line and keeps nothing.
    let server = LyingServer::start_with_new_token(
        &[(":status", "200"), ("content-length", "2")],
        b"ok",
        Some(Vec::new()),
    );
    let url = format!("https://{}/x", server.addr);
    let out = client(&["--no-verify", "--token-file", tokens, &url], None);
    assert_clean_failure(&out, &["frame encoding error"]);
    assert!(!Path::new(tokens).exists());
    drop(server);
    // A token too long to fit a first Initial: the download succeeds and
    // the token is not kept; a short garbage one is kept as it came.
    for (len, kept) in [(600usize, false), (30, true)] {
        let server = LyingServer::start_with_new_token(
            &[(":status", "200"), ("content-length", "2")],
            b"ok",
            Some(vec![0xab; len]),
        );
        let url = format!("https://{}/x", server.addr);
        let out = client(&["--no-verify", "--token-file", tokens, &url], None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let expected = kept.then(|| "ab".repeat(len));
        assert_eq!(
            token_of(Path::new(tokens)),
            expected,
            "token of {len} bytes"
        );
    }
}

/// `quic:packet_sent` events of 0-RTT packets in the only client qlog in
/// `dir`.
fn zero_rtt_packets_sent(dir: &Path) -> usize {
    let records = qlog_records(&only_file(dir, "client-"));
    events(&records, "quic:packet_sent")
        .iter()
        .filter(|e| e["header"]["packet_type"] == "0RTT")
        .count()
}

#[test]
fn a_resumed_session_sends_its_requests_as_early_data() {
    let site = Site::new();
    let session = &site.file("session");
    let run = |server: &Server, extra: &[&str]| {
        let qlog = tempfile::tempdir().unwrap();
        let mut args = vec!["--no-verify", "--session-file", session];
        args.extend_from_slice(extra);
        let url = server.url("/f");
        args.push(&url);
        let out = client(&args, Some(qlog.path()));
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("GET /f  5 bytes"));
        let said = format!("{}{}", text(&out.stderr), text(&out.stdout));
        (said, zero_rtt_packets_sent(qlog.path()))
    };
    let server = site.serve(&["--early-data"]);
    let (said, zero_rtt) = run(&server, &["--early-data"]);
    assert!(said.contains("TLS session new"), "{said}");
    assert_eq!(zero_rtt, 0);
    let saved = std::fs::read_to_string(session).unwrap();
    assert!(saved.contains("\nsession "), "{saved}");
    let (said, zero_rtt) = run(&server, &["--early-data"]);
    assert!(
        said.contains("TLS session resumed, 0-RTT accepted"),
        "{said}"
    );
    assert!(zero_rtt > 0, "no 0-RTT packet sent");
    // The server kept the 0-RTT packets that came with the Initial (it
    // dropped them, and the client declared them lost).
    assert!(said.contains("packets lost 0 "), "{said}");
    // Without --early-data: resumed, nothing sent early.
    let (said, zero_rtt) = run(&server, &[]);
    assert!(
        said.contains("TLS session resumed, 0-RTT not asked"),
        "{said}"
    );
    assert_eq!(zero_rtt, 0);
    // A server without --early-data resumes but refuses 0-RTT; the
    // request still gets its answer.
    let plain = site.serve(&[]);
    run(&plain, &[]);
    let (said, _) = run(&plain, &["--early-data"]);
    assert!(
        said.contains("TLS session resumed, 0-RTT not accepted"),
        "{said}"
    );
}

#[test]
fn the_server_dumps_every_datagram_it_receives() {
    let site = Site::new();
    let dump = tempfile::tempdir().unwrap();
    let mut server = site.serve(&[
        "--dump-packets",
        dump.path().to_str().unwrap(),
        "--name",
        "satellite-gw",
        "--disable-gso",
    ]);
    assert!(
        server
            .log
            .iter()
            .any(|l| l.contains("satellite-gw listening on")),
        "{:#?}",
        server.log
    );
    // Datagrams of any content are dumped as they came, in order.
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let sent: Vec<Vec<u8>> = (0..5u64)
        .map(|i| random_bytes(1200 + i as usize, i + 1))
        .collect();
    for datagram in &sent {
        socket.send_to(datagram, server.addr).unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::fs::read_dir(dump.path()).unwrap().count() < sent.len() {
        assert!(
            std::time::Instant::now() < deadline,
            "not all datagrams dumped"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for (i, datagram) in sent.iter().enumerate() {
        let dumped = std::fs::read(dump.path().join(format!("{i}.pkt"))).unwrap();
        assert_eq!(&dumped, datagram, "datagram {i}");
    }
    // Then a download's: its first datagram is the client's Initial.
    let out = client(&["--no-verify", &server.url("/f")], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    server.wait_for_closed_connection();
    let mut first = std::fs::read(dump.path().join(format!("{}.pkt", sent.len()))).unwrap();
    let hdr = quiche::Header::from_slice(&mut first, quiche::MAX_CONN_ID_LEN).unwrap();
    assert_eq!(hdr.ty, quiche::Type::Initial);
    assert!(std::fs::read_dir(dump.path()).unwrap().count() > sent.len() + 1);
}

#[test]
fn datagrams_go_both_ways_with_dgram_proto_oneway() {
    let site = Site::new();
    let mut server = site.serve(&[
        "--dgram-proto",
        "oneway",
        "--dgram-count",
        "3",
        "--dgram-data",
        "brrrr",
    ]);
    let out = client(
        &[
            "--no-verify",
            "--dgram-proto",
            "oneway",
            "--dgram-count",
            "7",
            "--dgram-data",
            "quack",
            &server.url("/f"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Each datagram: the quarter stream ID 0 (one byte), then the data.
    // Loopback loses none of them.
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!(
            "datagrams  sent 7, received 3 ({} bytes)",
            3 * (1 + 5)
        )),
        "{said}"
    );
    let closed = server.wait_for_line(|l| l.contains("quiche-server: connection "));
    assert!(
        closed.contains(&format!(
            "datagrams sent 3, received 7 ({} bytes)",
            7 * (1 + 5)
        )),
        "{closed}"
    );
    // Off (the default) on the server: it offers none, the client sends
    // none and says so.
    let plain = site.serve(&[]);
    let out = client(
        &[
            "--no-verify",
            "--dgram-proto",
            "oneway",
            "--dgram-count",
            "7",
            &plain.url("/f"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("datagrams  sent 0, received 0 (0 bytes)"));
    // HTTP/0.9 has no datagrams, as in quiche's apps.
    let out = client(
        &[
            "--no-verify",
            "--http-version",
            "HTTP/0.9",
            "--dgram-proto",
            "oneway",
            &plain.url("/f"),
        ],
        None,
    );
    assert_clean_failure(&out, &["need HTTP/3"]);
}

#[test]
fn help_lists_quiches_flags() {
    let server_flags = [
        "--new-token-lifetime",
        "--early-data",
        "--dump-packets",
        "--name",
        "--disable-gso",
        "--dgram-proto",
        "--dgram-count",
        "--dgram-data",
    ];
    let client_flags = [
        "--session-file",
        "--token-file",
        "--early-data",
        "--dump-packets",
        "--dgram-proto",
        "--dgram-count",
        "--dgram-data",
    ];
    for (bin, flags) in [(SERVER, &server_flags[..]), (CLIENT, &client_flags[..])] {
        let out = std::process::Command::new(bin)
            .arg("--help")
            .output()
            .unwrap();
        assert!(out.status.success());
        let help = text(&out.stdout);
        for flag in flags {
            assert!(
                help.lines()
                    .any(|l| l.split_whitespace().next() == Some(flag)),
                "{bin}: no {flag}"
            );
        }
    }
}

/// Patch 0015's NEW_TOKEN is sent again when its packet is lost (quiche
/// had a `debug_panic` there, a no-op in release: the token was gone).
/// A client and a server in memory; the packets carrying the token are
/// dropped, later ones delivered until loss detection declares it lost.
#[test]
fn a_lost_new_token_is_sent_again() {
    use quiche_vegas::settings::TransportSettings;
    let identity = quiche_vegas::tls::Identity::self_signed().unwrap();
    let settings = TransportSettings::default();
    let (mut server_config, _) = settings.build_server_config(&[b"h3"], &identity).unwrap();
    let (mut client_config, _) = settings.build_config(&[b"h3"]).unwrap();
    client_config.verify_peer(false);
    let mut pair = in_memory::Pair::new(&mut client_config, &mut server_config);
    // Until the handshake is confirmed on both sides.
    pair.exchange(20);
    let in_memory::Pair {
        client: mut c,
        server: mut s,
        ..
    } = pair;
    let mut buf = vec![0u8; 65_535];
    let (to_server, to_client) = (in_memory::to_server(), in_memory::to_client());
    assert!(c.is_established() && s.is_established());
    assert_eq!(c.received_new_token(), None);
    // Client-side calls are refused, server-side ones after the start too.
    assert_eq!(c.send_new_token(b"x"), Err(quiche::Error::InvalidState));
    assert_eq!(s.set_token(b"x"), Err(quiche::Error::InvalidState));
    assert_eq!(c.set_token(b"x"), Err(quiche::Error::InvalidState));

    s.send_new_token(b"token-1").unwrap();
    let mut dropped = 0;
    while s.send(&mut buf).is_ok() {
        dropped += 1;
    }
    assert!(dropped > 0, "the NEW_TOKEN was not sent");
    // Then data, delivered, and its ACKs: the dropped packet is declared
    // lost (three later packets acknowledged) and its token queued again.
    s.stream_send(1, &vec![7u8; 30_000], true).unwrap();
    for _ in 0..50 {
        while let Ok((n, _)) = s.send(&mut buf) {
            c.recv(&mut buf[..n], to_client).ok();
        }
        while c.stream_recv(1, &mut buf).is_ok() {}
        while let Ok((n, _)) = c.send(&mut buf) {
            s.recv(&mut buf[..n], to_server).ok();
        }
        if c.received_new_token().is_some() {
            break;
        }
    }
    assert_eq!(c.received_new_token(), Some(&b"token-1"[..]));
}

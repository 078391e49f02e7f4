//! The apps under attack and careless use: the private key stays private,
//! the server validates addresses and caps what one client can hold, a
//! malformed request is refused as RFC 9114 says, and `--dump-responses`
//! never saves or damages anything unless a response is complete.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::listing::names_in;
use common::raw::{client_config, first_initial, End, LyingServer, RawClient};
use common::*;

const H3_MESSAGE_ERROR: u64 = 0x10e;
const CONNECTION_REFUSED: u64 = 0x2;

/// Runs `cmd`, killing it if it has not ended after `limit`.
fn output_within(mut cmd: Command, limit: Duration) -> (Output, bool) {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("RUST_LOG")
        .env_remove("QLOGDIR")
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()).ok());
    match rx.recv_timeout(limit) {
        Ok(out) => (out.unwrap(), false),
        Err(_) => {
            // SAFETY: kill(2) on the child we started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            (rx.recv().unwrap().unwrap(), true)
        }
    }
}

// ---- hole 1: the self-signed key ----------------------------------------

#[test]
fn self_signed_key_is_never_written() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"x").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut server = Server::start_with_env(
        &["--root", root.path().to_str().unwrap()],
        None,
        &[("TMPDIR", tmp.path())],
    );
    // It serves with the certificate it made...
    let out = client(&["--no-verify", &server.url("/f")], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    server.wait_for_closed_connection();
    // ...and wrote nothing anywhere it could be read.
    assert_eq!(names_in(tmp.path()), Vec::<String>::new());
    let said = server.log.join("\n");
    assert!(said.contains("kept in memory"), "{said}");
    assert!(!said.contains(".pem"), "{said}");
}

// ---- hole 2: denial of service -----------------------------------------

/// What the server answers a client's first Initial with: the long-header
/// packet type.
fn answer_type(server: &Server) -> quiche::Type {
    let (client, initial) = first_initial(server.addr);
    client.socket.send_to(&initial, server.addr).unwrap();
    client
        .socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0; 65535];
    let (n, _) = client.socket.recv_from(&mut buf).expect("no answer");
    quiche::Header::from_slice(&mut buf[..n], 16).unwrap().ty
}

#[test]
fn retry_always_auto_and_never() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"hello").unwrap();
    let root = root.path().to_str().unwrap();
    let server = Server::start(&["--root", root, "--retry", "always"], None);
    assert_eq!(answer_type(&server), quiche::Type::Retry);
    // The apps' client follows the Retry.
    let out = client(&["--no-verify", &server.url("/f")], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("GET /f  5 bytes"));

    // The default, auto, on an idle server: no Retry, no round trip lost.
    for args in [
        &[][..],
        &["--retry", "auto"],
        &["--retry", "never"],
        &["--no-retry"],
    ] {
        let server = Server::start(&[&["--root", root][..], args].concat(), None);
        assert_eq!(answer_type(&server), quiche::Type::Initial, "{args:?}");
        let out = client(&["--no-verify", &server.url("/f")], None);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let mut cmd = Command::new(SERVER);
    cmd.args([
        "--listen",
        "127.0.0.1:0",
        "--root",
        root,
        "--retry",
        "sometimes",
    ]);
    let (out, _) = output_within(cmd, Duration::from_secs(5));
    assert_clean_failure(&out, &["always, auto, never"]);
}

#[test]
fn after_a_retry_the_server_uses_20_byte_connection_ids() {
    // Three 20-byte IDs in the server's transport parameters after a Retry
    // took patch 0012 (tests/retry_connection_ids.rs); before it the server
    // used 16 bytes.
    let root = tempfile::tempdir().unwrap();
    let server = Server::start(
        &["--root", root.path().to_str().unwrap(), "--retry", "always"],
        None,
    );
    let mut c = RawClient::connect(server.addr, &mut client_config(1_000_000));
    c.establish();
    assert_eq!(c.conn.destination_id().len(), quiche::MAX_CONN_ID_LEN);
}

#[test]
fn a_forged_or_replayed_token_creates_nothing() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let (client, mut initial) = first_initial(server.addr);
    // A token field in the first Initial (its length byte right after the
    // source connection ID) with garbage: dropped without an answer.
    let dcid_len = usize::from(initial[5]);
    let scid_len = usize::from(initial[6 + dcid_len]);
    let token_len_at = 7 + dcid_len + scid_len;
    assert_eq!(initial[token_len_at], 0, "a fresh Initial has no token");
    // Overwrite the (empty) token length with 1 and the next byte with junk:
    // the packet no longer decrypts, but the header parses with a token.
    initial[token_len_at] = 1;
    client.socket.send_to(&initial, server.addr).unwrap();
    client
        .socket
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0; 65535];
    assert!(
        client.socket.recv_from(&mut buf).is_err(),
        "the server answered an Initial with a forged token"
    );
}

/// Establishes a connection and keeps it open.
fn open_connection(server: &Server) -> RawClient {
    let mut config = client_config(1_000_000);
    let mut c = RawClient::connect(server.addr, &mut config);
    c.establish();
    c
}

/// A connection attempt the server is expected to refuse: the error it
/// closed with.
fn refused(server: &Server) -> Option<quiche::ConnectionError> {
    let mut config = client_config(1_000_000);
    let mut c = RawClient::connect(server.addr, &mut config);
    c.run_until(Duration::from_secs(10), |c| c.conn.peer_error().is_some());
    c.conn.peer_error().cloned()
}

#[test]
fn connections_beyond_the_limits_are_refused_not_left_hanging() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    let server = Server::start(&["--root", root, "--max-connections", "2"], None);
    let held: Vec<RawClient> = (0..2).map(|_| open_connection(&server)).collect();
    // At once: in answer to the client's first Initial (after the Retry),
    // not to a retransmission. A client whose initial RTT is 20 s sends
    // none for a minute (its first probe timeout), so a refusal within the
    // 30 s it waits came before any, however loaded the machine.
    let mut config = client_config(1_000_000);
    config.set_initial_rtt(Duration::from_secs(20));
    config.set_max_idle_timeout(120_000);
    let mut c = RawClient::connect(server.addr, &mut config);
    c.run_until(Duration::from_secs(30), |c| c.conn.peer_error().is_some());
    let e = c
        .conn
        .peer_error()
        .cloned()
        .expect("the third connection was not refused before any retransmission");
    assert!(!e.is_app && e.error_code == CONNECTION_REFUSED, "{e:?}");
    // The apps' client says so.
    let out = client(
        &["--no-verify", "--idle-timeout", "5000", &server.url("/f")],
        None,
    );
    assert_clean_failure(&out, &["connection refused"]);
    // Once one closes, a new one is taken.
    let mut held = held;
    let mut first = held.remove(0);
    first.conn.close(true, 0x100, b"").ok();
    first.run_until(Duration::from_secs(5), |c| c.conn.is_closed());
    // The server reaps the closed one when its draining ends (3 PTO):
    // wide enough for a loaded machine.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut config = client_config(1_000_000);
        let mut c = RawClient::connect(server.addr, &mut config);
        if c.run_until(Duration::from_secs(3), |c| c.conn.is_established()) {
            break;
        }
        assert!(Instant::now() < deadline, "no room after a close");
    }

    let server = Server::start(&["--root", root, "--max-connections-per-ip", "1"], None);
    let _one = open_connection(&server);
    let e = refused(&server).expect("the second connection from 127.0.0.1 was not refused");
    assert_eq!(e.error_code, CONNECTION_REFUSED, "{e:?}");
}

#[test]
fn pending_responses_hold_no_open_files() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("big"), random_bytes(2_000_000, 5)).unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let before = server.open_fds();
    // 40 requests for the file on a client that grants 1000 bytes per
    // stream and never reads more: every response stays pending.
    let mut config = client_config(1000);
    let mut c = RawClient::connect(server.addr, &mut config);
    c.establish();
    let get = [
        (":method", "GET"),
        (":scheme", "https"),
        (":authority", "localhost"),
        (":path", "/big"),
    ];
    for _ in 0..40 {
        c.request(&get);
    }
    c.run_until(Duration::from_millis(500), |_| false);
    let during = server.open_fds();
    assert!(
        during <= before + 2,
        "40 pending responses hold {} file descriptors",
        during - before
    );
}

#[test]
fn idle_timeout_zero_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    for (bin, args) in [
        (
            SERVER,
            vec![
                "--listen",
                "127.0.0.1:0",
                "--root",
                root,
                "--idle-timeout",
                "0",
            ],
        ),
        (CLIENT, vec!["--idle-timeout", "0", "https://127.0.0.1:9/f"]),
        (
            CLIENT,
            vec!["--idle-timeout", "600001", "https://127.0.0.1:9/f"],
        ),
    ] {
        let mut cmd = Command::new(bin);
        cmd.args(&args);
        let (out, killed) = output_within(cmd, Duration::from_secs(5));
        assert!(!killed, "{bin} {args:?} ran on");
        assert_clean_failure(&out, &["--idle-timeout"]);
    }
}

// ---- hole 4: the smaller ones -------------------------------------------

#[test]
fn root_is_required() {
    let mut cmd = Command::new(SERVER);
    cmd.args(["--listen", "127.0.0.1:0"]);
    let (out, killed) = output_within(cmd, Duration::from_secs(5));
    assert!(!killed, "the server started without --root");
    assert_clean_failure(&out, &["--root"]);
}

#[test]
fn dotfiles_are_not_served_unless_asked() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join(".env"), b"SECRET=1").unwrap();
    std::fs::create_dir(root.path().join(".git")).unwrap();
    std::fs::write(root.path().join(".git/config"), b"[core]").unwrap();
    let root = root.path().to_str().unwrap();
    let server = Server::start(&["--root", root], None);
    for path in ["/.env", "/.git/config", "/%2eenv"] {
        let out = client(&["--no-verify", &server.url(path)], None);
        let stdout = text(&out.stdout);
        assert!(!out.status.success(), "{path}: {stdout}");
        assert!(stdout.contains("404"), "{path}: {stdout}");
    }
    let server = Server::start(&["--root", root, "--serve-dotfiles"], None);
    let out = client(&["--no-verify", &server.url("/.env")], None);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains(&sha256_hex(b"SECRET=1")));
}

fn request_headers<'a>(method: &'a str, path: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        (":method", method),
        (":scheme", "https"),
        (":authority", "localhost"),
        (":path", path),
    ]
}

#[test]
fn head_gets_the_headers_of_get_without_a_body() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), random_bytes(12_345, 1)).unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let mut c = open_connection(&server);
    let id = c.request(&request_headers("HEAD", "/f"));
    let r = c.response(id);
    assert_eq!(r.end, Some(End::Finished), "{r:?}");
    assert_eq!(r.header(":status"), Some("200"));
    assert_eq!(r.header("content-length"), Some("12345"));
    assert!(r.body.is_empty());
    let id = c.request(&request_headers("HEAD", "/missing"));
    let r = c.response(id);
    assert_eq!(r.header(":status"), Some("404"));
    assert!(r.body.is_empty());
    let id = c.request(&request_headers("GET", "/f"));
    let r = c.response(id);
    assert_eq!(r.body.len(), 12_345);
    let id = c.request(&request_headers("DELETE", "/f"));
    let r = c.response(id);
    assert_eq!(r.header(":status"), Some("405"));
    assert_eq!(r.header("allow"), Some("GET, HEAD, POST, PUT"));
}

#[test]
fn malformed_requests_get_h3_message_error() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"body").unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let mut c = open_connection(&server);
    let good = request_headers("GET", "/f");
    let mut cases: Vec<(String, Vec<(&str, &str)>)> = Vec::new();
    for i in 0..good.len() {
        let mut dup = good.clone();
        dup.insert(i, good[i]);
        cases.push((format!("duplicate {}", good[i].0), dup));
    }
    for name in [":method", ":scheme", ":path"] {
        let missing: Vec<_> = good.iter().copied().filter(|(n, _)| *n != name).collect();
        cases.push((format!("missing {name}"), missing));
    }
    let mut after = good.clone();
    after.insert(1, ("accept", "*/*"));
    cases.push(("pseudo after regular".into(), after));
    let mut status = good.clone();
    status.push((":status", "200"));
    cases.push((":status in a request".into(), status));
    for (label, headers) in &cases {
        let id = c.request(headers);
        let r = c.response(id);
        assert_eq!(r.end, Some(End::Reset(H3_MESSAGE_ERROR)), "{label}: {r:?}");
        assert!(r.headers.is_empty(), "{label}: {r:?}");
    }
    // The connection is still good.
    let id = c.request(&good);
    assert_eq!(c.response(id).body, b"body");
}

/// Runs `args` as user nobody when we are root (who may read anything),
/// as ourselves otherwise.
fn as_unprivileged(bin: &str, args: &[&str]) -> Command {
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } == 0 {
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            bin,
        ])
        .args(args);
        cmd
    } else {
        let mut cmd = Command::new(bin);
        cmd.args(args);
        cmd
    }
}

#[test]
fn unreadable_key_and_root_say_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let public = dir.path().join("www");
    std::fs::create_dir(&public).unwrap();
    std::fs::set_permissions(&public, std::fs::Permissions::from_mode(0o755)).unwrap();
    let private = dir.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let identity = quiche_vegas::tls::Identity::self_signed().unwrap();
    let cert = dir.path().join("cert.pem");
    std::fs::write(&cert, identity.cert_pem()).unwrap();
    std::fs::set_permissions(&cert, std::fs::Permissions::from_mode(0o644)).unwrap();
    let key = dir.path().join("key.pem");
    std::fs::write(&key, b"unreadable").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o000)).unwrap();
    if unsafe { libc::getuid() } == 0 && Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("skipped: root without setpriv cannot drop privileges");
        return;
    }
    let cmd = as_unprivileged(
        SERVER,
        &[
            "--listen",
            "127.0.0.1:0",
            "--root",
            public.to_str().unwrap(),
            "--cert",
            cert.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ],
    );
    let (out, killed) = output_within(cmd, Duration::from_secs(5));
    assert!(!killed);
    assert_clean_failure(
        &out,
        &[&format!(
            "cannot read private key {}: permission denied",
            key.display()
        )],
    );
    let cmd = as_unprivileged(
        SERVER,
        &[
            "--listen",
            "127.0.0.1:0",
            "--root",
            private.to_str().unwrap(),
        ],
    );
    let (out, killed) = output_within(cmd, Duration::from_secs(5));
    assert!(!killed);
    assert_clean_failure(
        &out,
        &[&format!(
            "root directory {}: permission denied",
            private.display()
        )],
    );
}

#[test]
fn garbage_key_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let identity = quiche_vegas::tls::Identity::self_signed().unwrap();
    let cert = dir.path().join("cert.pem");
    std::fs::write(&cert, identity.cert_pem()).unwrap();
    let key = dir.path().join("key.pem");
    std::fs::write(&key, b"-----BEGIN PRIVATE KEY-----\nnope\n").unwrap();
    let mut cmd = Command::new(SERVER);
    cmd.args([
        "--listen",
        "127.0.0.1:0",
        "--root",
        dir.path().to_str().unwrap(),
        "--cert",
        cert.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
    ]);
    let (out, _) = output_within(cmd, Duration::from_secs(5));
    assert_clean_failure(&out, &["key.pem holds no PEM private key"]);
    assert!(!text(&out.stderr).contains("TlsFail"));
}

// ---- hole 3: --dump-responses -------------------------------------------

/// A dump directory holding a good `name` from before.
fn dump_with_existing(name: &str) -> tempfile::TempDir {
    let dump = tempfile::tempdir().unwrap();
    std::fs::write(dump.path().join(name), b"the good old file").unwrap();
    dump
}

fn assert_untouched(dump: &Path, name: &str) {
    assert_eq!(names_in(dump), vec![name.to_string()]);
    assert_eq!(
        std::fs::read(dump.join(name)).unwrap(),
        b"the good old file"
    );
}

#[test]
fn dump_keeps_existing_files_on_404_and_failed_connections() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    for version in ["HTTP/3", "HTTP/0.9"] {
        let dump = dump_with_existing("missing");
        let out = client(
            &[
                "--no-verify",
                "--http-version",
                version,
                "--dump-responses",
                dump.path().to_str().unwrap(),
                &server.url("/missing"),
            ],
            None,
        );
        assert!(!out.status.success(), "{version}");
        assert_untouched(dump.path(), "missing");
    }
    // Nobody listens.
    let unused = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = unused.local_addr().unwrap();
    drop(unused);
    let dump = dump_with_existing("f");
    let out = client(
        &[
            "--no-verify",
            "--idle-timeout",
            "300",
            "--dump-responses",
            dump.path().to_str().unwrap(),
            &format!("https://{addr}/f"),
        ],
        None,
    );
    assert_clean_failure(&out, &["no answer", "no incomplete response was saved"]);
    assert_untouched(dump.path(), "f");
}

#[test]
fn dump_refuses_a_response_shorter_than_its_content_length() {
    let liar = LyingServer::start(
        &[(":status", "200"), ("content-length", "1000000")],
        b"0123456789",
    );
    let dump = dump_with_existing("f");
    let url = format!("https://{}/f", liar.addr);
    let out = client(
        &[
            "--no-verify",
            "--dump-responses",
            dump.path().to_str().unwrap(),
            &url,
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("GET /f  FAILED: the response ended after 10 of the 1000000 bytes"),
        "{stdout}"
    );
    assert_untouched(dump.path(), "f");
    // Without --dump-responses it is a failure too.
    let out = client(&["--no-verify", &url], None);
    assert!(!out.status.success());
    // A truthful one is saved, replacing the old file.
    let honest = LyingServer::start(
        &[(":status", "200"), ("content-length", "10")],
        b"0123456789",
    );
    let out = client(
        &[
            "--no-verify",
            "--dump-responses",
            dump.path().to_str().unwrap(),
            &format!("https://{}/f", honest.addr),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert_eq!(std::fs::read(dump.path().join("f")).unwrap(), b"0123456789");
    assert_eq!(names_in(dump.path()), vec!["f"]);
}

/// Starts a client downloading a large file into a dump directory holding
/// an older copy, and waits until the new body is partly written.
fn download_interrupted(signal: i32) -> (Output, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    // Sparse: 4 GB to serve, nothing to write.
    let f = std::fs::File::create(root.path().join("big")).unwrap();
    f.set_len(4_000_000_000).unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let dump = dump_with_existing("big");
    let child = Command::new(CLIENT)
        .args([
            "--no-verify",
            "--dump-responses",
            dump.path().to_str().unwrap(),
            &server.url("/big"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("QLOGDIR")
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let partial: u64 = std::fs::read_dir(dump.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name() != "big")
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum();
        if partial > 1_000_000 {
            break;
        }
        assert!(Instant::now() < deadline, "the download did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the child we started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    (out, dump)
}

#[test]
fn sigterm_and_sigint_mid_transfer_save_nothing() {
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGINT, "SIGINT")] {
        let (out, dump) = download_interrupted(signal);
        assert_clean_failure(&out, &[&format!("interrupted by {name}")]);
        let stderr = text(&out.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        // Nothing left behind, the old file intact.
        assert_untouched(dump.path(), "big");
    }
}

#[test]
fn sigkill_mid_transfer_leaves_the_old_file_intact() {
    let (out, dump) = download_interrupted(libc::SIGKILL);
    assert!(!out.status.success());
    assert_eq!(
        std::fs::read(dump.path().join("big")).unwrap(),
        b"the good old file"
    );
    // What is left is a hidden partial file, never the final name.
    for name in names_in(dump.path()) {
        assert!(name == "big" || name.starts_with(".big.partial-"), "{name}");
    }
}

/// A long-header Initial of an unknown version, `len` bytes in all (zero
/// padding; connection IDs only when they fit).
fn unknown_version_initial(len: usize) -> Vec<u8> {
    let mut p = vec![0xc0, 0x1a, 0x2a, 0x3a, 0x4a];
    if len >= 24 {
        p.push(8);
        p.extend_from_slice(&[0xd1; 8]);
        p.push(8);
        p.extend_from_slice(&[0x5c; 8]);
    } else {
        p.extend_from_slice(&[0, 0]);
    }
    p.push(0); // no token
    p.resize(len.max(p.len()), 0);
    p
}

#[test]
fn version_negotiation_only_for_datagrams_of_1200_bytes_or_more() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut buf = [0; 2048];
    // RFC 9000 section 14.1: these are dropped, not answered.
    for len in [8, 48, 1199] {
        socket
            .send_to(&unknown_version_initial(len), server.addr)
            .unwrap();
    }
    socket
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    assert!(
        socket.recv_from(&mut buf).is_err(),
        "a datagram under 1200 bytes got an answer"
    );
    // A full-size one gets its Version Negotiation (the test can tell).
    socket
        .send_to(&unknown_version_initial(1200), server.addr)
        .unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let (n, _) = socket.recv_from(&mut buf).expect("no Version Negotiation");
    let hdr = quiche::Header::from_slice(&mut buf[..n], 8).unwrap();
    assert_eq!(hdr.ty, quiche::Type::VersionNegotiation);
}

#[test]
fn dump_saves_a_name_of_245_characters() {
    // The hidden temporary name once added 26 bytes and passed the file
    // system's 255.
    let root = tempfile::tempdir().unwrap();
    let name = "n".repeat(245);
    std::fs::write(root.path().join(&name), b"long name").unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let dump = tempfile::tempdir().unwrap();
    let out = client(
        &[
            "--no-verify",
            "--dump-responses",
            dump.path().to_str().unwrap(),
            &server.url(&format!("/{name}")),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(dump.path().join(&name)).unwrap(),
        b"long name"
    );
}

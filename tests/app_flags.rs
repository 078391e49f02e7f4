//! The apps' command line as a quiche user types it: algorithm names in any
//! case and quiche's aliases, `--cc-param help`, and a client summary that
//! names the sender, not the client's own controller.

mod common;

use std::process::Command;

use common::*;

fn run(bin: &str, args: &[&str]) -> std::process::Output {
    Command::new(bin)
        .args(args)
        .env_remove("QLOGDIR")
        .output()
        .unwrap()
}

#[test]
fn cc_param_help_lists_the_algorithms_parameters() {
    for bin in [SERVER, CLIENT] {
        let out = run(bin, &["--cc-algorithm", "Vegas", "--cc-param", "help"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(stdout.starts_with("Parameters of vegas"), "{stdout}");
        for key in ["alpha", "beta", "gamma", "profile"] {
            assert!(
                stdout
                    .lines()
                    .any(|l| l.trim_start().starts_with(key) && l.contains("default")),
                "{key}: {stdout}"
            );
        }
        let out = run(bin, &["--cc-algorithm", "BBR", "--cc-param", "help"]);
        assert!(text(&out.stdout).contains("bbr2 is quiche's own algorithm"));
        let out = run(bin, &["--cc-algorithm", "tahoe", "--cc-param", "help"]);
        assert_clean_failure(&out, &["unknown congestion control algorithm 'tahoe'"]);
    }
}

#[test]
fn the_summary_names_the_sender_not_the_clients_controller() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"hello").unwrap();
    let root = root.path().to_str().unwrap();
    // quiche's names in any case: CUBIC, and bbr for bbr2.
    let server = Server::start(&["--root", root, "--cc-algorithm", "Vegas-Sat"], None);
    assert!(
        server.log.iter().any(|l| l.contains("cc vegas-sat")),
        "{:?}",
        server.log
    );
    let out = client(
        &["--no-verify", "--cc-algorithm", "CUBIC", &server.url("/f")],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    assert!(
        stdout.contains("sender: quiche-vegas cc=vegas-sat  "),
        "{stdout}"
    );
    assert!(!stdout.contains("cubic"), "{stdout}");
    let out = client(
        &[
            "--no-verify",
            "--cc-algorithm",
            "bbr",
            "--http-version",
            "HTTP/0.9",
            &server.url("/f"),
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    // HTTP/0.9 has no headers: the client cannot know.
    assert!(stdout.contains("sender unknown"), "{stdout}");
}

/// A free UDP port on loopback (taken, read and given back).
fn free_udp_port() -> u16 {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.local_addr().unwrap().port()
}

#[test]
fn quiche_client_flags_do_what_quiche_says() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"hello").unwrap();
    let mut server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    // -n 3: the request three times; --source-port: from that port.
    let port = free_udp_port().to_string();
    let out = client(
        &[
            "--no-verify",
            "-n",
            "3",
            "--source-port",
            &port,
            &server.url("/f"),
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    assert_eq!(stdout.matches("GET /f  5 bytes").count(), 3, "{stdout}");
    server.wait_for_closed_connection();
    assert!(
        server
            .log
            .iter()
            .any(|l| l.contains(&format!("127.0.0.1:{port}"))),
        "{:?}",
        server.log
    );
    // --wire-version: a version the server does not speak draws its
    // Version Negotiation, after which quiche's client goes on in version 1.
    let qlog = tempfile::tempdir().unwrap();
    let out = client(
        &[
            "--no-verify",
            "--wire-version",
            "babababa",
            &server.url("/f"),
        ],
        Some(qlog.path()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(only_file(qlog.path(), "client-")).unwrap();
    // quiche's qlog does not log the Version Negotiation it received, but
    // shows the version first offered.
    assert!(
        log.contains("\"version\":\"babababa\""),
        "babababa never offered"
    );
    let out = client(&["--wire-version", "xyz", &server.url("/f")], None);
    assert_clean_failure(&out, &["not a hex version"]);
    // --trust-origin-ca-pem: a file that holds no certificate is an error.
    let pem = root.path().join("ca.pem");
    std::fs::write(&pem, b"not a certificate").unwrap();
    let out = client(
        &[
            "--trust-origin-ca-pem",
            pem.to_str().unwrap(),
            &server.url("/f"),
        ],
        None,
    );
    assert_clean_failure(&out, &["cannot load CA certificates"]);
}

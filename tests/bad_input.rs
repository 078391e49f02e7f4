//! Bad input to the apps: clear errors, non-zero exit, no panic.

mod common;

use std::net::UdpSocket;
use std::process::{Command, Output, Stdio};

use common::*;
use vegas_cc::registry;

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .env_remove("QLOGDIR")
        .env_remove("RUST_LOG")
        .output()
        .expect("cannot run binary")
}

/// A server command line that would otherwise work, plus `extra`.
fn server_args<'a>(root: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--listen", "127.0.0.1:0", "--root", root];
    args.extend_from_slice(extra);
    args
}

/// A client command line to a port nobody listens on (the errors tested
/// come before any packet), plus `extra`.
fn client_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--no-verify", "https://127.0.0.1:9/file"];
    args.extend_from_slice(extra);
    args
}

#[test]
fn unknown_algorithm_lists_valid_names() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    for (bin, args) in [
        (SERVER, server_args(root, &["--cc-algorithm", "tahoe"])),
        (CLIENT, client_args(&["--cc-algorithm", "tahoe"])),
    ] {
        let out = run(bin, &args);
        let mut expected = vec!["unknown congestion control algorithm 'tahoe'"];
        expected.extend(registry::all_names());
        assert_clean_failure(&out, &expected);
    }
}

#[test]
fn bad_cc_params_are_explained() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    // quiche's algorithms take no parameters.
    for (bin, args) in [
        (
            SERVER,
            server_args(root, &["--cc-algorithm", "cubic", "--cc-param", "beta=0.7"]),
        ),
        (
            CLIENT,
            client_args(&["--cc-algorithm", "cubic", "--cc-param", "beta=0.7"]),
        ),
    ] {
        assert_clean_failure(&run(bin, &args), &["cubic", "takes no --cc-param"]);
    }
    // Not KEY=VALUE.
    if let Some(info) = registry::ALGORITHMS.first() {
        let out = run(
            CLIENT,
            &client_args(&["--cc-algorithm", info.name, "--cc-param", "novalue"]),
        );
        assert_clean_failure(&out, &["KEY=VALUE", "novalue"]);
    }
    // Unknown keys name the valid ones; bad values say what is accepted.
    for info in registry::ALGORITHMS {
        let out = run(
            SERVER,
            &server_args(
                root,
                &["--cc-algorithm", info.name, "--cc-param", "nonsense=1"],
            ),
        );
        let mut expected = vec!["nonsense"];
        expected.extend(info.params.iter().map(|p| p.name));
        assert_clean_failure(&out, &expected);

        if let Some(param) = info.params.first() {
            let pair = format!("{}=not-a-value", param.name);
            let out = run(
                CLIENT,
                &client_args(&["--cc-algorithm", info.name, "--cc-param", &pair]),
            );
            assert_clean_failure(&out, &[param.name, "not-a-value", "expected"]);
        }
    }
}

#[test]
fn missing_root_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let out = run(SERVER, &server_args(missing.to_str().unwrap(), &[]));
    assert_clean_failure(&out, &["root directory", "does not exist"]);

    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let out = run(SERVER, &server_args(file.to_str().unwrap(), &[]));
    assert_clean_failure(&out, &["is not a directory"]);
}

#[test]
fn port_in_use_is_an_error() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let root = tempfile::tempdir().unwrap();
    let out = run(
        SERVER,
        &["--listen", &addr, "--root", root.path().to_str().unwrap()],
    );
    assert_clean_failure(&out, &[&format!("cannot listen on {addr}: address in use")]);
}

#[test]
fn certificate_files_are_checked() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    let out = run(
        SERVER,
        &server_args(
            root,
            &[
                "--cert",
                "/nonexistent/c.pem",
                "--key",
                "/nonexistent/k.pem",
            ],
        ),
    );
    assert_clean_failure(&out, &["/nonexistent/c.pem"]);
    // One without the other is a usage error.
    let out = run(
        SERVER,
        &server_args(root, &["--cert", "/nonexistent/c.pem"]),
    );
    assert_clean_failure(&out, &["--key"]);
}

#[test]
fn bad_urls_are_errors() {
    for (urls, phrase) in [
        (vec!["not a url"], "invalid URL"),
        (vec!["http://127.0.0.1:4433/"], "must use https"),
        (
            vec!["https://127.0.0.1:4433/a", "https://127.0.0.1:4434/b"],
            "one server",
        ),
    ] {
        let mut args = vec!["--no-verify"];
        args.extend(urls);
        assert_clean_failure(&run(CLIENT, &args), &[phrase]);
    }
    assert_clean_failure(
        &run(CLIENT, &client_args(&["--http-version", "HTTP/2"])),
        &["HTTP/2"],
    );
    // No URL at all is a usage error.
    assert_clean_failure(&run(CLIENT, &[]), &["URL"]);
}

#[test]
fn handshake_failures_are_explained() {
    // Nobody listens: the handshake times out.
    let unused = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = unused.local_addr().unwrap();
    drop(unused);
    let url = format!("https://{addr}/file");
    let out = run(CLIENT, &["--no-verify", "--idle-timeout", "300", &url]);
    assert_clean_failure(&out, &["handshake with", "no answer"]);

    // A self-signed certificate without --no-verify.
    let root = tempfile::tempdir().unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let out = run(CLIENT, &["--idle-timeout", "5000", &server.url("/file")]);
    assert_clean_failure(&out, &["handshake with", "--no-verify"]);
}

#[test]
fn list_cc_algorithms_lists_every_algorithm() {
    for bin in [SERVER, CLIENT] {
        let out = run(bin, &["--list-cc-algorithms"]);
        assert!(out.status.success());
        let stdout = text(&out.stdout);
        let listing = registry::listing();
        assert_eq!(stdout.lines().count(), listing.len(), "{stdout}");
        for ((name, description), line) in listing.iter().zip(stdout.lines()) {
            assert!(line.starts_with(name), "{line}");
            assert!(line.ends_with(description), "{line}");
        }
    }
}

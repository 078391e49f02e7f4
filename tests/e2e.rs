//! End to end: the real `quiche-server` and `quiche-client` binaries over
//! loopback, for every congestion controller there is.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::*;
use vegas_cc::{registry, ControllerSpec, Internals, WindowConfig};

const FILE_SIZE: usize = 5_000_000;

/// Fields quiche itself puts into `quic:recovery_metrics_updated` (besides
/// its own `cf_*` extensions).
const QUICHE_METRICS: &[&str] = &[
    "min_rtt",
    "smoothed_rtt",
    "latest_rtt",
    "rtt_variance",
    "pto_count",
    "congestion_window",
    "bytes_in_flight",
    "ssthresh",
    "packets_in_flight",
    "pacing_rate",
];

/// Internals the Vegas papers' state is reported as (cc/src/vegas.rs).
const VEGAS_FIELDS: &[&str] = &[
    "base_rtt_ms",
    "round_rtt_ms",
    "diff_packets",
    "alpha",
    "beta",
];

/// A root directory with a 5 MB random `file`.
fn root_with_file() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(FILE_SIZE, 0x5eed);
    std::fs::write(dir.path().join("file"), &data).unwrap();
    (dir, sha256_hex(&data))
}

/// Every algorithm the apps accept: quiche's and every one registered in
/// vegas-cc, so that algorithms added later are tested too.
fn all_algorithms() -> Vec<&'static str> {
    let mut names: Vec<&str> = vec!["reno", "cubic", "bbr2"];
    names.extend(registry::ALGORITHMS.iter().map(|a| a.name));
    names
}

/// Names of the internals a freshly built controller reports: every one of
/// them must reach the qlog.
fn initial_internals(name: &str) -> Vec<&'static str> {
    let spec = ControllerSpec::new(name).unwrap();
    let controller = spec.build(WindowConfig {
        max_datagram_size: 1350,
        initial_cwnd_packets: 10,
    });
    let mut internals = Internals::default();
    controller.internals(&mut internals);
    internals.fields().iter().map(|(n, _)| *n).collect()
}

/// Downloads the 5 MB file with `cc` on both ends and checks the bytes, the
/// client's report and both qlogs. Returns a description of what is wrong.
fn download_with(cc: &str, root: &Path, expected_sha: &str) -> Result<(), String> {
    let qlog = tempfile::tempdir().unwrap();
    let dump = tempfile::tempdir().unwrap();
    let root_arg = root.to_str().unwrap();
    let mut server = Server::start(
        &["--root", root_arg, "--cc-algorithm", cc],
        Some(qlog.path()),
    );
    let url = server.url("/file");
    let out = client(
        &[
            "--no-verify",
            "--cc-algorithm",
            cc,
            "--idle-timeout",
            "10000",
            "--dump-responses",
            dump.path().to_str().unwrap(),
            &url,
        ],
        Some(qlog.path()),
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    if !out.status.success() {
        return Err(format!("client failed: {stdout} {stderr}"));
    }
    if !stdout.contains(&format!(
        "GET /file  {FILE_SIZE} bytes  sha256={expected_sha}"
    )) {
        return Err(format!("unexpected client report: {stdout}"));
    }
    if !stdout.contains(&format!("sender: quiche-vegas cc={cc}  ")) {
        return Err(format!("client report does not name {cc}: {stdout}"));
    }
    let dumped = std::fs::read(dump.path().join("file")).map_err(|e| e.to_string())?;
    if sha256_hex(&dumped) != expected_sha {
        return Err(format!("dumped file differs ({} bytes)", dumped.len()));
    }

    let client_qlog = qlog_records(&only_file(qlog.path(), "client-"));
    if client_qlog.len() < 10 {
        return Err(format!("client qlog has {} records", client_qlog.len()));
    }

    // The server's qlog is complete once it has dropped the connection.
    let id = server.wait_for_closed_connection();
    let server_qlog = qlog_records(&qlog.path().join(format!("server-{id}.sqlog")));
    let metrics = events(&server_qlog, "quic:recovery_metrics_updated");
    if metrics.is_empty() {
        return Err("server qlog has no recovery_metrics_updated".into());
    }
    if registry::find(cc).is_some() {
        let fields: BTreeSet<&str> = metrics
            .iter()
            .filter_map(|d| d.as_object())
            .flat_map(|o| o.keys().map(String::as_str))
            .collect();
        let ours: Vec<&&str> = fields
            .iter()
            .filter(|f| !QUICHE_METRICS.contains(f) && !f.starts_with("cf_"))
            .collect();
        if ours.is_empty() {
            return Err(format!(
                "no controller internals in the server qlog: {fields:?}"
            ));
        }
        let mut expected = initial_internals(cc);
        if cc == "vegas" {
            expected.extend(VEGAS_FIELDS);
        }
        let missing: Vec<&&str> = expected.iter().filter(|f| !fields.contains(**f)).collect();
        if !missing.is_empty() {
            return Err(format!(
                "server qlog lacks internals {missing:?}; it has {fields:?}"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_algorithm_downloads_5mb_intact_with_qlogs() {
    let (root, sha) = root_with_file();
    let mut failures = Vec::new();
    for cc in all_algorithms() {
        if let Err(e) = download_with(cc, root.path(), &sha) {
            failures.push(format!("{cc}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn vegas_is_registered_and_tested() {
    // The qlog field check above names Vegas's internals; make sure it ran.
    assert!(registry::find("vegas").is_some(), "vegas is not registered");
}

#[test]
fn hq_interop_download_is_intact() {
    let (root, sha) = root_with_file();
    let dump = tempfile::tempdir().unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let out = client(
        &[
            "--no-verify",
            "--http-version",
            "HTTP/0.9",
            "--dump-responses",
            dump.path().to_str().unwrap(),
            &server.url("/file"),
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("GET /file  {FILE_SIZE} bytes  sha256={sha}")),
        "{stdout}"
    );
    assert!(stdout.contains("HTTP/0.9"), "{stdout}");
    let dumped = std::fs::read(dump.path().join("file")).unwrap();
    assert_eq!(sha256_hex(&dumped), sha);
}

#[test]
fn several_urls_on_one_connection() {
    let root = tempfile::tempdir().unwrap();
    let a = random_bytes(300_000, 1);
    let b = random_bytes(12_345, 2);
    std::fs::create_dir(root.path().join("sub")).unwrap();
    std::fs::write(root.path().join("a"), &a).unwrap();
    std::fs::write(root.path().join("sub/b"), &b).unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    for version in ["HTTP/3", "HTTP/0.9"] {
        let out = client(
            &[
                "--no-verify",
                "--http-version",
                version,
                &server.url("/a"),
                &server.url("/sub/b"),
            ],
            None,
        );
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{version}: {stdout} {}",
            text(&out.stderr)
        );
        assert!(stdout.contains(&format!("GET /a  300000 bytes  sha256={}", sha256_hex(&a))));
        assert!(stdout.contains(&format!(
            "GET /sub/b  12345 bytes  sha256={}",
            sha256_hex(&b)
        )));
        assert!(stdout.contains("total  312345 bytes"), "{stdout}");
    }
}

#[test]
fn missing_and_escaping_paths_fail_the_client() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("ok"), b"fine").unwrap();
    std::fs::write(parent.path().join("secret"), b"secret").unwrap();
    std::os::unix::fs::symlink(parent.path().join("secret"), root.join("escape")).unwrap();
    let server = Server::start(&["--root", root.to_str().unwrap()], None);
    for version in ["HTTP/3", "HTTP/0.9"] {
        for path in ["/missing", "/escape"] {
            let out = client(
                &["--no-verify", "--http-version", version, &server.url(path)],
                None,
            );
            let stdout = text(&out.stdout);
            assert!(!out.status.success(), "{version} {path}: {stdout}");
            assert!(
                stdout.contains(&format!("GET {path}  FAILED")),
                "{version} {path}: {stdout}"
            );
            assert!(stdout.contains("404"), "{version} {path}: {stdout}");
            assert!(!stdout.contains("secret"), "{stdout}");
        }
        // One bad URL among good ones still fails the run.
        let out = client(
            &[
                "--no-verify",
                "--http-version",
                version,
                &server.url("/ok"),
                &server.url("/missing"),
            ],
            None,
        );
        assert!(!out.status.success());
        assert!(text(&out.stdout).contains("GET /ok  4 bytes"));
    }
}

#[test]
fn connect_to_overrides_the_url_host() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"hello").unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    // The URL names localhost on a port nobody uses; --connect-to says where
    // the server really is. The name still goes into TLS (SNI) and HTTP/3.
    let addr = server.addr.to_string();
    let out = client(
        &[
            "--no-verify",
            "--connect-to",
            &addr,
            "https://localhost:9/f",
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("GET /f  5 bytes  sha256={}", sha256_hex(b"hello"))),
        "{stdout}"
    );
}

#[test]
fn server_survives_garbage_datagrams() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"still here").unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut initial = random_bytes(1300, 3);
    // Long header, Initial, QUIC v1, then garbage.
    initial[0] = 0xc0;
    initial[1..5].copy_from_slice(&1u32.to_be_bytes());
    initial[5] = 8;
    let mut unknown_version = initial.clone();
    unknown_version[1..5].copy_from_slice(&0x1a2a_3a4au32.to_be_bytes());
    let short_initial = initial[..200].to_vec();
    let garbage: Vec<Vec<u8>> = vec![
        vec![],
        vec![0],
        vec![0xff; 3],
        random_bytes(1500, 9),
        initial,
        short_initial,
        unknown_version,
    ];
    for datagram in &garbage {
        socket.send_to(datagram, server.addr).unwrap();
    }
    let out = client(&["--no-verify", &server.url("/f")], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("GET /f  10 bytes"));
}

/// `--tail-repeat` (its behaviour is tested in the simulator,
/// `interop/sim/tests/tail_repeat.rs`; loopback's round trip is too short
/// to lose anything): the repeated ranges leave every response intact,
/// two responses on one connection included.
#[test]
fn tail_repeat_keeps_downloads_intact() {
    let root = tempfile::tempdir().unwrap();
    let a = random_bytes(2_000_000, 3);
    let b = random_bytes(54_321, 4);
    std::fs::write(root.path().join("a"), &a).unwrap();
    std::fs::write(root.path().join("b"), &b).unwrap();
    let server = Server::start(
        &["--root", root.path().to_str().unwrap(), "--tail-repeat"],
        None,
    );
    for version in ["HTTP/3", "HTTP/0.9"] {
        let out = client(
            &[
                "--no-verify",
                "--http-version",
                version,
                &server.url("/a"),
                &server.url("/b"),
            ],
            None,
        );
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{version}: {stdout} {}",
            text(&out.stderr)
        );
        assert!(stdout.contains(&format!("GET /a  2000000 bytes  sha256={}", sha256_hex(&a))));
        assert!(stdout.contains(&format!("GET /b  54321 bytes  sha256={}", sha256_hex(&b))));
    }
}

#[test]
fn concurrent_clients_are_served() {
    let (root, sha) = root_with_file();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], None);
    let url = server.url("/file");
    let handles: Vec<_> = ["HTTP/3", "HTTP/0.9", "HTTP/3"]
        .into_iter()
        .map(|version| {
            let url = url.clone();
            std::thread::spawn(move || {
                client(&["--no-verify", "--http-version", version, &url], None)
            })
        })
        .collect();
    for handle in handles {
        let out = handle.join().unwrap();
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
        assert!(stdout.contains(&format!("sha256={sha}")), "{stdout}");
    }
}

/// Records (whole events, not only their `data`) called `name`.
fn records_named<'a>(
    records: &'a [serde_json::Value],
    name: &'a str,
) -> impl Iterator<Item = &'a serde_json::Value> + 'a {
    records.iter().filter(move |r| r["name"] == name)
}

#[test]
fn extensions_switched_off_on_either_side_still_download() {
    // The apps offer both extensions by default; each flag, on either side,
    // changes what is negotiated but never whether the transfer works. The
    // server runs VenoDB, whose delay_source shows the fallback.
    let (root, sha) = root_with_file();
    let root_arg = root.path().to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &[]),
        (&["--no-extensions"], &[]),
        (&[], &["--no-extensions"]),
        (
            &["--no-receive-timestamps", "--no-queueing-time-frame"],
            &[],
        ),
        (
            &[],
            &["--no-receive-timestamps", "--no-queueing-time-frame"],
        ),
    ];
    for (server_flags, client_flags) in cases {
        let label = format!("server {server_flags:?}, client {client_flags:?}");
        let qlog = tempfile::tempdir().unwrap();
        let mut args = vec!["--root", root_arg, "--cc-algorithm", "venodb"];
        args.extend_from_slice(server_flags);
        let mut server = Server::start(&args, Some(qlog.path()));
        let url = server.url("/file");
        let mut args = vec!["--no-verify", "--idle-timeout", "10000", url.as_str()];
        args.extend_from_slice(client_flags);
        let out = client(&args, Some(qlog.path()));
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{label}: {stdout} {}",
            text(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("GET /file  {FILE_SIZE} bytes  sha256={sha}")),
            "{label}: {stdout}"
        );

        let id = server.wait_for_closed_connection();
        let log = qlog_records(&qlog.path().join(format!("server-{id}.sqlog")));
        let server_asks = server_flags.is_empty();
        let client_honours = !client_flags.contains(&"--no-extensions");
        // What the server advertised, in its quic:parameters_set.
        let local = records_named(&log, "quic:parameters_set")
            .find(|r| r["data"]["initiator"] == "local")
            .unwrap_or_else(|| panic!("{label}: no local parameters_set"));
        for param in [
            "max_receive_timestamps_per_ack",
            "max_queueing_times_per_frame",
        ] {
            assert_eq!(
                local["extensions"].get(param).is_some(),
                server_asks,
                "{label}: {param} in {}",
                local["extensions"]
            );
        }
        // Receive timestamps reached the server exactly when it asked and
        // the client honours requests.
        let timestamp_frames = records_named(&log, "quic:packet_received")
            .filter_map(|r| r["extension_frames"].as_array())
            .flatten()
            .filter(|f| f["frame_type"] == "ack_receive_timestamps")
            .count();
        let timestamps = server_asks && client_honours;
        assert_eq!(timestamp_frames > 0, timestamps, "{label}");
        let source = events(&log, "quic:recovery_metrics_updated")
            .iter()
            .rev()
            .find_map(|d| d["delay_source"].as_str())
            .map(str::to_string);
        let expected = if timestamps {
            "receive_timestamps"
        } else {
            "ack_arrival"
        };
        assert_eq!(source.as_deref(), Some(expected), "{label}");
    }
}

#[test]
fn extension_flags_are_documented_with_their_default() {
    for binary in [SERVER, CLIENT] {
        let out = std::process::Command::new(binary)
            .arg("--help")
            .output()
            .unwrap();
        let help = text(&out.stdout);
        for phrase in [
            "default: all on",
            "--no-receive-timestamps",
            "--no-queueing-time-frame",
            "--no-extensions",
        ] {
            assert!(help.contains(phrase), "{binary}: '{phrase}' not in {help}");
        }
    }
}

//! End to end over loopback: the tokio-quiche server serves a file with one
//! of our controllers and its parameters; our client (`quiche_vegas::net`)
//! downloads it; the bytes are compared by SHA-256 with the file's, and the
//! server's qlog shows the controller's own internals with the parameters
//! given on the command line.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use quiche_vegas::net::{run_client, ClientSetup};
use quiche_vegas::settings::TransportSettings;
use quiche_vegas::transfer::{ClientSession, HttpVersion, RequestOutcome};
use sha2::{Digest, Sha256};
use vegas_cc::{ControllerSpec, Internals, WindowConfig};

const FILE_SIZE: usize = 3_000_000;

/// The example server, killed on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(root: &Path, qlog_dir: &Path, cc_args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tokio-h3-server"))
            .args(["--listen", "127.0.0.1:0", "--root"])
            .arg(root)
            .args(cc_args)
            .env("QLOGDIR", qlog_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot start tokio-h3-server");
        let stdout = child.stdout.take().expect("piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("no line from the server");
        let addr = line
            .strip_prefix("listening on ")
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
        Server { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Bytes that no compression or repetition could pass off as the file.
fn random_bytes(len: usize, mut state: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// Downloads `path` from `server` with our client (cubic, defaults);
/// returns the SHA-256 the client computed and the bytes it saved.
fn download(server: SocketAddr, path: &str, dump: &Path) -> (String, Vec<u8>) {
    let settings = TransportSettings::default();
    let (mut config, _) = settings
        .build_config(&[HttpVersion::Http3.alpn()])
        .expect("client configuration");
    config.verify_peer(false);
    let session = ClientSession::new(
        HttpVersion::Http3,
        &server.to_string(),
        &[path.to_string()],
        Some(dump),
    )
    .expect("client session");
    let setup = ClientSetup {
        peer: server,
        server_name: Some("localhost".to_string()),
        qlog_dir: None,
        cc_description: "cubic".to_string(),
        idle_timeout_ms: settings.idle_timeout_ms,
        tick: None,
        aqt_from_ip_option: false,
        source_port: 0,
        session: None,
        token: None,
        dump_packets: None,
        qvis: None,
    };
    let (session, _report) =
        run_client(&mut config, session, &setup, &mut |_, _| {}).expect("download");
    let summary = session.summaries().pop().expect("one response");
    assert_eq!(summary.status, Some(200), "{summary:?}");
    let sha = match summary.outcome {
        Some(RequestOutcome::Complete { sha256 }) => sha256,
        other => panic!("download did not complete: {other:?}"),
    };
    let saved = std::fs::read(summary.dump.expect("saved")).expect("read the saved body");
    (sha, saved)
}

/// The `data` of every `quic:recovery_metrics_updated` event of the qlogs in
/// `dir` (JSON-SEQ, one per connection).
fn metrics_events(dir: &Path) -> Vec<serde_json::Value> {
    let mut events = Vec::new();
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for record in text.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
            // The last record may still be being written.
            let Ok(value) = serde_json::from_str::<serde_json::Value>(record) else {
                continue;
            };
            if value.get("name").and_then(|n| n.as_str()) == Some("quic:recovery_metrics_updated") {
                if let Some(data) = value.get("data") {
                    events.push(data.clone());
                }
            }
        }
    }
    events
}

/// The names of the internals a controller of `spec` reports, from the
/// controller itself.
fn internals_of(spec: &ControllerSpec) -> BTreeSet<&'static str> {
    let controller = spec.build(WindowConfig {
        max_datagram_size: 1200,
        initial_cwnd_packets: 10,
    });
    let mut internals = Internals::default();
    controller.internals(&mut internals);
    internals.fields().iter().map(|(n, _)| *n).collect()
}

#[test]
fn a_download_is_intact_and_the_server_qlog_shows_the_chosen_controller() {
    let root = tempfile::tempdir().expect("tempdir");
    let qlog = tempfile::tempdir().expect("tempdir");
    let dump = tempfile::tempdir().expect("tempdir");
    let file = random_bytes(FILE_SIZE, 0x5eed_0026);
    std::fs::write(root.path().join("file"), &file).expect("write the file");

    // Vegas with alpha and beta away from their defaults (1 and 3): only the
    // parameters reaching quiche through tokio-quiche's settings put these
    // values in the server's qlog.
    let params = ["alpha=2", "beta=5"];
    let spec = ControllerSpec::with_params("vegas", &params).expect("vegas spec");
    let defaults = ControllerSpec::new("vegas").expect("vegas");
    assert_ne!(
        spec.params(),
        defaults.params(),
        "the test needs non-defaults"
    );
    let server = Server::start(
        root.path(),
        qlog.path(),
        &[
            "--cc-algorithm",
            "vegas",
            "--cc-param",
            params[0],
            "--cc-param",
            params[1],
        ],
    );

    let (sha, saved) = download(server.addr, "/file", dump.path());
    let expected = sha256_hex(&file);
    assert_eq!(sha, expected, "the client's SHA-256");
    assert_eq!(saved.len(), FILE_SIZE);
    assert_eq!(sha256_hex(&saved), expected, "the saved body");

    // The server writes its qlog as the connection goes; wait for the
    // controller's metrics.
    let expected_fields = internals_of(&spec);
    let deadline = Instant::now() + Duration::from_secs(20);
    let events = loop {
        let events = metrics_events(qlog.path());
        let fields: BTreeSet<&str> = events
            .iter()
            .filter_map(|d| d.as_object())
            .flat_map(|o| o.keys().map(String::as_str))
            .collect();
        if expected_fields.iter().all(|f| fields.contains(f)) {
            break events;
        }
        assert!(
            Instant::now() < deadline,
            "server qlog lacks vegas's internals {expected_fields:?}; it has {fields:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let value_of = |name: &str| {
        events
            .iter()
            .filter_map(|d| d.get(name))
            .next_back()
            .cloned()
    };
    assert_eq!(value_of("flavour"), Some(serde_json::json!("paper")));
    assert_eq!(value_of("alpha").and_then(|v| v.as_f64()), Some(2.0));
    assert_eq!(value_of("beta").and_then(|v| v.as_f64()), Some(5.0));
}

#[test]
fn a_bad_parameter_is_refused_at_start_with_the_apps_message() {
    let root = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_tokio-h3-server"))
        .args(["--listen", "127.0.0.1:0", "--root"])
        .arg(root.path())
        .args(["--cc-algorithm", "vegas", "--cc-param", "gamma=x"])
        .output()
        .expect("run tokio-h3-server");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The same check and message as quiche-server's (cc_select).
    let expected = quiche_vegas::cc_select::CcSelection::with_params("vegas", &["gamma=x"])
        .resolve()
        .expect_err("gamma=x is not a number")
        .to_string();
    assert!(stderr.contains(&expected), "{stderr}");
}

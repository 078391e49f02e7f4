//! Careful Resume in the real apps over loopback: the server's store on
//! disk is read at start (a corrupt one is ignored with a warning, never a
//! crash), a returning client's connection goes through the phases and logs
//! them in qlog.
//!
//! Loopback's RTT (well under a millisecond) is far below any saved RTT of
//! a real path, so the RTT check refuses the jump here: the jump itself is
//! tested in the simulator (`interop/sim/tests/careful_resume.rs`).

mod common;

use std::path::Path;

use common::*;

const FILE_SIZE: usize = 1_000_000;
const STORE: &str = "careful-resume.store";

fn root_with_file() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(FILE_SIZE, 0xc0de);
    std::fs::write(dir.path().join("file"), &data).unwrap();
    (dir, sha256_hex(&data))
}

fn download(server: &Server, qlog: Option<&Path>, expected_sha: &str) {
    let out = client(&["--no-verify", &server.url("/file")], qlog);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    assert!(
        stdout.contains(&format!(
            "GET /file  {FILE_SIZE} bytes  sha256={expected_sha}"
        )),
        "{stdout}"
    );
}

fn start(root: &Path, store: &Path, qlog: Option<&Path>) -> Server {
    Server::start(
        &[
            "--root",
            root.to_str().unwrap(),
            "--cc-algorithm",
            "vegas",
            "--careful-resume",
            "--resume-store",
            store.to_str().unwrap(),
        ],
        qlog,
    )
}

/// Whatever is in the store directory after a run is a complete store or
/// the file that was there before; never a temporary file.
fn check_store_dir(store: &Path, before: &[u8]) {
    for entry in std::fs::read_dir(store).unwrap() {
        let name = entry.unwrap().file_name();
        assert_eq!(name, STORE, "stray file in the store directory");
    }
    let bytes = std::fs::read(store.join(STORE)).unwrap();
    if bytes != before {
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with("quiche-vegas careful-resume store v1\n"),
            "{text}"
        );
    }
}

#[test]
fn corrupt_or_hostile_stores_are_ignored_with_a_warning() {
    let (root, sha) = root_with_file();
    let cases: [&[u8]; 4] = [
        b"\x00\xff\xfe binary garbage",
        b"quiche-vegas careful-resume store v9\n127.0.0.1 1 1 1\n",
        b"quiche-vegas careful-resume store v1\n127.0.0.1 1500000 600000",
        b"quiche-vegas careful-resume store v1\n127.0.0.1 99999999999999 600000 1\n",
    ];
    for content in cases {
        let store = tempfile::tempdir().unwrap();
        std::fs::write(store.path().join(STORE), content).unwrap();
        let mut server = start(root.path(), store.path(), None);
        assert!(
            server
                .log
                .iter()
                .any(|l| l.contains("warning: ignoring the Careful Resume store")),
            "{:?}",
            server.log
        );
        download(&server, None, &sha);
        server.wait_for_closed_connection();
        // The store is written off the event loop; a stopped server has
        // written it.
        assert!(server.stop(libc::SIGTERM).success(), "{:?}", server.log);
        check_store_dir(store.path(), content);
    }
}

#[test]
fn a_returning_client_is_checked_against_its_saved_path() {
    let (root, sha) = root_with_file();
    let store = tempfile::tempdir().unwrap();
    let qlog = tempfile::tempdir().unwrap();
    // Saved a minute ago: 1.5 MB at 600 ms, as on a GEO path.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let content = format!(
        "quiche-vegas careful-resume store v1\n127.0.0.1 1500000 600000 {}\n",
        now - 60
    );
    std::fs::write(store.path().join(STORE), &content).unwrap();
    let mut server = start(root.path(), store.path(), Some(qlog.path()));
    assert!(
        !server.log.iter().any(|l| l.contains("warning")),
        "{:?}",
        server.log
    );
    download(&server, Some(qlog.path()), &sha);
    let id = server.wait_for_closed_connection();
    let records = qlog_records(&qlog.path().join(format!("server-{id}.sqlog")));
    let metrics = events(&records, "quic:recovery_metrics_updated");
    let phases: Vec<(&str, &str)> = metrics
        .iter()
        .filter_map(|d| Some((d["cr_phase"].as_str()?, d["cr_trigger"].as_str()?)))
        .collect();
    assert_eq!(
        phases,
        [("reconnaissance", "none"), ("normal", "rtt_not_validated")],
        "loopback's RTT is below half the saved 600 ms"
    );
    assert!(metrics
        .iter()
        .any(|d| d["cr_saved_congestion_window"] == 1_500_000));
    assert!(server.stop(libc::SIGTERM).success(), "{:?}", server.log);
    check_store_dir(store.path(), content.as_bytes());
}

#[test]
fn without_the_switch_there_is_no_careful_resume() {
    let (root, sha) = root_with_file();
    let qlog = tempfile::tempdir().unwrap();
    let mut server = Server::start(
        &[
            "--root",
            root.path().to_str().unwrap(),
            "--cc-algorithm",
            "vegas",
        ],
        Some(qlog.path()),
    );
    download(&server, Some(qlog.path()), &sha);
    let id = server.wait_for_closed_connection();
    let text = std::fs::read_to_string(qlog.path().join(format!("server-{id}.sqlog"))).unwrap();
    assert!(!text.contains("cr_phase"));
}

/// The emulator binary of this workspace, built beside the apps.
fn emulator_binary() -> std::path::PathBuf {
    let path = Path::new(SERVER).with_file_name("vegas-emu");
    assert!(
        path.exists(),
        "{} is missing: build the workspace first (cargo build --release --workspace)",
        path.display()
    );
    path
}

/// A free UDP port on loopback (taken, read and given back).
fn free_udp_port() -> u16 {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.local_addr().unwrap().port()
}

/// Two real downloads through `vegas-emu` (20 Mbit/s, 100 ms RTT, both ways)
/// with the store on disk: the first saves what it measured, the second
/// resumes it, passes the RTT check and jumps (the Unvalidated phase in its
/// qlog), and both arrive intact.
#[test]
fn a_returning_client_over_a_100_ms_path_jumps() {
    let (root, sha) = root_with_file();
    let store = tempfile::tempdir().unwrap();
    let qlog = tempfile::tempdir().unwrap();
    let mut server = Server::start(
        &[
            "--root",
            root.path().to_str().unwrap(),
            "--cc-algorithm",
            "vegas-sat",
            "--careful-resume",
            "--resume-store",
            store.path().to_str().unwrap(),
        ],
        Some(qlog.path()),
    );
    let scenario = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        scenario.path(),
        r#"
        duration_s = 60
        [links.down]
        rate_mbps = 20
        delay_ms = 50
        queue_packets = 200
        [links.up]
        rate_mbps = 20
        delay_ms = 50
        queue_packets = 200
        [flows.f]
        cc = "vegas-sat"
        under_test = true
        forward_path = ["down"]
        return_path = ["up"]
        "#,
    )
    .unwrap();
    let listen = format!("127.0.0.1:{}", free_udp_port());
    let mut emulator = std::process::Command::new(emulator_binary())
        .args(["udp", "--quiet", "--no-realtime", "--listen", &listen])
        .args(["--server", &server.addr.to_string()])
        .arg(scenario.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its "ready" line, not a guess at how long start-up takes on a loaded
    // machine. The pipe stays open (read to the end by the thread) so that
    // the emulator never writes to a closed stderr.
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let stderr = emulator.stderr.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.starts_with("vegas-emu: ready") {
                ready_tx.send(()).ok();
            }
        }
    });
    ready_rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("vegas-emu did not say it was ready");
    let url = format!("https://{listen}/file");
    let mut ids = Vec::new();
    for _ in 0..2 {
        let out = client(&["--no-verify", &url], None);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
        assert!(stdout.contains(&format!("sha256={sha}")), "{stdout}");
        ids.push(server.wait_for_closed_connection());
    }
    emulator.kill().ok();
    emulator.wait().ok();
    let phases = |id: &str| -> Vec<String> {
        let records = qlog_records(&qlog.path().join(format!("server-{id}.sqlog")));
        events(&records, "quic:recovery_metrics_updated")
            .iter()
            .filter_map(|d| d["cr_phase"].as_str().map(str::to_string))
            .collect()
    };
    // The first had nothing to resume.
    let first = phases(&ids[0]);
    assert_eq!(
        first.first().map(String::as_str),
        Some("normal"),
        "{first:?}"
    );
    assert!(!first.iter().any(|p| p == "unvalidated"), "{first:?}");
    let second = phases(&ids[1]);
    assert!(
        second.iter().any(|p| p == "unvalidated"),
        "the second connection jumped: {second:?}"
    );
}

/// A store directory others may write to is refused at start with the
/// reason: anyone who can write there can plant what the server reads or
/// writes through.
#[test]
fn a_store_directory_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (root, _) = root_with_file();
    for mode in [0o777, 0o1777, 0o770, 0o702] {
        let store = tempfile::tempdir().unwrap();
        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        let mut cmd = std::process::Command::new(SERVER);
        cmd.args(["--listen", "127.0.0.1:0", "--root"])
            .arg(root.path())
            .args(["--careful-resume", "--resume-store"])
            .arg(store.path());
        let out = cmd.output().unwrap();
        assert_clean_failure(&out, &["writable by group or others", "refused"]);
    }
}

/// A FIFO where the store should be no longer hangs start-up: it is not a
/// regular file, so it is ignored with a warning and the server serves.
#[test]
fn a_fifo_at_the_store_path_does_not_hang_start_up() {
    let (root, sha) = root_with_file();
    let store = tempfile::tempdir().unwrap();
    let fifo = std::ffi::CString::new(store.path().join(STORE).to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // Server::start fails the test if the server does not listen in time.
    let mut server = start(root.path(), store.path(), None);
    assert!(
        server
            .log
            .iter()
            .any(|l| l.contains("ignoring the Careful Resume store")
                && l.contains("not a regular file")),
        "{:?}",
        server.log
    );
    download(&server, None, &sha);
    server.wait_for_closed_connection();
    assert!(server.stop(libc::SIGTERM).success(), "{:?}", server.log);
}

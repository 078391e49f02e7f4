//! `--qvis` on the apps: each connection's qlog, once complete, also as
//! qvis loads it (`NAME-qvis.qlog` beside `NAME.sqlog`), through
//! qlog-analysis's `to-qvis`; at a stop signal for the connections closed
//! then; and a missing or failing converter costs one line, never the
//! transfer or the `.sqlog`.
//!
//! The files written are checked with the test suite's own model of qvis's
//! loader (`qvis_load` of `qlog-analysis/tests/test_qvis.py`), and against
//! what `qlog-analysis to-qvis QLOGDIR` makes of the finished `.sqlog`
//! afterwards: byte for byte the same file under the same name, so the apps
//! converted the complete qlog with the one converter. These need
//! qlog-analysis installed in `qlog-analysis/.venv` (`scripts/test` makes it
//! before the Rust tests); without it they fail and say how to make it,
//! unless `VEGAS_TESTS_WITHOUT_QLOG_ANALYSIS=1` asks to skip them (a pass
//! that checked nothing looked like one that checked everything).

mod common;

/// How long a server may take to write qvis forms: each conversion starts
/// Python and its libraries (seconds on a loaded machine). A bound only
/// against hanging, not a measurement.
const CONVERSIONS: Duration = Duration::from_secs(600);

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::listing::names_in;
use common::raw::{stalled_download, RawClient};
use common::*;

/// qlog-analysis's virtual environment in this checkout.
fn venv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("qlog-analysis/.venv/bin")
}

/// The environment variable that lets these tests skip (and say so) when
/// qlog-analysis is not installed.
const SKIP_WITHOUT_CONVERTER: &str = "VEGAS_TESTS_WITHOUT_QLOG_ANALYSIS";

/// The converter; `None` (the test skips) only if qlog-analysis is missing
/// and `SKIP_WITHOUT_CONVERTER` is `1`; a missing converter fails otherwise.
fn converter() -> Option<PathBuf> {
    let program = venv().join("qlog-analysis");
    if program.is_file() {
        return Some(program);
    }
    let why = format!(
        "no {} (./scripts/test installs qlog-analysis there first; or set \
         {SKIP_WITHOUT_CONVERTER}=1 to skip the --qvis tests)",
        program.display()
    );
    assert!(
        std::env::var(SKIP_WITHOUT_CONVERTER).is_ok_and(|v| v == "1"),
        "{why}"
    );
    eprintln!("skipped, {SKIP_WITHOUT_CONVERTER}=1: {why}");
    None
}

/// Runs test_qvis.py's `qvis_load` on `file` (it asserts every condition
/// under which qvis would refuse or mis-read the file); the number of
/// events of its first trace and whether it has packets sent.
fn qvis_load(file: &Path) -> (usize, bool) {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("qlog-analysis/tests");
    let script = "import sys\n\
                  sys.path.insert(0, sys.argv[1])\n\
                  from test_qvis import qvis_load\n\
                  with open(sys.argv[2], encoding='utf-8') as f:\n    \
                      table = qvis_load(f.read())\n\
                  print(sum(len(v) for v in table.values()), bool(table.get(('transport', 'packet_sent'))))\n";
    let out = Command::new(venv().join("python"))
        .arg("-c")
        .arg(script)
        .arg(&tests)
        .arg(file)
        .output()
        .expect("cannot run qlog-analysis's python");
    assert!(
        out.status.success(),
        "qvis's loader refuses {}: {}",
        file.display(),
        text(&out.stderr)
    );
    let said = text(&out.stdout);
    let mut words = said.split_whitespace();
    let events = words.next().and_then(|w| w.parse().ok()).unwrap();
    let sent = words.next() == Some("True");
    (events, sent)
}

/// Checks the qvis forms the apps wrote in `qlog_dir`: one
/// `NAME-qvis.qlog` beside each `NAME.sqlog` and nothing else, each taken
/// by qvis's loader with at least the events of its `.sqlog`, and each the
/// same bytes as `qlog-analysis to-qvis` writes for a copy of the
/// directory now.
fn check_qvis_forms(converter: &Path, qlog_dir: &Path, expected: usize) {
    let sqlogs: Vec<String> = names_in(qlog_dir)
        .into_iter()
        .filter(|n| n.ends_with(".sqlog"))
        .collect();
    assert_eq!(sqlogs.len(), expected, "{:?}", names_in(qlog_dir));
    let mut all: Vec<String> = sqlogs
        .iter()
        .map(|n| n.replace(".sqlog", "-qvis.qlog"))
        .chain(sqlogs.iter().cloned())
        .collect();
    all.sort();
    assert_eq!(names_in(qlog_dir), all, "no temporary file left");
    let copy = tempfile::tempdir().unwrap();
    for name in &sqlogs {
        std::fs::copy(qlog_dir.join(name), copy.path().join(name)).unwrap();
    }
    let done = Command::new(converter)
        .arg("to-qvis")
        .arg(copy.path())
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", text(&done.stderr));
    for name in &sqlogs {
        let qvis_name = name.replace(".sqlog", "-qvis.qlog");
        let written = qlog_dir.join(&qvis_name);
        let (events, sent) = qvis_load(&written);
        assert!(sent, "{qvis_name}: no packet_sent");
        let raw = qlog_records(&qlog_dir.join(name)).len() - 1;
        assert!(events >= raw, "{qvis_name}: {events} events of {raw}");
        assert!(
            std::fs::read(&written).unwrap()
                == std::fs::read(copy.path().join(&qvis_name)).unwrap(),
            "{qvis_name} differs from to-qvis of the finished {name}"
        );
    }
}

#[test]
fn both_apps_write_the_qvis_form_of_each_complete_qlog() {
    let Some(converter) = converter() else {
        return;
    };
    let env = [("VEGAS_QLOG_ANALYSIS", converter.as_path())];
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), random_bytes(300_000, 3)).unwrap();
    let server_qlog = tempfile::tempdir().unwrap();
    let client_qlog = tempfile::tempdir().unwrap();
    let mut server = Server::start_with_env(
        &["--root", root.path().to_str().unwrap(), "--qvis"],
        Some(server_qlog.path()),
        &env,
    );
    assert!(server.log.iter().any(|l| l.contains("qlog and qvis to")));
    let out = client_with_env(
        &["--no-verify", "--qvis", &server.url("/f")],
        Some(client_qlog.path()),
        &env,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("GET /f  300000 bytes"));
    let sqlog = names_in(client_qlog.path())
        .into_iter()
        .find(|n| n.ends_with(".sqlog"))
        .expect("no client .sqlog");
    let client_qvis = client_qlog
        .path()
        .join(sqlog.replace(".sqlog", "-qvis.qlog"));
    assert!(
        text(&out.stderr).contains(&format!(
            "quiche-client: for qvis: {}",
            client_qvis.display()
        )),
        "{}",
        text(&out.stderr)
    );
    check_qvis_forms(&converter, client_qlog.path(), 1);
    let said = server.wait_for_line_within(|l| l.contains("for qvis: "), CONVERSIONS);
    assert!(said.ends_with("-qvis.qlog"), "{said}");
    check_qvis_forms(&converter, server_qlog.path(), 1);
    // Without the flag, no qvis form.
    let plain_qlog = tempfile::tempdir().unwrap();
    let out = client_with_env(
        &["--no-verify", &server.url("/f")],
        Some(plain_qlog.path()),
        &env,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(names_in(plain_qlog.path()).len(), 1);
}

#[test]
fn a_stopped_server_writes_the_qvis_form_of_the_connections_it_closed() {
    let Some(converter) = converter() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("big"), random_bytes(5_000_000, 9)).unwrap();
    let qlog = tempfile::tempdir().unwrap();
    let mut server = Server::start_with_env(
        &["--root", root.path().to_str().unwrap(), "--qvis"],
        Some(qlog.path()),
        &[("VEGAS_QLOG_ANALYSIS", converter.as_path())],
    );
    let _clients: Vec<RawClient> = (0..2).map(|_| stalled_download(&server)).collect();
    let status = server.stop_within(libc::SIGTERM, CONVERSIONS);
    assert!(status.success(), "{status:?}; {:#?}", server.log);
    assert!(
        server
            .log
            .iter()
            .any(|l| l.contains("stopped by SIGTERM: closed 2 connections")),
        "{:#?}",
        server.log
    );
    check_qvis_forms(&converter, qlog.path(), 2);
}

#[test]
fn without_a_converter_the_transfer_and_the_qlog_are_unaffected() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"hello").unwrap();
    let files = tempfile::tempdir().unwrap();
    let missing = files.path().join("no-such-converter");
    let server_qlog = tempfile::tempdir().unwrap();
    let mut server = Server::start_with_env(
        &["--root", root.path().to_str().unwrap(), "--qvis"],
        Some(server_qlog.path()),
        &[("VEGAS_QLOG_ANALYSIS", missing.as_path())],
    );
    let failing = Path::new("/bin/false");
    for (converter, says) in [
        (missing.as_path(), "--qvis: cannot run "),
        (failing, "to-qvis "),
    ] {
        let client_qlog = tempfile::tempdir().unwrap();
        let out = client_with_env(
            &["--no-verify", "--qvis", &server.url("/f")],
            Some(client_qlog.path()),
            &[("VEGAS_QLOG_ANALYSIS", converter)],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("GET /f  5 bytes"));
        let stderr = text(&out.stderr);
        let line = stderr
            .lines()
            .find(|l| l.contains("--qvis:"))
            .unwrap_or_else(|| panic!("no --qvis line: {stderr}"));
        assert!(line.starts_with("quiche-client: --qvis: "), "{line}");
        assert!(line.contains(says), "{line}");
        assert!(line.contains(&converter.display().to_string()), "{line}");
        assert!(line.ends_with("is kept, without its qvis form"), "{line}");
        // The .sqlog is whole, and alone.
        let sqlog = only_file(client_qlog.path(), "client-");
        let records = qlog_records(&sqlog);
        assert!(!events(&records, "quic:packet_received").is_empty());
        assert_eq!(names_in(client_qlog.path()).len(), 1);
    }
    // Stopped, the server has reaped both connections and said all it
    // says: that it cannot run the converter, once, not once per
    // connection.
    let status = server.stop(libc::SIGTERM);
    assert!(status.success(), "{:#?}", server.log);
    let said: Vec<&String> = server
        .log
        .iter()
        .filter(|l| l.contains("--qvis:"))
        .collect();
    assert_eq!(said.len(), 2, "{:#?}", server.log);
    assert!(
        said[0].starts_with("quiche-server: --qvis: cannot run ")
            && said[0].contains("no-such-converter")
            && said[0].ends_with("is kept, without its qvis form"),
        "{}",
        said[0]
    );
    assert!(said[1].ends_with("no more qvis files will be written"));
    let logs = names_in(server_qlog.path());
    assert_eq!(logs.len(), 2, "{logs:?}");
    for name in logs {
        assert!(name.ends_with(".sqlog"), "{name}");
        qlog_records(&server_qlog.path().join(name));
    }
}

#[test]
fn qvis_needs_a_qlog_directory() {
    for (bin, args) in [
        (SERVER, ["--qvis", "--root", ".", "--listen", "127.0.0.1:0"]),
        (
            CLIENT,
            ["--qvis", "--no-verify", "https://127.0.0.1:1/x", "-n", "1"],
        ),
    ] {
        let out = Command::new(bin)
            .args(args)
            .env_remove("QLOGDIR")
            .output()
            .unwrap();
        assert_clean_failure(&out, &["--qvis needs QLOGDIR"]);
    }
}

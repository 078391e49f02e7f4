//! Nothing lost when the server is stopped: SIGTERM or SIGINT mid-transfer
//! closes every connection with CONNECTION_CLOSE, every qlog parses to its
//! last record and ends with the close, and the server exits cleanly; a
//! second signal ends it at once.

mod common;

use std::time::Duration;

use common::raw::{stalled_download, RawClient};
use common::*;

/// A server with a file too big to finish while its clients read nothing.
fn server_with_big_file(qlog: &std::path::Path) -> (tempfile::TempDir, Server) {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("big"), random_bytes(5_000_000, 9)).unwrap();
    let server = Server::start(&["--root", root.path().to_str().unwrap()], Some(qlog));
    (root, server)
}

#[test]
fn a_stop_signal_mid_transfer_closes_every_connection_and_completes_the_qlogs() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let qlog = tempfile::tempdir().unwrap();
        let (_root, mut server) = server_with_big_file(qlog.path());
        let mut clients: Vec<RawClient> = (0..3).map(|_| stalled_download(&server)).collect();
        let status = server.stop(signal);
        assert!(
            status.success(),
            "signal {signal}: {status:?}; {:#?}",
            server.log
        );
        assert!(
            server
                .log
                .iter()
                .any(|l| l.contains("stopped by") && l.contains("closed 3 connections")),
            "{:#?}",
            server.log
        );
        // Each client got the server's CONNECTION_CLOSE, not silence.
        for c in &mut clients {
            c.run_until(Duration::from_secs(10), |c| c.conn.peer_error().is_some());
            let e = c
                .conn
                .peer_error()
                .expect("no CONNECTION_CLOSE from the server");
            assert_eq!((e.is_app, e.error_code), (false, 0), "{e:?}");
            assert_eq!(e.reason, b"server shutting down");
        }
        // Every server qlog parses to its last record and shows the close.
        let logs: Vec<_> = std::fs::read_dir(qlog.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("server-")
            })
            .collect();
        assert_eq!(logs.len(), 3, "{logs:?}");
        for path in logs {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.ends_with('\n'), "{} is cut short", path.display());
            let records = qlog_records(&path);
            let closes = events(&records, "quic:packet_sent")
                .iter()
                .filter(|d| d.to_string().contains("connection_close"))
                .count();
            assert!(closes > 0, "{}: no CONNECTION_CLOSE sent", path.display());
        }
    }
}

#[test]
fn a_second_signal_ends_the_server_at_once() {
    let qlog = tempfile::tempdir().unwrap();
    let (_root, mut server) = server_with_big_file(qlog.path());
    let _client = stalled_download(&server);
    // Two different signals (the same one twice merges while pending),
    // both pending while the server is stopped, so that the second is
    // handled before the first one's shutdown can finish.
    let pid = server.pid() as i32;
    // SAFETY: kill(2) on the child the test started.
    unsafe {
        libc::kill(pid, libc::SIGSTOP);
        libc::kill(pid, libc::SIGTERM);
        libc::kill(pid, libc::SIGINT);
    }
    let status = server.stop(libc::SIGCONT);
    // The kernel may deliver the pending two in either order; whichever
    // ran second ended the process with 128 + its number.
    assert!(
        [128 + libc::SIGINT, 128 + libc::SIGTERM].contains(&status.code().unwrap_or(0)),
        "{status:?}: {:#?}",
        server.log
    );
}

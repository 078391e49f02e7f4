//! ACK frequency in the apps, over loopback: offered by default on both
//! sides, so the server asks the client to thin its ACKs; `--no-ack-frequency`
//! on either side means no ACK_FREQUENCY frame at all, and the download is
//! intact every way.

mod common;

use common::*;

const FILE_SIZE: usize = 5_000_000;

/// ACK_FREQUENCY frames in an endpoint's qlog, from its `name` events.
fn ack_frequency_frames(records: &[serde_json::Value], name: &str) -> usize {
    records
        .iter()
        .filter(|r| r["name"] == name)
        .filter_map(|r| r["extension_frames"].as_array())
        .flatten()
        .filter(|f| f["frame_type"] == "ack_frequency")
        .count()
}

#[test]
fn the_apps_offer_ack_frequency_and_the_flag_switches_it_off() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(FILE_SIZE, 0xacf);
    std::fs::write(dir.path().join("file"), &data).unwrap();
    let sha = sha256_hex(&data);
    let root = dir.path().to_str().unwrap();

    let cases: &[(&[&str], &[&str], bool)] = &[
        (&[], &[], true),
        (&["--no-ack-frequency"], &[], false),
        (&[], &["--no-ack-frequency"], false),
        (&[], &["--no-extensions"], false),
    ];
    for (server_flags, client_flags, negotiated) in cases {
        let label = format!("server {server_flags:?}, client {client_flags:?}");
        let qlog = tempfile::tempdir().unwrap();
        let mut args = vec!["--root", root, "--cc-algorithm", "cubic"];
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
        let advertised = log
            .iter()
            .filter(|r| r["name"] == "quic:parameters_set")
            .find(|r| r["data"]["initiator"] == "local")
            .map(|r| r["extensions"].get("min_ack_delay_us").is_some());
        assert_eq!(
            advertised,
            Some(server_flags.is_empty()),
            "{label}: the server's min_ack_delay"
        );
        let sent = ack_frequency_frames(&log, "quic:packet_sent");
        if *negotiated {
            assert!(sent >= 1, "{label}: no ACK_FREQUENCY sent");
        } else {
            assert_eq!(sent, 0, "{label}");
        }
    }
}

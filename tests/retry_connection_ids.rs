//! A server that validates addresses with Retry and picks connection IDs of
//! the 20 bytes QUIC allows: its transport parameters then carry three such
//! IDs (original destination, Retry source, initial source) besides the
//! windows and our extensions' parameters. quiche 0.29.3 encoded them into a
//! fixed 128-byte buffer and `accept` failed with BufferTooShort; patch 0012
//! lets the buffer grow. Driven in memory, without sockets.

use std::net::SocketAddr;

use quiche_vegas::settings::TransportSettings;
use quiche_vegas::tls;
use quiche_vegas::transfer::{ALPN_H3, ALPN_HQ};

const CID_LEN: usize = quiche::MAX_CONN_ID_LEN;

fn addrs() -> (SocketAddr, SocketAddr) {
    (
        "10.0.0.1:5000".parse().expect("client address"),
        "10.0.0.2:443".parse().expect("server address"),
    )
}

/// Every datagram `from` has to send, as `(bytes, to)`.
fn drain(from: &mut quiche::Connection) -> Vec<Vec<u8>> {
    let mut out = vec![0; 1500];
    let mut datagrams = Vec::new();
    while let Ok((n, _)) = from.send(&mut out) {
        datagrams.push(out[..n].to_vec());
    }
    datagrams
}

/// The handshake after a Retry, with the app's settings but `max_window`
/// as every flow-control window (large ones take 8-byte varints); returns
/// (client, server) once both are established, or the error that stopped it.
fn handshake_after_retry(
    max_window: u64,
) -> Result<(quiche::Connection, quiche::Connection), String> {
    let (client_addr, server_addr) = addrs();
    let settings = TransportSettings {
        max_data: max_window,
        max_stream_data: max_window,
        ..Default::default()
    };
    let identity = tls::Identity::self_signed().map_err(|e| e.to_string())?;
    let (mut server_config, _) = settings
        .build_server_config(&[ALPN_H3, ALPN_HQ], &identity)
        .map_err(|e| e.to_string())?;
    let (mut client_config, _) = settings
        .build_config(&[ALPN_H3])
        .map_err(|e| e.to_string())?;
    client_config.verify_peer(false);

    let client_scid = [0xc1; CID_LEN];
    let mut client = quiche::connect(
        Some("localhost"),
        &quiche::ConnectionId::from_ref(&client_scid),
        client_addr,
        server_addr,
        &mut client_config,
    )
    .map_err(|e| format!("connect: {e}"))?;

    // The client's first Initial gets a Retry naming the server's ID.
    let mut first = drain(&mut client).into_iter().next().ok_or("no Initial")?;
    let hdr = quiche::Header::from_slice(&mut first, CID_LEN).map_err(|e| e.to_string())?;
    let odcid = hdr.dcid.to_vec();
    let retry_scid = [0x5e; CID_LEN];
    let token = b"an opaque token the server would check";
    let mut retry = vec![0; 512];
    let n = quiche::retry(
        &hdr.scid,
        &hdr.dcid,
        &quiche::ConnectionId::from_ref(&retry_scid),
        token,
        hdr.version,
        &mut retry,
    )
    .map_err(|e| format!("retry: {e}"))?;
    client
        .recv(
            &mut retry[..n],
            quiche::RecvInfo {
                from: server_addr,
                to: client_addr,
            },
        )
        .map_err(|e| format!("client receiving the Retry: {e}"))?;

    // Its second Initial carries the token to the Retry's ID: accepted with
    // the original ID as the server's original_destination_connection_id.
    let mut server = quiche::accept(
        &quiche::ConnectionId::from_ref(&retry_scid),
        Some(&quiche::ConnectionId::from_ref(&odcid)),
        server_addr,
        client_addr,
        &mut server_config,
    )
    .map_err(|e| format!("accept: {e}"))?;
    for _ in 0..20 {
        for mut d in drain(&mut client) {
            server
                .recv(
                    &mut d,
                    quiche::RecvInfo {
                        from: client_addr,
                        to: server_addr,
                    },
                )
                .map_err(|e| format!("server recv: {e}"))?;
        }
        for mut d in drain(&mut server) {
            client
                .recv(
                    &mut d,
                    quiche::RecvInfo {
                        from: server_addr,
                        to: client_addr,
                    },
                )
                .map_err(|e| format!("client recv: {e}"))?;
        }
        if let Some(e) = client.local_error().or(client.peer_error()) {
            return Err(format!("client closed: {e:?}"));
        }
        if client.is_established() && server.is_established() {
            return Ok((client, server));
        }
    }
    Err("the handshake did not complete".to_string())
}

#[test]
fn retry_with_20_byte_connection_ids_completes_the_handshake() {
    let (client, server) = handshake_after_retry(settings_default_window()).unwrap();
    // The client talks to the Retry's 20-byte ID and checked the server's
    // parameters (quiche closes the connection if any ID in them is wrong).
    assert_eq!(client.destination_id().as_ref(), &[0x5e; CID_LEN][..]);
    assert_eq!(server.source_id().as_ref(), &[0x5e; CID_LEN][..]);
    assert!(client.local_error().is_none());
}

#[test]
fn retry_with_20_byte_ids_and_the_largest_windows_completes_the_handshake() {
    // 2^62 - 1, the largest varint: every window takes 8 bytes.
    let largest = (1u64 << 62) - 1;
    let (client, server) = handshake_after_retry(largest).unwrap();
    assert!(client.is_established() && server.is_established());
    let params = client.peer_transport_params().expect("server parameters");
    assert_eq!(params.initial_max_data, largest);
}

fn settings_default_window() -> u64 {
    TransportSettings::default().max_data
}

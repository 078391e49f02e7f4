//! A client and a server connection that talk in memory, without sockets
//! or a driver: for tests of what quiche does between two configurations.
//! One file for the integration tests (`tests/common`) and the library's
//! unit tests (`src/lib.rs` includes it under `cfg(test)`).

#![allow(dead_code)]

use std::net::SocketAddr;

/// The client's address in every pair.
pub const CLIENT_ADDR: &str = "127.0.0.1:1000";
/// The server's address in every pair.
pub const SERVER_ADDR: &str = "127.0.0.1:2000";

/// A client and a server connection made from two configurations.
pub struct Pair {
    pub client: quiche::Connection,
    pub server: quiche::Connection,
    buf: Vec<u8>,
}

fn addr(text: &str) -> SocketAddr {
    text.parse().expect("a socket address")
}

/// What a datagram from the client carries to the server.
pub fn to_server() -> quiche::RecvInfo {
    quiche::RecvInfo {
        from: addr(CLIENT_ADDR),
        to: addr(SERVER_ADDR),
    }
}

/// What a datagram from the server carries to the client.
pub fn to_client() -> quiche::RecvInfo {
    quiche::RecvInfo {
        from: addr(SERVER_ADDR),
        to: addr(CLIENT_ADDR),
    }
}

impl Pair {
    /// A client (connection ID `[1; 16]`, SNI `localhost`) and the server
    /// (`[2; 16]`) it connects to; nothing exchanged yet.
    pub fn new(client: &mut quiche::Config, server: &mut quiche::Config) -> Pair {
        let client = quiche::connect(
            Some("localhost"),
            &quiche::ConnectionId::from_ref(&[1; 16]),
            addr(CLIENT_ADDR),
            addr(SERVER_ADDR),
            client,
        )
        .expect("a client connection");
        let server = quiche::accept(
            &quiche::ConnectionId::from_ref(&[2; 16]),
            None,
            addr(SERVER_ADDR),
            addr(CLIENT_ADDR),
            server,
        )
        .expect("a server connection");
        Pair {
            client,
            server,
            buf: vec![0; 65_535],
        }
    }

    /// Everything the client has goes to the server, then everything the
    /// server has to the client; `rounds` times.
    pub fn exchange(&mut self, rounds: usize) {
        for _ in 0..rounds {
            self.client_to_server();
            self.server_to_client();
        }
    }

    /// Everything the client has to send, delivered to the server.
    pub fn client_to_server(&mut self) {
        while let Ok((n, _)) = self.client.send(&mut self.buf) {
            self.server.recv(&mut self.buf[..n], to_server()).ok();
        }
    }

    /// Everything the server has to send, delivered to the client.
    pub fn server_to_client(&mut self) {
        while let Ok((n, _)) = self.server.send(&mut self.buf) {
            self.client.recv(&mut self.buf[..n], to_client()).ok();
        }
    }

    /// Exchanges until both ends are established (at most 20 rounds, or
    /// the test fails); nothing more.
    pub fn handshake(&mut self) {
        for _ in 0..20 {
            self.exchange(1);
            if self.client.is_established() && self.server.is_established() {
                return;
            }
        }
        panic!("no handshake in 20 rounds");
    }
}

/// The two connections of a [`Pair`] after [`Pair::handshake`].
pub fn handshake(
    client: &mut quiche::Config,
    server: &mut quiche::Config,
) -> (quiche::Connection, quiche::Connection) {
    let mut pair = Pair::new(client, server);
    pair.handshake();
    (pair.client, pair.server)
}

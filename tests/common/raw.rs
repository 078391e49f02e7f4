//! A bare quiche client and server over real UDP sockets, driven by the
//! test itself: they send what the apps never would (malformed requests,
//! lying responses) and look at what comes back.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use quiche::h3::{self, NameValue};

/// A client configuration offering h3 that does not verify the server.
pub fn client_config(max_stream_data: u64) -> quiche::Config {
    let mut c = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
    c.verify_peer(false);
    c.set_application_protos(&[b"h3"]).unwrap();
    c.set_max_idle_timeout(10_000);
    c.set_initial_max_data(10_000_000);
    c.set_initial_max_stream_data_bidi_local(max_stream_data);
    c.set_initial_max_stream_data_bidi_remote(max_stream_data);
    c.set_initial_max_stream_data_uni(1_000_000);
    c.set_initial_max_streams_bidi(100);
    c.set_initial_max_streams_uni(100);
    c.set_max_stream_window(max_stream_data);
    c
}

/// One client connection on its own socket.
pub struct RawClient {
    pub socket: UdpSocket,
    pub conn: quiche::Connection,
    pub h3: Option<h3::Connection>,
    local: SocketAddr,
}

impl RawClient {
    pub fn connect(peer: SocketAddr, config: &mut quiche::Config) -> RawClient {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let local = socket.local_addr().unwrap();
        let mut scid = [0u8; 16];
        getrandom::fill(&mut scid).unwrap();
        let conn = quiche::connect(
            Some("localhost"),
            &quiche::ConnectionId::from_ref(&scid),
            local,
            peer,
            config,
        )
        .unwrap();
        RawClient {
            socket,
            conn,
            h3: None,
            local,
        }
    }

    /// Sends what quiche has to send.
    pub fn flush(&mut self) {
        let mut out = [0; 1500];
        while let Ok((n, info)) = self.conn.send(&mut out) {
            self.socket.send_to(&out[..n], info.to).ok();
        }
    }

    /// Exchanges packets until `done` says so, the connection closes, or
    /// `timeout` passes; returns whether `done` said so.
    pub fn run_until(
        &mut self,
        timeout: Duration,
        mut done: impl FnMut(&mut Self) -> bool,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let mut buf = [0; 65535];
        loop {
            self.flush();
            if done(self) {
                return true;
            }
            if self.conn.is_closed() || Instant::now() >= deadline {
                return false;
            }
            let wait = self
                .conn
                .timeout()
                .unwrap_or(Duration::from_millis(50))
                .clamp(Duration::from_millis(1), Duration::from_millis(50));
            self.socket.set_read_timeout(Some(wait)).unwrap();
            match self.socket.recv_from(&mut buf) {
                Ok((n, from)) => {
                    self.conn
                        .recv(
                            &mut buf[..n],
                            quiche::RecvInfo {
                                from,
                                to: self.local,
                            },
                        )
                        .ok();
                }
                Err(_) => self.conn.on_timeout(),
            }
        }
    }

    /// Completes the handshake and starts HTTP/3.
    pub fn establish(&mut self) {
        assert!(
            self.run_until(Duration::from_secs(10), |c| c.conn.is_established()),
            "no handshake: {:?}",
            self.conn.peer_error()
        );
        let config = h3::Config::new().unwrap();
        self.h3 = Some(h3::Connection::with_transport(&mut self.conn, &config).unwrap());
    }

    /// Sends a request with exactly these header fields; its stream ID.
    pub fn request(&mut self, headers: &[(&str, &str)]) -> u64 {
        let list: Vec<h3::Header> = headers
            .iter()
            .map(|(n, v)| h3::Header::new(n.as_bytes(), v.as_bytes()))
            .collect();
        let h3 = self.h3.as_mut().expect("establish first");
        let id = h3.send_request(&mut self.conn, &list, true).unwrap();
        self.flush();
        id
    }

    /// Polls HTTP/3 until stream `id` ends: its headers, body bytes, and
    /// how it ended.
    pub fn response(&mut self, id: u64) -> Response {
        let mut response = Response::default();
        let mut buf = vec![0; 65536];
        self.run_until(Duration::from_secs(10), |c| {
            let Some(h3) = c.h3.as_mut() else { return true };
            loop {
                match h3.poll(&mut c.conn) {
                    Ok((sid, event)) if sid == id => match event {
                        h3::Event::Headers { list, .. } => {
                            response.headers = list
                                .iter()
                                .map(|h| {
                                    (
                                        String::from_utf8_lossy(h.name()).into_owned(),
                                        String::from_utf8_lossy(h.value()).into_owned(),
                                    )
                                })
                                .collect();
                        }
                        h3::Event::Data => {
                            while let Ok(n) = h3.recv_body(&mut c.conn, id, &mut buf) {
                                response.body.extend_from_slice(&buf[..n]);
                            }
                        }
                        h3::Event::Finished => {
                            response.end = Some(End::Finished);
                            return true;
                        }
                        h3::Event::Reset(code) => {
                            response.end = Some(End::Reset(code));
                            return true;
                        }
                        _ => {}
                    },
                    Ok(_) => {}
                    Err(_) => return false,
                }
            }
        });
        response
    }
}

/// How a response stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Finished,
    Reset(u64),
}

#[derive(Clone, Debug, Default)]
pub struct Response {
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub end: Option<End>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One QUIC Initial datagram a fresh client would send, and the client.
pub fn first_initial(peer: SocketAddr) -> (RawClient, Vec<u8>) {
    let mut config = client_config(1_000_000);
    let mut client = RawClient::connect(peer, &mut config);
    let mut out = [0; 1500];
    let (n, _) = client.conn.send(&mut out).unwrap();
    (client, out[..n].to_vec())
}

/// One request's header fields, as (name, value) text.
pub type HeaderFields = Vec<(String, String)>;

/// A server that answers every HTTP/3 request with `headers` and `body`
/// (and FIN), whatever they say: a content-length it does not keep, a
/// status it does not mean. Runs in a thread until the returned guard is
/// dropped. Every request's header fields are kept in `requests`.
pub struct LyingServer {
    pub addr: SocketAddr,
    pub requests: std::sync::Arc<std::sync::Mutex<Vec<HeaderFields>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for LyingServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

impl LyingServer {
    pub fn start(headers: &[(&str, &str)], body: &[u8]) -> LyingServer {
        Self::start_with_new_token(headers, body, None)
    }

    /// Like [`Self::start`], sending each client a NEW_TOKEN frame with
    /// `new_token` once its handshake is done (an empty one is a malformed
    /// frame, RFC 9000 section 19.7).
    pub fn start_with_new_token(
        headers: &[(&str, &str)],
        body: &[u8],
        new_token: Option<Vec<u8>>,
    ) -> LyingServer {
        use std::sync::atomic::{AtomicBool, Ordering};
        let identity = quiche_vegas::tls::Identity::self_signed().unwrap();
        let (mut config, _) = quiche_vegas::settings::TransportSettings::default()
            .build_server_config(&[b"h3"], &identity)
            .unwrap();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = socket.local_addr().unwrap();
        let headers: Vec<h3::Header> = headers
            .iter()
            .map(|(n, v)| h3::Header::new(n.as_bytes(), v.as_bytes()))
            .collect();
        let body = body.to_vec();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let stop_flag = stop.clone();
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = requests.clone();
        let thread = std::thread::spawn(move || {
            socket
                .set_read_timeout(Some(Duration::from_millis(5)))
                .unwrap();
            let mut conns: Vec<(quiche::Connection, Option<h3::Connection>)> = Vec::new();
            let mut buf = [0; 65535];
            let mut out = [0; 1500];
            while !stop_flag.load(Ordering::Relaxed) {
                if let Ok((n, from)) = socket.recv_from(&mut buf) {
                    let Ok(hdr) = quiche::Header::from_slice(&mut buf[..n], 16) else {
                        continue;
                    };
                    let known = conns
                        .iter()
                        .position(|(c, _)| c.source_id().as_ref() == hdr.dcid.as_ref());
                    let index = match known {
                        Some(i) => i,
                        None if hdr.ty == quiche::Type::Initial => {
                            let mut scid = [0u8; 16];
                            getrandom::fill(&mut scid).unwrap();
                            let conn = quiche::accept(
                                &quiche::ConnectionId::from_ref(&scid),
                                None,
                                addr,
                                from,
                                &mut config,
                            )
                            .unwrap();
                            conns.push((conn, None));
                            conns.len() - 1
                        }
                        None => continue,
                    };
                    let (conn, _) = &mut conns[index];
                    conn.recv(&mut buf[..n], quiche::RecvInfo { from, to: addr })
                        .ok();
                }
                for (conn, h3_conn) in conns.iter_mut() {
                    conn.on_timeout();
                    if conn.is_established() && h3_conn.is_none() {
                        if let Some(token) = &new_token {
                            conn.send_new_token(token).unwrap();
                        }
                        *h3_conn =
                            h3::Connection::with_transport(conn, &h3::Config::new().unwrap()).ok();
                    }
                    if let Some(h3_conn) = h3_conn.as_mut() {
                        while let Ok((id, event)) = h3_conn.poll(conn) {
                            if let h3::Event::Headers { list, .. } = event {
                                let fields = list
                                    .iter()
                                    .map(|h| {
                                        (
                                            String::from_utf8_lossy(h.name()).into_owned(),
                                            String::from_utf8_lossy(h.value()).into_owned(),
                                        )
                                    })
                                    .collect();
                                seen.lock().unwrap().push(fields);
                                h3_conn.send_response(conn, id, &headers, false).ok();
                                h3_conn.send_body(conn, id, &body, true).ok();
                            }
                        }
                    }
                    while let Ok((n, info)) = conn.send(&mut out) {
                        socket.send_to(&out[..n], info.to).ok();
                    }
                }
                conns.retain(|(c, _)| !c.is_closed());
            }
        });
        LyingServer {
            addr,
            requests,
            stop,
            thread: Some(thread),
        }
    }
}

/// A client that asked for `/big` (a file too big to finish) and grants
/// only 1000 bytes of stream data: its response stays pending until the
/// server goes (the shutdown and qvis tests stop servers mid-transfer).
pub fn stalled_download(server: &super::Server) -> RawClient {
    let mut c = RawClient::connect(server.addr, &mut client_config(1000));
    c.establish();
    c.request(&[
        (":method", "GET"),
        (":scheme", "https"),
        (":authority", "localhost"),
        (":path", "/big"),
    ]);
    c.run_until(Duration::from_millis(200), |_| false);
    c
}

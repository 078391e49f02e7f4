//! The server side: answers HTTP/3 and hq-interop GET requests from a
//! [`ContentSource`], and takes HTTP/3 uploads (POST, PUT) to measure the
//! client-to-server direction: the body is counted and hashed, never stored.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read};
use std::sync::Arc;

use anyhow::{anyhow, bail};
use quiche::h3::{self, NameValue};
use sha2::{Digest, Sha256};

use super::content::{Body, ContentSource, Lookup};
use super::request::{parse_h3_request, parse_hq_request};
use super::{DatagramExchange, HttpVersion, CHUNK, HQ_BAD_REQUEST, HQ_NOT_FOUND, HQ_SERVER_ERROR};

/// HTTP/3 error codes used here (RFC 9114 section 8.1).
const H3_INTERNAL_ERROR: u64 = 0x102;
const H3_REQUEST_CANCELLED: u64 = 0x10c;
/// A malformed request (RFC 9114 section 4.1.2).
pub const H3_MESSAGE_ERROR: u64 = 0x10e;
/// Largest request header section accepted (SETTINGS_MAX_FIELD_SECTION_SIZE).
const MAX_FIELD_SECTION_SIZE: u64 = 16 * 1024;
/// TLS alert no_application_protocol as a QUIC transport error.
const NO_APPLICATION_PROTOCOL: u64 = 0x100 + 120;
/// Longest hq-interop request line accepted.
const MAX_HQ_REQUEST: usize = 8 * 1024;
const SERVER_NAME: &[u8] = b"quiche-vegas";

enum Proto {
    /// The handshake is not done; the protocol is not known yet.
    Handshake,
    Http3(Box<h3::Connection>),
    Http09,
    /// The connection is being closed.
    Closed,
}

/// A response body being sent: read from its source chunk by chunk.
struct BodyCursor {
    reader: Box<dyn Read + Send>,
    /// The length announced in content-length.
    announced: u64,
    /// Bytes not yet read from `reader`.
    unread: u64,
    chunk: Vec<u8>,
    /// Bytes of `chunk` already sent.
    pos: usize,
}

impl BodyCursor {
    fn new(body: Body) -> Self {
        BodyCursor {
            reader: body.reader,
            announced: body.len,
            unread: body.len,
            chunk: Vec::new(),
            pos: 0,
        }
    }

    fn from_bytes(bytes: &'static [u8]) -> Self {
        BodyCursor::new(Body {
            len: bytes.len() as u64,
            reader: Box::new(bytes),
        })
    }

    fn from_vec(bytes: Vec<u8>) -> Self {
        BodyCursor::new(Body {
            len: bytes.len() as u64,
            reader: Box::new(io::Cursor::new(bytes)),
        })
    }

    /// No body, announcing `len` bytes (HEAD: what GET would send).
    fn announced(len: u64) -> Self {
        BodyCursor {
            reader: Box::new(io::empty()),
            announced: len,
            unread: 0,
            chunk: Vec::new(),
            pos: 0,
        }
    }

    fn is_empty(&self) -> bool {
        self.unread == 0 && self.pos == self.chunk.len()
    }

    /// The bytes to send next, and whether they end the body.
    fn next(&mut self) -> io::Result<(&[u8], bool)> {
        if self.pos == self.chunk.len() && self.unread > 0 {
            let want = usize::try_from(self.unread).map_or(CHUNK, |u| u.min(CHUNK));
            self.chunk.resize(want, 0);
            self.reader.read_exact(&mut self.chunk)?;
            self.unread -= want as u64;
            self.pos = 0;
        }
        Ok((&self.chunk[self.pos..], self.unread == 0))
    }

    fn advance(&mut self, n: usize) {
        self.pos += n;
        if self.pos == self.chunk.len() && self.unread == 0 {
            // A response that has handed quiche all of its body keeps no
            // buffer. One with more to read keeps it for the next chunk
            // (`next` reads into it in place): no allocation and no zeroing
            // per chunk.
            self.chunk = Vec::new();
            self.pos = 0;
        }
    }
}

/// An upload (an HTTP/3 POST or PUT) being received. Its body is counted
/// and hashed as it arrives and then dropped, so an upload of any size costs
/// the server no memory; the answer, once the body has ended, says what
/// arrived (`{"received_bytes":N,"sha256":"..."}`) so the client can check
/// its upload end to end.
struct Upload {
    bytes: u64,
    hasher: Sha256,
}

impl Upload {
    fn new() -> Self {
        Upload {
            bytes: 0,
            hasher: Sha256::new(),
        }
    }

    fn take(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        self.hasher.update(data);
    }

    fn response(self, server_header: &[u8]) -> Response {
        let body = format!(
            "{{\"received_bytes\":{},\"sha256\":\"{}\"}}\n",
            self.bytes,
            hex::encode(self.hasher.finalize())
        )
        .into_bytes();
        let headers = vec![
            h3::Header::new(b":status", b"200"),
            h3::Header::new(b"server", server_header),
            h3::Header::new(b"content-type", b"application/json"),
            h3::Header::new(b"content-length", body.len().to_string().as_bytes()),
        ];
        Response {
            headers: Some(headers),
            body: BodyCursor::from_vec(body),
        }
    }
}

struct Response {
    /// HTTP/3 headers not sent yet.
    headers: Option<Vec<h3::Header>>,
    body: BodyCursor,
}

/// Why writing a response stopped.
enum WriteState {
    /// All of it, with FIN, is with quiche.
    Complete,
    /// Flow or congestion control: try again later.
    Blocked,
}

/// The application side of one server connection.
pub struct ServerSession {
    source: Arc<dyn ContentSource>,
    proto: Proto,
    responses: BTreeMap<u64, Response>,
    /// HTTP/3 uploads whose body has not ended yet, by stream.
    uploads: BTreeMap<u64, Upload>,
    /// hq-interop request bytes received so far, by stream.
    hq_requests: HashMap<u64, Vec<u8>>,
    buf: Vec<u8>,
    requests: u64,
    /// The HTTP/3 `server` header's value.
    server_header: Vec<u8>,
    /// `--dgram-proto oneway`: the DATAGRAM frames sent and received
    /// (HTTP/3 connections only).
    datagrams: Option<DatagramExchange>,
}

impl ServerSession {
    pub fn new(source: Arc<dyn ContentSource>) -> Self {
        ServerSession {
            source,
            proto: Proto::Handshake,
            responses: BTreeMap::new(),
            uploads: BTreeMap::new(),
            hq_requests: HashMap::new(),
            buf: vec![0; CHUNK],
            requests: 0,
            server_header: SERVER_NAME.to_vec(),
            datagrams: None,
        }
    }

    /// Sends and counts DATAGRAM frames as `datagrams` says once an
    /// HTTP/3 connection starts (the configuration must offer them,
    /// [`super::DgramProto::apply`]).
    pub fn with_datagrams(mut self, datagrams: DatagramExchange) -> Self {
        self.datagrams = Some(datagrams);
        self
    }

    /// The DATAGRAM frames sent and received, if asked and HTTP/3.
    pub fn datagrams(&self) -> Option<&DatagramExchange> {
        match self.proto {
            Proto::Http3(_) => self.datagrams.as_ref(),
            _ => None,
        }
    }

    /// Names the sending congestion controller in every HTTP/3 response's
    /// `server` header (`quiche-vegas cc=NAME`): the only way a client can
    /// know what sent its download.
    pub fn with_sender_cc(mut self, cc_name: &str) -> Self {
        let mut value = SERVER_NAME.to_vec();
        value.extend_from_slice(b" cc=");
        value.extend(cc_name.bytes().filter(|b| b.is_ascii_graphic()));
        self.server_header = value;
        self
    }

    /// Requests received so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Responses not yet completely handed to quiche, and uploads whose
    /// body is still arriving.
    pub fn pending_responses(&self) -> usize {
        self.responses.len() + self.uploads.len()
    }

    /// The protocol spoken, once the handshake has chosen it.
    pub fn version(&self) -> Option<HttpVersion> {
        match self.proto {
            Proto::Http3(_) => Some(HttpVersion::Http3),
            Proto::Http09 => Some(HttpVersion::Http09),
            Proto::Handshake | Proto::Closed => None,
        }
    }

    /// Handles whatever arrived on `conn` and writes as much of the
    /// responses as quiche takes. An error means the connection has been
    /// closed because of it; the message is for the log.
    pub fn on_progress(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<()> {
        if matches!(self.proto, Proto::Handshake) {
            if !(conn.is_established() || conn.is_in_early_data()) {
                return Ok(());
            }
            self.proto = match self.start(conn) {
                Ok(proto) => proto,
                Err(e) => {
                    self.proto = Proto::Closed;
                    return Err(e);
                }
            };
        }
        let result = match &mut self.proto {
            Proto::Http3(h3_conn) => poll_h3(
                h3_conn,
                conn,
                self.source.as_ref(),
                &mut H3Streams {
                    responses: &mut self.responses,
                    uploads: &mut self.uploads,
                },
                &mut self.buf,
                &mut self.requests,
                &self.server_header,
            ),
            Proto::Http09 => {
                self.read_hq(conn);
                Ok(())
            }
            Proto::Handshake | Proto::Closed => return Ok(()),
        };
        if let Err(e) = result {
            self.proto = Proto::Closed;
            self.responses.clear();
            self.uploads.clear();
            return Err(e);
        }
        if let (Proto::Http3(_), Some(datagrams)) = (&self.proto, self.datagrams.as_mut()) {
            datagrams.progress(conn);
        }
        self.write_responses(conn);
        Ok(())
    }

    fn start(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<Proto> {
        match HttpVersion::from_alpn(conn.application_proto()) {
            Some(HttpVersion::Http3) => {
                let mut config = h3::Config::new().map_err(|e| anyhow!("HTTP/3 config: {e}"))?;
                config.set_max_field_section_size(MAX_FIELD_SECTION_SIZE);
                match h3::Connection::with_transport(conn, &config) {
                    Ok(h3_conn) => Ok(Proto::Http3(Box::new(h3_conn))),
                    Err(e) => {
                        conn.close(true, H3_INTERNAL_ERROR, b"cannot start HTTP/3")
                            .ok();
                        bail!("cannot start HTTP/3: {e}")
                    }
                }
            }
            Some(HttpVersion::Http09) => Ok(Proto::Http09),
            None => {
                let alpn = String::from_utf8_lossy(conn.application_proto()).into_owned();
                conn.close(false, NO_APPLICATION_PROTOCOL, b"unsupported ALPN")
                    .ok();
                bail!("client chose unsupported application protocol '{alpn}'")
            }
        }
    }

    /// Reads hq-interop request lines and starts their responses.
    fn read_hq(&mut self, conn: &mut quiche::Connection) {
        for id in conn.readable() {
            // Only client-initiated bidirectional streams carry requests; a
            // stream that already has its request is not read again.
            if id % 4 != 0 || self.responses.contains_key(&id) {
                conn.stream_shutdown(id, quiche::Shutdown::Read, 0).ok();
                continue;
            }
            let mut fin = false;
            let mut failed = false;
            loop {
                match conn.stream_recv(id, &mut self.buf) {
                    Ok((n, f)) => {
                        let request = self.hq_requests.entry(id).or_default();
                        request.extend_from_slice(&self.buf[..n]);
                        fin |= f;
                        if f || request.len() > MAX_HQ_REQUEST {
                            break;
                        }
                    }
                    Err(quiche::Error::Done) => break,
                    Err(e) => {
                        log::debug!("{} stream {id}: {e}", conn.trace_id());
                        failed = true;
                        break;
                    }
                }
            }
            if failed {
                self.hq_requests.remove(&id);
                continue;
            }
            let Some(request) = self.hq_requests.get(&id) else {
                continue;
            };
            let line_end = request.iter().position(|&b| b == b'\n');
            if line_end.is_none() && !fin && request.len() <= MAX_HQ_REQUEST {
                continue; // wait for the rest of the line
            }
            let Some(request) = self.hq_requests.remove(&id) else {
                continue;
            };
            self.requests += 1;
            let line = &request[..line_end.unwrap_or(request.len())];
            match parse_hq_request(line) {
                Some(path) => {
                    conn.stream_shutdown(id, quiche::Shutdown::Read, 0).ok();
                    match self.source.open(&path) {
                        Ok(body) => {
                            log::info!("{} GET {path} (hq) 200", conn.trace_id());
                            self.responses.insert(
                                id,
                                Response {
                                    headers: None,
                                    body: BodyCursor::new(body),
                                },
                            );
                        }
                        Err(Lookup::NotFound) => {
                            log::info!("{} GET {path} (hq) not found", conn.trace_id());
                            conn.stream_shutdown(id, quiche::Shutdown::Write, HQ_NOT_FOUND)
                                .ok();
                        }
                        Err(Lookup::Failed(e)) => {
                            log::warn!("{} GET {path} (hq): {e}", conn.trace_id());
                            conn.stream_shutdown(id, quiche::Shutdown::Write, HQ_SERVER_ERROR)
                                .ok();
                        }
                    }
                }
                None => {
                    log::info!("{} malformed hq request on stream {id}", conn.trace_id());
                    conn.stream_shutdown(id, quiche::Shutdown::Read, 0).ok();
                    conn.stream_shutdown(id, quiche::Shutdown::Write, HQ_BAD_REQUEST)
                        .ok();
                }
            }
        }
    }

    /// Hands quiche as much of every pending response as it takes.
    fn write_responses(&mut self, conn: &mut quiche::Connection) {
        let mut finished = Vec::new();
        for (&id, response) in self.responses.iter_mut() {
            let state = match &mut self.proto {
                Proto::Http3(h3_conn) => write_h3(h3_conn, conn, id, response),
                Proto::Http09 => write_hq(conn, id, response),
                Proto::Handshake | Proto::Closed => return,
            };
            match state {
                Ok(WriteState::Complete) => finished.push(id),
                Ok(WriteState::Blocked) => {}
                Err(e) => {
                    log::info!("{} stream {id}: response abandoned: {e}", conn.trace_id());
                    let code = match self.proto {
                        Proto::Http3(_) => H3_REQUEST_CANCELLED,
                        _ => HQ_SERVER_ERROR,
                    };
                    conn.stream_shutdown(id, quiche::Shutdown::Write, code).ok();
                    finished.push(id);
                }
            }
        }
        for id in finished {
            self.responses.remove(&id);
        }
    }
}

/// The HTTP/3 streams a server connection is answering.
struct H3Streams<'a> {
    responses: &'a mut BTreeMap<u64, Response>,
    uploads: &'a mut BTreeMap<u64, Upload>,
}

fn poll_h3(
    h3_conn: &mut h3::Connection,
    conn: &mut quiche::Connection,
    source: &dyn ContentSource,
    streams: &mut H3Streams,
    buf: &mut [u8],
    requests: &mut u64,
    server_header: &[u8],
) -> anyhow::Result<()> {
    loop {
        match h3_conn.poll(conn) {
            Ok((id, h3::Event::Headers { list, more_frames })) => {
                *requests += 1;
                match respond_h3(source, &list, conn.trace_id(), server_header) {
                    Some(Answer::Now(response)) => {
                        // The response depends on the headers alone; a
                        // request body is not read.
                        conn.stream_shutdown(id, quiche::Shutdown::Read, 0).ok();
                        streams.responses.insert(id, response);
                    }
                    Some(Answer::AfterBody) if more_frames => {
                        streams.uploads.insert(id, Upload::new());
                    }
                    Some(Answer::AfterBody) => {
                        streams
                            .responses
                            .insert(id, Upload::new().response(server_header));
                    }
                    None => {
                        conn.stream_shutdown(id, quiche::Shutdown::Read, H3_MESSAGE_ERROR)
                            .ok();
                        conn.stream_shutdown(id, quiche::Shutdown::Write, H3_MESSAGE_ERROR)
                            .ok();
                    }
                }
            }
            Ok((id, h3::Event::Data)) => {
                let mut upload = streams.uploads.get_mut(&id);
                while let Ok(n) = h3_conn.recv_body(conn, id, buf) {
                    if n == 0 {
                        break;
                    }
                    if let Some(upload) = upload.as_mut() {
                        upload.take(&buf[..n]);
                    }
                }
            }
            Ok((id, h3::Event::Finished)) => {
                if let Some(upload) = streams.uploads.remove(&id) {
                    log::info!("{} upload of {} bytes", conn.trace_id(), upload.bytes);
                    streams.responses.insert(id, upload.response(server_header));
                }
            }
            Ok((id, h3::Event::Reset(_))) => {
                streams.responses.remove(&id);
                streams.uploads.remove(&id);
            }
            Ok((_, h3::Event::PriorityUpdate)) | Ok((_, h3::Event::GoAway)) => {}
            Err(h3::Error::Done) => return Ok(()),
            Err(e) => {
                // quiche closes the connection itself on protocol errors.
                conn.close(true, H3_INTERNAL_ERROR, b"").ok();
                bail!("HTTP/3 error: {e}");
            }
        }
    }
}

/// How a well-formed HTTP/3 request is answered.
enum Answer {
    /// From its headers alone (GET, HEAD, errors).
    Now(Response),
    /// Once its body has arrived (an upload: POST or PUT).
    AfterBody,
}

/// The answer to an HTTP/3 request; `None` if the request is malformed
/// (the stream is then reset with H3_MESSAGE_ERROR). GET and HEAD are
/// served; HEAD gets GET's headers, content-length included, and no body.
/// POST and PUT are uploads, answered once their body has ended.
fn respond_h3(
    source: &dyn ContentSource,
    request: &[h3::Header],
    trace_id: &str,
    server_header: &[u8],
) -> Option<Answer> {
    let parsed = match parse_h3_request(request.iter().map(|h| (h.name(), h.value()))) {
        Ok(r) => r,
        Err(e) => {
            log::info!("{trace_id} malformed request: {e}");
            return None;
        }
    };
    let method = parsed.method;
    let path = parsed.path;
    if matches!(method, b"POST" | b"PUT") && path.is_some() {
        log::info!(
            "{trace_id} {} {} upload",
            String::from_utf8_lossy(method),
            path.unwrap_or("-")
        );
        return Some(Answer::AfterBody);
    }
    let head = method == b"HEAD";
    let found = |len: u64, body: Option<Body>| match body {
        Some(body) => BodyCursor::new(body),
        None => BodyCursor::announced(len),
    };
    let (status, body) = match (method, path) {
        (b"GET" | b"HEAD", Some(path)) => {
            let result = if head {
                source.length(path).map(|len| found(len, None))
            } else {
                source.open(path).map(|b| found(b.len, Some(b)))
            };
            match result {
                Ok(body) => (200, body),
                Err(Lookup::NotFound) => (404, BodyCursor::from_bytes(b"Not Found\n")),
                Err(Lookup::Failed(e)) => {
                    log::warn!("{trace_id} GET {path}: {e}");
                    (500, BodyCursor::from_bytes(b"Internal Server Error\n"))
                }
            }
        }
        _ => (405, BodyCursor::from_bytes(b"Method Not Allowed\n")),
    };
    log::info!(
        "{trace_id} {} {} {status}",
        String::from_utf8_lossy(method),
        path.unwrap_or("-")
    );
    let mut headers = vec![
        h3::Header::new(b":status", status.to_string().as_bytes()),
        h3::Header::new(b"server", server_header),
        h3::Header::new(b"content-length", body.announced.to_string().as_bytes()),
    ];
    if status == 405 {
        headers.push(h3::Header::new(b"allow", b"GET, HEAD, POST, PUT"));
    }
    let body = if head { BodyCursor::announced(0) } else { body };
    Some(Answer::Now(Response {
        headers: Some(headers),
        body,
    }))
}

fn write_h3(
    h3_conn: &mut h3::Connection,
    conn: &mut quiche::Connection,
    id: u64,
    response: &mut Response,
) -> anyhow::Result<WriteState> {
    if let Some(headers) = &response.headers {
        let fin = response.body.is_empty();
        match h3_conn.send_response(conn, id, headers, fin) {
            Ok(()) => response.headers = None,
            Err(h3::Error::StreamBlocked) | Err(h3::Error::Done) => return Ok(WriteState::Blocked),
            Err(e) => bail!("cannot send headers: {e}"),
        }
        if fin {
            return Ok(WriteState::Complete);
        }
    }
    loop {
        let (data, last) = response.body.next()?;
        let len = data.len();
        match h3_conn.send_body(conn, id, data, last) {
            Ok(n) => {
                response.body.advance(n);
                if n < len {
                    return Ok(WriteState::Blocked);
                }
                if last {
                    return Ok(WriteState::Complete);
                }
            }
            Err(h3::Error::Done) => return Ok(WriteState::Blocked),
            Err(e) => bail!("cannot send body: {e}"),
        }
    }
}

fn write_hq(
    conn: &mut quiche::Connection,
    id: u64,
    response: &mut Response,
) -> anyhow::Result<WriteState> {
    loop {
        let (data, last) = response.body.next()?;
        let len = data.len();
        match conn.stream_send(id, data, last) {
            Ok(n) => {
                response.body.advance(n);
                if n < len {
                    return Ok(WriteState::Blocked);
                }
                if last {
                    return Ok(WriteState::Complete);
                }
            }
            Err(quiche::Error::Done) => return Ok(WriteState::Blocked),
            Err(e) => bail!("cannot send body: {e}"),
        }
    }
}

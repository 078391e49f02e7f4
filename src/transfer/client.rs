//! The client side: requests a list of paths over HTTP/3 or hq-interop and
//! collects every response body into a [`BodySink`].

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use quiche::h3::{self, NameValue};

use super::request::{parse_content_length, parse_status};
use super::sink::{dump_file_name, BodySink};
use super::{DatagramExchange, HttpVersion, CHUNK, HQ_BAD_REQUEST, HQ_NOT_FOUND, HQ_SERVER_ERROR};

const H3_NO_ERROR: u64 = 0x100;
const H3_INTERNAL_ERROR: u64 = 0x102;
const H3_REQUEST_CANCELLED: u64 = 0x10c;
const USER_AGENT: &[u8] = b"quiche-vegas";

/// How a request ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestOutcome {
    /// The whole response body arrived; its SHA-256 as lowercase hex.
    Complete {
        sha256: String,
    },
    Failed(String),
}

/// One request's result, for the summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseSummary {
    pub path: String,
    /// HTTP status; `None` for HTTP/0.9, which has none, or when no response
    /// headers arrived.
    pub status: Option<u16>,
    /// Body bytes received.
    pub bytes: u64,
    /// `None` while the request is still going on.
    pub outcome: Option<RequestOutcome>,
    /// Where the body was written (`--dump-responses`).
    pub dump: Option<PathBuf>,
}

impl ResponseSummary {
    /// Complete, and with a 2xx status if the protocol has statuses.
    pub fn is_success(&self) -> bool {
        matches!(self.outcome, Some(RequestOutcome::Complete { .. }))
            && self.status.is_none_or(|s| (200..300).contains(&s))
    }

    pub fn sha256(&self) -> Option<&str> {
        match &self.outcome {
            Some(RequestOutcome::Complete { sha256 }) => Some(sha256),
            _ => None,
        }
    }
}

/// What every request of a session sends besides its path (quiche's
/// client's `--method`, `-H`, `--body`), and whether to keep responses'
/// headers and bodies for `--dump-json`.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// `None`: GET.
    pub method: Option<String>,
    /// Extra header fields, in order (names lowercase, no pseudo-headers).
    pub headers: Vec<(String, String)>,
    /// A request body, sent after the headers (HTTP/3 only).
    pub body: Option<Arc<[u8]>>,
    /// Keep each response's header fields and up to
    /// [`MAX_RECORDED_BODY`] bytes of its body ([`ClientSession::records`]).
    pub record: bool,
}

/// Body bytes of one response kept for `--dump-json`: a 10 MiB download
/// must not become 10 MiB of JSON in memory.
pub const MAX_RECORDED_BODY: usize = 1 << 20;

impl RequestOptions {
    /// Checks what the user gave: a method is an HTTP token (RFC 9110
    /// section 9.1); a header field name is a lowercase token and not a
    /// pseudo-header (RFC 9114 section 4.2); a value has no CR, LF or NUL;
    /// a method other than GET, a header or a body need HTTP/3.
    pub fn validate(&self, version: HttpVersion) -> anyhow::Result<()> {
        let is_token = |t: &str| {
            !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        };
        if let Some(method) = &self.method {
            if !is_token(method) {
                bail!("method '{method}' is not an HTTP method token");
            }
        }
        for (name, value) in &self.headers {
            if !is_token(name) || name.bytes().any(|b| b.is_ascii_uppercase()) {
                bail!("header name '{name}' must be a lowercase HTTP token (no pseudo-header)");
            }
            if value.contains(['\r', '\n', '\0']) {
                bail!("the value of header '{name}' contains CR, LF or NUL");
            }
        }
        let plain_get = self.method.as_deref().is_none_or(|m| m == "GET")
            && self.headers.is_empty()
            && self.body.is_none();
        if version == HttpVersion::Http09 && !plain_get {
            bail!("HTTP/0.9 sends only GET requests: a method, headers or a body need HTTP/3");
        }
        Ok(())
    }
}

/// One response as `--dump-json` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResponseRecord {
    pub path: String,
    /// Header fields as received, pseudo-headers included.
    pub headers: Vec<(String, String)>,
    /// The first [`MAX_RECORDED_BODY`] bytes of the body.
    pub body: Vec<u8>,
    /// The body was longer than what is kept.
    pub body_truncated: bool,
}

struct Request {
    path: String,
    stream_id: Option<u64>,
    /// Bytes of the request body handed to quiche; `None` once all of it is
    /// (or once the server stopped reading it).
    body_sent: Option<usize>,
    record: Option<ResponseRecord>,
    /// Bytes of the hq-interop request line sent so far.
    hq_sent: usize,
    status: Option<u16>,
    content_length: Option<u64>,
    sink: BodySink,
    outcome: Option<RequestOutcome>,
}

impl Request {
    /// The response ended cleanly (FIN). It is complete if it carried as
    /// many bytes as its content-length announced; its body is saved only
    /// if it is complete and, where there is a status, 2xx.
    fn complete(&mut self) {
        if self.outcome.is_some() {
            return;
        }
        let received = self.sink.bytes();
        if let Some(announced) = self.content_length.filter(|&n| n != received) {
            self.fail(format!(
                "the response ended after {received} of the {announced} bytes its \
                 content-length announced"
            ));
            return;
        }
        let sha256 = self.sink.finish();
        if self.status.is_none_or(|s| (200..300).contains(&s)) {
            if let Err(e) = self.sink.commit() {
                self.fail(format!("cannot save response body: {e}"));
                return;
            }
        } else {
            self.sink.discard();
        }
        self.outcome = Some(RequestOutcome::Complete { sha256 });
    }

    /// The request failed: nothing of it is saved.
    fn fail(&mut self, reason: String) {
        if self.outcome.is_none() {
            self.sink.discard();
            self.outcome = Some(RequestOutcome::Failed(reason));
        }
    }
}

/// The application side of one client connection.
pub struct ClientSession {
    version: HttpVersion,
    authority: String,
    requests: Vec<Request>,
    /// Index of the next request to send.
    next: usize,
    by_stream: HashMap<u64, usize>,
    h3: Option<h3::Connection>,
    next_hq_stream: u64,
    buf: Vec<u8>,
    closing: bool,
    saves_bodies: bool,
    options: RequestOptions,
    /// The first HTTP/3 `server` header received (printable ASCII, at most
    /// [`MAX_SERVER_HEADER`] characters): what the client knows of the
    /// sender.
    server_header: Option<String>,
    /// `--dgram-proto oneway`: the DATAGRAM frames sent and received.
    datagrams: Option<DatagramExchange>,
}

/// Characters of the `server` header kept for the summary.
const MAX_SERVER_HEADER: usize = 100;

impl ClientSession {
    /// Requests for `paths` (each starting with `/`, query allowed) on a
    /// server known as `authority` (`host[:port]`, HTTP/3's `:authority`).
    /// With `dump_dir`, each body is also saved there, named after the
    /// path's last segment, once it has arrived complete with a 2xx status
    /// (see [`BodySink`]); an existing file is replaced only then.
    pub fn new(
        version: HttpVersion,
        authority: &str,
        paths: &[String],
        dump_dir: Option<&Path>,
    ) -> anyhow::Result<Self> {
        if paths.is_empty() {
            bail!("no URL to request");
        }
        if let Some(dir) = dump_dir {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create directory {}", dir.display()))?;
        }
        let mut used = HashSet::new();
        let mut requests = Vec::with_capacity(paths.len());
        for path in paths {
            if !path.starts_with('/') {
                bail!("request path '{path}' does not start with '/'");
            }
            let sink = match dump_dir {
                Some(dir) => {
                    let file = dir.join(unique_name(&mut used, dump_file_name(path)));
                    BodySink::to_file(&file)
                        .with_context(|| format!("cannot create a file in {}", dir.display()))?
                }
                None => BodySink::counting(),
            };
            requests.push(Request {
                path: path.clone(),
                stream_id: None,
                body_sent: None,
                record: None,
                hq_sent: 0,
                status: None,
                content_length: None,
                sink,
                outcome: None,
            });
        }
        Ok(ClientSession {
            version,
            authority: authority.to_string(),
            requests,
            next: 0,
            by_stream: HashMap::new(),
            h3: None,
            next_hq_stream: 0,
            buf: vec![0; CHUNK],
            closing: false,
            saves_bodies: dump_dir.is_some(),
            options: RequestOptions::default(),
            server_header: None,
            datagrams: None,
        })
    }

    /// Sends and counts DATAGRAM frames as `datagrams` says (HTTP/3 only,
    /// as in quiche's apps; the configuration must offer them,
    /// [`DgramProto::apply`]).
    pub fn with_datagrams(mut self, datagrams: DatagramExchange) -> anyhow::Result<Self> {
        if self.version != HttpVersion::Http3 {
            bail!("DATAGRAM frames (--dgram-proto oneway) need HTTP/3, as in quiche's apps");
        }
        self.datagrams = Some(datagrams);
        Ok(self)
    }

    /// Counts response bodies without hashing them: for a body that never
    /// ends (a bulk flow stopped at a set time), whose hash no one checks.
    /// A body saved to a file is still hashed.
    pub fn without_body_hash(mut self) -> Self {
        for request in &mut self.requests {
            if request.sink.temporary_path().is_none() {
                request.sink = BodySink::counting_unhashed();
            }
        }
        self
    }

    /// Every response body is hashed (false after [`Self::without_body_hash`]).
    pub fn hashes_bodies(&self) -> bool {
        self.requests.iter().all(|r| r.sink.is_hashing())
    }

    /// The DATAGRAM frames sent and received, with `--dgram-proto oneway`.
    pub fn datagrams(&self) -> Option<&DatagramExchange> {
        self.datagrams.as_ref()
    }

    /// Sends every request with these options (see [`RequestOptions`]).
    pub fn with_options(mut self, options: RequestOptions) -> anyhow::Result<Self> {
        options.validate(self.version)?;
        for request in &mut self.requests {
            request.record = options.record.then(|| ResponseRecord {
                path: request.path.clone(),
                ..ResponseRecord::default()
            });
        }
        self.options = options;
        Ok(self)
    }

    /// The responses kept for `--dump-json`, in request order (empty unless
    /// [`RequestOptions::record`]).
    pub fn records(&self) -> Vec<&ResponseRecord> {
        self.requests
            .iter()
            .filter_map(|r| r.record.as_ref())
            .collect()
    }

    pub fn version(&self) -> HttpVersion {
        self.version
    }

    /// Every request has ended, successfully or not.
    pub fn is_finished(&self) -> bool {
        self.requests.iter().all(|r| r.outcome.is_some())
    }

    /// Every request ended with a complete 2xx response.
    pub fn all_succeeded(&self) -> bool {
        self.summaries().iter().all(|s| s.is_success())
    }

    /// Bodies are saved (`--dump-responses`).
    pub fn saves_bodies(&self) -> bool {
        self.saves_bodies
    }

    /// Body bytes received so far, over all requests.
    pub fn bytes_received(&self) -> u64 {
        self.requests.iter().map(|r| r.sink.bytes()).sum()
    }

    /// Body bytes expected in all, once every response announced its length.
    pub fn bytes_expected(&self) -> Option<u64> {
        self.requests.iter().map(|r| r.content_length).sum()
    }

    /// The server's HTTP/3 `server` header, if a response carried one (our
    /// server names its congestion controller there: `quiche-vegas
    /// cc=vegas-sat`). HTTP/0.9 has no headers.
    pub fn server_header(&self) -> Option<&str> {
        self.server_header.as_deref()
    }

    pub fn summaries(&self) -> Vec<ResponseSummary> {
        self.requests
            .iter()
            .map(|r| ResponseSummary {
                path: r.path.clone(),
                status: r.status,
                bytes: r.sink.bytes(),
                outcome: r.outcome.clone(),
                dump: r.sink.path().map(Path::to_path_buf),
            })
            .collect()
    }

    /// Marks every unfinished request failed with `reason` (the connection
    /// ended under it).
    pub fn abandon(&mut self, reason: &str) {
        for r in &mut self.requests {
            r.fail(reason.to_string());
        }
    }

    /// Sends requests, reads responses, and closes the connection once every
    /// request has ended. An error means the connection has been closed
    /// because of it.
    pub fn on_progress(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<()> {
        // With 0-RTT (`--early-data` and a resumed session) requests go
        // before the handshake is done.
        if self.closing || !(conn.is_established() || conn.is_in_early_data()) {
            return Ok(());
        }
        match self.version {
            HttpVersion::Http3 => {
                self.progress_h3(conn)?;
                if let Some(datagrams) = self.datagrams.as_mut() {
                    datagrams.progress(conn);
                }
            }
            HttpVersion::Http09 => {
                self.send_hq(conn);
                self.read_hq(conn);
            }
        }
        if self.is_finished() {
            self.closing = true;
            let code = match self.version {
                HttpVersion::Http3 => H3_NO_ERROR,
                HttpVersion::Http09 => 0,
            };
            conn.close(true, code, b"done").ok();
        }
        Ok(())
    }

    fn progress_h3(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<()> {
        if self.h3.is_none() {
            let config = h3::Config::new().map_err(|e| anyhow!("HTTP/3 config: {e}"))?;
            match h3::Connection::with_transport(conn, &config) {
                Ok(h3_conn) => self.h3 = Some(h3_conn),
                Err(e) => {
                    conn.close(true, H3_INTERNAL_ERROR, b"").ok();
                    self.closing = true;
                    bail!("cannot start HTTP/3: {e}");
                }
            }
        }
        let result = self.send_h3(conn).and_then(|()| self.poll_h3(conn));
        if result.is_err() {
            self.closing = true;
        }
        result
    }

    fn send_h3(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<()> {
        let Some(h3_conn) = self.h3.as_mut() else {
            return Ok(());
        };
        let method = self.options.method.as_deref().unwrap_or("GET");
        // An empty body is no body: the headers carry FIN.
        let body = self.options.body.as_deref().filter(|b| !b.is_empty());
        let content_length = self.options.body.as_ref().map(|b| b.len());
        // Bodies of requests already sent, before any new request: a
        // request does not wait behind the next one's headers.
        if let Some(body) = body {
            for request in &mut self.requests[..self.next] {
                send_request_body(h3_conn, conn, request, body)?;
            }
        }
        while let Some(request) = self.requests.get_mut(self.next) {
            let mut headers = vec![
                h3::Header::new(b":method", method.as_bytes()),
                h3::Header::new(b":scheme", b"https"),
                h3::Header::new(b":authority", self.authority.as_bytes()),
                h3::Header::new(b":path", request.path.as_bytes()),
                h3::Header::new(b"user-agent", USER_AGENT),
            ];
            for (name, value) in &self.options.headers {
                headers.push(h3::Header::new(name.as_bytes(), value.as_bytes()));
            }
            if let Some(len) = content_length {
                headers.push(h3::Header::new(
                    b"content-length",
                    len.to_string().as_bytes(),
                ));
            }
            match h3_conn.send_request(conn, &headers, body.is_none()) {
                Ok(id) => {
                    request.stream_id = Some(id);
                    self.by_stream.insert(id, self.next);
                    self.next += 1;
                    if let Some(body) = body {
                        request.body_sent = Some(0);
                        send_request_body(h3_conn, conn, request, body)?;
                    }
                }
                Err(h3::Error::StreamBlocked)
                | Err(h3::Error::TransportError(quiche::Error::StreamLimit)) => break,
                Err(h3::Error::FrameUnexpected) => {
                    // The server sent GOAWAY: no new requests.
                    request.fail("the server refused new requests (GOAWAY)".into());
                    self.next += 1;
                }
                Err(e) => {
                    conn.close(true, H3_INTERNAL_ERROR, b"").ok();
                    bail!("cannot send request for {}: {e}", request.path);
                }
            }
        }
        Ok(())
    }

    fn poll_h3(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<()> {
        let Some(h3_conn) = self.h3.as_mut() else {
            return Ok(());
        };
        loop {
            let (id, event) = match h3_conn.poll(conn) {
                Ok(v) => v,
                Err(h3::Error::Done) => return Ok(()),
                Err(e) => {
                    conn.close(true, H3_INTERNAL_ERROR, b"").ok();
                    bail!("HTTP/3 error: {e}");
                }
            };
            let Some(request) = self
                .by_stream
                .get(&id)
                .and_then(|&i| self.requests.get_mut(i))
            else {
                continue;
            };
            match event {
                h3::Event::Headers { list, .. } => {
                    if let Some(record) = request.record.as_mut() {
                        record.headers.extend(list.iter().map(|h| {
                            (
                                String::from_utf8_lossy(h.name()).into_owned(),
                                String::from_utf8_lossy(h.value()).into_owned(),
                            )
                        }));
                    }
                    let mut bad_length = false;
                    for header in &list {
                        match header.name() {
                            b":status" => request.status = parse_status(header.value()),
                            b"server" if self.server_header.is_none() => {
                                let value: String = String::from_utf8_lossy(header.value())
                                    .chars()
                                    .filter(|c| c.is_ascii_graphic() || *c == ' ')
                                    .take(MAX_SERVER_HEADER)
                                    .collect();
                                self.server_header = Some(value);
                            }
                            b"content-length" => {
                                let value = parse_content_length(header.value());
                                bad_length |= value.is_none()
                                    || (request.content_length.is_some()
                                        && request.content_length != value);
                                request.content_length = value;
                            }
                            _ => {}
                        }
                    }
                    let problem = if request.status.is_none() {
                        Some("response without a valid :status")
                    } else if bad_length {
                        Some("response with an invalid content-length")
                    } else {
                        None
                    };
                    if let Some(problem) = problem {
                        request.fail(problem.into());
                        conn.stream_shutdown(id, quiche::Shutdown::Read, H3_REQUEST_CANCELLED)
                            .ok();
                    }
                }
                h3::Event::Data => loop {
                    match h3_conn.recv_body(conn, id, &mut self.buf) {
                        Ok(n) => {
                            if let Some(record) = request.record.as_mut() {
                                let room = MAX_RECORDED_BODY - record.body.len();
                                record.body.extend_from_slice(&self.buf[..n.min(room)]);
                                record.body_truncated |= n > room;
                            }
                            if let Err(e) = request.sink.write(&self.buf[..n]) {
                                request.fail(format!("cannot write response body: {e}"));
                                conn.stream_shutdown(
                                    id,
                                    quiche::Shutdown::Read,
                                    H3_REQUEST_CANCELLED,
                                )
                                .ok();
                                break;
                            }
                        }
                        Err(h3::Error::Done) => break,
                        Err(e) => {
                            request.fail(format!("cannot read response body: {e}"));
                            break;
                        }
                    }
                },
                h3::Event::Finished => request.complete(),
                h3::Event::Reset(code) => {
                    request.fail(format!("the server reset the stream (error {code:#x})"))
                }
                h3::Event::PriorityUpdate | h3::Event::GoAway => {}
            }
        }
    }

    fn send_hq(&mut self, conn: &mut quiche::Connection) {
        while let Some(request) = self.requests.get_mut(self.next) {
            let id = self.next_hq_stream;
            let line = format!("GET {}\r\n", request.path);
            let rest = &line.as_bytes()[request.hq_sent..];
            match conn.stream_send(id, rest, true) {
                Ok(n) => {
                    if request.stream_id.is_none() {
                        request.stream_id = Some(id);
                        self.by_stream.insert(id, self.next);
                    }
                    request.hq_sent += n;
                    if n < rest.len() {
                        break;
                    }
                    self.next += 1;
                    self.next_hq_stream += 4;
                }
                Err(quiche::Error::Done) | Err(quiche::Error::StreamLimit) => break,
                Err(e) => {
                    request.fail(format!("cannot send request: {e}"));
                    self.next += 1;
                    self.next_hq_stream += 4;
                }
            }
        }
    }

    fn read_hq(&mut self, conn: &mut quiche::Connection) {
        for id in conn.readable() {
            let Some(request) = self
                .by_stream
                .get(&id)
                .and_then(|&i| self.requests.get_mut(i))
            else {
                conn.stream_shutdown(id, quiche::Shutdown::Read, 0).ok();
                continue;
            };
            loop {
                match conn.stream_recv(id, &mut self.buf) {
                    Ok((n, fin)) => {
                        if let Err(e) = request.sink.write(&self.buf[..n]) {
                            request.fail(format!("cannot write response body: {e}"));
                            conn.stream_shutdown(id, quiche::Shutdown::Read, 0).ok();
                            break;
                        }
                        if fin {
                            request.complete();
                            break;
                        }
                    }
                    Err(quiche::Error::Done) => break,
                    Err(quiche::Error::StreamReset(code)) => {
                        request.fail(hq_reset_reason(code));
                        break;
                    }
                    Err(e) => {
                        request.fail(format!("cannot read response: {e}"));
                        break;
                    }
                }
            }
        }
    }
}

/// Hands quiche as much of `request`'s body as flow control allows; the
/// body ends with FIN. A server that stopped reading it (STOP_SENDING, e.g.
/// an early error response) ends the upload: its response says why.
fn send_request_body(
    h3_conn: &mut h3::Connection,
    conn: &mut quiche::Connection,
    request: &mut Request,
    body: &[u8],
) -> anyhow::Result<()> {
    let (Some(id), Some(sent)) = (request.stream_id, request.body_sent) else {
        return Ok(());
    };
    let mut sent = sent;
    loop {
        match h3_conn.send_body(conn, id, &body[sent..], true) {
            Ok(n) => {
                sent += n;
                if sent == body.len() {
                    request.body_sent = None;
                    return Ok(());
                }
                if n == 0 {
                    break;
                }
            }
            Err(h3::Error::Done) => break,
            Err(h3::Error::TransportError(quiche::Error::StreamStopped(_)))
            | Err(h3::Error::TransportError(quiche::Error::InvalidStreamState(_))) => {
                request.body_sent = None;
                return Ok(());
            }
            Err(e) => {
                conn.close(true, H3_INTERNAL_ERROR, b"").ok();
                bail!("cannot send the request body for {}: {e}", request.path);
            }
        }
    }
    request.body_sent = Some(sent);
    Ok(())
}

fn hq_reset_reason(code: u64) -> String {
    let meaning = match code {
        HQ_NOT_FOUND => " (not found)",
        HQ_BAD_REQUEST => " (bad request)",
        HQ_SERVER_ERROR => " (server error)",
        _ => "",
    };
    format!("the server reset the stream with error {code}{meaning}")
}

/// `name`, or `name.1`, `name.2`, ... if already taken.
fn unique_name(used: &mut HashSet<String>, name: String) -> String {
    let mut candidate = name.clone();
    let mut n = 1;
    while !used.insert(candidate.clone()) {
        candidate = format!("{name}.{n}");
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names() {
        let mut used = HashSet::new();
        assert_eq!(unique_name(&mut used, "f".into()), "f");
        assert_eq!(unique_name(&mut used, "f".into()), "f.1");
        assert_eq!(unique_name(&mut used, "f".into()), "f.2");
    }

    #[test]
    fn paths_must_be_absolute() {
        assert!(ClientSession::new(HttpVersion::Http3, "h", &["x".into()], None).is_err());
        assert!(ClientSession::new(HttpVersion::Http3, "h", &[], None).is_err());
        let s = ClientSession::new(HttpVersion::Http3, "h", &["/x".into()], None).unwrap();
        assert!(!s.is_finished());
        assert_eq!(s.bytes_expected(), None);
    }
}

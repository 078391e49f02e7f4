//! One QUIC connection with its application and its paced outbox: everything
//! a driver needs, on real or virtual time alike.
//!
//! A driver (the socket loops in [`crate::net`], or a simulator) owns
//! endpoints and, with `now` from its own clock:
//! - hands each arriving datagram to [`Endpoint::on_datagram`] (or, with the
//!   queueing time AQT-enabled routers reported for it, to
//!   [`Endpoint::on_datagram_with_queueing_time`]);
//! - calls [`Endpoint::on_timer`] once `now` reaches [`Endpoint::next_wakeup`];
//! - after either (or after a batch of datagrams), calls [`Endpoint::flush`]
//!   with a function that puts a datagram on the wire (or the simulated
//!   link). `flush` first lets the application act on what changed.
//!
//! quiche reads the clock itself (`quiche::virtual_env::now()`), so a
//! simulator sets its virtual time before calling in.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::pacing::{Flushed, Outbox};
use crate::transfer::{ClientSession, ServerSession};

/// The application logic of a connection.
pub trait App {
    /// Called after anything may have changed the connection. An error means
    /// the application has closed the connection; the message is for the log.
    fn on_progress(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<()>;

    /// Whether the application has handed quiche responses and nothing
    /// more is waiting to be handed over: the tail repeat comes after the
    /// end of everything it sends, never before the first response.
    fn finished_writing(&self) -> bool {
        false
    }
}

impl App for ServerSession {
    fn on_progress(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<()> {
        ServerSession::on_progress(self, conn)
    }

    fn finished_writing(&self) -> bool {
        self.requests() > 0 && self.pending_responses() == 0
    }
}

/// What the socket knew of a received datagram besides its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatagramMeta {
    /// The accumulated queueing time AQT-enabled routers reported (RoVegas).
    pub queueing_time: Option<Duration>,
    /// When the datagram reached the host: the kernel's receive timestamp.
    pub received_at: Option<Instant>,
}

impl App for ClientSession {
    fn on_progress(&mut self, conn: &mut quiche::Connection) -> anyhow::Result<()> {
        ClientSession::on_progress(self, conn)
    }
}

pub struct Endpoint<A: App> {
    pub conn: quiche::Connection,
    pub app: A,
    pub outbox: Outbox,
    /// The last error of the application, if it closed the connection.
    pub app_error: Option<String>,
    /// Something happened that the application has not seen yet.
    dirty: bool,
    /// Tail repeat (`--tail-repeat`): see [`Endpoint::set_tail_repeat`].
    tail_repeat: bool,
    /// The start of the span the current tail repeats (half a round trip
    /// before the application finished writing), while it has.
    tail_since: Option<Instant>,
}

impl<A: App> Endpoint<A> {
    /// `pacing_granularity`: see [`Outbox::new`].
    pub fn new(conn: quiche::Connection, app: A, pacing_granularity: Duration) -> Self {
        Endpoint {
            conn,
            app,
            outbox: Outbox::new(pacing_granularity),
            app_error: None,
            dirty: true,
            tail_repeat: false,
            tail_since: None,
        }
    }

    /// Tail repeat: once the application has handed quiche all it sends and
    /// quiche has sent it, the data of the packets sent in the last half
    /// round trip that are not acknowledged yet is sent once more, newest
    /// first, within the congestion window (`quiche::Connection::
    /// repeat_unacked_tail`, patch 0013). A loss among the last packets then
    /// costs nothing when the copy arrives, where it otherwise costs about
    /// a round trip more: detection by later packets' ACKs, then the
    /// retransmission's own trip. The copies cost about half a round trip's
    /// worth of packets per transfer (docs/sender.md). Off by default.
    pub fn set_tail_repeat(&mut self, on: bool) {
        self.tail_repeat = on;
    }

    /// A datagram arrived from `from` at local address `to`. Errors of
    /// quiche on one datagram (e.g. undecryptable) drop that datagram.
    pub fn on_datagram(&mut self, data: &mut [u8], from: SocketAddr, to: SocketAddr) {
        self.on_datagram_with_queueing_time(data, from, to, None);
    }

    /// A datagram arrived, with the accumulated queueing time (RoVegas's AQT)
    /// that AQT-enabled routers on its path reported outside the packet;
    /// `None` if it crossed none. The value goes to quiche
    /// (`Connection::set_next_datagram_queueing_time`) for this datagram
    /// only: as data receiver the connection echoes it to the peer in
    /// QUEUEING_TIME frames, as data sender it is the backward queueing time
    /// of the ACKs the datagram carries (docs/extensions.md).
    pub fn on_datagram_with_queueing_time(
        &mut self,
        data: &mut [u8],
        from: SocketAddr,
        to: SocketAddr,
        queueing_time: Option<Duration>,
    ) {
        self.on_datagram_with_meta(
            data,
            from,
            to,
            DatagramMeta {
                queueing_time,
                received_at: None,
            },
        );
    }

    /// A datagram arrived, with what the socket knew of it besides its bytes.
    pub fn on_datagram_with_meta(
        &mut self,
        data: &mut [u8],
        from: SocketAddr,
        to: SocketAddr,
        meta: DatagramMeta,
    ) {
        if let Some(aqt) = meta.queueing_time {
            self.conn.set_next_datagram_queueing_time(aqt);
        }
        if let Some(at) = meta.received_at {
            self.conn.set_next_datagram_received_at(at);
        }
        match self.conn.recv(data, quiche::RecvInfo { from, to }) {
            Ok(_) => {}
            Err(quiche::Error::Done) => {}
            Err(e) => log::debug!("{} datagram dropped: {e}", self.conn.trace_id()),
        }
        self.dirty = true;
    }

    /// Handles quiche's timers if they are due at `now`.
    pub fn on_timer(&mut self, now: Instant) {
        if self.conn.timeout_instant().is_some_and(|t| t <= now) {
            self.conn.on_timeout();
            self.dirty = true;
        }
    }

    /// Lets the application act now (`flush` does so when needed).
    pub fn progress(&mut self) {
        self.dirty = false;
        if let Err(e) = self.app.on_progress(&mut self.conn) {
            log::warn!("{} {e:#}", self.conn.trace_id());
            self.app_error = Some(format!("{e:#}"));
        }
    }

    /// Lets the application act if anything happened since it last did, then
    /// transmits the datagrams that are due at `now` (see [`Outbox::flush`]).
    pub fn flush(
        &mut self,
        now: Instant,
        transmit: &mut dyn FnMut(&[u8], &quiche::SendInfo) -> io::Result<()>,
    ) -> Flushed {
        if self.dirty {
            self.progress();
        }
        let cwnd_before = self.cwnd();
        let flushed = self.outbox.flush(&mut self.conn, now, transmit);
        // Careful Resume opens the window while sending (its jump), not on
        // an ACK: the application gets a turn to fill the larger window
        // instead of waiting for the next datagram. Without it the window
        // never grows here and nothing changes.
        let flushed = if flushed.failed.is_none() && self.cwnd() > cwnd_before {
            self.progress();
            let more = self.outbox.flush(&mut self.conn, now, transmit);
            Flushed {
                datagrams: flushed.datagrams + more.datagrams,
                failed: more.failed,
            }
        } else {
            flushed
        };
        if flushed.failed.is_none() && self.repeat_tail(now) {
            let more = self.outbox.flush(&mut self.conn, now, transmit);
            return Flushed {
                datagrams: flushed.datagrams + more.datagrams,
                failed: more.failed,
            };
        }
        flushed
    }

    /// Transmits everything left, paced or not (see [`Outbox::flush_closing`]):
    /// for an endpoint that exits now.
    pub fn flush_closing(
        &mut self,
        transmit: &mut dyn FnMut(&[u8], &quiche::SendInfo) -> io::Result<()>,
    ) -> Flushed {
        self.outbox.flush_closing(&mut self.conn, transmit)
    }

    /// With tail repeat on and everything written, reschedules the data of
    /// the last half round trip's unacknowledged packets; whether any was.
    fn repeat_tail(&mut self, now: Instant) -> bool {
        if !self.tail_repeat || !self.app.finished_writing() {
            self.tail_since = None;
            return false;
        }
        // The span is fixed when the tail begins: packets of it that could
        // not be repeated yet (quiche still had retransmissions to send)
        // are repeated later, not dropped from a span that moves on.
        let since = match self.tail_since {
            Some(since) => since,
            None => {
                let Some(rtt) = self.conn.path_stats().next().map(|p| p.rtt) else {
                    return false;
                };
                *self
                    .tail_since
                    .insert(now.checked_sub(rtt / 2).unwrap_or(now))
            }
        };
        self.conn.repeat_unacked_tail(since) > 0
    }

    fn cwnd(&self) -> usize {
        self.conn.congestion_window().unwrap_or(0)
    }

    /// When this endpoint next needs attention: quiche's timer or the release
    /// of a paced datagram, whichever comes first.
    pub fn next_wakeup(&self) -> Option<Instant> {
        match (self.conn.timeout_instant(), self.outbox.next_release()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The connection is closed and nothing is left to send.
    pub fn is_done(&self) -> bool {
        self.conn.is_closed() && !self.outbox.is_holding()
    }

    /// Whether a closing connection has nothing left to send: its
    /// CONNECTION_CLOSE left (quiche is closing or draining) or it is closed,
    /// and the outbox holds nothing.
    pub fn close_sent(&self) -> bool {
        (self.conn.is_closed() || self.conn.is_draining()) && !self.outbox.is_holding()
    }
}

//! Honouring quiche's pacing: every datagram leaves no earlier than the
//! `SendInfo.at` quiche gave it.
//!
//! quiche computes `at` from the congestion controller's pacer (our
//! controllers' through the plug-in seam, BBRv2's through gcongestion) but
//! sends nothing itself; pacing happens only if the application holds each
//! datagram until its time. The [`Outbox`] does that without a queue:
//!
//! - it builds no packet while quiche's pacer says the next one is not due
//!   (`Connection::get_next_release_time`), so that a packet is built, and
//!   its send time recorded, when it can leave;
//! - it asks quiche for datagrams while they are due and, as soon as one is
//!   not, keeps that one and asks for no more until it has left.
//!
//! Either way quiche builds each packet close to the moment it leaves, and
//! ACKs that arrive meanwhile count for the next one. Our controllers (their
//! host's pacer, through the plug-in seam) and gcongestion's BBRv2 tell the
//! next release time. quiche's own Reno and CUBIC do not (their legacy
//! recovery answers "immediately"): their held packet's send time is
//! recorded when it was built, up to one pacing interval before it leaves,
//! which that packet's RTT sample then includes.

use std::io;
use std::time::{Duration, Instant};

use crate::settings::MAX_DATAGRAM_SIZE;

/// A datagram counts as due this long before its `at`: how finely the real
/// socket loop paces. Timer wake-ups are not much more precise than this,
/// and at high rates it lets a few packets leave per wake-up instead of one.
pub const REAL_TIME_PACING_GRANULARITY: Duration = Duration::from_micros(500);

#[derive(Debug)]
struct Held {
    len: usize,
    info: quiche::SendInfo,
}

/// Datagrams of one connection on their way out.
#[derive(Debug)]
pub struct Outbox {
    buf: Vec<u8>,
    held: Option<Held>,
    /// quiche's pacer wants no packet built before this.
    not_before: Option<Instant>,
    granularity: Duration,
    sent: u64,
}

/// What a [`Outbox::flush`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flushed {
    /// Datagrams handed to the transmit function.
    pub datagrams: usize,
    /// quiche failed to build a packet; the connection has been closed.
    pub failed: Option<quiche::Error>,
}

impl Outbox {
    /// `granularity`: how early a datagram may leave before its `at`
    /// (zero for a simulator with exact timers).
    pub fn new(granularity: Duration) -> Self {
        Outbox {
            buf: vec![0; MAX_DATAGRAM_SIZE],
            held: None,
            not_before: None,
            granularity,
            sent: 0,
        }
    }

    /// When the outbox next has something to do: the held datagram is due,
    /// or quiche's pacer lets the next packet be built.
    pub fn next_release(&self) -> Option<Instant> {
        let at = match (&self.held, self.not_before) {
            (Some(held), _) => held.info.at,
            (None, Some(t)) => t,
            (None, None) => return None,
        };
        Some(at.checked_sub(self.granularity).unwrap_or(at))
    }

    pub fn is_holding(&self) -> bool {
        self.held.is_some()
    }

    /// Datagrams transmitted so far.
    pub fn datagrams_sent(&self) -> u64 {
        self.sent
    }

    /// Whether a datagram released at `at` may leave at `now` (`None`: the
    /// endpoint is closing and everything leaves).
    fn is_due(&self, at: Instant, now: Option<Instant>) -> bool {
        now.is_none_or(|now| at <= now + self.granularity)
    }

    /// Transmits everything that is due at `now`: first the held datagram,
    /// then new ones from `conn`, until quiche has nothing to send or a
    /// datagram is not due yet (it is held). `transmit` sends one datagram to
    /// `info.to`; if it fails with `WouldBlock` the datagram is kept and tried
    /// again on the next flush, any other error drops it, as a network would.
    pub fn flush(
        &mut self,
        conn: &mut quiche::Connection,
        now: Instant,
        transmit: &mut dyn FnMut(&[u8], &quiche::SendInfo) -> io::Result<()>,
    ) -> Flushed {
        self.flush_due(conn, Some(now), transmit)
    }

    /// Transmits everything `conn` still has, due or not. An endpoint about
    /// to exit cannot wait for the pacer: a CONNECTION_CLOSE held here would
    /// go with the process, and the peer would keep the connection until
    /// its idle timeout.
    pub fn flush_closing(
        &mut self,
        conn: &mut quiche::Connection,
        transmit: &mut dyn FnMut(&[u8], &quiche::SendInfo) -> io::Result<()>,
    ) -> Flushed {
        self.flush_due(conn, None, transmit)
    }

    fn flush_due(
        &mut self,
        conn: &mut quiche::Connection,
        now: Option<Instant>,
        transmit: &mut dyn FnMut(&[u8], &quiche::SendInfo) -> io::Result<()>,
    ) -> Flushed {
        let mut flushed = Flushed::default();
        self.not_before = None;
        if let Some(held) = self.held.take() {
            if !self.is_due(held.info.at, now) {
                self.held = Some(held);
                return flushed;
            }
            match self.transmit(held.len, &held.info, transmit) {
                Ok(true) => flushed.datagrams += 1,
                Ok(false) => {}
                Err(()) => {
                    self.held = Some(held);
                    return flushed;
                }
            }
        }
        loop {
            let release =
                now.and_then(|now| conn.get_next_release_time().and_then(|d| d.time(now)));
            if let Some(t) = release {
                if !self.is_due(t, now) {
                    self.not_before = Some(t);
                    break;
                }
            }
            let (len, info) = match conn.send(&mut self.buf) {
                Ok(v) => v,
                Err(quiche::Error::Done) => break,
                Err(e) => {
                    log::error!("{} cannot build a packet: {e}", conn.trace_id());
                    conn.close(false, 0x1, b"internal error").ok();
                    flushed.failed = Some(e);
                    break;
                }
            };
            if !self.is_due(info.at, now) {
                self.held = Some(Held { len, info });
                break;
            }
            match self.transmit(len, &info, transmit) {
                Ok(true) => flushed.datagrams += 1,
                Ok(false) => {}
                Err(()) => {
                    self.held = Some(Held { len, info });
                    break;
                }
            }
        }
        flushed
    }

    /// `Ok(true)` sent, `Ok(false)` dropped, `Err(())` would block.
    fn transmit(
        &mut self,
        len: usize,
        info: &quiche::SendInfo,
        transmit: &mut dyn FnMut(&[u8], &quiche::SendInfo) -> io::Result<()>,
    ) -> Result<bool, ()> {
        match transmit(&self.buf[..len], info) {
            Ok(()) => {
                self.sent += 1;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(()),
            Err(e) => {
                log::warn!("cannot send a datagram to {}: {e}", info.to);
                Ok(false)
            }
        }
    }
}

//! What a congestion controller is told: packets sent, ACKs, losses.
//!
//! The QUIC stack fills these in (see `quiche-seam/plugin.rs`); tests build them
//! by hand. Fields that only some transports or extensions can supply are
//! `Option`s, so an algorithm that does not need them never looks at them and
//! adding a new source of information never changes an algorithm that ignores
//! it.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::shared::peer_clock;

/// One packet handed to the network that counts towards bytes in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketSent {
    pub pkt_num: u64,
    /// Size on the wire, in bytes.
    pub size: usize,
    pub time_sent: Instant,
    /// Bytes in flight before this packet was added.
    pub bytes_in_flight: usize,
}

/// One packet newly acknowledged by an ACK frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckedPacket {
    pub pkt_num: u64,
    pub size: usize,
    pub time_sent: Instant,
    /// `time_sent` in integer nanoseconds on one clock per connection: the
    /// host fills it from its send records ([`crate::host::ControllerHost`]),
    /// [`AckedPacket::new`] puts it on the process's clock. Only differences
    /// between packets of one connection mean anything; they are exact, so
    /// a controller that keeps times per ACK subtracts integers instead of
    /// instants.
    pub sent_nanos: i64,
    /// When the ACK that covers this packet arrived.
    pub time_acked: Instant,
    /// `time_acked - time_sent`: this packet's own RTT sample, ACK delay
    /// included (the stack's RTT estimator subtracts ACK delay only for the
    /// largest acknowledged packet).
    pub rtt: Duration,
    /// When the peer received the packet, on the peer's clock, relative to the
    /// peer's timestamp basis (draft-ietf-quic-receive-ts). `None` when the
    /// extension is not negotiated or the peer did not report this packet.
    pub receive_time: Option<Duration>,
    /// Which of the peer's clocks `receive_time` is on: the host's judge
    /// ([`crate::shared::peer_clock`]) counts one up each time it believes
    /// the peer's clock stepped. Receive times of different clocks are not
    /// comparable; an estimator that sees the number change starts over.
    pub clock_epoch: u32,
    /// Forward queueing time the packet accumulated on AQT-enabled routers,
    /// echoed by the receiver (RoVegas's AQT-echo). `None` when unknown.
    pub forward_queueing: Option<Duration>,
}

impl AckedPacket {
    /// A packet acknowledged at `time_acked`, with no extension data.
    pub fn new(pkt_num: u64, size: usize, time_sent: Instant, time_acked: Instant) -> Self {
        AckedPacket {
            pkt_num,
            size,
            time_sent,
            sent_nanos: process_clock_nanos(time_sent),
            time_acked,
            rtt: time_acked.saturating_duration_since(time_sent),
            receive_time: None,
            clock_epoch: 0,
            forward_queueing: None,
        }
    }

    /// `time_acked` on the clock of `sent_nanos`. A non-zero `rtt` is
    /// `time_acked − time_sent` exactly, so an integer addition gives it;
    /// a zero one may be saturated (acknowledged before it was sent), and
    /// the instant is converted.
    #[inline]
    pub fn acked_nanos(&self) -> i64 {
        match peer_clock::nanos(self.rtt) {
            Some(rtt) if rtt != 0 => self.sent_nanos.saturating_add(rtt),
            _ => self.nanos_of(self.time_acked),
        }
    }

    /// `t` on the clock of `sent_nanos` (one subtraction of instants).
    #[cold]
    #[inline(never)]
    pub fn nanos_of(&self, t: Instant) -> i64 {
        self.sent_nanos
            .saturating_add(peer_clock::signed_nanos_since(t, self.time_sent))
    }
}

/// `t` in nanoseconds on a clock shared by the whole process, whose origin
/// is the first time asked: the `sent_nanos` of packets built without a host
/// (tests, tools), so that those of one connection are on one clock.
pub fn process_clock_nanos(t: Instant) -> i64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    peer_clock::signed_nanos_since(t, *ORIGIN.get_or_init(|| t))
}

/// The stack's RTT estimator at the time of an ACK (RFC 9002 section 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttSnapshot {
    pub min_rtt: Duration,
    pub smoothed_rtt: Duration,
    pub latest_rtt: Duration,
    pub rttvar: Duration,
}

impl RttSnapshot {
    /// All four values set to one RTT, as after the first sample.
    pub fn uniform(rtt: Duration) -> Self {
        RttSnapshot {
            min_rtt: rtt,
            smoothed_rtt: rtt,
            latest_rtt: rtt,
            rttvar: rtt / 2,
        }
    }
}

/// What every reader of an ACK wants of its packets, taken in one walk where
/// the [`AckEvent`] is built (the host), so that no member walks the packets
/// again for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSummary {
    /// Bytes newly acknowledged.
    pub acked_bytes: usize,
    /// The largest packet number acknowledged; `None` for an ACK of nothing.
    pub largest_acked: Option<u64>,
    /// The latest send time among the acknowledged packets.
    pub latest_time_sent: Option<Instant>,
    /// The ACK's RTT sample: the smallest non-zero RTT among the packets of
    /// at least `full_size` bytes.
    pub min_rtt: Option<Duration>,
    /// The size from which a packet's RTT counts as a sample of the path
    /// (`round_clock::full_size_floor` of the path's datagram size).
    pub full_size: usize,
}

impl AckSummary {
    /// The summary of `acked`, RTT samples from packets of at least
    /// `full_size` bytes.
    pub fn of(acked: &[AckedPacket], full_size: usize) -> Self {
        let mut summary = AckSummary::empty(full_size);
        for p in acked {
            summary.add(p);
        }
        summary
    }

    /// The summary of no packets yet.
    pub fn empty(full_size: usize) -> Self {
        AckSummary {
            full_size,
            ..AckSummary::default()
        }
    }

    /// Counts one more acknowledged packet.
    #[inline]
    pub fn add(&mut self, p: &AckedPacket) {
        self.acked_bytes = self.acked_bytes.saturating_add(p.size);
        self.largest_acked = self.largest_acked.max(Some(p.pkt_num));
        self.latest_time_sent = self.latest_time_sent.max(Some(p.time_sent));
        if p.size >= self.full_size && !p.rtt.is_zero() {
            self.min_rtt = Some(self.min_rtt.map_or(p.rtt, |m| m.min(p.rtt)));
        }
    }

    /// The smallest non-zero RTT among the packets of `acked` (the packets
    /// this summary was taken of) of at least `min_size` bytes: the stored
    /// sample when `min_size` is the size it was taken with, else a walk.
    pub fn min_rtt_from(&self, acked: &[AckedPacket], min_size: usize) -> Option<Duration> {
        if min_size == self.full_size {
            return self.min_rtt;
        }
        crate::shared::round_clock::smallest_rtt_sample(acked, min_size)
    }
}

/// One received ACK frame and the packets it newly acknowledges, in
/// ascending packet-number order.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent<'a> {
    pub now: Instant,
    pub acked: &'a [AckedPacket],
    /// `acked` summed up once ([`AckSummary::of`]); whoever changes `acked`
    /// makes a new one.
    pub summary: AckSummary,
    /// ACK delay the peer reported for the largest acknowledged packet.
    pub ack_delay: Duration,
    pub rtt: RttSnapshot,
    /// Bytes in flight before the acknowledged packets were removed.
    pub bytes_in_flight: usize,
    /// Whether the sender was limited by the application, not by cwnd, when
    /// these packets were sent.
    pub app_limited: bool,
    /// Backward (ACK path) queueing time accumulated by the datagram that
    /// carried this ACK on AQT-enabled routers. `None` when unknown.
    pub backward_queueing: Option<Duration>,
}

impl AckEvent<'_> {
    /// `now` on the clock of the packets' `sent_nanos`; `None` for an ACK of
    /// no packets. The stack stamps every packet of an ACK with its arrival,
    /// so this is usually an integer addition
    /// ([`AckedPacket::acked_nanos`]).
    #[inline]
    pub fn now_nanos(&self) -> Option<i64> {
        let first = self.acked.first()?;
        Some(if first.time_acked == self.now {
            first.acked_nanos()
        } else {
            first.nanos_of(self.now)
        })
    }
}

/// One value the peer reported about one of our packets: a receive time (on
/// the peer's clock, since its timestamp basis) or a queueing time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerStamp {
    pub pkt_num: u64,
    pub value: Duration,
}

/// What the peer reported with one ACK, as it came off the wire: nothing of
/// it is judged yet. The host judges it once
/// ([`crate::shared::peer_reports::PeerReportJudge`]) while it builds the
/// [`AckEvent`]; no controller sees an unjudged value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerReport<'a> {
    /// Receive times (draft-ietf-quic-receive-ts), ascending and distinct
    /// packet numbers.
    pub receive_times: &'a [PeerStamp],
    /// Forward queueing times echoed by the receiver (RoVegas's AQT-echo),
    /// ascending and distinct packet numbers.
    pub forward_queueing: &'a [PeerStamp],
    /// AQT of the datagram that carried the ACK.
    pub backward_queueing: Option<Duration>,
}

/// One ACK frame as the stack received it, for
/// [`crate::host::ControllerHost::on_ack_received`]: everything the host
/// needs beside the newly acknowledged packets.
#[derive(Clone, Copy, Debug)]
pub struct AckReceived<'a> {
    pub now: Instant,
    /// ACK delay the peer reported, scaled by its ack_delay_exponent.
    pub ack_delay: Duration,
    /// The peer's max_ack_delay (RFC 9002's PTO, for persistent congestion).
    pub max_ack_delay: Duration,
    pub rtt: RttSnapshot,
    /// Bytes in flight before the acknowledged packets were removed.
    pub bytes_in_flight: usize,
    pub report: PeerReport<'a>,
}

/// Packets declared lost by one run of loss detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionEvent {
    pub now: Instant,
    pub lost_bytes: usize,
    pub largest_lost_pkt_num: u64,
    pub largest_lost_time_sent: Instant,
    /// RFC 9002 section 7.6: the losses span more than the persistent
    /// congestion duration with nothing acknowledged in between.
    pub persistent_congestion: bool,
    pub bytes_in_flight: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets of mixed sizes and RTTs (some zero), numbers and send times
    /// out of order, from a small generator.
    fn packets(seed: u64, n: usize) -> Vec<AckedPacket> {
        let t0 = Instant::now();
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..n)
            .map(|_| {
                let sent = t0 + Duration::from_millis(next() % 1000);
                let mut p = AckedPacket::new(
                    next() % 500,
                    [40, 600, 1199, 1200][(next() % 4) as usize],
                    sent,
                    sent + Duration::from_millis(next() % 3 * 100),
                );
                p.rtt = Duration::from_millis(next() % 3 * 100);
                p
            })
            .collect()
    }

    #[test]
    fn times_in_nanoseconds_are_the_instants_on_the_packets_clock() {
        let t0 = Instant::now() + Duration::from_secs(5);
        let ns = |later: Instant, earlier: Instant| peer_clock::signed_nanos_since(later, earlier);
        // `packets` makes RTTs that are not `time_acked − time_sent` (zero
        // ones included): made consistent here, as the stack's are.
        let made: Vec<AckedPacket> = packets(7, 40)
            .iter()
            .map(|p| AckedPacket::new(p.pkt_num, p.size, p.time_sent, p.time_acked))
            .collect();
        // One clock for all packets made without a host, whatever its
        // origin: differences are those of the instants, the arrival
        // however it is found.
        let first = made[0];
        for p in &made {
            assert_eq!(
                p.sent_nanos - first.sent_nanos,
                ns(p.time_sent, first.time_sent)
            );
            assert_eq!(p.nanos_of(t0) - first.sent_nanos, ns(t0, first.time_sent));
            assert_eq!(
                p.acked_nanos() - first.sent_nanos,
                ns(p.time_acked, first.time_sent)
            );
        }
        // Acknowledged "before" it was sent: a zero RTT, the instant converted.
        let early = AckedPacket::new(1, 1200, t0 + Duration::from_millis(3), t0);
        assert!(early.rtt.is_zero());
        assert_eq!(
            early.acked_nanos() - early.sent_nanos,
            -3_000_000,
            "the arrival of a packet acknowledged before it was sent"
        );
        let acked = [
            AckedPacket::new(2, 1200, t0, t0 + Duration::from_millis(600)),
            early,
        ];
        for now in [acked[0].time_acked, t0 + Duration::from_millis(700)] {
            let ack = AckEvent {
                now,
                acked: &acked,
                summary: AckSummary::of(&acked, 0),
                ack_delay: Duration::ZERO,
                rtt: RttSnapshot::uniform(Duration::from_millis(600)),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
            };
            assert_eq!(ack.now_nanos(), Some(acked[0].sent_nanos + ns(now, t0)));
        }
        let none = AckEvent {
            now: t0,
            acked: &[],
            summary: AckSummary::of(&[], 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(Duration::ZERO),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        };
        assert_eq!(none.now_nanos(), None);
    }

    #[test]
    fn the_summary_is_what_each_reader_computed_for_itself() {
        for seed in 1..200 {
            let acked = packets(seed, (seed % 12) as usize);
            let summary = AckSummary::of(&acked, 600);
            let bytes: usize = acked.iter().map(|p| p.size).sum();
            assert_eq!(summary.acked_bytes, bytes);
            assert_eq!(summary.largest_acked, acked.iter().map(|p| p.pkt_num).max());
            assert_eq!(
                summary.latest_time_sent,
                acked.iter().map(|p| p.time_sent).max()
            );
            for min_size in [0, 600, 1200] {
                let reference = acked
                    .iter()
                    .filter(|p| p.size >= min_size)
                    .map(|p| p.rtt)
                    .filter(|r| !r.is_zero())
                    .min();
                assert_eq!(summary.min_rtt_from(&acked, min_size), reference);
            }
        }
        assert_eq!(AckSummary::of(&[], 600), AckSummary::empty(600));
    }
}

//! Per-RTT rounds, delimited by packet number, with what each round measured.
//!
//! Vegas makes its decision "once per round-trip time"
//! (004_039b3aff67042154.txt, section 3.5.2): it marks a distinguished segment,
//! and when that segment's ACK returns one RTT has passed. Vegas-A and Vegas-L
//! (000_625d42b67da1ab13.txt) compare this round's throughput with earlier
//! rounds', Veno and Vegas-W decide per round too. This clock is that
//! distinguished-segment mechanism, written once.
//!
//! # Where a round ends
//!
//! A round begins at some instant; the first packet sent from then on is the
//! round's distinguished packet. The round ends when an ACK acknowledges a
//! packet whose number is at least the distinguished packet's, i.e. a packet
//! sent after the round began: one RTT has then passed. The next round begins
//! at that ACK, and its distinguished packet is the next one sent. This is the
//! packet-number form of Linux's `beg_snd_nxt` test.
//!
//! Round 0 begins when the first packet is sent, so it ends at the first ACK,
//! one RTT later.
//!
//! # What a round measures
//!
//! Every ACK received while a round is in progress is counted in that round,
//! including the ACK that ends it (its packet is the distinguished one, whose
//! RTT the paper uses). Per round, the clock records:
//!
//! - the RTT samples of the round (one per ACK: the smallest RTT among the
//!   full-size packets it newly acknowledges, see below), as their minimum,
//!   their mean and the distinguished packet's own sample,
//! - how many RTT samples there were,
//! - the bytes newly acknowledged,
//! - whether every ACK of the round was application-limited (one that was
//!   not means the sender was limited by cwnd or its pacer at some point of
//!   the round, as Linux's per-round `is_cwnd_limited`),
//! - when it began and (once complete) when it ended, hence its duration.
//!
//! Throughput per round is bytes acknowledged over duration.
//!
//! # Which RTT is "the round's RTT"
//!
//! The papers disagree, so [`RoundRtt`] names the choice: 004 (section 3.5.2)
//! divides by the RTT of the distinguished segment; ns-2's Vegas, which 000,
//! 002 and 003 simulated with, uses the mean of the round's samples (it sees
//! slow-start burst queueing); Linux's `tcp_vegas.c` and Veno use the round's
//! minimum, which filters out delayed ACKs. `vegas` and the members that
//! change only its rules (Vegas-A, Vegas-L, RoVegas) take 004's, so that
//! they differ from `vegas` only where their papers say; Vegas-W, whose
//! IV.A is about slow-start burst queueing, takes ns-2's mean;
//! `vegas-linux` and Veno the minimum.
//!
//! # Full-size packets only
//!
//! A path's RTT depends on packet size (serialisation at the bottleneck): a
//! 50-byte HTTP/3 control packet crosses a 1.5 Mbit/s link about 7 ms faster
//! than a full one, so a minimum over all packets reads BaseRTT low and Diff
//! one to two packets high. Samples therefore come from packets of at least
//! half the maximum datagram size ([`full_size_floor`]); an ACK of only
//! smaller packets carries no sample. The clock is told the datagram size with
//! [`RoundClock::set_max_datagram_size`]; until then every packet counts.
//!
//! QUIC numbers packets separately per packet-number space, so during the
//! handshake a round may last longer than one RTT: the clock uses the largest
//! number sent in any space. That only delays the first boundaries; it never
//! stalls the clock, because 1-RTT packet numbers soon exceed it.

use std::time::{Duration, Instant};

use crate::choice_param_type;
use crate::events::{AckEvent, AckedPacket};
use crate::params::ChoiceParam;

/// Smallest size of a packet whose RTT is a sample of the path, for a
/// maximum datagram size: half of it (see the module documentation).
pub fn full_size_floor(max_datagram_size: usize) -> usize {
    max_datagram_size / 2
}

/// The RTT sample an ACK carries: the smallest non-zero RTT among the packets
/// of at least `min_size` bytes it newly acknowledges (the largest
/// acknowledged packet's, unless packets were sent out of order). `None` if
/// there is none.
pub fn smallest_rtt_sample(acked: &[AckedPacket], min_size: usize) -> Option<Duration> {
    acked
        .iter()
        .filter(|p| p.size >= min_size)
        .map(|p| p.rtt)
        .filter(|rtt| !rtt.is_zero())
        .min()
}

/// Which of a round's RTT samples stands for the round (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundRtt {
    /// The smallest sample (Linux's `tcp_vegas.c`, Veno).
    Minimum,
    /// The mean of the samples (ns-2's Vegas: 000, 002, 003).
    Mean,
    /// The distinguished packet's own sample (004, section 3.5.2).
    Distinguished,
}

impl RoundRtt {
    /// The words of the `round_rtt` parameter, in [`RoundRtt::from_index`]
    /// order.
    pub const WORDS: &'static [&'static str] = &["minimum", "mean", "distinguished"];

    pub fn from_index(index: usize) -> Option<Self> {
        match index {
            0 => Some(RoundRtt::Minimum),
            1 => Some(RoundRtt::Mean),
            2 => Some(RoundRtt::Distinguished),
            _ => None,
        }
    }

    pub const fn index(self) -> usize {
        match self {
            RoundRtt::Minimum => 0,
            RoundRtt::Mean => 1,
            RoundRtt::Distinguished => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        Self::WORDS[self.index()]
    }
}

impl ChoiceParam for RoundRtt {
    const WORDS: &'static [&'static str] = RoundRtt::WORDS;

    fn from_index(index: usize) -> Option<Self> {
        RoundRtt::from_index(index)
    }
}

choice_param_type!(RoundRtt, RoundRtt::Minimum);

/// The round in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundStats {
    /// 0 for the first round, counting every round begun, including rounds
    /// abandoned by [`RoundClock::restart`].
    pub index: u64,
    pub start: Instant,
    /// The round ends when a packet numbered at least this is acknowledged.
    pub end_pkt_num: u64,
    /// Smallest RTT sample of the round.
    pub min_rtt: Option<Duration>,
    /// Sum of the round's RTT samples, for their mean.
    pub rtt_sum: Duration,
    pub rtt_samples: u64,
    pub bytes_acked: u64,
    /// Whether every ACK of the round so far was application-limited.
    pub app_limited: bool,
    /// Whether `end_pkt_num` is a full-size packet's.
    pub distinguished_chosen: bool,
}

impl RoundStats {
    fn begin(index: u64, start: Instant, end_pkt_num: u64) -> Self {
        RoundStats {
            distinguished_chosen: false,
            index,
            start,
            end_pkt_num,
            min_rtt: None,
            rtt_sum: Duration::ZERO,
            rtt_samples: 0,
            bytes_acked: 0,
            app_limited: true,
        }
    }

    #[inline]
    fn record(&mut self, ack: &AckEvent<'_>, min_size: usize) {
        if let Some(rtt) = ack.summary.min_rtt_from(ack.acked, min_size) {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_sum = self.rtt_sum.saturating_add(rtt);
            self.rtt_samples = self.rtt_samples.saturating_add(1);
        }
        let bytes = u64::try_from(ack.summary.acked_bytes).unwrap_or(u64::MAX);
        self.bytes_acked = self.bytes_acked.saturating_add(bytes);
        self.app_limited &= ack.app_limited;
    }
}

/// A round that has ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompletedRound {
    pub index: u64,
    pub start: Instant,
    /// When the ACK that ended the round arrived.
    pub end: Instant,
    pub min_rtt: Option<Duration>,
    /// Mean of the round's RTT samples.
    pub mean_rtt: Option<Duration>,
    /// The distinguished packet's RTT: the sample of the first full-size
    /// packet numbered at least the round's end in the ACK that ended it.
    pub distinguished_rtt: Option<Duration>,
    pub rtt_samples: u64,
    pub bytes_acked: u64,
    /// Every ACK of the round was application-limited.
    pub app_limited: bool,
}

impl CompletedRound {
    /// The round's RTT as `which` defines it.
    pub fn rtt(&self, which: RoundRtt) -> Option<Duration> {
        match which {
            RoundRtt::Minimum => self.min_rtt,
            RoundRtt::Mean => self.mean_rtt,
            RoundRtt::Distinguished => self.distinguished_rtt,
        }
    }

    pub fn duration(&self) -> Duration {
        self.end.saturating_duration_since(self.start)
    }

    /// Bytes acknowledged in the round per second of the round; `None` for a
    /// round of zero duration.
    pub fn throughput_bytes_per_sec(&self) -> Option<f64> {
        let secs = self.duration().as_secs_f64();
        (secs > 0.0).then(|| self.bytes_acked as f64 / secs)
    }
}

/// Splits time into rounds of one RTT; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct RoundClock {
    /// One past the largest packet number sent.
    next_pkt_num: Option<u64>,
    current: Option<RoundStats>,
    last_completed: Option<CompletedRound>,
    completed: u64,
    /// Packets smaller than this give no RTT sample.
    min_sample_size: usize,
}

impl RoundClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// A clock whose RTT samples come from packets of at least
    /// [`full_size_floor`] of `max_datagram_size`.
    pub fn for_datagram_size(max_datagram_size: usize) -> Self {
        let mut clock = Self::new();
        clock.set_max_datagram_size(max_datagram_size);
        clock
    }

    /// Only packets of at least [`full_size_floor`] of this size give RTT
    /// samples from now on.
    pub fn set_max_datagram_size(&mut self, max_datagram_size: usize) {
        self.min_sample_size = full_size_floor(max_datagram_size);
    }

    /// Packets smaller than this give no RTT sample.
    pub fn min_sample_size(&self) -> usize {
        self.min_sample_size
    }

    /// A packet was sent. The first one begins round 0 and is its
    /// distinguished packet.
    pub fn on_packet_sent(&mut self, pkt_num: u64, time_sent: Instant) {
        self.on_sized_packet_sent(pkt_num, time_sent, usize::MAX);
    }

    /// A packet of `size` bytes was sent. The round's distinguished packet is
    /// the first full-size one sent after the round began (a small packet's
    /// RTT is no sample, see the module documentation); until one is sent,
    /// the first packet of any size stands in, so that a sender of small
    /// packets only still has rounds.
    pub fn on_sized_packet_sent(&mut self, pkt_num: u64, time_sent: Instant, size: usize) {
        let next = pkt_num.saturating_add(1);
        self.next_pkt_num = Some(self.next_pkt_num.map_or(next, |n| n.max(next)));
        let full_size = size >= self.min_sample_size;
        match self.current.as_mut() {
            None => {
                let mut round = RoundStats::begin(0, time_sent, pkt_num);
                round.distinguished_chosen = full_size;
                self.current = Some(round);
            }
            Some(round) => {
                if !round.distinguished_chosen && full_size && pkt_num >= round.end_pkt_num {
                    round.end_pkt_num = pkt_num;
                    round.distinguished_chosen = true;
                }
            }
        }
    }

    /// Counts `ack` in the current round. If it ends the round, returns what
    /// the round measured and begins the next one at `ack.now`.
    // Inlined into the caller: most ACKs only add to the round, and a call
    // with this function's frame cost about as much as that (scripts/bench;
    // a plain hint was not taken inside the skeleton).
    #[inline(always)]
    pub fn on_ack(&mut self, ack: &AckEvent<'_>) -> Option<CompletedRound> {
        let largest_acked = ack.summary.largest_acked?;
        // An ACK before any send (only in odd tests) begins a round that this
        // very ACK ends.
        let round = self
            .current
            .get_or_insert_with(|| RoundStats::begin(0, ack.now, largest_acked));
        round.record(ack, self.min_sample_size);
        if largest_acked < round.end_pkt_num {
            return None;
        }
        Some(self.end_round(ack, largest_acked))
    }

    /// The rest of [`RoundClock::on_ack`] for the ACK that ends the round:
    /// once per round trip, so kept out of the ACK's path.
    #[inline(never)]
    fn end_round(&mut self, ack: &AckEvent<'_>, largest_acked: u64) -> CompletedRound {
        // `on_ack` began the round if there was none: this finds it.
        let round = self
            .current
            .get_or_insert_with(|| RoundStats::begin(0, ack.now, largest_acked));
        let distinguished_rtt = ack
            .acked
            .iter()
            .filter(|p| {
                p.pkt_num >= round.end_pkt_num && p.size >= self.min_sample_size && !p.rtt.is_zero()
            })
            .min_by_key(|p| p.pkt_num)
            .map(|p| p.rtt);
        let mean_rtt = u32::try_from(round.rtt_samples)
            .ok()
            .filter(|n| *n > 0)
            .map(|n| round.rtt_sum / n);
        let done = CompletedRound {
            index: round.index,
            start: round.start,
            end: ack.now,
            min_rtt: round.min_rtt,
            mean_rtt,
            distinguished_rtt,
            rtt_samples: round.rtt_samples,
            bytes_acked: round.bytes_acked,
            app_limited: round.app_limited,
        };
        let next_distinguished = self.next_pkt_num.unwrap_or(largest_acked.saturating_add(1));
        *round = RoundStats::begin(round.index.saturating_add(1), ack.now, next_distinguished);
        self.last_completed = Some(done);
        self.completed = self.completed.saturating_add(1);
        done
    }

    /// Abandons the round in progress and begins a new one at `now`, whose
    /// distinguished packet is the next one sent. For when what the current
    /// round measured is stale, e.g. after a window reduction (Linux's Vegas
    /// does the same when loss recovery ends).
    pub fn restart(&mut self, now: Instant) {
        let index = self.current.map_or(0, |r| r.index.saturating_add(1));
        let next = self.next_pkt_num.unwrap_or(0);
        self.current = Some(RoundStats::begin(index, now, next));
    }

    /// The round in progress; `None` before the first packet is sent.
    pub fn current(&self) -> Option<&RoundStats> {
        self.current.as_ref()
    }

    /// The most recently completed round.
    pub fn last_completed(&self) -> Option<&CompletedRound> {
        self.last_completed.as_ref()
    }

    /// How many rounds have completed (abandoned rounds not counted).
    pub fn rounds_completed(&self) -> u64 {
        self.completed
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::events::RttSnapshot;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// An ACK frame of `acked` arriving at `now`; also used by other shared
    /// pieces' tests.
    pub(crate) fn ack<'a>(
        now: Instant,
        acked: &'a [AckedPacket],
        app_limited: bool,
    ) -> AckEvent<'a> {
        AckEvent {
            now,
            acked,
            summary: crate::events::AckSummary::of(acked, 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(ms(100)),
            bytes_in_flight: 0,
            app_limited,
            backward_queueing: None,
        }
    }

    /// Packet `pkt_num` of 1000 bytes sent at `sent`, acknowledged at `now`.
    pub(crate) fn acked(pkt_num: u64, sent: Instant, now: Instant) -> AckedPacket {
        AckedPacket::new(pkt_num, 1000, sent, now)
    }

    #[test]
    fn round_zero_ends_at_the_first_ack() {
        let t0 = Instant::now();
        let mut clock = RoundClock::new();
        for n in 0..4 {
            clock.on_packet_sent(n, t0);
        }
        let t1 = t0 + ms(100);
        let done = clock
            .on_ack(&ack(t1, &[acked(0, t0, t1), acked(1, t0, t1)], false))
            .expect("the first ACK ends round 0");
        assert_eq!(done.index, 0);
        assert_eq!(done.duration(), ms(100));
        assert_eq!(done.min_rtt, Some(ms(100)));
        assert_eq!(done.rtt_samples, 1);
        assert_eq!(done.bytes_acked, 2000);
        assert_eq!(done.throughput_bytes_per_sec(), Some(20_000.0));
        let next = clock.current().unwrap();
        assert_eq!((next.index, next.start, next.end_pkt_num), (1, t1, 4));
    }

    #[test]
    fn round_ends_only_when_a_packet_sent_after_its_start_is_acked() {
        let t0 = Instant::now();
        let mut clock = RoundClock::new();
        for n in 0..4 {
            clock.on_packet_sent(n, t0);
        }
        let t1 = t0 + ms(100);
        clock.on_ack(&ack(t1, &[acked(0, t0, t1)], false)).unwrap();
        // Round 1 began at t1; packets 4 and 5 are sent in it.
        clock.on_packet_sent(4, t1);
        clock.on_packet_sent(5, t1);
        let t2 = t1 + ms(10);
        assert_eq!(clock.on_ack(&ack(t2, &[acked(1, t0, t2)], false)), None);
        assert_eq!(clock.on_ack(&ack(t2, &[acked(2, t0, t2)], true)), None);
        let t3 = t1 + ms(80);
        assert_eq!(clock.on_ack(&ack(t3, &[acked(3, t0, t3)], false)), None);
        let t4 = t1 + ms(90);
        let done = clock
            .on_ack(&ack(t4, &[acked(4, t1, t4)], false))
            .expect("packet 4 was the first sent in round 1");
        assert_eq!(done.index, 1);
        assert_eq!(done.rtt_samples, 4);
        assert_eq!(done.min_rtt, Some(ms(90)), "the distinguished packet's RTT");
        assert_eq!(done.bytes_acked, 4000);
        assert!(
            !done.app_limited,
            "one application-limited ACK of four does not make the round application-limited"
        );
        assert_eq!(done.duration(), ms(90));
        assert_eq!(clock.current().unwrap().end_pkt_num, 6);
        assert_eq!(clock.rounds_completed(), 2);
        assert_eq!(clock.last_completed(), Some(&done));
    }

    #[test]
    fn round_is_application_limited_only_when_every_ack_was() {
        let t0 = Instant::now();
        let mut clock = RoundClock::new();
        for n in 0..3 {
            clock.on_packet_sent(n, t0);
        }
        let t1 = t0 + ms(100);
        assert!(
            clock
                .on_ack(&ack(t1, &[acked(0, t0, t1)], true))
                .unwrap()
                .app_limited
        );
        // Round 1 ends with packet 3.
        clock.on_packet_sent(3, t1);
        assert_eq!(clock.on_ack(&ack(t1, &[acked(1, t0, t1)], true)), None);
        assert_eq!(clock.on_ack(&ack(t1, &[acked(2, t0, t1)], true)), None);
        let t2 = t1 + ms(100);
        let done = clock.on_ack(&ack(t2, &[acked(3, t1, t2)], true)).unwrap();
        assert!(done.app_limited);
    }

    #[test]
    fn round_rtt_is_minimum_mean_or_distinguished() {
        // Samples 130, 100, 160 ms; the ACK ending the round acknowledges the
        // distinguished packet 3 (RTT 160) and packet 4 (RTT 150): the ACK's
        // sample is its smallest, 150, the distinguished packet's own is 160.
        let t0 = Instant::now();
        let mut clock = RoundClock::new();
        let t1 = t0 + ms(100);
        for n in 0..3 {
            clock.on_packet_sent(n, if n == 0 { t0 } else { t1 + ms(n) });
        }
        clock.on_ack(&ack(t1, &[acked(0, t0, t1)], false)).unwrap();
        // Round 1's distinguished packet is 3, the first sent after it began.
        for n in 3..5 {
            clock.on_packet_sent(n, t1 + ms(n));
        }
        let sample = |n: u64, rtt: u64| acked(n, t1 + ms(n), t1 + ms(n + rtt));
        assert_eq!(
            clock.on_ack(&ack(t1 + ms(131), &[sample(1, 130)], false)),
            None
        );
        assert_eq!(
            clock.on_ack(&ack(t1 + ms(102), &[sample(2, 100)], false)),
            None
        );
        let end = t1 + ms(164);
        let done = clock
            .on_ack(&ack(end, &[sample(3, 160), sample(4, 150)], false))
            .unwrap();
        assert_eq!(done.rtt_samples, 3);
        assert_eq!(done.rtt(RoundRtt::Minimum), Some(ms(100)));
        // (130 + 100 + 150) / 3
        assert_eq!(
            done.rtt(RoundRtt::Mean),
            Some(Duration::from_nanos(126_666_666))
        );
        assert_eq!(done.rtt(RoundRtt::Distinguished), Some(ms(160)));
        for (i, word) in RoundRtt::WORDS.iter().enumerate() {
            assert_eq!(RoundRtt::from_index(i).map(RoundRtt::as_str), Some(*word));
        }
        assert_eq!(RoundRtt::from_index(3), None);
    }

    #[test]
    fn small_packets_give_no_rtt_sample() {
        // A 50-byte control packet crosses the bottleneck faster than a
        // full one: with a 1200-byte datagram size only packets of 600 bytes
        // or more are samples.
        assert_eq!(full_size_floor(1200), 600);
        let t0 = Instant::now();
        let small = AckedPacket::new(0, 50, t0, t0 + ms(93));
        let full = AckedPacket::new(1, 1200, t0, t0 + ms(100));
        let half = AckedPacket::new(2, 600, t0, t0 + ms(99));
        assert_eq!(smallest_rtt_sample(&[small, full], 600), Some(ms(100)));
        assert_eq!(smallest_rtt_sample(&[small, full, half], 600), Some(ms(99)));
        assert_eq!(smallest_rtt_sample(&[small], 600), None);
        assert_eq!(smallest_rtt_sample(&[small, full], 0), Some(ms(93)));

        let mut clock = RoundClock::for_datagram_size(1200);
        clock.on_packet_sent(0, t0);
        // Round 0 ends at its first ACK, which acknowledges only the small
        // packet: no sample.
        let done = clock.on_ack(&ack(t0 + ms(93), &[small], false)).unwrap();
        assert_eq!((done.min_rtt, done.rtt_samples), (None, 0));
        assert_eq!(done.distinguished_rtt, None);
    }

    #[test]
    fn the_distinguished_packet_is_the_first_full_size_one() {
        // Round 1 begins at t1; the next packet sent is a 500-byte one (an
        // application writing little at a time), then a full one: the round
        // ends with the full one, whose RTT is the distinguished sample.
        let t0 = Instant::now();
        let mut clock = RoundClock::for_datagram_size(1200);
        clock.on_sized_packet_sent(0, t0, 1200);
        let t1 = t0 + ms(100);
        clock
            .on_ack(&ack(t1, &[AckedPacket::new(0, 1200, t0, t1)], false))
            .unwrap();
        clock.on_sized_packet_sent(1, t1, 500);
        clock.on_sized_packet_sent(2, t1, 1200);
        clock.on_sized_packet_sent(3, t1, 1200);
        assert_eq!(clock.current().unwrap().end_pkt_num, 2);
        let small = AckedPacket::new(1, 500, t1, t1 + ms(95));
        assert_eq!(clock.on_ack(&ack(t1 + ms(95), &[small], false)), None);
        let full = AckedPacket::new(2, 1200, t1, t1 + ms(101));
        let done = clock.on_ack(&ack(t1 + ms(101), &[full], false)).unwrap();
        assert_eq!(done.distinguished_rtt, Some(ms(101)));

        // A sender of small packets only still has rounds.
        let mut small_only = RoundClock::for_datagram_size(1200);
        small_only.on_sized_packet_sent(0, t0, 100);
        small_only.on_sized_packet_sent(1, t0, 100);
        let tiny = AckedPacket::new(0, 100, t0, t1);
        let done = small_only.on_ack(&ack(t1, &[tiny], false)).unwrap();
        assert_eq!(
            (done.index, done.rtt_samples, done.distinguished_rtt),
            (0, 0, None)
        );
    }

    #[test]
    fn zero_rtt_is_not_a_sample_and_restart_abandons_the_round() {
        let t0 = Instant::now();
        let mut clock = RoundClock::new();
        clock.on_packet_sent(0, t0);
        clock.on_packet_sent(1, t0);
        let zero = AckedPacket::new(0, 1000, t0, t0);
        let done = clock.on_ack(&ack(t0, &[zero], false)).unwrap();
        assert_eq!((done.min_rtt, done.rtt_samples), (None, 0));
        assert_eq!(done.throughput_bytes_per_sec(), None);

        let t1 = t0 + ms(50);
        clock.on_packet_sent(2, t1);
        clock.restart(t1);
        let current = clock.current().unwrap();
        assert_eq!((current.index, current.end_pkt_num), (2, 3));
        assert_eq!(clock.on_ack(&ack(t1, &[acked(2, t1, t1)], false)), None);
        assert_eq!(clock.rounds_completed(), 1);
    }

    #[test]
    fn ack_without_sends_or_packets_does_not_panic() {
        let t0 = Instant::now();
        let mut clock = RoundClock::new();
        assert_eq!(clock.on_ack(&ack(t0, &[], false)), None);
        let done = clock.on_ack(&ack(t0, &[acked(u64::MAX, t0, t0)], false));
        assert!(done.is_some());
        clock.on_packet_sent(u64::MAX, t0);
        assert_eq!(clock.current().unwrap().end_pkt_num, u64::MAX);
    }
}

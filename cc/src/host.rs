//! What a QUIC stack holds for one path: the controller plus the pieces every
//! algorithm shares and none should re-implement — pacing, whether each packet
//! was sent application-limited (RFC 9002 section 7.8), the window saved for
//! spurious-loss rollback, persistent-congestion detection (section 7.6),
//! the bound on what one queueing-time report can claim
//! ([`crate::shared::peer_reports::queueing_bound`]), and the qlog diff of
//! the controller's internals.
//!
//! The quiche adapter (`quiche-seam/plugin.rs`) only translates quiche's types
//! into these calls, so everything here is tested without quiche.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::careful_resume::{CapacityObserver, CarefulResume, SavedPath, SetWindow};
use crate::controller::{CcState, CongestionController, InternalValue, Internals, Pacing};
use crate::events::{AckEvent, AckReceived, AckSummary, AckedPacket, CongestionEvent, PacketSent};

use crate::registry::{ControllerSpec, WindowConfig};
use crate::shared::peer_clock::{self, PeerClock};
use crate::shared::peer_reports::{self, JudgedCounts, PeerReportJudge, StampCursor};
use crate::shared::round_clock::full_size_floor;

/// RFC 9002 section 7.6.1: persistent congestion spans three PTOs.
const PERSISTENT_CONGESTION_THRESHOLD: u32 = 3;
/// RFC 9002 kGranularity.
const TIMER_GRANULARITY: Duration = Duration::from_millis(1);
/// Packets sent less than this apart belong to one burst: the stack sent
/// them in one go (one ACK's worth, or one pacer release).
const BURST_GAP: Duration = TIMER_GRANULARITY;
/// How far behind its trains' schedule a pacer may fall before the schedule
/// moves on (see [`Pacer::on_train_packet`]).
const TRAIN_CATCH_UP: Duration = Duration::from_millis(2);

/// Spaces packets so that at most `burst_packets` leave back to back and the
/// long-run rate is `rate_bytes_per_sec` (a generic cell-rate algorithm: each
/// packet advances a theoretical release time by its size over the rate).
/// With `train_packets` > 1, packets leave in trains of that many at the
/// theoretical time of the train's first packet.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    theoretical_release: Option<Instant>,
    last_release: Option<Instant>,
    /// Earliest time a further packet of the same size may leave.
    next_release: Option<Instant>,
    /// Packets of the current train already released.
    train_position: usize,
}

impl Pacer {
    /// Records a packet of `size` bytes that the stack wants to send at `now`
    /// and returns when it should actually leave.
    pub fn on_packet(&mut self, now: Instant, size: usize, pacing: Option<Pacing>) -> Instant {
        let Some(p) =
            pacing.filter(|p| p.rate_bytes_per_sec.is_finite() && p.rate_bytes_per_sec > 0.0)
        else {
            self.theoretical_release = None;
            self.last_release = Some(now);
            self.next_release = None;
            self.train_position = 0;
            return now;
        };
        let interval = Duration::from_secs_f64((size as f64 / p.rate_bytes_per_sec).min(10.0));
        if p.train_packets > 1 {
            return self.on_train_packet(now, interval, p.train_packets);
        }
        self.train_position = 0;
        let tolerance = interval * (p.burst_packets.max(1) as u32 - 1);
        let tat = self.theoretical_release.map_or(now, |t| t.max(now));
        // A packet may leave as early as `tolerance` ahead of its theoretical
        // time, which lets `burst_packets` go together after an idle period.
        let release = tat.checked_sub(tolerance).map_or(now, |t| t.max(now));
        let release = self.last_release.map_or(release, |l| release.max(l));
        let next_tat = tat + interval;
        self.theoretical_release = Some(next_tat);
        self.last_release = Some(release);
        self.next_release = Some(
            next_tat
                .checked_sub(tolerance)
                .map_or(release, |t| t.max(release)),
        );
        release
    }

    /// Trains: the first packet of a train leaves at its theoretical time,
    /// the others with it; every packet advances the theoretical time by its
    /// interval, so the next train waits for the whole train's slot. A stack
    /// that wakes up late (timers are not exact) may catch up on up to
    /// [`TRAIN_CATCH_UP`] of trains at once; without that, every late wake-up
    /// would lower the rate for good.
    fn on_train_packet(&mut self, now: Instant, interval: Duration, train: usize) -> Instant {
        let earliest = now.checked_sub(TRAIN_CATCH_UP).unwrap_or(now);
        let tat = self.theoretical_release.map_or(now, |t| t.max(earliest));
        let release = match self.last_release {
            // The rest of the train goes with its first packet.
            Some(last) if self.train_position > 0 => last.max(now),
            Some(last) => tat.max(last).max(now),
            None => tat.max(now),
        };
        let next_tat = tat + interval;
        self.train_position = (self.train_position + 1) % train;
        self.theoretical_release = Some(next_tat);
        self.last_release = Some(release);
        self.next_release = Some(if self.train_position > 0 {
            release
        } else {
            next_tat
        });
        release
    }

    /// When the next packet may leave, if pacing holds it back. A stack that
    /// builds packets only from this time on stamps them with the time they
    /// really leave, so holding them does not inflate RTT samples.
    pub fn next_release_time(&self) -> Option<Instant> {
        self.next_release
    }

    /// When the most recent packet should leave (never before `now`).
    pub fn release_time(&self, now: Instant) -> Instant {
        self.last_release.map_or(now, |t| t.max(now))
    }

    /// Whether a packet the stack hands over at `now` was held back by this
    /// pacer: the pacer had spaced the previous packet's successor out (its
    /// next release is later than the previous release), and the stack sent
    /// as soon as it was allowed, within `max(2 ms, one interval)` of that
    /// time (timers wake a little late). A packet sent long after its release
    /// time waited for the application, not for the pacer.
    pub fn held_back(&self, now: Instant) -> bool {
        let (Some(next), Some(last)) = (self.next_release, self.last_release) else {
            return false;
        };
        let Some(interval) = next.checked_duration_since(last).filter(|i| !i.is_zero()) else {
            return false;
        };
        now <= next + interval.max(TIMER_GRANULARITY * 2)
    }
}

/// Packets the stack sent in one go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Burst {
    start: Instant,
    last: Instant,
    /// `last` in nanoseconds since the host's send origin.
    last_nanos: i64,
    /// Some packet of the burst was cwnd- or pacing-limited.
    limited: bool,
}

/// What the host remembers of one in-flight packet until it is acknowledged
/// or declared lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SentRecord {
    pkt_num: u64,
    time_sent: Instant,
    /// `time_sent` in nanoseconds since the host's send origin: what the
    /// peer's clock is judged with ([`PeerClock::judge_sent_at`]).
    sent_nanos: i64,
    /// RFC 9002 section 7.8: sent while neither cwnd nor the pacer limited
    /// the sender.
    app_limited: bool,
    acked: bool,
}

/// The in-flight packets in packet-number order (one packet-number space:
/// when numbers start again, as they do when the handshake moves from one
/// space to the next, the record starts again too). Lookups are binary
/// searches; acknowledged packets leave from the front.
#[derive(Clone, Debug, Default)]
struct SentPackets {
    packets: VecDeque<SentRecord>,
}

impl SentPackets {
    fn on_sent(&mut self, record: SentRecord) {
        if self
            .packets
            .back()
            .is_some_and(|last| last.pkt_num >= record.pkt_num)
        {
            self.packets.clear();
        }
        self.packets.push_back(record);
    }

    /// [`SentPackets::acknowledge`] when the number is not at its guessed index
    /// (a number skipped, a record started again): out of the ACK's walk.
    #[cold]
    #[inline(never)]
    fn search(&self, pkt_num: u64) -> Option<usize> {
        self.packets
            .binary_search_by_key(&pkt_num, |r| r.pkt_num)
            .ok()
    }

    /// Marks `pkt_num` acknowledged; returns whether it was sent
    /// application-limited, `None` if the record does not hold it.
    #[inline]
    fn on_acked(&mut self, pkt_num: u64) -> Option<bool> {
        self.acknowledge(pkt_num).map(|r| r.app_limited)
    }

    /// Marks `pkt_num` acknowledged and returns its record, `None` if the
    /// record does not hold it.
    #[inline]
    fn acknowledge(&mut self, pkt_num: u64) -> Option<SentRecord> {
        // Usually every packet is in flight, so a packet's number minus the
        // first one's is its index: one look instead of a binary search on
        // every acknowledged packet (scripts/bench measures it per ACK).
        // The record there is looked at and marked through one reference:
        // each index into the ring buffer costs its wrap-around and bounds
        // check.
        let first = self.packets.front()?.pkt_num;
        if pkt_num == first {
            // The oldest packet in flight, the usual case: it leaves the
            // record at once instead of being marked and dropped after the
            // walk ([`SentPackets::drop_acked_front`] drops the rest).
            return self
                .packets
                .pop_front()
                .map(|r| SentRecord { acked: true, ..r });
        }
        let guess = usize::try_from(pkt_num.checked_sub(first)?).ok()?;
        let record = match self.packets.get_mut(guess) {
            Some(r) if r.pkt_num == pkt_num => r,
            _ => {
                let i = self.search(pkt_num)?;
                self.packets.get_mut(i)?
            }
        };
        record.acked = true;
        Some(*record)
    }

    /// The sender turned out to be limited (by cwnd or its pacer) in the
    /// burst that began at `burst_start`: none of the burst's packets was
    /// sent for want of data.
    fn mark_burst_limited(&mut self, burst_start: Instant) {
        for record in self.packets.iter_mut().rev() {
            if record.time_sent < burst_start {
                break;
            }
            record.app_limited = false;
        }
    }

    // Inlined: run on every ACK, usually popping one record, which costs
    // less than the call.
    #[inline]
    fn drop_acked_front(&mut self) {
        while self.packets.front().is_some_and(|r| r.acked) {
            self.packets.pop_front();
        }
    }

    /// The earliest unacknowledged packet sent after `after` and numbered
    /// below `largest_lost`.
    fn earliest_unacked_before(
        &self,
        largest_lost: u64,
        after: Option<Instant>,
    ) -> Option<Instant> {
        self.packets
            .iter()
            .take_while(|r| r.pkt_num < largest_lost)
            .find(|r| !r.acked && after.is_none_or(|a| r.time_sent > a))
            .map(|r| r.time_sent)
    }

    /// Forgets every packet numbered up to `largest_lost`: acknowledged, or
    /// lost with it (packets just below it that are not lost yet are
    /// forgotten too, which only makes them count as cwnd-limited if they are
    /// acknowledged later).
    fn forget_through(&mut self, largest_lost: u64) {
        while self
            .packets
            .front()
            .is_some_and(|r| r.pkt_num <= largest_lost)
        {
            self.packets.pop_front();
        }
    }
}

/// `time` in nanoseconds since `origin`, which becomes `time` if unset:
/// the send clock of the records, for a time the running count since the
/// previous packet does not give (the first packet, one sent before the one
/// before it, one the record does not hold).
#[cold]
fn nanos_since_origin(origin: &mut Option<Instant>, time: Instant) -> i64 {
    let origin = *origin.get_or_insert(time);
    peer_clock::signed_nanos_since(time, origin)
}

/// A field of the controller's internals that changed since the last qlog
/// event.
pub type ChangedInternal = (&'static str, InternalValue);

#[derive(Debug)]
pub struct ControllerHost {
    controller: Box<dyn CongestionController>,
    pacer: Pacer,
    max_datagram_size: usize,
    sent: SentPackets,
    /// The burst the last packet belonged to.
    burst: Option<Burst>,
    /// cwnd and ssthresh before the most recent loss reaction.
    checkpoint: Option<(usize, usize)>,
    /// The last ACK's smoothed RTT and its variation: the PTO of the
    /// persistent-congestion duration (all it reads of the RTT).
    pto_rtt: Option<(Duration, Duration)>,
    max_ack_delay: Duration,
    /// Send time of the most recently sent packet acknowledged so far.
    latest_acked_time_sent: Option<Instant>,
    /// Send time of the earliest packet declared lost since the last
    /// acknowledgement of a packet sent after it (RFC 9002 section 7.6.2's
    /// start of a run of losses).
    earliest_lost_time_sent: Option<Instant>,
    qlog_reported: Internals,
    /// The internals generation `qlog_reported` was filled at, when the
    /// controller (and Careful Resume) report one.
    reported_generation: Option<u64>,
    scratch: Internals,
    changed: Vec<ChangedInternal>,
    /// Careful Resume around the controller, when on.
    careful_resume: Option<CarefulResume>,
    /// What this connection measures of the path, for the next one (only
    /// with Careful Resume on).
    observer: Option<CapacityObserver>,
    initial_cwnd: usize,
    /// The ACK's packets with their reported queueing times bounded, reused
    /// for every ACK that carries any.
    bounded: Vec<AckedPacket>,
    forward_scratch: Vec<Option<Duration>>,
    /// Queueing times the bound cut (forward per packet, backward per ACK).
    clamped_queueing_reports: u64,
    /// Judges the peer's queueing-time reports of every ACK the stack hands
    /// over.
    judge: PeerReportJudge,
    /// Judges the peer's receive times (as `judge` would, with its own
    /// clock), fed with the send times in nanoseconds the host keeps
    /// anyway: see [`ControllerHost::on_ack_received`].
    clock: PeerClock,
    /// The instant the send times of the records are counted from: the
    /// first packet sent (or, before any, the first packet acknowledged).
    send_origin: Option<Instant>,
    /// The packets of the ACK being handled, reused for every ACK.
    acked: Vec<AckedPacket>,
    /// When the window last went down in reaction to a loss: losses of
    /// packets sent before then belong to that reaction's recovery period,
    /// and only a loss after it saves the window for a rollback (RFC 9002's
    /// recovery period, as quiche keeps it for its own algorithms).
    recovery_start: Option<Instant>,
}

impl ControllerHost {
    pub fn new(spec: &ControllerSpec, window: WindowConfig) -> Self {
        let mut host = Self::with_controller(spec.build(window), window.max_datagram_size);
        host.initial_cwnd = window.initial_cwnd();
        if let Some(config) = spec.careful_resume() {
            host.careful_resume = Some(CarefulResume::new(
                config,
                window.max_datagram_size,
                window.initial_cwnd(),
            ));
            host.observer = Some(CapacityObserver::default());
        }
        host
    }

    pub fn with_controller(
        controller: Box<dyn CongestionController>,
        max_datagram_size: usize,
    ) -> Self {
        ControllerHost {
            controller,
            pacer: Pacer::default(),
            max_datagram_size,
            sent: SentPackets::default(),
            burst: None,
            checkpoint: None,
            pto_rtt: None,
            max_ack_delay: Duration::ZERO,
            latest_acked_time_sent: None,
            earliest_lost_time_sent: None,
            qlog_reported: Internals::default(),
            reported_generation: None,
            scratch: Internals::default(),
            changed: Vec::new(),
            careful_resume: None,
            observer: None,
            initial_cwnd: max_datagram_size * 10,
            bounded: Vec::new(),
            forward_scratch: Vec::new(),
            clamped_queueing_reports: 0,
            judge: PeerReportJudge::default(),
            clock: PeerClock::default(),
            send_origin: None,
            acked: Vec::new(),
            recovery_start: None,
        }
    }

    /// What the judge of the peer's reports handed over and refused so far.
    pub fn judged_counts(&self) -> JudgedCounts {
        // Receive times are the host's own clock's (the judge's never sees
        // one); every verdict is believed or refused, counted once.
        let clock = self.clock.counts();
        JudgedCounts {
            receive_times: clock.believed,
            rejected_receive_times: clock.refused,
            ..self.judge.counts()
        }
    }

    /// An ACK frame arrived: `packets` are the packets it newly acknowledges,
    /// in ascending packet-number order, as the stack knows them (their
    /// `receive_time` and `forward_queueing` are ignored: they come from
    /// `ack.report`, judged here). Builds the ACK's one [`AckEvent`] and
    /// hands it on ([`ControllerHost::on_ack`]).
    // Inlined into the stack's one caller (the plug-in seam): the event's
    // fields then go from the stack's values to the walk without an
    // `AckReceived` written to memory and read back, and without a call.
    #[inline(always)]
    pub fn on_ack_received(
        &mut self,
        ack: &AckReceived<'_>,
        packets: impl IntoIterator<Item = AckedPacket>,
    ) {
        self.max_ack_delay = ack.max_ack_delay;
        let mut acked = std::mem::take(&mut self.acked);
        acked.clear();
        let report = &ack.report;
        let judge = &mut self.judge;
        judge.begin_ack();
        // Receive times are judged against the send times of the records,
        // kept in nanoseconds since the host's send origin (each is the
        // previous one plus the gap the burst bookkeeping measures when the
        // packet leaves): no subtraction of two instants per stamp here.
        let clock = &mut self.clock;
        clock.on_ack_frame();
        let send_origin = &mut self.send_origin;
        let sent = &mut self.sent;
        // One walk: the judging, the summary, whether the packets were sent
        // application-limited and whether any carries a queueing time.
        let mut summary = AckSummary::empty(full_size_floor(self.max_datagram_size));
        let mut app_limited = true;
        let mut forward_reported = false;
        // Both reports and the packets are in ascending packet-number order.
        // Most ACKs carry no queueing times: their packets skip that lookup.
        let forward_in_report = !report.forward_queueing.is_empty();
        let mut forward_reports = StampCursor::new(report.forward_queueing);
        let mut receive_times = StampCursor::new(report.receive_times);
        // The packets go into `acked` as the stack gave them, in one
        // extend (its length is known: no growth check per packet), and are
        // completed there: building each one aside and pushing it would
        // copy all of it once more, on every acknowledged packet.
        acked.extend(packets);
        for packet in acked.iter_mut() {
            packet.forward_queueing = if forward_in_report {
                forward_reports
                    .value(packet.pkt_num)
                    .and_then(|q| judge.forward_queueing(q, packet.rtt))
            } else {
                None
            };
            let record = sent.acknowledge(packet.pkt_num);
            // The send time on the records' clock, for the peer's clock
            // judged here and for the controllers' per-ACK arithmetic.
            packet.sent_nanos = match record {
                Some(record) if record.time_sent == packet.time_sent => record.sent_nanos,
                // Not in the record (forgotten as lost, or a send time
                // the stack changed): counted from the origin here.
                _ => nanos_since_origin(send_origin, packet.time_sent),
            };
            let mut receive_time = receive_times.value(packet.pkt_num);
            let mut clock_epoch = 0;
            if let Some(r) = receive_time {
                match clock.judge_sent_at(r, packet.sent_nanos, packet.rtt) {
                    Some(epoch) => clock_epoch = epoch,
                    None => receive_time = None,
                }
            }
            packet.receive_time = receive_time;
            packet.clock_epoch = clock_epoch;
            summary.add(packet);
            app_limited &= record.is_some_and(|r| r.app_limited);
            forward_reported |= packet.forward_queueing.is_some();
        }
        // The ACK's own queueing time is judged against its largest RTT
        // sample, looked for only when there is one to judge.
        let backward_queueing = report.backward_queueing.and_then(|q| {
            let largest_rtt = acked.iter().map(|p| p.rtt).max().unwrap_or(Duration::ZERO);
            judge.backward_queueing(Some(q), largest_rtt)
        });
        let event = AckEvent {
            now: ack.now,
            acked: &acked,
            summary,
            ack_delay: ack.ack_delay,
            rtt: ack.rtt,
            bytes_in_flight: ack.bytes_in_flight,
            app_limited: app_limited && !acked.is_empty(),
            backward_queueing,
        };
        self.deliver_ack(&event, forward_reported || backward_queueing.is_some());
        self.acked = acked;
    }

    /// How many reported queueing times the bound has cut so far.
    pub fn clamped_queueing_reports(&self) -> u64 {
        self.clamped_queueing_reports
    }

    /// Bounds the queueing times `ack` reports (AQT-echo per packet, AQT of
    /// the ACK) to what the sender measured as possible,
    /// [`peer_reports::queueing_bound`], each alone and each packet's
    /// forward plus the ACK's backward time, and leaves the packets in
    /// `self.bounded`. Returns the bounded backward time. Called only for an
    /// ACK that reports some queueing time (without any there is nothing to
    /// bound or copy).
    #[inline(never)]
    fn bound_queueing(&mut self, ack: &AckEvent<'_>) -> Option<Duration> {
        let limit = |p: &AckedPacket| peer_reports::packet_queueing_bound(&ack.rtt, p.rtt);
        // The ACK's own backward time: no more than its largest packet's.
        let ack_limit = ack
            .acked
            .iter()
            .map(limit)
            .max()
            .unwrap_or_else(|| peer_reports::queueing_bound(&ack.rtt));
        self.forward_scratch.clear();
        // Each value alone first, so that one wild value (a forged AQT, say)
        // cannot scale the others down to nothing; then each packet's
        // forward plus the ACK's backward time, all by one factor. Packets
        // without a forward time bound the backward time alone, and an ACK
        // with no packets still has its backward time cut.
        self.forward_scratch.extend(
            ack.acked
                .iter()
                .map(|p| p.forward_queueing.map(|q| q.min(limit(p)))),
        );
        let backward = ack.backward_queueing.map(|b| b.min(ack_limit));
        let backward = peer_reports::bound_jointly(&mut self.forward_scratch, backward, |i| {
            ack.acked.get(i).map(limit)
        });
        let mut clamped = u64::from(backward != ack.backward_queueing);
        self.bounded.clear();
        self.bounded
            .extend(ack.acked.iter().zip(&self.forward_scratch).map(|(p, qf)| {
                if *qf != p.forward_queueing {
                    clamped += 1;
                }
                AckedPacket {
                    forward_queueing: *qf,
                    ..*p
                }
            }));
        self.clamped_queueing_reports = self.clamped_queueing_reports.saturating_add(clamped);
        backward
    }

    /// Careful Resume's phase machine, when on.
    pub fn careful_resume(&self) -> Option<&CarefulResume> {
        self.careful_resume.as_ref()
    }

    /// What this connection measured of the path (Careful Resume's Observe
    /// phase), if worth saving.
    pub fn observed_path(&self) -> Option<SavedPath> {
        self.observer
            .as_ref()
            .and_then(|o| o.observation(self.initial_cwnd))
    }

    fn apply_window(&mut self, window: Option<SetWindow>) {
        if let Some(w) = window {
            let ssthresh = w.ssthresh.unwrap_or_else(|| self.controller.ssthresh());
            self.controller.set_window(w.cwnd, ssthresh);
        }
    }

    fn pacing(&self) -> Option<Pacing> {
        let controller = self.controller.pacing();
        match &self.careful_resume {
            Some(cr) => cr.pacing(controller),
            None => controller,
        }
    }

    pub fn controller(&self) -> &dyn CongestionController {
        self.controller.as_ref()
    }

    pub fn cwnd(&self) -> usize {
        let cwnd = self.controller.cwnd();
        self.careful_resume
            .as_ref()
            .map_or(cwnd, |cr| cr.cwnd(cwnd))
    }

    pub fn ssthresh(&self) -> usize {
        self.controller.ssthresh()
    }

    pub fn state(&self) -> CcState {
        self.controller.state()
    }

    pub fn set_max_ack_delay(&mut self, max_ack_delay: Duration) {
        self.max_ack_delay = max_ack_delay;
    }

    /// A packet left. Whether it was sent application-limited is decided
    /// here (RFC 9002 section 7.8: bytes in flight below cwnd and sending
    /// not pacing-limited). The stack sends in bursts — the packets one ACK
    /// lets out, or one pacer release — and a burst that ends because the
    /// window is full, or that the pacer held back, was not short of data:
    /// every packet of it counts as cwnd-limited. A burst that ends with room
    /// in the window and was not waiting for the pacer ended because the
    /// application had nothing more: its packets are application-limited.
    pub fn on_packet_sent(&mut self, sent: &PacketSent) {
        // After this packet the window has no room for another full one.
        let cwnd_limited = sent
            .bytes_in_flight
            .saturating_add(sent.size)
            .saturating_add(self.max_datagram_size)
            > self.cwnd();
        let pacing_limited = self.pacer.held_back(sent.time_sent);
        let limited = cwnd_limited || pacing_limited;
        // The gap since the previous packet decides the burst and advances
        // the send clock of the records (one subtraction of two instants per
        // packet sent, none per receive time judged).
        let since_last = self
            .burst
            .map(|b| (b, sent.time_sent.checked_duration_since(b.last)));
        let sent_nanos = match since_last {
            Some((b, Some(gap))) => {
                peer_clock::nanos(gap).map_or(i64::MAX, |gap| b.last_nanos.saturating_add(gap))
            }
            _ => nanos_since_origin(&mut self.send_origin, sent.time_sent),
        };
        let burst = match since_last {
            Some((b, gap)) if gap.unwrap_or_default() < BURST_GAP => Burst {
                last: sent.time_sent,
                last_nanos: sent_nanos,
                limited: b.limited || limited,
                ..b
            },
            _ => Burst {
                start: sent.time_sent,
                last: sent.time_sent,
                last_nanos: sent_nanos,
                limited,
            },
        };
        if limited
            && self
                .burst
                .is_some_and(|b| b.start == burst.start && !b.limited)
        {
            self.sent.mark_burst_limited(burst.start);
        }
        self.burst = Some(burst);
        self.sent.on_sent(SentRecord {
            pkt_num: sent.pkt_num,
            time_sent: sent.time_sent,
            sent_nanos,
            app_limited: !burst.limited,
            acked: false,
        });
        self.controller.on_packet_sent(sent);
        if let Some(cr) = self.careful_resume.as_mut() {
            let window = cr.on_packet_sent(
                sent.time_sent,
                sent.pkt_num,
                sent.bytes_in_flight.saturating_add(sent.size),
                self.controller.cwnd(),
                pacing_limited,
            );
            self.apply_window(window);
        }
        self.pacer
            .on_packet(sent.time_sent, sent.size, self.pacing());
    }

    /// When the packet just sent should leave the host.
    pub fn packet_send_time(&self, now: Instant) -> Instant {
        self.pacer.release_time(now)
    }

    /// When the stack should build its next packet; `None`: at once.
    pub fn next_release_time(&self) -> Option<Instant> {
        self.pacer.next_release_time()
    }

    pub fn pacing_rate(&self) -> Option<u64> {
        self.pacing().map(|p| p.rate_bytes_per_sec as u64)
    }

    /// An ACK frame arrived. The stack's `app_limited` is replaced by the
    /// host's own: the ACK is application-limited when every packet it newly
    /// acknowledges was sent application-limited (RFC 9002 section 7.8, per
    /// packet at send time; quiche's flag, taken at ACK time, calls a paced
    /// sender application-limited whenever the pacer keeps bytes in flight
    /// below cwnd). Packets the host has no record of count as
    /// cwnd-limited.
    pub fn on_ack(&mut self, ack: &AckEvent<'_>) {
        let mut app_limited = !ack.acked.is_empty();
        for packet in ack.acked {
            app_limited &= self.sent.on_acked(packet.pkt_num).unwrap_or(false);
        }
        let reported = ack.backward_queueing.is_some()
            || ack.acked.iter().any(|p| p.forward_queueing.is_some());
        self.deliver_ack(
            &AckEvent {
                app_limited,
                ..*ack
            },
            reported,
        );
    }

    /// The rest of [`ControllerHost::on_ack`], once the ACK's packets are
    /// marked acknowledged in the sent record and `ack.app_limited` is the
    /// host's; `queueing_reported`: some queueing time is in `ack`.
    #[inline]
    fn deliver_ack(&mut self, ack: &AckEvent<'_>, queueing_reported: bool) {
        self.pto_rtt = Some((ack.rtt.smoothed_rtt, ack.rtt.rttvar));
        if let Some(latest) = ack.summary.latest_time_sent {
            self.latest_acked_time_sent = Some(
                self.latest_acked_time_sent
                    .map_or(latest, |t| t.max(latest)),
            );
            if self
                .earliest_lost_time_sent
                .is_some_and(|lost| latest > lost)
            {
                self.earliest_lost_time_sent = None;
            }
        }
        self.sent.drop_acked_front();
        let app_limited = ack.app_limited;
        // No controller sees a queueing time beyond what the round trip
        // allows (a lying receiver, a forged AQT IP option).
        let bounded;
        let event = if queueing_reported {
            let backward = self.bound_queueing(ack);
            bounded = AckEvent {
                backward_queueing: backward,
                acked: &self.bounded,
                ..*ack
            };
            &bounded
        } else {
            ack
        };
        self.controller.on_ack(event);
        let acked_bytes = ack.summary.acked_bytes;
        if let Some(observer) = self.observer.as_mut() {
            observer.on_ack(ack.now, acked_bytes, app_limited, ack.rtt.min_rtt);
        }
        if let Some(cr) = self.careful_resume.as_mut() {
            cr.observe_ack(ack);
            let window = cr.on_ack_with_bytes(
                ack.now,
                ack.acked,
                acked_bytes,
                ack.rtt,
                ack.bytes_in_flight.saturating_sub(acked_bytes),
                self.controller.cwnd(),
            );
            self.apply_window(window);
        }
    }

    /// Saves the window before a loss reaction, so that a spurious loss can be
    /// undone.
    pub fn checkpoint(&mut self) {
        self.checkpoint = Some((self.controller.cwnd(), self.controller.ssthresh()));
    }

    /// The losses reported by the last congestion event were spurious.
    pub fn rollback(&mut self) -> bool {
        // A Safe Retreat is not undone.
        if self
            .careful_resume
            .as_ref()
            .is_some_and(|cr| cr.phase() == crate::careful_resume::Phase::SafeRetreat)
        {
            self.checkpoint = None;
            return false;
        }
        match self.checkpoint.take() {
            Some((cwnd, ssthresh)) if self.controller.cwnd() < cwnd => {
                self.controller.on_spurious_loss(cwnd, ssthresh)
            }
            _ => false,
        }
    }

    /// Loss detection declared packets lost. `persistent_congestion` of the
    /// event is filled in here. The window is saved for a rollback
    /// ([`ControllerHost::checkpoint`]) unless the largest lost packet was
    /// sent within the current recovery period, which a loss reaction that
    /// lowers the window begins.
    pub fn on_congestion_event(
        &mut self,
        now: Instant,
        lost_bytes: usize,
        largest_lost_pkt_num: u64,
        largest_lost_time_sent: Instant,
        bytes_in_flight: usize,
    ) {
        if self
            .recovery_start
            .is_none_or(|start| largest_lost_time_sent > start)
        {
            self.checkpoint();
        }
        let before = self.cwnd();
        self.react_to_loss(
            now,
            lost_bytes,
            largest_lost_pkt_num,
            largest_lost_time_sent,
            bytes_in_flight,
        );
        if self.cwnd() < before {
            self.recovery_start = Some(now);
        }
    }

    fn react_to_loss(
        &mut self,
        now: Instant,
        lost_bytes: usize,
        largest_lost_pkt_num: u64,
        largest_lost_time_sent: Instant,
        bytes_in_flight: usize,
    ) {
        let persistent_congestion =
            self.is_persistent_congestion(largest_lost_pkt_num, largest_lost_time_sent);
        self.sent.forget_through(largest_lost_pkt_num);
        if let Some(cr) = self.careful_resume.as_mut() {
            let (tell_controller, window) = cr.on_congestion_event(
                now,
                lost_bytes,
                largest_lost_time_sent,
                persistent_congestion,
                self.controller.cwnd(),
            );
            self.apply_window(window);
            if !tell_controller {
                return;
            }
        }
        self.controller.on_congestion_event(&CongestionEvent {
            now,
            lost_bytes,
            largest_lost_pkt_num,
            largest_lost_time_sent,
            persistent_congestion,
            bytes_in_flight,
        });
    }

    /// RFC 9002 section 7.6: two lost packets, sent after the first RTT
    /// sample (7.6.2), more than the persistent-congestion duration apart,
    /// with no packet sent between them acknowledged. The later one is the
    /// event's largest lost packet. The earlier one is the earliest packet
    /// lost since the last acknowledgement (from an earlier congestion
    /// event), or else the earliest unacknowledged packet sent after the
    /// latest acknowledged one: it precedes a lost packet by more than the
    /// duration, far beyond the time threshold, so loss detection has
    /// declared it lost in this same event.
    fn is_persistent_congestion(
        &mut self,
        largest_lost: u64,
        largest_lost_time_sent: Instant,
    ) -> bool {
        let Some((smoothed_rtt, rttvar)) = self.pto_rtt else {
            return false;
        };
        let in_this_event = self
            .sent
            .earliest_unacked_before(largest_lost, self.latest_acked_time_sent);
        let earliest = match (self.earliest_lost_time_sent, in_this_event) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // The run of losses goes on until an acknowledgement interrupts it.
        self.earliest_lost_time_sent =
            Some(earliest.map_or(largest_lost_time_sent, |e| e.min(largest_lost_time_sent)));
        let Some(earliest) = earliest.filter(|e| *e < largest_lost_time_sent) else {
            return false;
        };
        // Both packets were sent after the latest acknowledged one, hence
        // after the first RTT sample (7.6.2); without any, nothing counts.
        if self.latest_acked_time_sent.is_none() {
            return false;
        }
        let pto = smoothed_rtt + (rttvar * 4).max(TIMER_GRANULARITY) + self.max_ack_delay;
        let duration = pto * PERSISTENT_CONGESTION_THRESHOLD;
        largest_lost_time_sent.saturating_duration_since(earliest) > duration
    }

    /// The controller's internals generation, combined with Careful
    /// Resume's; `None` when either does not report one.
    fn internals_generation(&self) -> Option<u64> {
        let controller = self.controller.internals_generation()?;
        match &self.careful_resume {
            None => Some(controller),
            // Both only grow, so their sum moves when either does.
            Some(cr) => Some(controller.wrapping_add(cr.internals_generation()?)),
        }
    }

    pub fn on_max_datagram_size(&mut self, max_datagram_size: usize) {
        self.max_datagram_size = max_datagram_size;
        self.controller.on_max_datagram_size(max_datagram_size);
    }

    /// The internals that changed since the last call, for a qlog
    /// `recovery_metrics_updated` event; empty when nothing changed. Called
    /// on every ACK when qlog is on, so it reuses its buffers instead of
    /// allocating.
    pub fn changed_internals(&mut self) -> &[ChangedInternal] {
        // Most ACKs change no field: a generation that did not move since
        // the last fill settles them without filling or diffing.
        let generation = self.internals_generation();
        if generation.is_some() && generation == self.reported_generation {
            self.changed.clear();
            return &self.changed;
        }
        self.reported_generation = generation;
        self.scratch.clear();
        self.controller.internals(&mut self.scratch);
        if let Some(cr) = &self.careful_resume {
            cr.internals(&mut self.scratch);
        }
        self.changed.clear();
        // Controllers report their fields in a fixed order, so the previous
        // report is compared position by position, by name when the layout
        // changed.
        let previous = self.qlog_reported.fields();
        // Most calls (after every packet sent, too) change nothing: one pass
        // that stops at the first difference settles them (a single pass
        // doing the full work below for every field measured slower).
        let current = self.scratch.fields();
        if current.len() == previous.len()
            && current
                .iter()
                .zip(previous)
                .all(|(c, p)| std::ptr::eq(c.0, p.0) && c.1.same_as(p.1))
        {
            return &self.changed;
        }
        for (i, &(name, value)) in self.scratch.fields().iter().enumerate() {
            let before = match previous.get(i) {
                // Names are literals: the same pointer, unless the layout
                // changed, saves comparing the bytes on every call.
                Some(&(n, v)) if std::ptr::eq(n, name) || n == name => Some(v),
                _ => self.qlog_reported.get(name),
            };
            if !before.is_some_and(|b| b.same_as(value)) {
                self.changed.push((name, value));
            }
        }
        if !self.changed.is_empty() {
            std::mem::swap(&mut self.qlog_reported, &mut self.scratch);
        }
        &self.changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn pacer_allows_burst_then_spaces_at_rate() {
        let t0 = Instant::now();
        let mut p = Pacer::default();
        // 1200 bytes at 120_000 B/s: one packet every 10 ms, bursts of two.
        let pacing = Some(Pacing::spaced(120_000.0, 2));
        let releases: Vec<Duration> = (0..5).map(|_| p.on_packet(t0, 1200, pacing) - t0).collect();
        assert_eq!(releases, vec![ms(0), ms(0), ms(10), ms(20), ms(30)]);
        // The sixth may leave 10 ms after the fifth.
        assert_eq!(p.next_release_time(), Some(t0 + ms(40)));
        // After an idle gap, a burst of two is allowed again.
        let later = t0 + ms(500);
        assert_eq!(p.on_packet(later, 1200, pacing), later);
        assert_eq!(p.on_packet(later, 1200, pacing), later);
        assert_eq!(p.on_packet(later, 1200, pacing), later + ms(10));
    }

    #[test]
    fn pacer_sends_trains_at_the_rate() {
        let t0 = Instant::now();
        let mut p = Pacer::default();
        // 1200 bytes at 120_000 B/s, pairs: two packets every 20 ms.
        let pairs = Some(Pacing::trains(120_000.0, 2));
        let releases: Vec<Duration> = (0..6).map(|_| p.on_packet(t0, 1200, pairs) - t0).collect();
        assert_eq!(releases, vec![ms(0), ms(0), ms(20), ms(20), ms(40), ms(40)]);
        assert_eq!(p.next_release_time(), Some(t0 + ms(60)));
        // Mid-train, the second packet may leave with the first.
        assert_eq!(p.on_packet(t0, 1200, pairs), t0 + ms(60));
        assert_eq!(p.next_release_time(), Some(t0 + ms(60)));
        // A train's second packet the stack hands over late leaves at once;
        // the schedule moves on from 2 ms before it (the catch-up allowance),
        // so the next train leaves one interval after that, still a pair.
        let later = t0 + ms(500);
        assert_eq!(p.on_packet(later, 1200, pairs), later);
        assert_eq!(p.on_packet(later, 1200, pairs), later + ms(8));
        assert_eq!(p.on_packet(later, 1200, pairs), later + ms(8));
        // After idle the first packet of a train leaves at once.
        let idle = later + ms(1000);
        assert_eq!(p.on_packet(idle, 1200, pairs), idle);
        assert_eq!(p.on_packet(idle, 1200, pairs), idle);
        assert_eq!(p.on_packet(idle, 1200, pairs), idle + ms(18));
    }

    #[test]
    fn a_late_wake_up_is_caught_up() {
        let t0 = Instant::now();
        let mut p = Pacer::default();
        let us = Duration::from_micros;
        // 1200 bytes at 2.4 MB/s: a pair every 1 ms.
        let pairs = Some(Pacing::trains(2_400_000.0, 2));
        assert_eq!(p.on_packet(t0, 1200, pairs), t0);
        assert_eq!(p.on_packet(t0, 1200, pairs), t0);
        // The stack wakes 1.5 ms late for the train due at 1 ms: it leaves
        // now, and so does the one due at 2 ms; the one due at 3 ms waits.
        let late = t0 + us(2500);
        for _ in 0..4 {
            assert_eq!(p.on_packet(late, 1200, pairs), late);
        }
        assert_eq!(p.next_release_time(), Some(t0 + us(3000)));
        // Three trains in 3 ms: the rate was kept.
    }

    #[test]
    fn pacer_without_pacing_releases_now() {
        let t0 = Instant::now();
        let mut p = Pacer::default();
        assert_eq!(p.on_packet(t0, 1200, None), t0);
        assert_eq!(p.next_release_time(), None);
        let bad = Some(Pacing::spaced(f64::NAN, 2));
        assert_eq!(p.on_packet(t0, 1200, bad), t0);
        assert_eq!(p.release_time(t0 + ms(1)), t0 + ms(1));
    }
}

#[cfg(test)]
mod probe {
    //! One controller for the host's tests: it records what the host tells
    //! it and reports the fields a test gives it.

    use std::sync::{Arc, Mutex};

    use super::*;

    /// Per ACK: the forward times of its packets and its backward time.
    pub type Seen = Arc<Mutex<Vec<(Vec<Option<Duration>>, Option<Duration>)>>>;
    pub type Fields = Arc<Mutex<Vec<(&'static str, InternalValue)>>>;

    #[derive(Debug)]
    pub struct Probe {
        pub cwnd: usize,
        pub state: CcState,
        /// `persistent_congestion` of every congestion event.
        pub losses: Arc<Mutex<Vec<bool>>>,
        /// The queueing times of every ACK.
        pub seen: Seen,
        /// Reported as internals.
        pub fields: Fields,
        /// Reported as the internals generation.
        pub generation: Arc<Mutex<Option<u64>>>,
    }

    impl Probe {
        pub fn new(cwnd: usize, state: CcState) -> Self {
            Probe {
                cwnd,
                state,
                losses: Arc::default(),
                seen: Arc::default(),
                fields: Arc::default(),
                generation: Arc::default(),
            }
        }
    }

    impl CongestionController for Probe {
        fn name(&self) -> &'static str {
            "probe"
        }
        fn on_packet_sent(&mut self, _: &PacketSent) {}
        fn on_ack(&mut self, ack: &AckEvent<'_>) {
            if let Ok(mut seen) = self.seen.lock() {
                let forward = ack.acked.iter().map(|p| p.forward_queueing).collect();
                seen.push((forward, ack.backward_queueing));
            }
        }
        fn on_congestion_event(&mut self, loss: &CongestionEvent) {
            if let Ok(mut l) = self.losses.lock() {
                l.push(loss.persistent_congestion);
            }
        }
        fn on_spurious_loss(&mut self, _: usize, _: usize) -> bool {
            false
        }
        fn set_window(&mut self, _: usize, _: usize) {}
        fn cwnd(&self) -> usize {
            self.cwnd
        }
        fn ssthresh(&self) -> usize {
            usize::MAX
        }
        fn state(&self) -> CcState {
            self.state
        }
        fn internals(&self, out: &mut Internals) {
            let Ok(fields) = self.fields.lock() else {
                return;
            };
            for &(name, value) in fields.iter() {
                match value {
                    InternalValue::Float(v) => out.float(name, v),
                    InternalValue::Int(v) => out.int(name, v),
                    InternalValue::Text(v) => out.text(name, v),
                }
            }
        }
        fn internals_generation(&self) -> Option<u64> {
            self.generation.lock().ok().and_then(|g| *g)
        }
        fn on_max_datagram_size(&mut self, _: usize) {}
    }
}

#[cfg(test)]
mod persistent_congestion_tests {
    //! RFC 9002 section 7.6 through the host, with a controller that only
    //! records what it is told.

    use std::sync::{Arc, Mutex};

    use super::probe::*;
    use super::*;
    use crate::events::RttSnapshot;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// A host whose path has an RTT of 100 ms (rttvar 50 ms): PTO = 100 +
    /// 4 x 50 = 300 ms, persistent-congestion duration 900 ms. Packet 0 is
    /// sent at t0 and acknowledged at t0 + 100 ms.
    fn host(t0: Instant) -> (ControllerHost, Arc<Mutex<Vec<bool>>>) {
        let recorder = Probe::new(1_000_000, CcState::CongestionAvoidance);
        let losses = recorder.losses.clone();
        let mut host = ControllerHost::with_controller(Box::new(recorder), 1200);
        send(&mut host, 0, t0);
        ack(&mut host, 0, t0, t0 + ms(100));
        (host, losses)
    }

    fn send(host: &mut ControllerHost, pkt_num: u64, at: Instant) {
        host.on_packet_sent(&PacketSent {
            pkt_num,
            size: 1200,
            time_sent: at,
            bytes_in_flight: 0,
        });
    }

    /// Packet `pkt_num` (1200 bytes, sent at `sent`) acknowledged at `at`,
    /// with an RTT of 100 ms.
    fn ack(host: &mut ControllerHost, pkt_num: u64, sent: Instant, at: Instant) {
        let acked = [crate::events::AckedPacket::new(pkt_num, 1200, sent, at)];
        host.on_ack(&AckEvent {
            now: at,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(ms(100)),
            bytes_in_flight: 1200,
            app_limited: false,
            backward_queueing: None,
        });
    }

    fn last(losses: &Arc<Mutex<Vec<bool>>>) -> Option<bool> {
        losses.lock().ok().and_then(|l| l.last().copied())
    }

    #[test]
    fn one_loss_after_idle_is_not_persistent_congestion() {
        // Request/response: idle for 5 s, one packet, lost.
        let t0 = Instant::now();
        let (mut host, losses) = host(t0);
        let t1 = t0 + ms(5_000);
        send(&mut host, 1, t1);
        host.on_congestion_event(t1 + ms(400), 1200, 1, t1, 1200);
        assert_eq!(last(&losses), Some(false));
    }

    #[test]
    fn two_losses_spanning_the_duration_are_persistent_congestion() {
        let t0 = Instant::now();
        let (mut host, losses) = host(t0);
        let t1 = t0 + ms(5_000);
        send(&mut host, 1, t1);
        // The probes of the PTOs: 300, 900 and 2100 ms later.
        send(&mut host, 2, t1 + ms(300));
        send(&mut host, 3, t1 + ms(900));
        send(&mut host, 4, t1 + ms(2_100));
        // Packets 1-3 lost in one event: 1 and 3 span 900 ms, not more.
        host.on_congestion_event(t1 + ms(2_200), 3600, 3, t1 + ms(900), 1200);
        assert_eq!(last(&losses), Some(false), "900 ms is not more than 900 ms");
        // Packet 4 lost later: the run of losses 1..4 spans 2100 ms.
        host.on_congestion_event(t1 + ms(3_000), 1200, 4, t1 + ms(2_100), 0);
        assert_eq!(last(&losses), Some(true));
    }

    #[test]
    fn an_acknowledgement_between_the_losses_breaks_the_run() {
        let t0 = Instant::now();
        let (mut host, losses) = host(t0);
        let t1 = t0 + ms(1_000);
        send(&mut host, 1, t1);
        host.on_congestion_event(t1 + ms(500), 1200, 1, t1, 0);
        assert_eq!(last(&losses), Some(false));
        send(&mut host, 2, t1 + ms(600));
        ack(&mut host, 2, t1 + ms(600), t1 + ms(700));
        send(&mut host, 3, t1 + ms(2_000));
        // 1 and 3 are 2 s apart, but 2, sent between them, was acknowledged.
        host.on_congestion_event(t1 + ms(2_500), 1200, 3, t1 + ms(2_000), 0);
        assert_eq!(last(&losses), Some(false));
    }

    #[test]
    fn packets_sent_in_one_burst_share_the_window_limit() {
        // Two packets let out by one ACK, the second filling the window: the
        // first was not sent for want of data either.
        let t0 = Instant::now();
        let recorder = Probe::new(1_000_000, CcState::CongestionAvoidance);
        let mut host = ControllerHost::with_controller(Box::new(recorder), 1200);
        // The probe's cwnd is 1 000 000 bytes.
        for (n, in_flight) in [(0u64, 997_600usize), (1, 998_800)] {
            host.on_packet_sent(&PacketSent {
                pkt_num: n,
                size: 1200,
                time_sent: t0,
                bytes_in_flight: in_flight,
            });
        }
        // A lone packet long after, with the window nearly empty.
        host.on_packet_sent(&PacketSent {
            pkt_num: 2,
            size: 1200,
            time_sent: t0 + ms(50),
            bytes_in_flight: 0,
        });
        let flags: Vec<bool> = host.sent.packets.iter().map(|r| r.app_limited).collect();
        assert_eq!(flags, vec![false, false, true]);
    }

    #[test]
    fn sent_packets_are_found_with_and_without_gaps_in_the_numbers() {
        let t0 = Instant::now();
        let mut sent = SentPackets::default();
        // 10..=12 contiguous (found by offset), then a gap: 15 and 20 sit
        // before the index their offset names (found by the binary search).
        for pkt_num in [10, 11, 12, 15, 20] {
            sent.on_sent(SentRecord {
                pkt_num,
                time_sent: t0,
                sent_nanos: 0,
                app_limited: false,
                acked: false,
            });
        }
        let numbers: Vec<u64> = sent.packets.iter().map(|r| r.pkt_num).collect();
        let out_of_order = sent.clone();
        for pkt_num in 0..25 {
            let expected = numbers.iter().position(|&n| n == pkt_num);
            let found = sent.acknowledge(pkt_num);
            assert_eq!(found.map(|r| r.pkt_num), expected.map(|_| pkt_num));
            assert!(found.is_none_or(|r| r.acked));
            // In order, each one is the oldest in flight: it leaves at once,
            // and nothing else is touched.
            let left: Vec<(u64, bool)> =
                sent.packets.iter().map(|r| (r.pkt_num, r.acked)).collect();
            let reference: Vec<(u64, bool)> = numbers
                .iter()
                .filter(|&&n| n > pkt_num)
                .map(|&n| (n, false))
                .collect();
            assert_eq!(left, reference, "packet {pkt_num}");
        }
        // Out of order, a packet behind the oldest is marked in the record
        // (by offset, or by the binary search after a gap) and leaves with
        // the acknowledged ones before it.
        let mut sent = out_of_order;
        let marks = |sent: &SentPackets| -> Vec<(u64, bool)> {
            sent.packets.iter().map(|r| (r.pkt_num, r.acked)).collect()
        };
        for pkt_num in [12, 20, 11] {
            assert_eq!(sent.acknowledge(pkt_num).map(|r| r.pkt_num), Some(pkt_num));
        }
        assert_eq!(
            marks(&sent),
            vec![(10, false), (11, true), (12, true), (15, false), (20, true)]
        );
        assert_eq!(
            sent.acknowledge(10).map(|r| (r.pkt_num, r.acked)),
            Some((10, true))
        );
        sent.drop_acked_front();
        assert_eq!(marks(&sent), vec![(15, false), (20, true)]);
        assert_eq!(SentPackets::default().acknowledge(3), None);
    }
}

#[cfg(test)]
mod qlog_diff_tests {

    use super::probe::*;
    use super::*;

    fn host() -> (ControllerHost, Fields) {
        let reporter = Probe::new(12_000, CcState::SlowStart);
        let fields = reporter.fields.clone();
        (
            ControllerHost::with_controller(Box::new(reporter), 1200),
            fields,
        )
    }

    fn set(fields: &Fields, values: &[(&'static str, InternalValue)]) {
        *fields.lock().unwrap() = values.to_vec();
    }

    #[test]
    fn only_changed_fields_are_reported_and_nothing_when_nothing_changed() {
        let (mut host, fields) = host();
        let (a, b) = (InternalValue::Float(1.5), InternalValue::Text("slow"));
        set(&fields, &[("alpha", a), ("phase", b)]);
        assert_eq!(host.changed_internals(), &[("alpha", a), ("phase", b)]);
        assert!(host.changed_internals().is_empty());
        let a2 = InternalValue::Float(2.0);
        set(&fields, &[("alpha", a2), ("phase", b)]);
        assert_eq!(host.changed_internals(), &[("alpha", a2)]);
        assert!(host.changed_internals().is_empty());
    }

    #[test]
    fn an_unmoved_generation_skips_the_fill_and_a_moved_one_fills() {
        let reporter = Probe::new(12_000, CcState::SlowStart);
        let (fields, generation) = (reporter.fields.clone(), reporter.generation.clone());
        let mut host = ControllerHost::with_controller(Box::new(reporter), 1200);
        let (a, a2) = (InternalValue::Float(1.5), InternalValue::Float(2.0));
        *generation.lock().unwrap() = Some(1);
        set(&fields, &[("alpha", a)]);
        assert_eq!(host.changed_internals(), &[("alpha", a)]);
        // The generation vouches for the internals: not even read (a fill
        // would find the change).
        set(&fields, &[("alpha", a2)]);
        assert!(host.changed_internals().is_empty());
        *generation.lock().unwrap() = Some(2);
        assert_eq!(host.changed_internals(), &[("alpha", a2)]);
        assert!(host.changed_internals().is_empty());
        // Without a generation, every call fills.
        *generation.lock().unwrap() = None;
        set(&fields, &[("alpha", a)]);
        assert_eq!(host.changed_internals(), &[("alpha", a)]);
    }

    #[test]
    fn a_changed_layout_is_compared_by_name() {
        let (mut host, fields) = host();
        let (a, n) = (InternalValue::Float(1.5), InternalValue::Int(7));
        set(&fields, &[("alpha", a), ("rounds", n)]);
        host.changed_internals();
        // A new field in front moves the others: they are found by name and
        // unchanged, so only the new one is reported.
        let d = InternalValue::Float(0.25);
        set(&fields, &[("diff", d), ("alpha", a), ("rounds", n)]);
        assert_eq!(host.changed_internals(), &[("diff", d)]);
        // A field that disappears is not reported; the rest did not change.
        set(&fields, &[("alpha", a), ("rounds", n)]);
        assert!(host.changed_internals().is_empty());
    }

    #[test]
    fn names_are_compared_by_content_when_pointers_differ() {
        let (mut host, fields) = host();
        let a = InternalValue::Int(3);
        set(&fields, &[("alpha", a)]);
        host.changed_internals();
        // The same name from another allocation: not a change.
        let elsewhere: &'static str = Box::leak(String::from("alpha").into_boxed_str());
        set(&fields, &[(elsewhere, a)]);
        assert!(host.changed_internals().is_empty());
        set(&fields, &[(elsewhere, InternalValue::Int(4))]);
        assert_eq!(
            host.changed_internals(),
            &[("alpha", InternalValue::Int(4))]
        );
    }
}

#[cfg(test)]
mod queueing_bound_tests {
    //! What one queueing-time report can reach a controller with: at most the
    //! sender's own `smoothed_rtt − min_rtt + rttvar`, both directions
    //! together.

    use super::probe::*;
    use super::*;
    use crate::events::RttSnapshot;
    use crate::registry::ControllerSpec;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// A 600 ms GEO path whose round trips currently run 30 ms above the
    /// minimum with 20 ms of variation: the bound is 30 + 20 = 50 ms.
    fn geo_rtt() -> RttSnapshot {
        RttSnapshot {
            min_rtt: ms(600),
            smoothed_rtt: ms(630),
            latest_rtt: ms(640),
            rttvar: ms(20),
        }
    }

    /// The queueing times the controller is given for one ACK of packets
    /// whose AQT-echo values are `forward`, with AQT `backward`; each packet
    /// took the smoothed RTT.
    fn deliver(
        forward: &[Option<Duration>],
        backward: Option<Duration>,
        rtt: RttSnapshot,
    ) -> (Vec<Option<Duration>>, Option<Duration>, u64) {
        deliver_after(forward, backward, rtt, rtt.smoothed_rtt)
    }

    /// [`deliver`] for packets that each took `packet_rtt`.
    fn deliver_after(
        forward: &[Option<Duration>],
        backward: Option<Duration>,
        rtt: RttSnapshot,
        packet_rtt: Duration,
    ) -> (Vec<Option<Duration>>, Option<Duration>, u64) {
        let recorder = Probe::new(1_000_000, CcState::CongestionAvoidance);
        let seen = recorder.seen.clone();
        let mut host = ControllerHost::with_controller(Box::new(recorder), 1200);
        let t0 = Instant::now();
        let now = t0 + packet_rtt;
        let acked: Vec<AckedPacket> = forward
            .iter()
            .enumerate()
            .map(|(n, qf)| AckedPacket {
                forward_queueing: *qf,
                ..AckedPacket::new(n as u64, 1200, t0, now)
            })
            .collect();
        host.on_ack(&AckEvent {
            now,
            acked: &acked,
            summary: AckSummary::of(&acked, 0),
            ack_delay: Duration::ZERO,
            rtt,
            bytes_in_flight: 1200 * acked.len(),
            app_limited: false,
            backward_queueing: backward,
        });
        let clamped = host.clamped_queueing_reports();
        let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
        let (f, b) = seen.into_iter().next().unwrap_or_default();
        (f, b, clamped)
    }

    #[test]
    fn honest_reports_pass_unchanged() {
        let forward = [Some(ms(30)), None, Some(ms(10))];
        let (f, b, clamped) = deliver(&forward, Some(ms(15)), geo_rtt());
        // 30 + 15 <= 50 for every packet.
        assert_eq!(f, forward.to_vec());
        assert_eq!(b, Some(ms(15)));
        assert_eq!(clamped, 0);
        // Nothing reported: nothing invented.
        let (f, b, _) = deliver(&[None, None], None, geo_rtt());
        assert_eq!((f, b), (vec![None, None], None));
    }

    #[test]
    fn an_honest_peak_that_lengthened_the_packets_round_trip_passes() {
        // The smoothed RTT lags: 630 ms, but these packets took 800 ms, so
        // up to 800 - 600 + 20 = 220 ms of queueing is possible for them.
        let forward = [Some(ms(150)), Some(ms(140))];
        let (f, b, clamped) = deliver_after(&forward, Some(ms(60)), geo_rtt(), ms(800));
        assert_eq!((f, b, clamped), (forward.to_vec(), Some(ms(60)), 0));
        // Beyond what their round trip allows, they are scaled to it:
        // 150 + 100 = 250 against 220.
        let (f, b, _) = deliver_after(&forward, Some(ms(100)), geo_rtt(), ms(800));
        let total = f[0].unwrap_or_default() + b.unwrap_or_default();
        assert!(total <= ms(220) && total >= ms(219), "{total:?}");
    }

    #[test]
    fn ten_seconds_of_queueing_on_a_600_ms_path_is_clamped() {
        let bound = geo_rtt().smoothed_rtt - geo_rtt().min_rtt + geo_rtt().rttvar;
        let (f, b, clamped) = deliver(&[Some(ms(10_000))], None, geo_rtt());
        assert_eq!(f, vec![Some(bound)]);
        assert_eq!(b, None);
        assert_eq!(clamped, 1);
        let (f, b, _) = deliver(&[None], Some(ms(10_000)), geo_rtt());
        assert_eq!((f, b), (vec![None], Some(bound)));
        // An ACK without packets still has its backward time bounded.
        let (_, b, _) = deliver(&[], Some(ms(10_000)), geo_rtt());
        assert_eq!(b, Some(bound));
    }

    #[test]
    fn forward_plus_backward_beyond_the_round_trip_is_scaled_to_the_bound() {
        // 500 + 400 ms: each below the 600 ms RTT (so the wire side let them
        // through), together more than the whole round trip.
        let bound = ms(50);
        let (f, b, clamped) = deliver(&[Some(ms(500)), Some(ms(100))], Some(ms(400)), geo_rtt());
        // Each is cut to 50 ms first (backward 50), then packet 0's
        // 50 + 50 = 100 against 50 halves all of them.
        assert_eq!(b, Some(ms(25)));
        assert_eq!(f, vec![Some(ms(25)), Some(ms(25))]);
        for qf in &f {
            assert!(qf.unwrap_or_default() + b.unwrap_or_default() <= bound);
        }
        assert_eq!(clamped, 3);
    }

    /// Runs RoVegas through the host on a queue-free 600 ms path for
    /// `rounds` round trips, whole windows sent back to back and
    /// acknowledged one packet at a time, with a receiver that echoes a
    /// forward queueing time of `fake_forward` for every packet. Returns the
    /// window in packets after the last round.
    fn rovegas_window_after(rounds: usize, fake_forward: Duration, rtt: RttSnapshot) -> usize {
        let spec = match ControllerSpec::with_params("rovegas", &[] as &[&str]) {
            Ok(spec) => spec,
            Err(e) => panic!("rovegas: {e:?}"),
        };
        let mss = 1200;
        let mut host = ControllerHost::new(
            &spec,
            WindowConfig {
                max_datagram_size: mss,
                initial_cwnd_packets: 10,
            },
        );
        let t0 = Instant::now();
        let path_rtt = rtt.min_rtt;
        let mut next_pkt = 0u64;
        for round in 0..rounds {
            let sent_at = t0 + path_rtt * round as u32;
            let acked_at = sent_at + path_rtt;
            let packets = (host.cwnd() / mss).max(1);
            let first = next_pkt;
            for i in 0..packets {
                host.on_packet_sent(&PacketSent {
                    pkt_num: next_pkt,
                    size: mss,
                    time_sent: sent_at,
                    bytes_in_flight: i * mss,
                });
                next_pkt += 1;
            }
            for (i, pkt_num) in (first..next_pkt).enumerate() {
                let packet = AckedPacket {
                    forward_queueing: Some(fake_forward),
                    ..AckedPacket::new(pkt_num, mss, sent_at, acked_at)
                };
                host.on_ack(&AckEvent {
                    now: acked_at,
                    acked: &[packet],
                    summary: AckSummary::of(&[packet], 0),
                    ack_delay: Duration::ZERO,
                    rtt,
                    bytes_in_flight: (packets - i) * mss,
                    app_limited: false,
                    backward_queueing: Some(Duration::ZERO),
                });
            }
        }
        host.cwnd() / mss
    }

    #[test]
    fn fake_queueing_cannot_pin_rovegas_below_what_the_bound_allows() {
        // A queue-free 600 ms path, rttvar settled at 10 ms: the bound lets a
        // report claim 10 ms of queueing at most.
        let rtt = RttSnapshot {
            min_rtt: ms(600),
            smoothed_rtt: ms(600),
            latest_rtt: ms(600),
            rttvar: ms(10),
        };
        let bound = ms(10);
        // The receiver claims 590 ms of forward queueing per packet: less
        // than the RTT, so the wire side's check lets it through.
        let fake = ms(590);
        // With at most `bound` of it believed, RoVegas's BaseRTT sample is at
        // least RTT − bound and its round RTT (RTT − QTb) is the RTT, so
        // Diff = cwnd × (1 − (RTT − bound) / RTT) = cwnd × bound / RTT
        // packets, and eq. (3) grows the window while Diff < alpha = 1:
        // up to alpha × RTT / bound packets (60 here). Slow start may leave
        // at most a round earlier (gamma = 1, then × 0.875), from where the
        // window grows one packet per round; 200 rounds are plenty.
        let alpha = 1.0;
        let lower_bound =
            (alpha * rtt.min_rtt.as_secs_f64() / bound.as_secs_f64()).floor() as usize;
        let window = rovegas_window_after(200, fake, rtt);
        assert!(
            window >= lower_bound - 1,
            "window {window} packets, the bound allows no less than {lower_bound}"
        );
        // And the lie still counts for what the bound allows: the window stops
        // where Diff reaches beta = 3 at the latest (180 packets).
        let beta = 3.0;
        let upper = (beta * rtt.min_rtt.as_secs_f64() / bound.as_secs_f64()).ceil() as usize;
        assert!(window <= upper + 1, "window {window}, beta allows {upper}");
    }
}

#[cfg(test)]
mod peer_clock_tests {
    //! Every estimator that reads the peer's receive times, behind the
    //! host: each must see the host's one verdict on each stamp.

    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::events::{AckReceived, PeerReport, PeerStamp, RttSnapshot};
    use crate::shared::forward_queue::ForwardQueue;
    use crate::shared::packet_pair::PacketPairEstimator;
    use crate::shared::queueing_estimate::{EstimatorConfig, QueueingEstimator};
    use crate::shared::relative_delay::{
        AnchorReason, Outcome, ReceiveStamp, RelativeDelayEstimator, StampedPacket,
    };

    /// What each estimator made of one packet's stamp.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Seen {
        pkt_num: u64,
        /// The judged stamp, as the event carried it.
        stamp: Option<(Duration, u32)>,
        /// Used by the forward queue / the queueing estimate / the relative
        /// delay / the packet pairs, and whether each started over on it.
        used: [bool; 4],
        restarted: [bool; 4],
    }

    #[derive(Debug)]
    struct Estimators {
        forward: ForwardQueue,
        queueing: QueueingEstimator,
        relative: RelativeDelayEstimator,
        pairs: PacketPairEstimator,
        scratch: Vec<Option<Duration>>,
        seen: Arc<Mutex<Vec<Seen>>>,
    }

    impl CongestionController for Estimators {
        fn name(&self) -> &'static str {
            "estimators"
        }
        fn on_packet_sent(&mut self, _: &PacketSent) {}
        fn on_ack(&mut self, ack: &AckEvent<'_>) {
            let steps_before = self.queueing.clock_steps();
            self.queueing.on_ack(ack, &mut self.scratch);
            let queueing_restarted = self.queueing.clock_steps() > steps_before;
            let Ok(mut seen) = self.seen.lock() else {
                return;
            };
            for (p, queueing) in ack.acked.iter().zip(&self.scratch) {
                let forward_steps = self.forward.clock_steps();
                let forward = self.forward.on_packet(p, 0);
                let pairs_before = self.pairs.samples();
                // Every packet sent back to back with the one before: a
                // pair whenever both stamps are on one clock.
                let pair = self.pairs.on_packet(p, 0);
                let relative = p.receive_time.map(|received| {
                    self.relative.on_packet(StampedPacket {
                        pkt_num: p.pkt_num,
                        time_sent: p.time_sent,
                        received: ReceiveStamp::Peer {
                            received,
                            clock_epoch: p.clock_epoch,
                        },
                        rtt: p.rtt,
                    })
                });
                seen.push(Seen {
                    pkt_num: p.pkt_num,
                    stamp: p.receive_time.map(|r| (r, p.clock_epoch)),
                    used: [
                        forward.is_some(),
                        queueing.is_some(),
                        matches!(
                            relative,
                            Some(
                                Outcome::Delay(_)
                                    | Outcome::Anchored(
                                        AnchorReason::First | AnchorReason::ClockStepped
                                    )
                            )
                        ),
                        p.receive_time.is_some(),
                    ],
                    restarted: [
                        self.forward.clock_steps() > forward_steps,
                        queueing_restarted && *queueing == Some(Duration::ZERO),
                        relative == Some(Outcome::Anchored(AnchorReason::ClockStepped)),
                        p.receive_time.is_some()
                            && pair.is_none()
                            && self.pairs.samples() == pairs_before,
                    ],
                });
            }
        }
        fn on_congestion_event(&mut self, _: &CongestionEvent) {}
        fn on_spurious_loss(&mut self, _: usize, _: usize) -> bool {
            false
        }
        fn set_window(&mut self, _: usize, _: usize) {}
        fn cwnd(&self) -> usize {
            1_000_000
        }
        fn ssthresh(&self) -> usize {
            usize::MAX
        }
        fn state(&self) -> CcState {
            CcState::CongestionAvoidance
        }
        fn internals(&self, _: &mut Internals) {}
        fn on_max_datagram_size(&mut self, _: usize) {}
    }

    /// Packets `0..count`, two per ACK, sent in pairs 1 µs apart every
    /// 10 ms over a 600 ms round trip; the peer stamps each at
    /// `stamp(n, received)` (ms since its basis, `received` the true arrival
    /// in ms since the first send, 300 ms one way and 0.54 ms between the
    /// two of a pair).
    fn drive(count: u64, stamp: fn(u64, f64) -> f64) -> Vec<Seen> {
        let seen = Arc::default();
        let estimators = Estimators {
            forward: ForwardQueue::new(0),
            queueing: QueueingEstimator::new(EstimatorConfig::default()),
            relative: RelativeDelayEstimator::default(),
            pairs: PacketPairEstimator::new(8, 1),
            scratch: Vec::new(),
            seen: Arc::clone(&seen),
        };
        let mut host = ControllerHost::with_controller(Box::new(estimators), 1200);
        let t0 = Instant::now();
        let sent_us = |n: u64| (n / 2) * 10_000 + n % 2;
        for pair in 0..count / 2 {
            let packets: Vec<AckedPacket> = (2 * pair..2 * pair + 2)
                .map(|n| {
                    let sent = t0 + Duration::from_micros(sent_us(n));
                    host.on_packet_sent(&PacketSent {
                        pkt_num: n,
                        size: 1200,
                        time_sent: sent,
                        bytes_in_flight: 0,
                    });
                    // 600 ms round trips, 5 ms more after the first ACK:
                    // room for the queueing estimate's joint bound.
                    let extra = if pair == 0 { 0 } else { 5 };
                    let acked = t0
                        + Duration::from_micros(sent_us(2 * pair + 1))
                        + Duration::from_millis(600 + extra);
                    AckedPacket::new(n, 1200, sent, acked)
                })
                .collect();
            let stamps: Vec<PeerStamp> = packets
                .iter()
                .map(|p| {
                    let received_ms =
                        sent_us(p.pkt_num) as f64 / 1e3 + 300.0 + 0.54 * (p.pkt_num % 2) as f64;
                    PeerStamp {
                        pkt_num: p.pkt_num,
                        value: Duration::from_secs_f64(stamp(p.pkt_num, received_ms) / 1e3),
                    }
                })
                .collect();
            let now = packets[1].time_acked;
            host.on_ack_received(
                &AckReceived {
                    now,
                    ack_delay: Duration::ZERO,
                    max_ack_delay: Duration::from_millis(25),
                    rtt: RttSnapshot::uniform(Duration::from_millis(600)),
                    bytes_in_flight: 2400,
                    report: PeerReport {
                        receive_times: &stamps,
                        forward_queueing: &[],
                        backward_queueing: None,
                    },
                },
                packets,
            );
        }
        let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
        seen
    }

    /// Every estimator used exactly the stamps the host believed, and
    /// started over exactly where the host's clock number changed.
    fn assert_one_verdict(seen: &[Seen]) {
        let mut clock = 0;
        for s in seen {
            let believed = s.stamp.is_some();
            // The packet pair needs the packet before it: count it as used
            // whenever the stamp is there.
            assert_eq!(s.used, [believed; 4], "packet {}", s.pkt_num);
            let new_clock = s.stamp.is_some_and(|(_, c)| c != clock);
            if let Some((_, c)) = s.stamp {
                clock = c;
            }
            if new_clock {
                assert_eq!(s.restarted, [true; 4], "packet {}", s.pkt_num);
            } else {
                assert_eq!(&s.restarted[..3], &[false; 3], "packet {}", s.pkt_num);
            }
        }
    }

    #[test]
    fn every_estimator_follows_the_hosts_verdict_on_a_clock_that_steps() {
        // 5 s ahead from packet 41 on (an odd packet: the step falls
        // inside an ACK and between the two of a pair).
        let seen = drive(120, |n, t| {
            1_000.0 + t + if n >= 41 { 5_000.0 } else { 0.0 }
        });
        assert_one_verdict(&seen);
        let refused: Vec<u64> = seen
            .iter()
            .filter(|s| s.stamp.is_none())
            .map(|s| s.pkt_num)
            .collect();
        let confirmed = 41 + u64::from(crate::shared::peer_clock::STEP_CONFIRMED_AFTER) - 1;
        assert_eq!(refused, (41..confirmed).collect::<Vec<_>>());
        assert_eq!(seen[confirmed as usize].stamp.map(|(_, c)| c), Some(1));
    }

    #[test]
    fn every_estimator_ignores_what_a_lying_peer_stamps() {
        // Every tenth stamp an hour late.
        let seen = drive(120, |n, t| {
            1_000.0 + t + if n % 10 == 5 { 3_600_000.0 } else { 0.0 }
        });
        assert_one_verdict(&seen);
        for s in &seen {
            assert_eq!(
                s.stamp.is_none(),
                s.pkt_num % 10 == 5,
                "packet {}",
                s.pkt_num
            );
        }
    }
}

#[cfg(test)]
mod ack_received_tests {
    //! The host's walk over an ACK's packets ([`ControllerHost::on_ack_received`]):
    //! what it judges the peer's queueing times against.

    use super::probe::*;
    use super::*;
    use crate::events::{AckReceived, PeerReport, PeerStamp, RttSnapshot};

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// One ACK of three packets whose round trips took 100, 600 and 300 ms,
    /// with AQT `backward` and AQT-echo `forward`: what the judge counted
    /// and what the controller was told (forward per packet, backward).
    fn deliver(
        backward: Option<Duration>,
        forward: &[PeerStamp],
    ) -> (JudgedCounts, Vec<Option<Duration>>, Option<Duration>) {
        let recorder = Probe::new(1_000_000, CcState::CongestionAvoidance);
        let seen = recorder.seen.clone();
        let mut host = ControllerHost::with_controller(Box::new(recorder), 1200);
        let now = Instant::now() + Duration::from_secs(1);
        let packets: Vec<AckedPacket> = [100, 600, 300]
            .into_iter()
            .enumerate()
            .map(|(n, rtt)| AckedPacket::new(n as u64, 1200, now - ms(rtt), now))
            .collect();
        // A wide bound, so that no value reaching the controller is cut.
        let rtt = RttSnapshot {
            min_rtt: ms(100),
            smoothed_rtt: ms(900),
            latest_rtt: ms(300),
            rttvar: ms(100),
        };
        host.on_ack_received(
            &AckReceived {
                now,
                ack_delay: Duration::ZERO,
                max_ack_delay: ms(25),
                rtt,
                bytes_in_flight: 3600,
                report: PeerReport {
                    receive_times: &[],
                    forward_queueing: forward,
                    backward_queueing: backward,
                },
            },
            packets,
        );
        let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
        let (f, b) = seen.into_iter().next().unwrap_or_default();
        (host.judged_counts(), f, b)
    }

    #[test]
    fn the_acks_queueing_time_is_judged_against_its_largest_rtt() {
        // The largest of the packets' round trips, computed here: 600 ms.
        let largest = [100, 600, 300].into_iter().max().map(ms);
        assert_eq!(largest, Some(ms(600)));
        // Above the first and the last packet's round trip but within the
        // largest: possible.
        let (counts, _, backward) = deliver(Some(ms(500)), &[]);
        assert_eq!(backward, Some(ms(500)));
        assert_eq!(
            (counts.backward_queueing, counts.rejected_backward_queueing),
            (1, 0)
        );
        // Beyond the largest: refused.
        let (counts, _, backward) = deliver(Some(ms(650)), &[]);
        assert_eq!(backward, None);
        assert_eq!(
            (counts.backward_queueing, counts.rejected_backward_queueing),
            (0, 1)
        );
        // None reported: nothing judged.
        let (counts, _, backward) = deliver(None, &[]);
        assert_eq!(backward, None);
        assert_eq!(counts, JudgedCounts::default());
    }

    #[test]
    fn forward_queueing_times_reach_their_packets_only() {
        // Packet 1 (600 ms) reports 200 ms, packet 2 (300 ms) an impossible
        // 400 ms; packet 0 reports none.
        let forward = [
            PeerStamp {
                pkt_num: 1,
                value: ms(200),
            },
            PeerStamp {
                pkt_num: 2,
                value: ms(400),
            },
        ];
        let (counts, f, _) = deliver(None, &forward);
        assert_eq!(f, vec![None, Some(ms(200)), None]);
        assert_eq!(
            (counts.forward_queueing, counts.rejected_forward_queueing),
            (1, 1)
        );
        // Without any, no packet has one.
        let (counts, f, _) = deliver(None, &[]);
        assert_eq!(f, vec![None, None, None]);
        assert_eq!(counts, JudgedCounts::default());
    }
}

#[cfg(test)]
mod send_clock_tests {
    //! The host judges receive times against the send times of its records,
    //! in nanoseconds counted from one packet to the next
    //! ([`PeerClock::judge_sent_at`]); the verdicts must be those of the
    //! peer's clock judged with the instants themselves
    //! ([`PeerClock::judge`]), whatever the gaps between sends; and the
    //! send times handed to the controllers (`AckedPacket::sent_nanos`) must
    //! be those instants on that clock.

    use super::probe::*;
    use super::*;
    use crate::events::{AckReceived, PeerReport, PeerStamp, RttSnapshot};

    /// A small deterministic generator (xorshift).
    struct Draw(u64);

    impl Draw {
        fn next(&mut self, bound: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % bound
        }
    }

    /// One packet as the test made it: what the stack acknowledges and the
    /// receive time the peer reports for it.
    struct Made {
        packet: AckedPacket,
        /// The send time the host is told when the packet leaves.
        sent: Instant,
        stamp: Duration,
    }

    /// Packets sent with gaps of every kind (within a burst, idle, one sent
    /// before the packet before it), some never handed to the host and
    /// some acknowledged with a send time the stack changed by a
    /// microsecond; the peer's stamps move their one-way delay by amounts
    /// up to and just past what the rule allows, so that a send time wrong
    /// by a nanosecond changes verdicts.
    fn made(seed: u64, count: u64) -> (Vec<Made>, Vec<u64>) {
        let mut draw = Draw(seed | 1);
        let t0 = Instant::now() + Duration::from_secs(1);
        let mut sent = t0;
        let base_ns: i128 = 10_000_000_000;
        let mut x_ns = base_ns;
        let mut previous_rtt_ns: i128 = 0;
        let mut not_recorded = Vec::new();
        let made = (0..count)
            .map(|n| {
                let gap = match draw.next(20) {
                    0 => -(draw.next(500_000) as i128),
                    1..=5 => 1_000_000 + draw.next(50_000_000) as i128,
                    _ => draw.next(900_000) as i128,
                };
                sent = if gap < 0 {
                    sent - Duration::from_nanos(gap.unsigned_abs() as u64)
                } else {
                    sent + Duration::from_nanos(gap as u64)
                };
                let acked = sent + Duration::from_millis(600 + draw.next(40));
                let mut packet = AckedPacket::new(n, 1200, sent, acked);
                if draw.next(30) == 0 {
                    not_recorded.push(n);
                }
                let rtt_ns = packet.rtt.as_nanos() as i128;
                let slack = 1_000_000;
                let nudge = draw.next(3) as i128 - 1;
                // Jumps to the rule's bounds (up from below the path's
                // delay, down from above it), else back towards it.
                x_ns += match draw.next(4) {
                    0 if x_ns <= base_ns => rtt_ns + slack + nudge,
                    1 if x_ns > base_ns => -(previous_rtt_ns + slack) + nudge,
                    _ => (base_ns - x_ns) / 2 + draw.next(40_000_000) as i128 - 20_000_000,
                };
                previous_rtt_ns = rtt_ns;
                let sent_ns = (sent - t0).as_nanos() as i128 + 1_000_000_000;
                let stamp = Duration::from_nanos((sent_ns + x_ns).max(0) as u64);
                if draw.next(25) == 0 {
                    // The stack's send time differs from the host's record.
                    packet.time_sent += Duration::from_micros(1);
                }
                Made {
                    packet,
                    sent,
                    stamp,
                }
            })
            .collect();
        (made, not_recorded)
    }

    #[test]
    fn the_records_send_clock_judges_as_the_instants_do() {
        for seed in 1..40 {
            let (made, not_recorded) = made(seed, 300);
            let mut host = ControllerHost::with_controller(
                Box::new(Probe::new(1_000_000, CcState::CongestionAvoidance)),
                1200,
            );
            for m in &made {
                if !not_recorded.contains(&m.packet.pkt_num) {
                    host.on_packet_sent(&PacketSent {
                        pkt_num: m.packet.pkt_num,
                        size: 1200,
                        time_sent: m.sent,
                        bytes_in_flight: 0,
                    });
                }
            }
            let mut reference = PeerClock::default();
            let mut draw = Draw(seed * 7 + 3);
            let mut next = 0;
            while next < made.len() {
                let end = (next + 1 + draw.next(3) as usize).min(made.len());
                let ack = &made[next..end];
                let stamps: Vec<PeerStamp> = ack
                    .iter()
                    .map(|m| PeerStamp {
                        pkt_num: m.packet.pkt_num,
                        value: m.stamp,
                    })
                    .collect();
                let now = ack
                    .iter()
                    .map(|m| m.packet.time_acked)
                    .max()
                    .unwrap_or(ack[0].packet.time_acked);
                host.on_ack_received(
                    &AckReceived {
                        now,
                        ack_delay: Duration::ZERO,
                        max_ack_delay: Duration::from_millis(25),
                        rtt: RttSnapshot::uniform(Duration::from_millis(600)),
                        bytes_in_flight: 0,
                        report: PeerReport {
                            receive_times: &stamps,
                            forward_queueing: &[],
                            backward_queueing: None,
                        },
                    },
                    ack.iter().map(|m| m.packet),
                );
                reference.on_ack_frame();
                // Every packet handed on carries its send time (and the
                // ACK its arrival) on the records' clock, exactly, whether
                // the record held it or not.
                let origin = host.send_origin.expect("packets were sent");
                for seen in &host.acked {
                    assert_eq!(
                        seen.sent_nanos,
                        peer_clock::signed_nanos_since(seen.time_sent, origin),
                        "seed {seed}, packet {}",
                        seen.pkt_num
                    );
                }
                let event = AckEvent {
                    now,
                    acked: &host.acked,
                    summary: AckSummary::of(&host.acked, 0),
                    ack_delay: Duration::ZERO,
                    rtt: RttSnapshot::uniform(Duration::from_millis(600)),
                    bytes_in_flight: 0,
                    app_limited: false,
                    backward_queueing: None,
                };
                // (Unless the test moved the first packet's send time
                // after its RTT was taken, which no stack does.)
                let first = host.acked[0];
                if first.rtt == first.time_acked.saturating_duration_since(first.time_sent) {
                    assert_eq!(
                        event.now_nanos(),
                        Some(peer_clock::signed_nanos_since(now, origin)),
                        "seed {seed}"
                    );
                }
                for (m, seen) in ack.iter().zip(&host.acked) {
                    let verdict = reference.judge(m.stamp, m.packet.time_sent, m.packet.rtt);
                    assert_eq!(
                        (seen.receive_time, seen.clock_epoch),
                        (verdict.map(|_| m.stamp), verdict.unwrap_or(0)),
                        "seed {seed}, packet {}",
                        m.packet.pkt_num
                    );
                }
                next = end;
            }
            let counts = host.judged_counts();
            assert_eq!(counts.receive_times, reference.counts().believed);
            assert_eq!(counts.rejected_receive_times, reference.counts().refused);
            // The test reaches what it is about: refusals and beliefs.
            let c = reference.counts();
            assert!(c.refused > 10 && c.believed > 100, "seed {seed}: {c:?}");
        }
    }
}

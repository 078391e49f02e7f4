//! The bottleneck's capacity from ACK trains, measured by the sender alone.
//!
//! When the peer sends no receive timestamps (every browser and every other
//! QUIC stack) the sender still sees when each ACK arrives and how many bytes
//! it acknowledges. A run of packets that reaches the bottleneck faster than
//! the bottleneck serialises them leaves it spaced by the bottleneck's rate,
//! and the receiver acknowledges them at that spacing: over any span of ACKs,
//! `capacity = bytes acknowledged / time between the ACKs` (ACK-train
//! dispersion: Jacobson's ACK clock; the delivery-rate estimate of BBR
//! (Cardwell et al., ACM Queue 2016) and Westwood's bandwidth estimate
//! (003, section III.B) measure the same bytes over the same ACK times).
//!
//! A span says something about the bottleneck only when the sender was
//! faster than the arrivals, so that the bottleneck never idled inside it:
//! the packets its ACKs acknowledge must have left within
//! [`BUSY_SEND_FRACTION`] of the time their ACKs took to arrive. A paced
//! sender below the bottleneck's rate gives no sample (its ACKs are spaced by
//! its own pacing); the unpaced initial window, start-up's trains and the
//! pacer's back-to-back pairs do. Delivery-rate estimates that take
//! `max(send span, ACK span)` (BBR) measure the same when the sender is
//! faster, and the sender's own rate otherwise; this estimator keeps only
//! the former, because what it is asked for is the link, not the flow.
//!
//! Robustness, case by case:
//! - **ACK thinning** (a receiver acknowledging every 2nd, 8th or 64th
//!   packet): a span is any run of ACKs, so thinned ACKs measure the same
//!   bytes over the same time, only with fewer samples.
//! - **The receiver's ACK delay**: the time each ACK's newest packet
//!   arrived is estimated as the ACK's arrival minus the ACK delay the
//!   receiver reports for it (its largest acknowledged packet), so a
//!   delayed-ACK timer does not stretch a span. A reported delay longer
//!   than [`MAX_TRUSTED_ACK_DELAY`] gives no sample (a lying peer, or an
//!   ACK that waited so long its timing means nothing).
//! - **ACK compression** (ACKs queued behind something on the return path,
//!   then released together): a short span reads high; the sample is the
//!   longest busy span an ACK closes, and the capacity is the median of the
//!   latest samples, so a few compressed ACKs do not move it.
//! - **A return link too thin for the ACKs** (a 3 Mbit/s return link under
//!   one ACK per packet of a 250 Mbit/s forward link): the ACKs arrive spaced
//!   by the return link, and the estimate is low. Nothing the sender sees
//!   tells this apart from a slower forward link; asking the peer to thin
//!   its ACKs (ACK_FREQUENCY) removes the cause.
//! - **Losses inside a span**: a lost packet was serialised at the
//!   bottleneck (or not, if the bottleneck dropped it) but is never
//!   acknowledged; the sample reads at most the loss rate low.
//!
//! Every value comes from the sender's own clock except the ACK delay, which
//! is bounded; the worst a lying peer can do is mislead its own download.
//!
//! # Two ways to pick the spans ([`SpanRule`])
//!
//! [`SpanRule::LongestBusySpan`] (the first version) judges each step from
//! one ACK to the next by the ACKs' own spacing (busy if the packets left
//! faster than their ACKs arrived), takes the longest busy span an ACK
//! closes and the median of those spans' rates. On a jittery return link
//! that selection is biased low: a step whose ACKs were stretched passes
//! and lengthens the span, a compressed one (ACKs bunched behind a delayed
//! one, as a FIFO wire or a TDMA return channel bunches them) fails and cuts
//! it, so the spans kept are the stretched ones (fau-sat, 10 ms of return
//! jitter, no stamps: 8-10 of 20 Mbit/s in the server qlog, 12.0 s against
//! 6.85 s with stamps).
//!
//! [`SpanRule::SendSideSteps`] never looks at the ACK spacing to decide what
//! to keep. A step counts when its packets left faster than the bottleneck,
//! at the current estimate, would drain them (`send gap ≤`
//! [`BUSY_SEND_FRACTION`] `× bytes / capacity`: the sender's own clock and
//! its own estimate only), and the capacity is the bytes of the latest busy
//! steps over the sum of their ACK gaps, not a median of per-span rates: a
//! bunched ACK's zero gap and the stretched gap before it both count, so
//! return-path jitter (whose delay, on a FIFO wire, is a stationary
//! process) cancels in the sum instead of biasing the choice. The sender's
//! own trains (back to back) always pass; steps between trains pass only
//! when the sender outran its estimate by a quarter, so an estimate read
//! low rises to the pacing rate (which the expected-rate floor lets grow)
//! and one read high is corrected by the trains. This is the delivery rate
//! over the time the bottleneck was busy with this flow's packets, as BBR's
//! estimator (draft-cheng-iccrg-delivery-rate-estimation: the rate over an
//! interval, the interval never shorter than the send interval) and
//! picoquic's peak-bandwidth estimate (`picoquic_estimate_max_path_bandwidth`
//! in `picoquic/frames.c`: bytes delivered over the larger of the send and
//! receive intervals) take it, with the send-side bound applied to the
//! choice of steps rather than to each sample. Until the first estimate
//! exists, steps are judged by their ACK spacing as before (the initial
//! window's back-to-back packets pass either way).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::events::AckEvent;
use crate::shared::packet_pair::MAX_PLAUSIBLE_BYTES_PER_SEC;

/// A span counts as the bottleneck's when its packets left within this
/// fraction of the time their ACKs took: the sender was at least 1.25 times
/// faster than the arrivals, so the bottleneck had a backlog throughout.
pub const BUSY_SEND_FRACTION: f64 = 0.8;

/// A sample spans at least this many packets. One is enough: a receiver
/// that acknowledges every packet turns each of the pacer's back-to-back
/// pairs into a sample (one ACK's jitter then moves that sample, not the
/// median), and the initial window's pairs give the capacity one round trip
/// after the request, as the receiver's stamps do.
pub const MIN_SPAN_PACKETS: u64 = 1;

/// ACKs kept to start a span from (the longest busy span among them is the
/// sample).
const HISTORY: usize = 16;

/// ACK delays above this are not trusted for timing (RFC 9000's default
/// max_ack_delay is 25 ms; a receiver honouring an ACK_FREQUENCY request may
/// wait longer, but then its ACKs carry no train).
pub const MAX_TRUSTED_ACK_DELAY: Duration = Duration::from_millis(100);

/// How spans are chosen and summarised (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanRule {
    /// Each step judged by its own ACK spacing; the median of the rates of
    /// the longest busy spans.
    LongestBusySpan,
    /// Each step judged by the sender's clock against the current
    /// estimate; the bytes of the latest busy steps over their ACK time.
    SendSideSteps,
}

/// [`SpanRule::SendSideSteps`] sums this many times `window` busy steps:
/// each step's ACK gap carries the return path's jitter, and only a long sum
/// cancels it (fau-sat with 10 ms of return jitter, seeds 1-5: 9.51 s over
/// 512 steps, 9.37 s over 128, but 128 also moved fau-sat without jitter
/// from 6.83 to 6.94 s, seed 2 reading its start-up high).
const STEP_WINDOW_FACTOR: usize = 4;

/// [`AckTrainEstimator::with_clump_guard`]: until the first estimate, a
/// sample counts only when its ACK span is at least this many times the
/// longest ACK gap of a busy step seen so far. A return link that releases
/// ACKs in clumps (a TDMA uplink's delivery opportunities, a Starlink-like
/// up trace every ~12 ms) bunches ACKs of packets the bottleneck spaced
/// out: a span inside one clump reads many times the link, one that
/// covers two clump gaps reads it to within a clump's share. On an
/// evenly spaced return path the longest gap is one serialisation, and a
/// span of two steps passes.
pub const CLUMP_SPAN_FACTOR: f64 = 2.0;

/// [`AckTrainEstimator::with_bunch_guard`]: an ACK that arrived less than
/// this long per byte it acknowledges after the one before it (faster than
/// 8 Gbit/s) came in one bunch with it. Satellite bottlenecks are far
/// slower (picoquic's fastest case is 250 Mbit/s: 32 ns a byte between
/// ACKs of every second packet), while a return link or a host that
/// releases ACKs together spaces them by nothing or by microseconds.
pub const BUNCHED_SECS_PER_BYTE: f64 = 1e-9;

/// [`AckTrainEstimator::with_bunch_guard`]: only steps whose packets left
/// at most this far apart are judged: the bottleneck spaces their ACKs,
/// while a step between two paced trains is spaced by the pacer (a real
/// server takes 170-220 µs between the packets of a train; see
/// `packet_pair`).
const TRAIN_SEND_GAP: f64 = 0.5e-3;

/// [`AckTrainEstimator::with_bunch_guard`]: steps judged before the
/// capacity is given, and before it can be given up.
pub const MIN_JUDGED_STEPS: u32 = 4;

/// [`AckTrainEstimator::with_bunch_guard`]: the share of bunched steps
/// (the mean over the first [`BUNCH_WINDOW`] judged, smoothed over that
/// many after) above which the ACKs' timing is given up for good.
pub const BUNCHED_SHARE_LIMIT: f64 = 0.25;

/// See [`BUNCHED_SHARE_LIMIT`].
const BUNCH_WINDOW: f64 = 16.0;

/// One ACK that advanced the largest acknowledged packet.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    /// When the newest packet it acknowledged reached the receiver, on the
    /// sender's clock (arrival minus reported ACK delay; the return path's
    /// constant delay cancels in every span).
    received: Instant,
    /// Bytes acknowledged up to and including this ACK.
    delivered: u64,
    /// Packets acknowledged up to and including this ACK.
    delivered_packets: u64,
    /// Send time of the newest packet it acknowledged.
    newest_sent: Instant,
}

/// Capacity estimate from ACK-train dispersion.
#[derive(Clone, Debug)]
pub struct AckTrainEstimator {
    arrivals: VecDeque<Arrival>,
    largest_acked: Option<u64>,
    delivered: u64,
    delivered_packets: u64,
    /// The last `window` samples, oldest first.
    recent: VecDeque<f64>,
    /// The ACK span (seconds) of each sample in `recent`.
    recent_spans: VecDeque<f64>,
    /// [`CLUMP_SPAN_FACTOR`] applies to the first estimate.
    clump_guard: bool,
    /// [`AckTrainEstimator::with_first_sum_cap`].
    first_sum_cap: bool,
    /// [`AckTrainEstimator::with_bunch_guard`] and its state.
    bunch: Option<BunchWatch>,
    /// The longest ACK gap of a busy step seen since creation or reset.
    longest_busy_gap: f64,
    /// An estimate has been published since creation or reset.
    published: bool,
    window: usize,
    min_samples: usize,
    /// The capacity ([`AckTrainEstimator::publish`]).
    estimate: Option<f64>,
    /// The median of `recent`, once there are `min_samples`; recomputed
    /// only when read after a sample arrived (`median_stale`): with
    /// [`SpanRule::SendSideSteps`] the sums stand in once a window of steps
    /// is summed, and a sort of 128 rates on every ACK then bought nothing.
    median: Option<f64>,
    median_stale: bool,
    samples: u64,
    /// [`BUSY_SEND_FRACTION`]; a field so that a test can switch the check
    /// off and see what it keeps out.
    busy_send_fraction: f64,
    rule: SpanRule,
    /// [`SpanRule::SendSideSteps`]: the latest busy steps
    /// ([`STEP_WINDOW_FACTOR`] × `window`), as
    /// (bytes, ACK gap in seconds; a gap may be negative when the reported
    /// ACK delays differ), oldest first, and their sums.
    steps: VecDeque<(u64, f64)>,
    step_bytes: u64,
    step_secs: f64,
    /// Packets newly acknowledged per ACK, smoothed (1/8 of each new ACK):
    /// how thinned the peer's ACKs are.
    packets_per_ack: Option<f64>,
}

impl AckTrainEstimator {
    /// An estimator whose capacity is the median of the last `window`
    /// samples, once there are at least `min_samples` (both at least 1).
    pub fn new(window: usize, min_samples: usize) -> Self {
        Self::with_rule(window, min_samples, SpanRule::LongestBusySpan)
    }

    /// [`AckTrainEstimator::new`] with the span rule `rule`.
    pub fn with_rule(window: usize, min_samples: usize, rule: SpanRule) -> Self {
        let window = window.max(1);
        AckTrainEstimator {
            arrivals: VecDeque::with_capacity(HISTORY),
            largest_acked: None,
            delivered: 0,
            delivered_packets: 0,
            recent: VecDeque::with_capacity(window),
            recent_spans: VecDeque::with_capacity(window),
            clump_guard: false,
            first_sum_cap: false,
            bunch: None,
            longest_busy_gap: 0.0,
            published: false,
            window,
            min_samples: min_samples.clamp(1, window),
            estimate: None,
            median: None,
            median_stale: false,
            samples: 0,
            busy_send_fraction: BUSY_SEND_FRACTION,
            rule,
            steps: VecDeque::new(),
            step_bytes: 0,
            step_secs: 0.0,
            packets_per_ack: None,
        }
    }

    /// [`AckTrainEstimator::with_rule`] whose first estimate waits for
    /// samples spanning [`CLUMP_SPAN_FACTOR`] times the longest busy ACK
    /// gap (`on`), or not (`off`: as [`AckTrainEstimator::with_rule`]).
    pub fn with_clump_guard(mut self, on: bool) -> Self {
        self.clump_guard = on;
        self
    }

    /// With [`SpanRule::SendSideSteps`], the first estimate at most the busy
    /// steps' bytes over their summed ACK gaps so far (`on`): a clump's
    /// bunched ACKs and the gap before the next clump both count in the
    /// sum, so it reads the link once one clump gap is in it, where the
    /// median of short spans reads the clump.
    pub fn with_first_sum_cap(mut self, on: bool) -> Self {
        self.first_sum_cap = on;
        self
    }

    /// No capacity until [`MIN_JUDGED_STEPS`] steps inside the sender's
    /// trains have shown how the ACKs are spaced, and none for good once
    /// more than [`BUNCHED_SHARE_LIMIT`] of those steps came bunched (`on`).
    /// A return link that carries ACKs in delivery opportunities (a TDMA
    /// uplink's frames) or a host that reads them late releases each
    /// clump at one instant. A train's ACKs then nearly always come in one
    /// clump, with no time between them, and the time of a whole frame
    /// falls into the few steps a clump boundary cuts: every sum over a
    /// few trains reads many times the link or a fraction of it (fau-sat
    /// with the return in 24 ms frames, no stamps, seed 1: 286 to
    /// 706 Mbit/s of 20, and 350 % of the file retransmitted). Without a
    /// capacity the sender starts up and avoids as the Vegas family does.
    pub fn with_bunch_guard(mut self, on: bool) -> Self {
        self.bunch = on.then(BunchWatch::default);
        self
    }

    /// Whether the bunch guard gave the ACKs' timing up.
    pub fn bunched(&self) -> bool {
        self.bunch.as_ref().is_some_and(|b| b.given_up)
    }

    /// One ACK frame. Only packets above the largest acknowledged so far
    /// count (a packet acknowledged late arrived earlier than its ACK says),
    /// and a span's packets must average at least `min_size` bytes (small
    /// handshake and control packets are spaced by the receiver's
    /// processing, not the bottleneck).
    /// Returns the sample this ACK gave, in bytes per second.
    pub fn on_ack(&mut self, ack: &AckEvent<'_>, min_size: usize) -> Option<f64> {
        let floor = self.largest_acked;
        let mut bytes = 0u64;
        let mut packets = 0u64;
        let mut newest = None;
        for packet in ack.acked {
            if floor.is_some_and(|largest| packet.pkt_num <= largest) {
                continue;
            }
            bytes = bytes.saturating_add(packet.size as u64);
            packets += 1;
            newest = Some(packet);
        }
        let newest = newest?;
        self.largest_acked = Some(newest.pkt_num);
        let per_ack = packets as f64;
        self.packets_per_ack = Some(
            self.packets_per_ack
                .map_or(per_ack, |mean| mean + (per_ack - mean) / 8.0),
        );
        self.delivered = self.delivered.saturating_add(bytes);
        self.delivered_packets += packets;
        if ack.ack_delay > MAX_TRUSTED_ACK_DELAY {
            // Its timing is the receiver's timer, not the path's: no span
            // may start or end here.
            self.arrivals.clear();
            return None;
        }
        let current = Arrival {
            received: ack.now.checked_sub(ack.ack_delay).unwrap_or(ack.now),
            delivered: self.delivered,
            delivered_packets: self.delivered_packets,
            newest_sent: newest.time_sent,
        };
        if let Some(watch) = self.bunch.as_mut() {
            watch.on_arrival(&current, bytes);
        }
        let step = match (self.rule, self.arrivals.back().copied()) {
            (SpanRule::SendSideSteps, Some(previous)) => {
                self.send_side_step(previous, &current, min_size)
            }
            _ => None,
        };
        if self.clump_guard && !self.published {
            self.note_busy_gap(&current);
        }
        let sample = self.longest_busy_span(&current, min_size);
        if self.arrivals.len() == HISTORY {
            self.arrivals.pop_front();
        }
        self.arrivals.push_back(current);
        if let Some((rate, span)) = sample {
            self.record(rate, span);
        }
        self.publish();
        match self.rule {
            SpanRule::LongestBusySpan => sample.map(|(rate, _)| rate),
            SpanRule::SendSideSteps => step,
        }
    }

    /// Before the first estimate: the step from the latest ACK to `current`
    /// is a busy one (its packets left faster than its ACKs arrived) with
    /// the longest gap yet, so spans shorter than [`CLUMP_SPAN_FACTOR`]
    /// times it are no longer trusted (the median is recomputed).
    fn note_busy_gap(&mut self, current: &Arrival) {
        let Some(previous) = self.arrivals.back() else {
            return;
        };
        let (Some(ack_gap), Some(send_gap)) = (
            current.received.checked_duration_since(previous.received),
            current
                .newest_sent
                .checked_duration_since(previous.newest_sent),
        ) else {
            return;
        };
        let ack_gap = ack_gap.as_secs_f64();
        if send_gap.as_secs_f64() <= self.busy_send_fraction * ack_gap
            && ack_gap > self.longest_busy_gap
        {
            self.longest_busy_gap = ack_gap;
            self.median_stale = true;
        }
    }

    /// The rate over the longest span ending at `current` through which
    /// the bottleneck stayed busy: every step from one ACK to the next
    /// acknowledged packets that left faster than their ACKs arrived. A
    /// step where the sender was the slower one (a pacing gap between two
    /// trains) ends the span, because the bottleneck may have idled in it.
    /// Returns the rate and the span's ACK time in seconds.
    fn longest_busy_span(&self, current: &Arrival, min_size: usize) -> Option<(f64, f64)> {
        let mut later = current;
        let mut best = None;
        for start in self.arrivals.iter().rev() {
            let (Some(ack_gap), Some(send_gap)) = (
                later.received.checked_duration_since(start.received),
                later.newest_sent.checked_duration_since(start.newest_sent),
            ) else {
                break;
            };
            if send_gap.as_secs_f64() > self.busy_send_fraction * ack_gap.as_secs_f64() {
                break;
            }
            later = start;
            let packets = current.delivered_packets - start.delivered_packets;
            let bytes = current.delivered - start.delivered;
            let ack_span = current.received.saturating_duration_since(start.received);
            if packets < MIN_SPAN_PACKETS
                || bytes < packets.saturating_mul(min_size as u64)
                || ack_span.is_zero()
            {
                continue;
            }
            let rate = bytes as f64 / ack_span.as_secs_f64();
            if rate.is_finite() && rate > 0.0 && rate <= MAX_PLAUSIBLE_BYTES_PER_SEC {
                best = Some((rate, ack_span.as_secs_f64()));
            }
        }
        best
    }

    /// [`SpanRule::SendSideSteps`]: the step from `previous` to `current`,
    /// kept when its packets left faster than the bottleneck drains them at
    /// the current estimate (before any estimate: faster than their ACKs
    /// arrived). Returns the step's own rate when kept.
    fn send_side_step(
        &mut self,
        previous: Arrival,
        current: &Arrival,
        min_size: usize,
    ) -> Option<f64> {
        let packets = current.delivered_packets - previous.delivered_packets;
        let bytes = current.delivered - previous.delivered;
        let send_gap = current
            .newest_sent
            .checked_duration_since(previous.newest_sent)?
            .as_secs_f64();
        // Signed: with the reported ACK delays taken out, an ACK can seem
        // to have arrived before the one before it; dropping such steps
        // would bias the sum.
        let ack_gap = if current.received >= previous.received {
            current
                .received
                .duration_since(previous.received)
                .as_secs_f64()
        } else {
            -previous
                .received
                .duration_since(current.received)
                .as_secs_f64()
        };
        if packets < MIN_SPAN_PACKETS || bytes < packets.saturating_mul(min_size as u64) {
            return None;
        }
        let drain = match self.estimate {
            Some(capacity) => bytes as f64 / capacity,
            // Before any estimate, the ACKs' spacing (the initial window's
            // back-to-back packets pass whatever it is).
            None => ack_gap.max(0.0),
        };
        if send_gap > self.busy_send_fraction * drain {
            return None;
        }
        if self.steps.len() >= self.window * STEP_WINDOW_FACTOR {
            if let Some((b, t)) = self.steps.pop_front() {
                self.step_bytes -= b;
                self.step_secs -= t;
            }
        }
        self.steps.push_back((bytes, ack_gap));
        self.step_bytes += bytes;
        self.step_secs += ack_gap;
        (ack_gap > 0.0).then(|| bytes as f64 / ack_gap)
    }

    fn record(&mut self, rate: f64, span: f64) {
        self.samples = self.samples.saturating_add(1);
        if self.recent.len() == self.window {
            self.recent.pop_front();
            self.recent_spans.pop_front();
        }
        self.recent.push_back(rate);
        // Only the clump guard reads the spans (index for index with
        // `recent`); without it they stay empty and cost nothing per sample.
        if self.clump_guard {
            self.recent_spans.push_back(span);
        }
        self.median_stale = true;
    }

    /// The median of the latest samples (see `median`).
    fn current_median(&mut self) -> Option<f64> {
        if self.median_stale {
            self.median_stale = false;
            self.median = if self.clump_guard && !self.published {
                // Only the samples spanning the clumps seen so far.
                let shortest = CLUMP_SPAN_FACTOR * self.longest_busy_gap;
                let spans = &self.recent_spans;
                let trusted = |i: usize| spans[i] >= shortest;
                if spans.iter().filter(|span| **span >= shortest).count() < self.min_samples {
                    None
                } else {
                    median_where(&self.recent, trusted)
                }
            } else if self.recent.len() < self.min_samples {
                None
            } else {
                median_of(&self.recent)
            };
        }
        self.median
    }

    /// The estimate: with [`SpanRule::SendSideSteps`], the busy steps'
    /// bytes over their ACK time once `window` steps are summed (a few
    /// steps' ACK gaps carry the jitter of each ACK: the initial window's
    /// first four steps read fau-sat's 20 Mbit/s as 23.6); until then, and
    /// with [`SpanRule::LongestBusySpan`], the median of the spans' rates.
    fn publish(&mut self) {
        let sums = self.step_bytes as f64 / self.step_secs;
        self.estimate = if self.rule == SpanRule::SendSideSteps
            && self.steps.len() >= self.window
            && sums.is_finite()
            && sums > 0.0
            && sums <= MAX_PLAUSIBLE_BYTES_PER_SEC
        {
            Some(sums)
        } else if self.first_sum_cap && !self.published && sums.is_finite() && sums > 0.0 {
            self.current_median().map(|median| median.min(sums))
        } else {
            self.current_median()
        };
        self.published |= self.estimate.is_some();
    }

    /// The capacity in bytes per second (the median of the last `window`
    /// samples, or the latest `window` busy steps' bytes over their time);
    /// `None` before `min_samples` samples.
    pub fn capacity(&self) -> Option<f64> {
        match &self.bunch {
            Some(watch) if !watch.trusted() => None,
            _ => self.estimate,
        }
    }

    /// Packets each ACK newly acknowledges, smoothed (1 for a receiver
    /// acknowledging every packet; the ACK_FREQUENCY threshold for one that
    /// honours it).
    pub fn packets_per_ack(&self) -> Option<f64> {
        self.packets_per_ack
    }

    /// Samples measured since creation.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Forgets the path (its capacity may have changed).
    pub fn reset(&mut self) {
        self.arrivals.clear();
        self.recent.clear();
        self.recent_spans.clear();
        self.longest_busy_gap = 0.0;
        if let Some(watch) = self.bunch.as_mut() {
            *watch = BunchWatch::default();
        }
        self.published = false;
        self.steps.clear();
        self.step_bytes = 0;
        self.step_secs = 0.0;
        self.estimate = None;
        self.median = None;
        self.median_stale = false;
    }
}

/// How the ACKs of the sender's trains are spaced
/// ([`AckTrainEstimator::with_bunch_guard`]).
#[derive(Clone, Debug, Default)]
struct BunchWatch {
    /// The latest ACK's (estimated) receive time and the send time of the
    /// newest packet it acknowledged.
    latest: Option<(Instant, Instant)>,
    /// Steps inside trains judged, and the smoothed share that came bunched.
    judged: u32,
    bunched_share: f64,
    /// The share passed [`BUNCHED_SHARE_LIMIT`]: the timing is given up.
    given_up: bool,
}

impl BunchWatch {
    /// Whether the ACKs' timing may give a capacity.
    fn trusted(&self) -> bool {
        !self.given_up && self.judged >= MIN_JUDGED_STEPS
    }

    /// One ACK, `bytes` newly acknowledged: the step from the ACK before,
    /// if its packets left within [`TRAIN_SEND_GAP`], is bunched when its
    /// ACK gap is below [`BUNCHED_SECS_PER_BYTE`] a byte.
    fn on_arrival(&mut self, current: &Arrival, bytes: u64) {
        let Some((latest_received, latest_sent)) =
            self.latest.replace((current.received, current.newest_sent))
        else {
            return;
        };
        let Some(send_gap) = current.newest_sent.checked_duration_since(latest_sent) else {
            return;
        };
        if bytes == 0 {
            return;
        }
        if send_gap.as_secs_f64() > TRAIN_SEND_GAP {
            return;
        }
        // An ACK whose reported delay was longer can seem to have arrived
        // before the one before it: no gap either.
        let gap = current
            .received
            .checked_duration_since(latest_received)
            .map_or(0.0, |g| g.as_secs_f64());
        let bunched = gap / (bytes as f64) < BUNCHED_SECS_PER_BYTE;
        let indicator = if bunched { 1.0 } else { 0.0 };
        self.judged = self.judged.saturating_add(1);
        // The plain mean over the first steps, smoothed after.
        let weight = (1.0 / f64::from(self.judged)).max(1.0 / BUNCH_WINDOW);
        self.bunched_share += (indicator - self.bunched_share) * weight;
        if self.judged >= MIN_JUDGED_STEPS && self.bunched_share > BUNCHED_SHARE_LIMIT {
            self.given_up = true;
        }
    }
}

/// The median of at most a few hundred values, without allocating when
/// there are at most 128.
fn median_of(values: &VecDeque<f64>) -> Option<f64> {
    median_where(values, |_| true)
}

/// The median of the `values` whose index passes `keep`, as [`median_of`].
fn median_where(values: &VecDeque<f64>, keep: impl Fn(usize) -> bool) -> Option<f64> {
    let mut buffer = [0.0f64; 128];
    let mut heap;
    let sorted: &mut [f64] = if values.len() <= buffer.len() {
        let mut filled = 0;
        for (i, v) in values.iter().enumerate() {
            if keep(i) {
                buffer[filled] = *v;
                filled += 1;
            }
        }
        &mut buffer[..filled]
    } else {
        heap = values
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(_, v)| *v)
            .collect::<Vec<f64>>();
        &mut heap[..]
    };
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{AckedPacket, RttSnapshot};

    const SIZE: usize = 1350;

    /// A path with a bottleneck of `rate` bytes/s and `rtt` base RTT: each
    /// packet's arrival at the receiver is its bottleneck departure.
    struct Path {
        t0: Instant,
        rate: f64,
        rtt: Duration,
        bottleneck_free: f64,
    }

    impl Path {
        fn new(rate: f64) -> Self {
            Path {
                t0: Instant::now(),
                rate,
                rtt: Duration::from_millis(600),
                bottleneck_free: 0.0,
            }
        }

        /// Seconds after t0 at which a packet sent at `sent` (seconds)
        /// leaves the bottleneck.
        fn depart(&mut self, sent: f64) -> f64 {
            let start = sent.max(self.bottleneck_free);
            self.bottleneck_free = start + SIZE as f64 / self.rate;
            self.bottleneck_free
        }

        fn at(&self, secs: f64) -> Instant {
            self.t0 + Duration::from_secs_f64(secs)
        }
    }

    /// Sends `count` packets `gap` seconds apart from `start`, acknowledged
    /// every `ack_every` packets (and the last), and feeds the ACKs to `e`.
    fn train(
        e: &mut AckTrainEstimator,
        path: &mut Path,
        first_pkt: u64,
        start: f64,
        gap: f64,
        count: u64,
        ack_every: u64,
    ) -> Vec<f64> {
        let mut pending = Vec::new();
        let mut samples = Vec::new();
        for i in 0..count {
            let sent = start + gap * i as f64;
            let received = path.depart(sent);
            pending.push((first_pkt + i, sent));
            if pending.len() as u64 == ack_every || i + 1 == count {
                let now = path.at(received + path.rtt.as_secs_f64());
                let acked: Vec<AckedPacket> = pending
                    .drain(..)
                    .map(|(n, s)| AckedPacket::new(n, SIZE, path.at(s), now))
                    .collect();
                let ack = AckEvent {
                    now,
                    acked: &acked,
                    summary: crate::events::AckSummary::of(&acked, 0),
                    ack_delay: Duration::ZERO,
                    rtt: RttSnapshot::uniform(path.rtt),
                    bytes_in_flight: 0,
                    app_limited: false,
                    backward_queueing: None,
                };
                if let Some(s) = e.on_ack(&ack, SIZE) {
                    samples.push(s);
                }
            }
        }
        samples
    }

    const LINK: f64 = 2.5e6; // 20 Mbit/s

    #[test]
    fn a_back_to_back_initial_window_measures_the_link() {
        let mut e = AckTrainEstimator::new(16, 3);
        let mut path = Path::new(LINK);
        train(&mut e, &mut path, 0, 0.0, 0.0, 10, 1);
        let c = e.capacity().expect("ten ACKs of a burst");
        assert!((c - LINK).abs() / LINK < 1e-6, "{c}");
    }

    #[test]
    fn a_paced_train_thinned_one_in_eight_measures_the_link() {
        let mut e = AckTrainEstimator::new(16, 3);
        let mut path = Path::new(LINK);
        // Paced at 1.5 x the link: the bottleneck is busy throughout.
        let gap = SIZE as f64 / (1.5 * LINK);
        let samples = train(&mut e, &mut path, 0, 0.0, gap, 96, 8);
        assert!(!samples.is_empty());
        let c = e.capacity().expect("twelve ACKs");
        assert!((c - LINK).abs() / LINK < 0.05, "{c}");
    }

    #[test]
    fn a_sender_slower_than_the_link_gives_no_sample() {
        let mut e = AckTrainEstimator::new(16, 1);
        let mut path = Path::new(LINK);
        // Paced at 0.9 x the link: the ACKs are the pacer's spacing.
        let gap = SIZE as f64 / (0.9 * LINK);
        let samples = train(&mut e, &mut path, 0, 0.0, gap, 64, 2);
        assert!(samples.is_empty(), "{samples:?}");
        assert_eq!(e.capacity(), None);
    }

    #[test]
    fn without_the_busy_test_the_pacer_reads_as_the_link() {
        // The same flow paced at half the link, with the check switched off:
        // its own rate would pass for the link's.
        let mut path = Path::new(LINK);
        let gap = SIZE as f64 / (0.5 * LINK);
        let mut e = AckTrainEstimator::new(16, 1);
        e.busy_send_fraction = f64::INFINITY;
        train(&mut e, &mut path, 0, 0.0, gap, 32, 2);
        let c = e.capacity().expect("every span passes");
        assert!((c - 0.5 * LINK).abs() / LINK < 0.01, "{c}");
    }

    #[test]
    fn a_reported_ack_delay_is_taken_out_of_the_span() {
        let mut e = AckTrainEstimator::new(16, 1);
        let t0 = Instant::now();
        let serialise = Duration::from_secs_f64(SIZE as f64 / LINK);
        let mut acks = Vec::new();
        for n in 0..4u64 {
            // Packets 2n and 2n+1 sent at t0; received 2 serialisations
            // apart; the receiver held the ACK of the last pair 20 ms.
            let received = t0 + Duration::from_millis(300) + serialise * (2 * n as u32 + 2);
            let delay = if n == 3 {
                Duration::from_millis(20)
            } else {
                Duration::ZERO
            };
            let now = received + Duration::from_millis(300) + delay;
            acks.push((n, now, delay));
        }
        for (n, now, delay) in acks {
            let acked = [
                AckedPacket::new(2 * n, SIZE, t0, now),
                AckedPacket::new(2 * n + 1, SIZE, t0, now),
            ];
            e.on_ack(
                &AckEvent {
                    now,
                    acked: &acked,
                    summary: crate::events::AckSummary::of(&acked, 0),
                    ack_delay: delay,
                    rtt: RttSnapshot::uniform(Duration::from_millis(600)),
                    bytes_in_flight: 0,
                    app_limited: false,
                    backward_queueing: None,
                },
                SIZE,
            );
        }
        let c = e.capacity().unwrap();
        assert!((c - LINK).abs() / LINK < 1e-6, "{c}");
    }

    #[test]
    fn an_untrusted_ack_delay_breaks_the_train() {
        let mut e = AckTrainEstimator::new(16, 1);
        let t0 = Instant::now();
        let now = t0 + Duration::from_millis(700);
        let acked = [
            AckedPacket::new(0, SIZE, t0, now),
            AckedPacket::new(1, SIZE, t0, now),
        ];
        let ack = AckEvent {
            now,
            acked: &acked,
            summary: crate::events::AckSummary::of(&acked, 0),
            ack_delay: Duration::from_secs(1),
            rtt: RttSnapshot::uniform(Duration::from_millis(600)),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        };
        assert_eq!(e.on_ack(&ack, SIZE), None);
        assert!(e.arrivals.is_empty());
    }

    #[test]
    fn one_compressed_pair_of_acks_does_not_move_the_median() {
        let mut e = AckTrainEstimator::new(16, 3);
        let mut path = Path::new(LINK);
        train(&mut e, &mut path, 0, 0.0, 0.0, 20, 2);
        let before = e.capacity().unwrap();
        // Two ACKs 10 µs apart, as if released together from a queue.
        let t = Instant::now() + Duration::from_secs(5);
        for (i, n) in [(0u32, 100u64), (1, 102)] {
            let now = t + Duration::from_micros(10) * i;
            let acked = [
                AckedPacket::new(n, SIZE, t - Duration::from_millis(600), now),
                AckedPacket::new(n + 1, SIZE, t - Duration::from_millis(600), now),
            ];
            e.on_ack(
                &AckEvent {
                    now,
                    acked: &acked,
                    summary: crate::events::AckSummary::of(&acked, 0),
                    ack_delay: Duration::ZERO,
                    rtt: RttSnapshot::uniform(Duration::from_millis(600)),
                    bytes_in_flight: 0,
                    app_limited: false,
                    backward_queueing: None,
                },
                SIZE,
            );
        }
        let after = e.capacity().unwrap();
        assert!((after - before).abs() / before < 0.01, "{before} {after}");
    }

    #[test]
    fn packets_acknowledged_late_do_not_count() {
        let mut e = AckTrainEstimator::new(16, 1);
        let mut path = Path::new(LINK);
        train(&mut e, &mut path, 10, 0.0, 0.0, 10, 1);
        let delivered = e.delivered;
        // An ACK of packet 5 (below the largest acknowledged, 19) only.
        let now = Instant::now() + Duration::from_secs(3);
        let acked = [AckedPacket::new(5, SIZE, now, now)];
        let ack = AckEvent {
            now,
            acked: &acked,
            summary: crate::events::AckSummary::of(&acked, 0),
            ack_delay: Duration::ZERO,
            rtt: RttSnapshot::uniform(Duration::from_millis(600)),
            bytes_in_flight: 0,
            app_limited: false,
            backward_queueing: None,
        };
        assert_eq!(e.on_ack(&ack, SIZE), None);
        assert_eq!(e.delivered, delivered);
    }

    /// Trains of `train` back-to-back packets, one train every `train`
    /// packets' time at `pace` bytes/s, each packet acknowledged at once;
    /// each ACK's return delay gets a uniform extra below `jitter` on a FIFO
    /// wire (an ACK never overtakes the one before, as vegas-sim's links).
    /// Returns the estimator's capacity at the end.
    fn jittered_trains(
        e: &mut AckTrainEstimator,
        pace: f64,
        train: u64,
        count: u64,
        jitter: Duration,
    ) -> Option<f64> {
        let mut path = Path::new(LINK);
        // A fixed linear congruential generator: the test's own draws.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut last_arrival = 0.0f64;
        let half_rtt = path.rtt.as_secs_f64() / 2.0;
        for n in 0..count {
            let sent = (n / train * train) as f64 * SIZE as f64 / pace;
            let at_receiver = path.depart(sent) + half_rtt;
            let arrival =
                (at_receiver + half_rtt + uniform() * jitter.as_secs_f64()).max(last_arrival);
            last_arrival = arrival;
            let now = path.at(arrival);
            let acked = [AckedPacket::new(n, SIZE, path.at(sent), now)];
            e.on_ack(
                &AckEvent {
                    now,
                    acked: &acked,
                    ack_delay: Duration::ZERO,
                    rtt: RttSnapshot::uniform(path.rtt),
                    bytes_in_flight: 0,
                    app_limited: false,
                    backward_queueing: None,
                    summary: crate::events::AckSummary::of(&acked, 0),
                },
                SIZE,
            );
        }
        e.capacity()
    }

    #[test]
    fn jittered_acks_of_trains_paced_as_start_up_read_the_link() {
        // Trains of 8 paced at 0.95 x the link (start-up's cap), 10 ms of
        // return jitter, 8000 packets: the sums of the send-side steps read
        // the link within 5 % (the last 512 steps span about 280 ms of
        // ACKs: the jitter left in them is a few per cent); the
        // longest-busy-span median keeps the stretched steps and reads 10 %
        // low. (Measured with this path: paced at 0.8 x the link the sums
        // read 0.885 and the median 0.758; the bottleneck idling between
        // trains lets each train's ACK delays rise through the train, which
        // no choice of steps inside the trains undoes.)
        let jitter = Duration::from_millis(10);
        let mut steps = AckTrainEstimator::with_rule(128, 4, SpanRule::SendSideSteps);
        let c = jittered_trains(&mut steps, 0.95 * LINK, 8, 8000, jitter).unwrap();
        assert!((c - LINK).abs() / LINK < 0.05, "{c}");
        let mut spans = AckTrainEstimator::with_rule(128, 4, SpanRule::LongestBusySpan);
        let old = jittered_trains(&mut spans, 0.95 * LINK, 8, 8000, jitter).unwrap();
        assert!(old < 0.92 * LINK, "{old}");
    }

    #[test]
    fn steps_between_trains_paced_below_the_estimate_are_left_out() {
        // Trains of 8 paced at 0.6 x the link, no jitter: only the steps
        // inside a train found the bottleneck busy.
        let mut e = AckTrainEstimator::with_rule(128, 4, SpanRule::SendSideSteps);
        let c = jittered_trains(&mut e, 0.6 * LINK, 8, 2000, Duration::ZERO).unwrap();
        assert!((c - LINK).abs() / LINK < 0.01, "{c}");
        // Every step kept, the sums are the sender's own rate.
        let mut all = AckTrainEstimator::with_rule(128, 4, SpanRule::SendSideSteps);
        all.busy_send_fraction = f64::INFINITY;
        let c = jittered_trains(&mut all, 0.6 * LINK, 8, 2000, Duration::ZERO).unwrap();
        assert!((c - 0.6 * LINK).abs() / LINK < 0.02, "{c}");
    }

    #[test]
    fn an_ack_that_seems_earlier_than_the_one_before_still_counts() {
        // Three ACKs one serialisation apart; the second reports an ACK
        // delay of a serialisation plus 1 ms, so its receive time falls
        // 1 ms before the first's. Its step counts with its negative gap,
        // and the two steps together span two serialisations: the link.
        // Dropped, the remaining step (two serialisations plus 1 ms for one
        // packet) would read less than half of it.
        let mut e = AckTrainEstimator::with_rule(2, 1, SpanRule::SendSideSteps);
        let t0 = Instant::now();
        let serialise = Duration::from_secs_f64(SIZE as f64 / LINK);
        let delays = [
            Duration::ZERO,
            serialise + Duration::from_millis(1),
            Duration::ZERO,
        ];
        for (n, delay) in delays.into_iter().enumerate() {
            let now = t0 + Duration::from_millis(600) + serialise * (n as u32 + 1);
            let acked = [AckedPacket::new(n as u64, SIZE, t0, now)];
            e.on_ack(
                &AckEvent {
                    now,
                    acked: &acked,
                    ack_delay: delay,
                    rtt: RttSnapshot::uniform(Duration::from_millis(600)),
                    bytes_in_flight: 0,
                    app_limited: false,
                    backward_queueing: None,
                    summary: crate::events::AckSummary::of(&acked, 0),
                },
                SIZE,
            );
        }
        assert_eq!(e.steps.len(), 2);
        let c = e.capacity().unwrap();
        assert!((c - LINK).abs() / LINK < 1e-6, "{c}");
    }

    #[test]
    fn the_sums_wait_for_a_window_of_steps_and_the_median_stands_in() {
        // A back-to-back burst acknowledged packet by packet. Ten packets
        // (the initial window) are nine steps: with a window of 128 the sums
        // are not yet used and the estimate is the median rule's; with a
        // window of 4 they are, and read the link (no jitter).
        let mut path = Path::new(LINK);
        let mut early = AckTrainEstimator::with_rule(128, 3, SpanRule::SendSideSteps);
        train(&mut early, &mut path, 0, 0.0, 0.0, 10, 1);
        assert_eq!(early.steps.len(), 9);
        assert_eq!(early.capacity(), early.median);
        let mut path = Path::new(LINK);
        let mut summed = AckTrainEstimator::with_rule(4, 3, SpanRule::SendSideSteps);
        train(&mut summed, &mut path, 0, 0.0, 0.0, 20, 1);
        let sums = summed.step_bytes as f64 / summed.step_secs;
        assert_eq!(summed.capacity(), Some(sums));
        assert!((sums - LINK).abs() / LINK < 1e-6, "{sums}");
        // Nineteen steps, of which the sums keep STEP_WINDOW_FACTOR x 4.
        assert_eq!(summed.steps.len(), 4 * STEP_WINDOW_FACTOR);
    }

    /// One ACK frame of `acked` arriving at `now` on the 600 ms path, with
    /// no ACK delay and nothing else reported.
    fn ack_at(e: &mut AckTrainEstimator, acked: &[AckedPacket], now: Instant) {
        e.on_ack(
            &AckEvent {
                now,
                acked,
                ack_delay: Duration::ZERO,
                rtt: RttSnapshot::uniform(Duration::from_millis(600)),
                bytes_in_flight: 0,
                app_limited: false,
                backward_queueing: None,
                summary: crate::events::AckSummary::of(acked, 0),
            },
            SIZE,
        );
    }

    /// `count` packets (numbered from `first_pkt`) sent back to back at `t0` through a bottleneck of
    /// `link` bytes/s, each acknowledged at once; the return link releases
    /// ACKs only every `period` (a clump's ACKs 50 µs apart), or, with a
    /// zero period, as they come. Returns the first estimate published and
    /// the estimate after the last ACK.
    fn clumped_window(
        e: &mut AckTrainEstimator,
        link: f64,
        (first_pkt, t0): (u64, Instant),
        count: u64,
        period: Duration,
    ) -> (Option<f64>, Option<f64>) {
        let serialise = SIZE as f64 / link;
        let period = period.as_secs_f64();
        let mut first = None;
        let mut last_release = f64::NEG_INFINITY;
        for n in 0..count {
            let at_receiver = serialise * (n + 1) as f64;
            let mut release = if period > 0.0 {
                (at_receiver / period).ceil() * period
            } else {
                at_receiver
            };
            if release <= last_release {
                release = last_release + 50e-6;
            }
            last_release = release;
            let now = t0 + Duration::from_millis(600) + Duration::from_secs_f64(release);
            let acked = [AckedPacket::new(first_pkt + n, SIZE, t0, now)];
            ack_at(e, &acked, now);
            first = first.or(e.capacity());
        }
        (first, e.capacity())
    }

    const SLOT: f64 = 5e5; // 4 Mbit/s, a Starlink-like slot
    const CLUMPS: Duration = Duration::from_millis(12);

    #[test]
    fn acks_released_in_clumps_read_many_times_the_link_without_the_guard() {
        // Three of the first four samples lie inside the first clump.
        let mut e = AckTrainEstimator::new(16, 4);
        let (first, _) = clumped_window(&mut e, SLOT, (0, Instant::now()), 24, CLUMPS);
        let first = first.expect("four samples");
        assert!(first > 10.0 * SLOT, "{first}");
    }

    #[test]
    fn the_clump_guard_waits_for_spans_across_two_clump_gaps() {
        // Reference: every trusted span covers at least two 12 ms releases,
        // so its bytes are off by at most the packets of one clump (five at
        // 2.7 ms a packet) over at least 14 packets (>= 24 ms of span at
        // 5.4 packets a period's worth): within 5/14 of the link.
        let mut e = AckTrainEstimator::new(16, 4).with_clump_guard(true);
        let (first, _) = clumped_window(&mut e, SLOT, (0, Instant::now()), 24, CLUMPS);
        let first = first.expect("four samples across clumps");
        assert!((first - SLOT).abs() / SLOT < 5.0 / 14.0, "{first}");
    }

    #[test]
    fn evenly_spaced_acks_pass_the_clump_guard_from_two_steps() {
        // The longest gap is one serialisation: the samples spanning two
        // steps or more are trusted and read the link exactly; the guard
        // costs the first sample (one step), so the estimate is published
        // one ACK later than without it.
        let t0 = Instant::now();
        let published_at = |guard: bool| {
            (1..=12u64).find_map(|n| {
                let mut e = AckTrainEstimator::new(16, 4).with_clump_guard(guard);
                let (first, _) = clumped_window(&mut e, LINK, (0, t0), n, Duration::ZERO);
                first.map(|c| (n, c))
            })
        };
        let (n_off, c_off) = published_at(false).unwrap();
        let (n_on, c_on) = published_at(true).unwrap();
        assert_eq!(n_off, 5);
        assert_eq!(n_on, n_off + 1);
        assert!((c_on - LINK).abs() / LINK < 1e-6, "{c_on}");
        assert!((c_off - LINK).abs() / LINK < 1e-6, "{c_off}");
    }

    #[test]
    fn after_the_first_estimate_the_guard_lets_every_span_count() {
        // Once published, short spans count again: the median over the
        // whole window is the unguarded one.
        let t0 = Instant::now();
        let mut guarded = AckTrainEstimator::new(16, 4).with_clump_guard(true);
        let mut plain = AckTrainEstimator::new(16, 4);
        clumped_window(&mut guarded, SLOT, (0, t0), 40, CLUMPS);
        clumped_window(&mut plain, SLOT, (0, t0), 40, CLUMPS);
        assert!(guarded.published);
        assert_eq!(guarded.recent, plain.recent);
        assert_eq!(guarded.capacity(), median_of(&plain.recent));
    }

    #[test]
    fn a_gap_where_the_sender_paused_is_not_a_clump() {
        // Two back-to-back trains 300 ms apart, ACKs as they come: the gap
        // between the trains is the sender's (send gap 300 ms > 0.8 x its
        // ACK gap), so the longest busy gap stays one serialisation.
        let mut e = AckTrainEstimator::new(16, 4).with_clump_guard(true);
        let t0 = Instant::now();
        let serialise = SIZE as f64 / LINK;
        for n in 0..8u64 {
            let train = n / 4;
            let sent = t0 + Duration::from_millis(300) * train as u32;
            let now = sent
                + Duration::from_millis(600)
                + Duration::from_secs_f64(serialise * (n % 4 + 1) as f64);
            let acked = [AckedPacket::new(n, SIZE, sent, now)];
            ack_at(&mut e, &acked, now);
        }
        assert!(
            (e.longest_busy_gap - serialise).abs() < 1e-6,
            "{}",
            e.longest_busy_gap
        );
    }

    #[test]
    fn a_reset_arms_the_guard_again() {
        let t0 = Instant::now();
        let mut e = AckTrainEstimator::new(16, 4).with_clump_guard(true);
        clumped_window(&mut e, SLOT, (0, t0), 40, CLUMPS);
        assert!(e.published);
        e.reset();
        assert!(!e.published);
        assert_eq!(e.longest_busy_gap, 0.0);
        let later = (40, t0 + Duration::from_secs(2));
        let (first, _) = clumped_window(&mut e, SLOT, later, 24, CLUMPS);
        let first = first.unwrap();
        assert!((first - SLOT).abs() / SLOT < 5.0 / 14.0, "{first}");
    }

    #[test]
    fn the_first_estimate_capped_by_the_step_sums_reads_the_clumps_gap() {
        // Reference: the first estimate comes with the fourth sample, at
        // the first ACK of the second clump (packet 4, released at 24 ms);
        // the busy steps so far are packets 1-4 over the ACK time from
        // packet 0's release (12 ms) to it: 4 x 1350 bytes over 12 ms.
        let reference = 4.0 * SIZE as f64 / 0.012;
        let mut capped =
            AckTrainEstimator::with_rule(16, 4, SpanRule::SendSideSteps).with_first_sum_cap(true);
        let (first, _) = clumped_window(&mut capped, SLOT, (0, Instant::now()), 24, CLUMPS);
        let first = first.expect("four samples");
        assert!(
            (first - reference).abs() / reference < 1e-6,
            "{first} {reference}"
        );
        // Without the cap the median of three in-clump samples and one
        // across the gap reads many times the link.
        let mut plain = AckTrainEstimator::with_rule(16, 4, SpanRule::SendSideSteps);
        let (first, _) = clumped_window(&mut plain, SLOT, (0, Instant::now()), 24, CLUMPS);
        assert!(first.unwrap() > 10.0 * SLOT);
    }

    #[test]
    fn the_step_sum_cap_never_raises_the_median() {
        // Evenly spaced ACKs: the sums and the median both read the link,
        // and the estimate is published at the same ACK either way.
        let t0 = Instant::now();
        for cap in [false, true] {
            let mut e = AckTrainEstimator::with_rule(16, 4, SpanRule::SendSideSteps)
                .with_first_sum_cap(cap);
            let (first, _) = clumped_window(&mut e, LINK, (0, t0), 5, Duration::ZERO);
            let first = first.expect("published after five packets");
            assert!((first - LINK).abs() / LINK < 1e-6, "{cap}: {first}");
        }
    }

    #[test]
    fn the_step_sum_cap_needs_the_send_side_steps() {
        // The longest-busy-span rule keeps no steps: nothing to cap with,
        // the estimate is the median's.
        let t0 = Instant::now();
        let mut capped = AckTrainEstimator::new(16, 4).with_first_sum_cap(true);
        let mut plain = AckTrainEstimator::new(16, 4);
        let a = clumped_window(&mut capped, SLOT, (0, t0), 24, CLUMPS);
        let b = clumped_window(&mut plain, SLOT, (0, t0), 24, CLUMPS);
        assert_eq!(a, b);
    }

    #[test]
    fn after_the_first_estimate_the_step_sum_cap_lets_the_median_stand() {
        let t0 = Instant::now();
        let mut capped =
            AckTrainEstimator::with_rule(128, 4, SpanRule::SendSideSteps).with_first_sum_cap(true);
        let mut plain = AckTrainEstimator::with_rule(128, 4, SpanRule::SendSideSteps);
        let (first, last) = clumped_window(&mut capped, SLOT, (0, t0), 24, CLUMPS);
        let (first_plain, last_plain) = clumped_window(&mut plain, SLOT, (0, t0), 24, CLUMPS);
        assert!(first < first_plain);
        assert_eq!(last, last_plain);
    }

    /// `trains` trains of `per_train` packets, each train sent at one
    /// instant, `train_gap` apart, through a bottleneck of `link` bytes/s,
    /// each packet acknowledged at once; the return link releases the ACKs
    /// only at the starts of `frame`-long frames (those of one frame 1 µs
    /// apart), or, with a zero frame, as they come. Returns the estimator.
    fn framed_trains(
        guard: bool,
        link: f64,
        (trains, per_train, train_gap): (u64, u64, f64),
        frame: f64,
    ) -> AckTrainEstimator {
        let mut e = AckTrainEstimator::with_rule(16, 4, SpanRule::SendSideSteps)
            .with_first_sum_cap(true)
            .with_bunch_guard(guard);
        let t0 = Instant::now();
        let serialise = SIZE as f64 / link;
        let mut last_release = f64::NEG_INFINITY;
        for n in 0..trains * per_train {
            let sent = train_gap * (n / per_train) as f64;
            let at_receiver = sent + serialise * (n % per_train + 1) as f64;
            let mut release = if frame > 0.0 {
                (at_receiver / frame).ceil() * frame
            } else {
                at_receiver
            };
            if release <= last_release {
                release = last_release + 1e-6;
            }
            last_release = release;
            let now = t0 + Duration::from_secs_f64(0.6 + release);
            let acked = [AckedPacket::new(
                n,
                SIZE,
                t0 + Duration::from_secs_f64(sent),
                now,
            )];
            ack_at(&mut e, &acked, now);
        }
        e
    }

    /// fau-sat's start-up without stamps: trains of 8 every 120 ms on
    /// 20 Mbit/s (a train takes 4.4 ms at the bottleneck).
    const START_UP_TRAINS: (u64, u64, f64) = (24, 8, 0.12);

    #[test]
    fn acks_bunched_by_a_framed_return_link_give_no_capacity() {
        // 24 ms frames: most trains' ACKs come in one frame, at one instant.
        // Without the guard the step sums read several times the link
        // (every step inside a train has no time, the few a frame boundary
        // cuts have a whole frame's).
        let plain = framed_trains(false, LINK, START_UP_TRAINS, 0.024);
        let c = plain.capacity().expect("an estimate without the guard");
        assert!(c > 3.0 * LINK, "{c}");
        let guarded = framed_trains(true, LINK, START_UP_TRAINS, 0.024);
        assert!(guarded.bunched());
        assert_eq!(guarded.capacity(), None);
    }

    #[test]
    fn evenly_spaced_acks_keep_the_guarded_capacity() {
        // ACKs as they come: no step inside a train is bunched, and the
        // guarded estimate is the plain one, within a part in a million of
        // the link.
        let plain = framed_trains(false, LINK, START_UP_TRAINS, 0.0);
        let guarded = framed_trains(true, LINK, START_UP_TRAINS, 0.0);
        assert!(!guarded.bunched());
        let c = guarded.capacity().expect("an estimate");
        assert_eq!(Some(c), plain.capacity());
        assert!((c - LINK).abs() / LINK < 1e-6, "{c}");
    }

    #[test]
    fn the_guard_waits_for_four_steps_inside_trains() {
        // A back-to-back train of five packets, ACKs as they come: four
        // steps inside it, the first of which sets the usual gap. Four
        // packets give three steps: no capacity with the guard yet.
        let guarded = framed_trains(true, LINK, (1, 4, 0.12), 0.0);
        assert_eq!(guarded.capacity(), None);
        assert!(!guarded.bunched());
        let guarded = framed_trains(true, LINK, (1, 5, 0.12), 0.0);
        let plain = framed_trains(false, LINK, (1, 5, 0.12), 0.0);
        assert!(guarded.capacity().is_some());
        assert_eq!(guarded.capacity(), plain.capacity());
    }

    #[test]
    fn acks_microseconds_apart_are_bunched_from_the_first_step() {
        // 96 ms frames: the first trains' ACKs all come in the first frame,
        // 1 µs apart (0.74 ns a byte, faster than 8 Gbit/s): bunched before
        // any frame boundary has set what is usual.
        let e = framed_trains(true, LINK, (2, 8, 0.012), 0.096);
        assert!(e.bunched());
        assert_eq!(e.capacity(), None);
    }

    #[test]
    fn a_reset_forgets_the_bunching() {
        let mut e = framed_trains(true, LINK, START_UP_TRAINS, 0.024);
        assert!(e.bunched());
        e.reset();
        assert!(!e.bunched());
        assert_eq!(e.capacity(), None);
    }

    #[test]
    fn median_without_allocation_matches_a_sort() {
        let values: VecDeque<f64> = [5.0, 1.0, 4.0, 2.0].into_iter().collect();
        assert_eq!(median_of(&values), Some(3.0));
        let odd: VecDeque<f64> = [9.0, 1.0, 4.0].into_iter().collect();
        assert_eq!(median_of(&odd), Some(4.0));
        let many: VecDeque<f64> = (0..201).map(|i| i as f64).collect();
        assert_eq!(median_of(&many), Some(100.0));
    }
}

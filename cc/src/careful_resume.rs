//! Careful Resume (RFC 9959, draft-ietf-tsvwg-careful-resume): a sender that
//! measured a path's capacity and RTT on an earlier connection jumps to half
//! that capacity once the new connection's RTT confirms the path, paces the
//! jump over one RTT, validates it, and retreats safely if it was wrong.
//!
//! This is the phase machine, written once for every controller: the host
//! ([`crate::host::ControllerHost`]) feeds it the same events it feeds the
//! controller, overrides the controller's cwnd and pacing while the window is
//! unvalidated, and applies the window changes it returns through
//! [`crate::controller::CongestionController::set_window`]. No algorithm file
//! knows about it.
//!
//! Choices where the text leaves room (each is documented in
//! `docs/careful-resume.md`):
//! - "initial data acknowledged" (section 3.2): an ACK that leaves nothing in
//!   flight (the server's handshake flight, acknowledged by the client's
//!   Finished), or initial-window bytes acknowledged since the start;
//! - "current RTT" for pacing the jump (section 4.3): the smoothed RTT at the
//!   jump; the RTT check uses the minimum RTT (too small) and the latest
//!   sample (too large);
//! - the jump is taken when the sender becomes cwnd-limited (section 3.2
//!   allows deferring it to then);
//! - in Safe Retreat, losses of packets sent before the retreat are not
//!   passed to the controller: the retreat is the reaction to them (section
//!   3.5: "loss recovery commences using the reduced CWND").

use std::time::{Duration, Instant};

use crate::controller::{Internals, KeyedGeneration, Pacing, MINIMUM_WINDOW_PACKETS};
use crate::events::{AckEvent, AckedPacket, RttSnapshot};
use crate::shared::ack_train::AckTrainEstimator;
use crate::shared::round_clock::full_size_floor;

/// What an earlier connection measured on the path (section 3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SavedPath {
    /// saved_cwnd: bytes acknowledged in one RTT.
    pub cwnd_bytes: u64,
    /// saved_rtt: the minimum RTT.
    pub rtt: Duration,
}

/// Careful Resume for one connection: whether it is on and what it may
/// reuse. `Copy`, so that it rides in the controller spec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CarefulResumeConfig {
    pub saved: Option<SavedPath>,
    pub loss_rule: LossRule,
}

/// Which losses during the Unvalidated and Validating phases mean that
/// "congestion was experienced" (RFC 9959 section 4.4) and make the sender
/// retreat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossRule {
    /// Every loss, as the RFC's text reads.
    Any,
    /// A loss while the RTT shows a queue (latest RTT above the minimum by
    /// more than [`QUEUE_SIGNAL_RTT_DIVISOR`]th of it), or once more than
    /// [`RANDOM_LOSS_BUDGET`] of the packets sent since the jump were lost.
    /// Other losses are random (a satellite link's bit errors): the
    /// controller is told, as outside Careful Resume, and the jump goes on.
    /// A jump onto a narrower path overflows its buffer: the queue shows in
    /// the RTT before the first loss is detected, and the losses exceed the
    /// budget within the jump.
    #[default]
    QueueSignal,
}

impl LossRule {
    pub const WORDS: &'static [&'static str] = &["any", "queue"];

    pub fn as_str(self) -> &'static str {
        match self {
            LossRule::Any => "any",
            LossRule::QueueSignal => "queue",
        }
    }

    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "any" => Some(LossRule::Any),
            "queue" => Some(LossRule::QueueSignal),
            _ => None,
        }
    }
}

/// [`LossRule::QueueSignal`]: a queue of more than min RTT / 8 (75 ms at
/// GEO's 600 ms; a full 25-packet buffer at 2 Mbit/s holds 135 ms) makes a
/// loss congestion.
pub const QUEUE_SIGNAL_RTT_DIVISOR: u32 = 8;
/// [`LossRule::QueueSignal`]: losses beyond this fraction of the packets
/// sent since the jump are congestion whatever the RTT (five times a
/// lossy satellite link's 1 %).
pub const RANDOM_LOSS_BUDGET: f64 = 0.05;

/// The phases of section 3, named as draft-ietf-tsvwg-careful-resume-qlog
/// names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Reconnaissance,
    Unvalidated,
    Validating,
    SafeRetreat,
    Normal,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Reconnaissance => "reconnaissance",
            Phase::Unvalidated => "unvalidated",
            Phase::Validating => "validating",
            Phase::SafeRetreat => "safe_retreat",
            Phase::Normal => "normal",
        }
    }
}

/// Why the phase changed (the qlog draft's triggers; `NoSavedState` is
/// ours: the draft logs no trigger when there is nothing to resume).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    NoSavedState,
    CongestionWindowLimited,
    RttNotValidated,
    LastUnvalidatedPacketSent,
    FirstUnvalidatedPacketAcknowledged,
    RttExceeded,
    RateLimited,
    LastUnvalidatedPacketAcknowledged,
    PathChanged,
    PacketLoss,
    ExitRecovery,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::NoSavedState => "no_saved_state",
            Trigger::CongestionWindowLimited => "congestion_window_limited",
            Trigger::RttNotValidated => "rtt_not_validated",
            Trigger::LastUnvalidatedPacketSent => "last_unvalidated_packet_sent",
            Trigger::FirstUnvalidatedPacketAcknowledged => "first_unvalidated_packet_acknowledged",
            Trigger::RttExceeded => "rtt_exceeded",
            Trigger::RateLimited => "rate_limited",
            Trigger::LastUnvalidatedPacketAcknowledged => "last_unvalidated_packet_acknowledged",
            Trigger::PathChanged => "path_changed",
            Trigger::PacketLoss => "packet_loss",
            Trigger::ExitRecovery => "exit_recovery",
        }
    }
}

/// A window the host must give the wrapped controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetWindow {
    pub cwnd: usize,
    /// `None`: keep the controller's.
    pub ssthresh: Option<usize>,
}

/// Section 4.3's ssthresh factor on leaving Safe Retreat.
const RETREAT_BETA: f64 = 0.5;
/// Section 4.2.1: a current RTT below half the saved one, or above ten
/// times, means another path.
const RTT_TOO_SMALL_DIVISOR: u32 = 2;
const RTT_TOO_LARGE_FACTOR: u32 = 10;
/// Section 3.1: a measured window below four initial windows is not worth
/// saving.
const MIN_SAVED_IW_MULTIPLE: usize = 4;

#[derive(Clone, Debug)]
pub struct CarefulResume {
    saved: Option<SavedPath>,
    phase: Phase,
    trigger: Option<Trigger>,
    /// Bumped on every phase change, so that a change back and forth between
    /// two qlog reports still shows.
    changes: u64,
    max_datagram_size: usize,
    initial_cwnd: usize,
    pipesize: usize,
    jump_cwnd: usize,
    first_unvalidated: Option<u64>,
    last_unvalidated: Option<u64>,
    unvalidated_since: Option<Instant>,
    /// The RTT the jump is paced over.
    jump_rtt: Duration,
    largest_sent: Option<u64>,
    recon_acked: usize,
    initial_data_acked: bool,
    /// A packet sent in Reconnaissance filled the window or waited for the
    /// pacer: the sender had more data than the window let out.
    window_limited: bool,
    last_rtt: Option<RttSnapshot>,
    retreat_cwnd: usize,
    retreat_since: Option<Instant>,
    /// Section 3.5: the saved parameters must not be used again.
    saved_discarded: bool,
    loss_rule: LossRule,
    /// Packets sent, and packets lost, since the jump (for the loss rule).
    sent_since_jump: u64,
    lost_since_jump: u64,
    /// This connection's own view of the path before the jump: the
    /// capacity the initial window's ACK trains show.
    path_capacity: AckTrainEstimator,
    internals_generation: KeyedGeneration<CrInternalsKey>,
}

/// Everything of [`CarefulResume`] its qlog fields are made of.
#[derive(Clone, Copy, Debug, PartialEq)]
struct CrInternalsKey {
    phase: Phase,
    trigger: Option<Trigger>,
    changes: u64,
    pipesize: usize,
    first_unvalidated: Option<u64>,
    last_unvalidated: Option<u64>,
    saved: Option<SavedPath>,
    jump_cwnd: usize,
    path_capacity: Option<f64>,
}

/// ACK-train samples of the initial window needed before its capacity
/// bounds the jump.
pub const PATH_CAPACITY_MIN_SAMPLES: usize = 2;

/// No saved window is taken to mean a rate above this (10 Gbit/s): a store
/// entry beyond it is forged or corrupt, and the jump is at most this rate
/// times the saved RTT.
pub const MAX_RESUME_BYTES_PER_SEC: f64 = 1.25e9;

impl CarefulResume {
    pub fn new(config: CarefulResumeConfig, max_datagram_size: usize, initial_cwnd: usize) -> Self {
        let mut cr = CarefulResume {
            saved: config.saved,
            phase: Phase::Reconnaissance,
            trigger: None,
            changes: 0,
            max_datagram_size,
            initial_cwnd,
            pipesize: 0,
            jump_cwnd: 0,
            first_unvalidated: None,
            last_unvalidated: None,
            unvalidated_since: None,
            jump_rtt: Duration::ZERO,
            largest_sent: None,
            recon_acked: 0,
            initial_data_acked: false,
            window_limited: false,
            last_rtt: None,
            retreat_cwnd: 0,
            retreat_since: None,
            saved_discarded: false,
            loss_rule: config.loss_rule,
            sent_since_jump: 0,
            lost_since_jump: 0,
            path_capacity: AckTrainEstimator::new(64, PATH_CAPACITY_MIN_SAMPLES),
            internals_generation: KeyedGeneration::default(),
        };
        // Section 3.2: no saved parameters, nothing to resume.
        if config
            .saved
            .is_none_or(|s| s.cwnd_bytes == 0 || s.rtt.is_zero())
        {
            cr.enter(Phase::Normal, Trigger::NoSavedState);
        }
        cr
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn trigger(&self) -> Option<Trigger> {
        self.trigger
    }

    pub fn pipesize(&self) -> usize {
        self.pipesize
    }

    pub fn jump_cwnd(&self) -> usize {
        self.jump_cwnd
    }

    /// Whether a Safe Retreat told the application to forget the saved
    /// parameters.
    pub fn saved_discarded(&self) -> bool {
        self.saved_discarded
    }

    fn minimum_window(&self) -> usize {
        self.max_datagram_size * MINIMUM_WINDOW_PACKETS
    }

    fn enter(&mut self, phase: Phase, trigger: Trigger) {
        self.phase = phase;
        self.trigger = Some(trigger);
        self.changes += 1;
    }

    /// The window the stack uses, given the controller's.
    pub fn cwnd(&self, controller_cwnd: usize) -> usize {
        match self.phase {
            Phase::Unvalidated => self.jump_cwnd.max(controller_cwnd),
            // Section 3.5: the window is not increased in Safe Retreat.
            Phase::SafeRetreat => controller_cwnd.min(self.retreat_cwnd),
            _ => controller_cwnd,
        }
    }

    /// The pacing the stack uses, given the controller's. Section 4.3: the
    /// jump is paced at jump_cwnd per current RTT, in bursts of at most the
    /// initial window.
    pub fn pacing(&self, controller: Option<Pacing>) -> Option<Pacing> {
        if self.phase != Phase::Unvalidated || self.jump_rtt.is_zero() {
            return controller;
        }
        Some(Pacing::spaced(
            self.jump_cwnd as f64 / self.jump_rtt.as_secs_f64(),
            (self.initial_cwnd / self.max_datagram_size.max(1)).max(1),
        ))
    }

    /// Section 4.2.1 against the saved RTT.
    fn rtt_confirmed(&self, rtt: &RttSnapshot) -> bool {
        let Some(saved) = self.saved else {
            return false;
        };
        rtt.min_rtt >= saved.rtt / RTT_TOO_SMALL_DIVISOR
            && rtt.latest_rtt <= saved.rtt * RTT_TOO_LARGE_FACTOR
    }

    /// A packet left; `flight` counts it. `pacing_limited`: the pacer held
    /// this packet back, so the sender had it ready before the controller
    /// let it out. Returns a window for the controller when the phase change
    /// sets one.
    pub fn on_packet_sent(
        &mut self,
        now: Instant,
        pkt_num: u64,
        flight: usize,
        controller_cwnd: usize,
        pacing_limited: bool,
    ) -> Option<SetWindow> {
        self.largest_sent = Some(self.largest_sent.map_or(pkt_num, |l| l.max(pkt_num)));
        if matches!(self.phase, Phase::Unvalidated | Phase::Validating) {
            self.sent_since_jump += 1;
        }
        match self.phase {
            Phase::Reconnaissance => {
                self.maybe_jump(now, pkt_num, flight, controller_cwnd, pacing_limited)
            }
            Phase::Unvalidated => {
                if self.rtt_exceeded(now) {
                    return Some(self.leave_unvalidated(Trigger::RttExceeded, flight));
                }
                // No room for another full packet in the jumped window.
                if flight + self.max_datagram_size > self.jump_cwnd {
                    return Some(
                        self.leave_unvalidated(Trigger::LastUnvalidatedPacketSent, flight),
                    );
                }
                None
            }
            _ => None,
        }
    }

    /// Section 3.2: the path is confirmed, the initial data acknowledged
    /// without congestion, and the sender has more data ready than the
    /// window allows. Two signs of that: a packet filled the window, or
    /// the controller's pacer held it back (a controller that paces its
    /// initial window over an RTT fills it only an RTT later, while the
    /// data has been waiting all along). Either, seen at any packet of
    /// Reconnaissance, counts: a controller that sends its initial window
    /// at once fills it before the initial data is acknowledged, and after
    /// that slow start's growth may never fill it again before the next
    /// round.
    fn maybe_jump(
        &mut self,
        now: Instant,
        pkt_num: u64,
        flight: usize,
        controller_cwnd: usize,
        pacing_limited: bool,
    ) -> Option<SetWindow> {
        let window_full = flight + self.max_datagram_size > controller_cwnd;
        self.window_limited |= window_full || pacing_limited;
        let (Some(saved), Some(rtt)) = (self.saved, self.last_rtt) else {
            return None;
        };
        if !self.initial_data_acked || !self.window_limited {
            return None;
        }
        let jump = usize::try_from(saved.cwnd_bytes / 2)
            .unwrap_or(usize::MAX)
            .min(self.path_bound(saved, rtt));
        if jump <= controller_cwnd {
            // The controller is already past half the saved window.
            self.enter(Phase::Normal, Trigger::CongestionWindowLimited);
            return None;
        }
        self.jump_cwnd = jump;
        self.jump_rtt = rtt.smoothed_rtt;
        self.pipesize = flight;
        self.first_unvalidated = Some(pkt_num + 1);
        self.unvalidated_since = Some(now);
        self.enter(Phase::Unvalidated, Trigger::CongestionWindowLimited);
        None
    }

    /// The most this connection's own measurements allow the jump to be:
    /// one bandwidth-delay product at the capacity the initial window's ACK
    /// trains showed (at the larger of the saved and the current minimum
    /// RTT). The saved window was measured on an earlier connection and may
    /// be stale or forged (a store entry of 4 GiB); RFC 9959 section 4.2
    /// asks the sender to confirm the path before jumping, and the
    /// initial window's ACKs are this connection's own look at it. Half the
    /// saved window is normally half a BDP, so on an unchanged path the
    /// bound does not bite; on a narrower path, or with a forged entry, the
    /// unvalidated window is at most what the path holds. Without a
    /// measurement (the jump taken as the handshake completes, before any
    /// data was acknowledged, or a receiver whose ACKs carried no train) only
    /// [`MAX_RESUME_BYTES_PER_SEC`] bounds the saved window.
    fn path_bound(&self, saved: SavedPath, rtt: RttSnapshot) -> usize {
        let capacity = self
            .path_capacity
            .capacity()
            .unwrap_or(MAX_RESUME_BYTES_PER_SEC)
            .min(MAX_RESUME_BYTES_PER_SEC);
        let rtt = saved.rtt.max(rtt.min_rtt).as_secs_f64();
        let bdp = capacity * rtt;
        if bdp.is_finite() && bdp > 0.0 {
            (bdp as usize).max(self.initial_cwnd)
        } else {
            usize::MAX
        }
    }

    /// The ACK as a whole, before [`CarefulResume::on_ack`]: in
    /// Reconnaissance its timing measures the path (the jump's bound).
    pub fn observe_ack(&mut self, ack: &AckEvent<'_>) {
        if self.phase == Phase::Reconnaissance {
            self.path_capacity
                .on_ack(ack, full_size_floor(self.max_datagram_size));
        }
    }

    /// The capacity the initial window's ACK trains showed, bytes/s.
    pub fn path_capacity(&self) -> Option<f64> {
        self.path_capacity.capacity()
    }

    fn rtt_exceeded(&self, now: Instant) -> bool {
        self.unvalidated_since
            .is_some_and(|since| now.saturating_duration_since(since) > self.jump_rtt)
    }

    /// Section 3.3's exit: the window becomes what is in flight
    /// (Validating), or the PipeSize when the sender did not use the jump
    /// (Normal, rate limited).
    fn leave_unvalidated(&mut self, trigger: Trigger, flight: usize) -> SetWindow {
        self.last_unvalidated = self.largest_sent;
        if flight < self.initial_cwnd || flight <= self.pipesize {
            self.enter(Phase::Normal, Trigger::RateLimited);
            SetWindow {
                cwnd: self.pipesize.max(self.initial_cwnd),
                ssthresh: None,
            }
        } else {
            self.enter(Phase::Validating, trigger);
            SetWindow {
                cwnd: flight,
                ssthresh: None,
            }
        }
    }

    /// Whether `packet` is the given unvalidated packet or a later one
    /// (later in the same number space: sent after the jump).
    fn at_or_after(&self, packet: &AckedPacket, pkt_num: Option<u64>) -> bool {
        match (pkt_num, self.unvalidated_since) {
            (Some(n), Some(since)) => packet.pkt_num >= n && packet.time_sent >= since,
            _ => false,
        }
    }

    /// An ACK arrived; `flight` is what remains in flight after it.
    pub fn on_ack(
        &mut self,
        now: Instant,
        acked: &[AckedPacket],
        rtt: RttSnapshot,
        flight: usize,
        controller_cwnd: usize,
    ) -> Option<SetWindow> {
        let acked_bytes = acked.iter().map(|p| p.size).sum();
        self.on_ack_with_bytes(now, acked, acked_bytes, rtt, flight, controller_cwnd)
    }

    /// [`CarefulResume::on_ack`] with the ACK's bytes already summed (the
    /// host's [`crate::events::AckSummary`]).
    pub fn on_ack_with_bytes(
        &mut self,
        now: Instant,
        acked: &[AckedPacket],
        acked_bytes: usize,
        rtt: RttSnapshot,
        flight: usize,
        controller_cwnd: usize,
    ) -> Option<SetWindow> {
        self.last_rtt = Some(rtt);
        match self.phase {
            Phase::Reconnaissance => {
                if !self.rtt_confirmed(&rtt) {
                    self.enter(Phase::Normal, Trigger::RttNotValidated);
                    return None;
                }
                self.recon_acked += acked_bytes;
                if flight == 0 || self.recon_acked >= self.initial_cwnd {
                    self.initial_data_acked = true;
                }
                None
            }
            Phase::Unvalidated => {
                self.pipesize += acked_bytes;
                if self
                    .saved
                    .is_some_and(|s| rtt.latest_rtt > s.rtt * RTT_TOO_LARGE_FACTOR)
                {
                    return Some(self.retreat(Trigger::PathChanged, now, None));
                }
                let first = self.first_unvalidated;
                if acked.iter().any(|p| self.at_or_after(p, first)) {
                    return Some(
                        self.leave_unvalidated(Trigger::FirstUnvalidatedPacketAcknowledged, flight),
                    );
                }
                if self.rtt_exceeded(now) {
                    return Some(self.leave_unvalidated(Trigger::RttExceeded, flight));
                }
                None
            }
            Phase::Validating => {
                self.pipesize += acked_bytes;
                let last = self.last_unvalidated;
                if acked.iter().any(|p| self.at_or_after(p, last)) {
                    self.enter(Phase::Normal, Trigger::LastUnvalidatedPacketAcknowledged);
                }
                None
            }
            Phase::SafeRetreat => {
                self.pipesize += acked_bytes;
                let last = self.last_unvalidated;
                if !acked.iter().any(|p| self.at_or_after(p, last)) {
                    return None;
                }
                self.enter(Phase::Normal, Trigger::ExitRecovery);
                // The controller's own ssthresh is the retreat window set on
                // entry; section 3.5 replaces it with PipeSize * Beta.
                let ssthresh =
                    ((self.pipesize as f64 * RETREAT_BETA) as usize).max(self.minimum_window());
                Some(SetWindow {
                    cwnd: controller_cwnd.min(self.retreat_cwnd),
                    ssthresh: Some(ssthresh),
                })
            }
            Phase::Normal => None,
        }
    }

    /// Section 3.5: entry to Safe Retreat.
    fn retreat(
        &mut self,
        trigger: Trigger,
        now: Instant,
        controller_cwnd: Option<usize>,
    ) -> SetWindow {
        if self.last_unvalidated.is_none() {
            self.last_unvalidated = self.largest_sent;
        }
        let half = self.pipesize / 2;
        let cwnd = controller_cwnd
            .map_or(half, |c| c.min(half))
            .max(self.minimum_window());
        self.retreat_cwnd = cwnd;
        self.retreat_since = Some(now);
        self.saved_discarded = true;
        self.enter(Phase::SafeRetreat, trigger);
        SetWindow {
            cwnd,
            ssthresh: Some(cwnd),
        }
    }

    /// Whether a loss of `lost_bytes` in the Unvalidated or Validating phase
    /// is congestion under the [`LossRule`].
    fn loss_is_congestion(&mut self, lost_bytes: usize, persistent_congestion: bool) -> bool {
        let lost_packets = lost_bytes.div_ceil(self.max_datagram_size.max(1)).max(1);
        self.lost_since_jump += lost_packets as u64;
        match self.loss_rule {
            LossRule::Any => true,
            LossRule::QueueSignal => {
                let queued = self.last_rtt.is_none_or(|rtt| {
                    rtt.latest_rtt.saturating_sub(rtt.min_rtt)
                        > rtt.min_rtt / QUEUE_SIGNAL_RTT_DIVISOR
                });
                let budget = RANDOM_LOSS_BUDGET * self.sent_since_jump as f64;
                persistent_congestion || queued || self.lost_since_jump as f64 > budget
            }
        }
    }

    /// Loss detection declared packets lost. Returns whether the controller
    /// should be told (it should not when Careful Resume's retreat is the
    /// reaction), and a window for it.
    pub fn on_congestion_event(
        &mut self,
        now: Instant,
        lost_bytes: usize,
        largest_lost_time_sent: Instant,
        persistent_congestion: bool,
        controller_cwnd: usize,
    ) -> (bool, Option<SetWindow>) {
        if matches!(self.phase, Phase::Unvalidated | Phase::Validating)
            && !self.loss_is_congestion(lost_bytes, persistent_congestion)
        {
            // A random loss: the controller answers it as it would without
            // Careful Resume; the jump goes on.
            return (true, None);
        }
        match self.phase {
            Phase::Reconnaissance => {
                self.enter(Phase::Normal, Trigger::PacketLoss);
                (true, None)
            }
            Phase::Unvalidated => (false, Some(self.retreat(Trigger::PacketLoss, now, None))),
            Phase::Validating => (
                false,
                Some(self.retreat(Trigger::PacketLoss, now, Some(controller_cwnd))),
            ),
            Phase::SafeRetreat => {
                // Section 3.6: an RTO ends Careful Resume.
                if persistent_congestion {
                    self.enter(Phase::Normal, Trigger::PacketLoss);
                    return (true, None);
                }
                let after_retreat = self
                    .retreat_since
                    .is_some_and(|since| largest_lost_time_sent > since);
                (after_retreat, None)
            }
            // Losses of packets sent before a retreat that are detected only
            // after it ended (the ACK that ends it also declares the
            // packets below it lost) were answered by the retreat.
            Phase::Normal => {
                let answered = self
                    .retreat_since
                    .is_some_and(|since| largest_lost_time_sent <= since);
                (!answered, None)
            }
        }
    }

    /// A generation of [`Self::internals`] (see
    /// `CongestionController::internals_generation`), keyed on what they
    /// are made of.
    pub fn internals_generation(&self) -> Option<u64> {
        Some(self.internals_generation.of(CrInternalsKey {
            phase: self.phase,
            trigger: self.trigger,
            changes: self.changes,
            pipesize: self.pipesize,
            first_unvalidated: self.first_unvalidated,
            last_unvalidated: self.last_unvalidated,
            saved: self.saved,
            jump_cwnd: self.jump_cwnd,
            path_capacity: self.path_capacity.capacity(),
        }))
    }

    /// The draft's state and restored parameters, for qlog (names from
    /// draft-ietf-tsvwg-careful-resume-qlog, prefixed `cr_`).
    pub fn internals(&self, out: &mut Internals) {
        out.text("cr_phase", self.phase.as_str());
        out.text("cr_trigger", self.trigger.map_or("none", Trigger::as_str));
        out.int("cr_phase_changes", self.changes);
        out.int("cr_pipesize", self.pipesize as u64);
        if let Some(first) = self.first_unvalidated {
            out.int("cr_first_unvalidated_packet", first);
        }
        if let Some(last) = self.last_unvalidated {
            out.int("cr_last_unvalidated_packet", last);
        }
        if let Some(saved) = self.saved {
            out.int("cr_saved_congestion_window", saved.cwnd_bytes);
            out.millis("cr_saved_rtt", saved.rtt);
        }
        if self.jump_cwnd > 0 {
            out.int("cr_jump_congestion_window", self.jump_cwnd as u64);
        }
        if let Some(c) = self.path_capacity.capacity() {
            out.float("cr_path_capacity_mbps", c * 8.0 / 1e6);
        }
    }
}

/// The Observe phase (section 3.1): bytes acknowledged per minimum RTT, the
/// largest over rounds in which the sender was not application-limited, and
/// the minimum RTT.
#[derive(Clone, Debug, Default)]
pub struct CapacityObserver {
    round_start: Option<Instant>,
    round_bytes: usize,
    round_limited: bool,
    best_bytes: usize,
    min_rtt: Option<Duration>,
}

impl CapacityObserver {
    pub fn on_ack(
        &mut self,
        now: Instant,
        acked_bytes: usize,
        app_limited: bool,
        min_rtt: Duration,
    ) {
        if min_rtt.is_zero() {
            return;
        }
        self.min_rtt = Some(self.min_rtt.map_or(min_rtt, |m| m.min(min_rtt)));
        let start = *self.round_start.get_or_insert(now);
        if now.saturating_duration_since(start) >= min_rtt {
            if self.round_limited {
                self.best_bytes = self.best_bytes.max(self.round_bytes);
            }
            self.round_start = Some(now);
            self.round_bytes = 0;
            self.round_limited = false;
        }
        self.round_bytes += acked_bytes;
        self.round_limited |= !app_limited;
    }

    /// What to save, if worth saving (at least four initial windows).
    pub fn observation(&self, initial_cwnd: usize) -> Option<SavedPath> {
        let rtt = self.min_rtt?;
        (self.best_bytes >= initial_cwnd * MIN_SAVED_IW_MULTIPLE).then_some(SavedPath {
            cwnd_bytes: self.best_bytes as u64,
            rtt,
        })
    }
}

#[cfg(test)]
mod tests {
    //! Each transition of RFC 9959 sections 3.2-3.5, with the expected
    //! windows worked out here from the draft's rules.

    use super::*;
    use crate::controller::InternalValue;

    const MDS: usize = 1200;
    const IW: usize = 10 * MDS;
    const SAVED_CWND: u64 = 1_200_000;
    const SAVED_RTT_MS: u64 = 600;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// RFC 9959 as written: every loss is congestion.
    /// Reconnaissance on a path whose bottleneck serialises a packet every
    /// `spacing_us`: ten initial-window packets sent back to back at `t`,
    /// each acknowledged by its own ACK as it arrives, fed to
    /// [`CarefulResume::observe_ack`] and [`CarefulResume::on_ack`].
    fn initial_window_over(cr: &mut CarefulResume, t: Instant, spacing_us: u64) {
        for n in 1..=10u64 {
            cr.on_packet_sent(t, n, n as usize * MDS, IW, false);
        }
        for n in 1..=10u64 {
            let now = t + ms(600) + Duration::from_micros(spacing_us * n);
            let acked = [packet(n, t, now)];
            let ack = AckEvent {
                now,
                acked: &acked,
                summary: crate::events::AckSummary::of(&acked, 0),
                ack_delay: Duration::ZERO,
                rtt: rtt(600, 600),
                bytes_in_flight: (11 - n as usize) * MDS,
                app_limited: false,
                backward_queueing: None,
            };
            cr.observe_ack(&ack);
            cr.on_ack(now, &acked, rtt(600, 600), (10 - n as usize) * MDS, IW);
        }
    }

    #[test]
    fn the_initial_windows_ack_trains_bound_the_jump_to_the_path() {
        // Saved on a 20 Mbit/s path (1.2 MB per RTT); this connection's
        // initial window arrives 4.8 ms apart per packet: 2 Mbit/s.
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        initial_window_over(&mut cr, t0, 4800);
        let capacity = cr.path_capacity().expect("nine ACK pairs");
        let expected = MDS as f64 / 4800e-6;
        assert!((capacity - expected).abs() / expected < 1e-6, "{capacity}");
        let t = t0 + ms(700);
        cr.on_packet_sent(t, 11, IW + MDS, IW, false);
        assert_eq!(cr.phase(), Phase::Unvalidated);
        // One BDP at the measured 250 kB/s over the saved 600 ms: 150 kB,
        // not half the saved 1.2 MB.
        let bdp = (expected * 0.6) as usize;
        assert!(cr.jump_cwnd().abs_diff(bdp) <= 1, "{}", cr.jump_cwnd());
        assert!(cr.jump_cwnd() < SAVED_CWND as usize / 2);
    }

    #[test]
    fn on_the_saved_path_the_bound_leaves_half_the_saved_window() {
        // 1.2 MB per 600 ms is 2 MB/s: a packet every 600 µs.
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        initial_window_over(&mut cr, t0, 600);
        cr.on_packet_sent(t0 + ms(700), 11, IW + MDS, IW, false);
        assert_eq!(cr.phase(), Phase::Unvalidated);
        assert_eq!(cr.jump_cwnd(), SAVED_CWND as usize / 2);
    }

    #[test]
    fn a_forged_saved_window_is_capped_at_the_largest_sane_rate() {
        let t0 = Instant::now();
        let forged = CarefulResumeConfig {
            saved: Some(SavedPath {
                cwnd_bytes: 1 << 40,
                rtt: ms(SAVED_RTT_MS),
            }),
            loss_rule: LossRule::Any,
        };
        let mut cr = CarefulResume::new(forged, MDS, IW);
        cr.on_packet_sent(t0, 0, MDS, IW, false);
        let ack = [packet(0, t0, t0 + ms(600))];
        cr.on_ack(t0 + ms(600), &ack, rtt(600, 600), 0, IW);
        cr.on_packet_sent(t0 + ms(600), 1, IW + MDS, IW, false);
        assert_eq!(cr.phase(), Phase::Unvalidated);
        let cap = (MAX_RESUME_BYTES_PER_SEC * 0.6) as usize;
        assert!(cr.jump_cwnd().abs_diff(cap) <= 1, "{}", cr.jump_cwnd());
    }

    fn saved() -> CarefulResumeConfig {
        CarefulResumeConfig {
            saved: Some(SavedPath {
                cwnd_bytes: SAVED_CWND,
                rtt: ms(SAVED_RTT_MS),
            }),
            loss_rule: LossRule::Any,
        }
    }

    /// [`jumped`] under [`LossRule::QueueSignal`], with 300 packets sent
    /// since the jump and the initial window acknowledged at `latest_ms`.
    fn jumped_queue_rule(t0: Instant, latest_ms: u64) -> CarefulResume {
        let mut cr = confirmed(t0);
        cr.loss_rule = LossRule::QueueSignal;
        let t = t0 + ms(600);
        for n in 1..=300u64 {
            cr.on_packet_sent(t, n, (n as usize).min(290) * MDS, IW, false);
        }
        assert_eq!(cr.phase(), Phase::Unvalidated);
        let iw: Vec<AckedPacket> = (1..=10).map(|n| packet(n, t, t + ms(600))).collect();
        cr.on_ack(t + ms(600), &iw, rtt(600, latest_ms), 290 * MDS, IW);
        cr
    }

    #[test]
    fn queue_rule_a_loss_without_a_queue_is_random_and_the_jump_goes_on() {
        let t0 = Instant::now();
        // 674 ms: 74 ms of queue, below 600 / 8 = 75 ms.
        let mut cr = jumped_queue_rule(t0, 674);
        let (tell, window) = cr.on_congestion_event(t0 + ms(1205), MDS, t0 + ms(600), false, IW);
        assert_eq!((tell, window), (true, None), "the controller answers it");
        assert_eq!(cr.phase(), Phase::Unvalidated);
        assert!(!cr.saved_discarded());
    }

    #[test]
    fn queue_rule_a_loss_with_a_queue_retreats() {
        let t0 = Instant::now();
        // 676 ms: 76 ms of queue, above 75 ms.
        let mut cr = jumped_queue_rule(t0, 676);
        let (tell, window) = cr.on_congestion_event(t0 + ms(1205), MDS, t0 + ms(600), false, IW);
        assert!(!tell);
        assert!(window.is_some());
        assert_eq!(cr.phase(), Phase::SafeRetreat);
        assert_eq!(cr.trigger(), Some(Trigger::PacketLoss));
    }

    #[test]
    fn queue_rule_losses_beyond_the_budget_retreat_without_a_queue() {
        let t0 = Instant::now();
        let mut cr = jumped_queue_rule(t0, 600);
        // Packets 11-300 were sent after the jump (packet 10 filled the
        // initial window and triggered it): a budget of 0.05 x 290 = 14.5.
        for lost in 1..=14u64 {
            let (tell, _) = cr.on_congestion_event(t0 + ms(1205), MDS, t0 + ms(600), false, IW);
            assert!(tell, "loss {lost} is within the budget");
            assert_eq!(cr.phase(), Phase::Unvalidated);
        }
        let (tell, _) = cr.on_congestion_event(t0 + ms(1206), MDS, t0 + ms(600), false, IW);
        assert!(!tell, "the 15th is congestion");
        assert_eq!(cr.phase(), Phase::SafeRetreat);
        // One event losing more than the budget at once retreats at once.
        let mut burst = jumped_queue_rule(t0, 600);
        burst.on_congestion_event(t0 + ms(1205), 15 * MDS, t0 + ms(600), false, IW);
        assert_eq!(burst.phase(), Phase::SafeRetreat);
    }

    #[test]
    fn loss_rule_words_round_trip() {
        for rule in [LossRule::Any, LossRule::QueueSignal] {
            assert_eq!(LossRule::from_word(rule.as_str()), Some(rule));
        }
        assert_eq!(LossRule::from_word("rfc"), None);
        assert_eq!(LossRule::default(), LossRule::QueueSignal);
    }

    fn rtt(min: u64, latest: u64) -> RttSnapshot {
        RttSnapshot {
            min_rtt: ms(min),
            smoothed_rtt: ms(latest),
            latest_rtt: ms(latest),
            rttvar: ms(latest / 2),
        }
    }

    fn packet(pkt_num: u64, sent: Instant, acked: Instant) -> AckedPacket {
        AckedPacket::new(pkt_num, MDS, sent, acked)
    }

    /// A connection in Reconnaissance whose handshake flight (packet 0,
    /// sent at t0) was acknowledged at t0 + 600 ms, nothing left in flight.
    fn confirmed(t0: Instant) -> CarefulResume {
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        assert_eq!(cr.on_packet_sent(t0, 0, MDS, IW, false), None);
        let ack = [packet(0, t0, t0 + ms(600))];
        assert_eq!(cr.on_ack(t0 + ms(600), &ack, rtt(600, 600), 0, IW), None);
        assert_eq!(cr.phase(), Phase::Reconnaissance);
        cr
    }

    /// `confirmed`, then the initial window sent at t0 + 600 ms (packets
    /// 1..=10, the last filling it): the jump.
    fn jumped(t0: Instant) -> CarefulResume {
        let mut cr = confirmed(t0);
        let t = t0 + ms(600);
        for n in 1..=10u64 {
            assert_eq!(cr.on_packet_sent(t, n, n as usize * MDS, IW, false), None);
        }
        assert_eq!(cr.phase(), Phase::Unvalidated);
        cr
    }

    #[test]
    fn nothing_saved_means_normal_at_once() {
        let cr = CarefulResume::new(CarefulResumeConfig::default(), MDS, IW);
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(cr.trigger(), Some(Trigger::NoSavedState));
        assert_eq!(cr.cwnd(IW), IW);
        assert_eq!(cr.pacing(None), None);
    }

    #[test]
    fn rtt_below_half_the_saved_one_is_another_path() {
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        cr.on_packet_sent(t0, 0, MDS, IW, false);
        // 299 ms < 600 / 2.
        let ack = [packet(0, t0, t0 + ms(299))];
        cr.on_ack(t0 + ms(299), &ack, rtt(299, 299), 0, IW);
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(cr.trigger(), Some(Trigger::RttNotValidated));
    }

    #[test]
    fn rtt_of_exactly_half_or_ten_times_is_confirmed() {
        for (min, latest) in [(300, 300), (300, 6000)] {
            let t0 = Instant::now();
            let mut cr = CarefulResume::new(saved(), MDS, IW);
            cr.on_packet_sent(t0, 0, MDS, IW, false);
            let ack = [packet(0, t0, t0 + ms(latest))];
            cr.on_ack(t0 + ms(latest), &ack, rtt(min, latest), 0, IW);
            assert_eq!(cr.phase(), Phase::Reconnaissance, "{min}/{latest}");
        }
    }

    #[test]
    fn rtt_above_ten_times_the_saved_one_is_another_path() {
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        cr.on_packet_sent(t0, 0, MDS, IW, false);
        let ack = [packet(0, t0, t0 + ms(6001))];
        cr.on_ack(t0 + ms(6001), &ack, rtt(600, 6001), 0, IW);
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(cr.trigger(), Some(Trigger::RttNotValidated));
    }

    #[test]
    fn loss_in_reconnaissance_means_normal_and_the_controller_reacts() {
        let t0 = Instant::now();
        let mut cr = confirmed(t0);
        assert_eq!(
            cr.on_congestion_event(t0 + ms(700), MDS, t0, false, IW),
            (true, None)
        );
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(cr.trigger(), Some(Trigger::PacketLoss));
    }

    /// The initial window's ten packets, sent at `t0` one after another,
    /// the last filling the window.
    fn send_initial_window(cr: &mut CarefulResume, t0: Instant) {
        for n in 0..10u64 {
            cr.on_packet_sent(t0, n, (n as usize + 1) * MDS, IW, false);
        }
    }

    #[test]
    fn no_jump_before_the_initial_data_is_acknowledged() {
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        // Ten packets fill the window; one is acknowledged, nine remain.
        send_initial_window(&mut cr, t0);
        let ack = [packet(0, t0, t0 + ms(600))];
        cr.on_ack(t0 + ms(600), &ack, rtt(600, 600), 9 * MDS, IW);
        cr.on_packet_sent(t0 + ms(600), 10, IW, IW, false);
        assert_eq!(cr.phase(), Phase::Reconnaissance, "1 of 10 acknowledged");
        // The other nine: the initial window's bytes are acknowledged.
        let rest: Vec<AckedPacket> = (1..10).map(|n| packet(n, t0, t0 + ms(610))).collect();
        cr.on_ack(t0 + ms(610), &rest, rtt(600, 610), MDS, 2 * IW);
        cr.on_packet_sent(t0 + ms(610), 11, 2 * IW, 2 * IW, false);
        assert_eq!(cr.phase(), Phase::Unvalidated);
    }

    #[test]
    fn an_initial_window_that_filled_the_window_takes_the_jump_once_acknowledged() {
        // A controller that sends its initial window at once fills the
        // window before any ACK; slow start then grows the window by what
        // each ACK acknowledges, so the next packets need not fill it.
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        send_initial_window(&mut cr, t0);
        let all: Vec<AckedPacket> = (0..10).map(|n| packet(n, t0, t0 + ms(600))).collect();
        cr.on_ack(t0 + ms(600), &all, rtt(600, 600), 0, 2 * IW);
        assert_eq!(cr.phase(), Phase::Reconnaissance);
        // One packet of a 20-packet window, sent as soon as it was ready.
        cr.on_packet_sent(t0 + ms(600), 10, MDS, 2 * IW, false);
        assert_eq!(cr.phase(), Phase::Unvalidated);
        assert_eq!(cr.trigger(), Some(Trigger::CongestionWindowLimited));
        // Never limited by the window or the pacer (an application that
        // wrote less than the window): no jump.
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        for n in 0..5u64 {
            cr.on_packet_sent(t0, n, (n as usize + 1) * MDS, IW, false);
        }
        let all: Vec<AckedPacket> = (0..5).map(|n| packet(n, t0, t0 + ms(600))).collect();
        cr.on_ack(t0 + ms(600), &all, rtt(600, 600), 0, IW + 5 * MDS);
        cr.on_packet_sent(t0 + ms(600), 5, MDS, IW + 5 * MDS, false);
        assert_eq!(cr.phase(), Phase::Reconnaissance);
    }

    #[test]
    fn the_jump_waits_until_the_window_is_full() {
        let t0 = Instant::now();
        let mut cr = confirmed(t0);
        let t = t0 + ms(600);
        for n in 1..=9u64 {
            cr.on_packet_sent(t, n, n as usize * MDS, IW, false);
            assert_eq!(cr.phase(), Phase::Reconnaissance, "packet {n}");
        }
        cr.on_packet_sent(t, 10, IW, IW, false);
        assert_eq!(cr.phase(), Phase::Unvalidated);
        assert_eq!(cr.trigger(), Some(Trigger::CongestionWindowLimited));
        // jump_cwnd = saved_cwnd / 2; PipeSize = the flight at the jump.
        assert_eq!(cr.jump_cwnd(), 600_000);
        assert_eq!(cr.cwnd(IW), 600_000);
        assert_eq!(cr.pipesize(), IW);
        // Paced at jump_cwnd per current RTT (600 ms), bursts of one IW.
        let p = cr.pacing(None).unwrap();
        assert!((p.rate_bytes_per_sec - 1_000_000.0).abs() < 1e-6);
        assert_eq!(p.burst_packets, 10);
    }

    #[test]
    fn a_packet_the_pacer_held_back_takes_the_jump_before_the_window_is_full() {
        let t0 = Instant::now();
        let mut cr = confirmed(t0);
        let t = t0 + ms(600);
        // Sent as soon as it was ready: no sign of more data than the window.
        cr.on_packet_sent(t, 1, MDS, IW, false);
        assert_eq!(cr.phase(), Phase::Reconnaissance);
        // Held back by the controller's pacer with 8 packets of room left:
        // the data was waiting, so the jump is taken.
        cr.on_packet_sent(t + ms(30), 2, 2 * MDS, IW, true);
        assert_eq!(cr.phase(), Phase::Unvalidated);
        assert_eq!(cr.trigger(), Some(Trigger::CongestionWindowLimited));
        assert_eq!(cr.jump_cwnd(), 600_000);
        assert_eq!(cr.pipesize(), 2 * MDS);
        let mut out = Internals::default();
        cr.internals(&mut out);
        assert_eq!(
            out.get("cr_first_unvalidated_packet"),
            Some(InternalValue::Int(3))
        );
    }

    #[test]
    fn a_held_back_packet_before_the_initial_data_is_acknowledged_does_not_jump() {
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(saved(), MDS, IW);
        cr.on_packet_sent(t0, 0, MDS, IW, false);
        cr.on_packet_sent(t0 + ms(30), 1, 2 * MDS, IW, true);
        assert_eq!(cr.phase(), Phase::Reconnaissance);
    }

    #[test]
    fn a_window_already_past_the_jump_means_normal() {
        let t0 = Instant::now();
        let mut cr = confirmed(t0);
        // The controller's window, 600 000 bytes, is not below the jump.
        cr.on_packet_sent(t0 + ms(600), 1, 600_000, 600_000, false);
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(cr.trigger(), Some(Trigger::CongestionWindowLimited));
        assert_eq!(cr.cwnd(600_000), 600_000);
    }

    #[test]
    fn filling_the_jump_ends_the_unvalidated_phase() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        let t = t0 + ms(700);
        // 600 000 / 1200 = 500 packets fill the jump: packets 11..=500 bring
        // the flight from 12 000 to 600 000 bytes.
        let mut window = None;
        for n in 11..=500u64 {
            window = cr.on_packet_sent(t, n, n as usize * MDS, IW, false);
            if window.is_some() {
                assert_eq!(n, 500);
            }
        }
        assert_eq!(cr.phase(), Phase::Validating);
        assert_eq!(cr.trigger(), Some(Trigger::LastUnvalidatedPacketSent));
        assert_eq!(
            window,
            Some(SetWindow {
                cwnd: 600_000,
                ssthresh: None
            })
        );
        assert_eq!(cr.pacing(None), None, "the controller's pacing again");
    }

    #[test]
    fn the_first_unvalidated_packet_acknowledged_ends_the_unvalidated_phase() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        let t = t0 + ms(600);
        for n in 11..=100u64 {
            cr.on_packet_sent(t + ms(n), n, (n as usize - 10) * MDS + IW, IW, false);
        }
        // The initial window (1..=10) acknowledged: PipeSize grows by it.
        let iw: Vec<AckedPacket> = (1..=10).map(|n| packet(n, t, t + ms(600))).collect();
        assert_eq!(
            cr.on_ack(t + ms(600), &iw, rtt(600, 600), 90 * MDS, IW),
            None
        );
        assert_eq!(cr.pipesize(), 2 * IW);
        // Packet 11, the first sent with the jumped window.
        let ack = [packet(11, t + ms(11), t + ms(611))];
        let window = cr.on_ack(t + ms(611), &ack, rtt(600, 600), 89 * MDS, IW);
        assert_eq!(cr.phase(), Phase::Validating);
        assert_eq!(
            cr.trigger(),
            Some(Trigger::FirstUnvalidatedPacketAcknowledged)
        );
        // CWND = flight size (89 packets > PipeSize of 21).
        assert_eq!(
            window,
            Some(SetWindow {
                cwnd: 89 * MDS,
                ssthresh: None
            })
        );
        assert_eq!(cr.pipesize(), 2 * IW + MDS);
    }

    #[test]
    fn more_than_an_rtt_in_the_unvalidated_phase_ends_it() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        let jump_at = t0 + ms(600);
        cr.on_packet_sent(jump_at + ms(600), 11, IW + 100 * MDS, IW, false);
        assert_eq!(cr.phase(), Phase::Unvalidated, "exactly one RTT");
        let window = cr.on_packet_sent(jump_at + ms(601), 12, IW + 101 * MDS, IW, false);
        assert_eq!(cr.phase(), Phase::Validating);
        assert_eq!(cr.trigger(), Some(Trigger::RttExceeded));
        assert_eq!(window.map(|w| w.cwnd), Some(IW + 101 * MDS));
    }

    #[test]
    fn a_sender_that_did_not_use_the_jump_is_rate_limited() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        let t = t0 + ms(600);
        cr.on_packet_sent(t + ms(1), 11, IW + MDS, IW, false);
        // The initial window and packet 11 acknowledged; nothing in flight:
        // flight (0) is below the IW, so CWND = max(PipeSize, IW).
        let mut acked: Vec<AckedPacket> = (1..=10).map(|n| packet(n, t, t + ms(600))).collect();
        acked.push(packet(11, t + ms(1), t + ms(601)));
        let window = cr.on_ack(t + ms(601), &acked, rtt(600, 600), 0, IW);
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(cr.trigger(), Some(Trigger::RateLimited));
        // PipeSize: 12 000 at the jump + 11 packets acknowledged.
        assert_eq!(
            window,
            Some(SetWindow {
                cwnd: IW + 11 * MDS,
                ssthresh: None
            })
        );
    }

    #[test]
    fn loss_in_the_unvalidated_phase_retreats_to_half_the_pipesize() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        let t = t0 + ms(600);
        for n in 11..=300u64 {
            cr.on_packet_sent(t + ms(1), n, (n as usize - 10) * MDS + IW, IW, false);
        }
        let iw: Vec<AckedPacket> = (1..=10).map(|n| packet(n, t, t + ms(600))).collect();
        cr.on_ack(t + ms(600), &iw, rtt(600, 600), 290 * MDS, IW);
        // PipeSize 24 000: the retreat window is 12 000, ssthresh too.
        let (tell, window) = cr.on_congestion_event(t + ms(605), MDS, t, false, 3 * IW);
        assert!(!tell, "the retreat is the reaction");
        assert_eq!(cr.phase(), Phase::SafeRetreat);
        assert_eq!(cr.trigger(), Some(Trigger::PacketLoss));
        assert_eq!(
            window,
            Some(SetWindow {
                cwnd: IW,
                ssthresh: Some(IW)
            })
        );
        assert!(cr.saved_discarded());
        // The window is not increased in Safe Retreat.
        assert_eq!(cr.cwnd(5 * IW), IW);
        assert_eq!(cr.cwnd(IW / 2), IW / 2);
        // Losses of packets sent before the retreat: no second reaction;
        // of a packet sent after it: the controller reacts.
        assert_eq!(
            cr.on_congestion_event(t + ms(700), MDS, t + ms(1), false, IW),
            (false, None)
        );
        assert_eq!(
            cr.on_congestion_event(t + ms(1500), MDS, t + ms(900), false, IW),
            (true, None)
        );
        // Packet 300, the last unvalidated one, acknowledged: Normal, with
        // ssthresh = PipeSize * 0.5.
        let last = [packet(300, t + ms(1), t + ms(1600))];
        let window = cr.on_ack(t + ms(1600), &last, rtt(600, 1599), 0, IW);
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(cr.trigger(), Some(Trigger::ExitRecovery));
        let pipesize = 2 * IW + MDS;
        assert_eq!(cr.pipesize(), pipesize);
        assert_eq!(
            window,
            Some(SetWindow {
                cwnd: IW,
                ssthresh: Some(pipesize / 2)
            })
        );
        // Packets sent before the retreat and declared lost after it ended:
        // answered by the retreat; later ones go to the controller.
        assert_eq!(
            cr.on_congestion_event(t + ms(1601), MDS, t + ms(2), false, IW),
            (false, None)
        );
        assert_eq!(
            cr.on_congestion_event(t + ms(1601), MDS, t + ms(1000), false, IW),
            (true, None)
        );
    }

    #[test]
    fn the_retreat_window_is_at_least_the_minimum() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        cr.on_packet_sent(t0 + ms(601), 11, IW + MDS, IW, false);
        // A PipeSize of 12 000 gives 6000; the window in flight is larger.
        let (_, window) = cr.on_congestion_event(t0 + ms(700), MDS, t0, false, IW);
        assert_eq!(window.map(|w| w.cwnd), Some(IW / 2));
        let mut tiny = CarefulResume::new(saved(), MDS, IW);
        tiny.on_packet_sent(t0, 0, MDS, 2 * MDS, false);
        tiny.on_ack(
            t0 + ms(600),
            &[packet(0, t0, t0 + ms(600))],
            rtt(600, 600),
            0,
            2 * MDS,
        );
        tiny.on_packet_sent(t0 + ms(600), 1, MDS, 2 * MDS, false);
        tiny.on_packet_sent(t0 + ms(600), 2, 2 * MDS, 2 * MDS, false);
        assert_eq!(tiny.phase(), Phase::Unvalidated);
        // PipeSize 2400 / 2 = 1200 is below two packets.
        let (_, window) = tiny.on_congestion_event(t0 + ms(700), MDS, t0, false, 2 * MDS);
        assert_eq!(window.map(|w| w.cwnd), Some(2 * MDS));
    }

    #[test]
    fn validating_ends_when_the_last_unvalidated_packet_is_acknowledged() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        let t = t0 + ms(600);
        for n in 11..=500u64 {
            cr.on_packet_sent(t + ms(1), n, (n as usize) * MDS, IW, false);
        }
        assert_eq!(cr.phase(), Phase::Validating);
        let before = [packet(499, t + ms(1), t + ms(650))];
        cr.on_ack(t + ms(650), &before, rtt(600, 649), 10 * MDS, 600_000);
        assert_eq!(cr.phase(), Phase::Validating);
        let last = [packet(500, t + ms(1), t + ms(651))];
        assert_eq!(
            cr.on_ack(t + ms(651), &last, rtt(600, 650), 9 * MDS, 600_000),
            None
        );
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(
            cr.trigger(),
            Some(Trigger::LastUnvalidatedPacketAcknowledged)
        );
    }

    #[test]
    fn loss_while_validating_retreats_below_the_controller_window_too() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        let t = t0 + ms(600);
        for n in 11..=500u64 {
            cr.on_packet_sent(t + ms(1), n, (n as usize) * MDS, IW, false);
        }
        let acked: Vec<AckedPacket> = (1..=200).map(|n| packet(n, t, t + ms(640))).collect();
        cr.on_ack(t + ms(640), &acked, rtt(600, 640), 300 * MDS, 600_000);
        // PipeSize = 12 000 + 200 packets = 252 000; half: 126 000. A
        // controller window of 100 000 is smaller and is kept.
        let (tell, window) = cr.on_congestion_event(t + ms(650), MDS, t + ms(1), false, 100_000);
        assert!(!tell);
        assert_eq!(cr.phase(), Phase::SafeRetreat);
        assert_eq!(window.map(|w| w.cwnd), Some(100_000));
        let mut other = jumped(t0);
        for n in 11..=500u64 {
            other.on_packet_sent(t + ms(1), n, (n as usize) * MDS, IW, false);
        }
        other.on_ack(t + ms(640), &acked, rtt(600, 640), 300 * MDS, 600_000);
        let (_, window) = other.on_congestion_event(t + ms(650), MDS, t + ms(1), false, 600_000);
        assert_eq!(window.map(|w| w.cwnd), Some(126_000));
    }

    #[test]
    fn persistent_congestion_in_safe_retreat_ends_careful_resume() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        cr.on_congestion_event(t0 + ms(700), MDS, t0, false, IW);
        assert_eq!(cr.phase(), Phase::SafeRetreat);
        assert_eq!(
            cr.on_congestion_event(t0 + ms(5000), MDS, t0 + ms(601), true, IW),
            (true, None)
        );
        assert_eq!(cr.phase(), Phase::Normal);
        assert_eq!(cr.cwnd(5 * IW), 5 * IW);
    }

    #[test]
    fn a_far_larger_rtt_after_the_jump_is_a_changed_path() {
        let t0 = Instant::now();
        let mut cr = jumped(t0);
        let t = t0 + ms(600);
        let ack = [packet(1, t, t + ms(6001))];
        let window = cr.on_ack(t + ms(6001), &ack, rtt(600, 6001), 0, IW);
        assert_eq!(cr.phase(), Phase::SafeRetreat);
        assert_eq!(cr.trigger(), Some(Trigger::PathChanged));
        // PipeSize 12 000 + 1200.
        assert_eq!(window.map(|w| w.cwnd), Some((IW + MDS) / 2));
    }

    #[test]
    fn phase_changes_reach_the_internals() {
        let t0 = Instant::now();
        let cr = jumped(t0);
        let mut out = Internals::default();
        cr.internals(&mut out);
        assert_eq!(
            out.get("cr_phase"),
            Some(InternalValue::Text("unvalidated"))
        );
        assert_eq!(
            out.get("cr_trigger"),
            Some(InternalValue::Text("congestion_window_limited"))
        );
        assert_eq!(
            out.get("cr_first_unvalidated_packet"),
            Some(InternalValue::Int(11))
        );
        assert_eq!(
            out.get("cr_saved_congestion_window"),
            Some(InternalValue::Int(SAVED_CWND))
        );
        assert_eq!(out.get("cr_saved_rtt"), Some(InternalValue::Float(600.0)));
    }

    #[test]
    fn the_observer_keeps_the_best_cwnd_limited_round() {
        let t0 = Instant::now();
        let mut o = CapacityObserver::default();
        assert_eq!(o.observation(IW), None);
        // Round 1 (0-99 ms): 60 000 bytes; round 2 (100-199 ms): 90 000
        // bytes, application-limited; round 3: 30 000 bytes.
        for i in 0..50u64 {
            o.on_ack(t0 + ms(i * 2), 1200, false, ms(100));
        }
        for i in 0..75u64 {
            o.on_ack(t0 + ms(100 + i), 1200, true, ms(100));
        }
        for i in 0..25u64 {
            o.on_ack(t0 + ms(200 + i), 1200, false, ms(100));
        }
        o.on_ack(t0 + ms(300), 0, false, ms(100));
        assert_eq!(
            o.observation(IW),
            Some(SavedPath {
                cwnd_bytes: 60_000,
                rtt: ms(100)
            })
        );
        // Below four initial windows (4 x 20 000): not worth saving.
        assert_eq!(o.observation(2 * IW), None);
    }

    /// vegas-sat's phase, as its qlog internals name it.
    fn phase(controller: &dyn crate::controller::CongestionController) -> Option<InternalValue> {
        let mut out = crate::controller::Internals::default();
        controller.internals(&mut out);
        out.get("phase")
    }

    #[test]
    fn a_window_set_by_careful_resume_is_not_a_spurious_loss_undone() {
        // vegas-sat leaves start-up at its first congestive loss (twelve
        // packets in flight: at least ten could be queued). Its spurious-loss
        // undo returns it to start-up when the restored window is one of slow
        // start; a window Careful Resume sets must leave the phase alone.
        let spec = match crate::registry::ControllerSpec::new("vegas-sat") {
            Ok(spec) => spec,
            Err(e) => panic!("vegas-sat: {e:?}"),
        };
        let window = crate::registry::WindowConfig {
            max_datagram_size: MDS,
            initial_cwnd_packets: 10,
        };
        let after_loss = || {
            let mut c = spec.build(window);
            let now = Instant::now();
            c.on_congestion_event(&crate::events::CongestionEvent {
                now,
                lost_bytes: MDS,
                largest_lost_pkt_num: 1,
                largest_lost_time_sent: now,
                persistent_congestion: false,
                bytes_in_flight: 12 * MDS,
            });
            assert_eq!(phase(c.as_ref()), Some(InternalValue::Text("avoidance")));
            c
        };
        let mut undone = after_loss();
        undone.on_spurious_loss(20 * MDS, usize::MAX);
        assert_eq!(phase(undone.as_ref()), Some(InternalValue::Text("startup")));
        let mut set = after_loss();
        set.set_window(20 * MDS, usize::MAX);
        assert_eq!(set.cwnd(), 20 * MDS);
        assert_eq!(phase(set.as_ref()), Some(InternalValue::Text("avoidance")));
    }
}

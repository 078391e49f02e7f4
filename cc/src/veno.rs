//! TCP Veno, as summarised in 001_8629d53d83e82638.txt, section 2.1 (Fu and
//! Liew's Veno: Vegas's backlog estimate put into Reno).
//!
//! Once per RTT Veno estimates how many of its packets sit in the bottleneck
//! queue,
//!
//! ```text
//! N = Diff × BaseRTT = (Expected − Actual) × BaseRTT       (section 2.1)
//! ```
//!
//! which is Vegas's Diff in packets ([`VegasDiff`]), and uses it twice:
//!
//! ```text
//! slow start:               Reno's: cwnd += bytes acked
//! congestion avoidance:
//!     if N < beta:          cwnd += 1 packet per RTT     ("not congestive")
//!     else:                 cwnd += 1 packet every other RTT
//! on a loss:
//!     if N < beta:          random loss:      ssthresh = cwnd × 4/5
//!     else:                 congestion loss:  ssthresh = cwnd × 1/2
//!                           cwnd = ssthresh
//! ```
//!
//! beta is 3 packets. Every number above is a parameter with that default.
//!
//! # Reuse
//!
//! This file is also the skeleton of VenoDB (`venodb.rs`, section 3 of the
//! same paper), which keeps Veno's N, slow start, recovery epochs and window
//! bookkeeping and refines only the two decisions: how much to add per RTT
//! and how much to cut on a loss. The skeleton is [`Veno`], generic over
//! those decisions ([`VenoRules`]); Veno's own decisions are
//! [`ClassicVeno`]. N comes from the shared [`VegasDiff`], BaseRTT from
//! [`BaseRttTracker`], the once-per-RTT round from [`RoundClock`], cwnd and
//! ssthresh are a [`Window`] and the recovery epochs a [`RecoveryEpoch`].
//!
//! # Where the paper is ambiguous
//!
//! Section 2.1 is a prose summary; these are the choices made here.
//!
//! - **N = beta.** 2.1 calls a loss random "when N is smaller than beta",
//!   otherwise congestive, and VenoDB's pseudo-code (3.1) tests `N >= beta`
//!   for the congestive branches. So N = beta is congestive, for growth and
//!   for losses alike.
//! - **When N is computed.** Once per round of the [`RoundClock`] (a round
//!   ends when a packet sent after it began is acknowledged), from cwnd in
//!   packets as the window, BaseRTT = the smallest RTT seen, and the round's
//!   smallest RTT sample as the RTT, exactly as this crate's Vegas computes
//!   Diff. A round needs `min_rtt_samples` samples (1) to be evaluated. N is
//!   computed in slow start too, so that a loss there can be classified.
//! - **Which N classifies a loss.** The N of the most recently evaluated
//!   round (Linux's Veno likewise keeps its last `diff`).
//! - **A loss before any N** (no evaluated round yet): treated as a
//!   congestion loss, Reno's halving — without a backlog estimate Veno has no
//!   grounds to call it random. (Linux's Veno starts with diff = 0 and would
//!   call it random.)
//! - **"One packet every other RTT"** is an increase of 1/2 packet per RTT
//!   (`increase_at_beta`), applied per ACK as credit: each acknowledged byte
//!   adds `increase_per_rtt` byte-packets of credit, and every cwnd of credit
//!   adds one packet. With a window acknowledged per RTT that is one packet
//!   every second RTT; fractions carry over between rounds and across changes
//!   of the rate, and are dropped on a window reduction. The rate decided at
//!   the end of a round applies from the ACK that ended it on.
//! - **The reduction.** cwnd = ssthresh = cwnd × factor, at once: QUIC's loss
//!   recovery (RFC 9002 section 7.3.2) needs no fast-recovery inflation,
//!   since bytes in flight drop as packets are declared lost, so Reno's
//!   "ssthresh = cwnd × factor, after fast recovery cwnd = ssthresh" becomes
//!   one step. Never below the minimum window.
//! - **One reduction per recovery epoch.** A loss reduces the window only if
//!   the largest lost packet was sent after the last reduction (a packet sent
//!   at the very instant of the reduction counts as after it, as in this
//!   crate's Vegas). Until a packet sent after the reduction is acknowledged
//!   the controller is in `Recovery`: the window does not grow, and rounds
//!   that end are not evaluated (their RTTs describe the old window); the
//!   acknowledgement of such a packet ends recovery and restarts the round
//!   clock. Only bytes of packets sent after the last reduction grow the
//!   window (RFC 9002 section 7.3.2). Reno's habit of reducing again for a
//!   second loss in the same window is not reproduced.
//! - **Persistent congestion** (QUIC's equivalent of a retransmission
//!   timeout, which 2.1 does not discuss): ssthresh = cwnd ×
//!   `timeout_ssthresh_factor` (1/2, Reno's), cwnd = the minimum window, slow
//!   start again, whatever N says; reported as a congestion loss with
//!   `loss_factor` = `timeout_ssthresh_factor`.
//! - **Application-limited ACKs** do not grow the window (RFC 9002 section
//!   7.8); N is still computed.
//! - **Spurious losses**: the window and ssthresh the host saved are
//!   restored, the reduction is forgotten and recovery ends.
//! - **Window units.** cwnd is kept in bytes; N uses cwnd / max datagram size
//!   in packets, fractions included. On a change of the datagram size the
//!   window keeps its packet count.
//!
//! # Pacing profile
//!
//! Veno is Reno's sender, which does not pace. `profile=paper` sends exactly
//! so: ACK-clocked, unpaced. By default (`profile=quic`) Veno paces as RFC
//! 9002 section 7.7 asks a QUIC sender to: slow start at
//! `slow_start_pacing_gain` (2) × cwnd / smoothed RTT, the rest at
//! `pacing_gain` (RFC 9002's N, 1.25) × cwnd / smoothed RTT, bursts of
//! `pacing_burst_packets` (2) after idle; no pacing before the first RTT
//! sample. Pacing changes when packets leave, never the window rules above
//! ([`crate::shared::pacing_profile`], shared with every member; VenoDB's
//! is the same).

use std::fmt::Debug;
use std::time::{Duration, Instant};

use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{CcState, CongestionController, Internals, KeyedGeneration, Pacing};
use crate::events::{AckEvent, CongestionEvent, PacketSent};
use crate::params::{Key, ParamInfo, ParamKind, ParamValues};
use crate::shared::base_rtt::BaseRttTracker;
use crate::shared::pacing_profile::{self, PacingKeys, PacingProfile, UNPACED_PAPER_PARAMS};
// Re-exported: it was `veno::RecoveryEpoch` before it was shared.
pub use crate::shared::recovery_epoch::RecoveryEpoch;
use crate::shared::recovery_epoch::{AckedRound, SentAtReduction};
use crate::shared::round_clock::{CompletedRound, RoundClock};
use crate::shared::vegas_diff::VegasDiff;
use crate::shared::window::Window;

pub const NAME: &str = "veno";

const FACTOR_RANGE: ParamKind = ParamKind::Number { min: 0.0, max: 1.0 };
/// Additive increases, in packets per RTT.
pub(crate) const INCREASE_RANGE: ParamKind = ParamKind::Number {
    min: 0.0,
    max: 100.0,
};

/// beta: the backlog, in packets, from which Veno deems the path congestive.
pub const BETA: ParamInfo = ParamInfo {
    name: "beta",
    default: 3.0,
    kind: ParamKind::Number {
        min: 0.0,
        max: 1000.0,
    },
    description: "packets queued (N) from which the path counts as congestive (section 2.1: 3)",
};

/// Increase per RTT while N < beta.
pub const INCREASE_BELOW_BETA: ParamInfo = ParamInfo {
    name: "increase_below_beta",
    default: 1.0,
    kind: INCREASE_RANGE,
    description: "packets added per RTT in congestion avoidance while N < beta (Reno's 1)",
};

/// Increase per RTT while N >= beta.
pub const INCREASE_AT_BETA: ParamInfo = ParamInfo {
    name: "increase_at_beta",
    default: 0.5,
    kind: INCREASE_RANGE,
    description: "packets added per RTT in congestion avoidance while N >= beta \
                  (one every other RTT)",
};

/// Window factor on a random loss.
pub const RANDOM_LOSS_FACTOR: ParamInfo = ParamInfo {
    name: "random_loss_factor",
    default: 0.8,
    kind: FACTOR_RANGE,
    description: "cwnd and ssthresh become cwnd x this on a loss while N < beta \
                  (random loss: 4/5)",
};

/// Window factor on a congestion loss.
pub const CONGESTION_LOSS_FACTOR: ParamInfo = ParamInfo {
    name: "congestion_loss_factor",
    default: 0.5,
    kind: FACTOR_RANGE,
    description: "cwnd and ssthresh become cwnd x this on a loss while N >= beta \
                  (congestion loss: 1/2)",
};

/// ssthresh factor on persistent congestion.
pub const TIMEOUT_SSTHRESH_FACTOR: ParamInfo = ParamInfo {
    name: "timeout_ssthresh_factor",
    default: 0.5,
    kind: FACTOR_RANGE,
    description: "on persistent congestion ssthresh = cwnd x this, cwnd = minimum window \
                  (paper silent; Reno's timeout)",
};

/// RTT samples a round needs before N is computed from it.
pub const MIN_RTT_SAMPLES: ParamInfo = ParamInfo {
    name: "min_rtt_samples",
    default: 1.0,
    kind: ParamKind::Integer { min: 1, max: 1000 },
    description: "RTT samples a round needs before N is computed from it (paper silent)",
};

/// Parameters of `veno`, with the paper's defaults.
pub const PARAMS: &[ParamInfo] = &[
    BETA,
    INCREASE_BELOW_BETA,
    INCREASE_AT_BETA,
    RANDOM_LOSS_FACTOR,
    CONGESTION_LOSS_FACTOR,
    TIMEOUT_SSTHRESH_FACTOR,
    MIN_RTT_SAMPLES,
    UNPACED_PAPER_PARAMS[0],
    UNPACED_PAPER_PARAMS[1],
    UNPACED_PAPER_PARAMS[2],
    UNPACED_PAPER_PARAMS[3],
];

pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: NAME,
    description: "TCP Veno: Reno with Vegas's backlog N = Diff x BaseRTT; N >= beta (3) grows \
                  every other RTT, a loss with N < beta is random (x4/5), else congestion (x1/2)",
    params: PARAMS,
    validate,
    build,
};

/// Where a table keeps the parameters of Veno's skeleton and of
/// [`ClassicVeno`], resolved at compile time; VenoDB's table has them too.
#[derive(Clone, Copy, Debug)]
pub struct VenoKeys {
    beta: Key<f64>,
    increase_below_beta: Key<f64>,
    increase_at_beta: Key<f64>,
    random_loss_factor: Key<f64>,
    congestion_loss_factor: Key<f64>,
    timeout_ssthresh_factor: Key<f64>,
    min_rtt_samples: Key<u64>,
    pacing: PacingKeys,
}

impl VenoKeys {
    /// A table holding every entry of [`PARAMS`] by name.
    pub const fn in_table(table: &[ParamInfo]) -> Self {
        VenoKeys {
            beta: Key::in_table(table, BETA.name),
            increase_below_beta: Key::in_table(table, INCREASE_BELOW_BETA.name),
            increase_at_beta: Key::in_table(table, INCREASE_AT_BETA.name),
            random_loss_factor: Key::in_table(table, RANDOM_LOSS_FACTOR.name),
            congestion_loss_factor: Key::in_table(table, CONGESTION_LOSS_FACTOR.name),
            timeout_ssthresh_factor: Key::in_table(table, TIMEOUT_SSTHRESH_FACTOR.name),
            min_rtt_samples: Key::in_table(table, MIN_RTT_SAMPLES.name),
            pacing: PacingKeys::unpaced_paper(table),
        }
    }

    /// Veno's checks of a table these keys locate: its pacing settings.
    pub fn validate(&self, params: &ParamValues) -> Result<(), String> {
        pacing_profile::validate(params, self.pacing)
    }
}

/// [`PARAMS`]' keys.
pub const KEYS: VenoKeys = VenoKeys::in_table(PARAMS);

fn validate(params: &ParamValues) -> Result<(), String> {
    KEYS.validate(params)
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(Veno::new(params, window))
}

/// N of one round, with the beta it is compared against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backlog {
    /// N = Diff × BaseRTT, packets.
    pub n_packets: f64,
    pub beta: f64,
}

impl Backlog {
    /// `N >= beta`: the path is congestive (Veno) or close to saturation
    /// (VenoDB).
    pub fn saturated(&self) -> bool {
        self.n_packets >= self.beta
    }
}

/// How a loss was classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossClass {
    Random,
    Congestion,
}

impl LossClass {
    pub fn as_str(self) -> &'static str {
        match self {
            LossClass::Random => "random",
            LossClass::Congestion => "congestion",
        }
    }
}

/// A decision on a loss: its class and the factor cwnd is multiplied by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossReaction {
    pub class: LossClass,
    pub factor: f64,
}

/// The two decisions a member of the Veno family makes; everything else is
/// [`Veno`]'s.
pub trait VenoRules: Debug + Send {
    /// The algorithm's name as selected on the command line.
    fn name(&self) -> &'static str;

    /// Congestion-avoidance increase, packets per RTT, before any round has
    /// been evaluated.
    fn initial_increase(&self) -> f64;

    /// Sees every ACK that acknowledges something, before the controller
    /// acts on it.
    fn observe_ack(&mut self, _ack: &AckEvent<'_>) {}

    /// A round ended at `now` (or was abandoned when recovery ended).
    /// `backlog` is its N when the round was evaluated, `None` when it was
    /// not (it ended in recovery, was abandoned, or measured too little).
    /// Returns the congestion-avoidance increase, in packets per RTT, from
    /// now on, or `None` to keep the current one.
    fn on_round_end(&mut self, now: Instant, backlog: Option<Backlog>) -> Option<f64>;

    /// A loss of a new recovery epoch. `backlog` is the N of the most
    /// recently evaluated round.
    fn loss_reaction(&mut self, backlog: Option<Backlog>) -> LossReaction;

    /// Fields for qlog beyond [`Veno`]'s own.
    fn internals(&self, _out: &mut Internals) {}

    /// The generation of what the rules add to the internals (see
    /// `CongestionController::internals_generation`); `None`, the default,
    /// fills on every ACK.
    fn internals_generation(&self) -> Option<u64> {
        None
    }
}

/// Veno's own decisions (section 2.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClassicVeno {
    pub increase_below_beta: f64,
    pub increase_at_beta: f64,
    pub random_loss_factor: f64,
    pub congestion_loss_factor: f64,
}

impl ClassicVeno {
    /// From a parameter table that has Veno's entries where `keys` say.
    pub fn from_params(params: &ParamValues, keys: &VenoKeys) -> Self {
        ClassicVeno {
            increase_below_beta: params.value(keys.increase_below_beta),
            increase_at_beta: params.value(keys.increase_at_beta),
            random_loss_factor: params.value(keys.random_loss_factor),
            congestion_loss_factor: params.value(keys.congestion_loss_factor),
        }
    }

    /// Below beta one packet per RTT, otherwise one every other RTT.
    pub fn increase(&self, backlog: Backlog) -> f64 {
        if backlog.saturated() {
            self.increase_at_beta
        } else {
            self.increase_below_beta
        }
    }

    /// N < beta: random loss, × 4/5; otherwise (or without N) congestion
    /// loss, × 1/2.
    pub fn classify(&self, backlog: Option<Backlog>) -> LossReaction {
        match backlog {
            Some(b) if !b.saturated() => LossReaction {
                class: LossClass::Random,
                factor: self.random_loss_factor,
            },
            _ => LossReaction {
                class: LossClass::Congestion,
                factor: self.congestion_loss_factor,
            },
        }
    }
}

impl VenoRules for ClassicVeno {
    fn name(&self) -> &'static str {
        NAME
    }

    fn internals_generation(&self) -> Option<u64> {
        // Classic Veno adds no fields.
        Some(0)
    }

    fn initial_increase(&self) -> f64 {
        self.increase_below_beta
    }

    fn on_round_end(&mut self, _now: Instant, backlog: Option<Backlog>) -> Option<f64> {
        backlog.map(|b| self.increase(b))
    }

    fn loss_reaction(&mut self, backlog: Option<Backlog>) -> LossReaction {
        self.classify(backlog)
    }
}

/// The parameters [`Veno`] itself reads.
#[derive(Clone, Copy, Debug)]
struct Config {
    beta: f64,
    timeout_ssthresh_factor: f64,
    min_rtt_samples: u64,
    pacing: PacingProfile,
}

/// The Veno skeleton; see the module documentation. `Veno` alone is TCP
/// Veno.
#[derive(Debug)]
pub struct Veno<R: VenoRules = ClassicVeno> {
    rules: R,
    config: Config,
    window: Window,
    base_rtt: BaseRttTracker,
    rounds: RoundClock,
    /// N of the most recently evaluated round.
    backlog: Option<Backlog>,
    /// The RTT that N was computed from.
    backlog_rtt: Option<Duration>,
    /// Congestion-avoidance increase, packets per RTT.
    increase_per_rtt: f64,
    /// Acknowledged bytes × increase not yet turned into whole packets.
    ai_credit: f64,
    epoch: RecoveryEpoch,
    last_loss: Option<LossReaction>,
    /// The stack's smoothed RTT, for pacing.
    smoothed_rtt: Option<Duration>,
    own_internals_generation: KeyedGeneration<VenoInternalsKey>,
}

/// Everything of [`Veno`]'s own that its qlog fields are made of.
#[derive(Clone, Copy, Debug, PartialEq)]
struct VenoInternalsKey {
    cwnd: usize,
    ssthresh: usize,
    max_datagram_size: usize,
    base_rtt: Option<Duration>,
    backlog_rtt: Option<Duration>,
    backlog: Option<Backlog>,
    increase_per_rtt: f64,
    last_loss: Option<LossReaction>,
    round: Option<u64>,
}

impl Veno<ClassicVeno> {
    /// TCP Veno with `params` from [`PARAMS`].
    pub fn new(params: &ParamValues, window: WindowConfig) -> Self {
        Veno::with_rules(
            ClassicVeno::from_params(params, &KEYS),
            params,
            &KEYS,
            window,
        )
    }
}

impl<R: VenoRules> Veno<R> {
    /// A controller making `rules`' decisions, reading the skeleton's
    /// parameters from `params` where `keys` say.
    pub fn with_rules(
        rules: R,
        params: &ParamValues,
        keys: &VenoKeys,
        window: WindowConfig,
    ) -> Self {
        let increase_per_rtt = sane_increase(rules.initial_increase());
        Veno {
            rules,
            config: Config {
                beta: params.value(keys.beta),
                timeout_ssthresh_factor: params.value(keys.timeout_ssthresh_factor),
                min_rtt_samples: params.value(keys.min_rtt_samples),
                pacing: PacingProfile::read(params, keys.pacing),
            },
            window: Window::new(window),
            base_rtt: BaseRttTracker::new(),
            rounds: RoundClock::for_datagram_size(window.max_datagram_size),
            backlog: None,
            backlog_rtt: None,
            increase_per_rtt,
            ai_credit: 0.0,
            // A packet sent at the instant of a reduction counts as after
            // it, as in this crate's Vegas.
            epoch: RecoveryEpoch::new(SentAtReduction::CountsAsAfter),
            last_loss: None,
            smoothed_rtt: None,
            own_internals_generation: KeyedGeneration::default(),
        }
    }

    pub fn rules(&self) -> &R {
        &self.rules
    }

    /// N of the most recently evaluated round.
    pub fn backlog(&self) -> Option<Backlog> {
        self.backlog
    }

    pub fn base_rtt(&self) -> Option<Duration> {
        self.base_rtt.base_rtt()
    }

    /// The congestion-avoidance increase in force, packets per RTT.
    pub fn increase_per_rtt(&self) -> f64 {
        self.increase_per_rtt
    }

    pub fn last_loss(&self) -> Option<LossReaction> {
        self.last_loss
    }

    /// N = Diff × BaseRTT for a finished round, if it measured enough.
    fn evaluate(&mut self, round: &CompletedRound) -> Option<Backlog> {
        if round.rtt_samples < self.config.min_rtt_samples {
            return None;
        }
        let base_rtt = self.base_rtt.base_rtt()?;
        let rtt = round.min_rtt?;
        let diff = VegasDiff::compute(self.window.cwnd_packets(), base_rtt, rtt)?;
        self.backlog_rtt = Some(rtt);
        Some(Backlog {
            n_packets: diff.diff_packets,
            beta: self.config.beta,
        })
    }

    fn complete_round(&mut self, now: Instant, backlog: Option<Backlog>) {
        if backlog.is_some() {
            self.backlog = backlog;
        }
        if let Some(increase) = self.rules.on_round_end(now, backlog) {
            self.increase_per_rtt = sane_increase(increase);
        }
    }

    /// Slow start by the bytes acknowledged up to ssthresh, the rest as
    /// congestion-avoidance credit.
    fn grow(&mut self, bytes: usize) {
        let bytes = self.window.slow_start(bytes);
        if bytes == 0 {
            return;
        }
        // cwnd += increase_per_rtt × mss × bytes / cwnd, in whole packets.
        let credit = self.ai_credit + bytes as f64 * self.increase_per_rtt;
        let window = self.window.cwnd() as f64;
        let packets = (credit / window).floor();
        if packets >= 1.0 {
            let added = (packets as usize).saturating_mul(self.window.max_datagram_size());
            self.window.increase(added);
            self.ai_credit = (credit - packets * window).max(0.0);
        } else {
            self.ai_credit = credit;
        }
    }

    fn reduce_to(&mut self, window: usize, now: Instant) {
        self.window.set_cwnd(window);
        self.epoch.begin(now);
        self.ai_credit = 0.0;
    }
}

/// An increase is a finite, non-negative number of packets per RTT.
fn sane_increase(increase: f64) -> f64 {
    if increase.is_finite() {
        increase.max(0.0)
    } else {
        0.0
    }
}

impl<R: VenoRules> CongestionController for Veno<R> {
    fn name(&self) -> &'static str {
        self.rules.name()
    }

    fn on_packet_sent(&mut self, sent: &PacketSent) {
        self.rounds
            .on_sized_packet_sent(sent.pkt_num, sent.time_sent, sent.size);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.acked.is_empty() {
            return;
        }
        self.rules.observe_ack(ack);
        if !ack.rtt.smoothed_rtt.is_zero() {
            self.smoothed_rtt = Some(ack.rtt.smoothed_rtt);
        }
        if let Some(rtt) = ack
            .summary
            .min_rtt_from(ack.acked, self.rounds.min_sample_size())
        {
            self.base_rtt.on_rtt_sample(rtt);
        }

        match self.epoch.on_ack_with_rounds(ack, &mut self.rounds) {
            AckedRound::InProgress => {}
            AckedRound::Ended(round) => {
                let backlog = self.evaluate(&round);
                self.complete_round(ack.now, backlog);
            }
            // Not evaluated: the round ended in recovery, or was abandoned
            // because recovery ended.
            AckedRound::EndedInRecovery(_) | AckedRound::RecoveryEnded => {
                self.complete_round(ack.now, None)
            }
        }

        if self.epoch.in_recovery() || ack.app_limited {
            return;
        }
        let epoch = self.epoch;
        let bytes = ack
            .acked
            .iter()
            .filter(|p| epoch.sent_after_reduction(p.time_sent))
            .fold(0usize, |sum, p| sum.saturating_add(p.size));
        self.grow(bytes);
    }

    fn on_congestion_event(&mut self, loss: &CongestionEvent) {
        if loss.persistent_congestion {
            self.window
                .set_ssthresh(self.window.scaled(self.config.timeout_ssthresh_factor));
            self.last_loss = Some(LossReaction {
                class: LossClass::Congestion,
                factor: self.config.timeout_ssthresh_factor,
            });
            self.reduce_to(self.window.minimum(), loss.now);
            return;
        }
        if !self.epoch.sent_after_reduction(loss.largest_lost_time_sent) {
            // NewReno: one reduction per window of data.
            return;
        }
        let reaction = self.rules.loss_reaction(self.backlog);
        let factor = if reaction.factor.is_finite() {
            reaction.factor.clamp(0.0, 1.0)
        } else {
            1.0
        };
        let reduced = self.window.scaled(factor);
        self.window.set_ssthresh(reduced);
        self.last_loss = Some(LossReaction { factor, ..reaction });
        self.reduce_to(reduced, loss.now);
    }

    fn on_spurious_loss(&mut self, cwnd: usize, ssthresh: usize) -> bool {
        self.set_window(cwnd, ssthresh);
        true
    }

    fn set_window(&mut self, cwnd: usize, ssthresh: usize) {
        self.window.restore(cwnd, ssthresh);
        self.epoch.undo();
        self.ai_credit = 0.0;
    }

    fn cwnd(&self) -> usize {
        self.window.cwnd()
    }

    fn ssthresh(&self) -> usize {
        self.window.ssthresh()
    }

    fn state(&self) -> CcState {
        self.window.state(self.epoch.in_recovery())
    }

    /// None with `profile=paper` (Reno does not pace); see the module docs.
    fn pacing(&self) -> Option<Pacing> {
        self.config.pacing.pacing(
            self.window.in_slow_start(),
            self.window.cwnd(),
            self.smoothed_rtt,
        )
    }

    fn internals(&self, out: &mut Internals) {
        out.float("cwnd_packets", self.window.cwnd_packets());
        if let Some(ssthresh) = self.window.ssthresh_packets() {
            out.float("ssthresh_packets", ssthresh);
        }
        if let Some(base) = self.base_rtt.base_rtt() {
            out.millis("base_rtt_ms", base);
        }
        if let Some(rtt) = self.backlog_rtt {
            out.millis("round_rtt_ms", rtt);
        }
        if let Some(backlog) = self.backlog {
            out.float("n_packets", backlog.n_packets);
        }
        out.float("beta", self.config.beta);
        out.float("increase_per_rtt", self.increase_per_rtt);
        out.text(
            "loss_class",
            self.last_loss.map_or("none", |l| l.class.as_str()),
        );
        if let Some(loss) = self.last_loss {
            out.float("loss_factor", loss.factor);
        }
        if let Some(round) = self.rounds.current() {
            out.int("round", round.index);
        }
        self.rules.internals(out);
    }

    fn internals_generation(&self) -> Option<u64> {
        let rules = self.rules.internals_generation()?;
        let own = self.own_internals_generation.of(VenoInternalsKey {
            cwnd: self.window.cwnd(),
            ssthresh: self.window.ssthresh(),
            max_datagram_size: self.window.max_datagram_size(),
            base_rtt: self.base_rtt.base_rtt(),
            backlog_rtt: self.backlog_rtt,
            backlog: self.backlog,
            increase_per_rtt: self.increase_per_rtt,
            last_loss: self.last_loss,
            round: self.rounds.current().map(|r| r.index),
        });
        // Both only grow: the sum moves when either does.
        Some(own.wrapping_add(rules))
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: usize) {
        // N counts packets: keep the window's packet count.
        self.window.rescale_to(max_datagram_size);
        self.rounds.set_max_datagram_size(max_datagram_size);
        self.ai_credit = 0.0;
    }
}

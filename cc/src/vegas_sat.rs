//! Vegas-Sat: the Vegas family's ideas at GEO-satellite scale.
//!
//! The papers' members were designed for bandwidth-delay products of tens of
//! packets. A geostationary path (600 ms RTT, 20 Mbit/s, 25-packet buffers)
//! holds about 1100, and there the papers' rules lose: Vegas's slow start
//! doubles only every other round and leaves at half the path's capacity,
//! congestion avoidance then adds one packet per 600 ms, and a random loss
//! (1 % on a lossy satellite link) cuts a window that takes minutes to
//! regrow. This member keeps what makes the family delay-based, Vegas's
//! estimate of its own queue (004_039b3aff67042154.txt, section 3.5.2),
//! and adds what a delay-based sender needs at this scale, each from a
//! relative of the family:
//!
//! | mechanism | from | parameter |
//! |---|---|---|
//! | queue measured on the forward path only | RoVegas's forward queueing (002), with receive stamps instead of router support | `forward_delay` |
//! | capacity from receive-stamped packet pairs, start-up jumps to half the BDP, regrowth towards it | Vegas-W's bandwidth estimate (003), packet pairs (Keshav 1991), Careful Resume's half-BDP jump | `capacity_jump`, `jump_fraction`, `regrowth_fraction` |
//! | scalable update towards `alpha` queued packets | FAST TCP (Jin, Wei, Low 2004): `w ← w + γ(BaseRTT/RTT·w + α − w)` | `scalable_update`, `fast_gain` |
//! | a loss without a queue costs nothing | Veno's N < beta test (001 section 2.1), with VenoDB's receive-stamp delay (001 section 3) | `loss_discrimination`, `random_loss_queue_packets` |
//! | a delay step is a new path, not a queue | Vegas-W's BaseRTT refresh on route change (003) | `rebase_rounds` |
//! | paced start-up and avoidance | RFC 9002 section 7.7, the paper's spike suppression (004 section 3.4) | `startup_pacing_gain`, `pacing_gain`, `pacing_cap` |
//!
//! # Per round (a round ends when a packet sent after it began is acknowledged)
//!
//! ```text
//! q     = forward queueing delay (smallest of the round)        if stamped
//!         else  round's smallest RTT − BaseRTT
//! Diff  = cwnd × q / (BaseRTT + q)               packets queued (Vegas's Diff)
//! C     = capacity from packet pairs; target = C × BaseRTT + alpha
//!
//! start-up (cwnd grows by the bytes acked, paced at 2 × cwnd/RTT ≤ C):
//!     Diff > gamma:                 cwnd = cwnd − Diff + alpha; avoidance
//!     first round with C:           cwnd = max(cwnd, jump_fraction × target)
//!     (per ACK) cwnd ≥ target:      cwnd = target; avoidance
//! avoidance (paced at 1.25 × cwnd/RTT):
//!     cwnd += fast_gain × (alpha − Diff)            (FAST; at most ×2, ÷2)
//!     Diff < alpha / 2 and cwnd < target:
//!                                   cwnd += regrowth_fraction × (target − cwnd)
//!     Diff > beta for rebase_rounds rounds in a row although cwnd fell each
//!     time:                         the delay is the path's: BaseRTT = RTT now
//! on a loss of a packet sent after the last reduction:
//!     queue now < random_loss_queue_packets (and few such losses this round):
//!                                   random: cwnd unchanged
//!     else:                         cwnd × loss_factor; start-up ends
//! ```
//!
//! # Choices, measured (`docs/satellite.md` has the ablation)
//!
//! - **Diff from the round's smallest queueing delay.** At 1100 packets a
//!   millisecond of noise is almost two packets of Diff; the smallest sample
//!   of a round is the standing queue, which is what Diff means, and is
//!   immune to ACK-path jitter that only ever adds delay.
//! - **Pairs.** The pacer releases two packets at a time (as 004 section 3.4
//!   allows), so every pacing interval carries a pair whose spacing at the
//!   receiver is the bottleneck's serialisation time (`shared/packet_pair`).
//!   The unpaced initial window gives the first pairs one RTT after the
//!   request, which is when the jump happens.
//! - **Start-up is paced at no more than C.** Doubling at 2 × cwnd/RTT would
//!   send above the bottleneck rate in the round that crosses it and
//!   overflow a 25-packet buffer; capped at C no queue forms, and the window
//!   (at most target = BDP + alpha) bounds the queue to alpha.
//! - **No standing BaseRTT window.** BaseRTT is the smallest RTT seen, as in
//!   Vegas; a windowed minimum would slowly take the flow's own queue into
//!   the baseline. A step up of the path's delay is recognised instead by a
//!   queue that does not drain although the window shrinks (the rebase);
//!   a step down lowers the minimum at once.
//! - **Random losses** are recognised by the queue at the moment of the loss
//!   (Veno's N < beta, measured on the forward path when stamps exist). A
//!   buffer too small for the queue to show would let every overflow pass as
//!   random, so losses count as random only while they stay below
//!   `max_random_loss_fraction` of the round's packets.
//! - **Without receive timestamps** (a peer without the extension) there is
//!   no capacity estimate: start-up is a paced slow start ending on Diff >
//!   gamma, and Diff uses RTTs.

use std::time::Duration;

use crate::controller::{AlgorithmInfo, CcState, CongestionController, Internals, Pacing};
use crate::controller::{WindowConfig, MINIMUM_WINDOW_PACKETS};
use crate::events::{AckEvent, CongestionEvent, PacketSent};
use crate::params::{ParamInfo, ParamKind, ParamValues};
use crate::shared::forward_queue::ForwardQueue;
use crate::shared::packet_pair::PacketPairEstimator;
use crate::shared::recovery_epoch::{AckedRound, RecoveryEpoch, SentAtReduction};
use crate::shared::round_clock::{smallest_rtt_sample, CompletedRound, RoundClock};
use crate::shared::window::Window;
use crate::shared::windowed_min::WindowedMin;

const ON_OFF: ParamKind = ParamKind::Choice(&["on", "off"]);
const PACKETS: ParamKind = ParamKind::Number {
    min: 0.0,
    max: 10_000.0,
};
const FRACTION: ParamKind = ParamKind::Number { min: 0.0, max: 1.0 };
const GAIN: ParamKind = ParamKind::Number {
    min: 1.0,
    max: 10.0,
};

/// Parameters of `vegas-sat`.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "alpha",
        default: 5.0,
        kind: PACKETS,
        description: "packets to keep queued at the bottleneck (FAST's alpha): the target of \
                      the update",
    },
    ParamInfo {
        name: "beta",
        default: 10.0,
        kind: PACKETS,
        description: "packets queued above which a queue that does not drain is taken for a \
                      delay step of the path",
    },
    ParamInfo {
        name: "gamma",
        default: 10.0,
        kind: PACKETS,
        description: "packets queued above which start-up ends (Vegas's gamma)",
    },
    ParamInfo {
        name: "fast_gain",
        default: 0.5,
        kind: FRACTION,
        description: "FAST's gamma: the fraction of the distance to alpha queued packets \
                      closed per round",
    },
    ParamInfo {
        name: "scalable_update",
        default: 0.0,
        kind: ON_OFF,
        description: "on: FAST's update towards alpha; off: Vegas's one packet per round \
                      (alpha..beta)",
    },
    ParamInfo {
        name: "capacity_jump",
        default: 0.0,
        kind: ON_OFF,
        description: "use the packet-pair capacity: start-up jumps to jump_fraction of the \
                      BDP and ends at it, avoidance regrows towards it",
    },
    ParamInfo {
        name: "jump_fraction",
        default: 0.5,
        kind: FRACTION,
        description: "start-up's jump, as a fraction of capacity x BaseRTT + alpha (Careful \
                      Resume's half)",
    },
    ParamInfo {
        name: "regrowth_fraction",
        default: 0.5,
        kind: FRACTION,
        description: "fraction of the gap to the BDP closed per round in avoidance while \
                      nothing is queued",
    },
    ParamInfo {
        name: "capacity_pairs",
        default: 128.0,
        kind: ParamKind::Integer {
            min: 1,
            max: 100_000,
        },
        description: "the capacity is the median of this many latest packet pairs",
    },
    ParamInfo {
        name: "min_pairs",
        default: 4.0,
        kind: ParamKind::Integer {
            min: 1,
            max: 100_000,
        },
        description: "packet pairs needed before the capacity is used (the initial window, \
                      paced in pairs, gives four or five)",
    },
    ParamInfo {
        name: "forward_delay",
        default: 0.0,
        kind: ON_OFF,
        description: "measure the queue on the forward path from receive timestamps when the \
                      peer sends them (a return-link queue is not forward congestion)",
    },
    ParamInfo {
        name: "loss_discrimination",
        default: 0.0,
        kind: ON_OFF,
        description: "a loss while fewer than random_loss_queue_packets are queued is random \
                      and does not reduce cwnd",
    },
    ParamInfo {
        name: "random_loss_queue_packets",
        default: 10.0,
        kind: PACKETS,
        description: "queued packets below which a loss is taken for random (Veno's beta)",
    },
    ParamInfo {
        name: "max_random_loss_fraction",
        default: 0.05,
        kind: FRACTION,
        description: "losses in a round beyond this fraction of cwnd are congestive whatever \
                      the queue (a buffer too small to show a queue)",
    },
    ParamInfo {
        name: "loss_factor",
        default: 0.75,
        kind: FRACTION,
        description: "cwnd is multiplied by this on a congestive loss (Vegas's 3/4)",
    },
    ParamInfo {
        name: "rebase_rounds",
        default: 4.0,
        kind: ParamKind::Integer { min: 0, max: 1000 },
        description: "rounds in a row with more than beta queued although cwnd fell each time, \
                      after which BaseRTT is the current RTT (a delay step); 0: never",
    },
    ParamInfo {
        name: "startup_pacing_gain",
        default: 2.0,
        kind: GAIN,
        description: "start-up pacing rate as a multiple of cwnd/RTT (2: cwnd can double per \
                      round)",
    },
    ParamInfo {
        name: "pacing_cap",
        default: 1.0,
        kind: ParamKind::Number {
            min: 0.0,
            max: 10.0,
        },
        description: "pacing rate at most this multiple of the packet-pair capacity, in \
                      start-up and avoidance (0: no cap)",
    },
    ParamInfo {
        name: "pacing_gain",
        default: 1.25,
        kind: GAIN,
        description: "avoidance pacing rate as a multiple of cwnd/RTT (RFC 9002 section 7.7's \
                      N = 1.25)",
    },
];

/// alpha cannot exceed beta, nor beta the random-loss queue make sense below alpha.
fn validate(params: &ParamValues) -> Result<(), String> {
    let (alpha, beta) = (params.get("alpha"), params.get("beta"));
    if alpha > beta {
        return Err(format!(
            "alpha ({alpha}) must not exceed beta ({beta}): alpha is the queue aimed at, \
             beta the queue above which a standing delay is taken for the path's"
        ));
    }
    Ok(())
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(VegasSat::new(params, window))
}

/// `vegas-sat`.
pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: "vegas-sat",
    description: "Vegas at GEO scale: receive-stamp packet pairs jump start-up to the BDP, \
                  FAST's update towards alpha queued packets, forward-only queueing, random \
                  losses cost nothing, delay steps rebase",
    params: PARAMS,
    validate,
    build,
};

/// The parameters, read once.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Config {
    alpha: f64,
    beta: f64,
    gamma: f64,
    fast_gain: f64,
    scalable_update: bool,
    capacity_jump: bool,
    jump_fraction: f64,
    regrowth_fraction: f64,
    capacity_pairs: usize,
    min_pairs: usize,
    forward_delay: bool,
    loss_discrimination: bool,
    random_loss_queue_packets: f64,
    max_random_loss_fraction: f64,
    loss_factor: f64,
    rebase_rounds: u64,
    startup_pacing_gain: f64,
    pacing_cap: f64,
    pacing_gain: f64,
}

impl Config {
    fn read(p: &ParamValues) -> Self {
        let on = |name: &str| p.word(name) == "on";
        Config {
            alpha: p.get("alpha"),
            beta: p.get("beta"),
            gamma: p.get("gamma"),
            fast_gain: p.get("fast_gain"),
            scalable_update: on("scalable_update"),
            capacity_jump: on("capacity_jump"),
            jump_fraction: p.get("jump_fraction"),
            regrowth_fraction: p.get("regrowth_fraction"),
            capacity_pairs: p.get("capacity_pairs") as usize,
            min_pairs: p.get("min_pairs") as usize,
            forward_delay: on("forward_delay"),
            loss_discrimination: on("loss_discrimination"),
            random_loss_queue_packets: p.get("random_loss_queue_packets"),
            max_random_loss_fraction: p.get("max_random_loss_fraction"),
            loss_factor: p.get("loss_factor"),
            rebase_rounds: p.get("rebase_rounds") as u64,
            startup_pacing_gain: p.get("startup_pacing_gain"),
            pacing_cap: p.get("pacing_cap"),
            pacing_gain: p.get("pacing_gain"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Startup,
    Avoidance,
}

/// Where a queue estimate came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QueueSource {
    /// The receiver's stamps: forward path only.
    Forward,
    /// RTT − BaseRTT: both directions.
    Rtt,
}

impl QueueSource {
    fn as_str(self) -> &'static str {
        match self {
            QueueSource::Forward => "forward",
            QueueSource::Rtt => "rtt",
        }
    }
}

/// A queue estimate: delay, source, and packets (Diff) for a window.
#[derive(Clone, Copy, Debug, PartialEq)]
struct QueueEstimate {
    delay: Duration,
    source: QueueSource,
    packets: f64,
}

/// What happened to losses, for qlog.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LossCounts {
    random: u64,
    congestive: u64,
    /// Random losses in the round in progress (bytes), for the budget.
    round_random_bytes: u64,
}

/// Vegas-Sat; see the module documentation.
#[derive(Debug)]
pub struct VegasSat {
    config: Config,
    window: Window,
    rounds: RoundClock,
    epoch: RecoveryEpoch,
    phase: Phase,
    /// BaseRTT: the smallest RTT seen since the start or the last rebase.
    base_rtt: WindowedMin<Duration>,
    forward: ForwardQueue,
    pairs: PacketPairEstimator,
    smoothed_rtt: Option<Duration>,
    latest_rtt: Option<Duration>,
    last_queue: Option<QueueEstimate>,
    /// Start-up made its jump.
    jumped: bool,
    /// Rounds in a row with more than beta queued while cwnd fell.
    standing_queue_rounds: u64,
    rebases: u64,
    losses: LossCounts,
}

impl VegasSat {
    pub fn new(params: &ParamValues, window: WindowConfig) -> Self {
        let config = Config::read(params);
        VegasSat {
            config,
            window: Window::new(window),
            rounds: RoundClock::for_datagram_size(window.max_datagram_size),
            epoch: RecoveryEpoch::new(SentAtReduction::CountsAsAfter),
            phase: Phase::Startup,
            base_rtt: WindowedMin::new(0),
            forward: ForwardQueue::new(0),
            pairs: PacketPairEstimator::new(config.capacity_pairs, config.min_pairs),
            smoothed_rtt: None,
            latest_rtt: None,
            last_queue: None,
            jumped: false,
            standing_queue_rounds: 0,
            rebases: 0,
            losses: LossCounts::default(),
        }
    }

    fn mds(&self) -> f64 {
        self.window.max_datagram_size() as f64
    }

    /// Bottleneck capacity in bytes per second, when measured and used.
    pub fn capacity(&self) -> Option<f64> {
        if !self.config.capacity_jump {
            return None;
        }
        self.pairs.capacity().filter(|c| *c > 0.0)
    }

    /// capacity × BaseRTT + alpha, in bytes.
    fn target_window(&self) -> Option<usize> {
        let capacity = self.capacity()?;
        let base = self.base_rtt.get()?;
        let bytes = capacity * base.as_secs_f64() + self.config.alpha * self.mds();
        Some((bytes as usize).max(MINIMUM_WINDOW_PACKETS * self.window.max_datagram_size()))
    }

    /// Diff for a queueing delay `delay`: cwnd × q / (BaseRTT + q).
    fn queued_packets(&self, delay: Duration) -> f64 {
        let base = self.base_rtt.get().unwrap_or(Duration::ZERO);
        let rtt = base + delay;
        if rtt.is_zero() {
            return 0.0;
        }
        self.window.cwnd_packets() * delay.as_secs_f64() / rtt.as_secs_f64()
    }

    /// The round's queue: forward stamps when there are any, else RTTs.
    fn round_queue(&self, round: &CompletedRound) -> Option<QueueEstimate> {
        let (delay, source) = match self.forward.round_min() {
            Some((delay, _)) if self.config.forward_delay => (delay, QueueSource::Forward),
            _ => {
                let base = self.base_rtt.get()?;
                (round.min_rtt?.saturating_sub(base), QueueSource::Rtt)
            }
        };
        Some(QueueEstimate {
            delay,
            source,
            packets: self.queued_packets(delay),
        })
    }

    /// The queue right now, for a loss: the latest forward sample, else the
    /// latest RTT above BaseRTT.
    fn current_queue_packets(&self) -> Option<f64> {
        let delay = match self.forward.latest() {
            Some(d) if self.config.forward_delay => d,
            _ => self.latest_rtt?.saturating_sub(self.base_rtt.get()?),
        };
        Some(self.queued_packets(delay))
    }

    fn leave_startup(&mut self, cwnd: usize) {
        self.window.set_cwnd(cwnd);
        self.window.set_ssthresh(self.window.cwnd());
        self.phase = Phase::Avoidance;
    }

    fn on_round_end(&mut self, round: &CompletedRound) {
        let queue = self.round_queue(round);
        self.last_queue = queue.or(self.last_queue);
        self.end_estimator_rounds();
        let Some(queue) = queue else { return };
        let mds = self.mds();
        match self.phase {
            Phase::Startup if queue.packets > self.config.gamma => {
                // A queue formed: leave with it drained, plus alpha.
                let cwnd = (self.window.cwnd_packets() - queue.packets + self.config.alpha)
                    .max(MINIMUM_WINDOW_PACKETS as f64);
                self.leave_startup((cwnd * mds) as usize);
            }
            Phase::Startup => {}
            Phase::Avoidance => self.avoidance_round(round, queue),
        }
    }

    /// Start-up with a capacity: jump once to `jump_fraction` of the
    /// target as soon as the capacity is known, and end at the target.
    fn startup_jump(&mut self) {
        let Some(target) = self.target_window() else {
            return;
        };
        if !self.jumped {
            self.jumped = true;
            let jump = (target as f64 * self.config.jump_fraction) as usize;
            if jump > self.window.cwnd() {
                self.window.set_cwnd(jump);
            }
        }
        if self.window.cwnd() >= target {
            self.leave_startup(target);
        }
    }

    fn end_estimator_rounds(&mut self) {
        self.base_rtt.end_round();
        self.forward.end_round();
        self.losses.round_random_bytes = 0;
    }

    fn avoidance_round(&mut self, round: &CompletedRound, queue: QueueEstimate) {
        let cwnd = self.window.cwnd_packets();
        let (alpha, beta) = (self.config.alpha, self.config.beta);
        let mut change = if self.config.scalable_update {
            // FAST: w ← w + γ(BaseRTT/RTT·w + α − w) = w + γ(α − Diff).
            (self.config.fast_gain * (alpha - queue.packets)).clamp(-cwnd / 2.0, cwnd)
        } else if queue.packets < alpha {
            1.0
        } else if queue.packets > beta {
            -1.0
        } else {
            0.0
        };
        if queue.packets < alpha / 2.0 {
            if let Some(target) = self.target_window() {
                let gap = target as f64 / self.mds() - cwnd;
                if gap > 0.0 {
                    change = change.max(self.config.regrowth_fraction * gap);
                }
            }
        }
        if round.app_limited {
            change = change.min(0.0);
        }
        self.track_standing_queue(round, queue, change);
        let bytes = (change.abs() * self.mds()) as usize;
        if change > 0.0 {
            self.window.increase(bytes);
        } else if change < 0.0 {
            self.window.decrease(bytes);
        }
    }

    /// A queue above beta that stays although cwnd fell every round is not
    /// ours: the path's delay stepped up. BaseRTT becomes the round's RTT.
    fn track_standing_queue(&mut self, round: &CompletedRound, queue: QueueEstimate, change: f64) {
        if self.config.rebase_rounds == 0 || queue.packets <= self.config.beta || change >= 0.0 {
            self.standing_queue_rounds = 0;
            return;
        }
        self.standing_queue_rounds += 1;
        if self.standing_queue_rounds < self.config.rebase_rounds {
            return;
        }
        self.standing_queue_rounds = 0;
        self.rebases = self.rebases.saturating_add(1);
        if let Some(rtt) = round.min_rtt {
            self.base_rtt.reset_to(rtt);
        }
        self.forward.rebase();
    }
}

impl CongestionController for VegasSat {
    fn name(&self) -> &'static str {
        "vegas-sat"
    }

    fn on_packet_sent(&mut self, sent: &PacketSent) {
        self.rounds
            .on_sized_packet_sent(sent.pkt_num, sent.time_sent, sent.size);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if ack.acked.is_empty() {
            return;
        }
        if !ack.rtt.smoothed_rtt.is_zero() {
            self.smoothed_rtt = Some(ack.rtt.smoothed_rtt);
        }
        let min_size = self.rounds.min_sample_size();
        if let Some(rtt) = smallest_rtt_sample(ack.acked, min_size) {
            self.base_rtt.on_sample(rtt);
            self.latest_rtt = Some(rtt);
        }
        let mut acked_bytes = 0usize;
        for packet in ack.acked {
            acked_bytes = acked_bytes.saturating_add(packet.size);
            self.forward.on_packet(packet, min_size);
            self.pairs.on_packet(packet, min_size);
        }

        match self.epoch.on_ack_with_rounds(ack, &mut self.rounds) {
            AckedRound::Ended(round) => self.on_round_end(&round),
            AckedRound::EndedInRecovery(_) => self.end_estimator_rounds(),
            AckedRound::InProgress | AckedRound::RecoveryEnded => {}
        }

        if self.phase == Phase::Startup && !self.epoch.in_recovery() && !ack.app_limited {
            self.window.slow_start(acked_bytes);
            self.startup_jump();
        }
    }

    fn on_congestion_event(&mut self, loss: &CongestionEvent) {
        if loss.persistent_congestion {
            // Start-up again from the minimum window; its pacing and its
            // jump keep it from overshooting, so no ssthresh bounds it.
            self.window.set_cwnd(self.window.minimum());
            self.window.set_ssthresh(usize::MAX);
            self.phase = Phase::Startup;
            self.jumped = false;
            self.epoch.begin(loss.now);
            self.losses.congestive = self.losses.congestive.saturating_add(1);
            return;
        }
        if !self.epoch.sent_after_reduction(loss.largest_lost_time_sent) {
            return;
        }
        if self.config.loss_discrimination {
            // A round carries about a window: the budget is a fraction of it.
            let budget = self.config.max_random_loss_fraction * self.window.cwnd() as f64;
            let within_budget = (self.losses.round_random_bytes + loss.lost_bytes as u64) as f64
                <= budget.max(loss.lost_bytes as f64);
            let queue = self.current_queue_packets();
            if within_budget && queue.is_some_and(|q| q < self.config.random_loss_queue_packets) {
                self.losses.random = self.losses.random.saturating_add(1);
                self.losses.round_random_bytes = self
                    .losses
                    .round_random_bytes
                    .saturating_add(loss.lost_bytes as u64);
                return;
            }
        }
        self.losses.congestive = self.losses.congestive.saturating_add(1);
        let reduced = self.window.scaled(self.config.loss_factor);
        if self.phase == Phase::Startup {
            let cwnd = self.target_window().map_or(reduced, |t| reduced.min(t));
            self.leave_startup(cwnd);
        } else {
            self.window.set_cwnd(reduced);
            self.window.set_ssthresh(reduced);
        }
        self.epoch.begin(loss.now);
    }

    fn on_spurious_loss(&mut self, cwnd: usize, ssthresh: usize) -> bool {
        self.window.restore(cwnd, ssthresh);
        self.epoch.undo();
        if self.window.in_slow_start() && !self.jumped {
            self.phase = Phase::Startup;
        }
        true
    }

    fn cwnd(&self) -> usize {
        self.window.cwnd()
    }

    fn ssthresh(&self) -> usize {
        self.window.ssthresh()
    }

    fn state(&self) -> CcState {
        if self.epoch.in_recovery() {
            return CcState::Recovery;
        }
        match self.phase {
            Phase::Startup => CcState::SlowStart,
            Phase::Avoidance => CcState::CongestionAvoidance,
        }
    }

    /// Pairs at `startup_pacing_gain` × cwnd/RTT in start-up (at most
    /// `pacing_cap` × capacity) and `pacing_gain` × cwnd/RTT after.
    /// Unpaced before the first RTT sample: the initial window leaves at once
    /// and gives the first packet pairs.
    fn pacing(&self) -> Option<Pacing> {
        let rtt = self
            .smoothed_rtt
            .or(self.base_rtt.get())
            .filter(|r| !r.is_zero())?;
        let per_rtt = self.window.cwnd() as f64 / rtt.as_secs_f64();
        let gain = match self.phase {
            Phase::Startup => self.config.startup_pacing_gain,
            Phase::Avoidance => self.config.pacing_gain,
        };
        let rate = match self.capacity() {
            Some(c) if self.config.pacing_cap > 0.0 => {
                (gain * per_rtt).min(self.config.pacing_cap * c)
            }
            _ => gain * per_rtt,
        };
        (rate.is_finite() && rate > 0.0).then_some(Pacing::trains(rate, 2))
    }

    fn internals(&self, out: &mut Internals) {
        out.text(
            "phase",
            match self.phase {
                Phase::Startup => "startup",
                Phase::Avoidance => "avoidance",
            },
        );
        out.float("cwnd_packets", self.window.cwnd_packets());
        out.float("alpha", self.config.alpha);
        if let Some(base) = self.base_rtt.get() {
            out.millis("base_rtt_ms", base);
        }
        if let Some(q) = self.last_queue {
            out.float("diff_packets", q.packets);
            out.millis("queue_delay_ms", q.delay);
            out.text("queue_source", q.source.as_str());
        }
        if let Some(c) = self.capacity() {
            out.float("capacity_mbps", c * 8.0 / 1e6);
        }
        if let Some(t) = self.target_window() {
            out.float("target_packets", t as f64 / self.mds());
        }
        out.int("random_losses", self.losses.random);
        out.int("congestive_losses", self.losses.congestive);
        out.int("rebases", self.rebases);
        if let Some(round) = self.rounds.current() {
            out.int("round", round.index);
        }
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: usize) {
        self.window.rescale_to(max_datagram_size);
        self.rounds.set_max_datagram_size(max_datagram_size);
    }
}

#[cfg(test)]
mod tests {}

//! TCP Vegas-W (Jingyao Qu), 003_5b3b63821b3b4570.txt, section IV: Vegas with
//! route surveillance and bandwidth estimation for GEO satellite paths.
//!
//! Vegas-W keeps Vegas (004_039b3aff67042154.txt) and changes three things:
//!
//! - **Slow start (IV.A).** When Diff exceeds gamma, Vegas-W does not leave
//!   slow start at once: it compares cwnd with the bandwidth estimate, and
//!   stays in slow start while cwnd is below estimate × BaseRTT (the queue is
//!   the burst's, not the path's).
//! - **Congestion avoidance (IV.B).** Each ACK's RTT, RTT_now, is compared with
//!   the mean of the previous m RTTs (m = 20); above n times that mean (n = 2)
//!   the route has changed and BaseRTT is refreshed. Otherwise Vegas's
//!   alpha/beta rule (eq. 1) moves cwnd by one packet per RTT.
//! - **Loss (IV.C).** The two packets sent just before the lost one are looked
//!   up: if their ACKs came back no further apart than they left, nothing on
//!   the path is queueing them, and the loss is a link error — cwnd and
//!   ssthresh stay. Otherwise it is congestion: ssthresh = estimate × RTTmin,
//!   cwnd = ssthresh. A timeout (QUIC's persistent congestion) returns to slow
//!   start.
//!
//! The estimate is Westwood's (section III.B, eqs. 2-5): one sample per ACK,
//! b_k = d_k / (t_k − t_{k−1}), smoothed by the Tustin low-pass filter with
//! time constant τ ([`PerAckSampler`], Westwood's sampler with no
//! minimum window, on the host's send clock in nanoseconds, and
//! [`TustinLowPass`]). The controller is the Vegas skeleton
//! ([`crate::vegas`]) with [`VegasWRules`]: rounds, BaseRTT, Diff, slow
//! start's growth and holding rounds, the window, recovery epochs and pacing
//! are Vegas's, and only the decisions above are this file's (IV.A as
//! [`VegasRules::slow_start_round`], IV.B as
//! [`VegasRules::on_base_rtt_sample`], IV.C as
//! [`VegasRules::loss_reaction`]).
//!
//! The pseudo-code, as this file runs it:
//!
//! ```text
//! per ACK:
//!     b_k = d_k / (t_k − t_{k−1});  b̂_k = α_k·b̂_{k−1} + (1 − α_k)(b_k + b_{k−1})/2   (III.B)
//!     RTT_now = the ACK's RTT sample
//!     if not slow start and RTT_now > n × mean(previous m RTTs):
//!         BaseRTT = RTT_now                                    (IV.B, route change)
//!     else:
//!         BaseRTT = min(BaseRTT, RTT_now)
//!     if slow start and this is a growth round: cwnd += bytes acknowledged
//! per round (one RTT):
//!     Diff = (cwnd/BaseRTT − cwnd/RTT) × BaseRTT
//!     if slow start:
//!         if this was a growth round:          next round holds cwnd (Vegas 3.5.3)
//!         elif Diff > gamma and cwnd >= b̂ × BaseRTT:
//!                                              cwnd ×= 7/8; ssthresh = cwnd (IV.A)
//!         else:                                next round grows (past gamma too, IV.A)
//!     else:
//!         if Diff < alpha:                     cwnd += 1 packet  (eq. 1)
//!         elif Diff > beta:                    cwnd −= 1 packet
//! on loss of packet L (not a timeout):
//!     P1, P2 = the two packets sent just before L, both acknowledged
//!     if ack_spacing(P1, P2) > send_spacing(P1, P2) × (1 + margin):   (IV.C)
//!         congestion: ssthresh = b̂ × RTTmin; cwnd = min(cwnd, ssthresh)
//!     else:
//!         link error: nothing changes
//! on persistent congestion:
//!     ssthresh = b̂ × RTTmin; cwnd = minimum window; slow start      (IV.C, last line)
//! ```
//!
//! # Where the paper is ambiguous
//!
//! Each choice is tested in `tests/vegas_w.rs`; where it is a number or a
//! switch it is a parameter.
//!
//! - **alpha and beta** are given as "1kb/s and 3kb/s". Vegas's thresholds are
//!   packets queued, Diff is computed in packets here, and Vegas's own paper
//!   uses 1 and 3: alpha = 1, beta = 3 packets. **gamma** is the paper's
//!   "slow-start thresh" for "the estimated amount of extra data" in IV.A,
//!   i.e. Vegas's gamma, 1 packet.
//! - **τ** (`tau_ms`) is not given, and results depend on it. We take 500 ms:
//!   about one GEO round trip, so the estimate averages roughly one window of
//!   ACKs. Measured with this code (seed 1, `vegas-sim run SCENARIO --cc
//!   vegas-w --cc-param tau_ms=T`): on fau-sat τ = 50/150/500 ms complete in
//!   19.24/19.24/19.33 s retransmitting 1.52/1.52/0.60 MB; on fau-satl in
//!   23.2/22.6/21.1 s; on vegas-w-cbr-step (`--set duration_s=40`) the link
//!   is first used at 95% after 7.8 s for all three, with mean goodput
//!   11.8/11.3/9.9 Mbit/s over the 40 s. A short τ follows the ramp sooner
//!   but passes ACK-compression noise into IV.C's ssthresh (more
//!   retransmission on the GEO paths); 500 ms is the choice for the GEO
//!   paths this port is for. (Before the round RTT and pacing fixes, τ
//!   decided the 003 start-up claim: 8.4 s at 50 ms, 36.6 s at 150 ms.) The
//!   filter's handling of its first sample and of gaps longer than 2τ is
//!   [`TustinLowPass`]'s.
//! - **Samples in congestion avoidance** (`bwe_in_congestion_avoidance`).
//!   IV.B says that in congestion avoidance "bandwidth size will not be
//!   estimated", yet IV.C uses the estimate on every congestion loss, which
//!   mostly happens in congestion avoidance, and section V.A credits Vegas-W
//!   with following a bandwidth change at 80 s. We keep estimating by default
//!   (`on`); `off` gives the literal reading: the estimate freezes when slow
//!   start ends and resumes in the next slow start.
//! - **"Compare the congestion window size with estimated bandwidth"** (IV.A)
//!   compares a window with a rate; as the issue and Westwood's BDP do, the
//!   window is compared with estimate × BaseRTT. Slow start continues only if
//!   cwnd is strictly below it. Before the first bandwidth sample there is no
//!   evidence that the queue is temporary, so Diff > gamma ends slow start as
//!   in Vegas.
//! - **Leaving slow start** is Vegas's: the paper only delays the exit. As in
//!   our Vegas, cwnd is cut by `ss_exit_factor` (7/8), ssthresh becomes cwnd,
//!   and the cut starts a recovery epoch. Slow start itself is Vegas's too:
//!   cwnd doubles every other RTT, and Diff is compared with gamma at the end
//!   of the holding rounds.
//! - **Route surveillance.** "RTT_now" is one sample per ACK frame (the
//!   smallest RTT among the packets it newly acknowledges, normally the
//!   newest one's: [`smallest_rtt_sample`](crate::shared::round_clock::smallest_rtt_sample), as the round clock takes it), as
//!   a TCP sender takes one per ACK; older packets of a QUIC ACK frame carry
//!   the frame's delay and are not separate samples. The m samples are
//!   therefore the last m ACK frames' — with one frame per packet, the m
//!   packets just before. The mean is over the m
//!   samples before RTT_now and needs m of them; samples are collected in
//!   every phase, the comparison is made only outside slow start ("when TCP
//!   connection enters congestion-avoidance phase", and slow-start bursts
//!   queue temporarily, IV.A). The comparison is strict. "BaseRTT refreshes"
//!   sets BaseRTT to RTT_now ([`BaseRttTracker::refresh`]); later samples
//!   lower it as usual. The refresh also clears the history, which described
//!   the old route: otherwise the next samples of the new route would be
//!   compared with a mean still made mostly of the old one and count as
//!   further route changes.
//! - **RTTmin** in IV.C is BaseRTT, which Vegas defines as the minimum RTT;
//!   after a route change it is the refreshed value, not the old route's
//!   minimum.
//! - **"The two packets before the lost one" in QUIC.** The lost packet is the
//!   congestion event's largest lost packet. Its two predecessors are the two
//!   packets this controller was told were sent (packets that count towards
//!   bytes in flight) just before it in packet-number order. Packet numbers
//!   QUIC skips and ACK-only packets are not in that sequence, as TCP's
//!   sequence numbers do not count bare ACKs. Both must have been
//!   acknowledged ("translated normally"); if either is still unacknowledged
//!   or was lost, if the lost packet or a predecessor is no longer tracked,
//!   or if the ACK spacing cannot be observed (below), the loss is
//!   unclassifiable and is treated as `unclassified_loss` (congestion by
//!   default: several losses in a row look like a queue overflowing, and it
//!   is the reaction every other member of the family would have).
//! - **Spacing.** Send spacing is `sent(P2) − sent(P1)` for P1 sent before P2.
//!   The "receiving time" of the paper is the peer's receive timestamp when
//!   both packets carry one (draft-ietf-quic-receive-ts); otherwise it is the
//!   arrival time of the ACK frame that acknowledged each (the event's `now`). If both were acknowledged
//!   at the same instant (normally by one ACK frame) and there are no receive
//!   timestamps, the spacing is not observable and the loss is unclassifiable.
//!   Spacings are signed, so reordered ACKs give a negative ACK spacing.
//! - **Threshold.** The paper: "if the former [send spacing] is less than the
//!   latter [ACK spacing]" it is congestion, otherwise link error. Here:
//!   congestion iff `ack_spacing > send_spacing × (1 + spacing_margin)`; the
//!   default margin 0 is the paper's strict comparison, equality is a link
//!   error. A margin absorbs timer jitter on paths that need it.
//! - **cwnd = ssthresh** on a congestion loss lowers cwnd to the estimated
//!   BDP. When the estimate is above cwnd (the filter lagging after a
//!   decrease), cwnd is not raised on a loss — TCP Westwood's
//!   `if cwnd > ssthresh then cwnd = ssthresh`, from which this reduction
//!   comes; cwnd then slow-starts towards ssthresh. This re-entry into slow
//!   start, not IV.A, is what carries Vegas-W through a GEO start-up that
//!   overflowed a small buffer (fau-sat): the loss sets ssthresh to the
//!   estimated BDP, far above the cut window.
//! - **Pacing** is Vegas's ([`crate::shared::pacing_profile`]): spike
//!   suppression outside slow start; slow start paced as RFC 9002 section
//!   7.7 asks by default (`profile=quic`), unpaced with `profile=paper`, as
//!   in Vegas's paper. 003 changes neither.
//! - **Round RTT** (`round_rtt`): the mean of the round's samples, as ns-2's
//!   Vegas computes it, with which 003 was simulated. It sees the queueing of
//!   slow-start bursts, which is what IV.A's test is for; with the round's
//!   minimum IV.A never fired. ssthresh is at least the
//!   minimum window. Before any bandwidth sample, a congestion loss halves
//!   the window like Reno.
//! - **One reaction per window.** QUIC reports several congestion events for
//!   the losses of one window. A congestion loss reduces the window only if
//!   the lost packet was sent after the last reduction (Vegas 3.3, RFC 9002
//!   7.3.2's recovery period); every loss is still classified and counted.
//!   After a reduction the controller reports `Recovery`, does not grow and
//!   does not evaluate rounds until a packet sent after it is acknowledged,
//!   then starts a fresh round, as our Vegas does.
//! - **Persistent congestion** is TCP's timeout: no classification,
//!   ssthresh = estimate × RTTmin (Westwood's timeout rule), cwnd = minimum
//!   window, slow start from a growth round. `loss_class` reports
//!   `persistent_congestion`.
//! - **Bounded memory.** Send and ACK times are kept per packet
//!   ([`SpacingLog`], shared in [`crate::shared::send_ack_spacing`]), in
//!   packet-number order, only while they can still be needed: a record may
//!   go once the two packets after it are resolved (acknowledged or
//!   lost), so about one window is tracked, and never more than
//!   `max_tracked_packets` (the oldest go first). They are a ring indexed by
//!   packet number, so an ACK costs a look-up per packet it acknowledges
//!   and no search or removal. When loss detection
//!   declares the largest lost packet L, every unacknowledged packet below L
//!   is lost too (RFC 9002's thresholds are monotonic in packet number and
//!   send time). A packet number not above the last one sent (a new
//!   packet-number space during the handshake) starts the record afresh; ACKs
//!   are matched by packet number and send time, so a packet of another
//!   space is never mistaken for one of ours.
//! - **Application-limited** ACKs are sampled for the estimate (it is the rate
//!   achieved) but do not grow cwnd (RFC 9002 section 7.8); decreases apply.
//! - **Spurious loss**: the saved window is restored and the reduction's epoch
//!   forgotten.
//! - **Window units.** cwnd is in bytes, Diff in packets of the current
//!   maximum datagram size; when that changes the window keeps its packet
//!   count.
//!
//! # qlog internals
//!
//! `bwe_bytes_per_s` (b̂), `bwe_window_packets` (b̂ × BaseRTT), `base_rtt_ms`,
//! `diff_packets`, `alpha`, `beta`, `gamma`, `cwnd_packets`,
//! `ssthresh_packets`, `ss_extensions` (slow start kept past gamma),
//! `route_change` (count) with the last one's `route_change_rtt_now_ms` and
//! `route_change_rtt_ave_ms`, `loss_class` (`none`, `congestion`,
//! `link_error`, `persistent_congestion`) with `loss_spacing_source`
//! (`receive_timestamps`, `ack_arrival`, `none`), `loss_send_spacing_ms`,
//! `loss_ack_spacing_ms`, and the counts `congestion_losses` and
//! `link_error_losses`.
//!
//! b̂ moves on every ACK (one sample per ACK, eq. 2). qlog shows it
//! where a decision reads it: at each round the rules decide (IV.A
//! compares it with cwnd there) and at each loss (IV.C's ssthresh), so it
//! moves in qlog once per round trip, not on every ACK (whose metrics event
//! would then carry it, most of the qlog's cost). The decisions always read
//! b̂ itself.

use std::time::{Duration, Instant};

use crate::choice_param_type;
use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{CongestionController, Internals};
use crate::events::{AckEvent, CongestionEvent, PacketSent};
use crate::params::{ChoiceParam, Key, OnOff, ParamInfo, ParamKind, ParamValues, ON_OFF};
use crate::shared::bandwidth_filter::{PerAckSampler, TustinLowPass};
use crate::shared::base_rtt::BaseRttTracker;
use crate::shared::pacing_profile::{self, PacingKeys, SPIKE_SUPPRESSION_PARAMS};
pub use crate::shared::send_ack_spacing::SpacingSource;
use crate::shared::send_ack_spacing::{PairSpacing, SpacingLog};
use crate::shared::window::Window;
use crate::vegas::{
    LinearStep, LossResponse, LossView, RoundView, SlowStartStep, ThresholdKeys, Vegas,
    VegasConfig, VegasKeys, VegasRules, VegasView, WindowChange, ROUND_RTT_MEAN,
};

pub const NAME: &str = "vegas-w";

const THRESHOLD_RANGE: ParamKind = ParamKind::Number {
    min: 0.0,
    max: 1000.0,
};
const LOSS_CLASSES: ParamKind = ParamKind::Choice(LossClass::WORDS);

/// Parameters, with the paper's defaults where it gives them.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "alpha",
        default: 1.0,
        kind: THRESHOLD_RANGE,
        description: "packets queued below which cwnd grows by one packet per RTT (eq. 1; \
                      the paper's '1kb/s' read as Vegas's 1 packet)",
    },
    ParamInfo {
        name: "beta",
        default: 3.0,
        kind: THRESHOLD_RANGE,
        description: "packets queued above which cwnd shrinks by one packet per RTT (eq. 1; \
                      '3kb/s' read as Vegas's 3 packets)",
    },
    ParamInfo {
        name: "gamma",
        default: 1.0,
        kind: THRESHOLD_RANGE,
        description: "packets queued above which slow start may end (IV.A's slow-start thresh)",
    },
    ParamInfo {
        name: "tau_ms",
        default: 500.0,
        kind: ParamKind::Number {
            min: 0.0,
            max: 60_000.0,
        },
        description: "time constant of the Tustin bandwidth filter in ms, 1/tau its cut-off \
                      (eqs. 3-5; not given by the paper)",
    },
    ParamInfo {
        name: "m",
        default: 20.0,
        kind: ParamKind::Integer {
            min: 1,
            max: 10_000,
        },
        description: "RTT samples averaged for route surveillance (IV.B)",
    },
    ParamInfo {
        name: "n",
        default: 2.0,
        kind: ParamKind::Number {
            min: 1.0,
            max: 1000.0,
        },
        description: "BaseRTT is refreshed when RTT_now > n x the mean of the last m RTTs (IV.B)",
    },
    ParamInfo {
        name: "ss_exit_factor",
        default: 0.875,
        kind: ParamKind::Number { min: 0.0, max: 1.0 },
        description: "cwnd is multiplied by this on leaving slow start (Vegas's exit, 7/8 as \
                      in our vegas; the paper does not change it)",
    },
    ParamInfo {
        name: "spacing_margin",
        default: 0.0,
        kind: ParamKind::Number {
            min: 0.0,
            max: 1000.0,
        },
        description: "a loss is congestion when ACK spacing > send spacing x (1 + this) \
                      (IV.C; 0 is the paper's strict comparison)",
    },
    ParamInfo {
        name: "unclassified_loss",
        default: 0.0,
        kind: LOSS_CLASSES,
        description: "class of a loss whose two preceding packets were not both acknowledged \
                      or whose ACK spacing is not observable",
    },
    ParamInfo {
        name: "bwe_in_congestion_avoidance",
        default: 0.0,
        kind: ON_OFF,
        description: "keep sampling bandwidth outside slow start (off: IV.B's literal \
                      'bandwidth size will not be estimated')",
    },
    ParamInfo {
        name: "max_tracked_packets",
        default: 16_384.0,
        kind: ParamKind::Integer {
            min: 3,
            max: 10_000_000,
        },
        description: "most packets whose send and ACK times are kept for loss classification",
    },
    // Vegas's pacing, which Vegas-W keeps (it changes only IV.A-C).
    SPIKE_SUPPRESSION_PARAMS[0],
    SPIKE_SUPPRESSION_PARAMS[1],
    SPIKE_SUPPRESSION_PARAMS[2],
    SPIKE_SUPPRESSION_PARAMS[3],
    SPIKE_SUPPRESSION_PARAMS[4],
    // 003 simulated with ns-2, whose Vegas takes the mean RTT of the round.
    ROUND_RTT_MEAN,
];

pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: NAME,
    description: "Vegas-W: Vegas for GEO links, slow start kept while cwnd < Tustin-filtered \
                  bandwidth x BaseRTT, BaseRTT refreshed on route change (RTT > 2 x mean of \
                  20), losses classified by send vs ACK spacing",
    params: PARAMS,
    validate,
    build,
};

/// Where [`PARAMS`] keeps Vegas's parameters and Vegas-W's own.
#[derive(Clone, Copy, Debug)]
pub struct VegasWKeys {
    pub vegas: VegasKeys,
    pub thresholds: ThresholdKeys,
    tau_ms: Key<f64>,
    m: Key<u64>,
    n: Key<f64>,
    spacing_margin: Key<f64>,
    unclassified_loss: Key<LossClass>,
    bwe_in_congestion_avoidance: Key<OnOff>,
    max_tracked_packets: Key<u64>,
}

/// [`PARAMS`]' keys.
pub const KEYS: VegasWKeys = VegasWKeys {
    vegas: VegasKeys {
        gamma: Key::in_table(PARAMS, "gamma"),
        ss_exit_factor: Some(Key::in_table(PARAMS, "ss_exit_factor")),
        // One sample is a round's RTT (003 has no such threshold).
        min_rtt_samples: None,
        round_rtt: Key::in_table(PARAMS, "round_rtt"),
        pacing: PacingKeys::spike_suppression(PARAMS),
    },
    thresholds: ThresholdKeys::in_table(PARAMS),
    tau_ms: Key::in_table(PARAMS, "tau_ms"),
    m: Key::in_table(PARAMS, "m"),
    n: Key::in_table(PARAMS, "n"),
    spacing_margin: Key::in_table(PARAMS, "spacing_margin"),
    unclassified_loss: Key::in_table(PARAMS, "unclassified_loss"),
    bwe_in_congestion_avoidance: Key::in_table(PARAMS, "bwe_in_congestion_avoidance"),
    max_tracked_packets: Key::in_table(PARAMS, "max_tracked_packets"),
};

/// Vegas's alpha <= beta, and its pacing settings.
fn validate(params: &ParamValues) -> Result<(), String> {
    KEYS.thresholds.validate(params)?;
    pacing_profile::validate(params, KEYS.vegas.pacing)
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(VegasW::new(params, window))
}

/// Why a packet was lost (IV.C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossClass {
    Congestion,
    LinkError,
}

impl LossClass {
    pub fn as_str(self) -> &'static str {
        match self {
            LossClass::Congestion => "congestion",
            LossClass::LinkError => "link_error",
        }
    }
}

/// `unclassified_loss` takes a class.
impl ChoiceParam for LossClass {
    const WORDS: &'static [&'static str] = &["congestion", "link_error"];

    fn from_index(index: usize) -> Option<Self> {
        [LossClass::Congestion, LossClass::LinkError]
            .get(index)
            .copied()
    }
}

choice_param_type!(LossClass, LossClass::Congestion);

/// What the look-back of IV.C found for one loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossVerdict {
    /// `None` if the loss could not be classified.
    pub class: Option<LossClass>,
    pub source: SpacingSource,
    /// Send spacing of the two preceding packets, in seconds.
    pub send_spacing_secs: Option<f64>,
    /// Their receive (or ACK arrival) spacing, in seconds; may be negative.
    pub ack_spacing_secs: Option<f64>,
}

impl LossVerdict {
    fn unclassifiable() -> Self {
        LossVerdict {
            class: None,
            source: SpacingSource::None,
            send_spacing_secs: None,
            ack_spacing_secs: None,
        }
    }
}

/// IV.C for one loss: congestion iff the two packets before it were
/// received further apart than they were sent (by more than `margin`);
/// unclassifiable if their spacing cannot be observed.
fn classify(spacing: Option<PairSpacing>, margin: f64) -> LossVerdict {
    let Some(spacing) = spacing else {
        return LossVerdict::unclassifiable();
    };
    let class = if spacing.ack_spacing_secs > spacing.send_spacing_secs * (1.0 + margin) {
        LossClass::Congestion
    } else {
        LossClass::LinkError
    };
    LossVerdict {
        class: (spacing.source != SpacingSource::None).then_some(class),
        source: spacing.source,
        send_spacing_secs: Some(spacing.send_spacing_secs),
        ack_spacing_secs: Some(spacing.ack_spacing_secs),
    }
}

/// A route change detected by IV.B's RTT surveillance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RouteChange {
    pub at: Instant,
    pub rtt_now: Duration,
    /// Mean of the m samples before RTT_now.
    pub rtt_ave: Duration,
}

/// IV.B: RTT_now against n × the mean of the previous m RTTs.
///
/// The comparison runs on every ACK outside slow start, so the m samples
/// are a ring with their exact sum in integer nanoseconds: the sum shows at
/// once when RTT_now is clearly below n × the mean (nearly always), and the
/// mean is added up as the rule states it only when RTT_now comes close.
#[derive(Clone, Debug)]
struct RouteMonitor {
    m: usize,
    n: f64,
    /// The last (up to) m RTTs in nanoseconds; once full, the oldest is at
    /// `oldest` and is the next overwritten.
    history: Vec<u64>,
    oldest: usize,
    /// The sum of `history`, exact.
    history_nanos: u128,
    changes: u64,
    last: Option<RouteChange>,
}

/// How far below the threshold the exact integer mean must lie for the
/// floating-point mean of the rule to be below it too: the sum of m f64
/// terms is off by at most about m × 2⁻⁵³ of itself (1e-12 for the largest
/// m allowed), far inside this margin.
const ROUTE_MEAN_MARGIN: f64 = 1e-6;

impl RouteMonitor {
    fn new(m: usize, n: f64) -> Self {
        RouteMonitor {
            m: m.max(1),
            n,
            history: Vec::new(),
            oldest: 0,
            history_nanos: 0,
            changes: 0,
            last: None,
        }
    }

    /// Mean of the last m samples in seconds, added up oldest first as
    /// f64 seconds, as the rule's mean always was; once there are m.
    fn mean(&self) -> Option<f64> {
        if self.history.len() < self.m {
            return None;
        }
        let (newer, older) = self.history.split_at(self.oldest);
        let sum: f64 = older
            .iter()
            .chain(newer)
            .map(|&nanos| Duration::from_nanos(nanos).as_secs_f64())
            .sum();
        Some(sum / self.history.len() as f64)
    }

    /// Whether `rtt_now_nanos` is so far below n × the mean of a full
    /// history that the rule's comparison cannot find it above.
    fn clearly_below(&self, rtt_now_nanos: u64) -> bool {
        let threshold = self.n * self.history_nanos as f64 / self.history.len() as f64;
        (rtt_now_nanos as f64) < threshold * (1.0 - ROUTE_MEAN_MARGIN)
    }

    /// Offers RTT_now; when `check` (outside slow start), returns the route
    /// change it reveals, after which the history restarts from RTT_now.
    fn on_sample(&mut self, rtt_now: Duration, now: Instant, check: bool) -> Option<RouteChange> {
        // An RTT beyond 584 years (no real clock gives one) saturates.
        let rtt_now_nanos = u64::try_from(rtt_now.as_nanos()).unwrap_or(u64::MAX);
        // The mean is taken only where it is compared (outside slow start),
        // and added up only where the comparison is close.
        let full = self.history.len() >= self.m;
        let mean = if check && full && !self.clearly_below(rtt_now_nanos) {
            self.mean()
        } else {
            None
        };
        let change = mean
            .filter(|mean| rtt_now.as_secs_f64() > self.n * mean)
            .map(|mean| RouteChange {
                at: now,
                rtt_now,
                rtt_ave: Duration::try_from_secs_f64(mean).unwrap_or(Duration::MAX),
            });
        if let Some(change) = change {
            self.history.clear();
            self.oldest = 0;
            self.history_nanos = 0;
            self.changes = self.changes.saturating_add(1);
            self.last = Some(change);
        }
        self.push(rtt_now_nanos);
        change
    }

    /// Keeps `nanos` as the newest sample, dropping the oldest beyond m.
    fn push(&mut self, nanos: u64) {
        self.history_nanos += u128::from(nanos);
        if self.history.len() < self.m {
            self.history.push(nanos);
        } else {
            let slot = &mut self.history[self.oldest];
            self.history_nanos -= u128::from(*slot);
            *slot = nanos;
            self.oldest += 1;
            if self.oldest == self.m {
                self.oldest = 0;
            }
        }
    }
}

/// Vegas-W's own settings, read once.
#[derive(Clone, Copy, Debug)]
struct Config {
    spacing_margin: f64,
    unclassified_loss: LossClass,
    bwe_in_congestion_avoidance: bool,
}

/// What the last loss was, for qlog.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LastLoss {
    Classified {
        class: LossClass,
        verdict: LossVerdict,
    },
    PersistentCongestion,
}

/// The `vegas-w` controller: the Vegas skeleton with Vegas-W's rules.
pub type VegasW = Vegas<VegasWRules>;

impl Vegas<VegasWRules> {
    /// A controller with `params` from [`PARAMS`].
    pub fn new(params: &ParamValues, window: WindowConfig) -> Self {
        Vegas::with_rules(
            VegasWRules::new(params, &KEYS),
            VegasConfig::read(params, &KEYS.vegas),
            window,
        )
    }

    /// The filtered bandwidth estimate b̂ in bytes per second.
    pub fn bandwidth_estimate(&self) -> Option<f64> {
        self.rules().filter.estimate()
    }

    /// The most recent route change (IV.B), and how many there were.
    pub fn route_changes(&self) -> (u64, Option<RouteChange>) {
        (self.rules().route.changes, self.rules().route.last)
    }

    /// How many packets' send and ACK times are held (bounded memory).
    pub fn tracked_packets(&self) -> usize {
        self.rules().packets.len()
    }
}

/// Vegas-W's decisions (IV.A-C) and the estimators they need; see the
/// module documentation.
#[derive(Debug)]
pub struct VegasWRules {
    config: Config,
    /// Eq. 1: Vegas's linear step.
    step: LinearStep,
    /// Times slow start went on although Diff > gamma (IV.A).
    ss_extensions: u64,

    sampler: PerAckSampler,
    filter: TustinLowPass,

    route: RouteMonitor,
    packets: SpacingLog,

    last_loss: Option<LastLoss>,
    congestion_losses: u64,
    link_error_losses: u64,

    /// b̂ as qlog last showed it: at the last decided round or loss.
    published_bwe: Option<f64>,
    /// Counts up whenever one of this file's qlog fields may have changed
    /// (b̂ shown, ss_extensions, a route change, a loss): the generation
    /// `internals_generation` reports, without comparing a key of all of
    /// them on every ACK and packet sent (the skeleton keys BaseRTT, Diff,
    /// the round and the window).
    internals_generation: u64,
}

impl VegasWRules {
    /// From a table holding [`PARAMS`]' entries where `keys` say.
    pub fn new(params: &ParamValues, keys: &VegasWKeys) -> Self {
        let tau = Duration::try_from_secs_f64(params.value(keys.tau_ms) / 1e3).unwrap_or_default();
        let m = usize::try_from(params.value(keys.m)).unwrap_or(usize::MAX);
        let max_tracked =
            usize::try_from(params.value(keys.max_tracked_packets)).unwrap_or(usize::MAX);
        VegasWRules {
            config: Config {
                spacing_margin: params.value(keys.spacing_margin),
                unclassified_loss: params.value(keys.unclassified_loss),
                bwe_in_congestion_avoidance: params.value(keys.bwe_in_congestion_avoidance).is_on(),
            },
            step: LinearStep::from_params(params, &keys.thresholds),
            ss_extensions: 0,
            // Eq. 2: one sample per ACK.
            sampler: PerAckSampler::default(),
            filter: TustinLowPass::new(tau),
            route: RouteMonitor::new(m, params.value(keys.n)),
            packets: SpacingLog::new(max_tracked),
            last_loss: None,
            congestion_losses: 0,
            link_error_losses: 0,
            published_bwe: None,
            internals_generation: 0,
        }
    }

    /// Shows b̂ in qlog as it is now: where a decision reads it.
    fn publish_bwe(&mut self) {
        let bwe = self.filter.estimate();
        if bwe != self.published_bwe {
            self.published_bwe = bwe;
            self.internals_changed();
        }
    }

    /// One of this file's qlog fields may have changed.
    fn internals_changed(&mut self) {
        self.internals_generation = self.internals_generation.wrapping_add(1);
    }

    /// b̂ × BaseRTT in bytes: the window the estimated bandwidth fills.
    fn estimated_window(&self, base_rtt: Option<Duration>) -> Option<f64> {
        let bwe = self.filter.estimate()?;
        Some(bwe * base_rtt?.as_secs_f64())
    }

    /// IV.C's ssthresh = b̂ × RTTmin, at least the minimum window; half the
    /// window before there is an estimate.
    fn bandwidth_ssthresh(&self, window: &Window, base_rtt: Option<Duration>) -> usize {
        let target = match self.estimated_window(base_rtt) {
            // `as` saturates, so a huge product stays usize::MAX.
            Some(bytes) => bytes.round() as usize,
            None => window.cwnd() / 2,
        };
        target.max(window.minimum())
    }

    /// Eqs. 2-5 for one ACK.
    fn sample_bandwidth(&mut self, ack: &AckEvent<'_>, in_slow_start: bool) {
        if !(self.config.bwe_in_congestion_avoidance || in_slow_start) {
            // The next slow start opens a fresh sample interval.
            self.sampler.reset();
            return;
        }
        // t_k on the host's send clock: an integer addition, where the
        // interval since t_{k−1} would be a subtraction of instants.
        let Some(now_nanos) = ack.now_nanos() else {
            return;
        };
        let acked_bytes = ack.summary.acked_bytes;
        if let Some(sample) = self.sampler.on_ack(now_nanos, acked_bytes) {
            // qlog shows b̂ where a decision reads it, not here.
            self.filter.update_with(&sample);
        }
    }
}

/// IV.A: past gamma, slow start goes on only while cwnd is below the window
/// the estimated bandwidth fills; without an estimate it ends, as in Vegas.
fn slow_start_continues(cwnd: usize, estimated_window: Option<f64>) -> bool {
    estimated_window.is_some_and(|target| (cwnd as f64) < target)
}

impl VegasRules for VegasWRules {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_packet_sent(&mut self, sent: &PacketSent) {
        self.packets.on_sent(sent.pkt_num, sent.time_sent);
    }

    /// The ACK times for IV.C and the bandwidth estimate (III.B).
    fn observe_ack(&mut self, ack: &AckEvent<'_>, window: &Window) {
        self.packets.on_acked(ack.now, ack.acked);
        self.sample_bandwidth(ack, window.in_slow_start());
    }

    /// IV.B for the ACK's RTT sample, then BaseRTT as in Vegas.
    fn on_base_rtt_sample(
        &mut self,
        rtt_now: Duration,
        now: Instant,
        window: &Window,
        base_rtt: &mut BaseRttTracker,
    ) {
        let check = !window.in_slow_start();
        if self.route.on_sample(rtt_now, now, check).is_some() {
            self.internals_changed();
            base_rtt.refresh(rtt_now);
        } else {
            base_rtt.on_rtt_sample(rtt_now);
        }
    }

    /// Vegas 3.5.3 with IV.A: past gamma, slow start goes on while cwnd is
    /// below b̂ × BaseRTT.
    fn slow_start_round(&mut self, round: &RoundView<'_>) -> SlowStartStep {
        self.publish_bwe();
        match round.diff_packets {
            Some(diff) if diff > round.gamma => {
                let target = self.estimated_window(round.base_rtt);
                if slow_start_continues(round.window.cwnd(), target) {
                    // IV.A: "the congestion phenomenon is temporary".
                    self.ss_extensions = self.ss_extensions.saturating_add(1);
                    self.internals_changed();
                    SlowStartStep::Continue
                } else {
                    SlowStartStep::ExitScaled
                }
            }
            _ => SlowStartStep::Continue,
        }
    }

    fn congestion_avoidance_round(&mut self, round: &RoundView<'_>, diff: f64) -> WindowChange {
        self.publish_bwe();
        self.step.step(round, diff).into()
    }

    /// IV.C: classify by the spacing of the two packets before the lost
    /// one; a link error leaves the window, congestion sets ssthresh to
    /// b̂ × RTTmin and cwnd to at most that; a timeout slow-starts again.
    fn loss_reaction(&mut self, loss: &CongestionEvent, vegas: &LossView<'_>) -> LossResponse {
        self.publish_bwe();
        // Every loss sets `last_loss` and counts.
        self.internals_changed();
        let (window, base_rtt) = (vegas.window, vegas.base_rtt);
        let verdict = classify(
            self.packets
                .spacing_before(loss.largest_lost_pkt_num, loss.largest_lost_time_sent),
            self.config.spacing_margin,
        );
        self.packets
            .on_lost(loss.largest_lost_pkt_num, loss.largest_lost_time_sent);

        if loss.persistent_congestion {
            // IV.C: "If packets lost are caused by time-out, the system
            // enters slow-start phase."
            self.last_loss = Some(LastLoss::PersistentCongestion);
            return LossResponse::Timeout {
                ssthresh: self.bandwidth_ssthresh(window, base_rtt),
            };
        }

        let class = verdict.class.unwrap_or(self.config.unclassified_loss);
        self.last_loss = Some(LastLoss::Classified { class, verdict });
        match class {
            LossClass::LinkError => {
                // IV.C: "the value of ssthresh and congestion window will not
                // be changed".
                self.link_error_losses = self.link_error_losses.saturating_add(1);
                LossResponse::Keep
            }
            LossClass::Congestion => {
                self.congestion_losses = self.congestion_losses.saturating_add(1);
                // IV.C: ssthresh = bandwidth estimate × RTTmin,
                // cwnd = ssthresh (never raised); once per epoch.
                let ssthresh = self.bandwidth_ssthresh(window, base_rtt);
                LossResponse::Reduce {
                    cwnd: window.cwnd().min(ssthresh),
                    ssthresh,
                }
            }
        }
    }

    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals) {
        let window = vegas.window;
        let mss = window.max_datagram_size() as f64;
        out.float("cwnd_packets", window.cwnd_packets());
        if let Some(ssthresh) = window.ssthresh_packets() {
            out.float("ssthresh_packets", ssthresh);
        }
        out.float("bwe_bytes_per_s", self.published_bwe.unwrap_or(0.0));
        if let (Some(bwe), Some(base_rtt)) = (self.published_bwe, vegas.base_rtt) {
            out.float("bwe_window_packets", bwe * base_rtt.as_secs_f64() / mss);
        }
        if let Some(base) = vegas.base_rtt {
            out.millis("base_rtt_ms", base);
        }
        if let Some(decision) = vegas.decision {
            out.float("diff_packets", decision.diff_packets);
        }
        self.step.internals(out);
        out.float("gamma", vegas.gamma);
        out.int("ss_extensions", self.ss_extensions);
        if let Some(round) = vegas.round {
            out.int("round", round);
        }
        out.int("route_change", self.route.changes);
        if let Some(change) = self.route.last {
            out.millis("route_change_rtt_now_ms", change.rtt_now);
            out.millis("route_change_rtt_ave_ms", change.rtt_ave);
        }
        match self.last_loss {
            None => out.text("loss_class", "none"),
            Some(LastLoss::PersistentCongestion) => out.text("loss_class", "persistent_congestion"),
            Some(LastLoss::Classified { class, verdict }) => {
                out.text("loss_class", class.as_str());
                out.text("loss_spacing_source", verdict.source.as_str());
                if let (Some(send), Some(ack)) =
                    (verdict.send_spacing_secs, verdict.ack_spacing_secs)
                {
                    out.float("loss_send_spacing_ms", send * 1e3);
                    out.float("loss_ack_spacing_ms", ack * 1e3);
                }
            }
        }
        out.int("congestion_losses", self.congestion_losses);
        out.int("link_error_losses", self.link_error_losses);
    }

    fn internals_generation(&self) -> Option<u64> {
        Some(self.internals_generation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn slow_start_needs_an_estimate_to_continue_past_gamma() {
        assert!(!slow_start_continues(12_000, None));
        assert!(slow_start_continues(12_000, Some(12_001.0)));
        assert!(
            !slow_start_continues(12_000, Some(12_000.0)),
            "strictly below"
        );
        assert!(!slow_start_continues(12_000, Some(f64::NAN)));
    }

    #[test]
    fn route_monitor_needs_m_samples_and_restarts_after_a_change() {
        let t0 = Instant::now();
        let mut route = RouteMonitor::new(3, 2.0);
        assert_eq!(route.on_sample(ms(100), t0, true), None);
        assert_eq!(route.on_sample(ms(100), t0, true), None);
        // Only two samples before it: no mean yet.
        assert_eq!(route.on_sample(ms(500), t0, true), None);
        // Mean of (100, 100, 500) = 233.3; 466 is not above 2x that.
        assert_eq!(route.on_sample(ms(466), t0, true), None);
        // Mean of (100, 500, 466) = 355.3; 711 > 710.7.
        let change = route.on_sample(ms(711), t0, true).expect("route change");
        assert_eq!(change.rtt_now, ms(711));
        assert_eq!(route.history.len(), 1);
        assert_eq!(route.changes, 1);
        // Not checked when told not to.
        let mut quiet = RouteMonitor::new(1, 2.0);
        quiet.on_sample(ms(10), t0, false);
        assert_eq!(quiet.on_sample(ms(100), t0, false), None);
    }

    /// The rule as written: the mean of the last m RTTs added up as f64
    /// seconds, oldest first, compared strictly.
    struct NaiveRouteMonitor {
        m: usize,
        n: f64,
        history: std::collections::VecDeque<f64>,
    }

    impl NaiveRouteMonitor {
        fn on_sample(&mut self, rtt_now: Duration, check: bool) -> Option<(Duration, Duration)> {
            let now_secs = rtt_now.as_secs_f64();
            let mean = (check && self.history.len() >= self.m)
                .then(|| self.history.iter().sum::<f64>() / self.history.len() as f64);
            let change = mean.filter(|mean| now_secs > self.n * mean).map(|mean| {
                (
                    rtt_now,
                    Duration::try_from_secs_f64(mean).unwrap_or(Duration::MAX),
                )
            });
            if change.is_some() {
                self.history.clear();
            }
            self.history.push_back(now_secs);
            while self.history.len() > self.m {
                self.history.pop_front();
            }
            change
        }
    }

    /// The ring, its integer sum and the shortcut decide exactly as the
    /// rule written out does, on the threshold too (n × mean equal to
    /// RTT_now in exact arithmetic, where only the f64 sum decides).
    #[test]
    fn route_monitor_decides_as_the_rule_written_out() {
        let t0 = Instant::now();
        // A small deterministic generator (no dependency).
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut fired = 0;
        for (m, n) in [(1, 2.0), (3, 2.0), (20, 2.0), (7, 1.5)] {
            let mut fast = RouteMonitor::new(m, n);
            let mut naive = NaiveRouteMonitor {
                m,
                n,
                history: Default::default(),
            };
            let mut recent: Vec<u64> = Vec::new();
            for i in 0..5_000 {
                let nanos = match next() % 4 {
                    // Exactly n × the mean of the last m, in integers.
                    0 if recent.len() >= m => {
                        let sum: u64 = recent[recent.len() - m..].iter().sum();
                        ((n * sum as f64 / m as f64) as u64 + next() % 3).saturating_sub(1)
                    }
                    1 => 100_000_000 * (1 + next() % 3),
                    _ => 90_000_000 + next() % 40_000_000,
                };
                let rtt = Duration::from_nanos(nanos);
                let check = i % 11 != 0;
                let got = fast
                    .on_sample(rtt, t0, check)
                    .map(|c| (c.rtt_now, c.rtt_ave));
                let want = naive.on_sample(rtt, check);
                assert_eq!(got, want, "m {m}, sample {i}");
                fired += usize::from(want.is_some());
                recent.push(nanos);
            }
        }
        assert!(fired > 10, "the rule fired {fired} times");
    }
}

//! TCP Vegas as Linux's `net/ipv4/tcp_vegas.c` runs it: `vegas-linux`, the
//! rules [`LinuxVegas`] on the Vegas skeleton of [`crate::vegas`]
//! (004_039b3aff67042154.txt is the paper; Linux is an implementation of it
//! with its own choices).
//!
//! alpha 2, beta 4, gamma 1; ordinary slow start (growth on every ACK, every
//! round compared with gamma); Diff in Linux's integer form
//! (cwnd × (RTT − BaseRTT) / BaseRTT); on a slow-start exit cwnd is cut to
//! min(cwnd, target + 1) with target = cwnd × BaseRTT / RTT. A round with
//! fewer than three RTT samples falls back to Reno, as in Linux. Loss
//! reaction is Reno's halving. No spike suppression (Linux has none).
//!
//! Per round, as this file runs it:
//!
//! ```text
//! if the round has fewer than min_rtt_samples (3) RTT samples:
//!     congestion avoidance: Reno's increase (one packet per cwnd acked,
//!     counted over the ACKs that end such rounds); slow start: nothing
//! else:
//!     diff = cwnd × (RTT − BaseRTT) / BaseRTT      (whole packets, µs)
//!     if slow start:
//!         if diff > gamma: cwnd = min(cwnd, target + 1); ssthresh = min(ssthresh, cwnd)
//!     elif diff > beta:    cwnd −= 1 packet
//!     elif diff < alpha:   cwnd += 1 packet
//!     ssthresh = max(ssthresh, 3/4 cwnd)            (tcp_current_ssthresh)
//! on loss (sent after the last decrease): cwnd = ssthresh = cwnd / 2
//! ```
//!
//! Everything else — rounds, BaseRTT from full-size packets, recovery
//! epochs, persistent congestion, application-limited rounds, pacing — is the
//! skeleton's, as documented in [`crate::vegas`]; the round's RTT is the
//! round's minimum (`round_rtt=minimum`: Linux takes the round's smallest
//! sample, filtering delayed ACKs). The two steps around the round's
//! decision, Reno's increase in a round without a Diff and ssthresh's 3/4
//! floor after one with it, act on the skeleton's window and are settings
//! of it ([`Vegas::with_linux_round_ends`]).
//!
//! # Where Linux departs from the paper's Vegas
//!
//! Diff and the slow-start target are computed in whole packets from RTTs in
//! whole microseconds (Linux adds 1 µs to every sample; we ignore zero
//! samples instead); `diff > gamma` in slow start sets cwnd to
//! min(cwnd, target + 1) and ssthresh to min(ssthresh, cwnd), which is not a
//! "decrease" for the loss filter (Linux filters losses by recovery episode,
//! which the loss reaction here reproduces); after each evaluated round
//! ssthresh is raised to at least 3/4 of cwnd (Linux's `tcp_current_ssthresh`);
//! a round with fewer than `min_rtt_samples` (3) samples gets Reno's increase
//! from the ACK that ends it; a loss sets cwnd = ssthresh = cwnd / 2 (Reno's
//! end of fast recovery, without PRR's gradual approach). Not modelled:
//! Linux's reset of BaseRTT when a sender restarts from idle, which needs an
//! idle-restart event this interface does not carry.
//!
//! # Pacing profile
//!
//! Linux's Vegas does not pace: with `profile=paper` nothing is paced; with
//! `profile=quic` (the default) slow start is paced at
//! `slow_start_pacing_gain` × cwnd / RTT and the rest at RFC 9002's
//! `pacing_gain` (1.25) × cwnd / RTT ([`crate::shared::pacing_profile`]).

use crate::controller::{AlgorithmInfo, CongestionController, Internals, WindowConfig};
use crate::params::{Key, ParamInfo, ParamKind, ParamValues, ON_OFF};
use crate::shared::pacing_profile::{
    self, PacingKeys, PACING_GAIN, PROFILE, SLOW_START_PACING_GAIN,
};
use crate::shared::vegas_diff::{linux_diff_packets, linux_target_window_packets, VegasDiff};
use crate::vegas::{
    LinearStep, LossKeys, RoundDiff, RoundMeasurement, RoundView, ScaledLoss, SlowStartGrowth,
    SlowStartStep, ThresholdKeys, Vegas, VegasConfig, VegasKeys, VegasRules, VegasView,
    WindowChange, FACTOR_RANGE, ROUND_RTT_MINIMUM, SAMPLES_RANGE, THRESHOLD_RANGE,
};

pub const NAME: &str = "vegas-linux";

const BURST_RANGE: ParamKind = ParamKind::Integer { min: 1, max: 64 };

/// Parameters of `vegas-linux`, with `tcp_vegas.c`'s defaults.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "alpha",
        default: 2.0,
        kind: THRESHOLD_RANGE,
        description: "Linux's alpha: packets queued below which cwnd grows by one per RTT",
    },
    ParamInfo {
        name: "beta",
        default: 4.0,
        kind: THRESHOLD_RANGE,
        description: "Linux's beta: packets queued above which cwnd shrinks by one per RTT",
    },
    ParamInfo {
        name: "gamma",
        default: 1.0,
        kind: THRESHOLD_RANGE,
        description: "Linux's gamma: packets queued above which slow start ends",
    },
    ParamInfo {
        name: "loss_factor",
        default: 0.5,
        kind: FACTOR_RANGE,
        description: "cwnd and ssthresh become cwnd x this on loss (Linux uses Reno's 1/2)",
    },
    ParamInfo {
        name: "timeout_ssthresh_factor",
        default: 0.5,
        kind: FACTOR_RANGE,
        description: "on persistent congestion ssthresh = cwnd x this, cwnd = minimum window",
    },
    ParamInfo {
        name: "min_rtt_samples",
        default: 3.0,
        kind: SAMPLES_RANGE,
        description: "RTT samples a round needs for Vegas; fewer and the round is Reno's \
                      (Linux: more than two)",
    },
    ParamInfo {
        name: "spike_suppression",
        default: 1.0,
        kind: ON_OFF,
        description: "pace at spike_burst_packets x cwnd/RTT outside slow start, as the \
                      paper's Vegas does (section 3.4; Linux's Vegas does not)",
    },
    ParamInfo {
        name: "spike_burst_packets",
        default: 2.0,
        kind: BURST_RANGE,
        description: "packets allowed per spacing interval when spike suppression is on; also \
                      the burst of profile=quic's pacing",
    },
    PROFILE,
    SLOW_START_PACING_GAIN,
    PACING_GAIN,
    ROUND_RTT_MINIMUM,
];

/// `vegas-linux`: Linux's `tcp_vegas.c`.
pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: NAME,
    description: "TCP Vegas as in Linux's tcp_vegas.c: alpha/beta/gamma 2/4/1, every-RTT \
                  slow start left at min(cwnd, target+1), Reno loss reaction",
    params: PARAMS,
    validate,
    build,
};

/// Where [`PARAMS`] keeps what the skeleton reads.
const VEGAS_KEYS: VegasKeys = VegasKeys {
    gamma: Key::in_table(PARAMS, "gamma"),
    // Linux leaves slow start at target + 1, never by a factor.
    ss_exit_factor: None,
    min_rtt_samples: Some(Key::in_table(PARAMS, "min_rtt_samples")),
    round_rtt: Key::in_table(PARAMS, "round_rtt"),
    pacing: PacingKeys::spike_suppression(PARAMS),
};
const THRESHOLD_KEYS: ThresholdKeys = ThresholdKeys::in_table(PARAMS);
const LOSS_KEYS: LossKeys = LossKeys::in_table(PARAMS);

/// Vegas's alpha <= beta, and the pacing settings.
fn validate(params: &ParamValues) -> Result<(), String> {
    THRESHOLD_KEYS.validate(params)?;
    pacing_profile::validate(params, VEGAS_KEYS.pacing)
}

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(VegasLinux::new(params, window))
}

/// The `vegas-linux` controller.
pub type VegasLinux = Vegas<LinuxVegas>;

impl Vegas<LinuxVegas> {
    /// `vegas-linux` with `params` from [`PARAMS`].
    pub fn new(params: &ParamValues, window: WindowConfig) -> Self {
        // A round with too few samples is Reno's, and ssthresh keeps 3/4 of
        // cwnd after the others (tcp_current_ssthresh).
        Vegas::with_rules(
            LinuxVegas::from_params(params),
            VegasConfig::read(params, &VEGAS_KEYS),
            window,
        )
        .with_linux_round_ends()
    }
}

/// `tcp_vegas.c`'s decisions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinuxVegas {
    pub step: LinearStep,
    /// Reno's halving (`loss_factor` 1/2) and timeout.
    pub loss: ScaledLoss,
}

impl LinuxVegas {
    /// From a table holding [`PARAMS`].
    pub fn from_params(params: &ParamValues) -> Self {
        LinuxVegas {
            step: LinearStep::from_params(params, &THRESHOLD_KEYS),
            loss: ScaledLoss::from_params(params, &LOSS_KEYS),
        }
    }
}

impl VegasRules for LinuxVegas {
    fn name(&self) -> &'static str {
        NAME
    }

    fn slow_start_growth(&self) -> SlowStartGrowth {
        SlowStartGrowth::EveryRound
    }

    /// Linux counts cwnd in whole packets and RTTs in whole microseconds.
    fn diff(&mut self, round: &RoundMeasurement<'_>) -> Option<RoundDiff> {
        let (base_rtt, round_rtt) = (round.base_rtt?, round.round_rtt?);
        let whole = round.window.cwnd_whole_packets() as f64;
        let rates = VegasDiff::compute(whole, base_rtt, round_rtt)?;
        let diff = linux_diff_packets(rates.window_packets as u64, base_rtt, round_rtt);
        Some(RoundDiff {
            diff_packets: diff as f64,
            rates: Some(rates),
        })
    }

    /// Going too fast: cwnd to the actual rate times BaseRTT, plus one for
    /// the truncation, and out of slow start.
    fn slow_start_round(&mut self, round: &RoundView<'_>) -> SlowStartStep {
        let Some(diff) = round.diff_packets else {
            return SlowStartStep::Continue;
        };
        if diff <= round.gamma {
            return SlowStartStep::Continue;
        }
        let (Some(base), Some(rtt)) = (round.base_rtt, round.round_rtt) else {
            return SlowStartStep::Continue;
        };
        let window = round.window.cwnd_whole_packets() as u64;
        let target = linux_target_window_packets(window, base, rtt).saturating_add(1);
        let target_bytes = usize::try_from(target)
            .unwrap_or(usize::MAX)
            .saturating_mul(round.window.max_datagram_size());
        SlowStartStep::ExitToWindow(target_bytes)
    }

    fn congestion_avoidance_round(&mut self, round: &RoundView<'_>, diff: f64) -> WindowChange {
        self.step.step(round, diff).into()
    }

    fn scaled_loss(&self) -> Option<&ScaledLoss> {
        Some(&self.loss)
    }

    fn internals(&self, vegas: &VegasView<'_>, out: &mut Internals) {
        out.text("flavour", "linux");
        vegas.write_cwnd(out);
        self.step.internals(out);
        vegas.write_measurements("round_rtt_ms", out);
    }

    fn internals_generation(&self) -> Option<u64> {
        // The step's thresholds are parameters: nothing of its own moves.
        Some(0)
    }
}

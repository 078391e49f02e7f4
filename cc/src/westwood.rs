//! Westwood+ (Mascolo, Grieco et al.): Reno's probing, but after a loss the
//! window is set from an end-to-end estimate of the bandwidth the flow was
//! getting, instead of being halved blindly.
//!
//! * Bandwidth estimate: the bytes acknowledged over windows of at least
//!   `max(RTT, min_sample_window_ms)` give one rate sample per window, which a
//!   two-stage low-pass filter smooths (see [`crate::shared::bandwidth_filter`],
//!   also used by Vegas-W, 003_5b3b63821b3b4570.txt, and VenoDB,
//!   001_8629d53d83e82638.txt). Each stage keeps `filter_history_weight`
//!   (7/8) of its old value per `filter_reference_window_ms` (50 ms) of time
//!   the sample covers: a fixed time constant of about 374 ms.
//! * Slow start: `cwnd += acked bytes` while `cwnd < ssthresh`.
//! * Congestion avoidance: `cwnd += mss · acked / cwnd`, i.e. one `mss` per
//!   window of acknowledged bytes.
//! * Congestion loss: `ssthresh = BWE × RTTmin` (at least
//!   `min_ssthresh_packets`), and `cwnd = ssthresh` if `cwnd > ssthresh`.
//!   Vegas-W (003, section IV.C) makes the same reduction.
//! * Persistent congestion (QUIC's analogue of a TCP timeout): `ssthresh` as
//!   above, `cwnd` to the minimum window.
//!
//! Choices where the published descriptions are silent or TCP-specific:
//!
//! * One reduction per recovery epoch ([`RecoveryEpoch`]): a loss reduces the
//!   window only if the lost packet was sent after the previous reduction
//!   (RFC 9002 section 7.3.2), which is what NewReno's recovery gives TCP
//!   Westwood+; as in RFC 9002, a packet sent at the very instant of the
//!   reduction belongs to the epoch. The epoch lasts until a packet sent
//!   after the reduction is acknowledged; in it the window does not grow, and
//!   the controller reports `Recovery`.
//! * The filter's time constant is fixed in seconds, not in samples. Linux's
//!   Westwood+ keeps 7/8 of the old value per sample, and says that on a LAN
//!   every sample window is the 50 ms minimum: there, 7/8 per sample is a
//!   time constant of `50 ms / ln(8/7)` ≈ 374 ms per stage. With one sample
//!   per RTT the same 7/8 stretches it to about eight RTTs, 4.5 s per stage at
//!   a 600 ms RTT, longer than slow start lasts: on fau-sat (600 ms, 20
//!   Mbit/s) the first loss came after four samples that doubled each round
//!   (3.1, 23, 46 and 90 kB/s, the first the handshake's window), the
//!   estimate was still 6.3 kB/s, and `BWE × RTTmin` set the window to 2.8
//!   packets. We keep 7/8 per 50 ms and give a sample over a window of length
//!   `Δ` the weight `(7/8)^(Δ / 50 ms)`, the exact response of the same
//!   first-order filter to a rate held over `Δ` (which is what a window's
//!   sample is); windows of 50 ms behave exactly as in Linux. The same four
//!   samples then give 71 kB/s. `filter_reference_window_ms=0` restores the
//!   weight per sample.
//! * The first sample fills both stages, as in Linux. Over QUIC it is the
//!   window opened by the connection's first ACK, which spans the end of the
//!   handshake and holds only the first ACK of data (3.1 kB/s on fau-sat):
//!   with the fixed time constant, three 600 ms windows later its share of
//!   the estimate is under 3%, `v³·(1 + 3·(1 − v))` with `v = (7/8)^12`.
//! * The sample window uses the latest RTT sample, as Linux's Westwood+ does;
//!   RTTmin is the stack's `min_rtt`, so it follows the stack if the stack
//!   resets it.
//! * Before the first sample window has closed there is no estimate; a loss
//!   then halves the window like Reno instead of collapsing it to two packets.
//! * `BWE × RTTmin` is rounded to the nearest byte, not to whole packets.
//! * Acknowledged bytes are sampled even when the sender is
//!   application-limited (the estimate is of the rate achieved, as in
//!   Westwood+), but an application-limited ACK does not grow the window
//!   (RFC 9002 section 7.8).
//! * When a loss turns out to be spurious the host's saved window is
//!   restored, and so is the previous recovery epoch.
//!
//! Pacing profile ([`crate::shared::pacing_profile`]): Westwood+ is Reno's
//! sender, which does not pace, and `profile=paper` sends exactly so. By
//! default (`profile=quic`) it paces as RFC 9002 section 7.7 asks a QUIC
//! sender to: slow start at `slow_start_pacing_gain` (2) × cwnd / smoothed
//! RTT, the rest at `pacing_gain` (RFC 9002's N, 1.25) × cwnd / smoothed RTT,
//! bursts of `pacing_burst_packets` (2) after idle; no pacing before the
//! first RTT sample. Pacing changes when packets leave, not the window
//! rules above.

use std::time::Duration;

use crate::controller::{AlgorithmInfo, WindowConfig};
use crate::controller::{
    CcState, CongestionController, Internals, KeyedGeneration, Pacing, MINIMUM_WINDOW_PACKETS,
};
use crate::events::{AckEvent, CongestionEvent, PacketSent};
use crate::params::{Key, ParamInfo, ParamKind, ParamValues};
use crate::shared::bandwidth_filter::{
    BandwidthSampler, TwoStageLowPass, WESTWOOD_PLUS_HISTORY_WEIGHT,
};
use crate::shared::pacing_profile::{self, PacingKeys, PacingProfile, UNPACED_PAPER_PARAMS};
use crate::shared::recovery_epoch::{RecoveryEpoch, SentAtReduction};
use crate::shared::window::Window;

pub const NAME: &str = "westwood";

/// Parameters, with the defaults of Westwood+ as published and deployed.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "min_sample_window_ms",
        default: 50.0,
        kind: ParamKind::Integer {
            min: 0,
            max: 10_000,
        },
        description: "shortest bandwidth sample window in ms; a window also spans at least one RTT",
    },
    ParamInfo {
        name: "filter_history_weight",
        default: WESTWOOD_PLUS_HISTORY_WEIGHT,
        kind: ParamKind::Number {
            min: 0.0,
            max: 0.999,
        },
        description: "weight of the old value in each of the two low-pass stages (7/8)",
    },
    ParamInfo {
        name: "filter_reference_window_ms",
        default: 50.0,
        kind: ParamKind::Integer {
            min: 0,
            max: 10_000,
        },
        description: "each filter stage keeps filter_history_weight per this much time its samples cover (a fixed time constant); 0 = per sample, whatever its window",
    },
    ParamInfo {
        name: "min_ssthresh_packets",
        default: 2.0,
        kind: ParamKind::Integer {
            min: MINIMUM_WINDOW_PACKETS as u64,
            max: 1000,
        },
        description: "smallest ssthresh set from the bandwidth estimate, in packets",
    },
    UNPACED_PAPER_PARAMS[0],
    UNPACED_PAPER_PARAMS[1],
    UNPACED_PAPER_PARAMS[2],
    UNPACED_PAPER_PARAMS[3],
];

const MIN_SAMPLE_WINDOW_MS: Key<u64> = Key::in_table(PARAMS, "min_sample_window_ms");
const FILTER_HISTORY_WEIGHT: Key<f64> = Key::in_table(PARAMS, "filter_history_weight");
const FILTER_REFERENCE_WINDOW_MS: Key<u64> = Key::in_table(PARAMS, "filter_reference_window_ms");
const MIN_SSTHRESH_PACKETS: Key<u64> = Key::in_table(PARAMS, "min_ssthresh_packets");
const PACING: PacingKeys = PacingKeys::unpaced_paper(PARAMS);

fn validate(params: &ParamValues) -> Result<(), String> {
    pacing_profile::validate(params, PACING)
}

pub static INFO: AlgorithmInfo = AlgorithmInfo {
    name: NAME,
    description:
        "Westwood+: Reno probing, ssthresh = filtered bandwidth estimate x RTTmin after loss",
    params: PARAMS,
    validate,
    build,
};

fn build(params: &ParamValues, window: WindowConfig) -> Box<dyn CongestionController> {
    Box::new(Westwood::new(params, window))
}

#[derive(Debug)]
pub struct Westwood {
    window: Window,
    min_ssthresh_packets: usize,

    sampler: BandwidthSampler,
    /// BWE, bytes per second.
    filter: TwoStageLowPass,
    latest_sample_bytes_per_sec: Option<f64>,
    rtt_min: Option<Duration>,

    /// Bytes acknowledged in congestion avoidance not yet turned into growth.
    ca_acked_bytes: usize,
    /// When the window was last reduced: losses of packets sent up to then
    /// belong to that reduction's epoch.
    epoch: RecoveryEpoch,

    pacing: PacingProfile,
    /// The stack's smoothed RTT, for pacing.
    smoothed_rtt: Option<Duration>,
    internals_generation: KeyedGeneration<InternalsKey>,
}

/// Everything Westwood+'s qlog fields are made of: BWE moves once per
/// sample window (about an RTT), the window on growth and reductions.
#[derive(Clone, Copy, Debug, PartialEq)]
struct InternalsKey {
    bwe: Option<f64>,
    latest_sample: Option<f64>,
    rtt_min: Option<Duration>,
    cwnd: usize,
    ssthresh: usize,
    max_datagram_size: usize,
}

impl Westwood {
    pub fn new(params: &ParamValues, window: WindowConfig) -> Self {
        let min_ssthresh_packets = usize::try_from(params.value(MIN_SSTHRESH_PACKETS))
            .unwrap_or(usize::MAX)
            .max(MINIMUM_WINDOW_PACKETS);
        Westwood {
            window: Window::new(window),
            min_ssthresh_packets,
            sampler: BandwidthSampler::new(Duration::from_millis(
                params.value(MIN_SAMPLE_WINDOW_MS),
            )),
            filter: TwoStageLowPass::with_reference_window(
                params.value(FILTER_HISTORY_WEIGHT),
                Duration::from_millis(params.value(FILTER_REFERENCE_WINDOW_MS)),
            ),
            latest_sample_bytes_per_sec: None,
            rtt_min: None,
            ca_acked_bytes: 0,
            // RFC 9002: a packet sent at the instant of the reduction is
            // sent in the recovery period.
            epoch: RecoveryEpoch::new(SentAtReduction::CountsAsBefore),
            pacing: PacingProfile::read(params, PACING),
            smoothed_rtt: None,
            internals_generation: KeyedGeneration::default(),
        }
    }

    /// The filtered bandwidth estimate in bytes per second, once a sample
    /// window has closed.
    pub fn bandwidth_estimate(&self) -> Option<f64> {
        self.filter.estimate()
    }

    pub fn rtt_min(&self) -> Option<Duration> {
        self.rtt_min
    }

    /// Westwood+'s ssthresh after a congestion loss: the estimated
    /// bandwidth-delay product `BWE × RTTmin`.
    fn bandwidth_ssthresh(&self) -> usize {
        let mss = self.window.max_datagram_size();
        let floor = self.min_ssthresh_packets.saturating_mul(mss);
        let target = match (self.filter.estimate(), self.rtt_min) {
            // `as` saturates, so a huge product stays usize::MAX.
            (Some(bwe), Some(rtt_min)) => (bwe * rtt_min.as_secs_f64()).round() as usize,
            _ => self.window.cwnd() / 2,
        };
        target.max(floor)
    }

    /// Reno growth for `bytes` newly acknowledged.
    fn grow(&mut self, bytes: usize) {
        let bytes = self.window.slow_start(bytes);
        if bytes == 0 {
            return;
        }
        // One mss per cwnd of acknowledged bytes: cwnd += mss · acked / cwnd
        // without losing the fractions.
        let cwnd = self.window.cwnd();
        self.ca_acked_bytes = self.ca_acked_bytes.saturating_add(bytes);
        let windows = self.ca_acked_bytes / cwnd;
        self.ca_acked_bytes %= cwnd;
        self.window
            .increase(windows.saturating_mul(self.window.max_datagram_size()));
    }
}

impl CongestionController for Westwood {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_packet_sent(&mut self, _sent: &PacketSent) {}

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if !ack.rtt.min_rtt.is_zero() {
            self.rtt_min = Some(ack.rtt.min_rtt);
        }
        if !ack.rtt.smoothed_rtt.is_zero() {
            self.smoothed_rtt = Some(ack.rtt.smoothed_rtt);
        }

        let acked_bytes = ack.summary.acked_bytes;
        if let Some(sample) = self
            .sampler
            .on_ack(ack.now, acked_bytes, ack.rtt.latest_rtt)
        {
            let rate = sample.bytes_per_sec();
            self.latest_sample_bytes_per_sec = Some(rate);
            self.filter.update_over(rate, sample.interval);
        }

        // Only packets sent after the last reduction grow the window; the
        // first of them ends recovery.
        self.epoch.on_ack(ack.summary.latest_time_sent.into_iter());
        if ack.app_limited {
            return;
        }
        for packet in ack.acked {
            if self.epoch.sent_after_reduction(packet.time_sent) {
                self.grow(packet.size);
            }
        }
    }

    fn on_congestion_event(&mut self, loss: &CongestionEvent) {
        let new_epoch = self.epoch.sent_after_reduction(loss.largest_lost_time_sent);
        if !new_epoch && !loss.persistent_congestion {
            // Already reduced for this window of data.
            return;
        }
        self.window.set_ssthresh(self.bandwidth_ssthresh());
        self.ca_acked_bytes = 0;
        if new_epoch {
            self.epoch.begin(loss.now);
        }
        if loss.persistent_congestion {
            self.window.set_cwnd(self.window.minimum());
            // RFC 9002 section 7.6.2: the sender restarts from slow start,
            // not in recovery; losses of packets sent until now still belong
            // to this reduction.
            self.epoch.extend_to(loss.now);
            self.epoch.end_recovery();
        } else {
            self.window
                .set_cwnd(self.window.cwnd().min(self.window.ssthresh()));
        }
    }

    fn on_spurious_loss(&mut self, cwnd: usize, ssthresh: usize) -> bool {
        self.set_window(cwnd, ssthresh);
        true
    }

    fn set_window(&mut self, cwnd: usize, ssthresh: usize) {
        self.window.restore(cwnd, ssthresh);
        self.epoch.undo();
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
        self.pacing.pacing(
            self.window.in_slow_start(),
            self.window.cwnd(),
            self.smoothed_rtt,
        )
    }

    fn internals(&self, out: &mut Internals) {
        out.float("bwe_bytes_per_s", self.filter.estimate().unwrap_or(0.0));
        out.float(
            "bwe_sample_bytes_per_s",
            self.latest_sample_bytes_per_sec.unwrap_or(0.0),
        );
        out.millis("rtt_min_ms", self.rtt_min.unwrap_or(Duration::ZERO));
        out.float("cwnd_packets", self.window.cwnd_packets());
        // Reported before the first reduction too, as a huge number.
        let mss = self.window.max_datagram_size() as f64;
        out.float("ssthresh_packets", self.window.ssthresh() as f64 / mss);
    }

    fn internals_generation(&self) -> Option<u64> {
        Some(self.internals_generation.of(InternalsKey {
            bwe: self.filter.estimate(),
            latest_sample: self.latest_sample_bytes_per_sec,
            rtt_min: self.rtt_min,
            cwnd: self.window.cwnd(),
            ssthresh: self.window.ssthresh(),
            max_datagram_size: self.window.max_datagram_size(),
        }))
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: usize) {
        // Westwood+ counts bytes: the window keeps them.
        self.window.set_max_datagram_size(max_datagram_size);
    }
}

//! How the Vegas family paces, written once: spike suppression outside slow
//! start (004_039b3aff67042154.txt, section 3.4) and, as a QUIC extension,
//! pacing in slow start (RFC 9002, section 7.7).
//!
//! Section 3.4: "SegSpacing = RTT × MaxSegment / WindowSize. Vegas' spike
//! suppression mechanism consists of only allowing twice MaxSegment bytes on
//! each SegSpacing interval; [...] It allows for transmitting twice the ideal
//! number of bytes per SegSpacing so the current number of bytes in transit
//! can catch up with the allowed number given by the congestion window." The
//! rate is therefore `burst × cwnd / RTT` (burst = 2 segments per SegSpacing),
//! with bursts of `burst` segments; the window still bounds what is in flight.
//! Pacing at exactly cwnd/RTT instead keeps bytes in flight below cwnd for
//! good whenever the RTT grows, and the window never fills.
//!
//! RTT is the stack's smoothed RTT (section 3.1's fine-grained estimate),
//! BaseRTT before there is one.

use std::time::Duration;

use crate::controller::Pacing;
use crate::params::{ParamInfo, ParamKind, ParamValues};

const ON_OFF: ParamKind = ParamKind::Choice(&["on", "off"]);

/// Section 3.4, on by default as in the paper.
pub const SPIKE_SUPPRESSION: ParamInfo = ParamInfo {
    name: "spike_suppression",
    default: 0.0,
    kind: ON_OFF,
    description: "outside slow start, allow spike_burst_packets segments per SegSpacing = \
                  RTT x MaxSegment / WindowSize, i.e. pace at spike_burst_packets x cwnd/RTT \
                  (section 3.4)",
};

pub const SPIKE_BURST_PACKETS: ParamInfo = ParamInfo {
    name: "spike_burst_packets",
    default: 2.0,
    kind: ParamKind::Integer { min: 1, max: 64 },
    description: "segments allowed per SegSpacing interval (section 3.4: twice MaxSegment, \
                  'so the current number of bytes in transit can catch up')",
};

/// Slow-start pacing, an extension of every member (not in the papers).
pub const SLOW_START_PACING: ParamInfo = ParamInfo {
    name: "slow_start_pacing",
    default: 1.0,
    kind: ON_OFF,
    description: "also pace in slow start, at slow_start_pacing_gain x cwnd/RTT (RFC 9002 \
                  section 7.7; not in the paper, whose slow start sends ACK-clocked bursts)",
};

pub const SLOW_START_PACING_GAIN: ParamInfo = ParamInfo {
    name: "slow_start_pacing_gain",
    default: 2.0,
    kind: ParamKind::Number {
        min: 1.0,
        max: 10.0,
    },
    description: "pacing rate in slow start as a multiple of cwnd/RTT (2: the window can \
                  double in one RTT, as Linux's slow-start pacing ratio allows)",
};

/// The four parameters above, in this order.
pub const PARAMS: [ParamInfo; 4] = [
    SPIKE_SUPPRESSION,
    SPIKE_BURST_PACKETS,
    SLOW_START_PACING,
    SLOW_START_PACING_GAIN,
];

/// A member's pacing settings, read once from its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasPacing {
    pub spike_suppression: bool,
    pub spike_burst_packets: usize,
    /// `None`: slow start is not paced.
    pub slow_start_pacing_gain: Option<f64>,
}

impl VegasPacing {
    /// `params` must hold [`PARAMS`].
    pub fn read(params: &ParamValues) -> Self {
        VegasPacing {
            spike_suppression: params.word(SPIKE_SUPPRESSION.name) == "on",
            spike_burst_packets: (params.get(SPIKE_BURST_PACKETS.name) as usize).max(1),
            slow_start_pacing_gain: (params.word(SLOW_START_PACING.name) == "on")
                .then(|| params.get(SLOW_START_PACING_GAIN.name)),
        }
    }

    /// The pacing for a window of `cwnd` bytes and an RTT of `rtt`.
    pub fn pacing(
        &self,
        in_slow_start: bool,
        cwnd: usize,
        rtt: Option<Duration>,
    ) -> Option<Pacing> {
        let gain = if in_slow_start {
            self.slow_start_pacing_gain?
        } else if self.spike_suppression {
            self.spike_burst_packets as f64
        } else {
            return None;
        };
        let rtt = rtt.filter(|r| !r.is_zero())?;
        let rate = gain * cwnd as f64 / rtt.as_secs_f64();
        (rate.is_finite() && rate > 0.0).then_some(Pacing::spaced(rate, self.spike_burst_packets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spike_suppression_allows_two_segments_per_seg_spacing() {
        let pacing = VegasPacing {
            spike_suppression: true,
            spike_burst_packets: 2,
            slow_start_pacing_gain: None,
        };
        // cwnd 100 x 1200 bytes, RTT 600 ms: SegSpacing = 6 ms, two segments
        // (2400 bytes) per 6 ms = 400 000 bytes/s.
        let p = pacing
            .pacing(false, 120_000, Some(Duration::from_millis(600)))
            .expect("paced");
        assert!((p.rate_bytes_per_sec - 2400.0 / 0.006).abs() < 1e-6);
        assert_eq!(p.burst_packets, 2);
        assert_eq!(
            pacing.pacing(true, 120_000, Some(Duration::from_millis(600))),
            None
        );
        assert_eq!(pacing.pacing(false, 120_000, None), None);
        assert_eq!(pacing.pacing(false, 120_000, Some(Duration::ZERO)), None);
    }

    #[test]
    fn slow_start_pacing_uses_its_gain() {
        let pacing = VegasPacing {
            spike_suppression: false,
            spike_burst_packets: 2,
            slow_start_pacing_gain: Some(2.0),
        };
        let p = pacing
            .pacing(true, 12_000, Some(Duration::from_millis(100)))
            .expect("paced");
        assert!((p.rate_bytes_per_sec - 2.0 * 12_000.0 / 0.1).abs() < 1e-6);
        assert_eq!(
            pacing.pacing(false, 12_000, Some(Duration::from_millis(100))),
            None
        );
    }
}

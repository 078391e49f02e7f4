//! How every algorithm of this crate paces, written once, in two profiles
//! chosen with the `profile` parameter.
//!
//! - **`quic`** (the default): a good QUIC sender. RFC 9002 section 7.7 asks
//!   senders to pace ("Senders MUST either use pacing or limit such bursts"),
//!   slow start included. Slow start is paced at `slow_start_pacing_gain` (2)
//!   × cwnd / RTT, so that the window can still double in one round while a
//!   queue forms only once that rate exceeds the bottleneck. Outside slow
//!   start a member paces at its paper's own rate where the paper has one
//!   (Vegas's spike suppression, below), else at RFC 9002's
//!   `N × cwnd / smoothed_rtt` with N = `pacing_gain` (1.25, the RFC's
//!   example: "a value for N that is small, but at least 1 [...] ensures that
//!   variations in RTT do not result in underutilization of the congestion
//!   window").
//! - **`paper`**: exactly the TCP sending behaviour of the algorithm's paper,
//!   which is what `scripts/reproduce` runs. Slow start sends ACK-clocked
//!   bursts; outside slow start only the paper's own pacing applies (Vegas's
//!   spike suppression), and the Reno-based members (Veno, VenoDB,
//!   Westwood+) do not pace at all.
//!
//! Vegas's spike suppression (004_039b3aff67042154.txt, section 3.4):
//! "SegSpacing = RTT × MaxSegment / WindowSize. Vegas' spike suppression
//! mechanism consists of only allowing twice MaxSegment bytes on each
//! SegSpacing interval; [...] It allows for transmitting twice the ideal
//! number of bytes per SegSpacing so the current number of bytes in transit
//! can catch up with the allowed number given by the congestion window." The
//! rate is therefore `burst × cwnd / RTT` (burst = 2 segments per
//! SegSpacing), with bursts of `burst` segments; the window still bounds what
//! is in flight. Pacing at exactly cwnd/RTT instead keeps bytes in flight
//! below cwnd for good whenever the RTT grows, and the window never fills.
//! It is part of the paper, so it applies in both profiles (and
//! `spike_suppression=off` turns it off in both).
//!
//! RTT is the stack's smoothed RTT (004 section 3.1's fine-grained estimate);
//! Vegas members use BaseRTT before there is one, the others do not pace
//! before it.
//!
//! Contradictions are refused by [`validate`]: a gain or burst that the
//! chosen profile never uses, set to anything but its default, is an error
//! rather than a silent no-op.

use std::time::Duration;

use crate::choice_param_type;
use crate::controller::Pacing;
use crate::params::{ChoiceParam, Key, OnOff, ParamInfo, ParamKind, ParamValues, ON_OFF};
const GAIN_RANGE: ParamKind = ParamKind::Number {
    min: 1.0,
    max: 10.0,
};
const BURST_RANGE: ParamKind = ParamKind::Integer { min: 1, max: 64 };

/// Words of the `profile` parameter, in the order of their indices.
pub const PROFILE_WORDS: &[&str] = &["quic", "paper"];

/// Which sending behaviour a member has; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// RFC 9002 section 7.7: everything paced.
    Quic,
    /// The paper's TCP sending, exactly.
    Paper,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Quic => "quic",
            Profile::Paper => "paper",
        }
    }
}

impl ChoiceParam for Profile {
    const WORDS: &'static [&'static str] = PROFILE_WORDS;

    fn from_index(index: usize) -> Option<Self> {
        [Profile::Quic, Profile::Paper].get(index).copied()
    }
}

choice_param_type!(Profile, Profile::Quic);

/// The profile, on every algorithm of this crate.
pub const PROFILE: ParamInfo = ParamInfo {
    name: "profile",
    default: 0.0,
    kind: ParamKind::Choice(PROFILE_WORDS),
    description: "quic: pace as RFC 9002 section 7.7 asks, slow start at \
                  slow_start_pacing_gain x cwnd/RTT, the rest at the paper's own pacing if it \
                  has one, else pacing_gain x cwnd/RTT; paper: send exactly as the paper's TCP \
                  (no slow-start pacing, only the paper's own pacing)",
};

/// Section 3.4, on by default as in the paper.
pub const SPIKE_SUPPRESSION: ParamInfo = ParamInfo {
    name: "spike_suppression",
    default: 0.0,
    kind: ON_OFF,
    description: "outside slow start, allow spike_burst_packets segments per SegSpacing = \
                  RTT x MaxSegment / WindowSize, i.e. pace at spike_burst_packets x cwnd/RTT \
                  (section 3.4; both profiles)",
};

pub const SPIKE_BURST_PACKETS: ParamInfo = ParamInfo {
    name: "spike_burst_packets",
    default: 2.0,
    kind: BURST_RANGE,
    description: "segments allowed per SegSpacing interval (section 3.4: twice MaxSegment, \
                  'so the current number of bytes in transit can catch up'); also the burst \
                  of profile=quic's pacing",
};

pub const SLOW_START_PACING_GAIN: ParamInfo = ParamInfo {
    name: "slow_start_pacing_gain",
    default: 2.0,
    kind: GAIN_RANGE,
    description: "profile=quic: pacing rate in slow start as a multiple of cwnd/RTT (2: the \
                  window can double in one RTT, as Linux's slow-start pacing ratio allows)",
};

pub const PACING_GAIN: ParamInfo = ParamInfo {
    name: "pacing_gain",
    default: 1.25,
    kind: GAIN_RANGE,
    description: "profile=quic, outside slow start when the paper does not pace: rate as a \
                  multiple of cwnd/smoothed RTT (RFC 9002 section 7.7's N, 1.25)",
};

pub const PACING_BURST_PACKETS: ParamInfo = ParamInfo {
    name: "pacing_burst_packets",
    default: 2.0,
    kind: BURST_RANGE,
    description: "profile=quic: packets that may leave back to back after an idle period \
                  (the paper does not pace)",
};

/// The pacing parameters of a member whose paper paces with spike
/// suppression (the paper's Vegas and the members built on it), in this
/// order.
pub const SPIKE_SUPPRESSION_PARAMS: [ParamInfo; 5] = [
    PROFILE,
    SPIKE_SUPPRESSION,
    SPIKE_BURST_PACKETS,
    SLOW_START_PACING_GAIN,
    PACING_GAIN,
];

/// The pacing parameters of a member whose paper does not pace (Veno,
/// VenoDB, Westwood+), in this order.
pub const UNPACED_PAPER_PARAMS: [ParamInfo; 4] = [
    PROFILE,
    SLOW_START_PACING_GAIN,
    PACING_GAIN,
    PACING_BURST_PACKETS,
];

/// Where a member's table keeps the pacing parameters: one of the two
/// groups above (or a table with entries of the same names), resolved at
/// compile time.
#[derive(Clone, Copy, Debug)]
pub struct PacingKeys {
    profile: Key<Profile>,
    slow_start_gain: Key<f64>,
    pacing_gain: Key<f64>,
    /// `spike_burst_packets` or `pacing_burst_packets`.
    burst_packets: Key<u64>,
    /// Members whose paper paces with spike suppression.
    spike_suppression: Option<Key<OnOff>>,
}

impl PacingKeys {
    /// A table holding [`PROFILE`], [`SLOW_START_PACING_GAIN`],
    /// [`PACING_GAIN`] and entries named `spike_suppression` and
    /// `spike_burst_packets` (whatever their defaults).
    pub const fn spike_suppression(table: &[ParamInfo]) -> Self {
        PacingKeys {
            profile: Key::in_table(table, PROFILE.name),
            slow_start_gain: Key::in_table(table, SLOW_START_PACING_GAIN.name),
            pacing_gain: Key::in_table(table, PACING_GAIN.name),
            burst_packets: Key::in_table(table, SPIKE_BURST_PACKETS.name),
            spike_suppression: Some(Key::in_table(table, SPIKE_SUPPRESSION.name)),
        }
    }

    /// A table holding [`UNPACED_PAPER_PARAMS`].
    pub const fn unpaced_paper(table: &[ParamInfo]) -> Self {
        PacingKeys {
            profile: Key::in_table(table, PROFILE.name),
            slow_start_gain: Key::in_table(table, SLOW_START_PACING_GAIN.name),
            pacing_gain: Key::in_table(table, PACING_GAIN.name),
            burst_packets: Key::in_table(table, PACING_BURST_PACKETS.name),
            spike_suppression: None,
        }
    }
}

/// A member's pacing, read once from its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacingProfile {
    pub profile: Profile,
    /// The paper's own rate outside slow start as a multiple of cwnd/RTT
    /// (spike suppression), `None` where the paper does not pace.
    pub paper_gain: Option<f64>,
    /// Packets that may leave back to back.
    pub burst_packets: usize,
    /// profile=quic: slow start's rate as a multiple of cwnd/RTT.
    pub slow_start_gain: f64,
    /// profile=quic, where the paper does not pace: RFC 9002's N.
    pub pacing_gain: f64,
}

impl PacingProfile {
    /// From the parameters `keys` locate.
    pub fn read(params: &ParamValues, keys: PacingKeys) -> Self {
        let burst_packets = usize::try_from(params.value(keys.burst_packets))
            .unwrap_or(usize::MAX)
            .max(1);
        let spike_on = keys
            .spike_suppression
            .is_some_and(|key| params.value(key).is_on());
        PacingProfile {
            profile: params.value(keys.profile),
            paper_gain: spike_on.then_some(burst_packets as f64),
            burst_packets,
            slow_start_gain: params.value(keys.slow_start_gain),
            pacing_gain: params.value(keys.pacing_gain),
        }
    }

    /// The pacing for a window of `cwnd` bytes and an RTT of `rtt`; `None`:
    /// send as the window allows.
    pub fn pacing(
        &self,
        in_slow_start: bool,
        cwnd: usize,
        rtt: Option<Duration>,
    ) -> Option<Pacing> {
        let gain = match (self.profile, in_slow_start) {
            (Profile::Paper, true) => return None,
            (Profile::Paper, false) => self.paper_gain?,
            (Profile::Quic, true) => self.slow_start_gain,
            (Profile::Quic, false) => self.paper_gain.unwrap_or(self.pacing_gain),
        };
        let rtt = rtt.filter(|r| !r.is_zero())?;
        let rate = gain * cwnd as f64 / rtt.as_secs_f64();
        (rate.is_finite() && rate > 0.0).then_some(Pacing::spaced(rate, self.burst_packets))
    }
}

/// Checks the pacing parameters `keys` locate: refuses
/// a parameter of profile=quic under profile=paper, and `pacing_gain` where
/// spike suppression sets the rate.
pub fn validate(params: &ParamValues, keys: PacingKeys) -> Result<(), String> {
    if params.value(keys.profile) == Profile::Paper {
        let quic_only = [
            (
                keys.slow_start_gain.name(),
                params.is_changed(keys.slow_start_gain),
            ),
            (keys.pacing_gain.name(), params.is_changed(keys.pacing_gain)),
            // The spike burst is the paper's own; only pacing's is quic's.
            (
                keys.burst_packets.name(),
                keys.spike_suppression.is_none() && params.is_changed(keys.burst_packets),
            ),
        ];
        if let Some((name, _)) = quic_only.into_iter().find(|(_, changed)| *changed) {
            let value = params.text_of(name).unwrap_or_default();
            return Err(format!(
                "{name}={value} applies only to profile=quic; profile=paper sends as the \
                 paper does (no slow-start pacing, only the paper's own pacing)"
            ));
        }
    }
    let spike_on = keys
        .spike_suppression
        .is_some_and(|key| params.value(key).is_on());
    if spike_on && params.is_changed(keys.pacing_gain) {
        let value = params.text_of(keys.pacing_gain.name()).unwrap_or_default();
        return Err(format!(
            "pacing_gain={value} applies only with spike_suppression=off: spike \
             suppression paces at spike_burst_packets x cwnd/RTT outside slow start"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: Duration = Duration::from_millis(600);
    // cwnd 100 x 1200 bytes.
    const CWND: usize = 120_000;

    fn profile(profile: Profile, paper_gain: Option<f64>) -> PacingProfile {
        PacingProfile {
            profile,
            paper_gain,
            burst_packets: 2,
            slow_start_gain: 2.0,
            pacing_gain: 1.25,
        }
    }

    fn rate(p: Option<Pacing>) -> f64 {
        p.expect("paced").rate_bytes_per_sec
    }

    #[test]
    fn spike_suppression_allows_two_segments_per_seg_spacing() {
        // SegSpacing = 600 ms x 1200 / 120 000 = 6 ms; two segments (2400
        // bytes) per 6 ms = 400 000 bytes/s, in both profiles.
        for which in [Profile::Paper, Profile::Quic] {
            let p = profile(which, Some(2.0)).pacing(false, CWND, Some(RTT));
            assert!((rate(p) - 2400.0 / 0.006).abs() < 1e-6, "{which:?}");
            assert_eq!(p.map(|p| p.burst_packets), Some(2));
        }
    }

    #[test]
    fn paper_profile_leaves_slow_start_and_unpaced_papers_unpaced() {
        let paper = profile(Profile::Paper, Some(2.0));
        assert_eq!(paper.pacing(true, CWND, Some(RTT)), None);
        let reno = profile(Profile::Paper, None);
        assert_eq!(reno.pacing(true, CWND, Some(RTT)), None);
        assert_eq!(reno.pacing(false, CWND, Some(RTT)), None);
    }

    #[test]
    fn quic_profile_paces_slow_start_at_its_gain() {
        for paper_gain in [Some(2.0), None] {
            let p = profile(Profile::Quic, paper_gain).pacing(true, 12_000, Some(RTT));
            assert!((rate(p) - 2.0 * 12_000.0 / 0.6).abs() < 1e-6);
        }
    }

    #[test]
    fn quic_profile_paces_unpaced_papers_at_rfc_9002_n() {
        let p = profile(Profile::Quic, None).pacing(false, CWND, Some(RTT));
        // RFC 9002 section 7.7: interval = (srtt x size / cwnd) / N; with N
        // 1.25 a 1200-byte packet every 4.8 ms.
        let interval = (0.6 * 1200.0 / CWND as f64) / 1.25;
        assert!((rate(p) - 1200.0 / interval).abs() < 1e-6);
    }

    #[test]
    fn no_rtt_no_pacing() {
        let p = profile(Profile::Quic, Some(2.0));
        assert_eq!(p.pacing(false, CWND, None), None);
        assert_eq!(p.pacing(true, CWND, Some(Duration::ZERO)), None);
    }
}

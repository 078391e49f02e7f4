//! BaseRTT: the RTT of the path when this connection is not congesting it.
//!
//! Vegas (004_039b3aff67042154.txt, section 3.5.2) defines BaseRTT as "the RTT
//! of a segment when the connection is not congested" and, in practice, sets it
//! to the minimum of all measured round trip times. Later members of the family
//! keep that definition but sometimes have to forget it: Vegas-W
//! (003_5b3b63821b3b4570.txt) refreshes BaseRTT when the route changes, because
//! a minimum taken on the old route is wrong for the new one. This tracker is
//! the minimum filter plus the two ways of forgetting it.

use std::time::Duration;

/// The smallest RTT seen since the tracker was created or last reset.
///
/// A zero sample is ignored: it is below the clock's granularity, not a
/// measurement of the path, and a BaseRTT of zero would make every rate
/// computed from it infinite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaseRttTracker {
    base_rtt: Option<Duration>,
    samples: u64,
}

impl BaseRttTracker {
    /// A tracker that has seen no sample yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offers one RTT sample. Returns whether it lowered BaseRTT (the first
    /// sample always does).
    pub fn on_rtt_sample(&mut self, rtt: Duration) -> bool {
        if rtt.is_zero() {
            return false;
        }
        self.samples = self.samples.saturating_add(1);
        match self.base_rtt {
            Some(base) if base <= rtt => false,
            _ => {
                self.base_rtt = Some(rtt);
                true
            }
        }
    }

    /// BaseRTT, or `None` before the first (non-zero) sample.
    pub fn base_rtt(&self) -> Option<Duration> {
        self.base_rtt
    }

    /// How many samples were offered since creation or the last reset or
    /// refresh (zero samples not counted).
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Forgets BaseRTT; the next sample becomes the new BaseRTT.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Replaces BaseRTT with `rtt`, whatever it was: for a route change, where
    /// the new path's delay is known (e.g. the current RTT) and the old minimum
    /// must not survive. Later samples lower it again as usual. A zero `rtt`
    /// resets instead.
    pub fn refresh(&mut self, rtt: Duration) {
        self.reset();
        self.on_rtt_sample(rtt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn keeps_the_smallest_sample() {
        let mut t = BaseRttTracker::new();
        assert_eq!(t.base_rtt(), None);
        assert!(t.on_rtt_sample(ms(120)));
        assert!(!t.on_rtt_sample(ms(150)));
        assert!(t.on_rtt_sample(ms(100)));
        assert!(!t.on_rtt_sample(ms(100)));
        assert_eq!(t.base_rtt(), Some(ms(100)));
        assert_eq!(t.samples(), 4);
    }

    #[test]
    fn ignores_zero_samples() {
        let mut t = BaseRttTracker::new();
        assert!(!t.on_rtt_sample(Duration::ZERO));
        assert_eq!(t.base_rtt(), None);
        t.on_rtt_sample(ms(50));
        assert!(!t.on_rtt_sample(Duration::ZERO));
        assert_eq!(t.base_rtt(), Some(ms(50)));
        assert_eq!(t.samples(), 1);
    }

    #[test]
    fn reset_forgets_and_refresh_replaces() {
        let mut t = BaseRttTracker::new();
        t.on_rtt_sample(ms(40));
        t.refresh(ms(300));
        assert_eq!(t.base_rtt(), Some(ms(300)), "refresh may raise BaseRTT");
        t.on_rtt_sample(ms(280));
        assert_eq!(t.base_rtt(), Some(ms(280)));
        t.reset();
        assert_eq!(t.base_rtt(), None);
        t.on_rtt_sample(ms(500));
        assert_eq!(t.base_rtt(), Some(ms(500)));
        t.refresh(Duration::ZERO);
        assert_eq!(t.base_rtt(), None);
    }
}

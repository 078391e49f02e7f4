//! The stack's RTT estimator as the test senders run it: RFC 9002 section
//! 5.3 without ACK delay. One copy for every test that drives the host
//! (`stack.rs`, `no_allocation.rs`).

use std::time::Duration;

use vegas_cc::RttSnapshot;

/// The estimator after `sample`, from `prev` (`None`: the first sample).
pub fn rfc9002_update(prev: Option<RttSnapshot>, sample: Duration) -> RttSnapshot {
    match prev {
        None => RttSnapshot::uniform(sample),
        Some(prev) => RttSnapshot {
            min_rtt: prev.min_rtt.min(sample),
            smoothed_rtt: (prev.smoothed_rtt * 7 + sample) / 8,
            latest_rtt: sample,
            rttvar: (prev.rttvar * 3 + prev.smoothed_rtt.abs_diff(sample)) / 4,
        },
    }
}

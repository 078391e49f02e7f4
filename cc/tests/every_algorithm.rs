//! Properties every algorithm of `registry::ALGORITHMS` keeps through
//! random event sequences (sends, ACKs with any RTT, losses, persistent
//! congestion, rollbacks, datagram-size changes, idle time, malformed
//! events; `common::random_events`): a new member is covered without being
//! named here.
//!
//! - **Deterministic**: the same events give the same window, slow-start
//!   threshold, pacing and qlog internals, step by step (a controller that
//!   read the wall clock, a random source or uninitialised state would
//!   differ between two runs).
//! - **A loss never opens the window**: a congestion event leaves cwnd
//!   where it was or lower (unless the datagram size grew, which raises the
//!   floor every window is clamped to).
//! - Every float internal finite and pacing sane.

mod common;

use common::random_events::{apply, check_invariants, op, Op};
use common::{build, Flow, MDS};
use proptest::prelude::*;
use vegas_cc::registry::ALGORITHMS;
use vegas_cc::{CongestionController, Internals};

/// What two runs of the same events are compared on.
#[derive(Debug, PartialEq)]
struct Observed {
    cwnd: usize,
    ssthresh: usize,
    pacing: Option<vegas_cc::Pacing>,
    internals: Internals,
}

fn observe(cc: &dyn CongestionController) -> Observed {
    let mut internals = Internals::default();
    cc.internals(&mut internals);
    Observed {
        cwnd: cc.cwnd(),
        ssthresh: cc.ssthresh(),
        pacing: cc.pacing(),
        internals,
    }
}

/// Parameters at their extremes, where a division by zero or an overflow
/// would hide (moved here from the members' own files).
const EXTREME_VARIANTS: &[(&str, &[&str])] = &[
    ("vegas-linux", &["spike_suppression=on"]),
    (
        "vegas",
        &[
            "alpha=0",
            "beta=0",
            "gamma=0",
            "loss_factor=0",
            "ss_exit_factor=0",
        ],
    ),
    (
        "vegas",
        &[
            "alpha=1000",
            "beta=1000",
            "gamma=1000",
            "min_rtt_samples=1000",
        ],
    ),
    (
        "veno",
        &[
            "beta=0",
            "random_loss_factor=0",
            "congestion_loss_factor=0",
            "timeout_ssthresh_factor=0",
        ],
    ),
    (
        "veno",
        &[
            "beta=1000",
            "increase_below_beta=100",
            "increase_at_beta=100",
            "min_rtt_samples=1000",
        ],
    ),
];

/// Every registered algorithm with its defaults, or one of the extreme
/// variants.
fn algorithm() -> impl Strategy<Value = (&'static str, &'static [&'static str])> {
    prop_oneof![
        3 => (0..ALGORITHMS.len()).prop_map(|i| (ALGORITHMS[i].name, &[][..])),
        1 => (0..EXTREME_VARIANTS.len()).prop_map(|i| EXTREME_VARIANTS[i]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_algorithm_is_deterministic_and_never_opens_the_window_on_loss(
        (name, pairs) in algorithm(),
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut flow = Flow::new(build(name, pairs));
        let mut again = Flow::new(build(name, pairs));
        let (mut mds, mut mds_again) = (MDS, MDS);
        for (step, op) in ops.iter().enumerate() {
            let cwnd_before = flow.cc.cwnd();
            let mds_before = mds;
            apply(&mut flow, op, &mut mds);
            apply(&mut again, op, &mut mds_again);
            check_invariants(flow.cc.as_ref());
            prop_assert_eq!(
                observe(flow.cc.as_ref()),
                observe(again.cc.as_ref()),
                "{} diverged at step {} ({:?})", name, step, op
            );
            if let Op::Lose { .. } = op {
                if mds == mds_before {
                    prop_assert!(
                        flow.cc.cwnd() <= cwnd_before,
                        "{}: a loss opened the window from {} to {} at step {}",
                        name, cwnd_before, flow.cc.cwnd(), step
                    );
                }
            }
        }
    }
}

/// Every registered algorithm is drawn: the strategy above covers the
/// registry, not a list that could fall behind it.
#[test]
fn the_registry_includes_vegas_sat() {
    assert!(ALGORITHMS.iter().any(|a| a.name == "vegas-sat"));
    assert!(ALGORITHMS.len() >= 10);
}

/// The sequences the property above once shrank to, replayed for every
/// algorithm on every run (proptest's own persistence file is not found
/// for an integration test). Each overflowed vegas-sat's arithmetic in a
/// debug build: a malformed loss's byte count added to the round's random
/// losses, and a datagram size of 2^64-1 multiplied by the minimum window.
#[test]
fn sequences_that_once_overflowed_run_clean_for_every_algorithm() {
    // A round of `rtt_us` with no idle time, and an ACK of nothing.
    let round = |rtt_us| Op::Round { idle_us: 0, rtt_us };
    let empty_ack = Op::Ack {
        packets: 0,
        rtt_us: 0,
        app_limited: false,
    };
    let malformed_loss = vec![
        Op::Send(4),
        Op::Ack {
            packets: 1,
            rtt_us: 1,
            app_limited: false,
        },
        Op::Malformed,
        Op::Lose {
            packets: 1,
            persistent: false,
        },
    ];
    let huge_datagram = vec![
        round(1),
        empty_ack.clone(),
        round(2),
        round(3),
        empty_ack,
        round(4),
        round(5),
        Op::MaxDatagramSize(usize::MAX),
        Op::Send(4),
        round(6),
    ];
    let cases = [malformed_loss, huge_datagram];
    for info in ALGORITHMS {
        for ops in &cases {
            let mut flow = Flow::new(build(info.name, &[]));
            let mut mds = MDS;
            for op in ops {
                apply(&mut flow, op, &mut mds);
                check_invariants(flow.cc.as_ref());
            }
        }
    }
}

//! The internals generation (`CongestionController::internals_generation`)
//! lets the host skip filling and diffing the qlog internals on an ACK that
//! changed none of them. A member that forgot to move it would lose qlog
//! fields: every algorithm of `registry::ALGORITHMS` is driven through
//! random events (`common::random_events`), and whenever its generation did
//! not move since the last fill, a forced fill must equal that last fill.

mod common;

use common::random_events::{apply, op};
use common::{build, Flow, MDS};
use proptest::prelude::*;
use vegas_cc::registry::ALGORITHMS;
use vegas_cc::{CongestionController, InternalValue, Internals};

/// Equal field by field, a NaN equal to the same NaN (a fill is compared
/// with another fill of the same state, not with qlog's diff).
fn same_fill(a: &Internals, b: &Internals) -> bool {
    let bits = |v: InternalValue| match v {
        InternalValue::Float(f) => (0, f.to_bits(), ""),
        InternalValue::Int(i) => (1, i, ""),
        InternalValue::Text(t) => (2, 0, t),
    };
    a.fields().len() == b.fields().len()
        && a.fields()
            .iter()
            .zip(b.fields())
            .all(|(x, y)| x.0 == y.0 && bits(x.1) == bits(y.1))
}

fn fill(cc: &dyn CongestionController) -> Internals {
    let mut out = Internals::default();
    cc.internals(&mut out);
    out
}

/// What the host last filled, and at which generation.
#[derive(Default)]
struct LastFill {
    generation: Option<u64>,
    internals: Internals,
}

impl LastFill {
    /// As the host does after an event: a generation that did not move
    /// vouches for the last fill, which a forced fill must then equal.
    fn check(&mut self, cc: &dyn CongestionController) -> Result<(), String> {
        let generation = cc.internals_generation();
        let now = fill(cc);
        if generation.is_some()
            && generation == self.generation
            && !same_fill(&now, &self.internals)
        {
            return Err(format!(
                "{}: generation {generation:?} did not move, but the internals went from {:?} to {:?}",
                cc.name(),
                self.internals,
                now
            ));
        }
        self.generation = generation;
        self.internals = now;
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn an_unmoved_generation_means_unchanged_internals(
        index in 0..ALGORITHMS.len(),
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let name = ALGORITHMS[index].name;
        let mut flow = Flow::new(build(name, &[]));
        let mut mds = MDS;
        let mut last = LastFill::default();
        for (step, op) in ops.iter().enumerate() {
            apply(&mut flow, op, &mut mds);
            if let Err(e) = last.check(flow.cc.as_ref()) {
                prop_assert!(false, "step {} ({:?}): {}", step, op, e);
            }
        }
    }
}

/// The ACK by ACK version of the property, on a flow that grows and sees
/// losses: the random events above apply several ACKs per event.
#[test]
fn every_ack_of_a_long_flow_keeps_the_generation_honest() {
    for info in ALGORITHMS {
        let mut flow = Flow::new(build(info.name, &[])).with_acks_per_window(8);
        let mut last = LastFill::default();
        for round in 0..24u64 {
            let packets = flow.send_window();
            // A queue that builds and drains, so the delay-based members
            // move their windows.
            let rtt = common::ms(600 + (round % 7) * 40);
            for chunk in packets.chunks(packets.len().div_ceil(8).max(1)) {
                flow.ack(chunk, rtt);
                last.check(flow.cc.as_ref()).unwrap();
            }
            if round % 9 == 8 {
                let lost = flow.send(3);
                flow.lose(&lost, false);
                last.check(flow.cc.as_ref()).unwrap();
            }
        }
    }
}

/// The members this change gave a generation report one: without it the
/// host falls back to filling on every ACK, correct but not cheaper.
#[test]
fn the_vegas_members_report_a_generation() {
    for name in [
        "vegas",
        "vegas-linux",
        "vegas-a",
        "vegas-l",
        "vegas-sat",
        "veno",
    ] {
        let cc = build(name, &[]);
        assert!(cc.internals_generation().is_some(), "{name}");
    }
}

/// The bandwidth-estimating members (vegas-w, venodb, westwood+): a paced
/// flow (each window's packets spread over the RTT, so its ACK frames
/// arrive apart and the per-ACK estimates move between the rounds) whose
/// queue builds and drains, with receive timestamps on some rounds
/// (VenoDB's D), application-limited rounds, losses of both kinds, a second
/// loss in one recovery epoch (classified and counted without a reduction),
/// a larger datagram size and a timeout, checked after every ACK frame,
/// loss and size change.
#[test]
fn every_ack_of_a_bandwidth_member_keeps_the_generation_honest() {
    for name in ["vegas-w", "venodb", "westwood"] {
        let mut flow = Flow::new(build(name, &[])).with_acks_per_window(8);
        let start = flow.now;
        let mut last = LastFill::default();
        for round in 0..40u64 {
            flow.app_limited = round % 11 == 10;
            let rtt = common::ms(600 + (round % 7) * 40 + (round % 3) * 5);
            let count = (flow.cwnd() / MDS).max(1);
            let gap = rtt / u32::try_from(count).unwrap_or(u32::MAX);
            let mut packets = Vec::with_capacity(count);
            for _ in 0..count {
                packets.extend(flow.send(1));
                flow.advance(gap);
            }
            let chunk = packets.len().div_ceil(8).max(1);
            for (i, frame) in packets.chunks(chunk).enumerate() {
                let stamped = round % 4 < 2;
                flow.ack_with(frame, rtt, |acked| {
                    if stamped {
                        for (j, p) in acked.iter_mut().enumerate() {
                            // A one-way delay that wanders within the round.
                            let owd = common::ms(300 + ((i + j) as u64 * 3) % 17);
                            p.receive_time = Some(p.time_sent.duration_since(start) + owd);
                        }
                    }
                    common::FrameExtras::default()
                });
                last.check(flow.cc.as_ref()).unwrap();
            }
            if round % 9 == 8 {
                let lost = flow.send(3);
                flow.lose(&lost[2..], false);
                last.check(flow.cc.as_ref()).unwrap();
                // The same epoch: classified again, no second reduction.
                flow.lose(&lost[..2], false);
                last.check(flow.cc.as_ref()).unwrap();
            }
            if round == 20 {
                // PMTUD: Westwood+ keeps its bytes, only the packet size moves.
                flow.cc.on_max_datagram_size(MDS + 200);
                last.check(flow.cc.as_ref()).unwrap();
            }
            if round == 30 {
                let lost = flow.send(4);
                flow.lose(&lost, true);
                last.check(flow.cc.as_ref()).unwrap();
            }
        }
    }
}

/// The members this branch gave a generation report one.
#[test]
fn the_bandwidth_members_report_a_generation() {
    for name in ["vegas-w", "venodb", "westwood"] {
        let cc = build(name, &[]);
        assert!(cc.internals_generation().is_some(), "{name}");
    }
}

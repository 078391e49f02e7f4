//! The internals generation (`CongestionController::internals_generation`)
//! lets the host skip filling and diffing the qlog internals on an ACK that
//! changed none of them. A member that forgot to move it would lose qlog
//! fields: every algorithm of `registry::ALGORITHMS` is driven through
//! random events (`common::random_events`), and whenever its generation did
//! not move since the last fill, a forced fill must equal that last fill.

mod common;

use common::random_events::{apply, op};
use common::{build, Flow, FrameExtras, MDS};
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

/// Every algorithm of the registry reports a generation: without it the
/// host falls back to filling on every ACK, correct but not cheaper. Drawn
/// from the registry, so a new member without one fails here.
#[test]
fn every_registered_algorithm_reports_a_generation() {
    for info in ALGORITHMS {
        let cc = build(info.name, &[]);
        assert!(cc.internals_generation().is_some(), "{}", info.name);
    }
}

/// RoVegas's own fields move with the ACK's queueing information, which the
/// random events never carry: ACKs with AQT values, receive times (with a
/// clock step and impossible ACK delays among them) and neither, in turn,
/// under each `delay_source`, checked ACK by ACK. Dropping any part of its
/// key (the source, QTf, QTb, the rejects, the resyncs) fails here.
#[test]
fn rovegas_keeps_its_generation_honest_with_queueing_information() {
    for source in ["auto", "aqt", "receive_timestamps", "none"] {
        let pair = format!("delay_source={source}");
        let mut flow = Flow::new(build("rovegas", &[&pair])).with_acks_per_window(8);
        let start = flow.start;
        let mut last = LastFill::default();
        for round in 0..30u64 {
            let packets = flow.send_window();
            let rtt = common::ms(600 + (round % 5) * 30);
            for (frame, chunk) in packets.chunks(packets.len().div_ceil(8).max(1)).enumerate() {
                let frame = frame as u64;
                // Every third round carries nothing; the others AQT (with
                // an impossible QTb now and then), receive times, or both.
                let kind = (round + frame) % 3;
                flow.ack_with(chunk, rtt, |acked| {
                    for p in acked.iter_mut() {
                        let queued = (p.pkt_num + round) % 7 * 4;
                        if kind != 1 && round % 3 != 2 {
                            p.forward_queueing = Some(common::ms(queued));
                        }
                        if kind != 0 && round % 3 != 2 {
                            // Our time plus 290 ms forward plus the queue,
                            // on a peer clock that steps at round 20.
                            let received = p.time_sent - start + common::ms(290 + queued);
                            p.receive_time = Some(received);
                            p.clock_epoch = u32::from(round >= 20);
                        }
                    }
                    FrameExtras {
                        // An ACK delay above the RTT now and then: refused.
                        ack_delay: common::ms(if frame == 5 { 2_000 } else { 3 }),
                        backward_queueing: (kind == 0 && round % 3 != 2)
                            .then(|| common::ms(if frame == 6 { 5_000 } else { 10 + frame * 3 })),
                    }
                });
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

/// Each part of RoVegas's key alone: ACKs that leave the skeleton's view
/// as it was (application-limited, within one round, all arriving at one
/// instant, BaseRTT unchanged) and change only one of QTf, QTb, the rejects
/// and the resyncs. A key without any of them keeps its generation here
/// while the qlog fields move.
#[test]
fn each_part_of_rovegas_key_alone_moves_the_generation() {
    let rtt = common::ms(600);
    // AQT: 5 ms forward, 10 ms backward; then a frame whose second packet
    // echoes an impossible 10 s (only the rejects move); then less forward
    // queueing, then less backward (BaseRTT, a minimum, stays: only QTf,
    // then only QTb move).
    let mut flow = Flow::new(build("rovegas", &[]));
    flow.app_limited = true;
    let sent = flow.send(6);
    let mut last = LastFill::default();
    let aqt = |qf: u64, qb: u64, impossible: bool| {
        move |acked: &mut [vegas_cc::AckedPacket]| {
            for (i, p) in acked.iter_mut().enumerate() {
                let queued = if impossible && i == 1 { 10_000 } else { qf };
                p.forward_queueing = Some(common::ms(queued));
            }
            FrameExtras {
                ack_delay: common::ms(3),
                backward_queueing: Some(common::ms(qb)),
            }
        }
    };
    for frame in [&sent[0..1], &sent[1..2]] {
        flow.ack_with(frame, rtt, aqt(5, 10, false));
        last.check(flow.cc.as_ref()).unwrap();
    }
    let before = flow.internal("queueing_rejects");
    let base_rtt = flow.internal("base_rtt_ms");
    flow.ack_with(&sent[2..4], rtt, aqt(5, 10, true));
    assert_eq!(flow.internal("queueing_rejects"), before.map(|r| r + 1.0));
    assert_eq!(flow.internal("qt_forward_ms"), Some(5.0));
    last.check(flow.cc.as_ref()).unwrap();
    flow.ack_with(&sent[4..5], rtt, aqt(3, 10, false));
    assert_eq!(flow.internal("qt_forward_ms"), Some(3.0));
    last.check(flow.cc.as_ref()).unwrap();
    flow.ack_with(&sent[5..6], rtt, aqt(3, 8, false));
    assert_eq!(flow.internal("qt_backward_ms"), Some(8.0));
    last.check(flow.cc.as_ref()).unwrap();
    assert_eq!(flow.internal("base_rtt_ms"), base_rtt);

    // Receive times on a queue-free path: every estimate is zero. The
    // third ACK is on a new peer clock (the floors restart), the fourth
    // claims an ACK delay longer than its round trip (refused).
    let mut flow = Flow::new(build("rovegas", &["delay_source=receive_timestamps"]));
    flow.app_limited = true;
    let start = flow.start;
    let sent = flow.send(4);
    let mut last = LastFill::default();
    for (k, frame) in sent.chunks(1).enumerate() {
        let resyncs = flow.internal("estimator_resyncs");
        let rejects = flow.internal("queueing_rejects");
        flow.ack_with(frame, rtt, |acked| {
            for p in acked.iter_mut() {
                p.receive_time = Some(p.time_sent - start + common::ms(290));
                p.clock_epoch = u32::from(k >= 2);
            }
            FrameExtras {
                ack_delay: common::ms(if k == 3 { 2_000 } else { 3 }),
                backward_queueing: None,
            }
        });
        if k == 2 {
            assert_eq!(flow.internal("estimator_resyncs"), resyncs.map(|r| r + 1.0));
        }
        if k == 3 {
            assert_eq!(flow.internal("queueing_rejects"), rejects.map(|r| r + 1.0));
        }
        assert_eq!(flow.internal("qt_forward_ms"), Some(0.0));
        last.check(flow.cc.as_ref()).unwrap();
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

//! Random event sequences for property tests: sends, ACKs with any RTT
//! (zero included), losses, persistent congestion, spurious-loss rollbacks,
//! datagram-size changes, idle time and malformed events, and the invariants
//! every controller must keep through them.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use vegas_cc::{
    AckEvent, AckSummary, AckedPacket, CongestionController, CongestionEvent, InternalValue,
    Internals, PacketSent, RttSnapshot,
};

use super::{ms, Flow, MDS};

#[derive(Clone, Debug)]
pub enum Op {
    Send(usize),
    Ack {
        packets: usize,
        rtt_us: u64,
        app_limited: bool,
    },
    /// A window sent and acknowledged after `rtt_us`, `idle_us` after the
    /// last event: whole rounds, so that rounds complete and the algorithm's
    /// per-round decisions run.
    Round {
        idle_us: u64,
        rtt_us: u64,
    },
    Lose {
        packets: usize,
        persistent: bool,
    },
    Spurious {
        cwnd: usize,
        ssthresh: usize,
    },
    MaxDatagramSize(usize),
    Advance(u64),
    /// An ACK and a loss with absurd values.
    Malformed,
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..40).prop_map(Op::Send),
        4 => (0usize..40, prop_oneof![Just(0u64), 0u64..5_000_000], any::<bool>())
            .prop_map(|(packets, rtt_us, app_limited)| Op::Ack { packets, rtt_us, app_limited }),
        6 => (prop_oneof![Just(0u64), 0u64..300_000], 1u64..1_000_000)
            .prop_map(|(idle_us, rtt_us)| Op::Round { idle_us, rtt_us }),
        2 => (0usize..10, any::<bool>())
            .prop_map(|(packets, persistent)| Op::Lose { packets, persistent }),
        1 => (any::<usize>(), any::<usize>())
            .prop_map(|(cwnd, ssthresh)| Op::Spurious { cwnd, ssthresh }),
        1 => prop_oneof![Just(0usize), 1usize..70_000, Just(usize::MAX)]
            .prop_map(Op::MaxDatagramSize),
        2 => (0u64..10_000_000).prop_map(Op::Advance),
        1 => Just(Op::Malformed),
    ]
}

/// Applies `op` to `flow`; `max_datagram_size` tracks the size the
/// controller was last told.
pub fn apply(flow: &mut Flow, op: &Op, max_datagram_size: &mut usize) {
    match *op {
        Op::Send(n) => {
            flow.send(n);
        }
        Op::Ack {
            packets,
            rtt_us,
            app_limited,
        } => {
            let chosen: Vec<PacketSent> = flow.in_flight().iter().take(packets).copied().collect();
            flow.app_limited = app_limited;
            flow.ack(&chosen, Duration::from_micros(rtt_us));
        }
        Op::Round { idle_us, rtt_us } => {
            flow.app_limited = false;
            flow.advance(Duration::from_micros(idle_us));
            // A window can be huge after a rollback to a random cwnd.
            let room = flow.cc.cwnd().saturating_sub(flow.bytes_in_flight()) / MDS;
            let sent = flow.send(room.min(200));
            flow.ack(&sent, Duration::from_micros(rtt_us));
        }
        Op::Lose {
            packets,
            persistent,
        } => {
            let chosen: Vec<PacketSent> = flow.in_flight().iter().take(packets).copied().collect();
            flow.lose(&chosen, persistent);
        }
        Op::Spurious { cwnd, ssthresh } => {
            flow.cc.on_spurious_loss(cwnd, ssthresh);
        }
        Op::MaxDatagramSize(size) => {
            flow.cc.on_max_datagram_size(size);
            *max_datagram_size = size;
        }
        Op::Advance(us) => flow.advance(Duration::from_micros(us)),
        Op::Malformed => deliver_malformed(flow, malformed_packet(flow.now), None),
    }
}

/// A packet that claims a zero RTT and was "sent" after it was acknowledged
/// at `now`. Tests add extension values to it for [`deliver_malformed`].
pub fn malformed_packet(now: Instant) -> AckedPacket {
    AckedPacket::new(u64::MAX, MDS, now + ms(5), now)
}

/// At `flow.now`: an ACK of `packet` with the largest ACK delay and bytes in
/// flight, a zero RTT and `backward_queueing`, then a loss of everything,
/// largest lost a packet never sent (sent in the future).
pub fn deliver_malformed(
    flow: &mut Flow,
    packet: AckedPacket,
    backward_queueing: Option<Duration>,
) {
    let now = flow.now;
    flow.cc.on_ack(&AckEvent {
        now,
        acked: &[packet],
        summary: AckSummary::of(&[packet], 0),
        ack_delay: Duration::MAX,
        rtt: RttSnapshot::uniform(Duration::ZERO),
        bytes_in_flight: usize::MAX,
        app_limited: false,
        backward_queueing,
    });
    flow.cc.on_congestion_event(&CongestionEvent {
        now,
        lost_bytes: usize::MAX,
        largest_lost_pkt_num: u64::MAX,
        largest_lost_time_sent: now + ms(10),
        persistent_congestion: false,
        bytes_in_flight: 0,
    });
}

/// Every float internal finite, pacing sane. (cwnd >= the minimum window is
/// not checked: every setter clamps to it, so the check could not fail.)
pub fn check_invariants(cc: &dyn CongestionController) {
    let mut internals = Internals::default();
    cc.internals(&mut internals);
    for (name, value) in internals.fields() {
        if let InternalValue::Float(v) = value {
            assert!(v.is_finite(), "{name} = {v}");
        }
    }
    if let Some(p) = cc.pacing() {
        assert!(p.rate_bytes_per_sec.is_finite() && p.rate_bytes_per_sec > 0.0);
        assert!(p.burst_packets >= 1);
    }
}

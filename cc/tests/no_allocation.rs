//! No controller allocates on the per-packet or per-ACK path.
//!
//! A counting global allocator (`common/counting_allocator.rs`, installed
//! in this test binary only, so that no other test sees it) counts the
//! allocations this thread makes while a path driven through
//! [`ControllerHost`], as quiche's plug-in seam drives it, sends, receives
//! ACKs (with receive timestamps and queueing times, so that every
//! estimator runs) and loses a packet every 10 s. After a warm-up that lets
//! every buffer reach its working size, a further stretch of the same
//! traffic must allocate nothing: an allocation there would be one per
//! packet or per ACK (the packet-pair capacity's sorted copy, read on every
//! packet sent through the pacer, was one).
//!
//! Two kinds of traffic, every controller of [`ALGORITHMS`] through each:
//! - **bulk**: full-size packets whenever the window and pacer allow;
//! - **application-limited**: bulk alternating with stretches in which the
//!   application offers a small packet every 40 ms (well below the path's
//!   rate: the host records those the window and pacer did not hold back,
//!   and ACKs of only such packets, application-limited, RFC 9002 section
//!   7.8), with packets of the sizes a QUIC sender sends (full, a stream's
//!   short end, a small control packet).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use vegas_cc::registry::ALGORITHMS;
use vegas_cc::{
    AckEvent, AckSummary, AckedPacket, ControllerHost, ControllerSpec, PacketSent, RttSnapshot,
};

#[path = "common/counting_allocator.rs"]
mod counting_allocator;
#[path = "common/rtt.rs"]
mod rtt;

use counting_allocator::{allocations_in, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const MDS: usize = 1350;
/// What a sender's packets measure, in turn, when the application limits
/// it: mostly full, a stream's short end, a small control packet.
const QUIC_PACKET_SIZES: [usize; 6] = [MDS, MDS, MDS, 700, MDS, 120];
/// fau-sat: 20 Mbit/s forward, 600 ms round trip.
const BOTTLENECK_BYTES_PER_SEC: f64 = 2.5e6;
const PROPAGATION_RTT: Duration = Duration::from_millis(600);
/// One packet lost this often: loss-based controllers then keep a bounded
/// sawtooth instead of growing without end, and every controller's loss
/// path runs in the measured stretch.
const LOSS_EVERY: Duration = Duration::from_secs(10);
const TRICKLE_INTERVAL: Duration = Duration::from_millis(40);
/// The receiver acknowledges every second packet, as QUIC's default.
const PACKETS_PER_ACK: usize = 2;

/// What the application offers: of every `phase`, the first `bulk` it has
/// data without end; the rest it offers one packet per `TRICKLE_INTERVAL`.
#[derive(Clone, Copy)]
struct Traffic {
    packet_sizes: &'static [usize],
    phase: Duration,
    bulk: Duration,
    warm_up: Duration,
    measured: Duration,
}

const BULK: Traffic = Traffic {
    packet_sizes: &[MDS],
    phase: Duration::from_secs(20),
    bulk: Duration::from_secs(20),
    warm_up: Duration::from_secs(40),
    measured: Duration::from_secs(30),
};

const APPLICATION_LIMITED: Traffic = Traffic {
    packet_sizes: &QUIC_PACKET_SIZES,
    phase: Duration::from_secs(20),
    bulk: Duration::from_secs(13),
    warm_up: Duration::from_secs(45),
    measured: Duration::from_secs(40),
};

#[derive(Clone, Copy)]
struct InFlight {
    sent: PacketSent,
    at_receiver: Instant,
    queueing: Duration,
    ack_arrival: Instant,
}

struct Path {
    host: ControllerHost,
    qlog: bool,
    traffic: Traffic,
    start: Instant,
    now: Instant,
    next_pkt_num: u64,
    in_flight: VecDeque<InFlight>,
    bytes_in_flight: usize,
    bottleneck_free: Instant,
    rtt: Option<RttSnapshot>,
    next_loss: Instant,
    next_trickle: Instant,
    packets: u64,
    trickle_packets: u64,
    acks: u64,
    losses: u64,
}

impl Path {
    fn new(host: ControllerHost, qlog: bool, traffic: Traffic) -> Self {
        let start = Instant::now();
        Path {
            host,
            qlog,
            traffic,
            start,
            now: start,
            next_pkt_num: 0,
            in_flight: VecDeque::with_capacity(1 << 16),
            bytes_in_flight: 0,
            bottleneck_free: start,
            rtt: None,
            next_loss: start + LOSS_EVERY,
            next_trickle: start,
            packets: 0,
            trickle_packets: 0,
            acks: 0,
            losses: 0,
        }
    }

    fn in_bulk(&self) -> bool {
        let into_phase = (self.now - self.start).as_nanos() % self.traffic.phase.as_nanos();
        into_phase < self.traffic.bulk.as_nanos()
    }

    fn report(&mut self) {
        if self.qlog {
            std::hint::black_box(self.host.changed_internals());
        }
    }

    fn room(&self, size: usize) -> bool {
        self.bytes_in_flight + size <= self.host.cwnd()
    }

    fn next_size(&self) -> usize {
        let sizes = self.traffic.packet_sizes;
        sizes[self.next_pkt_num as usize % sizes.len()]
    }

    fn send_one(&mut self) {
        let size = self.next_size();
        let sent = PacketSent {
            pkt_num: self.next_pkt_num,
            size,
            time_sent: self.now,
            bytes_in_flight: self.bytes_in_flight,
        };
        self.next_pkt_num += 1;
        self.host.on_packet_sent(&sent);
        self.report();
        let leaves = self.host.packet_send_time(self.now);
        let begin = self.bottleneck_free.max(leaves);
        let done = begin + Duration::from_secs_f64(size as f64 / BOTTLENECK_BYTES_PER_SEC);
        self.bottleneck_free = done;
        self.in_flight.push_back(InFlight {
            sent,
            at_receiver: done,
            queueing: begin - leaves,
            ack_arrival: done + PROPAGATION_RTT,
        });
        self.bytes_in_flight += size;
        self.packets += 1;
    }

    fn ack_due(&mut self) -> bool {
        let mut acked = [AckedPacket::new(0, 0, self.start, self.start); PACKETS_PER_ACK];
        let mut n = 0;
        while n < PACKETS_PER_ACK {
            let Some(front) = self.in_flight.front().copied() else {
                break;
            };
            if front.ack_arrival > self.now {
                break;
            }
            self.in_flight.pop_front();
            let mut p = AckedPacket::new(
                front.sent.pkt_num,
                front.sent.size,
                front.sent.time_sent,
                self.now,
            );
            p.receive_time = Some(front.at_receiver + PROPAGATION_RTT / 2 - self.start);
            p.forward_queueing = Some(front.queueing);
            acked[n] = p;
            n += 1;
        }
        if n == 0 {
            return false;
        }
        let bytes_in_flight = self.bytes_in_flight;
        self.bytes_in_flight -= acked[..n].iter().map(|p| p.size).sum::<usize>();
        let snapshot = rtt::rfc9002_update(self.rtt, acked[n - 1].rtt);
        self.rtt = Some(snapshot);
        self.host.on_ack(&AckEvent {
            now: self.now,
            acked: &acked[..n],
            summary: AckSummary::of(&acked[..n], 0),
            ack_delay: Duration::ZERO,
            rtt: snapshot,
            bytes_in_flight,
            // The host decides this from its record of the packets.
            app_limited: false,
            backward_queueing: Some(Duration::ZERO),
        });
        self.report();
        self.acks += 1;
        true
    }

    fn lose_oldest(&mut self) {
        let Some(lost) = self.in_flight.pop_front() else {
            return;
        };
        let bytes_in_flight = self.bytes_in_flight;
        self.bytes_in_flight -= lost.sent.size;
        self.host.on_congestion_event(
            self.now,
            lost.sent.size,
            lost.sent.pkt_num,
            lost.sent.time_sent,
            bytes_in_flight,
        );
        self.report();
        self.losses += 1;
    }

    /// Sends what the application has and the window and pacer allow,
    /// takes the ACKs as they arrive and a loss every `LOSS_EVERY`.
    fn run_until(&mut self, until: Instant) {
        loop {
            let released = |p: &Path| p.host.next_release_time().is_none_or(|t| t <= p.now);
            if self.in_bulk() {
                while self.room(self.next_size()) && released(self) {
                    self.send_one();
                }
            } else if self.now >= self.next_trickle {
                if self.room(self.next_size()) && released(self) {
                    self.send_one();
                    self.trickle_packets += 1;
                }
                self.next_trickle = self.now + TRICKLE_INTERVAL;
            }
            let next_ack = self.in_flight.front().map(|p| p.ack_arrival);
            let next_send = if self.in_bulk() {
                self.room(self.next_size())
                    .then(|| self.host.next_release_time())
                    .flatten()
                    .filter(|t| *t > self.now)
            } else {
                Some(self.next_trickle)
            };
            // The next change of phase, so that bulk resumes on time.
            let Traffic { phase, bulk, .. } = self.traffic;
            let into_phase = Duration::from_nanos(
                ((self.now - self.start).as_nanos() % phase.as_nanos()) as u64,
            );
            let phase_change = if into_phase < bulk {
                self.now + (bulk - into_phase)
            } else {
                self.now + (phase - into_phase)
            };
            let Some(next) = [
                next_ack,
                next_send,
                Some(self.next_loss),
                Some(phase_change),
            ]
            .into_iter()
            .flatten()
            .min() else {
                return;
            };
            if next > until {
                self.now = until;
                return;
            }
            self.now = next;
            if self.now >= self.next_loss {
                self.lose_oldest();
                self.next_loss += LOSS_EVERY;
            }
            while self.ack_due() {}
        }
    }
}

struct Stretch {
    allocations: u64,
    packets: u64,
    trickle_packets: u64,
    acks: u64,
    losses: u64,
}

/// Allocations in `traffic.measured` after `traffic.warm_up`.
fn measure(name: &str, qlog: bool, traffic: Traffic) -> Stretch {
    let spec = ControllerSpec::new(name).expect("a registered algorithm");
    let host = ControllerHost::new(
        &spec,
        vegas_cc::WindowConfig {
            max_datagram_size: MDS,
            initial_cwnd_packets: 10,
        },
    );
    let mut path = Path::new(host, qlog, traffic);
    path.run_until(path.start + traffic.warm_up);
    let (packets, trickle, acks, losses) =
        (path.packets, path.trickle_packets, path.acks, path.losses);
    let until = path.now + traffic.measured;
    let allocations = allocations_in(|| path.run_until(until));
    Stretch {
        allocations,
        packets: path.packets - packets,
        trickle_packets: path.trickle_packets - trickle,
        acks: path.acks - acks,
        losses: path.losses - losses,
    }
}

fn check_every_controller(qlog: bool, traffic: Traffic) {
    let mut failures = Vec::new();
    // Application-limited traffic must show both kinds of stretch in the
    // measured one, or it proves nothing about them.
    let min_trickle = if traffic.bulk < traffic.phase { 100 } else { 0 };
    for info in ALGORITHMS {
        let s = measure(info.name, qlog, traffic);
        assert!(
            s.packets >= 300 && s.trickle_packets >= min_trickle && s.acks >= 150 && s.losses >= 2,
            "{}: too little traffic measured ({} packets, {} application-limited, {} ACKs, \
             {} losses)",
            info.name,
            s.packets,
            s.trickle_packets,
            s.acks,
            s.losses
        );
        eprintln!(
            "{} (qlog {qlog}): {} allocations, {} packets ({} application-limited), {} ACKs, \
             {} losses",
            info.name, s.allocations, s.packets, s.trickle_packets, s.acks, s.losses
        );
        if s.allocations > 0 {
            failures.push(format!(
                "{}: {} allocations in {} packets sent, {} ACKs",
                info.name, s.allocations, s.packets, s.acks
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn no_controller_allocates_per_packet_or_per_ack() {
    check_every_controller(false, BULK);
}

#[test]
fn no_controller_allocates_per_packet_or_per_ack_with_qlog() {
    check_every_controller(true, BULK);
}

#[test]
fn no_controller_allocates_when_application_limited() {
    check_every_controller(false, APPLICATION_LIMITED);
}

#[test]
fn no_controller_allocates_when_application_limited_with_qlog() {
    check_every_controller(true, APPLICATION_LIMITED);
}

/// The counter itself: it must see an allocation, or the tests above
/// prove nothing.
#[test]
fn the_counter_counts() {
    let n = allocations_in(|| {
        std::hint::black_box(vec![0u8; 100]);
    });
    assert_eq!(n, 1);
    assert_eq!(allocations_in(|| ()), 0);
}

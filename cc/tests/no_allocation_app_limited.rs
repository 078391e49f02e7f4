//! No controller allocates per packet or per ACK when the application, not
//! the window, limits the sender, nor when it comes back to bulk sending.
//!
//! `no_allocation.rs` runs every controller of [`ALGORITHMS`] in bulk; this
//! binary alternates bulk with stretches in which the application offers a
//! small packet every 40 ms (well below the path's rate: the host records
//! those the window and pacer did not hold back, and ACKs of only such
//! packets, application-limited, RFC 9002 section 7.8),
//! with packets of the sizes a QUIC sender sends (full, a stream's short
//! end, a small control packet), receive-stamped ACKs, queueing times and a
//! loss every 10 s. After a warm-up holding both kinds of stretch, a further
//! 40 s holding both again must allocate nothing.

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
/// What a sender's packets measure, in turn: mostly full, a stream's short
/// end, a small control packet.
const PACKET_SIZES: [usize; 6] = [MDS, MDS, MDS, 700, MDS, 120];
/// fau-sat: 20 Mbit/s forward, 600 ms round trip.
const BOTTLENECK_BYTES_PER_SEC: f64 = 2.5e6;
const PROPAGATION_RTT: Duration = Duration::from_millis(600);
const LOSS_EVERY: Duration = Duration::from_secs(10);
/// Of every `PHASE`, the first `BULK` the application has data without
/// end; the rest it offers one packet per `TRICKLE_INTERVAL`.
const PHASE: Duration = Duration::from_secs(20);
const BULK: Duration = Duration::from_secs(13);
const TRICKLE_INTERVAL: Duration = Duration::from_millis(40);
const PACKETS_PER_ACK: usize = 2;

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
    fn new(host: ControllerHost, qlog: bool) -> Self {
        let start = Instant::now();
        Path {
            host,
            qlog,
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
        let into_phase = (self.now - self.start).as_nanos() % PHASE.as_nanos();
        into_phase < BULK.as_nanos()
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
        PACKET_SIZES[self.next_pkt_num as usize % PACKET_SIZES.len()]
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
            let into_phase = Duration::from_nanos(
                ((self.now - self.start).as_nanos() % PHASE.as_nanos()) as u64,
            );
            let phase_change = if into_phase < BULK {
                self.now + (BULK - into_phase)
            } else {
                self.now + (PHASE - into_phase)
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

/// Allocations in 40 s after 45 s of warm-up (each holding both bulk and
/// application-limited stretches).
fn measure(name: &str, qlog: bool) -> Stretch {
    let spec = ControllerSpec::new(name).expect("a registered algorithm");
    let host = ControllerHost::new(
        &spec,
        vegas_cc::WindowConfig {
            max_datagram_size: MDS,
            initial_cwnd_packets: 10,
        },
    );
    let mut path = Path::new(host, qlog);
    path.run_until(path.start + Duration::from_secs(45));
    let (packets, trickle, acks, losses) =
        (path.packets, path.trickle_packets, path.acks, path.losses);
    let until = path.now + Duration::from_secs(40);
    let allocations = allocations_in(|| path.run_until(until));
    Stretch {
        allocations,
        packets: path.packets - packets,
        trickle_packets: path.trickle_packets - trickle,
        acks: path.acks - acks,
        losses: path.losses - losses,
    }
}

fn check_every_controller(qlog: bool) {
    let mut failures = Vec::new();
    for info in ALGORITHMS {
        let s = measure(info.name, qlog);
        // Both kinds of stretch must be in the measured 40 s.
        assert!(
            s.packets >= 300 && s.trickle_packets >= 100 && s.acks >= 150 && s.losses >= 2,
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
fn no_controller_allocates_when_application_limited() {
    check_every_controller(false);
}

#[test]
fn no_controller_allocates_when_application_limited_with_qlog() {
    check_every_controller(true);
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

//! No controller allocates on the per-packet or per-ACK path.
//!
//! A counting global allocator (`common/counting_allocator.rs`, installed
//! in this test binary only, so that no other test sees it) counts the allocations this thread makes while a path
//! driven through [`ControllerHost`], as quiche's plug-in seam drives it,
//! sends, receives ACKs (with receive timestamps and queueing times, so
//! that every estimator runs) and loses packets. After a warm-up that lets
//! every buffer reach its working size, a further stretch of the same
//! traffic must allocate nothing: an allocation there would be one per
//! packet or per ACK (the packet-pair capacity's sorted copy, read on every
//! packet sent through the pacer, was one).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use vegas_cc::registry::ALGORITHMS;

#[path = "common/rtt.rs"]
mod rtt;
use vegas_cc::{
    AckEvent, AckSummary, AckedPacket, ControllerHost, ControllerSpec, PacketSent, RttSnapshot,
};

#[path = "common/counting_allocator.rs"]
mod counting_allocator;
use counting_allocator::{allocations_in, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const MDS: usize = 1350;
/// fau-sat: 20 Mbit/s forward, 600 ms round trip.
const BOTTLENECK_BYTES_PER_SEC: f64 = 2.5e6;
const PROPAGATION_RTT: Duration = Duration::from_millis(600);
/// One packet lost this often: loss-based controllers then keep a bounded
/// sawtooth instead of growing without end, and every controller's loss
/// path runs in the measured stretch.
const LOSS_EVERY: Duration = Duration::from_secs(10);
/// The receiver acknowledges every second packet, as QUIC's default.
const PACKETS_PER_ACK: usize = 2;

#[derive(Clone, Copy)]
struct InFlight {
    sent: PacketSent,
    /// When it left the bottleneck.
    at_receiver: Instant,
    /// Its time in the bottleneck's queue.
    queueing: Duration,
    ack_arrival: Instant,
}

/// One sender on a FIFO bottleneck with receive-stamping ACKs. Its own
/// buffers are made large enough up front, so that what allocates in the
/// measured stretch is the host and the controller.
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
    packets: u64,
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
            packets: 0,
            acks: 0,
            losses: 0,
        }
    }

    /// What a qlog writer asks after every event (qlog on).
    fn report(&mut self) {
        if self.qlog {
            std::hint::black_box(self.host.changed_internals());
        }
    }

    fn send_one(&mut self) {
        let sent = PacketSent {
            pkt_num: self.next_pkt_num,
            size: MDS,
            time_sent: self.now,
            bytes_in_flight: self.bytes_in_flight,
        };
        self.next_pkt_num += 1;
        self.host.on_packet_sent(&sent);
        self.report();
        let leaves = self.host.packet_send_time(self.now);
        let begin = self.bottleneck_free.max(leaves);
        let done = begin + Duration::from_secs_f64(MDS as f64 / BOTTLENECK_BYTES_PER_SEC);
        self.bottleneck_free = done;
        self.in_flight.push_back(InFlight {
            sent,
            at_receiver: done,
            queueing: begin - leaves,
            ack_arrival: done + PROPAGATION_RTT,
        });
        self.bytes_in_flight += MDS;
        self.packets += 1;
    }

    fn update_rtt(&mut self, sample: Duration) -> RttSnapshot {
        let next = rtt::rfc9002_update(self.rtt, sample);
        self.rtt = Some(next);
        next
    }

    /// One ACK frame for the (up to) `PACKETS_PER_ACK` oldest packets whose
    /// ACK has arrived by now.
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
        let snapshot = self.update_rtt(acked[n - 1].rtt);
        self.host.on_ack(&AckEvent {
            now: self.now,
            acked: &acked[..n],
            summary: AckSummary::of(&acked[..n], 0),
            ack_delay: Duration::ZERO,
            rtt: snapshot,
            bytes_in_flight,
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

    /// Bulk traffic until `until`: sends whenever the window has room and
    /// the pacer releases, ACKs as they arrive, a loss every `LOSS_EVERY`.
    fn run_until(&mut self, until: Instant) {
        loop {
            while self.bytes_in_flight + MDS <= self.host.cwnd()
                && self.host.next_release_time().is_none_or(|t| t <= self.now)
            {
                self.send_one();
            }
            let next_ack = self.in_flight.front().map(|p| p.ack_arrival);
            let next_send = (self.bytes_in_flight + MDS <= self.host.cwnd())
                .then(|| self.host.next_release_time())
                .flatten()
                .filter(|t| *t > self.now);
            let Some(next) = [next_ack, next_send, Some(self.next_loss)]
                .into_iter()
                .flatten()
                .min()
            else {
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

/// Allocations in 30 s of steady traffic after 40 s of warm-up, with the
/// events that stretch held.
fn measure(name: &str, qlog: bool) -> (u64, u64, u64, u64) {
    let spec = ControllerSpec::new(name).expect("a registered algorithm");
    let host = ControllerHost::new(
        &spec,
        vegas_cc::WindowConfig {
            max_datagram_size: MDS,
            initial_cwnd_packets: 10,
        },
    );
    let mut path = Path::new(host, qlog);
    path.run_until(path.start + Duration::from_secs(40));
    let (packets, acks, losses) = (path.packets, path.acks, path.losses);
    let until = path.now + Duration::from_secs(30);
    let allocations = allocations_in(|| path.run_until(until));
    (
        allocations,
        path.packets - packets,
        path.acks - acks,
        path.losses - losses,
    )
}

fn check_every_controller(qlog: bool) {
    let mut failures = Vec::new();
    for info in ALGORITHMS {
        let (allocations, packets, acks, losses) = measure(info.name, qlog);
        // The stretch must hold real traffic, or it proves nothing.
        assert!(
            packets >= 300 && acks >= 150 && losses >= 2,
            "{}: too little traffic measured ({packets} packets, {acks} ACKs, {losses} losses)",
            info.name
        );
        eprintln!(
            "{} (qlog {qlog}): {allocations} allocations, {packets} packets, {acks} ACKs, {losses} losses",
            info.name
        );
        if allocations > 0 {
            failures.push(format!(
                "{}: {allocations} allocations in {packets} packets sent, {acks} ACKs, {losses} losses",
                info.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn no_controller_allocates_per_packet_or_per_ack() {
    check_every_controller(false);
}

#[test]
fn no_controller_allocates_per_packet_or_per_ack_with_qlog() {
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

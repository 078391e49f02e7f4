//! A hand-driven sender for the integration tests of every algorithm: it sends
//! windows of packets, acknowledges them with RTTs the test chooses, and
//! declares losses, so that a test can replay a scenario round by round and
//! compare cwnd and ssthresh with values it computes itself from the paper.
//!
//! Time only moves when the test says so: [`Flow::round`] sends a window at
//! `now` and acknowledges it `rtt` later, in `acks_per_window` ACK frames that
//! all arrive at that instant. With one ACK per window, every round of a
//! packet-number round clock is exactly one window; with more, a round runs
//! from the first ACK of one window to the first ACK of the next.

// Each test file uses only part of this module.
#![allow(dead_code)]

/// Random event sequences and invariants for property tests.
pub mod random_events;
/// The RFC 9002 RTT estimator of the test senders.
pub mod rtt;
/// A sender driven through the host, paced, as the real stack drives it.
pub mod stack;
/// Vegas-A's Fig. 1 and Vegas-L's Fig. 2 written again for the tests.
pub mod vegas_a_model;

use std::time::{Duration, Instant};

use vegas_cc::{
    AckEvent, AckSummary, AckedPacket, CongestionController, CongestionEvent, ControllerSpec,
    InternalValue, Internals, PacketSent, RttSnapshot, WindowConfig,
};

/// Datagram size of every packet the helper sends.
pub const MDS: usize = 1200;
pub const INITIAL_WINDOW_PACKETS: usize = 10;
pub const WINDOW: WindowConfig = WindowConfig {
    max_datagram_size: MDS,
    initial_cwnd_packets: INITIAL_WINDOW_PACKETS,
};

pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// The algorithm called `name`, with `KEY=VALUE` parameters, built for
/// [`WINDOW`].
pub fn build(name: &str, pairs: &[&str]) -> Box<dyn CongestionController> {
    ControllerSpec::with_params(name, pairs)
        .unwrap_or_else(|e| panic!("{name} {pairs:?}: {e}"))
        .build(WINDOW)
}

/// Extension data of one ACK frame, returned by the `extras` of
/// [`Flow::ack_with`]. The default is what [`Flow::ack`] sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameExtras {
    pub ack_delay: Duration,
    pub backward_queueing: Option<Duration>,
}

/// One sender and the controller under test.
#[derive(Debug)]
pub struct Flow {
    pub cc: Box<dyn CongestionController>,
    pub start: Instant,
    pub now: Instant,
    /// ACK frames per acknowledged window (at least 1).
    pub acks_per_window: usize,
    /// Marks every ACK as application-limited.
    pub app_limited: bool,
    next_pkt_num: u64,
    in_flight: Vec<PacketSent>,
    rtt: Option<RttSnapshot>,
}

impl Flow {
    pub fn new(cc: Box<dyn CongestionController>) -> Self {
        let start = Instant::now();
        Flow {
            cc,
            start,
            now: start,
            acks_per_window: 1,
            app_limited: false,
            next_pkt_num: 0,
            in_flight: Vec::new(),
            rtt: None,
        }
    }

    pub fn with_acks_per_window(mut self, acks: usize) -> Self {
        self.acks_per_window = acks.max(1);
        self
    }

    pub fn cwnd(&self) -> usize {
        self.cc.cwnd()
    }

    pub fn cwnd_packets(&self) -> f64 {
        self.cc.cwnd() as f64 / MDS as f64
    }

    pub fn bytes_in_flight(&self) -> usize {
        self.in_flight.iter().map(|p| p.size).sum()
    }

    pub fn in_flight(&self) -> &[PacketSent] {
        &self.in_flight
    }

    /// The RFC 9002 estimator's view of the RTTs acknowledged so far.
    pub fn rtt(&self) -> Option<RttSnapshot> {
        self.rtt
    }

    pub fn advance(&mut self, by: Duration) {
        self.now += by;
    }

    /// Sends `count` packets at `now`, whatever cwnd says.
    pub fn send(&mut self, count: usize) -> Vec<PacketSent> {
        (0..count).map(|_| self.send_one()).collect()
    }

    /// Sends packets at `now` while a whole one still fits in cwnd.
    pub fn send_window(&mut self) -> Vec<PacketSent> {
        let mut sent = Vec::new();
        while self.bytes_in_flight() + MDS <= self.cc.cwnd() {
            sent.push(self.send_one());
        }
        sent
    }

    fn send_one(&mut self) -> PacketSent {
        let sent = PacketSent {
            pkt_num: self.next_pkt_num,
            size: MDS,
            time_sent: self.now,
            bytes_in_flight: self.bytes_in_flight(),
        };
        self.next_pkt_num += 1;
        self.cc.on_packet_sent(&sent);
        self.in_flight.push(sent);
        sent
    }

    /// Acknowledges `packets` in `acks_per_window` frames of consecutive
    /// packets. Each packet's RTT is `rtt` (it is acknowledged at
    /// `time_sent + rtt`); a frame arrives when its last packet is
    /// acknowledged. `now` moves to the last arrival if that is later.
    pub fn ack(&mut self, packets: &[PacketSent], rtt: Duration) {
        self.ack_with(packets, rtt, |_| FrameExtras::default());
    }

    /// [`Flow::ack`], with `extras` filling in each frame's extension data:
    /// it gets the frame's packets (RTT `rtt`, no receive or queueing times)
    /// to set their `receive_time` and `forward_queueing`, and returns the
    /// frame's ACK delay and backward queueing time. The frame's arrival is
    /// fixed before `extras` is called.
    pub fn ack_with(
        &mut self,
        packets: &[PacketSent],
        rtt: Duration,
        mut extras: impl FnMut(&mut [AckedPacket]) -> FrameExtras,
    ) {
        let mut packets: Vec<PacketSent> = packets
            .iter()
            .filter(|p| self.in_flight.iter().any(|f| f.pkt_num == p.pkt_num))
            .copied()
            .collect();
        packets.sort_by_key(|p| p.pkt_num);
        if packets.is_empty() {
            return;
        }
        let per_frame = packets.len().div_ceil(self.acks_per_window);
        for frame in packets.chunks(per_frame) {
            let mut acked: Vec<AckedPacket> = frame
                .iter()
                .map(|p| {
                    let mut a = AckedPacket::new(p.pkt_num, p.size, p.time_sent, p.time_sent + rtt);
                    a.rtt = rtt;
                    a
                })
                .collect();
            let arrival = acked.iter().map(|a| a.time_acked).max().unwrap_or(self.now);
            let FrameExtras {
                ack_delay,
                backward_queueing,
            } = extras(&mut acked);
            let snapshot = self.update_rtt(rtt);
            let event = AckEvent {
                now: arrival,
                acked: &acked,
                summary: AckSummary::of(&acked, 0),
                ack_delay,
                rtt: snapshot,
                bytes_in_flight: self.bytes_in_flight(),
                app_limited: self.app_limited,
                backward_queueing,
            };
            self.cc.on_ack(&event);
            self.in_flight
                .retain(|f| !frame.iter().any(|p| p.pkt_num == f.pkt_num));
            self.now = self.now.max(arrival);
        }
    }

    /// RFC 9002 section 5.3, without ACK delay.
    fn update_rtt(&mut self, sample: Duration) -> RttSnapshot {
        let next = match self.rtt {
            None => RttSnapshot::uniform(sample),
            Some(prev) => {
                let deviation = prev.smoothed_rtt.abs_diff(sample);
                RttSnapshot {
                    min_rtt: prev.min_rtt.min(sample),
                    smoothed_rtt: (prev.smoothed_rtt * 7 + sample) / 8,
                    latest_rtt: sample,
                    rttvar: (prev.rttvar * 3 + deviation) / 4,
                }
            }
        };
        self.rtt = Some(next);
        next
    }

    /// Declares `packets` lost at `now`, in one congestion event.
    pub fn lose(&mut self, packets: &[PacketSent], persistent_congestion: bool) {
        let lost: Vec<PacketSent> = packets
            .iter()
            .filter(|p| self.in_flight.iter().any(|f| f.pkt_num == p.pkt_num))
            .copied()
            .collect();
        let Some(largest) = lost.iter().max_by_key(|p| p.pkt_num).copied() else {
            return;
        };
        self.in_flight
            .retain(|f| !lost.iter().any(|p| p.pkt_num == f.pkt_num));
        let event = CongestionEvent {
            now: self.now,
            lost_bytes: lost.iter().map(|p| p.size).sum(),
            largest_lost_pkt_num: largest.pkt_num,
            largest_lost_time_sent: largest.time_sent,
            persistent_congestion,
            bytes_in_flight: self.bytes_in_flight(),
        };
        self.cc.on_congestion_event(&event);
    }

    /// One round: sends a window at `now` and acknowledges all of it `rtt`
    /// later. Returns how many packets were sent.
    pub fn round(&mut self, rtt: Duration) -> usize {
        let window = self.send_window();
        self.ack(&window, rtt);
        window.len()
    }

    /// [`Flow::round`] with [`Flow::ack_with`]'s `extras`.
    pub fn round_with(
        &mut self,
        rtt: Duration,
        extras: impl FnMut(&mut [AckedPacket]) -> FrameExtras,
    ) -> usize {
        let window = self.send_window();
        self.ack_with(&window, rtt, extras);
        window.len()
    }

    /// One [`Flow::round`] per RTT given; returns cwnd in bytes after each.
    pub fn rounds(&mut self, rtts: &[Duration]) -> Vec<usize> {
        rtts.iter()
            .map(|rtt| {
                self.round(*rtt);
                self.cc.cwnd()
            })
            .collect()
    }

    pub fn internals(&self) -> Internals {
        let mut out = Internals::default();
        self.cc.internals(&mut out);
        out
    }

    /// A numeric internal as f64, `None` if absent or text.
    pub fn internal(&self, name: &str) -> Option<f64> {
        match self.internals().get(name)? {
            InternalValue::Float(v) => Some(v),
            InternalValue::Int(v) => Some(v as f64),
            InternalValue::Text(_) => None,
        }
    }
}

/// 004_039b3aff67042154.txt, section 3.5.2, written out independently of the
/// crate: Expected = WindowSize / BaseRTT, Actual = WindowSize / RTT,
/// Diff = (Expected - Actual) x BaseRTT, in packets. Veno's N
/// (001_8629d53d83e82638.txt, section 2.1) is the same quantity.
pub fn reference_diff_packets(window_packets: f64, base_rtt_ms: f64, rtt_ms: f64) -> f64 {
    let base = base_rtt_ms / 1e3;
    let expected = window_packets / base;
    let actual = window_packets / (rtt_ms / 1e3);
    (expected - actual) * base
}

//! A sender driven the way the real stack drives a controller: through
//! [`ControllerHost`], sending whenever the window has room and the host's
//! pacer releases the next packet, over a path with a fixed propagation
//! delay and an optional bottleneck rate (a FIFO without losses).
//!
//! The hand-driven [`super::Flow`] sends whole windows at one instant and lets
//! the test say whether an ACK is application-limited; a bug that only shows
//! under pacing (a paced sender whose bytes in flight stay just below cwnd)
//! cannot show there. Here the stack's side is reproduced as quiche does it:
//! packets leave at the pacer's release times, and every ACK carries
//! quiche's own application-limited flag, taken at ACK time as
//! `bytes_in_flight + max_datagram_size < cwnd`. The host must replace that
//! flag with its own, decided per packet when it was sent (RFC 9002 section
//! 7.8), or growth is lost.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use vegas_cc::{AckEvent, AckSummary, AckedPacket, ControllerHost, PacketSent, RttSnapshot};

use super::MDS;

/// What the application gives the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Application {
    /// Always more to send.
    Bulk,
    /// One packet every interval, no more.
    OnePacketEvery(Duration),
}

/// A packet in flight, with the times it reaches the receiver and its ACK
/// the sender.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    sent: PacketSent,
    at_receiver: Instant,
    ack_arrival: Instant,
}

/// The stack-driven sender and its path.
pub struct StackFlow {
    pub host: ControllerHost,
    pub now: Instant,
    pub start: Instant,
    /// Propagation round trip (both directions, no queueing).
    pub propagation_rtt: Duration,
    /// Bottleneck rate in bytes per second; `None`: unlimited.
    pub bottleneck: Option<f64>,
    pub application: Application,
    /// Extra delay of every ACK: a standing queue on the return path.
    pub return_queue: Duration,
    /// Whether ACKs carry the receiver's stamps (draft-ietf-quic-receive-ts).
    pub receive_stamps: bool,
    next_pkt_num: u64,
    /// Packets the application has handed over but not sent yet
    /// ([`Application::OnePacketEvery`]).
    app_backlog: usize,
    next_app_packet: Instant,
    bottleneck_free: Instant,
    in_flight: VecDeque<InFlight>,
    rtt: Option<RttSnapshot>,
    /// quiche's application-limited flag of every ACK so far.
    pub quiche_app_limited_acks: u64,
    pub acks: u64,
}

impl StackFlow {
    pub fn new(host: ControllerHost, propagation_rtt: Duration) -> Self {
        let start = Instant::now();
        StackFlow {
            host,
            now: start,
            start,
            propagation_rtt,
            bottleneck: None,
            application: Application::Bulk,
            return_queue: Duration::ZERO,
            receive_stamps: false,
            next_pkt_num: 0,
            app_backlog: 0,
            next_app_packet: start,
            bottleneck_free: start,
            in_flight: VecDeque::new(),
            rtt: None,
            quiche_app_limited_acks: 0,
            acks: 0,
        }
    }

    pub fn with_bottleneck(mut self, bytes_per_sec: f64) -> Self {
        self.bottleneck = Some(bytes_per_sec);
        self
    }

    /// ACKs report when the receiver got each packet, on a receiver clock
    /// whose origin is the flow's start.
    pub fn with_receive_stamps(mut self) -> Self {
        self.receive_stamps = true;
        self
    }

    pub fn with_application(mut self, application: Application) -> Self {
        self.set_application(application);
        self
    }

    /// From now on the application gives `application`.
    pub fn set_application(&mut self, application: Application) {
        self.application = application;
        self.app_backlog = 0;
        self.next_app_packet = self.now;
    }

    pub fn bytes_in_flight(&self) -> usize {
        self.in_flight.iter().map(|p| p.sent.size).sum()
    }

    fn has_data(&self) -> bool {
        match self.application {
            Application::Bulk => true,
            Application::OnePacketEvery(_) => self.app_backlog > 0,
        }
    }

    fn window_has_room(&self) -> bool {
        self.bytes_in_flight() + MDS <= self.host.cwnd()
    }

    fn pacer_allows(&self) -> bool {
        self.host.next_release_time().is_none_or(|t| t <= self.now)
    }

    fn send_one(&mut self) {
        let sent = PacketSent {
            pkt_num: self.next_pkt_num,
            size: MDS,
            time_sent: self.now,
            bytes_in_flight: self.bytes_in_flight(),
        };
        self.next_pkt_num += 1;
        if let Application::OnePacketEvery(_) = self.application {
            self.app_backlog -= 1;
        }
        self.host.on_packet_sent(&sent);
        let leaves = self.host.packet_send_time(self.now);
        let at_receiver = match self.bottleneck {
            Some(rate) => {
                let begin = self.bottleneck_free.max(leaves);
                let done = begin + Duration::from_secs_f64(MDS as f64 / rate);
                self.bottleneck_free = done;
                done
            }
            None => leaves,
        };
        self.in_flight.push_back(InFlight {
            sent,
            at_receiver,
            ack_arrival: at_receiver + self.propagation_rtt + self.return_queue,
        });
    }

    /// RFC 9002 section 5.3, no ACK delay.
    fn update_rtt(&mut self, sample: Duration) -> RttSnapshot {
        let next = super::rtt::rfc9002_update(self.rtt, sample);
        self.rtt = Some(next);
        next
    }

    /// Every packet whose ACK is due by `now`, one ACK frame per packet.
    fn deliver_acks(&mut self) {
        while let Some(front) = self.in_flight.front().copied() {
            if front.ack_arrival > self.now {
                break;
            }
            let bytes_in_flight = self.bytes_in_flight();
            self.in_flight.pop_front();
            let rtt = front.ack_arrival - front.sent.time_sent;
            let snapshot = self.update_rtt(rtt);
            let mut acked = AckedPacket::new(
                front.sent.pkt_num,
                front.sent.size,
                front.sent.time_sent,
                front.ack_arrival,
            );
            acked.rtt = rtt;
            if self.receive_stamps {
                // Half the propagation delay after the bottleneck.
                let arrival = front.at_receiver + self.propagation_rtt / 2;
                acked.receive_time = Some(arrival - self.start);
            }
            // quiche's flag at ACK time.
            let quiche_app_limited = bytes_in_flight + MDS < self.host.cwnd();
            self.quiche_app_limited_acks += u64::from(quiche_app_limited);
            self.acks += 1;
            self.host.on_ack(&AckEvent {
                now: self.now,
                acked: &[acked],
                summary: AckSummary::of(&[acked], 0),
                ack_delay: Duration::ZERO,
                rtt: snapshot,
                bytes_in_flight,
                app_limited: quiche_app_limited,
                backward_queueing: None,
            });
        }
    }

    /// Loss detection declares the oldest packet in flight lost now.
    pub fn lose_oldest(&mut self) {
        let Some(lost) = self.in_flight.pop_front() else {
            return;
        };
        let bytes_in_flight = self.bytes_in_flight() + lost.sent.size;
        self.host.on_congestion_event(
            self.now,
            lost.sent.size,
            lost.sent.pkt_num,
            lost.sent.time_sent,
            bytes_in_flight,
        );
    }

    /// Runs until `until`, calling `each_ack` after every instant at which
    /// ACKs arrived (with the flow, for observing cwnd).
    pub fn run_until(&mut self, until: Instant, mut each_ack: impl FnMut(&Self)) {
        loop {
            if let Application::OnePacketEvery(interval) = self.application {
                while self.next_app_packet <= self.now {
                    self.app_backlog += 1;
                    self.next_app_packet += interval;
                }
            }
            while self.has_data() && self.window_has_room() && self.pacer_allows() {
                self.send_one();
            }
            let next_ack = self.in_flight.front().map(|p| p.ack_arrival);
            let next_send = (self.has_data() && self.window_has_room())
                .then(|| self.host.next_release_time())
                .flatten()
                .filter(|t| *t > self.now);
            let next_app = match self.application {
                Application::OnePacketEvery(_) => Some(self.next_app_packet),
                Application::Bulk => None,
            };
            let Some(next) = [next_ack, next_send, next_app].into_iter().flatten().min() else {
                break;
            };
            if next > until {
                self.now = until;
                break;
            }
            self.now = next;
            if next_ack == Some(next) {
                self.deliver_acks();
                each_ack(self);
            }
        }
    }

    /// Runs for `duration` and returns cwnd in bytes sampled every
    /// `every` (the value just after the ACKs of that instant).
    pub fn cwnd_every(&mut self, duration: Duration, every: Duration) -> Vec<usize> {
        let mut samples = Vec::new();
        let end = self.now + duration;
        while self.now < end {
            let next = (self.now + every).min(end);
            self.run_until(next, |_| {});
            samples.push(self.host.cwnd());
        }
        samples
    }
}

//! Links and the datagrams that cross them.
//!
//! A link is one direction of a router's output port: a DropTail queue in
//! front of a transmitter of a given rate, then a wire with a propagation
//! delay (plus, optionally, a little random jitter) and a loss model. The
//! link itself schedules nothing; the simulator calls [`Link::arrive`],
//! [`Link::finish_transmission`] and [`Link::wire_arrival`] at the right
//! times and schedules what they return.

use std::collections::VecDeque;

use crate::random::RandomStream;
use crate::scenario::{GilbertElliottSpec, LinkChange, LinkConfig, LossModel, QueueLimit};
use crate::time::{serialisation_time, Nanos};
use crate::trace::DeliveryCursor;

/// Who a datagram belongs to, for delivery and accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A QUIC flow's datagram; `towards_client` says which endpoint gets it.
    Quic { flow: usize, towards_client: bool },
    /// A cross-traffic source's filler datagram.
    Cross { source: usize },
}

/// A datagram in the network.
#[derive(Debug)]
pub struct Datagram {
    /// The UDP payload of a QUIC datagram; empty for cross traffic, whose
    /// content nobody reads.
    pub payload: Vec<u8>,
    /// Bytes on the wire: payload plus headers.
    pub wire_bytes: u32,
    pub owner: Owner,
    /// Index of the route (the list of links) it follows.
    pub route: usize,
    /// Index in the route of the link it is at or going to.
    pub hop: usize,
    /// When it entered the queue it is waiting in.
    pub enqueued_at: Nanos,
    /// Time spent waiting in queues so far (the simulator's ground truth).
    pub queueing: Nanos,
    /// Accumulated queueing time (RoVegas' AQT): the waiting time at the
    /// AQT-enabled routers passed so far, `None` if it passed none. Carried
    /// beside the encrypted packet, as an IP option would be.
    pub aqt: Option<Nanos>,
}

/// What happened to a datagram arriving at a link.
#[derive(Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The transmitter was idle: it is being transmitted, done at this time.
    Transmitting {
        done_at: Nanos,
    },
    Queued,
    /// The queue was full: dropped (DropTail).
    Dropped,
}

/// Counters of a link over the whole run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    pub arrived_packets: u64,
    pub dropped_packets: u64,
    /// Lost on the wire by the loss model.
    pub lost_packets: u64,
    /// Lost because they left during a blackout.
    pub blackout_packets: u64,
    pub transmitted_packets: u64,
    pub transmitted_bytes: u64,
    /// Time the transmitter was busy.
    pub busy: Nanos,
    /// Sum of the waiting times of the transmitted datagrams.
    pub total_queueing: Nanos,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
}

struct InService {
    datagram: Datagram,
    started: Nanos,
    /// When its first byte leaves: `started`, except on a trace-driven link,
    /// where it waits for an opportunity and, till then, counts as queued.
    first_byte_at: Nanos,
}

pub struct Link {
    pub config: LinkConfig,
    pub rate_bps: u64,
    pub delay: Nanos,
    loss: LossModel,
    /// Gilbert-Elliott state: in the bad state.
    loss_state_bad: bool,
    rng: RandomStream,
    /// Draws of the delay jitter: a stream of its own, so that switching
    /// jitter on or off leaves the loss draws as they were.
    jitter_rng: RandomStream,
    /// When the latest datagram to leave reaches the far end; a FIFO wire
    /// delivers none before it. Reset by a change of delay.
    last_wire_arrival: Nanos,
    /// Datagrams leaving before this time are lost.
    blackout_until: Nanos,
    /// Trace-driven links: where the link stands in its delivery trace.
    delivery: DeliveryCursor,
    queue: VecDeque<Datagram>,
    queued_bytes: u64,
    in_service: Option<InService>,
    pub stats: LinkStats,
    /// Largest queue since the last [`Link::take_interval_max`].
    interval_max_packets: u64,
    interval_max_bytes: u64,
}

impl Link {
    /// The link of a scenario run with `seed`: its random streams are named
    /// after it (`link:NAME:loss`, `link:NAME:delay`), so that adding a link
    /// changes no other link's draws.
    pub fn new(config: LinkConfig, seed: u64) -> Self {
        Link {
            rate_bps: config.rate_bps,
            delay: config.delay,
            loss: config.loss,
            loss_state_bad: false,
            rng: RandomStream::named(seed, &format!("link:{}:loss", config.name)),
            jitter_rng: RandomStream::named(seed, &format!("link:{}:delay", config.name)),
            last_wire_arrival: 0,
            blackout_until: 0,
            delivery: DeliveryCursor::default(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            in_service: None,
            stats: LinkStats::default(),
            interval_max_packets: 0,
            interval_max_bytes: 0,
            config,
        }
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Datagrams waiting (not counting the one being transmitted).
    pub fn queue_packets(&self) -> u64 {
        self.queue.len() as u64
    }

    /// Datagrams the link holds: waiting, and the one being transmitted.
    pub fn backlog_packets(&self) -> u64 {
        self.queue_packets() + u64::from(self.in_service.is_some())
    }

    pub fn queue_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// The queue's largest length since the previous call, then resets it to
    /// the current length.
    pub fn take_interval_max(&mut self) -> (u64, u64) {
        let max = (self.interval_max_packets, self.interval_max_bytes);
        self.interval_max_packets = self.queue_packets();
        self.interval_max_bytes = self.queued_bytes;
        max
    }

    /// Applies a scheduled change (rate step, route change, loss, blackout).
    pub fn apply_change(&mut self, change: &LinkChange, now: Nanos) {
        if let Some(rate) = change.rate_bps {
            self.set_rate(rate);
        }
        if let Some(delay) = change.delay {
            self.set_delay(delay);
        }
        if let Some(loss) = change.loss {
            self.set_loss(loss);
        }
        if let Some(length) = change.blackout {
            self.start_blackout(now, length);
        }
    }

    pub fn set_rate(&mut self, rate_bps: u64) {
        // A datagram being transmitted finishes at the rate it started with.
        self.rate_bps = rate_bps;
    }

    pub fn set_delay(&mut self, delay: Nanos) {
        // Datagrams already on the wire keep their arrival time; later ones
        // may overtake them after a cut in delay, as after a real route
        // change.
        self.delay = delay;
        self.last_wire_arrival = 0;
    }

    pub fn set_loss(&mut self, loss: LossModel) {
        self.loss = loss;
        self.loss_state_bad = false;
    }

    pub fn start_blackout(&mut self, now: Nanos, length: Nanos) {
        self.blackout_until = self.blackout_until.max(now + length);
    }

    /// Puts a datagram that reached the link at `joined` into service at
    /// `now`; returns when its first byte and its last byte leave: its
    /// serialisation at the link's rate from `now`, or, on a trace-driven
    /// link, the delivery opportunities that carry it (`crate::trace`).
    fn transmission(&mut self, now: Nanos, joined: Nanos, wire_bytes: u32) -> (Nanos, Nanos) {
        match &self.config.delivery_trace {
            Some(trace) => {
                let departure = trace.send(&mut self.delivery, joined, u64::from(wire_bytes));
                (departure.first_byte, departure.last_byte)
            }
            None => (
                now,
                now + serialisation_time(u64::from(wire_bytes), self.rate_bps),
            ),
        }
    }

    /// A datagram reaches the link's input at `now`.
    pub fn arrive(&mut self, now: Nanos, mut datagram: Datagram) -> Arrival {
        self.stats.arrived_packets += 1;
        if self.in_service.is_none() {
            // Waited nothing here; an AQT router still says it was passed.
            if self.config.aqt {
                datagram.aqt = Some(datagram.aqt.unwrap_or(0));
            }
            let (first_byte_at, done_at) = self.transmission(now, now, datagram.wire_bytes);
            self.in_service = Some(InService {
                datagram,
                started: now,
                first_byte_at,
            });
            return Arrival::Transmitting { done_at };
        }
        let size = u64::from(datagram.wire_bytes);
        // On a trace-driven link the datagram in service waits in the queue
        // until an opportunity carries its first byte, as in mm-link, whose
        // DropTail counts it until then.
        let (waiting_packets, waiting_bytes) = match &self.in_service {
            Some(s) if s.first_byte_at > now => (1, u64::from(s.datagram.wire_bytes)),
            _ => (0, 0),
        };
        let fits = match self.config.queue_limit {
            QueueLimit::Packets(limit) => self.queue_packets() + waiting_packets < limit,
            QueueLimit::Bytes(limit) => self.queued_bytes + waiting_bytes + size <= limit,
        };
        if !fits {
            self.stats.dropped_packets += 1;
            return Arrival::Dropped;
        }
        datagram.enqueued_at = now;
        self.queue.push_back(datagram);
        self.queued_bytes += size;
        let (packets, bytes) = (self.queue_packets(), self.queued_bytes);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(packets);
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(bytes);
        self.interval_max_packets = self.interval_max_packets.max(packets);
        self.interval_max_bytes = self.interval_max_bytes.max(bytes);
        Arrival::Queued
    }

    /// The transmission in progress ends at `now`. Returns the datagram if it
    /// survives the wire (it reaches the far end at `now + delay`), and when
    /// the next transmission, if any, ends.
    pub fn finish_transmission(&mut self, now: Nanos) -> (Option<Datagram>, Option<Nanos>) {
        let Some(InService {
            datagram, started, ..
        }) = self.in_service.take()
        else {
            return (None, None);
        };
        self.stats.busy += now - started;
        self.stats.transmitted_packets += 1;
        self.stats.transmitted_bytes += u64::from(datagram.wire_bytes);
        let survivor = if now < self.blackout_until {
            self.stats.blackout_packets += 1;
            None
        } else if self.draw_loss(datagram.wire_bytes) {
            self.stats.lost_packets += 1;
            None
        } else {
            Some(datagram)
        };

        let next_done = self.queue.pop_front().map(|mut next| {
            self.queued_bytes -= u64::from(next.wire_bytes);
            let waited = now - next.enqueued_at;
            next.queueing += waited;
            self.stats.total_queueing += waited;
            if self.config.aqt {
                next.aqt = Some(next.aqt.unwrap_or(0) + waited);
            }
            let (first_byte_at, done_at) =
                self.transmission(now, next.enqueued_at, next.wire_bytes);
            self.in_service = Some(InService {
                datagram: next,
                started: now,
                first_byte_at,
            });
            done_at
        });
        (survivor, next_done)
    }

    /// When a datagram that finished its transmission at `now` (and survived
    /// the wire) reaches the far end: `now + delay`, plus a uniform draw
    /// below the link's `delay_jitter`. Unless the link may reorder, never
    /// before the datagram that left before it: a jittered datagram delays
    /// the ones right behind it, as on a FIFO wire.
    pub fn wire_arrival(&mut self, now: Nanos) -> Nanos {
        let jitter = self.config.delay_jitter;
        let traced = !self.config.delay_trace.is_empty();
        let delay = if traced {
            self.config.delay_trace.at(now)
        } else {
            self.delay
        };
        let mut at = now + delay;
        if traced && !self.config.jitter_reorders {
            // A falling delay never lets a datagram overtake the one before.
            at = at.max(self.last_wire_arrival);
        }
        if jitter > 0 {
            let extra = (self.jitter_rng.next_f64() * jitter as f64) as Nanos;
            at += extra.min(jitter - 1);
            if !self.config.jitter_reorders {
                at = at.max(self.last_wire_arrival);
            }
        }
        self.last_wire_arrival = self.last_wire_arrival.max(at);
        at
    }

    /// Whether the loss model drops a datagram of `wire_bytes`. Draws from the
    /// link's own stream a fixed number of times per datagram, so the draws
    /// of one link never depend on another.
    fn draw_loss(&mut self, wire_bytes: u32) -> bool {
        match self.loss {
            LossModel::None => false,
            LossModel::PacketErrorRate(p) => self.rng.chance(p),
            LossModel::BitErrorRate(ber) => {
                let p = packet_error_rate_from_ber(ber, wire_bytes);
                self.rng.chance(p)
            }
            LossModel::GilbertElliott(ge) => self.draw_gilbert_elliott(&ge),
        }
    }

    fn draw_gilbert_elliott(&mut self, ge: &GilbertElliottSpec) -> bool {
        let switch = if self.loss_state_bad {
            ge.p_bad_to_good
        } else {
            ge.p_good_to_bad
        };
        if self.rng.chance(switch) {
            self.loss_state_bad = !self.loss_state_bad;
        }
        let loss = if self.loss_state_bad {
            ge.loss_in_bad
        } else {
            ge.loss_in_good
        };
        self.rng.chance(loss)
    }
}

/// 1 - (1 - ber)^(8 bytes), computed without losing small rates to rounding.
pub fn packet_error_rate_from_ber(ber: f64, bytes: u32) -> f64 {
    let bits = 8.0 * f64::from(bytes);
    -(bits * (-ber).ln_1p()).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(limit: QueueLimit, loss: LossModel) -> Link {
        Link::new(
            LinkConfig {
                name: "l".into(),
                rate_bps: 8_000_000,
                delay: 1_000_000,
                queue_limit: limit,
                loss,
                aqt: true,
                delay_jitter: 0,
                jitter_reorders: false,
                delay_trace: Default::default(),
                delivery_trace: None,
            },
            3,
        )
    }

    fn datagram(bytes: u32) -> Datagram {
        Datagram {
            payload: Vec::new(),
            wire_bytes: bytes,
            owner: Owner::Cross { source: 0 },
            route: 0,
            hop: 0,
            enqueued_at: 0,
            queueing: 0,
            aqt: None,
        }
    }

    #[test]
    fn droptail_in_packets_and_fifo_service() {
        let mut l = link(QueueLimit::Packets(2), LossModel::None);
        // 1000 bytes at 8 Mbit/s: 1 ms each.
        assert_eq!(
            l.arrive(0, datagram(1000)),
            Arrival::Transmitting { done_at: 1_000_000 }
        );
        assert_eq!(l.arrive(0, datagram(1000)), Arrival::Queued);
        assert_eq!(l.arrive(0, datagram(1000)), Arrival::Queued);
        assert_eq!(l.arrive(0, datagram(1000)), Arrival::Dropped);
        let (out, next) = l.finish_transmission(1_000_000);
        assert!(out.is_some());
        assert_eq!(next, Some(2_000_000));
        let (out, _) = l.finish_transmission(2_000_000);
        let out = out.unwrap();
        assert_eq!(out.queueing, 1_000_000);
        assert_eq!(out.aqt, Some(1_000_000));
        assert_eq!(l.stats.dropped_packets, 1);
    }

    #[test]
    fn droptail_in_bytes() {
        let mut l = link(QueueLimit::Bytes(2500), LossModel::None);
        l.arrive(0, datagram(1000));
        assert_eq!(l.arrive(0, datagram(1000)), Arrival::Queued);
        assert_eq!(l.arrive(0, datagram(1000)), Arrival::Queued);
        assert_eq!(l.arrive(0, datagram(1000)), Arrival::Dropped);
        assert_eq!(l.arrive(0, datagram(500)), Arrival::Queued);
        assert_eq!(l.queue_bytes(), 2500);
    }

    #[test]
    fn ber_to_packet_error_rate() {
        let p = packet_error_rate_from_ber(1e-6, 1250);
        assert!((p - (1.0 - (1.0f64 - 1e-6).powi(10_000))).abs() < 1e-12);
        assert!((packet_error_rate_from_ber(1e-12, 1) - 8e-12).abs() < 1e-20);
    }

    fn jittery(jitter: Nanos, reorders: bool, loss: LossModel) -> Link {
        Link::new(
            LinkConfig {
                name: "j".into(),
                rate_bps: 8_000_000,
                delay: 10_000_000,
                queue_limit: QueueLimit::Packets(1000),
                loss,
                aqt: false,
                delay_jitter: jitter,
                jitter_reorders: reorders,
                delay_trace: Default::default(),
                delivery_trace: None,
            },
            11,
        )
    }

    #[test]
    fn without_jitter_the_wire_takes_exactly_the_delay() {
        let mut l = jittery(0, false, LossModel::None);
        for now in [0, 5, 5, 1_000_000, 1_000_001] {
            assert_eq!(l.wire_arrival(now), now + 10_000_000);
        }
    }

    #[test]
    fn sparse_datagrams_get_uniform_jitter() {
        // Datagrams 10 ms apart, jitter below 2 ms: the FIFO rule never
        // binds, so each extra delay is one uniform draw on [0, 2 ms).
        let jitter = 2_000_000;
        let mut l = jittery(jitter, false, LossModel::None);
        let n = 20_000;
        let extras: Vec<f64> = (0..n)
            .map(|i| {
                let now = i * 10_000_000;
                let extra = l.wire_arrival(now) - now - 10_000_000;
                assert!(extra < jitter, "{extra}");
                extra as f64
            })
            .collect();
        let mean = extras.iter().sum::<f64>() / n as f64;
        // Uniform: mean 1 ms, standard deviation of the mean
        // 2 ms / sqrt(12 n) = 4.1 us; within 4 of them.
        assert!((mean - 1e6).abs() < 16.4e3, "{mean}");
        let below_half_ms = extras.iter().filter(|e| **e < 0.5e6).count() as f64 / n as f64;
        // P = 0.25, standard deviation sqrt(0.25 x 0.75 / n) = 0.0031.
        assert!((below_half_ms - 0.25).abs() < 0.0124, "{below_half_ms}");
    }

    #[test]
    fn dense_datagrams_stay_in_order_unless_the_link_may_reorder() {
        // 0.1 ms apart with up to 1 ms of jitter: without the FIFO rule a
        // datagram overtakes the one before it with probability
        // 0.9^2 / 2 = 0.405.
        let jitter = 1_000_000;
        let mut fifo = jittery(jitter, false, LossModel::None);
        let mut free = jittery(jitter, true, LossModel::None);
        let (mut last_fifo, mut last_free, mut swaps) = (0, 0, 0);
        for i in 0..5_000u64 {
            let now = i * 100_000;
            let a = fifo.wire_arrival(now);
            assert!(a >= last_fifo, "datagram {i} overtook the one before it");
            assert!((now + 10_000_000..now + 10_000_000 + jitter).contains(&a));
            last_fifo = a;
            let b = free.wire_arrival(now);
            assert!((now + 10_000_000..now + 10_000_000 + jitter).contains(&b));
            swaps += u64::from(b < last_free);
            last_free = b;
        }
        assert!(swaps > 1_000, "{swaps}");
    }

    #[test]
    fn a_cut_in_delay_still_lets_later_datagrams_overtake() {
        let mut l = jittery(1_000_000, false, LossModel::None);
        let before = l.wire_arrival(0);
        l.set_delay(1_000_000);
        let after = l.wire_arrival(100_000);
        assert!(
            before >= 10_000_000 && after < 2_100_000,
            "{before} {after}"
        );
    }

    #[test]
    fn jitter_leaves_the_loss_draws_as_they_were() {
        let run = |jitter| {
            let mut l = jittery(jitter, false, LossModel::PacketErrorRate(0.3));
            (0..2_000u64)
                .map(|i| {
                    let now = i * 2_000_000;
                    l.arrive(now, datagram(1000));
                    let (out, _) = l.finish_transmission(now + 1_000_000);
                    if out.is_some() {
                        l.wire_arrival(now + 1_000_000);
                    }
                    out.is_some()
                })
                .collect::<Vec<_>>()
        };
        let (calm, jittered) = (run(0), run(1_000_000));
        assert_eq!(calm, jittered);
        let lost = calm.iter().filter(|s| !**s).count();
        assert!((480..=720).contains(&lost), "{lost}");
    }

    #[test]
    fn blackout_loses_what_leaves_during_it() {
        let mut l = link(QueueLimit::Packets(10), LossModel::None);
        l.start_blackout(0, 1_500_000);
        l.arrive(0, datagram(1000));
        l.arrive(0, datagram(1000));
        assert!(l.finish_transmission(1_000_000).0.is_none());
        assert!(l.finish_transmission(2_000_000).0.is_some());
        assert_eq!(l.stats.blackout_packets, 1);
    }
}

//! The scheduler thread: takes datagrams from the receive threads, runs the
//! link model, and sends each delivery when its time comes.
//!
//! The thread sleeps on the channel from the receivers until shortly before
//! the next delivery, then spins to it; an arrival wakes it at once. Sending
//! happens on this thread. The model itself runs `hold_back` behind the
//! clock (at most the last links' propagation delay, so deliveries are
//! still known in time): a datagram that a busy receive thread hands over
//! late, but within that lag, enters the model at its kernel timestamp
//! exactly, with nothing of the model already run past it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use vegas_sim::scenario::Scenario;
use vegas_sim::time::Nanos;

use crate::clock::{tune_current_thread, wait_until, Clock, Wake};
use crate::engine::{Delivery, Direction, Engine, Paths};
use crate::stats::{Histogram, LinkReport, RunReport};

/// What a receive thread hands the scheduler.
pub enum Msg {
    /// A datagram entered the emulator at `at` (kernel timestamp when there
    /// was one), `latency` after which the receive thread saw it.
    Arrival {
        at: Nanos,
        latency: Option<Nanos>,
        direction: Direction,
        endpoint: usize,
        payload: Vec<u8>,
        wire_bytes: u32,
    },
    /// UDP mode: a new client and the socket that speaks for it to the
    /// server. Always sent before the client's first arrival.
    NewClient {
        endpoint: usize,
        addr: SocketAddr,
        upstream: Arc<std::net::UdpSocket>,
    },
}

/// How a delivery's AQT fared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AqtOutcome {
    /// It had none.
    None,
    Marked,
    Failed,
}

/// Where deliveries go: the UDP sockets or the interfaces.
pub trait Output {
    fn send(&mut self, delivery: Delivery) -> (std::io::Result<()>, AqtOutcome);
    /// UDP mode's new clients; nothing elsewhere.
    fn new_client(
        &mut self,
        _endpoint: usize,
        _addr: SocketAddr,
        _upstream: Arc<std::net::UdpSocket>,
    ) {
    }
}

/// Settings of the scheduler.
#[derive(Clone, Debug)]
pub struct Timing {
    /// Spin this long before a delivery instead of sleeping.
    pub spin: Duration,
    /// Ask for SCHED_FIFO priority.
    pub realtime: bool,
    /// Stop after this long (None: when stopped).
    pub duration: Option<Duration>,
    /// Run the model this far behind the clock (capped by the last links'
    /// propagation delay).
    pub hold_back: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            spin: Duration::from_micros(DEFAULT_SPIN_US),
            realtime: true,
            duration: None,
            hold_back: Duration::from_millis(DEFAULT_HOLD_BACK_MS),
        }
    }
}

/// The default spin before a delivery, in microseconds (see the README's
/// accuracy section for why).
pub const DEFAULT_SPIN_US: u64 = 200;
/// The default lag of the model behind the clock, in milliseconds.
pub const DEFAULT_HOLD_BACK_MS: u64 = 5;

/// Counters the receive threads update themselves.
#[derive(Debug, Default)]
pub struct SharedCounters {
    pub passthrough_frames: AtomicU64,
    /// UDP GSO super-frames cut into their datagrams (bridge mode).
    pub gso_superframes: AtomicU64,
    pub receive_errors: AtomicU64,
}

pub struct Scheduler<'a> {
    pub engine: Engine,
    pub output: &'a mut dyn Output,
    pub clock: Arc<Clock>,
    pub timing: Timing,
    pub stop: Arc<AtomicBool>,
    /// The model's lag behind the clock.
    lag: Nanos,
    lateness: Histogram,
    receive_latency: Histogram,
    aqt_marked: u64,
    aqt_failed: u64,
    send_errors: u64,
    pending: Vec<Delivery>,
    /// Messages taken from the channel together (kept for its allocation).
    inbox: Vec<Msg>,
}

impl<'a> Scheduler<'a> {
    pub fn new(
        engine: Engine,
        output: &'a mut dyn Output,
        clock: Arc<Clock>,
        timing: Timing,
        stop: Arc<AtomicBool>,
    ) -> Self {
        let lag = (timing.hold_back.as_nanos().min(u128::from(u64::MAX)) as Nanos)
            .min(engine.delivery_slack());
        Scheduler {
            lag,
            engine,
            output,
            clock,
            timing,
            stop,
            lateness: Histogram::default(),
            receive_latency: Histogram::default(),
            aqt_marked: 0,
            aqt_failed: 0,
            send_errors: 0,
            pending: Vec::new(),
            inbox: Vec::new(),
        }
    }

    /// Runs until `stop` is set, the duration has passed, or every receive
    /// thread has gone; returns the tuning the thread got.
    pub fn run(&mut self, rx: &Receiver<Msg>) -> String {
        let tuning = tune_current_thread(self.timing.realtime);
        let end = self
            .timing
            .duration
            .map(|d| d.as_nanos().min(u128::from(u64::MAX)) as Nanos);
        let idle = Duration::from_millis(50);
        let mut last_refresh = 0;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let now = self.clock.now();
            if end.is_some_and(|e| now >= e) {
                break;
            }
            // Arrivals queued while this thread was not running carry kernel
            // stamps the model may not have passed yet: they go in before it
            // advances, or they would enter at the model's later time.
            if !self.take_queued(None, rx) {
                break;
            }
            self.engine.run_until(now.saturating_sub(self.lag));
            self.send_due(now);
            if now.saturating_sub(last_refresh) > 1_000_000_000 {
                self.clock.refresh_offset();
                last_refresh = now;
            }
            let model = self.engine.next_model_event().map(|t| t + self.lag);
            let delivery = self.engine.next_delivery();
            let (deadline, spin) = match (model, delivery) {
                (Some(m), Some(d)) if m < d => (Some(m), Duration::ZERO),
                (_, Some(d)) => (Some(d), self.timing.spin),
                (m, None) => (m, Duration::ZERO),
            };
            let deadline = match (deadline, end) {
                (Some(d), Some(e)) => Some(d.min(e)),
                (d, e) => d.or(e),
            };
            match wait_until(&self.clock, deadline, spin, idle, rx) {
                Wake::Deadline => {}
                Wake::Message(m) => {
                    if !self.take_queued(Some(m), rx) {
                        break;
                    }
                }
                Wake::Closed => break,
            }
        }
        tuning
    }

    /// Hands the model `first` and every message already queued, arrivals
    /// in the order of their kernel stamps (one receive thread drains its
    /// sockets one after another, so the queue is not in that order, and
    /// the model never goes back). Returns false once every receive thread
    /// has gone and nothing is left.
    fn take_queued(&mut self, first: Option<Msg>, rx: &Receiver<Msg>) -> bool {
        let mut batch = std::mem::take(&mut self.inbox);
        batch.extend(first);
        let open = loop {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(TryRecvError::Empty) => break true,
                Err(TryRecvError::Disconnected) => break false,
            }
        };
        // A new client's socket is registered before any arrival of the
        // batch (its own first arrival is always behind it).
        batch.sort_by_key(|m| match m {
            Msg::NewClient { .. } => 0,
            Msg::Arrival { at, .. } => *at,
        });
        for m in batch.drain(..) {
            self.handle(m);
        }
        self.inbox = batch;
        open
    }

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Arrival {
                at,
                latency,
                direction,
                endpoint,
                payload,
                wire_bytes,
            } => {
                if let Some(l) = latency {
                    self.receive_latency.record(l);
                }
                self.engine
                    .inject(at, direction, endpoint, payload, wire_bytes);
                self.send_due(self.clock.now());
            }
            Msg::NewClient {
                endpoint,
                addr,
                upstream,
            } => self.output.new_client(endpoint, addr, upstream),
        }
    }

    /// Sends every delivery due by `now`.
    fn send_due(&mut self, now: Nanos) {
        self.engine.take_due(now, &mut self.pending);
        for delivery in std::mem::take(&mut self.pending) {
            let late = self.clock.now().saturating_sub(delivery.due);
            self.lateness.record(late);
            let (result, aqt) = self.output.send(delivery);
            if result.is_err() {
                self.send_errors += 1;
            }
            match aqt {
                AqtOutcome::None => {}
                AqtOutcome::Marked => self.aqt_marked += 1,
                AqtOutcome::Failed => self.aqt_failed += 1,
            }
        }
    }

    /// The run's statistics.
    pub fn report(
        &self,
        mode: &str,
        scenario: &Scenario,
        paths: &Paths,
        counters: &SharedCounters,
        tuning: &str,
    ) -> RunReport {
        let run = self.clock.now().max(1);
        let names = |ids: &[usize]| -> Vec<String> {
            ids.iter()
                .map(|&i| scenario.links[i].name.clone())
                .collect()
        };
        let links = self
            .engine
            .links()
            .iter()
            .map(|l| LinkReport {
                name: l.name().to_string(),
                rate_bps: l.rate_bps,
                delay_ms: l.delay as f64 / 1e6,
                arrived_packets: l.stats.arrived_packets,
                dropped_packets: l.stats.dropped_packets,
                lost_packets: l.stats.lost_packets,
                blackout_packets: l.stats.blackout_packets,
                transmitted_packets: l.stats.transmitted_packets,
                transmitted_bytes: l.stats.transmitted_bytes,
                max_queue_packets: l.stats.max_queue_packets,
                max_queue_bytes: l.stats.max_queue_bytes,
                mean_queueing_ms: if l.stats.transmitted_packets > 0 {
                    l.stats.total_queueing as f64 / l.stats.transmitted_packets as f64 / 1e6
                } else {
                    0.0
                },
                utilization: (l.stats.busy as f64 / run as f64).min(1.0),
            })
            .collect();
        RunReport {
            mode: mode.to_string(),
            scenario: scenario.source.display().to_string(),
            forward_path: names(&paths.to_client),
            return_path: names(&paths.to_server),
            run_s: run as f64 / 1e9,
            to_client: self.engine.direction_stats(Direction::ToClient).clone(),
            to_server: self.engine.direction_stats(Direction::ToServer).clone(),
            links,
            cross_traffic: self.engine.cross_counters(),
            send_lateness: self.lateness.summary(),
            receive_latency: self.receive_latency.summary(),
            aqt_marked: self.aqt_marked,
            aqt_failed: self.aqt_failed,
            passthrough_frames: counters.passthrough_frames.load(Ordering::Relaxed),
            gso_superframes: counters.gso_superframes.load(Ordering::Relaxed),
            send_errors: self.send_errors,
            thread_tuning: tuning.to_string(),
        }
    }
}

/// The arrival time of a datagram the kernel stamped `kernel_time` and the
/// receive thread saw `now`, and how late it saw it.
pub fn arrival_time(clock: &Clock, kernel_time: Option<i64>, now: Nanos) -> (Nanos, Option<Nanos>) {
    match kernel_time.and_then(|k| clock.from_kernel_timestamp(k)) {
        Some(at) => (at.min(now), Some(now.saturating_sub(at))),
        None => (now, None),
    }
}

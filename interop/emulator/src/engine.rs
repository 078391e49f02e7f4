//! The link engine: the scenario's links, cross traffic and changes, driven
//! by real arrival times.
//!
//! The model is the simulator's own ([`vegas_sim::network::Link`]: DropTail
//! queue, transmitter at the link's rate, wire with delay and loss model,
//! AQT); this module only routes datagrams through it and keeps the event
//! list. Every event carries the time the model gives it, so the model runs
//! exactly as in the simulator whatever the host's timing: real time only
//! decides when a datagram enters ([`Engine::inject`]) and how late a
//! delivery leaves (the runtime sends it as soon as its time has come).
//!
//! Deliveries wait in an outbox of their own, apart from the model's events:
//! leaving the emulator changes nothing in the model, so the runtime can run
//! the model some milliseconds behind the clock (where a datagram that the
//! receive thread hands over late still enters at its kernel timestamp)
//! while it sends each delivery on time, as long as the last link's
//! propagation delay is longer than that lag.

use serde::Serialize;
use vegas_sim::cross_traffic::CrossSource;
use vegas_sim::event_queue::EventQueue;
use vegas_sim::network::{Arrival, Datagram, Link, Owner};
use vegas_sim::random::RandomStream;
use vegas_sim::scenario::{LinkChange, LinkId, Scenario};
use vegas_sim::time::Nanos;

/// Which way a datagram travels. The scenario's `forward_path` carries the
/// data, server to client; its `return_path` the client's packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Client to server: the scenario's return path.
    ToServer,
    /// Server to client: the scenario's forward path.
    ToClient,
}

impl Direction {
    fn route(self) -> usize {
        match self {
            Direction::ToServer => 0,
            Direction::ToClient => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Direction::ToServer => "to_server",
            Direction::ToClient => "to_client",
        }
    }
}

/// The links each direction crosses, in order, and the extra one-way delay
/// of the flow's access (the scenario flow's `access_delay_ms`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    pub to_client: Vec<LinkId>,
    pub to_server: Vec<LinkId>,
    pub access_delay: Nanos,
    /// The flow the paths were taken from, if any.
    pub flow: Option<String>,
}

impl Paths {
    /// The paths of the scenario's flow under test (or its only flow),
    /// with either direction replaced by a list of link names.
    pub fn select(
        scenario: &Scenario,
        to_client: Option<&[String]>,
        to_server: Option<&[String]>,
    ) -> Result<Paths, String> {
        let flow = scenario
            .flows
            .iter()
            .find(|f| f.under_test)
            .or_else(|| scenario.flows.first());
        let resolve = |option: &str, names: &[String]| -> Result<Vec<LinkId>, String> {
            if names.is_empty() {
                return Err(format!("{option}: expected at least one link name"));
            }
            names
                .iter()
                .map(|n| {
                    scenario
                        .links
                        .iter()
                        .position(|l| &l.name == n)
                        .ok_or_else(|| {
                            format!(
                                "{option}: unknown link '{n}'; links of {}: {}",
                                scenario.source.display(),
                                scenario
                                    .links
                                    .iter()
                                    .map(|l| l.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        })
                })
                .collect()
        };
        let missing = |option: &str| {
            format!(
                "{}: the scenario has no flow to take the paths from; give {option}",
                scenario.source.display()
            )
        };
        let to_client = match (to_client, flow) {
            (Some(names), _) => resolve("--forward-path", names)?,
            (None, Some(f)) => f.forward_path.clone(),
            (None, None) => return Err(missing("--forward-path")),
        };
        let to_server = match (to_server, flow) {
            (Some(names), _) => resolve("--return-path", names)?,
            (None, Some(f)) => f.return_path.clone(),
            (None, None) => return Err(missing("--return-path")),
        };
        Ok(Paths {
            to_client,
            to_server,
            access_delay: flow.map_or(0, |f| f.access_delay),
            flow: flow.map(|f| f.name.clone()),
        })
    }
}

/// A datagram whose time to leave the emulator has come.
#[derive(Debug)]
pub struct Delivery {
    pub direction: Direction,
    /// Who it is for: the slot the runtime gave the sender (a client of the
    /// UDP mode; 0 in bridge mode).
    pub endpoint: usize,
    pub payload: Vec<u8>,
    /// Its size on the links.
    pub wire_bytes: u32,
    /// When the model delivers it.
    pub due: Nanos,
    /// Accumulated queueing time at AQT-enabled links, if it crossed any.
    pub aqt: Option<Nanos>,
    /// Time it waited in queues (ground truth).
    pub queueing: Nanos,
}

/// Counters of one direction, for the datagrams of the endpoints (cross
/// traffic is counted apart).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DirectionStats {
    pub injected_packets: u64,
    pub injected_bytes: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Sum of the delivered datagrams' queueing times.
    pub total_queueing_ns: u64,
}

/// Counters of one cross-traffic source.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CrossCounters {
    pub name: String,
    pub sent_packets: u64,
    pub delivered_packets: u64,
}

enum Event {
    /// The datagram is at hop `datagram.hop` of its route (after the access
    /// delay, or after the previous link's wire).
    Forward {
        datagram: Datagram,
    },
    /// A link's transmission in progress ends.
    TransmissionDone {
        link: LinkId,
    },
    CrossTraffic {
        source: usize,
    },
    LinkChange {
        index: usize,
    },
}

struct Route {
    links: Vec<LinkId>,
    access_delay: Nanos,
}

pub struct Engine {
    links: Vec<Link>,
    routes: Vec<Route>,
    cross: Vec<CrossSource>,
    changes: Vec<LinkChange>,
    events: EventQueue<Event>,
    /// Deliveries waiting for their time.
    outbox: EventQueue<Delivery>,
    now: Nanos,
    header_bytes: u32,
    directions: [DirectionStats; 2],
}

impl Engine {
    /// The scenario's links (all of them, so that cross traffic and changes
    /// work as in the simulator), with `paths` as the two directions. Loss
    /// draws come from the same named random streams as the simulator's.
    pub fn new(scenario: &Scenario, paths: &Paths) -> Engine {
        let seed = scenario.seed;
        let links = scenario
            .links
            .iter()
            .map(|l| Link::new(l.clone(), seed))
            .collect();
        let mut routes = vec![
            Route {
                links: paths.to_server.clone(),
                access_delay: paths.access_delay,
            },
            Route {
                links: paths.to_client.clone(),
                access_delay: paths.access_delay,
            },
        ];
        let mut cross = Vec::new();
        for config in &scenario.cross_traffic {
            routes.push(Route {
                links: config.path.clone(),
                access_delay: 0,
            });
            let rng = RandomStream::named(seed, &format!("cross:{}", config.name));
            cross.push(CrossSource::new(
                config.clone(),
                routes.len() - 1,
                scenario.header_bytes,
                rng,
            ));
        }
        let mut engine = Engine {
            links,
            routes,
            cross,
            changes: scenario.changes.clone(),
            events: EventQueue::new(),
            outbox: EventQueue::new(),
            now: 0,
            header_bytes: scenario.header_bytes,
            directions: Default::default(),
        };
        for index in 0..engine.changes.len() {
            let at = engine.changes[index].at;
            engine.schedule(at, Event::LinkChange { index });
        }
        for source in 0..engine.cross.len() {
            let at = engine.cross[source].config.start;
            engine.schedule(at, Event::CrossTraffic { source });
        }
        engine
    }

    /// The model's current time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Bytes a UDP datagram of `payload` bytes occupies on a link: the
    /// payload plus the scenario's `header_bytes`, as in the simulator.
    pub fn udp_wire_bytes(&self, payload: usize) -> u32 {
        u32::try_from(payload)
            .unwrap_or(u32::MAX)
            .saturating_add(self.header_bytes)
    }

    /// When the model's next event is due.
    pub fn next_model_event(&self) -> Option<Nanos> {
        self.events.next_time()
    }

    /// When the next delivery is due (the only thing whose timing the
    /// outside world sees: the runtime spins for it).
    pub fn next_delivery(&self) -> Option<Nanos> {
        self.outbox.next_time()
    }

    /// How far the model may run behind the clock without making a
    /// delivery late: the shortest propagation delay of the last link of
    /// either direction (zero for a direction without links).
    pub fn delivery_slack(&self) -> Nanos {
        self.routes[..2]
            .iter()
            .map(|r| r.links.last().map_or(0, |&l| self.links[l].delay))
            .min()
            .unwrap_or(0)
    }

    /// A datagram from `endpoint` enters the first link of `direction` at
    /// `at` (or at the model's time, if that is later: the model never goes
    /// back). The model's events up to then run first.
    pub fn inject(
        &mut self,
        at: Nanos,
        direction: Direction,
        endpoint: usize,
        payload: Vec<u8>,
        wire_bytes: u32,
    ) {
        self.run_until(at);
        self.now = self.now.max(at);
        let stats = &mut self.directions[direction.route()];
        stats.injected_packets += 1;
        stats.injected_bytes += u64::from(wire_bytes);
        let datagram = Datagram {
            payload,
            wire_bytes,
            owner: Owner::Quic {
                flow: endpoint,
                towards_client: direction == Direction::ToClient,
            },
            route: direction.route(),
            hop: 0,
            enqueued_at: self.now,
            queueing: 0,
            aqt: None,
        };
        let access_delay = self.routes[datagram.route].access_delay;
        if access_delay > 0 {
            self.schedule(self.now + access_delay, Event::Forward { datagram });
        } else {
            self.forward(datagram);
        }
    }

    /// Moves every delivery due at or before `until` to `out`, earliest
    /// first.
    pub fn take_due(&mut self, until: Nanos, out: &mut Vec<Delivery>) {
        while let Some((_, delivery)) = self.outbox.pop_due(until) {
            let stats = &mut self.directions[delivery.direction.route()];
            stats.delivered_packets += 1;
            stats.delivered_bytes += u64::from(delivery.wire_bytes);
            stats.total_queueing_ns += delivery.queueing;
            out.push(delivery);
        }
    }

    /// Runs every model event due at or before `until`.
    pub fn run_until(&mut self, until: Nanos) {
        while let Some((at, event)) = self.events.pop_due(until) {
            self.now = self.now.max(at);
            self.handle(event);
        }
    }

    fn schedule(&mut self, at: Nanos, event: Event) {
        self.events.push(at, event);
    }

    fn handle(&mut self, event: Event) {
        let now = self.now;
        match event {
            Event::Forward { datagram } => self.forward(datagram),
            Event::TransmissionDone { link } => {
                let (survivor, next_done) = self.links[link].finish_transmission(now);
                if let Some(done_at) = next_done {
                    self.schedule(done_at, Event::TransmissionDone { link });
                }
                if let Some(mut datagram) = survivor {
                    datagram.hop += 1;
                    let at = self.links[link].wire_arrival(now);
                    if datagram.hop >= self.routes[datagram.route].links.len() {
                        self.deliver(datagram, at);
                    } else {
                        self.schedule(at, Event::Forward { datagram });
                    }
                }
            }
            Event::CrossTraffic { source } => {
                let step = self.cross[source].step(now);
                if let Some(next) = step.next {
                    self.schedule(next, Event::CrossTraffic { source });
                }
                if step.send {
                    let datagram = self.cross[source].datagram(source, now);
                    self.forward(datagram);
                }
            }
            Event::LinkChange { index } => {
                let change = &self.changes[index];
                self.links[change.link].apply_change(change, now);
            }
        }
    }

    /// The datagram is at hop `datagram.hop`: into that link, or out.
    fn forward(&mut self, datagram: Datagram) {
        let route = &self.routes[datagram.route];
        match route.links.get(datagram.hop) {
            Some(&link) => {
                if let Arrival::Transmitting { done_at } =
                    self.links[link].arrive(self.now, datagram)
                {
                    self.schedule(done_at, Event::TransmissionDone { link });
                }
            }
            None => self.deliver(datagram, self.now),
        }
    }

    /// The datagram reaches the far end of its route at `due`.
    fn deliver(&mut self, datagram: Datagram, due: Nanos) {
        match datagram.owner {
            Owner::Quic {
                flow,
                towards_client,
            } => {
                let direction = if towards_client {
                    Direction::ToClient
                } else {
                    Direction::ToServer
                };
                self.outbox.push(
                    due,
                    Delivery {
                        direction,
                        endpoint: flow,
                        payload: datagram.payload,
                        wire_bytes: datagram.wire_bytes,
                        due,
                        aqt: datagram.aqt,
                        queueing: datagram.queueing,
                    },
                );
            }
            Owner::Cross { source } => {
                let stats = &mut self.cross[source].stats;
                stats.delivered_packets += 1;
                stats.delivered_bytes += u64::from(datagram.wire_bytes);
            }
        }
    }

    pub fn links(&self) -> &[Link] {
        &self.links
    }

    pub fn direction_stats(&self, direction: Direction) -> &DirectionStats {
        &self.directions[direction.route()]
    }

    pub fn cross_counters(&self) -> Vec<CrossCounters> {
        self.cross
            .iter()
            .map(|c| CrossCounters {
                name: c.config.name.clone(),
                sent_packets: c.stats.sent_packets,
                delivered_packets: c.stats.delivered_packets,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use vegas_sim::scenario::Overrides;

    fn scenario(text: &str) -> Scenario {
        Scenario::parse(text, Path::new("test.toml"), &Overrides::default()).unwrap()
    }

    const LINKS: &str = r#"
        duration_s = 10
        [links.down]
        rate_mbps = 8
        delay_ms = 10
        queue_packets = 2
        aqt = true
        [links.up]
        rate_mbps = 1
        delay_ms = 20
        queue_packets = 5
        [flows.f]
        cc = "cubic"
        under_test = true
        forward_path = ["down"]
        return_path = ["up"]
        # Exact times below: no jitter.
        [jitter]
        enabled = false
    "#;

    #[test]
    fn paths_come_from_the_flow_or_the_options() {
        let s = scenario(LINKS);
        let p = Paths::select(&s, None, None).unwrap();
        assert_eq!((p.to_client, p.to_server), (vec![0], vec![1]));
        let p = Paths::select(
            &s,
            Some(&["up".into()]),
            Some(&["up".into(), "down".into()]),
        )
        .unwrap();
        assert_eq!((p.to_client, p.to_server), (vec![1], vec![1, 0]));
        let e = Paths::select(&s, Some(&["nope".into()]), None).unwrap_err();
        assert!(
            e.contains("unknown link 'nope'") && e.contains("down, up"),
            "{e}"
        );
    }

    #[test]
    fn delay_serialisation_queueing_drops_and_aqt() {
        let s = scenario(LINKS);
        let mut e = Engine::new(&s, &Paths::select(&s, None, None).unwrap());
        let mut out = Vec::new();
        // 972 + 28 = 1000 wire bytes: 1 ms at 8 Mbit/s. Four at once: one in
        // transmission, two queued, one dropped.
        for i in 0..4u8 {
            let wire = e.udp_wire_bytes(972);
            e.inject(0, Direction::ToClient, 7, vec![i], wire);
        }
        e.run_until(u64::MAX);
        e.take_due(u64::MAX, &mut out);
        let due: Vec<_> = out.iter().map(|d| (d.payload[0], d.due, d.aqt)).collect();
        assert_eq!(
            due,
            vec![
                (0, 11_000_000, Some(0)),
                (1, 12_000_000, Some(1_000_000)),
                (2, 13_000_000, Some(2_000_000)),
            ]
        );
        assert!(out.iter().all(|d| d.endpoint == 7));
        assert_eq!(e.links()[0].stats.dropped_packets, 1);
        // The other way: 1 Mbit/s, 20 ms, no AQT router.
        out.clear();
        let wire = e.udp_wire_bytes(97); // 125 bytes: 1 ms at 1 Mbit/s
        e.inject(20_000_000, Direction::ToServer, 0, vec![9], wire);
        e.run_until(u64::MAX);
        e.take_due(u64::MAX, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].due, out[0].aqt), (41_000_000, None));
        assert_eq!(e.direction_stats(Direction::ToClient).delivered_packets, 3);
        assert_eq!(e.direction_stats(Direction::ToServer).delivered_packets, 1);
    }

    #[test]
    fn late_injection_runs_due_events_first() {
        let s = scenario(LINKS);
        let mut e = Engine::new(&s, &Paths::select(&s, None, None).unwrap());
        let mut out = Vec::new();
        e.inject(0, Direction::ToClient, 0, vec![0], 1000);
        // Injected after the first transmission ended: no queueing.
        e.inject(5_000_000, Direction::ToClient, 0, vec![1], 1000);
        e.run_until(u64::MAX);
        e.take_due(u64::MAX, &mut out);
        assert_eq!(out[1].due, 16_000_000);
        assert_eq!(out[1].queueing, 0);
    }

    #[test]
    fn cross_traffic_and_changes_run() {
        let s = scenario(&format!(
            "{LINKS}
            [cross_traffic.x]
            kind = \"cbr\"
            rate_mbps = 4
            packet_bytes = 472
            path = [\"down\"]
            stop_s = 1
            [[changes]]
            at_s = 0.5
            link = \"down\"
            blackout_s = 10
            "
        ));
        let mut e = Engine::new(&s, &Paths::select(&s, None, None).unwrap());
        let mut out = Vec::new();
        e.run_until(2_000_000_000);
        e.take_due(u64::MAX, &mut out);
        let c = &e.cross_counters()[0];
        // 500 wire bytes at 4 Mbit/s: one per ms for a second; the second
        // half leaves during the blackout.
        assert_eq!(c.sent_packets, 1000);
        assert!((495..=505).contains(&c.delivered_packets), "{c:?}");
        assert!(out.is_empty());
    }
}

//! The discrete-event loop.
//!
//! One thread, one queue of events ordered by (time, insertion sequence):
//! events at the same nanosecond run in the order they were scheduled, so a
//! run is a pure function of the scenario and the seed. Time jumps from event
//! to event; nothing waits for the wall clock.

use crate::event_queue::{Due, EventQueue};
use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;

use crate::cross_traffic::CrossSource;
use crate::network::{Arrival, Datagram, Link, Owner};
use crate::quic_flow::{FlowEnvironment, FlowOutput, FlowState, QuicFlow, Side, VirtualClock};
use crate::random::RandomStream;
use crate::report::{
    jain_index, CarefulResumeSummary, CrossTrafficSummary, FlowSummary, LinkSummary, Summary,
};
use crate::scenario::{CrossTrafficKind, Scenario};
use crate::series::{CsvSeries, CROSS_HEADER, FLOW_HEADER, QUEUE_HEADER};
use crate::time::{as_millis, as_seconds, Nanos};

/// More events than any real instant has (every datagram of every link
/// arriving at once) but few enough to notice in seconds an endpoint that
/// asks to be woken again and again without time moving on.
const MAX_EVENTS_AT_ONE_INSTANT: u64 = 10_000_000;

/// A path through the network: links in order, after an uncongested access
/// delay of the sender's own.
struct Route {
    links: Vec<usize>,
    access_delay: Nanos,
}

enum Event {
    /// A link finished transmitting its datagram.
    TransmissionDone {
        link: usize,
    },
    /// A datagram reached the far end of a link: on to the next link of its
    /// route, or to its destination.
    Propagated {
        datagram: Datagram,
    },
    /// A paced datagram leaves its sender.
    Departure {
        datagram: Datagram,
    },
    /// A datagram crossed its sender's access delay: into its first link.
    AccessCrossed {
        datagram: Datagram,
    },
    FlowStart {
        flow: usize,
    },
    FlowStop {
        flow: usize,
    },
    CrossTraffic {
        source: usize,
    },
    LinkChange {
        index: usize,
    },
    Sample,
}

/// What a flow's previous row said.
#[derive(Clone, Copy, Default)]
struct LastSample {
    at: Nanos,
    bytes: u64,
}

struct Simulation<'a> {
    scenario: &'a Scenario,
    clock: VirtualClock,
    now: Nanos,
    events: EventQueue<Event>,
    links: Vec<Link>,
    routes: Vec<Route>,
    flows: Vec<QuicFlow>,
    cross: Vec<CrossSource>,
    flow_series: Vec<CsvSeries>,
    cross_series: Vec<CsvSeries>,
    queue_series: Vec<CsvSeries>,
    last_flow_sample: Vec<LastSample>,
    last_cross_sample: Vec<u64>,
    last_busy: Vec<Nanos>,
    last_sample_at: Nanos,
    output: FlowOutput,
    /// Careful Resume's saved paths, shared by the flows of the run.
    resume_store: quiche_vegas::careful_resume::ResumeStore,
    /// Per flow: its end was acted on (state saved, followers started).
    finish_handled: Vec<bool>,
    /// Flows whose end was acted on (`finish_handled`).
    finished_flows: usize,
}

/// The queue's timer of an endpoint: its wake-up (quiche's timer or the
/// release of a paced datagram). An endpoint's timer moves on most
/// datagrams (its idle timeout, seconds away, with every one received), so
/// it is a timer set anew, not an event per setting.
fn wakeup_timer(flow: usize, side: Side) -> usize {
    2 * flow
        + match side {
            Side::Client => 0,
            Side::Server => 1,
        }
}

fn timer_endpoint(timer: usize) -> (usize, Side) {
    let side = if timer.is_multiple_of(2) {
        Side::Client
    } else {
        Side::Server
    };
    (timer / 2, side)
}

/// Runs `scenario` and writes its outputs into `out_dir`.
pub fn run(scenario: &Scenario, out_dir: &Path) -> anyhow::Result<Summary> {
    let wall_start = Instant::now();
    check_open_files(scenario)?;
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let certificate_dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let certificate = crate::certificate::write_certificate(certificate_dir.path())?;

    let mut simulation = Simulation::new(scenario, out_dir, &certificate)?;
    let result = simulation.run();
    // quiche reads the real clock again, whatever happened.
    quiche::virtual_env::set_virtual_time(None);
    quiche::virtual_env::set_random_seed(None);
    result?;
    let mut summary = simulation.finish()?;
    summary.wall_s = wall_start.elapsed().as_secs_f64();
    let json = serde_json::to_string_pretty(&summary).context("cannot encode the summary")?;
    let path = out_dir.join("summary.json");
    std::fs::write(&path, json + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(summary)
}

/// Files a run holds open besides its per-flow ones (certificate, summary,
/// standard streams, quiche's own), with room to spare.
const OPEN_FILES_BESIDES_FLOWS: u64 = 64;

/// Refuses a run that would run out of file descriptors part-way (each flow
/// keeps its CSV series open and, with qlog, both endpoints' qlogs; quiche
/// then fails to open the key file and says only `TlsFail`).
fn check_open_files(scenario: &Scenario) -> anyhow::Result<()> {
    let Some(limit) = open_files_limit() else {
        return Ok(());
    };
    let per_flow = if scenario.qlog { 3 } else { 1 };
    let needed = scenario.flows.len() as u64 * per_flow
        + (scenario.cross_traffic.len() + scenario.links.len()) as u64
        + OPEN_FILES_BESIDES_FLOWS;
    if needed > limit {
        anyhow::bail!(
            "{} flows need about {needed} open files (per flow its CSV series{}), but this process may open {limit}: \
             raise the limit (ulimit -n){}",
            scenario.flows.len(),
            if scenario.qlog { " and two qlogs" } else { "" },
            if scenario.qlog { " or run with --no-qlog" } else { "" }
        );
    }
    Ok(())
}

/// The soft limit on open files, from `/proc/self/limits` (Linux); None
/// where that cannot be read.
fn open_files_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line
        .trim_start_matches("Max open files")
        .split_whitespace()
        .next()?;
    soft.parse().ok()
}

/// Wall-clock time between two progress lines on a terminal.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

impl<'a> Simulation<'a> {
    fn new(
        scenario: &'a Scenario,
        out_dir: &Path,
        certificate: &quiche_vegas::tls::CertFiles,
    ) -> anyhow::Result<Self> {
        let seed = scenario.seed;
        let links: Vec<Link> = scenario
            .links
            .iter()
            .map(|l| Link::new(l.clone(), seed))
            .collect();
        let mut routes = Vec::new();
        let env = FlowEnvironment {
            seed,
            certificate,
            max_datagram_bytes: scenario.max_datagram_bytes,
            header_bytes: scenario.header_bytes,
            qlog_dir: scenario.qlog.then_some(out_dir),
        };
        let mut flows = Vec::new();
        for (index, config) in scenario.flows.iter().enumerate() {
            routes.push(Route {
                links: config.forward_path.clone(),
                access_delay: config.access_delay,
            });
            routes.push(Route {
                links: config.return_path.clone(),
                access_delay: config.access_delay,
            });
            let (forward, back) = (routes.len() - 2, routes.len() - 1);
            let mut address_index = index;
            while let Some(earlier) = scenario.flows[address_index].after {
                address_index = earlier;
            }
            flows.push(QuicFlow::new(
                index,
                address_index,
                config.clone(),
                forward,
                back,
                &env,
            )?);
        }
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

        let series = |name: &str, header: &str| CsvSeries::create(&out_dir.join(name), header);
        let flow_series = flows
            .iter()
            .map(|f| series(&format!("flow-{}.csv", f.name()), FLOW_HEADER))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let cross_series = cross
            .iter()
            .map(|c| series(&format!("cross-{}.csv", c.config.name), CROSS_HEADER))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let queue_series = links
            .iter()
            .map(|l| series(&format!("queue-{}.csv", l.name()), QUEUE_HEADER))
            .collect::<anyhow::Result<Vec<_>>>()?;

        let mut simulation = Simulation {
            scenario,
            clock: VirtualClock {
                base: Instant::now(),
            },
            now: 0,
            events: EventQueue::new(),
            last_flow_sample: vec![LastSample::default(); flows.len()],
            last_cross_sample: vec![0; cross.len()],
            last_busy: vec![0; links.len()],
            links,
            routes,
            flows,
            cross,
            flow_series,
            cross_series,
            queue_series,
            last_sample_at: 0,
            output: FlowOutput::default(),
            resume_store: Default::default(),
            finish_handled: vec![false; scenario.flows.len()],
            finished_flows: 0,
        };
        for (index, change) in scenario.changes.iter().enumerate() {
            simulation.schedule(change.at, Event::LinkChange { index });
        }
        for (flow, config) in scenario.flows.iter().enumerate() {
            if config.after.is_some() {
                // Scheduled when the flow it follows finishes.
                continue;
            }
            simulation.schedule(config.start, Event::FlowStart { flow });
            if let Some(stop) = config.stop {
                simulation.schedule(stop, Event::FlowStop { flow });
            }
        }
        for (source, config) in scenario.cross_traffic.iter().enumerate() {
            simulation.schedule(config.start, Event::CrossTraffic { source });
        }
        simulation.schedule(scenario.sample_interval, Event::Sample);
        Ok(simulation)
    }

    fn schedule(&mut self, at: Nanos, event: Event) {
        self.events.push(at, event);
    }

    /// Asked after every event: counted as flows finish (every finish
    /// passes through [`Self::drain_flow_output`]), not by looking at each
    /// flow.
    fn all_flows_finished(&self) -> bool {
        let finished = self.finished_flows == self.flows.len() && !self.flows.is_empty();
        debug_assert_eq!(
            finished,
            !self.flows.is_empty() && self.flows.iter().all(|f| f.state == FlowState::Finished)
        );
        finished
    }

    fn run(&mut self) -> anyhow::Result<()> {
        // A progress line, redrawn in place, for runs long enough to wonder
        // about; only on a terminal, so logs and sweeps stay as they were.
        let mut progress = std::io::stderr()
            .is_terminal()
            .then(|| (Instant::now(), Instant::now() + PROGRESS_EVERY));
        let result = self.run_events(&mut progress);
        if progress.is_some_and(|(started, _)| started.elapsed() >= PROGRESS_EVERY) {
            eprintln!();
        }
        result
    }

    fn run_events(&mut self, progress: &mut Option<(Instant, Instant)>) -> anyhow::Result<()> {
        let mut events_at_this_instant = 0u64;
        let mut counter = 0u32;
        while let Some((at, due)) = self.events.pop_next() {
            counter = counter.wrapping_add(1);
            if let Some((started, next)) = progress.as_mut() {
                if counter.is_multiple_of(4096) && Instant::now() >= *next {
                    *next = Instant::now() + PROGRESS_EVERY;
                    eprint!(
                        "\rvegas-sim: simulated {:.1} of {:.1} s, {:.0} s wall",
                        as_seconds(self.now),
                        as_seconds(self.scenario.duration),
                        started.elapsed().as_secs_f64()
                    );
                }
            }
            if at > self.scenario.duration {
                self.now = self.scenario.duration;
                return Ok(());
            }
            if at == self.now {
                events_at_this_instant += 1;
                if events_at_this_instant > MAX_EVENTS_AT_ONE_INSTANT {
                    anyhow::bail!(
                        "the simulation stalled at {:.9} s: more than {MAX_EVENTS_AT_ONE_INSTANT} events without time moving on",
                        as_seconds(self.now)
                    );
                }
            } else {
                events_at_this_instant = 0;
            }
            self.now = at;
            match due {
                Due::Event(event) => self.handle(event)?,
                Due::Timer(timer) => {
                    let (flow, side) = timer_endpoint(timer);
                    self.flows[flow].wake(&self.clock, at, side, &mut self.output);
                    self.drain_flow_output(flow)?;
                }
            }
            if self.all_flows_finished() {
                return Ok(());
            }
        }
        // Nothing left to happen (no flows, no traffic): the run is over.
        Ok(())
    }

    fn handle(&mut self, event: Event) -> anyhow::Result<()> {
        let now = self.now;
        match event {
            Event::TransmissionDone { link } => {
                let (survivor, next_done) = self.links[link].finish_transmission(now);
                if let Some(done_at) = next_done {
                    self.schedule(done_at, Event::TransmissionDone { link });
                }
                if let Some(datagram) = survivor {
                    let arrival = self.links[link].wire_arrival(now);
                    // A link's wire delivers in the order datagrams left
                    // (unless its jitter reorders): one lane per link.
                    self.events
                        .push_in_lane(link, arrival, Event::Propagated { datagram });
                }
            }
            Event::Propagated { mut datagram } => {
                datagram.hop += 1;
                self.forward(datagram)?;
            }
            Event::AccessCrossed { datagram } => self.forward(datagram)?,
            Event::Departure { datagram } => self.inject(datagram)?,
            Event::FlowStart { flow } => {
                if self.flows[flow].config.careful_resume {
                    let ip = self.flows[flow].client_ip();
                    self.flows[flow].resume_seed = self.resume_store.take(ip, self.wall_time());
                }
                self.flows[flow].start(&self.clock, now, &mut self.output)?;
                self.drain_flow_output(flow)?;
            }
            Event::FlowStop { flow } => {
                self.flows[flow].stop(&self.clock, now, &mut self.output);
                self.drain_flow_output(flow)?;
            }
            Event::CrossTraffic { source } => {
                let step = self.cross[source].step(now);
                if let Some(next) = step.next {
                    self.schedule(next, Event::CrossTraffic { source });
                }
                if step.send {
                    let datagram = self.cross[source].datagram(source, now);
                    self.inject(datagram)?;
                }
            }
            Event::LinkChange { index } => {
                let change = &self.scenario.changes[index];
                self.links[change.link].apply_change(change, now);
            }
            Event::Sample => {
                self.write_samples()?;
                self.schedule(now + self.scenario.sample_interval, Event::Sample);
            }
        }
        Ok(())
    }

    /// Puts the datagrams a flow produced on the network and schedules its
    /// wake-ups; writes the flow's last sample if it just finished.
    fn drain_flow_output(&mut self, flow: usize) -> anyhow::Result<()> {
        let mut output = std::mem::take(&mut self.output);
        for (side, at) in output.wakeups.drain(..) {
            self.events.set_timer(wakeup_timer(flow, side), at);
        }
        for (departure, datagram) in output.datagrams.drain(..) {
            if departure > self.now {
                self.schedule(departure, Event::Departure { datagram });
            } else {
                self.inject(datagram)?;
            }
        }
        // Keep the vectors' capacity for the next call.
        self.output = output;
        let f = &self.flows[flow];
        if f.state == FlowState::Finished && f.measures.finished_at == Some(self.now) {
            self.write_flow_sample(flow)?;
            // More events of the flow can follow at this same instant.
            if !self.finish_handled[flow] {
                self.finish_handled[flow] = true;
                self.finished_flows += 1;
                self.flow_finished(flow);
            }
        }
        Ok(())
    }

    /// Careful Resume's Observe phase ends with the connection: what it
    /// measured is saved for the next one between the same endpoints, and
    /// the flows that follow this one start.
    fn flow_finished(&mut self, flow: usize) {
        if self.flows[flow].config.careful_resume {
            if let Some(path) = self.flows[flow].observed_path() {
                self.flows[flow].saved_path = Some(path);
                let ip = self.flows[flow].client_ip();
                self.resume_store.save(ip, path, self.wall_time());
            }
        }
        for (next, config) in self.scenario.flows.iter().enumerate() {
            if config.after == Some(flow) {
                self.schedule(self.now + config.start, Event::FlowStart { flow: next });
            }
        }
    }

    /// The simulated wall clock (the resume store's lifetime runs on it).
    fn wall_time(&self) -> std::time::SystemTime {
        std::time::UNIX_EPOCH
            + crate::time::WALL_CLOCK_AT_ZERO
            + std::time::Duration::from_nanos(self.now)
    }

    /// A datagram leaves its sender now.
    fn inject(&mut self, datagram: Datagram) -> anyhow::Result<()> {
        let access_delay = self.routes[datagram.route].access_delay;
        if access_delay > 0 {
            // A fixed delay keeps the order: one lane per route, after the
            // links' lanes.
            let lane = self.links.len() + datagram.route;
            self.events.push_in_lane(
                lane,
                self.now + access_delay,
                Event::AccessCrossed { datagram },
            );
            Ok(())
        } else {
            self.forward(datagram)
        }
    }

    /// The datagram is at hop `datagram.hop` of its route: into that link,
    /// or to its destination past the last one.
    fn forward(&mut self, datagram: Datagram) -> anyhow::Result<()> {
        let route = &self.routes[datagram.route];
        match route.links.get(datagram.hop) {
            Some(&link) => {
                if let Arrival::Transmitting { done_at } =
                    self.links[link].arrive(self.now, datagram)
                {
                    self.schedule(done_at, Event::TransmissionDone { link });
                }
                Ok(())
            }
            None => self.deliver(datagram),
        }
    }

    fn deliver(&mut self, datagram: Datagram) -> anyhow::Result<()> {
        match datagram.owner {
            Owner::Quic {
                flow,
                towards_client,
            } => {
                self.flows[flow].deliver(
                    &self.clock,
                    self.now,
                    datagram,
                    towards_client,
                    &mut self.output,
                )?;
                self.drain_flow_output(flow)
            }
            Owner::Cross { source } => {
                let stats = &mut self.cross[source].stats;
                stats.delivered_packets += 1;
                stats.delivered_bytes += u64::from(datagram.wire_bytes);
                Ok(())
            }
        }
    }

    fn write_samples(&mut self) -> anyhow::Result<()> {
        if self.now == self.last_sample_at && self.now > 0 {
            return Ok(());
        }
        for flow in 0..self.flows.len() {
            if self.flows[flow].state == FlowState::Running {
                self.write_flow_sample(flow)?;
            }
        }
        let interval = (self.now - self.last_sample_at).max(1);
        for (i, source) in self.cross.iter().enumerate() {
            let active = self.now >= source.config.start
                && source
                    .config
                    .stop
                    .is_none_or(|stop| self.now <= stop + self.scenario.sample_interval);
            let delivered = source.stats.delivered_bytes;
            if active {
                let rate =
                    (delivered - self.last_cross_sample[i]) as f64 * 8.0 / as_seconds(interval);
                self.cross_series[i].line(&format!(
                    "{:.3},{},{},{:.0}",
                    as_seconds(self.now),
                    source.stats.sent_bytes,
                    delivered,
                    rate
                ))?;
            }
            self.last_cross_sample[i] = delivered;
        }
        for (i, link) in self.links.iter_mut().enumerate() {
            let (max_packets, max_bytes) = link.take_interval_max();
            let busy = link.stats.busy - self.last_busy[i];
            self.last_busy[i] = link.stats.busy;
            self.queue_series[i].line(&format!(
                "{:.3},{},{},{},{},{},{:.4},{},{}",
                as_seconds(self.now),
                link.queue_packets(),
                link.queue_bytes(),
                link.backlog_packets(),
                max_packets,
                max_bytes,
                busy as f64 / interval as f64,
                link.stats.dropped_packets,
                link.stats.lost_packets + link.stats.blackout_packets
            ))?;
        }
        self.last_sample_at = self.now;
        Ok(())
    }

    /// One row of a flow's series: its state now, goodput since its previous
    /// row.
    fn write_flow_sample(&mut self, flow: usize) -> anyhow::Result<()> {
        let f = &self.flows[flow];
        if f.measures.started_at.is_none() {
            return Ok(());
        }
        let bytes = f.bytes_delivered();
        let last = &mut self.last_flow_sample[flow];
        if last.at == self.now && last.bytes > 0 {
            // A row for this instant exists already (sample and finish at
            // the same time).
            return Ok(());
        }
        let since = last.at.max(f.config.start);
        let interval = self.now.saturating_sub(since).max(1);
        let goodput = bytes.saturating_sub(last.bytes) as f64 * 8.0 / as_seconds(interval);
        *last = LastSample {
            at: self.now,
            bytes,
        };
        let path = f.sender_path();
        let stats = f.sender_stats();
        let row = format!(
            "{:.3},{},{:.0},{},{},{},{},{},{},{}",
            as_seconds(self.now),
            bytes,
            goodput,
            path.as_ref().map_or(0, |p| p.cwnd),
            path.as_ref().map_or(String::new(), |p| format!(
                "{:.3}",
                p.rtt.as_secs_f64() * 1e3
            )),
            path.as_ref()
                .and_then(|p| p.min_rtt)
                .map_or(String::new(), |r| format!("{:.3}", r.as_secs_f64() * 1e3)),
            path.as_ref().map_or(String::new(), |p| format!(
                "{:.3}",
                p.rttvar.as_secs_f64() * 1e3
            )),
            stats.as_ref().map_or(0, |s| s.lost),
            stats.as_ref().map_or(0, |s| s.stream_retrans_bytes),
            // quiche reports bytes per second.
            path.as_ref()
                .map_or(0, |p| p.delivery_rate.saturating_mul(8)),
        );
        self.flow_series[flow].line(&row)
    }

    /// Final samples, the summary, and every file closed.
    fn finish(&mut self) -> anyhow::Result<Summary> {
        let end = self.now;
        self.write_samples()?;
        let first_start = self
            .scenario
            .flows
            .iter()
            .map(|f| f.start)
            .chain(self.scenario.cross_traffic.iter().map(|c| c.start))
            .min()
            .unwrap_or(0)
            .min(end);
        let active = end.saturating_sub(first_start).max(1);

        let mut flows = Vec::new();
        for f in &self.flows {
            let m = &f.measures;
            let start = m.started_at.unwrap_or(f.config.start);
            let until = m.completed_at.or(m.finished_at).unwrap_or(end).max(start);
            let bytes = f.bytes_delivered();
            let goodput_bps = if until > start {
                bytes as f64 * 8.0 / as_seconds(until - start)
            } else {
                0.0
            };
            let stats = f.sender_stats();
            let path = f.sender_path();
            let mean = |sum: Nanos, count: u64| (count > 0).then(|| as_millis(sum) / count as f64);
            flows.push(FlowSummary {
                name: f.config.name.clone(),
                cc: f.config.cc.clone(),
                cc_detail: f.cc_description.clone(),
                under_test: f.config.under_test,
                protocol: String::from_utf8_lossy(f.config.protocol.alpn()).into_owned(),
                start_s: as_seconds(start),
                goodput_bps,
                bytes_delivered: bytes,
                bytes_retransmitted: stats.as_ref().map_or(0, |s| s.stream_retrans_bytes),
                packets_lost: stats.as_ref().map_or(0, |s| s.lost as u64),
                completion_s: m.completed_at.map(|t| as_seconds(t - start)),
                verified: m.verified,
                body_hash: (!f.hashes_body())
                    .then_some("not computed (endless body: nothing to check)"),
                mean_rtt_ms: (m.srtt_samples > 0).then(|| m.srtt_sum * 1e3 / m.srtt_samples as f64),
                min_rtt_ms: path.and_then(|p| p.min_rtt).map(|r| r.as_secs_f64() * 1e3),
                mean_queue_delay_ms: mean(m.forward_queueing_sum, m.forward_datagrams),
                mean_aqt_to_client_ms: mean(m.aqt_to_client.0, m.aqt_to_client.1),
                mean_aqt_to_server_ms: mean(m.aqt_to_server.0, m.aqt_to_server.1),
                extensions: f.extension_summary(),
                failure: m.failure.clone(),
                careful_resume: f.config.careful_resume.then(|| CarefulResumeSummary {
                    resumed_cwnd_bytes: f.resume_seed.map(|p| p.cwnd_bytes),
                    resumed_rtt_ms: f.resume_seed.map(|p| p.rtt.as_secs_f64() * 1e3),
                    observed_cwnd_bytes: f.saved_path.map(|p| p.cwnd_bytes),
                }),
            });
        }
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();

        let cross_traffic = self
            .cross
            .iter()
            .map(|c| {
                let from = c.config.start.min(end);
                let to = c.config.stop.unwrap_or(end).min(end);
                let seconds = as_seconds(to.saturating_sub(from));
                CrossTrafficSummary {
                    name: c.config.name.clone(),
                    kind: match c.config.kind {
                        CrossTrafficKind::ConstantBitRate { .. } => "cbr".to_string(),
                        CrossTrafficKind::OnOff { .. } => "vbr".to_string(),
                    },
                    bytes_sent: c.stats.sent_bytes,
                    bytes_delivered: c.stats.delivered_bytes,
                    delivered_bps: if seconds > 0.0 {
                        c.stats.delivered_bytes as f64 * 8.0 / seconds
                    } else {
                        0.0
                    },
                }
            })
            .collect();

        let links = self
            .links
            .iter()
            .map(|l| {
                let s = &l.stats;
                LinkSummary {
                    name: l.name().to_string(),
                    utilization: s.busy as f64 / active as f64,
                    transmitted_bytes: s.transmitted_bytes,
                    transmitted_packets: s.transmitted_packets,
                    dropped_packets: s.dropped_packets,
                    lost_packets: s.lost_packets,
                    blackout_packets: s.blackout_packets,
                    max_queue_packets: s.max_queue_packets,
                    max_queue_bytes: s.max_queue_bytes,
                    mean_queue_delay_ms: (s.transmitted_packets > 0)
                        .then(|| as_millis(s.total_queueing) / s.transmitted_packets as f64),
                }
            })
            .collect();

        for series in self
            .flow_series
            .drain(..)
            .chain(self.cross_series.drain(..))
            .chain(self.queue_series.drain(..))
        {
            series.finish()?;
        }
        // Dropping the connections flushes their qlog writers.
        self.flows.clear();

        Ok(Summary {
            scenario: self
                .scenario
                .source
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            description: self.scenario.description.clone(),
            seed: self.scenario.seed,
            simulated_s: as_seconds(end),
            jain_index: jain_index(&goodputs),
            flows,
            cross_traffic,
            links,
            wall_s: 0.0,
        })
    }
}

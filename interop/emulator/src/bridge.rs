//! Bridge mode: the emulator as the router of a three-namespace topology.
//!
//! It runs in the router namespace, between two interfaces (the veth ends
//! towards the client and towards the server), which carry no addresses of
//! their own; IP forwarding stays off. Packet sockets take every frame
//! arriving on either interface; IP packets go through the link model
//! (client side in: the return path; server side in: the forward path) and
//! leave by the other interface unchanged, but for the AQT option and the
//! UDP checksum; other frames (ARP) cross at once. Client and server are on
//! one IP subnet and resolve each other's addresses through the bridge, so
//! nothing needs configuring but the two interface names.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

use anyhow::{anyhow, Context};
use vegas_sim::scenario::Scenario;

use crate::clock::Clock;
use crate::engine::{Delivery, Direction, Engine, Paths};
use crate::frame::{self, Kind};
use crate::runtime::{arrival_time, AqtOutcome, Msg, Output, Scheduler, SharedCounters, Timing};
use crate::sockets::PacketSocket;
use crate::stats::RunReport;

/// The two interfaces.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    pub client_iface: String,
    pub server_iface: String,
}

/// Runs the bridge until `stop` is set or the duration has passed, then
/// returns the statistics. `on_ready` is called once both interfaces are
/// open.
pub fn run(
    scenario: &Scenario,
    paths: &Paths,
    config: &BridgeConfig,
    timing: Timing,
    stop: Arc<AtomicBool>,
    on_ready: impl FnOnce(),
) -> anyhow::Result<RunReport> {
    let open = |name: &str| {
        PacketSocket::open(name).with_context(|| format!("cannot open interface '{name}'"))
    };
    let client_side = Arc::new(open(&config.client_iface)?);
    let server_side = Arc::new(open(&config.server_iface)?);
    if client_side.ifindex == server_side.ifindex {
        return Err(anyhow!(
            "--client-iface and --server-iface name the same interface"
        ));
    }
    let clock = Arc::new(Clock::new());
    let counters = Arc::new(SharedCounters::default());
    let (tx, rx) = channel();
    let header_bytes = scenario.header_bytes;
    let spawn = |from: &Arc<PacketSocket>, to: &Arc<PacketSocket>, direction: Direction| {
        let (from, to) = (Arc::clone(from), Arc::clone(to));
        let (clock, counters, stop, tx) = (
            Arc::clone(&clock),
            Arc::clone(&counters),
            Arc::clone(&stop),
            tx.clone(),
        );
        std::thread::Builder::new()
            .name(format!("vegas-emu-{}", from.name))
            .spawn(move || {
                receive_loop(
                    &from,
                    &to,
                    direction,
                    header_bytes,
                    &clock,
                    &counters,
                    &tx,
                    &stop,
                )
            })
            .context("cannot start a receive thread")
    };
    let receivers = [
        spawn(&client_side, &server_side, Direction::ToServer)?,
        spawn(&server_side, &client_side, Direction::ToClient)?,
    ];
    drop(tx);
    on_ready();

    let engine = Engine::new(scenario, paths);
    let mut output = BridgeOutput {
        client_side,
        server_side,
    };
    let mut scheduler = Scheduler::new(engine, &mut output, clock, timing, Arc::clone(&stop));
    let tuning = scheduler.run(&rx);
    stop.store(true, Ordering::Relaxed);
    let report = scheduler.report("bridge", scenario, paths, &counters, &tuning);
    drop(rx);
    for r in receivers {
        r.join()
            .map_err(|_| anyhow!("a receive thread panicked"))??;
    }
    Ok(report)
}

#[allow(clippy::too_many_arguments)]
fn receive_loop(
    from: &PacketSocket,
    to: &PacketSocket,
    direction: Direction,
    header_bytes: u32,
    clock: &Clock,
    counters: &SharedCounters,
    tx: &Sender<Msg>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let mut buf = vec![0u8; 65_536 + 64];
    while !stop.load(Ordering::Relaxed) {
        let packet = match from.receive(&mut buf) {
            Ok(Some(p)) => p,
            Ok(None) => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                counters.receive_errors.fetch_add(1, Ordering::Relaxed);
                return Err(e).with_context(|| format!("cannot receive on {}", from.name));
            }
        };
        let now = clock.now();
        let (at, latency) = arrival_time(clock, packet.received.kernel_time, now);
        let frame = &buf[packet.start.min(packet.received.len)..packet.received.len];
        // A UDP GSO super-frame (a sender with segmentation offload) is the
        // datagrams it stands for, arriving together.
        let frames = match packet.udp_gso_size {
            Some(segment) => {
                counters.gso_superframes.fetch_add(1, Ordering::Relaxed);
                frame::split_udp_gso(frame, segment)
            }
            None => vec![frame.to_vec()],
        };
        for frame in frames {
            let wire_bytes = match frame::classify(&frame) {
                Kind::Passthrough => {
                    to.send(&frame).ok();
                    counters.passthrough_frames.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                Kind::Ip {
                    udp_payload: Some(payload),
                    ..
                } => u32::try_from(payload)
                    .unwrap_or(u32::MAX)
                    .saturating_add(header_bytes),
                Kind::Ip { ip_bytes, .. } => u32::try_from(ip_bytes).unwrap_or(u32::MAX),
            };
            let msg = Msg::Arrival {
                at,
                latency,
                direction,
                endpoint: 0,
                payload: frame,
                wire_bytes,
            };
            if tx.send(msg).is_err() {
                return Ok(());
            }
        }
    }
    Ok(())
}

struct BridgeOutput {
    client_side: Arc<PacketSocket>,
    server_side: Arc<PacketSocket>,
}

impl Output for BridgeOutput {
    fn send(&mut self, delivery: Delivery) -> (io::Result<()>, AqtOutcome) {
        let out = match delivery.direction {
            Direction::ToClient => &self.client_side,
            Direction::ToServer => &self.server_side,
        };
        let mut frame = delivery.payload;
        let aqt = match delivery.aqt {
            None => AqtOutcome::None,
            Some(ns) => match frame::add_aqt(&mut frame, ns, out.mtu) {
                Ok(()) => AqtOutcome::Marked,
                Err(_) => AqtOutcome::Failed,
            },
        };
        frame::fix_udp_checksum(&mut frame);
        (out.send(&frame), aqt)
    }
}

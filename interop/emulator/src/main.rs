//! vegas-emu: the simulator's scenario links between real processes, in real
//! time. See interop/emulator/README.md.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::json;

use vegas_emu::bridge::{self, BridgeConfig};
use vegas_emu::engine::{Direction, Paths};
use vegas_emu::harness::{self, ProbeSpec};
use vegas_emu::runtime::{Timing, DEFAULT_HOLD_BACK_MS, DEFAULT_SPIN_US};
use vegas_emu::stats::RunReport;
use vegas_emu::udp::{self, UdpConfig};
use vegas_sim::scenario::{LossModel, Overrides, QueueLimit, Scenario};

/// Emulates a scenario's links between real processes, in real time.
#[derive(Parser, Debug)]
#[command(name = "vegas-emu", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Relay UDP: clients send to --listen, the emulator forwards to
    /// --server through the scenario's links (loopback use, no namespaces).
    Udp {
        /// The scenario (vegas-sim's format).
        scenario: PathBuf,
        /// Address clients send to.
        #[arg(long, value_name = "ADDR")]
        listen: SocketAddr,
        /// The server's address.
        #[arg(long, value_name = "ADDR")]
        server: SocketAddr,
        #[command(flatten)]
        common: Common,
    },
    /// Bridge two interfaces (in a router network namespace) through the
    /// scenario's links.
    Bridge {
        /// The scenario (vegas-sim's format).
        scenario: PathBuf,
        /// The interface towards the client.
        #[arg(long, value_name = "IFACE")]
        client_iface: String,
        /// The interface towards the server.
        #[arg(long, value_name = "IFACE")]
        server_iface: String,
        #[command(flatten)]
        common: Common,
    },
    /// Print the scenario's two directions as the emulator would run them,
    /// as JSON (for scripts; nothing runs).
    Describe {
        scenario: PathBuf,
        #[command(flatten)]
        paths: PathArgs,
    },
    /// Measure the emulator against its configuration on loopback: probe
    /// datagrams through a UDP-mode emulator, compared with the model.
    Measure {
        /// A scenario; without one, a 20 Mbit/s, 50 ms link with a
        /// 1000-packet buffer.
        scenario: Option<PathBuf>,
        /// Direction of the probes.
        #[arg(long, value_enum, default_value_t = Way::ToClient)]
        direction: Way,
        /// Number of probes.
        #[arg(long, default_value_t = 2000)]
        count: usize,
        /// UDP payload of each probe, bytes.
        #[arg(long, default_value_t = 1350)]
        payload: usize,
        /// Time between probes in microseconds (0: back to back).
        #[arg(long, default_value_t = 1000)]
        gap_us: u64,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Way {
    ToClient,
    ToServer,
}

#[derive(Args, Debug)]
struct PathArgs {
    /// Links of the server-to-client direction, comma-separated (default:
    /// the forward_path of the scenario's flow under test).
    #[arg(long, value_name = "LINK,...", value_delimiter = ',')]
    forward_path: Option<Vec<String>>,
    /// Links of the client-to-server direction (default: the flow's
    /// return_path).
    #[arg(long, value_name = "LINK,...", value_delimiter = ',')]
    return_path: Option<Vec<String>>,
    /// Replace the scenario's seed (loss draws).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Edit the scenario before it is read, as vegas-sim's --set:
    /// links.forward.packet_loss=0.02. Repeatable.
    #[arg(long, value_name = "KEY.PATH=VALUE")]
    set: Vec<String>,
}

#[derive(Args, Debug)]
struct Common {
    #[command(flatten)]
    paths: PathArgs,
    /// Write the run's statistics here as JSON when it ends.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Stop after this many seconds (default: on SIGINT or SIGTERM).
    #[arg(long, value_name = "S")]
    duration_s: Option<f64>,
    /// Spin this many microseconds before each delivery instead of sleeping
    /// (0: sleep only).
    #[arg(long, value_name = "US", default_value_t = DEFAULT_SPIN_US)]
    spin_us: u64,
    /// Do not ask for real-time (SCHED_FIFO) priority.
    #[arg(long)]
    no_realtime: bool,
    /// Run the link model this many milliseconds behind the clock, so that
    /// datagrams a busy receive thread hands over late still enter at their
    /// kernel timestamps (capped by the last links' propagation delay).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_HOLD_BACK_MS)]
    hold_back_ms: u64,
    /// No summary on stderr at the end.
    #[arg(long)]
    quiet: bool,
}

impl Common {
    fn timing(&self) -> anyhow::Result<Timing> {
        let duration = match self.duration_s {
            None => None,
            Some(s) if s.is_finite() && s > 0.0 && s < 1e7 => Some(Duration::from_secs_f64(s)),
            Some(s) => bail!("--duration-s: expected a positive number of seconds, got {s}"),
        };
        if self.spin_us > 100_000 {
            bail!("--spin-us: expected at most 100000, got {}", self.spin_us);
        }
        if self.hold_back_ms > 10_000 {
            bail!(
                "--hold-back-ms: expected at most 10000, got {}",
                self.hold_back_ms
            );
        }
        Ok(Timing {
            spin: Duration::from_micros(self.spin_us),
            realtime: !self.no_realtime,
            duration,
            hold_back: Duration::from_millis(self.hold_back_ms),
        })
    }
}

static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::Relaxed);
}

/// A stop flag that SIGINT and SIGTERM set.
fn stop_on_signals() -> Arc<AtomicBool> {
    let handler = on_signal as extern "C" fn(libc::c_int);
    // SAFETY: the handler only stores to an atomic, which is
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || loop {
        if SIGNALLED.load(Ordering::Relaxed) {
            flag.store(true, Ordering::Relaxed);
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    });
    stop
}

fn load(path: &Path, args: &PathArgs) -> anyhow::Result<(Scenario, Paths)> {
    let overrides = Overrides {
        seed: args.seed,
        set: args.set.clone(),
        ..Default::default()
    };
    let scenario = Scenario::load(path, &overrides).map_err(|e| anyhow::anyhow!("{e}"))?;
    let paths = Paths::select(
        &scenario,
        args.forward_path.as_deref(),
        args.return_path.as_deref(),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((scenario, paths))
}

fn describe_paths(scenario: &Scenario, paths: &Paths) -> String {
    let names = |ids: &[usize]| {
        ids.iter()
            .map(|&i| scenario.links[i].name.as_str())
            .collect::<Vec<_>>()
            .join(" > ")
    };
    format!(
        "forward (to client) {}, return (to server) {}",
        names(&paths.to_client),
        names(&paths.to_server)
    )
}

fn finish(report: &RunReport, common: &Common) -> anyhow::Result<()> {
    if let Some(path) = &common.stats {
        let text = serde_json::to_string_pretty(report).context("cannot encode the statistics")?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !common.quiet {
        eprint!("{}", summary_text(report));
    }
    Ok(())
}

fn summary_text(r: &RunReport) -> String {
    let mut s = format!(
        "vegas-emu: ran {:.1} s ({}), to client {} of {} datagrams delivered, to server {} of {}\n",
        r.run_s,
        r.mode,
        r.to_client.delivered_packets,
        r.to_client.injected_packets,
        r.to_server.delivered_packets,
        r.to_server.injected_packets
    );
    for l in &r.links {
        s.push_str(&format!(
            "  link {}: {:.3} Mbit/s, {:.1} ms: {} arrived, {} dropped (queue), {} lost, max queue {} packets, mean queueing {:.2} ms, utilization {:.1}%\n",
            l.name,
            l.rate_bps as f64 / 1e6,
            l.delay_ms,
            l.arrived_packets,
            l.dropped_packets,
            l.lost_packets + l.blackout_packets,
            l.max_queue_packets,
            l.mean_queueing_ms,
            l.utilization * 100.0
        ));
    }
    let t = &r.send_lateness;
    s.push_str(&format!(
        "  send lateness: mean {:.1} us, p50 {:.0} us, p99 {:.0} us, max {:.0} us over {} deliveries ({})\n",
        t.mean_us, t.p50_us, t.p99_us, t.max_us, t.count, r.thread_tuning
    ));
    if r.aqt_marked + r.aqt_failed > 0 {
        s.push_str(&format!(
            "  AQT: {} datagrams marked, {} could not be\n",
            r.aqt_marked, r.aqt_failed
        ));
    }
    s
}

fn describe(scenario: &Scenario, paths: &Paths) -> serde_json::Value {
    let link = |i: &usize| {
        let l = &scenario.links[*i];
        let (queue_packets, queue_bytes) = match l.queue_limit {
            QueueLimit::Packets(p) => (Some(p), None),
            QueueLimit::Bytes(b) => (None, Some(b)),
        };
        let loss = match l.loss {
            LossModel::None => json!(null),
            LossModel::PacketErrorRate(p) => json!({"packet_loss": p}),
            LossModel::BitErrorRate(b) => json!({"bit_error_rate": b}),
            LossModel::GilbertElliott(g) => json!({"gilbert_elliott": {
                "p_good_to_bad": g.p_good_to_bad, "p_bad_to_good": g.p_bad_to_good,
                "loss_in_good": g.loss_in_good, "loss_in_bad": g.loss_in_bad}}),
        };
        json!({
            "name": l.name,
            "rate_bps": l.rate_bps,
            "delay_ms": l.delay as f64 / 1e6,
            "queue_packets": queue_packets,
            "queue_bytes": queue_bytes,
            "loss": loss,
            "aqt": l.aqt,
            // Only this emulator follows traces: `rate_bps` is then the
            // rate trace's mean and `delay_ms` the delay before the trace.
            "rate_trace": l.delivery_trace.is_some(),
            "delay_trace": !l.delay_trace.is_empty(),
        })
    };
    json!({
        "scenario": scenario.source.display().to_string(),
        "description": scenario.description,
        "seed": scenario.seed,
        "header_bytes": scenario.header_bytes,
        "max_datagram_bytes": scenario.max_datagram_bytes,
        "flow": paths.flow,
        "transfer_bytes": scenario.flows.iter().find(|f| Some(&f.name) == paths.flow.as_ref()).and_then(|f| f.transfer_bytes),
        "access_delay_ms": paths.access_delay as f64 / 1e6,
        "forward": paths.to_client.iter().map(link).collect::<Vec<_>>(),
        "return": paths.to_server.iter().map(link).collect::<Vec<_>>(),
        "cross_traffic": scenario.cross_traffic.len(),
        "changes": scenario.changes.len(),
    })
}

fn measure(
    scenario: Option<PathBuf>,
    direction: Way,
    count: usize,
    payload: usize,
    gap_us: u64,
    common: &Common,
) -> anyhow::Result<()> {
    const DEFAULT: &str = r#"
        description = "vegas-emu measure: 20 Mbit/s, 50 ms, 1000-packet buffer"
        duration_s = 1000
        [links.forward]
        rate_mbps = 20
        delay_ms = 50
        queue_packets = 1000
        [links.return]
        rate_mbps = 20
        delay_ms = 50
        queue_packets = 1000
        [flows.f]
        cc = "cubic"
        under_test = true
        forward_path = ["forward"]
        return_path = ["return"]
    "#;
    let (scenario, paths) = match &scenario {
        Some(p) => load(p, &common.paths)?,
        None => {
            let s = Scenario::parse(DEFAULT, Path::new("(built-in)"), &Overrides::default())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let p = Paths::select(&s, None, None).map_err(|e| anyhow::anyhow!("{e}"))?;
            (s, p)
        }
    };
    if !(4..=65_507).contains(&payload) {
        bail!("--payload: expected 4 to 65507 bytes, got {payload}");
    }
    if count == 0 || count > 10_000_000 {
        bail!("--count: expected 1 to 10000000, got {count}");
    }
    let direction = match direction {
        Way::ToClient => Direction::ToClient,
        Way::ToServer => Direction::ToServer,
    };
    let spec = ProbeSpec {
        direction,
        count,
        payload,
        gap: Duration::from_micros(gap_us),
    };
    let run = harness::probe(&scenario, &paths, common.timing()?, &spec)?;
    let errors = run.error_histogram().summary();
    let signed = run.timing_errors();
    let mean_signed = if signed.is_empty() {
        0.0
    } else {
        signed.iter().sum::<i64>() as f64 / signed.len() as f64 / 1e3
    };
    let delays = run.delays();
    let mean_delay_ms = if delays.is_empty() {
        0.0
    } else {
        delays.iter().sum::<u64>() as f64 / delays.len() as f64 / 1e6
    };
    let wire = u32::try_from(payload).unwrap_or(u32::MAX) + scenario.header_bytes;
    let rate = run.arrival_rate_bps(wire);
    let aqt_errors: Vec<f64> = run
        .records
        .iter()
        .filter_map(|r| Some(f64::from(r.aqt_us?) - f64::from(r.expected_aqt_us?)))
        .collect();
    let result = json!({
        "direction": direction.name(),
        "probes": count,
        "payload_bytes": payload,
        "gap_us": gap_us,
        "received": run.received(),
        "loss_rate": 1.0 - run.received() as f64 / count as f64,
        "mean_one_way_delay_ms": mean_delay_ms,
        "arrival_rate_bps": rate,
        "timing_error_us": {
            "mean_signed": mean_signed,
            "mean_abs": errors.mean_us, "p50_abs": errors.p50_us, "p99_abs": errors.p99_us,
            "p999_abs": errors.p999_us, "max_abs": errors.max_us, "count": errors.count,
        },
        "aqt_error_us": {
            "count": aqt_errors.len(),
            "max_abs": aqt_errors.iter().fold(0.0f64, |m, e| m.max(e.abs())),
        },
        "emulator": run.report,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&result).context("cannot encode the result")?
    );
    Ok(())
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Udp {
            scenario,
            listen,
            server,
            common,
        } => {
            let (scenario, paths) = load(&scenario, &common.paths)?;
            let timing = common.timing()?;
            let stop = stop_on_signals();
            let paths_text = describe_paths(&scenario, &paths);
            let running = udp::start(scenario, paths, UdpConfig { listen, server }, timing, stop)?;
            eprintln!(
                "vegas-emu: ready: udp mode, listening on {}, forwarding to {server}; {paths_text}",
                running.listen
            );
            let report = running.wait()?;
            finish(&report, &common)
        }
        Command::Bridge {
            scenario,
            client_iface,
            server_iface,
            common,
        } => {
            let (scenario, paths) = load(&scenario, &common.paths)?;
            let timing = common.timing()?;
            let stop = stop_on_signals();
            let paths_text = describe_paths(&scenario, &paths);
            let config = BridgeConfig {
                client_iface,
                server_iface,
            };
            let report = bridge::run(&scenario, &paths, &config, timing, stop, || {
                eprintln!(
                    "vegas-emu: ready: bridge mode between {} (client) and {} (server); {paths_text}",
                    config.client_iface, config.server_iface
                );
            })?;
            finish(&report, &common)
        }
        Command::Describe { scenario, paths } => {
            let (scenario, selected) = load(&scenario, &paths)?;
            let text = serde_json::to_string_pretty(&describe(&scenario, &selected))
                .context("cannot encode the description")?;
            println!("{text}");
            Ok(())
        }
        Command::Measure {
            scenario,
            direction,
            count,
            payload,
            gap_us,
            common,
        } => measure(scenario, direction, count, payload, gap_us, &common),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vegas-emu: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

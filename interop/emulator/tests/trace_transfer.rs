//! A trace-driven transfer through the emulator against the simulator
//! (issue 29: the two within 10 % of each other): the real quiche-server
//! and quiche-client through a UDP-mode emulator on loopback, in real time,
//! over `interop/scenarios/starlink-like.toml`'s links (Mahimahi rate
//! traces and delay traces both ways), and the same download in vegas-sim,
//! started when the client's connection began (counted from the emulator's
//! time zero), so that both meet the same part of the traces. Without the
//! traces in the emulator (their mean rate and `delay_ms` instead) the
//! emulator took 35 % less time.
//!
//! The apps are the workspace's release binaries beside vegas-emu's
//! (`cargo build --release --workspace`, as `scripts/test` does first).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use vegas_emu::udp::{self, UdpConfig};
use vegas_emu::{Paths, Timing};
use vegas_sim::scenario::{Overrides, Scenario};

const TRANSFER_BYTES: usize = 1 << 20;
const CC: &str = "vegas-sat";

/// One of the apps beside vegas-emu, to be run without a qlog or input,
/// its output piped.
fn app(name: &str) -> Command {
    let path = Path::new(env!("CARGO_BIN_EXE_vegas-emu")).with_file_name(name);
    assert!(
        path.exists(),
        "{} is missing: cargo build --release --workspace",
        path.display()
    );
    let mut command = Command::new(path);
    command
        .env_remove("QLOGDIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A fresh directory of this test's own, removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("vegas-emu-trace-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        ScratchDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scenario(start_s: f64) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/starlink-like.toml");
    let overrides = Overrides {
        cc: Some(CC.into()),
        set: vec![
            format!("flows.download.transfer_bytes={TRANSFER_BYTES}"),
            format!("flows.download.start_s={start_s}"),
        ],
        ..Default::default()
    };
    Scenario::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// quiche-server on a free loopback port, serving `root`; its address.
fn start_server(root: &Path) -> (Child, SocketAddr) {
    let mut child = app("quiche-server")
        .args(["--listen", "127.0.0.1:0", "--cc-algorithm", CC, "--root"])
        .arg(root)
        .stdout(Stdio::null())
        .spawn()
        .expect("cannot start quiche-server");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("quiche-server exited before it listened")
            .expect("quiche-server's stderr");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest
                .split(',')
                .next()
                .and_then(|a| a.parse().ok())
                .unwrap_or_else(|| panic!("no address in '{line}'"));
        }
    };
    // Keep draining its stderr so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, addr)
}

/// One download through the emulator and the same in the simulator: the
/// emulator's time over the simulator's, and what was measured, for the
/// failure message.
fn one_download() -> (f64, String) {
    let root = ScratchDir::new("root");
    let content: Vec<u8> = (0..TRANSFER_BYTES).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(root.path().join("file"), &content).unwrap();
    let out = ScratchDir::new("out");
    let (mut server, server_addr) = start_server(root.path());

    // The emulator's time zero is its start; the traces count from there.
    let links = scenario(0.0);
    let paths = Paths::select(&links, None, None).unwrap();
    let zero = Instant::now();
    let emulator = udp::start(
        links,
        paths,
        UdpConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            server: server_addr,
        },
        Timing::default(),
        Arc::new(AtomicBool::new(false)),
    )
    .unwrap();
    let client = app("quiche-client")
        .args(["--no-verify", "--dump-responses"])
        .arg(out.path())
        .arg(format!("https://127.0.0.1:{}/file", emulator.listen.port()))
        .output()
        .expect("cannot run quiche-client");
    let exited = zero.elapsed();
    let report = emulator.stop().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        client.status.success(),
        "quiche-client: {}",
        String::from_utf8_lossy(&client.stderr)
    );
    assert_eq!(std::fs::read(out.path().join("file")).unwrap(), content);
    // The client's own time, first packet to the response's end ("total
    // N bytes  T s ..."), leaves out its process start on a loaded machine;
    // its connection began that long before it exited (and closed).
    let stdout = String::from_utf8_lossy(&client.stdout);
    let emulated = stdout
        .lines()
        .find_map(|l| l.strip_prefix("total "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|t| t.parse::<f64>().ok())
        .map(Duration::from_secs_f64)
        .unwrap_or_else(|| panic!("no 'total' line from quiche-client: {stdout}"));
    let started = exited.saturating_sub(emulated);

    let simulated = {
        let dir = ScratchDir::new("sim");
        let summary = vegas_sim::run(&scenario(started.as_secs_f64()), dir.path()).unwrap();
        let flow = &summary.flows[0];
        assert_eq!(flow.verified, Some(true), "the simulated download");
        Duration::from_secs_f64(flow.completion_s.expect("the simulated download finished"))
    };
    let ratio = emulated.as_secs_f64() / simulated.as_secs_f64();
    let measured = format!(
        "{CC}, {TRANSFER_BYTES} bytes over starlink-like: emulator {:.3} s, simulator {:.3} s ({:+.1} %); \
         to client {} of {} datagrams delivered, send lateness p99 {:.0} us",
        emulated.as_secs_f64(),
        simulated.as_secs_f64(),
        (ratio - 1.0) * 100.0,
        report.to_client.delivered_packets,
        report.to_client.injected_packets,
        report.send_lateness.p99_us
    );
    (ratio, measured)
}

#[test]
fn a_trace_driven_download_takes_the_simulator_s_time() {
    // A loaded machine only makes the real-time download slower (at load
    // 10 on the 2 cores, +7 to +14 %): a download outside 10 % is made
    // again, up to three, every attempt in the failure. A wrong emulator
    // misses on every attempt (without the traces it took 35 % less time).
    const ATTEMPTS: usize = 3;
    let mut tried = Vec::new();
    for _ in 0..ATTEMPTS {
        let (ratio, measured) = one_download();
        eprintln!("{measured}");
        if (ratio - 1.0).abs() < 0.10 {
            return;
        }
        tried.push(measured);
    }
    panic!(
        "no download of {ATTEMPTS} within 10 % of the simulator:\n{}",
        tried.join("\n")
    );
}

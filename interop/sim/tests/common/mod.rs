//! Helpers shared by the integration tests: run a scenario given as text,
//! read the outputs back.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use vegas_sim::{Overrides, Scenario, Summary};

/// A finished run and the directory holding its outputs.
pub struct Run {
    pub summary: Summary,
    pub dir: tempfile::TempDir,
}

impl Run {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn flow(&self, name: &str) -> &vegas_sim::report::FlowSummary {
        self.summary
            .flows
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no flow {name}"))
    }

    pub fn link(&self, name: &str) -> &vegas_sim::report::LinkSummary {
        self.summary
            .links
            .iter()
            .find(|l| l.name == name)
            .unwrap_or_else(|| panic!("no link {name}"))
    }

    /// One column of a CSV output, by header name, as numbers.
    pub fn column(&self, file: &str, column: &str) -> Vec<f64> {
        csv_column(&self.path(file), column)
    }

    /// `column` of `file` at `t` seconds (the last sample at or before it).
    pub fn sampled(&self, file: &str, column: &str, t: f64) -> f64 {
        let times = self.column(file, "time_s");
        let values = self.column(file, column);
        times
            .iter()
            .zip(&values)
            .take_while(|(time, _)| **time <= t + 1e-9)
            .last()
            .map_or(0.0, |(_, v)| *v)
    }
}

/// The fau-sat links (600 ms RTT; `forward` 20 Mbit/s, `return` 2 Mbit/s;
/// 25-packet buffers), for scenarios written in a test.
pub const FAU_SAT_LINKS: &str = r#"
[links.forward]
rate_mbps = 20
delay_ms = 300
queue_packets = 25
[links.return]
rate_mbps = 2
delay_ms = 300
queue_packets = 25
"#;

pub fn scenario(text: &str) -> Scenario {
    scenario_with(text, &Overrides::default())
}

pub fn scenario_with(text: &str, overrides: &Overrides) -> Scenario {
    Scenario::parse(text, Path::new("test.toml"), overrides).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(text: &str) -> Run {
    run_scenario(&scenario(text))
}

pub fn run_scenario(scenario: &Scenario) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let summary = vegas_sim::run(scenario, dir.path()).unwrap();
    Run { summary, dir }
}

pub fn csv_column(path: &Path, column: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let index = header
        .iter()
        .position(|h| *h == column)
        .unwrap_or_else(|| panic!("no column {column} in {}", path.display()));
    lines
        .map(|l| l.split(',').nth(index).unwrap().parse().unwrap_or(f64::NAN))
        .collect()
}

/// Serialisation time in milliseconds of `bytes` at `mbps`.
pub fn serialisation_ms(bytes: f64, mbps: f64) -> f64 {
    bytes * 8.0 / (mbps * 1e6) * 1e3
}

/// The first RTT sample of a client's qlog (the handshake's), in ms.
pub fn client_handshake_rtt_ms(run: &Run, flow: &str) -> f64 {
    let text = std::fs::read_to_string(run.path(&format!("{flow}-client.sqlog"))).unwrap();
    for record in text.split('\u{1e}') {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(record.trim()) else {
            continue;
        };
        if event["name"] == "quic:recovery_metrics_updated" {
            if let Some(latest) = event["data"]["latest_rtt"].as_f64() {
                return latest;
            }
        }
    }
    panic!("no RTT sample in the client's qlog");
}

/// The seeds a mechanism is judged over, as the targets are (mean over
/// seeds 1-5): a long shared run is chaotic, and any change of timing
/// elsewhere moves one seed's figure by more than a mechanism's effect,
/// so no single seed carries a verdict.
pub const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

/// One figure measured over several seeds.
pub struct OverSeeds {
    pub seeds: Vec<u64>,
    pub values: Vec<f64>,
}

impl OverSeeds {
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    pub fn min(&self) -> f64 {
        self.values.iter().cloned().fold(f64::INFINITY, f64::min)
    }

    pub fn max(&self) -> f64 {
        self.values
            .iter()
            .cloned()
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

/// "mean 0.887 (seed 1 0.960, seed 2 0.879, ...)", for assertion messages.
impl std::fmt::Display for OverSeeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mean {:.3} (", self.mean())?;
        for (i, (seed, value)) in self.seeds.iter().zip(&self.values).enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}seed {seed} {value:.3}")?;
        }
        write!(f, ")")
    }
}

/// `measure(seed)` for each of `seeds`.
pub fn over_seeds(seeds: &[u64], measure: impl FnMut(u64) -> f64) -> OverSeeds {
    OverSeeds {
        seeds: seeds.to_vec(),
        values: seeds.iter().copied().map(measure).collect(),
    }
}

/// The shipped scenario `interop/scenarios/NAME.toml` run with vegas-sat
/// (`params` its parameters), `seed` and the `set` overrides.
pub fn run_vegas_sat(name: &str, seed: u64, params: &[&str], set: &[String]) -> Run {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"));
    let overrides = Overrides {
        seed: Some(seed),
        cc: Some("vegas-sat".into()),
        cc_params: params.iter().map(|p| p.to_string()).collect(),
        set: set.to_vec(),
    };
    let scenario = Scenario::load(&file, &overrides).unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&scenario)
}

/// `set` overrides that make each of `flows`' clients send no receive
/// stamps.
pub fn without_stamps(flows: &[&str]) -> Vec<String> {
    flows
        .iter()
        .map(|f| format!("flows.{f}.receive_timestamps=false"))
        .collect()
}

/// `set` overrides that make each of `flows`' clients thin their ACKs when
/// asked (ACK frequency) and send no receive stamps, as picoquic's,
/// quinn's and msquic's do.
pub fn thinned_ack_clients(flows: &[&str]) -> Vec<String> {
    let mut set = without_stamps(flows);
    set.extend(
        flows
            .iter()
            .map(|f| format!("flows.{f}.ack_frequency=true")),
    );
    set
}

/// The shipped scenario NAME with vegas-sat (`params`), every one of
/// `flows` downloading to a thinned-ACK client without stamps
/// (`thinned_ack_clients`), each file checked intact.
pub fn thinned_ack_run(name: &str, flows: &[&str], seed: u64, params: &[&str]) -> Run {
    let run = run_vegas_sat(name, seed, params, &thinned_ack_clients(flows));
    for flow in flows {
        assert_eq!(
            run.flow(flow).verified,
            Some(true),
            "{name}, seed {seed}: the {flow} file arrives whole"
        );
    }
    run
}

/// What one download of a picoquic satellite case came to.
pub struct Download {
    pub completion_s: f64,
    pub bytes_retransmitted: u64,
}

impl Download {
    pub fn of(run: &Run, flow: &str) -> Download {
        let flow = run.flow(flow);
        Download {
            completion_s: flow.completion_s.expect("the download completes"),
            bytes_retransmitted: flow.bytes_retransmitted,
        }
    }
}

/// The `download` flow of `interop/scenarios/NAME.toml` with vegas-sat
/// (`params` its parameters) to a thinned-ACK client without stamps; the
/// file is checked intact.
pub fn thinned_ack_download(name: &str, seed: u64, params: &[&str]) -> Download {
    Download::of(
        &thinned_ack_run(name, &["download"], seed, params),
        "download",
    )
}

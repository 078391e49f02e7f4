//! Scenario files: the TOML a user writes, how it is read and checked, and the
//! validated [`Scenario`] the simulator runs.
//!
//! Reading happens in two steps. serde turns the text into the `*Spec`
//! structs, which mirror the file one to one and refuse unknown keys; its
//! errors carry the key path and, where the text is at hand, the line. Then
//! [`Scenario::from_spec`] checks what a type cannot say (positive rates,
//! links that exist, algorithms that exist, one queue limit per link, ...)
//! and converts to the simulator's units: integer nanoseconds, bits per
//! second, indices instead of names. Every message starts with the file's
//! path and the key at fault.

use std::fmt;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use quiche_vegas::careful_resume::LossRule;
use quiche_vegas::transfer::HttpVersion;
use serde::Deserialize;
use vegas_cc::shared::pacing_profile::{PROFILE, PROFILE_WORDS};

use crate::random::RandomStream;
use crate::time::{millis_f64, seconds_f64, serialisation_time, Nanos};

/// Smallest UDP payload QUIC allows (RFC 9000, section 14).
pub const MIN_QUIC_DATAGRAM_BYTES: usize = 1200;

// ---------------------------------------------------------------------------
// The file, as written.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Free text shown in the summary.
    #[serde(default)]
    pub description: String,
    /// Seed of every random choice; `--seed` overrides it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Longest simulated time; the run ends earlier once every QUIC flow has
    /// finished.
    pub duration_s: f64,
    /// Period of the CSV time series.
    #[serde(default = "default_sample_interval_ms")]
    pub sample_interval_ms: f64,
    /// Write a `.sqlog` per endpoint. Unset: on, except for runs of more
    /// than one flow longer than [`QLOG_DEFAULT_OFF_AFTER_S`] (their qlogs
    /// run to gigabytes: 1.3 GB for 120 s of two flows at 50 Mbit/s).
    #[serde(default)]
    pub qlog: Option<bool>,
    /// quiche's UDP payload size (`max_send_udp_payload_size`).
    #[serde(default = "default_max_datagram_bytes")]
    pub max_datagram_bytes: usize,
    /// Bytes each datagram occupies on a link beyond its UDP payload: the
    /// IPv4 and UDP headers by default.
    #[serde(default = "default_header_bytes")]
    pub header_bytes: u32,
    pub links: IndexMap<String, LinkSpec>,
    #[serde(default)]
    pub flows: IndexMap<String, FlowSpec>,
    #[serde(default)]
    pub cross_traffic: IndexMap<String, CrossTrafficSpec>,
    #[serde(default)]
    pub changes: Vec<ChangeSpec>,
    /// What a seed varies besides losses.
    #[serde(default)]
    pub jitter: JitterSpec,
    /// The pacing profile (`quic` or `paper`) of every flow whose algorithm
    /// has a `profile` parameter and whose own parameters do not set one:
    /// `profile=VALUE` goes before the flow's parameters (and before
    /// `--cc-param`s). Without it each algorithm runs its default (`quic`).
    pub cc_profile: Option<String>,
    /// Full-size data packets for every flow that does not set its own
    /// `full_size_packets` (default true, as the apps).
    pub full_size_packets: Option<bool>,
    /// Every flow's initial congestion window in packets (quiche's
    /// `set_initial_congestion_window_packets`); unset: quiche's 10. The
    /// papers' TCPs started with one or two segments.
    pub initial_window_packets: Option<usize>,
}

/// The timing a seed varies, as it varies in reality: when each flow
/// starts, each datagram's propagation delay, the phase of cross traffic.
/// Without these a loss-free scenario gives nearly the same result for
/// every seed, while its result moves with tiny timing changes; with them
/// the spread over seeds shows that sensitivity. All on by default.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JitterSpec {
    /// `false` switches every kind of jitter off (per-flow and per-link
    /// values too): timing exactly as written.
    pub enabled: bool,
    /// Default of every flow's `start_jitter_ms`.
    pub flow_start_ms: f64,
    /// Default of every link's `delay_jitter_ms`.
    pub link_delay_ms: f64,
    /// Each cross-traffic source starts up to one datagram spacing late.
    pub cross_phase: bool,
}

/// The largest `initial_window_packets` a scenario may ask for.
pub const MAX_INITIAL_WINDOW_PACKETS: usize = 1000;

/// Defaults of [`JitterSpec`].
pub const DEFAULT_FLOW_START_JITTER_MS: f64 = 10.0;
pub const DEFAULT_LINK_DELAY_JITTER_MS: f64 = 0.1;

impl Default for JitterSpec {
    fn default() -> Self {
        JitterSpec {
            enabled: true,
            flow_start_ms: DEFAULT_FLOW_START_JITTER_MS,
            link_delay_ms: DEFAULT_LINK_DELAY_JITTER_MS,
            cross_phase: true,
        }
    }
}

fn default_seed() -> u64 {
    1
}
fn default_sample_interval_ms() -> f64 {
    100.0
}
fn default_true() -> bool {
    true
}
fn default_max_datagram_bytes() -> usize {
    quiche_vegas::settings::MAX_DATAGRAM_SIZE
}
fn default_header_bytes() -> u32 {
    28
}

/// One direction of a link: a transmitter with a queue, then a wire.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The transmitter's rate; or `rate_trace_file`.
    pub rate_mbps: Option<f64>,
    /// A Mahimahi packet-delivery trace instead of a rate, relative to the
    /// scenario file (see `crate::trace`).
    pub rate_trace_file: Option<PathBuf>,
    /// The same trace inline: its timestamps in ms (the sweep runner writes
    /// a file's trace here, so the scenario travels as one file).
    pub rate_trace: Option<Vec<u64>>,
    /// One-way propagation delay (before the first point of `delay_trace`
    /// too, if there is one).
    pub delay_ms: f64,
    /// `[[time_s, delay_ms], ...]`: the delay follows these points with
    /// linear ramps between them (see `crate::trace`).
    pub delay_trace: Option<Vec<(f64, f64)>>,
    /// DropTail limit in packets waiting (the one being transmitted has left
    /// the queue, as in ns-2). Exactly one of the two limits.
    pub queue_packets: Option<u64>,
    /// DropTail limit in bytes waiting (wire bytes: payload and headers).
    pub queue_bytes: Option<u64>,
    /// Loss model: at most one of the three.
    pub packet_loss: Option<f64>,
    pub bit_error_rate: Option<f64>,
    pub gilbert_elliott: Option<GilbertElliottSpec>,
    /// An AQT-enabled router: adds each datagram's queueing time here to the
    /// datagram's accumulated-queueing-time field (RoVegas).
    #[serde(default)]
    pub aqt: bool,
    /// Each datagram's propagation takes `delay_ms` plus a uniform draw
    /// below this (default `[jitter] link_delay_ms`).
    pub delay_jitter_ms: Option<f64>,
    /// `true`: the jitter may reorder datagrams. By default a datagram never
    /// arrives before the one that left the link before it (a FIFO wire).
    #[serde(default)]
    pub jitter_reorders: bool,
}

/// A loss model as written: at most one of the three. Links and changes both
/// have these keys (serde cannot flatten a struct into one that refuses
/// unknown keys, so they are repeated there and gathered here).
#[derive(Debug, Default)]
pub struct LossSpec {
    /// Uniform packet error rate.
    pub packet_loss: Option<f64>,
    /// Bit error rate; a datagram of n wire bytes is lost with probability
    /// 1 - (1 - ber)^(8 n).
    pub bit_error_rate: Option<f64>,
    pub gilbert_elliott: Option<GilbertElliottSpec>,
}

/// Two-state Markov loss (bursts): the state changes before every datagram.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottSpec {
    pub p_good_to_bad: f64,
    pub p_bad_to_good: f64,
    #[serde(default)]
    pub loss_in_good: f64,
    #[serde(default = "one")]
    pub loss_in_bad: f64,
}

fn one() -> f64 {
    1.0
}

/// A QUIC connection: the client requests a body, the server sends it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub cc: String,
    #[serde(default)]
    pub cc_params: Vec<String>,
    /// `--cc` and `--cc-param` apply to the flows marked so.
    #[serde(default)]
    pub under_test: bool,
    /// `h3` (default) or `hq-interop`.
    #[serde(default = "default_protocol")]
    pub protocol: String,
    /// Body size; without it the flow downloads until `stop_s` or the end of
    /// the run.
    pub transfer_bytes: Option<u64>,
    #[serde(default)]
    pub start_s: f64,
    /// The flow starts at `start_s` plus a uniform draw below this (default
    /// `[jitter] flow_start_ms`).
    pub start_jitter_ms: Option<f64>,
    pub stop_s: Option<f64>,
    /// Both endpoints' `max_idle_timeout` (default: the apps' 30 s). A
    /// connection that hears nothing from its peer for this long closes.
    pub idle_timeout_s: Option<f64>,
    /// Links the data travels, from the server to the client.
    pub forward_path: Vec<String>,
    /// Links the client's packets (ACKs, requests) travel to the server.
    pub return_path: Vec<String>,
    /// Extra one-way delay of this flow's own, uncongested access, added
    /// in both directions (for RTT-fairness runs).
    #[serde(default)]
    pub access_delay_ms: f64,
    /// Both endpoints ask for ACK receive timestamps
    /// (draft-ietf-quic-receive-ts-02).
    #[serde(default = "default_true")]
    pub receive_timestamps: bool,
    /// Both endpoints accept QUEUEING_TIME frames, the echo of the forward
    /// queueing time AQT-enabled routers reported.
    #[serde(default = "default_true")]
    pub queueing_time_frame: bool,
    /// Both endpoints offer ACK frequency (draft-ietf-quic-ack-frequency):
    /// the server thins the client's ACKs with ACK_FREQUENCY. Off by default
    /// (the apps offer it by default; `--no-ack-frequency` is `false` here),
    /// so that scenarios measured before it keep their results; set it per
    /// flow or with `--set flows.NAME.ack_frequency=true`.
    #[serde(default)]
    pub ack_frequency: bool,
    /// Both endpoints send full-size data packets (the apps' default; false
    /// is stock quiche's packet sizing, `--no-full-size-packets`). Unset:
    /// the scenario's `full_size_packets`, else true.
    pub full_size_packets: Option<bool>,
    /// The client (data receiver) acknowledges every this many ack-eliciting
    /// packets, or after max_ack_delay (`--ack-every`); 1, the default, is
    /// stock quiche.
    #[serde(default = "default_ack_every")]
    pub ack_every: u64,
    /// Both endpoints' per-stream flow-control window, bytes
    /// (`initial_max_stream_data_*`, `--max-stream-data`). Unset: the apps'
    /// default. A client's own choice: a browser offers a few MB per stream.
    pub stream_window_bytes: Option<u64>,
    /// Both endpoints' connection flow-control window, bytes
    /// (`initial_max_data`, `--max-data`). Unset: the apps' default.
    pub connection_window_bytes: Option<u64>,
    /// Careful Resume (RFC 9959) on the server: it resumes what an earlier
    /// flow between the same endpoints saved (see `after`). Off by default.
    #[serde(default)]
    pub careful_resume: bool,
    /// Which losses of the jump make Careful Resume retreat: "queue" (the
    /// default: a loss with a queue in the RTT, or beyond 5 % of the packets
    /// sent since the jump) or "any" (RFC 9959 as written).
    #[serde(default = "default_careful_resume_loss")]
    pub careful_resume_loss: String,
    /// Tail repeat on the server (`quiche-server --tail-repeat`): once the
    /// response is all sent, the last half round trip's unacknowledged
    /// packets are sent once more. Off by default.
    #[serde(default)]
    pub tail_repeat: bool,
    /// Start when this earlier flow has finished, `start_s` later, between
    /// the same two endpoints (its client and server addresses), as a
    /// client that connects again.
    pub after: Option<String>,
}

/// The smallest flow-control window a flow may ask for: one full datagram's
/// stream data, so that a transfer can always move.
const MIN_WINDOW_BYTES: u64 = 1350;

/// A flow-control window (`value`, else `default`): at least
/// [`MIN_WINDOW_BYTES`] and a QUIC variable-length integer (below 2^62).
fn check_window(key: &str, value: Option<u64>, default: u64) -> Result<u64, String> {
    let bytes = value.unwrap_or(default);
    const MAX_VARINT: u64 = (1 << 62) - 1;
    if !(MIN_WINDOW_BYTES..=MAX_VARINT).contains(&bytes) {
        return Err(format!(
            "{key}: expected {MIN_WINDOW_BYTES} to {MAX_VARINT} bytes, got {bytes}"
        ));
    }
    Ok(bytes)
}

fn default_ack_every() -> u64 {
    quiche_vegas::settings::DEFAULT_ACK_EVERY
}

fn default_careful_resume_loss() -> String {
    LossRule::default().as_str().to_string()
}

fn default_protocol() -> String {
    "h3".to_string()
}

/// Non-QUIC traffic that only loads the links.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossTrafficSpec {
    /// `cbr` or `vbr` (exponential ON-OFF).
    pub kind: String,
    /// The constant rate, or the rate during ON periods.
    pub rate_mbps: f64,
    pub mean_on_ms: Option<f64>,
    pub mean_off_ms: Option<f64>,
    /// CBR only: random variation of each gap, as a fraction of the gap
    /// (0 to 1).
    pub jitter: Option<f64>,
    /// UDP payload of each datagram.
    #[serde(default = "default_cross_packet_bytes")]
    pub packet_bytes: u32,
    #[serde(default)]
    pub start_s: f64,
    pub stop_s: Option<f64>,
    pub path: Vec<String>,
}

fn default_cross_packet_bytes() -> u32 {
    1200
}

/// A change of a link at a given time.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeSpec {
    pub at_s: f64,
    pub link: String,
    pub rate_mbps: Option<f64>,
    pub delay_ms: Option<f64>,
    /// Every datagram that leaves the transmitter during this long is lost.
    pub blackout_s: Option<f64>,
    /// `true`: the link stops losing datagrams from here on.
    #[serde(default)]
    pub no_loss: bool,
    pub packet_loss: Option<f64>,
    pub bit_error_rate: Option<f64>,
    pub gilbert_elliott: Option<GilbertElliottSpec>,
}

// ---------------------------------------------------------------------------
// The scenario, validated.

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The file it came from, for messages.
    pub source: PathBuf,
    pub description: String,
    pub seed: u64,
    pub duration: Nanos,
    pub sample_interval: Nanos,
    pub qlog: bool,
    /// qlog is off only because of the default for long multi-flow runs.
    pub qlog_off_by_default: bool,
    pub max_datagram_bytes: usize,
    pub header_bytes: u32,
    pub links: Vec<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    pub cross_traffic: Vec<CrossTrafficConfig>,
    /// In time order (file order among equal times).
    pub changes: Vec<LinkChange>,
}

pub type LinkId = usize;

#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    pub name: String,
    pub rate_bps: u64,
    pub delay: Nanos,
    pub queue_limit: QueueLimit,
    pub loss: LossModel,
    pub aqt: bool,
    /// Upper bound of the uniform extra propagation delay of each datagram
    /// (0: none).
    pub delay_jitter: Nanos,
    /// The jitter may reorder datagrams (otherwise the wire is FIFO).
    pub jitter_reorders: bool,
    /// The delay over time (empty: `delay`, with its changes).
    pub delay_trace: crate::trace::DelayTrace,
    /// Delivery opportunities instead of `rate_bps` (which is then their
    /// mean rate).
    pub delivery_trace: Option<std::sync::Arc<crate::trace::DeliveryTrace>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    None,
    PacketErrorRate(f64),
    BitErrorRate(f64),
    GilbertElliott(GilbertElliottSpec),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    pub name: String,
    pub cc: String,
    pub cc_params: Vec<String>,
    pub under_test: bool,
    pub protocol: HttpVersion,
    pub transfer_bytes: Option<u64>,
    /// When the flow starts: `start_s` plus its start jitter, drawn from the
    /// seed.
    pub start: Nanos,
    pub stop: Option<Nanos>,
    /// Both endpoints' `max_idle_timeout`.
    pub idle_timeout_ms: u64,
    pub forward_path: Vec<LinkId>,
    pub return_path: Vec<LinkId>,
    pub access_delay: Nanos,
    /// Our QUIC extensions, as both endpoints offer them.
    pub receive_timestamps: bool,
    pub queueing_time_frame: bool,
    /// ACK frequency (`ExtensionSettings::ack_frequency`).
    pub ack_frequency: bool,
    /// Full-size data packets (`TransportSettings::full_size_packets`).
    pub full_size_packets: bool,
    /// ACK ratio of both endpoints as receivers (`TransportSettings::ack_every`).
    pub ack_every: u64,
    /// Flow-control windows of both endpoints, bytes
    /// (`TransportSettings::max_stream_data` and `max_data`).
    pub stream_window_bytes: u64,
    pub connection_window_bytes: u64,
    /// The initial congestion window in packets; `None`: quiche's default.
    pub initial_window_packets: Option<usize>,
    pub careful_resume: bool,
    pub careful_resume_loss: LossRule,
    /// The server repeats the unacknowledged tail (`Endpoint::set_tail_repeat`).
    pub tail_repeat: bool,
    /// Index of the earlier flow this one follows: it starts `start` after
    /// that one finished, with its addresses.
    pub after: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CrossTrafficKind {
    /// Evenly spaced datagrams; with `jitter` > 0 each gap is drawn
    /// uniformly within `spacing × (1 ± jitter)` (ns-2's `random_`), which
    /// keeps the rate but breaks the phase lock a perfectly periodic source
    /// can have with a link of a commensurate rate.
    ConstantBitRate { jitter: f64 },
    /// Exponentially distributed ON and OFF periods.
    OnOff { mean_on: f64, mean_off: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct CrossTrafficConfig {
    pub name: String,
    pub kind: CrossTrafficKind,
    pub rate_bps: u64,
    pub packet_bytes: u32,
    /// When the first datagram leaves: `start_s` plus the source's phase,
    /// drawn from the seed.
    pub start: Nanos,
    pub stop: Option<Nanos>,
    pub path: Vec<LinkId>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkChange {
    pub at: Nanos,
    pub link: LinkId,
    pub rate_bps: Option<u64>,
    pub delay: Option<Nanos>,
    pub blackout: Option<Nanos>,
    pub loss: Option<LossModel>,
}

/// Command-line changes to a scenario.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub seed: Option<u64>,
    /// Replaces the algorithm of every flow under test (and its parameters).
    pub cc: Option<String>,
    /// Parameters for every flow under test, after the file's (or alone with
    /// `cc`).
    pub cc_params: Vec<String>,
    /// `KEY.PATH=VALUE` edits of the file before it is read.
    pub set: Vec<String>,
}

/// Most QUIC flows one run takes. Each flow is two real quiche connections
/// with their own TLS state, buffers and controller, and holds open files
/// (its CSV series, and two qlogs unless they are off): 2000 flows took
/// 4.0 GB of memory, and 20000 ran out of file descriptors, which quiche
/// reported as a TLS failure loading the key. A scenario with more is
/// refused with this number.
pub const MAX_FLOWS: usize = 2000;

/// Unless a scenario says `qlog = true`, a run with more than one QUIC flow
/// and a `duration_s` above this writes no qlogs (see `ScenarioSpec::qlog`).
pub const QLOG_DEFAULT_OFF_AFTER_S: f64 = 60.0;

/// A scenario that cannot be run, with the file it came from.
#[derive(Debug)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Scenario {
    /// Reads, edits (`overrides.set`), parses and validates the file.
    pub fn load(path: &Path, overrides: &Overrides) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            message: format!("cannot read the scenario file: {e}"),
        })?;
        Self::parse(&text, path, overrides)
    }

    /// Like [`Scenario::load`] with the text at hand; `path` names it in
    /// messages.
    pub fn parse(
        text: &str,
        path: &Path,
        overrides: &Overrides,
    ) -> Result<Scenario, ScenarioError> {
        let fail = |message: String| ScenarioError {
            file: path.to_path_buf(),
            message,
        };
        let spec = if overrides.set.is_empty() {
            parse_spec_text(text).map_err(fail)?
        } else {
            let mut table: toml::Table = toml::from_str(text)
                .map_err(|e| fail(format!("not valid TOML: {}", e.to_string().trim_end())))?;
            for edit in &overrides.set {
                apply_set(&mut table, edit).map_err(|e| fail(format!("--set {edit}: {e}")))?;
            }
            parse_spec_value(table).map_err(|m| fail(format!("{m} (after the --set edits)")))?
        };
        Scenario::from_spec(spec, path, overrides).map_err(fail)
    }

    /// Checks `spec` and converts it to the simulator's units.
    pub fn from_spec(
        spec: ScenarioSpec,
        path: &Path,
        overrides: &Overrides,
    ) -> Result<Scenario, String> {
        check_positive("duration_s", spec.duration_s)?;
        check_positive("sample_interval_ms", spec.sample_interval_ms)?;
        if let Some(packets) = spec.initial_window_packets {
            // RFC 9002 section 7.2: never below two datagrams.
            if !(2..=MAX_INITIAL_WINDOW_PACKETS).contains(&packets) {
                return Err(format!(
                    "initial_window_packets: {packets} is out of range: expected 2 to \
                     {MAX_INITIAL_WINDOW_PACKETS} (RFC 9002 allows no less than 2)"
                ));
            }
        }
        if spec.sample_interval_ms < 1.0 {
            // Finer series would be larger than the qlogs and say no more.
            return Err(format!(
                "sample_interval_ms: expected at least 1, got {}",
                spec.sample_interval_ms
            ));
        }
        let max_datagram = quiche_vegas::settings::MAX_DATAGRAM_SIZE;
        if !(MIN_QUIC_DATAGRAM_BYTES..=max_datagram).contains(&spec.max_datagram_bytes) {
            return Err(format!(
                "max_datagram_bytes: expected a whole number from {MIN_QUIC_DATAGRAM_BYTES} to {max_datagram}, got {}",
                spec.max_datagram_bytes
            ));
        }
        if spec.header_bytes > 1000 {
            return Err(format!(
                "header_bytes: expected at most 1000, got {}",
                spec.header_bytes
            ));
        }
        if spec.flows.len() > MAX_FLOWS {
            return Err(format!(
                "flows: {} flows, but vegas-sim runs at most {MAX_FLOWS} in one scenario \
                 (each is two real quiche connections: 2000 took 4.0 GB); split the population \
                 into several runs or model the rest as cross traffic",
                spec.flows.len()
            ));
        }
        let qlog_off_by_default = spec.qlog.is_none()
            && spec.flows.len() > 1
            && spec.duration_s > QLOG_DEFAULT_OFF_AFTER_S;
        let duration = seconds_f64(spec.duration_s);
        if spec.links.is_empty() {
            return Err("links: expected at least one link ([links.NAME])".to_string());
        }

        let seed = overrides.seed.unwrap_or(spec.seed);
        let jitter = &spec.jitter;
        check_non_negative("jitter.flow_start_ms", jitter.flow_start_ms)?;
        check_non_negative("jitter.link_delay_ms", jitter.link_delay_ms)?;
        let mut links = Vec::new();
        for (name, link) in &spec.links {
            links.push(link_config(name, link, jitter, path.parent())?);
        }
        let link_names: Vec<&str> = spec.links.keys().map(String::as_str).collect();
        let resolve_path = |key: String, names: &[String]| -> Result<Vec<LinkId>, String> {
            if names.is_empty() {
                return Err(format!("{key}: expected at least one link name"));
            }
            names
                .iter()
                .map(|n| {
                    link_names.iter().position(|l| l == n).ok_or_else(|| {
                        format!(
                            "{key}: unknown link '{n}'; links of this scenario: {}",
                            link_names.join(", ")
                        )
                    })
                })
                .collect()
        };

        let cc_profile = match spec.cc_profile.as_deref() {
            None => None,
            Some(word) if PROFILE_WORDS.contains(&word) => Some(word),
            Some(other) => {
                return Err(format!(
                    "cc_profile: expected one of {}, got \"{other}\"",
                    PROFILE_WORDS
                        .iter()
                        .map(|w| format!("\"{w}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        };
        let mut flows = Vec::new();
        for (name, flow) in &spec.flows {
            check_name("flows", name)?;
            let key = |field: &str| format!("flows.{name}.{field}");
            let (cc, cc_params) = match (&overrides.cc, flow.under_test) {
                (Some(cc), true) => (cc.clone(), overrides.cc_params.clone()),
                (None, true) => {
                    let mut params = flow.cc_params.clone();
                    params.extend(overrides.cc_params.iter().cloned());
                    (flow.cc.clone(), params)
                }
                (_, false) => (flow.cc.clone(), flow.cc_params.clone()),
            };
            let cc_params = with_profile(&cc, cc_params, cc_profile);
            vegas_cc::resolve(&cc, &cc_params).map_err(|e| format!("{}: {e}", key("cc")))?;
            let protocol: HttpVersion = flow.protocol.parse().map_err(|_| {
                format!(
                    "{}: expected \"h3\" or \"hq-interop\", got \"{}\"",
                    key("protocol"),
                    flow.protocol
                )
            })?;
            if flow.transfer_bytes == Some(0) {
                return Err(format!(
                    "{}: expected a positive number of bytes",
                    key("transfer_bytes")
                ));
            }
            let max_ack_every = quiche_vegas::settings::MAX_ACK_EVERY;
            if !(1..=max_ack_every).contains(&flow.ack_every) {
                return Err(format!(
                    "{}: expected 1 to {max_ack_every}, got {}",
                    key("ack_every"),
                    flow.ack_every
                ));
            }
            let stream_window_bytes = check_window(
                &key("stream_window_bytes"),
                flow.stream_window_bytes,
                quiche_vegas::settings::DEFAULT_MAX_STREAM_DATA,
            )?;
            let connection_window_bytes = check_window(
                &key("connection_window_bytes"),
                flow.connection_window_bytes,
                quiche_vegas::settings::DEFAULT_MAX_DATA,
            )?;
            check_non_negative(&key("start_s"), flow.start_s)?;
            check_non_negative(&key("access_delay_ms"), flow.access_delay_ms)?;
            let stop = check_stop(&key("stop_s"), flow.start_s, flow.stop_s)?;
            let start_jitter = flow.start_jitter_ms.unwrap_or(jitter.flow_start_ms);
            check_non_negative(&key("start_jitter_ms"), start_jitter)?;
            let start_jitter = if jitter.enabled {
                millis_f64(start_jitter)
            } else {
                0
            };
            let start = seconds_f64(flow.start_s)
                + draw_below(seed, &format!("flow:{name}:start"), start_jitter);
            if stop.is_some_and(|stop| stop <= seconds_f64(flow.start_s) + start_jitter) {
                return Err(format!(
                    "{}: expected a time after start_s + start_jitter_ms ({} s), got {}",
                    key("stop_s"),
                    flow.start_s + start_jitter as f64 / 1e9,
                    flow.stop_s.unwrap_or_default()
                ));
            }
            let idle_timeout_ms = match flow.idle_timeout_s {
                None => quiche_vegas::settings::DEFAULT_IDLE_TIMEOUT_MS,
                Some(idle) => {
                    check_positive(&key("idle_timeout_s"), idle)?;
                    // quiche takes whole milliseconds; at least one.
                    ((idle * 1e3).round() as u64).max(1)
                }
            };
            let after = match &flow.after {
                None => None,
                Some(earlier) => {
                    let index = spec
                        .flows
                        .get_index_of(earlier)
                        .filter(|&i| i < flows.len())
                        .ok_or_else(|| {
                            format!(
                                "{}: expected the name of an earlier flow, got '{earlier}'",
                                key("after")
                            )
                        })?;
                    if flow.stop_s.is_some() {
                        return Err(format!(
                            "{}: a flow that starts after another cannot have a stop time",
                            key("stop_s")
                        ));
                    }
                    Some(index)
                }
            };
            flows.push(FlowConfig {
                name: name.clone(),
                cc,
                cc_params,
                under_test: flow.under_test,
                protocol,
                transfer_bytes: flow.transfer_bytes,
                start,
                stop,
                idle_timeout_ms,
                forward_path: resolve_path(key("forward_path"), &flow.forward_path)?,
                return_path: resolve_path(key("return_path"), &flow.return_path)?,
                access_delay: millis_f64(flow.access_delay_ms),
                receive_timestamps: flow.receive_timestamps,
                queueing_time_frame: flow.queueing_time_frame,
                ack_frequency: flow.ack_frequency,
                full_size_packets: flow
                    .full_size_packets
                    .or(spec.full_size_packets)
                    .unwrap_or(true),
                ack_every: flow.ack_every,
                stream_window_bytes,
                connection_window_bytes,
                initial_window_packets: spec.initial_window_packets,
                tail_repeat: flow.tail_repeat,
                careful_resume: flow.careful_resume,
                careful_resume_loss: LossRule::from_word(&flow.careful_resume_loss).ok_or_else(
                    || {
                        format!(
                            "{}: '{}' is not a Careful Resume loss rule: expected one of {}",
                            key("careful_resume_loss"),
                            flow.careful_resume_loss,
                            LossRule::WORDS.join(", ")
                        )
                    },
                )?,
                after,
            });
        }
        let overridden = overrides.cc.is_some() || !overrides.cc_params.is_empty();
        if overridden && !flows.iter().any(|f| f.under_test) {
            return Err(
                "--cc/--cc-param given, but no flow is marked under_test = true".to_string(),
            );
        }

        let mut cross_traffic = Vec::new();
        for (name, cross) in &spec.cross_traffic {
            check_name("cross_traffic", name)?;
            let key = |field: &str| format!("cross_traffic.{name}.{field}");
            check_positive(&key("rate_mbps"), cross.rate_mbps)?;
            let kind = match cross.kind.as_str() {
                "cbr" => {
                    for (field, value) in [
                        ("mean_on_ms", cross.mean_on_ms),
                        ("mean_off_ms", cross.mean_off_ms),
                    ] {
                        if value.is_some() {
                            return Err(format!("{}: applies only to kind = \"vbr\"", key(field)));
                        }
                    }
                    let jitter = cross.jitter.unwrap_or(0.0);
                    if !(0.0..=1.0).contains(&jitter) {
                        return Err(format!(
                            "{}: expected a fraction from 0 to 1, got {jitter}",
                            key("jitter")
                        ));
                    }
                    CrossTrafficKind::ConstantBitRate { jitter }
                }
                "vbr" => {
                    if cross.jitter.is_some() {
                        return Err(format!("{}: applies only to kind = \"cbr\"", key("jitter")));
                    }
                    let on = cross.mean_on_ms.ok_or_else(|| {
                        format!("{}: required for kind = \"vbr\"", key("mean_on_ms"))
                    })?;
                    let off = cross.mean_off_ms.ok_or_else(|| {
                        format!("{}: required for kind = \"vbr\"", key("mean_off_ms"))
                    })?;
                    check_positive(&key("mean_on_ms"), on)?;
                    check_positive(&key("mean_off_ms"), off)?;
                    CrossTrafficKind::OnOff {
                        mean_on: on * 1e6,
                        mean_off: off * 1e6,
                    }
                }
                other => {
                    return Err(format!(
                        "{}: expected \"cbr\" or \"vbr\", got \"{other}\"",
                        key("kind")
                    ))
                }
            };
            if !(1..=65_507).contains(&cross.packet_bytes) {
                return Err(format!(
                    "{}: expected a whole number from 1 to 65507, got {}",
                    key("packet_bytes"),
                    cross.packet_bytes
                ));
            }
            check_non_negative(&key("start_s"), cross.start_s)?;
            let stop = check_stop(&key("stop_s"), cross.start_s, cross.stop_s)?;
            let rate_bps = mbps_to_bps(cross.rate_mbps);
            let start = seconds_f64(cross.start_s);
            // The phase: up to one datagram spacing (the source's period at
            // its rate), never past its stop time.
            let phase = if jitter.enabled && jitter.cross_phase {
                let wire_bytes = u64::from(cross.packet_bytes) + u64::from(spec.header_bytes);
                let spacing = serialisation_time(wire_bytes, rate_bps);
                let room = stop.map_or(spacing, |stop| spacing.min(stop.saturating_sub(start)));
                draw_below(seed, &format!("cross:{name}:phase"), room)
            } else {
                0
            };
            cross_traffic.push(CrossTrafficConfig {
                name: name.clone(),
                kind,
                rate_bps,
                packet_bytes: cross.packet_bytes,
                start: start + phase,
                stop,
                path: resolve_path(key("path"), &cross.path)?,
            });
        }
        // Flows and cross traffic share the file names of their CSVs.
        for flow in &flows {
            if cross_traffic.iter().any(|c| c.name == flow.name) {
                return Err(format!(
                    "cross_traffic.{0}: the name '{0}' is already a flow's; names must differ",
                    flow.name
                ));
            }
        }

        let mut changes = Vec::new();
        for (i, change) in spec.changes.iter().enumerate() {
            let key = |field: &str| format!("changes[{i}].{field}");
            check_non_negative(&key("at_s"), change.at_s)?;
            let link = link_names
                .iter()
                .position(|l| *l == change.link)
                .ok_or_else(|| {
                    format!(
                        "{}: unknown link '{}'; links of this scenario: {}",
                        key("link"),
                        change.link,
                        link_names.join(", ")
                    )
                })?;
            if let Some(rate) = change.rate_mbps {
                check_positive(&key("rate_mbps"), rate)?;
                if links[link].delivery_trace.is_some() {
                    return Err(format!(
                        "{}: link '{}' follows a rate trace; its rate cannot change",
                        key("rate_mbps"),
                        change.link
                    ));
                }
            }
            if let Some(delay) = change.delay_ms {
                check_non_negative(&key("delay_ms"), delay)?;
                if !links[link].delay_trace.is_empty() {
                    return Err(format!(
                        "{}: link '{}' follows a delay trace; put the change in the trace",
                        key("delay_ms"),
                        change.link
                    ));
                }
            }
            if let Some(blackout) = change.blackout_s {
                check_positive(&key("blackout_s"), blackout)?;
            }
            let loss = loss_model(
                &format!("changes[{i}]"),
                &LossSpec {
                    packet_loss: change.packet_loss,
                    bit_error_rate: change.bit_error_rate,
                    gilbert_elliott: change.gilbert_elliott,
                },
            )?;
            let loss = match (change.no_loss, loss) {
                (true, LossModel::None) => Some(LossModel::None),
                (true, _) => {
                    return Err(format!(
                        "{}: contradicts the loss model given in the same change",
                        key("no_loss")
                    ))
                }
                (false, LossModel::None) => None,
                (false, model) => Some(model),
            };
            if change.rate_mbps.is_none()
                && change.delay_ms.is_none()
                && change.blackout_s.is_none()
                && loss.is_none()
            {
                return Err(format!(
                    "changes[{i}]: changes nothing; expected one or more of rate_mbps, delay_ms, blackout_s, packet_loss, bit_error_rate, gilbert_elliott, no_loss"
                ));
            }
            changes.push(LinkChange {
                at: seconds_f64(change.at_s),
                link,
                rate_bps: change.rate_mbps.map(mbps_to_bps),
                delay: change.delay_ms.map(millis_f64),
                blackout: change.blackout_s.map(seconds_f64),
                loss,
            });
        }
        // Stable: changes at the same time apply in file order.
        changes.sort_by_key(|c| c.at);

        Ok(Scenario {
            source: path.to_path_buf(),
            description: spec.description,
            seed,
            duration,
            sample_interval: millis_f64(spec.sample_interval_ms).max(1),
            qlog: spec.qlog.unwrap_or(!qlog_off_by_default),
            qlog_off_by_default,
            max_datagram_bytes: spec.max_datagram_bytes,
            header_bytes: spec.header_bytes,
            links,
            flows,
            cross_traffic,
            changes,
        })
    }
}

/// `params` with `profile=PROFILE` in front when `cc` is an algorithm of
/// ours that has the parameter: the flow's own setting, later, wins.
fn with_profile(cc: &str, params: Vec<String>, profile: Option<&str>) -> Vec<String> {
    let declares_profile = vegas_cc::registry::find(cc)
        .is_some_and(|info| info.params.iter().any(|p| p.name == PROFILE.name));
    match profile {
        Some(profile) if declares_profile => std::iter::once(format!("{}={profile}", PROFILE.name))
            .chain(params)
            .collect(),
        _ => params,
    }
}

fn parse_spec_text(text: &str) -> Result<ScenarioSpec, String> {
    let deserializer =
        toml::Deserializer::parse(text).map_err(|e| describe_toml_error(&e, "", Some(text)))?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let path = e.path().to_string();
        describe_toml_error(e.inner(), &path, Some(text))
    })
}

/// After `--set` edits there is no text any more, so no line numbers.
fn parse_spec_value(table: toml::Table) -> Result<ScenarioSpec, String> {
    serde_path_to_error::deserialize(table).map_err(|e| {
        let path = e.path().to_string();
        describe_toml_error(e.inner(), &path, None)
    })
}

/// `KEY.PATH: what went wrong (line L, column C)`.
fn describe_toml_error(error: &toml::de::Error, path: &str, text: Option<&str>) -> String {
    let what = plain_types(error.message().trim_end());
    let mut message = if path.is_empty() || path == "." {
        what.to_string()
    } else {
        format!("{path}: {what}")
    };
    if let (Some(span), Some(text)) = (error.span(), text) {
        let (line, column) = line_and_column(text, span.start);
        message.push_str(&format!(" (line {line}, column {column})"));
    }
    message
}

/// serde names Rust types ("expected f64"); say what a scenario author
/// writes instead.
fn plain_types(message: &str) -> String {
    message
        .replace("expected f64", "expected a number")
        .replace("expected u64", "expected a whole number >= 0")
        .replace("expected u32", "expected a whole number >= 0")
        .replace("expected usize", "expected a whole number >= 0")
        .replace("expected a boolean", "expected true or false")
}

fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Applies `a.b.c=VALUE` to the parsed file; VALUE is TOML (`0.01`, `true`,
/// `"text"`, `[1, 2]`), and a bare word is taken as a string.
fn apply_set(table: &mut toml::Table, edit: &str) -> Result<(), String> {
    let (path, value) = edit
        .split_once('=')
        .ok_or_else(|| "expected KEY.PATH=VALUE".to_string())?;
    let keys: Vec<&str> = path.trim().split('.').map(str::trim).collect();
    if keys.iter().any(|k| k.is_empty()) {
        return Err(format!("'{path}' is not a dotted key path"));
    }
    let value = parse_toml_value(value.trim());
    let (last, parents) = keys
        .split_last()
        .ok_or_else(|| "empty key path".to_string())?;
    let mut current = table;
    for (depth, key) in parents.iter().enumerate() {
        let entry = current
            .entry(key.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        current = entry
            .as_table_mut()
            .ok_or_else(|| format!("'{}' is not a table", keys[..=depth].join(".")))?;
    }
    current.insert(last.to_string(), value);
    Ok(())
}

fn parse_toml_value(text: &str) -> toml::Value {
    let document = format!("value = {text}");
    toml::from_str::<toml::Table>(&document)
        .ok()
        .and_then(|mut t| t.remove("value"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// A uniform draw from `[0, bound)` nanoseconds of the stream `name` (0 if
/// `bound` is 0, without drawing).
fn draw_below(seed: u64, name: &str, bound: Nanos) -> Nanos {
    if bound == 0 {
        return 0;
    }
    let mut rng = RandomStream::named(seed, name);
    ((rng.next_f64() * bound as f64) as Nanos).min(bound - 1)
}

fn link_config(
    name: &str,
    link: &LinkSpec,
    jitter: &JitterSpec,
    scenario_dir: Option<&Path>,
) -> Result<LinkConfig, String> {
    check_name("links", name)?;
    let key = |field: &str| format!("links.{name}.{field}");
    let given = [
        link.rate_mbps.is_some(),
        link.rate_trace_file.is_some(),
        link.rate_trace.is_some(),
    ];
    let (rate_bps, delivery_trace) = match (link.rate_mbps, &link.rate_trace_file, &link.rate_trace)
    {
        _ if given.iter().filter(|g| **g).count() > 1 => {
            return Err(format!(
            "links.{name}: expected one of rate_mbps, rate_trace_file and rate_trace, got several"
        ))
        }
        (Some(rate), _, _) => {
            check_positive(&key("rate_mbps"), rate)?;
            (mbps_to_bps(rate), None)
        }
        (_, Some(file), _) => {
            let path = scenario_dir.unwrap_or(Path::new(".")).join(file);
            let trace = crate::trace::DeliveryTrace::load(&path)
                .map_err(|e| format!("{}: {e}", key("rate_trace_file")))?;
            (trace.mean_rate_bps(), Some(std::sync::Arc::new(trace)))
        }
        (_, _, Some(stamps)) => {
            let trace = crate::trace::DeliveryTrace::from_stamps(&key("rate_trace"), stamps)?;
            (trace.mean_rate_bps(), Some(std::sync::Arc::new(trace)))
        }
        (None, None, None) => {
            return Err(format!(
                "links.{name}: expected a rate, rate_mbps or rate_trace_file"
            ))
        }
    };
    check_non_negative(&key("delay_ms"), link.delay_ms)?;
    let delay_trace = match &link.delay_trace {
        Some(points) => crate::trace::DelayTrace::from_points(&key("delay_trace"), points)?,
        None => crate::trace::DelayTrace::default(),
    };
    let delay_jitter = link.delay_jitter_ms.unwrap_or(jitter.link_delay_ms);
    check_non_negative(&key("delay_jitter_ms"), delay_jitter)?;
    let queue_limit = match (link.queue_packets, link.queue_bytes) {
        (Some(p), None) if p > 0 => QueueLimit::Packets(p),
        (None, Some(b)) if b > 0 => QueueLimit::Bytes(b),
        (Some(_), None) => return Err(format!("{}: expected at least 1", key("queue_packets"))),
        (None, Some(_)) => return Err(format!("{}: expected at least 1", key("queue_bytes"))),
        (None, None) => {
            return Err(format!(
                "links.{name}: expected a queue limit, queue_packets or queue_bytes"
            ))
        }
        (Some(_), Some(_)) => {
            return Err(format!(
                "links.{name}: expected one queue limit, got both queue_packets and queue_bytes"
            ))
        }
    };
    Ok(LinkConfig {
        name: name.to_string(),
        rate_bps,
        delay: millis_f64(link.delay_ms),
        queue_limit,
        loss: loss_model(
            &format!("links.{name}"),
            &LossSpec {
                packet_loss: link.packet_loss,
                bit_error_rate: link.bit_error_rate,
                gilbert_elliott: link.gilbert_elliott,
            },
        )?,
        aqt: link.aqt,
        delay_jitter: if jitter.enabled {
            millis_f64(delay_jitter)
        } else {
            0
        },
        jitter_reorders: link.jitter_reorders,
        delay_trace,
        delivery_trace,
    })
}

fn loss_model(prefix: &str, loss: &LossSpec) -> Result<LossModel, String> {
    let given = [
        loss.packet_loss.is_some(),
        loss.bit_error_rate.is_some(),
        loss.gilbert_elliott.is_some(),
    ];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(format!(
            "{prefix}: expected at most one loss model of packet_loss, bit_error_rate, gilbert_elliott"
        ));
    }
    let probability = |field: &str, p: f64| -> Result<f64, String> {
        if p.is_finite() && (0.0..=1.0).contains(&p) {
            Ok(p)
        } else {
            Err(format!(
                "{prefix}.{field}: expected a probability from 0 to 1, got {p}"
            ))
        }
    };
    if let Some(p) = loss.packet_loss {
        return Ok(LossModel::PacketErrorRate(probability("packet_loss", p)?));
    }
    if let Some(ber) = loss.bit_error_rate {
        let ber = probability("bit_error_rate", ber)?;
        if ber >= 1.0 {
            return Err(format!(
                "{prefix}.bit_error_rate: expected less than 1, got {ber}"
            ));
        }
        return Ok(LossModel::BitErrorRate(ber));
    }
    if let Some(ge) = loss.gilbert_elliott {
        probability("gilbert_elliott.p_good_to_bad", ge.p_good_to_bad)?;
        probability("gilbert_elliott.p_bad_to_good", ge.p_bad_to_good)?;
        probability("gilbert_elliott.loss_in_good", ge.loss_in_good)?;
        probability("gilbert_elliott.loss_in_bad", ge.loss_in_bad)?;
        return Ok(LossModel::GilbertElliott(ge));
    }
    Ok(LossModel::None)
}

/// Names become file names of the outputs: keep them plain.
fn check_name(table: &str, name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        Ok(())
    } else {
        Err(format!(
            "{table}.{name}: expected a name of letters, digits, '-', '_' and '.' (it names output files)"
        ))
    }
}

/// Largest time a scenario may name (about 115 days), so that no sum of
/// times can overflow the nanosecond clock.
const MAX_SECONDS: f64 = 1e7;
/// Largest rate, 1 Tbit/s.
const MAX_RATE_MBPS: f64 = 1e6;

/// Upper bound of a key, by its unit suffix.
fn upper_bound(key: &str) -> f64 {
    if key.ends_with("_mbps") {
        MAX_RATE_MBPS
    } else if key.ends_with("_ms") {
        MAX_SECONDS * 1e3
    } else {
        MAX_SECONDS
    }
}

fn check_positive(key: &str, value: f64) -> Result<(), String> {
    let max = upper_bound(key);
    if value.is_finite() && value > 0.0 && value <= max {
        Ok(())
    } else {
        Err(format!(
            "{key}: expected a positive number up to {max}, got {value}"
        ))
    }
}

fn check_non_negative(key: &str, value: f64) -> Result<(), String> {
    let max = upper_bound(key);
    if value.is_finite() && (0.0..=max).contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{key}: expected a number from 0 to {max}, got {value}"
        ))
    }
}

fn check_stop(key: &str, start_s: f64, stop_s: Option<f64>) -> Result<Option<Nanos>, String> {
    match stop_s {
        None => Ok(None),
        Some(stop) if stop.is_finite() && stop > start_s && stop <= MAX_SECONDS => {
            Ok(Some(seconds_f64(stop)))
        }
        Some(stop) => Err(format!(
            "{key}: expected a time after start_s ({start_s}), got {stop}"
        )),
    }
}

fn mbps_to_bps(mbps: f64) -> u64 {
    ((mbps * 1e6).round() as u64).max(1)
}

//! The run's summary: `summary.json` and the table on the terminal.

use std::fmt::Write as _;

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// File name of the scenario.
    pub scenario: String,
    pub description: String,
    pub seed: u64,
    /// Simulated time at which the run ended.
    pub simulated_s: f64,
    /// Jain's fairness index of the QUIC flows' goodputs (null without flows).
    pub jain_index: Option<f64>,
    pub flows: Vec<FlowSummary>,
    pub cross_traffic: Vec<CrossTrafficSummary>,
    pub links: Vec<LinkSummary>,
    /// Wall-clock time the run took: the only value that differs between
    /// two runs of the same scenario and seed.
    pub wall_s: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub name: String,
    /// The algorithm's name.
    pub cc: String,
    /// The algorithm with every parameter's value.
    pub cc_detail: String,
    pub under_test: bool,
    pub protocol: String,
    pub start_s: f64,
    /// Body bytes over the time from the flow's start to its completion
    /// (or its stop, or the end of the run), in bit/s.
    pub goodput_bps: f64,
    pub bytes_delivered: u64,
    /// Stream bytes the server sent again.
    pub bytes_retransmitted: u64,
    pub packets_lost: u64,
    /// Time from the flow's start until the whole body had arrived and was
    /// verified; null if it did not.
    pub completion_s: Option<f64>,
    /// The body's SHA-256 matched (null: the transfer did not complete).
    pub verified: Option<bool>,
    /// Set when the client did not hash the body: an endless body (a flow
    /// without `transfer_bytes`) never completes, so no hash is checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_hash: Option<&'static str>,
    /// Mean of the server's smoothed RTT, sampled at every datagram it
    /// received after the handshake.
    pub mean_rtt_ms: Option<f64>,
    pub min_rtt_ms: Option<f64>,
    /// Mean time the data-direction datagrams waited in queues (measured by
    /// the simulator).
    pub mean_queue_delay_ms: Option<f64>,
    /// Mean accumulated queueing time (AQT) carried to the client and to the
    /// server; null when no AQT router is on that path.
    pub mean_aqt_to_client_ms: Option<f64>,
    pub mean_aqt_to_server_ms: Option<f64>,
    /// Our QUIC extensions in this flow.
    pub extensions: ExtensionSummary,
    /// Why the flow ended without completing, if it did.
    pub failure: Option<String>,
    /// Careful Resume, for flows that have it on (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub careful_resume: Option<CarefulResumeSummary>,
}

/// What a flow's server resumed and what it measured for the next one.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct CarefulResumeSummary {
    /// saved_cwnd the connection started with (null: nothing saved).
    pub resumed_cwnd_bytes: Option<u64>,
    pub resumed_rtt_ms: Option<f64>,
    /// What it measured (bytes acknowledged per minimum RTT), saved when it
    /// finished; null when not worth saving.
    pub observed_cwnd_bytes: Option<u64>,
}

/// Our QUIC extensions in a flow: what both endpoints offered (the flow's
/// switches), and what reached the data sender's congestion controller (only
/// our plug-in controllers take these; with quiche's own reno, cubic and
/// bbr2 the counts stay zero).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct ExtensionSummary {
    pub receive_timestamps: bool,
    pub queueing_time_frame: bool,
    /// Receive times of acknowledged packets handed to the server's
    /// controller.
    pub receive_times_handed: u64,
    /// AQT-echo values (forward queueing times the client echoed in
    /// QUEUEING_TIME frames) handed to the server's controller.
    pub forward_queueing_handed: u64,
    /// AQT values of the client's ACK-bearing datagrams (backward queueing
    /// times) handed to the server's controller.
    pub backward_queueing_handed: u64,
    /// ACK frequency offered by both endpoints (the flow's switch).
    pub ack_frequency: bool,
    /// ACK_FREQUENCY frames the server (data sender) sent, and the last
    /// Ack-Eliciting Threshold it asked for.
    pub ack_frequency_frames_sent: u64,
    pub ack_eliciting_threshold: Option<u64>,
    /// ACK frames the client (data receiver) sent in 1-RTT packets.
    pub receiver_acks_sent: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CrossTrafficSummary {
    pub name: String,
    pub kind: String,
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    /// Delivered wire bytes over the source's active time, in bit/s.
    pub delivered_bps: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkSummary {
    pub name: String,
    /// Fraction of the time from the first flow's start to the end of the
    /// run during which the transmitter was busy.
    pub utilization: f64,
    pub transmitted_bytes: u64,
    pub transmitted_packets: u64,
    pub dropped_packets: u64,
    pub lost_packets: u64,
    pub blackout_packets: u64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    pub mean_queue_delay_ms: Option<f64>,
}

/// Jain's fairness index: (sum x)^2 / (n sum x^2); 1 when all are equal.
pub fn jain_index(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let sum: f64 = values.iter().sum();
    let sum_squares: f64 = values.iter().map(|x| x * x).sum();
    if sum_squares == 0.0 {
        return Some(1.0);
    }
    Some(sum * sum / (values.len() as f64 * sum_squares))
}

fn or_dash(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.decimals$}"))
}

/// The table printed at the end of a run.
pub fn table(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16} {:<10} {:>10} {:>11} {:>10} {:>10} {:>9} {:>9} {:>8}",
        "flow",
        "cc",
        "goodput",
        "delivered",
        "retrans",
        "complete",
        "mean rtt",
        "queueing",
        "verified"
    );
    let _ = writeln!(
        out,
        "{:<16} {:<10} {:>10} {:>11} {:>10} {:>10} {:>9} {:>9} {:>8}",
        "", "", "Mbit/s", "MB", "KB", "s", "ms", "ms", ""
    );
    for f in &summary.flows {
        let _ = writeln!(
            out,
            "{:<16} {:<10} {:>10.3} {:>11.3} {:>10.1} {:>10} {:>9} {:>9} {:>8}",
            f.name,
            f.cc,
            f.goodput_bps / 1e6,
            f.bytes_delivered as f64 / 1e6,
            f.bytes_retransmitted as f64 / 1e3,
            or_dash(f.completion_s, 2),
            or_dash(f.mean_rtt_ms, 1),
            or_dash(f.mean_queue_delay_ms, 1),
            f.verified.map_or("-", |v| if v { "yes" } else { "NO" }),
        );
    }
    for c in &summary.cross_traffic {
        let _ = writeln!(
            out,
            "{:<16} {:<10} {:>10.3} {:>11.3}",
            c.name,
            c.kind,
            c.delivered_bps / 1e6,
            c.bytes_delivered as f64 / 1e6
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<16} {:>11} {:>10} {:>8} {:>8} {:>10}",
        "link", "utilization", "sent MB", "dropped", "lost", "max queue"
    );
    for l in &summary.links {
        let _ = writeln!(
            out,
            "{:<16} {:>10.1}% {:>10.3} {:>8} {:>8} {:>10}",
            l.name,
            l.utilization * 100.0,
            l.transmitted_bytes as f64 / 1e6,
            l.dropped_packets,
            l.lost_packets + l.blackout_packets,
            l.max_queue_packets
        );
    }
    let _ = writeln!(out);
    let speedup = if summary.wall_s > 0.0 {
        format!("{:.0}x real time", summary.simulated_s / summary.wall_s)
    } else {
        "-".to_string()
    };
    let _ = writeln!(
        out,
        "jain index {}   simulated {:.3} s   wall {:.3} s   ({speedup})",
        or_dash(summary.jain_index, 4),
        summary.simulated_s,
        summary.wall_s
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain() {
        assert_eq!(jain_index(&[]), None);
        assert!((jain_index(&[1.0, 1.0, 1.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
    }
}

// quiche-vegas: the congestion-control plug-in seam.
//
// This file is ours. It is compiled as part of quiche (module
// `recovery::congestion::plugin`, pulled in by patches/0001-*.patch) and
// translates quiche's recovery types into the events of our `vegas-cc` crate.
// No algorithm logic lives here: the controller, its pacing, rollback and
// persistent-congestion detection are in `vegas_cc::ControllerHost`.

use std::time::Duration;
use std::time::Instant;

use quic_ext::AckReport;
use vegas_cc::AckEvent;
use vegas_cc::AckedPacket;
use vegas_cc::ControllerHost;
use vegas_cc::ControllerSpec;
use vegas_cc::PacketSent;
use vegas_cc::RttSnapshot;
use vegas_cc::WindowConfig;

use super::recovery::Acked;
use super::Congestion;
use super::CongestionControlOps;
use crate::recovery::rtt::RttStats;
use crate::recovery::Sent;

/// Per-path state of a plug-in controller, held by quiche's `Congestion`.
pub(crate) struct Plugin {
    host: ControllerHost,
    /// ACK delay of the ACK frame being processed (set before the acked
    /// packets are handed over; quiche's `on_packets_acked` does not carry it).
    ack_delay: Duration,
    /// What the peer reported about the packets of the ACK being processed
    /// (receive times, AQT-echo) and the AQT of the datagram carrying it,
    /// filled in by the extensions seam (`quiche-seam/extensions.rs`).
    ack_report: AckReport,
    /// Reused for every ACK so the per-ACK path does not allocate.
    acked: Vec<AckedPacket>,
}

impl Plugin {
    pub(crate) fn new(
        spec: &ControllerSpec, max_datagram_size: usize,
        initial_cwnd_packets: usize,
    ) -> Self {
        Plugin {
            host: ControllerHost::new(spec, WindowConfig {
                max_datagram_size,
                initial_cwnd_packets,
            }),
            ack_delay: Duration::ZERO,
            ack_report: AckReport::default(),
            acked: Vec::new(),
        }
    }
}

pub(crate) static PLUGIN: CongestionControlOps = CongestionControlOps {
    on_init,
    on_packet_sent,
    on_packets_acked,
    congestion_event,
    checkpoint,
    rollback,
    #[cfg(feature = "qlog")]
    state_str,
    debug_fmt,
};

/// Mirrors the controller's window into the fields quiche reads.
fn sync_window(r: &mut Congestion) {
    let Some(p) = r.plugin.as_ref() else { return };
    let (cwnd, ssthresh) = (p.host.cwnd(), p.host.ssthresh());
    r.congestion_window = cwnd;
    if ssthresh != r.ssthresh.get() {
        r.ssthresh.update(ssthresh, false);
    }
}

fn on_init(r: &mut Congestion) {
    sync_window(r);
}

// quiche's hook carries no packet number; `sent` below is called instead.
fn on_packet_sent(
    _r: &mut Congestion, _sent_bytes: usize, _bytes_in_flight: usize,
    _now: Instant,
) {
}

/// Called by `Congestion::on_packet_sent` for in-flight packets.
pub(crate) fn sent(
    r: &mut Congestion, pkt: &Sent, sent_bytes: usize, bytes_in_flight: usize,
    now: Instant,
) {
    let Some(p) = r.plugin.as_mut() else { return };
    p.host.on_packet_sent(&PacketSent {
        pkt_num: pkt.pkt_num,
        size: sent_bytes,
        time_sent: now,
        bytes_in_flight,
    });
    // Careful Resume jumps the window when a packet fills it. Without it the
    // window changes only on ACKs and losses, as before.
    if p.host.careful_resume().is_some() {
        sync_window(r);
    }
}

/// What the host observed of the path for Careful Resume (bytes
/// acknowledged per minimum RTT), as quiche's `PathStats.max_bandwidth`.
pub(crate) fn max_bandwidth(
    r: &Congestion,
) -> Option<crate::recovery::bandwidth::Bandwidth> {
    let observed = r.plugin.as_ref()?.host.observed_path()?;
    let bytes = usize::try_from(observed.cwnd_bytes).ok()?;
    Some(crate::recovery::bandwidth::Bandwidth::from_bytes_and_time_delta(
        bytes,
        observed.rtt,
    ))
}

/// Called by `LegacyRecovery::on_ack_received` with the frame's ACK delay in
/// microseconds (already scaled by the peer's ack_delay_exponent).
pub(crate) fn set_ack_delay(r: &mut Congestion, ack_delay_us: u64) {
    if let Some(p) = r.plugin.as_mut() {
        p.ack_delay = Duration::from_micros(ack_delay_us);
    }
}

fn on_packets_acked(
    r: &mut Congestion, bytes_in_flight: usize, packets: &mut Vec<Acked>,
    now: Instant, rtt_stats: &RttStats,
) {
    let Some(p) = r.plugin.as_mut() else { return };
    let Plugin {
        acked, ack_report, ..
    } = p;
    acked.clear();
    // Ascending packet numbers, as the report's checks expect.
    acked.extend(packets.drain(..).map(|a| AckedPacket {
        pkt_num: a.pkt_num,
        size: a.size,
        time_sent: a.time_sent,
        time_acked: now,
        rtt: a.rtt,
        receive_time: ack_report.receive_time(a.pkt_num, a.time_sent, a.rtt),
        forward_queueing: ack_report.forward_queueing(a.pkt_num, a.rtt),
    }));
    let largest_rtt = acked.iter().map(|a| a.rtt).max().unwrap_or_default();
    let backward_queueing = ack_report.backward_queueing(largest_rtt);
    ack_report.clear_packet_reports();
    p.host.set_max_ack_delay(rtt_stats.max_ack_delay);
    let event = AckEvent {
        now,
        acked: &p.acked,
        ack_delay: p.ack_delay,
        rtt: RttSnapshot {
            min_rtt: rtt_stats.min_rtt().unwrap_or(rtt_stats.latest_rtt),
            smoothed_rtt: rtt_stats.rtt(),
            latest_rtt: rtt_stats.latest_rtt,
            rttvar: rtt_stats.rttvar,
        },
        bytes_in_flight,
        // The host decides per packet at send time (RFC 9002 section 7.8);
        // quiche's own flag, taken at ACK time, misreads pacing.
        app_limited: false,
        backward_queueing,
    };
    p.host.on_ack(&event);
    sync_window(r);
}

fn congestion_event(
    r: &mut Congestion, bytes_in_flight: usize, lost_bytes: usize,
    largest_lost_pkt: &Sent, now: Instant,
) {
    let before = r.congestion_window;
    let Some(p) = r.plugin.as_mut() else { return };
    p.host.on_congestion_event(
        now,
        lost_bytes,
        largest_lost_pkt.pkt_num,
        largest_lost_pkt.time_sent,
        bytes_in_flight,
    );
    sync_window(r);
    // quiche checkpoints the window only for losses after the start of the
    // current recovery period, so that a spurious loss undoes one reaction.
    if r.congestion_window < before {
        r.congestion_recovery_start_time = Some(now);
    }
}

fn checkpoint(r: &mut Congestion) {
    if let Some(p) = r.plugin.as_mut() {
        p.host.checkpoint();
    }
}

fn rollback(r: &mut Congestion) -> bool {
    let Some(p) = r.plugin.as_mut() else {
        return false;
    };
    let undone = p.host.rollback();
    sync_window(r);
    undone
}

/// The extensions seam's reports for the next ACK, when a plug-in controller
/// runs on this path.
pub(crate) fn ack_report_mut(r: &mut Congestion) -> Option<&mut AckReport> {
    r.plugin.as_mut().map(|p| &mut p.ack_report)
}

pub(crate) fn ack_report(r: &Congestion) -> Option<&AckReport> {
    r.plugin.as_ref().map(|p| &p.ack_report)
}

/// Called when PMTUD changes the path's maximum datagram size.
pub(crate) fn on_max_datagram_size(r: &mut Congestion, size: usize) {
    if let Some(p) = r.plugin.as_mut() {
        p.host.on_max_datagram_size(size);
    }
    sync_window(r);
}

/// When the packet just sent should leave: the controller's pacing, or `now`.
pub(crate) fn packet_send_time(r: &Congestion, now: Instant) -> Instant {
    r.plugin
        .as_ref()
        .map_or(now, |p| p.host.packet_send_time(now))
}

/// When the next packet should be built: the controller's pacing holds it
/// back until then. Applications that honour this (quiche's
/// `Connection::get_next_release_time`) send packets stamped with the time
/// they leave, so pacing does not add to RTT samples.
pub(crate) fn next_release_decision(
    r: &Congestion,
) -> crate::recovery::ReleaseDecision {
    use crate::recovery::ReleaseDecision;
    use crate::recovery::ReleaseTime;

    let time = r
        .plugin
        .as_ref()
        .and_then(|p| p.host.next_release_time())
        .map_or(ReleaseTime::Immediate, ReleaseTime::At);
    ReleaseDecision {
        time,
        allow_burst: false,
    }
}

#[cfg(feature = "qlog")]
pub(crate) fn pacing_rate(r: &Congestion) -> Option<u64> {
    r.plugin.as_ref().and_then(|p| p.host.pacing_rate())
}

#[cfg(feature = "qlog")]
fn state_str(r: &Congestion, _now: Instant) -> &'static str {
    r.plugin
        .as_ref()
        .map_or("unknown", |p| p.host.state().as_str())
}

/// Adds the controller's changed internals to quiche's metrics event, or
/// makes an event of their own when quiche's metrics did not change.
#[cfg(feature = "qlog")]
pub(crate) fn qlog_metrics(
    r: &mut Congestion, event: Option<qlog::events::EventData>,
) -> Option<qlog::events::EventData> {
    use qlog::events::quic::RecoveryMetricsUpdated;
    use qlog::events::EventData;
    use vegas_cc::InternalValue;

    let Some(p) = r.plugin.as_mut() else {
        return event;
    };
    let changed = p.host.changed_internals();
    if changed.is_empty() {
        return event;
    }
    let mut event = event.unwrap_or_else(|| {
        EventData::QuicMetricsUpdated(RecoveryMetricsUpdated::default())
    });
    if let EventData::QuicMetricsUpdated(m) = &mut event {
        for &(name, value) in changed {
            let json = match value {
                InternalValue::Float(v) => serde_json::Number::from_f64(v)
                    .map_or(serde_json::Value::Null, serde_json::Value::Number),
                InternalValue::Int(v) => serde_json::Value::from(v),
                InternalValue::Text(v) => serde_json::Value::from(v),
            };
            m.ex_data.insert(name.to_string(), json);
        }
    }
    Some(event)
}

fn debug_fmt(r: &Congestion, f: &mut std::fmt::Formatter) -> std::fmt::Result {
    match r.plugin.as_ref() {
        Some(p) => write!(f, "plugin={:?} ", p.host.controller()),
        None => Ok(()),
    }
}

// quiche-vegas: the congestion-control plug-in seam.
//
// This file is ours. It is compiled as part of quiche (module
// `recovery::congestion::plugin`, pulled in by patches/0001-*.patch) and
// translates quiche's recovery types into the events of our `vegas-cc` crate.
// No algorithm logic lives here: the controller, its pacing, rollback and
// persistent-congestion detection are in `vegas_cc::ControllerHost`.

use std::time::Duration;
use std::time::Instant;

use vegas_cc::AckReceived;
use vegas_cc::AckedPacket;
use vegas_cc::ControllerHost;
use vegas_cc::ControllerSpec;
use vegas_cc::PacketSent;
use vegas_cc::PeerReport;
use vegas_cc::RttSnapshot;
use vegas_cc::WindowConfig;

use super::recovery::Acked;
use super::Congestion;
use super::CongestionControlOps;
use crate::recovery::rtt::RttStats;
use crate::recovery::Sent;

/// Per-path state of a plug-in controller, held by quiche's `Congestion`.
/// The window lives here only: quiche reads it through [`cwnd`] and
/// [`ssthresh`].
pub(crate) struct Plugin {
    host: ControllerHost,
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
        }
    }
}

/// `Config::set_cc_algorithm_name`'s text as one of our controllers:
/// `NAME` or `NAME(KEY=VALUE ...)` ([`vegas_cc::registry::parse_selection`],
/// tested there). `None`: NAME is not ours (quiche's own, or unknown).
pub(crate) fn controller_spec(
    text: &str,
) -> Option<Result<ControllerSpec, vegas_cc::SpecError>> {
    vegas_cc::registry::parse_selection(text)
}

pub(crate) static PLUGIN: CongestionControlOps = CongestionControlOps {
    on_init,
    on_packet_sent,
    on_packets_acked: on_packets_acked_without_report,
    congestion_event,
    checkpoint,
    rollback,
    #[cfg(feature = "qlog")]
    state_str,
    debug_fmt,
};

/// The congestion window, when a plug-in controller runs on this path.
pub(crate) fn cwnd(r: &Congestion) -> Option<usize> {
    r.plugin.as_ref().map(|p| p.host.cwnd())
}

/// The slow-start threshold, when a plug-in controller runs on this path.
pub(crate) fn ssthresh(r: &Congestion) -> Option<usize> {
    r.plugin.as_ref().map(|p| p.host.ssthresh())
}

fn on_init(_r: &mut Congestion) {}

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

/// What the plug-in's judge handed over and refused of the peer's reports.
pub(crate) fn judged_counts(
    r: &Congestion,
) -> Option<vegas_cc::shared::peer_reports::JudgedCounts> {
    r.plugin.as_ref().map(|p| p.host.judged_counts())
}

/// Called by `LegacyRecovery::on_ack_received` instead of
/// `Congestion::on_packets_acked` when a plug-in controller runs on this
/// path: the newly acknowledged `packets` with the ACK's delay (already
/// scaled by the peer's ack_delay_exponent) and the peer's report.
#[allow(clippy::too_many_arguments)]
pub(crate) fn on_ack(
    r: &mut Congestion, bytes_in_flight: usize, packets: &mut Vec<Acked>,
    rtt_stats: &RttStats, now: Instant, ack_delay: Duration,
    report: &PeerReport<'_>,
) {
    // quiche's delivery rate, for `PathStats.delivery_rate`.
    for pkt in packets.iter() {
        r.delivery_rate.update_rate_sample(pkt, now);
    }
    r.delivery_rate.generate_rate_sample(*rtt_stats.min_rtt);
    let Some(p) = r.plugin.as_mut() else { return };
    let ack = AckReceived {
        now,
        ack_delay,
        max_ack_delay: rtt_stats.max_ack_delay,
        rtt: RttSnapshot {
            min_rtt: rtt_stats.min_rtt().unwrap_or(rtt_stats.latest_rtt),
            smoothed_rtt: rtt_stats.rtt(),
            latest_rtt: rtt_stats.latest_rtt,
            rttvar: rtt_stats.rttvar,
        },
        bytes_in_flight,
        report: *report,
    };
    // Ascending packet numbers, as the judge expects. Read in place (an
    // `Acked` is large: moving each out costs a copy) and with quiche's own
    // RTT sample, not one computed again from the two instants.
    p.host
        .on_ack_received(&ack, packets.iter().map(|a| AckedPacket {
            pkt_num: a.pkt_num,
            size: a.size,
            time_sent: a.time_sent,
            // The host's walk sets it from its send record.
            sent_nanos: 0,
            time_acked: now,
            rtt: a.rtt,
            receive_time: None,
            clock_epoch: 0,
            forward_queueing: None,
        }));
    packets.clear();
}

/// quiche's own hook, for callers without an ACK frame at hand (none in
/// the connection: `LegacyRecovery` calls [`on_ack`]).
fn on_packets_acked_without_report(
    r: &mut Congestion, bytes_in_flight: usize, packets: &mut Vec<Acked>,
    now: Instant, rtt_stats: &RttStats,
) {
    on_ack(
        r,
        bytes_in_flight,
        packets,
        rtt_stats,
        now,
        Duration::ZERO,
        &PeerReport::default(),
    );
}

fn congestion_event(
    r: &mut Congestion, bytes_in_flight: usize, lost_bytes: usize,
    largest_lost_pkt: &Sent, now: Instant,
) {
    let Some(p) = r.plugin.as_mut() else { return };
    // The host keeps the recovery period and saves the window for a
    // rollback; quiche's `congestion_recovery_start_time` stays unset, so
    // quiche asks for a checkpoint before every event and [`checkpoint`]
    // leaves the decision to the host.
    p.host.on_congestion_event(
        now,
        lost_bytes,
        largest_lost_pkt.pkt_num,
        largest_lost_pkt.time_sent,
        bytes_in_flight,
    );
}

fn checkpoint(_r: &mut Congestion) {}

fn rollback(r: &mut Congestion) -> bool {
    let Some(p) = r.plugin.as_mut() else {
        return false;
    };
    p.host.rollback()
}

/// Called when PMTUD changes the path's maximum datagram size.
pub(crate) fn on_max_datagram_size(r: &mut Congestion, size: usize) {
    if let Some(p) = r.plugin.as_mut() {
        p.host.on_max_datagram_size(size);
    }
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

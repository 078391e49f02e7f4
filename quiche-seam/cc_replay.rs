// quiche-vegas: the benchmark seam, quiche's recovery driven by a recorded
// trace.
//
// This file is ours. It is compiled as part of quiche (module
// `quiche::cc_replay`, pulled in by patches/0009-*.patch) so that a benchmark
// can feed one path's `Recovery` the packets a sender sent and the ACK frames
// it received, with no connection, TLS or packet parsing around it. Every
// algorithm, quiche's own and ours (through the plug-in seam of
// `plugin.rs`), is driven through the same calls the connection makes:
// `on_packet_sent`, `on_ack_received`, `on_loss_detection_timeout` and, with
// qlog on, `maybe_qlog` after each of them. So what a benchmark counts per
// event is loss detection, RTT estimation and the controller, as a quiche
// server pays them per 1-RTT packet sent and per ACK frame received.

use std::time::Duration;
use std::time::Instant;

use crate::packet::Epoch;
use crate::ranges::RangeSet;
use crate::recovery::HandshakeStatus;
use crate::recovery::Recovery;
use crate::recovery::RecoveryConfig;
use crate::recovery::RecoveryOps;
use crate::recovery::Sent;

/// Reported by [`Replay::ack`] and [`Replay::timers`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayOutcome {
    /// Packets declared lost while handling the event.
    pub lost_packets: usize,
}

/// One path's recovery, fed a trace in time order.
pub struct Replay {
    recovery: Recovery,
    start: Instant,
    /// The receive times of the ACK being replayed, sorted as the
    /// connection hands them over; reused for every ACK.
    receive_times: Vec<vegas_cc::PeerStamp>,
    #[cfg(feature = "qlog")]
    qlog: Option<qlog::streamer::QlogStreamer>,
}

/// After the handshake, as the trace's 1-RTT packets are.
const ESTABLISHED: HandshakeStatus = HandshakeStatus {
    has_handshake_keys: true,
    peer_verified_address: true,
    completed: true,
};

/// Timer expiries handled before one event at most; more means the timer
/// does not move forward, which the connection would not survive either.
const MAX_TIMEOUTS_PER_EVENT: usize = 64;

impl Replay {
    /// A path's recovery as `config` makes it (the algorithm and its
    /// parameters, pacing, HyStart, ...), with the peer's `max_ack_delay`.
    /// With `qlog`, every event is followed by `maybe_qlog` into a streamer
    /// at level Extra whose output is thrown away, as a connection with
    /// QLOGDIR set does (the output itself costs a writer, not measured).
    pub fn new(
        config: &crate::Config, max_ack_delay: Duration, qlog: bool,
    ) -> Self {
        let mut recovery_config = RecoveryConfig::from_config(config);
        recovery_config.max_ack_delay = max_ack_delay;
        let start = Instant::now();
        #[cfg(not(feature = "qlog"))]
        let _ = qlog;
        Replay {
            recovery: Recovery::new_with_config(&recovery_config),
            start,
            receive_times: Vec::new(),
            #[cfg(feature = "qlog")]
            qlog: qlog.then(|| discarding_streamer(start)),
        }
    }

    fn at(&self, offset: Duration) -> Instant {
        self.start + offset
    }

    /// A 1-RTT packet of `size` bytes left at `at` (since the trace's start).
    pub fn sent(
        &mut self, at: Duration, pkt_num: u64, size: usize, ack_eliciting: bool,
    ) {
        let now = self.at(at);
        let pkt = Sent {
            pkt_num,
            frames: Default::default(),
            time_sent: now,
            time_acked: None,
            time_lost: None,
            size: if ack_eliciting { size } else { 0 },
            ack_eliciting,
            in_flight: ack_eliciting,
            delivered: 0,
            delivered_time: now,
            first_sent_time: now,
            is_app_limited: false,
            tx_in_flight: 0,
            lost: 0,
            has_data: ack_eliciting,
            is_pmtud_probe: false,
        };
        self.recovery
            .on_packet_sent(pkt, Epoch::Application, ESTABLISHED, now, "");
        self.maybe_qlog(now);
    }

    /// An ACK frame for the 1-RTT space arrived at `at`: `ranges` are
    /// inclusive packet-number ranges, `ack_delay` already scaled by the
    /// peer's exponent, `receive_times` the peer's receive time per packet
    /// (the receive-timestamps extension; empty without it).
    pub fn ack(
        &mut self, at: Duration, ack_delay: Duration, ranges: &[(u64, u64)],
        receive_times: &[quic_ext::PacketReceiveTime],
    ) -> crate::Result<ReplayOutcome> {
        let now = self.at(at);
        let mut set = RangeSet::default();
        for &(low, high) in ranges {
            set.insert(low..high.saturating_add(1));
        }
        crate::extensions::peer_stamps(
            &mut self.receive_times,
            receive_times
                .iter()
                .map(|t| (t.packet_number, t.receive_time)),
        );
        let report = vegas_cc::PeerReport {
            receive_times: &self.receive_times,
            ..Default::default()
        };
        let outcome = self.recovery.on_ack_received_with_report(
            &set,
            ack_delay.as_micros() as u64,
            &report,
            Epoch::Application,
            ESTABLISHED,
            now,
            None,
            "",
        )?;
        self.maybe_qlog(now);
        Ok(ReplayOutcome {
            lost_packets: outcome.lost_packets,
        })
    }

    /// Fires the loss-detection timer as often as it expired by `at`, as
    /// the connection's timeout handling does.
    pub fn timers(&mut self, at: Duration) -> ReplayOutcome {
        let limit = self.at(at);
        let mut lost_packets = 0;
        for _ in 0..MAX_TIMEOUTS_PER_EVENT {
            match self.recovery.loss_detection_timer() {
                Some(timer) if timer <= limit => {
                    let outcome = self.recovery.on_loss_detection_timeout(
                        ESTABLISHED,
                        timer,
                        "",
                    );
                    lost_packets += outcome.lost_packets;
                    self.maybe_qlog(timer);
                },
                _ => break,
            }
        }
        ReplayOutcome { lost_packets }
    }

    pub fn cwnd(&self) -> usize {
        self.recovery.cwnd()
    }

    pub fn bytes_in_flight(&self) -> usize {
        self.recovery.bytes_in_flight()
    }

    fn maybe_qlog(&mut self, now: Instant) {
        #[cfg(feature = "qlog")]
        if let Some(q) = self.qlog.as_mut() {
            self.recovery.maybe_qlog(q, now);
        }
        #[cfg(not(feature = "qlog"))]
        let _ = now;
    }
}

#[cfg(feature = "qlog")]
fn discarding_streamer(start: Instant) -> qlog::streamer::QlogStreamer {
    let trace = qlog::TraceSeq::new(
        Some("cc replay".to_string()),
        None,
        None,
        Some(qlog::VantagePoint {
            name: None,
            ty: qlog::VantagePointType::Server,
            flow: None,
        }),
        vec![],
    );
    let mut streamer = qlog::streamer::QlogStreamer::new(
        Some("cc replay".to_string()),
        None,
        start,
        trace,
        qlog::events::EventImportance::Extra,
        qlog::streamer::EventTimePrecision::MicroSeconds,
        Box::new(std::io::sink()),
    );
    streamer.start_log().ok();
    streamer
}

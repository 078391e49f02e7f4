//! The data sender's side: what the peer reported about the packets of one
//! ACK, held until the stack hands that ACK to the congestion controller, and
//! checked on the way so that a peer whose clock steps, or who lies, cannot
//! feed the controller impossible values.
//!
//! Checks (each rejected value becomes "unknown" for the controller, which
//! then behaves as without the extension for that packet), both from
//! `vegas_cc::shared::peer_reports`, where the reasoning is:
//! - receive times: between two consecutive packets handed over, the change
//!   in one-way delay must pass the one plausibility rule for peer stamps,
//!   `−RTT_m − g ≤ (R_n − R_m) − (S_n − S_m) ≤ RTT_n + g` (`g` the 1 ms
//!   granularity), because both one-way delays lie between 0 and their
//!   packet's RTT. A receive time outside that is a clock that jumped forward
//!   or went backwards. The [`REANCHOR_AFTER`]-th impossible value in a row
//!   is believed (the clock stepped) and becomes the new reference.
//! - queueing times (AQT and AQT-echo) are parts of a round trip: one larger
//!   than the RTT sample it belongs to is impossible. (What a possible but
//!   exaggerated one can do is bounded later, by the controller host, with
//!   the sender's RTT estimates.)

use std::time::{Duration, Instant};

use vegas_cc::shared::peer_reports::{self, DelaySample, GRANULARITY};

use crate::ack_receive_timestamps::PacketReceiveTime;
use crate::queueing_time::QueueingTimeEntry;

/// The how-many-th impossible receive time in a row is believed: the peer's
/// clock is then taken to have stepped.
pub const REANCHOR_AFTER: u32 = 8;

/// What was handed to the controller, and what was refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandedCounts {
    pub receive_times: u64,
    pub forward_queueing: u64,
    pub backward_queueing: u64,
    pub rejected_receive_times: u64,
    pub rejected_forward_queueing: u64,
    pub rejected_backward_queueing: u64,
}

#[derive(Clone, Copy, Debug)]
struct Anchor {
    receive_time: Duration,
    time_sent: Instant,
    rtt: Duration,
}

/// Reports about the packets one ACK acknowledges, for the controller.
#[derive(Clone, Debug, Default)]
pub struct AckReport {
    /// Sorted by packet number.
    receive_times: Vec<PacketReceiveTime>,
    /// Sorted by packet number.
    forward_queueing: Vec<QueueingTimeEntry>,
    /// AQT of the datagram that carried the ACK being processed.
    datagram_queueing: Option<Duration>,
    anchor: Option<Anchor>,
    consecutive_rejections: u32,
    pub handed: HandedCounts,
}

impl AckReport {
    /// The receive times an ACK_RECEIVE_TIMESTAMPS frame reported.
    pub fn set_receive_times(&mut self, times: &[PacketReceiveTime]) {
        self.receive_times.clear();
        self.receive_times.extend_from_slice(times);
        self.receive_times.sort_by_key(|t| t.packet_number);
        self.receive_times.dedup_by_key(|t| t.packet_number);
    }

    /// The forward queueing times a QUEUEING_TIME frame echoed.
    pub fn set_forward_queueing(&mut self, entries: &[QueueingTimeEntry]) {
        self.forward_queueing.clear();
        self.forward_queueing.extend_from_slice(entries);
        self.forward_queueing.sort_by_key(|e| e.packet_number);
        self.forward_queueing.dedup_by_key(|e| e.packet_number);
    }

    /// The AQT of the datagram being processed (`None`: no AQT-enabled router
    /// reported one).
    pub fn set_datagram_queueing(&mut self, queueing: Option<Duration>) {
        self.datagram_queueing = queueing;
    }

    /// Forgets the per-packet reports (after their ACK was handled).
    pub fn clear_packet_reports(&mut self) {
        self.receive_times.clear();
        self.forward_queueing.clear();
    }

    /// Whether anything per packet is waiting for its ACK.
    pub fn has_packet_reports(&self) -> bool {
        !self.receive_times.is_empty() || !self.forward_queueing.is_empty()
    }

    /// The receive time of `packet_number` (peer clock, since its basis), if
    /// reported and plausible. Call in ascending packet-number order, once
    /// per acknowledged packet, with the packet's send time and RTT sample.
    pub fn receive_time(
        &mut self,
        packet_number: u64,
        time_sent: Instant,
        rtt: Duration,
    ) -> Option<Duration> {
        let i = self
            .receive_times
            .binary_search_by_key(&packet_number, |t| t.packet_number)
            .ok()?;
        let receive_time = self.receive_times[i].receive_time;
        let current = Anchor {
            receive_time,
            time_sent,
            rtt,
        };
        if let Some(anchor) = self.anchor {
            if !plausible(anchor, current) && self.consecutive_rejections + 1 < REANCHOR_AFTER {
                self.consecutive_rejections += 1;
                self.handed.rejected_receive_times += 1;
                return None;
            }
        }
        self.consecutive_rejections = 0;
        self.anchor = Some(current);
        self.handed.receive_times += 1;
        Some(receive_time)
    }

    /// The forward queueing time (AQT-echo) of `packet_number`, if echoed
    /// and no larger than the packet's RTT sample `rtt`.
    pub fn forward_queueing(&mut self, packet_number: u64, rtt: Duration) -> Option<Duration> {
        let i = self
            .forward_queueing
            .binary_search_by_key(&packet_number, |e| e.packet_number)
            .ok()?;
        let queueing = self.forward_queueing[i].forward_queueing();
        if !peer_reports::queueing_possible(queueing, rtt) {
            self.handed.rejected_forward_queueing += 1;
            return None;
        }
        self.handed.forward_queueing += 1;
        Some(queueing)
    }

    /// The backward queueing time (AQT of the ACK's datagram), if known and
    /// no larger than `rtt`, the largest RTT sample of the ACK.
    pub fn backward_queueing(&mut self, rtt: Duration) -> Option<Duration> {
        let queueing = self.datagram_queueing?;
        if !peer_reports::queueing_possible(queueing, rtt) {
            self.handed.rejected_backward_queueing += 1;
            return None;
        }
        self.handed.backward_queueing += 1;
        Some(queueing)
    }
}

/// Whether the one-way delay can have changed from `a`'s to `b`'s (the
/// rule; `a`'s send time is the epoch of both samples).
fn plausible(a: Anchor, b: Anchor) -> bool {
    let earlier = DelaySample {
        delay_nanos: peer_reports::nanos(a.receive_time),
        rtt: a.rtt,
    };
    let later = DelaySample {
        delay_nanos: peer_reports::forward_delay_nanos(b.receive_time, b.time_sent, a.time_sent),
        rtt: b.rtt,
    };
    peer_reports::judge(earlier, later, GRANULARITY).is_plausible()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn report_with(times: &[(u64, u64)]) -> AckReport {
        let mut r = AckReport::default();
        let times: Vec<PacketReceiveTime> = times
            .iter()
            .map(|&(pn, t)| PacketReceiveTime {
                packet_number: pn,
                receive_time: ms(t),
            })
            .collect();
        r.set_receive_times(&times);
        r
    }

    #[test]
    fn reported_times_are_handed_over_and_unknown_packets_are_none() {
        let t0 = Instant::now();
        let mut r = report_with(&[(5, 1000), (4, 990)]);
        assert_eq!(r.receive_time(3, t0, ms(600)), None);
        assert_eq!(r.receive_time(4, t0, ms(600)), Some(ms(990)));
        assert_eq!(r.receive_time(5, t0 + ms(10), ms(600)), Some(ms(1000)));
        assert_eq!(r.handed.receive_times, 2);
    }

    #[test]
    fn a_forward_jump_is_rejected_until_it_persists() {
        let t0 = Instant::now();
        let rtt = ms(600);
        let last = 1 + u64::from(REANCHOR_AFTER);
        // Packet 1 is normal; from packet 2 on the peer clock is 5 s ahead,
        // impossible given a 600 ms RTT.
        let times: Vec<(u64, u64)> = (1..=last + 1)
            .map(|n| (n, 1000 + 10 * (n - 1) + if n > 1 { 5000 } else { 0 }))
            .collect();
        let mut r = report_with(&times);
        assert!(r.receive_time(1, t0, rtt).is_some());
        for n in 2..last {
            assert_eq!(
                r.receive_time(n, t0 + ms(10 * (n - 1)), rtt),
                None,
                "packet {n}"
            );
        }
        // The REANCHOR_AFTER-th impossible value is believed: the clock stepped.
        assert!(r
            .receive_time(last, t0 + ms(10 * (last - 1)), rtt)
            .is_some());
        assert!(r.receive_time(last + 1, t0 + ms(10 * last), rtt).is_some());
        assert_eq!(
            r.handed.rejected_receive_times,
            u64::from(REANCHOR_AFTER) - 1
        );
    }

    #[test]
    fn a_clock_going_backwards_is_rejected() {
        let t0 = Instant::now();
        let mut r = report_with(&[(1, 10_000), (2, 8_000)]);
        assert!(r.receive_time(1, t0, ms(600)).is_some());
        assert_eq!(r.receive_time(2, t0 + ms(10), ms(600)), None);
        assert_eq!(r.handed.rejected_receive_times, 1);
    }

    #[test]
    fn the_bound_is_the_round_trip_plus_the_granularity() {
        let t0 = Instant::now();
        let rtt = ms(600);
        // Packet 1 sent at 0, received at 1000 (peer clock); packet 2 sent
        // 10 ms later. D = (R_2 - R_1) - (S_2 - S_1) may reach RTT + 1 ms.
        let accepted_r2 = Duration::from_millis(1000 + 10 + 600 + 1);
        let rejected_r2 = accepted_r2 + Duration::from_micros(1);
        for (r2, expected) in [(accepted_r2, true), (rejected_r2, false)] {
            let d = r2.as_micros() as i64 - 1_000_000 - 10_000;
            assert_eq!(d <= 601_000, expected);
            let mut r = AckReport::default();
            r.set_receive_times(&[
                PacketReceiveTime {
                    packet_number: 1,
                    receive_time: ms(1000),
                },
                PacketReceiveTime {
                    packet_number: 2,
                    receive_time: r2,
                },
            ]);
            assert!(r.receive_time(1, t0, rtt).is_some());
            assert_eq!(r.receive_time(2, t0 + ms(10), rtt).is_some(), expected);
        }
    }

    #[test]
    fn queueing_times_larger_than_the_rtt_are_rejected() {
        let mut r = AckReport::default();
        r.set_forward_queueing(&[
            QueueingTimeEntry {
                packet_number: 1,
                forward_queueing_us: 50_000,
            },
            QueueingTimeEntry {
                packet_number: 2,
                forward_queueing_us: 900_000,
            },
        ]);
        assert_eq!(r.forward_queueing(1, ms(600)), Some(ms(50)));
        assert_eq!(r.forward_queueing(2, ms(600)), None);
        assert_eq!(r.forward_queueing(3, ms(600)), None);
        r.set_datagram_queueing(Some(ms(20)));
        assert_eq!(r.backward_queueing(ms(600)), Some(ms(20)));
        assert_eq!(r.backward_queueing(ms(10)), None);
        assert_eq!(r.handed.rejected_forward_queueing, 1);
        assert_eq!(r.handed.rejected_backward_queueing, 1);
        r.clear_packet_reports();
        assert!(!r.has_packet_reports());
    }
}

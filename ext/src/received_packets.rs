//! The data receiver's record of recent packets: when each arrived and, when
//! AQT-enabled routers reported it, the queueing time its datagram
//! accumulated. Bounded: however many packets arrive, it holds at most
//! `capacity` of them, dropping the oldest first.
//!
//! Entries are kept in arrival order, which is also time order (a receive
//! time earlier than the previous one is raised to it), so "most recently
//! received first" is a walk from the back. Each receive time and each
//! queueing time is reported once; an entry leaves when nothing of it is left
//! to report or its packet can no longer be acknowledged.

use std::collections::VecDeque;

use crate::queueing_time::QueueingTimeEntry;

/// How many packets the record holds by default: a few ACKs' worth at the
/// largest max_receive_timestamps_per_ack we advertise.
pub const DEFAULT_RECEIVED_PACKET_LOG_CAPACITY: usize = 2048;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LoggedPacket {
    packet_number: u64,
    /// Microseconds since the receiver's timestamp basis.
    receive_time_us: u64,
    timestamp_pending: bool,
    /// Queueing time still to be echoed, if any.
    forward_queueing_us: Option<u64>,
}

/// The receiver's bounded record of recent packets.
#[derive(Clone, Debug)]
pub struct ReceivedPacketLog {
    packets: VecDeque<LoggedPacket>,
    capacity: usize,
    latest_receive_time_us: u64,
    evicted: u64,
}

impl Default for ReceivedPacketLog {
    fn default() -> Self {
        Self::new(DEFAULT_RECEIVED_PACKET_LOG_CAPACITY)
    }
}

impl ReceivedPacketLog {
    /// A record of at most `capacity` packets (at least one).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        ReceivedPacketLog {
            packets: VecDeque::with_capacity(capacity.min(DEFAULT_RECEIVED_PACKET_LOG_CAPACITY)),
            capacity,
            latest_receive_time_us: 0,
            evicted: 0,
        }
    }

    /// Records a packet that arrived `receive_time_us` after the basis. Only
    /// what some peer will be told is kept: its receive time when
    /// `timestamp_wanted`, its queueing time when given.
    pub fn record(
        &mut self,
        packet_number: u64,
        receive_time_us: u64,
        timestamp_wanted: bool,
        forward_queueing_us: Option<u64>,
    ) {
        if !timestamp_wanted && forward_queueing_us.is_none() {
            return;
        }
        // Arrival order is time order; a clock that steps back is clamped.
        let receive_time_us = receive_time_us.max(self.latest_receive_time_us);
        self.latest_receive_time_us = receive_time_us;
        if self.packets.len() >= self.capacity {
            self.packets.pop_front();
            self.evicted += 1;
        }
        self.packets.push_back(LoggedPacket {
            packet_number,
            receive_time_us,
            timestamp_pending: timestamp_wanted,
            forward_queueing_us,
        });
    }

    /// Up to `max` unreported (packet number, receive time in µs) pairs of
    /// packets for which `acknowledged` holds, most recently received first.
    pub fn select_timestamps(
        &self,
        acknowledged: impl Fn(u64) -> bool,
        max: usize,
    ) -> Vec<(u64, u64)> {
        self.packets
            .iter()
            .rev()
            .filter(|p| p.timestamp_pending && acknowledged(p.packet_number))
            .take(max)
            .map(|p| (p.packet_number, p.receive_time_us))
            .collect()
    }

    /// Up to `max` unreported queueing times of packets for which
    /// `acknowledged` holds, most recently received first.
    pub fn select_queueing_times(
        &self,
        acknowledged: impl Fn(u64) -> bool,
        max: usize,
    ) -> Vec<QueueingTimeEntry> {
        self.packets
            .iter()
            .rev()
            .filter(|p| acknowledged(p.packet_number))
            .filter_map(|p| {
                p.forward_queueing_us.map(|q| QueueingTimeEntry {
                    packet_number: p.packet_number,
                    forward_queueing_us: q,
                })
            })
            .take(max)
            .collect()
    }

    /// The receive times of these packets went out in a frame.
    pub fn mark_timestamps_reported(&mut self, packet_numbers: &[u64]) {
        let sorted = sorted(packet_numbers);
        for p in self.packets.iter_mut() {
            if sorted.binary_search(&p.packet_number).is_ok() {
                p.timestamp_pending = false;
            }
        }
        self.drop_finished();
    }

    /// The queueing times of these packets went out in a frame.
    pub fn mark_queueing_times_reported(&mut self, packet_numbers: &[u64]) {
        let sorted = sorted(packet_numbers);
        for p in self.packets.iter_mut() {
            if sorted.binary_search(&p.packet_number).is_ok() {
                p.forward_queueing_us = None;
            }
        }
        self.drop_finished();
    }

    /// Packets below `packet_number` will not be acknowledged again (the
    /// peer saw their acknowledgement): forget them.
    pub fn forget_below(&mut self, packet_number: u64) {
        self.packets.retain(|p| p.packet_number >= packet_number);
    }

    fn drop_finished(&mut self) {
        self.packets
            .retain(|p| p.timestamp_pending || p.forward_queueing_us.is_some());
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Packets dropped unreported because the record was full.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }
}

fn sorted(packet_numbers: &[u64]) -> Vec<u64> {
    let mut v = packet_numbers.to_vec();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_bounded_however_many_packets_arrive() {
        let mut log = ReceivedPacketLog::new(100);
        for pn in 0..1_000_000u64 {
            log.record(pn, pn * 10, true, Some(pn % 7));
            assert!(log.len() <= 100);
        }
        assert_eq!(log.len(), 100);
        assert_eq!(log.evicted(), 1_000_000 - 100);
        // The newest ones are kept.
        let newest = log.select_timestamps(|_| true, 3);
        assert_eq!(
            newest,
            vec![
                (999_999, 9_999_990),
                (999_998, 9_999_980),
                (999_997, 9_999_970)
            ]
        );
    }

    #[test]
    fn nothing_is_kept_when_nobody_wants_it() {
        let mut log = ReceivedPacketLog::new(10);
        log.record(1, 5, false, None);
        assert!(log.is_empty());
    }

    #[test]
    fn selection_is_newest_first_acknowledged_only_and_reported_once() {
        let mut log = ReceivedPacketLog::new(10);
        for (pn, t) in [(1, 10), (2, 20), (5, 30), (3, 40)] {
            log.record(pn, t, true, Some(pn * 100));
        }
        let acked = |pn: u64| pn != 2;
        assert_eq!(
            log.select_timestamps(acked, 10),
            vec![(3, 40), (5, 30), (1, 10)]
        );
        assert_eq!(log.select_timestamps(acked, 2), vec![(3, 40), (5, 30)]);
        log.mark_timestamps_reported(&[3, 5]);
        assert_eq!(log.select_timestamps(acked, 10), vec![(1, 10)]);
        let q: Vec<u64> = log
            .select_queueing_times(acked, 10)
            .iter()
            .map(|e| e.packet_number)
            .collect();
        assert_eq!(q, vec![3, 5, 1]);
        log.mark_queueing_times_reported(&[3, 5]);
        // 3 and 5 have nothing left to report.
        assert_eq!(log.len(), 2);
        log.forget_below(2);
        assert_eq!(log.len(), 1);
    }

    #[test]
    fn receive_times_never_go_backwards() {
        let mut log = ReceivedPacketLog::new(10);
        log.record(1, 100, true, None);
        log.record(2, 50, true, None);
        assert_eq!(
            log.select_timestamps(|_| true, 10),
            vec![(2, 100), (1, 100)]
        );
    }
}

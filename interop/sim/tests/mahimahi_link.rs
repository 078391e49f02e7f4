//! A trace-driven link against mm-link's rule replayed here opportunity by
//! opportunity (Mahimahi's `LinkQueue::rationalize`: each delivery
//! opportunity carries 1504 bytes of the queue's datagrams, a datagram
//! bigger than what is left continues in the next ones, what nobody waits
//! for is lost, and DropTail counts a datagram until its first byte goes).
//! The link computes departures in closed form from a cursor; the reference
//! below walks every opportunity, so the two share nothing but the rule.

use std::collections::VecDeque;
use std::sync::Arc;

use vegas_sim::network::{Arrival, Datagram, Link, Owner};
use vegas_sim::random::RandomStream;
use vegas_sim::scenario::{LinkConfig, LossModel, QueueLimit};
use vegas_sim::time::Nanos;
use vegas_sim::trace::DeliveryTrace;

const MS: Nanos = 1_000_000;
/// mm-link's `PACKET_SIZE`, written here on its own.
const OPPORTUNITY_BYTES: u64 = 1504;

fn trace_link(stamps: &[u64], limit: QueueLimit) -> Link {
    let trace = DeliveryTrace::from_stamps("test", stamps).unwrap();
    Link::new(
        LinkConfig {
            name: "traced".into(),
            rate_bps: trace.mean_rate_bps(),
            delay: 0,
            queue_limit: limit,
            loss: LossModel::None,
            aqt: false,
            delay_jitter: 0,
            jitter_reorders: false,
            delay_trace: Default::default(),
            delivery_trace: Some(Arc::new(trace)),
        },
        1,
    )
}

fn datagram(index: usize, bytes: u32) -> Datagram {
    Datagram {
        payload: Vec::new(),
        wire_bytes: bytes,
        // The source number tells the datagrams apart.
        owner: Owner::Cross { source: index },
        route: 0,
        hop: 0,
        enqueued_at: 0,
        queueing: 0,
        aqt: None,
    }
}

/// Runs datagrams `(arrival, wire bytes)`, in time order, through the link
/// as the simulator does; each one's departure time, `None` if dropped.
fn through_link(link: &mut Link, arrivals: &[(Nanos, u32)]) -> Vec<Option<Nanos>> {
    let mut left = vec![None; arrivals.len()];
    let mut done_at: Option<Nanos> = None;
    let finish = |link: &mut Link, at: Nanos, left: &mut Vec<Option<Nanos>>| {
        let (out, next) = link.finish_transmission(at);
        if let Some(Datagram {
            owner: Owner::Cross { source },
            ..
        }) = out
        {
            left[source] = Some(at);
        }
        next
    };
    for (i, &(at, bytes)) in arrivals.iter().enumerate() {
        while let Some(t) = done_at.filter(|&t| t <= at) {
            done_at = finish(link, t, &mut left);
        }
        if let Arrival::Transmitting { done_at: t } = link.arrive(at, datagram(i, bytes)) {
            done_at = Some(t);
        }
    }
    while let Some(t) = done_at {
        done_at = finish(link, t, &mut left);
    }
    left
}

/// mm-link's rule, one opportunity at a time: before a datagram is read at
/// `t`, every opportunity due at or before `t` is delivered; a DropTail
/// queue of `limit` datagrams holds those whose first byte has not gone.
fn mm_link(stamps: &[u64], limit: usize, arrivals: &[(Nanos, u32)]) -> Vec<Option<Nanos>> {
    struct Replay<'a> {
        stamps: &'a [u64],
        index: usize,
        base_ms: u64,
        queue: VecDeque<(usize, u64)>,
        in_transit: Option<(usize, u64)>,
        left: Vec<Option<Nanos>>,
    }
    impl Replay<'_> {
        fn next_time(&self) -> Nanos {
            (self.base_ms + self.stamps[self.index]) * MS
        }
        fn deliver_until(&mut self, now: Nanos) {
            while self.next_time() <= now {
                let this = self.next_time();
                self.index += 1;
                if self.index == self.stamps.len() {
                    self.index = 0;
                    self.base_ms += self.stamps[self.stamps.len() - 1];
                }
                let mut budget = OPPORTUNITY_BYTES;
                while budget > 0 {
                    if self.in_transit.is_none() {
                        match self.queue.pop_front() {
                            Some(d) => self.in_transit = Some(d),
                            None => break,
                        }
                    }
                    let Some((id, bytes)) = self.in_transit.as_mut() else {
                        break;
                    };
                    let sent = budget.min(*bytes);
                    *bytes -= sent;
                    budget -= sent;
                    if *bytes == 0 {
                        self.left[*id] = Some(this);
                        self.in_transit = None;
                    }
                }
            }
        }
    }
    let mut replay = Replay {
        stamps,
        index: 0,
        base_ms: 0,
        queue: VecDeque::new(),
        in_transit: None,
        left: vec![None; arrivals.len()],
    };
    for (i, &(at, bytes)) in arrivals.iter().enumerate() {
        replay.deliver_until(at);
        if replay.queue.len() < limit {
            replay.queue.push_back((i, u64::from(bytes)));
        }
    }
    while !replay.queue.is_empty() || replay.in_transit.is_some() {
        let next = replay.next_time();
        replay.deliver_until(next);
    }
    replay.left
}

/// One opportunity every 10 ms for a second.
fn every_10_ms() -> Vec<u64> {
    (1..=100).map(|i| i * 10).collect()
}

#[test]
fn several_small_datagrams_leave_in_one_opportunity() {
    // 21 ACK-sized datagrams of 70 bytes are 1470 bytes: one opportunity;
    // the 22nd (1540 bytes so far) needs the next.
    let arrivals: Vec<(Nanos, u32)> = (0..22).map(|i| (MS + i, 70)).collect();
    let stamps = every_10_ms();
    let mut link = trace_link(&stamps, QueueLimit::Packets(1000));
    let left = through_link(&mut link, &arrivals);
    let mut expected = vec![Some(10 * MS); 21];
    expected.push(Some(20 * MS));
    assert_eq!(left, expected);
    assert_eq!(left, mm_link(&stamps, 1000, &arrivals));
}

#[test]
fn a_datagram_bigger_than_what_is_left_spans_opportunities() {
    // 500 bytes leave at 10 ms; the 1378-byte datagram behind them takes
    // the 1004 left there and 374 of the 20 ms opportunity, leaving with
    // its last byte at 20 ms; the next 1378 take the 1130 left at 20 ms
    // and 248 at 30 ms. Backlogged, datagram i leaves at the opportunity
    // that holds byte number (bytes up to and including i).
    let sizes = [500u32, 1378, 1378, 40, 1504, 1];
    let arrivals: Vec<(Nanos, u32)> = sizes.iter().map(|&b| (MS, b)).collect();
    let stamps = every_10_ms();
    let mut link = trace_link(&stamps, QueueLimit::Packets(1000));
    let left = through_link(&mut link, &arrivals);
    let mut cumulative = 0;
    let expected: Vec<Option<Nanos>> = sizes
        .iter()
        .map(|&b| {
            cumulative += u64::from(b);
            Some(cumulative.div_ceil(OPPORTUNITY_BYTES) * 10 * MS)
        })
        .collect();
    assert_eq!(left[..3], [Some(10 * MS), Some(20 * MS), Some(30 * MS)]);
    assert_eq!(left, expected);
    assert_eq!(left, mm_link(&stamps, 1000, &arrivals));
}

#[test]
fn an_opportunity_nobody_waits_for_is_lost() {
    let stamps = every_10_ms();
    let arrivals = [
        // Both in the 10 ms opportunity; its last 504 bytes are lost: the
        // next datagram comes after it.
        (MS, 500),
        (MS, 500),
        (10 * MS + 1, 1000),
        // At the very instant of the 30 ms opportunity: mm-link delivers
        // what is due before it reads the datagram, so it misses it.
        (30 * MS, 100),
        // The 50 and 60 ms opportunities pass with nothing to carry; no
        // credit is kept, so 1504 + 1 bytes need two opportunities.
        (61 * MS, 1504),
        (61 * MS, 1),
    ];
    let mut link = trace_link(&stamps, QueueLimit::Packets(1000));
    let left = through_link(&mut link, &arrivals);
    assert_eq!(
        left,
        [10, 10, 20, 40, 70, 80].map(|ms| Some(ms * MS)).to_vec()
    );
    assert_eq!(left, mm_link(&stamps, 1000, &arrivals));
}

#[test]
fn droptail_counts_a_datagram_until_its_first_byte_goes() {
    // A queue of 2: the first datagram waits for the 10 ms opportunity and
    // counts until then, so of four arriving at 1 ms the third and fourth
    // are dropped; the two taken leave together at 10 ms.
    let stamps = every_10_ms();
    let arrivals = [(MS, 500), (MS, 500), (MS, 500), (MS, 500)];
    let mut link = trace_link(&stamps, QueueLimit::Packets(2));
    let left = through_link(&mut link, &arrivals);
    assert_eq!(
        left,
        vec![Some(10 * MS), Some(10 * MS), None, None],
        "{left:?}"
    );
    assert_eq!(left, mm_link(&stamps, 2, &arrivals));
    assert_eq!(link.stats.dropped_packets, 2);
}

#[test]
fn random_traffic_leaves_as_in_mm_link() {
    // A trace with bursts, gaps and several opportunities in one ms,
    // repeated; datagrams of ACK to full size, some arriving on the very
    // ms of an opportunity; a queue small enough to drop.
    let stamps: Vec<u64> = [1, 1, 1, 2, 5, 9, 9, 30, 31, 32, 33, 60]
        .into_iter()
        .collect();
    let mut rng = RandomStream::named(7, "mahimahi-test");
    let mut at: Nanos = 0;
    let arrivals: Vec<(Nanos, u32)> = (0..20_000)
        .map(|_| {
            at += (rng.next_f64() * 3.0 * MS as f64) as Nanos;
            if rng.chance(0.2) {
                at = at.div_ceil(MS) * MS;
            }
            let bytes = if rng.chance(0.5) {
                40 + (rng.next_f64() * 80.0) as u32
            } else {
                1000 + (rng.next_f64() * 504.0) as u32
            };
            (at, bytes)
        })
        .collect();
    for limit in [3, 40] {
        let mut link = trace_link(&stamps, QueueLimit::Packets(limit as u64));
        let left = through_link(&mut link, &arrivals);
        let reference = mm_link(&stamps, limit, &arrivals);
        let first_difference = left.iter().zip(&reference).position(|(a, b)| a != b);
        assert_eq!(first_difference, None, "queue of {limit}");
        let dropped = left.iter().filter(|d| d.is_none()).count();
        assert!(dropped > 100, "queue of {limit}: {dropped} dropped");
    }
}

//! Trace-driven links: a one-way delay that follows a list of points with
//! linear ramps between them, and a rate given as Mahimahi's packet-delivery
//! trace.
//!
//! * Delay (`delay_trace = [[time_s, delay_ms], ...]` on a link): between
//!   two points the delay moves linearly (a continuous ramp, not steps);
//!   before the first point it is the first delay, after the last the last.
//!   Each datagram takes the delay at the instant it leaves the transmitter;
//!   the wire stays FIFO (a datagram never overtakes the one before it),
//!   unless the link has `jitter_reorders`.
//! * Rate (`rate_trace_file = "FILE"`, relative to the scenario file):
//!   Mahimahi's format (mm-link), one line per delivery opportunity, its
//!   time in whole milliseconds, non-decreasing; the trace repeats with a
//!   period of its last timestamp, as mm-link replays it. The bytes are
//!   mm-link's (`LinkQueue::rationalize`): each opportunity carries up to
//!   [`MAHIMAHI_OPPORTUNITY_BYTES`] of datagrams, counted as the link counts
//!   them, the IP datagram (UDP payload plus the scenario's `header_bytes`,
//!   28 by default: what mm-link reads from its TUN device). Datagrams leave
//!   in order while the opportunity has bytes left, so many ACKs go in one;
//!   a datagram bigger than what is left takes the rest and continues in the
//!   next opportunities, and leaves at the one that carries its last byte.
//!   An opportunity, or the rest of one, with nothing waiting is lost. A
//!   datagram that arrives at the instant of an opportunity misses it
//!   (mm-link delivers the opportunities due before it reads a packet).
//!   mm-link refuses datagrams above 1504 bytes; here they span more
//!   opportunities. The link's DropTail counts a datagram until an
//!   opportunity carries its first byte, as mm-link's queue holds it.

use std::path::Path;

use crate::time::{Nanos, NANOS_PER_SECOND};

const NANOS_PER_MS: Nanos = 1_000_000;

/// Bytes one Mahimahi delivery opportunity carries (mm-link's
/// `PACKET_SIZE`, its largest TUN packet), also for the trace's mean rate.
pub const MAHIMAHI_OPPORTUNITY_BYTES: u64 = 1504;

/// Delay points, ns, in time order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DelayTrace {
    points: Vec<(Nanos, Nanos)>,
}

impl DelayTrace {
    /// From `[time_s, delay_ms]` pairs; `key` names them in errors.
    pub fn from_points(key: &str, points: &[(f64, f64)]) -> Result<Self, String> {
        if points.is_empty() {
            return Err(format!(
                "{key}: expected at least one [time_s, delay_ms] point"
            ));
        }
        let mut out = Vec::with_capacity(points.len());
        let mut previous = 0.0;
        for (i, &(t, d)) in points.iter().enumerate() {
            if !(t.is_finite() && t >= 0.0 && d.is_finite() && d >= 0.0) {
                return Err(format!(
                    "{key}[{i}]: expected [time_s >= 0, delay_ms >= 0], got [{t}, {d}]"
                ));
            }
            if t < previous {
                return Err(format!(
                    "{key}[{i}]: time {t} s comes before the previous point's {previous} s"
                ));
            }
            previous = t;
            out.push((crate::time::seconds_f64(t), crate::time::millis_f64(d)));
        }
        Ok(DelayTrace { points: out })
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The delay at `now`, linear between points.
    pub fn at(&self, now: Nanos) -> Nanos {
        let i = self.points.partition_point(|&(t, _)| t <= now);
        if i == 0 {
            return self.points.first().map_or(0, |p| p.1);
        }
        if i == self.points.len() {
            return self.points[i - 1].1;
        }
        let (t0, d0) = self.points[i - 1];
        let (t1, d1) = self.points[i];
        if t1 == t0 {
            return d1;
        }
        let fraction = (now - t0) as f64 / (t1 - t0) as f64;
        (d0 as f64 + (d1 as f64 - d0 as f64) * fraction).round() as Nanos
    }
}

/// Where a trace-driven link stands in its trace: what mm-link's
/// `LinkQueue` keeps from one opportunity to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliveryCursor {
    /// The first opportunity that has carried nothing yet.
    next: u64,
    /// Bytes left in opportunity `next - 1` after what it carried.
    left: u64,
}

/// When a datagram crosses a trace-driven link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    /// The opportunity that carries its first byte: until then it waits in
    /// the queue, as in mm-link.
    pub first_byte: Nanos,
    /// The opportunity that carries its last byte: it leaves then.
    pub last_byte: Nanos,
}

/// Delivery opportunities of a Mahimahi trace within one period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    /// Sorted, each below `period`.
    opportunities: Vec<Nanos>,
    period: Nanos,
}

impl DeliveryTrace {
    /// Parses Mahimahi's text; `name` names the file in errors.
    pub fn parse(name: &str, text: &str) -> Result<Self, String> {
        let mut stamps = Vec::new();
        let mut previous = 0u64;
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let ms: u64 = line.parse().map_err(|_| {
                format!(
                    "{name}: line {}: expected a whole number of milliseconds, got {line:?}",
                    number + 1
                )
            })?;
            if ms < previous {
                return Err(format!(
                    "{name}: line {}: {ms} ms comes before the previous line's {previous} ms",
                    number + 1
                ));
            }
            previous = ms;
            stamps.push(ms);
        }
        Self::from_stamps(name, &stamps)
    }

    /// From timestamps in ms, already read (non-decreasing).
    pub fn from_stamps(name: &str, stamps: &[u64]) -> Result<Self, String> {
        if let Some(i) = stamps.windows(2).position(|w| w[1] < w[0]) {
            return Err(format!(
                "{name}: entry {}: {} ms comes before the previous {} ms",
                i + 1,
                stamps[i + 1],
                stamps[i]
            ));
        }
        let Some(&last) = stamps.last() else {
            return Err(format!("{name}: no delivery opportunity in the trace"));
        };
        if last == 0 {
            return Err(format!(
                "{name}: the trace must end after 0 ms (its last timestamp is its period)"
            ));
        }
        let period = last * NANOS_PER_MS;
        let mut opportunities: Vec<Nanos> = stamps
            .iter()
            .map(|ms| (ms * NANOS_PER_MS) % period)
            .collect();
        opportunities.sort_unstable();
        Ok(DeliveryTrace {
            opportunities,
            period,
        })
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the rate trace {}: {e}", path.display()))?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// The number of the first opportunity at or after `t` (opportunities
    /// are numbered from 0 over the repeated trace; several may share a time).
    pub fn first_at_or_after(&self, t: Nanos) -> u64 {
        let n = self.opportunities.len() as u64;
        let cycle = t / self.period;
        let within = t % self.period;
        cycle * n + self.opportunities.partition_point(|&o| o < within) as u64
    }

    /// The time of opportunity number `k`.
    pub fn time_of(&self, k: u64) -> Nanos {
        let n = self.opportunities.len() as u64;
        (k / n) * self.period + self.opportunities[(k % n) as usize]
    }

    /// The first opportunity at or after `t`.
    pub fn next_at_or_after(&self, t: Nanos) -> Nanos {
        self.time_of(self.first_at_or_after(t))
    }

    /// Sends a datagram of `bytes` that reached the link at `joined` and is
    /// now at the head of its queue (every datagram before it has been given
    /// its opportunities through `cursor`).
    pub fn send(&self, cursor: &mut DeliveryCursor, joined: Nanos, bytes: u64) -> Departure {
        // A datagram of no bytes still takes a place in an opportunity.
        let mut remaining = bytes.max(1);
        let mut first_byte = None;
        if cursor.left > 0 && cursor.next > 0 {
            let last_used = self.time_of(cursor.next - 1);
            if last_used > joined {
                // It was waiting when that opportunity came: it takes what
                // the datagrams before it left.
                let taken = cursor.left.min(remaining);
                cursor.left -= taken;
                remaining -= taken;
                first_byte = Some(last_used);
                if remaining == 0 {
                    return Departure {
                        first_byte: last_used,
                        last_byte: last_used,
                    };
                }
            }
        }
        // The opportunities that came before it joined passed with nothing
        // to carry: lost, as the rest of the last one used is if it did not
        // take it.
        let first = cursor.next.max(self.first_at_or_after(joined + 1));
        let count = remaining.div_ceil(MAHIMAHI_OPPORTUNITY_BYTES);
        let last = first + count - 1;
        cursor.next = last + 1;
        cursor.left = count * MAHIMAHI_OPPORTUNITY_BYTES - remaining;
        Departure {
            first_byte: first_byte.unwrap_or_else(|| self.time_of(first)),
            last_byte: self.time_of(last),
        }
    }

    /// The trace's mean rate in bit/s, at [`MAHIMAHI_OPPORTUNITY_BYTES`] per
    /// opportunity.
    pub fn mean_rate_bps(&self) -> u64 {
        let bits = self.opportunities.len() as u128 * u128::from(MAHIMAHI_OPPORTUNITY_BYTES) * 8;
        (bits * u128::from(NANOS_PER_SECOND) / u128::from(self.period)) as u64
    }

    pub fn period(&self) -> Nanos {
        self.period
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_ramps_linearly_between_points_and_holds_outside() {
        let trace = DelayTrace::from_points("d", &[(1.0, 20.0), (3.0, 40.0), (3.0, 10.0)]).unwrap();
        let ms = |v: f64| (v * 1e6).round() as Nanos;
        assert_eq!(trace.at(0), ms(20.0));
        assert_eq!(trace.at(NANOS_PER_SECOND), ms(20.0));
        assert_eq!(trace.at(2 * NANOS_PER_SECOND), ms(30.0));
        assert_eq!(trace.at(2_500_000_000), ms(35.0));
        // A step is two points at one time: the later one holds from then on.
        assert_eq!(trace.at(3 * NANOS_PER_SECOND), ms(10.0));
        assert_eq!(trace.at(100 * NANOS_PER_SECOND), ms(10.0));
        assert!(DelayTrace::from_points("d", &[(2.0, 1.0), (1.0, 1.0)])
            .unwrap_err()
            .contains("d[1]: time 1 s comes before"));
        assert!(DelayTrace::from_points("d", &[]).is_err());
        assert!(DelayTrace::from_points("d", &[(0.0, -1.0)]).is_err());
    }

    #[test]
    fn mahimahi_opportunities_repeat_with_the_last_timestamp() {
        let trace = DeliveryTrace::parse("t", "1\n1\n4\n10\n").unwrap();
        assert_eq!(trace.period(), 10 * NANOS_PER_MS);
        let ms = |v: u64| v * NANOS_PER_MS;
        assert_eq!(trace.next_at_or_after(0), 0); // 10 ms wraps to 0
        assert_eq!(trace.next_at_or_after(1), ms(1));
        assert_eq!(trace.next_at_or_after(ms(2)), ms(4));
        assert_eq!(trace.next_at_or_after(ms(5)), ms(10));
        assert_eq!(trace.next_at_or_after(ms(11)), ms(11));
        // Two opportunities share 1 ms: numbers 1 and 2.
        assert_eq!(trace.first_at_or_after(1), 1);
        assert_eq!((trace.time_of(1), trace.time_of(2)), (ms(1), ms(1)));
        assert_eq!(trace.time_of(4), ms(10));
        // 4 opportunities of 1504 bytes per 10 ms.
        assert_eq!(trace.mean_rate_bps(), 4 * 1504 * 8 * 100);
        for (text, error) in [
            ("", "no delivery opportunity"),
            ("0\n", "must end after 0 ms"),
            ("5\n3\n", "line 2: 3 ms comes before"),
            ("1\nx\n", "line 2: expected a whole number"),
        ] {
            let e = DeliveryTrace::parse("t", text).unwrap_err();
            assert!(e.contains(error), "{e}");
        }
    }
}

//! Cross traffic: datagrams that only load the links (no transport, no
//! reaction to loss), constant bit rate or exponential ON-OFF.
//!
//! An ON-OFF source sends at `rate_bps` during ON periods and nothing during
//! OFF periods; both lengths are exponentially distributed. As in ns-2's
//! Exponential ON/OFF source, a burst is a whole number of datagrams: the
//! drawn ON length divided by the datagram spacing, rounded (a draw shorter
//! than half a spacing gives an empty burst). The long-run average rate is
//! then `rate × mean_on / (mean_on + mean_off)`.

use crate::network::{Datagram, Owner};
use crate::random::RandomStream;
use crate::scenario::{CrossTrafficConfig, CrossTrafficKind};
use crate::time::{serialisation_time, Nanos};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrossStats {
    pub sent_packets: u64,
    pub sent_bytes: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
}

pub struct CrossSource {
    pub config: CrossTrafficConfig,
    /// Route index of its path.
    pub route: usize,
    /// Wire bytes of each datagram.
    pub wire_bytes: u32,
    /// Time between datagrams at the source's rate.
    spacing: Nanos,
    rng: RandomStream,
    /// ON-OFF: datagrams left in the current burst.
    burst_left: u64,
    pub stats: CrossStats,
}

/// What a source does at one of its events.
#[derive(Debug, PartialEq, Eq)]
pub struct SourceStep {
    /// Send one datagram now.
    pub send: bool,
    /// When the source next acts, if before its stop time.
    pub next: Option<Nanos>,
}

impl CrossSource {
    /// The datagram this source (number `source` of the scenario) sends now.
    pub fn datagram(&self, source: usize, now: Nanos) -> Datagram {
        Datagram {
            payload: Vec::new(),
            wire_bytes: self.wire_bytes,
            owner: Owner::Cross { source },
            route: self.route,
            hop: 0,
            enqueued_at: now,
            queueing: 0,
            aqt: None,
        }
    }

    pub fn new(
        config: CrossTrafficConfig,
        route: usize,
        header_bytes: u32,
        rng: RandomStream,
    ) -> Self {
        let wire_bytes = config.packet_bytes + header_bytes;
        // The source's rate counts wire bytes, as the link's does, so that a
        // 4 Mbit/s source fills 4 Mbit/s of a link.
        let spacing = serialisation_time(u64::from(wire_bytes), config.rate_bps).max(1);
        CrossSource {
            config,
            route,
            wire_bytes,
            spacing,
            rng,
            burst_left: 0,
            stats: CrossStats::default(),
        }
    }

    /// Acts at `now` (the start time, or a time this returned before).
    pub fn step(&mut self, now: Nanos) -> SourceStep {
        let next = match self.config.kind {
            CrossTrafficKind::ConstantBitRate { jitter } => {
                self.stats.sent_packets += 1;
                self.stats.sent_bytes += u64::from(self.wire_bytes);
                let gap = if jitter > 0.0 {
                    let factor = 1.0 + jitter * (2.0 * self.rng.next_f64() - 1.0);
                    ((self.spacing as f64 * factor).round() as Nanos).max(1)
                } else {
                    self.spacing
                };
                return SourceStep {
                    send: true,
                    next: self.before_stop(now + gap),
                };
            }
            CrossTrafficKind::OnOff { mean_on, mean_off } => {
                if self.burst_left == 0 {
                    // An OFF period has ended (or the source starts): draw
                    // the next burst; an empty one is followed by OFF again.
                    let on = self.rng.exponential(mean_on);
                    self.burst_left = (on / self.spacing as f64).round() as u64;
                }
                if self.burst_left == 0 {
                    let off = self.draw_off(mean_off);
                    return SourceStep {
                        send: false,
                        next: self.before_stop(now + off),
                    };
                }
                self.burst_left -= 1;
                self.stats.sent_packets += 1;
                self.stats.sent_bytes += u64::from(self.wire_bytes);
                if self.burst_left > 0 {
                    now + self.spacing
                } else {
                    // The burst's last datagram takes its spacing, then OFF.
                    now + self.spacing + self.draw_off(mean_off)
                }
            }
        };
        SourceStep {
            send: true,
            next: self.before_stop(next),
        }
    }

    fn draw_off(&mut self, mean_off: f64) -> Nanos {
        self.rng.exponential(mean_off).round() as Nanos
    }

    fn before_stop(&self, t: Nanos) -> Option<Nanos> {
        match self.config.stop {
            Some(stop) if t >= stop => None,
            _ => Some(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(kind: CrossTrafficKind) -> CrossSource {
        CrossSource::new(
            CrossTrafficConfig {
                name: "x".into(),
                kind,
                rate_bps: 2_000_000,
                packet_bytes: 1222,
                start: 0,
                stop: Some(1_000_000_000_000),
                path: vec![0],
            },
            0,
            28,
            RandomStream::from_seed(9),
        )
    }

    /// Average rate over a long run, in bit/s.
    fn average_rate(s: &mut CrossSource, until: Nanos) -> f64 {
        let mut t = 0;
        while t < until {
            match s.step(t).next {
                Some(n) => t = n,
                None => break,
            }
        }
        s.stats.sent_bytes as f64 * 8.0 / (t as f64 / 1e9)
    }

    #[test]
    fn cbr_rate() {
        let mut s = source(CrossTrafficKind::ConstantBitRate { jitter: 0.0 });
        let rate = average_rate(&mut s, 10_000_000_000);
        assert!((rate - 2e6).abs() < 2e3, "{rate}");
        let mut s = source(CrossTrafficKind::ConstantBitRate { jitter: 0.5 });
        let rate = average_rate(&mut s, 100_000_000_000);
        assert!((rate - 2e6).abs() < 2e4, "{rate}");
    }

    #[test]
    fn on_off_average_rate() {
        // ON 10 ms, OFF 12.22 ms at 2 Mbit/s: 0.9 Mbit/s on average.
        let mut s = source(CrossTrafficKind::OnOff {
            mean_on: 10e6,
            mean_off: 12.22e6,
        });
        let rate = average_rate(&mut s, 2_000_000_000_000);
        assert!((rate - 0.9e6).abs() < 0.03e6, "{rate}");
    }
}

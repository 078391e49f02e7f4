//! Simulated time: integer nanoseconds since the start of the run, so that
//! event order never depends on floating-point rounding.

use std::time::Duration;

pub type Nanos = u64;

/// The wall-clock time that simulated time zero stands for, as quiche reads
/// it for qlog's `reference_time` (2000-01-01T00:00:00Z). Fixed, so that a
/// scenario and seed still give the same bytes; not the UNIX epoch itself,
/// which qlog tools (qvis) take for "no reference time". Every endpoint of a
/// run shares this clock, so the traces of both ends line up on it.
pub const WALL_CLOCK_AT_ZERO: Duration = Duration::from_secs(946_684_800);

pub const NANOS_PER_SECOND: u64 = 1_000_000_000;

/// Seconds (as written in a scenario) to nanoseconds, rounded.
pub fn seconds_f64(seconds: f64) -> Nanos {
    (seconds * 1e9).round().max(0.0) as Nanos
}

/// Milliseconds to nanoseconds, rounded.
pub fn millis_f64(millis: f64) -> Nanos {
    (millis * 1e6).round().max(0.0) as Nanos
}

pub fn as_seconds(t: Nanos) -> f64 {
    t as f64 / 1e9
}

pub fn as_millis(t: Nanos) -> f64 {
    t as f64 / 1e6
}

/// How long `bytes` take to leave a transmitter of `rate_bps`, rounded up
/// to the nanosecond (a packet is never faster than the link).
pub fn serialisation_time(bytes: u64, rate_bps: u64) -> Nanos {
    let bits = u128::from(bytes) * 8 * u128::from(NANOS_PER_SECOND);
    let rate = u128::from(rate_bps.max(1));
    bits.div_ceil(rate) as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_of_a_datagram() {
        // 1250 bytes at 10 Mbit/s: exactly 1 ms.
        assert_eq!(serialisation_time(1250, 10_000_000), 1_000_000);
        // 1 byte at 3 bit/s rounds up.
        assert_eq!(serialisation_time(1, 3), 2_666_666_667);
    }
}

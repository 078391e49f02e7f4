//! quiche-vegas: virtual time and seeded randomness for the simulator.
//!
//! This file is ours. It is compiled as part of quiche (module
//! `quiche::virtual_env`, pulled in by patches/0002-*.patch), which routes every
//! place quiche reads the clock, the wall clock or its random number generator
//! through the three functions below.
//!
//! Outside a simulation nothing is set and they are `Instant::now()`,
//! `SystemTime::now()` and BoringSSL's RAND_bytes, exactly as before. A
//! simulator runs all its connections on one thread and, before each call into
//! a connection, sets this thread's virtual time; with a seed set, quiche's own
//! random choices (connection-ID and reset-token bytes, packet-number skipping)
//! repeat from run to run, so a scenario and seed give the same outputs.

use std::cell::Cell;
use std::time::Duration;
use std::time::Instant;
use std::time::SystemTime;

thread_local! {
    static VIRTUAL: Cell<Option<VirtualTime>> = const { Cell::new(None) };
    static RNG_STATE: Cell<Option<u64>> = const { Cell::new(None) };
}

#[derive(Clone, Copy)]
struct VirtualTime {
    now: Instant,
    since_start: Duration,
}

/// The current time: this thread's virtual time when a simulation set one.
pub fn now() -> Instant {
    VIRTUAL
        .with(|v| v.get())
        .map_or_else(Instant::now, |v| v.now)
}

/// The wall clock, for qlog's reference time. Under virtual time it is the
/// UNIX epoch plus the simulated time, so that logs do not depend on the day.
pub fn wall_now() -> SystemTime {
    VIRTUAL.with(|v| v.get()).map_or_else(SystemTime::now, |v| {
        SystemTime::UNIX_EPOCH + v.since_start
    })
}

/// Runs this thread on virtual time: `now` is the current simulated instant,
/// `since_start` how long the simulation has run. `None` returns to real time.
pub fn set_virtual_time(time: Option<(Instant, Duration)>) {
    VIRTUAL.with(|v| {
        v.set(time.map(|(now, since_start)| VirtualTime { now, since_start }))
    });
}

/// Makes quiche's random numbers on this thread a function of `seed`
/// (`None`: BoringSSL's generator again). For simulations only: these bytes
/// are predictable by design.
pub fn set_random_seed(seed: Option<u64>) {
    RNG_STATE.with(|s| s.set(seed));
}

/// Fills `buf` from the seeded generator and returns true, or returns false
/// when no seed is set.
pub(crate) fn fill_seeded(buf: &mut [u8]) -> bool {
    RNG_STATE.with(|s| {
        let Some(mut state) = s.get() else {
            return false;
        };
        for chunk in buf.chunks_mut(8) {
            // splitmix64: small, fast and well distributed; secrecy is not a
            // goal here.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
        s.set(Some(state));
        true
    })
}

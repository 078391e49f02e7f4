//! Time for the emulator: one monotonic clock in nanoseconds since the
//! emulator started, kernel receive timestamps mapped onto it, and a precise
//! wait (sleep until shortly before the deadline, then spin).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::Duration;

use vegas_sim::time::Nanos;

fn clock_ns(id: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill; both clock ids
    // used here exist on every Linux.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Nanoseconds of CLOCK_MONOTONIC (what `std::time::Instant` reads).
pub fn monotonic_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Nanoseconds of CLOCK_REALTIME, the clock of kernel receive timestamps
/// (`SO_TIMESTAMPNS`).
pub fn realtime_ns() -> i64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// The emulator's clock: nanoseconds since its start, on CLOCK_MONOTONIC.
/// Shared by the receive threads and the scheduler.
#[derive(Debug)]
pub struct Clock {
    base: i64,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, refreshed by
    /// [`Clock::refresh_offset`], to map kernel timestamps.
    offset: AtomicI64,
}

impl Clock {
    pub fn new() -> Self {
        let clock = Clock {
            base: monotonic_ns(),
            offset: AtomicI64::new(0),
        };
        clock.refresh_offset();
        clock
    }

    /// Now, in nanoseconds since the start.
    pub fn now(&self) -> Nanos {
        (monotonic_ns() - self.base).max(0) as Nanos
    }

    /// A CLOCK_MONOTONIC reading on this clock.
    pub fn from_monotonic(&self, ns: i64) -> Nanos {
        (ns - self.base).max(0) as Nanos
    }

    /// Measures the offset between the two clocks again (NTP may slew the
    /// real-time clock; the scheduler calls this about once a second).
    pub fn refresh_offset(&self) {
        // The tightest of a few bracketed readings.
        let mut best = (i64::MAX, 0);
        for _ in 0..5 {
            let r1 = realtime_ns();
            let m = monotonic_ns();
            let r2 = realtime_ns();
            let width = r2 - r1;
            if width < best.0 {
                best = (width, r1 + width / 2 - m);
            }
        }
        self.offset.store(best.1, Ordering::Relaxed);
    }

    /// A kernel receive timestamp (CLOCK_REALTIME) on this clock; `None`
    /// when it is implausible (more than a second away from now), in which
    /// case the caller stamps the datagram with [`Clock::now`].
    pub fn from_kernel_timestamp(&self, realtime: i64) -> Option<Nanos> {
        let monotonic = realtime - self.offset.load(Ordering::Relaxed);
        let now = monotonic_ns();
        if (now - monotonic).abs() > 1_000_000_000 {
            return None;
        }
        // A timestamp a hair in the future (offset rounding) is now.
        Some(self.from_monotonic(monotonic.min(now)))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// What ended a [`wait_until`].
pub enum Wake<T> {
    /// The deadline came.
    Deadline,
    /// A message arrived first.
    Message(T),
    /// Every sender is gone.
    Closed,
}

/// Waits until `deadline` on `clock`, or for the next message on `rx`,
/// whichever comes first. The thread sleeps until `spin` before the
/// deadline and then spins (polling `rx`), so that the deadline is met to a
/// few microseconds when the thread is not preempted. `spin` zero: sleep
/// only. `None` deadline: wait for a message at most `idle` long.
pub fn wait_until<T>(
    clock: &Clock,
    deadline: Option<Nanos>,
    spin: Duration,
    idle: Duration,
    rx: &Receiver<T>,
) -> Wake<T> {
    let spin_ns = spin.as_nanos() as u64;
    loop {
        let now = clock.now();
        let left = match deadline {
            Some(d) if now >= d => return Wake::Deadline,
            Some(d) => d - now,
            None => {
                return match rx.recv_timeout(idle) {
                    Ok(m) => Wake::Message(m),
                    Err(RecvTimeoutError::Timeout) => Wake::Deadline,
                    Err(RecvTimeoutError::Disconnected) => Wake::Closed,
                }
            }
        };
        if left > spin_ns {
            let sleep = Duration::from_nanos(left - spin_ns).min(idle);
            match rx.recv_timeout(sleep) {
                Ok(m) => return Wake::Message(m),
                Err(RecvTimeoutError::Timeout) => {
                    if sleep == idle {
                        // Woke for the idle bound: let the caller look
                        // around (stop flag) before waiting again.
                        return Wake::Deadline;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Wake::Closed,
            }
        } else {
            match rx.try_recv() {
                Ok(m) => return Wake::Message(m),
                Err(TryRecvError::Empty) => std::hint::spin_loop(),
                Err(TryRecvError::Disconnected) => return Wake::Closed,
            }
        }
    }
}

/// Best-effort tuning of the calling thread for timing: the smallest timer
/// slack (the kernel's default lets a sleep overrun by 50 µs), and, if
/// `realtime`, SCHED_FIFO priority so that other processes on a loaded
/// machine do not delay its wake-ups. Returns what could be applied, for the
/// log.
pub fn tune_current_thread(realtime: bool) -> String {
    let mut applied = Vec::new();
    // SAFETY: prctl with PR_SET_TIMERSLACK takes an unsigned long argument.
    if unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) } == 0 {
        applied.push("timer slack 1 ns".to_string());
    }
    if realtime {
        let param = libc::sched_param { sched_priority: 10 };
        // SAFETY: a valid sched_param for the calling thread.
        let rc =
            unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
        if rc == 0 {
            applied.push("SCHED_FIFO priority 10".to_string());
        } else {
            applied.push(format!(
                "no real-time priority ({})",
                std::io::Error::from_raw_os_error(rc)
            ));
        }
    }
    applied.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_timestamps_map_onto_the_clock() {
        let clock = Clock::new();
        let now = clock.now();
        let mapped = clock.from_kernel_timestamp(realtime_ns()).unwrap();
        assert!(mapped.abs_diff(now) < 50_000_000, "{mapped} vs {now}");
        assert!(clock.from_kernel_timestamp(0).is_none());
    }

    #[test]
    fn wait_until_meets_a_deadline() {
        let clock = Clock::new();
        let (_tx, rx) = std::sync::mpsc::channel::<()>();
        let deadline = clock.now() + 2_000_000;
        let w = wait_until(
            &clock,
            Some(deadline),
            Duration::from_micros(100),
            Duration::from_secs(1),
            &rx,
        );
        assert!(matches!(w, Wake::Deadline));
        assert!(clock.now() >= deadline);
    }
}

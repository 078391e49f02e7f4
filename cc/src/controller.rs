//! The interface every algorithm of this crate implements.

use std::cell::Cell;
use std::fmt::Debug;
use std::time::Duration;

use crate::events::{AckEvent, CongestionEvent, PacketSent};
use crate::params::{ParamInfo, ParamValues};

/// Smallest congestion window of every algorithm, in packets (RFC 9002
/// section 7.2, kMinimumWindow).
pub const MINIMUM_WINDOW_PACKETS: usize = 2;

/// Congestion-control state names reported in qlog
/// (`quic:congestion_state_updated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcState {
    SlowStart,
    CongestionAvoidance,
    Recovery,
}

impl CcState {
    pub fn as_str(self) -> &'static str {
        match self {
            CcState::SlowStart => "slow_start",
            CcState::CongestionAvoidance => "congestion_avoidance",
            CcState::Recovery => "recovery",
        }
    }
}

/// A value of a controller's internals, as it appears in qlog.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InternalValue {
    Float(f64),
    Int(u64),
    Text(&'static str),
}

impl InternalValue {
    /// `==`, with a text compared by pointer before its bytes (the values
    /// are literals): the qlog diff asks this of every field on every event.
    #[inline]
    pub fn same_as(self, other: InternalValue) -> bool {
        match (self, other) {
            (InternalValue::Float(a), InternalValue::Float(b)) => a == b,
            (InternalValue::Int(a), InternalValue::Int(b)) => a == b,
            (InternalValue::Text(a), InternalValue::Text(b)) => std::ptr::eq(a, b) || a == b,
            _ => false,
        }
    }
}

/// Collects a controller's named internals for qlog. Names carry their unit
/// (`base_rtt_ms`, `diff_packets`, ...) unless the paper's symbol is unitless.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Internals {
    fields: Vec<(&'static str, InternalValue)>,
}

impl Internals {
    pub fn float(&mut self, name: &'static str, value: f64) {
        self.fields.push((name, InternalValue::Float(value)));
    }

    pub fn int(&mut self, name: &'static str, value: u64) {
        self.fields.push((name, InternalValue::Int(value)));
    }

    pub fn text(&mut self, name: &'static str, value: &'static str) {
        self.fields.push((name, InternalValue::Text(value)));
    }

    /// A duration, in milliseconds.
    pub fn millis(&mut self, name: &'static str, value: Duration) {
        self.float(name, value.as_secs_f64() * 1e3);
    }

    pub fn fields(&self) -> &[(&'static str, InternalValue)] {
        &self.fields
    }

    pub fn get(&self, name: &str) -> Option<InternalValue> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    pub fn clear(&mut self) {
        self.fields.clear();
    }
}

/// An internals generation computed from a cheap key of what the internals
/// are made of: it grows whenever the key differs from the one seen at the
/// last ask. Nothing has to remember to bump it, since the key is read from
/// the state itself (a key holding a NaN never equals itself, and only
/// costs a fill).
#[derive(Clone, Debug)]
pub struct KeyedGeneration<K: Copy> {
    last: Cell<Option<K>>,
    generation: Cell<u64>,
}

impl<K: Copy> Default for KeyedGeneration<K> {
    fn default() -> Self {
        KeyedGeneration {
            last: Cell::new(None),
            generation: Cell::new(0),
        }
    }
}

impl<K: Copy + PartialEq> KeyedGeneration<K> {
    pub fn of(&self, key: K) -> u64 {
        if self.last.get() != Some(key) {
            self.last.set(Some(key));
            self.generation.set(self.generation.get() + 1);
        }
        self.generation.get()
    }
}

/// Pacing a controller asks for: at most `burst_packets` back to back, then
/// packets spaced to `rate_bytes_per_sec`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pacing {
    pub rate_bytes_per_sec: f64,
    pub burst_packets: usize,
    /// Packets released together in every pacing slot, the slot lasting as
    /// long as the train at the rate: 1 spaces every packet; 2 sends packet
    /// pairs, whose spacing at the receiver measures the bottleneck (see
    /// `shared/packet_pair`). Trains replace the after-idle burst allowance.
    pub train_packets: usize,
}

impl Pacing {
    /// Packets spaced one by one, with a burst of `burst_packets` after idle.
    pub fn spaced(rate_bytes_per_sec: f64, burst_packets: usize) -> Self {
        Pacing {
            rate_bytes_per_sec,
            burst_packets,
            train_packets: 1,
        }
    }

    /// Trains of `train_packets` back to back, one train per slot.
    pub fn trains(rate_bytes_per_sec: f64, train_packets: usize) -> Self {
        Pacing {
            rate_bytes_per_sec,
            burst_packets: train_packets,
            train_packets,
        }
    }
}

/// A congestion controller. It owns cwnd and ssthresh; the stack owns loss
/// detection, RTT estimation and retransmission.
pub trait CongestionController: Send + Debug {
    /// The algorithm's name as selected on the command line.
    fn name(&self) -> &'static str;

    fn on_packet_sent(&mut self, sent: &PacketSent);

    fn on_ack(&mut self, ack: &AckEvent<'_>);

    fn on_congestion_event(&mut self, loss: &CongestionEvent);

    /// A loss this controller reacted to turned out to be spurious: go back to
    /// `cwnd`/`ssthresh` as they were before that reaction (the host saved
    /// them). Return whether the controller accepted the rollback.
    fn on_spurious_loss(&mut self, cwnd: usize, ssthresh: usize) -> bool;

    /// Careful Resume (`crate::careful_resume`) sets the window on leaving
    /// its Unvalidated phase and on a Safe Retreat: this is the window now,
    /// out of any recovery epoch. No loss is undone, so what a member does
    /// on a spurious loss beyond that (vegas-sat's return to start-up) must
    /// not run here.
    fn set_window(&mut self, cwnd: usize, ssthresh: usize);

    /// Congestion window in bytes.
    fn cwnd(&self) -> usize;

    /// Slow-start threshold in bytes; `usize::MAX` before the first exit from
    /// slow start.
    fn ssthresh(&self) -> usize;

    fn state(&self) -> CcState;

    /// Pacing this controller wants, if any.
    fn pacing(&self) -> Option<Pacing> {
        None
    }

    /// The controller's internals, for qlog.
    fn internals(&self, out: &mut Internals);

    /// A number that only grows, and grows whenever [`Self::internals`] could report
    /// something else than at the last fill, so the host can skip the fill
    /// and the diff on most ACKs; `None` (the default) means "may have
    /// changed", and the host fills every time.
    fn internals_generation(&self) -> Option<u64> {
        None
    }

    /// The path's maximum datagram size changed (PMTUD).
    fn on_max_datagram_size(&mut self, max_datagram_size: usize);
}

/// Window sizes the stack starts a controller with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowConfig {
    pub max_datagram_size: usize,
    pub initial_cwnd_packets: usize,
}

impl WindowConfig {
    pub fn initial_cwnd(&self) -> usize {
        self.max_datagram_size * self.initial_cwnd_packets
    }
}

/// One algorithm of this crate.
pub struct AlgorithmInfo {
    pub name: &'static str,
    /// One line for `--list-cc-algorithms`.
    pub description: &'static str,
    pub params: &'static [ParamInfo],
    /// Checks combinations of values that are each valid (e.g. alpha <= beta).
    pub validate: fn(&ParamValues) -> Result<(), String>,
    pub build: fn(&ParamValues, WindowConfig) -> Box<dyn CongestionController>,
}

/// An [`AlgorithmInfo::validate`] for algorithms whose parameters are
/// independent of each other.
pub fn no_constraints(_: &ParamValues) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_as_is_equality() {
        // A text of the same bytes from another allocation: equal by
        // content though not by pointer.
        let elsewhere: &'static str = Box::leak(String::from("slow").into_boxed_str());
        let values = [
            InternalValue::Float(1.5),
            InternalValue::Float(-0.0),
            InternalValue::Float(0.0),
            InternalValue::Float(f64::NAN),
            InternalValue::Int(3),
            InternalValue::Int(4),
            InternalValue::Text("slow"),
            InternalValue::Text(elsewhere),
            InternalValue::Text("fast"),
        ];
        for a in values {
            for b in values {
                assert_eq!(a.same_as(b), a == b, "{a:?} {b:?}");
            }
        }
        assert!(InternalValue::Text("slow").same_as(InternalValue::Text(elsewhere)));
    }
}

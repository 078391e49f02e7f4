//! vegas-emu: a real-time user-space link emulator for UDP traffic between
//! real processes, driven by the simulator's scenario files.
//!
//! It puts the links of a `vegas-sim` scenario (rate, propagation delay,
//! DropTail queue in packets or bytes, uniform/BER/Gilbert-Elliott loss,
//! asymmetric directions, changes at given times, cross traffic, AQT-enabled
//! routers) between a client and a server, using the simulator's own
//! scenario parser and link model ([`vegas_sim::scenario`],
//! [`vegas_sim::network`]). Two ways to sit between them:
//!
//! - [`bridge`]: in the router namespace of a client/router/server
//!   topology, bridging two interfaces with packet sockets;
//! - [`udp`]: a UDP relay on ports (loopback, when namespaces are not
//!   available).
//!
//! [`engine`] runs the model on real arrival times; [`runtime`] is the
//! scheduler thread that sends each delivery on time; [`aqt`] is how AQT
//! reaches a real receiver (an IPv4 option); [`harness`] measures the
//! emulator against its configuration.

pub mod aqt;
pub mod bridge;
pub mod clock;
pub mod engine;
pub mod frame;
pub mod harness;
pub mod runtime;
pub mod sockets;
pub mod stats;
pub mod udp;

pub use engine::{Direction, Engine, Paths};
pub use runtime::Timing;

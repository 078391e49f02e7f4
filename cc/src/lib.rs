//! Delay-based congestion controllers of the TCP Vegas family, written once
//! against a small event interface ([`events`], [`controller`]) so that they
//! run in quiche (through the seam in `quiche-seam/`), in the simulator and in
//! unit tests alike. This crate does not depend on any QUIC stack.
//!
//! Each algorithm is one module that reads like its paper's pseudo-code; the
//! pieces several papers share live in [`shared`]. The papers are in
//! `../shared/papers/` (see its README).

pub mod careful_resume;
pub mod controller;
pub mod events;
pub mod host;
pub mod params;
pub mod registry;
pub mod rovegas;
pub mod shared;
pub mod vegas;
pub mod vegas_a;
pub mod vegas_l;
pub mod vegas_linux;
pub mod vegas_sat;
pub mod vegas_w;
pub mod veno;
pub mod venodb;
pub mod westwood;

pub use careful_resume::{CarefulResumeConfig, SavedPath};
pub use controller::{
    CcState, CongestionController, InternalValue, Internals, KeyedGeneration, Pacing,
    MINIMUM_WINDOW_PACKETS,
};
pub use events::{
    AckEvent, AckReceived, AckSummary, AckedPacket, CongestionEvent, PacketSent, PeerReport,
    PeerStamp, RttSnapshot,
};
pub use host::ControllerHost;
pub use params::{ParamError, ParamInfo, ParamKind, ParamValues};
pub use registry::{resolve, AlgorithmInfo, ControllerSpec, SpecError, WindowConfig};

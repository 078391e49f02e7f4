//! vegas-sim: a virtual-time discrete-event network simulator that runs real
//! quiche connections (real packets, real crypto, the apps' own connection
//! code) over emulated links, deterministically and far faster than real
//! time.
//!
//! - [`scenario`]: the TOML scenario format, its checks, and the validated
//!   model;
//! - [`network`]: links (rate, delay, DropTail queue, loss models, AQT);
//! - [`cross_traffic`]: CBR and exponential ON-OFF sources;
//! - [`quic_flow`]: a quiche client and server on virtual time;
//! - [`simulator`]: the event loop and the CSV series;
//! - [`report`]: `summary.json` and the terminal table.

pub mod certificate;
pub mod cross_traffic;
pub mod event_queue;
pub mod network;
pub mod quic_flow;
pub mod random;
pub mod report;
pub mod scenario;
pub mod series;
pub mod simulator;
pub mod time;
pub mod trace;

pub use report::Summary;
pub use scenario::{Overrides, Scenario, ScenarioError};
pub use simulator::run;

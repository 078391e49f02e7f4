//! quiche glue shared by the apps (`quiche-server`, `quiche-client`), the
//! virtual-time network simulator (`vegas-sim`) and the link emulator
//! (`vegas-emu`).
//!
//! The layers, from the inside out:
//!
//! - [`cc_select`]: `--cc-algorithm NAME` and `--cc-param KEY=VALUE` applied to
//!   a `quiche::Config` (quiche's own algorithms or those of `vegas-cc`).
//! - [`settings`]: every transport setting the apps share (flow-control
//!   windows large enough for a satellite path, idle timeout, ALPN).
//! - [`transfer`]: sans-IO application logic on a `&mut quiche::Connection`:
//!   the server answering HTTP/3 and hq-interop requests from a
//!   [`transfer::ContentSource`], the client issuing requests and hashing the
//!   responses. No sockets, no clock.
//! - [`endpoint`]: one connection with its application and its paced
//!   [`pacing::Outbox`]; every method takes `now`, so it runs on real or
//!   virtual time alike.
//! - [`net`]: the real-socket event loops that drive endpoints with real time,
//!   with the server's defences (Retry address validation and a Retry budget
//!   per client socket from [`retry`], the kernel filter for flooding
//!   sockets from [`flood_filter`], connection limits).
//! - [`sockets`]: the one `recvmsg` (kernel receive and send stamps, IPv4
//!   options) and socket-address reading, shared with `vegas-emu`.
//! - [`qlog_output`]: one `.sqlog` per connection when `QLOGDIR` is set;
//!   [`qvis`]: its qvis form beside it (`--qvis`).
//! - [`private_file`]: the one private atomic write of the files the apps
//!   keep (Careful Resume's store, the client's session and token).

pub mod careful_resume;
pub mod cc_select;
pub mod client_state;
pub mod endpoint;
pub mod flood_filter;
pub mod net;
pub mod pacing;
pub mod private_file;
pub mod qlog_output;
pub mod qvis;
pub mod retry;
pub mod settings;
pub mod sockets;
pub mod tls;
pub mod transfer;

// The in-memory client and server of the unit tests, shared with the
// integration tests.
#[cfg(test)]
#[path = "../tests/common/in_memory.rs"]
mod in_memory;

// What a directory holds, for the unit tests that check which files were
// left behind (shared with the integration tests).
#[cfg(test)]
#[path = "../tests/common/listing.rs"]
mod listing;

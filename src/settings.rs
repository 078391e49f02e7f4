//! Transport settings shared by the apps and the simulator, and the
//! `quiche::Config` they make.

use anyhow::Context;

use crate::cc_select::{CcSelection, ResolvedCc};

/// Connection flow-control window. A 600 ms satellite path at 100 Mbit/s
/// holds 7.5 MB in flight; 100 MB leaves room for faster paths and deep
/// queues.
pub const DEFAULT_MAX_DATA: u64 = 100_000_000;
/// Per-stream flow-control window.
pub const DEFAULT_MAX_STREAM_DATA: u64 = 50_000_000;
/// Idle timeout in milliseconds (quiche's apps use the same default).
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 30_000;
/// UDP payload size of every datagram (quiche's apps use the same).
pub const MAX_DATAGRAM_SIZE: usize = 1350;
/// Largest UDP datagram accepted on receive.
pub const MAX_RECV_DATAGRAM_SIZE: usize = 65_535;
/// Concurrent request streams each side allows the other.
pub const MAX_STREAMS_BIDI: u64 = 128;
/// Unidirectional streams (HTTP/3 control and QPACK streams).
pub const MAX_STREAMS_UNI: u64 = 16;

/// Everything about a connection's transport that the command line can set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportSettings {
    /// Connection receive window: `initial_max_data`, kept for the whole
    /// connection.
    pub max_data: u64,
    /// Stream receive window: `initial_max_stream_data_*`, likewise kept.
    pub max_stream_data: u64,
    pub idle_timeout_ms: u64,
    pub cc: CcSelection,
}

impl Default for TransportSettings {
    fn default() -> Self {
        TransportSettings {
            max_data: DEFAULT_MAX_DATA,
            max_stream_data: DEFAULT_MAX_STREAM_DATA,
            idle_timeout_ms: DEFAULT_IDLE_TIMEOUT_MS,
            cc: CcSelection::default(),
        }
    }
}

impl TransportSettings {
    /// A quiche configuration offering `alpns` (in order of preference),
    /// with these settings and the selected congestion controller. TLS
    /// certificates and peer verification are left to the caller.
    pub fn build_config(&self, alpns: &[&[u8]]) -> anyhow::Result<(quiche::Config, ResolvedCc)> {
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION)
            .context("cannot create the QUIC configuration")?;
        config
            .set_application_protos(alpns)
            .context("invalid ALPN list")?;
        config.set_max_idle_timeout(self.idle_timeout_ms);
        config.set_max_recv_udp_payload_size(MAX_DATAGRAM_SIZE);
        config.set_max_send_udp_payload_size(MAX_DATAGRAM_SIZE);
        config.set_initial_max_data(self.max_data);
        config.set_initial_max_stream_data_bidi_local(self.max_stream_data);
        config.set_initial_max_stream_data_bidi_remote(self.max_stream_data);
        config.set_initial_max_stream_data_uni(self.max_stream_data);
        config.set_initial_max_streams_bidi(MAX_STREAMS_BIDI);
        config.set_initial_max_streams_uni(MAX_STREAMS_UNI);
        // quiche autotunes its windows up to these ceilings, 24 MB and 16 MB
        // by default, and clamps the initial windows to them. Making the
        // ceilings the initial windows keeps the windows what was asked for.
        config.set_max_connection_window(self.max_data);
        config.set_max_stream_window(self.max_stream_data);
        config.set_disable_active_migration(true);
        let resolved = self.cc.apply(&mut config)?;
        Ok((config, resolved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_settings_build() {
        let (_, cc) = TransportSettings::default().build_config(&[b"h3"]).unwrap();
        assert_eq!(cc.name(), "cubic");
    }

    #[test]
    fn bad_cc_is_an_error() {
        let settings = TransportSettings {
            cc: CcSelection::new("nope"),
            ..Default::default()
        };
        let Err(e) = settings.build_config(&[b"h3"]) else {
            panic!("nope was accepted");
        };
        let e = e.to_string();
        assert!(e.contains("unknown congestion control algorithm"), "{e}");
    }
}

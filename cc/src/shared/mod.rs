//! Pieces several algorithms share, written once.

pub mod ack_train;
pub mod bandwidth_filter;
pub mod base_rtt;
pub mod busy_link;
pub mod forward_queue;
pub mod pacing_profile;
pub mod packet_pair;
pub mod path_probe;
pub mod peer_clock;
pub mod peer_reports;
pub mod queueing_estimate;
pub mod recovery_epoch;
pub mod relative_delay;
pub mod round_clock;
pub mod send_ack_spacing;
pub mod vegas_diff;
pub mod window;
pub mod windowed_min;

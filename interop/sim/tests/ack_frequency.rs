//! ACK frequency (draft-ietf-quic-ack-frequency) in the simulator, with the
//! apps' connection code: the flow's `ack_frequency` switch decides whether
//! the server thins the client's ACKs, and on a thin return link that
//! decides whether the ACKs fit.

mod common;

/// A bulk download over a 100 Mbit/s path with a 1 Mbit/s return link and
/// 100 ms RTT, buffers of about one BDP.
fn scenario(cc: &str, ack_frequency: bool) -> String {
    format!(
        r#"
        duration_s = 60
        [links.forward]
        rate_mbps = 100
        delay_ms = 50
        queue_bytes = 1250000
        [links.return]
        rate_mbps = 1
        delay_ms = 50
        queue_bytes = 12500
        [flows.download]
        cc = "{cc}"
        under_test = true
        transfer_bytes = 20000000
        forward_path = ["forward"]
        return_path = ["return"]
        ack_frequency = {ack_frequency}
        "#
    )
}

#[test]
fn the_server_thins_the_clients_acks_to_the_threshold_it_asks_for() {
    for cc in ["vegas-sat", "cubic"] {
        let on = common::run(&scenario(cc, true));
        let off = common::run(&scenario(cc, false));
        let (on_flow, off_flow) = (on.flow("download"), off.flow("download"));
        assert_eq!(on_flow.verified, Some(true), "{cc}");
        assert_eq!(off_flow.verified, Some(true), "{cc}");

        let ext = on_flow.extensions;
        assert!(
            ext.ack_frequency && ext.ack_frequency_frames_sent >= 1,
            "{cc}: {ext:?}"
        );
        let threshold = ext
            .ack_eliciting_threshold
            .expect("a threshold was asked for");
        assert!(threshold >= 16, "{cc}: threshold {threshold}");
        assert_eq!(off_flow.extensions.ack_frequency_frames_sent, 0, "{cc}");
        assert_eq!(off_flow.extensions.ack_eliciting_threshold, None, "{cc}");

        // Without the extension the client acknowledges (nearly) every data
        // packet and the 1 Mbit/s return link drops ACKs; with it, about
        // one ACK per threshold + 1 packets, none dropped.
        let packets = 20_000_000 / 1300;
        let acks_off = off_flow.extensions.receiver_acks_sent;
        let acks_on = ext.receiver_acks_sent;
        assert!(acks_off >= packets / 2, "{cc}: {acks_off} ACKs without");
        assert!(
            acks_on <= 3 * packets / (threshold + 1),
            "{cc}: {acks_on} ACKs at threshold {threshold} for ~{packets} packets"
        );
        assert!(off.link("return").dropped_packets > 0, "{cc}");
        assert_eq!(on.link("return").dropped_packets, 0, "{cc}");
        let (t_on, t_off) = (
            on_flow.completion_s.unwrap(),
            off_flow.completion_s.unwrap(),
        );
        assert!(t_on < t_off, "{cc}: {t_on} s with, {t_off} s without");
    }
}

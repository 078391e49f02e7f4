//! Our QUIC extensions in the simulator: AQT-enabled routers feed the
//! queueing-time extension (each datagram's accumulated queueing time reaches
//! its endpoint with the datagram), the flows' `receive_timestamps` and
//! `queueing_time_frame` switches decide what the endpoints negotiate, and
//! the delay-based controllers say in qlog which source they used.

mod common;

use serde_json::Value;

/// The events of `name` in an endpoint's qlog.
fn qlog_events(run: &common::Run, file: &str, name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(run.path(file)).unwrap();
    text.split('\u{1e}')
        .filter_map(|r| serde_json::from_str::<Value>(r.trim()).ok())
        .filter(|e| e["name"] == name)
        .collect()
}

/// A field of the server's `recovery_metrics_updated` events, in order.
fn metrics(run: &common::Run, flow: &str, field: &str) -> Vec<Value> {
    qlog_events(
        run,
        &format!("{flow}-server.sqlog"),
        "quic:recovery_metrics_updated",
    )
    .into_iter()
    .filter_map(|e| e["data"].get(field).cloned())
    .collect()
}

/// Frames of `frame_type` among the extension frames the server received.
fn frames_received(run: &common::Run, flow: &str, frame_type: &str) -> usize {
    qlog_events(run, &format!("{flow}-server.sqlog"), "quic:packet_received")
        .iter()
        .filter_map(|e| e["extension_frames"].as_array())
        .flatten()
        .filter(|f| f["frame_type"] == frame_type)
        .count()
}

/// A RoVegas and a VenoDB download sharing a 10 Mbit/s, 2 x 40 ms path with
/// ON-OFF load on the return link (backward queueing); every link AQT-enabled
/// or none; both flows with the given extension switches.
fn scenario(aqt: bool, receive_timestamps: bool, queueing_time_frame: bool) -> String {
    let mut text = format!(
        r#"
        duration_s = 30
        [links.down]
        rate_mbps = 10
        delay_ms = 40
        queue_packets = 60
        aqt = {aqt}
        [links.up]
        rate_mbps = 2
        delay_ms = 40
        queue_packets = 60
        aqt = {aqt}
        [cross_traffic.backward]
        kind = "vbr"
        rate_mbps = 1.5
        mean_on_ms = 50
        mean_off_ms = 50
        path = ["up"]
        "#
    );
    for cc in ["rovegas", "venodb"] {
        text.push_str(&format!(
            r#"
            [flows.{cc}]
            cc = "{cc}"
            transfer_bytes = 1500000
            forward_path = ["down"]
            return_path = ["up"]
            receive_timestamps = {receive_timestamps}
            queueing_time_frame = {queueing_time_frame}
            "#
        ));
    }
    text
}

/// What one combination of AQT routers and switches must give.
struct Case {
    aqt: bool,
    receive_timestamps: bool,
    queueing_time_frame: bool,
    rovegas_source: &'static str,
    venodb_source: &'static str,
}

#[test]
fn delay_sources_follow_aqt_routers_and_the_extension_switches() {
    let cases = [
        // Every router AQT-enabled, everything negotiated: RoVegas takes
        // AQT (backward) and AQT-echo (forward); VenoDB the timestamps.
        Case {
            aqt: true,
            receive_timestamps: true,
            queueing_time_frame: true,
            rovegas_source: "aqt",
            venodb_source: "receive_timestamps",
        },
        // No AQT router: RoVegas estimates from receive timestamps.
        Case {
            aqt: false,
            receive_timestamps: true,
            queueing_time_frame: true,
            rovegas_source: "receive_timestamps",
            venodb_source: "receive_timestamps",
        },
        // Neither: RoVegas is Vegas, VenoDB times ACK arrivals.
        Case {
            aqt: false,
            receive_timestamps: false,
            queueing_time_frame: false,
            rovegas_source: "none",
            venodb_source: "ack_arrival",
        },
        // AQT routers but no QUEUEING_TIME frame: the backward queueing time
        // of the ACKs' own datagrams needs no negotiation, so RoVegas still
        // uses AQT, with no forward values.
        Case {
            aqt: true,
            receive_timestamps: false,
            queueing_time_frame: false,
            rovegas_source: "aqt",
            venodb_source: "ack_arrival",
        },
    ];
    for case in cases {
        let r = common::run(&scenario(
            case.aqt,
            case.receive_timestamps,
            case.queueing_time_frame,
        ));
        let label = format!(
            "aqt routers {}, receive_timestamps {}, queueing_time_frame {}",
            case.aqt, case.receive_timestamps, case.queueing_time_frame
        );
        for (flow, expected) in [
            ("rovegas", case.rovegas_source),
            ("venodb", case.venodb_source),
        ] {
            let summary = r.flow(flow);
            assert_eq!(summary.verified, Some(true), "{label}: {summary:?}");
            let sources = metrics(&r, flow, "delay_source");
            let sources: Vec<&str> = sources.iter().filter_map(Value::as_str).collect();
            assert_eq!(
                sources.last().copied(),
                Some(expected),
                "{label}: {flow}'s delay_source"
            );
            // Once the first 1-RTT ACKs are in, the source never changes.
            let settled = sources.iter().position(|s| *s == expected).unwrap();
            assert!(
                sources[settled..].iter().all(|s| *s == expected),
                "{label}: {flow} {sources:?}"
            );

            // What reached the data sender's controller, and which frames
            // the server received.
            let ext = summary.extensions;
            assert_eq!(ext.receive_timestamps, case.receive_timestamps);
            assert_eq!(ext.queueing_time_frame, case.queueing_time_frame);
            assert_eq!(
                ext.receive_times_handed > 0,
                case.receive_timestamps,
                "{label}: {flow} {ext:?}"
            );
            let echoes = case.aqt && case.queueing_time_frame;
            assert_eq!(
                ext.forward_queueing_handed > 0,
                echoes,
                "{label}: {flow} {ext:?}"
            );
            assert_eq!(
                ext.backward_queueing_handed > 0,
                case.aqt,
                "{label}: {flow} {ext:?}"
            );
            assert_eq!(
                frames_received(&r, flow, "queueing_time") > 0,
                echoes,
                "{label}: {flow}"
            );
            assert_eq!(
                frames_received(&r, flow, "ack_receive_timestamps") > 0,
                case.receive_timestamps,
                "{label}: {flow}"
            );
        }

        // RoVegas applied what the routers measured: queueing in both
        // directions (the return link is loaded), forward only when echoed.
        let largest = |field: &str| {
            metrics(&r, "rovegas", field)
                .iter()
                .filter_map(Value::as_f64)
                .fold(0.0f64, f64::max)
        };
        let (qf, qb) = (largest("qt_forward_ms"), largest("qt_backward_ms"));
        match case.rovegas_source {
            "aqt" => {
                assert!(qb > 1.0, "{label}: largest QTb {qb} ms");
                if case.queueing_time_frame {
                    // The forward queue holds at most 60 datagrams of 1378
                    // wire bytes at 10 Mbit/s: 66.1 ms of queueing.
                    let full = common::serialisation_ms(60.0 * 1378.0, 10.0);
                    assert!(qf > 1.0 && qf <= full, "{label}: largest QTf {qf} ms");
                } else {
                    assert_eq!(qf, 0.0, "{label}: QTf without echoes");
                }
            }
            "none" => assert_eq!((qf, qb), (0.0, 0.0), "{label}"),
            _ => assert!(qb > 1.0, "{label}: largest estimated QTb {qb} ms"),
        }
        if case.aqt {
            // Every datagram crossed an AQT router in each direction.
            let f = r.flow("rovegas");
            assert!(f.mean_aqt_to_client_ms.is_some() && f.mean_aqt_to_server_ms.is_some());
        }
    }
}

#[test]
fn switches_default_to_on_and_are_checked() {
    let s = common::scenario(
        r#"
        duration_s = 1
        [links.l]
        rate_mbps = 1
        delay_ms = 1
        queue_packets = 10
        [flows.a]
        cc = "cubic"
        forward_path = ["l"]
        return_path = ["l"]
        [flows.b]
        cc = "cubic"
        forward_path = ["l"]
        return_path = ["l"]
        receive_timestamps = false
        queueing_time_frame = false
        "#,
    );
    assert!(s.flows[0].receive_timestamps && s.flows[0].queueing_time_frame);
    assert!(!s.flows[1].receive_timestamps && !s.flows[1].queueing_time_frame);

    let err = vegas_sim::Scenario::parse(
        r#"
        duration_s = 1
        [links.l]
        rate_mbps = 1
        delay_ms = 1
        queue_packets = 10
        [flows.a]
        cc = "cubic"
        forward_path = ["l"]
        return_path = ["l"]
        receive_timestamps = "yes"
        "#,
        std::path::Path::new("switch.toml"),
        &vegas_sim::Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("switch.toml") && err.contains("flows.a.receive_timestamps"),
        "{err}"
    );
}

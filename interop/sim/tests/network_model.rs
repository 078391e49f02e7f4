//! The network model against analytic expectations, with cross traffic only
//! (no QUIC), so these runs take milliseconds.

mod common;

use common::run;

/// Datagrams of 1200 bytes of payload: 1228 bytes on the wire.
const WIRE_BYTES: f64 = 1228.0;

#[test]
fn queue_in_packets_never_exceeds_its_limit() {
    // 15 Mbit/s of CBR plus bursts into a 10 Mbit/s link: the queue is full
    // most of the time and DropTail must hold it at 7.
    let r = run(r#"
        duration_s = 5
        sample_interval_ms = 1
        [links.bottleneck]
        rate_mbps = 10
        delay_ms = 5
        queue_packets = 7
        [cross_traffic.steady]
        kind = "cbr"
        rate_mbps = 15
        path = ["bottleneck"]
        [cross_traffic.bursts]
        kind = "vbr"
        rate_mbps = 40
        mean_on_ms = 5
        mean_off_ms = 20
        packet_bytes = 300
        path = ["bottleneck"]
    "#);
    let link = r.link("bottleneck");
    assert!(link.dropped_packets > 1000, "{link:?}");
    assert_eq!(link.max_queue_packets, 7, "{link:?}");
    let maxima = r.column("queue-bottleneck.csv", "max_queue_packets");
    assert!(maxima.len() > 4000);
    assert!(maxima.iter().all(|m| *m <= 7.0));
    assert!(r
        .column("queue-bottleneck.csv", "queue_packets")
        .iter()
        .all(|q| *q <= 7.0));
}

#[test]
fn queue_in_bytes_never_exceeds_its_limit() {
    // Two sizes of datagram, so that the byte limit is not a multiple of one.
    let r = run(r#"
        duration_s = 5
        sample_interval_ms = 1
        [links.bottleneck]
        rate_mbps = 5
        delay_ms = 5
        queue_bytes = 5000
        [cross_traffic.large]
        kind = "cbr"
        rate_mbps = 4
        packet_bytes = 1172
        path = ["bottleneck"]
        [cross_traffic.small]
        kind = "vbr"
        rate_mbps = 10
        mean_on_ms = 10
        mean_off_ms = 10
        packet_bytes = 272
        path = ["bottleneck"]
    "#);
    let link = r.link("bottleneck");
    assert!(link.dropped_packets > 100, "{link:?}");
    assert!(link.max_queue_bytes <= 5000, "{link:?}");
    // Within one datagram of the limit: the limit was actually reached.
    assert!(link.max_queue_bytes > 5000 - 1200, "{link:?}");
    assert!(r
        .column("queue-bottleneck.csv", "max_queue_bytes")
        .iter()
        .all(|b| *b <= 5000.0));
}

/// `lost` of `n` datagrams is within 4 standard deviations of `p`.
fn assert_binomial(lost: u64, n: u64, p: f64) {
    let measured = lost as f64 / n as f64;
    let sigma = (p * (1.0 - p) / n as f64).sqrt();
    assert!(
        (measured - p).abs() < 4.0 * sigma,
        "measured {measured} over {n} datagrams, expected {p} ± {}",
        4.0 * sigma
    );
}

/// A 50 Mbit/s CBR source over an uncongested link with `loss`.
fn lossy_cbr(loss: &str, seconds: u32) -> common::Run {
    run(&format!(
        r#"
        duration_s = {seconds}
        sample_interval_ms = 1000
        [links.wire]
        rate_mbps = 100
        delay_ms = 1
        queue_packets = 100
        {loss}
        [cross_traffic.probe]
        kind = "cbr"
        rate_mbps = 50
        path = ["wire"]
        "#
    ))
}

#[test]
fn uniform_loss_rate_matches() {
    let r = lossy_cbr("packet_loss = 0.05", 10);
    let link = r.link("wire");
    assert!(link.transmitted_packets > 50_000);
    assert_binomial(link.lost_packets, link.transmitted_packets, 0.05);
    // What survived the wire reached the sink, but for the few datagrams
    // still propagating when the run ended.
    let delivered = r.summary.cross_traffic[0].bytes_delivered / WIRE_BYTES as u64;
    let survived = link.transmitted_packets - link.lost_packets;
    assert!(
        delivered <= survived && survived - delivered < 10,
        "{delivered} {survived}"
    );
}

#[test]
fn bit_error_rate_becomes_a_per_datagram_rate_by_size() {
    let ber: f64 = 2e-6;
    let r = lossy_cbr(&format!("bit_error_rate = {ber}"), 10);
    let link = r.link("wire");
    let p = 1.0 - (1.0 - ber).powf(8.0 * WIRE_BYTES);
    assert_binomial(link.lost_packets, link.transmitted_packets, p);
}

#[test]
fn gilbert_elliott_loss_rate_is_the_stationary_one() {
    // Stationary probability of the bad state: p / (p + r) = 1/11.
    let r = lossy_cbr(
        "gilbert_elliott = { p_good_to_bad = 0.01, p_bad_to_good = 0.1, loss_in_good = 0.0, loss_in_bad = 1.0 }",
        40,
    );
    let link = r.link("wire");
    let measured = link.lost_packets as f64 / link.transmitted_packets as f64;
    // Losses come in bursts (mean length 10), so the spread is about ten
    // times the binomial one: allow 10% relative.
    assert!((measured - 1.0 / 11.0).abs() < 0.1 / 11.0, "{measured}");
}

#[test]
fn rate_step_and_blackout_take_effect_at_their_times() {
    // 5 Mbit/s of CBR into a 10 Mbit/s link; from 1 s the link carries only
    // 2 Mbit/s; from 3 s to 3.5 s it is blacked out.
    let r = run(r#"
        duration_s = 4
        sample_interval_ms = 100
        [links.wire]
        rate_mbps = 10
        delay_ms = 10
        queue_packets = 20
        [cross_traffic.probe]
        kind = "cbr"
        rate_mbps = 5
        path = ["wire"]
        [[changes]]
        at_s = 1
        link = "wire"
        rate_mbps = 2
        [[changes]]
        at_s = 3
        link = "wire"
        blackout_s = 0.5
    "#);
    let link = r.link("wire");
    let packets_per_second = |mbps: f64| mbps * 1e6 / (8.0 * WIRE_BYTES);
    // Before the step all of the source gets through; after it, 2 Mbit/s.
    let expected = packets_per_second(5.0) * 1.0 + packets_per_second(2.0) * 3.0;
    let transmitted = link.transmitted_packets as f64;
    assert!(
        (transmitted - expected).abs() < 25.0,
        "{transmitted} vs {expected}"
    );
    // Half a second of the 2 Mbit/s link is lost to the blackout.
    let blackout = link.blackout_packets as f64;
    assert!(
        (blackout - packets_per_second(2.0) * 0.5).abs() < 2.0,
        "{blackout}"
    );
    assert!(link.dropped_packets > 0);
    // The per-interval utilization shows the full link before and after.
    let utilization = r.column("queue-wire.csv", "utilization");
    assert!(
        utilization[5] < 0.6 && utilization[20] > 0.95,
        "{utilization:?}"
    );
}

#[test]
fn on_off_source_has_its_mean_rate() {
    // RoVegas' VBR source: ON 10 ms at 2 Mbit/s, OFF 12.22 ms on average,
    // for 900 kbit/s.
    let r = run(r#"
        duration_s = 200
        sample_interval_ms = 1000
        [links.wire]
        rate_mbps = 100
        delay_ms = 1
        queue_packets = 100
        [cross_traffic.vbr]
        kind = "vbr"
        rate_mbps = 2
        mean_on_ms = 10
        mean_off_ms = 12.222
        path = ["wire"]
    "#);
    let rate = r.summary.cross_traffic[0].delivered_bps;
    assert!((rate - 0.9e6).abs() < 0.045e6, "{rate}");
}

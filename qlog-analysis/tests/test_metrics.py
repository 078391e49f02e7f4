import json
import math

import numpy as np
import pytest

from vegas_qlog import (
    cc_internals,
    congestion_states,
    delivered_bytes,
    goodput_series,
    jain_index,
    read_qlog,
    recovery_metrics,
    retransmission_ratio,
    stream_bytes_sent,
    trace_summary,
    window_series,
)
from vegas_qlog.metrics import STANDARD_RECOVERY_FIELDS, _Coverage, lost_packets, rate_series
from vegas_qlog.sqlog import Event, Trace


def summary_flow(sim_dir):
    return json.loads((sim_dir / "summary.json").read_text())["flows"][0]


def test_recovery_metrics_forward_filled(server_sqlog):
    trace = read_qlog(server_sqlog)
    raw = recovery_metrics(trace, fill=False)
    filled = recovery_metrics(trace)
    events = list(trace.named("quic:recovery_metrics_updated"))
    assert len(filled) == len(raw) == len(events)
    assert list(filled.columns[:1]) == ["time_s"]
    # Sparse events: a field is logged only when it changes ...
    assert raw["congestion_window"].isna().sum() > len(raw) / 2
    # ... and forward filling gives every row the latest value.
    first = int(raw["congestion_window"].first_valid_index())
    assert filled["congestion_window"].iloc[first:].notna().all()
    last_logged = [e.data["congestion_window"] for e in events if "congestion_window" in e.data][-1]
    assert filled["congestion_window"].iloc[-1] == last_logged
    # Nested quiche counters are flattened; their deltas are not carried over.
    assert "cf_lost_packets_total" in filled.columns
    assert (filled["cf_lost_packets_delta"] >= 0).all()
    assert filled["cf_lost_packets_delta"].sum() == filled["cf_lost_packets_total"].iloc[-1]
    # u64::MAX (no threshold yet) reads as infinity.
    assert math.isinf(filled["ssthresh"].iloc[0])
    assert filled["ssthresh"].iloc[-1] < 1e9


def test_cc_internals_are_the_extra_fields(server_sqlog):
    internals = cc_internals(read_qlog(server_sqlog))
    columns = set(internals.columns)
    assert {"time_s", "base_rtt_ms", "min_rtt_ms", "diff_packets", "alpha", "beta", "cwnd_packets"} <= columns
    assert not columns & STANDARD_RECOVERY_FIELDS
    assert not [c for c in columns if c.startswith("cf_")]
    assert internals["alpha"].iloc[-1] == 1.0
    assert internals["beta"].iloc[-1] == 3.0
    assert internals["flavour"].iloc[-1] == "paper"
    assert internals["base_rtt_ms"].dropna().is_monotonic_decreasing


def test_window_series(server_sqlog):
    window = window_series(read_qlog(server_sqlog))
    assert list(window.columns) == [
        "time_s",
        "cwnd_bytes",
        "bytes_in_flight",
        "ssthresh",
        "pacing_rate",
        "min_rtt_ms",
        "smoothed_rtt_ms",
        "latest_rtt_ms",
        "rtt_variance_ms",
    ]
    assert window["cwnd_bytes"].iloc[0] == 13500  # quiche's initial window: 10 packets of 1350
    assert window["min_rtt_ms"].min() > 40  # twice the 20 ms links plus serialisation
    assert window["time_s"].is_monotonic_increasing


def test_congestion_states(server_sqlog):
    states = congestion_states(read_qlog(server_sqlog))
    assert list(states["state"]) == ["slow_start", "recovery", "congestion_avoidance"]
    assert list(states["time_s"]) == [0.0, 0.106016, 0.152532]


def test_retransmissions_match_the_simulator(server_sqlog, sim_dir):
    sent = stream_bytes_sent(read_qlog(server_sqlog))
    flow = summary_flow(sim_dir)
    assert int(sent["retransmitted_bytes"].sum()) == flow["bytes_retransmitted"]
    assert (sent["new_bytes"] + sent["retransmitted_bytes"] == sent["stream_bytes"]).all()
    assert lost_packets(read_qlog(server_sqlog)) == flow["packets_lost"]


def test_delivered_bytes_from_the_receiver(client_sqlog, sim_dir):
    delivered = delivered_bytes(read_qlog(client_sqlog))
    body = summary_flow(sim_dir)["bytes_delivered"]
    # The body plus HTTP/3 framing (a HEADERS and a DATA frame header).
    assert body <= delivered["bytes"].sum() <= body * 1.01
    assert delivered["time_s"].is_monotonic_increasing


def test_delivered_bytes_from_the_sender_counts_each_offset_once(server_sqlog):
    trace = read_qlog(server_sqlog)
    acked = delivered_bytes(trace, "sent")
    sent = stream_bytes_sent(trace)
    assert 0 < acked["bytes"].sum() <= sent["new_bytes"].sum()
    assert delivered_bytes(trace)["bytes"].sum() == acked["bytes"].sum()  # the sender's side wins
    with pytest.raises(ValueError, match="direction"):
        delivered_bytes(trace, "sideways")


def test_goodput_series(client_sqlog):
    trace = read_qlog(client_sqlog)
    series = goodput_series(trace, 0.05)
    total = delivered_bytes(trace)["bytes"].sum()
    assert series["bytes"].sum() == total
    assert series["cumulative_bytes"].iloc[-1] == total
    assert np.allclose(series["goodput_bps"], series["bytes"] * 8 / 0.05)
    assert series["time_s"].iloc[0] == 0.05
    with pytest.raises(ValueError, match="interval_s must be positive"):
        goodput_series(trace, 0)


def test_rate_series_bins():
    series = rate_series([0.0, 0.05, 0.1, 0.25], [100, 100, 50, 10], 0.1)
    assert list(series["bytes"]) == [200, 50, 10]
    assert list(series["time_s"]) == [0.1, 0.2, 0.3]
    assert list(series["goodput_bps"]) == [16000, 4000, 800]
    assert rate_series([], [], 0.1).empty


def test_coverage_counts_new_bytes_once():
    cov = _Coverage()
    assert cov.add(0, 100) == 100
    assert cov.add(200, 300) == 100
    assert cov.add(50, 250) == 100  # only 100..200 is new
    assert cov.add(0, 300) == 0
    assert cov.add(300, 310) == 10
    assert cov.add(5, 5) == 0
    assert cov._starts == [0]
    assert cov._ends == [310]


def test_trace_summary(server_sqlog, client_sqlog, sim_dir):
    flow = summary_flow(sim_dir)
    server = trace_summary(read_qlog(server_sqlog))
    assert server["vantage_point"] == "server"
    assert server["bytes_retransmitted"] == flow["bytes_retransmitted"]
    assert server["packets_lost"] == flow["packets_lost"]
    assert 0.3 < server["retransmission_ratio"] < 0.33
    client = trace_summary(read_qlog(client_sqlog))
    assert client["goodput_bps"] == pytest.approx(flow["goodput_bps"], rel=0.02)


def test_trace_without_metrics():
    trace = Trace("x", {}, [Event(0.0, "quic:packet_sent", {})])
    assert list(recovery_metrics(trace).columns) == ["time_s"]
    assert window_series(trace).empty
    assert congestion_states(trace).empty
    assert lost_packets(trace) == 0
    assert lost_packets(Trace("x", {}, [Event(1.0, "quic:packet_lost", {})] * 3)) == 3


def test_jain_index():
    assert jain_index([5, 5, 5, 5]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index([1, 2, 3]) == pytest.approx(36 / 42)
    assert jain_index([0, 0]) == 1.0
    assert math.isnan(jain_index([]))


def test_retransmission_ratio():
    assert retransmission_ratio(0, 1000) == 0.0
    assert retransmission_ratio(1000, 1000) == 0.5
    assert retransmission_ratio(5562, 12000) == pytest.approx(5562 / 17562)
    assert math.isnan(retransmission_ratio(0, 0))

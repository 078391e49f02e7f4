"""The qvis converter: the name mapping, every field of every real event, and
what qvis itself checks when it loads a file.

The checks in ``qvis_load`` follow qvis's loader (quiclog/qvis,
visualizations/src/components/filemanager/data/FileLoader.ts,
visualizations/src/data/QlogLoader.ts and QlogLoaderV2.ts, and the congestion
graph in components/congestiongraph/renderer/CongestionGraphD3Renderer.ts).
"""

import copy
import json

import pytest

from vegas_qlog import QlogWarning, read_qlog, read_qlog_traces, to_qvis, write_qvis
from vegas_qlog.qvis import (
    EVENT_NAMES,
    convert_data,
    convert_event,
    convert_name,
    default_output,
    reference_time_ms,
)

# qvis's Defaults.versionAliases (QlogSchema02.ts) in the oldest release that
# reads the draft-02 form; later releases add "qlog-03-WIP" and "0.3".
QVIS_DRAFT02_VERSIONS = ["draft-02", "draft-02-RC1"]


def qvis_load(text: str) -> dict[tuple[str, str], list[dict]]:
    """What qvis does with a file named *.qlog, as far as our files go.

    Returns, for the first trace, qvis's lookup table (category, event) ->
    events, after asserting every condition under which qvis would refuse
    the file, mis-detect it, or pop up its "non-compliant draft-02" alert.
    """
    head = text[:1024]
    # FileLoader.GuesstimateFileTypeFromHeader: must be read as plain JSON.
    assert "qlog_version" in head
    assert "qlog_format" in head
    assert "NDJSON" not in head
    assert "JSON-SEQ" not in head
    doc = json.loads(text)
    assert doc["qlog_version"] in QVIS_DRAFT02_VERSIONS
    assert doc["qlog_format"] == "JSON"  # else: "does not specify a qlog_format" alert
    tables = []
    for trace in doc["traces"]:
        assert "error_description" not in trace
        assert not trace.get("event_fields")  # else: "still uses event_fields" alert
        assert trace["vantage_point"]["type"] in ("client", "server", "network", "unknown")
        common = trace["common_fields"]
        assert common["time_format"] == "relative"
        # parseReferenceTime: parseFloat of an object is NaN.
        assert isinstance(common["reference_time"], float)
        assert "category" not in common
        assert "name" not in common
        assert trace["configuration"]["time_units"] == "ms"
        events = trace["events"]
        times = [e["time"] for e in events]
        assert times == sorted(times)  # else: "not absolutely ordered" alert
        table: dict[tuple[str, str], list[dict]] = {}
        for e in events:
            assert isinstance(e["time"], float)
            # DirectEventParser: category and event from "category:event".
            category, _, name = e["name"].partition(":")
            assert name, e["name"]
            data = e["data"]
            assert "packet_type" not in data  # alert: use header.packet_type
            assert "packet_size" not in data.get("header", {})  # alert: use raw.length
            assert "payload_length" not in data.get("header", {})
            table.setdefault((category, name), []).append(e)
        tables.append(table)
    return tables[0]


@pytest.fixture
def server_trace(server_sqlog):
    return read_qlog(server_sqlog)


def test_every_quic_name_maps_to_a_draft02_category():
    categories = {"connectivity", "transport", "security", "recovery", "error", "warning", "info", "debug", "verbose"}
    for source, target in EVENT_NAMES.items():
        category, _, kind = target.partition(":")
        assert category in categories, source
        assert kind
    assert convert_name("quic:packet_sent") == "transport:packet_sent"
    assert convert_name("quic:recovery_metrics_updated") == "recovery:metrics_updated"
    assert convert_name("quic:congestion_state_updated") == "recovery:congestion_state_updated"
    assert convert_name("quic:stream_data_moved") == "transport:data_moved"
    assert convert_name("quic:key_discarded") == "security:key_retired"
    assert convert_name("http3:frame_created") == "http:frame_created"
    assert convert_name("qpack:instruction_created") == "qpack:instruction_created"
    assert convert_name("quic:something_new") == "transport:something_new"
    assert convert_name("transport:packet_sent") == "transport:packet_sent"  # already old-style
    assert convert_name("custom") == "custom"


ADDED = {
    # name: keys the converter adds to data (besides renaming initiator)
    "quic:stream_data_moved": {"length"},
    "http3:stream_type_set": {"new"},
}


def test_mapping_field_by_field(server_trace, client_sqlog):
    """Every event of both real traces: same time, mapped name, and the same
    data except exactly the documented renames and additions."""
    seen = set()
    for trace in (server_trace, read_qlog(client_sqlog)):
        for event in trace.events:
            original = copy.deepcopy(event.data)
            out = convert_event(event)
            assert event.data == original  # the input is left alone
            assert out["time"] == event.time
            assert out["name"] == convert_name(event.name)
            data = out["data"]
            expected = copy.deepcopy(original)
            if "initiator" in expected:
                expected = {("owner" if k == "initiator" else k): v for k, v in expected.items()}
                assert list(data)[: len(expected)] == list(expected)  # order kept
            for key in ADDED.get(event.name, set()):
                assert key in data
                expected[key] = data[key]
            if event.name == "quic:stream_data_moved":
                assert data["length"] == original["raw"]["length"]
            if event.name == "http3:stream_type_set":
                assert data["new"] == original["stream_type"]
            for i, frame in enumerate(expected.get("frames", [])):
                if frame["frame_type"] in ("stream", "crypto"):
                    assert data["frames"][i]["length"] == frame["raw"]["payload_length"]
                    frame["length"] = frame["raw"]["payload_length"]
            assert data == expected, event.name
            seen.add(event.name)
    assert {
        "quic:parameters_set",
        "quic:packet_sent",
        "quic:packet_received",
        "quic:recovery_metrics_updated",
        "quic:congestion_state_updated",
        "quic:stream_data_moved",
        "http3:stream_type_set",
        "http3:frame_created",
    } <= seen


def test_recovery_metrics_keep_the_controllers_fields(server_trace):
    converted = [convert_event(e) for e in server_trace.named("quic:recovery_metrics_updated")]
    extras = {
        "base_rtt_ms",
        "min_rtt_ms",
        "diff_packets",
        "alpha",
        "beta",
        "expected_bps",
        "actual_bps",
        "cf_lost_packets",
    }
    present = set().union(*(c["data"].keys() for c in converted))
    assert extras <= present
    for event, out in zip(server_trace.named("quic:recovery_metrics_updated"), converted, strict=True):
        assert out["name"] == "recovery:metrics_updated"
        assert out["data"] == event.data


def test_small_conversions():
    assert convert_data("quic:parameters_set", {"initiator": "remote", "a": 1}) == {"owner": "remote", "a": 1}
    assert convert_data("quic:x", {"initiator": "local", "owner": "remote"}) == {
        "initiator": "local",
        "owner": "remote",
    }
    frames = {"frames": [{"frame_type": "crypto", "offset": 0, "raw": {"payload_length": 9}}, {"frame_type": "ack"}, 3]}
    assert convert_data("quic:packet_sent", frames)["frames"][:2] == [
        {"frame_type": "crypto", "offset": 0, "raw": {"payload_length": 9}, "length": 9},
        {"frame_type": "ack"},
    ]
    kept = {"frames": [{"frame_type": "stream", "length": 4, "raw": {"payload_length": 9}}]}
    assert convert_data("quic:packet_sent", kept) == kept


def test_reference_time():
    quiche = {"trace": {"common_fields": {"reference_time": {"wall_clock_time": "1970-01-01T00:00:01.5Z"}}}}
    assert reference_time_ms(quiche) == 1500.0
    nanos = {"trace": {"common_fields": {"reference_time": {"wall_clock_time": "2026-11-22T07:16:29.462043515Z"}}}}
    assert reference_time_ms(nanos) == pytest.approx(1795331789462.0435, abs=1e-3)
    assert reference_time_ms({"trace": {"common_fields": {"reference_time": 42}}}) == 42.0
    assert reference_time_ms({"common_fields": {"reference_time": "17.5"}}) == 17.5
    assert reference_time_ms({"trace": {"common_fields": {"reference_time": {"wall_clock_time": "soon"}}}}) == 0.0
    assert reference_time_ms({}) == 0.0


def test_document_loads_in_qvis(server_trace):
    doc = to_qvis(server_trace)
    text = json.dumps(doc)
    table = qvis_load(text)
    trace = doc["traces"][0]
    assert trace["vantage_point"]["type"] == "server"
    assert trace["common_fields"]["reference_time"] == pytest.approx(reference_time_ms(server_trace.header))
    assert trace["configuration"]["original_reference_time"]["clock_type"] == "monotonic"
    # What the congestion graph looks up (CongestionGraphD3Renderer.parseQlog).
    sent = table[("transport", "packet_sent")]
    assert len(sent) == sum(1 for _ in server_trace.named("quic:packet_sent"))
    for e in sent:
        assert e["data"]["raw"]["length"] > 0
        assert isinstance(e["data"]["header"]["packet_number"], int)
    received = table[("transport", "packet_received")]
    assert any(f["frame_type"] == "ack" and f["acked_ranges"] for e in received for f in e["data"]["frames"])
    metrics = table[("recovery", "metrics_updated")]
    assert any("congestion_window" in e["data"] for e in metrics)
    assert any("bytes_in_flight" in e["data"] for e in metrics)
    assert any("smoothed_rtt" in e["data"] for e in metrics)
    params = table[("transport", "parameters_set")]
    assert [p["data"]["owner"] for p in params] == ["local", "remote"]
    assert "initial_max_data" in params[1]["data"]
    assert [e["data"]["new"] for e in table[("recovery", "congestion_state_updated")]] == [
        "slow_start",
        "recovery",
        "congestion_avoidance",
    ]


def test_cli_writes_files_qvis_loads(server_sqlog, client_sqlog, tmp_path):
    from vegas_qlog.cli import main

    single = tmp_path / "server.qlog"
    assert main(["to-qvis", str(server_sqlog), "-o", str(single)]) == 0
    qvis_load(single.read_text())
    both = tmp_path / "both.qlog"
    assert main(["to-qvis", str(server_sqlog), str(client_sqlog), "-o", str(both)]) == 0
    doc = json.loads(both.read_text())
    assert [t["vantage_point"]["type"] for t in doc["traces"]] == ["server", "client"]
    for trace in doc["traces"]:
        qvis_load(json.dumps({**doc, "traces": [trace]}))
    # Our own reader reads the result back.
    back = read_qlog_traces(both, strict=True)
    assert [len(t.events) for t in back] == [len(read_qlog(server_sqlog).events), len(read_qlog(client_sqlog).events)]
    assert back[0].events[0].name == "transport:parameters_set"


def test_default_output_next_to_the_input(server_sqlog, tmp_path):
    local = tmp_path / "vegas-server.sqlog"
    local.write_bytes(server_sqlog.read_bytes())
    from vegas_qlog.cli import main

    assert main(["to-qvis", str(local)]) == 0
    assert (tmp_path / "vegas-server.qlog").exists()
    assert default_output(tmp_path / "a.qlog") == tmp_path / "a.qvis.qlog"


def test_truncated_input_still_converts(server_sqlog, tmp_path):
    raw = server_sqlog.read_bytes()
    cut = tmp_path / "cut.sqlog"
    cut.write_bytes(raw[:-30])
    with pytest.warns(QlogWarning, match="truncated record"):
        out, traces = write_qvis([cut], tmp_path / "cut.qlog")
    qvis_load(out.read_text())
    assert len(traces[0].events) == len(read_qlog(server_sqlog).events) - 1
    with pytest.raises(ValueError, match="no trace"):
        to_qvis([])

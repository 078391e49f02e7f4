"""The qvis converter: the name mapping, every field of every real event, and
what qvis itself checks when it loads a file.

The checks in ``qvis_load`` follow qvis's loader (quiclog/qvis,
visualizations/src/components/filemanager/data/FileLoader.ts,
visualizations/src/data/QlogLoader.ts and QlogLoaderV2.ts, and the congestion
graph in components/congestiongraph/renderer/CongestionGraphD3Renderer.ts).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vegas_qlog import QlogWarning, read_qlog, read_qlog_traces, to_qvis, write_qvis
from vegas_qlog.metrics import STANDARD_RECOVERY_FIELDS
from vegas_qlog.qvis import (
    EVENT_NAMES,
    TraceContext,
    convert_data,
    convert_event,
    convert_name,
    convert_trace,
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


U64_MAX = 2**64 - 1
FIXTURES = Path(__file__).parent / "fixtures"
# Every real trace the tests have: the trimmed Vegas run (no extensions), and
# a full run with VenoDB using both QUIC extensions beside Vegas without them.
REAL_SQLOGS = [
    FIXTURES / "sim-tiny" / "vegas-server.sqlog",
    FIXTURES / "sim-tiny" / "vegas-client.sqlog",
    FIXTURES / "sim-qvis" / "ext-server.sqlog",
    FIXTURES / "sim-qvis" / "ext-client.sqlog",
    FIXTURES / "sim-qvis" / "plain-server.sqlog",
    FIXTURES / "sim-qvis" / "plain-client.sqlog",
]


def raw_events(path: Path) -> list[dict]:
    """The file's events as JSON objects, read without our reader."""
    records = [json.loads(r) for r in path.read_bytes().split(b"\x1e") if r.strip()]
    return records[1:]


def leaves(obj, path=()):
    """(path, value) of every leaf of a JSON value; empty containers are leaves."""
    if isinstance(obj, dict) and obj:
        for key, value in obj.items():
            yield from leaves(value, (*path, key))
    elif isinstance(obj, list) and obj:
        for i, value in enumerate(obj):
            yield from leaves(value, (*path, i))
    else:
        yield path, obj


def at(obj, path):
    for key in path:
        obj = obj[key]
    return obj


def has(obj, path) -> bool:
    try:
        at(obj, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def placeholder_of(raw: dict) -> dict[int, int]:
    """extension_frames index -> index in data.frames of its "unknown" placeholder:
    the n-th extension frame is the n-th unknown frame of the same type bytes."""
    frames = raw.get("data", {}).get("frames", [])
    unknown = [i for i, f in enumerate(frames) if f.get("frame_type") == "unknown"]
    out = {}
    for j, ext in enumerate(raw.get("extension_frames", [])):
        i = unknown.pop(0)
        assert frames[i]["frame_type_bytes"] == ext["frame_type_bytes"]
        out[j] = i
    return out


def check_field_by_field(path: Path) -> dict[str, int]:
    """Converts a real trace and checks, input against output, that every leaf
    of every event is where the README says and has the same value, and that
    every other leaf of the output is one of the documented additions with
    the value the input implies. Returns how many of each event were checked."""
    raw = raw_events(path)
    times = [e["time"] for e in raw]
    assert times == sorted(times)  # so the converter's stable sort keeps the order
    trace = read_qlog(path, strict=True)
    converted = convert_trace(trace)["events"]
    assert len(converted) == len(raw)
    exponents = {"local": 3, "remote": 3}
    sampled = False
    held: dict[str, float] = {}
    counts: dict[str, int] = {}
    for event, out in zip(raw, converted, strict=True):
        name = event["name"]
        counts[name] = counts.get(name, 0) + 1
        assert out["name"] == convert_name(name)
        assert out["time"] == event["time"]
        data = out["data"]
        if name == "quic:parameters_set":
            exponents[event["data"]["initiator"]] = event["data"].get("ack_delay_exponent", 3)
        metrics = name == "quic:recovery_metrics_updated"
        first_sample = metrics and not sampled and "latest_rtt" in event["data"]
        places = placeholder_of(event)
        merged = set(places.values())
        covered = {("time",), ("name",)}
        for where, value in leaves(event):
            if where[0] in ("time", "name"):
                continue
            if where[0] == "data":
                key = "owner" if where[1] == "initiator" else where[1]
                target = ("data", key, *where[2:])
                if where[1:] == ("raw", "payload_length") and name in ("quic:packet_sent", "quic:packet_received"):
                    # Moved: qvis's payload_length includes the AEAD tag (checked below).
                    target = ("data", "raw", "payload_length_without_tag")
                if where[1] == "frames" and len(where) > 3 and where[2] in merged and where[3] == "frame_type":
                    continue  # the placeholder's "unknown" is replaced: checked with its extension frame
                if metrics and len(where) == 2 and value == U64_MAX:
                    assert not has(out, target), (name, where)
                    assert where[1] in data["unset_fields"]
                    covered.update(("data", "unset_fields", i) for i in range(len(data["unset_fields"])))
                    continue
                if (
                    metrics
                    and len(where) == 2
                    and not sampled
                    and not first_sample
                    and where[1]
                    in (
                        "min_rtt",
                        "smoothed_rtt",
                        "rtt_variance",
                    )
                ):
                    held[where[1]] = value
                    target = ("data", "initial_rtt_estimate", where[1])
            elif where[0] == "extension_frames":
                frame = data["frames"][places[where[1]]]
                target = ("data", "frames", places[where[1]], *where[2:])
                if where[2] == "frame_type":
                    is_ack = value == "ack_receive_timestamps"
                    assert frame["frame_type"] == ("ack" if is_ack else value)
                    covered.add(target)
                    if is_ack:
                        target = (*target[:-1], "extension_frame_type")
                if where[2] == "receive_timestamps_us":
                    # As sent; receive_timestamps_us itself is on the receiver's qlog clock (checked below).
                    target = (*target[:3], "receive_timestamps_since_basis_us", *target[4:])
            else:
                target = ("data", *where) if where[0] not in event["data"] else where
            assert has(out, target), (path.name, name, where, target)
            assert at(out, target) == value, (path.name, name, where)
            covered.add(target)
        if first_sample:
            sampled = True
            for key, value in held.items():
                if key not in event["data"]:
                    assert data[key] == value
                    covered.add(("data", key))
        # Everything else in the output is a documented addition.
        for where, value in leaves(out):
            if where in covered:
                continue
            if where == ("data", "length"):
                assert value == event["data"]["raw"]["length"]
            elif where == ("data", "raw", "payload_length"):
                assert event["data"]["header"]["packet_type"] in ("initial", "handshake", "0RTT", "1RTT")
                assert value == event["data"]["raw"]["payload_length"] + 16
            elif where == ("data", "byte_length"):
                assert name.startswith("http3:frame_")
                assert value == event["data"]["length"]
            elif where == ("data", "cwnd"):
                assert value == event["data"]["congestion_window"]
            elif where[:2] == ("data", "frames") and len(where) == 6 and where[3] == "receive_timestamps_us":
                ext = next(e for j, e in enumerate(event["extension_frames"]) if places[j] == where[2])
                sent = ext["receive_timestamps_us"][where[4]][where[5]]
                assert value == (sent if where[5] == 0 else sent - 1000)
            elif where == ("data", "new"):
                assert value == event["data"]["stream_type"]
            elif where[:2] == ("data", "frames") and len(where) == 4 and where[3] == "length":
                assert value == event["data"]["frames"][where[2]]["raw"]["payload_length"]
            elif where[:2] == ("data", "frames") and len(where) == 4 and where[3] == "ack_delay" and where[2] in merged:
                ext = next(e for j, e in enumerate(event["extension_frames"]) if places[j] == where[2])
                side = "remote" if name == "quic:packet_received" else "local"
                assert value == pytest.approx(ext["ack_delay_raw"] * 2 ** exponents[side] / 1000.0)
            else:
                raise AssertionError(f"{path.name}: {name}: {where} = {value!r} is neither input nor documented")
    return counts


@pytest.mark.parametrize("path", REAL_SQLOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_mapping_field_by_field(path):
    counts = check_field_by_field(path)
    assert counts["quic:parameters_set"] == 2
    assert counts.get("quic:packet_received", 0) + counts.get("quic:stream_data_moved", 0) > 0


def test_field_by_field_covers_both_runs_and_every_event_type():
    """With extensions on and off, every event type of the real runs went through
    the field-by-field check (server and client)."""
    seen: dict[str, set[str]] = {}
    for path in REAL_SQLOGS[2:]:
        kind = path.name.split("-")[0]
        seen.setdefault(kind, set()).update(check_field_by_field(path))
        present = {e["name"] for e in raw_events(path)}
        assert present <= seen[kind]
    for kind in ("ext", "plain"):
        assert {
            "quic:parameters_set",
            "quic:packet_sent",
            "quic:packet_received",
            "quic:packet_lost",
            "quic:recovery_metrics_updated",
            "quic:congestion_state_updated",
            "quic:stream_data_moved",
            "http3:stream_type_set",
            "http3:frame_created",
        } <= seen[kind], kind


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
        own = {k: v for k, v in event.data.items() if k not in STANDARD_RECOVERY_FIELDS}
        assert {k: out["data"][k] for k in own} == own


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
    local = tmp_path / "server-0a1b.sqlog"
    local.write_bytes(server_sqlog.read_bytes())
    from vegas_qlog.cli import main

    assert main(["to-qvis", str(local)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["server-0a1b-qvis.qlog", "server-0a1b.sqlog"]
    assert default_output(tmp_path / "a.qlog") == tmp_path / "a-qvis.qlog"
    assert default_output(tmp_path / "a-qvis.qlog") == tmp_path / "a-qvis-qvis.qlog"


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["server-0a1b.sqlog"], ["server-0a1b-qvis.qlog"]),  # the apps' QLOGDIR
        (["client-0a1b.sqlog", "server-2c3d.sqlog"], ["client-0a1b-qvis.qlog", "server-2c3d-qvis.qlog"]),
        (["flow-client.sqlog", "flow-server.sqlog"], ["flow-qvis.qlog"]),  # a simulator run: both sides
        (["flow-server.sqlog"], ["flow-qvis.qlog"]),
    ],
)
def test_files_named_and_their_directory_give_the_same_files(server_sqlog, client_sqlog, tmp_path, names, expected):
    """``to-qvis FILE...`` without ``-o`` writes what ``to-qvis DIR`` writes
    for the same files: the same names, the same bytes."""
    from vegas_qlog.cli import main

    named, listed = tmp_path / "named", tmp_path / "listed"
    for d in (named, listed):
        d.mkdir()
        for name in names:
            (d / name).write_bytes((client_sqlog if "client" in name else server_sqlog).read_bytes())
    assert main(["to-qvis", *(str(named / n) for n in reversed(names))]) == 0
    assert main(["to-qvis", str(listed)]) == 0
    for d in (named, listed):
        assert sorted(p.name for p in d.iterdir() if p.name not in names) == expected
    for name in expected:
        assert (named / name).read_bytes() == (listed / name).read_bytes()
    if len(names) == 2 and names[0].startswith("flow"):
        assert len(read_qlog_traces(named / expected[0])) == 2


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


SIM_QVIS = FIXTURES / "sim-qvis"


def qvis_traces(*paths: Path) -> dict:
    """The converted document of ``paths`` (client given first on purpose)."""
    return json.loads(json.dumps(to_qvis([t for p in paths for t in read_qlog_traces(p)])))


def absolute_times(trace: dict, name: str) -> dict[tuple[str, int], float]:
    """(packet_type, packet_number) -> absolute time (ms) of each ``name`` event,
    as qvis computes it: reference_time + time + time_offset."""
    ref = trace["common_fields"]["reference_time"] + trace["configuration"].get("time_offset", 0.0)
    out = {}
    for e in trace["events"]:
        if e["name"] == name:
            h = e["data"]["header"]
            out.setdefault((h["packet_type"], h["packet_number"]), ref + e["time"])
    return out


@pytest.mark.parametrize("flow", ["ext", "plain"])
def test_every_ack_is_an_ack_frame(flow):
    """Every ACK of the run, whether an ordinary ACK or our
    ACK_RECEIVE_TIMESTAMPS, reaches qvis as an ``ack`` frame with the same
    acked ranges (the receive timestamps inside it), and no placeholder of
    ours stays ``unknown``."""
    for side in ("server", "client"):
        path = SIM_QVIS / f"{flow}-{side}.sqlog"
        raw = raw_events(path)
        expected = []  # (event index, acked ranges, receive timestamps or None)
        for i, e in enumerate(raw):
            for f in e.get("data", {}).get("frames", []):
                if f.get("frame_type") == "ack":
                    expected.append((i, f["acked_ranges"], None))
            for f in e.get("extension_frames", []):
                if f["frame_type"] == "ack_receive_timestamps":
                    expected.append((i, f["acked_ranges"], f["receive_timestamps_us"]))
        doc = to_qvis(read_qlog(path))
        events = doc["traces"][0]["events"]
        got = []
        for i, e in enumerate(events):
            for f in e["data"].get("frames", []):
                assert f.get("frame_type") != "unknown", (path.name, e)
                if f.get("frame_type") == "ack":
                    assert f["acked_ranges"], f
                    got.append((i, f["acked_ranges"], f.get("receive_timestamps_since_basis_us")))
        assert sorted(got, key=repr) == sorted(expected, key=repr)
        with_ts = sum(1 for _, _, ts in expected if ts is not None)
        if flow == "ext":
            # With the extension negotiated, the ACKs of the 1-RTT space are ours.
            assert with_ts > 0
        else:
            assert with_ts == 0
        table = qvis_load(json.dumps(doc))
        assert sum(
            1
            for e in table.get(("transport", "packet_received"), []) + table.get(("transport", "packet_sent"), [])
            for f in e["data"]["frames"]
            if f["frame_type"] == "ack"
        ) == len(expected)


@pytest.mark.parametrize("flow", ["ext", "plain"])
def test_every_loss_is_a_packet_lost_qvis_matches(flow):
    """quiche's own count of lost packets (summary.json, from its stats) is the
    number of recovery:packet_lost events, each naming a packet the trace sent
    (what qvis's congestion graph looks up: data.header.packet_number)."""
    summary = json.loads((SIM_QVIS / "summary.json").read_text())
    expected = next(f["packets_lost"] for f in summary["flows"] if f["name"] == flow)
    assert expected > 0
    doc = to_qvis(read_qlog(SIM_QVIS / f"{flow}-server.sqlog"))
    table = qvis_load(json.dumps(doc))
    lost = table[("recovery", "packet_lost")]
    assert len(lost) == expected
    sent = {e["data"]["header"]["packet_number"] for e in table[("transport", "packet_sent")]}
    for e in lost:
        assert e["data"]["header"]["packet_number"] in sent
        assert e["data"]["trigger"] in ("reordering_threshold", "time_threshold")
    assert {e["data"]["trigger"] for e in lost} == {"reordering_threshold", "time_threshold"}


@pytest.mark.parametrize("flow", ["ext", "plain"])
def test_shared_clock_sender_first(flow):
    """Both traces carry a true, non-zero reference time on the simulator's
    shared clock and the time_offset that makes qvis use it; on it, every
    packet is received after it was sent, in both directions. The sender
    (server) comes first whatever order the files are given in."""
    doc = qvis_traces(SIM_QVIS / f"{flow}-client.sqlog", SIM_QVIS / f"{flow}-server.sqlog")
    assert [t["vantage_point"]["type"] for t in doc["traces"]] == ["server", "client"]
    server, client = doc["traces"]
    for trace in (server, client):
        qvis_load(json.dumps({**doc, "traces": [trace]}))
        # qvis: SequenceDiagramD3Renderer.calculateTimeOffsets keeps a
        # non-zero time_offset instead of its RTT/2 guess.
        assert trace["configuration"]["time_offset"] != 0
        # 2000-01-01T00:00:00Z plus the time the connection was made.
        assert trace["common_fields"]["reference_time"] >= 946684800000.0
    for sender, receiver in ((server, client), (client, server)):
        sent = absolute_times(sender, "transport:packet_sent")
        received = absolute_times(receiver, "transport:packet_received")
        common = set(sent) & set(received)
        assert len(common) > 10
        one_way = [received[k] - sent[k] for k in common]
        # At least the 20 ms propagation delay of the fixture's links.
        assert min(one_way) >= 20.0 - 1e-6, min(one_way)


def test_metrics_unset_and_initial_rtt_kept_out_of_the_plotted_fields():
    doc = to_qvis(read_qlog(SIM_QVIS / "ext-server.sqlog"))
    metrics = [e for e in doc["traces"][0]["events"] if e["name"] == "recovery:metrics_updated"]
    assert all("ssthresh" not in e["data"] or e["data"]["ssthresh"] < U64_MAX for e in metrics)
    assert any("ssthresh" in e["data"].get("unset_fields", []) for e in metrics)
    first = next(i for i, e in enumerate(metrics) if "latest_rtt" in e["data"])
    for e in metrics[:first]:
        assert not {"min_rtt", "smoothed_rtt", "rtt_variance"} & set(e["data"]), e
    assert any(e["data"].get("initial_rtt_estimate", {}).get("smoothed_rtt") == 333.0 for e in metrics[:first])
    sample = metrics[first]["data"]
    assert {"min_rtt", "smoothed_rtt", "latest_rtt"} <= set(sample)
    assert sample["smoothed_rtt"] == sample["latest_rtt"]  # RFC 9002: the first sample sets srtt


def test_parameters_set_keeps_the_extensions():
    doc = to_qvis(read_qlog(SIM_QVIS / "ext-server.sqlog"))
    params = [e for e in doc["traces"][0]["events"] if e["name"] == "transport:parameters_set"]
    raw = [e for e in raw_events(SIM_QVIS / "ext-server.sqlog") if e["name"] == "quic:parameters_set"]
    assert [p["data"]["extensions"] for p in params] == [r["extensions"] for r in raw]
    assert params[0]["data"]["extensions"]["max_receive_timestamps_per_ack"] > 0


def test_damaged_extension_fields_lose_nothing():
    """A lying or broken log: extension frames that match no placeholder, are
    not objects, or carry nonsense values convert without an error, and every
    value stays somewhere in the event."""
    from vegas_qlog.sqlog import Event

    context = TraceContext()
    params = Event(0.0, "quic:parameters_set", {"initiator": ["remote"], "ack_delay_exponent": True})
    assert convert_event(params, context)["data"]["owner"] == ["remote"]
    assert context.ack_delay_exponent == {"local": 3, "remote": 3}
    event = Event(
        1.0,
        "quic:packet_received",
        {"frames": [{"frame_type": "unknown", "frame_type_bytes": 7}, "junk"]},
        {
            "extension_frames": [
                {"frame_type": "ack_receive_timestamps", "frame_type_bytes": 7, "ack_delay_raw": "soon"},
                42,
                {"frame_type": "queueing_time", "frame_type_bytes": 9},
            ],
            "other": {"x": 1},
        },
    )
    out = convert_event(event, context)
    ack = out["data"]["frames"][0]
    assert ack["frame_type"] == "ack"
    assert "ack_delay" not in ack  # no number to scale
    assert ack["ack_delay_raw"] == "soon"
    assert out["data"]["frames"][1] == "junk"
    # The two that matched no placeholder stay in the event.
    assert out["data"]["extension_frames"] == [42, {"frame_type": "queueing_time", "frame_type_bytes": 9}]
    assert out["data"]["other"] == {"x": 1}
    # Without a frame list, nothing is merged and nothing is dropped.
    bare = Event(2.0, "quic:packet_sent", {}, {"extension_frames": [{"frame_type": "x", "frame_type_bytes": 1}]})
    assert convert_event(bare)["data"]["extension_frames"] == [{"frame_type": "x", "frame_type_bytes": 1}]


def test_careful_resume_phase_changes_become_the_drafts_events():
    """draft-ietf-tsvwg-careful-resume-qlog-02 section 4.1, rebuilt from the
    ``cr_*`` fields our metrics events carry only when they change."""
    from vegas_qlog.qvis import CAREFUL_RESUME_EVENT, with_careful_resume_events
    from vegas_qlog.sqlog import Event

    def metrics(t, **fields):
        return Event(time=t, name="quic:recovery_metrics_updated", data=fields)

    raw = [
        metrics(
            0.0,
            congestion_window=13_500,
            ssthresh=U64_MAX,
            cr_phase="reconnaissance",
            cr_trigger="none",
            cr_pipesize=0,
            cr_saved_congestion_window=1_500_000,
            cr_saved_rtt=600.0,
        ),
        metrics(5.0, congestion_window=14_000),  # no phase change: nothing derived
        Event(time=6.0, name="quic:packet_sent", data={"header": {"packet_number": 9}}),
        metrics(
            600.0,
            congestion_window=750_000,
            cr_phase="unvalidated",
            cr_trigger="congestion_window_limited",
            cr_first_unvalidated_packet=10,
        ),
        metrics(
            1200.0,
            cr_phase="validating",
            cr_trigger="first_unvalidated_packet_acknowledged",
            cr_last_unvalidated_packet=560,
            cr_pipesize=700_000,
        ),
        metrics(1300.0, congestion_window=350_000, ssthresh=350_000, cr_phase="safe_retreat", cr_trigger="packet_loss"),
        metrics(1900.0, cr_phase="normal", cr_trigger="exit_recovery", cr_pipesize=720_000),
    ]
    context = TraceContext()
    out = with_careful_resume_events([convert_event(e, context) for e in raw])
    derived = [(e["time"], e["data"]) for e in out if e["name"] == CAREFUL_RESUME_EVENT]
    restored = {"saved_congestion_window": 1_500_000, "saved_rtt": 600.0}
    assert derived == [
        # ssthresh was unset (u64::MAX): left out, not invented; no trigger.
        (
            0.0,
            {
                "new": "reconnaissance",
                "state_data": {"pipesize": 0, "congestion_window": 13_500},
                "restored_data": restored,
            },
        ),
        (
            600.0,
            {
                "old": "reconnaissance",
                "new": "unvalidated",
                "state_data": {"pipesize": 0, "first_unvalidated_packet": 10, "congestion_window": 750_000},
                "restored_data": restored,
                "trigger": "congestion_window_limited",
            },
        ),
        (
            1200.0,
            {
                "old": "unvalidated",
                "new": "validating",
                "state_data": {
                    "pipesize": 700_000,
                    "first_unvalidated_packet": 10,
                    "last_unvalidated_packet": 560,
                    "congestion_window": 750_000,
                },
                "restored_data": restored,
                "trigger": "first_unvalidated_packet_acknowledged",
            },
        ),
        (
            1300.0,
            {
                "old": "validating",
                "new": "safe_retreat",
                "state_data": {
                    "pipesize": 700_000,
                    "first_unvalidated_packet": 10,
                    "last_unvalidated_packet": 560,
                    "congestion_window": 350_000,
                    "ssthresh": 350_000,
                },
                "restored_data": restored,
                "trigger": "packet_loss",
            },
        ),
        (
            1900.0,
            {
                "old": "safe_retreat",
                "new": "normal",
                "state_data": {
                    "pipesize": 720_000,
                    "first_unvalidated_packet": 10,
                    "last_unvalidated_packet": 560,
                    "congestion_window": 350_000,
                    "ssthresh": 350_000,
                },
                "restored_data": restored,
                "trigger": "exit_recovery",
            },
        ),
    ]
    # Each derived event follows the metrics event it came from.
    names = [e["name"] for e in out]
    assert names.count(CAREFUL_RESUME_EVENT) == 5
    for i, name in enumerate(names):
        if name == CAREFUL_RESUME_EVENT:
            assert names[i - 1] == "recovery:metrics_updated"
    # Without Careful Resume nothing is added.
    plain = [convert_event(metrics(0.0, congestion_window=13_500), TraceContext())]
    assert with_careful_resume_events(plain) == plain


def test_receive_timestamps_are_the_receivers_own_receive_times():
    """A converted ACK's receive_timestamps_us is, for every packet it names,
    the time at which the receiver's own trace logged that packet's
    packet_received (µs on the receiver's qlog clock; the values as sent
    are 1000 µs later, the receiver's basis being 1 ms before its start)."""
    received: dict[int, float] = {}
    for e in raw_events(SIM_QVIS / "ext-client.sqlog"):
        header = e.get("data", {}).get("header", {})
        if e["name"] == "quic:packet_received" and header.get("packet_type") == "1RTT":
            received.setdefault(header["packet_number"], e["time"])
    doc = to_qvis(read_qlog(SIM_QVIS / "ext-server.sqlog"))
    checked = 0
    for e in doc["traces"][0]["events"]:
        if e["name"] != "transport:packet_received":
            continue
        for f in e["data"].get("frames", []):
            for (pn, us), (pn_sent, us_sent) in zip(
                f.get("receive_timestamps_us", []), f.get("receive_timestamps_since_basis_us", []), strict=True
            ):
                assert pn == pn_sent
                assert us_sent - us == 1000
                assert us / 1000.0 == pytest.approx(received[pn], abs=0.001), pn
                checked += 1
    assert checked >= 10


def qvis_packetization_errors(doc: dict, direction: str = "sending") -> tuple[int, int]:
    """qvis's PacketizationQUICPreProcessor size checks on a converted
    document's first trace, re-implemented: for every packet_sent (sending) or
    packet_received event with raw, the payload qvis lays out is
    raw.payload_length minus a 16-byte tag, and the STREAM frames (1 header
    byte + length each, when no frame_size is given) must fit in it ("something
    went wrong calculating frame sizes!"); an H3 frame's payload is
    parseInt(byte_length) (NaN without it). Returns (packet errors, H3 frames
    without byte_length)."""
    wanted = "transport:packet_sent" if direction == "sending" else "transport:packet_received"
    h3 = "http:frame_created" if direction == "sending" else "http:frame_parsed"
    packet_errors = h3_errors = 0
    for e in doc["traces"][0]["events"]:
        data = e["data"]
        if e["name"] == wanted and data.get("raw") and data.get("frames"):
            payload = (data["raw"].get("payload_length") or 0) - 16
            if not data["raw"].get("payload_length"):
                payload = data["raw"]["length"] - min(4, data["raw"]["length"]) - 16
            frames = data["frames"]
            if frames[0].get("frame_size"):
                continue
            stream = sum(1 + int(f["length"]) for f in frames if f.get("frame_type") == "stream" and "length" in f)
            if payload - stream < 0:
                packet_errors += 1
        elif e["name"] == h3 and not isinstance(data.get("byte_length"), int):
            h3_errors += 1
    return packet_errors, h3_errors


@pytest.mark.parametrize("side", ["server", "client"])
def test_packetization_view_fits_every_frame(side):
    """On converted files qvis's packetization view finds no frame that does
    not fit and no H3 frame without a length; on the file without the
    converter's payload_length/byte_length adaptation it does (the check
    would catch a regression)."""
    doc = to_qvis(read_qlog(SIM_QVIS / f"ext-{side}.sqlog"))
    direction = "sending" if side == "server" else "receiving"
    assert qvis_packetization_errors(doc, direction) == (0, 0)
    packets = sum(1 for e in doc["traces"][0]["events"] if e["name"].startswith("transport:packet_"))
    assert packets >= 30
    # The same document with quiche's lengths put back: the errors qvis showed.
    for e in doc["traces"][0]["events"]:
        raw = e["data"].get("raw")
        if isinstance(raw, dict) and "payload_length_without_tag" in raw:
            raw["payload_length"] = raw["payload_length_without_tag"]
        e["data"].pop("byte_length", None)
    broken_packets, broken_h3 = qvis_packetization_errors(doc, direction)
    assert broken_h3 > 0
    if side == "server":
        assert broken_packets >= 5


def test_metrics_carry_cwnd_for_qvis_labels():
    doc = to_qvis(read_qlog(SIM_QVIS / "ext-server.sqlog"))
    metrics = [e["data"] for e in doc["traces"][0]["events"] if e["name"] == "recovery:metrics_updated"]
    with_window = [m for m in metrics if "congestion_window" in m]
    assert with_window
    assert all(m["cwnd"] == m["congestion_window"] for m in with_window)


def test_to_qvis_of_a_run_directory_writes_one_file_per_connection(tmp_path, capsys):
    from vegas_qlog.cli import main

    run = tmp_path / "run"
    run.mkdir()
    for name in ("ext-client.sqlog", "ext-server.sqlog", "plain-client.sqlog", "plain-server.sqlog"):
        (run / name).write_bytes((SIM_QVIS / name).read_bytes())
    assert main(["to-qvis", str(run)]) == 0
    out = capsys.readouterr().out
    assert sorted(p.name for p in run.glob("*-qvis.qlog")) == ["ext-qvis.qlog", "plain-qvis.qlog"]
    assert "2 trace(s)" in out
    doc = json.loads((run / "ext-qvis.qlog").read_text())
    assert [t["vantage_point"]["type"] for t in doc["traces"]] == ["server", "client"]
    qvis_load((run / "ext-qvis.qlog").read_text())
    assert main(["to-qvis", str(tmp_path / "empty-missing")]) == 1
    (tmp_path / "empty").mkdir()
    assert main(["to-qvis", str(tmp_path / "empty")]) == 1
    assert "no .sqlog file" in capsys.readouterr().err


# --- vegas-sim --qvis -------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
SIM = Path(os.environ.get("VEGAS_SIM") or REPO / "target" / "release" / "vegas-sim")
TINY = Path(__file__).parent / "fixtures" / "tiny.toml"


@pytest.mark.skipif(not SIM.is_file(), reason=f"no simulator at {SIM} (run ./scripts/setup)")
def test_simulator_writes_the_qvis_form_beside_its_qlogs(tmp_path):
    """`vegas-sim run --qvis` leaves NAME-qvis.qlog beside the run's .sqlog
    files, and qvis's loader takes it: both ends of the connection, the
    data sender first."""
    converter = Path(sys.executable).parent / "qlog-analysis"
    env = {**os.environ, "VEGAS_QLOG_ANALYSIS": str(converter)}
    out = tmp_path / "run"
    done = subprocess.run(
        [str(SIM), "run", str(TINY), "--qvis", "--out", str(out)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.glob("*.sqlog")) == ["vegas-client.sqlog", "vegas-server.sqlog"]
    written = out / "vegas-qvis.qlog"
    table = qvis_load(written.read_text())
    assert table[("transport", "packet_sent")]
    doc = json.loads(written.read_text())
    assert [t["vantage_point"]["type"] for t in doc["traces"]] == ["server", "client"]
    # Without it, no such file; a converter that cannot run is an error naming it.
    plain = tmp_path / "plain"
    assert subprocess.run([str(SIM), "run", str(TINY), "--out", str(plain)], capture_output=True).returncode == 0
    assert not list(plain.glob("*-qvis.qlog"))
    env["VEGAS_QLOG_ANALYSIS"] = str(tmp_path / "no-such-converter")
    failed = subprocess.run(
        [str(SIM), "run", str(TINY), "--qvis", "--out", str(tmp_path / "x")], env=env, capture_output=True, text=True
    )
    assert failed.returncode != 0
    assert "--qvis: cannot run" in failed.stderr
    assert "no-such-converter" in failed.stderr

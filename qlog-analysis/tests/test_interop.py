"""scripts/interop and vegas_qlog count retransmitted bytes the same way.

The reference here is computed byte by byte from the raw JSON records, with
none of vegas_qlog's reading code: a STREAM byte (stream, offset) counts as
retransmitted when an earlier packet (a packet number not seen before in its
space) already carried it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import sys
import warnings
from pathlib import Path

import pytest

from vegas_qlog import read_qlog, trace_summary
from vegas_qlog.interop import retransmitted_bytes, sender_summary

FIXTURES = Path(__file__).parent / "fixtures"
RUNNER = Path(__file__).resolve().parents[2] / "scripts" / "interop"

# Recorded senders' qlogs: quiche's (the simulator's server, with losses) and
# ngtcp2's server over vegas-emu (qlog draft 0.3, transport:packet_sent).
RECORDED = [
    FIXTURES / "sim-tiny" / "vegas-server.sqlog",
    FIXTURES / "sim-qvis" / "ext-server.sqlog",
    FIXTURES / "sim-qvis" / "plain-server.sqlog",
    FIXTURES / "interop-ngtcp2" / "server.sqlog",
]


def load_runner():
    """scripts/interop as a module (it has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("interop_runner", str(RUNNER))
    spec = importlib.util.spec_from_loader("interop_runner", loader)
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up in sys.modules.
    sys.modules["interop_runner"] = module
    loader.exec_module(module)
    return module


def reference_retransmitted(path: Path) -> int:
    """Byte-by-byte count from the raw records (JSON-SEQ)."""
    carried: set[tuple[int, int]] = set()
    seen_packets: set[tuple[str, int]] = set()
    spaces = {"0RTT": "application", "1RTT": "application"}
    total = 0
    records = [r for r in path.read_bytes().split(b"\x1e") if r.strip()]
    for i, record in enumerate(records):
        try:
            event = json.loads(record)
        except ValueError:
            # A sender stopped mid-write leaves its last record cut short.
            assert i == len(records) - 1, f"record {i} of {path} is malformed"
            continue
        if event.get("name") not in ("quic:packet_sent", "transport:packet_sent"):
            continue
        header = event["data"].get("header", {})
        if "packet_number" in header:
            key = (spaces.get(header.get("packet_type"), header.get("packet_type")), header["packet_number"])
            if key in seen_packets:
                continue
            seen_packets.add(key)
        for frame in event["data"].get("frames", []):
            if frame.get("frame_type") != "stream":
                continue
            length = frame.get("length", frame.get("raw", {}).get("payload_length", 0))
            for offset in range(frame.get("offset", 0), frame.get("offset", 0) + length):
                byte = (frame["stream_id"], offset)
                total += byte in carried
                carried.add(byte)
    return total


@pytest.fixture(scope="module")
def runner():
    return load_runner()


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_runner_and_vegas_qlog_agree_on_recorded_qlogs(runner, path: Path):
    expected = reference_retransmitted(path)
    # Every recorded sender lost packets: the count is not trivially 0.
    assert expected > 0
    assert runner.retransmitted_bytes([path]) == expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = trace_summary(read_qlog(path))
    if path.parent.name != "interop-ngtcp2":
        # trace_summary reads quiche's current event names only.
        assert summary["bytes_retransmitted"] == expected


def write_seq(path: Path, sends: list[tuple[int, int, int]], name: str = "quic:packet_sent") -> Path:
    """A JSON-SEQ qlog whose packets (number, offset, length) carry stream 0."""
    records = [{"qlog_version": "0.3", "qlog_format": "JSON-SEQ", "trace": {"vantage_point": {"type": "server"}}}]
    for i, (number, offset, length) in enumerate(sends):
        records.append(
            {
                "time": float(i),
                "name": name,
                "data": {
                    "header": {"packet_type": "1RTT", "packet_number": number},
                    "frames": [{"frame_type": "stream", "stream_id": 0, "offset": offset, "length": length}],
                },
            }
        )
    path.write_bytes(b"".join(b"\x1e" + json.dumps(r).encode() + b"\n" for r in records))
    return path


def test_a_hole_filled_late_is_not_a_retransmission(runner, tmp_path: Path):
    # [1000, 2000) first, then the hole [0, 1000) for the first time, then
    # [0, 500) again: 500 bytes were sent twice. The runner's former rule
    # (bytes below the highest offset sent) counted 1500.
    qlog = write_seq(tmp_path / "server.sqlog", [(0, 1000, 1000), (1, 0, 1000), (2, 0, 500)])
    assert reference_retransmitted(qlog) == 500
    assert runner.retransmitted_bytes([qlog]) == 500
    assert trace_summary(read_qlog(qlog))["bytes_retransmitted"] == 500


def test_a_packet_logged_twice_counts_once(runner, tmp_path: Path):
    qlog = write_seq(tmp_path / "server.sqlog", [(0, 0, 1000), (0, 0, 1000), (1, 0, 300)])
    assert reference_retransmitted(qlog) == 300
    assert runner.retransmitted_bytes([qlog]) == 300


def test_older_drafts_event_name_is_read(tmp_path: Path):
    qlog = write_seq(tmp_path / "peer.sqlog", [(0, 0, 800), (1, 200, 800)], name="transport:packet_sent")
    assert retransmitted_bytes([qlog]) == 600
    assert sender_summary([qlog])["stream_bytes_sent"] == 1600


def test_whole_document_json_of_another_stack(tmp_path: Path):
    # aioquic writes one JSON document with a traces list.
    events = [
        {"time": 0.0, "name": "transport:packet_sent", "data": {"frames": [f]}}
        for f in (
            {"frame_type": "stream", "stream_id": 4, "offset": 0, "length": 100},
            {"frame_type": "stream", "stream_id": 4, "offset": 50, "length": 100},
        )
    ]
    doc = {"qlog_version": "0.3", "traces": [{"vantage_point": {"type": "server"}, "events": events}]}
    path = tmp_path / "aioquic.qlog"
    path.write_text(json.dumps(doc))
    assert retransmitted_bytes([path]) == 50


def test_files_summed_and_unknown_when_nothing_was_sent(tmp_path: Path):
    a = write_seq(tmp_path / "a.sqlog", [(0, 0, 100), (1, 0, 100)])
    b = write_seq(tmp_path / "b.sqlog", [(0, 0, 100), (1, 50, 100)])
    assert retransmitted_bytes([a, b]) == 150
    silent = tmp_path / "silent.sqlog"
    silent.write_bytes(
        b'\x1e{"qlog_format": "JSON-SEQ"}\n\x1e{"time": 0, "name": "quic:packet_received", "data": {}}\n'
    )
    assert retransmitted_bytes([silent]) is None
    garbage = tmp_path / "garbage.sqlog"
    garbage.write_text("not a qlog")
    summary = sender_summary([garbage, a])
    assert summary["retransmitted_bytes"] == 100
    assert str(garbage) in summary["unreadable"]


def test_a_trace_driven_scenario_is_kept_off_netem(runner):
    # The fields vegas-emu describe gives each link (interop/emulator/tests/cli.rs checks them).
    plain = {"rate_trace": False, "delay_trace": False}
    assert not runner.traced({"forward": [plain], "return": [plain]})
    assert runner.traced({"forward": [plain], "return": [{**plain, "rate_trace": True}]})
    assert runner.traced({"forward": [{**plain, "delay_trace": True}], "return": [plain]})

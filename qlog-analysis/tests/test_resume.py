"""The Careful Resume timeline against a hand-made server trace whose
answers are worked out here."""

from __future__ import annotations

import json
from pathlib import Path

from vegas_qlog import read_qlog
from vegas_qlog.cli import main
from vegas_qlog.resume import resume_timeline

HEADER = {
    "file_schema": "urn:ietf:params:qlog:file:sequential",
    "serialization_format": "JSON-SEQ",
    "trace": {"vantage_point": {"type": "server"}},
}


def metrics(time, **data):
    return {"time": time, "name": "quic:recovery_metrics_updated", "data": data}


def sent(time, pn, offset, length):
    frames = [{"frame_type": "stream", "stream_id": 0, "offset": offset, "length": length}]
    return {"time": time, "name": "quic:packet_sent", "data": {"header": {"packet_number": pn}, "frames": frames}}


def lost(time, pn, trigger):
    return {"time": time, "name": "quic:packet_lost", "data": {"header": {"packet_number": pn}, "trigger": trigger}}


def write(path: Path, events) -> Path:
    records = [HEADER, *events]
    path.write_bytes(b"".join(b"\x1e" + json.dumps(r).encode() + b"\n" for r in records))
    return path


def resumed(tmp_path: Path) -> Path:
    return write(
        tmp_path / "second-server.sqlog",
        [
            metrics(0.0, cr_phase="reconnaissance", cr_trigger="none", cr_saved_congestion_window=1_400_000),
            sent(600.0, 1, 0, 1000),
            metrics(
                630.0,
                cr_phase="unvalidated",
                cr_trigger="congestion_window_limited",
                cr_jump_congestion_window=700_000,
            ),
            sent(630.0, 2, 1000, 1000),
            metrics(1230.0, cr_phase="validating", cr_trigger="rtt_exceeded"),
            sent(1240.0, 3, 2000, 1000),
            # Packet 2 lost: detected by packet threshold, resent (offset 1000
            # again) after the last new byte (packet 3) went out.
            lost(1250.0, 2, "reordering_threshold"),
            sent(1250.0, 4, 1000, 1000),
            metrics(1830.0, cr_phase="normal", cr_trigger="last_unvalidated_packet_acknowledged"),
            lost(1900.0, 4, "pto"),
            sent(1900.0, 5, 1000, 1000),
        ],
    )


def test_the_timeline_of_a_resumed_connection(tmp_path):
    t = resume_timeline(read_qlog(resumed(tmp_path)))
    assert [p for _, p, _ in t.phases] == ["reconnaissance", "unvalidated", "validating", "normal"]
    assert t.phase_start("unvalidated") == 630.0
    assert t.phases[1][2] == "congestion_window_limited"
    assert t.phase_start("safe_retreat") is None
    assert t.jump_cwnd_bytes == 700_000
    assert t.saved_cwnd_bytes == 1_400_000
    assert t.first_stream_sent_ms == 600.0
    # Offsets 2000..3000 were the last new bytes; 4 and 5 only resend.
    assert t.last_new_data_sent_ms == 1240.0
    assert t.last_stream_sent_ms == 1900.0
    assert t.tail_ms == 1900.0 - 1240.0
    assert t.losses_by_trigger == {"pto": 1, "reordering_threshold": 1}
    assert t.losses_after_last_new_data == 2


def test_a_trace_without_careful_resume_or_data(tmp_path):
    path = write(tmp_path / "empty.sqlog", [metrics(0.0, congestion_window=13500)])
    t = resume_timeline(read_qlog(path))
    assert t.phases == []
    assert t.jump_cwnd_bytes is None
    assert t.last_new_data_sent_ms is None
    assert t.tail_ms is None
    assert t.losses_by_trigger == {}
    assert t.losses_after_last_new_data == 0


def test_the_resume_command_prints_json(tmp_path, capsys):
    path = resumed(tmp_path)
    assert main(["resume", str(path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["file"] == str(path)
    assert rows[0]["tail_ms"] == 660.0
    assert rows[0]["phases"][2] == {"time_ms": 1230.0, "phase": "validating", "trigger": "rtt_exceeded"}

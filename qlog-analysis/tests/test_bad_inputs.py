"""Bad qlog inputs: each gives a clear warning or error, loses nothing
readable and never a traceback (issue: deep JSON, negative RTTs, string
times, a header alone, repeated records, large files read as a stream)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from vegas_qlog import sqlog
from vegas_qlog.cli import main
from vegas_qlog.metrics import trace_summary
from vegas_qlog.sqlog import QlogFormatError, QlogWarning, read_qlog

FIXTURES = Path(__file__).parent / "fixtures"
SERVER = FIXTURES / "sim-tiny" / "vegas-server.sqlog"
RS = b"\x1e"
HEADER = {"file_schema": sqlog.SEQUENTIAL_SCHEMA, "trace": {"vantage_point": {"type": "server"}}}


def records(path: Path) -> list[bytes]:
    return [r for r in path.read_bytes().split(RS) if r.strip()]


def write_seq(path: Path, objs: list) -> Path:
    path.write_bytes(b"".join(RS + (o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n" for o in objs))
    return path


def metrics_event(time: float, srtt: float) -> dict:
    return {
        "time": time,
        "name": "quic:recovery_metrics_updated",
        "data": {"smoothed_rtt": srtt, "min_rtt": abs(srtt), "congestion_window": 12000},
    }


def test_deeply_nested_record_is_a_bad_record_not_a_traceback(tmp_path, capsys):
    deep = b"[" * 200_000 + b"]" * 200_000
    path = write_seq(tmp_path / "deep.sqlog", [HEADER, metrics_event(1.0, 50.0), deep, metrics_event(2.0, 60.0)])
    with pytest.warns(QlogWarning, match="nested too deeply"):
        trace = read_qlog(path)
    assert len(trace.events) == 2
    assert not trace.complete
    assert main(["summary", str(path)]) == 0
    err = capsys.readouterr().err
    assert "nested too deeply" in err
    assert "Traceback" not in err


def test_deeply_nested_document_is_one_error_line(tmp_path, capsys):
    path = tmp_path / "deep.qlog"
    path.write_bytes(b'{"traces": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    with pytest.raises(QlogFormatError, match="nested too deeply"):
        read_qlog(path)
    assert main(["summary", str(path)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "nested too deeply" in err


def test_negative_srtt_is_not_averaged(tmp_path):
    path = write_seq(tmp_path / "neg.sqlog", [HEADER, metrics_event(1.0, -5.0), metrics_event(2.0, -5.0)])
    with pytest.warns(QlogWarning, match="negative smoothed_rtt"):
        summary = trace_summary(read_qlog(path))
    assert summary["mean_srtt_ms"] != summary["mean_srtt_ms"]  # NaN: no RTT to average
    path = write_seq(tmp_path / "mixed.sqlog", [HEADER, metrics_event(1.0, -5.0), metrics_event(2.0, 40.0)])
    with pytest.warns(QlogWarning, match="1 negative smoothed_rtt"):
        assert trace_summary(read_qlog(path))["mean_srtt_ms"] == pytest.approx(40.0)


def test_string_times(tmp_path, capsys):
    numeric = write_seq(tmp_path / "numeric.sqlog", [HEADER, {**metrics_event(0, 40.0), "time": "12.5"}])
    assert read_qlog(numeric).events[0].time == 12.5
    words = write_seq(
        tmp_path / "words.sqlog",
        [HEADER, {**metrics_event(0, 40.0), "time": "soon"}, {**metrics_event(0, 40.0), "time": "later"}],
    )
    with pytest.raises(QlogFormatError, match=r"none of its 2 event record\(s\) could be read.*'soon'"):
        read_qlog(words)
    assert main(["summary", str(words)]) == 1
    assert "'time' must be a finite number" in capsys.readouterr().err
    some = write_seq(
        tmp_path / "some.sqlog", [HEADER, {**metrics_event(0, 40.0), "time": "soon"}, metrics_event(3, 40)]
    )
    with pytest.warns(QlogWarning, match="'time' must be a finite number of milliseconds, got 'soon'"):
        trace = read_qlog(some)
    assert len(trace.events) == 1
    assert not trace.complete


def test_header_only_is_not_complete(tmp_path, capsys):
    path = write_seq(tmp_path / "header.sqlog", [HEADER])
    with pytest.warns(QlogWarning, match="a header and no event"):
        trace = read_qlog(path)
    assert not trace.complete
    assert main(["summary", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["complete"] is False


def test_repeated_records_are_not_retransmissions(tmp_path):
    original = trace_summary(read_qlog(SERVER))
    recs = records(SERVER)
    doubled = tmp_path / "doubled.sqlog"
    doubled.write_bytes(b"".join(RS + r for r in recs[:1] + [r for r in recs[1:] for _ in (0, 1)]))
    with pytest.warns(QlogWarning, match="repeat a packet number already sent"):
        again = trace_summary(read_qlog(doubled))
    assert original["stream_bytes_sent"] > 0
    assert again["stream_bytes_sent"] == original["stream_bytes_sent"]
    assert again["bytes_retransmitted"] == original["bytes_retransmitted"]


@pytest.mark.parametrize("block", [1, 7, 4096])
def test_streaming_read_matches_whatever_the_block_size(block, monkeypatch):
    """Records split across read blocks decode as when read whole."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        whole = read_qlog(SERVER)
        monkeypatch.setattr(sqlog, "READ_BLOCK", block)
        streamed = read_qlog(SERVER)
    assert streamed.events == whole.events
    assert streamed.header == whole.header


def test_streaming_read_keeps_truncation_and_line_numbers(tmp_path, monkeypatch):
    recs = records(SERVER)
    cut = tmp_path / "cut.sqlog"
    cut.write_bytes(b"".join(RS + r for r in recs[:-1]) + RS + recs[-1][: len(recs[-1]) // 2])
    monkeypatch.setattr(sqlog, "READ_BLOCK", 5)
    with pytest.warns(QlogWarning, match=rf"record {len(recs)} \(line {len(recs)}\): truncated record"):
        trace = read_qlog(cut)
    assert len(trace.events) == len(recs) - 2


def test_a_large_file_is_not_held_as_text(tmp_path):
    """Reading never holds the file's bytes: peak memory of reading a 30 MB
    file stays well below what the text alone would take twice (the old
    reader held the bytes and a list of every record, then the events)."""
    import tracemalloc

    event = metrics_event(1.0, 40.0)
    event["data"]["padding"] = "x" * 3000  # large text, small parsed object per event
    line = RS + json.dumps(event).encode() + b"\n"
    path = tmp_path / "big.sqlog"
    with path.open("wb") as f:
        f.write(RS + json.dumps(HEADER).encode() + b"\n")
        for _ in range(10_000):
            f.write(line)
    size = path.stat().st_size
    tracemalloc.start()
    trace = read_qlog(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(trace.events) == 10_000
    # The events' strings take about the file's size; the text never adds to it.
    assert peak < 1.5 * size, (peak, size)

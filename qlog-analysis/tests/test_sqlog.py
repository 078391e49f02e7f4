import json
from pathlib import Path

import pytest

from vegas_qlog import QlogFormatError, QlogWarning, read_qlog, read_qlog_traces
from vegas_qlog.sqlog import SEQUENTIAL_SCHEMA, Event


def records(path: Path) -> list[bytes]:
    raw = path.read_bytes()
    assert raw.startswith(b"\x1e")
    return raw.split(b"\x1e")[1:]


def write_records(path: Path, recs: list[bytes]) -> Path:
    path.write_bytes(b"".join(b"\x1e" + r for r in recs))
    return path


def test_reads_quiche_sqlog(server_sqlog):
    trace = read_qlog(server_sqlog)
    assert trace.header["file_schema"] == SEQUENTIAL_SCHEMA
    assert trace.vantage_point == "server"
    assert trace.title == "vegas-sim vegas server"
    assert "vegas(alpha=1 beta=3" in trace.description
    assert trace.complete
    assert trace.problems == []
    assert len(trace.events) == len(records(server_sqlog)) - 1
    first = trace.events[0]
    assert first.name == "quic:parameters_set"
    assert first.time == 0.0
    assert first.data["initiator"] == "local"
    names = {e.name for e in trace.events}
    assert {"quic:packet_sent", "quic:recovery_metrics_updated", "quic:congestion_state_updated"} <= names
    assert [e.time for e in trace.events] == sorted(e.time for e in trace.events)


def test_event_name_parts():
    event = Event(1.5, "quic:packet_sent", {})
    assert (event.category, event.type) == ("quic", "packet_sent")
    assert (Event(0, "bare", {}).category, Event(0, "bare", {}).type) == ("", "bare")


def test_truncated_file_keeps_what_was_read(server_sqlog, tmp_path):
    raw = server_sqlog.read_bytes()
    cut = tmp_path / "cut.sqlog"
    cut.write_bytes(raw[: len(raw) - 40])  # inside the last record
    total = len(records(server_sqlog))
    with pytest.warns(QlogWarning, match=rf"record {total} \(line {total}\): truncated record"):
        trace = read_qlog(cut)
    assert len(trace.events) == total - 2  # header and the cut record
    assert not trace.complete
    (problem,) = trace.problems
    assert (problem.record, problem.line) == (total, total)
    assert str(cut) in str(problem)


def test_truncated_file_strict_raises(server_sqlog, tmp_path):
    raw = server_sqlog.read_bytes()
    cut = tmp_path / "cut.sqlog"
    cut.write_bytes(raw[:-40])
    with pytest.raises(QlogFormatError, match="truncated record"):
        read_qlog(cut, strict=True)


def test_malformed_record_in_the_middle(server_sqlog, tmp_path):
    recs = records(server_sqlog)
    recs[9] = b'{"time": 12.0, "name": "quic:packet_sent", "data": {oops}\n'
    bad = write_records(tmp_path / "bad.sqlog", recs)
    with pytest.warns(QlogWarning, match=r"record 10 \(line 10\): malformed record"):
        trace = read_qlog(bad)
    assert len(trace.events) == len(recs) - 2
    assert trace.problems[0].record == 10


def test_record_that_is_not_an_event(server_sqlog, tmp_path):
    recs = records(server_sqlog)
    recs[3] = b'{"name": "quic:packet_sent"}\n'
    recs[4] = b"[1, 2]\n"
    bad = write_records(tmp_path / "bad.sqlog", recs)
    with pytest.warns(QlogWarning) as caught:
        trace = read_qlog(bad)
    messages = [str(w.message) for w in caught]
    assert any("record 4 (line 4): not an event" in m for m in messages)
    assert any("record 5 (line 5): expected a JSON object" in m for m in messages)
    assert len(trace.events) == len(recs) - 3


def test_missing_header_is_a_warning(server_sqlog, tmp_path):
    recs = records(server_sqlog)[1:]
    headless = write_records(tmp_path / "headless.sqlog", recs)
    with pytest.warns(QlogWarning, match="no header record"):
        trace = read_qlog(headless)
    assert trace.header == {}
    assert len(trace.events) == len(recs)


def test_older_json_seq_header_is_accepted(tmp_path):
    header = {"qlog_version": "0.3", "qlog_format": "JSON-SEQ", "trace": {"vantage_point": {"type": "client"}}}
    event = {"time": 3.0, "name": "transport:packet_sent", "data": {"header": {"packet_number": 1}}}
    path = write_records(tmp_path / "old.sqlog", [json.dumps(header).encode() + b"\n", json.dumps(event).encode()])
    trace = read_qlog(path, strict=True)
    assert trace.vantage_point == "client"
    assert trace.events == [Event(3.0, "transport:packet_sent", {"header": {"packet_number": 1}})]


def test_unknown_header_schema_warns(tmp_path):
    path = write_records(tmp_path / "x.sqlog", [b'{"file_schema": "urn:other"}\n', b'{"time": 0, "name": "a:b"}\n'])
    with pytest.warns(QlogWarning, match="header has neither file_schema"):
        trace = read_qlog(path)
    assert len(trace.events) == 1


def test_empty_and_foreign_files(tmp_path):
    empty = tmp_path / "empty.sqlog"
    empty.write_bytes(b"\n")
    with pytest.raises(QlogFormatError, match="empty"):
        read_qlog(empty)
    foreign = tmp_path / "foreign.sqlog"
    foreign.write_bytes(b"\x89PNG\r\n")
    with pytest.raises(QlogFormatError, match="not a qlog file"):
        read_qlog(foreign)
    with pytest.raises(QlogFormatError, match="cannot read"):
        read_qlog(tmp_path / "missing.sqlog")
    garbage = tmp_path / "garbage.sqlog"
    garbage.write_bytes(b"\x1e{not json\n\x1e[1]\n")
    with pytest.raises(QlogFormatError, match="no qlog header and no event"), pytest.warns(QlogWarning):
        read_qlog(garbage)


def test_newline_delimited_json(server_sqlog, tmp_path):
    recs = records(server_sqlog)
    nd = tmp_path / "trace.qlog"
    nd.write_bytes(b"".join(r.strip() + b"\n" for r in recs[:6]) + b'{"time": 9, "name"\n')
    with pytest.warns(QlogWarning, match=r"record 7 \(line 7\): truncated record"):
        trace = read_qlog(nd)
    assert len(trace.events) == 5


def test_json_document_with_event_fields(tmp_path):
    doc = {
        "qlog_version": "draft-01",
        "traces": [
            {
                "vantage_point": {"type": "server"},
                "event_fields": ["relative_time", "category", "event", "data"],
                "events": [["0", "transport", "packet_sent", {"a": 1}], [5.5, "recovery", "metrics_updated", {}], []],
            },
            {"events": [{"time": 1, "name": "quic:packet_sent", "data": {}}]},
        ],
    }
    path = tmp_path / "doc.qlog"
    path.write_text(json.dumps(doc))
    first, second = read_qlog_traces(path, strict=True)
    assert first.vantage_point == "server"
    assert [(e.time, e.name, e.data) for e in first.events] == [
        (0.0, "transport:packet_sent", {"a": 1}),
        (5.5, "recovery:metrics_updated", {}),
    ]
    assert second.events[0].name == "quic:packet_sent"
    broken = tmp_path / "broken.qlog"
    broken.write_text('{"qlog_version": "draft-02",\n "traces": [')
    with pytest.raises(QlogFormatError, match="line 2 column"):
        read_qlog(broken)

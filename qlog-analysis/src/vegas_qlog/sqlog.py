"""Reading qlog files: quiche 0.29's ``.sqlog`` and the older JSON forms.

quiche 0.29 writes one trace per connection as JSON text sequences
(RFC 7464): every record starts with the record separator byte 0x1E and ends
with a line feed. The first record is the file header, whose
``file_schema`` is ``urn:ietf:params:qlog:file:sequential`` (older writers
said ``qlog_format: "JSON-SEQ"`` instead), and every later record is one
event ``{"time": ms, "name": "quic:packet_sent", "data": {...}}`` with
``time`` relative to the trace's reference time.

A file cut short (a run killed mid-write) or damaged in the middle still
yields every event that could be read: each bad record is reported once,
with its record and line number, as a :class:`QlogWarning` (or as a
:class:`QlogFormatError` with ``strict=True``), and reading goes on with the
next record. Only a file with nothing usable in it is an error.

Also read, for convenience: newline-delimited JSON (one record per line, no
separator byte) and the single-document JSON form (``{"traces": [...]}``,
qlog 0.3 / draft-02), whose events may be objects or ``event_fields`` arrays.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORD_SEPARATOR = b"\x1e"
SEQUENTIAL_SCHEMA = "urn:ietf:params:qlog:file:sequential"


class QlogFormatError(ValueError):
    """A qlog file that cannot be read, or a bad record in strict mode."""


class QlogWarning(UserWarning):
    """A record that was skipped; the rest of the file was still read."""


@dataclass(frozen=True)
class Problem:
    """One record that could not be used."""

    path: str
    record: int  # 1-based, the header being record 1
    line: int  # 1-based line where the record starts
    message: str

    def __str__(self) -> str:
        return f"{self.path}: record {self.record} (line {self.line}): {self.message}"


@dataclass(frozen=True)
class Event:
    """One qlog event: time in milliseconds relative to the trace's start.

    ``extra`` holds the event's other top-level fields, kept as they are: with
    our QUIC extensions quiche puts the decoded extension frames of a packet
    event in ``extension_frames`` and our transport parameters of
    ``quic:parameters_set`` in ``extensions`` there, beside ``data``.
    """

    time: float
    name: str
    data: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def category(self) -> str:
        """The part of the name before the colon (``quic``, ``http3``, ...)."""
        return self.name.split(":", 1)[0] if ":" in self.name else ""

    @property
    def type(self) -> str:
        """The part of the name after the colon (``packet_sent``, ...)."""
        return self.name.split(":", 1)[1] if ":" in self.name else self.name


@dataclass
class Trace:
    """The events of one connection seen from one endpoint."""

    path: str
    header: dict[str, Any]
    events: list[Event]
    problems: list[Problem] = field(default_factory=list)

    @property
    def trace_info(self) -> dict[str, Any]:
        """The header's ``trace`` object (title, vantage point, ...)."""
        info = self.header.get("trace")
        return info if isinstance(info, dict) else {}

    @property
    def vantage_point(self) -> str:
        vp = self.trace_info.get("vantage_point")
        if isinstance(vp, dict) and isinstance(vp.get("type"), str):
            return vp["type"]
        return "unknown"

    @property
    def title(self) -> str:
        return str(self.trace_info.get("title") or self.header.get("title") or "")

    @property
    def description(self) -> str:
        return str(self.trace_info.get("description") or self.header.get("description") or "")

    @property
    def complete(self) -> bool:
        """True when every record of the file was read."""
        return not self.problems

    def named(self, *names: str) -> Iterator[Event]:
        """The events whose full name is one of ``names``."""
        wanted = set(names)
        return (e for e in self.events if e.name in wanted)

    @property
    def duration_ms(self) -> float:
        return self.events[-1].time - self.events[0].time if self.events else 0.0


def read_qlog(path: str | os.PathLike[str], *, strict: bool = False) -> Trace:
    """Reads one qlog file (any supported form) and returns its first trace.

    Bad records are skipped with a :class:`QlogWarning` naming the record and
    line, and listed in ``Trace.problems``; with ``strict=True`` the first
    one raises :class:`QlogFormatError` instead.
    """
    traces = read_qlog_traces(path, strict=strict)
    return traces[0]


def read_qlog_traces(path: str | os.PathLike[str], *, strict: bool = False) -> list[Trace]:
    """Reads a qlog file and returns all of its traces (one for ``.sqlog``)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise QlogFormatError(f"{p}: cannot read: {e.strerror or e}") from e
    name = str(p)
    stripped = raw.lstrip()
    if not stripped:
        raise QlogFormatError(f"{name}: the file is empty")
    if stripped.startswith(RECORD_SEPARATOR):
        return [_read_sequence(name, raw, RECORD_SEPARATOR, strict)]
    if stripped.startswith(b"{"):
        # Either one JSON document or newline-delimited records.
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError as e:
            first_line = stripped.split(b"\n", 1)[0]
            if _is_json_object(first_line):
                return [_read_sequence(name, raw, b"\n", strict)]
            raise QlogFormatError(f"{name}: line {e.lineno} column {e.colno}: not valid JSON: {e.msg}") from e
        if isinstance(doc, dict) and isinstance(doc.get("traces"), list):
            return _read_document(name, doc, strict)
        if isinstance(doc, dict) and "events" in doc:
            return _read_document(name, {"traces": [doc]}, strict)
        # A single-line NDJSON file (just a header).
        return [_read_sequence(name, raw, b"\n", strict)]
    raise QlogFormatError(
        f"{name}: not a qlog file: expected JSON text sequences (records starting "
        f"with the byte 0x1E) or JSON, found {stripped[:20]!r}"
    )


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _report(problems: list[Problem], problem: Problem, strict: bool) -> None:
    if strict:
        raise QlogFormatError(str(problem))
    problems.append(problem)
    warnings.warn(str(problem), QlogWarning, stacklevel=4)


def _read_sequence(name: str, raw: bytes, separator: bytes, strict: bool) -> Trace:
    """Splits ``raw`` into records and decodes each one."""
    problems: list[Problem] = []
    header: dict[str, Any] | None = None
    events: list[Event] = []
    record_no = 0
    line = 1  # line on which the current chunk starts
    chunks = raw.split(separator)
    last_index = len(chunks) - 1
    for index, chunk in enumerate(chunks):
        start_line = line
        line += chunk.count(b"\n") + (separator == b"\n")
        if separator == RECORD_SEPARATOR and index == 0:
            if chunk.strip():
                record_no += 1
                _report(
                    problems,
                    Problem(name, record_no, start_line, "text before the first record separator"),
                    strict,
                )
            continue
        text = chunk.strip()
        if not text:
            continue
        record_no += 1
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            at_end = index == last_index or all(not c.strip() for c in chunks[index + 1 :])
            what = "truncated record (the file ends inside it)" if at_end else "malformed record"
            detail = e.msg if isinstance(e, json.JSONDecodeError) else str(e)
            _report(problems, Problem(name, record_no, start_line, f"{what}: {detail}"), strict)
            continue
        if not isinstance(obj, dict):
            _report(
                problems,
                Problem(name, record_no, start_line, f"expected a JSON object, got {type(obj).__name__}"),
                strict,
            )
            continue
        if header is None and not events and _looks_like_header(obj):
            header = obj
            if not _is_sequential_header(obj):
                _report(
                    problems,
                    Problem(
                        name,
                        record_no,
                        start_line,
                        f"header has neither file_schema {SEQUENTIAL_SCHEMA!r} nor "
                        "qlog_format 'JSON-SEQ'; reading it anyway",
                    ),
                    strict,
                )
            continue
        event = _event_from_object(obj)
        if event is None:
            _report(
                problems,
                Problem(name, record_no, start_line, "not an event: needs a numeric 'time' and a 'name'"),
                strict,
            )
            continue
        events.append(event)
    if header is None:
        if not events:
            raise QlogFormatError(f"{name}: no qlog header and no event could be read")
        _report(problems, Problem(name, 1, 1, "no header record; events read without it"), strict)
        header = {}
    return Trace(name, header, events, problems)


def _looks_like_header(obj: dict[str, Any]) -> bool:
    return any(k in obj for k in ("file_schema", "qlog_format", "qlog_version", "serialization_format", "trace"))


def _is_sequential_header(obj: dict[str, Any]) -> bool:
    return (
        obj.get("file_schema") == SEQUENTIAL_SCHEMA
        or obj.get("qlog_format") in ("JSON-SEQ", "NDJSON")
        or obj.get("serialization_format") == "JSON-SEQ"
    )


def _event_from_object(obj: dict[str, Any]) -> Event | None:
    time = obj.get("time")
    name = obj.get("name")
    if name is None and isinstance(obj.get("category"), str) and isinstance(obj.get("type"), str):
        name = f"{obj['category']}:{obj['type']}"
    if not isinstance(time, int | float) or isinstance(time, bool) or not isinstance(name, str):
        return None
    data = obj.get("data")
    used = {"time", "name", "data"}
    if "name" not in obj:
        used |= {"category", "type"}
    extra = {k: v for k, v in obj.items() if k not in used}
    return Event(float(time), name, data if isinstance(data, dict) else {}, extra)


def _read_document(name: str, doc: dict[str, Any], strict: bool) -> list[Trace]:
    """The single-document JSON form: ``{"qlog_version": ..., "traces": [...]}``."""
    traces: list[Trace] = []
    top = {k: v for k, v in doc.items() if k != "traces"}
    for t_index, trace in enumerate(doc["traces"], start=1):
        problems: list[Problem] = []
        if not isinstance(trace, dict) or not isinstance(trace.get("events"), list):
            _report(problems, Problem(name, t_index, 1, f"trace {t_index} has no events list"), strict)
            continue
        info = {k: v for k, v in trace.items() if k != "events"}
        fields = trace.get("event_fields")
        events: list[Event] = []
        for e_index, raw_event in enumerate(trace["events"], start=1):
            if isinstance(fields, list) and isinstance(raw_event, list):
                if not raw_event:
                    continue  # an empty last element is allowed
                raw_event = _from_event_fields(fields, raw_event)
            event = _event_from_object(raw_event) if isinstance(raw_event, dict) else None
            if event is None:
                if isinstance(raw_event, dict) and not raw_event:
                    continue
                _report(
                    problems,
                    Problem(name, e_index, 1, f"trace {t_index}, event {e_index}: not an event"),
                    strict,
                )
                continue
            events.append(event)
        header = dict(top)
        header["trace"] = info
        traces.append(Trace(name, header, events, problems))
    if not traces:
        raise QlogFormatError(f"{name}: no trace could be read")
    return traces


def _from_event_fields(fields: list[Any], values: list[Any]) -> dict[str, Any]:
    """``[t, "transport", "packet_sent", {...}]`` with its column names to an object."""
    row = dict(zip([str(f).lower() for f in fields], values, strict=False))
    out: dict[str, Any] = {"data": row.get("data", {})}
    time = row.get("time", row.get("relative_time"))
    if isinstance(time, str):
        try:
            time = float(time)
        except ValueError:
            time = None
    out["time"] = time
    category = row.get("category")
    kind = row.get("event", row.get("event_type"))
    if isinstance(kind, str):
        out["name"] = f"{category}:{kind}" if isinstance(category, str) else kind
    return out

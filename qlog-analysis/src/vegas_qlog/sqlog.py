"""Reading qlog files: quiche 0.30's ``.sqlog`` and the older JSON forms.

quiche 0.30 writes one trace per connection as JSON text sequences
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
import math
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


@dataclass(frozen=True, slots=True)
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
        """True when every record of the file was read and it holds at least
        one event (a header alone is not a complete trace)."""
        return not self.problems and bool(self.events)

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


# Bytes read at a time: records are decoded as they are found, so a large
# file is never held in memory as text beside its events.
READ_BLOCK = 1 << 20


def read_qlog_traces(path: str | os.PathLike[str], *, strict: bool = False) -> list[Trace]:
    """Reads a qlog file and returns all of its traces (one for ``.sqlog``)."""
    p = Path(path)
    name = str(p)
    try:
        with p.open("rb") as f:
            first = _first_byte(f)
            if first is None:
                raise QlogFormatError(f"{name}: the file is empty")
            f.seek(0)
            if first == RECORD_SEPARATOR:
                return [_read_sequence(name, _records(f, RECORD_SEPARATOR), strict)]
            if first == b"{":
                if _is_ndjson(f):
                    f.seek(0)
                    return [_read_sequence(name, _records(f, b"\n"), strict)]
                f.seek(0)
                return _read_whole_document(name, f.read(), strict)
            f.seek(0)
            head = f.read(64).lstrip()
    except OSError as e:
        raise QlogFormatError(f"{p}: cannot read: {e.strerror or e}") from e
    raise QlogFormatError(
        f"{name}: not a qlog file: expected JSON text sequences (records starting "
        f"with the byte 0x1E) or JSON, found {head[:20]!r}"
    )


def _first_byte(f: Any) -> bytes | None:
    """The first byte that is not white space, or None for an empty file."""
    while block := f.read(READ_BLOCK):
        stripped = block.lstrip()
        if stripped:
            return stripped[:1]
    return None


def _is_ndjson(f: Any) -> bool:
    """A ``{`` file whose first line is a whole JSON object that is not a
    qlog document (one record per line), as opposed to one JSON document."""
    line = f.readline().strip()
    try:
        obj = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(obj, dict) and not isinstance(obj.get("traces"), list) and "events" not in obj


def _decode(text: bytes) -> Any:
    """``json.loads`` with every way it can fail as a ``ValueError`` that says why."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(e.msg) from e
    except UnicodeDecodeError as e:
        raise ValueError(str(e)) from e
    except RecursionError as e:
        raise ValueError("nested too deeply to read (more levels than Python's JSON reader allows)") from e


def _read_whole_document(name: str, raw: bytes, strict: bool) -> list[Trace]:
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as e:
        raise QlogFormatError(f"{name}: line {e.lineno} column {e.colno}: not valid JSON: {e.msg}") from e
    except UnicodeDecodeError as e:
        raise QlogFormatError(f"{name}: not valid JSON: {e}") from e
    except RecursionError as e:
        raise QlogFormatError(f"{name}: not readable: JSON nested too deeply") from e
    if isinstance(doc, dict) and isinstance(doc.get("traces"), list):
        return _read_document(name, doc, strict)
    if isinstance(doc, dict) and "events" in doc:
        return _read_document(name, {"traces": [doc]}, strict)
    if isinstance(doc, dict):
        # A single-line NDJSON file (just a header).
        return [_read_sequence(name, iter([(raw, 1, True, False)]), strict)]
    raise QlogFormatError(f"{name}: expected a JSON object at the top, got {type(doc).__name__}")


def _records(f: Any, separator: bytes) -> Iterator[tuple[bytes, int, bool, bool]]:
    """The file's records as ``(bytes, line where it starts, is the last,
    is text before the first separator)``, read a block at a time."""
    line = 1
    pending = b""
    first = True
    previous: tuple[bytes, int, bool] | None = None
    while True:
        block = f.read(READ_BLOCK)
        if not block:
            break
        pending += block
        parts = pending.split(separator)
        pending = parts.pop()
        for part in parts:
            if previous is not None:
                yield previous[0], previous[1], False, previous[2]
            previous = (part, line, first and separator == RECORD_SEPARATOR)
            line += part.count(b"\n") + (separator == b"\n")
            first = False
    if previous is not None:
        last_is_empty = not pending.strip()
        yield previous[0], previous[1], last_is_empty, previous[2]
    if pending.strip() or previous is None:
        yield pending, line, True, first and separator == RECORD_SEPARATOR


def _report(problems: list[Problem], problem: Problem, strict: bool) -> None:
    if strict:
        raise QlogFormatError(str(problem))
    problems.append(problem)
    warnings.warn(str(problem), QlogWarning, stacklevel=4)


def _read_sequence(name: str, records: Iterator[tuple[bytes, int, bool, bool]], strict: bool) -> Trace:
    """Decodes each record of a sequence."""
    problems: list[Problem] = []
    header: dict[str, Any] | None = None
    events: list[Event] = []
    record_no = 0
    not_events = 0
    for chunk, start_line, at_end, before_first in records:
        if before_first:
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
            obj = _decode(text)
        except ValueError as e:
            what = "truncated record (the file ends inside it)" if at_end else "malformed record"
            _report(problems, Problem(name, record_no, start_line, f"{what}: {e}"), strict)
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
            not_events += 1
            _report(
                problems,
                Problem(name, record_no, start_line, f"not an event: {_why_not_an_event(obj)}"),
                strict,
            )
            continue
        events.append(event)
    if header is None:
        if not events:
            raise QlogFormatError(f"{name}: no qlog header and no event could be read")
        _report(problems, Problem(name, 1, 1, "no header record; events read without it"), strict)
        header = {}
    if not events:
        if not_events:
            first = next(p for p in problems if p.message.startswith("not an event"))
            raise QlogFormatError(f"{name}: none of its {not_events} event record(s) could be read (first: {first})")
        _report(problems, Problem(name, record_no, 1, "the file holds a header and no event"), strict)
    return Trace(name, header, events, problems)


def _why_not_an_event(obj: dict[str, Any]) -> str:
    time = obj.get("time")
    if "time" not in obj:
        return "no 'time'"
    if not isinstance(obj.get("name"), str) and not (
        isinstance(obj.get("category"), str) and isinstance(obj.get("type"), str)
    ):
        return "no 'name'"
    return f"'time' must be a finite number of milliseconds, got {time!r}"


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
    if isinstance(time, str):
        # Older qlog drafts allowed the time as a string of a number.
        try:
            time = float(time)
        except ValueError:
            return None
    if not isinstance(time, int | float) or isinstance(time, bool) or not isinstance(name, str):
        return None
    if not math.isfinite(time):
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

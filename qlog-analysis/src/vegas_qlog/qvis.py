"""Converting quiche 0.30's qlog into a file that qvis (quiclog/qvis) loads.

quiche 0.30 writes the IETF qlog of 2025 (``file_schema``
``urn:ietf:params:qlog:file:sequential``, events named ``quic:packet_sent``,
``quic:recovery_metrics_updated``, ``http3:frame_created``, ...). qvis reads
only ``qlog_version`` ``draft-02``/``0.3`` and older, and finds events by the
categories of that time (``transport``, ``recovery``, ``http``, ...): given
quiche 0.30's files it shows nothing.

What is written: one JSON document in the draft-02 form

    {"qlog_version": "draft-02", "qlog_format": "JSON", "title": ..., "traces": [
      {"vantage_point": {"type": "server", "name": ...}, "title": ..., "description": ...,
       "common_fields": {"time_format": "relative", "reference_time": <ms since epoch>},
       "configuration": {"time_units": "ms", ...},
       "events": [{"time": 12.5, "name": "transport:packet_sent", "data": {...}}, ...]}]}

Events are objects (qvis's ``DirectEventParser``), not ``event_fields``
arrays, which qvis flags as deprecated with a pop-up on every load.
``draft-02`` rather than ``0.3`` because every qvis release that reads either
reads ``draft-02`` (``0.3`` was added later as an alias of it). JSON rather
than JSON-SEQ because one JSON document holds several traces (the client and
the server side by side in qvis's sequence diagram) where a JSON-SEQ file
holds one, and because qvis's JSON-SEQ reader stops at the first bad record.
The data of every event is kept, our controllers' extra fields
included; only what qvis needs is renamed or added (see :data:`EVENT_NAMES`
and :func:`convert_data`), and :func:`convert_event` lists what a trace's
context changes (extension frames made ordinary frames, unset values and
quiche's initial RTT estimate kept out of the plotted fields).
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .sqlog import Event, Trace, read_qlog_traces

QVIS_VERSION = "draft-02"

# quiche logs "not set yet" (ssthresh before the first loss) as u64::MAX.
U64_MAX = 2**64 - 1

# RTT fields of quic:recovery_metrics_updated that hold quiche's initial
# estimate (333 ms) until the first sample; latest_rtt only appears with one.
RTT_ESTIMATE_FIELDS = ("min_rtt", "smoothed_rtt", "rtt_variance")
RTT_SAMPLE_FIELD = "latest_rtt"

# Written as configuration.time_offset (ms) on every trace with a known
# reference time. qvis's sequence diagram estimates a clock offset between
# client and server (RTT/2 from the first RTT it finds) unless the trace's
# time_offset is non-zero (SequenceDiagramD3Renderer.calculateTimeOffsets);
# a non-zero offset far below qlog's time resolution makes it use the
# reference times, our shared clock, instead. Added to every trace alike, it
# moves nothing relative to anything else.
SHARED_CLOCK_TIME_OFFSET_MS = 1e-6

# RFC 9000's default ack_delay_exponent, when parameters_set does not say.
DEFAULT_ACK_DELAY_EXPONENT = 3

# quiche 0.30 (qlog quic-12 / http3-12) event name -> qlog draft-02 name.
EVENT_NAMES: dict[str, str] = {
    # connectivity
    "quic:server_listening": "connectivity:server_listening",
    "quic:connection_started": "connectivity:connection_started",
    "quic:connection_closed": "connectivity:connection_closed",
    "quic:connection_id_updated": "connectivity:connection_id_updated",
    "quic:spin_bit_updated": "connectivity:spin_bit_updated",
    "quic:connection_state_updated": "connectivity:connection_state_updated",
    "quic:path_assigned": "connectivity:path_assigned",
    "quic:mtu_updated": "connectivity:mtu_updated",
    "quic:migration_state_updated": "connectivity:migration_state_updated",
    # transport
    "quic:version_information": "transport:version_information",
    "quic:alpn_information": "transport:alpn_information",
    "quic:parameters_set": "transport:parameters_set",
    "quic:parameters_restored": "transport:parameters_restored",
    "quic:packet_sent": "transport:packet_sent",
    "quic:packet_received": "transport:packet_received",
    "quic:packet_dropped": "transport:packet_dropped",
    "quic:packet_buffered": "transport:packet_buffered",
    "quic:packets_acked": "transport:packets_acked",
    "quic:udp_datagrams_sent": "transport:datagrams_sent",
    "quic:udp_datagrams_received": "transport:datagrams_received",
    "quic:udp_datagram_dropped": "transport:datagram_dropped",
    "quic:stream_state_updated": "transport:stream_state_updated",
    "quic:frames_processed": "transport:frames_processed",
    "quic:stream_data_moved": "transport:data_moved",
    "quic:datagram_data_moved": "transport:datagram_data_moved",
    # security
    "quic:key_updated": "security:key_updated",
    "quic:key_discarded": "security:key_retired",
    # recovery
    "quic:recovery_parameters_set": "recovery:parameters_set",
    "quic:recovery_metrics_updated": "recovery:metrics_updated",
    "quic:congestion_state_updated": "recovery:congestion_state_updated",
    "quic:loss_timer_updated": "recovery:loss_timer_updated",
    "quic:packet_lost": "recovery:packet_lost",
    "quic:marked_for_retransmit": "recovery:marked_for_retransmit",
    "quic:ecn_state_updated": "recovery:ecn_state_updated",
    # generic log lines
    "loglevel:error": "error:internal_error",
    "loglevel:warning": "warning:internal_warning",
    "loglevel:info": "info:message",
    "loglevel:debug": "debug:message",
    "loglevel:verbose": "verbose:message",
}

# Category prefixes renamed as a whole (http3:frame_created -> http:frame_created).
CATEGORY_NAMES: dict[str, str] = {"http3": "http", "quic": "transport", "qpack": "qpack"}

# Frames whose length quiche 0.30 logs only as raw.payload_length; draft-02 had `length`.
_LENGTH_FRAMES = frozenset({"stream", "crypto", "datagram"})

# qvis's packetization view takes a packet's frames to fill
# raw.payload_length minus a 16-byte AEAD tag; quiche logs payload_length
# without the tag (1312 for a 1350-byte 1-RTT packet), so every full STREAM
# frame "did not fit". Packets of these types carry the tag; the converter
# adds it and keeps quiche's value as raw.payload_length_without_tag.
AEAD_TAG_BYTES = 16
_PROTECTED_PACKET_TYPES = frozenset({"initial", "handshake", "0RTT", "1RTT"})
QUICHE_PAYLOAD_LENGTH = "payload_length_without_tag"

# The receive-timestamp basis of quiche-vegas's endpoints is 1 ms before the
# connection was created (ext/src/connection.rs: below every receive time
# reported, as draft-ietf-quic-receive-ts requires), and the connection's
# creation is its qlog's reference time. So an ACK_RECEIVE_TIMESTAMPS value
# is the receiver's qlog time plus 1000 µs; converted frames give
# receive_timestamps_us on the receiver's qlog clock and keep the value as
# sent in receive_timestamps_since_basis_us.
RECEIVE_TIMESTAMP_BASIS_BEFORE_START_US = 1000
RECEIVE_TIMESTAMPS_AS_SENT = "receive_timestamps_since_basis_us"


def convert_name(name: str) -> str:
    """quiche 0.30's event name in draft-02's ``category:event`` form."""
    if name in EVENT_NAMES:
        return EVENT_NAMES[name]
    if ":" in name:
        category, kind = name.split(":", 1)
        return f"{CATEGORY_NAMES.get(category, category)}:{kind}"
    return name


def _convert_frames(frames: Any) -> Any:
    if not isinstance(frames, list):
        return frames
    for frame in frames:
        if not isinstance(frame, dict):
            continue
        if frame.get("frame_type") in _LENGTH_FRAMES and "length" not in frame:
            raw = frame.get("raw")
            if isinstance(raw, Mapping) and isinstance(raw.get("payload_length"), int):
                frame["length"] = raw["payload_length"]
    return frames


def convert_data(name: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """The event's data as draft-02 readers expect it; every field is kept.

    - ``initiator`` (quic-12) becomes ``owner`` (draft-02), at the top of any event;
    - ``quic:packet_sent``/``packet_received`` of protected packet types:
      ``raw.payload_length`` gets the 16-byte AEAD tag qvis subtracts
      (quiche's value, without it, stays as ``raw.payload_length_without_tag``);
    - ``http3:frame_*``: ``byte_length`` from ``length`` (what qvis reads);
    - ``quic:recovery_metrics_updated``: ``cwnd`` from ``congestion_window``
      (what qvis's sequence-diagram labels read);
    - frames in ``frames`` lists: ``stream``/``crypto``/``datagram`` get
      ``length`` from ``raw.payload_length``;
    - ``quic:stream_data_moved``: ``length`` from ``raw.length``;
    - ``http3:stream_type_set``: ``new`` from ``stream_type``.

    ``name`` is the original (quiche) name. The input is not modified.
    """
    out = copy.deepcopy(dict(data))
    header = out.get("header")
    raw = out.get("raw")
    if (
        name in ("quic:packet_sent", "quic:packet_received")
        and isinstance(header, Mapping)
        and header.get("packet_type") in _PROTECTED_PACKET_TYPES
        and isinstance(raw, dict)
        and isinstance(raw.get("payload_length"), int)
        and not isinstance(raw.get("payload_length"), bool)
        and QUICHE_PAYLOAD_LENGTH not in raw
    ):
        raw[QUICHE_PAYLOAD_LENGTH] = raw["payload_length"]
        raw["payload_length"] = raw["payload_length"] + AEAD_TAG_BYTES
    if (
        name.startswith("http3:frame_")
        and "byte_length" not in out
        and isinstance(out.get("length"), int)
        and not isinstance(out.get("length"), bool)
    ):
        # qvis reads an HTTP/3 frame's payload length as byte_length (qlog draft-02).
        out["byte_length"] = out["length"]
    if name in ("quic:recovery_metrics_updated", "recovery:metrics_updated") and "cwnd" not in out:
        window = out.get("congestion_window")
        if isinstance(window, int) and not isinstance(window, bool):
            # qvis's sequence diagram labels look for cwnd.
            out["cwnd"] = window
    if "initiator" in out and "owner" not in out:
        # Renamed in place, so the fields keep their order.
        out = {("owner" if k == "initiator" else k): v for k, v in out.items()}
    if "frames" in out:
        out["frames"] = _convert_frames(out["frames"])
    if name in ("quic:stream_data_moved", "quic:datagram_data_moved") and "length" not in out:
        raw = out.get("raw")
        if isinstance(raw, Mapping) and isinstance(raw.get("length"), int):
            out["length"] = raw["length"]
    if name == "http3:stream_type_set" and "new" not in out and "stream_type" in out:
        out["new"] = out["stream_type"]
    return out


class TraceContext:
    """What converting one event needs from the events before it in its trace:
    the ACK delay exponents in force and whether an RTT was sampled yet."""

    def __init__(self) -> None:
        self.ack_delay_exponent = {"local": DEFAULT_ACK_DELAY_EXPONENT, "remote": DEFAULT_ACK_DELAY_EXPONENT}
        self.rtt_sampled = False
        self.rtt_estimate: dict[str, Any] = {}


def _ack_frame(ext: Mapping[str, Any], unknown: Mapping[str, Any], exponent: int) -> dict[str, Any]:
    """An ACK_RECEIVE_TIMESTAMPS frame as qlog's ``ack`` frame; every field of
    ours is kept in it (receive times, exponent, raw ACK delay, ECN counts)."""
    frame: dict[str, Any] = {"frame_type": "ack"}
    raw_delay = ext.get("ack_delay_raw")
    if isinstance(raw_delay, int) and not isinstance(raw_delay, bool) and raw_delay >= 0:
        # ms, as quiche logs an ordinary ACK's delay.
        frame["ack_delay"] = raw_delay * 2**exponent / 1000.0
    for key, value in ext.items():
        if key == "frame_type":
            frame["extension_frame_type"] = value
        elif key == "receive_timestamps_us":
            frame[RECEIVE_TIMESTAMPS_AS_SENT] = copy.deepcopy(value)
            frame[key] = _on_receiver_clock(value)
        else:
            frame.setdefault(key, copy.deepcopy(value))
    if "raw" in unknown and "raw" not in frame:
        frame["raw"] = copy.deepcopy(unknown["raw"])
    return frame


def _on_receiver_clock(times: Any) -> Any:
    """``[[packet number, µs since the basis], ...]`` as µs since the
    receiver's qlog reference time; anything else unchanged."""
    if not isinstance(times, list):
        return copy.deepcopy(times)
    out: list[Any] = []
    for item in times:
        if (
            isinstance(item, list)
            and len(item) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in item)
        ):
            out.append([item[0], item[1] - RECEIVE_TIMESTAMP_BASIS_BEFORE_START_US])
        else:
            out.append(copy.deepcopy(item))
    return out


def _merge_extension_frames(
    frames: list[Any], extension_frames: list[Any], exponent: int
) -> tuple[list[Any], list[Any]]:
    """Replaces quiche's ``unknown`` placeholder of each of our frames by the
    decoded frame (matched in order by ``frame_type_bytes``); returns the new
    frame list and the extension frames that matched no placeholder."""
    pending = list(extension_frames)
    out = []
    for frame in frames:
        if (
            pending
            and isinstance(frame, Mapping)
            and frame.get("frame_type") == "unknown"
            and isinstance(pending[0], Mapping)
            and frame.get("frame_type_bytes") == pending[0].get("frame_type_bytes")
        ):
            ext = pending.pop(0)
            if ext.get("frame_type") == "ack_receive_timestamps":
                out.append(_ack_frame(ext, frame, exponent))
            else:
                merged = copy.deepcopy(dict(ext))
                if "raw" in frame:
                    merged.setdefault("raw", copy.deepcopy(frame["raw"]))
                out.append(merged)
        else:
            out.append(frame)
    return out, pending


def _is_u64_max(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= U64_MAX


def convert_event(event: Event, context: TraceContext | None = None) -> dict[str, Any]:
    """One event as ``{"time": ms, "name": "category:event", "data": {...}}``.

    Besides :func:`convert_data`:

    - the event's other top-level fields go into ``data`` (qvis shows only
      ``data``), except a name ``data`` already has, which stays beside it;
    - ``extension_frames`` (our frames, decoded by quiche-vegas) replace
      their ``unknown`` placeholders in ``data.frames``: an
      ACK_RECEIVE_TIMESTAMPS frame becomes an ``ack`` frame (``acked_ranges``,
      ``ack_delay`` in ms from ``ack_delay_raw`` and the ACK sender's
      ``ack_delay_exponent``, ECN counts, and, as its own fields,
      ``extension_frame_type``, ``receive_timestamps_us`` in µs since the
      receiver's qlog reference time, the values as sent (µs since the
      receiver's basis, 1 ms earlier) in ``receive_timestamps_since_basis_us``,
      ``receive_timestamps_exponent``, ``ack_delay_raw``); any other keeps its
      own ``frame_type``. One matching no placeholder stays in the event's
      ``extension_frames``;
    - ``recovery:metrics_updated``: fields at u64::MAX (ssthresh before the
      first loss) are left out and named in ``unset_fields``; until the first
      RTT sample (``latest_rtt``) quiche's initial estimate (``min_rtt``,
      ``smoothed_rtt``, ``rtt_variance``) moves to ``initial_rtt_estimate``,
      and the event with the first sample carries every RTT field.

    ``context`` carries what the trace's earlier events said (see
    :func:`convert_trace`); without it the event is converted on its own, with
    the defaults.
    """
    ctx = context if context is not None else TraceContext()
    data = convert_data(event.name, event.data)
    out: dict[str, Any] = {"time": event.time, "name": convert_name(event.name), "data": data}
    extra = copy.deepcopy(event.extra)
    if event.name.endswith("parameters_set"):
        owner = data.get("owner")
        exponent = data.get("ack_delay_exponent")
        valid = isinstance(exponent, int) and not isinstance(exponent, bool) and 0 <= exponent <= 20
        if isinstance(owner, str) and owner in ctx.ack_delay_exponent and valid:
            ctx.ack_delay_exponent[owner] = exponent
    ext_frames = extra.pop("extension_frames", None)
    if isinstance(ext_frames, list) and ext_frames:
        # An ACK's delay is scaled by its sender's exponent: the peer's for a
        # received packet, ours for a sent one.
        side = "remote" if event.name.endswith("packet_received") else "local"
        frames = data.get("frames")
        merged, left = _merge_extension_frames(
            frames if isinstance(frames, list) else [], ext_frames, ctx.ack_delay_exponent[side]
        )
        if isinstance(frames, list):
            data["frames"] = merged
        if left:
            extra["extension_frames"] = left
    elif ext_frames is not None:
        extra["extension_frames"] = ext_frames
    for key in list(extra):
        if key not in data:
            data[key] = extra.pop(key)
    out.update(extra)
    if event.name in ("quic:recovery_metrics_updated", "recovery:metrics_updated"):
        unset = [k for k, v in data.items() if _is_u64_max(v)]
        for key in unset:
            del data[key]
        if unset:
            data["unset_fields"] = unset
        if not ctx.rtt_sampled:
            if RTT_SAMPLE_FIELD in data:
                ctx.rtt_sampled = True
                for key, value in ctx.rtt_estimate.items():
                    data.setdefault(key, value)
            else:
                held = {k: data.pop(k) for k in RTT_ESTIMATE_FIELDS if k in data}
                if held:
                    ctx.rtt_estimate.update(held)
                    data["initial_rtt_estimate"] = held
    return out


CAREFUL_RESUME_EVENT = "recovery:careful_resume_phase_updated"


def with_careful_resume_events(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with, after each ``recovery:metrics_updated`` whose
    ``cr_phase`` differs from the one before, the event of
    draft-ietf-tsvwg-careful-resume-qlog-02 section 4.1 for that change.

    quiche's qlog crate has no such event, so our Careful Resume writes its
    state as ``cr_*`` fields of ``recovery_metrics_updated``, each only
    when it changes; the draft's event is rebuilt here from the fields
    known at that time: ``old``, ``new``, ``trigger`` (left out when
    ``none``; ``no_saved_state`` is ours, the draft has no trigger for a
    connection with nothing to resume), ``state_data`` (``pipesize``, the
    first and last unvalidated packet numbers once there are any, and the
    ``congestion_window`` and ``ssthresh`` of the same moment when set)
    and ``restored_data`` (``saved_congestion_window``, ``saved_rtt`` in
    ms) when a saved path was restored. Fields never logged are left out,
    not invented."""
    out: list[dict[str, Any]] = []
    known: dict[str, Any] = {}
    phase: str | None = None
    for event in events:
        out.append(event)
        if event.get("name") != "recovery:metrics_updated":
            continue
        data = event.get("data")
        if not isinstance(data, Mapping):
            continue
        for key in data.get("unset_fields", ()):
            known.pop(key, None)
        known.update(data)
        new = data.get("cr_phase")
        if not isinstance(new, str) or new == phase:
            continue
        state = {
            draft: known[ours]
            for draft, ours in (
                ("pipesize", "cr_pipesize"),
                ("first_unvalidated_packet", "cr_first_unvalidated_packet"),
                ("last_unvalidated_packet", "cr_last_unvalidated_packet"),
                ("congestion_window", "congestion_window"),
                ("ssthresh", "ssthresh"),
            )
            if ours in known
        }
        derived: dict[str, Any] = {"new": new, "state_data": state}
        if phase is not None:
            derived = {"old": phase, **derived}
        if "cr_saved_congestion_window" in known and "cr_saved_rtt" in known:
            derived["restored_data"] = {
                "saved_congestion_window": known["cr_saved_congestion_window"],
                "saved_rtt": known["cr_saved_rtt"],
            }
        trigger = known.get("cr_trigger")
        if isinstance(trigger, str) and trigger != "none":
            derived["trigger"] = trigger
        out.append({"time": event["time"], "name": CAREFUL_RESUME_EVENT, "data": derived})
        phase = new
    return out


def reference_time_ms(header: Mapping[str, Any]) -> float:
    """The trace's reference time in milliseconds since the Unix epoch, as qvis wants
    it: from quiche 0.30's ``reference_time.wall_clock_time`` (an RFC 3339 string),
    or a number as older qlogs had; 0 when unknown."""
    trace = header.get("trace")
    common = trace.get("common_fields") if isinstance(trace, Mapping) else None
    if not isinstance(common, Mapping):
        common = header.get("common_fields") if isinstance(header.get("common_fields"), Mapping) else {}
    ref = common.get("reference_time")
    if isinstance(ref, int | float) and not isinstance(ref, bool):
        return float(ref)
    if isinstance(ref, str):
        try:
            return float(ref)
        except ValueError:
            ref = {"wall_clock_time": ref}
    if isinstance(ref, Mapping) and isinstance(ref.get("wall_clock_time"), str):
        try:
            stamp = pd.Timestamp(ref["wall_clock_time"])
        except (ValueError, TypeError):
            return 0.0
        if stamp.tzinfo is None:
            stamp = stamp.tz_localize("UTC")
        value = stamp.value / 1e6
        return value if math.isfinite(value) else 0.0
    return 0.0


def convert_trace(trace: Trace) -> dict[str, Any]:
    """One trace in the draft-02 form (see the module's documentation)."""
    info = trace.trace_info
    vp = info.get("vantage_point") if isinstance(info.get("vantage_point"), Mapping) else {}
    vantage = dict(vp)
    vantage.setdefault("type", "unknown")
    vantage.setdefault("name", trace.title or Path(trace.path).name)
    common = info.get("common_fields") if isinstance(info.get("common_fields"), Mapping) else {}
    common_out: dict[str, Any] = {
        "time_format": "relative",
        "reference_time": reference_time_ms(trace.header),
        "protocol_type": "QUIC_HTTP3",
    }
    configuration: dict[str, Any] = {"time_units": "ms", "original_uris": [Path(trace.path).name]}
    if common_out["reference_time"] > 0:
        configuration["time_offset"] = SHARED_CLOCK_TIME_OFFSET_MS
    original_ref = common.get("reference_time")
    if isinstance(original_ref, Mapping):
        configuration["original_reference_time"] = dict(original_ref)
    for key in ("event_schemas", "event_schema"):
        if key in info:
            configuration[key] = info[key]
    context = TraceContext()
    # Converted in the file's order (the context follows it), then sorted
    # (stably: a derived event stays after its source): qvis wants the
    # events in time order.
    converted = with_careful_resume_events([convert_event(e, context) for e in trace.events])
    events = sorted(converted, key=lambda e: e["time"])
    return {
        "vantage_point": vantage,
        "title": trace.title or Path(trace.path).name,
        "description": trace.description,
        "common_fields": common_out,
        "configuration": configuration,
        "events": events,
    }


def _stream_bytes(trace: Trace) -> int:
    """Bytes of STREAM frames in the trace's sent packets (retransmissions included)."""
    total = 0
    for event in trace.named("quic:packet_sent", "transport:packet_sent"):
        for frame in event.data.get("frames") or []:
            if isinstance(frame, Mapping) and frame.get("frame_type") == "stream":
                length = frame.get("length")
                if not isinstance(length, int):
                    raw = frame.get("raw")
                    length = raw.get("payload_length") if isinstance(raw, Mapping) else None
                if isinstance(length, int) and not isinstance(length, bool):
                    total += length
    return total


def sender_first(traces: Sequence[Trace]) -> list[Trace]:
    """The traces with the one that sent the most stream data first (the data
    sender, whose congestion controller qvis's congestion view should open
    on); ties keep their order."""
    sent = [_stream_bytes(t) for t in traces]
    order = sorted(range(len(traces)), key=lambda i: -sent[i])
    return [traces[i] for i in order]


def to_qvis(traces: Sequence[Trace] | Trace, title: str | None = None) -> dict[str, Any]:
    """The qvis document for one or more traces (client and server of a
    connection side by side, for qvis's sequence diagram), the data sender's
    trace first (:func:`sender_first`)."""
    items = [traces] if isinstance(traces, Trace) else list(traces)
    if not items:
        raise ValueError("no trace to convert")
    items = sender_first(items)
    doc_title = title or " + ".join(Path(t.path).name for t in items)
    # qvis decides how to parse a file from its first 1024 characters: the
    # version and format must come first, before any free text.
    return {
        "qlog_version": QVIS_VERSION,
        "qlog_format": "JSON",
        "title": doc_title,
        "description": "converted from quiche 0.30 qlog (quic-12) by vegas-qlog for qvis",
        "traces": [convert_trace(t) for t in items],
    }


def write_qvis(
    inputs: Iterable[str | os.PathLike[str]], output: str | os.PathLike[str], *, strict: bool = False
) -> tuple[Path, list[Trace]]:
    """Reads the qlog files ``inputs`` and writes one qvis document with all their traces."""
    traces: list[Trace] = []
    for path in inputs:
        traces.extend(read_qlog_traces(path, strict=strict))
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        json.dump(to_qvis(traces), f, separators=(",", ":"))
        f.write("\n")
    return out, traces


QVIS_SUFFIX = "-qvis.qlog"


def default_output(path: str | os.PathLike[str]) -> Path:
    """Where ``to-qvis`` writes the qvis form of a qlog, a file named or one
    found in a directory alike: ``x/X.sqlog`` -> ``x/X-qvis.qlog`` (qvis
    recognises ``.qlog``; the apps name theirs the same way, ``src/qvis.rs``);
    the simulator's ``NAME-client.sqlog`` and ``NAME-server.sqlog`` ->
    ``x/NAME-qvis.qlog``, one file with both sides (qvis's sequence
    diagram)."""
    p = Path(path)
    stem = p.stem
    for side in ("-client", "-server"):
        if stem.endswith(side):
            stem = stem[: -len(side)]
            break
    return p.parent / f"{stem}{QVIS_SUFFIX}"


def file_jobs(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[list[Path], Path]]:
    """One job ``(inputs, output)`` per qvis file the qlogs ``paths`` make
    (named by ``default_output``: the two sides of a simulated connection
    go together); sorted, inputs too."""
    groups: dict[Path, list[Path]] = {}
    for path in sorted({Path(p) for p in paths}):
        groups.setdefault(default_output(path), []).append(path)
    return [(inputs, output) for output, inputs in sorted(groups.items())]


def directory_jobs(directory: str | os.PathLike[str]) -> list[tuple[list[Path], Path]]:
    """For a directory (a simulator run, a QLOGDIR): ``file_jobs`` of every
    ``.sqlog`` in it or below."""
    return file_jobs(Path(directory).rglob("*.sqlog"))

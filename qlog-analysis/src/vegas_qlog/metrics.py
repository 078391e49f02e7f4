"""Series and figures of merit computed from qlog traces and from numbers.

Times in the returned tables are in seconds (column ``time_s``) from the
trace's start; RTTs stay in milliseconds and windows in bytes, as quiche
logs them.

quiche logs ``quic:recovery_metrics_updated`` with only the fields that
changed since the previous one, and our controllers add their internals the
same way, so every series here is forward-filled: a row holds the latest
known value of every field at that time.
"""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .sqlog import Event, QlogWarning, Trace

# Fields of quic:recovery_metrics_updated defined by qlog (quic-12); everything
# else in those events is an extension: quiche's cf_* or a controller's own.
STANDARD_RECOVERY_FIELDS = frozenset(
    {
        "min_rtt",
        "smoothed_rtt",
        "latest_rtt",
        "rtt_variance",
        "pto_count",
        "congestion_window",
        "bytes_in_flight",
        "ssthresh",
        "packets_in_flight",
        "pacing_rate",
    }
)

# quiche logs "no threshold yet" as u64::MAX.
_U64_MAX = 2**64 - 1

METRICS_EVENT = "quic:recovery_metrics_updated"
STATE_EVENT = "quic:congestion_state_updated"


def _seconds(ms: float) -> float:
    """qlog milliseconds to seconds, rounded to the nanosecond (no 0.056384000000000004)."""
    return round(ms / 1e3, 9)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"cf_lost_packets": {"total": 3}}`` -> ``{"cf_lost_packets_total": 3}``."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{name}_"))
        elif isinstance(value, list):
            continue  # no list-valued field is a metric
        elif isinstance(value, int) and not isinstance(value, bool) and value >= _U64_MAX:
            out[name] = math.inf
        else:
            out[name] = value
    return out


def recovery_metrics(trace: Trace, *, fill: bool = True) -> pd.DataFrame:
    """Every ``quic:recovery_metrics_updated`` as a row, forward-filled.

    Columns: ``time_s`` then one per field ever logged (nested objects are
    flattened with ``_``: ``cf_lost_packets_total``). With ``fill`` each
    column holds its latest value (``*_delta`` columns are 0 where not
    logged, since a delta belongs to its own event only); without it, the
    cells of fields an event did not carry are empty.
    """
    rows = []
    for event in trace.named(METRICS_EVENT):
        row = _flatten(event.data)
        row["time_s"] = _seconds(event.time)
        rows.append(row)
    if not rows:
        return pd.DataFrame({"time_s": pd.Series(dtype=float)})
    frame = pd.DataFrame.from_records(rows)
    columns = ["time_s"] + [c for c in frame.columns if c != "time_s"]
    frame = frame[columns]
    if fill:
        deltas = [c for c in frame.columns if c.endswith("_delta")]
        others = [c for c in frame.columns if c not in deltas]
        frame[others] = frame[others].ffill()
        if deltas:
            frame[deltas] = frame[deltas].fillna(0)
    return frame


def cc_internals(trace: Trace) -> pd.DataFrame:
    """The controller's own fields (not qlog's, not quiche's ``cf_*``), forward-filled.

    For Vegas for example ``base_rtt_ms``, ``min_rtt_ms``, ``diff_packets``,
    ``alpha``, ``beta``, ``expected_bps``, ``actual_bps``, ``round``.
    """
    frame = recovery_metrics(trace)
    keep = ["time_s"] + [
        c for c in frame.columns if c != "time_s" and c not in STANDARD_RECOVERY_FIELDS and not c.startswith("cf_")
    ]
    return frame[keep]


def window_series(trace: Trace) -> pd.DataFrame:
    """``time_s``, ``cwnd_bytes``, ``bytes_in_flight``, ``ssthresh``, ``pacing_rate`` and
    the RTTs (``min_rtt_ms``, ``smoothed_rtt_ms``, ``latest_rtt_ms``), forward-filled."""
    frame = recovery_metrics(trace)
    names = {
        "congestion_window": "cwnd_bytes",
        "bytes_in_flight": "bytes_in_flight",
        "ssthresh": "ssthresh",
        "pacing_rate": "pacing_rate",
        "min_rtt": "min_rtt_ms",
        "smoothed_rtt": "smoothed_rtt_ms",
        "latest_rtt": "latest_rtt_ms",
        "rtt_variance": "rtt_variance_ms",
    }
    out = pd.DataFrame({"time_s": frame["time_s"]})
    for source, target in names.items():
        out[target] = frame[source] if source in frame.columns else np.nan
    return out


def congestion_states(trace: Trace) -> pd.DataFrame:
    """``time_s``, ``state`` (``slow_start``, ``congestion_avoidance``, ``recovery``, ...)
    and ``trigger`` of every ``quic:congestion_state_updated``."""
    rows = [
        {"time_s": _seconds(e.time), "state": e.data.get("new"), "trigger": e.data.get("trigger")}
        for e in trace.named(STATE_EVENT)
    ]
    return pd.DataFrame(rows, columns=["time_s", "state", "trigger"])


class _Coverage:
    """Byte ranges of one stream seen so far; tells how much of a new range is new."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def add(self, start: int, end: int) -> int:
        """Adds ``[start, end)`` and returns how many of its bytes were not covered."""
        if end <= start:
            return 0
        i = bisect.bisect_left(self._ends, start)
        covered = 0
        new_start, new_end = start, end
        j = i
        while j < len(self._starts) and self._starts[j] <= end:
            covered += max(0, min(end, self._ends[j]) - max(start, self._starts[j]))
            new_start = min(new_start, self._starts[j])
            new_end = max(new_end, self._ends[j])
            j += 1
        self._starts[i:j] = [new_start]
        self._ends[i:j] = [new_end]
        return (end - start) - covered


def _frame_length(frame: Mapping[str, Any]) -> int:
    length = frame.get("length")
    if isinstance(length, int):
        return length
    raw = frame.get("raw")
    if isinstance(raw, Mapping) and isinstance(raw.get("payload_length"), int):
        return int(raw["payload_length"])
    return 0


def _stream_ranges(event: Event) -> list[tuple[int, int, int]]:
    out = []
    for frame in event.data.get("frames") or []:
        if isinstance(frame, Mapping) and frame.get("frame_type") == "stream":
            offset = frame.get("offset", 0)
            length = _frame_length(frame)
            if isinstance(offset, int) and length > 0:
                out.append((int(frame.get("stream_id", 0)), offset, offset + length))
    return out


def _packet_number(event: Event) -> tuple[str, int] | None:
    header = event.data.get("header")
    if not isinstance(header, Mapping) or not isinstance(header.get("packet_number"), int):
        return None
    return str(header.get("packet_type", "")), int(header["packet_number"])


# Our ACK_RECEIVE_TIMESTAMPS frame, as quiche-vegas logs it in a packet
# event's extension_frames (its place in data.frames is an "unknown" frame).
EXTENSION_ACK = "ack_receive_timestamps"


def ack_frames(event: Event) -> list[Mapping[str, Any]]:
    """The ACK frames of a packet event: qlog's ``ack`` frames and, with our
    extensions on, the ACK_RECEIVE_TIMESTAMPS frames in ``extension_frames``."""
    frames = [f for f in event.data.get("frames") or [] if isinstance(f, Mapping) and f.get("frame_type") == "ack"]
    extension = event.extra.get("extension_frames")
    if isinstance(extension, list):
        frames += [f for f in extension if isinstance(f, Mapping) and f.get("frame_type") == EXTENSION_ACK]
    return frames


def _acked_numbers(event: Event) -> Iterable[int]:
    for frame in ack_frames(event):
        for r in frame.get("acked_ranges") or []:
            if isinstance(r, list) and r and all(isinstance(n, int) and not isinstance(n, bool) for n in r):
                yield from range(int(r[0]), int(r[-1]) + 1)


def stream_bytes_sent(trace: Trace) -> pd.DataFrame:
    """One row per ``quic:packet_sent`` carrying stream data: ``time_s``,
    ``packet_number``, ``stream_bytes``, ``new_bytes`` (not sent before) and
    ``retransmitted_bytes`` (offsets sent before)."""
    coverage: dict[int, _Coverage] = {}
    rows = []
    seen: set[tuple[str, int]] = set()
    repeated = 0
    for event in trace.named("quic:packet_sent"):
        ranges = _stream_ranges(event)
        if not ranges:
            continue
        pn = _packet_number(event)
        if pn is not None:
            # A packet number is never sent twice in one space: a second
            # packet_sent of it is the same record written again, not a
            # retransmission (which goes out under a new number).
            key = (_SPACES.get(pn[0], pn[0]), pn[1])
            if key in seen:
                repeated += 1
                continue
            seen.add(key)
        total = sum(end - start for _, start, end in ranges)
        new = sum(coverage.setdefault(sid, _Coverage()).add(start, end) for sid, start, end in ranges)
        rows.append(
            {
                "time_s": _seconds(event.time),
                "packet_number": pn[1] if pn else -1,
                "stream_bytes": total,
                "new_bytes": new,
                "retransmitted_bytes": total - new,
            }
        )
    if repeated:
        warnings.warn(
            f"{trace.path}: {repeated} packet_sent event(s) repeat a packet number already sent "
            "in its space; each packet counted once",
            QlogWarning,
            stacklevel=2,
        )
    columns = ["time_s", "packet_number", "stream_bytes", "new_bytes", "retransmitted_bytes"]
    return pd.DataFrame(rows, columns=columns)


# Packet types that share a packet number space (RFC 9000 section 12.3).
_SPACES = {"0RTT": "application", "1RTT": "application"}


def _valid_rtts(trace: Trace, values: pd.Series, what: str) -> pd.Series:
    """``values`` without the negative ones, which no RTT can be (named in a warning)."""
    values = values.dropna()
    bad = values < 0
    if bad.any():
        warnings.warn(
            f"{trace.path}: {int(bad.sum())} negative {what} value(s) (first: {values[bad].iloc[0]:g} ms) "
            "are not RTTs; left out",
            QlogWarning,
            stacklevel=2,
        )
    return values[~bad]


def delivered_bytes(trace: Trace, direction: str = "auto") -> pd.DataFrame:
    """Stream bytes delivered over time: ``time_s``, ``bytes`` (in that event).

    ``direction="received"``: the bytes quiche handed to the application
    (``quic:stream_data_moved`` from ``transport`` to ``application``), what a
    receiver's trace shows. ``direction="sent"``: the stream bytes first
    acknowledged by each ACK the endpoint received (each offset counted once,
    so retransmissions are not counted twice), what a sender's trace shows.
    ``"auto"`` takes whichever of the two moved more bytes: the direction of
    the transfer.
    """
    if direction not in ("auto", "received", "sent"):
        raise ValueError(f"direction must be 'auto', 'received' or 'sent', not {direction!r}")
    received = pd.DataFrame(
        [
            (_seconds(e.time), _moved_length(e))
            for e in trace.named("quic:stream_data_moved")
            if e.data.get("from") == "transport" and e.data.get("to") == "application"
        ],
        columns=["time_s", "bytes"],
    )
    if direction == "received":
        return received
    sent = _acked_stream_bytes(trace)
    if direction == "sent":
        return sent
    return received if received["bytes"].sum() >= sent["bytes"].sum() else sent


def _moved_length(event: Event) -> int:
    length = event.data.get("length")
    if isinstance(length, int):
        return length
    raw = event.data.get("raw")
    if isinstance(raw, Mapping) and isinstance(raw.get("length"), int):
        return int(raw["length"])
    return 0


def _acked_stream_bytes(trace: Trace) -> pd.DataFrame:
    sent: dict[tuple[str, int], list[tuple[int, int, int]]] = {}
    acked: set[tuple[str, int]] = set()
    coverage: dict[int, _Coverage] = {}
    rows: list[tuple[float, int]] = []
    for event in trace.events:
        if event.name == "quic:packet_sent":
            pn = _packet_number(event)
            ranges = _stream_ranges(event)
            if pn and ranges:
                sent[pn] = ranges
        elif event.name == "quic:packet_received":
            pn = _packet_number(event)
            space = pn[0] if pn else "1RTT"
            total = 0
            for number in _acked_numbers(event):
                key = (space, number)
                if key in acked or key not in sent:
                    continue
                acked.add(key)
                for sid, start, end in sent.pop(key):
                    total += coverage.setdefault(sid, _Coverage()).add(start, end)
            if total:
                rows.append((_seconds(event.time), total))
    return pd.DataFrame(rows, columns=["time_s", "bytes"])


def goodput_series(trace: Trace, interval_s: float = 0.1, direction: str = "auto") -> pd.DataFrame:
    """Goodput per interval: ``time_s`` (end of each interval), ``bytes``,
    ``goodput_bps`` and ``cumulative_bytes``. See :func:`delivered_bytes`."""
    if interval_s <= 0:
        raise ValueError("interval_s must be positive")
    delivered = delivered_bytes(trace, direction)
    return rate_series(delivered["time_s"], delivered["bytes"], interval_s)


def rate_series(
    times_s: Sequence[float] | pd.Series, amounts: Sequence[float] | pd.Series, interval_s: float
) -> pd.DataFrame:
    """Bins ``amounts`` (bytes) happening at ``times_s`` into intervals of ``interval_s``."""
    times = np.asarray(times_s, dtype=float)
    values = np.asarray(amounts, dtype=float)
    if times.size == 0:
        return pd.DataFrame(columns=["time_s", "bytes", "goodput_bps", "cumulative_bytes"])
    bins = math.floor(times.max() / interval_s) + 1
    index = np.clip(np.floor(times / interval_s).astype(int), 0, bins - 1)
    per_bin = np.bincount(index, weights=values, minlength=bins)
    ends = (np.arange(bins) + 1) * interval_s
    return pd.DataFrame(
        {
            "time_s": np.round(ends, 9),
            "bytes": per_bin,
            "goodput_bps": per_bin * 8.0 / interval_s,
            "cumulative_bytes": np.cumsum(per_bin),
        }
    )


def smoothed_goodput(series: pd.DataFrame, window_s: float) -> pd.DataFrame:
    """``series`` with ``goodput_bps`` over the trailing ``window_s`` seconds
    at each sample: the growth of the cumulative delivered bytes
    (``cumulative_bytes`` or the simulator's ``bytes_delivered``) over the
    window, interpolated linearly between samples, times 8 / window (the
    first window: over the time since the first sample). Delivery bursts
    after a hole is filled no longer show as rates above the link's; the
    raw per-interval value stays as ``goodput_interval_bps``. ``window_s``
    0 returns ``series`` as it is."""
    if window_s < 0 or not math.isfinite(window_s):
        raise ValueError(f"smoothing window must be a finite number of seconds >= 0, got {window_s}")
    if window_s == 0 or series.empty:
        return series
    cumulative = next((c for c in ("cumulative_bytes", "bytes_delivered") if c in series.columns), None)
    if cumulative is None or "time_s" not in series.columns:
        raise KeyError("goodput smoothing needs time_s and cumulative_bytes or bytes_delivered")
    data = series.dropna(subset=["time_s", cumulative]).sort_values("time_s")
    times = data["time_s"].to_numpy(dtype=float)
    total = data[cumulative].to_numpy(dtype=float)
    # The cumulative curve starts at zero one interval before the first sample.
    step = float(np.median(np.diff(times))) if times.size > 1 else window_s
    # Nothing delivered before: one interval before the first bin (qlog), or
    # the run's start (the simulator's series begin one interval in).
    start = times[0] - step if cumulative == "cumulative_bytes" else min(0.0, times[0])
    grid_t = np.concatenate([[start], times])
    grid_b = np.concatenate([[0.0], total])
    earlier = np.maximum(times - window_s, start)
    span = times - earlier
    delivered = total - np.interp(earlier, grid_t, grid_b)
    out = data.copy()
    if "goodput_bps" in out.columns:
        out["goodput_interval_bps"] = out["goodput_bps"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["goodput_bps"] = np.where(span > 0, delivered * 8.0 / span, np.nan)
    return out.reset_index(drop=True)


def lost_packets(trace: Trace) -> int:
    """Packets the sender declared lost: quiche's ``cf_lost_packets.total``
    where logged, otherwise the number of ``quic:packet_lost`` events."""
    total = None
    for event in trace.named(METRICS_EVENT):
        value = event.data.get("cf_lost_packets")
        if isinstance(value, Mapping) and isinstance(value.get("total"), int):
            total = int(value["total"])
    if total is not None:
        return total
    return sum(1 for _ in trace.named("quic:packet_lost"))


def packet_losses(trace: Trace) -> pd.DataFrame:
    """Every ``quic:packet_lost``: ``time_s``, ``packet_type``, ``packet_number``
    and ``trigger`` (``reordering_threshold``, ``time_threshold``, ...)."""
    rows = []
    for event in trace.named("quic:packet_lost", "recovery:packet_lost"):
        header = event.data.get("header")
        header = header if isinstance(header, Mapping) else {}
        number = header.get("packet_number", event.data.get("packet_number"))
        rows.append(
            {
                "time_s": _seconds(event.time),
                "packet_type": header.get("packet_type"),
                "packet_number": number if isinstance(number, int) and not isinstance(number, bool) else None,
                "trigger": event.data.get("trigger"),
            }
        )
    return pd.DataFrame(rows, columns=["time_s", "packet_type", "packet_number", "trigger"])


def trace_summary(trace: Trace) -> dict[str, Any]:
    """Figures of merit of one trace: duration, bytes, goodput, retransmissions, RTT."""
    sent = stream_bytes_sent(trace)
    delivered = delivered_bytes(trace)
    window = window_series(trace)
    stream_total = float(sent["stream_bytes"].sum()) if len(sent) else 0.0
    retransmitted = float(sent["retransmitted_bytes"].sum()) if len(sent) else 0.0
    delivered_total = float(delivered["bytes"].sum()) if len(delivered) else 0.0
    span = float(delivered["time_s"].max()) if len(delivered) else trace.duration_ms / 1000.0
    srtt = _valid_rtts(trace, window["smoothed_rtt_ms"], "smoothed_rtt") if len(window) else pd.Series(dtype=float)
    min_rtt = _valid_rtts(trace, window["min_rtt_ms"], "min_rtt") if len(window) else pd.Series(dtype=float)
    return {
        "path": trace.path,
        "vantage_point": trace.vantage_point,
        "description": trace.description,
        "events": len(trace.events),
        "complete": trace.complete,
        "duration_s": trace.duration_ms / 1000.0,
        "bytes_delivered": delivered_total,
        "goodput_bps": delivered_total * 8.0 / span if span > 0 else math.nan,
        "stream_bytes_sent": stream_total,
        "bytes_retransmitted": retransmitted,
        "retransmission_ratio": retransmission_ratio(retransmitted, stream_total - retransmitted)
        if stream_total
        else math.nan,
        "packets_lost": lost_packets(trace),
        "mean_srtt_ms": float(srtt.mean()) if len(srtt) else math.nan,
        "min_rtt_ms": float(min_rtt.min()) if len(min_rtt) else math.nan,
    }


def time_to_reach(
    series: pd.DataFrame,
    column: str,
    threshold: float,
    *,
    hold_s: float = 0.0,
    after_s: float = 0.0,
    time_column: str = "time_s",
) -> float:
    """The first time (at or after ``after_s``) from which ``column`` stays at or
    above ``threshold`` for ``hold_s`` seconds; NaN if it never does.

    For example the time a link takes to be fully used (``queue-LINK.csv``,
    ``utilization`` >= 0.95), or a flow to take its share after a change.
    """
    data = series[[time_column, column]].dropna()
    data = data[data[time_column] >= after_s]
    times = data[time_column].to_numpy(dtype=float)
    above = data[column].to_numpy(dtype=float) >= threshold
    start = math.nan
    for t, ok in zip(times, above, strict=True):
        if ok and math.isnan(start):
            start = t
        elif not ok:
            start = math.nan
        if not math.isnan(start) and t - start >= hold_s - 1e-9:  # sampled times are not exact
            return float(start)
    return math.nan


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when all shares are
    equal, 1/n when one flow has everything. NaN without values; 1 when all
    are zero (equal shares of nothing)."""
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        return math.nan
    squares = float(np.sum(x * x))
    if squares == 0.0:
        return 1.0
    return float(np.sum(x)) ** 2 / (x.size * squares)


def retransmission_ratio(bytes_retransmitted: float, bytes_delivered: float) -> float:
    """Retransmitted bytes over all bytes sent for the transfer
    (``retransmitted / (delivered + retransmitted)``): 0 without any
    retransmission, 0.5 when every byte was sent twice. NaN when nothing moved.
    """
    total = float(bytes_delivered) + float(bytes_retransmitted)
    if total <= 0:
        return math.nan
    return float(bytes_retransmitted) / total

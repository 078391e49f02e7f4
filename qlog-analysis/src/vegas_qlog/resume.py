"""Where a resumed connection's time goes: the Careful Resume timeline of a
server ``.sqlog`` (RFC 9959's phases as our host logs them, ``cr_*`` fields
of ``quic:recovery_metrics_updated``), when the last new stream byte was
first sent against the last stream packet (a retransmission, when losses
hit the last round), and how the losses were detected.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .metrics import stream_bytes_sent
from .sqlog import Trace


@dataclass
class ResumeTimeline:
    """Times in milliseconds from the trace's start."""

    phases: list[tuple[float, str, str]] = field(default_factory=list)
    jump_cwnd_bytes: int | None = None
    saved_cwnd_bytes: int | None = None
    first_stream_sent_ms: float | None = None
    last_new_data_sent_ms: float | None = None
    last_stream_sent_ms: float | None = None
    losses_by_trigger: dict[str, int] = field(default_factory=dict)
    losses_after_last_new_data: int = 0

    def phase_start(self, phase: str) -> float | None:
        return next((t for t, p, _ in self.phases if p == phase), None)

    @property
    def tail_ms(self) -> float | None:
        """From the last new byte's first sending to the last stream packet."""
        if self.last_new_data_sent_ms is None or self.last_stream_sent_ms is None:
            return None
        return self.last_stream_sent_ms - self.last_new_data_sent_ms

    def as_dict(self) -> dict[str, object]:
        return {
            "phases": [{"time_ms": t, "phase": p, "trigger": trig} for t, p, trig in self.phases],
            "jump_cwnd_bytes": self.jump_cwnd_bytes,
            "saved_cwnd_bytes": self.saved_cwnd_bytes,
            "first_stream_sent_ms": self.first_stream_sent_ms,
            "last_new_data_sent_ms": self.last_new_data_sent_ms,
            "last_stream_sent_ms": self.last_stream_sent_ms,
            "tail_ms": self.tail_ms,
            "losses_by_trigger": dict(self.losses_by_trigger),
            "losses_after_last_new_data": self.losses_after_last_new_data,
        }


def resume_timeline(trace: Trace) -> ResumeTimeline:
    timeline = ResumeTimeline()
    # qlog writes a field only when it changes, so a phase and its trigger
    # are read from the event that carries the phase.
    for event in trace.named("quic:recovery_metrics_updated"):
        data = event.data
        if "cr_phase" in data:
            timeline.phases.append((event.time, str(data["cr_phase"]), str(data.get("cr_trigger", ""))))
        if "cr_jump_congestion_window" in data and timeline.jump_cwnd_bytes is None:
            timeline.jump_cwnd_bytes = int(data["cr_jump_congestion_window"])
        if "cr_saved_congestion_window" in data and timeline.saved_cwnd_bytes is None:
            timeline.saved_cwnd_bytes = int(data["cr_saved_congestion_window"])
    sent = stream_bytes_sent(trace)
    if len(sent):
        timeline.first_stream_sent_ms = float(sent["time_s"].iloc[0]) * 1000.0
        timeline.last_stream_sent_ms = float(sent["time_s"].iloc[-1]) * 1000.0
        new = sent[sent["new_bytes"] > 0]
        if len(new):
            timeline.last_new_data_sent_ms = float(new["time_s"].iloc[-1]) * 1000.0
    triggers: Counter[str] = Counter()
    for event in trace.named("quic:packet_lost"):
        triggers[str(event.data.get("trigger", "unknown"))] += 1
        if timeline.last_new_data_sent_ms is not None and event.time > timeline.last_new_data_sent_ms:
            timeline.losses_after_last_new_data += 1
    timeline.losses_by_trigger = dict(sorted(triggers.items()))
    return timeline

"""The progress line of a sweep: runs done/total, failures, simulated hours,
ETA. On a terminal one line redrawn in place; otherwise one line per
finished run (for logs)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


class Progress:
    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        width: int = 24,
    ):
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.clock = clock
        self.width = width
        self.start = clock()
        self.done = 0  # finished runs, failed ones included
        self.failed = 0
        self.reused = 0
        self.simulated_s = 0.0
        self.finished_here = 0  # runs finished by this invocation (the ETA's rate)
        self.to_run = total

    def reuse(self, count: int, simulated_s: float) -> None:
        """Runs already done before this invocation."""
        self.reused += count
        self.done += count
        self.simulated_s += simulated_s
        self.to_run = self.total - self.done

    def eta(self) -> float | None:
        remaining = self.total - self.done
        if remaining == 0:
            return 0.0
        if self.finished_here == 0:
            return None
        return (self.clock() - self.start) / self.finished_here * remaining

    def line(self) -> str:
        filled = int(self.width * self.done / self.total) if self.total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        eta = self.eta()
        eta_text = "?" if eta is None else format_duration(eta)
        hours = self.simulated_s / 3600
        hours_text = f"{hours:.2f}" if hours >= 0.1 or hours == 0 else f"{hours:.4f}"
        return f"[{bar}] {self.done}/{self.total} runs, {self.failed} failed, {hours_text} simulated h, ETA {eta_text}"

    def show(self, note: str = "") -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + self.line())
            if note:
                self.stream.write("\n" + note + "\n")
        else:
            self.stream.write(self.line() + (f"  {note}" if note else "") + "\n")
        self.stream.flush()

    def update(self, ok: bool, simulated_s: float, note: str = "") -> None:
        self.done += 1
        self.finished_here += 1
        if not ok:
            self.failed += 1
        self.simulated_s += simulated_s
        self.show(note)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

"""What ``scripts/interop`` reads from a sender's qlogs, with this package's
one definition of a retransmitted byte.

A byte is retransmitted when a STREAM frame carries an offset of its stream
that an earlier packet already carried
(:func:`vegas_qlog.metrics.stream_bytes_sent`, which also counts a packet
number written twice only once). The runner used to count, per stream, the
bytes below the highest offset sent so far: the same on an in-order sender,
but a first transmission that fills a hole below that offset (a sender that
sends out of order, or a repeated ``packet_sent`` record) counted as
retransmitted there and not here, so the interop table and ``vegas-qlog``
could disagree on one file.

Other stacks write older qlog drafts: ``transport:packet_sent`` (ngtcp2,
aioquic, quic-go before qlog 0.4) is the same event as ``quic:packet_sent``,
and is read as such.

    python -m vegas_qlog.interop SENDER.sqlog ...   # prints the summary as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .metrics import stream_bytes_sent
from .sqlog import QlogFormatError, QlogWarning, Trace, read_qlog_traces

PACKET_SENT = "quic:packet_sent"
# Names of the same event in the qlog drafts other stacks write.
PACKET_SENT_ALIASES = frozenset({PACKET_SENT, "transport:packet_sent"})


def with_current_names(trace: Trace) -> Trace:
    """The trace with every alias of ``quic:packet_sent`` renamed to it, so
    that :func:`stream_bytes_sent` reads any stack's sent packets."""
    if not any(e.name in PACKET_SENT_ALIASES and e.name != PACKET_SENT for e in trace.events):
        return trace
    events = [replace(e, name=PACKET_SENT) if e.name in PACKET_SENT_ALIASES else e for e in trace.events]
    return Trace(trace.path, trace.header, events, trace.problems)


def sender_summary(paths: Iterable[str | os.PathLike[str]]) -> dict[str, Any]:
    """Sums over the traces of the given qlog files (one sender's
    connections): ``packets_sent`` (those carrying stream data),
    ``stream_bytes_sent``, ``retransmitted_bytes``, and ``files`` read.
    ``retransmitted_bytes`` is None when no file held a sent packet (a
    stack that logs no sent packets, or no readable file): unknown, not 0.
    Unreadable files are listed in ``unreadable`` with the reason."""
    packets = stream = retransmitted = 0
    saw_sent = False
    files: list[str] = []
    unreadable: dict[str, str] = {}
    for path in paths:
        try:
            with warnings.catch_warnings():
                # A run cut short leaves a truncated last record: the events
                # before it still count, as in every other reader of ours.
                warnings.simplefilter("ignore", QlogWarning)
                traces = read_qlog_traces(path)
        except QlogFormatError as e:
            unreadable[str(path)] = str(e)
            continue
        files.append(str(path))
        for trace in traces:
            trace = with_current_names(trace)
            if any(e.name == PACKET_SENT for e in trace.events):
                saw_sent = True
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", QlogWarning)
                sent = stream_bytes_sent(trace)
            packets += len(sent)
            stream += int(sent["stream_bytes"].sum()) if len(sent) else 0
            retransmitted += int(sent["retransmitted_bytes"].sum()) if len(sent) else 0
    return {
        "files": files,
        "unreadable": unreadable,
        "packets_sent": packets,
        "stream_bytes_sent": stream,
        "retransmitted_bytes": retransmitted if saw_sent else None,
    }


def retransmitted_bytes(paths: Iterable[str | os.PathLike[str]]) -> int | None:
    """Retransmitted stream bytes over the given sender qlogs (see the
    module's definition); None when none of them logged a sent packet."""
    return sender_summary(paths)["retransmitted_bytes"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vegas_qlog.interop", description=__doc__.split("\n\n")[0])
    ap.add_argument("qlogs", nargs="+", type=Path, help="a sender's qlog files (any stack)")
    args = ap.parse_args(argv)
    summary = sender_summary(args.qlogs)
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0 if summary["files"] else 1


if __name__ == "__main__":
    sys.exit(main())

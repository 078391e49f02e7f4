#!/usr/bin/env python3
"""Writes a TDMA-like return-link trace for vegas-sim (standard library only).

A satellite terminal's return channel (DVB-RCS2's MF-TDMA, for one) sends
only in the time slots the gateway assigns it, frame after frame: what the
terminal queued during a frame leaves together in its slots. To the sender
of a download, the ACKs then arrive in bunches, one bunch per frame,
several at one instant, with nothing in between. This trace gives the link
all of a frame's delivery opportunities at the frame's first millisecond.
Illustrative, not a measurement of any system.

Output: a Mahimahi packet-delivery trace (one line per 1504-byte delivery
opportunity, in ms; mm-link's format). The trace repeats with its last
timestamp as the period, so it ends one frame after its last bunch.

    python3 interop/sim/traces/tdma_return.py --frame-ms 24 --rate-mbps 2 \
        > interop/scenarios/traces/tdma-return-2mbit-24ms.mahimahi
"""

from __future__ import annotations

import argparse
import sys

OPPORTUNITY_BITS = 1504 * 8  # mm-link carries 1504 bytes per opportunity


def bunches(frame_ms: int, rate_mbps: float, frames: int) -> list[int]:
    """Delivery opportunities, in ms: each frame's at its first ms."""
    per_frame = rate_mbps * 1e6 * frame_ms / 1e3 / OPPORTUNITY_BITS
    if per_frame < 1:
        raise ValueError(
            f"{rate_mbps} Mbit/s in {frame_ms} ms frames is less than one opportunity a frame"
        )
    times: list[int] = []
    owed = 0.0
    for frame in range(frames):
        owed += per_frame
        whole = int(owed)
        owed -= whole
        times.extend([frame * frame_ms] * whole)
    # The period: one frame after the last bunch (its own opportunity).
    times.append(frames * frame_ms)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--frame-ms", type=int, required=True, help="frame length (whole ms)"
    )
    parser.add_argument("--rate-mbps", type=float, required=True, help="mean rate")
    parser.add_argument(
        "--frames", type=int, default=40, help="frames before it repeats"
    )
    args = parser.parse_args()
    if args.frame_ms < 1 or args.frames < 1 or args.rate_mbps <= 0:
        parser.error("--frame-ms, --frames and --rate-mbps must be positive")
    try:
        times = bunches(args.frame_ms, args.rate_mbps, args.frames)
    except ValueError as e:
        parser.error(str(e))
    sys.stdout.write("".join(f"{t}\n" for t in times))
    return 0


if __name__ == "__main__":
    sys.exit(main())

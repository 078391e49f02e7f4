#!/usr/bin/env python3
"""Writes a Starlink-like link trace for vegas-sim (standard library only).

What it imitates, as published measurements of Starlink describe it: the
scheduler reassigns satellites and capacity every 15 s (on the 15 s
boundaries of the minute), each reassignment brings a new capacity level
and a new base delay, often with a short outage (handover), and within a
slot the delay drifts as the satellite moves. Numbers are illustrative,
scaled down so that the committed trace stays small; nothing here is a
measurement.

Output: a Mahimahi packet-delivery trace (one line per 1504-byte delivery
opportunity, in ms; mm-link's format) for the rate, and the delay as
``delay_trace = [[time_s, delay_ms], ...]`` points for a vegas-sim link
(linear ramps between them), printed as TOML.

    python3 interop/sim/traces/starlink_like.py --seconds 30 --seed 1 \
        --rate-out interop/scenarios/traces/starlink-like-down.mahimahi > delay.toml
"""

from __future__ import annotations

import argparse
import random
import sys

SLOT_S = 15.0  # the scheduler's reconfiguration interval
OPPORTUNITY_BITS = 1504 * 8  # mm-link carries 1504 bytes (PACKET_SIZE) per opportunity


def slots(seconds: float, rng: random.Random, rates_mbps: list[float], delays_ms: tuple[float, float]):
    """Per 15 s slot: (start_s, rate_mbps, outage_ms, delay at start, delay at end)."""
    t = 0.0
    while t < seconds - 1e-9:
        rate = rng.choice(rates_mbps)
        outage = rng.choice([0.0, 0.0, 40.0, 120.0, 250.0])
        start = rng.uniform(*delays_ms)
        end = start + rng.uniform(-4.0, 4.0)
        yield t, rate, outage, start, max(1.0, end)
        t += SLOT_S


def write_rate_trace(out, plan, seconds: float) -> int:
    """Delivery opportunities at each slot's rate, none during its outage."""
    lines = 0
    credit = 0.0
    for start, rate, outage, _, _ in plan:
        end = min(start + SLOT_S, seconds)
        ms = int(start * 1000) + 1
        while ms <= int(end * 1000):
            if ms > start * 1000 + outage:
                credit += rate * 1e6 / 1000 / OPPORTUNITY_BITS
                while credit >= 1.0:
                    out.write(f"{ms}\n")
                    credit -= 1.0
                    lines += 1
            ms += 1
    return lines


def delay_points(plan, seconds: float) -> list[tuple[float, float]]:
    points = []
    for start, _, _, first, last in plan:
        end = min(start + SLOT_S, seconds)
        # A step at the boundary (two points at one time), then a drift.
        points.append((round(start, 3), round(first, 2)))
        points.append((round(end, 3), round(last, 2)))
    return points


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=30.0, help="trace length; mm-link repeats it (default 30)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rates-mbps", default="4,8,12", help="capacity levels drawn per slot (default 4,8,12)")
    p.add_argument("--delay-ms", default="20,45", help="range of one-way base delays per slot (default 20,45)")
    p.add_argument("--rate-out", required=True, help="Mahimahi trace to write")
    args = p.parse_args(argv)
    if args.seconds < SLOT_S or args.seconds % SLOT_S:
        p.error(f"--seconds: a multiple of {SLOT_S:g} s (the trace repeats whole slots)")
    rates = [float(x) for x in args.rates_mbps.split(",")]
    low, high = (float(x) for x in args.delay_ms.split(","))
    if not rates or min(rates) <= 0 or not 0 <= low <= high:
        p.error("rates must be positive and the delay range low,high with 0 <= low <= high")
    rng = random.Random(args.seed)
    plan = list(slots(args.seconds, rng, rates, (low, high)))
    with open(args.rate_out, "w", encoding="ascii") as out:
        lines = write_rate_trace(out, plan, args.seconds)
    if lines == 0:
        p.error("the trace has no delivery opportunity")
    points = ", ".join(f"[{t:g}, {d:g}]" for t, d in delay_points(plan, args.seconds))
    sys.stdout.write(f"# {args.rate_out}: {lines} opportunities over {args.seconds:g} s (seed {args.seed})\n")
    for start, rate, outage, _, _ in plan:
        sys.stdout.write(f"#   slot at {start:g} s: {rate:g} Mbit/s, outage {outage:g} ms\n")
    sys.stdout.write(f"delay_trace = [{points}]\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

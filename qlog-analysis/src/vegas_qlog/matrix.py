"""The condition matrix (issue 25, item 4): vegas-sat against bbr2 and cubic
on the conditions satellite paths really have, one table per dimension.

The scenarios are generated from a few typed templates (:class:`Cell`: a
path, a buffer, a random loss, a LEO reconfiguration pattern, a competitor
or a series of joining flows) and written to ``OUT/matrix/scenarios/``;
nothing is hand-written per cell. Every cell runs vegas-sat with a client
that sends receive timestamps and with one that does not
(``receive_timestamps=false`` on the flows under test), and bbr2 and cubic
(which never use the extension), over seeds 1-5.

The dimensions (each a table):

- paths: GEO 20/2, 50/10 and 250/3 Mbit/s (600 ms RTT) and LEO 100/10
  Mbit/s (32 ms RTT) with 15 s reconfigurations of the forward one-way
  delay: steps both ways, small steps, slow drifts, and steps with 50-100 ms
  outages of both links; alone, one-BDP buffer, no random loss;
- buffers: 0.1, 0.25, 0.5, 1 and 2 BDP on GEO 20/2, alone, beside one CUBIC
  flow and beside one BBR2 flow;
- random loss: 0, 0.1 % and 1 % on GEO 20/2 and on LEO with steps, alone;
- joins: four flows of one algorithm joining 20 s apart on GEO 20/2, 25- and
  500-packet buffers (issue 25's);
- field conditions: the Starlink-like trace-driven path
  (``interop/scenarios/starlink-like.toml``: its links, rate traces copied
  beside the generated scenario), a +25 ms step of GEO 20/2's forward delay,
  and fau-sat's 10 MiB download over a return link whose delay jitters by up
  to 10 ms.

Where issue 25 sets a target for a cell, the vegas-sat rows say whether the
seed mean meets it.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .satellite import goodput_mbps, jain, link_use, load_csv
from .stats import mean_ci
from .sweep.cli import BLOB_CACHE
from .sweep.executors import LocalExecutor, run_sweep
from .sweep.spec import Entry, SpecError, SweepSpec, toml_value
from .sweep.tasks import make_plan

#: A full-size datagram on the wire: the simulator's default
#: ``max_datagram_bytes`` (quiche_vegas::settings::MAX_DATAGRAM_SIZE, 1350)
#: plus its default ``header_bytes`` (IPv4 and UDP, 28). Buffers in BDP are
#: counted in these.
PACKET_WIRE_BYTES = 1350 + 28

#: Forward buffers are the dimension; the return link (ACKs only) always
#: gets one BDP of its own rate, in bytes, as picoquic's suite does.
RETURN_BUFFER_BDP = 1.0

#: Start-up is over by then on every path here (about 8 GEO round trips).
STARTUP_S = 10.0
#: The rate before a reconfiguration: goodput over this long before the
#: run's first one (the path as it was).
BEFORE_S = 3.0
#: "Regained" when the goodput over this window reaches the fraction.
REGAIN_WINDOW_S = 0.5
REGAIN_FRACTION = 0.9
#: Step of the regain search (the simulator's CSV sampling interval).
SAMPLE_S = 0.1

#: Competition: the last 90 s of 120 s; joins: the last 60 s.
COMPETITION_S = 120.0
COMPETITION_WINDOW_S = 90.0
JOIN_FLOWS = 4
JOIN_INTERVAL_S = 20.0
JOIN_WINDOW_S = 60.0

#: Issue 25's targets.
TARGET_REGAIN_S = 1.0
TARGET_DRIFT_COST = 0.10
TARGET_QUEUE_OF_BBR2 = 1 / 5
TARGET_JAIN_COMPETITION = 0.8
TARGET_JAIN_JOINS = 0.95
TARGET_MIN_SHARE = 0.5
#: Random loss up to which the step targets apply (issue 25: "with or
#: without 0.5 % loss").
TARGET_STEP_MAX_LOSS = 0.005


@dataclass(frozen=True)
class SatPath:
    """A satellite path: forward (data) and return rates and the propagation
    round trip, split evenly between the two directions; or, with
    ``links_from``, the links of a committed scenario (trace-driven), the
    numbers then only nominal."""

    name: str
    title: str
    down_mbps: float
    up_mbps: float
    rtt_ms: float
    #: A scenario file of ``interop/scenarios`` whose ``[links]`` the path
    #: takes as they are (rate and delay traces included) but for the
    #: forward buffer, which stays the cell's.
    links_from: str | None = None

    @property
    def one_way_ms(self) -> float:
        return self.rtt_ms / 2

    def bdp_packets(self) -> float:
        """The forward bandwidth-delay product in full-size wire packets."""
        return self.down_mbps * 1e6 * self.rtt_ms / 1000 / 8 / PACKET_WIRE_BYTES

    def return_queue_bytes(self) -> int:
        return max(1, round(RETURN_BUFFER_BDP * self.up_mbps * 1e6 * self.rtt_ms / 1000 / 8))


GEO_20_2 = SatPath("geo-20-2", "GEO 20/2", 20, 2, 600)
GEO_50_10 = SatPath("geo-50-10", "GEO 50/10", 50, 10, 600)
GEO_250_3 = SatPath("geo-250-3", "GEO 250/3", 250, 3, 600)
LEO_100_10 = SatPath("leo-100-10", "LEO 100/10", 100, 10, 32)
#: Nominal: the traces' peak rates (8 down, 2 up) and the first RTT
#: (2 x (41.19 + 22.12) ms); the links are the file's.
STARLINK_LIKE = SatPath("starlink-like", "Starlink-like (trace-driven)", 8, 2, 126.62, links_from="starlink-like.toml")

#: Where ``links_from`` scenarios and their traces are: the repository's.
SOURCE_SCENARIOS = Path(__file__).resolve().parents[3] / "interop" / "scenarios"
#: Trace files are copied here, below the generated scenarios, and named
#: relative to them: the sweep then ships each inside its scenario.
TRACE_SUBDIR = "traces"


@dataclass(frozen=True)
class Buffer:
    """The forward link's DropTail limit: a fraction of the path's BDP, or a
    number of packets (issue 25's join targets name packets)."""

    bdp: float | None = None
    packets: int | None = None

    def __post_init__(self) -> None:
        if (self.bdp is None) == (self.packets is None):
            raise ValueError("a buffer is either a fraction of the BDP or a number of packets")

    def packets_on(self, path: SatPath) -> int:
        if self.packets is not None:
            return self.packets
        assert self.bdp is not None
        return max(1, round(self.bdp * path.bdp_packets()))

    @property
    def slug(self) -> str:
        return f"{self.packets}pkt" if self.packets is not None else f"{self.bdp:g}bdp"

    @property
    def title(self) -> str:
        return f"{self.packets} packets" if self.packets is not None else f"{self.bdp:g} BDP"


@dataclass(frozen=True)
class Reconfiguration:
    """How a LEO path's forward one-way delay changes: offsets (ms) from the
    path's base, linear between points (the simulator's ``delay_trace``);
    outages of both links (``blackout_s`` changes); and when each
    reconfiguration starts (the times the regain metrics look after)."""

    name: str
    title: str
    #: (time_s, offset_ms), in time order; two points at one time are a step.
    delay_offsets: tuple[tuple[float, float], ...] = ()
    #: (at_s, length_s): every datagram leaving either link then is lost.
    outages: tuple[tuple[float, float], ...] = ()
    events: tuple[float, ...] = ()
    #: "regain": a step, held to regaining 90 % within 1 s; "slot": a slow
    #: change, held to losing less than 10 % of the goodput until the next
    #: reconfiguration; "": no target.
    target: str = ""


#: LEO constellations reconfigure every 15 s.
RECONFIGURATION_S = 15.0
LEO_DURATION_S = 45.0


def step_offsets(period_s: float, deltas: Sequence[float]) -> tuple[tuple[float, float], ...]:
    """Steps of ``deltas`` ms at ``period_s``, ``2 period_s``, ..."""
    points = [(0.0, 0.0)]
    level = 0.0
    for i, delta in enumerate(deltas, start=1):
        t = i * period_s
        points += [(t, level), (t, level + delta)]
        level += delta
    return tuple(points)


def small_step_offsets(
    period_s: float, slots: int, steps: int, step_ms: float, spacing_s: float
) -> tuple[tuple[float, float], ...]:
    """From each reconfiguration, ``steps`` steps of ``step_ms`` every ``spacing_s``."""
    points = [(0.0, 0.0)]
    level = 0.0
    for slot in range(1, slots + 1):
        for k in range(steps):
            t = slot * period_s + k * spacing_s
            points += [(t, level), (t, level + step_ms)]
            level += step_ms
    return tuple(points)


def drift_offsets(period_s: float, slots: int, rise_ms: float, over_s: float) -> tuple[tuple[float, float], ...]:
    """From each reconfiguration, a linear rise of ``rise_ms`` over ``over_s``."""
    points = [(0.0, 0.0)]
    level = 0.0
    for slot in range(1, slots + 1):
        t = slot * period_s
        points += [(t, level), (t + over_s, level + rise_ms)]
        level += rise_ms
    return tuple(points)


STEP_DELTAS_MS = (6.0, -8.0)  # RTT 32 -> 38 -> 30 ms
STATIC = Reconfiguration("static", "static")
STEPS = Reconfiguration(
    "steps",
    "steps +6/-8 ms",
    step_offsets(RECONFIGURATION_S, STEP_DELTAS_MS),
    events=(15.0, 30.0),
    target="regain",
)
SMALL_STEPS = Reconfiguration(
    "small-steps",
    "small steps 4 x +0.5 ms",
    small_step_offsets(RECONFIGURATION_S, 2, 4, 0.5, 2.5),
    events=(15.0, 30.0),
    target="slot",
)
DRIFT = Reconfiguration(
    "drift",
    "drift +4 ms over 10 s",
    drift_offsets(RECONFIGURATION_S, 2, 4.0, 10.0),
    events=(15.0, 30.0),
    target="slot",
)
OUTAGES = Reconfiguration(
    "outages",
    "steps with 100/50 ms outages",
    step_offsets(RECONFIGURATION_S, STEP_DELTAS_MS),
    outages=((15.0, 0.100), (30.0, 0.050)),
    events=(15.0, 30.0),
    target="regain",
)
RECONFIGURATIONS = (STATIC, STEPS, SMALL_STEPS, DRIFT, OUTAGES)
#: Issue 25's largest step, on a GEO path.
GEO_STEP = Reconfiguration(
    "step25",
    "step +25 ms",
    step_offsets(RECONFIGURATION_S, (25.0,)),
    events=(15.0,),
    target="regain",
)


@dataclass(frozen=True)
class Cell:
    """One scenario of the matrix: the algorithm under test on ``path``,
    alone, beside one ``competitor`` flow, or as ``joins`` flows joining
    ``JOIN_INTERVAL_S`` apart."""

    table: str
    path: SatPath
    buffer: Buffer
    duration_s: float
    loss: float = 0.0
    reconfiguration: Reconfiguration = STATIC
    competitor: str | None = None
    joins: int = 1
    #: The return link's delay varies by up to this per datagram (FIFO
    #: kept, so ACKs bunch), instead of the simulator's default.
    return_jitter_ms: float | None = None
    #: A download of this many bytes instead of a bulk flow.
    transfer_bytes: int | None = None
    #: A ``links_from`` path's return link at this constant rate instead
    #: of its trace (Mahimahi's one datagram per opportunity makes a slow up
    #: trace an ACK limit).
    return_rate_mbps: float | None = None

    @property
    def name(self) -> str:
        parts = [self.path.name, self.buffer.slug]
        if self.loss:
            parts.append(f"loss{self.loss:g}")
        if self.reconfiguration is not STATIC:
            parts.append(self.reconfiguration.name)
        if self.competitor:
            parts.append(f"vs-{self.competitor}")
        if self.joins > 1:
            parts.append(f"{self.joins}-joins")
        if self.return_jitter_ms is not None:
            parts.append(f"return-jitter{self.return_jitter_ms:g}ms")
        if self.transfer_bytes is not None:
            parts.append(f"{self.transfer_bytes}B")
        if self.return_rate_mbps is not None:
            parts.append(f"return{self.return_rate_mbps:g}mbps")
        parts.append(f"{self.duration_s:g}s")
        return "_".join(parts)

    @property
    def flows_under_test(self) -> list[str]:
        return ["download"] if self.joins == 1 else [f"flow{i}" for i in range(1, self.joins + 1)]

    def join_starts(self) -> list[float]:
        return [i * JOIN_INTERVAL_S for i in range(self.joins)]

    def forward_delay_trace(self) -> list[tuple[float, float]]:
        base = self.path.one_way_ms
        return [(t, round(base + offset, 6)) for t, offset in self.reconfiguration.delay_offsets]


def _source_links(path: SatPath, source: Path) -> dict[str, dict[str, Any]]:
    """The ``[links]`` of ``path.links_from``, each rate trace file named
    ``traces/NAME`` (where :func:`write_scenarios` copies it)."""
    assert path.links_from is not None
    with open(source / path.links_from, "rb") as f:
        links = tomllib.load(f)["links"]
    if set(links) != {"forward", "return"}:
        raise ValueError(f"{source / path.links_from}: expected links forward and return, got {sorted(links)}")
    out = {}
    for name, link in links.items():
        link = dict(link)
        if "rate_trace_file" in link:
            link["rate_trace_file"] = f"{TRACE_SUBDIR}/{Path(link['rate_trace_file']).name}"
        out[name] = link
    return out


def trace_files(cell: Cell, source: Path = SOURCE_SCENARIOS) -> list[Path]:
    """The rate trace files ``cell``'s scenario names (in ``source``)."""
    if cell.path.links_from is None:
        return []
    with open(source / cell.path.links_from, "rb") as f:
        links = tomllib.load(f)["links"]
    if cell.return_rate_mbps is not None:
        links.pop("return", None)
    return [source / link["rate_trace_file"] for link in links.values() if "rate_trace_file" in link]


def scenario_toml(cell: Cell, source: Path = SOURCE_SCENARIOS) -> str:
    """The scenario file of ``cell`` (TOML); a ``links_from`` path's links
    are read from ``source``."""
    path = cell.path
    lines = [
        f"# Generated by scripts/satellite --only matrix (vegas_qlog.matrix): {cell.name}",
        # Tables share cells: the file must not depend on which table asks.
        f"description = {toml_value(f'condition matrix: {cell.name}')}",
        f"duration_s = {toml_value(float(cell.duration_s))}",
        "sample_interval_ms = 100",
        "qlog = false",
    ]
    if path.links_from is not None:
        for name, link in _source_links(path, source).items():
            if name == "forward":
                link["queue_packets"] = cell.buffer.packets_on(path)
                link.pop("queue_bytes", None)
                if cell.loss:
                    link["packet_loss"] = float(cell.loss)
            if name == "return" and cell.return_jitter_ms is not None:
                link["delay_jitter_ms"] = float(cell.return_jitter_ms)
            if name == "return" and cell.return_rate_mbps is not None:
                link.pop("rate_trace_file", None)
                link.pop("rate_trace", None)
                link = {"rate_mbps": float(cell.return_rate_mbps), **link}
            lines += ["", f"[links.{name}]"]
            # One line per key: the sweep finds `rate_trace_file = "..."` by line.
            lines += [f"{key} = {toml_value(value)}" for key, value in link.items()]
    else:
        lines += [
            "",
            "[links.forward]",
            f"rate_mbps = {toml_value(float(path.down_mbps))}",
            f"delay_ms = {toml_value(float(path.one_way_ms))}",
            f"queue_packets = {cell.buffer.packets_on(path)}",
        ]
        trace = cell.forward_delay_trace()
        if trace:
            lines.append(f"delay_trace = {toml_value([list(p) for p in trace])}")
        if cell.loss:
            lines.append(f"packet_loss = {toml_value(float(cell.loss))}")
        lines += [
            "",
            "[links.return]",
            f"rate_mbps = {toml_value(float(path.up_mbps))}",
            f"delay_ms = {toml_value(float(path.one_way_ms))}",
            f"queue_bytes = {path.return_queue_bytes()}",
        ]
        if cell.return_jitter_ms is not None:
            lines.append(f"delay_jitter_ms = {toml_value(float(cell.return_jitter_ms))}")
    starts = cell.join_starts()
    for name, start in zip(cell.flows_under_test, starts, strict=True):
        lines += ["", f"[flows.{name}]", 'cc = "cubic"', "under_test = true"]
        if start:
            lines.append(f"start_s = {toml_value(float(start))}")
        if cell.transfer_bytes is not None:
            lines.append(f"transfer_bytes = {cell.transfer_bytes}")
        lines += ['forward_path = ["forward"]', 'return_path = ["return"]']
    if cell.competitor:
        lines += [
            "",
            f"[flows.{cell.competitor}]",
            f"cc = {toml_value(cell.competitor)}",
            'forward_path = ["forward"]',
            'return_path = ["return"]',
        ]
    for at, length in cell.reconfiguration.outages:
        for link in ("forward", "return"):
            lines += [
                "",
                "[[changes]]",
                f"at_s = {toml_value(float(at))}",
                f'link = "{link}"',
                f"blackout_s = {toml_value(float(length))}",
            ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Algorithm:
    cc: str
    #: None: the scenario's default (the baselines never use the extension).
    receive_timestamps: bool | None = None

    @property
    def label(self) -> str:
        if self.receive_timestamps is None:
            return self.cc
        return f"{self.cc} ({'receive timestamps' if self.receive_timestamps else 'no receive timestamps'})"

    @property
    def slug(self) -> str:
        if self.receive_timestamps is None:
            return self.cc
        return f"{self.cc}+{'ts' if self.receive_timestamps else 'no-ts'}"

    def sets(self, cell: Cell) -> tuple[tuple[str, Any], ...]:
        if self.receive_timestamps is None:
            return ()
        return tuple((f"flows.{name}.receive_timestamps", self.receive_timestamps) for name in cell.flows_under_test)


OURS = "vegas-sat"
ALGORITHMS = (Algorithm(OURS, True), Algorithm(OURS, False), Algorithm("bbr2"), Algorithm("cubic"))

SEEDS = (1, 2, 3, 4, 5)
QUICK_SEEDS = (1,)
BUFFER_FRACTIONS = (0.1, 0.25, 0.5, 1.0, 2.0)
LOSSES = (0.0, 0.001, 0.01)
COMPETITORS = ("cubic", "bbr2")
JOIN_BUFFERS = (Buffer(packets=25), Buffer(packets=500))
#: Alone on a GEO path: long enough for 30 s after start-up.
GEO_ALONE_S = 40.0
TABLES = ("paths", "buffers", "loss", "joins", "sharing", "field")
#: The other paths shared, at one BDP: beside each competitor and as joins.
SHARING_PATHS = (LEO_100_10, GEO_50_10)
#: The Starlink-like trace runs as long as its scenario file; its buffer is
#: the file's (100 packets).
STARLINK_S = 60.0
STARLINK_BUFFER = Buffer(packets=100)
#: fau-sat: 25-packet buffers, one 10 MiB download.
FAU_SAT_BUFFER = Buffer(packets=25)
FAU_SAT_BYTES = 10 * 1024 * 1024
FAU_SAT_S = 120.0
RETURN_JITTER_MS = 10.0
#: The Starlink-like path again with an up link that neither delays nor batches ACKs.
STARLINK_RETURN_MBPS = 10.0


def field_cells() -> list[Cell]:
    """The field conditions' table: Starlink-like trace, GEO step, jittery return."""
    return [
        Cell("field", STARLINK_LIKE, STARLINK_BUFFER, STARLINK_S),
        Cell("field", STARLINK_LIKE, STARLINK_BUFFER, STARLINK_S, return_rate_mbps=STARLINK_RETURN_MBPS),
        _alone("field", GEO_20_2, reconfiguration=GEO_STEP),
        Cell(
            "field",
            GEO_20_2,
            FAU_SAT_BUFFER,
            FAU_SAT_S,
            return_jitter_ms=RETURN_JITTER_MS,
            transfer_bytes=FAU_SAT_BYTES,
        ),
    ]


def _alone(table: str, path: SatPath, loss: float = 0.0, reconfiguration: Reconfiguration = STATIC) -> Cell:
    duration = LEO_DURATION_S if path is LEO_100_10 else GEO_ALONE_S
    return Cell(table, path, Buffer(bdp=1.0), duration, loss, reconfiguration)


def plan_cells(quick: bool = False) -> list[Cell]:
    """Every cell of the matrix (``quick``: one of each kind)."""
    if quick:
        return [
            _alone("paths", GEO_20_2),
            _alone("paths", LEO_100_10, reconfiguration=STEPS),
            Cell("buffers", GEO_20_2, Buffer(bdp=1.0), COMPETITION_S, competitor="cubic"),
            _alone("loss", GEO_20_2, 0.01),
            Cell("joins", GEO_20_2, Buffer(packets=500), COMPETITION_S, joins=JOIN_FLOWS),
            Cell("sharing", LEO_100_10, Buffer(bdp=1.0), COMPETITION_S, joins=JOIN_FLOWS),
            field_cells()[0],
        ]
    cells = [_alone("paths", p) for p in (GEO_20_2, GEO_50_10, GEO_250_3)]
    cells += [_alone("paths", LEO_100_10, reconfiguration=r) for r in RECONFIGURATIONS]
    for fraction in BUFFER_FRACTIONS:
        buffer = Buffer(bdp=fraction)
        cells.append(Cell("buffers", GEO_20_2, buffer, GEO_ALONE_S))
        cells += [Cell("buffers", GEO_20_2, buffer, COMPETITION_S, competitor=c) for c in COMPETITORS]
    for loss in LOSSES:
        cells.append(_alone("loss", GEO_20_2, loss))
        cells.append(_alone("loss", LEO_100_10, loss, STEPS))
    cells += [Cell("joins", GEO_20_2, b, COMPETITION_S, joins=JOIN_FLOWS) for b in JOIN_BUFFERS]
    for path in SHARING_PATHS:
        cells += [Cell("sharing", path, Buffer(bdp=1.0), COMPETITION_S, competitor=c) for c in COMPETITORS]
        cells.append(Cell("sharing", path, Buffer(bdp=1.0), COMPETITION_S, joins=JOIN_FLOWS))
    cells += field_cells()
    return cells


@dataclass(frozen=True)
class MatrixRun:
    cell: Cell
    algorithm: Algorithm
    seed: int

    @property
    def directory(self) -> str:
        return f"matrix/{self.cell.name}/{self.algorithm.slug}/seed-{self.seed}"


def plan_runs(
    quick: bool = False, seeds: Sequence[int] | None = None, tables: Sequence[str] | None = None
) -> list[MatrixRun]:
    """Seed by seed (all cells of seed 1 first): an interrupted run leaves
    whole matrices of fewer seeds, which ``--seeds`` can render. ``tables``:
    only these tables' cells."""
    if seeds is None:
        seeds = QUICK_SEEDS if quick else SEEDS
    if tables is not None and not set(tables) <= set(TABLES):
        raise SpecError(f"matrix tables: expected some of {','.join(TABLES)}, got {','.join(tables)}")
    cells = [c for c in plan_cells(quick) if tables is None or c.table in tables]
    return [MatrixRun(c, a, s) for s in seeds for c in cells for a in ALGORITHMS]


def write_scenarios(cells: Iterable[Cell], directory: Path, source: Path = SOURCE_SCENARIOS) -> None:
    """Writes each cell's scenario (the same cell twice is one file) and
    copies the trace files they name into ``directory/traces/``."""
    directory.mkdir(parents=True, exist_ok=True)
    for cell in {c.name: c for c in cells}.values():
        target = directory / f"{cell.name}.toml"
        text = scenario_toml(cell, source)
        if not target.is_file() or target.read_text() != text:
            target.write_text(text)
        for trace in trace_files(cell, source):
            copy = directory / TRACE_SUBDIR / trace.name
            if not copy.is_file() or copy.read_bytes() != trace.read_bytes():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(trace, copy)


# --- measuring one run -------------------------------------------------------

Rows = Sequence[Mapping[str, str]]


def regain_time_s(rows: Rows, event_s: float, until_s: float, before_mbps: float) -> float | None:
    """Seconds from ``event_s`` until the goodput over ``REGAIN_WINDOW_S``
    first reaches ``REGAIN_FRACTION`` of ``before_mbps``; None if it does
    not before ``until_s``."""
    steps = round((until_s - REGAIN_WINDOW_S - event_s) / SAMPLE_S)
    for k in range(steps + 1):
        t = event_s + k * SAMPLE_S
        if goodput_mbps(rows, t, t + REGAIN_WINDOW_S) >= REGAIN_FRACTION * before_mbps:
            return round(t - event_s, 9)
    return None


@dataclass
class EventMetrics:
    #: Worst over the run's reconfigurations; regain None: not regained.
    regain_s: float | None
    regained: bool
    #: Goodput from each reconfiguration to the next (or the end), as a
    #: fraction of the rate before the first; the smallest.
    slot_fraction: float


def reconfiguration_metrics(rows: Rows, events: Sequence[float], end_s: float) -> EventMetrics:
    """The regain time and slot goodput of a flow's delivery series over a
    path's reconfigurations, each against the rate before the first."""
    before = goodput_mbps(rows, events[0] - BEFORE_S, events[0])
    bounds = [*events[1:], end_s]
    worst: float = 0.0
    regained = True
    fractions = []
    for event, until in zip(events, bounds, strict=True):
        regain = regain_time_s(rows, event, until, before)
        if regain is None:
            regained = False
            regain = until - event
        worst = max(worst, regain)
        fractions.append(goodput_mbps(rows, event, until) / before if before > 0 else math.nan)
    return EventMetrics(worst, regained, min(fractions))


def shares(goodputs: Sequence[float]) -> tuple[float | None, float | None]:
    """(Jain's index, the smallest flow's goodput as a fraction of the fair
    share: the mean of all)."""
    if not goodputs or sum(goodputs) <= 0:
        return None, None
    fair = sum(goodputs) / len(goodputs)
    return jain(goodputs), min(goodputs) / fair


def join_drops(queue_rows: Rows, starts: Sequence[float], end_s: float) -> list[float]:
    """Packets the forward queue dropped from each join after the first to
    the next join (or the end): the simulator's cumulative count."""

    def dropped_at(t: float) -> float:
        best = 0.0
        for row in queue_rows:
            if float(row["time_s"]) <= t + 1e-9:
                best = float(row["dropped_packets"])
            else:
                break
        return best

    bounds = [*starts[1:], end_s]
    return [dropped_at(b) - dropped_at(a) for a, b in zip(starts, bounds, strict=True)][1:]


def measure(directory: Path, cell: Cell) -> dict[str, Any]:
    """A run's metrics (see the tables' headers)."""
    summary = json.loads((directory / "summary.json").read_text())
    end = float(summary["simulated_s"])
    forward = next(link for link in summary["links"] if link["name"] == "forward")
    m: dict[str, Any] = {"queue_ms": forward.get("mean_queue_delay_ms")}
    series = {f["name"]: load_csv(directory / f"flow-{f['name']}.csv") for f in summary["flows"]}
    ours = cell.flows_under_test
    if cell.transfer_bytes is not None:
        flow = next(f for f in summary["flows"] if f["name"] == ours[0])
        m["completion_s"] = flow.get("completion_s")
        m["goodput_mbps"] = flow["goodput_bps"] / 1e6 if flow.get("goodput_bps") is not None else None
        return m
    if cell.competitor:
        window = end - COMPETITION_WINDOW_S
        m["goodput_mbps"] = goodput_mbps(series[ours[0]], window, end)
        m["competitor_mbps"] = goodput_mbps(series[cell.competitor], window, end)
        m["jain"], m["min_share"] = shares([m["goodput_mbps"], m["competitor_mbps"]])
    elif cell.joins > 1:
        window = end - JOIN_WINDOW_S
        each = [goodput_mbps(series[name], window, end) for name in ours]
        m["goodput_mbps"] = sum(each)
        m["jain"], m["min_share"] = shares(each)
        drops = join_drops(load_csv(directory / "queue-forward.csv"), cell.join_starts(), end)
        m["join_drops"] = max(drops) if drops else 0.0
    else:
        m["goodput_mbps"] = goodput_mbps(series[ours[0]], STARTUP_S, end)
        m["utilisation"], _ = link_use(directory, STARTUP_S)
        events = cell.reconfiguration.events
        if events:
            e = reconfiguration_metrics(series[ours[0]], events, end)
            m["regain_s"], m["regained"], m["slot_fraction"] = e.regain_s, e.regained, e.slot_fraction
    return m


# --- the tables ----------------------------------------------------------------


@dataclass
class Stat:
    """A metric over seeds: mean and standard deviation."""

    mean: float | None
    std: float | None
    n: int

    @classmethod
    def of(cls, values: Iterable[Any]) -> Stat:
        xs = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if not xs:
            return cls(None, None, 0)
        ci = mean_ci(xs)
        return cls(ci.mean, None if math.isnan(ci.std) else ci.std, ci.n)


METRICS = (
    "goodput_mbps",
    "competitor_mbps",
    "utilisation",
    "queue_ms",
    "jain",
    "min_share",
    "join_drops",
    "regain_s",
    "slot_fraction",
    "completion_s",
)


@dataclass
class Row:
    cell: Cell
    algorithm: Algorithm
    seeds: int
    stats: dict[str, Stat] = field(default_factory=dict)
    #: Seeds whose flow did not regain 90 % before the next reconfiguration.
    not_regained: int = 0
    #: (met, what) per target of issue 25 that applies to this row.
    targets: list[tuple[bool, str]] = field(default_factory=list)

    def mean(self, metric: str) -> float | None:
        s = self.stats.get(metric)
        return s.mean if s else None


def aggregate(measured: Mapping[MatrixRun, Mapping[str, Any]]) -> list[Row]:
    """Rows per (cell, algorithm), in plan order, with each metric's mean and
    spread over seeds and the targets that apply."""
    groups: dict[tuple[str, str, str], list[tuple[MatrixRun, Mapping[str, Any]]]] = {}
    for run, m in measured.items():
        groups.setdefault((run.cell.table, run.cell.name, run.algorithm.slug), []).append((run, m))
    rows = []
    for group in groups.values():
        run = group[0][0]
        row = Row(run.cell, run.algorithm, len(group))
        for metric in METRICS:
            values = [m.get(metric) for _, m in group]
            if any(v is not None for v in values):
                row.stats[metric] = Stat.of(values)
        row.not_regained = sum(1 for _, m in group if m.get("regained") is False)
        rows.append(row)
    for row in rows:
        row.targets = targets_of(row, rows)
    return rows


def _baseline(row: Row, rows: Sequence[Row], cc: str) -> Row | None:
    return next((r for r in rows if r.cell == row.cell and r.algorithm.cc == cc), None)


def targets_of(row: Row, rows: Sequence[Row]) -> list[tuple[bool, str]]:
    """Issue 25's targets for a vegas-sat row, on seed means."""
    if row.algorithm.cc != OURS:
        return []
    cell = row.cell
    out: list[tuple[bool, str]] = []

    def check(value: float | None, ok: Callable[[float], bool], text: str) -> None:
        out.append((value is not None and ok(value), text))

    reconf = cell.reconfiguration
    if reconf.target and cell.loss <= TARGET_STEP_MAX_LOSS:
        if reconf.target == "regain":
            regain = row.mean("regain_s")
            check(regain, lambda v: v <= TARGET_REGAIN_S and row.not_regained == 0, f"regain <= {TARGET_REGAIN_S:g} s")
        else:
            slot = row.mean("slot_fraction")
            check(slot, lambda v: v >= 1 - TARGET_DRIFT_COST, f"costs < {100 * TARGET_DRIFT_COST:.0f} %")
    if ((reconf.target and cell.path is LEO_100_10) or cell.path is STARLINK_LIKE) and cell.loss == 0:
        bbr2 = _baseline(row, rows, "bbr2")
        if bbr2 is not None:
            goodput, theirs = row.mean("goodput_mbps"), bbr2.mean("goodput_mbps")
            check(goodput, lambda v: theirs is not None and v >= theirs, "goodput >= bbr2")
            queue, their_queue = row.mean("queue_ms"), bbr2.mean("queue_ms")
            check(
                queue,
                lambda v: their_queue is not None and v <= TARGET_QUEUE_OF_BBR2 * their_queue,
                "queue <= bbr2/5",
            )
    if cell.competitor:
        check(row.mean("jain"), lambda v: v >= TARGET_JAIN_COMPETITION, f"Jain >= {TARGET_JAIN_COMPETITION}")
    if cell.joins > 1:
        check(row.mean("jain"), lambda v: v >= TARGET_JAIN_JOINS, f"Jain >= {TARGET_JAIN_JOINS}")
        check(row.mean("min_share"), lambda v: v >= TARGET_MIN_SHARE, "min >= half fair")
        buffer = cell.buffer.packets_on(cell.path)
        check(row.mean("join_drops"), lambda v: v < buffer, f"join drops < {buffer}")
    return out


def _cell(stat: Stat | None, scale: float = 1.0, digits: int = 2, suffix: str = "") -> str:
    if stat is None or stat.mean is None:
        return "-"
    text = f"{stat.mean * scale:.{digits}f}"
    if stat.std is not None:
        text += f" ± {stat.std * scale:.{digits}f}"
    return text + suffix


def _target_cell(row: Row) -> str:
    if not row.targets:
        return ""
    return "; ".join(("met: " if ok else "**MISSED**: ") + what for ok, what in row.targets)


def _regain_cell(row: Row) -> str:
    text = _cell(row.stats.get("regain_s"))
    if row.not_regained:
        text += f" ({row.not_regained} not regained)"
    return text


def markdown(rows: Sequence[Row], command: str) -> str:
    lines = [
        "## Condition matrix",
        "",
        f"Made by `{command}` (simulator; {_seeds_text(rows)}). The target column holds issue 25's "
        "targets on the seed means, for vegas-sat.",
        "",
    ]
    by_table: dict[str, list[Row]] = {}
    for row in rows:
        by_table.setdefault(row.cell.table, []).append(row)
    if by_table.get("paths"):
        lines += [
            "### Paths (alone, one-BDP buffer, no random loss)",
            "",
            f"Goodput and utilisation after {STARTUP_S:.0f} s; queueing: the forward link's mean. LEO "
            f"reconfigurations every {RECONFIGURATION_S:.0f} s of the forward one-way delay; regain: "
            f"the worst time after a reconfiguration until the goodput over {REGAIN_WINDOW_S:g} s is "
            f"{100 * REGAIN_FRACTION:.0f} % of the rate before the first; slot: the worst goodput from one "
            "reconfiguration to the next, as a fraction of that rate.",
            "",
            "| path | algorithm | goodput (Mbit/s) | utilisation | queueing (ms) | regain (s) | slot | target |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in by_table["paths"]:
            lines.append(
                f"| {_path_title(r.cell)} | {r.algorithm.label} | {_cell(r.stats.get('goodput_mbps'))} "
                f"| {_cell(r.stats.get('utilisation'), 100, 1, ' %')} | {_cell(r.stats.get('queue_ms'), 1, 1)} "
                f"| {_regain_cell(r)} | {_cell(r.stats.get('slot_fraction'))} | {_target_cell(r)} |"
            )
        lines.append("")
    if by_table.get("buffers"):
        lines += [
            "### Buffers (GEO 20/2): alone, beside one CUBIC flow, beside one BBR2 flow",
            "",
            f"Beside a flow: each goodput, Jain's index and the smaller flow's share of the fair share over the "
            f"last {COMPETITION_WINDOW_S:.0f} s of {COMPETITION_S:.0f} s; alone: goodput after {STARTUP_S:.0f} s. "
            f"One BDP is {GEO_20_2.bdp_packets():.0f} packets of {PACKET_WIRE_BYTES} bytes.",
            "",
            "| buffer | beside | algorithm | its goodput (Mbit/s) | competitor's (Mbit/s) | Jain "
            "| min share of fair | queueing (ms) | target |",
            "|---|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in by_table["buffers"]:
            lines.append(
                f"| {_buffer_title(r.cell)} | {r.cell.competitor or 'alone'} | {r.algorithm.label} "
                f"| {_cell(r.stats.get('goodput_mbps'))} | {_cell(r.stats.get('competitor_mbps'))} "
                f"| {_cell(r.stats.get('jain'), digits=3)} | {_cell(r.stats.get('min_share'))} "
                f"| {_cell(r.stats.get('queue_ms'), 1, 1)} | {_target_cell(r)} |"
            )
        lines.append("")
    if by_table.get("loss"):
        lines += [
            "### Random loss (alone, one-BDP buffer)",
            "",
            "As the paths table; the step targets apply up to 0.5 % loss.",
            "",
            "| path | loss | algorithm | goodput (Mbit/s) | utilisation | queueing (ms) | regain (s) | slot | target |",
            "|---|---:|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in by_table["loss"]:
            lines.append(
                f"| {_path_title(r.cell)} | {100 * r.cell.loss:g} % | {r.algorithm.label} "
                f"| {_cell(r.stats.get('goodput_mbps'))} | {_cell(r.stats.get('utilisation'), 100, 1, ' %')} "
                f"| {_cell(r.stats.get('queue_ms'), 1, 1)} | {_regain_cell(r)} "
                f"| {_cell(r.stats.get('slot_fraction'))} | {_target_cell(r)} |"
            )
        lines.append("")
    if by_table.get("joins"):
        lines += [
            f"### Joins (GEO 20/2): {JOIN_FLOWS} flows of one algorithm joining {JOIN_INTERVAL_S:.0f} s apart",
            "",
            f"Goodput (all flows), Jain's index and the smallest flow's share of the fair share over the last "
            f"{JOIN_WINDOW_S:.0f} s of {COMPETITION_S:.0f} s; join drops: the most packets the forward buffer "
            "dropped from one join to the next.",
            "",
            "| buffer | algorithm | goodput (Mbit/s) | Jain | min share of fair | join drops (packets) "
            "| queueing (ms) | target |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in by_table["joins"]:
            lines.append(
                f"| {_buffer_title(r.cell)} | {r.algorithm.label} | {_cell(r.stats.get('goodput_mbps'))} "
                f"| {_cell(r.stats.get('jain'), digits=3)} | {_cell(r.stats.get('min_share'))} "
                f"| {_cell(r.stats.get('join_drops'), digits=0)} | {_cell(r.stats.get('queue_ms'), 1, 1)} "
                f"| {_target_cell(r)} |"
            )
        lines.append("")
    if by_table.get("sharing"):
        lines += [
            "### Other paths shared (one-BDP buffer): beside one CUBIC flow, beside one BBR2 flow, "
            f"{JOIN_FLOWS} flows joining",
            "",
            "The buffers and joins tables' metrics and targets (issue 25 names them for GEO 20/2; here they "
            f"hold on LEO 100/10 and GEO 50/10 too). Beside a flow: over the last {COMPETITION_WINDOW_S:.0f} s; "
            f"joins: {JOIN_FLOWS} flows of the algorithm {JOIN_INTERVAL_S:.0f} s apart, their goodput together "
            f"over the last {JOIN_WINDOW_S:.0f} s.",
            "",
            "| path | beside | algorithm | its goodput (Mbit/s) | competitor's (Mbit/s) | Jain "
            "| min share of fair | join drops (packets) | queueing (ms) | target |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in by_table["sharing"]:
            beside = r.cell.competitor or f"{r.cell.joins} joins"
            lines.append(
                f"| {r.cell.path.title} ({_buffer_title(r.cell)}) | {beside} | {r.algorithm.label} "
                f"| {_cell(r.stats.get('goodput_mbps'))} | {_cell(r.stats.get('competitor_mbps'))} "
                f"| {_cell(r.stats.get('jain'), digits=3)} | {_cell(r.stats.get('min_share'))} "
                f"| {_cell(r.stats.get('join_drops'), digits=0)} | {_cell(r.stats.get('queue_ms'), 1, 1)} "
                f"| {_target_cell(r)} |"
            )
        lines.append("")
    if by_table.get("field"):
        lines += [
            "### Field conditions: a Starlink-like trace, a GEO delay step, a jittery return link",
            "",
            f"Starlink-like: `interop/scenarios/starlink-like.toml`'s links (rate traces of 4-8 Mbit/s down "
            f"and 1-2 up, 15 s reconfigurations with delay steps and handover outages, "
            f"{STARLINK_BUFFER.packets}-packet buffers), a bulk flow for {STARLINK_S:.0f} s, and again with "
            f"the return link at a constant {STARLINK_RETURN_MBPS:g} Mbit/s (ACKs then never wait for a "
            "delivery opportunity of the up trace, nor leave many in one); goodput and "
            f"utilisation after {STARTUP_S:.0f} s. GEO 20/2: the forward one-way delay steps up 25 ms at "
            f"{GEO_STEP.events[0]:.0f} s; regain as in the paths table. Jittery return: fau-sat (GEO 20/2, "
            f"{FAU_SAT_BUFFER.packets}-packet forward buffer, one {FAU_SAT_BYTES // 2**20} MiB download) with "
            f"each datagram's return delay varied by up to {RETURN_JITTER_MS:g} ms; its goodput is the "
            "download's, completion from the run's start.",
            "",
            "| condition | algorithm | goodput (Mbit/s) | utilisation | queueing (ms) | regain (s) "
            "| completion (s) | target |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in by_table["field"]:
            lines.append(
                f"| {_field_title(r.cell)} | {r.algorithm.label} | {_cell(r.stats.get('goodput_mbps'))} "
                f"| {_cell(r.stats.get('utilisation'), 100, 1, ' %')} | {_cell(r.stats.get('queue_ms'), 1, 1)} "
                f"| {_regain_cell(r)} | {_cell(r.stats.get('completion_s'))} | {_target_cell(r)} |"
            )
        lines.append("")
    missed = [(r, what) for r in rows for ok, what in r.targets if not ok]
    total = sum(len(r.targets) for r in rows)
    lines.append(f"Targets met: {total - len(missed)} of {total}.")
    lines.append("")
    return "\n".join(lines)


def _seeds_text(rows: Sequence[Row]) -> str:
    counts = sorted({r.seeds for r in rows})
    if counts == [1]:
        return "one seed per row"
    return f"mean ± standard deviation over {'/'.join(map(str, counts))} seeds per row"


def _path_title(cell: Cell) -> str:
    if cell.path is LEO_100_10:
        return f"{cell.path.title}, {cell.reconfiguration.title}"
    return cell.path.title


def _field_title(cell: Cell) -> str:
    text = _path_title(cell)
    if cell.reconfiguration is not STATIC and cell.path is not LEO_100_10:
        text += f", {cell.reconfiguration.title}"
    if cell.return_jitter_ms is not None:
        text += f", {_buffer_title(cell)}, return jitter {cell.return_jitter_ms:g} ms"
    if cell.return_rate_mbps is not None:
        text += f", return link {cell.return_rate_mbps:g} Mbit/s"
    return text


def _buffer_title(cell: Cell) -> str:
    packets = cell.buffer.packets_on(cell.path)
    if cell.buffer.packets is not None:
        return f"{packets} packets"
    return f"{cell.buffer.bdp:g} BDP ({packets})"


def rows_json(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [
        {
            "table": r.cell.table,
            "scenario": r.cell.name,
            "algorithm": r.algorithm.label,
            "seeds": r.seeds,
            **{k: {"mean": s.mean, "std": s.std} for k, s in r.stats.items()},
            "not_regained": r.not_regained,
            "targets": [{"met": ok, "target": what} for ok, what in r.targets],
        }
        for r in rows
    ]


# --- running -------------------------------------------------------------------

SCENARIO_SUBDIR = "matrix/scenarios"


def run(
    out: Path,
    sim: Path,
    jobs: int,
    quick: bool = False,
    seeds: Sequence[int] | None = None,
    tables: Sequence[str] | None = None,
    source: Path = SOURCE_SCENARIOS,
) -> list[Row]:
    """Generates the scenarios (``links_from`` files and their traces read
    from ``source``), runs what the same binary has not run yet (``jobs`` at
    a time) and measures every run (``tables``: of these only)."""
    runs = plan_runs(quick, seeds, tables)
    scenarios = out / SCENARIO_SUBDIR
    write_scenarios((r.cell for r in runs), scenarios, source)
    # Tables share cells (the loss table's 0 % is the paths table's run):
    # each directory runs once.
    unique = {r.directory: r for r in runs}.values()
    entries = tuple(
        Entry(f"{r.cell.name}.toml", r.algorithm.cc, r.seed, (), r.algorithm.sets(r.cell), r.directory) for r in unique
    )
    spec = SweepSpec(None, scenarios.resolve(), entries)
    plan = make_plan(spec, sim, out.resolve(), display_out=str(out))
    outcome = run_sweep(plan, LocalExecutor(jobs, cache=out.resolve() / BLOB_CACHE), log=_say)
    failed = [r for r in outcome.summary["runs"] if r["status"] == "failed"]
    if failed:
        raise SpecError(f"{len(failed)} matrix runs failed, e.g. {failed[0]['dir']} (see its stderr in {out})")
    measured: dict[str, dict[str, Any]] = {}
    for r in unique:
        measured[r.directory] = measure(out / r.directory, r.cell)
    return aggregate({r: measured[r.directory] for r in runs})


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)

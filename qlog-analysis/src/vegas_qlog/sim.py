"""Reading the simulator's output directories (``vegas-sim run ... --out DIR``).

A run directory holds:

- ``summary.json``: the scenario, seed, ``simulated_s``, ``wall_s``,
  ``jain_index``, and lists ``flows`` (``name``, ``cc``, ``goodput_bps``,
  ``bytes_delivered``, ``bytes_retransmitted``, ``completion_s``,
  ``mean_rtt_ms``, ``mean_queue_delay_ms``, ...), ``cross_traffic`` and
  ``links`` (``utilization``, ...);
- ``flow-NAME.csv`` per QUIC flow (``time_s, bytes_delivered, goodput_bps,
  cwnd_bytes, srtt_ms, ...``), ``cross-NAME.csv`` per cross-traffic source
  and ``queue-LINK.csv`` per link;
- ``NAME-client.sqlog`` and ``NAME-server.sqlog`` per flow unless the run
  was made with ``--no-qlog``.

Many runs (seeds, algorithms) are usually analysed together: see
:func:`find_runs`, :func:`load_runs` and :func:`flows_table`.
"""

from __future__ import annotations

import io
import json
import math
import os
import tomllib
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .metrics import retransmission_ratio
from .sqlog import Trace, read_qlog

SUMMARY_FILE = "summary.json"
# Written by the sweep runner beside summary.json: the run's vegas-sim command.
RUN_FILE = "run.json"
# Prefix of the columns holding a run's --cc-param values (its --set values
# are columns named by their key path).
CC_PARAM_PREFIX = "cc."
REQUIRED_FLOW_KEYS = ("name", "cc", "goodput_bps", "bytes_delivered", "bytes_retransmitted")


class SimOutputError(ValueError):
    """A simulator output that cannot be used, naming the file and what is wrong."""


class SimOutputWarning(UserWarning):
    """Part of a simulator output was skipped (a damaged CSV line, ...)."""


def read_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads and checks a ``summary.json`` (a file, or the directory holding it)."""
    p = Path(path)
    if p.is_dir():
        p = p / SUMMARY_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SimOutputError(f"{p}: cannot read: {e.strerror or e}") from e
    try:
        summary = json.loads(text)
    except json.JSONDecodeError as e:
        raise SimOutputError(f"{p}: line {e.lineno} column {e.colno}: not valid JSON: {e.msg}") from e
    if not isinstance(summary, dict):
        raise SimOutputError(f"{p}: expected a JSON object at the top")
    flows = summary.get("flows")
    if not isinstance(flows, list):
        raise SimOutputError(f"{p}: key 'flows': expected a list of flows")
    for i, flow in enumerate(flows):
        if not isinstance(flow, dict):
            raise SimOutputError(f"{p}: flows[{i}]: expected an object")
        for key in REQUIRED_FLOW_KEYS:
            if key not in flow:
                raise SimOutputError(f"{p}: flows[{i}]: missing key '{key}'")
    for key in ("links", "cross_traffic"):
        if key in summary and not isinstance(summary[key], list):
            raise SimOutputError(f"{p}: key '{key}': expected a list")
    return summary


def read_series_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Reads one of the simulator's CSV time series.

    Lines with the wrong number of fields (for example the last line of a
    file cut short) are skipped with a :class:`SimOutputWarning` that gives
    the line number; the other lines are still used. Empty cells are NaN.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SimOutputError(f"{p}: cannot read: {e.strerror or e}") from e
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise SimOutputError(f"{p}: empty file (expected a header line)")
    header = lines[0].split(",")
    good = [lines[0]]
    ends_cleanly = text.endswith("\n")
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        if line.count(",") + 1 != len(header):
            last = number == len(lines)
            what = "truncated line" if last and not ends_cleanly else "malformed line"
            warnings.warn(
                f"{p}: line {number}: {what}: {line.count(',') + 1} fields, expected {len(header)}; skipped",
                SimOutputWarning,
                stacklevel=2,
            )
            continue
        good.append(line)
    frame = pd.read_csv(io.StringIO("\n".join(good) + "\n"))
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            converted = pd.to_numeric(frame[column], errors="coerce")
            bad = frame[column].notna() & converted.isna()
            if bad.any():
                first = int(bad.to_numpy().nonzero()[0][0])
                warnings.warn(
                    f"{p}: column '{column}': {int(bad.sum())} value(s) are not numbers "
                    f"(first: {frame[column].iloc[first]!r}); read as empty",
                    SimOutputWarning,
                    stacklevel=2,
                )
            frame[column] = converted
    return frame


def _toml_value(text: str) -> Any:
    """A --set value as vegas-sim reads it (TOML), or the text itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _pairs(argv: Sequence[Any], flag: str) -> list[tuple[str, str]]:
    """The ``KEY=VALUE`` arguments of every ``flag`` in ``argv``."""
    out = []
    for i, arg in enumerate(argv[:-1]):
        if arg == flag and isinstance(argv[i + 1], str) and "=" in argv[i + 1]:
            key, value = argv[i + 1].split("=", 1)
            out.append((key.strip(), value.strip()))
    return out


def read_run_parameters(directory: Path) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """The ``--set`` and ``--cc-param`` values a run was made with, from the
    sweep runner's ``run.json`` (empty lists without one: a run made by hand
    records no arguments)."""
    path = directory / RUN_FILE
    if not path.is_file():
        return [], []
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        warnings.warn(f"{path}: unreadable ({e}); the run's grid point is unknown", SimOutputWarning, stacklevel=2)
        return [], []
    argv = record.get("argv") if isinstance(record, dict) else None
    if not isinstance(argv, list):
        return [], []
    sets = [(k, _toml_value(v)) for k, v in _pairs(argv, "--set")]
    params = [(k, _toml_value(v)) for k, v in _pairs(argv, "--cc-param")]
    return sets, params


def _joined(pairs: Sequence[tuple[str, Any]]) -> str:
    return " ".join(f"{k}={v}" for k, v in pairs)


@dataclass
class SimRun:
    """One simulator output directory."""

    path: Path
    summary: dict[str, Any]
    _series: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def scenario(self) -> str:
        return str(self.summary.get("scenario", self.path.name))

    @property
    def seed(self) -> int | None:
        seed = self.summary.get("seed")
        return int(seed) if isinstance(seed, int) else None

    @property
    def jain_index(self) -> float:
        value = self.summary.get("jain_index")
        return float(value) if isinstance(value, int | float) else math.nan

    @property
    def flow_names(self) -> list[str]:
        return [f["name"] for f in self.summary["flows"]]

    @property
    def under_test_cc(self) -> str | None:
        """The algorithm of the flows marked under test (None if none or mixed)."""
        ccs = {f["cc"] for f in self.summary["flows"] if f.get("under_test")}
        return ccs.pop() if len(ccs) == 1 else None

    @property
    def parameters(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
        """``(sets, cc_params)``: what the run's ``run.json`` says it was made with."""
        return read_run_parameters(self.path)

    @property
    def flows(self) -> pd.DataFrame:
        """One row per QUIC flow: the summary's fields plus ``retransmission_ratio``."""
        frame = pd.DataFrame(self.summary["flows"])
        frame["retransmission_ratio"] = [
            retransmission_ratio(r, d)
            for r, d in zip(frame["bytes_retransmitted"], frame["bytes_delivered"], strict=True)
        ]
        return frame

    @property
    def links(self) -> pd.DataFrame:
        return pd.DataFrame(self.summary.get("links", []))

    @property
    def cross_traffic(self) -> pd.DataFrame:
        return pd.DataFrame(self.summary.get("cross_traffic", []))

    def _csv(self, prefix: str, name: str) -> pd.DataFrame:
        key = f"{prefix}-{name}"
        if key not in self._series:
            path = self.path / f"{key}.csv"
            if not path.exists():
                raise SimOutputError(f"{path}: no such file (run directory {self.path})")
            self._series[key] = read_series_csv(path)
        return self._series[key]

    def flow_series(self, name: str) -> pd.DataFrame:
        """``flow-NAME.csv``: time_s, bytes_delivered, goodput_bps, cwnd_bytes, srtt_ms, ..."""
        return self._csv("flow", name)

    def queue_series(self, link: str) -> pd.DataFrame:
        """``queue-LINK.csv``: time_s, queue_packets, queue_bytes, utilization, ..."""
        return self._csv("queue", link)

    def cross_series(self, name: str) -> pd.DataFrame:
        """``cross-NAME.csv``: time_s, bytes_sent, bytes_delivered, delivered_bps."""
        return self._csv("cross", name)

    def qlog_path(self, flow: str, side: str = "server") -> Path | None:
        """The flow's ``.sqlog`` of one side (``server`` sends the data), if written."""
        path = self.path / f"{flow}-{side}.sqlog"
        return path if path.exists() else None

    def trace(self, flow: str, side: str = "server") -> Trace:
        path = self.qlog_path(flow, side)
        if path is None:
            raise SimOutputError(f"{self.path}: no {flow}-{side}.sqlog (was the run made with --no-qlog?)")
        return read_qlog(path)


def load_run(path: str | os.PathLike[str]) -> SimRun:
    """Loads one run directory (or its ``summary.json``)."""
    p = Path(path)
    directory = p if p.is_dir() else p.parent
    if p.is_dir() and not (p / SUMMARY_FILE).exists():
        raise SimOutputError(f"{p}: no {SUMMARY_FILE} here; is this a vegas-sim output directory?")
    return SimRun(directory, read_summary(p))


def find_runs(root: str | os.PathLike[str]) -> list[Path]:
    """Every directory under ``root`` (``root`` included) holding a ``summary.json``, sorted."""
    base = Path(root)
    if not base.exists():
        raise SimOutputError(f"{base}: no such directory")
    return sorted(p.parent for p in base.rglob(SUMMARY_FILE))


def load_runs(paths: Iterable[str | os.PathLike[str]]) -> list[SimRun]:
    """Loads run directories; a directory without ``summary.json`` is searched below."""
    runs: list[SimRun] = []
    for path in paths:
        p = Path(path)
        if p.is_dir() and not (p / SUMMARY_FILE).exists():
            found = find_runs(p)
            if not found:
                raise SimOutputError(f"{p}: no {SUMMARY_FILE} in it or below")
            runs.extend(load_run(f) for f in found)
        else:
            runs.append(load_run(p))
    return runs


RUN_COLUMNS = ("run", "scenario", "seed", "run_cc", "jain_index", "simulated_s", "wall_s")
UNDER_TEST = "under test"
BACKGROUND = "background"


def _parameter_columns(run: SimRun, under_test: pd.Series | None) -> dict[str, Any]:
    """A run's grid point as columns: ``set`` and ``cc_params`` (as the sweep's
    CSV writes them) and one column per ``--set`` key and per ``--cc-param``
    (``cc.KEY``). ``--cc-param`` acts on the flows under test only, so the
    other flows get none (``under_test`` is the per-flow mask; None: one row)."""
    sets, params = run.parameters
    columns: dict[str, Any] = {"set": _joined(sets)}
    for key, value in sets:
        columns[key] = value
    if under_test is None:
        columns["cc_params"] = _joined(params)
        for key, value in params:
            columns[f"{CC_PARAM_PREFIX}{key}"] = value
    else:
        columns["cc_params"] = [_joined(params) if t else "" for t in under_test]
        for key, value in params:
            columns[f"{CC_PARAM_PREFIX}{key}"] = [value if t else None for t in under_test]
    return columns


def parameter_columns(runs: Sequence[SimRun]) -> list[str]:
    """The columns of :func:`flows_table` / :func:`runs_table` that name a grid
    point: each ``--set`` key path and each ``cc.PARAM``, in first-seen order."""
    seen: dict[str, None] = {}
    for run in runs:
        sets, params = run.parameters
        for key, _ in sets:
            seen.setdefault(key)
        for key, _ in params:
            seen.setdefault(f"{CC_PARAM_PREFIX}{key}")
    return list(seen)


def flows_table(runs: Sequence[SimRun]) -> pd.DataFrame:
    """All flows of all runs in one table, with the run's columns first:
    ``run`` (directory), ``scenario``, ``seed``, ``run_cc`` (the algorithm
    under test in that run), ``jain_index``, ``simulated_s``, ``wall_s``;
    then the flow's fields, ``role`` (``under test`` or ``background``) and
    the run's grid point (``set``, ``cc_params``, one column per ``--set``
    key path and per ``cc.PARAM``; from the sweep runner's ``run.json``)."""
    parts = []
    for run in runs:
        flows = run.flows
        tested = flows["under_test"].astype(bool) if "under_test" in flows.columns else pd.Series([False] * len(flows))
        flows["role"] = [UNDER_TEST if t else BACKGROUND for t in tested]
        for column, values in _parameter_columns(run, tested).items():
            flows[column] = values
        flows.insert(0, "run", str(run.path))
        flows.insert(1, "scenario", run.scenario)
        flows.insert(2, "seed", run.seed)
        flows.insert(3, "run_cc", run.under_test_cc)
        flows.insert(4, "jain_index", run.jain_index)
        flows.insert(5, "simulated_s", run.summary.get("simulated_s", math.nan))
        flows.insert(6, "wall_s", run.summary.get("wall_s", math.nan))
        parts.append(flows)
    if not parts:
        return pd.DataFrame(columns=list(RUN_COLUMNS) + list(REQUIRED_FLOW_KEYS))
    return pd.concat(parts, ignore_index=True)


def runs_table(runs: Sequence[SimRun]) -> pd.DataFrame:
    """One row per run: ``run``, ``scenario``, ``seed``, ``run_cc``, ``jain_index``,
    ``total_goodput_bps``, ``utilization_<link>`` per link, ``simulated_s``, ``wall_s``."""
    rows = []
    for run in runs:
        row: dict[str, Any] = {
            "run": str(run.path),
            "scenario": run.scenario,
            "seed": run.seed,
            "run_cc": run.under_test_cc,
            "jain_index": run.jain_index,
            "total_goodput_bps": float(sum(f["goodput_bps"] for f in run.summary["flows"])),
            "simulated_s": run.summary.get("simulated_s", math.nan),
            "wall_s": run.summary.get("wall_s", math.nan),
            **_parameter_columns(run, None),
        }
        for link in run.summary.get("links", []):
            if isinstance(link, dict) and "name" in link:
                row[f"utilization_{link['name']}"] = link.get("utilization", math.nan)
        rows.append(row)
    return pd.DataFrame(rows)

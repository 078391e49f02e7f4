"""The measured numbers of all runs as one table, and their means with
confidence intervals per algorithm (and sweep point)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..sim import SimOutputError, load_run
from ..stats import MeanCI, mean_ci
from .measures import MEASURES
from .plan import ALT_SUFFIX, RunSpec, effective_scenario
from .runner import RunRecord

# How algorithms are named in the report (the papers' names).
DISPLAY = {
    "vegas": "Vegas",
    "vegas-1,3": "Vegas-1,3",
    "vegas-2,4": "Vegas-2,4",
    "vegas-linux": "Vegas-Linux",
    "vegas-a": "Vegas-A",
    "vegas-l": "Vegas-L",
    "veno": "Veno",
    "venodb": "VenoDB",
    "rovegas": "RoVegas",
    "vegas-w": "Vegas-W",
    "westwood": "Westwood",
    "reno": "NewReno",
    "cubic": "CUBIC",
    "bbr2": "BBR2",
}


def display(label: str) -> str:
    """``reno/vegas`` -> ``NewReno/Vegas``; ``venodb`` -> ``VenoDB``."""
    return "/".join(DISPLAY.get(part, part) for part in label.split("/"))


# metric -> (unit, decimals, what it is)
METRICS: dict[str, tuple[str, int, str]] = {
    "large_kBps": ("KB/s", 1, "throughput of the 1 MB transfer"),
    "small_kBps": ("KB/s", 1, "throughput of the 300 KB transfer"),
    "large_retx_KB": ("KB", 1, "retransmitted by the 1 MB transfer"),
    "small_retx_KB": ("KB", 1, "retransmitted by the 300 KB transfer"),
    "total_retx_KB": ("KB", 1, "retransmitted by both transfers"),
    "transfer_kBps": ("KB/s", 1, "throughput of the 1 MB transfer"),
    "transfer_retx_KB": ("KB", 1, "retransmitted by the 1 MB transfer"),
    "background_kBps": ("KB/s", 1, "mean throughput of the background transfers"),
    "test_mbps": ("Mbit/s", 2, "goodput of the flow under test"),
    "reno_mbps": ("Mbit/s", 2, "goodput of the NewReno flow"),
    "jain": ("", 3, "Jain's fairness index"),
    "goodput_mbps": ("Mbit/s", 2, "goodput"),
    "during_mbps": ("Mbit/s", 2, "goodput while the reverse CBR runs"),
    "after_mbps": ("Mbit/s", 2, "goodput after the CBR stops (to the end of the run)"),
    "t_regain_s": ("s", 1, "time to half the bottleneck's rate after the CBR stops (runs that reach it)"),
    "regained": ("", 2, "share of runs that regain half the bottleneck's rate"),
    "t_first_s": ("s", 1, "first time the 1 s utilisation reaches 0.95 (runs that reach it)"),
    "reached_first": ("", 2, "share of runs whose 1 s utilisation reaches 0.95 before the CBR"),
    "t_back_s": ("s", 1, "first time the 1 s utilisation reaches 0.95 after the CBR stops (runs that reach it)"),
    "back_first": ("", 2, "share of runs whose 1 s utilisation reaches 0.95 again after the CBR"),
    "total_mbps": ("Mbit/s", 2, "sum of the flows' goodputs"),
    "short_mbps": ("Mbit/s", 2, "goodput of the short-RTT flow"),
    "long_mbps": ("Mbit/s", 2, "goodput of the long-RTT flow"),
    "pair_mbps": ("Mbit/s", 2, "goodput of the pair under test"),
    "reno_pair_mbps": ("Mbit/s", 2, "goodput of the NewReno pair"),
    "reno_share": ("", 2, "NewReno pair's share of the total goodput"),
    "goodput_kbps": ("kbit/s", 0, "goodput"),
    "during_kbps": ("kbit/s", 0, "goodput while the backward VBR runs"),
    "before_util": ("", 2, "bottleneck utilisation before the VBR starts (after the first fifth)"),
    "test_pair_during_kbps": ("kbit/s", 0, "pair under test's goodput while the VBR runs"),
    "vegas_pair_during_kbps": ("kbit/s", 0, "Vegas pair's goodput while the VBR runs"),
    "jain_before": ("", 3, "Jain's index of the four flows before the VBR starts"),
    "t_full_s": ("s", 1, "time to utilisation ≥ 0.95 held for 1 s (censored runs at 80 s)"),
    "util_cbr": ("", 3, "bottleneck utilisation while the CBR runs"),
    "t_recover_s": ("s", 1, "time to full utilisation again after the CBR stops"),
    "change_mbps": ("Mbit/s", 2, "goodput on the new route"),
    "util_change": ("", 3, "bottleneck utilisation on the new route"),
    "cwnd_ratio": ("", 2, "mean cwnd on the new route / mean cwnd just before"),
    "util_pre_cbr": ("", 2, "bottleneck utilisation in the 40 s before the CBR"),
    "cwnd_pre_cbr_pkts": ("packets", 0, "mean cwnd in the 40 s before the CBR"),
    "growth_pkts_per_s": ("packets/s", 1, "cwnd growth before the CBR"),
    "bdp_pkts": ("packets", 0, "the path's bandwidth-delay product"),
    "cwnd_before_pkts": ("packets", 0, "mean cwnd in the 10 s before the route change"),
    "rtt_ratio": ("", 2, "new route's round trip / old route's"),
    "bdp_new_pkts": ("packets", 0, "the new route's bandwidth-delay product"),
    "completion_s": ("s", 1, "download time"),
    "queue_ms": ("ms", 1, "mean queueing delay of the flows under test"),
    "early_retx_share": ("", 2, "share of the retransmitted bytes sent in each transfer's first 2 s"),
    "closed": ("", 2, "runs whose flow under test closed early"),
    "aqt_handed": ("", 0, "backward queueing times (AQT) handed to the controller"),
    "receive_times_handed": ("", 0, "receive timestamps handed to the controller"),
    "retx_ratio": ("", 4, "retransmitted / (delivered + retransmitted)"),
}


def unit(metric: str) -> str:
    return METRICS.get(metric, ("", 2, metric))[0]


def decimals(metric: str) -> int:
    return METRICS.get(metric, ("", 2, metric))[1]


def fmt(ci: MeanCI, metric: str) -> str:
    """``"2.31 ± 0.05"`` in the metric's decimals (``"-"`` without data)."""
    if ci.n == 0 or math.isnan(ci.mean):
        return "-"
    d = decimals(metric)
    text = f"{ci.mean:.{d}f}"
    if not math.isnan(ci.half_width):
        text += f" ± {ci.half_width:.{d}f}"
    return text


@dataclass(frozen=True)
class Ref:
    """One measured quantity: a metric of an algorithm (label) in an experiment,
    at a sweep point if the experiment sweeps."""

    experiment: str
    label: str
    metric: str
    point: float | None = None
    name: str | None = None  # how the report names it (default: the algorithm)

    def title(self) -> str:
        return self.name or display(self.label)


class Results:
    """Every run's measures (one row per run) and their statistics."""

    def __init__(self, table: pd.DataFrame, problems: Sequence[str] = ()):
        self.table = table
        self.problems = list(problems)

    def rows(self, experiment: str, label: str | None = None, point: float | None = None) -> pd.DataFrame:
        t = self.table
        if t.empty:
            return t
        sel = t["experiment"] == experiment
        if label is not None:
            sel &= t["label"] == label
        if point is not None:
            sel &= (t["point"] - point).abs() < 1e-12
        return t[sel]

    def values(self, ref: Ref) -> list[float]:
        rows = self.rows(ref.experiment, ref.label, ref.point)
        if rows.empty or ref.metric not in rows.columns:
            return []
        return [float(v) for v in pd.to_numeric(rows[ref.metric], errors="coerce")]

    def stat(self, ref: Ref) -> MeanCI:
        return mean_ci(self.values(ref))


def base_experiment(key: str) -> str:
    """The experiment a sensitivity variant (``KEY~alt``) varies."""
    return key.split(ALT_SUFFIX)[0]


def collect(records: Sequence[RunRecord], root: Path) -> Results:
    """Loads every run and applies its experiment's measure."""
    rows = []
    problems = []
    for rec in records:
        spec: RunSpec = rec.spec
        if rec.status == "absent":
            problems.append(f"{spec.experiment} {spec.label} seed {spec.seed}: not run")
            continue
        if rec.status == "failed":
            problems.append(f"{spec.experiment} {spec.label} seed {spec.seed}: {rec.message}")
        try:
            run = load_run(rec.directory)
        except SimOutputError as e:
            problems.append(f"{spec.experiment} {spec.label} seed {spec.seed}: no usable output ({e})")
            continue
        table = effective_scenario(root, spec)
        row = {
            "experiment": spec.experiment,
            "label": spec.label,
            "point": spec.point if spec.point is not None else math.nan,
            "config": spec.config,
            "seed": spec.seed,
            "directory": str(rec.directory),
            "simulated_s": float(run.summary.get("simulated_s", math.nan)),
            "wall_s": float(run.summary.get("wall_s", math.nan)),
        }
        if any(f.get("failure") for f in run.summary["flows"]):
            ended = "; ".join(f"{f['name']}: {f['failure']}" for f in run.summary["flows"] if f.get("failure"))
            problems.append(f"{spec.experiment} {spec.label} seed {spec.seed}: ended early ({ended})")
        try:
            row.update(MEASURES[base_experiment(spec.experiment)](run, table))
        except (KeyError, SimOutputError, ValueError) as e:
            problems.append(f"{spec.experiment} {spec.label} seed {spec.seed}: cannot measure ({e})")
        rows.append(row)
    columns = ["experiment", "label", "point", "config", "seed", "directory", "simulated_s", "wall_s"]
    return Results(pd.DataFrame(rows) if rows else pd.DataFrame(columns=columns), problems)

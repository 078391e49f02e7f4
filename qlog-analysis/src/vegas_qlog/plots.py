"""Figures in the manner of the papers': small, monochrome-friendly, PNG and SVG.

Every function returns a :class:`matplotlib.figure.Figure` built without
pyplot (so nothing needs a display, and figures are not kept alive by a
global registry); :func:`save_figure` writes it in every requested format.
SVGs are reproducible: the same data gives the same bytes.

Each algorithm keeps its colour, line style and hatch in every figure
(:func:`algorithm_style`), chosen from the Okabe-Ito palette so that the
figures stay readable for colour-blind readers and in grey print.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .metrics import cc_internals, congestion_states, window_series
from .sqlog import Trace

PAPER_STYLE: dict[str, Any] = {
    "font.family": "serif",
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.linewidth": 0.7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.linestyle": ":",
    "grid.linewidth": 0.5,
    "grid.color": "0.75",
    "lines.linewidth": 1.0,
    "legend.frameon": False,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.03,
    "svg.hashsalt": "vegas-qlog",
    "svg.fonttype": "path",
}

SINGLE_COLUMN = (3.5, 2.3)  # inches: one column of a two-column paper
WIDE = (7.0, 2.6)

# Okabe-Ito, without yellow (too light on white).
_PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
_LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1))]
_HATCHES = ["", "///", "\\\\\\", "xxx", "---", "|||", "+++"]

# Fixed styles for the project's algorithms so a figure set is consistent.
_KNOWN = [
    "vegas",
    "reno",
    "cubic",
    "bbr2",
    "vegas-linux",
    "westwood",
    "vegas-l",
    "vegas-a",
    "veno",
    "venodb",
    "rovegas",
    "vegas-w",
    "newreno",
]


def algorithm_style(name: str) -> dict[str, Any]:
    """Colour, line style and hatch of an algorithm (or any label), always the same."""
    key = name.lower()
    index = _KNOWN.index(key) if key in _KNOWN else len(_KNOWN) + sum(key.encode()) % 17
    # Past the palette's length the hatch and line style shift by one, so
    # that two algorithms sharing a colour never share a hatch as well.
    shift = index // len(_PALETTE)
    return {
        "color": _PALETTE[index % len(_PALETTE)],
        "linestyle": _LINESTYLES[(index + shift) % len(_LINESTYLES)],
        "hatch": _HATCHES[(index + shift) % len(_HATCHES)],
    }


def style() -> AbstractContextManager[Any]:
    """The papers' style, as a context: ``with plots.style(): fig = ...``."""
    return matplotlib.rc_context(PAPER_STYLE)


def new_figure(size: tuple[float, float] = SINGLE_COLUMN, rows: int = 1, sharex: bool = True) -> tuple[Figure, Any]:
    """A figure in the papers' style with ``rows`` axes stacked."""
    with style():
        fig = Figure(figsize=size, layout="constrained")
        axes = fig.subplots(rows, 1, sharex=sharex, squeeze=True)
    return fig, axes


def save_figure(fig: Figure, out_base: str | os.PathLike[str], formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Writes ``out_base.png``, ``out_base.svg``, ...; returns the paths."""
    base = Path(out_base)
    base.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    with style():
        for fmt in formats:
            path = base.with_name(f"{base.name}.{fmt}")
            metadata: dict[str, Any] = {"Date": None} if fmt in ("svg", "pdf") else {}
            if fmt == "png":
                metadata = {"Software": None}
            fig.savefig(path, format=fmt, metadata=metadata)
            paths.append(path)
    return paths


def _label_style(label: str) -> dict[str, Any]:
    # "vegas (seed 3)" or "flow-1 (vegas)" keep the algorithm's style when one is named.
    for token in [label, *label.replace("(", " ").replace(")", " ").split()]:
        if token.lower() in _KNOWN:
            return algorithm_style(token)
    return algorithm_style(label)


def plot_time_series(
    series: Mapping[str, pd.DataFrame],
    column: str,
    *,
    ylabel: str,
    scale: float = 1.0,
    time_column: str = "time_s",
    title: str | None = None,
    step: bool = True,
    size: tuple[float, float] = SINGLE_COLUMN,
) -> Figure:
    """One line per entry of ``series`` (label -> table with ``time_column`` and ``column``)."""
    fig, ax = new_figure(size)
    with style():
        for label, frame in series.items():
            if column not in frame.columns or time_column not in frame.columns:
                continue
            data = frame[[time_column, column]].dropna()
            values = data[column].to_numpy(dtype=float) * scale
            st = _label_style(label)
            kwargs = {"color": st["color"], "linestyle": st["linestyle"], "label": label}
            if step:
                ax.step(data[time_column].to_numpy(dtype=float), values, where="post", **kwargs)
            else:
                ax.plot(data[time_column].to_numpy(dtype=float), values, **kwargs)
        ax.set_xlabel("Time (s)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        if title:
            ax.set_title(title)
        if len(series) > 1:
            ax.legend(loc="best")
    return fig


def plot_cwnd(
    series: Mapping[str, pd.DataFrame],
    *,
    column: str = "cwnd_bytes",
    packet_bytes: float | None = None,
    title: str | None = None,
    size: tuple[float, float] = SINGLE_COLUMN,
) -> Figure:
    """Congestion window over time, one line per algorithm or flow.

    ``series`` maps a label to a table with ``time_s`` and ``column`` (a
    simulator ``flow-*.csv`` or :func:`metrics.window_series`). In KB, or in
    packets of ``packet_bytes`` when given (as the Vegas paper draws it).
    """
    if packet_bytes:
        return plot_time_series(
            series, column, ylabel="Congestion window (packets)", scale=1.0 / packet_bytes, title=title, size=size
        )
    return plot_time_series(series, column, ylabel="Congestion window (KB)", scale=1e-3, title=title, size=size)


def plot_goodput(
    series: Mapping[str, pd.DataFrame],
    *,
    column: str = "goodput_bps",
    title: str | None = None,
    size: tuple[float, float] = SINGLE_COLUMN,
) -> Figure:
    """Goodput per sampling interval over time (Mbit/s), one line per flow."""
    return plot_time_series(series, column, ylabel="Goodput (Mbit/s)", scale=1e-6, title=title, size=size)


def plot_bars(
    table: pd.DataFrame,
    *,
    value: str,
    bar: str,
    group: str | None = None,
    ylabel: str,
    scale: float = 1.0,
    title: str | None = None,
    ylim: tuple[float, float] | None = None,
    clip: tuple[float, float] | None = None,
    annotate: bool = True,
    decimals: int = 2,
    size: tuple[float, float] = SINGLE_COLUMN,
) -> Figure:
    """Grouped bars: one group per value of ``group`` (or a single group), one bar
    per value of ``bar`` (the algorithm), height ``<value>_mean`` with the
    ``<value>_ci_half`` error bar when ``table`` comes from
    :func:`stats.aggregate`, otherwise ``value`` itself. ``clip`` bounds the
    drawn error bars (a fairness index cannot pass 1)."""
    mean_col = f"{value}_mean" if f"{value}_mean" in table.columns else value
    err_col = f"{value}_ci_half" if f"{value}_ci_half" in table.columns else None
    if mean_col not in table.columns:
        raise KeyError(f"no column {value!r} or {value + '_mean'!r} in the table")
    if bar not in table.columns or (group and group not in table.columns):
        raise KeyError(f"no column {bar if bar not in table.columns else group!r} in the table")
    bars = list(dict.fromkeys(table[bar].astype(str)))
    groups = list(dict.fromkeys(table[group].astype(str))) if group else [""]
    width = 0.8 / max(1, len(bars)) if group else 0.7
    fig, ax = new_figure(size)
    tops: list[float] = []
    with style():
        for i, name in enumerate(bars):
            st = algorithm_style(name)
            heights, lower, upper, positions = [], [], [], []
            for g_index, g in enumerate(groups):
                rows = table[table[bar].astype(str) == name]
                if group:
                    rows = rows[rows[group].astype(str) == g]
                if rows.empty:
                    continue
                height = float(rows[mean_col].iloc[0]) * scale
                err = float(rows[err_col].iloc[0]) * scale if err_col else math.nan
                err = 0.0 if math.isnan(err) else err
                low, high = height - err, height + err
                if clip:
                    low, high = max(low, clip[0] * scale), min(high, clip[1] * scale)
                heights.append(height)
                lower.append(height - low)
                upper.append(high - height)
                positions.append(g_index + (i - (len(bars) - 1) / 2) * width if group else i)
            if not heights:
                continue
            ax.bar(
                positions,
                heights,
                width * 0.92,
                yerr=[lower, upper] if err_col else None,
                capsize=2,
                color=st["color"],
                edgecolor="black",
                linewidth=0.5,
                hatch=st["hatch"],
                label=name,
                error_kw={"elinewidth": 0.7, "capthick": 0.7},
            )
            for x, h, up in zip(positions, heights, upper, strict=True):
                tops.append(h + up)
                if annotate and len(bars) * len(groups) <= 16:
                    ax.annotate(
                        f"{h:.{decimals}f}",
                        (x, h + up),
                        xytext=(0, 2),
                        textcoords="offset points",
                        ha="center",
                        va="bottom",
                        fontsize=6,
                    )
        if group:
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels(groups)
            if len(bars) > 1:
                ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=min(len(bars), 4))
        else:
            ax.set_xticks(range(len(bars)))
            ax.set_xticklabels(bars)
        ax.tick_params(axis="x", length=0)
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(ylabel)
        highest = max(tops, default=0.0)
        if ylim:
            ax.set_ylim(ylim[0], max(ylim[1], highest * 1.12))
        else:
            ax.set_ylim(0, highest * 1.15 if highest > 0 else 1)
        if title:
            ax.set_title(title)
    return fig


def plot_throughput_bars(
    table: pd.DataFrame,
    *,
    bar: str = "cc",
    group: str | None = None,
    value: str = "goodput_bps",
    title: str | None = None,
    size: tuple[float, float] = SINGLE_COLUMN,
) -> Figure:
    """Mean goodput (Mbit/s) per algorithm with its confidence interval."""
    return plot_bars(
        table, value=value, bar=bar, group=group, ylabel="Goodput (Mbit/s)", scale=1e-6, title=title, size=size
    )


def plot_fairness_bars(
    table: pd.DataFrame,
    *,
    bar: str = "run_cc",
    group: str | None = None,
    value: str = "jain_index",
    title: str | None = None,
    size: tuple[float, float] = SINGLE_COLUMN,
) -> Figure:
    """Jain's fairness index per algorithm (0 to 1) with its confidence interval."""
    return plot_bars(
        table,
        value=value,
        bar=bar,
        group=group,
        ylabel="Jain's fairness index",
        ylim=(0, 1.1),
        clip=(0.0, 1.0),
        decimals=3,
        title=title,
        size=size,
    )


def _shade_recovery(ax: Any, states: pd.DataFrame, end_s: float) -> None:
    if states.empty:
        return
    times = [*list(states["time_s"]), end_s]
    for (start, state), stop in zip(states[["time_s", "state"]].itertuples(index=False), times[1:], strict=True):
        if state == "recovery":
            ax.axvspan(start, stop, color="0.88", linewidth=0, zorder=0)


def plot_trace(trace: Trace, *, title: str | None = None, size: tuple[float, float] = (3.5, 3.6)) -> Figure:
    """One endpoint's qlog: congestion window and bytes in flight (top), RTTs (bottom);
    recovery periods shaded."""
    window = window_series(trace)
    states = congestion_states(trace)
    end = float(window["time_s"].max()) if len(window) else trace.duration_ms / 1000.0
    fig, (top, bottom) = new_figure(size, rows=2)
    with style():
        for column, label, color, ls in (
            ("cwnd_bytes", "cwnd", "#0072B2", "-"),
            ("bytes_in_flight", "bytes in flight", "#D55E00", "--"),
        ):
            data = window[["time_s", column]].dropna()
            top.step(data["time_s"], data[column] / 1e3, where="post", label=label, color=color, linestyle=ls)
        top.set_ylabel("KB")
        top.set_ylim(bottom=0)
        top.legend(loc="best")
        _shade_recovery(top, states, end)
        for column, label, color, ls in (
            ("latest_rtt_ms", "latest RTT", "#009E73", ":"),
            ("smoothed_rtt_ms", "smoothed RTT", "#0072B2", "-"),
            ("min_rtt_ms", "min RTT", "#000000", "--"),
        ):
            data = window[["time_s", column]].dropna()
            bottom.step(data["time_s"], data[column], where="post", label=label, color=color, linestyle=ls)
        bottom.set_ylabel("RTT (ms)")
        bottom.set_xlabel("Time (s)")
        bottom.set_ylim(bottom=0)
        bottom.set_xlim(left=0)
        bottom.legend(loc="best")
        _shade_recovery(bottom, states, end)
        top.set_title(title or trace.title or Path(trace.path).name)
    return fig


# Internals drawn together on one panel, in this order; the rest follow.
INTERNAL_PANELS: list[tuple[str, ...]] = [
    ("diff_packets",),
    ("base_rtt_ms", "min_rtt_ms"),
    ("expected_bps", "actual_bps"),
    ("cwnd_packets",),
]
# Counters that say nothing on a graph.
_SKIPPED_INTERNALS = frozenset({"round"})


def _internal_panels(internals: pd.DataFrame, fields: Sequence[str] | None, max_panels: int) -> list[tuple[str, ...]]:
    numeric = [c for c in internals.columns if c != "time_s" and pd.api.types.is_numeric_dtype(internals[c])]
    if fields is not None:
        missing = [f for f in fields if f not in internals.columns]
        if missing:
            raise KeyError(f"no field {', '.join(missing)} in the trace (have: {', '.join(numeric)})")
        return [(f,) for f in fields]
    # The known internals whenever logged; the others only if they change
    # (alpha, beta, ... are constants, drawn as lines on the Diff panel).
    logged = [c for c in numeric if internals[c].notna().any()]
    changing = [c for c in logged if internals[c].nunique(dropna=True) > 1 and c not in _SKIPPED_INTERNALS]
    panels: list[tuple[str, ...]] = []
    used: set[str] = set()
    for group in INTERNAL_PANELS:
        present = tuple(f for f in group if f in logged)
        if present:
            panels.append(present)
            used.update(present)
    panels += [(c,) for c in changing if c not in used]
    return panels[:max_panels]


def plot_internals(
    trace: Trace,
    fields: Sequence[str] | None = None,
    *,
    title: str | None = None,
    max_panels: int = 6,
) -> Figure | None:
    """The controller's internals over time, one panel per field that changes
    (Vegas: Diff against alpha and beta, BaseRTT with the round's RTT, the
    expected and actual rates, the window in packets, ...), or one per name in
    ``fields``. None when the trace has none (quiche's own algorithms)."""
    internals = cc_internals(trace)
    panels = _internal_panels(internals, fields, max_panels)
    if not panels:
        return None
    fig, axes = new_figure((3.5, 1.0 * len(panels) + 0.6), rows=len(panels))
    axes = list(np.atleast_1d(axes))
    with style():
        for ax, panel in zip(axes, panels, strict=True):
            for name, color, ls in zip(panel, ("#0072B2", "#D55E00"), ("-", "--"), strict=False):
                data = internals[["time_s", name]].dropna()
                scale = 1e-6 if name.endswith("_bps") else 1.0
                label = name.replace("_bps", " (Mbit/s)") if scale != 1.0 else name
                ax.step(data["time_s"], data[name] * scale, where="post", color=color, linestyle=ls, label=label)
            if len(panel) > 1:
                ax.legend(loc="best")
            else:
                ax.set_ylabel(panel[0], rotation=0, ha="right", va="center")
            if panel == ("diff_packets",):
                for bound, bls in (("alpha", "--"), ("beta", ":")):
                    if bound in internals.columns and internals[bound].notna().any():
                        level = float(internals[bound].dropna().iloc[-1])
                        ax.axhline(level, color="0.3", linestyle=bls, linewidth=0.8)
                        ax.annotate(bound, (1.0, level), xycoords=("axes fraction", "data"), fontsize=6, va="center")
        axes[-1].set_xlabel("Time (s)")
        axes[-1].set_xlim(left=0)
        axes[0].set_title(title or f"{trace.title or Path(trace.path).name}: controller internals")
    return fig

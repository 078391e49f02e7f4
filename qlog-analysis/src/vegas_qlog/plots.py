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
import matplotlib.patches
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .metrics import cc_internals, congestion_states, packet_losses, window_series
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


# --- The controller's story: one figure per trace ------------------------------

# Internals drawn as horizontal reference lines on the backlog panel, not as
# series of their own (Vegas's alpha/beta/gamma, Veno's beta).
STORY_BOUNDS = ("alpha", "beta", "gamma")
# Internals that duplicate what the window panel shows already.
_STORY_DUPLICATES = frozenset({"round"})
_STORY_COLORS = [
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#882255",
    "#44AA99",
    "#999933",
    "#AA4499",
    "#888888",
]
_STORY_LINESTYLES = ["-", "--", "-.", ":"]
# The band of quic:congestion_state_updated's states in the figure.
STATE_BAND = "cc state"
_STORY_TITLES = {
    "rtt": "RTT (ms)",
    "backlog": "packets",
    "delay": "delay (ms)",
    "rate": "Mbit/s",
    "window_packets": "packets",
}


def story_panel(name: str, values: pd.Series) -> str | None:
    """Which panel of :func:`plot_story` an internal belongs to, from its name
    and values alone (so that renamed or new internals still find one):
    ``"bound"`` (alpha/beta/gamma lines), ``"state"`` (text values such as
    ``delay_source``, ``loss_class``), ``"rtt"`` (``*rtt*_ms``), ``"delay"``
    (other ``*_ms``: relative delays, queueing times), ``"rate"``
    (``*_bps``, ``*_bytes_per_s``), ``"backlog"`` (``diff*``, ``n_*`` in
    packets: Vegas's Diff, Veno's N), ``"window_packets"`` (other
    ``*_packets``), ``"other"`` for any other number that changes, None for
    constants and what is drawn elsewhere."""
    if name in STORY_BOUNDS:
        return "bound"
    data = values.dropna()
    if data.empty or name in _STORY_DUPLICATES:
        return None
    if not pd.api.types.is_numeric_dtype(data) or pd.api.types.is_bool_dtype(data):
        return "state"
    if name.endswith("_ms"):
        return "rtt" if "rtt" in name else "delay"
    if name.endswith("_bps") or name.endswith("_bytes_per_s"):
        return "rate"
    if name.endswith("_packets"):
        return "backlog" if name.startswith(("diff", "n_")) else "window_packets"
    if data.nunique() <= 1:
        return None
    return "other"


def _story_scale(name: str) -> tuple[float, str]:
    if name.endswith("_bytes_per_s"):
        return 8e-6, name.removesuffix("_bytes_per_s")
    if name.endswith("_bps"):
        return 1e-6, name.removesuffix("_bps")
    return 1.0, name


def _state_runs(values: pd.Series, times: pd.Series, end: float) -> list[tuple[float, float, str]]:
    runs: list[tuple[float, float, str]] = []
    for t, v in zip(times, values, strict=True):
        if pd.isna(v):
            continue
        text = str(v).lower() if isinstance(v, bool | np.bool_) else str(v)
        if runs and runs[-1][2] == text:
            continue
        if runs:
            runs[-1] = (runs[-1][0], float(t), runs[-1][2])
        runs.append((float(t), end, text))
    return runs


def plot_story(trace: Trace, *, title: str | None = None, width: float = 7.0, max_other: int = 3) -> Figure:
    """The controller's own story over time, from one endpoint's qlog (the
    data sender's): the window (cwnd, ssthresh once set, bytes in flight)
    with every ``packet_lost`` marked by trigger and the congestion states
    (recovery shaded, each change a dotted line); then one panel per kind of
    internal the controller logged (see :func:`story_panel`): BaseRTT and
    the round's RTT beside quiche's RTTs, Diff or N against alpha/beta,
    relative delays and queueing times, rates (expected/actual, bandwidth
    estimates), text states (``delay_source``, loss classes, ...) as bands,
    and any other changing number in ``max_other`` panels at most (named in
    the figure's footer when more)."""
    window = window_series(trace)
    internals = cc_internals(trace)
    states = congestion_states(trace)
    losses = packet_losses(trace)
    end = max(
        float(window["time_s"].max()) if len(window) else 0.0,
        trace.duration_ms / 1000.0,
        float(losses["time_s"].max()) if len(losses) else 0.0,
    )
    groups: dict[str, list[str]] = {}
    for column in internals.columns:
        if column == "time_s":
            continue
        kind = story_panel(column, internals[column])
        if kind is not None:
            groups.setdefault(kind, []).append(column)
    # Other numbers one per panel (their scales differ), counters (never
    # decreasing) after the rest.
    other = sorted(groups.pop("other", []), key=lambda c: _is_counter(internals[c]))
    other_panels = [(c,) for c in other[:max_other]]
    not_drawn = other[max_other:]
    bounds = groups.pop("bound", [])
    order = ["rtt", "backlog", "delay", "rate", "window_packets"]
    panels: list[tuple[str, tuple[str, ...]]] = [("window", ())]
    panels += [(kind, tuple(groups[kind])) for kind in order if kind in groups]
    if "rtt" not in groups and window["smoothed_rtt_ms"].notna().any():
        panels.insert(1, ("rtt", ()))
    panels += [("other", p) for p in other_panels]
    # The congestion state is a band like the controller's own text states.
    bands = internals[["time_s", *groups.get("state", [])]].copy()
    if len(states):
        cc_state = pd.DataFrame({"time_s": states["time_s"], STATE_BAND: states["state"]})
        bands = pd.concat([bands, cc_state], ignore_index=True).sort_values("time_s", kind="stable")
    band_names = tuple(c for c in bands.columns if c != "time_s")
    if band_names:
        panels.append(("state", band_names))
    heights = [
        1.8 if kind == "window" else 0.35 * len(names) + 0.4 if kind == "state" else 1.2 for kind, names in panels
    ]
    with style():
        fig = Figure(figsize=(width, sum(heights) + 0.7), layout="constrained")
        axes = list(
            np.atleast_1d(fig.subplots(len(panels), 1, sharex=True, height_ratios=heights, squeeze=False)[:, 0])
        )
        # Before the first RTT sample quiche logs its initial estimate (333 ms): not drawn.
        sampled = window["latest_rtt_ms"].notna()
        first_sample = float(window.loc[sampled, "time_s"].iloc[0]) if sampled.any() else math.inf
        change_times = [float(t) for t in states["time_s"]]
        for ax, (kind, names) in zip(axes, panels, strict=True):
            if kind == "window":
                for column, label, color, ls in (
                    # cwnd drawn last, over bytes in flight that often equals it.
                    ("bytes_in_flight", "bytes in flight", "#D55E00", ":"),
                    ("ssthresh", "ssthresh", "#000000", "--"),
                    ("cwnd_bytes", "cwnd", "#0072B2", "-"),
                ):
                    data = window[["time_s", column]].replace([np.inf, -np.inf], np.nan).dropna()
                    if len(data):
                        ax.step(
                            data["time_s"], data[column] / 1e3, where="post", label=label, color=color, linestyle=ls
                        )
                top = ax.get_ylim()[1] if ax.has_data() else 1.0
                for trigger, marker, color in (
                    ("reordering_threshold", "v", "#D55E00"),
                    ("time_threshold", "x", "#CC79A7"),
                ):
                    lost = losses[losses["trigger"] == trigger]
                    if len(lost):
                        label = f"lost ({trigger.replace('_threshold', '')}): {len(lost)}"
                        ax.plot(
                            lost["time_s"],
                            [top] * len(lost),
                            linestyle="none",
                            marker=marker,
                            markersize=4,
                            color=color,
                            label=label,
                            clip_on=False,
                        )
                rest = losses[~losses["trigger"].isin(["reordering_threshold", "time_threshold"])]
                if len(rest):
                    ax.plot(
                        rest["time_s"],
                        [top] * len(rest),
                        linestyle="none",
                        marker="o",
                        markersize=3,
                        color="#E69F00",
                        label=f"lost: {len(rest)}",
                        clip_on=False,
                    )
                ax.set_ylabel("KB")
                ax.set_ylim(bottom=0)
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(loc="upper left", ncols=3, fontsize=6)
            elif kind == "state":
                palette: dict[str, str] = {}
                for row, name in enumerate(names):
                    column = bands[["time_s", name]].dropna()
                    runs = _state_runs(column[name], column["time_s"], end)
                    for start, stop, value in runs:
                        color = palette.setdefault(value, _STORY_COLORS[len(palette) % len(_STORY_COLORS)])
                        ax.broken_barh(
                            [(start, max(stop - start, 0.0))],
                            (row - 0.35, 0.7),
                            facecolors=color,
                            alpha=0.55,
                            linewidth=0,
                        )
                        if stop - start >= 0.08 * max(end, 1e-9):
                            ax.annotate(
                                value, (start, row), fontsize=5, va="center", xytext=(2, 0), textcoords="offset points"
                            )
                ax.set_yticks(range(len(names)), list(names))
                ax.set_ylim(len(names) - 0.4, -0.6)
                ax.grid(False, axis="y")
                handles = [matplotlib.patches.Patch(facecolor=c, alpha=0.55, label=v) for v, c in palette.items()]
                ax.legend(
                    handles=handles,
                    loc="upper center",
                    bbox_to_anchor=(0.5, -0.3),
                    ncols=min(len(handles), 6),
                    fontsize=6,
                )
            else:
                lines = list(names)
                for i, name in enumerate(lines):
                    scale, label = _story_scale(name)
                    data = internals[["time_s", name]].replace([np.inf, -np.inf], np.nan).dropna()
                    ax.step(
                        data["time_s"],
                        data[name].astype(float) * scale,
                        where="post",
                        label=label,
                        color=_STORY_COLORS[i % len(_STORY_COLORS)],
                        linestyle=_STORY_LINESTYLES[i % len(_STORY_LINESTYLES)],
                    )
                if kind == "rtt":
                    for column, label in (("smoothed_rtt_ms", "quiche srtt"), ("latest_rtt_ms", "quiche latest")):
                        data = window[["time_s", column]].dropna()
                        data = data[data["time_s"] >= first_sample]
                        if len(data):
                            ax.step(
                                data["time_s"],
                                data[column],
                                where="post",
                                label=label,
                                color="0.6",
                                linewidth=0.6,
                                linestyle="-" if "srtt" in label else ":",
                            )
                if kind == "backlog":
                    # One line per level; bounds at the same level share it (Vegas-Linux: alpha = gamma).
                    levels: dict[float, list[str]] = {}
                    for bound in bounds:
                        level_series = internals[bound].dropna()
                        if len(level_series) and pd.api.types.is_numeric_dtype(level_series):
                            levels.setdefault(float(level_series.iloc[-1]), []).append(bound)
                    for (level, named), bls in zip(sorted(levels.items()), ("--", ":", "-."), strict=False):
                        ax.axhline(level, color="0.3", linestyle=bls, linewidth=0.8)
                        ax.annotate(
                            " = ".join(named), (1.0, level), xycoords=("axes fraction", "data"), fontsize=6, va="center"
                        )
                ax.set_ylabel(_STORY_TITLES.get(kind, ""))
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(loc="upper left", ncols=4, fontsize=6)
            for start, stop in _recovery_spans(states, end):
                ax.axvspan(start, stop, color="0.9", linewidth=0, zorder=0)
            for t in change_times:
                ax.axvline(t, color="0.7", linestyle=":", linewidth=0.5, zorder=0)
        axes[-1].set_xlabel("Time (s)")
        axes[-1].set_xlim(0, end if end > 0 else None)
        axes[0].set_title(title or trace.title or Path(trace.path).name)
        if not_drawn:
            fig.text(0.01, 0.0, "not drawn: " + ", ".join(not_drawn), fontsize=5, va="bottom")
    return fig


def _is_counter(values: pd.Series) -> bool:
    data = values.dropna().astype(float)
    return len(data) > 1 and bool((data.diff().dropna() >= 0).all())


def _recovery_spans(states: pd.DataFrame, end_s: float) -> list[tuple[float, float]]:
    if states.empty:
        return []
    times = [*list(states["time_s"]), end_s]
    return [
        (float(start), float(stop))
        for (start, state), stop in zip(states[["time_s", "state"]].itertuples(index=False), times[1:], strict=True)
        if state == "recovery"
    ]

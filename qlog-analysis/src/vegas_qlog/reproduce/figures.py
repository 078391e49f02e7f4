"""The report's figures: small PNGs in the papers' manner, made with
:mod:`vegas_qlog.plots` (bars, time series) and a sweep plot of its own."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .. import plots
from ..sim import SimOutputError, load_run
from ..stats import mean_ci
from .measures import bytes_at
from .results import Results, display

PNG_DPI = 110
MAX_POINTS = 250


# Fixed colours for the baselines; the others take the palette in the order
# they appear, so that no two algorithms of a figure share a colour.
FIXED_COLOURS = {"CUBIC": "#000000", "BBR2": "#999999", "NewReno": "#882255"}
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#332288", "#117733", "#44AA99", "#AA4499"]
HATCHES = ["", "///", "\\\\\\", "xxx", "...", "|||", "---", "+++", "oo", "**", "//", "\\\\"]


def _colours(labels: Sequence[str]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    free = iter(PALETTE * 2)
    for i, label in enumerate(dict.fromkeys(labels)):
        colour = FIXED_COLOURS.get(label) or next(free)
        out[label] = (colour, HATCHES[i % len(HATCHES)])
    return out


def restyle(fig: Figure) -> Figure:
    """Gives every labelled bar set and line of each axes its own colour (and hatch)
    and redraws the legend to match."""
    for ax in fig.axes:
        legend = ax.get_legend()
        container_labels = [c.get_label() for c in ax.containers if not str(c.get_label()).startswith("_")]
        line_labels = [ln.get_label() for ln in ax.get_lines() if not ln.get_label().startswith("_")]
        styles = _colours(container_labels + line_labels)
        with plots.style():
            for container in ax.containers:
                label = container.get_label()
                if label not in styles:
                    continue
                colour, hatch = styles[label]
                if hasattr(container, "patches"):
                    for patch in container.patches:
                        patch.set_facecolor(colour)
                        patch.set_hatch(hatch)
                else:  # error bars of a line
                    for artist in container.get_children():
                        artist.set_color(colour)
            for line in ax.get_lines():
                if line.get_label() in styles:
                    line.set_color(styles[line.get_label()][0])
            has_bars = any(hasattr(c, "patches") for c in ax.containers)
            if legend is not None and not has_bars:
                ax.legend(loc="best", ncol=2)
            elif legend is not None:
                for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=False):
                    if text.get_text() not in styles or handle is None:
                        continue
                    colour, hatch = styles[text.get_text()]
                    if isinstance(handle, Patch):
                        handle.set_facecolor(colour)
                        handle.set_hatch(hatch)
                    else:
                        handle.set_color(colour)
    return fig


def save_png(fig: Figure, out_dir: Path, name: str) -> Path:
    """Writes ``out_dir/name.png`` (small: one column wide, 110 dpi)."""
    restyle(fig)
    out_dir.mkdir(parents=True, exist_ok=True)
    with plots.style():
        path = out_dir / f"{name}.png"
        fig.savefig(path, format="png", dpi=PNG_DPI, metadata={"Software": None})
    return path


def agg_table(
    results: Results, experiment: str, metric: str, labels: Sequence[str], group: str | None = None
) -> pd.DataFrame:
    """Mean and CI half-width of ``metric`` per label (and per sweep point as
    ``group`` when given), in the form :func:`plots.plot_bars` reads."""
    rows = []
    table = results.rows(experiment)
    points = [None] if group is None else sorted(table["point"].dropna().unique())
    for point in points:
        for label in labels:
            part = results.rows(experiment, label, point)
            if part.empty or metric not in part.columns:
                continue
            ci = mean_ci(pd.to_numeric(part[metric], errors="coerce"))
            row: dict[str, Any] = {"algorithm": display(label), "value_mean": ci.mean, "value_ci_half": ci.half_width}
            if group is not None:
                row[group] = f"{point:g}"
            rows.append(row)
    return pd.DataFrame(rows)


def bars(
    results: Results,
    experiment: str,
    metric: str,
    labels: Sequence[str],
    *,
    ylabel: str,
    group: str | None = None,
    title: str | None = None,
    decimals: int = 2,
    ylim: tuple[float, float] | None = None,
) -> Figure | None:
    table = agg_table(results, experiment, metric, labels, group)
    if table.empty:
        return None
    fig = plots.plot_bars(
        table,
        value="value",
        bar="algorithm",
        group=group,
        ylabel=ylabel,
        title=title,
        decimals=decimals,
        ylim=ylim,
        annotate=len(table) <= 8,
    )
    if group is None and max(len(str(x)) for x in table["algorithm"]) > 8:
        with plots.style():
            for tick in fig.axes[0].get_xticklabels():
                tick.set_rotation(30)
                tick.set_horizontalalignment("right")
    return fig


def sweep(
    results: Results,
    experiment: str,
    metric: str,
    labels: Sequence[str],
    *,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    title: str | None = None,
) -> Figure | None:
    """Mean ± CI of ``metric`` against the sweep point, one line per algorithm."""
    fig, ax = plots.new_figure()
    drawn = False
    with plots.style():
        for label in labels:
            xs, ys, es = [], [], []
            rows = results.rows(experiment, label)
            if rows.empty or metric not in rows.columns:
                continue
            for point in sorted(rows["point"].dropna().unique()):
                ci = mean_ci(pd.to_numeric(results.rows(experiment, label, point)[metric], errors="coerce"))
                xs.append(point)
                ys.append(ci.mean)
                es.append(0.0 if math.isnan(ci.half_width) else ci.half_width)
            st = plots.algorithm_style(label)
            ax.errorbar(
                xs,
                ys,
                yerr=es,
                color=st["color"],
                linestyle=st["linestyle"],
                marker="o",
                markersize=2.5,
                capsize=2,
                elinewidth=0.7,
                label=display(label),
            )
            drawn = True
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        if title:
            ax.set_title(title)
        if drawn:
            ax.legend(loc="best", ncol=2)
    return fig if drawn else None


def _first_run(results: Results, experiment: str, label: str, point: float | None = None) -> Any:
    rows = results.rows(experiment, label, point)
    if rows.empty:
        return None
    row = rows.sort_values(["seed", "config"]).iloc[0]
    try:
        return load_run(row["directory"])
    except SimOutputError:
        return None


def binned_goodput(series: pd.DataFrame, bin_s: float, end_s: float) -> pd.DataFrame:
    """Goodput per ``bin_s`` interval from the cumulative bytes delivered."""
    edges = np.arange(0.0, end_s + 1e-9, bin_s)
    if len(edges) < 2:
        return pd.DataFrame({"time_s": [], "goodput_bps": []})
    delivered = np.array([bytes_at(series, t) for t in edges])
    rate = np.diff(delivered) * 8.0 / bin_s
    return pd.DataFrame({"time_s": edges[:-1], "goodput_bps": rate})


def thinned(series: pd.DataFrame, column: str, points: int = MAX_POINTS) -> pd.DataFrame:
    """At most about ``points`` samples of ``column``: means over equal time bins
    (keeps the figures small; a 1000 s run sampled every second is otherwise a
    dense scribble)."""
    data = series[["time_s", column]].dropna()
    if len(data) <= points:
        return data
    span = float(data["time_s"].max())
    step = span / points
    bins = (data["time_s"] // step).astype(int)
    grouped = data.groupby(bins).mean()
    return grouped.reset_index(drop=True)


def time_series(
    results: Results,
    experiment: str,
    labels: Sequence[str],
    *,
    kind: str,
    flow: str | None = None,
    bin_s: float = 1.0,
    packet_bytes: float = 1200.0,
    title: str | None = None,
    shade: Sequence[tuple[float, float]] = (),
) -> Figure | None:
    """Goodput (``kind="goodput"``, per ``bin_s``) or cwnd (``kind="cwnd"``) over
    time of the flow under test (or ``flow``), seed 1, one line per algorithm."""
    series: dict[str, pd.DataFrame] = {}
    for label in labels:
        run = _first_run(results, experiment, label)
        if run is None:
            continue
        name = flow or next(f["name"] for f in run.summary["flows"] if f.get("under_test"))
        try:
            data = run.flow_series(name)
        except SimOutputError:
            continue
        if kind == "goodput":
            end = float(run.summary.get("simulated_s", data["time_s"].max()))
            data = binned_goodput(data, max(bin_s, end / 100), end)
        else:
            data = thinned(data, "cwnd_bytes")
        series[display(label)] = data
    if not series:
        return None
    if kind == "goodput":
        fig = plots.plot_goodput(series, title=title)
    else:
        fig = plots.plot_cwnd(series, packet_bytes=packet_bytes, title=title)
    ax = fig.axes[0]
    with plots.style():
        for start, stop in shade:
            ax.axvspan(start, stop, color="0.9", linewidth=0, zorder=0)
        ax.legend(loc="best", ncol=2)
    return fig


def per_seed_goodput(
    results: Results,
    experiment: str,
    labels: Sequence[str],
    *,
    bin_s: float = 2.0,
    shade: Sequence[tuple[float, float]] = (),
) -> Figure | None:
    """Goodput per ``bin_s`` of the flow under test, one panel per algorithm
    and one thin line per seed: what a mean over seeds hides (a run that
    resumes late beside one that resumes at once)."""
    panels: list[tuple[str, list[pd.DataFrame]]] = []
    for label in labels:
        curves = []
        rows = results.rows(experiment, label)
        for _, row in rows.sort_values("seed").iterrows() if not rows.empty else ():
            try:
                run = load_run(row["directory"])
                name = next(f["name"] for f in run.summary["flows"] if f.get("under_test"))
                data = run.flow_series(name)
            except (SimOutputError, StopIteration):
                continue
            end = float(run.summary.get("simulated_s", data["time_s"].max()))
            curves.append(binned_goodput(data, bin_s, end))
        if curves:
            panels.append((display(label), curves))
    if not panels:
        return None
    fig, axes = plots.new_figure(size=(3.5, 1.1 * len(panels) + 0.4), rows=len(panels))
    axes = np.atleast_1d(axes)
    with plots.style():
        for ax, (name, curves) in zip(axes, panels, strict=True):
            for start, stop in shade:
                ax.axvspan(start, stop, color="0.9", linewidth=0, zorder=0)
            for data in curves:
                ax.plot(data["time_s"], data["goodput_bps"] / 1e6, linewidth=0.6, alpha=0.7, color="#0072B2")
            ax.set_ylabel("Mbit/s")
            ax.set_ylim(bottom=0)
            ax.set_title(f"{name} ({len(curves)} seeds)", fontsize="small")
        axes[-1].set_xlabel("Time (s)")
    return fig

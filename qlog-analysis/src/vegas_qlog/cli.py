"""The ``qlog-analysis`` command."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from . import __version__, metrics, plots, qvis
from .report import ci_strings
from .resume import resume_timeline
from .sim import UNDER_TEST, SimOutputError, SimRun, flows_table, load_runs, parameter_columns, runs_table
from .sqlog import QlogFormatError, Trace, read_qlog
from .stats import aggregate, mean_ci
from .sweep.cli import register as register_sweep

PROG = "qlog-analysis"


class UsageError(Exception):
    """A command line that names things that do not fit together."""


def _is_qlog_file(path: Path) -> bool:
    return path.is_file() and path.suffix in (".sqlog", ".qlog", ".json") and path.name != "summary.json"


def _split_inputs(paths: Sequence[str]) -> tuple[list[Path], list[Path]]:
    """Separates qlog files from simulator output directories (or summary.json files)."""
    qlogs, runs = [], []
    for text in paths:
        p = Path(text)
        if not p.exists():
            raise UsageError(f"{p}: no such file or directory")
        (qlogs if _is_qlog_file(p) else runs).append(p)
    return qlogs, runs


def trace_cc(trace: Trace) -> str | None:
    """The algorithm named in a trace's description (quiche apps: ``cc=vegas(...)``;
    the simulator: ``flow NAME (server), vegas(...)``)."""
    text = trace.description
    match = re.search(r"\bcc=([A-Za-z0-9_.-]+)", text) or re.search(r"\), ([A-Za-z0-9_.-]+)", text)
    return match.group(1) if match else None


def _trace_label(trace: Trace) -> str:
    cc = trace_cc(trace)
    stem = Path(trace.path).stem
    return f"{stem} ({cc})" if cc else stem


def _print_table(frame: pd.DataFrame, fmt: str) -> None:
    if fmt == "csv":
        frame.to_csv(sys.stdout, index=False)
    elif fmt == "json":
        json.dump(json.loads(frame.to_json(orient="records")), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
            sys.stdout.write(frame.to_string(index=False, na_rep="-") + "\n")


def _with_ci(agg: pd.DataFrame, column: str, label: str, scale: float, decimals: int) -> pd.Series:
    return ci_strings(agg, column, scale=scale, decimals=decimals).rename(label)


SUMMARY_VALUES = [
    # column, heading, scale, decimals
    ("goodput_bps", "goodput Mbit/s", 1e-6, 3),
    ("retransmission_ratio", "retrans %", 100.0, 2),
    ("completion_s", "complete s", 1.0, 2),
    ("mean_rtt_ms", "mean rtt ms", 1.0, 1),
    ("mean_queue_delay_ms", "queueing ms", 1.0, 1),
]


def _varies_within(frame: pd.DataFrame, by: list[str], column: str) -> bool:
    """Whether ``column`` takes more than one value inside some group of ``by``."""
    if column not in frame.columns or frame.empty:
        return False
    values = frame[column].astype(str)
    if not by:
        return values.nunique() > 1
    return bool((values.groupby([frame[b].astype(str) for b in by], sort=False).nunique() > 1).any())


def _split_grid(
    frame: pd.DataFrame, by: list[str], candidates: Sequence[str], pool: bool
) -> tuple[list[str], list[str]]:
    """``by`` plus every grid column of ``candidates`` that varies inside one of
    its groups (unless ``pool``); returns (the grouping, the grid columns added
    or, with ``pool``, pooled)."""
    varying = [c for c in candidates if c not in by and _varies_within(frame, by, c)]
    return (list(by), varying) if pool else (list(by) + varying, varying)


def _describe_values(values: pd.Series) -> str:
    distinct = sorted({_cell(v) for v in values} - {""}, key=_natural)
    if len(distinct) > 4:
        return f"{len(distinct)}: {distinct[0]} ... {distinct[-1]}"
    return ",".join(distinct)


def _natural(text: str) -> tuple[int, float | str]:
    try:
        return (0, float(text))
    except ValueError:
        return (1, text)


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def _pooled_column(frame: pd.DataFrame, groups: pd.DataFrame, by: list[str], columns: Sequence[str]) -> pd.Series:
    """Per row of ``groups`` (an aggregate of ``frame`` by ``by``), what its n
    pools: each of ``columns`` with more than one value in it, with the values,
    and how many flows of one run it holds when more than one."""
    keys = frame[by].map(_cell) if by else pd.DataFrame(index=frame.index)
    out = []
    for _, group in groups[by].iterrows():
        mask = pd.Series(True, index=frame.index)
        for b in by:
            mask &= keys[b] == _cell(group[b])
        part = frame[mask]
        pieces = []
        for column in columns:
            if column in part.columns and part[column].map(_cell).nunique() > 1:
                pieces.append(f"{column} {_describe_values(part[column])}")
        per_run = int(part.groupby("run").size().max()) if "run" in part.columns and len(part) else 1
        if per_run > 1:
            pieces.append(f"{per_run} flows/run")
        out.append("; ".join(pieces) or "-")
    return pd.Series(out, name="pooled")


def cmd_summary(args: argparse.Namespace) -> int:
    qlogs, run_paths = _split_inputs(args.paths)
    if run_paths:
        runs = load_runs(run_paths)
        flows = flows_table(runs)
        by = [c.strip() for c in args.by.split(",") if c.strip()]
        missing = [c for c in by if c not in flows.columns]
        if missing:
            raise UsageError(f"--by: no column {', '.join(missing)} (have: {', '.join(map(str, flows.columns))})")
        notes: list[str] = []
        tested = flows["role"] == UNDER_TEST
        background = int((~tested).sum())
        if args.flows == "under-test" and tested.any():
            flows = flows[tested].reset_index(drop=True)
            if background:
                notes.append(
                    f"flows: under test only ({background} background flow(s) left out; --flows all includes them)"
                )
        elif args.flows == "background":
            flows = flows[~tested].reset_index(drop=True)
            notes.append(f"flows: background only ({int(tested.sum())} flow(s) under test left out)")
        else:
            if args.flows == "under-test":
                notes.append("flows: no flow is marked under test, so every flow is shown")
            if "role" not in by and flows["role"].nunique() > 1 and not args.pool_flows:
                by.append("role")
                notes.append(
                    "flows under test and background flows are kept apart (column role; --pool-flows pools them)"
                )
        if flows.empty:
            raise UsageError("summary: no flow left to summarise (see --flows)")
        grid = parameter_columns(runs)
        by, varying = _split_grid(flows, by, grid, args.pool_grid)
        # Different parameters that no run.json names (runs made by hand with --cc-param).
        by, detail = _split_grid(flows, by, ["cc_detail"], args.pool_grid)
        varying += detail
        if varying:
            if args.pool_grid:
                notes.append(f"grid POOLED over: {', '.join(varying)} (asked with --pool-grid)")
            else:
                notes.append(f"grid points kept apart by: {', '.join(varying)} (--pool-grid pools them)")
        values = [v for v, *_ in SUMMARY_VALUES if v in flows.columns]
        agg = aggregate(flows, by, values, args.confidence)
        pooled = _pooled_column(flows, agg, by, ["seed", "name", "role", *grid, "cc_detail"])
        if args.format == "table":
            shown = agg[by].copy()
            shown["n"] = agg[f"{values[0]}_n"]
            shown["pooled"] = pooled.to_numpy()
            for column, heading, scale, decimals in SUMMARY_VALUES:
                if column in values:
                    shown[heading] = _with_ci(agg, column, heading, scale, decimals)
            _print_table(shown, "table")
            run_rows = runs_table(runs)
            # A run's Jain index is the run's: grouped by the algorithm under test (run_cc) where flows go by cc.
            mapped = [("run_cc" if b == "cc" else b) for b in by if b in run_rows.columns or b == "cc"]
            fair_by = list(dict.fromkeys(mapped)) or ["scenario"]
            fair_by, _ = _split_grid(run_rows, fair_by, grid, args.pool_grid)
            fair = aggregate(run_rows, fair_by, "jain_index", args.confidence)
            sys.stdout.write("\n")
            fair_shown = fair[fair_by].copy()
            fair_shown["runs"] = fair["jain_index_n"]
            fair_shown["pooled"] = _pooled_column(run_rows, fair, fair_by, ["seed", *grid]).to_numpy()
            fair_shown["jain index"] = _with_ci(fair, "jain_index", "jain index", 1.0, 4)
            _print_table(fair_shown, "table")
            level = round(args.confidence * 100)
            sys.stdout.write(
                f"\n{len(runs)} run(s); n counts flows, runs counts runs; pooled: what each row's n mixes; "
                f"± is the {level}% confidence interval over them (Student t)\n"
            )
            for note in notes:
                sys.stdout.write(f"{note}\n")
        else:
            agg.insert(len(by), "pooled", pooled.to_numpy())
            _print_table(agg, args.format)
            for note in notes:
                sys.stderr.write(f"{PROG}: {note}\n")
    if qlogs:
        rows = [metrics.trace_summary(read_qlog(p)) for p in qlogs]
        frame = pd.DataFrame(rows)
        if args.format == "table":
            shown = pd.DataFrame(
                {
                    "file": [Path(p).name for p in frame["path"]],
                    "side": frame["vantage_point"],
                    "events": frame["events"],
                    "complete": frame["complete"],
                    "duration s": frame["duration_s"].round(3),
                    "delivered MB": (frame["bytes_delivered"] / 1e6).round(3),
                    "goodput Mbit/s": (frame["goodput_bps"] / 1e6).round(3),
                    "retrans %": (frame["retransmission_ratio"] * 100).round(2),
                    "lost pkts": frame["packets_lost"],
                    "mean srtt ms": frame["mean_srtt_ms"].round(1),
                }
            )
            if run_paths:
                sys.stdout.write("\n")
            _print_table(shown, "table")
        else:
            _print_table(frame, args.format)
    return 0


def _formats(text: str) -> list[str]:
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    for fmt in formats:
        if fmt not in ("png", "svg", "pdf"):
            raise UsageError(f"--format: unknown format {fmt!r} (png, svg, pdf)")
    return formats


def _plot_run(run: SimRun, out: Path, formats: list[str], packet_bytes: float | None, smooth_s: float) -> list[Path]:
    written: list[Path] = []
    base = f"{Path(run.scenario).stem}-seed{run.seed}" if run.seed is not None else run.path.name
    flows = {
        n if n == c else f"{n} ({c})": run.flow_series(n)
        for n, c in zip(run.flows["name"], run.flows["cc"], strict=True)
    }
    title = Path(run.scenario).stem
    written += plots.save_figure(
        plots.plot_cwnd(flows, packet_bytes=packet_bytes, title=title), out / f"{base}-cwnd", formats
    )
    goodputs = {label: metrics.smoothed_goodput(frame, smooth_s) for label, frame in flows.items()}
    written += plots.save_figure(
        plots.plot_goodput(goodputs, title=_smoothed_title(title, smooth_s)), out / f"{base}-goodput", formats
    )
    queues = {}
    for link in run.links.get("name", pd.Series(dtype=str)):
        try:
            queues[str(link)] = run.queue_series(str(link))
        except SimOutputError:
            continue
    if queues:
        fig = plots.plot_time_series(queues, "queue_packets", ylabel="Queue (packets)", title=title)
        written += plots.save_figure(fig, out / f"{base}-queue", formats)
    return written


def _smoothed_title(title: str | None, smooth_s: float) -> str:
    what = f"goodput over the last {smooth_s:g} s" if smooth_s > 0 else "goodput per sample"
    return f"{title}: {what}" if title else what


def cmd_plot(args: argparse.Namespace) -> int:
    formats = _formats(args.format)
    if not (args.smooth >= 0 and math.isfinite(args.smooth)):
        raise UsageError(f"--smooth: expected a number of seconds >= 0, got {args.smooth}")
    qlogs, run_paths = _split_inputs(args.paths)
    if args.output is None and run_paths:
        raise UsageError("plot: -o DIR is needed for simulator runs (only .sqlog figures go next to their file)")
    out = Path(args.output) if args.output is not None else Path(".")
    written: list[Path] = []
    if run_paths:
        runs = load_runs(run_paths)
        if len(runs) == 1:
            written += _plot_run(runs[0], out, formats, args.packet_bytes, args.smooth)
        else:
            # The flows under test of the first run of each algorithm, side by side.
            series: dict[str, pd.DataFrame] = {}
            for run in runs:
                label = run.under_test_cc or run.path.name
                if label in series:
                    continue
                tested = [f["name"] for f in run.summary["flows"] if f.get("under_test")] or run.flow_names[:1]
                series[label] = run.flow_series(tested[0])
            scenario = Path(runs[0].scenario).stem
            fig = plots.plot_cwnd(series, packet_bytes=args.packet_bytes, title=scenario)
            written += plots.save_figure(fig, out / f"{scenario}-cwnd", formats)
        flows = flows_table(runs)
        tested = flows[flows["under_test"].astype(bool)] if "under_test" in flows.columns else flows
        if tested.empty:
            tested = flows
        agg = aggregate(tested, ["cc"], "goodput_bps", args.confidence)
        scenario = Path(runs[0].scenario).stem
        written += plots.save_figure(
            plots.plot_throughput_bars(agg, title=scenario), out / f"{scenario}-throughput", formats
        )
        table = runs_table(runs)
        table["run_cc"] = table["run_cc"].fillna("mixed")
        fair = aggregate(table, ["run_cc"], "jain_index", args.confidence)
        if fair["jain_index_mean"].notna().any():
            written += plots.save_figure(
                plots.plot_fairness_bars(fair, title=scenario), out / f"{scenario}-fairness", formats
            )
    if qlogs:
        traces = [read_qlog(p) for p in qlogs]
        for trace in traces:
            stem = Path(trace.path).stem
            where = out if args.output is not None else Path(trace.path).parent
            written += plots.save_figure(
                plots.plot_story(trace, title=f"{_trace_label(trace)}: the controller's story"),
                where / f"{stem}-story",
                formats,
            )
            written += plots.save_figure(
                plots.plot_trace(trace, title=_trace_label(trace)), where / f"{stem}-trace", formats
            )
            fig = plots.plot_internals(trace, title=f"{_trace_label(trace)}: internals")
            if fig is not None:
                written += plots.save_figure(fig, where / f"{stem}-internals", formats)
        if len(traces) > 1:
            if args.output is None:
                out = Path(traces[0].path).parent
            series = {_trace_label(t): metrics.window_series(t) for t in traces}
            written += plots.save_figure(plots.plot_cwnd(series, packet_bytes=args.packet_bytes), out / "cwnd", formats)
            goodputs = {
                _trace_label(t): metrics.smoothed_goodput(metrics.goodput_series(t, args.interval), args.smooth)
                for t in traces
            }
            written += plots.save_figure(
                plots.plot_goodput(goodputs, title=_smoothed_title(None, args.smooth)), out / "goodput", formats
            )
    for path in written:
        sys.stdout.write(f"{path}\n")
    return 0


def cmd_to_qvis(args: argparse.Namespace) -> int:
    inputs = [Path(p) for p in args.files]
    directories = [p for p in inputs if p.is_dir()]
    for p in inputs:
        if not p.is_file() and not p.is_dir():
            raise UsageError(f"{p}: no such file or directory")
    if directories and args.output:
        raise UsageError("to-qvis: -o takes files only; a directory gives one NAME-qvis.qlog per connection")
    files = [p for p in inputs if p.is_file()]
    jobs = [(files, Path(args.output))] if args.output else qvis.file_jobs(files)
    for directory in directories:
        found = qvis.directory_jobs(directory)
        if not found:
            raise UsageError(f"{directory}: no .sqlog file in it or below")
        jobs += found
    for sources, target in jobs:
        written, traces = qvis.write_qvis(sources, target, strict=args.strict)
        events = sum(len(t.events) for t in traces)
        skipped = sum(len(t.problems) for t in traces)
        note = f", {skipped} bad record(s) skipped" if skipped else ""
        sys.stdout.write(f"{written}: {len(traces)} trace(s), {events} events{note}\n")
    return 0


def cmd_fairness(args: argparse.Namespace) -> int:
    qlogs, run_paths = _split_inputs(args.paths)
    if run_paths:
        runs = load_runs(run_paths)
        table = runs_table(runs)
        table["run_cc"] = table["run_cc"].fillna("mixed")
        by = [c.strip() for c in args.by.split(",") if c.strip()]
        by, varying = _split_grid(table, by, parameter_columns(runs), args.pool_grid)
        agg = aggregate(table, by, "jain_index", args.confidence)
        if args.format == "table":
            _print_table(table[["run", "scenario", "seed", "run_cc", "jain_index"]], "table")
            sys.stdout.write("\n")
            shown = agg[by].copy()
            shown["runs"] = agg["jain_index_n"]
            shown["pooled"] = _pooled_column(table, agg, by, ["seed", *parameter_columns(runs)]).to_numpy()
            shown["jain index"] = _with_ci(agg, "jain_index", "jain index", 1.0, 4)
            _print_table(shown, "table")
            if varying:
                what = "POOLED over" if args.pool_grid else "kept apart by"
                sys.stdout.write(f"grid points {what}: {', '.join(varying)}\n")
        else:
            _print_table(agg, args.format)
        if args.plot:
            for path in plots.save_figure(
                plots.plot_fairness_bars(agg, bar=by[-1], group=by[0] if len(by) > 1 else None),
                args.plot,
                _formats(args.format_plot),
            ):
                sys.stdout.write(f"{path}\n")
    if qlogs:
        traces = [read_qlog(p) for p in qlogs]
        goodputs = [metrics.trace_summary(t)["goodput_bps"] for t in traces]
        for trace, goodput in zip(traces, goodputs, strict=True):
            sys.stdout.write(f"{Path(trace.path).name}: goodput {goodput / 1e6:.3f} Mbit/s\n")
        sys.stdout.write(f"jain index of {len(traces)} flow(s): {metrics.jain_index(goodputs):.4f}\n")
    return 0


def cmd_series(args: argparse.Namespace) -> int:
    trace = read_qlog(args.file)
    kinds = {
        "metrics": lambda: metrics.recovery_metrics(trace),
        "window": lambda: metrics.window_series(trace),
        "internals": lambda: metrics.cc_internals(trace),
        "states": lambda: metrics.congestion_states(trace),
        "goodput": lambda: metrics.goodput_series(trace, args.interval),
        "sent": lambda: metrics.stream_bytes_sent(trace),
    }
    frame = kinds[args.kind]()
    if args.output:
        frame.to_csv(args.output, index=False)
        sys.stdout.write(f"{args.output}: {len(frame)} rows\n")
    else:
        frame.to_csv(sys.stdout, index=False)
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    rows = []
    for path in args.files:
        timeline = resume_timeline(read_qlog(path))
        rows.append({"file": str(path), **timeline.as_dict()})
    sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    return 0


def cmd_ci(args: argparse.Namespace) -> int:
    ci = mean_ci(args.values, args.confidence)
    level = round(args.confidence * 100)
    sys.stdout.write(f"mean {ci.mean:.6g}  n {ci.n}  std {ci.std:.6g}  {level}% CI [{ci.low:.6g}, {ci.high:.6g}]\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Analyse quiche-vegas qlogs and vegas-sim outputs: summaries, fairness, figures, qvis files.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("summary", help="table of a simulator run (or many: mean ± CI) and/or of .sqlog files")
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="vegas-sim output directories (searched below) or .sqlog files"
    )
    p.add_argument(
        "--by",
        default="scenario,name,cc",
        help="flow columns to group runs by (default: %(default)s); grid parameters that vary inside a group "
        "(the run's --set keys, cc.PARAM, set, cc_params) are added unless --pool-grid",
    )
    p.add_argument(
        "--flows",
        choices=["under-test", "all", "background"],
        default="under-test",
        help="which flows of each run (default: %(default)s; all keeps the two roles apart unless --pool-flows)",
    )
    p.add_argument("--pool-grid", action="store_true", help="pool different grid points into one row (stated)")
    p.add_argument("--pool-flows", action="store_true", help="with --flows all: pool both roles into one row")
    p.add_argument(
        "--confidence", type=float, default=0.95, help="confidence level of the intervals (default: %(default)s)"
    )
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.set_defaults(func=cmd_summary)

    p = sub.add_parser("plot", help="figures (PNG and SVG) of simulator runs and/or .sqlog files")
    p.add_argument("paths", nargs="+", metavar="PATH", help="vegas-sim output directories or .sqlog files")
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="directory for the figures (needed for runs; default for .sqlog files: next to each file)",
    )
    p.add_argument("--format", default="png,svg", help="comma-separated: png, svg, pdf (default: %(default)s)")
    p.add_argument(
        "--packet-bytes", type=float, default=None, metavar="N", help="draw cwnd in packets of N bytes instead of KB"
    )
    p.add_argument(
        "--interval",
        type=float,
        default=0.5,
        metavar="S",
        help="goodput interval for .sqlog files (default: %(default)s s)",
    )
    p.add_argument(
        "--smooth",
        type=float,
        default=1.0,
        metavar="S",
        help="goodput plots show the rate over the last S seconds at each sample, for every input "
        "(simulator runs and .sqlog files; 0: per sample; default: %(default)s s)",
    )
    p.add_argument("--confidence", type=float, default=0.95)
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser(
        "to-qvis",
        help="convert quiche 0.30 .sqlog files into a file qvis loads "
        "(X.sqlog named or found in a directory: X-qvis.qlog beside it; the simulator's "
        "NAME-client.sqlog and NAME-server.sqlog together: NAME-qvis.qlog)",
    )
    p.add_argument("files", nargs="+", metavar="FILE|DIR")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="output file; with several inputs, all their traces go into it (default: FILE with .qlog, one per input)",
    )
    p.add_argument("--strict", action="store_true", help="fail on the first bad record instead of skipping it")
    p.set_defaults(func=cmd_to_qvis)

    p = sub.add_parser("fairness", help="Jain's fairness index of runs (mean ± CI per group) or of .sqlog flows")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument(
        "--by",
        default="scenario,run_cc",
        help="run columns to group by (default: %(default)s); varying grid parameters are added unless --pool-grid",
    )
    p.add_argument("--pool-grid", action="store_true", help="pool different grid points into one row (stated)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.add_argument("--plot", metavar="OUT_BASE", help="also draw the fairness bars to OUT_BASE.png/.svg")
    p.add_argument("--format-plot", default="png,svg", help="formats of --plot (default: %(default)s)")
    p.set_defaults(func=cmd_fairness)

    p = sub.add_parser("series", help="one time series of a .sqlog as CSV")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--kind", choices=["metrics", "window", "internals", "states", "goodput", "sent"], default="window")
    p.add_argument("--interval", type=float, default=0.1, metavar="S", help="goodput interval (default: %(default)s s)")
    p.add_argument("-o", "--output", metavar="CSV")
    p.set_defaults(func=cmd_series)

    p = sub.add_parser(
        "resume", help="Careful Resume timeline of server .sqlog files: phases, last new data, tail, losses (JSON)"
    )
    p.add_argument("files", nargs="+", metavar="SQLOG")
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("ci", help="mean and confidence interval of numbers given on the command line")
    p.add_argument("values", nargs="+", type=float)
    p.add_argument("--confidence", type=float, default=0.95)
    p.set_defaults(func=cmd_ci)

    register_sweep(sub)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(f"{PROG}: warning: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (QlogFormatError, SimOutputError, UsageError, KeyError, ValueError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        sys.stderr.write(f"{PROG}: error: {message}\n")
        return 1
    finally:
        warnings.showwarning = previous


if __name__ == "__main__":
    sys.exit(main())

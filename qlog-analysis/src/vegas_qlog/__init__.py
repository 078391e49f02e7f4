"""Analysis of quiche-vegas qlogs and vegas-sim outputs.

Reading:
    :func:`read_qlog` (quiche 0.30 ``.sqlog``, and older qlog forms),
    :func:`load_run` / :func:`load_runs` / :func:`find_runs` (simulator output
    directories), :func:`flows_table` / :func:`runs_table` (many runs as one table).
Computing:
    :mod:`vegas_qlog.metrics` (series from qlogs, :func:`jain_index`,
    :func:`retransmission_ratio`), :func:`mean_ci` / :func:`aggregate` (over seeds).
Drawing:
    :mod:`vegas_qlog.plots` (cwnd over time, throughput and fairness bars, ...).
Writing:
    :func:`ci_strings` ("mean ± CI" cells), :func:`markdown_table`.
qvis:
    :func:`to_qvis` / :func:`write_qvis`.
"""

from . import plots
from .metrics import (
    cc_internals,
    congestion_states,
    delivered_bytes,
    goodput_series,
    jain_index,
    packet_losses,
    recovery_metrics,
    retransmission_ratio,
    stream_bytes_sent,
    time_to_reach,
    trace_summary,
    window_series,
)
from .qvis import to_qvis, write_qvis
from .report import ci_strings, markdown_table
from .sim import (
    SimOutputError,
    SimOutputWarning,
    SimRun,
    find_runs,
    flows_table,
    load_run,
    load_runs,
    read_series_csv,
    read_summary,
    runs_table,
)
from .sqlog import Event, Problem, QlogFormatError, QlogWarning, Trace, read_qlog, read_qlog_traces
from .stats import MeanCI, aggregate, mean_ci

__version__ = "0.1.0"

__all__ = [
    "Event",
    "MeanCI",
    "Problem",
    "QlogFormatError",
    "QlogWarning",
    "SimOutputError",
    "SimOutputWarning",
    "SimRun",
    "Trace",
    "__version__",
    "aggregate",
    "cc_internals",
    "ci_strings",
    "congestion_states",
    "delivered_bytes",
    "find_runs",
    "flows_table",
    "goodput_series",
    "jain_index",
    "load_run",
    "load_runs",
    "markdown_table",
    "mean_ci",
    "packet_losses",
    "plots",
    "read_qlog",
    "read_qlog_traces",
    "read_series_csv",
    "read_summary",
    "recovery_metrics",
    "retransmission_ratio",
    "runs_table",
    "stream_bytes_sent",
    "time_to_reach",
    "to_qvis",
    "trace_summary",
    "window_series",
    "write_qvis",
]

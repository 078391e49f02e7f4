"""The numbers taken from each run, per experiment.

Every measure reads the run's ``summary.json`` and CSV series, and takes
its time windows from the scenario *as run* (the file with the run's
``--set`` applied): the start and stop of the cross traffic, the times of
the link changes, the duration. So the quick plan, which scales every time
down, measures the same things over its shorter windows.

Units are the ones the papers use: KB/s and KB (1 KB = 1000 bytes) for
004, Mbit/s for 000, 001 and 003, kbit/s for 002; goodput is the
application data delivered (no QUIC, UDP or IP headers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..metrics import jain_index, time_to_reach
from ..sim import SimRun

# Bottleneck utilisation that counts as "full", and for how long it must last.
FULL_UTILIZATION = 0.95
FULL_HOLD_S = 1.0
# The averaging window of "first reaches": how a reader smooths a throughput
# figure (003's "first at 95% after 6.4 s").
SMOOTH_S = 1.0
# 001-F5: the flow has regained the link when its goodput over this window
# reaches this share of the bottleneck's rate.
REGAIN_WINDOW_S = 2.0
REGAIN_SHARE = 0.5


def _flow(run: SimRun, name: str) -> dict[str, Any]:
    for flow in run.summary["flows"]:
        if flow["name"] == name:
            return flow
    raise KeyError(f"{run.path}: no flow {name!r}")


def _under_test(run: SimRun) -> list[dict[str, Any]]:
    return [f for f in run.summary["flows"] if f.get("under_test")]


def _others(run: SimRun) -> list[dict[str, Any]]:
    return [f for f in run.summary["flows"] if not f.get("under_test")]


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else math.nan


def bytes_at(series: pd.DataFrame, t: float) -> float:
    """Bytes delivered by time ``t`` (linear between samples, 0 before the first)."""
    data = series[["time_s", "bytes_delivered"]].dropna()
    if data.empty:
        return math.nan
    times = np.concatenate([[0.0], data["time_s"].to_numpy(dtype=float)])
    values = np.concatenate([[0.0], data["bytes_delivered"].to_numpy(dtype=float)])
    return float(np.interp(t, times, values))


def window_goodput_bps(series: pd.DataFrame, start: float, stop: float) -> float:
    """Goodput over ``(start, stop]`` from the cumulative bytes delivered."""
    if stop <= start:
        return math.nan
    return (bytes_at(series, stop) - bytes_at(series, start)) * 8.0 / (stop - start)


def window_mean(series: pd.DataFrame, column: str, start: float, stop: float) -> float:
    """Mean of ``column`` over the samples taken in ``(start, stop]``."""
    times = series["time_s"]
    values = series.loc[(times > start + 1e-9) & (times <= stop + 1e-9), column].dropna()
    return float(values.mean()) if len(values) else math.nan


def _cross(table: dict[str, Any], name: str) -> dict[str, Any]:
    return table["cross_traffic"][name]


def _changes(table: dict[str, Any]) -> list[float]:
    return sorted({float(c["at_s"]) for c in table.get("changes", [])})


def _queue_ms(flows: list[dict[str, Any]]) -> float:
    values = [_num(f.get("mean_queue_delay_ms")) for f in flows]
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan


def _retx_ratio(flows: list[dict[str, Any]]) -> float:
    retx = sum(_num(f["bytes_retransmitted"]) for f in flows)
    delivered = sum(_num(f["bytes_delivered"]) for f in flows)
    total = retx + delivered
    return retx / total if total > 0 else math.nan


def _handed(flows: list[dict[str, Any]], key: str) -> float:
    """How many values of one extension reached the controllers (the summary's ``extensions``)."""
    values = [f.get("extensions", {}).get(key) for f in flows if isinstance(f.get("extensions"), dict)]
    return float(sum(v for v in values if isinstance(v, int | float))) if values else math.nan


def _common(run: SimRun) -> dict[str, float]:
    tested = _under_test(run)
    return {
        "queue_ms": _queue_ms(tested),
        "retx_ratio": _retx_ratio(tested),
        "jain": run.jain_index,
        # A flow under test ended early (for example its idle timeout closed it).
        "closed": float(any(f.get("failure") for f in tested)),
        "aqt_handed": _handed(tested, "backward_queueing_handed"),
        "receive_times_handed": _handed(tested, "receive_times_handed"),
    }


def _retx_at(run: SimRun, flow: dict[str, Any], t: float) -> float:
    """Bytes the flow had retransmitted ``t`` seconds after its start."""
    series = run.flow_series(flow["name"])
    data = series[["time_s", "bytes_retransmitted"]].dropna()
    at = data[data["time_s"] <= float(flow.get("start_s", 0.0)) + t + 1e-9]
    return float(at["bytes_retransmitted"].iloc[-1]) if len(at) else 0.0


def one_on_one(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    large, small = _flow(run, "large"), _flow(run, "small")
    total_retx = _num(large["bytes_retransmitted"]) + _num(small["bytes_retransmitted"])
    early = _retx_at(run, large, 2.0) + _retx_at(run, small, 2.0)
    out = _common(run)
    out["early_retx_share"] = early / total_retx if total_retx > 0 else math.nan
    out.update(
        large_kBps=_num(large["goodput_bps"]) / 8e3,
        small_kBps=_num(small["goodput_bps"]) / 8e3,
        large_retx_KB=_num(large["bytes_retransmitted"]) / 1e3,
        small_retx_KB=_num(small["bytes_retransmitted"]) / 1e3,
        total_retx_KB=(_num(large["bytes_retransmitted"]) + _num(small["bytes_retransmitted"])) / 1e3,
        completed=float(large.get("completion_s") is not None and small.get("completion_s") is not None),
    )
    return out


def background(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    transfer = _flow(run, "transfer")
    others = [f for f in run.summary["flows"] if f["name"].startswith("background")]
    out = _common(run)
    out.update(
        transfer_kBps=_num(transfer["goodput_bps"]) / 8e3,
        transfer_retx_KB=_num(transfer["bytes_retransmitted"]) / 1e3,
        background_kBps=float(np.mean([_num(f["goodput_bps"]) for f in others])) / 8e3 if others else math.nan,
        completed=float(transfer.get("completion_s") is not None),
    )
    return out


def vegas_l(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    tested = _under_test(run)[0]
    reno = _others(run)[0]
    out = _common(run)
    out.update(test_mbps=_num(tested["goodput_bps"]) / 1e6, reno_mbps=_num(reno["goodput_bps"]) / 1e6)
    return out


def single_flow(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    tested = _under_test(run)[0]
    out = _common(run)
    out.update(goodput_mbps=_num(tested["goodput_bps"]) / 1e6)
    return out


def first_reach(times: np.ndarray, values: np.ndarray, level: float, after: float, until: float) -> float:
    """First time in ``(after, until]`` at which ``values`` reach ``level`` (NaN: never)."""
    sel = (times > after + 1e-9) & (times <= until + 1e-9) & (values >= level)
    return float(times[sel][0]) if sel.any() else math.nan


def smoothed(series: pd.DataFrame, column: str, window_s: float) -> tuple[np.ndarray, np.ndarray]:
    """``column`` averaged over the trailing ``window_s`` at every sample time."""
    data = series[["time_s", column]].dropna()
    times = data["time_s"].to_numpy(dtype=float)
    if len(times) < 2:
        return times, data[column].to_numpy(dtype=float)
    step = float(np.median(np.diff(times)))
    k = max(1, round(window_s / step)) if step > 0 else 1
    values = data[column].rolling(k, min_periods=k).mean().to_numpy(dtype=float)
    return times, values


def trailing_goodput_bps(series: pd.DataFrame, window_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Goodput over the trailing ``window_s`` at every sample time."""
    data = series[["time_s", "bytes_delivered"]].dropna()
    times = data["time_s"].to_numpy(dtype=float)
    rates = np.array([window_goodput_bps(series, t - window_s, t) if t >= window_s else math.nan for t in times])
    return times, rates


def reverse(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    tested = _under_test(run)[0]
    series = run.flow_series(tested["name"])
    cbr = _cross(table, "d2-s2")
    start, stop, end = float(cbr["start_s"]), float(cbr["stop_s"]), float(table["duration_s"])
    rate = float(table["links"]["bottleneck"]["rate_mbps"]) * 1e6
    times, rates = trailing_goodput_bps(series, REGAIN_WINDOW_S)
    # Counted from the CBR's stop, once a full window lies after it.
    regain = first_reach(times, rates, REGAIN_SHARE * rate, stop + REGAIN_WINDOW_S, end)
    out = _common(run)
    out.update(
        goodput_mbps=_num(tested["goodput_bps"]) / 1e6,
        during_mbps=window_goodput_bps(series, start, stop) / 1e6,
        after_mbps=window_goodput_bps(series, stop, end) / 1e6,
        t_regain_s=regain - stop if not math.isnan(regain) else math.nan,
        regained=float(not math.isnan(regain)),
    )
    return out


def five_flow(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    flows = run.summary["flows"]
    out = _common(run)
    out.update(total_mbps=sum(_num(f["goodput_bps"]) for f in flows) / 1e6)
    return out


def rtt_fairness(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    short, long = _flow(run, "short-rtt"), _flow(run, "long-rtt")
    out = _common(run)
    out.update(
        short_mbps=_num(short["goodput_bps"]) / 1e6,
        long_mbps=_num(long["goodput_bps"]) / 1e6,
        total_mbps=(_num(short["goodput_bps"]) + _num(long["goodput_bps"])) / 1e6,
    )
    return out


def friendliness(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    pair = sum(_num(f["goodput_bps"]) for f in _under_test(run)) / 1e6
    reno = sum(_num(f["goodput_bps"]) for f in _others(run)) / 1e6
    out = _common(run)
    out.update(pair_mbps=pair, reno_pair_mbps=reno, reno_share=reno / (pair + reno) if pair + reno > 0 else math.nan)
    return out


def _vbr_start(table: dict[str, Any]) -> float:
    starts = [float(c.get("start_s", 0.0)) for c in table.get("cross_traffic", {}).values()]
    return min(starts) if starts else math.nan


def rovegas_single(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    tested = _under_test(run)[0]
    series = run.flow_series(tested["name"])
    start, end = _vbr_start(table), float(table["duration_s"])
    out = _common(run)
    out.update(
        goodput_kbps=_num(tested["goodput_bps"]) / 1e3,
        during_kbps=window_goodput_bps(series, start, end) / 1e3,
        before_util=window_mean(run.queue_series("r1-r2"), "utilization", start / 5, start),
    )
    return out


def rovegas_sweep(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    tested = _under_test(run)[0]
    out = _common(run)
    out.update(goodput_kbps=_num(tested["goodput_bps"]) / 1e3)
    return out


def compatibility(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    start, end = _vbr_start(table), float(table["duration_s"])

    def during(flows: list[dict[str, Any]]) -> list[float]:
        return [window_goodput_bps(run.flow_series(f["name"]), start, end) / 1e3 for f in flows]

    def before(flows: list[dict[str, Any]]) -> list[float]:
        return [window_goodput_bps(run.flow_series(f["name"]), 0.0, start) for f in flows]

    tested, vegas = _under_test(run), _others(run)
    out = _common(run)
    out.update(
        test_pair_during_kbps=sum(during(tested)),
        vegas_pair_during_kbps=sum(during(vegas)),
        jain_before=jain_index(before(tested) + before(vegas)),
    )
    return out


def _time_to_full(queue: pd.DataFrame, after: float, until: float) -> tuple[float, float]:
    """Seconds from ``after`` until the bottleneck is fully used (censored at
    ``until``), and 1.0 if it was reached, else 0.0."""
    window = queue[queue["time_s"] <= until + 1e-9]
    t = time_to_reach(window, "utilization", FULL_UTILIZATION, hold_s=FULL_HOLD_S, after_s=after + 1e-9)
    if math.isnan(t):
        return until - after, 0.0
    # A sample covers the interval ending at its time.
    interval = float(queue["time_s"].diff().median()) if len(queue) > 1 else 0.0
    return max(0.0, t - interval - after), 1.0


def path_rtt_s(table: dict[str, Any], flow: str, changed_at: float | None = None) -> float:
    """The flow's propagation round trip from the scenario (with the link
    changes up to ``changed_at`` applied)."""
    spec = table["flows"][flow]
    delays = {name: float(link.get("delay_ms", 0.0)) for name, link in table["links"].items()}
    if changed_at is not None:
        for change in sorted(table.get("changes", []), key=lambda c: float(c["at_s"])):
            if float(change["at_s"]) <= changed_at and "delay_ms" in change:
                delays[change["link"]] = float(change["delay_ms"])
    one_way = sum(delays[n] for n in spec["forward_path"]) + sum(delays[n] for n in spec["return_path"])
    return (one_way + 2 * float(spec.get("access_delay_ms", 0.0))) / 1e3


def bdp_packets(table: dict[str, Any], rate_mbps: float, rtt_s: float) -> float:
    """Datagrams (wire size) in flight at ``rate_mbps`` over ``rtt_s``."""
    wire = float(table.get("max_datagram_bytes", 1350)) + float(table.get("header_bytes", 28))
    return rate_mbps * 1e6 * rtt_s / (8 * wire)


def _cwnd_packets(series: pd.DataFrame, table: dict[str, Any], start: float, stop: float) -> float:
    return window_mean(series, "cwnd_bytes", start, stop) / float(table.get("max_datagram_bytes", 1350))


def cbr_step(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    tested = _under_test(run)[0]
    queue = run.queue_series("g1-g2")
    cbr = _cross(table, "s2-r2")
    start, stop, end = float(cbr["start_s"]), float(cbr["stop_s"]), float(table["duration_s"])
    t_full, reached = _time_to_full(queue, 0.0, start)
    t_back, back = _time_to_full(queue, stop, end)
    # As a reader takes it from a figure: the first time the utilisation,
    # averaged over SMOOTH_S, reaches the level (censored: NaN and 0).
    times, util = smoothed(queue, "utilization", SMOOTH_S)
    first = first_reach(times, util, FULL_UTILIZATION, 0.0, start)
    again = first_reach(times, util, FULL_UTILIZATION, stop + SMOOTH_S, end)
    out = _common(run)
    out.update(
        goodput_mbps=_num(tested["goodput_bps"]) / 1e6,
        t_full_s=t_full,
        reached_full=reached,
        t_first_s=first,
        reached_first=float(not math.isnan(first)),
        util_cbr=window_mean(queue, "utilization", start, stop),
        t_recover_s=t_back,
        recovered=back,
        t_back_s=again - stop if not math.isnan(again) else math.nan,
        back_first=float(not math.isnan(again)),
    )
    # Before the CBR: how full the link is and the window against the path's BDP.
    series = run.flow_series(tested["name"])
    half = start / 2
    early, late = _cwnd_packets(series, table, half - 1, half), _cwnd_packets(series, table, start - 1, start)
    out.update(
        util_pre_cbr=window_mean(queue, "utilization", half, start),
        cwnd_pre_cbr_pkts=_cwnd_packets(series, table, half, start),
        growth_pkts_per_s=(late - early) / (start - half) if start > half else math.nan,
        bdp_pkts=bdp_packets(table, float(table["links"]["g1-g2"]["rate_mbps"]), path_rtt_s(table, tested["name"])),
    )
    return out


def route_change(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    tested = _under_test(run)[0]
    series = run.flow_series(tested["name"])
    queue = run.queue_series("g1-g2")
    changes = _changes(table)
    out = _common(run)
    out["goodput_mbps"] = _num(tested["goodput_bps"]) / 1e6
    if len(changes) >= 2:
        c1, c2 = changes[0], changes[1]
        before = window_mean(series, "cwnd_bytes", c1 - (c2 - c1) / 5, c1)
        during = window_mean(series, "cwnd_bytes", c1, c2)
        rtt_old = path_rtt_s(table, tested["name"])
        rtt_new = path_rtt_s(table, tested["name"], changed_at=c1)
        new_rate = max(
            (float(c["rate_mbps"]) for c in table.get("changes", []) if float(c["at_s"]) == c1 and "rate_mbps" in c),
            default=float(table["links"]["g1-g2"]["rate_mbps"]),
        )
        packet = float(table.get("max_datagram_bytes", 1350))
        out.update(
            change_mbps=window_goodput_bps(series, c1, c2) / 1e6,
            util_change=window_mean(queue, "utilization", c1, c2),
            cwnd_ratio=during / before if before > 0 else math.nan,
            cwnd_before_pkts=before / packet,
            rtt_ratio=rtt_new / rtt_old,
            bdp_new_pkts=bdp_packets(table, new_rate, rtt_new),
        )
    return out


def reference(run: SimRun, table: dict[str, Any]) -> dict[str, float]:
    tested = _under_test(run)[0]
    completion = tested.get("completion_s")
    out = _common(run)
    out.update(
        completion_s=_num(completion) if completion is not None else _num(run.summary.get("simulated_s")),
        completed=float(completion is not None),
        goodput_mbps=_num(tested["goodput_bps"]) / 1e6,
    )
    return out


MEASURES: dict[str, Callable[[SimRun, dict[str, Any]], dict[str, float]]] = {
    "004-one-on-one": one_on_one,
    "004-background": background,
    "000-per-1e-6": vegas_l,
    "000-per-1e-3": vegas_l,
    "001-loss-sweep": single_flow,
    "001-reverse": reverse,
    "001-five-flow": five_flow,
    "001-rtt-fairness": rtt_fairness,
    "001-friendliness": friendliness,
    "002-single": rovegas_single,
    "002-load-sweep": rovegas_sweep,
    "002-parking-lot": rovegas_single,
    "002-gradual": rovegas_single,
    "002-compatibility": compatibility,
    "003-cbr-step": cbr_step,
    "003-route-change": route_change,
    "ref-fau-sat": reference,
    "ref-fau-satl": reference,
}

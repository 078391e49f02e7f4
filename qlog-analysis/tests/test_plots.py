import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from vegas_qlog import aggregate, flows_table, load_run, load_runs, plots, read_qlog, runs_table
from vegas_qlog.sqlog import Event, Trace

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def check_written(paths, base):
    assert [p.name for p in paths] == [f"{base.name}.png", f"{base.name}.svg"]
    png, svg = paths
    assert png.read_bytes().startswith(PNG_MAGIC)
    root = ET.fromstring(svg.read_bytes())
    assert root.tag.endswith("svg")


def test_cwnd_over_time_per_algorithm(sim_dir, server_sqlog, tmp_path):
    run = load_run(sim_dir)
    from vegas_qlog import window_series

    series = {"vegas": run.flow_series("vegas"), "vegas (qlog)": window_series(read_qlog(server_sqlog))}
    fig = plots.plot_cwnd(series, title="cwnd")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "Congestion window (KB)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["vegas", "vegas (qlog)"]
    # Both lines share the algorithm's colour.
    assert ax.lines[0].get_color() == ax.lines[1].get_color() == plots.algorithm_style("vegas")["color"]
    base = tmp_path / "figs" / "cwnd"
    check_written(plots.save_figure(fig, base), base)
    packets = plots.plot_cwnd(series, packet_bytes=1350)
    assert packets.axes[0].get_ylabel() == "Congestion window (packets)"
    assert max(packets.axes[0].lines[0].get_ydata()) == pytest.approx(10.0)


def test_svg_is_reproducible(sim_dir, tmp_path):
    run = load_run(sim_dir)
    fig = plots.plot_goodput({"vegas": run.flow_series("vegas")})
    a = plots.save_figure(fig, tmp_path / "a", ["svg"])[0].read_bytes()
    fig = plots.plot_goodput({"vegas": run.flow_series("vegas")})
    b = plots.save_figure(fig, tmp_path / "b", ["svg"])[0].read_bytes()
    assert a == b


def test_throughput_and_fairness_bars(many_runs, tmp_path):
    runs = load_runs([many_runs])
    flows = flows_table(runs)
    tested = flows[flows["under_test"]]
    agg = aggregate(tested, "cc", "goodput_bps")
    fig = plots.plot_throughput_bars(agg, title="goodput")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cubic", "vegas"]
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([1.5, 1.0])  # Mbit/s
    base = tmp_path / "throughput"
    check_written(plots.save_figure(fig, base), base)

    fair = aggregate(runs_table(runs), "run_cc", "jain_index")
    fig = plots.plot_fairness_bars(fair)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "Jain's fairness index"
    assert ax.get_ylim()[1] >= 1.0
    for line in ax.lines:  # error bars never pass 1
        assert max(line.get_ydata()) <= 1.0 + 1e-9
    base = tmp_path / "fairness"
    check_written(plots.save_figure(fig, base), base)


def test_grouped_bars_and_plain_values():
    table = pd.DataFrame(
        {
            "per": ["1e-6", "1e-6", "1e-3", "1e-3"],
            "cc": ["vegas", "reno", "vegas", "reno"],
            "goodput_bps": [4e6, 3e6, 2e6, 1e6],
        }
    )
    fig = plots.plot_throughput_bars(table, group="per")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1e-6", "1e-3"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["vegas", "reno"]
    assert sorted(p.get_height() for p in ax.patches) == pytest.approx([1, 2, 3, 4])
    with pytest.raises(KeyError):
        plots.plot_bars(table, value="nothing", bar="cc", ylabel="x")


def test_trace_and_internals(server_sqlog, tmp_path):
    trace = read_qlog(server_sqlog)
    fig = plots.plot_trace(trace)
    assert len(fig.axes) == 2
    assert fig.axes[1].get_ylabel() == "RTT (ms)"
    internals = plots.plot_internals(trace)
    labels = [ax.get_ylabel() for ax in internals.axes]
    assert labels[0] == "diff_packets"
    assert "round" not in labels
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in internals.axes if ax.get_legend()]
    assert ["base_rtt_ms", "min_rtt_ms"] in legends
    chosen = plots.plot_internals(trace, ["alpha", "beta"])
    assert [ax.get_ylabel() for ax in chosen.axes] == ["alpha", "beta"]
    with pytest.raises(KeyError, match="no field nope"):
        plots.plot_internals(trace, ["nope"])
    base = tmp_path / "internals"
    check_written(plots.save_figure(internals, base), base)
    reno = Trace("reno.sqlog", {}, [Event(0.0, "quic:recovery_metrics_updated", {"congestion_window": 13500})])
    assert plots.plot_internals(reno) is None


def test_algorithm_styles_are_stable_and_distinct():
    names = ["vegas", "reno", "cubic", "bbr2", "vegas-linux", "westwood"]
    styles = [plots.algorithm_style(n) for n in names]
    assert len({(s["color"], str(s["linestyle"])) for s in styles}) == len(names)
    assert plots.algorithm_style("VEGAS") == plots.algorithm_style("vegas")
    assert plots.algorithm_style("something") == plots.algorithm_style("something")


def test_known_algorithms_are_told_apart_by_colour_and_hatch():
    from vegas_qlog.plots import _KNOWN, algorithm_style

    pairs = {(algorithm_style(n)["color"], algorithm_style(n)["hatch"]) for n in _KNOWN}
    assert len(pairs) == len(_KNOWN)


def test_story_panels_are_found_by_name_and_values():
    changing = pd.Series([1.0, 2.0, 1.5])
    constant = pd.Series([4.0, 4.0])
    assert plots.story_panel("alpha", constant) == "bound"
    assert plots.story_panel("base_rtt_ms", changing) == "rtt"
    assert plots.story_panel("some_new_rtt_ms", changing) == "rtt"
    assert plots.story_panel("qt_forward_ms", changing) == "delay"
    assert plots.story_panel("relative_delay_ms", changing) == "delay"
    assert plots.story_panel("expected_bps", changing) == "rate"
    assert plots.story_panel("bwe_bytes_per_s", changing) == "rate"
    assert plots.story_panel("diff_packets", changing) == "backlog"
    assert plots.story_panel("n_packets", changing) == "backlog"
    assert plots.story_panel("cwnd_packets", changing) == "window_packets"
    assert plots.story_panel("delay_source", pd.Series(["aqt", None, "receive_timestamps"])) == "state"
    assert plots.story_panel("renamed_counter", changing) == "other"
    assert plots.story_panel("renamed_constant", constant) is None
    assert plots.story_panel("never_logged", pd.Series([None, None], dtype=float)) is None


SIM_QVIS_SERVER = Path(__file__).parent / "fixtures" / "sim-qvis" / "ext-server.sqlog"


def test_story_of_a_real_venodb_flow(tmp_path):
    """The story of the fixture's VenoDB sender: every internal it logged is
    drawn on its panel, every packet_lost is marked by its trigger, and the
    congestion states and text internals are bands."""
    trace = read_qlog(SIM_QVIS_SERVER)
    fig = plots.plot_story(trace)
    labels = {t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()}
    raw = [json.loads(r) for r in SIM_QVIS_SERVER.read_bytes().split(b"\x1e")[2:] if r.strip()]
    logged = set()
    for e in raw:
        if e["name"] == "quic:recovery_metrics_updated":
            logged |= set(e["data"])
    # VenoDB's own numbers, as the reader flattens them, each on a panel.
    for name in ("base_rtt_ms", "n_packets", "relative_delay_ms", "relative_delay_diff_ms"):
        assert name in logged
        assert name in labels, name
    assert "bwe" in labels  # bwe_bytes_per_s drawn in Mbit/s
    # Losses: one marker per quic:packet_lost, at its time, by trigger.
    for trigger, short in (("reordering_threshold", "reordering"), ("time_threshold", "time")):
        times = sorted(
            round(e["time"] / 1e3, 9)
            for e in raw
            if e["name"] == "quic:packet_lost" and e["data"]["trigger"] == trigger
        )
        assert times
        line = next(ln for ln in fig.axes[0].lines if ln.get_label().startswith(f"lost ({short})"))
        assert sorted(line.get_xdata()) == pytest.approx(times)
        assert line.get_label() == f"lost ({short}): {len(times)}"
    bands = fig.axes[-1]
    assert [t.get_text() for t in bands.get_yticklabels()] == [
        "delay_source",
        "loss_class",
        "network_state",
        "cc state",
    ]
    states = {e["data"]["new"] for e in raw if e["name"] == "quic:congestion_state_updated"}
    assert states <= labels
    # beta drawn as a level on N's panel.
    backlog = next(
        ax for ax in fig.axes if ax.get_legend() and "n_packets" in [t.get_text() for t in ax.get_legend().get_texts()]
    )
    assert "beta" in [t.get_text() for t in backlog.texts]
    base = tmp_path / "story"
    check_written(plots.save_figure(fig, base), base)


def test_story_draws_internals_it_does_not_know():
    """Renamed or new internals still get a panel: numbers that change by
    their kind, text as a band; constants and unknown kinds are not lost."""
    events = [
        Event(0.0, "quic:recovery_metrics_updated", {"congestion_window": 13500, "smoothed_rtt": 333.0}),
        Event(10.0, "quic:recovery_metrics_updated", {"latest_rtt": 50.0, "smoothed_rtt": 50.0, "brand_new_gain": 1.0}),
        Event(20.0, "quic:recovery_metrics_updated", {"brand_new_gain": 2.5, "mystery_ms": 4.0, "mode": "probe"}),
        Event(30.0, "quic:recovery_metrics_updated", {"brand_new_gain": 1.5, "mystery_ms": 6.0, "mode": "drain"}),
        Event(40.0, "quic:congestion_state_updated", {"new": "congestion_avoidance"}),
    ]
    fig = plots.plot_story(Trace("new.sqlog", {}, events))
    labels = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert "brand_new_gain" in labels
    assert "mystery_ms" in labels
    assert {"probe", "drain", "congestion_avoidance"} <= set(labels)
    assert [t.get_text() for t in fig.axes[-1].get_yticklabels()] == ["mode", "cc state"]
    # quiche's initial 333 ms estimate is not drawn as an RTT.
    rtt = next(ax for ax in fig.axes if ax.get_ylabel() == "RTT (ms)")
    assert all(333.0 not in ln.get_ydata() for ln in rtt.lines)
    # More unknown numbers than panels: the rest are named, not dropped silently.
    many = [Event(t, "quic:recovery_metrics_updated", {f"x{i}": t * i for i in range(6)}) for t in (1.0, 2.0)]
    fig = plots.plot_story(Trace("many.sqlog", {}, many), max_other=2)
    footer = [t.get_text() for t in fig.texts]
    assert footer == ["not drawn: x3, x4, x5"]

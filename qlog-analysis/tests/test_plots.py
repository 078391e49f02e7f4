import xml.etree.ElementTree as ET

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

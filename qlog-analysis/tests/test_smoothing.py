"""Goodput smoothing for every input: a delivery burst after a hole is
filled is not drawn as a rate above the link's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vegas_qlog.cli import main
from vegas_qlog.metrics import rate_series, smoothed_goodput
from vegas_qlog.sim import load_run

LINK_BPS = 10e6


def bursty_deliveries() -> tuple[np.ndarray, np.ndarray]:
    """10 Mbit/s for 4 s as 100 ms deliveries, but 1.0-1.5 s held back by a
    hole and delivered at once at 1.5 s."""
    times = np.arange(0.05, 4.0, 0.1)
    amounts = np.full(times.size, LINK_BPS / 8 * 0.1)
    held = (times > 1.0) & (times < 1.5)
    burst = amounts[held].sum()
    amounts[held] = 0.0
    amounts[np.argmin(np.abs(times - 1.55))] += burst
    return times, amounts


def test_a_burst_after_a_hole_is_no_rate_above_the_link():
    raw = rate_series(*bursty_deliveries(), 0.1)
    assert raw["goodput_bps"].max() > 5 * LINK_BPS  # what the plots showed
    # A hole of H seconds delivered late can lift a window of W by H / W at most.
    for window in (1.0, 5.0):
        assert smoothed_goodput(raw, window)["goodput_bps"].max() <= LINK_BPS * (1 + 0.5 / window) * 1.001
    smooth = smoothed_goodput(raw, 1.0)
    # In steady delivery the smoothed rate is the rate.
    steady = smooth[smooth["time_s"] > 2.7]
    assert np.allclose(steady["goodput_bps"], LINK_BPS, rtol=0.01)
    assert "goodput_interval_bps" in smooth.columns
    # 0: as it was.
    assert smoothed_goodput(raw, 0)["goodput_bps"].equals(raw["goodput_bps"])


def test_simulator_series_are_smoothed_too(sim_dir):
    series = load_run(sim_dir).flow_series("vegas")
    smooth = smoothed_goodput(series, 1.0)
    total = series["bytes_delivered"].iloc[-1]
    last = smooth.iloc[-1]
    window = min(1.0, last["time_s"])
    before = np.interp(last["time_s"] - window, [0.0, *series["time_s"]], [0.0, *series["bytes_delivered"]])
    assert last["goodput_bps"] == pytest.approx((total - before) * 8 / window)
    with pytest.raises(ValueError, match="smoothing window"):
        smoothed_goodput(series, -1)
    with pytest.raises(KeyError):
        smoothed_goodput(pd.DataFrame({"time_s": [1.0], "goodput_bps": [1.0]}), 1.0)


def test_plot_takes_smooth_for_runs_and_qlogs(capsys, sim_dir, server_sqlog, client_sqlog, tmp_path):
    assert main(["plot", str(sim_dir), "-o", str(tmp_path / "run"), "--format", "png", "--smooth", "0.5"]) == 0
    assert (tmp_path / "run" / "tiny-seed1-goodput.png").exists()
    argv = ["plot", str(server_sqlog), str(client_sqlog), "-o", str(tmp_path / "q"), "--format", "png"]
    assert main([*argv, "--smooth", "2"]) == 0
    assert (tmp_path / "q" / "goodput.png").exists()
    assert main([*argv, "--smooth", "-1"]) == 1
    assert "--smooth" in capsys.readouterr().err

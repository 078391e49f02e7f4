import math

import pandas as pd
import pytest

from vegas_qlog import aggregate, ci_strings, load_run, markdown_table, time_to_reach


def test_ci_strings_and_markdown():
    frame = pd.DataFrame({"cc": ["vegas", "vegas", "reno", "bbr2"], "goodput_bps": [1e6, 1.2e6, 0.5e6, math.nan]})
    agg = aggregate(frame, "cc", "goodput_bps")
    cells = ci_strings(agg, "goodput_bps", scale=1e-6, decimals=2)
    assert list(cells) == ["1.10 ± 1.27", "0.50", "-"]
    table = pd.DataFrame({"algorithm": agg["cc"], "goodput (Mbit/s)": cells, "runs": agg["goodput_bps_n"]})
    assert markdown_table(table) == (
        "| algorithm | goodput (Mbit/s) | runs |\n"
        "| :--- | :--- | ---: |\n"
        "| vegas | 1.10 ± 1.27 | 2 |\n"
        "| reno | 0.50 | 1 |\n"
        "| bbr2 | - | 0 |\n"
    )
    odd = pd.DataFrame({"a|b": ["x|y"], "n": [math.nan]})
    assert markdown_table(odd, align=["c", "r"]).splitlines()[1:] == ["| :---: | ---: |", "| x\\|y | - |"]
    with pytest.raises(ValueError, match="align has 1 entries for 2 columns"):
        markdown_table(odd, align=["l"])


def test_time_to_reach(sim_dir):
    series = pd.DataFrame({"time_s": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "u": [0.2, 0.96, 0.5, 0.97, 0.99, 0.98]})
    assert time_to_reach(series, "u", 0.95) == 0.2
    assert time_to_reach(series, "u", 0.95, hold_s=0.2) == 0.4
    assert time_to_reach(series, "u", 0.95, after_s=0.3) == 0.4
    assert math.isnan(time_to_reach(series, "u", 0.995))
    queue = load_run(sim_dir).queue_series("fwd")
    assert time_to_reach(queue, "utilization", 0.5) == pytest.approx(0.2)

import math

import pandas as pd
import pytest

from vegas_qlog import aggregate, mean_ci


def test_mean_ci_student_t():
    ci = mean_ci([1, 2, 3, 4, 5])
    assert ci.mean == 3.0
    assert ci.n == 5
    assert ci.std == pytest.approx(1.5811388)
    # t(0.975, 4) = 2.7764451
    assert ci.half_width == pytest.approx(2.7764451 * 1.5811388 / math.sqrt(5))
    assert (ci.low, ci.high) == pytest.approx((3 - ci.half_width, 3 + ci.half_width))
    wider = mean_ci([1, 2, 3, 4, 5], confidence=0.99)
    assert wider.half_width > ci.half_width
    assert ci.format() == "3.00 ± 1.96"
    assert ci.format(scale=1e-3, decimals=4) == "0.0030 ± 0.0020"


def test_mean_ci_small_samples():
    one = mean_ci([2.5])
    assert (one.mean, one.n) == (2.5, 1)
    assert math.isnan(one.half_width)
    assert math.isnan(one.std)
    assert one.format() == "2.50"
    none = mean_ci([float("nan"), None])
    assert none.n == 0
    assert math.isnan(none.mean)
    assert none.format() == "-"
    assert mean_ci([4, 4, 4]).half_width == 0.0
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        mean_ci([1, 2], confidence=1.5)


def test_aggregate_keeps_group_order():
    frame = pd.DataFrame(
        {
            "cc": ["vegas", "vegas", "reno", "reno", "reno"],
            "per": [1e-6, 1e-6, 1e-6, 1e-6, 1e-6],
            "goodput_bps": [10.0, 12.0, 5.0, 7.0, 6.0],
            "completion_s": [1.0, None, 2.0, 2.0, 2.0],
        }
    )
    agg = aggregate(frame, ["per", "cc"], ["goodput_bps", "completion_s"])
    assert list(agg["cc"]) == ["vegas", "reno"]
    vegas, reno = agg.iloc[0], agg.iloc[1]
    assert vegas["goodput_bps_mean"] == 11.0
    assert vegas["goodput_bps_n"] == 2
    assert reno["goodput_bps_mean"] == 6.0
    assert reno["goodput_bps_n"] == 3
    assert reno["goodput_bps_ci_low"] < 6.0 < reno["goodput_bps_ci_high"]
    assert vegas["completion_s_n"] == 1
    assert math.isnan(vegas["completion_s_ci_half"])
    with pytest.raises(KeyError, match="no column nope"):
        aggregate(frame, "cc", "nope")

"""Means and confidence intervals over repeated runs (seeds)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class MeanCI:
    """The mean of ``n`` values with a two-sided Student-t confidence interval.

    With one value the interval is unknown (``low``/``high``/``half_width``
    are NaN) and ``std`` is NaN.
    """

    mean: float
    std: float
    n: int
    low: float
    high: float
    confidence: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0

    def format(self, scale: float = 1.0, decimals: int = 2) -> str:
        """``"1.23 ± 0.04"`` (or ``"1.23"`` with a single value), values times ``scale``."""
        if math.isnan(self.mean):
            return "-"
        text = f"{self.mean * scale:.{decimals}f}"
        if not math.isnan(self.half_width):
            text += f" ± {self.half_width * scale:.{decimals}f}"
        return text


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> MeanCI:
    """Mean and Student-t confidence interval of ``values`` (NaNs dropped)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return MeanCI(math.nan, math.nan, 0, math.nan, math.nan, confidence)
    mean = float(x.mean())
    if n == 1:
        return MeanCI(mean, math.nan, 1, math.nan, math.nan, confidence)
    std = float(x.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, df=n - 1)) * std / math.sqrt(n)
    return MeanCI(mean, std, n, mean - half, mean + half, confidence)


def aggregate(
    frame: pd.DataFrame,
    by: str | Sequence[str],
    values: str | Sequence[str],
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Groups ``frame`` by ``by`` and gives, for every column in ``values``,
    ``<col>_mean``, ``<col>_std``, ``<col>_n``, ``<col>_ci_low``,
    ``<col>_ci_high`` and ``<col>_ci_half``. Groups keep their first-seen order.
    """
    keys = [by] if isinstance(by, str) else list(by)
    cols = [values] if isinstance(values, str) else list(values)
    missing = [c for c in keys + cols if c not in frame.columns]
    if missing:
        raise KeyError(f"no column {', '.join(missing)} (have: {', '.join(map(str, frame.columns))})")
    rows = []
    for group, part in frame.groupby(keys, sort=False, dropna=False):
        group_values = group if isinstance(group, tuple) else (group,)
        row = dict(zip(keys, group_values, strict=True))
        for col in cols:
            ci = mean_ci(pd.to_numeric(part[col], errors="coerce"), confidence)
            row[f"{col}_mean"] = ci.mean
            row[f"{col}_std"] = ci.std
            row[f"{col}_n"] = ci.n
            row[f"{col}_ci_low"] = ci.low
            row[f"{col}_ci_high"] = ci.high
            row[f"{col}_ci_half"] = ci.half_width
        rows.append(row)
    return pd.DataFrame(rows)

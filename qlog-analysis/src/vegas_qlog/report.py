"""Helpers for writing results as text: "mean ± CI" cells and Markdown tables."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd


def ci_strings(agg: pd.DataFrame, value: str, *, scale: float = 1.0, decimals: int = 2) -> pd.Series:
    """``"1.23 ± 0.04"`` per row of an :func:`stats.aggregate` table (``"1.23"``
    with a single run, ``"-"`` without any), the values times ``scale``."""
    out = []
    for mean, half in zip(agg[f"{value}_mean"], agg[f"{value}_ci_half"], strict=True):
        if mean is None or (isinstance(mean, float) and math.isnan(mean)):
            out.append("-")
        elif half is None or (isinstance(half, float) and math.isnan(half)):
            out.append(f"{mean * scale:.{decimals}f}")
        else:
            out.append(f"{mean * scale:.{decimals}f} ± {half * scale:.{decimals}f}")
    return pd.Series(out, index=agg.index, name=value, dtype=object)


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame, align: Sequence[str] | None = None) -> str:
    """A GitHub Markdown table of ``frame`` (cells as ``str``; NaN and None as ``-``).

    ``align`` gives ``"l"``, ``"r"`` or ``"c"`` per column; by default numbers
    are right-aligned and everything else left-aligned.
    """
    columns = [str(c) for c in frame.columns]
    if align is None:
        align = ["r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in frame.columns]
    if len(align) != len(columns):
        raise ValueError(f"align has {len(align)} entries for {len(columns)} columns")
    rules = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "| " + " | ".join(rules[a] for a in align) + " |",
    ]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"

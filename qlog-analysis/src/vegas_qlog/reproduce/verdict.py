"""The verdict rule of the reproduction report.

A paper's claim is tested by one or more *checks*, each on means with 95%
Student-t confidence intervals over the runs (:class:`~vegas_qlog.stats.MeanCI`):

``greater(a, b)`` (the paper says a > b)
    *holds* when ``a``'s mean is above ``b``'s and the two intervals do not
    overlap, and, if the paper gives the ratio ``a/b``, our ratio reaches at
    least half of the paper's effect (``ours - 1 >= (paper - 1) / 2``), or
    else the means differ by at least 2% (:data:`MIN_EFFECT`: a smaller
    difference is no difference in practice, however narrow the intervals);
    *weak* when the order is right but the intervals overlap or the effect
    is smaller than that; *fails* when the order is not the paper's.
``less(a, b)``
    the same with the order reversed (``1 - ours >= (1 - paper) / 2``).
``similar(a, b, tol)`` (the paper says "about the same")
    *holds* when the means differ by at most ``tol`` of the larger one,
    *weak* up to ``2 tol``, *fails* beyond.
``not_below(a, b, tol)`` (the paper says "a is not hurt")
    *holds* when ``a >= (1 - tol) b``, *weak* down to ``(1 - 2 tol) b``, *fails* below.
``at_most(a, x)`` / ``at_least(a, x)`` (a bound)
    *holds* when the whole interval is on the right side of ``x``, *weak*
    when only the mean is, *fails* otherwise.

A check without data (no run, or only NaN) is *missing* and counts as failing.
The claim's verdict:

- **reproduced**: every check holds;
- **partly**: at least one check holds, or none fails (all point the paper's
  way but some are not resolved);
- **not**: otherwise (no check holds and at least one fails or is missing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..stats import MeanCI

HOLDS = "holds"
WEAK = "weak"
FAILS = "fails"
MISSING = "missing"

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT = "not"
VERDICTS = (REPRODUCED, PARTLY, NOT)

# The smallest relative difference that counts when the paper gives no ratio.
MIN_EFFECT = 0.02


@dataclass(frozen=True)
class Outcome:
    """The result of one check: its status and why, in words."""

    status: str
    reason: str


def _known(x: MeanCI) -> bool:
    return x.n > 0 and not math.isnan(x.mean)


def _separated_above(a: MeanCI, b: MeanCI) -> bool:
    """a's interval lies wholly above b's (False when either is unknown)."""
    if math.isnan(a.low) or math.isnan(b.high):
        return False
    return a.low > b.high


def ratio(a: float, b: float) -> float:
    """a / b, NaN when b is 0 or either is NaN (inf when only b is 0 and a > 0)."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if b == 0:
        return math.inf if a > 0 else math.nan
    return a / b


def greater(a: MeanCI, b: MeanCI, paper_ratio: float | None = None) -> Outcome:
    """The paper says ``a > b`` (with ``a/b = paper_ratio`` if given)."""
    if not (_known(a) and _known(b)):
        return Outcome(MISSING, "no data")
    if not a.mean > b.mean:
        return Outcome(FAILS, "order reversed or equal")
    if not _separated_above(a, b):
        return Outcome(WEAK, "right order, intervals overlap")
    r = ratio(a.mean, b.mean)
    if paper_ratio is not None and paper_ratio > 1:
        if r - 1 < (paper_ratio - 1) / 2:
            return Outcome(WEAK, f"right order, but ×{r:.2f} is less than half the paper's effect (×{paper_ratio:.2f})")
    elif r - 1 < MIN_EFFECT:
        return Outcome(WEAK, f"right order, intervals apart, but the means differ by less than {MIN_EFFECT:.0%}")
    return Outcome(HOLDS, "right order, intervals apart")


def less(a: MeanCI, b: MeanCI, paper_ratio: float | None = None) -> Outcome:
    """The paper says ``a < b`` (with ``a/b = paper_ratio`` if given)."""
    if not (_known(a) and _known(b)):
        return Outcome(MISSING, "no data")
    if not a.mean < b.mean:
        return Outcome(FAILS, "order reversed or equal")
    if not _separated_above(b, a):
        return Outcome(WEAK, "right order, intervals overlap")
    r = ratio(a.mean, b.mean)
    if paper_ratio is not None and paper_ratio < 1:
        if 1 - r < (1 - paper_ratio) / 2:
            return Outcome(WEAK, f"right order, but ×{r:.2f} is less than half the paper's effect (×{paper_ratio:.2f})")
    elif 1 - r < MIN_EFFECT:
        return Outcome(WEAK, f"right order, intervals apart, but the means differ by less than {MIN_EFFECT:.0%}")
    return Outcome(HOLDS, "right order, intervals apart")


def similar(a: MeanCI, b: MeanCI, tol: float = 0.10) -> Outcome:
    """The paper says ``a`` and ``b`` are about the same."""
    if not (_known(a) and _known(b)):
        return Outcome(MISSING, "no data")
    top = max(abs(a.mean), abs(b.mean))
    gap = 0.0 if top == 0 else abs(a.mean - b.mean) / top
    if gap <= tol:
        return Outcome(HOLDS, f"means {gap:.0%} apart (at most {tol:.0%})")
    if gap <= 2 * tol:
        return Outcome(WEAK, f"means {gap:.0%} apart (more than {tol:.0%})")
    return Outcome(FAILS, f"means {gap:.0%} apart (more than {2 * tol:.0%})")


def not_below(a: MeanCI, b: MeanCI, tol: float = 0.10) -> Outcome:
    """The paper says ``a`` is not (much) lower than ``b``."""
    if not (_known(a) and _known(b)):
        return Outcome(MISSING, "no data")
    r = ratio(a.mean, b.mean)
    if math.isnan(r):
        return Outcome(MISSING, "no data")
    if r >= 1 - tol:
        return Outcome(HOLDS, f"×{r:.2f} (at least ×{1 - tol:.2f})")
    if r >= 1 - 2 * tol:
        return Outcome(WEAK, f"×{r:.2f} (below ×{1 - tol:.2f})")
    return Outcome(FAILS, f"×{r:.2f} (below ×{1 - 2 * tol:.2f})")


def at_most(a: MeanCI, bound: float) -> Outcome:
    """The paper says ``a <= bound``."""
    if not _known(a):
        return Outcome(MISSING, "no data")
    if a.mean > bound:
        return Outcome(FAILS, "mean above the bound")
    if math.isnan(a.high) or a.high > bound:
        return Outcome(WEAK, "mean below the bound, interval crosses it")
    return Outcome(HOLDS, "interval below the bound")


def at_least(a: MeanCI, bound: float) -> Outcome:
    """The paper says ``a >= bound``."""
    if not _known(a):
        return Outcome(MISSING, "no data")
    if a.mean < bound:
        return Outcome(FAILS, "mean below the bound")
    if math.isnan(a.low) or a.low < bound:
        return Outcome(WEAK, "mean above the bound, interval crosses it")
    return Outcome(HOLDS, "interval above the bound")


def verdict(outcomes: list[Outcome]) -> str:
    """The claim's verdict from its checks' outcomes (see the module's rule)."""
    if not outcomes:
        return NOT
    statuses = [o.status for o in outcomes]
    if all(s == HOLDS for s in statuses):
        return REPRODUCED
    if HOLDS in statuses or all(s in (HOLDS, WEAK) for s in statuses):
        return PARTLY
    return NOT

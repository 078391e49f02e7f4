"""The verdict rules of the reproduction report, written once.

A paper's claim is tested by one or more *checks*, each on means with 95%
Student-t confidence intervals over the runs (:class:`~vegas_qlog.stats.MeanCI`).
Two numbers are *resolved* when their intervals do not overlap. A check's
outcome is one of:

- *holds*: the paper's direction, resolved, and an effect of the paper's size;
- *short*: the paper's direction, resolved, but an effect below the paper's
  band (or below the smallest effect that counts, when the paper gives none);
- *overshoot*: the paper's direction, resolved, an effect above the band;
- *unresolved*: the intervals overlap, or a reversal is within the 2% floor
  (:data:`FLOOR`), so the runs cannot tell;
- *fails*: the reverse of the paper, resolved and beyond the 2% floor;
- *missing*: no data.

The checks:

``greater(a, b)`` (the paper says a > b)
    the effect is ``a/b - 1``. When the paper gives its ratio, the effect
    must lie within ×½ to ×2 of the paper's (:data:`BAND`); otherwise it
    must be at least :data:`MIN_EFFECT` (2%), or :data:`MUCH_EFFECT` (10%)
    where the paper says "much higher" without a number.
``less(a, b)``
    the same with the effect ``1 - a/b``.
``similar(a, b, tol)`` ("about the same")
    *holds* when the means differ by at most ``tol`` of the larger one;
    beyond that *fails* when resolved, else *unresolved*.
``not_below(a, b, tol)`` ("a is not hurt")
    *holds* when ``a >= (1 - tol) b``; below that *fails* when resolved,
    else *unresolved*.
``at_least(a, x)`` / ``at_most(a, x)`` (a bound)
    *holds* when the whole interval is on the paper's side; *fails* when the
    whole interval is on the other side and the mean is beyond the 2% floor;
    else *unresolved*.
``sooner(a, b)`` / ``within(a, x)`` (times to an event, censored)
    a run that never reaches the event within its window is censored, not
    counted as the window's length: a time-to-event is the mean first time
    over the runs that reach it and the fraction of runs that do
    (:class:`TimeToEvent`). ``sooner`` compares times when every run of
    both reaches; when every run of ``a`` reaches and none of ``b`` does it
    holds (and fails the other way round); neither reaching, or only some
    runs, is *unresolved*. ``within`` holds when every run reaches and the
    interval of the times is below ``x``; it fails when no run reaches
    by ``x``.

The claim's verdict rests on its *distinguishing* checks (the paper's
contribution); checks of the baseline the paper starts from are reported
but not counted, and a claim made only of baseline checks is counted apart:

- **not**: a distinguishing check fails or has no data;
- **unresolved**: else, one is unresolved;
- **partly**: else (every one in the paper's direction and resolved), one
  is short or overshoots;
- **reproduced**: every distinguishing check holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..stats import MeanCI, mean_ci

HOLDS = "holds"
SHORT = "short"
OVERSHOOT = "overshoot"
UNRESOLVED = "unresolved"
FAILS = "fails"
MISSING = "missing"
STATUSES = (HOLDS, SHORT, OVERSHOOT, UNRESOLVED, FAILS, MISSING)

REPRODUCED = "reproduced"
PARTLY = "partly"
UNRESOLVED_VERDICT = "unresolved"
NOT = "not"
VERDICTS = (REPRODUCED, PARTLY, UNRESOLVED_VERDICT, NOT)

# A reversal smaller than this is no reversal, however narrow the intervals.
FLOOR = 0.02
# The smallest effect that counts when the paper gives no number ...
MIN_EFFECT = 0.02
# ... and when it says "much higher" without one.
MUCH_EFFECT = 0.10
# An effect holds within these multiples of the paper's.
BAND = (0.5, 2.0)


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


def _sized(effect: float, paper_effect: float | None, much: bool) -> Outcome:
    """A resolved effect in the paper's direction against the paper's (or the minimum)."""
    if paper_effect is not None and paper_effect > 0:
        low, high = BAND[0] * paper_effect, BAND[1] * paper_effect
        if effect < low:
            return Outcome(
                SHORT, f"resolved, but an effect of {effect:.0%} is below half the paper's {paper_effect:.0%}"
            )
        if effect > high:
            return Outcome(
                OVERSHOOT, f"resolved, but an effect of {effect:.0%} is above twice the paper's {paper_effect:.0%}"
            )
        return Outcome(HOLDS, f"resolved, effect {effect:.0%} within ×½..×2 of the paper's {paper_effect:.0%}")
    least = MUCH_EFFECT if much else MIN_EFFECT
    what = "'much'" if much else "an effect"
    if effect < least:
        return Outcome(SHORT, f"resolved, but {effect:.1%} is below the {least:.0%} that {what} needs")
    return Outcome(HOLDS, f"resolved, effect {effect:.0%} (at least {least:.0%})")


def _ordered(hi: MeanCI, lo: MeanCI, effect: float, reversal: float, paper_effect: float | None, much: bool) -> Outcome:
    """The paper says ``hi > lo``; ``effect`` is the relative effect in its direction
    and ``reversal`` the relative effect against it."""
    if not hi.mean > lo.mean:
        if _separated_above(lo, hi) and reversal >= FLOOR:
            return Outcome(FAILS, f"reversed by {reversal:.0%}, intervals apart")
        why = "intervals overlap" if not _separated_above(lo, hi) else f"within the {FLOOR:.0%} floor"
        return Outcome(UNRESOLVED, f"reversed or equal, but not resolved ({why})")
    if not _separated_above(hi, lo):
        return Outcome(UNRESOLVED, "paper's direction, but the intervals overlap")
    return _sized(effect, paper_effect, much)


def greater(a: MeanCI, b: MeanCI, paper_ratio: float | None = None, much: bool = False) -> Outcome:
    """The paper says ``a > b`` (with ``a/b = paper_ratio`` if given)."""
    if not (_known(a) and _known(b)):
        return Outcome(MISSING, "no data")
    r = ratio(a.mean, b.mean)
    effect = r - 1 if not math.isnan(r) else 0.0
    reversal = 1 - r if not math.isnan(r) else 0.0
    paper = paper_ratio - 1 if paper_ratio is not None and paper_ratio > 1 else None
    return _ordered(a, b, effect, reversal, paper, much)


def less(a: MeanCI, b: MeanCI, paper_ratio: float | None = None, much: bool = False) -> Outcome:
    """The paper says ``a < b`` (with ``a/b = paper_ratio`` if given)."""
    if not (_known(a) and _known(b)):
        return Outcome(MISSING, "no data")
    r = ratio(a.mean, b.mean)
    effect = 1 - r if not math.isnan(r) else 0.0
    reversal = r - 1 if not math.isnan(r) else 0.0
    paper = 1 - paper_ratio if paper_ratio is not None and paper_ratio < 1 else None
    return _ordered(b, a, effect, reversal, paper, much)


def similar(a: MeanCI, b: MeanCI, tol: float = 0.10) -> Outcome:
    """The paper says ``a`` and ``b`` are about the same."""
    if not (_known(a) and _known(b)):
        return Outcome(MISSING, "no data")
    top = max(abs(a.mean), abs(b.mean))
    gap = 0.0 if top == 0 else abs(a.mean - b.mean) / top
    if gap <= tol:
        return Outcome(HOLDS, f"means {gap:.0%} apart (at most {tol:.0%})")
    if _separated_above(a, b) or _separated_above(b, a):
        return Outcome(FAILS, f"means {gap:.0%} apart (more than {tol:.0%}), intervals apart")
    return Outcome(UNRESOLVED, f"means {gap:.0%} apart (more than {tol:.0%}), but the intervals overlap")


def not_below(a: MeanCI, b: MeanCI, tol: float = 0.10) -> Outcome:
    """The paper says ``a`` is not (much) lower than ``b``."""
    if not (_known(a) and _known(b)):
        return Outcome(MISSING, "no data")
    r = ratio(a.mean, b.mean)
    if math.isnan(r):
        return Outcome(MISSING, "no data")
    if r >= 1 - tol:
        return Outcome(HOLDS, f"×{r:.2f} (at least ×{1 - tol:.2f})")
    if _separated_above(b, a):
        return Outcome(FAILS, f"×{r:.2f} (below ×{1 - tol:.2f}), intervals apart")
    return Outcome(UNRESOLVED, f"×{r:.2f} (below ×{1 - tol:.2f}), but the intervals overlap")


def at_most(a: MeanCI, bound: float) -> Outcome:
    """The paper says ``a <= bound``."""
    if not _known(a):
        return Outcome(MISSING, "no data")
    if not math.isnan(a.high) and a.high <= bound:
        return Outcome(HOLDS, "interval below the bound")
    beyond = a.mean > bound * (1 + FLOOR) if bound > 0 else a.mean > bound
    if not math.isnan(a.low) and a.low > bound and beyond:
        return Outcome(FAILS, "interval above the bound")
    return Outcome(UNRESOLVED, "interval crosses the bound (or within the 2% floor)")


def at_least(a: MeanCI, bound: float) -> Outcome:
    """The paper says ``a >= bound``."""
    if not _known(a):
        return Outcome(MISSING, "no data")
    if not math.isnan(a.low) and a.low >= bound:
        return Outcome(HOLDS, "interval above the bound")
    beyond = a.mean < bound * (1 - FLOOR) if bound > 0 else a.mean < bound
    if not math.isnan(a.high) and a.high < bound and beyond:
        return Outcome(FAILS, "interval below the bound")
    return Outcome(UNRESOLVED, "interval crosses the bound (or within the 2% floor)")


@dataclass(frozen=True)
class TimeToEvent:
    """First times an event happened in each run (``None``: never, within the run's window)."""

    times: tuple[float | None, ...]

    @classmethod
    def of(cls, times: Sequence[float], reached: Sequence[float]) -> TimeToEvent:
        """From a time column and a reached (1/0) column of the same runs."""
        out: list[float | None] = []
        for t, hit in zip(times, reached, strict=False):
            if math.isnan(hit):
                continue
            out.append(float(t) if hit >= 0.5 and not math.isnan(t) else None)
        return cls(tuple(out))

    @property
    def n(self) -> int:
        return len(self.times)

    @property
    def reached(self) -> int:
        return sum(t is not None for t in self.times)

    @property
    def first(self) -> MeanCI:
        """Mean and interval of the times of the runs that reached it."""
        return mean_ci([t for t in self.times if t is not None])

    def text(self, decimals: int = 1) -> str:
        """``"6.2 ± 0.3 s (5 of 5 runs)"`` or ``"never (0 of 5 runs)"``."""
        if self.reached == 0:
            return f"never ({self.reached} of {self.n} runs)"
        first = self.first
        value = f"{first.mean:.{decimals}f}"
        if not math.isnan(first.half_width):
            value += f" ± {first.half_width:.{decimals}f}"
        return f"{value} s ({self.reached} of {self.n} runs)"


def sooner(a: TimeToEvent, b: TimeToEvent) -> Outcome:
    """The paper says ``a`` reaches the event sooner than ``b``."""
    if a.n == 0 or b.n == 0:
        return Outcome(MISSING, "no data")
    if a.reached == a.n and b.reached == b.n:
        return less(a.first, b.first)
    if a.reached == a.n and b.reached == 0:
        return Outcome(HOLDS, "every run reached it, none of the other's did")
    if a.reached == 0 and b.reached == b.n:
        return Outcome(FAILS, "no run reached it, every one of the other's did")
    if a.reached == 0 and b.reached == 0:
        return Outcome(UNRESOLVED, "neither reached it in any run (censored)")
    return Outcome(UNRESOLVED, f"only some runs reached it ({a.reached} of {a.n} against {b.reached} of {b.n})")


def within(a: TimeToEvent, bound: float) -> Outcome:
    """The paper says ``a`` reaches the event by ``bound``."""
    if a.n == 0:
        return Outcome(MISSING, "no data")
    early = [t for t in a.times if t is not None and t <= bound]
    if not early:
        return Outcome(FAILS, f"no run reached it by {bound:g} s")
    if a.reached == a.n:
        first = a.first
        if not math.isnan(first.high) and first.high <= bound:
            return Outcome(HOLDS, "every run reached it, interval below the bound")
    return Outcome(UNRESOLVED, f"{len(early)} of {a.n} runs reached it by {bound:g} s")


def verdict(outcomes: Sequence[Outcome]) -> str:
    """The claim's verdict from its distinguishing checks' outcomes (see the module's rule)."""
    if not outcomes:
        return NOT
    statuses = {o.status for o in outcomes}
    if statuses & {FAILS, MISSING}:
        return NOT
    if UNRESOLVED in statuses:
        return UNRESOLVED_VERDICT
    if statuses & {SHORT, OVERSHOOT}:
        return PARTLY
    return REPRODUCED

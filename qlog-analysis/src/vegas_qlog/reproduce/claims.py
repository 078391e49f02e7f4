"""The papers' headline claims, each with the paper's own figure (quoted
from the text copies in /work/shared/papers) and the checks that test it
on our runs (see :mod:`.verdict` for the rule)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from . import verdict as v
from .results import Ref, Results, fmt, unit

E1, E2 = "004-one-on-one", "004-background"
L6, L3 = "000-per-1e-6", "000-per-1e-3"
SWEEP, REV, FIVE, RTT, FRIEND = "001-loss-sweep", "001-reverse", "001-five-flow", "001-rtt-fairness", "001-friendliness"
SINGLE, LOADS, PARK, COMPAT = "002-single", "002-load-sweep", "002-parking-lot", "002-compatibility"
GRADUAL = "002-gradual"
CBR, ROUTE = "003-cbr-step", "003-route-change"


@dataclass(frozen=True)
class Check:
    """One comparison of a claim (kinds as in :mod:`.verdict`).

    ``baseline``: the check tests the setting the paper starts from, not its
    contribution; it is reported but does not count towards the verdict.
    ``much``: the paper says "much" without a number (:data:`.verdict.MUCH_EFFECT`).
    ``reached``: for the time-to-event kinds (``sooner``, ``within``), the
    metric saying whether each run reached the event (1) or not (0).
    """

    kind: str  # greater, less, similar, not_below, at_most, at_least, sooner, within
    a: Ref
    b: Ref | None = None
    paper_ratio: float | None = None
    bound: float | None = None
    tol: float = 0.10
    baseline: bool = False
    much: bool = False
    reached: str | None = None

    def refs(self) -> list[Ref]:
        return [self.a] + ([self.b] if self.b is not None else [])

    def moved(self, suffix: str) -> Check:
        """The same check on the runs of the experiments named with ``suffix``."""
        a = replace(self.a, experiment=self.a.experiment + suffix)
        b = replace(self.b, experiment=self.b.experiment + suffix) if self.b is not None else None
        return replace(self, a=a, b=b)

    def _events(self, results: Results, ref: Ref) -> v.TimeToEvent:
        assert self.reached is not None
        times = results.values(ref)
        hits = results.values(replace(ref, metric=self.reached))
        return v.TimeToEvent.of(times, hits)

    def evaluate(self, results: Results) -> tuple[v.Outcome, str]:
        """The outcome and a line saying what was compared."""
        where = f" at {self.a.point:g}" if self.a.point is not None else ""
        if self.kind in ("sooner", "within"):
            ea = self._events(results, self.a)
            if self.kind == "within":
                assert self.bound is not None
                text = f"{self.a.title()}{where} first reaches it: {ea.text()}; by {self.bound:g} s"
                return v.within(ea, self.bound), text
            assert self.b is not None
            eb = self._events(results, self.b)
            text = f"{self.a.title()} sooner than {self.b.title()}{where}: {ea.text()} vs {eb.text()}"
            return v.sooner(ea, eb), text
        a = results.stat(self.a)
        u = unit(self.a.metric)
        u = f" {u}" if u else ""
        if self.kind in ("at_most", "at_least"):
            assert self.bound is not None
            outcome = v.at_most(a, self.bound) if self.kind == "at_most" else v.at_least(a, self.bound)
            sign = "≤" if self.kind == "at_most" else "≥"
            text = f"{self.a.title()}{where}: {fmt(a, self.a.metric)}{u} {sign} {self.bound:g}{u}"
            return outcome, text
        assert self.b is not None
        b = results.stat(self.b)
        if self.kind == "greater":
            outcome, sign = v.greater(a, b, self.paper_ratio, self.much), ">"
        elif self.kind == "less":
            outcome, sign = v.less(a, b, self.paper_ratio, self.much), "<"
        elif self.kind == "similar":
            outcome, sign = v.similar(a, b, self.tol), "≈"
        elif self.kind == "not_below":
            outcome, sign = v.not_below(a, b, self.tol), "≳"
        else:
            raise ValueError(f"unknown check kind {self.kind!r}")
        r = v.ratio(a.mean, b.mean)
        ratio_text = f", ×{r:.2f}" if not math.isnan(r) and not math.isinf(r) else ""
        if self.paper_ratio is not None:
            ratio_text += f" (paper ×{self.paper_ratio:.2f})"
        elif self.much:
            ratio_text += " (paper: 'much')"
        text = (
            f"{self.a.title()} {sign} {self.b.title()}{where}: "
            f"{fmt(a, self.a.metric)} vs {fmt(b, self.b.metric)}{u}{ratio_text}"
        )
        return outcome, text


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str  # file number: "004"
    source: str  # the table or figure
    claim: str
    paper_figure: str  # the paper's numbers, as it gives them
    checks: tuple[Check, ...]
    metric_note: str = ""  # what "ours" measures, if not obvious from the checks

    @property
    def baseline(self) -> bool:
        """Every check tests the paper's starting point, none its contribution."""
        return all(c.baseline for c in self.checks)

    def distinguishing(self) -> tuple[Check, ...]:
        """The checks the verdict rests on (all of them for a baseline claim)."""
        return self.checks if self.baseline else tuple(c for c in self.checks if not c.baseline)

    def shown(self) -> list[Ref]:
        """The distinct quantities of the checks, in order."""
        out: list[Ref] = []
        for check in self.checks:
            for ref in check.refs():
                if ref not in out:
                    out.append(ref)
        return out


def gt(a: Ref, b: Ref, ratio: float | None = None, *, much: bool = False, baseline: bool = False) -> Check:
    return Check("greater", a, b, paper_ratio=ratio, much=much, baseline=baseline)


def lt(a: Ref, b: Ref, ratio: float | None = None, *, baseline: bool = False) -> Check:
    return Check("less", a, b, paper_ratio=ratio, baseline=baseline)


def sim(a: Ref, b: Ref, tol: float = 0.10, *, baseline: bool = False) -> Check:
    return Check("similar", a, b, tol=tol, baseline=baseline)


def R(experiment: str, label: str, metric: str, point: float | None = None, name: str | None = None) -> Ref:
    return Ref(experiment, label, metric, point, name)


def _claims_004() -> list[Claim]:
    def t1(label: str, metric: str, name: str | None = None) -> Ref:
        return R(E1, label, metric, name=name)

    rr_l, rv_l = t1("reno/reno", "large_kBps", "Reno 1 MB (vs Reno)"), t1("reno/vegas", "large_kBps", "Vegas 1 MB")
    rr_retx = t1("reno/reno", "total_retx_KB", "Reno/Reno")
    return [
        Claim(
            "004-T1-vegas-faster",
            "004",
            "Table 1",
            "A 1 MB Vegas transfer beside a 300 KB Reno transfer is faster than a 1 MB Reno one.",
            "1 MB: 123 KB/s (Reno/Vegas) vs 109 KB/s (Reno/Reno), ×1.13",
            (gt(rv_l, rr_l, 123 / 109),),
        ),
        Claim(
            "004-T1-reno-not-hurt",
            "004",
            "Table 1, §4.1",
            "Vegas does not hurt Reno: a Reno transfer does as well beside Vegas as beside Reno.",
            "Reno 300 KB: 61 vs 60 KB/s (×1.02); Reno 1 MB: 119 vs 109 KB/s (×1.09)",
            (
                Check(
                    "not_below",
                    t1("reno/vegas", "small_kBps", "Reno 300 KB beside Vegas"),
                    t1("reno/reno", "small_kBps", "beside Reno"),
                ),
                Check(
                    "not_below",
                    t1("vegas/reno", "large_kBps", "Reno 1 MB beside Vegas"),
                    t1("reno/reno", "large_kBps", "beside Reno"),
                ),
            ),
        ),
        Claim(
            "004-T1-retransmissions",
            "004",
            "Table 1, §4.1",
            "Combined retransmissions fall as Vegas replaces Reno, to almost none for Vegas/Vegas.",
            "52 KB (Reno/Reno), 45 (Reno/Vegas), 19 (Vegas/Reno), 0.4 (Vegas/Vegas)",
            (
                lt(t1("reno/vegas", "total_retx_KB", "Reno/Vegas"), rr_retx, 45 / 52),
                lt(t1("vegas/reno", "total_retx_KB", "Vegas/Reno"), rr_retx, 19 / 52),
                lt(t1("vegas/vegas", "total_retx_KB", "Vegas/Vegas"), rr_retx, 0.4 / 52),
            ),
        ),
        Claim(
            "004-T1-vegas-vegas",
            "004",
            "Table 1",
            "Both transfers are faster when both run Vegas than when both run Reno.",
            "300 KB: 74 vs 60 KB/s (×1.23); 1 MB: 131 vs 109 KB/s (×1.20)",
            (
                gt(t1("vegas/vegas", "small_kBps", "Vegas 300 KB"), t1("reno/reno", "small_kBps", "Reno 300 KB"), 1.23),
                gt(t1("vegas/vegas", "large_kBps", "Vegas 1 MB"), t1("reno/reno", "large_kBps", "Reno 1 MB"), 1.20),
            ),
        ),
        Claim(
            "004-T2-throughput",
            "004",
            "Table 2",
            "With background traffic, a 1 MB Vegas transfer gets over 50% more throughput than Reno.",
            "Reno 58.3, Vegas-1,3 89.4 (×1.53), Vegas-2,4 91.8 KB/s (×1.58)",
            (
                gt(R(E2, "vegas-1,3", "transfer_kBps"), R(E2, "reno", "transfer_kBps", name="Reno"), 1.53),
                gt(R(E2, "vegas-2,4", "transfer_kBps"), R(E2, "reno", "transfer_kBps", name="Reno"), 1.58),
            ),
        ),
        Claim(
            "004-T2-retransmissions",
            "004",
            "Table 2",
            "With background traffic, Vegas retransmits about half as much as Reno.",
            "Reno 55.4, Vegas-1,3 27.1 (×0.49), Vegas-2,4 29.4 KB (×0.53)",
            (
                lt(R(E2, "vegas-1,3", "transfer_retx_KB"), R(E2, "reno", "transfer_retx_KB", name="Reno"), 0.49),
                lt(R(E2, "vegas-2,4", "transfer_retx_KB"), R(E2, "reno", "transfer_retx_KB", name="Reno"), 0.53),
            ),
        ),
        Claim(
            "004-T3-background",
            "004",
            "Table 3, §4.2",
            "The Reno background traffic does better when the 1 MB transfer runs Vegas rather than Reno.",
            "background 82 KB/s beside Vegas vs 68 KB/s beside Reno (+20%)",
            (
                gt(
                    R(E2, "vegas-1,3", "background_kBps", name="background beside Vegas-1,3"),
                    R(E2, "reno", "background_kBps", name="beside Reno"),
                    82 / 68,
                ),
            ),
            metric_note="our background is four Reno transfers and an ON-OFF source, not tcplib",
        ),
    ]


def _claims_000() -> list[Claim]:
    def t(exp: str, label: str, metric: str = "test_mbps", name: str | None = None) -> Ref:
        return R(exp, label, metric, name=name)

    return [
        Claim(
            "000-F5a-vegas-l-highest",
            "000",
            "Fig. 5(a), PER 1e-6",
            "At low PER Vegas-L has the highest throughput of the four.",
            "Vegas-L 2.9, Veno 2.1, Vegas-A 1.7, Vegas 1.1 Mbit/s",
            (
                gt(t(L6, "vegas-l"), t(L6, "vegas"), 2.9 / 1.1),
                gt(t(L6, "vegas-l"), t(L6, "vegas-a"), 2.9 / 1.7),
                gt(t(L6, "vegas-l"), t(L6, "veno"), 2.9 / 2.1),
            ),
        ),
        Claim(
            "000-F5a-newreno",
            "000",
            "Fig. 5(a), PER 1e-6",
            "NewReno takes most of the link from Vegas, but less than Vegas-L takes.",
            "NewReno 3.2 vs Vegas 1.1 Mbit/s; Vegas-L 2.9 vs NewReno 1.5 Mbit/s",
            (
                gt(
                    t(L6, "vegas", "reno_mbps", "NewReno (vs Vegas)"),
                    t(L6, "vegas", name="Vegas"),
                    3.2 / 1.1,
                    baseline=True,
                ),
                gt(t(L6, "vegas-l", name="Vegas-L"), t(L6, "vegas-l", "reno_mbps", "NewReno (vs Vegas-L)"), 2.9 / 1.5),
            ),
        ),
        Claim(
            "000-F5b-order",
            "000",
            "Fig. 5(b), PER 1e-3",
            "At high PER Veno is highest, Vegas and Vegas-L next and about equal, Vegas-A lowest.",
            "Veno 0.8, Vegas 0.6, Vegas-L 0.6, Vegas-A 0.2 Mbit/s",
            (
                gt(t(L3, "veno"), t(L3, "vegas"), 0.8 / 0.6),
                gt(t(L3, "veno"), t(L3, "vegas-l"), 0.8 / 0.6),
                sim(t(L3, "vegas-l"), t(L3, "vegas")),
                gt(t(L3, "vegas"), t(L3, "vegas-a"), 0.6 / 0.2),
                gt(t(L3, "vegas-l"), t(L3, "vegas-a"), 0.6 / 0.2),
            ),
        ),
        Claim(
            "000-F6a-fairness",
            "000",
            "Fig. 6(a), PER 1e-6",
            "At low PER Vegas is the least fair against NewReno, Veno the fairest; Vegas-A and Vegas-L in between.",
            "Jain: Veno 99.94%, Vegas-A 95.09%, Vegas-L 90.81%, Vegas 80.74%",
            (
                gt(t(L6, "veno", "jain"), t(L6, "vegas", "jain"), 99.94 / 80.74),
                gt(t(L6, "vegas-a", "jain"), t(L6, "vegas", "jain"), 95.09 / 80.74),
                gt(t(L6, "vegas-l", "jain"), t(L6, "vegas", "jain"), 90.81 / 80.74),
                gt(t(L6, "veno", "jain"), t(L6, "vegas-l", "jain"), 99.94 / 90.81),
            ),
        ),
        Claim(
            "000-F6b-fairness",
            "000",
            "Fig. 6(b), PER 1e-3",
            "At high PER Vegas and Vegas-L are the fairest (tied), then Veno; Vegas-A the least fair.",
            "Jain: Vegas 99.18%, Vegas-L 99.18%, Veno 94.94%, Vegas-A 84.48%",
            (
                sim(t(L3, "vegas-l", "jain"), t(L3, "vegas", "jain"), 0.05),
                gt(t(L3, "vegas-l", "jain"), t(L3, "veno", "jain"), 99.18 / 94.94),
                gt(t(L3, "veno", "jain"), t(L3, "vegas-a", "jain"), 94.94 / 84.48),
                gt(t(L3, "vegas", "jain"), t(L3, "vegas-a", "jain"), 99.18 / 84.48),
            ),
        ),
    ]


def _claims_001(full: bool) -> list[Claim]:
    others = ("veno", "westwood", "reno")

    def sw(label: str, point: float) -> Ref:
        return R(SWEEP, label, "goodput_mbps", point)

    low_points = (0.0001, 0.0005) if full else (0.0001,)
    high_points = (0.05, 0.1) if full else (0.02,)
    five_points = (0.01, 0.02, 0.05) if full else (0.02,)
    return [
        Claim(
            "001-F2-2pct",
            "001",
            "§4.1, Fig. 2",
            "At 2% random loss a single VenoDB flow gets much more than Veno, WestwoodNR and NewReno.",
            "VenoDB above Veno by 35.7%, WestwoodNR by 38.6%, NewReno by 76.8%",
            (
                gt(sw("venodb", 0.02), sw("veno", 0.02), 1.357),
                gt(sw("venodb", 0.02), sw("westwood", 0.02), 1.386),
                gt(sw("venodb", 0.02), sw("reno", 0.02), 1.768),
            ),
        ),
        Claim(
            "001-F2-low-loss",
            "001",
            "§4.1, Fig. 2",
            "Below 0.1% loss the four algorithms' throughputs are almost the same.",
            "curves 'almost the same' (no numbers given)",
            tuple(sim(sw(o, p), sw("venodb", p), baseline=True) for p in low_points for o in others),
        ),
        Claim(
            "001-F2-high-loss",
            "001",
            "§4.1, Fig. 2",
            "Above 1% loss VenoDB is 'especially superior' to the other three.",
            "VenoDB highest at every loss rate above 1% (figure only)",
            tuple(gt(sw("venodb", p), sw(o, p), much=True) for p in high_points for o in others),
        ),
        Claim(
            "001-F5-reverse-during",
            "001",
            "§4.2 A, Fig. 5",
            "While a 4 Mbit/s reverse CBR congests the ACK path, VenoDB keeps the highest, steadiest throughput.",
            "VenoDB 'the most stable' during 5-50 s (figure only)",
            tuple(gt(R(REV, "venodb", "during_mbps"), R(REV, o, "during_mbps")) for o in others),
        ),
        Claim(
            "001-F5-reverse-after",
            "001",
            "§4.2 A, Fig. 5",
            "When the reverse congestion ends, VenoDB regains bandwidth first and fastest.",
            "VenoDB 'reacted first' after 50 s (figure only)",
            tuple(
                Check("sooner", R(REV, "venodb", "t_regain_s"), R(REV, o, "t_regain_s"), reached="regained")
                for o in others
            )
            + tuple(gt(R(REV, "venodb", "after_mbps"), R(REV, o, "after_mbps")) for o in others),
            metric_note="regained: first time the 2 s goodput reaches half the bottleneck after the CBR stops "
            "(time from 50 s); goodput over 50-100 s",
        ),
        Claim(
            "001-F6-fairness",
            "001",
            "§4.2 B, Fig. 6",
            "Five flows of one algorithm at 1-5% loss: all four are fair, VenoDB slightly fairer.",
            "Jain 'close to 1' for all, VenoDB 'slightly higher' (figure only)",
            tuple(
                Check("at_least", R(FIVE, o, "jain", p), bound=0.9, baseline=True)
                for p in five_points
                for o in ("venodb", *others)
            )
            + tuple(gt(R(FIVE, "venodb", "jain", p), R(FIVE, o, "jain", p)) for p in five_points for o in others),
        ),
        Claim(
            "001-F7-total",
            "001",
            "§4.2 B, Fig. 7",
            "Five VenoDB flows use the link much better than five flows of the others.",
            "total throughput of VenoDB 'significantly higher' (figure only)",
            tuple(
                gt(R(FIVE, "venodb", "total_mbps", p), R(FIVE, o, "total_mbps", p), much=True)
                for p in five_points
                for o in others
            ),
        ),
        Claim(
            "001-F9-10-rtt",
            "001",
            "§4.2 C, Figs. 9-10",
            "Between a 50 ms and a 140 ms flow, VenoDB is fairer than Veno (the short flow gets more in both).",
            "F(x) of VenoDB 'higher' than of Veno (no numbers given)",
            (
                gt(R(RTT, "venodb", "jain"), R(RTT, "veno", "jain")),
                gt(
                    R(RTT, "venodb", "short_mbps", name="VenoDB 50 ms"),
                    R(RTT, "venodb", "long_mbps", name="140 ms"),
                    baseline=True,
                ),
                gt(
                    R(RTT, "veno", "short_mbps", name="Veno 50 ms"),
                    R(RTT, "veno", "long_mbps", name="140 ms"),
                    baseline=True,
                ),
            ),
        ),
        Claim(
            "001-F11-12-friendliness",
            "001",
            "§4.2 D, Figs. 11-12",
            "Against two NewReno flows, two VenoDB flows take more than two Veno flows do, "
            "yet leave NewReno a fair part.",
            "VenoDB pair 'occupy more bandwidth' than the Veno pair (figure only)",
            (
                gt(
                    R(FRIEND, "venodb", "pair_mbps", name="VenoDB pair"),
                    R(FRIEND, "veno", "pair_mbps", name="Veno pair"),
                ),
                Check(
                    "at_least", R(FRIEND, "venodb", "reno_share", name="NewReno pair's share beside VenoDB"), bound=0.25
                ),
            ),
            metric_note="'a fair part' taken as at least half of NewReno's fair share (0.25 of the total)",
        ),
    ]


def _claims_002(full: bool) -> list[Claim]:
    sweep_points = (0.2, 0.4, 0.6, 0.8, 0.9, 1.0) if full else (1.0,)
    return [
        Claim(
            "002-F4-load-0.9",
            "002",
            "§4.1, Fig. 4",
            "Under a 0.9 backward load, RoVegas keeps more than twice Vegas's throughput.",
            "during the VBR period: RoVegas 776 vs Vegas 348 kbit/s (×2.23)",
            (gt(R(SINGLE, "rovegas", "during_kbps"), R(SINGLE, "vegas", "during_kbps"), 776 / 348),),
        ),
        Claim(
            "002-F4-before",
            "002",
            "§4.1, Fig. 4",
            "Before the backward traffic starts, Vegas fills the 1 Mbit/s bottleneck.",
            "Vegas 'stabilises at 1000 kbit/s'",
            (Check("at_least", R(SINGLE, "vegas", "before_util"), bound=0.9, baseline=True),),
            metric_note="bottleneck utilisation over 10-50 s",
        ),
        Claim(
            "002-F5-load-1.0",
            "002",
            "§4.1, Fig. 5",
            "At backward load 1, RoVegas's average throughput is 6.75 times Vegas's.",
            "×6.75",
            (gt(R(LOADS, "rovegas", "goodput_kbps", 1.0), R(LOADS, "vegas", "goodput_kbps", 1.0), 6.75),),
        ),
        Claim(
            "002-F5-sweep",
            "002",
            "§4.1, Fig. 5",
            "RoVegas is above Vegas at every backward load, more so as it grows; equal without load.",
            "'much higher average throughput ... especially when the backward traffic load is heavy'",
            (
                sim(
                    R(LOADS, "rovegas", "goodput_kbps", 0.0),
                    R(LOADS, "vegas", "goodput_kbps", 0.0),
                    0.05,
                    baseline=True,
                ),
                *(
                    gt(R(LOADS, "rovegas", "goodput_kbps", p), R(LOADS, "vegas", "goodput_kbps", p), much=True)
                    for p in sweep_points
                ),
            ),
        ),
        Claim(
            "002-F6-parking-lot",
            "002",
            "§4.1, Fig. 6",
            "In the parking lot with three 800 kbit/s backward sources, RoVegas keeps a much higher throughput.",
            "RoVegas 'much higher' than Vegas from 50 s (figure only)",
            (gt(R(PARK, "rovegas", "during_kbps"), R(PARK, "vegas", "during_kbps"), much=True),),
        ),
        Claim(
            "002-F8-compatibility",
            "002",
            "§4.2, Fig. 8",
            "Two Vegas and two RoVegas flows share fairly; under backward load RoVegas gets about twice as much.",
            "before 50 s fair; after: RoVegas 296.5 + 289.6 vs Vegas 140.5 + 140.3 kbit/s (×2.09)",
            (
                Check("at_least", R(COMPAT, "rovegas", "jain_before"), bound=0.9, baseline=True),
                gt(
                    R(COMPAT, "rovegas", "test_pair_during_kbps", name="RoVegas pair"),
                    R(COMPAT, "rovegas", "vegas_pair_during_kbps", name="Vegas pair"),
                    586.1 / 280.8,
                ),
            ),
        ),
        Claim(
            "002-F9-gradual",
            "002",
            "§4.3, Fig. 9",
            "With only one AQT-enabled router (R2) on the path, RoVegas still keeps a higher throughput than Vegas.",
            "RoVegas 'still maintains a higher throughput' (figure only)",
            (gt(R(GRADUAL, "rovegas", "during_kbps"), R(GRADUAL, "vegas", "during_kbps")),),
        ),
    ]


def _claims_003() -> list[Claim]:
    return [
        Claim(
            "003-F2-3-startup",
            "003",
            "§V A, Figs. 2-3",
            "Vegas-W reaches full utilisation of the 15 Mbit/s bottleneck in 6.4 s, much sooner than Vegas.",
            "Vegas-W 6.4 s to full utilisation",
            (
                Check("sooner", R(CBR, "vegas-w", "t_first_s"), R(CBR, "vegas", "t_first_s"), reached="reached_first"),
                Check("within", R(CBR, "vegas-w", "t_first_s"), bound=2 * 6.4, reached="reached_first"),
            ),
            metric_note="first time the bottleneck's utilisation, averaged over 1 s, reaches 0.95 (as the paper "
            "reads its figure); runs that never reach it before the CBR are censored, not counted as 80 s",
        ),
        Claim(
            "003-F2-3-cbr-step",
            "003",
            "§V A, Figs. 2-3",
            "When a 6 Mbit/s CBR flow takes part of the link (80-150 s) and leaves, Vegas-W responds swiftly.",
            "Vegas-W 'responds swiftly' (figure only)",
            (
                gt(R(CBR, "vegas-w", "util_cbr"), R(CBR, "vegas", "util_cbr")),
                Check("sooner", R(CBR, "vegas-w", "t_back_s"), R(CBR, "vegas", "t_back_s"), reached="back_first"),
            ),
            metric_note="bottleneck utilisation during the CBR (CBR included); first time the utilisation, "
            "averaged over 1 s, reaches 0.95 again after it (censored at the end of the run)",
        ),
        Claim(
            "003-F4-5-route",
            "003",
            "§V B, Figs. 4-5",
            "On a new route with more bandwidth and delay, Vegas's cwnd shrinks while Vegas-W's grows; "
            "Vegas-W's throughput is much better.",
            "Vegas's cwnd 'decreases ridiculously'; Vegas-W 'performs much better' (figure only)",
            (
                Check("at_most", R(ROUTE, "vegas", "cwnd_ratio"), bound=1.0, baseline=True),
                Check("at_least", R(ROUTE, "vegas-w", "cwnd_ratio"), bound=1.0),
                gt(R(ROUTE, "vegas-w", "change_mbps"), R(ROUTE, "vegas", "change_mbps"), much=True),
            ),
        ),
    ]


def all_claims(quick: bool = False) -> list[Claim]:
    """Every claim the report tests (the quick plan has fewer sweep points)."""
    return _claims_004() + _claims_000() + _claims_001(not quick) + _claims_002(not quick) + _claims_003()


PAPERS = {
    "004": ("004_039b3aff67042154.txt", "Brakmo, O'Malley, Peterson: TCP Vegas"),
    "000": ("000_625d42b67da1ab13.txt", "Li, Zhu, He: TCP Vegas-L over satellite"),
    "001": ("001_8629d53d83e82638.txt", "TCP VenoDB"),
    "002": ("002_7f811f836ada7a25.txt", "RoVegas"),
    "003": ("003_5b3b63821b3b4570.txt", "Vegas-W over GEO"),
}

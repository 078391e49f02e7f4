"""Writing ``docs/reproduction.md`` and its figures from the measured results.

Nothing here holds a result: every number, verdict and comparison in the
document is computed from the runs; the prose that explains differences
(:mod:`.accounts`) states the setup's facts and words its findings from the
numbers it is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..report import markdown_table
from ..stats import MeanCI
from . import accounts, figures
from . import verdict as v
from .claims import PAPERS, Claim
from .plan import (
    ALT_SUFFIX,
    MODERN,
    SCENARIO_DIR,
    VEGAS_FAMILY,
    Experiment,
    RunSpec,
    alternative_of,
    toml_value,
)
from .results import METRICS, Ref, Results, display, fmt, unit
from .runner import RunRecord

VERDICT_WORDS = v.VERDICTS


@dataclass
class Evaluated:
    claim: Claim
    outcomes: list[tuple[v.Outcome, str]]
    verdict: str
    # The verdict with the scenario's other value of its open assumption.
    sensitivity: str = ""


def claim_verdict(claim: Claim, results: Results) -> tuple[list[tuple[v.Outcome, str]], str]:
    """Every check's outcome (in order) and the verdict of the distinguishing ones."""
    outcomes = [check.evaluate(results) for check in claim.checks]
    counted = [o for (o, _), check in zip(outcomes, claim.checks, strict=True) if check in claim.distinguishing()]
    return outcomes, v.verdict(counted)


def sensitivity(claim: Claim, results: Results, alternatives: Sequence[Experiment]) -> str:
    """``"buffers 100: **unresolved**"``: the claim's verdict on the runs with its
    scenario's other value (:data:`.plan.ALTERNATIVES`); "" without those runs."""
    keys = {ref.experiment for check in claim.checks for ref in check.refs()}
    alts = {a.key.removesuffix(ALT_SUFFIX): a for a in alternatives}
    if not keys or not keys <= set(alts):
        return ""
    alt = alternative_of(alts[next(iter(sorted(keys)))])
    if alt is None:
        return ""
    moved = replace(claim, checks=tuple(c.moved(ALT_SUFFIX) for c in claim.checks))
    _, word = claim_verdict(moved, results)
    return f"{alt.short}: **{word}**"


def evaluate(claims: Sequence[Claim], results: Results, alternatives: Sequence[Experiment] = ()) -> list[Evaluated]:
    out = []
    for claim in claims:
        outcomes, word = claim_verdict(claim, results)
        out.append(Evaluated(claim, outcomes, word, sensitivity(claim, results, alternatives)))
    return out


def ours_cell(claim: Claim, results: Results, limit: int = 8) -> str:
    """The claim's measured quantities: ``Vegas-L 2.31 ± 0.05; Vegas 1.02 ± 0.01 Mbit/s (n = 5)``."""
    refs = claim.shown()
    # Times to an event are shown censored: the runs that reach it, and how many.
    reached = {ref: c.reached for c in claim.checks if c.reached for ref in c.refs()}
    parts = []
    units, ns = set(), set()
    for ref in refs[:limit]:
        where = f" @{ref.point:g}" if ref.point is not None else ""
        if ref in reached:
            events = v.TimeToEvent.of(results.values(ref), results.values(replace(ref, metric=str(reached[ref]))))
            parts.append((ref, f"{ref.title()}{where} first {events.text()}", events.n))
            units.add("(time)")
            ns.add(events.n)
            continue
        ci = results.stat(ref)
        parts.append((ref, f"{ref.title()}{where} {fmt(ci, ref.metric)}", ci.n))
        units.add(unit(ref.metric))
        ns.add(ci.n)
    if len(units) == 1:
        u = units.pop()
        text = "; ".join(p for _, p, _ in parts) + (f" {u}" if u and u != "(time)" else "")
    else:
        text = "; ".join(p + (f" {unit(r.metric)}" if unit(r.metric) and r not in reached else "") for r, p, _ in parts)
    if len(refs) > limit:
        text += f"; … ({len(refs) - limit} more below)"
    if len(ns) == 1:
        text += f" (n = {ns.pop()})"
    else:
        text += " (n = " + ", ".join(str(n) for _, _, n in parts) + ")"
    if claim.metric_note:
        text += f"; {claim.metric_note}"
    return text


def paper_ref(claim: Claim) -> str:
    return f"{claim.paper} {claim.source}"


def verdict_table(evaluated: Sequence[Evaluated], results: Results) -> str:
    import pandas as pd

    rows = [
        {
            "Claim": f"`{e.claim.id}`: {e.claim.claim}",
            "Paper (where)": paper_ref(e.claim),
            "Paper's figure": e.claim.paper_figure,
            "Ours (mean ± 95% CI, n)": ours_cell(e.claim, results),
            "Sensitivity (other value: verdict)": e.sensitivity or "-",
            "Verdict": f"**{e.verdict}**",
        }
        for e in evaluated
    ]
    return markdown_table(pd.DataFrame(rows), align=["l", "l", "l", "l", "l", "l"])


def claim_details(e: Evaluated) -> str:
    kind = " (a baseline claim: the paper's starting point)" if e.claim.baseline else ""
    lines = [f"- **`{e.claim.id}`** ({paper_ref(e.claim)}): {e.verdict}{kind}."]
    for (outcome, text), check in zip(e.outcomes, e.claim.checks, strict=True):
        tag = " [baseline, not counted]" if check.baseline and not e.claim.baseline else ""
        lines.append(f"  - {text}: {outcome.status} ({outcome.reason}){tag}")
    return "\n".join(lines)


# ---------------------------------------------------------------- modern


@dataclass(frozen=True)
class View:
    """How the "does it beat CUBIC/BBR2" table reads one experiment."""

    experiment: str
    primary: str
    higher_is_better: bool
    extra: tuple[str, ...]
    labels: tuple[str, ...] | None = None
    what: str = ""


VIEWS = (
    View(
        "004-one-on-one",
        "large_kBps",
        True,
        ("small_kBps", "total_retx_KB", "queue_ms"),
        ("reno/vegas", "reno/reno", "reno/cubic", "reno/bbr2"),
        "the 1 MB transfer's throughput beside a 300 KB NewReno transfer",
    ),
    View(
        "004-background",
        "transfer_kBps",
        True,
        ("transfer_retx_KB", "background_kBps", "queue_ms"),
        what="the 1 MB transfer's throughput amid background traffic",
    ),
    View("000-per-1e-6", "test_mbps", True, ("reno_mbps", "jain", "queue_ms"), what="own goodput beside NewReno"),
    View("000-per-1e-3", "test_mbps", True, ("reno_mbps", "jain", "queue_ms"), what="own goodput beside NewReno"),
    View("001-loss-sweep", "goodput_mbps", True, ("queue_ms",), what="goodput of one flow"),
    View("001-reverse", "goodput_mbps", True, ("during_mbps", "after_mbps", "queue_ms"), what="goodput over the run"),
    View("001-five-flow", "total_mbps", True, ("jain", "queue_ms"), what="total goodput of five flows"),
    View("001-rtt-fairness", "jain", True, ("total_mbps", "short_mbps", "long_mbps"), what="fairness (Jain)"),
    View("001-friendliness", "pair_mbps", True, ("reno_share", "queue_ms"), what="goodput of the pair beside NewReno"),
    View("002-single", "during_kbps", True, ("goodput_kbps", "queue_ms"), what="goodput under backward load 0.9"),
    View("002-load-sweep", "goodput_kbps", True, (), what="goodput under backward load"),
    View("002-parking-lot", "during_kbps", True, ("goodput_kbps", "queue_ms"), what="goodput under backward load"),
    View("002-gradual", "during_kbps", True, ("goodput_kbps", "queue_ms"), what="goodput under backward load"),
    View(
        "002-compatibility",
        "test_pair_during_kbps",
        True,
        ("vegas_pair_during_kbps", "jain_before"),
        what="the pair's goodput beside two Vegas flows",
    ),
    View(
        "003-cbr-step",
        "goodput_mbps",
        True,
        ("t_full_s", "util_cbr", "t_recover_s", "queue_ms"),
        what="goodput over the run",
    ),
    View("003-route-change", "goodput_mbps", True, ("change_mbps", "queue_ms"), what="goodput over the run"),
    View("ref-fau-sat", "completion_s", False, ("queue_ms", "retx_ratio"), what="10 MiB download time"),
    View("ref-fau-satl", "completion_s", False, ("queue_ms", "retx_ratio"), what="10 MiB download time"),
)


def _family(label: str) -> str:
    """``vegas`` (the Vegas family), ``modern`` (cubic, bbr2) or ``other``;
    a combination ``small/large`` is classed by the large transfer (the one under test)."""
    key = label.split("/")[-1]
    if key in VEGAS_FAMILY:
        return "vegas"
    if key in MODERN:
        return "modern"
    return "other"


def _best(stats: dict[str, MeanCI], family: str, higher: bool) -> tuple[str, MeanCI] | None:
    items = [(k, s) for k, s in stats.items() if _family(k) == family and not math.isnan(s.mean)]
    if not items:
        return None
    return max(items, key=lambda kv: kv[1].mean if higher else -kv[1].mean)


def answer(stats: dict[str, MeanCI], metric: str, higher: bool) -> tuple[str, str]:
    """("yes" / "no" / "tie" / "-", the sentence) for one experiment (or point)."""
    vegas, modern = _best(stats, "vegas", higher), _best(stats, "modern", higher)
    if vegas is None or modern is None:
        return "-", "no comparison (missing runs)"
    (vl, vs), (ml, ms) = vegas, modern
    u = unit(metric)
    u = f" {u}" if u else ""
    nums = f"best Vegas-family {display(vl)} {fmt(vs, metric)}{u} vs best modern {display(ml)} {fmt(ms, metric)}{u}"
    better = vs.mean > ms.mean if higher else vs.mean < ms.mean
    apart = (vs.low > ms.high or ms.low > vs.high) if not (math.isnan(vs.low) or math.isnan(ms.low)) else False
    if not apart:
        return "tie", f"no clear difference: {nums} (intervals overlap)"
    return ("yes", f"yes: {nums}") if better else ("no", f"no: {nums}")


def _pair(stats: dict[str, MeanCI], higher: bool, modern: tuple[str, ...] = MODERN) -> tuple[str, str] | None:
    """The best Vegas-family label and the best of ``modern``."""
    vegas = _best(stats, "vegas", higher)
    others = {k: s for k, s in stats.items() if k.split("/")[-1] in modern}
    best = _best(others, "modern", higher)
    return (vegas[0], best[0]) if vegas and best else None


class _Tally:
    """What the comparisons add up to, for the section's summary."""

    def __init__(self) -> None:
        self.words: dict[str, list[str]] = {"yes": [], "no": [], "tie": [], "-": []}
        self.cubic: dict[str, int] = {"yes": 0, "no": 0, "tie": 0, "-": 0}
        self.deeper = 0  # the better modern one queued at least twice as long
        self.queued = 0  # comparisons where both queueing delays are known

    def add(self, where: str, word: str, stats: dict[str, MeanCI], view: View, results: Results, key: Any) -> None:
        self.words[word].append(where)
        cubic_only = {k: s for k, s in stats.items() if _family(k) == "vegas" or k.split("/")[-1] == "cubic"}
        self.cubic[answer(cubic_only, view.primary, view.higher_is_better)[0]] += 1
        pair = _pair(stats, view.higher_is_better)
        if pair is None:
            return
        exp, point = key
        qv = results.stat(Ref(exp, pair[0], "queue_ms", point)).mean
        qm = results.stat(Ref(exp, pair[1], "queue_ms", point)).mean
        if not (math.isnan(qv) or math.isnan(qm)):
            self.queued += 1
            self.deeper += int(qm >= 2 * max(qv, 0.1))


def _labels_of(exp: Experiment, view: View) -> tuple[str, ...]:
    return view.labels or exp.labels


def modern_section(experiments: Sequence[Experiment], results: Results) -> str:
    import pandas as pd

    by_key = {e.key: e for e in experiments}
    out = []
    tally = _Tally()
    for view in VIEWS:
        exp = by_key.get(view.experiment)
        if exp is None:
            continue
        labels = _labels_of(exp, view)
        higher = "higher" if view.higher_is_better else "lower"
        out.append(f"#### {exp.title} (`{exp.key}`)\n")
        out.append(f"Measure: {view.what} ({METRICS[view.primary][2]}, {higher} is better).\n")
        if exp.points:
            rows = []
            verdicts = []
            for label in labels:
                row: dict[str, Any] = {"algorithm": display(label)}
                for p in exp.points:
                    row[f"{p:g}"] = fmt(results.stat(Ref(exp.key, label, view.primary, p)), view.primary)
                rows.append(row)
            for p in exp.points:
                stats = {lab: results.stat(Ref(exp.key, lab, view.primary, p)) for lab in labels}
                word, sentence = answer(stats, view.primary, view.higher_is_better)
                tally.add(f"`{exp.key}` at {p:g}", word, stats, view, results, (exp.key, p))
                verdicts.append(f"- at {exp.point_name} {p:g}: {sentence}")
            u = unit(view.primary)
            out.append(f"{METRICS[view.primary][2]} ({u}) per {exp.point_name}:\n")
            out.append(markdown_table(pd.DataFrame(rows)))
            out.append("\n".join(verdicts) + "\n")
        else:
            rows = []
            for label in labels:
                row = {"algorithm": display(label)}
                for metric in (view.primary, *view.extra):
                    u = unit(metric)
                    row[f"{METRICS[metric][2]}" + (f" ({u})" if u else "")] = fmt(
                        results.stat(Ref(exp.key, label, metric)), metric
                    )
                rows.append(row)
            out.append(markdown_table(pd.DataFrame(rows)))
            stats = {lab: results.stat(Ref(exp.key, lab, view.primary)) for lab in labels}
            word, sentence = answer(stats, view.primary, view.higher_is_better)
            tally.add(f"`{exp.key}`", word, stats, view, results, (exp.key, None))
            out.append(f"**Answer:** {sentence}.\n")
    w, c = tally.words, tally.cubic
    total = sum(len(v) for v in w.values())
    summary = (
        f"Over the {total} comparisons below (an experiment, or a point of a sweep), the best Vegas-family "
        f"algorithm beats the better of CUBIC and BBR2 with non-overlapping 95% intervals in {len(w['yes'])}, "
        f"loses in {len(w['no'])}, and is not distinguishable in {len(w['tie'])}"
        + (f" ({len(w['-'])} without data)" if w["-"] else "")
        + f". Against CUBIC alone (quiche's default) it wins {c['yes']}, loses {c['no']} and ties {c['tie']}. "
        f"In {tally.deeper} of the {tally.queued} comparisons with queueing delays, the better of CUBIC and "
        "BBR2 kept its packets queued at least twice as long as the best Vegas-family algorithm.\n"
    )
    for word, title in (("yes", "Vegas family ahead"), ("tie", "no clear difference"), ("no", "CUBIC or BBR2 ahead")):
        if w[word]:
            summary += f"\n- {title}: {', '.join(w[word])}"
    return summary + "\n\n" + "\n".join(out)


# ---------------------------------------------------------------- runs


def commands_section(experiments: Sequence[Experiment], records: Sequence[RunRecord], root: Path) -> str:
    """Every vegas-sim command, compactly: per experiment, one template per
    algorithm group with the values its placeholders took (every combination
    of them was run)."""
    runs_dir = _rel(records[0].directory, root).split(records[0].spec.experiment)[0].rstrip("/") if records else "DIR"
    out = [f"`DIR` is `{runs_dir}/EXPERIMENT/LABEL[/pPOINT][/CONFIG]/seed-SEED`.\n"]
    for exp in experiments:
        blocks: dict[tuple[Any, ...], list[str]] = {}
        by_label: dict[str, list[RunSpec]] = {}
        for spec in exp.specs:
            by_label.setdefault(spec.label, []).append(spec)
        for specs in by_label.values():
            for template, values, seeds in _templates(specs):
                algo = specs[0].cc + "".join(f" --cc-param {p}" for p in specs[0].cc_params)
                key = (tuple(template), tuple((k, tuple(v)) for k, v in values), tuple(seeds))
                if algo not in blocks.setdefault(key, []):
                    blocks[key].append(algo)
        out.append(f"<details><summary><code>{exp.key}</code>: {len(exp.specs)} runs</summary>\n")
        for (template, values, seeds), algos in blocks.items():
            out.append("```sh\n" + " ".join(_quote(a) for a in template) + "\n```")
            where = [f"CC ∈ {{{', '.join(algos)}}}", f"SEED ∈ {{{_ranges(list(seeds))}}}"]
            where += [f"{name} ∈ {{{', '.join(vals)}}}" for name, vals in values]
            out.append("with " + "; ".join(where) + (" (every combination)" if values else "") + "\n")
        out.append("</details>\n")
    return "\n".join(out)


def _templates(specs: Sequence[RunSpec]) -> list[tuple[list[str], list[tuple[str, list[str]]], list[int]]]:
    """Templates of one algorithm's runs: specs with the same ``--set`` paths
    share a template whose varying values are placeholders."""
    by_paths: dict[tuple[str, ...], list[RunSpec]] = {}
    for spec in specs:
        by_paths.setdefault(tuple(p for p, _ in spec.sets), []).append(spec)
    result = []
    for paths, group in by_paths.items():
        text = [{p: toml_value(v) for p, v in spec.sets} for spec in group]
        varying = [p for p in paths if len({t[p] for t in text}) > 1]
        names = {p: p.split(".")[-1].upper() for p in varying}
        template = ["vegas-sim", "run", str(SCENARIO_DIR / group[0].scenario), "--cc", "CC"]
        template += ["--seed", "SEED"]
        for p in paths:
            template += ["--set", f"{p}={names[p] if p in names else text[0][p]}"]
        template += ["--no-qlog", "--out", "DIR"]
        values = [(names[p], sorted({t[p] for t in text}, key=_num_key)) for p in varying]
        seeds = sorted({s.seed for s in group})
        result.append((template, values, seeds))
    return result


def _num_key(text: str) -> tuple[int, float, str]:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _quote(arg: str) -> str:
    if all(c.isalnum() or c in "-_./=,:+@" for c in arg):
        return arg
    return "'" + arg.replace("'", "'\\''") + "'"


def _ranges(values: list[int]) -> str:
    if values and values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}..{values[-1]}"
    return ", ".join(str(x) for x in values)


# ---------------------------------------------------------------- figures


@dataclass(frozen=True)
class FigureSpec:
    name: str
    caption: str
    make: Callable[[Results], Any]


def figure_specs(experiments: Sequence[Experiment]) -> dict[str, list[FigureSpec]]:
    """The figures of each paper's section, by paper number (and "ref")."""
    f = figures
    by_key = {e.key: e for e in experiments}

    def labels(key: str) -> tuple[str, ...]:
        return by_key[key].labels if key in by_key else ()

    def window(key: str, kind: str) -> list[tuple[float, float]]:
        exp = by_key.get(key)
        if exp is None or not exp.specs:
            return []
        from .plan import effective_scenario

        table = effective_scenario(_ROOT[0], exp.specs[0])
        if kind == "cross":
            spans = []
            for c in table.get("cross_traffic", {}).values():
                start = float(c.get("start_s", 0.0))
                stop = float(c.get("stop_s", table["duration_s"]))
                spans.append((start, min(stop, float(table["duration_s"]))))
            return spans[:1]
        times = sorted({float(c["at_s"]) for c in table.get("changes", [])})
        return [(times[0], times[1])] if len(times) >= 2 else []

    one = ("reno/reno", "reno/vegas", "vegas/reno", "vegas/vegas", "reno/cubic", "reno/bbr2")
    return {
        "004": [
            FigureSpec(
                "004-one-on-one",
                "Table 1 setting: throughput of the 1 MB transfer (under test) beside a 300 KB transfer, "
                "labelled small/large; mean and 95% CI over the 12 configurations.",
                lambda r: f.bars(r, "004-one-on-one", "large_kBps", one, ylabel="1 MB transfer (KB/s)", decimals=0),
            ),
            FigureSpec(
                "004-background",
                "Table 2 setting: the 1 MB transfer's throughput amid background traffic.",
                lambda r: f.bars(
                    r, "004-background", "transfer_kBps", labels("004-background"), ylabel="KB/s", decimals=0
                ),
            ),
            FigureSpec(
                "004-background-retx",
                "Table 2 setting: kilobytes the 1 MB transfer retransmitted.",
                lambda r: f.bars(
                    r,
                    "004-background",
                    "transfer_retx_KB",
                    labels("004-background"),
                    ylabel="Retransmitted (KB)",
                    decimals=1,
                ),
            ),
        ],
        "000": [
            FigureSpec(
                "000-throughput",
                "Fig. 5 setting: goodput of the flow under test beside NewReno, at PER 1e-6 and 1e-3.",
                lambda r: _two_points(r, "000", "test_mbps", labels("000-per-1e-6"), "Goodput (Mbit/s)"),
            ),
            FigureSpec(
                "000-newreno",
                "Fig. 5 setting: goodput of the NewReno flow beside each algorithm.",
                lambda r: _two_points(r, "000", "reno_mbps", labels("000-per-1e-6"), "NewReno goodput (Mbit/s)"),
            ),
            FigureSpec(
                "000-fairness",
                "Fig. 6 setting: Jain's index of the two flows.",
                lambda r: _two_points(r, "000", "jain", labels("000-per-1e-6"), "Jain's fairness index"),
            ),
            FigureSpec(
                "000-cwnd-per-1e-6",
                "Fig. 4(a) setting: cwnd (1200-byte packets) of the flow under test, seed 1, PER 1e-6.",
                lambda r: f.time_series(r, "000-per-1e-6", labels("000-per-1e-6"), kind="cwnd"),
            ),
        ],
        "001": [
            FigureSpec(
                "001-loss-sweep",
                "Fig. 2 setting: goodput of one flow against the random loss rate (mean ± 95% CI).",
                lambda r: f.sweep(
                    r,
                    "001-loss-sweep",
                    "goodput_mbps",
                    labels("001-loss-sweep"),
                    xlabel="Random loss rate",
                    ylabel="Goodput (Mbit/s)",
                    logx=True,
                ),
            ),
            FigureSpec(
                "001-reverse",
                "Fig. 5 setting: goodput per second, seed 1; shaded: the reverse CBR.",
                lambda r: f.time_series(
                    r, "001-reverse", labels("001-reverse"), kind="goodput", shade=window("001-reverse", "cross")
                ),
            ),
            FigureSpec(
                "001-reverse-seeds",
                "Fig. 5 setting: goodput per 2 s of every seed, one panel per algorithm; shaded: the reverse CBR.",
                lambda r: f.per_seed_goodput(
                    r,
                    "001-reverse",
                    ("venodb", "veno", "westwood", "reno"),
                    shade=window("001-reverse", "cross"),
                ),
            ),
            FigureSpec(
                "001-five-flow-jain",
                "Fig. 6 setting: Jain's index of five flows per loss rate.",
                lambda r: f.bars(
                    r, "001-five-flow", "jain", labels("001-five-flow"), ylabel="Jain's index", group="loss", decimals=3
                ),
            ),
            FigureSpec(
                "001-five-flow-total",
                "Fig. 7 setting: total goodput of five flows per loss rate.",
                lambda r: f.bars(
                    r,
                    "001-five-flow",
                    "total_mbps",
                    labels("001-five-flow"),
                    ylabel="Total goodput (Mbit/s)",
                    group="loss",
                ),
            ),
            FigureSpec(
                "001-rtt-jain",
                "Figs. 9-10 setting: Jain's index of a 50 ms and a 140 ms flow.",
                lambda r: f.bars(
                    r, "001-rtt-fairness", "jain", labels("001-rtt-fairness"), ylabel="Jain's index", decimals=3
                ),
            ),
            FigureSpec(
                "001-friendliness",
                "Figs. 11-12 setting: goodput of the pair under test beside two NewReno flows.",
                lambda r: f.bars(
                    r, "001-friendliness", "pair_mbps", labels("001-friendliness"), ylabel="Pair goodput (Mbit/s)"
                ),
            ),
        ],
        "002": [
            FigureSpec(
                "002-single",
                "Fig. 4 setting: goodput per second, seed 1; shaded: the backward VBR (load 0.9).",
                lambda r: f.time_series(
                    r, "002-single", labels("002-single"), kind="goodput", shade=window("002-single", "cross")
                ),
            ),
            FigureSpec(
                "002-load-sweep",
                "Fig. 5 setting: average goodput against the backward load (mean ± 95% CI).",
                lambda r: f.sweep(
                    r,
                    "002-load-sweep",
                    "goodput_kbps",
                    labels("002-load-sweep"),
                    xlabel="Backward traffic load",
                    ylabel="Goodput (kbit/s)",
                ),
            ),
            FigureSpec(
                "002-parking-lot",
                "Fig. 6 setting: goodput per second in the parking lot, seed 1; shaded: the backward VBR.",
                lambda r: f.time_series(
                    r,
                    "002-parking-lot",
                    labels("002-parking-lot"),
                    kind="goodput",
                    shade=window("002-parking-lot", "cross"),
                ),
            ),
        ],
        "003": [
            FigureSpec(
                "003-cbr-step",
                "Fig. 3 setting: goodput per 2 s, seed 1; shaded: the 6 Mbit/s CBR.",
                lambda r: f.time_series(
                    r, "003-cbr-step", labels("003-cbr-step"), kind="goodput", shade=window("003-cbr-step", "cross")
                ),
            ),
            FigureSpec(
                "003-route-change-cwnd",
                "Fig. 4 setting: cwnd (1200-byte packets), seed 1; shaded: the new route.",
                lambda r: f.time_series(
                    r,
                    "003-route-change",
                    labels("003-route-change"),
                    kind="cwnd",
                    shade=window("003-route-change", "changes"),
                ),
            ),
        ],
        "ref": [
            FigureSpec(
                "ref-fau",
                "Reference GEO download (10 MiB): completion time, fau-sat and fau-satl (1% loss).",
                lambda r: _fau(r, by_key),
            ),
        ],
    }


_ROOT: list[Path] = [Path(".")]


def _two_points(results: Results, paper: str, metric: str, labels: Sequence[str], ylabel: str) -> Any:
    import pandas as pd

    parts = []
    for per in ("1e-6", "1e-3"):
        t = figures.agg_table(results, f"{paper}-per-{per}", metric, labels)
        if not t.empty:
            parts.append(t.assign(PER=per))
    if not parts:
        return None
    from .. import plots

    return plots.plot_bars(
        pd.concat(parts, ignore_index=True),
        value="value",
        bar="algorithm",
        group="PER",
        ylabel=ylabel,
        decimals=2,
        annotate=False,
    )


def _fau(results: Results, by_key: dict[str, Experiment]) -> Any:
    import pandas as pd

    from .. import plots

    parts = []
    for key in ("ref-fau-sat", "ref-fau-satl"):
        if key in by_key:
            t = figures.agg_table(results, key, "completion_s", by_key[key].labels)
            if not t.empty:
                parts.append(t.assign(scenario=key.removeprefix("ref-")))
    if not parts:
        return None
    return plots.plot_bars(
        pd.concat(parts, ignore_index=True),
        value="value",
        bar="algorithm",
        group="scenario",
        ylabel="Download time (s)",
        annotate=False,
        size=(3.5, 3.0),
    )


def make_figures(
    experiments: Sequence[Experiment], results: Results, fig_dir: Path, root: Path
) -> dict[str, list[tuple[str, str]]]:
    """Draws every figure; returns per section the (file name, caption) of those drawn."""
    _ROOT[0] = root
    drawn: dict[str, list[tuple[str, str]]] = {}
    for section, specs in figure_specs(experiments).items():
        for spec in specs:
            fig = spec.make(results)
            if fig is None:
                continue
            path = figures.save_png(fig, fig_dir, spec.name)
            drawn.setdefault(section, []).append((path.name, spec.caption))
    return drawn


def _figure_block(drawn: dict[str, list[tuple[str, str]]], section: str, fig_rel: str) -> str:
    lines = []
    for name, caption in drawn.get(section, []):
        lines.append(f"![{caption}]({fig_rel}/{name})  \n*{caption}*\n")
    return "\n".join(lines)


# ---------------------------------------------------------------- document


def render(
    experiments: Sequence[Experiment],
    claims: Sequence[Claim],
    results: Results,
    records: Sequence[RunRecord],
    *,
    root: Path,
    doc_path: Path,
    fig_dir: Path,
    info: dict[str, Any],
    alternatives: Sequence[Experiment] = (),
) -> str:
    """The whole Markdown document (and the figures, written to ``fig_dir``)."""
    evaluated = evaluate(claims, results, alternatives)
    drawn = make_figures(experiments, results, fig_dir, root)
    fig_rel = _rel(fig_dir, doc_path.parent)
    main = [e for e in evaluated if not e.claim.baseline]
    base = [e for e in evaluated if e.claim.baseline]
    counts = {w: sum(1 for e in main if e.verdict == w) for w in VERDICT_WORDS}
    base_counts = {w: sum(1 for e in base if e.verdict == w) for w in VERDICT_WORDS}
    by_paper: dict[str, list[Evaluated]] = {}
    for e in evaluated:
        by_paper.setdefault(e.claim.paper, []).append(e)
    exp_by_paper: dict[str, list[Experiment]] = {}
    for exp in experiments:
        exp_by_paper.setdefault(exp.paper or "ref", []).append(exp)

    parts: list[str] = []
    parts.append("# Reproduction: the papers' headline results on QUIC\n")
    parts.append(
        "Generated by `scripts/reproduce`; do not edit by hand. Every number below was measured by the "
        f"simulator (`vegas-sim`: real {accounts.quiche_version(root)} endpoints over simulated links, in virtual "
        "time) in the "
        "runs listed at the end, and every verdict is computed from those numbers by the rule stated here.\n"
    )
    parts.append(accounts.provenance(info))
    parts.append(
        f"**Summary:** of {len(main)} claims on the papers' contributions, {counts['reproduced']} reproduced, "
        f"{counts['partly']} partly, {counts['unresolved']} unresolved, {counts['not']} not; "
        f"{len(base)} baseline claims (the setting a paper starts from, not counted above): "
        + ", ".join(f"{base_counts[w]} {w}" for w in VERDICT_WORDS if base_counts[w])
        + ".\n"
    )
    parts.append("## Verdict rules\n")
    parts.append(accounts.RULE_TEXT)
    parts.append(accounts.sensitivity_text(alternatives))
    parts.append("## Departures\n")
    parts.append(accounts.departures_text(accounts.quiche_version(root)))
    parts.append("## Verdicts\n")
    parts.append(verdict_table(evaluated, results))
    parts.append("")
    parts.append("## The papers one by one\n")
    for paper in ("004", "000", "001", "002", "003"):
        if paper not in by_paper and paper not in exp_by_paper:
            continue
        file, title = PAPERS[paper]
        parts.append(f"### {paper}: {title} (`{file}`)\n")
        for exp in exp_by_paper.get(paper, []):
            parts.append(accounts.experiment_line(exp))
        parts.append("")
        parts.append(_figure_block(drawn, paper, fig_rel))
        parts.append("**Checks.**\n")
        parts.append("\n".join(claim_details(e) for e in by_paper.get(paper, [])) + "\n")
        parts.append("**Differences from the paper and their likely causes.**\n")
        for e in by_paper.get(paper, []):
            parts.append(f"- **`{e.claim.id}`** ({e.verdict}): {accounts.account(e.claim.id, results, e.verdict)}")
        parts.append("")
    parts.append("## Does a Vegas-family algorithm beat what you would pick today (CUBIC, BBR2)?\n")
    parts.append(accounts.MODERN_INTRO)
    parts.append(modern_section(experiments, results))
    parts.append(_figure_block(drawn, "ref", fig_rel))
    parts.append("## What changes on QUIC (applies to every row)\n")
    parts.append(accounts.TRANSLATION_TEXT)
    parts.append("## Runs\n")
    parts.append(accounts.runs_text(experiments, records, info))
    parts.append(commands_section([*experiments, *alternatives], records, root))
    if results.problems:
        parts.append("## Runs that failed, and flows that ended early\n")
        parts.append(
            "Listed as the simulator reported them; a flow that ended early (for example closed by its idle "
            "timeout) is part of the result and counted in its measures.\n"
        )
        parts.append("\n".join(f"- {p}" for p in results.problems) + "\n")
    return "\n".join(parts).rstrip() + "\n"

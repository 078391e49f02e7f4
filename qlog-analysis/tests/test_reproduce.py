"""The reproduction pipeline: verdict rule, plan, measures, report check.

The pipeline itself (simulator runs included) is exercised by
``scripts/reproduce --quick``, which ``./scripts/test`` runs; set
``VEGAS_REPRODUCE_DOC`` to its report to have it checked here too.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from vegas_qlog import load_run, mean_ci
from vegas_qlog.reproduce import accounts, check_report
from vegas_qlog.reproduce import verdict as v
from vegas_qlog.reproduce.claims import Check, all_claims
from vegas_qlog.reproduce.document import answer, evaluate, ours_cell
from vegas_qlog.reproduce.measures import MEASURES, single_flow, window_goodput_bps, window_mean
from vegas_qlog.reproduce.plan import (
    apply_sets,
    build_alternatives,
    build_plan,
    scaled_times,
    select,
    toml_value,
    vbr_off_ms,
)
from vegas_qlog.reproduce.results import Ref, Results

REPO = Path(__file__).resolve().parents[2]
HAVE_SCENARIOS = (REPO / "interop" / "scenarios").is_dir()


def ci(*values: float):
    return mean_ci(values)


# ---------------------------------------------------------------- verdict rule


def test_greater_holds_within_the_band_and_says_short_or_overshoot_outside_it():
    a, b = ci(10, 10.5, 9.5), ci(5, 5.2, 4.8)  # ×2.0, resolved: an effect of 100%
    assert v.greater(a, b).status == v.HOLDS
    # Within ×½..×2 of the paper's effect: ×2.5 (150%) and ×1.6 (60%) both hold.
    assert v.greater(a, b, paper_ratio=2.5).status == v.HOLDS
    assert v.greater(a, b, paper_ratio=1.6).status == v.HOLDS
    # Below half the paper's effect: ×4 is 300%, half is 150%.
    short = v.greater(a, b, paper_ratio=4.0)
    assert short.status == v.SHORT
    assert "below half the paper's" in short.reason
    # Above twice the paper's effect: ×1.19 against the paper's ×1.02.
    over = v.greater(ci(11.9, 12.0, 11.8), ci(10, 10.1, 9.9), paper_ratio=1.02)
    assert over.status == v.OVERSHOOT
    assert v.greater(ci(), b).status == v.MISSING


def test_much_needs_the_defined_effect():
    # 5% apart and resolved: enough for a plain "higher", short of "much higher".
    a, b = ci(105, 105.5, 104.5), ci(100, 100.5, 99.5)
    assert v.greater(a, b).status == v.HOLDS
    much = v.greater(a, b, much=True)
    assert much.status == v.SHORT
    assert f"{v.MUCH_EFFECT:.0%}" in much.reason
    assert v.greater(ci(120, 121, 119), b, much=True).status == v.HOLDS
    # 1% apart, resolved: below the 2% that any effect needs.
    assert v.greater(ci(101, 101.1, 100.9), ci(100, 100.1, 99.9)).status == v.SHORT


def test_fails_only_when_a_reversal_is_resolved_and_beyond_the_floor():
    a, b = ci(10, 10.5, 9.5), ci(5, 5.2, 4.8)
    assert v.greater(b, a).status == v.FAILS
    # Overlapping intervals, either way round: unresolved.
    assert v.greater(ci(6, 9, 3), ci(5, 5.5, 4.5)).status == v.UNRESOLVED
    assert v.greater(ci(5, 5.5, 4.5), ci(6, 9, 3)).status == v.UNRESOLVED
    # A resolved reversal of 0.5%: within the floor, unresolved.
    tiny = v.greater(ci(99.5, 99.51, 99.49), ci(100, 100.01, 99.99))
    assert tiny.status == v.UNRESOLVED
    assert "floor" in tiny.reason
    # One run each: no interval, so never resolved.
    assert v.greater(ci(10), ci(5)).status == v.UNRESOLVED
    assert v.greater(ci(5), ci(10)).status == v.UNRESOLVED


def test_less_mirrors_greater():
    a, b = ci(2, 2.1, 1.9), ci(10, 10.5, 9.5)  # ×0.2: an effect of 80%
    assert v.less(a, b).status == v.HOLDS
    assert v.less(a, b, paper_ratio=0.1).status == v.HOLDS  # 80% within ×½..×2 of 90%
    # ×0.8 (20%) against the paper's ×0.1 (90%): short.
    assert v.less(ci(8, 8.1, 7.9), b, paper_ratio=0.1).status == v.SHORT
    # ×0.2 (80%) against the paper's ×0.9 (10%): overshoot.
    assert v.less(a, b, paper_ratio=0.9).status == v.OVERSHOOT
    assert v.less(b, a).status == v.FAILS


def test_similar_not_below_and_bounds():
    assert v.similar(ci(100, 101), ci(95, 96)).status == v.HOLDS
    assert v.similar(ci(100, 101), ci(70, 71)).status == v.FAILS
    assert v.similar(ci(100, 140, 60), ci(80, 90, 70)).status == v.UNRESOLVED
    assert v.similar(ci(0, 0), ci(0, 0)).status == v.HOLDS
    assert v.not_below(ci(95, 95), ci(100, 100)).status == v.HOLDS
    assert v.not_below(ci(150, 150), ci(100, 100)).status == v.HOLDS
    assert v.not_below(ci(84, 85, 86), ci(99, 100, 101)).status == v.FAILS
    assert v.not_below(ci(60, 85, 110), ci(99, 100, 101)).status == v.UNRESOLVED
    assert v.at_least(ci(0.95, 0.96, 0.97), 0.9).status == v.HOLDS
    assert v.at_least(ci(0.8, 1.05), 0.9).status == v.UNRESOLVED
    assert v.at_least(ci(0.8, 0.81, 0.82), 0.9).status == v.FAILS
    # Wholly below, but within the 2% floor: unresolved.
    assert v.at_least(ci(0.895, 0.896), 0.9).status == v.UNRESOLVED
    assert v.at_most(ci(5, 6, 7), 12.8).status == v.HOLDS
    assert v.at_most(ci(20, 21, 22), 12.8).status == v.FAILS


def test_censored_times_are_time_to_event():
    every = v.TimeToEvent((6.0, 6.5, 7.0))
    none = v.TimeToEvent((None, None, None))
    some = v.TimeToEvent((6.0, None, 30.0))
    # Never a number of zero width: the runs that reach it, and how many.
    assert none.text() == "never (0 of 3 runs)"
    assert some.reached == 2
    assert some.first.mean == 18.0
    assert every.text() == "6.5 ± 1.2 s (3 of 3 runs)"
    assert v.sooner(every, none).status == v.HOLDS
    assert v.sooner(none, every).status == v.FAILS
    assert v.sooner(none, none).status == v.UNRESOLVED
    assert v.sooner(some, none).status == v.UNRESOLVED
    assert v.sooner(every, v.TimeToEvent((20.0, 21.0, 22.0))).status == v.HOLDS
    assert v.sooner(v.TimeToEvent(()), every).status == v.MISSING
    assert v.within(every, 12.8).status == v.HOLDS
    assert v.within(none, 12.8).status == v.FAILS
    assert v.within(v.TimeToEvent((20.0, 30.0)), 12.8).status == v.FAILS
    assert v.within(some, 12.8).status == v.UNRESOLVED
    # From a time column and a reached column (a censored run's time is ignored).
    assert v.TimeToEvent.of([6.0, 80.0, math.nan], [1.0, 0.0, 1.0]).times == (6.0, None, None)


def test_verdict_rule():
    h, s, o, u, f, m = (v.Outcome(x, "") for x in (v.HOLDS, v.SHORT, v.OVERSHOOT, v.UNRESOLVED, v.FAILS, v.MISSING))
    assert v.verdict([h, h]) == v.REPRODUCED
    assert v.verdict([h, s]) == v.PARTLY
    assert v.verdict([h, o]) == v.PARTLY
    assert v.verdict([h, u]) == v.UNRESOLVED_VERDICT
    assert v.verdict([s, u]) == v.UNRESOLVED_VERDICT
    # One failing check makes the claim "not", however many hold.
    assert v.verdict([h, h, h, f]) == v.NOT
    assert v.verdict([u, f]) == v.NOT
    assert v.verdict([m]) == v.NOT
    assert v.verdict([]) == v.NOT


def test_censored_times_in_the_ours_cell():
    from vegas_qlog.reproduce.claims import Claim

    results = _results(
        {
            ("e", "vegas-w", "t_first_s"): [6.0, 7.0, math.nan],
            ("e", "vegas-w", "reached_first"): [1.0, 1.0, 0.0],
            ("e", "vegas", "t_first_s"): [math.nan, math.nan, math.nan],
            ("e", "vegas", "reached_first"): [0.0, 0.0, 0.0],
        }
    )
    check = Check("sooner", Ref("e", "vegas-w", "t_first_s"), Ref("e", "vegas", "t_first_s"), reached="reached_first")
    claim = Claim("x", "003", "Fig. 2", "Vegas-W is sooner.", "6.4 s", (check,))
    cell = ours_cell(claim, results)
    assert cell == "Vegas-W first 6.5 ± 6.4 s (2 of 3 runs); Vegas first never (0 of 3 runs) (n = 3)"
    outcome, text = check.evaluate(results)
    assert outcome.status == v.UNRESOLVED
    assert "2 of 3 runs" in text


def test_baseline_checks_do_not_count():
    # 000-F5a-newreno: NewReno over Vegas is the paper's starting point.
    claim = next(c for c in all_claims() if c.id == "000-F5a-newreno")
    assert [c.baseline for c in claim.checks] == [True, False]
    assert claim.distinguishing() == claim.checks[1:]
    assert not claim.baseline
    baseline_only = {c.id for c in all_claims() if c.baseline}
    assert baseline_only == {"001-F2-low-loss", "002-F4-before"}


# ---------------------------------------------------------------- plan


def test_toml_values_and_sets():
    assert toml_value(0.0001) == "0.0001"
    assert toml_value(200) == "200"
    assert toml_value(200.0) == "200.0"
    assert toml_value(False) == "false"
    assert toml_value("vegas") == '"vegas"'
    assert toml_value(["a", "b"]) == '["a", "b"]'
    assert toml_value({"at_s": 10.0, "link": "g1-g2"}) == '{at_s = 10.0, link = "g1-g2"}'
    table = {"duration_s": 100, "flows": {"a": {"cc": "reno"}}}
    new = apply_sets(table, {"flows.a.cc": "vegas", "flows.b.under_test": True})
    assert new["flows"] == {"a": {"cc": "vegas"}, "b": {"under_test": True}}
    assert table["flows"] == {"a": {"cc": "reno"}}  # not changed in place
    with pytest.raises(ValueError, match="not a table"):
        apply_sets(table, {"duration_s.x": 1})


def test_scaled_times():
    table = {
        "duration_s": 200,
        "flows": {"f": {"start_s": 1.0, "stop_s": 100}},
        "cross_traffic": {"c": {"start_s": 80, "stop_s": 150}},
        "changes": [{"at_s": 50, "link": "l", "rate_mbps": 20}],
    }
    assert scaled_times(table, 1.0) == {}
    sets = scaled_times(table, 0.2)
    assert sets["duration_s"] == 40.0
    assert sets["flows.f.start_s"] == 0.2
    assert sets["flows.f.stop_s"] == 20.0
    assert sets["cross_traffic.c.start_s"] == 16.0
    assert sets["cross_traffic.c.stop_s"] == 30.0
    assert sets["changes"] == [{"at_s": 10.0, "link": "l", "rate_mbps": 20}]


def test_vbr_off_time_matches_the_scenario_comments():
    # rovegas-single-bottleneck-vbr.toml: load 0.9 -> 12.222 ms, 0.5 -> 30 ms, 1 -> 10 ms.
    assert vbr_off_ms(0.9) == pytest.approx(12.222, abs=1e-3)
    assert vbr_off_ms(0.5) == 30.0
    assert vbr_off_ms(1.0) == 10.0


@pytest.mark.skipif(not HAVE_SCENARIOS, reason="needs the repository's interop/scenarios")
@pytest.mark.parametrize("quick", [False, True])
def test_every_claim_refers_to_planned_runs(quick):
    plan = build_plan(REPO, quick=quick)
    planned = {(s.experiment, s.label, s.point) for e in plan for s in e.specs}
    for claim in all_claims(quick=quick):
        for check in claim.checks:
            for ref in check.refs():
                assert (ref.experiment, ref.label, ref.point) in planned, (claim.id, ref)
    # Every experiment has a measure and unique run directories.
    assert {e.key for e in plan} <= set(MEASURES)
    dirs = [s.relative_dir() for e in plan for s in e.specs]
    assert len(dirs) == len(set(dirs))
    # The papers' algorithms and the modern baselines in every paper experiment.
    for exp in plan:
        if exp.paper is not None:
            assert {"cubic", "bbr2"} <= {label.split("/")[-1] for label in exp.labels}, exp.key


@pytest.mark.skipif(not HAVE_SCENARIOS, reason="needs the repository's interop/scenarios")
def test_quick_plan_is_small_and_scaled():
    full, quick = build_plan(REPO), build_plan(REPO, quick=True)
    assert sum(len(e.specs) for e in quick) * 4 < sum(len(e.specs) for e in full)
    long_runs = [s for e in quick for s in e.specs if s.scenario.startswith("vegas-l-geo")]
    assert long_runs
    assert all(s.set_dict["duration_s"] <= 60 for s in long_runs)
    spec = next(s for e in full for s in e.specs if e.key == "001-loss-sweep" and s.point == 0.02)
    argv = spec.argv("vegas-sim", "out/x")
    assert argv[:5] == ["vegas-sim", "run", "interop/scenarios/venodb-single-flow-loss-sweep.toml", "--cc", spec.cc]
    assert "links.bottleneck.packet_loss=0.02" in argv
    assert "--no-qlog" in argv


@pytest.mark.skipif(not HAVE_SCENARIOS, reason="needs the repository's interop/scenarios")
@pytest.mark.parametrize("quick", [False, True])
def test_every_run_sends_as_the_papers(quick):
    # The paper profile for every flow of ours, the background flows of
    # 004's one-on-one runs (`flows.small.cc`) included: a scenario-level set.
    for exp in build_plan(REPO, quick=quick):
        for spec in exp.specs:
            argv = spec.argv("vegas-sim", "out/x")
            at = argv.index('cc_profile="paper"')
            assert argv[at - 1] == "--set", (exp.key, argv)


@pytest.mark.skipif(not HAVE_SCENARIOS, reason="needs the repository's interop/scenarios")
def test_every_paper_experiment_has_a_sensitivity_variant():
    # The 1000 s runs of 000 and 002's load sweep included (they had none).
    plan = build_plan(REPO)
    alts = {a.key: a for a in build_alternatives(plan)}
    for exp in plan:
        if exp.paper is None:
            continue
        alt = alts[exp.key + "~alt"]
        assert alt.specs, exp.key
        assert {s.seed for s in alt.specs} <= {1, 2, 3} or exp.key == "004-one-on-one"
        assert not {lab.split("/")[-1] for lab in alt.labels} & {"cubic", "bbr2"}
    buffers = {s.set_dict.get("links.satellite-forward.queue_packets") for s in alts["000-per-1e-3~alt"].specs}
    assert buffers == {100}
    loads = {s.point for s in alts["002-load-sweep~alt"].specs}
    assert loads == set(next(e for e in plan if e.key == "002-load-sweep").points)
    assert all(s.cc_params[-2:] == ("alpha=2", "beta=4") for s in alts["002-load-sweep~alt"].specs)


@pytest.mark.skipif(not HAVE_SCENARIOS, reason="needs the repository's interop/scenarios")
def test_only_selects_experiments_papers_and_variants_alone():
    plan = build_plan(REPO, quick=True)
    alts = build_alternatives(plan, quick=True)

    def keys(names):
        exps, variants = select(plan, alts, names)
        return sorted(e.key for e in exps), sorted(a.key for a in variants)

    assert keys(["002-single"]) == (["002-single"], ["002-single~alt"])
    assert keys(["002-load-sweep~alt"]) == ([], ["002-load-sweep~alt"])
    exps, variants = keys(["003"])
    assert exps == ["003-cbr-step", "003-route-change"]
    assert variants == ["003-cbr-step~alt", "003-route-change~alt"]
    with pytest.raises(ValueError, match="no experiment or variant 002-nothing"):
        select(plan, alts, ["002-nothing"])


# ---------------------------------------------------------------- measures


def test_window_goodput_and_mean():
    series = pd.DataFrame({"time_s": [1.0, 2.0, 3.0, 4.0], "bytes_delivered": [100, 300, 300, 700], "x": [1, 2, 3, 4]})
    assert window_goodput_bps(series, 0.0, 1.0) == 800.0
    assert window_goodput_bps(series, 1.0, 3.0) == 800.0
    assert window_goodput_bps(series, 3.0, 4.0) == 3200.0
    assert math.isnan(window_goodput_bps(series, 2.0, 2.0))
    assert window_mean(series, "x", 1.0, 3.0) == 2.5
    assert math.isnan(window_mean(series, "x", 5.0, 6.0))


def test_single_flow_measure_on_a_real_run(sim_dir):
    run = load_run(sim_dir)
    m = single_flow(run, {"duration_s": 3.0})
    flow = run.summary["flows"][0]
    assert m["goodput_mbps"] == pytest.approx(flow["goodput_bps"] / 1e6)
    assert 0 <= m["retx_ratio"] < 1
    assert m["jain"] == pytest.approx(run.summary["jain_index"])


# ---------------------------------------------------------------- report


def _results(values: dict[tuple[str, str, str], list[float]]) -> Results:
    rows = []
    for (experiment, label, metric), xs in values.items():
        for seed, x in enumerate(xs, start=1):
            rows.append({"experiment": experiment, "label": label, "point": math.nan, "seed": seed, metric: x})
    frame = pd.DataFrame(rows).groupby(["experiment", "label", "point", "seed"], dropna=False).first().reset_index()
    return Results(frame)


def test_checks_and_cells_from_results():
    results = _results(
        {
            ("e", "vegas", "goodput_mbps"): [2.0, 2.1, 1.9],
            ("e", "reno", "goodput_mbps"): [1.0, 1.1, 0.9],
            ("e", "cubic", "goodput_mbps"): [3.0, 3.1, 2.9],
        }
    )
    check = Check("greater", Ref("e", "vegas", "goodput_mbps"), Ref("e", "reno", "goodput_mbps"), paper_ratio=2.0)
    outcome, text = check.evaluate(results)
    assert outcome.status == v.HOLDS
    assert text.startswith("Vegas > NewReno: 2.00 ± 0.25 vs 1.00 ± 0.25 Mbit/s, ×2.00 (paper ×2.00)")
    from vegas_qlog.reproduce.claims import Claim

    claim = Claim("x", "000", "Fig. 1", "Vegas beats Reno.", "2 vs 1", (check,))
    assert ours_cell(claim, results) == "Vegas 2.00 ± 0.25; NewReno 1.00 ± 0.25 Mbit/s (n = 3)"
    [e] = evaluate([claim], results)
    assert e.verdict == v.REPRODUCED
    assert e.sensitivity == ""
    # The sensitivity column: the same claim on the runs with the scenario's other value.
    from vegas_qlog.reproduce.plan import ALT_SUFFIX, Experiment

    alt = Experiment("e" + ALT_SUFFIX, "000", "t", "vegas-l-geo-per-1e-6.toml", ("vegas", "reno"))
    varied = _results(
        {
            ("e", "vegas", "goodput_mbps"): [2.0, 2.1, 1.9],
            ("e", "reno", "goodput_mbps"): [1.0, 1.1, 0.9],
            ("e~alt", "vegas", "goodput_mbps"): [1.0, 1.1, 0.9],
            ("e~alt", "reno", "goodput_mbps"): [2.0, 2.1, 1.9],
        }
    )
    [e] = evaluate([claim], varied, [alt])
    assert e.verdict == v.REPRODUCED
    assert e.sensitivity == "buffers 100: **not**"
    stats = {lab: results.stat(Ref("e", lab, "goodput_mbps")) for lab in ("vegas", "reno", "cubic")}
    word, sentence = answer(stats, "goodput_mbps", higher=True)
    assert word == "no"
    assert "best modern CUBIC 3.00" in sentence
    word, _ = answer(stats, "goodput_mbps", higher=False)
    assert word == "yes"


GOOD_DOC = """\
# Report

- Command: `scripts/reproduce --quick`

| Claim | Paper (where) | Paper's figure | Ours | Verdict |
| :--- | :--- | :--- | :--- | :--- |
| `a-1`: something. | 000 Fig. 1 | 1 | 2 | **reproduced** |
| `a-2`: other. | 000 Fig. 2 | 1 | 2 | **not** |

![fig](figs/one.png)

## Does a Vegas-family algorithm beat what you would pick today (CUBIC, BBR2)?

**Answer:** no.
"""


def test_check_report(tmp_path):
    doc = tmp_path / "r.md"
    doc.write_text(GOOD_DOC, encoding="utf-8")
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "one.png").write_bytes(b"\x89PNG" + b"0" * 100)
    assert check_report(doc, ["a-1", "a-2"]) == []
    problems = check_report(doc, ["a-1", "a-2", "a-3"])
    assert problems == [f"{doc}: claim a-3: 0 rows in the verdict table (expected 1)"]
    doc.write_text(GOOD_DOC.replace("**not**", "**maybe**").replace("one.png", "two.png"), encoding="utf-8")
    problems = check_report(doc, ["a-1", "a-2"])
    assert any("verdict 'maybe' is not one of reproduced, partly, unresolved, not" in p for p in problems)
    assert any("figure figs/two.png does not exist" in p for p in problems)
    (tmp_path / "figs" / "two.png").write_bytes(b"0" * 200_000)
    assert any("200000 bytes" in p for p in check_report(doc, ["a-1", "a-2"]))
    assert check_report(tmp_path / "missing.md")[0].startswith(f"{tmp_path / 'missing.md'}: cannot read")


def test_claim_ids_are_unique_and_papers_covered():
    ids = [c.id for c in all_claims()]
    assert len(ids) == len(set(ids))
    assert {c.paper for c in all_claims()} == {"000", "001", "002", "003", "004"}
    assert [c.id for c in all_claims(quick=True)] == ids


@pytest.mark.skipif("VEGAS_REPRODUCE_DOC" not in os.environ, reason="set VEGAS_REPRODUCE_DOC to a written report")
def test_written_report_is_complete():
    assert check_report(Path(os.environ["VEGAS_REPRODUCE_DOC"])) == []


def test_the_report_names_the_quiche_the_workspace_pins(tmp_path):
    (tmp_path / "Cargo.toml").write_text('[dependencies]\nquiche = { version = "=7.8.9", features = ["qlog"] }\n')
    assert accounts.quiche_version(tmp_path) == "quiche 7.8.9"
    assert "QUIC (quiche 7.8.9) instead of TCP" in accounts.departures_text("quiche 7.8.9")
    # No pin, no file: the name alone, never a made-up version.
    (tmp_path / "Cargo.toml").write_text('[dependencies]\nserde = "1"\n')
    assert accounts.quiche_version(tmp_path) == "quiche"
    assert accounts.quiche_version(tmp_path / "nowhere") == "quiche"
    # This repository's own pin, as the root Cargo.toml states it.
    root = Path(__file__).resolve().parents[2]
    pinned = re.search(r'^quiche = \{ version = "=([^"]+)"', (root / "Cargo.toml").read_text(), re.M)
    assert pinned
    assert accounts.quiche_version(root) == f"quiche {pinned.group(1)}"

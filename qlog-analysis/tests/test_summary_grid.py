"""`summary` on a synthetic sweep: background flows and grid points are never
pooled with the flows under test unless asked, and every table says what its
n pools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_run
from vegas_qlog.cli import main

LOSSES = (0.0, 0.001)
SEEDS = (1, 2, 3)


def _goodput(cc: str, loss: float, seed: int) -> float:
    # Far apart per grid point, so a pooled mean is visibly wrong.
    return (10e6 if cc == "cubic" else 20e6) * (0.25 if loss else 1.0) + seed * 1e3


def make_sweep(root: Path) -> Path:
    """2 algorithms x 2 loss values x 3 seeds (+ vegas alpha 1/2), each run with
    one flow under test and three background cubic flows, and the sweep
    runner's run.json naming the grid point."""
    for cc, params in (("cubic", [()]), ("vegas", [("alpha=1",), ("alpha=2",)])):
        for param in params:
            for loss in LOSSES:
                for seed in SEEDS:
                    name = f"tiny.toml/{cc}{''.join(',' + p for p in param)}/loss={loss}/seed-{seed}"
                    tested = _goodput(cc, loss, seed) + (1e6 if param == ("alpha=2",) else 0.0)
                    run = make_run(root, name, cc=cc, seed=seed, goodputs=[tested, 1e6, 1e6, 1e6])
                    summary = json.loads((run / "summary.json").read_text())
                    for flow in summary["flows"][1:]:
                        flow["cc"] = "cubic"
                    (run / "summary.json").write_text(json.dumps(summary))
                    argv = ["vegas-sim", "run", "tiny.toml", "--cc", cc]
                    for p in param:
                        argv += ["--cc-param", p]
                    argv += ["--seed", str(seed), "--set", f"links.bottleneck.packet_loss={loss}", "--no-qlog"]
                    (run / "run.json").write_text(json.dumps({"argv": [*argv, "--out", name], "key": "k"}))
    return root


def summary_json(capsys, *argv: str) -> tuple[list[dict], str]:
    assert main(["summary", *argv, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


def test_by_scenario_cc_gives_one_row_per_grid_point_of_flows_under_test(capsys, tmp_path):
    root = make_sweep(tmp_path / "sweep")
    rows, err = summary_json(capsys, str(root), "--by", "scenario,cc")
    # cubic: 2 loss values; vegas: 2 loss values x 2 alphas.
    assert len(rows) == 6
    for row in rows:
        assert row["goodput_bps_n"] == 3  # the three seeds, no background flow
        assert row["pooled"] == "seed 1,2,3"
        loss = row["links.bottleneck.packet_loss"]
        expected = sum(_goodput(row["cc"], loss, s) for s in SEEDS) / 3
        if row.get("cc.alpha") == "2" or row.get("cc.alpha") == 2:
            expected += 1e6
        assert row["goodput_bps_mean"] == pytest.approx(expected)
    assert "background flow(s) left out" in err
    assert "grid points kept apart by: links.bottleneck.packet_loss, cc.alpha" in err


def test_table_states_n_and_what_was_pooled(capsys, tmp_path):
    root = make_sweep(tmp_path / "sweep")
    assert main(["summary", str(root), "--by", "scenario,cc"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert "pooled" in header
    assert " n " in header
    assert "54 background flow(s) left out" in out
    assert "grid points kept apart by" in out


def test_set_column_and_asked_for_pooling(capsys, tmp_path):
    root = make_sweep(tmp_path / "sweep")
    rows, _ = summary_json(capsys, str(root), "--by", "scenario,cc,set")
    assert {r["set"] for r in rows} == {f"links.bottleneck.packet_loss={x}" for x in LOSSES}
    assert len(rows) == 6
    rows, err = summary_json(capsys, str(root), "--by", "scenario,cc", "--pool-grid")
    assert sorted(r["goodput_bps_n"] for r in rows) == [6, 12]
    assert all("links.bottleneck.packet_loss 0.0,0.001" in r["pooled"] for r in rows)
    assert "grid POOLED over" in err


def test_all_flows_keep_the_roles_apart_unless_asked(capsys, tmp_path):
    root = make_sweep(tmp_path / "sweep")
    rows, _ = summary_json(capsys, str(root), "--by", "scenario,cc", "--flows", "all")
    background = [r for r in rows if r["role"] == "background"]
    assert background
    assert all(r["goodput_bps_mean"] == pytest.approx(1e6) for r in background)
    assert all("3 flows/run" in r["pooled"] for r in background)
    rows, _ = summary_json(capsys, str(root), "--by", "scenario", "--flows", "all", "--pool-flows", "--pool-grid")
    assert [r["goodput_bps_n"] for r in rows] == [72]
    assert "role background,under test" in rows[0]["pooled"]


def test_unknown_by_column_is_one_error_line(capsys, tmp_path):
    root = make_sweep(tmp_path / "sweep")
    assert main(["summary", str(root), "--by", "scenario,nonsense"]) == 1
    err = capsys.readouterr().err
    assert "no column nonsense" in err
    assert len(err.splitlines()) == 1


def test_fairness_keeps_grid_points_apart(capsys, tmp_path):
    root = make_sweep(tmp_path / "sweep")
    assert main(["fairness", str(root), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 6
    assert all(r["jain_index_n"] == 3 for r in rows)


def test_sweep_finds_the_simulator_from_qlog_analysis(tmp_path, monkeypatch):
    """The README's `vegas-qlog sweep examples/geo-sweep.toml`, run from
    qlog-analysis/, finds the repository's target/release/vegas-sim above it."""
    from vegas_qlog.sweep.cli import find_simulator
    from vegas_qlog.sweep.spec import SpecError

    repo = tmp_path / "repo"
    sim = repo / "target" / "release" / "vegas-sim"
    sim.parent.mkdir(parents=True)
    sim.write_text("")
    work = repo / "qlog-analysis"
    (work / "examples").mkdir(parents=True)
    monkeypatch.delenv("VEGAS_SIM", raising=False)
    monkeypatch.chdir(work)
    assert find_simulator(None, Path("examples/geo-sweep.toml")).resolve() == sim.resolve()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError, match="no simulator binary"):
        find_simulator(None, tmp_path / "spec.toml")
    with pytest.raises(SpecError, match="no simulator binary"):
        find_simulator(str(tmp_path / "nope"), tmp_path / "spec.toml")

"""The sweep spec, task keys, the worker's blob cache, the progress line and
the reproduction as a spec: no simulator needed."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import sys
import tomllib
from pathlib import Path

import pytest

from vegas_qlog.reproduce.plan import build_plan
from vegas_qlog.reproduce.runner import sweep_spec
from vegas_qlog.sweep.executors import DaskExecutor, ExecutorError, LocalExecutor, run_sweep
from vegas_qlog.sweep.progress import Progress, format_duration
from vegas_qlog.sweep.spec import SpecError, load_spec, parse_set, parse_spec, write_spec
from vegas_qlog.sweep.tasks import Blob, make_plan, sim_args, task_key
from vegas_qlog.sweep.worker import cached, finish_run, materialise

ROOT = Path(__file__).resolve().parents[2]


def spec_of(text: str, base: Path = ROOT / "interop" / "scenarios"):
    return parse_spec(tomllib.loads(text), base)


GRID = """
scenarios = ["fau-sat.toml", "interop-smoke.toml"]
algorithms = ["vegas", "cubic", "veno"]
seeds = 3
[set]
duration_s = 5
[grid.set]
"links.forward.queue_packets" = [25, 100]
[grid.cc_params.vegas]
alpha = [1, 2]
beta = [3, 4, 5]
"""


def test_grid_expands_to_every_combination():
    spec = spec_of(GRID)
    # Computed independently: per scenario, vegas has 2 x 3 parameter
    # combinations and the others one; each x 2 queue sizes x 3 seeds.
    expected = set()
    for scenario in ("fau-sat.toml", "interop-smoke.toml"):
        variants = [("vegas", (f"alpha={a}", f"beta={b}")) for a, b in itertools.product((1, 2), (3, 4, 5))]
        variants += [("cubic", ()), ("veno", ())]
        for (cc, params), q, seed in itertools.product(variants, (25, 100), (1, 2, 3)):
            expected.add((scenario, cc, params, seed, (("duration_s", 5), ("links.forward.queue_packets", q))))
    got = {(e.scenario, e.cc, e.cc_params, e.seed, e.sets) for e in spec.entries}
    assert got == expected
    assert len(spec.entries) == len(expected) == 2 * (6 + 2) * 2 * 3
    assert len({e.directory for e in spec.entries}) == len(spec.entries)
    first = spec.entries[0]
    assert first.directory == "fau-sat/vegas,alpha=1,beta=3/links.forward.queue_packets=25/seed-1"


def test_command_line_sets_apply_after_the_spec():
    spec = parse_spec(tomllib.loads(GRID), ROOT / "interop/scenarios", extra_sets=[parse_set("duration_s=2.5")])
    args = sim_args(spec.entries[0])
    assert args == [
        "--cc",
        "vegas",
        "--cc-param",
        "alpha=1",
        "--cc-param",
        "beta=3",
        "--seed",
        "1",
        "--set",
        "duration_s=5",
        "--set",
        "links.forward.queue_packets=25",
        "--set",
        "duration_s=2.5",
        "--no-qlog",
    ]


def test_parse_set_values():
    assert parse_set("links.a.packet_loss=0.02") == ("links.a.packet_loss", 0.02)
    assert parse_set("flows.x.cc=reno") == ("flows.x.cc", "reno")
    assert parse_set('flows.x.cc="reno"') == ("flows.x.cc", "reno")
    assert parse_set("flows.x.under_test=false") == ("flows.x.under_test", False)
    for bad in ("novalue", "=3", "a b=1"):
        with pytest.raises(SpecError):
            parse_set(bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("scenarios = ['a.toml']\nalgorithms = ['vegas']", "'seeds' is missing"),
        ("scenarios = ['a.toml']\nalgorithms = ['vegas']\nseeds = 0", "at least 1"),
        ("scenarios = ['a.toml']\nalgorithms = []\nseeds = 1", "non-empty list"),
        ("scenarios = ['../a.toml']\nalgorithms = ['vegas']\nseeds = 1", "file name"),
        ("scenarios = ['a.toml']\nalgorithms = ['vegas']\nseeds = [1, 1]", "twice"),
        ("scenarios = ['a.toml']\nalgorithms = ['vegas']\nseeds = 1\nfoo = 1", "unknown key"),
        ("scenarios = ['a.toml']\nalgorithms = ['vegas']\nseeds = 1\n[grid.cc_params.reno]\nx = [1]", "not in algo"),
        ("scenarios = ['a.toml']\nalgorithms = ['vegas']\nseeds = 1\n[grid.set]\nduration_s = []", "empty list"),
        ("[[run]]\nscenario = 'a.toml'\ncc = 'vegas'\nseed = 1\ndir = '../x'", "without '..'"),
        ("[[run]]\nscenario = 'a.toml'\ncc = 'vegas'\nseed = 1", "'dir' is missing"),
        (
            "[[run]]\nscenario = 'a.toml'\ncc = 'vegas'\nseed = 1\ndir = 'x'\n"
            "[[run]]\nscenario = 'b.toml'\ncc = 'reno'\nseed = 2\ndir = 'x'",
            "two runs write to 'x'",
        ),
        ("qlog = true", "no runs"),
    ],
)
def test_bad_specs_are_clear_errors(text, message):
    with pytest.raises(SpecError, match=message):
        spec_of(text)


def test_unreadable_spec_files(tmp_path):
    with pytest.raises(SpecError, match=r"no-such\.toml"):
        load_spec(tmp_path / "no-such.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("scenarios = [", encoding="utf-8")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(bad)
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SpecError, match="UTF-8"):
        load_spec(binary)


def test_keys_address_content(tmp_path):
    args = ["--cc", "vegas", "--seed", "1"]
    key = task_key("a" * 64, "b" * 64, args)
    assert (
        key
        == hashlib.sha256(
            json.dumps({"sim": "a" * 64, "scenario": "b" * 64, "args": args}, separators=(",", ":")).encode()
        ).hexdigest()
    )
    assert task_key("c" * 64, "b" * 64, args) != key
    assert task_key("a" * 64, "c" * 64, args) != key
    assert task_key("a" * 64, "b" * 64, [*args[:-1], "2"]) != key

    # Same content elsewhere: same keys; another binary: other keys.
    scen = tmp_path / "s"
    scen.mkdir()
    (scen / "x.toml").write_text("duration_s = 1\n", encoding="utf-8")
    sim = tmp_path / "sim"
    sim.write_bytes(b"binary 1")
    spec = parse_spec(tomllib.loads("scenarios=['x.toml']\nalgorithms=['vegas']\nseeds=2"), scen)
    plan = make_plan(spec, sim, tmp_path / "out")
    assert plan.tasks[0].key == task_key(
        hashlib.sha256(b"binary 1").hexdigest(), _sha(scen / "x.toml"), plan.tasks[0].args
    )
    sim.write_bytes(b"binary 2")
    assert {t.key for t in make_plan(spec, sim, tmp_path / "out").tasks}.isdisjoint({t.key for t in plan.tasks})


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_blob_cache_refuses_wrong_content(tmp_path):
    data = b"#!/bin/sh\necho hi\n"
    ref = {"sha256": hashlib.sha256(data).hexdigest(), "name": "tool"}
    path = materialise(tmp_path, ref, data, executable=True)
    assert path == tmp_path / ref["sha256"][:16] / "tool"
    assert path.read_bytes() == data
    assert path.stat().st_mode & 0o100
    assert cached(tmp_path, ref) == path
    with pytest.raises(ValueError, match="expected"):
        materialise(tmp_path, {"sha256": ref["sha256"], "name": "other"}, b"not it")
    path.write_bytes(b"altered")
    with pytest.raises(ValueError, match="does not match"):
        cached(tmp_path, ref)
    with pytest.raises(FileNotFoundError):
        cached(tmp_path, {"sha256": "0" * 64, "name": "tool"})
    with pytest.raises(ValueError, match="bad blob name"):
        materialise(tmp_path, {"sha256": ref["sha256"], "name": "../x"}, data)


def test_finish_run_moves_whole_runs(tmp_path):
    staging = tmp_path / "stage"
    staging.mkdir()
    (staging / "summary.json").write_text("{}", encoding="utf-8")
    target = tmp_path / "out" / "a" / "seed-1"
    assert finish_run(staging, target, {"key": "k"}, 0, "")
    assert sorted(p.name for p in target.iterdir()) == ["run.json", "summary.json"]
    # A failure replaces it whole, with its stderr kept.
    staging = tmp_path / "stage2"
    staging.mkdir()
    assert not finish_run(staging, target, {"key": "k2"}, 3, "line 1\nboom\n")
    assert sorted(p.name for p in target.iterdir()) == ["failure.txt", "run.json", "stderr.txt"]
    assert (target / "stderr.txt").read_text() == "line 1\nboom\n"
    assert (target / "failure.txt").read_text() == "exit status 3\nline 1\nboom\n"
    # Exit 0 without a summary is a failure too.
    staging = tmp_path / "stage3"
    staging.mkdir()
    assert not finish_run(staging, tmp_path / "out" / "b", {"key": "k3"}, 0, "")
    assert "no summary.json" in (tmp_path / "out" / "b" / "failure.txt").read_text()


def test_progress_line():
    now = [100.0]
    stream = io.StringIO()
    p = Progress(10, stream=stream, tty=False, clock=lambda: now[0], width=10)
    p.reuse(2, 7200.0)
    assert p.line() == "[##........] 2/10 runs, 0 failed, 2.00 simulated h, ETA ?"
    now[0] = 130.0
    p.update(True, 1800.0)
    now[0] = 160.0
    p.update(False, 0.0, "FAILED x")
    # 60 s for 2 runs, 6 left: 180 s.
    assert p.line() == "[####......] 4/10 runs, 1 failed, 2.50 simulated h, ETA 3m00s"
    assert stream.getvalue().splitlines()[-1].endswith("ETA 3m00s  FAILED x")
    assert format_duration(3725) == "1h02m"
    assert format_duration(5) == "5s"


def test_spec_file_round_trip(tmp_path):
    spec = spec_of(GRID)
    text = write_spec(spec.entries, spec.scenario_dir)
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    again = load_spec(tmp_path / "s.toml")
    assert again.scenario_dir == spec.scenario_dir
    assert [(e.scenario, e.cc, e.cc_params, e.seed, e.sets, e.directory) for e in again.entries] == [
        (e.scenario, e.cc, e.cc_params, e.seed, e.sets, e.directory) for e in spec.entries
    ]


def test_reproduction_is_one_spec_with_the_same_commands(tmp_path):
    specs = [s for e in build_plan(ROOT, quick=True) for s in e.specs]
    spec = sweep_spec(specs, ROOT)
    path = tmp_path / "reproduce.toml"
    path.write_text(write_spec(spec.entries, spec.scenario_dir), encoding="utf-8")
    loaded = load_spec(path)
    sim = tmp_path / "vegas-sim"
    sim.write_bytes(b"x")
    plan = make_plan(
        loaded, Blob.of(sim), tmp_path / "runs", display_out="runs", scenario_display="interop/scenarios/{name}"
    )
    assert len(plan.tasks) == len(specs)
    for run, task in zip(specs, plan.tasks, strict=True):
        out = f"runs/{run.relative_dir().as_posix()}"
        assert plan.record(task)["argv"] == run.argv("vegas-sim", out)


def test_no_cluster_at_the_address_is_a_clear_error(tmp_path):
    scen = tmp_path / "s"
    scen.mkdir()
    (scen / "x.toml").write_text("duration_s = 1\n", encoding="utf-8")
    sim = tmp_path / "sim"
    sim.write_bytes(b"binary")
    spec = parse_spec(tomllib.loads("scenarios=['x.toml']\nalgorithms=['vegas']\nseeds=1"), scen)
    plan = make_plan(spec, sim, tmp_path / "out")
    with pytest.raises(ExecutorError, match=r"cannot reach a Dask scheduler at tcp://127\.0\.0\.1:9"):
        run_sweep(
            plan, DaskExecutor("tcp://127.0.0.1:9", connect_timeout_s=1), progress=Progress(1, stream=io.StringIO())
        )
    # Nothing was written as if it had run.
    assert not list((tmp_path / "out").glob("vegas*"))
    assert not (tmp_path / "out" / "sweep.json").exists()


FAKE_SIM = """#!{python}
# Stands in for vegas-sim: counts its invocations, writes summary.json unless told not to.
import json, pathlib, sys
args = sys.argv[1:]
out = pathlib.Path(args[args.index("--out") + 1])
with open({log!r}, "a") as log:
    log.write(" ".join(args[2:args.index("--out")]) + "\\n")
if "no-summary" in " ".join(args):
    sys.exit(0)
if '"fail"' in " ".join(args):
    print("fake failure", file=sys.stderr)
    sys.exit(3)
(out / "summary.json").write_text(json.dumps({{"simulated_s": 1.0, "flows": [], "args": args[2:args.index("--out")]}}))
"""


def fake_sim(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "calls.log"
    sim = tmp_path / "fake-sim"
    sim.write_text(FAKE_SIM.format(python=sys.executable, log=str(log)), encoding="utf-8")
    sim.chmod(0o755)
    return sim, log


def test_same_key_runs_once_and_fills_every_directory(tmp_path):
    sim, log = fake_sim(tmp_path)
    scen = tmp_path / "s"
    scen.mkdir()
    (scen / "x.toml").write_text("duration_s = 1\n", encoding="utf-8")
    text = "".join(
        f"[[run]]\nscenario = 'x.toml'\ncc = '{cc}'\nseed = 1\ndir = '{d}'\n"
        for cc, d in (("vegas", "a"), ("vegas", "b"), ("cubic", "c"))
    )
    spec = parse_spec(tomllib.loads(text), scen)
    plan = make_plan(spec, sim, tmp_path / "out")
    assert plan.tasks[0].key == plan.tasks[1].key != plan.tasks[2].key
    outcome = run_sweep(plan, LocalExecutor(2, cache=tmp_path / "cache"), progress=Progress(3, stream=io.StringIO()))
    assert (outcome.ran, outcome.failed) == (3, [])
    assert sorted(log.read_text().splitlines()) == ["--cc cubic --seed 1 --no-qlog", "--cc vegas --seed 1 --no-qlog"]
    out = tmp_path / "out"
    assert (out / "a" / "summary.json").read_bytes() == (out / "b" / "summary.json").read_bytes()
    assert json.loads((out / "b" / "run.json").read_text())["argv"][-1] == "b"
    assert json.loads((out / "sweep.json").read_text())["done"] == 3

    # Failing twins: both failed with the simulator's own exit status.
    text = "".join(
        f"[[run]]\nscenario = 'x.toml'\ncc = 'vegas'\nseed = 1\nset = {{'flows.f.note' = 'fail'}}\ndir = '{d}'\n"
        for d in ("f1", "f2")
    )
    plan = make_plan(parse_spec(tomllib.loads(text), scen), sim, out)
    outcome = run_sweep(plan, LocalExecutor(2), progress=Progress(2, stream=io.StringIO()))
    assert sorted(outcome.failed) == ["f1", "f2"]
    for d in ("f1", "f2"):
        assert (out / d / "failure.txt").read_text() == "exit status 3\nfake failure\n"
        assert (out / d / "stderr.txt").read_text() == "fake failure\n"


def test_a_run_without_summary_is_a_failure(tmp_path):
    sim, _ = fake_sim(tmp_path)
    scen = tmp_path / "s"
    scen.mkdir()
    (scen / "x.toml").write_text("duration_s = 1\n", encoding="utf-8")
    spec = parse_spec(
        tomllib.loads(
            "scenarios=['x.toml']\nalgorithms=['vegas']\nseeds=1\n[grid.set]\n"
            "'flows.f.note' = ['no-summary', 'fail', 'fine']"
        ),
        scen,
    )
    plan = make_plan(spec, sim, tmp_path / "out")
    outcome = run_sweep(plan, LocalExecutor(1), progress=Progress(3, stream=io.StringIO()))
    doc = outcome.summary
    status = {r["set"]["flows.f.note"]: r for r in doc["runs"]}
    assert status["fine"]["status"] == "done"
    assert status["no-summary"]["status"] == "failed"
    assert "no summary.json" in status["no-summary"]["failure"]
    assert status["fail"]["status"] == "failed"
    assert status["fail"]["failure"] == "exit status 3\nfake failure"
    assert (tmp_path / "out" / status["fail"]["stderr"]).read_text() == "fake failure\n"
    assert sorted(outcome.failed) == sorted([status["no-summary"]["dir"], status["fail"]["dir"]])


def test_the_example_spec_reads():
    spec = load_spec(Path(__file__).resolve().parents[1] / "examples" / "geo-sweep.toml")
    assert spec.scenario_dir == ROOT / "interop" / "scenarios"
    assert len(spec.entries) == 2 * (3 + 3) * 2 * 10
    assert all((spec.scenario_dir / e.scenario).is_file() for e in spec.entries)


def test_rate_trace_files_travel_inside_the_scenario(tmp_path):
    """A scenario naming a rate_trace_file ships with the trace inline (one
    file for every executor), and its runs' keys follow the trace's content."""
    import shutil

    from vegas_qlog.sweep import load_spec, make_plan

    scenarios = Path(__file__).resolve().parents[2] / "interop" / "scenarios"
    here = tmp_path / "scenarios"
    shutil.copytree(scenarios / "traces", here / "traces")
    shutil.copy(scenarios / "starlink-like.toml", here)
    spec = tmp_path / "s.toml"
    spec.write_text(f'scenario_dir = "{here}"\nscenarios = ["starlink-like.toml"]\nalgorithms = ["cubic"]\nseeds = 1\n')
    sim = tmp_path / "vegas-sim"
    sim.write_text("")
    plan = make_plan(load_spec(spec), sim, tmp_path / "out")
    blob = plan.tasks[0].scenario
    assert blob.name == "starlink-like.toml"
    assert (tmp_path / "out" / ".blobs" / "inlined") in blob.path.parents
    shipped = tomllib.loads(blob.path.read_text())
    down = shipped["links"]["forward"]
    assert "rate_trace_file" not in down
    lines = (here / "traces" / "starlink-like-down.mahimahi").read_text().split()
    assert down["rate_trace"] == [int(x) for x in lines]
    assert (
        shipped["links"]["forward"]["delay_trace"]
        == tomllib.loads((here / "starlink-like.toml").read_text())["links"]["forward"]["delay_trace"]
    )
    key = plan.tasks[0].key
    with (here / "traces" / "starlink-like-up.mahimahi").open("a") as f:
        f.write("30001\n")
    assert make_plan(load_spec(spec), sim, tmp_path / "out").tasks[0].key != key
    (here / "traces" / "starlink-like-up.mahimahi").write_text("1\nsoon\n")
    with pytest.raises(ValueError, match="'soon' is not a whole number"):
        make_plan(load_spec(spec), sim, tmp_path / "out")

"""Sweeps with the real simulator: the local executor against vegas-sim run
by hand, a real Dask cluster (scheduler and two workers as processes on
loopback, one killed mid-sweep) against the local executor, resuming after
an interruption, failures, and the Slurm array's per-task command.

Needs target/release/vegas-sim (built by ./scripts/setup) or $VEGAS_SIM."""

from __future__ import annotations

import fcntl
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from vegas_qlog.sweep import DaskExecutor, ExecutorError, LocalExecutor, load_spec, make_plan, run_sweep
from vegas_qlog.sweep.executors import LOCK_FILE
from vegas_qlog.sweep.progress import Progress
from vegas_qlog.sweep.slurm import SCRIPT, emit_slurm_array

ROOT = Path(__file__).resolve().parents[2]
SIM = Path(os.environ.get("VEGAS_SIM") or ROOT / "target" / "release" / "vegas-sim")
SCENARIOS = ROOT / "interop" / "scenarios"

pytestmark = pytest.mark.skipif(not SIM.is_file(), reason=f"no simulator at {SIM} (run ./scripts/setup)")

# 2 scenarios x 2 algorithms x 2 seeds, a few simulated seconds each.
SMALL = f"""
scenario_dir = "{SCENARIOS}"
scenarios = ["fau-sat.toml", "interop-smoke.toml"]
algorithms = ["vegas", "cubic"]
seeds = [1, 2]
[set]
duration_s = 2.0
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def content(path: Path) -> bytes:
    """A file's bytes; for vegas-sim's summary.json without ``wall_s`` (the
    simulator's own wall-clock time, the one thing that differs between two
    executions of a run)."""
    data = path.read_bytes()
    if path.name != "summary.json":
        return data
    summary = json.loads(data)
    assert isinstance(summary.pop("wall_s"), float)
    return json.dumps(summary, indent=2).encode()


def tree(directory: Path, skip: tuple[str, ...] = ("run.json",)) -> dict[str, bytes]:
    """Every file of a sweep's output, but the binary cache, lock and records."""
    out = {}
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if path.is_file() and rel.parts[0] not in (".blobs", ".sweep.lock") and path.name not in skip:
            out[rel.as_posix()] = content(path)
    return out


def quiet(total: int) -> Progress:
    return Progress(total, stream=io.StringIO(), tty=False)


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory) -> Path:
    """The small sweep, run once by the local executor."""
    base = tmp_path_factory.mktemp("local")
    spec = load_spec(write(base / "small.toml", SMALL))
    plan = make_plan(spec, SIM, base / "out")
    outcome = run_sweep(plan, LocalExecutor(2, cache=base / "cache"), progress=quiet(len(plan.tasks)))
    assert outcome.ran == 8
    assert outcome.failed == []
    return base / "out"


def test_local_sweep_matches_the_simulator_run_by_hand(local_reference, tmp_path):
    doc = json.loads((local_reference / "sweep.json").read_text())
    assert (doc["total"], doc["done"], doc["failed"], doc["missing"]) == (8, 8, 0, 0)
    dirs = {r["dir"] for r in doc["runs"]}
    assert dirs == {
        f"{scen}/{cc}/seed-{seed}"
        for scen in ("fau-sat", "interop-smoke")
        for cc in ("vegas", "cubic")
        for seed in (1, 2)
    }
    # Independent reference: vegas-sim itself with the arguments a user would type.
    for run in doc["runs"]:
        out = tmp_path / run["dir"]
        argv = [str(SIM), "run", str(SCENARIOS / run["scenario"]), "--cc", run["cc"], "--seed", str(run["seed"])]
        argv += ["--set", "duration_s=2.0", "--no-qlog", "--out", str(out)]
        subprocess.run(argv, check=True, capture_output=True)
        expected = {p.relative_to(out).as_posix(): content(p) for p in out.rglob("*") if p.is_file()}
        got = tree(local_reference / run["dir"], skip=("run.json", "stderr.txt"))
        assert got == expected, run["dir"]
        assert run["summary"] == json.loads(content(out / "summary.json"))
    # The CSV: one line per run (one flow under test each) plus the header.
    lines = (local_reference / "sweep.csv").read_text().splitlines()
    assert len(lines) == 9
    assert lines[0].startswith("dir,scenario,cc,cc_params,seed,set,status,flow,goodput_bps")


class Cluster:
    """A Dask scheduler and workers, each its own process group on loopback."""

    def __init__(self, base: Path):
        self.base = base
        self.procs: dict[str, subprocess.Popen] = {}
        self.address = ""

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.base / f"{name}.log", "w")  # noqa: SIM115 - kept open for the process's life
        proc = subprocess.Popen(
            [sys.executable, "-m", *argv], stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.base
        )
        self.procs[name] = proc
        return proc

    def start(self, workers: int) -> None:
        sched_file = self.base / "scheduler.json"
        self._start(
            "scheduler",
            [
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(sched_file),
            ],
        )
        deadline = time.monotonic() + 60
        while not sched_file.is_file() or not sched_file.read_text().strip():
            if time.monotonic() > deadline or self.procs["scheduler"].poll() is not None:
                raise RuntimeError(f"scheduler did not start: {(self.base / 'scheduler.log').read_text()}")
            time.sleep(0.1)
        self.address = json.loads(sched_file.read_text())["address"]
        for i in range(workers):
            local = self.base / f"worker{i}"
            local.mkdir()
            self._start(
                f"worker{i}",
                [
                    "distributed.cli.dask_worker",
                    self.address,
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--local-directory",
                    str(local),
                    "--name",
                    f"worker{i}",
                ],
            )
        from distributed import Client

        if workers:
            with Client(self.address, timeout="30s") as client:
                client.wait_for_workers(workers, timeout=60)

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop(self) -> None:
        """Workers first, then the scheduler: SIGTERM, and SIGKILL after 10 s."""
        for name in sorted(self.procs, key=lambda n: n == "scheduler"):
            proc = self.procs[name]
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


@pytest.fixture
def cluster(tmp_path) -> Iterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        c.start(workers=2)
        yield c
    finally:
        c.stop()


def _simulating(proc: subprocess.Popen) -> bool:
    try:
        return any(
            "vegas-sim" in " ".join(child.cmdline()) for child in psutil.Process(proc.pid).children(recursive=True)
        )
    except psutil.Error:
        return False


def test_dask_cluster_matches_local_and_survives_a_dead_worker(local_reference, cluster, tmp_path):
    spec = write(tmp_path / "small.toml", SMALL)
    out = tmp_path / "out"
    sweep = subprocess.Popen(
        [sys.executable, "-m", "vegas_qlog", "sweep", str(spec), "--cluster", cluster.address, "--out", str(out)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "VEGAS_SIM": str(SIM)},
    )
    # Kill worker 0 while it runs a simulation.
    deadline = time.monotonic() + 120
    while not _simulating(cluster.procs["worker0"]):
        assert sweep.poll() is None, f"the sweep ended before worker0 ran anything: {sweep.communicate()}"
        assert time.monotonic() < deadline, "worker0 never ran a simulation"
        time.sleep(0.005)
    done_before = len(list(out.glob("*/*/seed-*/run.json")))
    cluster.kill("worker0")
    _, stderr = sweep.communicate(timeout=300)
    assert sweep.returncode == 0, stderr
    assert done_before < 8
    assert "8/8 runs done (8 run now, 0 reused), 0 failed" in stderr
    # Byte-identical to the local executor: summaries and every output.
    assert (out / "sweep.json").read_bytes() == (local_reference / "sweep.json").read_bytes()
    assert (out / "sweep.csv").read_bytes() == (local_reference / "sweep.csv").read_bytes()
    assert tree(out) == tree(local_reference)
    # No shared filesystem used: each worker got the binary and scenarios
    # into its own local directory, by content.
    sim_sha = json.loads((out / "sweep.json").read_text())["sim_sha256"]
    for name in ("worker0", "worker1"):
        copies = list((tmp_path / name).rglob(f"vegas-sweep-blobs/{sim_sha[:16]}/vegas-sim"))
        assert len(copies) == 1, name
        assert copies[0].read_bytes() == SIM.read_bytes()
    # Nothing half-written left.
    assert not (out / ".partial").exists()


def test_resume_after_interruption_runs_only_what_is_missing(local_reference, tmp_path):
    spec = write(tmp_path / "small.toml", SMALL)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "vegas_qlog", "sweep", str(spec), "--out", str(out), "--jobs", "1"]
    sweep = subprocess.Popen(
        argv, cwd=tmp_path, stderr=subprocess.DEVNULL, start_new_session=True, env={**os.environ, "VEGAS_SIM": str(SIM)}
    )
    deadline = time.monotonic() + 120
    while len(list(out.glob("*/*/seed-*/run.json"))) < 3:
        assert sweep.poll() is None, "the sweep ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    os.killpg(sweep.pid, signal.SIGKILL)  # the whole process group, simulator included
    sweep.wait()
    # The group's other members (workers that inherited the output
    # directory's lock) may outlive the leader for a moment on a loaded
    # machine: wait until the lock is free, as a user would rerun later.
    with open(out / LOCK_FILE, "w") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                assert time.monotonic() < deadline, "the killed sweep's processes kept the lock"
                time.sleep(0.01)
                continue
            fcntl.flock(lock, fcntl.LOCK_UN)
            break
    done = {p.parent: p.stat().st_mtime_ns for p in out.glob("*/*/seed-*/run.json")}
    assert 3 <= len(done) < 8
    assert not (out / "sweep.json").exists()

    plan = make_plan(load_spec(spec), SIM, out)
    outcome = run_sweep(plan, LocalExecutor(2, cache=out / ".blobs"), progress=quiet(8))
    assert outcome.reused == len(done)
    assert outcome.ran == 8 - len(done)
    assert set(outcome.results) == {t.directory for t in plan.tasks} - {str(d.relative_to(out)) for d in done}
    for directory, mtime in done.items():
        assert (directory / "run.json").stat().st_mtime_ns == mtime  # not run again
    assert (out / "sweep.json").read_bytes() == (local_reference / "sweep.json").read_bytes()
    assert tree(out) == tree(local_reference)
    assert not (out / ".partial").exists()
    # And once more: nothing to do.
    assert run_sweep(plan, LocalExecutor(2, cache=out / ".blobs"), progress=quiet(8)).ran == 0


def test_failed_runs_keep_their_stderr_and_run_again(tmp_path):
    spec = write(
        tmp_path / "bad.toml",
        f'scenario_dir = "{SCENARIOS}"\nscenarios = ["interop-smoke.toml"]\n'
        'algorithms = ["vegas", "no-such-cc"]\nseeds = [1]\n[set]\nduration_s = 1.0\n',
    )
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "vegas_qlog", "sweep", str(spec), "--out", str(out)]
    env = {**os.environ, "VEGAS_SIM": str(SIM)}
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 1
    failed_dir = "interop-smoke/no-such-cc/seed-1"
    assert f"failed: {failed_dir}: exit status" in done.stderr
    assert str(out / failed_dir / "stderr.txt") in done.stderr
    # The simulator's own message, kept whole.
    hand_argv = [str(SIM), "run", str(SCENARIOS / "interop-smoke.toml"), "--cc", "no-such-cc", "--seed", "1"]
    by_hand = subprocess.run(
        [*hand_argv, "--set", "duration_s=1.0", "--no-qlog", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert by_hand.returncode != 0
    assert "unknown congestion control algorithm 'no-such-cc'" in by_hand.stderr
    # The same message, but for where the scenario file was (the sweep's copy of it).
    kept = (out / failed_dir / "stderr.txt").read_text()
    assert kept.split("interop-smoke.toml: ", 1)[1] == by_hand.stderr.split("interop-smoke.toml: ", 1)[1]
    doc = json.loads((out / "sweep.json").read_text())
    (failed,) = (r for r in doc["runs"] if r["status"] == "failed")
    assert failed["stderr"] == f"{failed_dir}/stderr.txt"
    assert failed["failure"].startswith(f"exit status {by_hand.returncode}")
    assert (doc["done"], doc["failed"]) == (1, 1)
    # A failure is not a result: the next invocation tries it again, and only it.
    again = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert "(1 run now, 1 reused), 1 failed" in again.stderr


def test_slurm_array_tasks_run_with_the_generated_command(local_reference, tmp_path):
    spec = write(tmp_path / "small.toml", SMALL)
    out = tmp_path / "out"
    plan = make_plan(load_spec(spec), SIM, out)
    array = tmp_path / "array"
    tasks = emit_slurm_array(plan, array)
    assert len(tasks) == 8
    script = (array / SCRIPT).read_text()
    assert "#SBATCH --array=0-7" in script
    # The generated script itself, as Slurm would start two of its array tasks.
    for index in (0, 5):
        env = {**os.environ, "SLURM_ARRAY_TASK_ID": str(index)}
        subprocess.run(["bash", str(array / SCRIPT)], env=env, check=True, capture_output=True, cwd=tmp_path)
    for index in (0, 5):
        rel = tasks[index].directory
        assert tree(out / rel) == tree(local_reference / rel)
    # Afterwards the sweep runs only the other six.
    outcome = run_sweep(plan, LocalExecutor(2, cache=out / ".blobs"), progress=quiet(8))
    assert (outcome.reused, outcome.ran) == (2, 6)
    assert (out / "sweep.json").read_bytes() == (local_reference / "sweep.json").read_bytes()
    # What is done is not in a new array.
    assert emit_slurm_array(plan, tmp_path / "array2") == []


def test_slurm_array_moves_with_its_directory_and_takes_partition_and_account(local_reference, tmp_path):
    """Emitted from a base directory, the script and tasks.json name the array
    and the outputs relative to it: the tree copied elsewhere (another mount
    point on the cluster) runs there, as sbatch from the new base would."""
    base = tmp_path / "emitted"
    (base / "work").mkdir(parents=True)
    spec = write(base / "small.toml", SMALL)
    plan = make_plan(load_spec(spec), SIM, base / "work" / "out")
    tasks = emit_slurm_array(
        plan,
        base / "work" / "array",
        submit_dir=base,
        partition="satellite",
        account="proj42",
        options=["--qos=long"],
    )
    script = (base / "work" / "array" / SCRIPT).read_text()
    assert str(base) not in script
    assert str(base) not in (base / "work" / "array" / "tasks.json").read_text()
    for line in ("#SBATCH --partition=satellite", "#SBATCH --account=proj42", "#SBATCH --qos=long"):
        assert line in script.splitlines()
    assert "#SBATCH --output=work/array/logs/%A_%a.log" in script
    moved = tmp_path / "elsewhere"
    shutil.copytree(base, moved)
    shutil.rmtree(base)
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": "3", "SLURM_SUBMIT_DIR": str(moved)}
    subprocess.run(["bash", str(moved / "work" / "array" / SCRIPT)], env=env, check=True, capture_output=True)
    rel = tasks[3].directory
    assert tree(moved / "work" / "out" / rel) == tree(local_reference / rel)
    with pytest.raises(ValueError, match="--slurm-partition"):
        emit_slurm_array(plan, tmp_path / "bad", partition="a\nb", force=True)


def test_a_trace_driven_scenario_runs_in_a_sweep_as_by_hand(tmp_path):
    spec = write(
        tmp_path / "trace.toml",
        f'scenario_dir = "{SCENARIOS}"\nscenarios = ["starlink-like.toml"]\nalgorithms = ["cubic"]\n'
        "seeds = [1]\n[set]\nduration_s = 3.0\n",
    )
    plan = make_plan(load_spec(spec), SIM, tmp_path / "out")
    outcome = run_sweep(plan, LocalExecutor(1, cache=tmp_path / "out" / ".blobs"), progress=quiet(1))
    assert (outcome.ran, outcome.failed) == (1, [])
    by_hand = tmp_path / "by-hand"
    argv = [str(SIM), "run", str(SCENARIOS / "starlink-like.toml"), "--cc", "cubic", "--seed", "1"]
    subprocess.run(
        [*argv, "--set", "duration_s=3.0", "--no-qlog", "--out", str(by_hand)], check=True, capture_output=True
    )
    run_dir = tmp_path / "out" / plan.tasks[0].directory
    assert content(run_dir / "summary.json") == content(by_hand / "summary.json")


def test_emitting_into_tmp_warns(tmp_path):
    spec = write(tmp_path / "small.toml", SMALL)
    argv = [sys.executable, "-m", "vegas_qlog", "sweep", str(spec), "--sim", str(SIM)]
    argv += ["--out", str(tmp_path / "out"), "--emit-slurm-array", str(tmp_path / "array")]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("which each compute node has for itself") == (
        2 if str(tmp_path.resolve()).startswith(("/tmp/", "/var/tmp/")) else 0
    )


def test_a_cluster_without_workers_is_a_clear_error(tmp_path):
    c = Cluster(tmp_path)
    try:
        c.start(workers=0)
        plan = make_plan(load_spec(write(tmp_path / "small.toml", SMALL)), SIM, tmp_path / "out")
        with pytest.raises(ExecutorError, match="has no workers"):
            run_sweep(plan, DaskExecutor(c.address, connect_timeout_s=2), progress=quiet(8))
        assert not (tmp_path / "out" / "sweep.json").exists()
    finally:
        c.stop()

"""Running the simulator for every :class:`~.plan.RunSpec`: the
reproduction is one sweep (:mod:`vegas_qlog.sweep`) whose runs are the
plan's, each in its own directory.

Each run's ``run.json`` records its command, its content key and the
SHA-256 of the simulator binary. A run whose directory already holds a
``summary.json`` made with the same key (binary, scenario file and
arguments) is not run again (``force`` runs everything anew), so an
interrupted reproduction continues where it stopped, on this machine or on
a Dask cluster (``cluster``).

The binary is copied into the runs directory first and every run uses that
copy: rebuilding the project meanwhile cannot mix two simulators in one
report.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..sweep.executors import DaskExecutor, Executor, LocalExecutor, run_sweep
from ..sweep.spec import SweepSpec
from ..sweep.tasks import Blob, make_plan
from ..sweep.worker import FAILURE_FILE, RUN_FILE, RUN_TIMEOUT_S, file_sha256
from .plan import SCENARIO_DIR, RunSpec

__all__ = ["FAILURE_FILE", "RUN_FILE", "RUN_TIMEOUT_S"]


def snapshot_simulator(sim: Path, runs_dir: Path) -> tuple[Path, str]:
    """Copies ``sim`` to ``runs_dir/bin/vegas-sim-<SHA-256 prefix>`` (unless
    already there) and returns the copy and its SHA-256. A copy is named by
    its content and never replaced, so two invocations with different
    binaries cannot change each other's simulator."""
    if not sim.is_file():
        raise FileNotFoundError(f"{sim}: no simulator binary (build it with `cargo build --release`)")
    digest = file_sha256(sim)
    target = runs_dir / "bin" / f"vegas-sim-{digest[:16]}"
    if not (target.is_file() and file_sha256(target) == digest):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        shutil.copy2(sim, tmp)
        tmp.replace(target)
    return target, digest


@dataclass
class RunRecord:
    spec: RunSpec
    directory: Path
    status: str  # "ran", "cached", "failed" or "absent" (not run: --render-only)
    wall_s: float
    message: str = ""


def display_argv(spec: RunSpec, out: str) -> list[str]:
    """The run's command as the report shows it (``vegas-sim`` for the binary)."""
    return spec.argv("vegas-sim", out)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def sweep_spec(specs: Sequence[RunSpec], root: Path) -> SweepSpec:
    """The reproduction's runs as one sweep spec (``python -m
    vegas_qlog.reproduce spec`` writes it as a file)."""
    return SweepSpec(None, (root / SCENARIO_DIR).resolve(), tuple(s.entry() for s in specs))


def existing_runs(specs: Sequence[RunSpec], runs_dir: Path) -> list[RunRecord]:
    """Records of the runs already made (any binary), for rendering without running."""
    records = []
    for spec in specs:
        directory = runs_dir / spec.relative_dir()
        status = "cached" if (directory / "summary.json").is_file() else "absent"
        records.append(RunRecord(spec, directory, status, 0.0))
    return records


def run_all(
    specs: Sequence[RunSpec],
    root: Path,
    runs_dir: Path,
    sim: Path,
    sim_hash: str,
    *,
    jobs: int = 2,
    force: bool = False,
    cluster: str | None = None,
    log: Callable[[str], None] | None = None,
) -> list[RunRecord]:
    """Runs every spec (``jobs`` at a time, or on the Dask cluster at
    ``cluster``); returns one record per spec, in order."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    plan = make_plan(
        sweep_spec(specs, root),
        Blob(sim_hash, "vegas-sim", sim),
        runs_dir,
        display_out=_relative(runs_dir, root),
        scenario_display=f"{SCENARIO_DIR.as_posix()}/{{name}}",
    )
    executor: Executor = DaskExecutor(cluster) if cluster else LocalExecutor(jobs)
    outcome = run_sweep(plan, executor, force=force, log=say)
    records = []
    for spec, task in zip(specs, plan.tasks, strict=True):
        directory = runs_dir / task.directory
        result = outcome.results.get(task.directory)
        if result is None:
            records.append(RunRecord(spec, directory, "cached", 0.0))
        elif task.directory in outcome.failed:
            failure = (directory / FAILURE_FILE).read_text(encoding="utf-8", errors="replace").strip()
            message = failure.replace("\n", ": ", 1)
            records.append(RunRecord(spec, directory, "failed", result["wall_s"], message))
        else:
            records.append(RunRecord(spec, directory, "ran", result["wall_s"]))
    return records

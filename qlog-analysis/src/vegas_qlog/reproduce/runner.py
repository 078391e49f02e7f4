"""Running the simulator for every :class:`~.plan.RunSpec`, a few at a time.

Each run writes into its own directory, with ``run.json`` recording the
exact arguments and the SHA-256 of the simulator binary. A run whose
directory already holds a ``summary.json`` made by the same arguments and
the same binary is not run again (``force`` runs everything anew), so an
interrupted reproduction continues where it stopped.

The binary is copied into the runs directory first and every run uses that
copy: rebuilding the project meanwhile cannot mix two simulators in one
report.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from .plan import RunSpec

RUN_FILE = "run.json"
FAILURE_FILE = "failure.txt"
RUN_TIMEOUT_S = 900


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def snapshot_simulator(sim: Path, runs_dir: Path) -> tuple[Path, str]:
    """Copies ``sim`` to ``runs_dir/bin/vegas-sim-<SHA-256 prefix>`` (unless
    already there) and returns the copy and its SHA-256. A copy is named by
    its content and never replaced, so two invocations with different
    binaries cannot change each other's simulator."""
    if not sim.is_file():
        raise FileNotFoundError(f"{sim}: no simulator binary (build it with `cargo build --release`)")
    digest = sha256(sim)
    target = runs_dir / "bin" / f"vegas-sim-{digest[:16]}"
    if not (target.is_file() and sha256(target) == digest):
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


def _is_cached(directory: Path, record: dict[str, object]) -> bool:
    try:
        previous = json.loads((directory / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return previous == record and (directory / "summary.json").is_file() and not (directory / FAILURE_FILE).exists()


def run_one(spec: RunSpec, root: Path, runs_dir: Path, sim: Path, sim_hash: str, force: bool) -> RunRecord:
    directory = runs_dir / spec.relative_dir()
    out = _relative(directory, root)
    record = {"argv": display_argv(spec, out), "sim_sha256": sim_hash}
    if not force and _is_cached(directory, record):
        return RunRecord(spec, directory, "cached", 0.0)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    argv = spec.argv(str(sim.resolve()), str(directory.resolve()))
    start = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
        code, stderr = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        code, stderr = -1, f"timed out after {RUN_TIMEOUT_S} s"
    wall = time.monotonic() - start
    (directory / RUN_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if code != 0:
        tail = "\n".join(stderr.strip().splitlines()[-5:])
        (directory / FAILURE_FILE).write_text(f"exit status {code}\n{tail}\n", encoding="utf-8")
        return RunRecord(spec, directory, "failed", wall, f"exit status {code}: {tail}")
    return RunRecord(spec, directory, "ran", wall)


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
    log: Callable[[str], None] | None = None,
) -> list[RunRecord]:
    """Runs every spec (``jobs`` at a time); returns one record per spec, in order."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    records: dict[int, RunRecord] = {}
    total = len(specs)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_one, spec, root, runs_dir, sim, sim_hash, force): i for i, spec in enumerate(specs)}
        for done, future in enumerate(as_completed(futures), start=1):
            i = futures[future]
            rec = future.result()
            records[i] = rec
            if rec.status != "cached" or done == total:
                spec = rec.spec
                where = f" p={spec.point:g}" if spec.point is not None else ""
                where += f" {spec.config}" if spec.config else ""
                note = f"  FAILED: {rec.message}" if rec.status == "failed" else ""
                say(
                    f"[{done}/{total}] {spec.experiment} {spec.label}{where} seed {spec.seed}: "
                    f"{rec.status} {rec.wall_s:.1f} s{note}"
                )
    return [records[i] for i in range(total)]

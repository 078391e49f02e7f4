"""``--emit-slurm-array DIR``: the sweep's tasks as a Slurm array job.

DIR receives:

- ``tasks.json``: the output directory and, per array index, the run's
  directory, what to run (as a remote worker gets it) and its ``run.json``;
- ``blobs/``: the simulator binary and the scenario files by SHA-256;
- ``vegas_sweep_task.py``: the per-task program (:mod:`.worker`, standard
  library only: the compute nodes need Python 3 and nothing else);
- ``sweep.sbatch``: the array script, one array task per run;
- ``logs/``: where Slurm writes each task's output.

The tasks write into the sweep's output directory as the other executors
do, so ``vegas-qlog sweep SPEC --out OUT`` afterwards finds them done, runs
only what is missing and writes the summary.
"""

from __future__ import annotations

import json
import math
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

from . import worker
from .tasks import Plan, Task, is_done
from .worker import materialise

TASK_PROGRAM = "vegas_sweep_task.py"
SCRIPT = "sweep.sbatch"


def task_command(directory: Path, index: int | str) -> list[str]:
    """The command of one array task (``index`` is ``$SLURM_ARRAY_TASK_ID``)."""
    return ["python3", str(directory / TASK_PROGRAM), str(directory), str(index)]


def sbatch_script(directory: Path, count: int, timeout_s: float, name: str = "vegas-sweep") -> str:
    minutes = max(1, math.ceil((timeout_s + 120) / 60))
    d = shlex.quote(str(directory))
    return f"""#!/bin/bash
# A vegas-qlog sweep as a Slurm array job: {count} simulator runs, one per array task.
#   sbatch {d}/{SCRIPT}
# {d} and the sweep's output directory must be visible to the compute nodes.
# Afterwards, `vegas-qlog sweep SPEC --out OUT` runs whatever failed or is missing
# and writes the summary. Limit concurrency with e.g. --array=0-{count - 1}%50.
#SBATCH --job-name={name}
#SBATCH --array=0-{count - 1}
#SBATCH --cpus-per-task=1
#SBATCH --time={minutes}
#SBATCH --output={directory}/logs/%A_%a.log
set -euo pipefail
dir={d}
exec "${{PYTHON:-python3}}" "$dir/{TASK_PROGRAM}" "$dir" "${{SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}}"
"""


def emit_slurm_array(plan: Plan, directory: Path, *, force: bool = False) -> list[Task]:
    """Writes the array job for the tasks of ``plan`` not done yet (all of
    them with ``force``) and returns them, in array-index order."""
    tasks = [t for t in plan.tasks if force or not is_done(plan, t)]
    directory = directory.resolve()
    if not tasks:
        return []
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "logs").mkdir(exist_ok=True)
    for blob in plan.blobs:
        materialise(directory / "blobs", blob.ref, Path(blob.path).read_bytes(), executable=blob is plan.sim)
    listing = {
        "out": str(plan.out.resolve()),
        "tasks": [{"dir": t.directory, "request": t.request(plan.sim), "record": plan.record(t)} for t in tasks],
    }
    (directory / "tasks.json").write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")
    shutil.copyfile(worker.__file__, directory / TASK_PROGRAM)
    timeout = max(t.timeout_s for t in tasks)
    script = directory / SCRIPT
    script.write_text(sbatch_script(directory, len(tasks), timeout), encoding="utf-8")
    script.chmod(0o755)
    return tasks


def describe(directory: Path, tasks: Sequence[Task]) -> str:
    return (
        f"sweep: wrote a Slurm array of {len(tasks)} tasks in {directory}: "
        f"sbatch {directory / SCRIPT}  (one task: {shlex.join(task_command(directory, 0))})"
    )

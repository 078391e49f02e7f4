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
import os
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


# Directories a compute node does not share with the machine that emitted the array.
NODE_LOCAL = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/run/user"))


def _line_safe(value: str, what: str) -> str:
    if any(c in value for c in "\n\r") or not value.strip():
        raise ValueError(f"{what}: {value!r} is not a usable #SBATCH value")
    return value.strip()


def sbatch_script(
    directory: Path,
    count: int,
    timeout_s: float,
    name: str = "vegas-sweep",
    *,
    partition: str | None = None,
    account: str | None = None,
    options: Sequence[str] = (),
) -> str:
    """The array script. ``directory`` relative (to where ``sbatch`` is run,
    Slurm's submit directory) or absolute; ``$VEGAS_SWEEP_DIR`` overrides it
    when the array is moved."""
    minutes = max(1, math.ceil((timeout_s + 120) / 60))
    d = shlex.quote(str(directory))
    base = d if directory.is_absolute() else f'"${{SLURM_SUBMIT_DIR:-$PWD}}"/{d}'
    where = "" if directory.is_absolute() else "from the directory it was emitted in (paths are relative to it), "
    extra = ""
    if partition:
        extra += f"#SBATCH --partition={_line_safe(partition, '--slurm-partition')}\n"
    if account:
        extra += f"#SBATCH --account={_line_safe(account, '--slurm-account')}\n"
    for option in options:
        extra += f"#SBATCH {_line_safe(option, '--slurm-option')}\n"
    return f"""#!/bin/bash
# A vegas-qlog sweep as a Slurm array job: {count} simulator runs, one per array task.
#   sbatch {d}/{SCRIPT}      ({where}or set VEGAS_SWEEP_DIR to where this directory is)
# {d} and the sweep's output directory must be visible to the compute nodes.
# Afterwards, `vegas-qlog sweep SPEC --out OUT` runs whatever failed or is missing
# and writes the summary. Limit concurrency with e.g. --array=0-{count - 1}%50.
#SBATCH --job-name={name}
#SBATCH --array=0-{count - 1}
#SBATCH --cpus-per-task=1
#SBATCH --time={minutes}
#SBATCH --output={directory}/logs/%A_%a.log
{extra}set -euo pipefail
dir="${{VEGAS_SWEEP_DIR:-{base}}}"
exec "${{PYTHON:-python3}}" "$dir/{TASK_PROGRAM}" "$dir" "${{SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}}"
"""


def node_local_warnings(*paths: Path) -> list[str]:
    """A warning for each path under a directory compute nodes do not share (``/tmp``, ...)."""
    out = []
    for path in paths:
        resolved = path.resolve()
        for local in NODE_LOCAL:
            if resolved == local or local in resolved.parents:
                out.append(
                    f"{path} is under {local}, which each compute node has for itself: "
                    "the array's tasks will not find it (use a shared filesystem)"
                )
                break
    return out


def _relative_if_below(path: Path, base: Path) -> Path:
    try:
        return path.relative_to(base)
    except ValueError:
        return path


def emit_slurm_array(
    plan: Plan,
    directory: Path,
    *,
    force: bool = False,
    partition: str | None = None,
    account: str | None = None,
    options: Sequence[str] = (),
    submit_dir: Path | None = None,
) -> list[Task]:
    """Writes the array job for the tasks of ``plan`` not done yet (all of
    them with ``force``) and returns them, in array-index order. The output
    directory is named relative to ``directory`` in ``tasks.json``, and
    ``directory`` relative to ``submit_dir`` (default: the working
    directory, where ``sbatch`` is expected to run) in the script when it
    lies below it, so the whole tree can move."""
    tasks = [t for t in plan.tasks if force or not is_done(plan, t)]
    base = (submit_dir or Path.cwd()).resolve()
    directory = directory.resolve()
    if not tasks:
        return []
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "logs").mkdir(exist_ok=True)
    for blob in plan.blobs:
        materialise(directory / "blobs", blob.ref, Path(blob.path).read_bytes(), executable=blob is plan.sim)
    listing = {
        "out": os.path.relpath(plan.out.resolve(), directory),
        "tasks": [{"dir": t.directory, "request": t.request(plan.sim), "record": plan.record(t)} for t in tasks],
    }
    (directory / "tasks.json").write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")
    shutil.copyfile(worker.__file__, directory / TASK_PROGRAM)
    timeout = max(t.timeout_s for t in tasks)
    script = directory / SCRIPT
    text = sbatch_script(
        _relative_if_below(directory, base),
        len(tasks),
        timeout,
        partition=partition,
        account=account,
        options=options,
    )
    script.write_text(text, encoding="utf-8")
    script.chmod(0o755)
    return tasks


def describe(directory: Path, tasks: Sequence[Task]) -> str:
    return (
        f"sweep: wrote a Slurm array of {len(tasks)} tasks in {directory}: "
        f"sbatch {directory / SCRIPT}  (one task: {shlex.join(task_command(directory, 0))})"
    )

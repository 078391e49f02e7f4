"""Sweeps: every combination of scenarios, algorithms, parameter grids and
seeds as content-addressed simulator runs, on this machine, on a Dask
cluster or as a Slurm array (``vegas-qlog sweep SPEC.toml``).

:mod:`.spec` reads the spec, :mod:`.tasks` makes and records the runs,
:mod:`.executors` runs them, :mod:`.worker` is what runs on the worker's
side, :mod:`.slurm` writes the array job, :mod:`.progress` the progress line.
"""

from __future__ import annotations

from .executors import DaskExecutor, ExecutorError, LocalExecutor, Outcome, run_sweep
from .spec import Entry, SpecError, SweepSpec, load_spec, parse_spec, write_spec
from .tasks import Plan, Task, make_plan, write_summary

__all__ = [
    "DaskExecutor",
    "Entry",
    "ExecutorError",
    "LocalExecutor",
    "Outcome",
    "Plan",
    "SpecError",
    "SweepSpec",
    "Task",
    "load_spec",
    "make_plan",
    "parse_spec",
    "run_sweep",
    "write_spec",
    "write_summary",
]

"""``vegas-qlog sweep SPEC.toml``: the command line of the sweep runner."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .executors import DaskExecutor, Executor, ExecutorError, LocalExecutor, run_sweep
from .slurm import describe, emit_slurm_array, node_local_warnings
from .spec import SpecError, load_spec, parse_set
from .tasks import SUMMARY_CSV, SUMMARY_JSON, make_plan

SIM_ENV = "VEGAS_SIM"
DEFAULT_SIM = Path("target/release/vegas-sim")
BLOB_CACHE = ".blobs"


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def find_simulator(given: str | None, spec_path: Path) -> Path:
    """The simulator binary: the one given (``--sim`` or ``$VEGAS_SIM``), else
    the repository's ``target/release/vegas-sim`` in the working directory or
    the nearest directory above it or above the spec, so the README's
    commands work from the repository root and from ``qlog-analysis/``."""
    if given:
        sim = Path(given)
        if not sim.is_file():
            raise SpecError(f"{sim}: no simulator binary (build it with ./scripts/setup, or give --sim)")
        return sim
    for start in (Path.cwd(), spec_path.resolve().parent):
        for directory in (start, *start.parents):
            candidate = directory / DEFAULT_SIM
            if candidate.is_file():
                return candidate
    raise SpecError(
        f"no simulator binary: {DEFAULT_SIM} is in none of {Path.cwd()} or {spec_path.resolve().parent} "
        f"or the directories above them (build it with ./scripts/setup, or give --sim or ${SIM_ENV})"
    )


def cmd_sweep(args: argparse.Namespace) -> int:
    try:
        sets = [parse_set(text) for text in args.set]
        spec_path = Path(args.spec)
        spec = load_spec(spec_path, sets)
        out = Path(args.out) if args.out else Path("out/sweep") / spec_path.stem
        sim = find_simulator(args.sim or os.environ.get(SIM_ENV), spec_path)
        if args.jobs < 1:
            raise SpecError("--jobs: at least 1")
        plan = make_plan(spec, sim, out.resolve(), display_out=str(out))
        if args.emit_slurm_array:
            directory = Path(args.emit_slurm_array)
            tasks = emit_slurm_array(
                plan,
                directory,
                force=args.force,
                partition=args.slurm_partition,
                account=args.slurm_account,
                options=args.slurm_option,
            )
            _say(describe(directory.resolve(), tasks) if tasks else "sweep: every run is done; no Slurm array written")
            for warning in node_local_warnings(directory, out) if tasks else []:
                _say(f"vegas-qlog sweep: warning: {warning}")
            return 0
        executor: Executor = (
            DaskExecutor(args.cluster) if args.cluster else LocalExecutor(args.jobs, cache=out.resolve() / BLOB_CACHE)
        )
        outcome = run_sweep(plan, executor, force=args.force, log=_say)
    except (SpecError, ExecutorError, OSError, ValueError) as e:
        _say(f"vegas-qlog sweep: error: {e}")
        return 1
    except KeyboardInterrupt:
        _say("vegas-qlog sweep: interrupted; run the same command again to finish (finished runs are kept)")
        return 130
    doc: dict[str, Any] = outcome.summary
    _say(
        f"sweep: {doc['done']}/{doc['total']} runs done ({outcome.ran} run now, {outcome.reused} reused), "
        f"{doc['failed']} failed; summary in {out / SUMMARY_JSON} and {out / SUMMARY_CSV}"
    )
    for run in doc["runs"]:
        if run["status"] == "failed":
            first = run.get("failure", "").splitlines()
            _say(f"  failed: {run['dir']}: {first[0] if first else ''}; stderr in {out / run['stderr']}")
    return 0 if doc["done"] == doc["total"] else 1


def register(sub: Any) -> None:
    """Adds the ``sweep`` subcommand to the command's subparsers."""
    p = sub.add_parser(
        "sweep",
        help="run a sweep (scenarios x algorithms x parameter grids x seeds) locally or on a Dask cluster",
        description="Runs every combination of a sweep spec in vegas-sim (see qlog-analysis/README.md); "
        "runs already made by the same binary with the same arguments are kept.",
    )
    p.add_argument("spec", metavar="SPEC.toml", help="the sweep spec")
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/sweep/<spec name>)")
    p.add_argument("--jobs", type=int, default=2, metavar="N", help="local simulations at a time (default 2)")
    p.add_argument(
        "--cluster", metavar="ADDRESS", help="run on the Dask.distributed scheduler at ADDRESS (tcp://host:8786)"
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a scenario value in every run (repeatable; VALUE in TOML)",
    )
    p.add_argument(
        "--sim",
        metavar="PATH",
        help=f"vegas-sim binary (default: ${SIM_ENV}, else {DEFAULT_SIM} here or in the nearest directory above)",
    )
    p.add_argument("--force", action="store_true", help="run again runs already made")
    p.add_argument(
        "--emit-slurm-array",
        metavar="DIR",
        help="run nothing: write the runs not done yet as a Slurm array job in DIR",
    )
    p.add_argument("--slurm-partition", metavar="NAME", help="with --emit-slurm-array: #SBATCH --partition")
    p.add_argument("--slurm-account", metavar="NAME", help="with --emit-slurm-array: #SBATCH --account")
    p.add_argument(
        "--slurm-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="with --emit-slurm-array: another #SBATCH line, e.g. --slurm-option=--qos=long (repeatable)",
    )
    p.set_defaults(func=cmd_sweep)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vegas-qlog")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))

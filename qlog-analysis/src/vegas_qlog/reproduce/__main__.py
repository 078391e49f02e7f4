"""Command line of the reproduction (see ``scripts/reproduce --help``)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ..sweep.spec import write_spec
from .check import check_report
from .claims import all_claims
from .document import evaluate, render
from .plan import ALT_SUFFIX, build_alternatives, build_plan, select
from .results import collect
from .runner import RUN_FILE, existing_runs, run_all, snapshot_simulator, sweep_spec


def _recorded_hash(directory: Path) -> str:
    try:
        return str(json.loads((directory / RUN_FILE).read_text(encoding="utf-8")).get("sim_sha256", ""))
    except (OSError, json.JSONDecodeError):
        return ""


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", *args], cwd=root, capture_output=True, text=True, check=False
        )
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _source_changed(root: Path, outputs: list[Path]) -> bool:
    """Whether tracked files differ from HEAD, the report's own outputs
    aside: regenerating the report does not change what produced it."""
    excludes = [f":(exclude){rel}" for rel in (_relative(p, root) for p in outputs) if not Path(rel).is_absolute()]
    return bool(_git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", *excludes))


def cmd_run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    root = Path(args.root).resolve()
    quick = args.quick
    runs_dir = Path(args.runs).resolve() if args.runs else root / "out" / "reproduce"
    doc = Path(args.doc).resolve() if args.doc else root / "docs" / "reproduction.md"
    fig_dir = doc.with_suffix("")
    experiments = build_plan(root, quick=quick)
    alternatives = build_alternatives(experiments, quick=quick)
    if args.only:
        try:
            experiments, alternatives = select(experiments, alternatives, args.only.split(","))
        except ValueError as e:
            print(f"reproduce: {e}", file=sys.stderr)
            return 2
    specs = [s for e in experiments + alternatives for s in e.specs]
    if args.render_only:
        records = existing_runs(specs, runs_dir)
        hashes = {_recorded_hash(r.directory) for r in records if r.status == "cached"}
        sim_copy, sim_hash = Path("(runs made earlier)"), ", ".join(sorted(h for h in hashes if h)) or "unknown"
        print(
            f"reproduce: rendering {sum(r.status == 'cached' for r in records)} of {len(specs)} runs", file=sys.stderr
        )
    else:
        sim = Path(args.sim).resolve() if args.sim else root / "target" / "release" / "vegas-sim"
        sim_copy, sim_hash = snapshot_simulator(sim, runs_dir)
        print(
            f"reproduce: {len(experiments)} experiments, {len(specs)} runs, {args.jobs} at a time; "
            f"outputs in {runs_dir}",
            file=sys.stderr,
        )
        records = run_all(
            specs, root, runs_dir, sim_copy, sim_hash, jobs=args.jobs, force=args.force, cluster=args.cluster
        )
    results = collect(records, root)
    claims = all_claims(quick=quick)
    if args.only:
        keys = {e.key for e in experiments} | {a.key.removesuffix(ALT_SUFFIX) for a in alternatives}
        claims = [c for c in claims if all(ref.experiment in keys for ch in c.checks for ref in ch.refs())]
    info = {
        "invocation": args.invocation or "python -m vegas_qlog.reproduce run " + " ".join(sys.argv[2:]),
        "mode": "quick" if quick else "full",
        "n_runs": len(specs),
        "jobs": args.jobs,
        "commit": _git(root, "rev-parse", "--short=12", "HEAD") or "unknown",
        "dirty": _source_changed(root, [doc, fig_dir]),
        "sim_sha256": sim_hash,
        "sim_copy": _relative(sim_copy, root),
        "cpus": os.cpu_count(),
        "ran": sum(1 for r in records if r.status == "ran"),
        "absent": sum(1 for r in records if r.status == "absent"),
        "cached": sum(1 for r in records if r.status == "cached"),
        "simulated_s": float(results.table["simulated_s"].sum()) if not results.table.empty else 0.0,
        "runs_wall_s": float(results.table["wall_s"].sum()) if not results.table.empty else 0.0,
    }
    # Wall time of the runs (before the report is written); remembered for
    # later invocations that reuse them.
    info["wall_s"] = time.monotonic() - started
    made = runs_dir / "made.json"
    if info["ran"] and not args.render_only:
        made.write_text(
            json.dumps({"invocation": info["invocation"], "ran": info["ran"], "wall_s": round(info["wall_s"], 1)})
            + "\n",
            encoding="utf-8",
        )
    try:
        info["made"] = json.loads(made.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        info["made"] = None
    text = render(
        experiments,
        claims,
        results,
        records,
        root=root,
        doc_path=doc,
        fig_dir=fig_dir,
        info=info,
        alternatives=alternatives,
    )
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")
    if args.only:
        # A part of the report: its verdicts, variants' too, where they are read first.
        ran = {e.key for e in experiments}
        for e in evaluate(claims, results, alternatives):
            own = e.verdict if all(r.experiment in ran for c in e.claim.checks for r in c.refs()) else "(not run)"
            print(f"reproduce: {e.claim.id}: {own}; sensitivity: {e.sensitivity or '-'}", file=sys.stderr)
    print(f"reproduce: wrote {doc} and {fig_dir}/ in {time.monotonic() - started:.0f} s", file=sys.stderr)
    problems = check_report(doc, [c.id for c in claims], min_figures=1)
    for p in problems:
        print(f"reproduce: check: {p}", file=sys.stderr)
    if results.problems:
        print(f"reproduce: {len(results.problems)} run problem(s), listed in the report", file=sys.stderr)
    return 1 if problems else 0


def cmd_spec(args: argparse.Namespace) -> int:
    """Writes the reproduction's runs as a sweep spec (``vegas-qlog sweep`` runs it)."""
    root = Path(args.root).resolve()
    experiments = build_plan(root, quick=args.quick)
    specs = [s for e in experiments + build_alternatives(experiments, quick=args.quick) for s in e.specs]
    spec = sweep_spec(specs, root)
    text = write_spec(spec.entries, spec.scenario_dir)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"reproduce: wrote {len(specs)} runs to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    problems = check_report(Path(args.doc))
    for p in problems:
        print(f"check: {p}", file=sys.stderr)
    if not problems:
        print(f"check: {args.doc}: complete", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vegas_qlog.reproduce", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the simulations and write the report")
    run.add_argument("--quick", action="store_true", help="reduced plan: 2 seeds, short scenarios, fewer points")
    run.add_argument("--root", default=".", help="the repository (default: the current directory)")
    run.add_argument("--runs", help="directory of the run outputs (default: ROOT/out/reproduce)")
    run.add_argument("--doc", help="the report to write (default: ROOT/docs/reproduction.md); figures beside it")
    run.add_argument("--jobs", type=int, default=2, help="simulations at a time (default 2)")
    run.add_argument("--sim", help="vegas-sim binary (default: ROOT/target/release/vegas-sim)")
    run.add_argument("--force", action="store_true", help="run again even runs already made")
    run.add_argument("--only", help="comma-separated experiments or paper numbers (for working on one part)")
    run.add_argument(
        "--render-only", action="store_true", help="run nothing: write the report from the runs already made"
    )
    run.add_argument("--invocation", help="the command line to quote in the report")
    run.add_argument("--cluster", metavar="ADDRESS", help="run the simulations on the Dask scheduler at ADDRESS")
    run.set_defaults(func=cmd_run)
    spec = sub.add_parser("spec", help="write the reproduction's runs as a sweep spec (for vegas-qlog sweep)")
    spec.add_argument("--quick", action="store_true", help="the reduced plan of --quick")
    spec.add_argument("--root", default=".", help="the repository (default: the current directory)")
    spec.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    spec.set_defaults(func=cmd_spec)
    check = sub.add_parser("check", help="check a written report")
    check.add_argument("doc")
    check.set_defaults(func=cmd_check)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())

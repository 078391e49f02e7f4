"""Tasks of a sweep, addressed by content, and their results on disk.

A task's key is the SHA-256 of the simulator binary's SHA-256, the
scenario file's SHA-256 and vegas-sim's arguments: the same key, the same
bytes out (the simulator is deterministic). Each run's directory holds
``run.json`` (its key and command), written last: a directory whose
``run.json`` names the task's key and that holds ``summary.json`` is done,
anything else is run (again). A run is written into a temporary directory
beside the outputs and moved into place whole, so an interrupted sweep
leaves no partial run that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .spec import Entry, SweepSpec, toml_value
from .worker import (
    FAILURE_FILE,
    PARTIAL_DIR,
    RUN_FILE,
    STDERR_FILE,
    file_sha256,
    finish_run,
    new_staging,
    write_files,
)

SUMMARY_JSON = "sweep.json"
# Scenarios with their rate traces written inline, beside the outputs.
INLINED_DIR = ".blobs/inlined"
SUMMARY_CSV = "sweep.csv"
# Fields of vegas-sim's summary.json that measure this execution, not the run.
WALL_CLOCK_FIELDS = frozenset({"wall_s"})


def sim_args(entry: Entry, qlog: bool = False) -> list[str]:
    """vegas-sim's arguments after ``run SCENARIO`` (``--out`` is added where it runs)."""
    args = ["--cc", entry.cc]
    for param in entry.cc_params:
        args += ["--cc-param", param]
    args += ["--seed", str(entry.seed)]
    for path, value in entry.sets:
        args += ["--set", f"{path}={toml_value(value)}"]
    if not qlog:
        args.append("--no-qlog")
    return args


def task_key(sim_sha256: str, scenario_sha256: str, args: Sequence[str]) -> str:
    text = json.dumps({"sim": sim_sha256, "scenario": scenario_sha256, "args": list(args)}, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Blob:
    """A file named by its content (see :mod:`.worker`)."""

    sha256: str
    name: str
    path: Path  # where it is on this machine

    @property
    def ref(self) -> dict[str, str]:
        return {"sha256": self.sha256, "name": self.name}

    @classmethod
    def of(cls, path: Path, name: str | None = None) -> Blob:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        return cls(file_sha256(path), name or path.name, path)


@dataclass(frozen=True)
class Task:
    entry: Entry
    scenario: Blob
    args: tuple[str, ...]
    key: str
    timeout_s: float
    scenario_display: str  # the scenario as the recorded command names it

    @property
    def directory(self) -> str:
        return self.entry.directory

    def request(self, sim: Blob) -> dict[str, Any]:
        """What a worker needs to run the task (see :func:`.worker.run_request`)."""
        return {
            "key": self.key,
            "sim": sim.ref,
            "scenario": self.scenario.ref,
            "args": list(self.args),
            "timeout_s": self.timeout_s,
        }

    def display_argv(self, out: str) -> list[str]:
        return ["vegas-sim", "run", self.scenario_display, *self.args, "--out", out]


@dataclass(frozen=True)
class Plan:
    sim: Blob
    tasks: tuple[Task, ...]
    out: Path
    display_out: str  # how recorded commands name the output directory

    @property
    def blobs(self) -> list[Blob]:
        seen: dict[str, Blob] = {self.sim.sha256: self.sim}
        for t in self.tasks:
            seen.setdefault(t.scenario.sha256 + t.scenario.name, t.scenario)
        return list(seen.values())

    def run_dir(self, task: Task) -> Path:
        return self.out / task.directory

    def record(self, task: Task) -> dict[str, Any]:
        out = f"{self.display_out}/{task.directory}" if self.display_out else task.directory
        return {
            "argv": task.display_argv(out),
            "key": task.key,
            "sim_sha256": self.sim.sha256,
            "scenario_sha256": task.scenario.sha256,
        }


_TRACE_FILE_LINE = re.compile(r'^(\s*)rate_trace_file\s*=\s*"([^"\\]*)"\s*(#.*)?$', re.MULTILINE)


def _with_inline_traces(path: Path, workdir: Path) -> Path:
    """The scenario to ship: ``path`` itself, or, when a link names a
    ``rate_trace_file``, a copy beside the outputs with each such line
    replaced by ``rate_trace = [...]`` (the file's timestamps, which
    vegas-sim reads alike), so the scenario travels as one file to every
    executor and its key follows the trace's content."""
    try:
        text = path.read_text(encoding="utf-8")
        doc = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return path  # vegas-sim reports what is wrong with it, run by run
    links = doc.get("links") if isinstance(doc.get("links"), dict) else {}
    named = [n for n, link in links.items() if isinstance(link, dict) and "rate_trace_file" in link]
    if not named:
        return path
    matches = list(_TRACE_FILE_LINE.finditer(text))
    if len(matches) != len(named):
        raise ValueError(
            f'{path}: links.{named[0]}.rate_trace_file: write it as one line `rate_trace_file = "FILE"` '
            "so the sweep can ship the trace inside the scenario"
        )

    def inline(match: re.Match[str]) -> str:
        trace = path.parent / match.group(2)
        try:
            stamps = [line.strip() for line in trace.read_text(encoding="ascii").splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: rate_trace_file {trace}: cannot read: {e}") from e
        bad = next((s for s in stamps if not s.isdigit()), None)
        if bad is not None:
            raise ValueError(f"{trace}: {bad!r} is not a whole number of milliseconds")
        return f"{match.group(1)}rate_trace = [{', '.join(stamps)}]  # from {match.group(2)}"

    inlined = _TRACE_FILE_LINE.sub(inline, text)
    digest = hashlib.sha256(inlined.encode()).hexdigest()[:16]
    target = workdir / digest / path.name
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(inlined, encoding="utf-8")
    return target


def make_plan(
    spec: SweepSpec,
    sim: Path | Blob,
    out: Path,
    *,
    display_out: str = "",
    scenario_display: str = "{name}",
) -> Plan:
    """Hashes the binary and every scenario file and makes the tasks.
    ``scenario_display`` formats the scenario in recorded commands."""
    sim_blob = sim if isinstance(sim, Blob) else Blob.of(sim, "vegas-sim")
    scenarios: dict[str, Blob] = {}
    tasks = []
    for entry in spec.entries:
        if entry.scenario not in scenarios:
            path = spec.scenario_dir / entry.scenario
            if not path.is_file():
                raise FileNotFoundError(f"{path}: no such scenario file")
            shipped = _with_inline_traces(path, out / INLINED_DIR)
            scenarios[entry.scenario] = Blob.of(shipped, path.name)
        blob = scenarios[entry.scenario]
        args = tuple(sim_args(entry, spec.qlog))
        tasks.append(
            Task(
                entry,
                blob,
                args,
                task_key(sim_blob.sha256, blob.sha256, args),
                spec.timeout_s,
                scenario_display.format(name=entry.scenario),
            )
        )
    return Plan(sim_blob, tuple(tasks), out, display_out)


def is_done(plan: Plan, task: Task) -> bool:
    directory = plan.run_dir(task)
    try:
        record = json.loads((directory / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return False
    return (
        isinstance(record, dict)
        and record.get("key") == task.key
        and (directory / "summary.json").is_file()
        and not (directory / FAILURE_FILE).exists()
    )


def commit(plan: Plan, task: Task, result: Mapping[str, Any], staging: Path | None = None) -> bool:
    """Puts a finished run in place (see :func:`.worker.finish_run`): its
    outputs are already in ``staging`` (the local executor) or come as
    ``result["files"]`` (a remote worker). Returns whether it succeeded."""
    if staging is None:
        staging = new_staging(plan.out)
        if int(result["exit"]) == 0:
            write_files(staging, result.get("files", {}))
    return finish_run(staging, plan.run_dir(task), plan.record(task), int(result["exit"]), str(result["stderr"]))


def clean_partials(plan: Plan) -> None:
    """Removes what interrupted sweeps left half-written."""
    shutil.rmtree(plan.out / PARTIAL_DIR, ignore_errors=True)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None


def run_status(plan: Plan, task: Task) -> dict[str, Any]:
    """One run's line of the sweep summary (from its directory as it is)."""
    directory = plan.run_dir(task)
    entry = task.entry
    row: dict[str, Any] = {
        "dir": task.directory,
        "key": task.key,
        "scenario": entry.scenario,
        "cc": entry.cc,
        "cc_params": list(entry.cc_params),
        "seed": entry.seed,
        "set": dict(entry.sets),
    }
    record = _read_json(directory / RUN_FILE)
    if not isinstance(record, dict) or record.get("key") != task.key:
        row["status"] = "missing"
        return row
    if is_done(plan, task):
        row["status"] = "done"
        summary = _read_json(directory / "summary.json")
        if isinstance(summary, dict):
            # The simulator's own wall-clock time: the one value that differs from one execution to another.
            summary = {k: v for k, v in summary.items() if k not in WALL_CLOCK_FIELDS}
        row["summary"] = summary
        return row
    row["status"] = "failed"
    failure = (directory / FAILURE_FILE).read_text(encoding="utf-8", errors="replace") if directory.exists() else ""
    row["failure"] = failure.strip()
    row["stderr"] = f"{task.directory}/{STDERR_FILE}"
    return row


def summary_rows(statuses: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per flow under test of every finished run (for the CSV)."""
    rows = []
    for st in statuses:
        base = {
            "dir": st["dir"],
            "scenario": st["scenario"],
            "cc": st["cc"],
            "cc_params": " ".join(st["cc_params"]),
            "seed": st["seed"],
            "set": " ".join(f"{k}={toml_value(v)}" for k, v in st["set"].items()),
            "status": st["status"],
        }
        summary = st.get("summary")
        flows = [f for f in (summary or {}).get("flows", []) if f.get("under_test")] if summary else []
        if not flows:
            rows.append(base)
        for flow in flows:
            rows.append(
                {
                    **base,
                    "flow": flow.get("name"),
                    "goodput_bps": flow.get("goodput_bps"),
                    "completion_s": flow.get("completion_s"),
                    "bytes_retransmitted": flow.get("bytes_retransmitted"),
                    "mean_rtt_ms": flow.get("mean_rtt_ms"),
                    "simulated_s": summary.get("simulated_s"),
                    "jain_index": summary.get("jain_index"),
                }
            )
    return rows


CSV_COLUMNS = (
    "dir",
    "scenario",
    "cc",
    "cc_params",
    "seed",
    "set",
    "status",
    "flow",
    "goodput_bps",
    "completion_s",
    "bytes_retransmitted",
    "mean_rtt_ms",
    "simulated_s",
    "jain_index",
)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    text = repr(value) if isinstance(value, float) else str(value)
    if any(c in text for c in ',"\n'):
        text = '"' + text.replace('"', '""') + '"'
    return text


def write_summary(plan: Plan) -> dict[str, Any]:
    """Writes ``sweep.json`` (every run: its parameters, status and
    ``summary.json``; a failed run's failure and stderr file) and
    ``sweep.csv`` (one row per flow under test) in the output directory;
    returns the JSON document. Both depend only on the runs' outputs, not on
    where or when they ran."""
    statuses = [run_status(plan, t) for t in sorted(plan.tasks, key=lambda t: t.directory)]
    doc = {
        "sim_sha256": plan.sim.sha256,
        "total": len(statuses),
        "done": sum(s["status"] == "done" for s in statuses),
        "failed": sum(s["status"] == "failed" for s in statuses),
        "missing": sum(s["status"] == "missing" for s in statuses),
        "runs": statuses,
    }
    plan.out.mkdir(parents=True, exist_ok=True)
    (plan.out / SUMMARY_JSON).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    lines = [",".join(CSV_COLUMNS)]
    for row in summary_rows(statuses):
        lines.append(",".join(_csv_cell(row.get(c)) for c in CSV_COLUMNS))
    (plan.out / SUMMARY_CSV).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return doc

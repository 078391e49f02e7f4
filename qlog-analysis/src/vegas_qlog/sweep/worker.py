"""What runs where a simulation runs: on this machine (the local executor),
on a Dask worker, or in a Slurm array task. Standard library only, so that a
Dask worker needs nothing of this package installed (the distributed executor
ships this module by value).

A *blob* is a file named by its content: ``{"sha256": ..., "name": ...}``.
:func:`materialise` writes a blob's bytes into a cache directory at
``CACHE/<first 16 hex digits of its SHA-256>/<name>`` (once: a file already
there with the right content is kept), so the simulator binary and the
scenario files reach a machine without a shared filesystem, and the scenario
keeps its file name (vegas-sim writes it into ``summary.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

RUN_TIMEOUT_S = 900
# Lines of a failed run's stderr quoted in messages (the whole of it is kept in a file).
STDERR_TAIL_LINES = 5
RUN_FILE = "run.json"
FAILURE_FILE = "failure.txt"
STDERR_FILE = "stderr.txt"
PARTIAL_DIR = ".partial"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def blob_path(cache: Path, blob: Mapping[str, str]) -> Path:
    """Where ``blob`` lives in ``cache``."""
    name = blob["name"]
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"bad blob name {name!r}")
    return cache / blob["sha256"][:16] / name


def materialise(cache: Path, blob: Mapping[str, str], data: bytes, executable: bool = False) -> Path:
    """Writes ``data`` as ``blob`` into ``cache`` (atomically; nothing is
    written when the file is already there with this content) and returns
    its path. Refuses bytes whose SHA-256 is not the blob's."""
    actual = hashlib.sha256(data).hexdigest()
    if actual != blob["sha256"]:
        raise ValueError(f"{blob['name']}: content has SHA-256 {actual}, expected {blob['sha256']}")
    target = blob_path(cache, blob)
    if target.is_file() and file_sha256(target) == actual:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if executable:
            os.chmod(tmp, os.stat(tmp).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def cached(cache: Path, blob: Mapping[str, str]) -> Path:
    """The path of a blob already in ``cache``; an error if it is missing or altered."""
    path = blob_path(cache, blob)
    if not path.is_file():
        raise FileNotFoundError(f"{blob['name']} ({blob['sha256'][:16]}) is not in the cache {cache}")
    if file_sha256(path) != blob["sha256"]:
        raise ValueError(f"{path}: content does not match its SHA-256 {blob['sha256']}")
    return path


def simulate(sim: Path, scenario: Path, args: list[str], out: Path, timeout_s: float = RUN_TIMEOUT_S) -> dict[str, Any]:
    """Runs ``sim run SCENARIO ARGS... --out OUT`` (``out`` must not exist
    yet). Returns ``{"exit": status, "stderr": text, "wall_s": seconds}``;
    a run that outlives ``timeout_s`` is killed and reported with exit -1."""
    argv = [str(sim), "run", str(scenario), *args, "--out", str(out)]
    start = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
        code, stderr = done.returncode, done.stderr
    except subprocess.TimeoutExpired as e:
        text = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        code, stderr = -1, text + f"\n(killed: timed out after {timeout_s:g} s)\n"
    except OSError as e:
        code, stderr = -2, f"cannot run {sim}: {e}\n"
    return {"exit": code, "stderr": stderr, "wall_s": time.monotonic() - start}


def read_tree(directory: Path) -> dict[str, bytes]:
    """Every file below ``directory``, by relative path (``/``-separated)."""
    files: dict[str, bytes] = {}
    if directory.is_dir():
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                files[path.relative_to(directory).as_posix()] = path.read_bytes()
    return files


def run_request(request: Mapping[str, Any], cache: Path) -> dict[str, Any]:
    """Runs one task whose blobs are in ``cache`` in a temporary directory
    and returns its outputs as bytes: ``{"key", "exit", "stderr", "wall_s",
    "host", "files"}``. What a Dask worker executes."""
    sim = cached(cache, request["sim"])
    scenario = cached(cache, request["scenario"])
    with tempfile.TemporaryDirectory(prefix="vegas-sweep-") as tmp:
        out = Path(tmp) / "out"
        out.mkdir()
        result = simulate(sim, scenario, list(request["args"]), out, float(request.get("timeout_s", RUN_TIMEOUT_S)))
        result["files"] = read_tree(out) if result["exit"] == 0 else {}
    result["key"] = request["key"]
    result["host"] = socket.gethostname()
    return result


def failure_text(exit_code: int, stderr: str) -> str:
    tail = "\n".join(stderr.strip().splitlines()[-STDERR_TAIL_LINES:])
    return f"exit status {exit_code}\n{tail}\n"


def write_files(directory: Path, files: Mapping[str, bytes]) -> None:
    """Writes result files (relative paths) below ``directory``, never outside it."""
    base = directory.resolve()
    for rel, data in files.items():
        target = (base / rel).resolve()
        if base not in target.parents:
            raise ValueError(f"result file {rel!r} points outside its run directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def new_staging(out: Path) -> Path:
    """A new empty directory for a run in progress, beside the outputs in ``out``."""
    base = out / PARTIAL_DIR
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=base))


def finish_run(staging: Path, target: Path, record: Mapping[str, Any], exit_code: int, stderr: str) -> bool:
    """Puts a finished run in place. ``staging`` holds vegas-sim's outputs;
    if the run failed, ``stderr.txt`` (all of it) and ``failure.txt`` (exit
    status and last lines), then ``run.json`` are added, and the whole directory replaces
    ``target`` in one rename. Returns whether the run succeeded."""
    ok = exit_code == 0 and (staging / "summary.json").is_file()
    if exit_code == 0 and not ok:
        exit_code, stderr = -3, stderr + "\n(vegas-sim exited 0 but wrote no summary.json)\n"
    if not ok:
        (staging / STDERR_FILE).write_text(stderr, encoding="utf-8")
        (staging / FAILURE_FILE).write_text(failure_text(exit_code, stderr), encoding="utf-8")
    (staging / RUN_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old."))
        target.rename(old / "run")
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        staging.rename(target)
    return ok


def main(argv: Sequence[str]) -> int:
    """``python3 vegas_sweep_task.py DIR INDEX``: runs task INDEX of
    ``DIR/tasks.json`` (written by ``--emit-slurm-array DIR``) with the blobs of
    ``DIR/blobs`` and puts the run into the output directory the list names.
    What every Slurm array task executes; needs nothing but Python 3."""
    if len(argv) != 2:
        print("usage: vegas_sweep_task.py DIR INDEX", file=sys.stderr)
        return 2
    directory = Path(argv[0])
    try:
        listing = json.loads((directory / "tasks.json").read_text(encoding="utf-8"))
        index = int(argv[1])
        if not 0 <= index < len(listing["tasks"]):
            raise IndexError(f"task {index} not in 0..{len(listing['tasks']) - 1}")
        task = listing["tasks"][index]
        out = Path(listing["out"])
        if not out.is_absolute():
            # Written relative to DIR, so the array runs wherever DIR is mounted.
            out = directory / out
        sim = cached(directory / "blobs", task["request"]["sim"])
        scenario = cached(directory / "blobs", task["request"]["scenario"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        print(f"vegas_sweep_task: {directory}: {e}", file=sys.stderr)
        return 2
    target = out / task["dir"]
    try:
        done = json.loads((target / RUN_FILE).read_text(encoding="utf-8")).get("key") == task["request"]["key"]
    except (OSError, ValueError, AttributeError):
        done = False
    if done and (target / "summary.json").is_file() and not (target / FAILURE_FILE).exists():
        print(f"vegas_sweep_task: {task['dir']}: already done", file=sys.stderr)
        return 0
    staging = new_staging(out)
    request = task["request"]
    result = simulate(sim, scenario, list(request["args"]), staging, float(request.get("timeout_s", RUN_TIMEOUT_S)))
    ok = finish_run(staging, target, task["record"], result["exit"], result["stderr"])
    status = "done" if ok else f"FAILED (stderr in {target / STDERR_FILE})"
    print(f"vegas_sweep_task: {task['dir']}: {status} in {result['wall_s']:.1f} s", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

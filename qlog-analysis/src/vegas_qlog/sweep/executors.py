"""Where the tasks run: :class:`LocalExecutor` (processes on this machine,
the default, no server) or :class:`DaskExecutor` (a running Dask.distributed
cluster); and :func:`run_sweep`, which skips what is done, hands the rest to
an executor, puts every result in place as it arrives, shows the progress
and writes the sweep's summary."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .progress import Progress
from .tasks import Plan, Task, clean_partials, commit, is_done, write_summary
from .worker import RUN_FILE, STDERR_FILE, finish_run, materialise, new_staging, simulate

LOCK_FILE = ".sweep.lock"

# deliver(task, result, staging): result has "exit", "stderr", "wall_s" and,
# from a remote worker, "files"; staging is the directory holding the
# outputs when they were written on this machine.
Deliver = Callable[[Task, dict[str, Any], Path | None], None]


class ExecutorError(Exception):
    """The executor cannot run anything (e.g. no cluster at the address)."""


class Executor(Protocol):
    name: str

    def run(self, plan: Plan, tasks: Sequence[Task], deliver: Deliver) -> None: ...


class LocalExecutor:
    """``jobs`` simulations at a time on this machine. With a ``cache``
    directory the binary and the scenario files are first copied there by
    content (so rebuilding or editing them during the sweep changes
    nothing); without one they are used where they are."""

    name = "local"

    def __init__(self, jobs: int = 2, cache: Path | None = None):
        self.jobs = max(1, jobs)
        self.cache = cache

    def _path(self, blob: Any, executable: bool = False) -> Path:
        if self.cache is None:
            return Path(blob.path)
        return materialise(self.cache, blob.ref, Path(blob.path).read_bytes(), executable=executable)

    def run(self, plan: Plan, tasks: Sequence[Task], deliver: Deliver) -> None:
        if not tasks:
            return
        sim = self._path(plan.sim, executable=True)
        scenarios = {t.scenario.sha256: self._path(t.scenario) for t in tasks}

        def one(task: Task) -> tuple[dict[str, Any], Path]:
            staging = new_staging(plan.out)
            return simulate(sim, scenarios[task.scenario.sha256], list(task.args), staging, task.timeout_s), staging

        pool = ThreadPoolExecutor(max_workers=self.jobs)
        try:
            futures = {pool.submit(one, t): t for t in tasks}
            for future in as_completed(futures):
                result, staging = future.result()
                deliver(futures[future], result, staging)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """The tasks on a running Dask.distributed cluster (``address`` of its
    scheduler, e.g. ``tcp://10.0.0.1:8786``). The binary and the scenario
    files go to the workers inside a worker plugin (each worker writes them
    into its cache by SHA-256 when it joins; see :mod:`.remote`); the
    outputs come back as bytes. A worker that dies takes its running task
    with it and the scheduler runs it again elsewhere (up to Dask's
    ``distributed.scheduler.allowed-failures`` times)."""

    name = "dask"

    def __init__(
        self,
        address: str,
        *,
        connect_timeout_s: float = 30.0,
        retries: int = 2,
        no_worker_timeout_s: float = 300.0,
    ):
        self.address = address
        self.connect_timeout_s = connect_timeout_s
        self.retries = retries
        self.no_worker_timeout_s = no_worker_timeout_s

    def _workers(self, client: Any) -> int:
        try:
            return len(client.scheduler_info().get("workers", {}))
        except Exception as e:  # the scheduler went away
            raise ExecutorError(f"lost the Dask scheduler at {self.address}: {e}") from e

    def run(self, plan: Plan, tasks: Sequence[Task], deliver: Deliver) -> None:
        if not tasks:
            return
        try:
            import cloudpickle
            from distributed import Client, wait
        except ImportError as e:  # pragma: no cover - the lockfile installs it
            raise ExecutorError(f"--cluster needs Dask.distributed ({e})") from e
        from . import remote, worker

        # The worker-side code travels by value: workers need only distributed.
        cloudpickle.register_pickle_by_value(worker)
        cloudpickle.register_pickle_by_value(remote)
        try:
            client = Client(self.address, timeout=f"{self.connect_timeout_s}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise ExecutorError(f"cannot reach a Dask scheduler at {self.address}: {e}") from e
        with client:
            try:
                client.wait_for_workers(1, timeout=self.connect_timeout_s)
            except (TimeoutError, OSError) as e:
                raise ExecutorError(
                    f"the Dask scheduler at {self.address} has no workers (waited {self.connect_timeout_s:g} s)"
                ) from e
            blobs = [(b.ref, Path(b.path).read_bytes(), b is plan.sim) for b in plan.blobs]
            name = "vegas-sweep-" + hashlib.sha256(json.dumps([b[0] for b in blobs]).encode()).hexdigest()[:16]
            client.register_plugin(remote.BlobPlugin(blobs), name=name)
            try:
                pending = {
                    client.submit(
                        remote.run_on_worker, t.request(plan.sim), key=f"vegas-sim-{t.key}", retries=self.retries
                    ): t
                    for t in tasks
                }
                workerless_since: float | None = None
                while pending:
                    try:
                        with client.as_current():
                            done, _ = wait(list(pending), timeout=5, return_when="FIRST_COMPLETED")
                    except TimeoutError:
                        done = set()
                    for future in done:
                        task = pending.pop(future)
                        try:
                            result = future.result()
                        except Exception as e:  # the cluster gave up on it (e.g. KilledWorker)
                            result = {"exit": -4, "stderr": f"the cluster could not run it: {type(e).__name__}: {e}\n"}
                        future.release()
                        deliver(task, result, None)
                    if done or self._workers(client) > 0:
                        workerless_since = None
                    else:
                        workerless_since = workerless_since or time.monotonic()
                        if time.monotonic() - workerless_since > self.no_worker_timeout_s:
                            raise ExecutorError(
                                f"the Dask cluster at {self.address} has had no workers for "
                                f"{self.no_worker_timeout_s:g} s; {len(pending)} runs not made "
                                "(run the same command again when it has workers)"
                            )
            finally:
                # Best effort: the scheduler may be gone.
                with contextlib.suppress(Exception):
                    client.unregister_worker_plugin(name)


@dataclass
class Outcome:
    """What one invocation did."""

    total: int
    reused: int = 0
    ran: int = 0
    failed: list[str] = field(default_factory=list)  # directories of failed runs
    summary: dict[str, Any] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # by directory: exit, wall_s


def _simulated_s(directory: Path) -> float:
    try:
        value = json.loads((directory / "summary.json").read_text(encoding="utf-8")).get("simulated_s", 0.0)
        return float(value) if isinstance(value, int | float) else 0.0
    except (OSError, ValueError, AttributeError):
        return 0.0


def _copy_run(plan: Plan, source: Task, task: Task, exit_code: int) -> None:
    """A task with the same key as one just run: the same outputs (and the same exit status)."""
    staging = new_staging(plan.out)
    src = plan.run_dir(source)
    stderr = ""
    for path in src.iterdir():
        if path.name == STDERR_FILE:
            stderr = path.read_text(encoding="utf-8")
        elif path.is_file() and path.name != RUN_FILE:
            shutil.copy2(path, staging / path.name)
        elif path.is_dir():
            shutil.copytree(path, staging / path.name)
    finish_run(staging, plan.run_dir(task), plan.record(task), exit_code, stderr)


def run_sweep(
    plan: Plan,
    executor: Executor,
    *,
    force: bool = False,
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
) -> Outcome:
    """Runs every task of ``plan`` that is not done yet (all with ``force``),
    puts each result in its directory as it arrives, and writes the summary.
    One sweep at a time writes to an output directory (a lock file guards it)."""
    plan.out.mkdir(parents=True, exist_ok=True)
    with open(plan.out / LOCK_FILE, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            raise ExecutorError(f"{plan.out}: another sweep is writing to this directory") from e
        try:
            return _run_locked(plan, executor, force=force, progress=progress, log=log)
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(lock, fcntl.LOCK_UN)


def _run_locked(
    plan: Plan,
    executor: Executor,
    *,
    force: bool,
    progress: Progress | None,
    log: Callable[[str], None] | None,
) -> Outcome:
    clean_partials(plan)
    outcome = Outcome(total=len(plan.tasks))
    todo: dict[str, list[Task]] = {}
    reused_s = 0.0
    for task in plan.tasks:
        if not force and is_done(plan, task):
            outcome.reused += 1
            reused_s += _simulated_s(plan.run_dir(task))
        else:
            todo.setdefault(task.key, []).append(task)
    progress = progress or Progress(len(plan.tasks))
    progress.reuse(outcome.reused, reused_s)
    if log:
        log(
            f"sweep: {len(plan.tasks)} runs, {outcome.reused} already done, "
            f"{sum(len(v) for v in todo.values())} to run ({executor.name}); outputs in {plan.out}"
        )
    if outcome.reused and todo:
        progress.show()

    def deliver(task: Task, result: dict[str, Any], staging: Path | None) -> None:
        ok = commit(plan, task, result, staging)
        for twin in todo[task.key][1:]:
            _copy_run(plan, task, twin, int(result["exit"]))
        for t in todo[task.key]:
            outcome.ran += 1
            outcome.results[t.directory] = {"exit": result["exit"], "wall_s": float(result.get("wall_s", 0.0))}
            note = ""
            if not ok:
                outcome.failed.append(t.directory)
                note = f"FAILED {t.directory} (exit {result['exit']}; stderr in {t.directory}/{STDERR_FILE})"
            progress.update(ok, _simulated_s(plan.run_dir(t)) if ok else 0.0, note)

    try:
        executor.run(plan, [group[0] for group in todo.values()], deliver)
    finally:
        progress.close()
        clean_partials(plan)
    outcome.summary = write_summary(plan)
    return outcome

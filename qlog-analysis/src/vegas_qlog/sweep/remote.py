"""The Dask worker's side of the distributed executor: a worker plugin that
writes the sweep's blobs (simulator binary, scenario files) into the
worker's cache once, when it joins, and the task function that runs one
simulation there and returns its output files as bytes.

This module and :mod:`.worker` travel to the workers by value (cloudpickle),
so a worker needs only ``distributed`` installed, not this package.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin, get_worker

from .worker import materialise, run_request

CACHE_ENV = "VEGAS_SWEEP_CACHE"


def worker_cache(local_directory: str) -> Path:
    """Where a worker keeps blobs: ``$VEGAS_SWEEP_CACHE`` if set (to keep them
    across worker restarts), else inside the worker's own local directory."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path(local_directory) / "vegas-sweep-blobs"


class BlobPlugin(WorkerPlugin):
    """Carries the blobs' bytes; Dask runs :meth:`setup` on every worker
    that is there when it is registered and on every worker that joins
    later (a replacement for a dead one included)."""

    def __init__(self, blobs: list[tuple[Mapping[str, str], bytes, bool]]):
        self.blobs = blobs

    def setup(self, worker: Any) -> None:
        cache = worker_cache(worker.local_directory)
        for ref, data, executable in self.blobs:
            materialise(cache, ref, data, executable=executable)


def run_on_worker(request: Mapping[str, Any]) -> dict[str, Any]:
    """One task, on a Dask worker (see :func:`.worker.run_request`)."""
    return run_request(request, worker_cache(get_worker().local_directory))

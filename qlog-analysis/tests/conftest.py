"""Shared fixtures: a real (trimmed) simulator run and runs made from it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SIM_TINY = FIXTURES / "sim-tiny"


@pytest.fixture
def sim_dir() -> Path:
    """vegas-sim's output for tiny.toml, seed 1 (qlogs trimmed, see fixtures/README.md)."""
    return SIM_TINY


@pytest.fixture
def server_sqlog() -> Path:
    return SIM_TINY / "vegas-server.sqlog"


@pytest.fixture
def client_sqlog() -> Path:
    return SIM_TINY / "vegas-client.sqlog"


def make_run(root: Path, name: str, *, cc: str, seed: int, goodputs: list[float]) -> Path:
    """A run directory like the fixture's, with other algorithms, seeds and goodputs."""
    summary = json.loads((SIM_TINY / "summary.json").read_text())
    template = summary["flows"][0]
    flows = []
    for i, goodput in enumerate(goodputs):
        flow = dict(template)
        flow["name"] = f"flow{i}"
        flow["cc"] = cc if i == 0 else "reno"
        flow["under_test"] = i == 0
        flow["goodput_bps"] = goodput
        flow["bytes_retransmitted"] = 1000 * (i + 1)
        flows.append(flow)
    total = sum(goodputs)
    squares = sum(g * g for g in goodputs)
    summary.update(seed=seed, flows=flows, jain_index=total * total / (len(goodputs) * squares))
    run = root / name
    run.mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps(summary, indent=2))
    for i in range(len(goodputs)):
        shutil.copy(SIM_TINY / "flow-vegas.csv", run / f"flow-flow{i}.csv")
    return run


@pytest.fixture
def many_runs(tmp_path: Path) -> Path:
    """Six runs: vegas and cubic, three seeds each, two flows per run."""
    root = tmp_path / "runs"
    for seed, (a, b) in enumerate([(1.0e6, 1.0e6), (1.2e6, 0.9e6), (0.8e6, 1.1e6)], start=1):
        make_run(root, f"vegas/seed{seed}", cc="vegas", seed=seed, goodputs=[a, b])
        make_run(root, f"cubic/seed{seed}", cc="cubic", seed=seed, goodputs=[a * 1.5, b * 0.5])
    return root

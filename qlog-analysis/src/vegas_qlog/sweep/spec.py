"""The sweep spec: a TOML file naming scenarios, algorithms, ``--cc-param``
grids, ``--set`` overrides and seeds; every combination is one simulator run
(a :class:`~.tasks.Task`). See qlog-analysis/README.md for the format.

```toml
scenario_dir = "../interop/scenarios"   # relative to this file; default: the file's directory
scenarios = ["fau-sat.toml", "fau-satl.toml"]
algorithms = ["vegas", "cubic"]
seeds = [1, 2, 3]                       # or a count: seeds = 30 (1 to 30)
qlog = false                            # write .sqlog files (default false)

[set]                                   # --set of every run
duration_s = 60

[grid.set]                              # one run per value (per combination)
"links.forward.queue_packets" = [25, 100]

[grid.cc_params.vegas]                  # --cc-param grid of one algorithm
alpha = [1, 2]
beta = [3, 4]

[[run]]                                 # explicit runs (what the reproduction writes)
scenario = "fau-sat.toml"
cc = "vegas"
cc_params = ["alpha=2", "beta=4"]
seed = 1
set = { "links.forward.queue_packets" = 50 }
dir = "my/own/directory"
```
"""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .worker import RUN_TIMEOUT_S


class SpecError(Exception):
    """A sweep spec that cannot be run as written."""


def toml_value(value: Any) -> str:
    """``value`` written as TOML, as ``vegas-sim --set`` reads it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return f"{value:.1f}"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {value!r} as TOML")


def toml_key(key: str) -> str:
    """A TOML key: bare when it can be, quoted otherwise (dots included)."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def apply_sets(table: dict[str, Any], sets: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the scenario ``table`` with every ``--set`` applied in order
    (a dotted path creates the tables it names, as vegas-sim does)."""
    result = json.loads(json.dumps(table))
    for path, value in sets.items():
        keys = path.split(".")
        current = result
        for key in keys[:-1]:
            current = current.setdefault(key, {})
            if not isinstance(current, dict):
                raise ValueError(f"--set {path}: '{key}' is not a table")
        current[keys[-1]] = json.loads(json.dumps(value))
    return result


def parse_set(text: str) -> tuple[str, Any]:
    """``KEY.PATH=VALUE`` (VALUE in TOML; a bare word is a string) -> (path, value)."""
    path, sep, raw = text.partition("=")
    path = path.strip()
    if not sep or not path or not re.fullmatch(r"[A-Za-z0-9_.\-]+", path):
        raise SpecError(f"--set {text!r}: expected KEY.PATH=VALUE")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return path, value


@dataclass(frozen=True)
class Entry:
    """One run of a spec before the files are read."""

    scenario: str  # file name, resolved in the spec's scenario directory
    cc: str
    seed: int
    cc_params: tuple[str, ...] = ()
    sets: tuple[tuple[str, Any], ...] = ()
    directory: str = ""  # relative output directory
    labels: tuple[tuple[str, Any], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class SweepSpec:
    path: Path | None
    scenario_dir: Path
    entries: tuple[Entry, ...]
    qlog: bool = False
    timeout_s: float = RUN_TIMEOUT_S


_TOP_KEYS = {"scenario_dir", "scenarios", "algorithms", "seeds", "qlog", "timeout_s", "set", "grid", "run"}


def _list_of(value: Any, kind: type, what: str) -> list[Any]:
    if isinstance(value, kind) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise SpecError(f"{what}: expected a non-empty list of {kind.__name__}")
    for v in value:
        if not isinstance(v, kind) or isinstance(v, bool):
            raise SpecError(f"{what}: {v!r} is not a {kind.__name__}")
    return value


def _seeds(value: Any) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise SpecError("seeds: a count must be at least 1")
        return list(range(1, value + 1))
    seeds = _list_of(value, int, "seeds")
    if any(s < 0 for s in seeds):
        raise SpecError("seeds: seeds are non-negative integers")
    if len(set(seeds)) != len(seeds):
        raise SpecError("seeds: a seed is listed twice")
    return seeds


def _param_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str | int | float):
        return str(value)
    raise SpecError(f"cc_params: {value!r} is not a number, string or boolean")


def _grid(table: Mapping[str, Any], what: str) -> list[tuple[tuple[str, Any], ...]]:
    """Every combination of a table of lists (in the table's order)."""
    keys = list(table)
    values = []
    for key in keys:
        v = table[key]
        v = v if isinstance(v, list) else [v]
        if not v:
            raise SpecError(f"{what}.{key}: an empty list makes no runs")
        values.append(v)
    return [tuple(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def slug(text: str) -> str:
    """A directory name for ``text`` (letters, digits and ``._,=+-`` kept)."""
    out = re.sub(r"[^A-Za-z0-9._,=+-]+", "_", text).strip("_.")
    return out or "_"


def _directory(scenario: str, cc: str, params: Sequence[str], grid_sets: Sequence[tuple[str, Any]], seed: int) -> str:
    stem = scenario[:-5] if scenario.endswith(".toml") else scenario
    variant = ",".join([cc, *params])
    parts = [slug(stem), slug(variant)]
    if grid_sets:
        parts.append(slug(",".join(f"{k}={toml_value(v).strip(chr(34))}" for k, v in grid_sets)))
    parts.append(f"seed-{seed}")
    return "/".join(parts)


def _check_scenario_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        raise SpecError(f"{what}: {name!r} must be a file name in the scenario directory")
    return name


def _explicit(i: int, item: Any) -> Entry:
    what = f"run[{i}]"
    if not isinstance(item, dict):
        raise SpecError(f"{what}: expected a table")
    unknown = set(item) - {"scenario", "cc", "cc_params", "seed", "set", "dir"}
    if unknown:
        raise SpecError(f"{what}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("scenario", "cc", "seed", "dir"):
        if key not in item:
            raise SpecError(f"{what}: '{key}' is missing")
    scenario = _check_scenario_name(item["scenario"], f"{what}.scenario")
    if not isinstance(item["cc"], str) or not item["cc"]:
        raise SpecError(f"{what}.cc: expected an algorithm name")
    seed = item["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SpecError(f"{what}.seed: expected a non-negative integer")
    params = item.get("cc_params", [])
    if not isinstance(params, list) or not all(isinstance(p, str) and "=" in p for p in params):
        raise SpecError(f'{what}.cc_params: expected a list of "KEY=VALUE" strings')
    sets = item.get("set", {})
    if not isinstance(sets, dict):
        raise SpecError(f"{what}.set: expected a table of KEY.PATH = value")
    return Entry(scenario, item["cc"], seed, tuple(params), tuple(sets.items()), str(item["dir"]))


def parse_spec(
    data: Mapping[str, Any], base: Path, path: Path | None = None, extra_sets: Sequence[tuple[str, Any]] = ()
) -> SweepSpec:
    """The spec of a parsed TOML document; relative paths are below ``base``.
    A run's ``--set`` list is the spec's ``[set]``, then its grid point (or
    its ``[[run]]``'s own ``set``), then ``extra_sets`` (the command line's
    ``--set``): a later one wins."""
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise SpecError(f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_TOP_KEYS))})")
    scenario_dir = (base / str(data.get("scenario_dir", "."))).resolve()
    qlog = data.get("qlog", False)
    if not isinstance(qlog, bool):
        raise SpecError("qlog: expected true or false")
    timeout = data.get("timeout_s", RUN_TIMEOUT_S)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise SpecError("timeout_s: expected a positive number of seconds")
    fixed = data.get("set", {})
    if not isinstance(fixed, dict):
        raise SpecError("set: expected a table of KEY.PATH = value")
    fixed_sets = tuple(fixed.items())
    cli_sets = tuple(extra_sets)

    entries: list[Entry] = []
    grid = data.get("grid", {})
    if not isinstance(grid, dict) or set(grid) - {"set", "cc_params"}:
        raise SpecError("grid: expected the tables grid.set and grid.cc_params.ALGORITHM")
    has_grid = any(k in data for k in ("scenarios", "algorithms", "seeds"))
    if has_grid:
        for key in ("scenarios", "algorithms", "seeds"):
            if key not in data:
                raise SpecError(f"'{key}' is missing (a sweep names scenarios, algorithms and seeds)")
        scenarios = [_check_scenario_name(s, "scenarios") for s in _list_of(data["scenarios"], str, "scenarios")]
        algorithms = _list_of(data["algorithms"], str, "algorithms")
        seeds = _seeds(data["seeds"])
        set_grid = grid.get("set", {})
        if not isinstance(set_grid, dict):
            raise SpecError("grid.set: expected a table of KEY.PATH = [values]")
        param_grids = grid.get("cc_params", {})
        if not isinstance(param_grids, dict) or not all(isinstance(v, dict) for v in param_grids.values()):
            raise SpecError("grid.cc_params: expected tables grid.cc_params.ALGORITHM with KEY = [values]")
        stray = set(param_grids) - set(algorithms)
        if stray:
            raise SpecError(f"grid.cc_params: {', '.join(sorted(stray))} not in algorithms")
        set_combos = _grid(set_grid, "grid.set")
        for scenario in scenarios:
            for cc in algorithms:
                param_combos = _grid(param_grids.get(cc, {}), f"grid.cc_params.{cc}")
                for params in param_combos:
                    param_texts = tuple(f"{k}={_param_text(v)}" for k, v in params)
                    for grid_sets in set_combos:
                        for seed in seeds:
                            entries.append(
                                Entry(
                                    scenario,
                                    cc,
                                    seed,
                                    param_texts,
                                    fixed_sets + grid_sets + cli_sets,
                                    _directory(scenario, cc, param_texts, grid_sets, seed),
                                    labels=grid_sets,
                                )
                            )
    runs = data.get("run", [])
    if not isinstance(runs, list):
        raise SpecError("run: expected an array of tables [[run]]")
    for i, item in enumerate(runs):
        e = _explicit(i, item)
        entries.append(Entry(e.scenario, e.cc, e.seed, e.cc_params, fixed_sets + e.sets + cli_sets, e.directory))
    if not entries:
        raise SpecError("no runs: name scenarios, algorithms and seeds, or add [[run]] tables")
    seen: dict[str, Entry] = {}
    for e in entries:
        d = Path(e.directory)
        if d.is_absolute() or ".." in d.parts or not d.parts or e.directory.startswith("."):
            raise SpecError(f"run directory {e.directory!r}: must be a relative path without '..'")
        if e.directory in seen:
            raise SpecError(f"two runs write to {e.directory!r}")
        seen[e.directory] = e
    return SweepSpec(path, scenario_dir, tuple(entries), qlog, float(timeout))


def load_spec(path: Path, extra_sets: Sequence[tuple[str, Any]] = ()) -> SweepSpec:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SpecError(f"{path}: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise SpecError(f"{path}: not UTF-8 text ({e})") from e
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: not valid TOML: {e}") from e
    try:
        return parse_spec(data, path.parent, path, extra_sets)
    except SpecError as e:
        raise SpecError(f"{path}: {e}") from e


def write_spec(
    entries: Sequence[Entry], scenario_dir: Path, *, qlog: bool = False, timeout_s: float = RUN_TIMEOUT_S
) -> str:
    """A spec file (TOML text) running exactly ``entries`` as explicit runs."""
    lines = [
        f"scenario_dir = {toml_value(str(scenario_dir))}",
        f"qlog = {toml_value(qlog)}",
        f"timeout_s = {toml_value(float(timeout_s))}",
    ]
    for e in entries:
        lines += [
            "",
            "[[run]]",
            f"scenario = {toml_value(e.scenario)}",
            f"cc = {toml_value(e.cc)}",
            f"seed = {e.seed}",
        ]
        if e.cc_params:
            lines.append(f"cc_params = {toml_value(list(e.cc_params))}")
        if e.sets:
            lines.append(f"set = {toml_value(dict(e.sets))}")
        lines.append(f"dir = {toml_value(e.directory)}")
    return "\n".join(lines) + "\n"

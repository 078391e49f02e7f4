"""The satellite benchmark: how close each algorithm comes to the physical
limit of the GEO paths, and whether vegas-sat keeps its promises there.

Not a test (nothing here is asserted): it runs the simulator over seeds 1-5,
prints the tables and writes them to ``DIR/satellite.md`` and
``DIR/satellite.json``. The targets it reports against are issue 11's:

- completion of a 10 MiB download (fau-sat, fau-satl) and of the draft-kuhn-
  quic-4-sat downloads, against reno, cubic and bbr2, with the physical limit
  (handshake + request + serialisation) beside each row;
- a 120 s bulk flow: link utilisation after start-up and the mean queue;
- a step of the one-way delay up and back down: goodput before, during, after;
- sharing the link with a cubic and with a bbr2 flow: each share and Jain's
  index over the last 90 s;
- the ablation: each vegas-sat mechanism switched off in turn;
- our client against any client (issue 24): vegas-sat with a client that
  stamps receive times and with one that does not, on fau-sat, fau-satl and
  the Careful Resume cases, beside bbr2 and cubic, with the return link's
  drops;
- picoquic's satellite suite (100 MB at 250/3, 50/10 and 10/2 Mbit/s, the
  250/3 case with 1-in-64 loss and with Careful Resume), beside picoquic's
  budgets and the physical limit.

    scripts/satellite [--quick] [--out DIR] [--jobs N] [--only SECTION,...]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .sweep.cli import BLOB_CACHE, DEFAULT_SIM
from .sweep.executors import LocalExecutor, run_sweep
from .sweep.spec import Entry, SpecError, SweepSpec
from .sweep.tasks import make_plan

SCENARIO_DIR = Path("interop/scenarios")
SEEDS = (1, 2, 3, 4, 5)
QUICK_SEEDS = (1,)
BASELINES = ("reno", "cubic", "bbr2")
OURS = "vegas-sat"

#: Wire bytes per delivered byte: UDP/IPv4 headers, QUIC and HTTP/3 framing.
#: Measured on a loss-free vegas-sat run of fau-sat (seed 1): 11 116 308 bytes
#: crossed the forward link for 10 485 760 delivered.
WIRE_BYTES_PER_DELIVERED = 11_116_308 / 10_485_760

COMPLETION_SCENARIOS = (
    "fau-sat",
    "fau-satl",
    "kuhn-4-sat-small",
    "kuhn-4-sat-small-loss",
    "kuhn-4-sat-medium",
    "kuhn-4-sat-medium-loss",
    "kuhn-4-sat-large",
    "kuhn-4-sat-large-loss",
)
#: The papers' members beside them where the issue measured them.
CONTEXT = {"fau-sat": ("vegas", "vegas-w"), "fau-satl": ("vegas", "vegas-w")}

#: Start-up is over by then on every GEO path here (about 8 round trips).
STARTUP_S = 10.0
#: Jain's index and the shares are over the last this many seconds.
FAIRNESS_WINDOW_S = 90.0
#: (label, start, end) of the delay-step windows (the step is at 40 s and 80 s).
STEP_WINDOWS = (
    ("before (30-40 s)", 30, 40),
    ("step up (40-50 s)", 40, 50),
    ("+50 ms (50-80 s)", 50, 80),
    ("step down (80-90 s)", 80, 90),
    ("after (90-120 s)", 90, 120),
)

#: The ablation: vegas-sat with one mechanism off.
ABLATION: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("all mechanisms", ()),
    ("no capacity jump (paced slow start)", ("capacity_jump=off",)),
    ("no scalable update (Vegas +-1)", ("scalable_update=off",)),
    ("no loss discrimination", ("loss_discrimination=off",)),
    ("no forward-only queue (RTT)", ("forward_delay=off",)),
    ("no pacing cap", ("startup_pacing_cap=0", "pacing_cap=0")),
    ("no rebase on delay steps", ("rebase_rounds=0",)),
    ("no quiet rounds after a loss", ("regrowth_quiet_rounds=0",)),
    ("quiet after every congestive loss (no attribution)", ("loss_attribution=off",)),
    ("aim at alpha (FAST's own), not mid-range", ("aim_position=0",)),
    ("own losses cut by loss_factor (no drain)", ("own_loss_drains=off",)),
    ("avoidance capped at C alone (no Expected-rate floor)", ("expected_rate_floor=off",)),
)

#: vegas-sat with our client (receive timestamps) and with any other client
#: (no extension), on the GEO paths and the Careful Resume cases; the
#: baselines never use the extension.
CLIENT_SCENARIOS = (
    "fau-sat",
    "fau-satl",
    "fau-sat-resume",
    "fau-satl-resume",
    "fau-sat-resume-changed-path",
)
CLIENT_BASELINES = ("bbr2", "cubic")
#: The clients table's ablation: vegas-sat for any client without the
#: sender's own capacity estimate (as it was before issue 24).
CLIENT_ABLATION = ("ack_train_capacity=off",)

#: picoquic's satellite suite (picoquictest/satellite_test.c) as our
#: scenarios, with the completion budgets its BBR is held to (seconds).
PICOQUIC_BUDGETS = {
    "picoquic-sat-250-3": 5.5,
    "picoquic-sat-250-3-resume": 4.9,
    "picoquic-sat-250-3-loss": 8.0,
    "picoquic-sat-50-10": 18.2,
    "picoquic-sat-10-2": 81.5,
}

#: Who downloads, as the scenario keys of every flow: our client offers
#: both our extensions as the apps do (receive timestamps, ACK frequency);
#: picoquic's, quinn's and msquic's clients offer ACK frequency only; any
#: other client (browsers, curl, quic-go, ngtcp2, aioquic) neither.
CLIENT_EXTENSIONS: dict[str, tuple[tuple[str, bool], ...]] = {
    "ours": (("receive_timestamps", True), ("ack_frequency", True)),
    "ack-frequency": (("receive_timestamps", False), ("ack_frequency", True)),
    "any": (("receive_timestamps", False), ("ack_frequency", False)),
}
CLIENTS = tuple(CLIENT_EXTENSIONS)
CLIENT_TITLES = {"ours": "our client", "ack-frequency": "ACK frequency only", "any": "any client"}

SECTIONS = ("completion", "clients", "picoquic", "bulk", "step", "coexistence", "ablation")
#: Sections run only when named with --only (the condition matrix of issue
#: 25 is its own benchmark: see vegas_qlog.matrix).
EXTRA_SECTIONS = ("matrix",)


@dataclass(frozen=True)
class Run:
    section: str
    scenario: str
    cc: str
    params: tuple[str, ...]
    seed: int
    #: "" (the scenario as written) or one of [`CLIENTS`].
    client: str = ""

    @property
    def label(self) -> str:
        return self.cc + "".join(f":{p}" for p in self.params)

    @property
    def directory(self) -> str:
        safe = self.label.replace(":", "+").replace("=", "-")
        client = f"+{self.client}-client" if self.client else ""
        return f"{self.scenario}/{safe}{client}/seed-{self.seed}"


# --- the physics ------------------------------------------------------------


def path_of(scenario: Mapping[str, Any]) -> tuple[float, float, int]:
    """(round-trip propagation delay in s, bottleneck rate of the forward
    path in bit/s, bytes of the download) of the flow under test."""
    links = scenario["links"]
    flow = next(f for f in scenario["flows"].values() if f.get("under_test"))
    forward = [links[name] for name in flow["forward_path"]]
    back = [links[name] for name in flow["return_path"]]
    rtt = sum(float(link["delay_ms"]) for link in forward + back) / 1000.0
    rate = min(float(link["rate_mbps"]) for link in forward) * 1e6
    return rtt, rate, int(flow.get("transfer_bytes", 0))


def physical_limit_s(rtt_s: float, rate_bps: float, transfer_bytes: int) -> float:
    """The fastest a download can complete: one round trip of handshake, half
    a round trip for the request, the body's serialisation at the bottleneck
    (with its headers) and half a round trip for its last byte."""
    return 2.0 * rtt_s + transfer_bytes * WIRE_BYTES_PER_DELIVERED * 8.0 / rate_bps


def jain(values: Sequence[float]) -> float | None:
    """Jain's fairness index: (sum x)^2 / (n sum x^2)."""
    squares = sum(v * v for v in values)
    if not values or squares == 0:
        return None
    return sum(values) ** 2 / (len(values) * squares)


def delivered_at(rows: Sequence[Mapping[str, str]], t: float) -> float:
    """Bytes delivered by time ``t`` (the last sample at or before it)."""
    best = 0.0
    for row in rows:
        if float(row["time_s"]) <= t + 1e-9:
            best = float(row["bytes_delivered"])
        else:
            break
    return best


def goodput_mbps(rows: Sequence[Mapping[str, str]], start: float, end: float) -> float:
    if end <= start:
        raise ValueError(f"empty window {start}-{end}")
    return (delivered_at(rows, end) - delivered_at(rows, start)) * 8 / (end - start) / 1e6


def mean(values: Iterable[float]) -> float | None:
    values = [v for v in values if v is not None and math.isfinite(v)]
    return sum(values) / len(values) if values else None


# --- running ----------------------------------------------------------------


def plan_runs(sections: Sequence[str], seeds: Sequence[int], quick: bool) -> list[Run]:
    runs: list[Run] = []
    completion = COMPLETION_SCENARIOS[:2] if quick else COMPLETION_SCENARIOS
    long_seeds = seeds[:1] if quick else seeds
    for section in sections:
        if section == "completion":
            for sc in completion:
                for cc in (OURS, *BASELINES, *CONTEXT.get(sc, ())):
                    runs += [Run(section, sc, cc, (), s) for s in seeds]
        elif section == "clients":
            for sc in CLIENT_SCENARIOS[:2] if quick else CLIENT_SCENARIOS:
                runs += [Run(section, sc, OURS, (), s, client) for client in CLIENTS for s in seeds]
                runs += [Run(section, sc, OURS, CLIENT_ABLATION, s, client) for client in CLIENTS[1:] for s in seeds]
                for cc in CLIENT_BASELINES:
                    runs += [Run(section, sc, cc, (), s, "any") for s in seeds]
        elif section == "picoquic":
            for sc in list(PICOQUIC_BUDGETS)[:1] if quick else PICOQUIC_BUDGETS:
                runs += [Run(section, sc, OURS, (), s, client) for client in CLIENTS for s in long_seeds]
                for cc in CLIENT_BASELINES:
                    runs += [Run(section, sc, cc, (), s, "any") for s in long_seeds]
        elif section == "bulk":
            for sc in ("fau-sat-bulk", "fau-satl-bulk"):
                for cc in (OURS, *BASELINES):
                    runs += [Run(section, sc, cc, (), s) for s in long_seeds]
        elif section == "step":
            for cc in (OURS, "vegas", "vegas-w", "cubic", "bbr2"):
                runs += [Run(section, "fau-sat-delay-step", cc, (), s) for s in long_seeds]
        elif section == "coexistence":
            for sc in ("fau-sat-vs-cubic", "fau-sat-vs-bbr2"):
                for cc in (OURS, "cubic", "bbr2"):
                    runs += [Run(section, sc, cc, (), s) for s in long_seeds]
        elif section in EXTRA_SECTIONS:
            pass  # planned by its own module
        elif section == "ablation":
            for _, params in ABLATION:
                for sc in ("fau-sat", "fau-satl"):
                    runs += [Run(section, sc, OURS, params, s) for s in seeds]
                for sc in ("fau-sat-delay-step", "fau-sat-vs-cubic", "fau-satl-bulk"):
                    runs += [Run(section, sc, OURS, params, s) for s in long_seeds]
        else:
            raise SpecError(f"unknown section {section!r}; sections: {', '.join(SECTIONS + EXTRA_SECTIONS)}")
    return runs


def execute(root: Path, runs: Sequence[Run], out: Path, sim: Path, jobs: int) -> None:
    """Runs each directory once (sections share runs), reusing runs the same
    binary already made."""
    unique = {r.directory: r for r in runs}
    entries = tuple(
        Entry(f"{r.scenario}.toml", r.cc, r.seed, r.params, client_sets(root, r), r.directory) for r in unique.values()
    )
    spec = SweepSpec(None, (root / SCENARIO_DIR).resolve(), entries)
    plan = make_plan(spec, sim, out.resolve(), display_out=str(out))
    outcome = run_sweep(plan, LocalExecutor(jobs, cache=out.resolve() / BLOB_CACHE), log=_say)
    failed = [r for r in outcome.summary["runs"] if r["status"] == "failed"]
    if failed:
        raise SpecError(f"{len(failed)} runs failed, e.g. {failed[0]['dir']} (see its stderr in {out})")


def client_sets(root: Path, run: Run) -> tuple[tuple[str, Any], ...]:
    """The scenario keys that give every flow the run's kind of client;
    none for the scenario as written."""
    if not run.client:
        return ()
    if run.client not in CLIENT_EXTENSIONS:
        raise SpecError(f"unknown client {run.client!r}; clients: {', '.join(CLIENTS)}")
    scenario = tomllib.loads((root / SCENARIO_DIR / f"{run.scenario}.toml").read_text())
    return tuple(
        (f"flows.{name}.{key}", value) for name in scenario["flows"] for key, value in CLIENT_EXTENSIONS[run.client]
    )


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- reading ----------------------------------------------------------------


def load_summary(out: Path, run: Run) -> dict[str, Any]:
    return json.loads((out / run.directory / "summary.json").read_text())


def load_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def flow_under_test(summary: Mapping[str, Any]) -> dict[str, Any]:
    return next(f for f in summary["flows"] if f.get("under_test"))


def download_time_s(flow: dict[str, Any]) -> float:
    """The download's time: `completion_s` already counts from the flow's
    own start (`start_s` is when that was). NaN if it did not finish."""
    if flow.get("completion_s") is None:
        return math.nan
    return float(flow["completion_s"])


def measured_download(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The download a row reports: the last flow under test (a Careful
    Resume scenario's second connection, else the only one)."""
    return [f for f in summary["flows"] if f.get("under_test")][-1]


def return_ack_drop_fraction(summary: Mapping[str, Any]) -> float:
    """Datagrams (ACKs, and the requests) the return link dropped, of those
    offered to it."""
    link = next(link for link in summary["links"] if link["name"] == "return")
    offered = link["transmitted_packets"] + link["dropped_packets"]
    return link["dropped_packets"] / offered if offered else 0.0


def client_table(out: Path, runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Per scenario and algorithm: the download's time and retransmitted
    share with our client and with any client, and the return link's drops."""
    rows = []
    groups: dict[tuple[str, str], dict[str, list[Run]]] = {}
    for r in runs:
        if r.section in ("clients", "picoquic"):
            group = groups.setdefault((r.scenario, r.label), {}).setdefault(r.client, [])
            if r not in group:
                group.append(r)
    for (scenario, label), by_client in groups.items():
        row: dict[str, Any] = {"scenario": scenario, "algorithm": label}
        for client in CLIENTS:
            group = by_client.get(client, [])
            times, retrans, drops, unfinished = [], [], [], 0
            for run in group:
                summary = load_summary(out, run)
                flow = measured_download(summary)
                drops.append(return_ack_drop_fraction(summary))
                if flow.get("completion_s") is None:
                    unfinished += 1
                    continue
                times.append(download_time_s(flow))
                retrans.append(flow["bytes_retransmitted"] / max(1, flow["bytes_delivered"]))
            row[client] = {
                "seeds": len(group),
                "completion_s": mean(times),
                "unfinished": unfinished,
                "retransmitted_fraction": mean(retrans),
                "return_drop_fraction": max(drops) if drops else None,
            }
        rows.append(row)
    return rows


def picoquic_rows(root: Path, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The client table's rows of picoquic's suite, with budget and limit."""
    out = []
    for row in rows:
        if row["scenario"] not in PICOQUIC_BUDGETS:
            continue
        sc = tomllib.loads((root / SCENARIO_DIR / f"{row['scenario']}.toml").read_text())
        out.append({**row, "budget_s": PICOQUIC_BUDGETS[row["scenario"]], "limit_s": physical_limit_s(*path_of(sc))})
    return out


def completion_table(root: Path, out: Path, runs: Sequence[Run]) -> list[dict[str, Any]]:
    rows = []
    by = _group(r for r in runs if r.section in ("completion", "ablation") and not r.params)
    for (scenario, label), group in by.items():
        if scenario not in COMPLETION_SCENARIOS:
            continue
        sc = tomllib.loads((root / SCENARIO_DIR / f"{scenario}.toml").read_text())
        limit = physical_limit_s(*path_of(sc))
        times, retrans, unfinished = [], [], 0
        for run in group:
            f = flow_under_test(load_summary(out, run))
            if f.get("completion_s") is None:
                unfinished += 1
                continue
            times.append(download_time_s(f))
            retrans.append(f["bytes_retransmitted"] / max(1, f["bytes_delivered"]))
        rows.append(
            {
                "scenario": scenario,
                "algorithm": label,
                "seeds": len(group),
                "completion_s": mean(times),
                "unfinished": unfinished,
                "retransmitted_fraction": mean(retrans),
                "limit_s": limit,
                "ratio_to_limit": (mean(times) / limit) if times else None,
            }
        )
    return rows


def bulk_link_use(out: Path, run: Run) -> tuple[float, float]:
    """A bulk run's mean link utilisation and mean queue (packets) at the
    forward bottleneck after start-up."""
    return link_use(out / run.directory, STARTUP_S)


def link_use(directory: Path, after_s: float) -> tuple[float, float]:
    """A run's mean utilisation and mean queue (packets) of the forward link
    after ``after_s``, from its queue series."""
    samples = [row for row in load_csv(directory / "queue-forward.csv") if float(row["time_s"]) > after_s]
    return mean(float(r["utilization"]) for r in samples), mean(float(r["queue_packets"]) for r in samples)


def bulk_table(out: Path, runs: Sequence[Run]) -> list[dict[str, Any]]:
    rows = []
    for (scenario, label), group in _group(r for r in runs if r.section == "bulk").items():
        utils, queues, goodputs = [], [], []
        for run in group:
            util, queue = bulk_link_use(out, run)
            utils.append(util)
            queues.append(queue)
            goodputs.append(flow_under_test(load_summary(out, run))["goodput_bps"] / 1e6)
        rows.append(
            {
                "scenario": scenario,
                "algorithm": label,
                "seeds": len(group),
                "utilisation_after_startup": mean(utils),
                "mean_queue_packets": mean(queues),
                "goodput_mbps": mean(goodputs),
            }
        )
    return rows


def step_table(out: Path, runs: Sequence[Run]) -> list[dict[str, Any]]:
    rows = []
    for (_, label), group in _group(
        r for r in runs if r.section in ("step", "ablation") and r.scenario == "fau-sat-delay-step"
    ).items():
        windows = {
            name: mean(goodput_mbps(load_csv(out / run.directory / f"flow-{_ut(out, run)}.csv"), a, b) for run in group)
            for name, a, b in STEP_WINDOWS
        }
        rows.append({"algorithm": label, "seeds": len(group), **windows})
    return rows


def coexistence_table(out: Path, runs: Sequence[Run]) -> list[dict[str, Any]]:
    rows = []
    for (scenario, label), group in _group(
        r for r in runs if r.section in ("coexistence", "ablation") and r.scenario.startswith("fau-sat-vs-")
    ).items():
        ours, theirs, jains = [], [], []
        for run in group:
            summary = load_summary(out, run)
            end = float(summary["simulated_s"])
            shares = []
            for flow in summary["flows"]:
                rows_csv = load_csv(out / run.directory / f"flow-{flow['name']}.csv")
                shares.append((flow.get("under_test", False), goodput_mbps(rows_csv, end - FAIRNESS_WINDOW_S, end)))
            ours.append(next(g for ut, g in shares if ut))
            theirs.append(next(g for ut, g in shares if not ut))
            jains.append(jain([g for _, g in shares]))
        rows.append(
            {
                "scenario": scenario,
                "algorithm": label,
                "seeds": len(group),
                "ours_mbps": mean(ours),
                "competitor_mbps": mean(theirs),
                "jain": mean(jains),
            }
        )
    return rows


def _ut(out: Path, run: Run) -> str:
    return flow_under_test(load_summary(out, run))["name"]


def _group(runs: Iterable[Run]) -> dict[tuple[str, str], list[Run]]:
    """Runs by (scenario, label), each directory once."""
    groups: dict[tuple[str, str], dict[str, Run]] = {}
    for r in runs:
        groups.setdefault((r.scenario, r.label), {}).setdefault(r.directory, r)
    return {key: list(group.values()) for key, group in groups.items()}


# --- rendering --------------------------------------------------------------


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown(tables: Mapping[str, list[dict[str, Any]]], command: str) -> str:
    lines = [f"Made by `{command}` (simulator, mean over the seeds shown).", ""]
    if tables.get("completion"):
        lines += [
            "## Completion of the download against the physical limit",
            "",
            "| scenario | algorithm | seeds | completion (s) | limit (s) | ratio to limit | retransmitted |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for r in tables["completion"]:
            unfinished = f" ({r['unfinished']} unfinished)" if r["unfinished"] else ""
            retrans = "-" if r["retransmitted_fraction"] is None else f"{100 * r['retransmitted_fraction']:.2f} %"
            lines.append(
                f"| {r['scenario']} | {r['algorithm']} | {r['seeds']} | {_fmt(r['completion_s'])}{unfinished} "
                f"| {_fmt(r['limit_s'])} | {_fmt(r['ratio_to_limit'])} | {retrans} |"
            )
        lines.append("")
    if tables.get("clients"):
        lines += [
            "## Our client and any client: the download (second connection in the resume cases)",
            "",
            "Our client offers receive timestamps and ACK frequency, as our apps do; picoquic's, "
            "quinn's and msquic's offer ACK frequency only; any other client (browsers, curl, "
            "quic-go, ngtcp2, aioquic) neither. Return drops: the largest share of datagrams the "
            "return link dropped in any seed.",
            "",
            _client_header(),
            "|---|---|" + "---:|---:|" * len(CLIENTS) + "---:|",
        ]
        for r in tables["clients"]:
            lines.append(f"| {r['scenario']} | {r['algorithm']} | " + _client_cells(r) + " |")
        lines.append("")
    if tables.get("picoquic"):
        lines += [
            "## picoquic's satellite suite (100 MB, 600 ms RTT, one-BDP buffers)",
            "",
            "picoquic's budget is what its own suite asserts for its BBR on the same path; the "
            "physical limit is ours (two round trips, then 100 MB with our headers at the forward rate).",
            "",
            _client_header() + " picoquic's budget (s) | limit (s) |",
            "|---|---|" + "---:|---:|" * len(CLIENTS) + "---:|---:|---:|",
        ]
        for r in tables["picoquic"]:
            lines.append(
                f"| {r['scenario']} | {r['algorithm']} | "
                + _client_cells(r)
                + f" | {_fmt(r['budget_s'])} | {_fmt(r['limit_s'])} |"
            )
        lines.append("")
    if tables.get("bulk"):
        lines += [
            f"## 120 s bulk: after start-up (t > {STARTUP_S:.0f} s)",
            "",
            "| scenario | algorithm | seeds | link utilisation | mean queue (packets) | goodput (Mbit/s) |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for r in tables["bulk"]:
            util = "-" if r["utilisation_after_startup"] is None else f"{100 * r['utilisation_after_startup']:.1f} %"
            lines.append(
                f"| {r['scenario']} | {r['algorithm']} | {r['seeds']} | {util} "
                f"| {_fmt(r['mean_queue_packets'], 1)} | {_fmt(r['goodput_mbps'])} |"
            )
        lines.append("")
    if tables.get("step"):
        names = [w[0] for w in STEP_WINDOWS]
        lines += [
            "## Delay step (fau-sat-delay-step): goodput in Mbit/s",
            "",
            "| algorithm | seeds | " + " | ".join(names) + " |",
            "|---|---:|" + "---:|" * len(names),
        ]
        for r in tables["step"]:
            lines.append(f"| {r['algorithm']} | {r['seeds']} | " + " | ".join(_fmt(r[n]) for n in names) + " |")
        lines.append("")
    if tables.get("coexistence"):
        lines += [
            f"## Sharing the fau-sat link: last {FAIRNESS_WINDOW_S:.0f} s",
            "",
            "| scenario | flow under test | seeds | its goodput (Mbit/s) | competitor's (Mbit/s) | Jain's index |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for r in tables["coexistence"]:
            lines.append(
                f"| {r['scenario']} | {r['algorithm']} | {r['seeds']} | {_fmt(r['ours_mbps'])} "
                f"| {_fmt(r['competitor_mbps'])} | {_fmt(r['jain'], 3)} |"
            )
        lines.append("")
    if tables.get("ablation"):
        lines += [
            "## Ablation: vegas-sat with one mechanism off",
            "",
            "| variant | fau-sat (s) | fau-sat retrans. | fau-satl (s) | +50 ms step: goodput "
            "| beside cubic: Jain | fau-satl-bulk: utilisation | fau-satl-bulk: queue (packets) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in tables["ablation"]:
            util = r["lossy bulk utilisation"]
            lines.append(
                f"| {r['variant']} | {_fmt(r['fau-sat'])} | {_fmt(r['fau-sat retransmitted'], 4)} "
                f"| {_fmt(r['fau-satl'])} | {_fmt(r['step'])} | {_fmt(r['jain'], 3)} "
                f"| {'-' if util is None else f'{100 * util:.1f} %'} | {_fmt(r['lossy bulk queue'])} |"
            )
        lines.append("")
    return "\n".join(lines)


def _client_header() -> str:
    cells = "".join(f" {CLIENT_TITLES[c]} (s) | retransmitted |" for c in CLIENTS)
    drops = " / ".join(CLIENT_TITLES[c].split()[0] for c in CLIENTS)
    return f"| scenario | algorithm |{cells} return drops ({drops}) |"


def _client_cells(row: Mapping[str, Any]) -> str:
    cells = []
    for client in CLIENTS:
        c = row.get(client)
        if not c or not c["seeds"]:
            cells += ["-", "-"]
            continue
        unfinished = f" ({c['unfinished']} unfinished)" if c["unfinished"] else ""
        retrans = "-" if c["retransmitted_fraction"] is None else f"{100 * c['retransmitted_fraction']:.2f} %"
        cells += [f"{_fmt(c['completion_s'])}{unfinished}", retrans]
    drops = []
    for client in CLIENTS:
        c = row.get(client)
        d = None if not c else c["return_drop_fraction"]
        drops.append("-" if d is None else f"{100 * d:.1f} %")
    return " | ".join(cells) + " | " + " / ".join(drops)


def ablation_table(out: Path, runs: Sequence[Run]) -> list[dict[str, Any]]:
    rows = []
    mine = [r for r in runs if r.section == "ablation"]
    for name, params in ABLATION:

        def of(scenario: str, params: tuple[str, ...] = params) -> list[Run]:
            return [r for r in mine if r.params == params and r.scenario == scenario]

        def completion(scenario: str) -> float | None:
            return mean(download_time_s(flow_under_test(load_summary(out, r))) for r in of(scenario))

        retrans = mean(
            flow_under_test(load_summary(out, r))["bytes_retransmitted"]
            / max(1, flow_under_test(load_summary(out, r))["bytes_delivered"])
            for r in of("fau-sat")
        )
        step = mean(
            goodput_mbps(load_csv(out / r.directory / f"flow-{_ut(out, r)}.csv"), 50, 80)
            for r in of("fau-sat-delay-step")
        )
        coex = coexistence_table(out, of("fau-sat-vs-cubic"))
        lossy_bulk = [bulk_link_use(out, r) for r in of("fau-satl-bulk")]
        rows.append(
            {
                "variant": name,
                "params": list(params),
                "fau-sat": completion("fau-sat"),
                "fau-sat retransmitted": retrans,
                "fau-satl": completion("fau-satl"),
                "step": step,
                "jain": coex[0]["jain"] if coex else None,
                "lossy bulk utilisation": mean(u for u, _ in lossy_bulk) if lossy_bulk else None,
                "lossy bulk queue": mean(q for _, q in lossy_bulk) if lossy_bulk else None,
            }
        )
    return rows


def parse_seeds(text: str) -> tuple[int, ...]:
    """``1,2,3`` or ``1-3``: the seeds to run."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            seeds += range(int(low), int(high or low) + 1)
    except ValueError as e:
        raise SpecError(f"--seeds: expected numbers like 1,2,3 or 1-5, got {text!r}") from e
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise SpecError(f"--seeds: expected distinct seeds >= 0, got {text!r}")
    return tuple(seeds)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="satellite", description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, default=Path("."), help="the repository (default: .)")
    p.add_argument("--out", type=Path, default=Path("out/satellite"), help="runs and tables (default out/satellite)")
    p.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="simulations at a time (default: the core count)"
    )
    p.add_argument(
        "--quick", action="store_true", help="one seed, fau-sat and fau-satl only (matrix: one cell of each kind)"
    )
    p.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"sections, of {','.join(SECTIONS + EXTRA_SECTIONS)} (default: all but {','.join(EXTRA_SECTIONS)})",
    )
    p.add_argument("--seeds", default=None, help="seeds, e.g. 1,2,3 (default 1-5; --quick: 1)")
    p.add_argument(
        "--matrix-tables",
        default=None,
        help="the matrix's tables to run, of paths,buffers,loss,joins,sharing,field (default: all)",
    )
    p.add_argument("--sim", type=Path, default=None, help=f"vegas-sim binary (default {DEFAULT_SIM})")
    p.add_argument("--invocation", default="scripts/satellite", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        sections = [s.strip() for s in args.only.split(",") if s.strip()]
        if args.jobs < 1:
            raise SpecError("--jobs: at least 1")
        seeds = parse_seeds(args.seeds) if args.seeds else (QUICK_SEEDS if args.quick else SEEDS)
        runs = plan_runs(sections, seeds, args.quick)
        sim = (args.sim or args.root / DEFAULT_SIM).resolve()
        if not sim.is_file():
            raise SpecError(f"{sim}: no simulator binary (run ./scripts/setup)")
        args.out.mkdir(parents=True, exist_ok=True)
        if runs:
            execute(args.root, runs, args.out, sim, args.jobs)
        matrix_text = ""
        tables: dict[str, list[dict[str, Any]]] = {}
        if "matrix" in sections:
            from . import matrix

            matrix_tables = [t.strip() for t in args.matrix_tables.split(",")] if args.matrix_tables else None
            matrix_rows = matrix.run(
                args.out,
                sim,
                args.jobs,
                args.quick,
                seeds if args.seeds else None,
                matrix_tables,
                args.root / "interop" / "scenarios",
            )
            matrix_text = matrix.markdown(matrix_rows, args.invocation)
            tables["matrix"] = matrix.rows_json(matrix_rows)
        if "completion" in sections:
            tables["completion"] = completion_table(args.root, args.out, runs)
        if "clients" in sections or "picoquic" in sections:
            client_rows = client_table(args.out, runs)
            if "clients" in sections:
                tables["clients"] = [r for r in client_rows if r["scenario"] in CLIENT_SCENARIOS]
            if "picoquic" in sections:
                tables["picoquic"] = picoquic_rows(args.root, client_rows)
        if "bulk" in sections:
            tables["bulk"] = bulk_table(args.out, runs)
        if "step" in sections:
            tables["step"] = [r for r in step_table(args.out, runs) if ":" not in r["algorithm"]]
        if "coexistence" in sections:
            tables["coexistence"] = [r for r in coexistence_table(args.out, runs) if ":" not in r["algorithm"]]
        if "ablation" in sections:
            tables["ablation"] = ablation_table(args.out, runs)
    except (SpecError, OSError, ValueError, KeyError) as e:
        _say(f"satellite: error: {e}")
        return 1
    others = {k: v for k, v in tables.items() if k != "matrix"}
    text = (markdown(others, args.invocation) if others or not matrix_text else "") + matrix_text
    tmp = args.out / "satellite.md.tmp"
    tmp.write_text(text)
    tmp.replace(args.out / "satellite.md")
    tmp = args.out / "satellite.json.tmp"
    tmp.write_text(json.dumps(tables, indent=1))
    tmp.replace(args.out / "satellite.json")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The condition matrix's generator and tables (the runs are a benchmark, not
a test). Expected values are computed here from the paths' definitions,
not taken from the module."""

import itertools
import json
import math
import tomllib
from pathlib import Path

import pytest

from vegas_qlog import matrix as m

#: A full-size datagram on the wire: 1350 bytes of UDP payload (quiche's
#: MAX_DATAGRAM_SIZE in src/settings.rs) and 28 bytes of IPv4 and UDP.
WIRE = 1378


def bdp(rate_mbps, rtt_ms):
    return rate_mbps * 1e6 * (rtt_ms / 1000) / 8 / WIRE


def parse(cell):
    return tomllib.loads(m.scenario_toml(cell))


@pytest.mark.parametrize(
    ("path", "rate", "rtt"),
    [(m.GEO_20_2, 20, 600), (m.GEO_50_10, 50, 600), (m.GEO_250_3, 250, 600), (m.LEO_100_10, 100, 32)],
)
@pytest.mark.parametrize("fraction", [0.1, 0.25, 0.5, 1.0, 2.0])
def test_buffers_are_fractions_of_the_bdp_in_packets(path, rate, rtt, fraction):
    scenario = parse(m.Cell("buffers", path, m.Buffer(bdp=fraction), 40))
    assert scenario["links"]["forward"]["queue_packets"] == max(1, round(fraction * bdp(rate, rtt)))
    # The return link: one BDP of its own rate, in bytes.
    up = {20: 2, 50: 10, 250: 3, 100: 10}[rate]
    assert scenario["links"]["return"]["queue_bytes"] == round(up * 1e6 * rtt / 1000 / 8)
    assert scenario["links"]["forward"]["delay_ms"] + scenario["links"]["return"]["delay_ms"] == rtt


def test_bdp_of_the_issues_paths_by_hand():
    # 20 Mbit/s x 0.6 s = 1.5 MB = 1088.5 packets of 1378 bytes.
    assert parse(m.Cell("b", m.GEO_20_2, m.Buffer(bdp=1.0), 40))["links"]["forward"]["queue_packets"] == 1089
    assert parse(m.Cell("b", m.GEO_20_2, m.Buffer(bdp=0.1), 40))["links"]["forward"]["queue_packets"] == 109
    # 100 Mbit/s x 32 ms = 400 kB = 290.3 packets.
    assert parse(m.Cell("b", m.LEO_100_10, m.Buffer(bdp=1.0), 40))["links"]["forward"]["queue_packets"] == 290
    # 250 Mbit/s x 0.6 s = 18.75 MB = 13 606.7 packets.
    assert parse(m.Cell("b", m.GEO_250_3, m.Buffer(bdp=1.0), 40))["links"]["forward"]["queue_packets"] == 13607
    # The joins' buffers are packets, as issue 25 names them.
    assert parse(m.Cell("j", m.GEO_20_2, m.Buffer(packets=25), 120, joins=4))["links"]["forward"]["queue_packets"] == 25
    with pytest.raises(ValueError, match="either a fraction"):
        m.Buffer()
    with pytest.raises(ValueError, match="either a fraction"):
        m.Buffer(bdp=1.0, packets=25)


def delay_at(points, t):
    """The simulator's delay trace, written again: linear between points,
    the later point of a step once past it."""
    if t < points[0][0]:
        return points[0][1]
    for (t0, d0), (t1, d1) in itertools.pairwise(points):
        if t0 <= t < t1:
            return d0 + (d1 - d0) * (t - t0) / (t1 - t0)
    return points[-1][1]


def forward_trace(reconfiguration):
    return parse(m.Cell("paths", m.LEO_100_10, m.Buffer(bdp=1.0), 45, reconfiguration=reconfiguration))["links"][
        "forward"
    ]["delay_trace"]


def test_leo_steps_go_both_ways_at_each_reconfiguration():
    trace = forward_trace(m.STEPS)
    assert trace == [[0, 16], [15, 16], [15, 22], [30, 22], [30, 14]]
    assert delay_at(trace, 14.9) == 16
    assert delay_at(trace, 15.1) == 22
    assert delay_at(trace, 30.1) == 14


def test_leo_small_steps_are_half_milliseconds_every_two_and_a_half_seconds():
    trace = forward_trace(m.SMALL_STEPS)
    expected_levels = {14.9: 16, 15.1: 16.5, 17.6: 17, 20.1: 17.5, 22.6: 18, 29.9: 18, 30.1: 18.5, 37.6: 20, 44: 20}
    for t, level in expected_levels.items():
        assert delay_at(trace, t) == pytest.approx(level), t


def test_leo_drift_ramps_four_milliseconds_over_ten_seconds():
    trace = forward_trace(m.DRIFT)
    assert delay_at(trace, 15) == pytest.approx(16)
    assert delay_at(trace, 20) == pytest.approx(18)  # half way up the ramp
    assert delay_at(trace, 25) == pytest.approx(20)
    assert delay_at(trace, 29) == pytest.approx(20)
    assert delay_at(trace, 35) == pytest.approx(22)
    assert delay_at(trace, 44) == pytest.approx(24)


@pytest.mark.parametrize("reconfiguration", m.RECONFIGURATIONS)
def test_leo_round_trip_stays_between_30_and_40_ms(reconfiguration):
    scenario = parse(m.Cell("paths", m.LEO_100_10, m.Buffer(bdp=1.0), 45, reconfiguration=reconfiguration))
    back = scenario["links"]["return"]["delay_ms"]
    trace = scenario["links"]["forward"].get("delay_trace", [[0, scenario["links"]["forward"]["delay_ms"]]])
    for k in range(0, 451):
        assert 30 <= delay_at(trace, k / 10) + back <= 40


def test_outages_cut_both_links_for_50_to_100_ms_at_the_steps():
    changes = parse(m.Cell("paths", m.LEO_100_10, m.Buffer(bdp=1.0), 45, reconfiguration=m.OUTAGES))["changes"]
    assert sorted((c["at_s"], c["link"], c["blackout_s"]) for c in changes) == [
        (15, "forward", 0.1),
        (15, "return", 0.1),
        (30, "forward", 0.05),
        (30, "return", 0.05),
    ]
    assert forward_trace(m.OUTAGES) == forward_trace(m.STEPS)


def test_joins_start_twenty_seconds_apart_all_under_test():
    scenario = parse(m.Cell("joins", m.GEO_20_2, m.Buffer(packets=500), 120, joins=4))
    flows = scenario["flows"]
    assert [f.get("start_s", 0) for f in flows.values()] == [0, 20, 40, 60]
    assert all(f["under_test"] for f in flows.values())
    assert scenario["duration_s"] == 120


def test_a_competitor_is_one_flow_not_under_test():
    flows = parse(m.Cell("buffers", m.GEO_20_2, m.Buffer(bdp=2.0), 120, competitor="bbr2"))["flows"]
    assert flows["bbr2"]["cc"] == "bbr2"
    assert not flows["bbr2"].get("under_test", False)
    assert flows["download"]["under_test"]


def test_random_loss_is_on_the_forward_link():
    scenario = parse(m.Cell("loss", m.GEO_20_2, m.Buffer(bdp=1.0), 40, loss=0.001))
    assert scenario["links"]["forward"]["packet_loss"] == 0.001
    assert "packet_loss" not in scenario["links"]["return"]
    assert "packet_loss" not in parse(m.Cell("loss", m.GEO_20_2, m.Buffer(bdp=1.0), 40))["links"]["forward"]


def test_clients_with_and_without_receive_timestamps():
    cell = m.Cell("joins", m.GEO_20_2, m.Buffer(packets=25), 120, joins=4)
    without = m.Algorithm("vegas-sat", False)
    assert without.sets(cell) == tuple((f"flows.flow{i}.receive_timestamps", False) for i in range(1, 5))
    assert m.Algorithm("vegas-sat", True).sets(cell)[0] == ("flows.flow1.receive_timestamps", True)
    assert m.Algorithm("bbr2").sets(cell) == ()
    competing = m.Cell("buffers", m.GEO_20_2, m.Buffer(bdp=1.0), 120, competitor="cubic")
    # The competitor is another user's flow: only the flow under test changes client.
    assert without.sets(competing) == (("flows.download.receive_timestamps", False),)
    directories = {m.MatrixRun(cell, a, 1).directory for a in m.ALGORITHMS}
    assert len(directories) == len(m.ALGORITHMS)


def test_the_plan_covers_every_dimension_and_quick_is_a_subset():
    runs = m.plan_runs()
    cells = {r.cell for r in runs}
    assert {r.seed for r in runs} == {1, 2, 3, 4, 5}
    paths = {c.path for c in cells if c.table == "paths"}
    assert paths == {m.GEO_20_2, m.GEO_50_10, m.GEO_250_3, m.LEO_100_10}
    assert {c.reconfiguration for c in cells if c.path is m.LEO_100_10 and c.table == "paths"} == set(
        m.RECONFIGURATIONS
    )
    buffers = {(c.buffer.bdp, c.competitor) for c in cells if c.table == "buffers"}
    assert buffers == {(f, c) for f in (0.1, 0.25, 0.5, 1.0, 2.0) for c in (None, "cubic", "bbr2")}
    assert {(c.path, c.loss) for c in cells if c.table == "loss"} == {
        (p, loss) for p in (m.GEO_20_2, m.LEO_100_10) for loss in (0.0, 0.001, 0.01)
    }
    assert {c.buffer.packets for c in cells if c.table == "joins"} == {25, 500}
    sharing = {(c.path, c.buffer.bdp, c.competitor, c.joins) for c in cells if c.table == "sharing"}
    assert sharing == {
        (p, 1.0, competitor, joins)
        for p in (m.LEO_100_10, m.GEO_50_10)
        for competitor, joins in (("cubic", 1), ("bbr2", 1), (None, 4))
    }
    field = {c.name for c in cells if c.table == "field"}
    assert field == {
        "starlink-like_100pkt_60s",
        "starlink-like_100pkt_return10mbps_60s",
        "geo-20-2_1bdp_step25_40s",
        "geo-20-2_25pkt_return-jitter10ms_10485760B_120s",
    }
    assert {r.cell.table for r in m.plan_runs(tables=["field"])} == {"field"}
    with pytest.raises(m.SpecError, match="expected some of"):
        m.plan_runs(tables=["nonsense"])
    for cell in cells:
        assert sum(1 for r in runs if r.cell == cell) == 4 * 5
    # Tables share runs: one directory per (scenario, algorithm, seed).
    full = {r.directory for r in runs}
    assert len(full) < len(runs)
    quick = {r.directory for r in m.plan_runs(quick=True)}
    assert quick <= full
    assert {r.cell.table for r in m.plan_runs(quick=True)} == set(m.TABLES)


# --- the metrics ---------------------------------------------------------------


def series(rates, until=45.0, step=0.1):
    """A flow's CSV rows for a goodput of rates(t) Mbit/s."""
    rows, delivered, t = [], 0.0, 0.0
    while t <= until + 1e-9:
        rows.append({"time_s": f"{t:.3f}", "bytes_delivered": f"{delivered:.0f}"})
        delivered += rates(t + step / 2) * 1e6 / 8 * step
        t = round(t + step, 6)
    return rows


def test_regain_time_is_when_half_a_second_reaches_ninety_percent():
    # 10 Mbit/s, 5 between 15 and 17 s: a window [t, t + 0.5] reaches 9
    # Mbit/s when 5 (17 - t) + 10 (t + 0.5 - 17) >= 4.5, at t = 16.9.
    rows = series(lambda t: 5.0 if 15 <= t < 17 else 10.0)
    assert m.regain_time_s(rows, 15.0, 30.0, 10.0) == pytest.approx(1.9)
    # Never back before the next reconfiguration.
    rows = series(lambda t: 10.0 if t < 15 else 3.0)
    assert m.regain_time_s(rows, 15.0, 30.0, 10.0) is None


def test_reconfiguration_metrics_take_the_worst_event_against_the_first_rate():
    rows = series(lambda t: 10.0 if t < 15 else (5.0 if 15 <= t < 16 else (8.0 if t >= 30 else 10.0)))
    e = m.reconfiguration_metrics(rows, (15.0, 30.0), 45.0)
    # Event at 15 s: back at 10 when the window no longer covers 5: t >= 15.9
    # (5 (16 - t) + 10 (t - 15.5) >= 4.5 at t = 15.9). Event at 30: 8 of 10
    # never reaches 9: not regained, counted as the slot's 15 s.
    assert not e.regained
    assert e.regain_s == pytest.approx(15.0)
    # Slots: (1 s at 5 + 14 s at 10) / 15 / 10 and 8 / 10.
    assert e.slot_fraction == pytest.approx(0.8)
    rows = series(lambda t: 5.0 if 15 <= t < 16 else 10.0)
    e = m.reconfiguration_metrics(rows, (15.0, 30.0), 45.0)
    assert e.regained
    assert e.regain_s == pytest.approx(0.9)
    assert e.slot_fraction == pytest.approx((5 + 14 * 10) / 15 / 10)


def test_shares_and_join_drops():
    jain, smallest = m.shares([6.0, 6.0, 4.0, 4.0])
    assert jain == pytest.approx(20.0**2 / (4 * (36 + 36 + 16 + 16)))
    assert smallest == pytest.approx(4.0 / 5.0)
    assert m.shares([0.0, 0.0]) == (None, None)
    queue = [
        {"time_s": f"{t}", "dropped_packets": f"{d}"}
        for t, d in [(0, 0), (10, 5), (20, 5), (21, 400), (40, 420), (41, 1000), (60, 1000), (62, 1100), (120, 1150)]
    ]
    # Joins at 20, 40 and 60 s (the first flow's start is not a join).
    assert m.join_drops(queue, [0, 20, 40, 60], 120) == [415, 580, 150]


# --- the tables and targets -----------------------------------------------------


def row(cell, algorithm, **means):
    r = m.Row(cell, algorithm, 5)
    r.stats = {k: m.Stat(v, 0.1, 5) for k, v in means.items()}
    return r


VEGAS_TS = m.ALGORITHMS[0]
BBR2 = m.Algorithm("bbr2")


def test_leo_targets_compare_with_bbr2():
    cell = m.Cell("paths", m.LEO_100_10, m.Buffer(bdp=1.0), 45, reconfiguration=m.STEPS)
    ours = row(cell, VEGAS_TS, goodput_mbps=90.0, queue_ms=1.0, regain_s=0.4)
    bbr2 = row(cell, BBR2, goodput_mbps=93.0, queue_ms=10.0, regain_s=0.2)
    targets = {what: ok for ok, what in m.targets_of(ours, [ours, bbr2])}
    assert targets == {"regain <= 1 s": True, "goodput >= bbr2": False, "queue <= bbr2/5": True}
    ours.not_regained = 1
    assert {w: ok for ok, w in m.targets_of(ours, [ours, bbr2])}["regain <= 1 s"] is False
    assert m.targets_of(bbr2, [ours, bbr2]) == []


def test_drift_target_is_the_slot_cost_and_loss_above_half_a_percent_has_none():
    drift = m.Cell("paths", m.LEO_100_10, m.Buffer(bdp=1.0), 45, reconfiguration=m.DRIFT)
    assert m.targets_of(row(drift, VEGAS_TS, slot_fraction=0.91), [])[0] == (True, "costs < 10 %")
    assert m.targets_of(row(drift, VEGAS_TS, slot_fraction=0.89), [])[0] == (False, "costs < 10 %")
    lossy = m.Cell("loss", m.LEO_100_10, m.Buffer(bdp=1.0), 45, loss=0.01, reconfiguration=m.STEPS)
    assert m.targets_of(row(lossy, VEGAS_TS, regain_s=0.5), []) == []
    light = m.Cell("loss", m.LEO_100_10, m.Buffer(bdp=1.0), 45, loss=0.001, reconfiguration=m.STEPS)
    assert m.targets_of(row(light, VEGAS_TS, regain_s=1.5), []) == [(False, "regain <= 1 s")]


def test_competition_and_join_targets():
    beside = m.Cell("buffers", m.GEO_20_2, m.Buffer(bdp=2.0), 120, competitor="cubic")
    assert m.targets_of(row(beside, VEGAS_TS, jain=0.79), []) == [(False, "Jain >= 0.8")]
    assert m.targets_of(row(beside, VEGAS_TS, jain=0.8), []) == [(True, "Jain >= 0.8")]
    # The same target on the other shared paths.
    leo = m.Cell("sharing", m.LEO_100_10, m.Buffer(bdp=1.0), 120, competitor="bbr2")
    assert m.targets_of(row(leo, VEGAS_TS, jain=0.79), []) == [(False, "Jain >= 0.8")]
    leo_joins = m.Cell("sharing", m.LEO_100_10, m.Buffer(bdp=1.0), 120, joins=4)
    buffer = m.Buffer(bdp=1.0).packets_on(m.LEO_100_10)
    got = m.targets_of(row(leo_joins, VEGAS_TS, jain=0.99, min_share=0.9, join_drops=buffer - 1.0), [])
    assert got == [(True, "Jain >= 0.95"), (True, "min >= half fair"), (True, f"join drops < {buffer}")]
    alone = m.Cell("buffers", m.GEO_20_2, m.Buffer(bdp=2.0), 40)
    assert m.targets_of(row(alone, VEGAS_TS, goodput_mbps=19.0), []) == []
    joins = m.Cell("joins", m.GEO_20_2, m.Buffer(packets=500), 120, joins=4)
    got = m.targets_of(row(joins, VEGAS_TS, jain=0.96, min_share=0.4, join_drops=500.0), [])
    assert got == [(True, "Jain >= 0.95"), (False, "min >= half fair"), (False, "join drops < 500")]
    # No data is not a pass.
    assert m.targets_of(row(joins, VEGAS_TS), [])[0] == (False, "Jain >= 0.95")


def test_aggregate_keeps_tables_apart_and_takes_mean_and_spread():
    geo = m.Cell("paths", m.GEO_20_2, m.Buffer(bdp=1.0), 40)
    same_in_loss_table = m.Cell("loss", m.GEO_20_2, m.Buffer(bdp=1.0), 40)
    assert geo.name == same_in_loss_table.name
    measured = {}
    for cell in (geo, same_in_loss_table):
        for seed, goodput in ((1, 18.0), (2, 19.0), (3, 20.0)):
            measured[m.MatrixRun(cell, VEGAS_TS, seed)] = {"goodput_mbps": goodput, "queue_ms": None}
    rows = m.aggregate(measured)
    assert [r.cell.table for r in rows] == ["paths", "loss"]
    stat = rows[0].stats["goodput_mbps"]
    assert stat.mean == pytest.approx(19.0)
    assert stat.std == pytest.approx(1.0)  # sample standard deviation of 18, 19, 20
    assert "queue_ms" not in rows[0].stats
    assert m.Stat.of([math.nan, None]).mean is None


def test_markdown_says_where_vegas_sat_loses():
    cell = m.Cell("joins", m.GEO_20_2, m.Buffer(packets=25), 120, joins=4)
    ours = row(cell, VEGAS_TS, goodput_mbps=19.5, jain=0.81, min_share=0.3, join_drops=900.0, queue_ms=12.0)
    ours.targets = m.targets_of(ours, [ours])
    text = m.markdown([ours], "scripts/satellite --only matrix")
    assert "### Joins (GEO 20/2): 4 flows of one algorithm joining 20 s apart" in text
    assert (
        "| 25 packets | vegas-sat (receive timestamps) | 19.50 ± 0.10 | 0.810 ± 0.100 | 0.30 ± 0.10 | 900 ± 0 "
        "| 12.0 ± 0.1 | **MISSED**: Jain >= 0.95; **MISSED**: min >= half fair; **MISSED**: join drops < 25 |"
    ) in text
    assert "Targets met: 0 of 3." in text


def test_markdown_renders_the_shared_paths_beside_a_flow_and_as_joins():
    beside = m.Cell("sharing", m.LEO_100_10, m.Buffer(bdp=1.0), 120, competitor="cubic")
    joins = m.Cell("sharing", m.GEO_50_10, m.Buffer(bdp=1.0), 120, joins=4)
    a = row(beside, VEGAS_TS, goodput_mbps=40.0, competitor_mbps=50.0, jain=0.99, min_share=0.89, queue_ms=20.0)
    b = row(joins, VEGAS_TS, goodput_mbps=47.0, jain=0.9, min_share=0.6, join_drops=2000.0, queue_ms=400.0)
    for r in (a, b):
        r.targets = m.targets_of(r, [a, b])
    text = m.markdown([a, b], "scripts/satellite --only matrix")
    title = "### Other paths shared (one-BDP buffer): beside one CUBIC flow, beside one BBR2 flow, 4 flows joining"
    assert title in text
    assert (
        "| LEO 100/10 (1 BDP (290)) | cubic | vegas-sat (receive timestamps) | 40.00 ± 0.10 | 50.00 ± 0.10 "
        "| 0.990 ± 0.100 | 0.89 ± 0.10 | - | 20.0 ± 0.1 | met: Jain >= 0.8 |"
    ) in text
    assert (
        "| GEO 50/10 (1 BDP (2721)) | 4 joins | vegas-sat (receive timestamps) | 47.00 ± 0.10 | - | 0.900 ± 0.100 "
        "| 0.60 ± 0.10 | 2000 ± 0 | 400.0 ± 0.1 | **MISSED**: Jain >= 0.95; met: min >= half fair; "
        "met: join drops < 2721 |"
    ) in text
    assert "Targets met: 3 of 4." in text


def test_a_cell_shared_by_two_tables_is_one_scenario_file():
    # The loss table's 0 % is the paths table's run: the same bytes, so the
    # sweep runs it once and reuses it whichever table planned it first.
    assert m.scenario_toml(m.Cell("paths", m.GEO_20_2, m.Buffer(bdp=1.0), 40)) == m.scenario_toml(
        m.Cell("loss", m.GEO_20_2, m.Buffer(bdp=1.0), 40)
    )


def test_a_unit_follows_the_spread():
    cell = m.Cell("paths", m.GEO_20_2, m.Buffer(bdp=1.0), 40)
    r = row(cell, m.Algorithm("cubic"), goodput_mbps=18.0, utilisation=0.957, queue_ms=347.1)
    assert "| GEO 20/2 | cubic | 18.00 ± 0.10 | 95.7 ± 10.0 % | 347.1 ± 0.1 |" in m.markdown([r], "x")


# --- the field conditions -------------------------------------------------------

SCENARIOS = Path(__file__).resolve().parents[2] / "interop" / "scenarios"
STARLINK = m.Cell("field", m.STARLINK_LIKE, m.Buffer(packets=100), 60)
JITTERY = next(c for c in m.field_cells() if c.return_jitter_ms is not None)


def test_the_starlink_cell_takes_the_committed_links_with_the_traces_beside_it(tmp_path):
    scenario = parse(STARLINK)
    committed = tomllib.loads((SCENARIOS / "starlink-like.toml").read_text())["links"]
    for name in ("forward", "return"):
        ours, theirs = scenario["links"][name], committed[name]
        assert ours["delay_trace"] == theirs["delay_trace"]
        assert ours["delay_ms"] == theirs["delay_ms"]
        assert ours["rate_trace_file"] == "traces/" + Path(theirs["rate_trace_file"]).name
    assert scenario["links"]["return"]["queue_packets"] == committed["return"]["queue_packets"]
    # The cell's buffer, not the file's, on the forward link.
    small = parse(m.Cell("field", m.STARLINK_LIKE, m.Buffer(packets=7), 60))
    assert small["links"]["forward"]["queue_packets"] == 7
    # A bulk flow under test, as every cell's.
    assert scenario["flows"]["download"]["under_test"] is True
    assert "transfer_bytes" not in scenario["flows"]["download"]


def test_generated_trace_scenarios_ship_their_traces_to_every_executor(tmp_path):
    """The matrix writes the traces beside its scenario; the sweep's plan then
    carries each trace inside the shipped scenario (what local, Dask and
    Slurm runs all receive), byte for byte the committed trace's stamps."""
    from vegas_qlog.sweep import make_plan
    from vegas_qlog.sweep.spec import Entry, SweepSpec

    scenarios = tmp_path / "scenarios"
    m.write_scenarios([STARLINK], scenarios)
    for trace in ("starlink-like-down.mahimahi", "starlink-like-up.mahimahi"):
        assert (scenarios / "traces" / trace).read_bytes() == (SCENARIOS / "traces" / trace).read_bytes()
    sim = tmp_path / "vegas-sim"
    sim.write_text("")
    spec = SweepSpec(None, scenarios, (Entry(f"{STARLINK.name}.toml", "cubic", 1, (), (), "r"),))
    shipped = tomllib.loads(make_plan(spec, sim, tmp_path / "out").tasks[0].scenario.path.read_text())
    for name, trace in (("forward", "down"), ("return", "up")):
        stamps = [int(x) for x in (SCENARIOS / "traces" / f"starlink-like-{trace}.mahimahi").read_text().split()]
        assert shipped["links"][name]["rate_trace"] == stamps
        assert "rate_trace_file" not in shipped["links"][name]
    # Without the copies the scenario names files that are not there.
    (scenarios / "traces" / "starlink-like-up.mahimahi").unlink()
    with pytest.raises(ValueError, match="cannot read"):
        make_plan(spec, sim, tmp_path / "out2")


def test_geo_step_and_jittery_return_cells():
    step = parse(m.Cell("field", m.GEO_20_2, m.Buffer(bdp=1.0), 40, reconfiguration=m.GEO_STEP))
    trace = step["links"]["forward"]["delay_trace"]
    assert delay_at(trace, 14.99) == 300
    assert delay_at(trace, 15.0) == 325
    assert delay_at(trace, 39.0) == 325
    jittery = parse(JITTERY)
    assert jittery["links"]["return"]["delay_jitter_ms"] == 10
    assert "delay_jitter_ms" not in jittery["links"]["forward"]
    assert jittery["links"]["forward"]["queue_packets"] == 25
    assert jittery["flows"]["download"]["transfer_bytes"] == 10 * 1024 * 1024
    # Elsewhere the simulator's default jitter stays.
    assert "delay_jitter_ms" not in parse(m.Cell("paths", m.GEO_20_2, m.Buffer(bdp=1.0), 40))["links"]["return"]


def test_field_targets():
    ours = row(STARLINK, VEGAS_TS, goodput_mbps=5.0, queue_ms=2.0)
    bbr2 = row(STARLINK, BBR2, goodput_mbps=5.5, queue_ms=20.0)
    assert m.targets_of(ours, [ours, bbr2]) == [(False, "goodput >= bbr2"), (True, "queue <= bbr2/5")]
    ours = row(STARLINK, VEGAS_TS, goodput_mbps=5.6, queue_ms=4.1)
    assert m.targets_of(ours, [ours, bbr2]) == [(True, "goodput >= bbr2"), (False, "queue <= bbr2/5")]
    step = m.Cell("field", m.GEO_20_2, m.Buffer(bdp=1.0), 40, reconfiguration=m.GEO_STEP)
    assert m.targets_of(row(step, VEGAS_TS, regain_s=1.2), []) == [(False, "regain <= 1 s")]
    assert m.targets_of(row(JITTERY, VEGAS_TS, completion_s=9.0), []) == []


def test_a_transfer_cell_measures_its_completion(tmp_path):
    cell = JITTERY
    (tmp_path / "summary.json").write_text(
        json.dumps(
            {
                "simulated_s": 7.5,
                "links": [{"name": "forward", "mean_queue_delay_ms": 3.0}],
                "flows": [{"name": "download", "completion_s": 7.25, "goodput_bps": 11.5e6}],
            }
        )
    )
    (tmp_path / "flow-download.csv").write_text("time_s,bytes_delivered\n0,0\n7.5,10485760\n")
    got = m.measure(tmp_path, cell)
    assert got == {"queue_ms": 3.0, "completion_s": 7.25, "goodput_mbps": 11.5}
    text = m.markdown(m.aggregate({m.MatrixRun(cell, VEGAS_TS, 1): got}), "x")
    assert (
        "| GEO 20/2, 25 packets, return jitter 10 ms | vegas-sat (receive timestamps) | 11.50 | - | 3.0 | - | 7.25 |"
        in text
    )


def test_the_starlink_cell_with_a_constant_return_link(tmp_path):
    cell = m.Cell("field", m.STARLINK_LIKE, m.Buffer(packets=100), 60, return_rate_mbps=10)
    scenario = parse(cell)
    committed = tomllib.loads((SCENARIOS / "starlink-like.toml").read_text())["links"]
    back = scenario["links"]["return"]
    assert back["rate_mbps"] == 10
    assert "rate_trace_file" not in back
    assert back["delay_trace"] == committed["return"]["delay_trace"]
    assert scenario["links"]["forward"]["rate_trace_file"] == "traces/starlink-like-down.mahimahi"
    assert [p.name for p in m.trace_files(cell)] == ["starlink-like-down.mahimahi"]
    m.write_scenarios([cell], tmp_path)
    assert sorted(p.name for p in (tmp_path / "traces").iterdir()) == ["starlink-like-down.mahimahi"]
    assert m._field_title(cell) == "Starlink-like (trace-driven), return link 10 Mbit/s"

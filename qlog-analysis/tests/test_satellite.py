"""The satellite benchmark's arithmetic (the runs themselves are a benchmark,
not a test)."""

import math

import pytest

from vegas_qlog import satellite as sat
from vegas_qlog.sweep.spec import SpecError

FAU_SAT = {
    "links": {
        "forward": {"rate_mbps": 20, "delay_ms": 300},
        "return": {"rate_mbps": 2, "delay_ms": 300},
    },
    "flows": {
        "bg": {"forward_path": ["return"], "return_path": ["forward"]},
        "download": {
            "under_test": True,
            "transfer_bytes": 10485760,
            "forward_path": ["forward"],
            "return_path": ["return"],
        },
    },
}


def test_path_of_takes_the_flow_under_test():
    assert sat.path_of(FAU_SAT) == (0.6, 20e6, 10485760)


def test_physical_limit_is_two_round_trips_plus_serialisation():
    limit = sat.physical_limit_s(0.6, 20e6, 10485760)
    # 1.2 s of round trips, 10 MiB with 6 % of headers at 20 Mbit/s.
    expected = 1.2 + 10485760 * (11116308 / 10485760) * 8 / 20e6
    assert limit == pytest.approx(expected)
    assert limit == pytest.approx(5.646, abs=1e-3)


def test_jain():
    assert sat.jain([]) is None
    assert sat.jain([0.0, 0.0]) is None
    assert sat.jain([3.0, 3.0]) == pytest.approx(1.0)
    assert sat.jain([1.0, 0.0]) == pytest.approx(0.5)
    assert sat.jain([12.0, 2.5]) == pytest.approx(14.5**2 / (2 * (144 + 6.25)))


ROWS = [
    {"time_s": "0.100", "bytes_delivered": "0"},
    {"time_s": "1.000", "bytes_delivered": "1000000"},
    {"time_s": "2.000", "bytes_delivered": "3500000"},
]


def test_goodput_between_two_times():
    assert sat.delivered_at(ROWS, 0.0) == 0.0
    assert sat.delivered_at(ROWS, 1.5) == 1000000.0
    assert sat.goodput_mbps(ROWS, 1.0, 2.0) == pytest.approx(20.0)
    with pytest.raises(ValueError, match="empty window"):
        sat.goodput_mbps(ROWS, 2.0, 2.0)


def test_mean_skips_missing_values():
    assert sat.mean([]) is None
    assert sat.mean([None, math.nan, 2.0, 4.0]) == 3.0


def test_plan_shares_runs_between_sections():
    runs = sat.plan_runs(["completion", "ablation"], (1, 2), quick=True)
    directories = {r.directory for r in runs}
    # The ablation's "all mechanisms" on fau-sat is the completion table's run.
    assert "fau-sat/vegas-sat/seed-1" in directories
    assert any(r.section == "ablation" and r.directory == "fau-sat/vegas-sat/seed-1" for r in runs)
    assert "fau-sat/vegas-sat+capacity_jump-off/seed-2" in directories
    with pytest.raises(SpecError, match="unknown section"):
        sat.plan_runs(["nonsense"], (1,), quick=True)


def test_markdown_renders_missing_numbers_as_dashes():
    text = sat.markdown(
        {
            "completion": [
                {
                    "scenario": "fau-sat",
                    "algorithm": "reno",
                    "seeds": 2,
                    "completion_s": None,
                    "unfinished": 2,
                    "retransmitted_fraction": None,
                    "limit_s": 5.65,
                    "ratio_to_limit": None,
                }
            ]
        },
        "scripts/satellite",
    )
    assert "| fau-sat | reno | 2 | - (2 unfinished) | 5.65 | - | - |" in text


def test_download_time_is_completion_from_the_flows_own_start():
    # A second connection starting at 8.85 s that took 6.5 s: the simulator
    # writes completion_s = 6.5 (from the flow's start), not 15.35.
    assert sat.download_time_s({"start_s": 8.85, "completion_s": 6.5}) == 6.5
    assert math.isnan(sat.download_time_s({"start_s": 0.0, "completion_s": None}))


def _summary(completion, retrans, dropped, transmitted, second=True):
    flows = [{"name": "first", "under_test": True, "completion_s": 9.0, "bytes_retransmitted": 0, "bytes_delivered": 1}]
    if second:
        flows.append(
            {
                "name": "second",
                "under_test": True,
                "completion_s": completion,
                "bytes_retransmitted": retrans,
                "bytes_delivered": 1000,
            }
        )
    links = [
        {"name": "forward", "transmitted_packets": 10, "dropped_packets": 0},
        {"name": "return", "transmitted_packets": transmitted, "dropped_packets": dropped},
    ]
    return {"flows": flows, "links": links}


def test_the_resume_rows_report_the_second_connection_and_the_return_drops():
    s = _summary(6.0, 10, 25, 75)
    assert sat.measured_download(s)["name"] == "second"
    assert sat.measured_download(_summary(0, 0, 0, 1, second=False))["name"] == "first"
    assert sat.return_ack_drop_fraction(s) == pytest.approx(0.25)
    assert sat.return_ack_drop_fraction(_summary(6.0, 0, 0, 0)) == 0.0


def test_client_table_keeps_clients_and_ablation_apart(tmp_path, monkeypatch):
    summaries = {
        ("vegas-sat", (), "ours", 1): _summary(6.0, 0, 0, 100),
        ("vegas-sat", (), "ours", 2): _summary(7.0, 0, 0, 100),
        ("vegas-sat", (), "any", 1): _summary(8.0, 100, 10, 90),
        ("vegas-sat", (), "any", 2): _summary(None, 0, 0, 100),
        ("vegas-sat", ("ack_train_capacity=off",), "any", 1): _summary(10.0, 400, 0, 100),
    }
    runs = [sat.Run("clients", "fau-sat-resume", cc, params, seed, client) for cc, params, client, seed in summaries]
    monkeypatch.setattr(sat, "load_summary", lambda out, run: summaries[(run.cc, run.params, run.client, run.seed)])
    rows = {r["algorithm"]: r for r in sat.client_table(tmp_path, runs)}
    assert set(rows) == {"vegas-sat", "vegas-sat:ack_train_capacity=off"}
    ours, anyone = rows["vegas-sat"]["ours"], rows["vegas-sat"]["any"]
    assert ours["completion_s"] == pytest.approx(6.5)
    assert ours["seeds"] == 2
    assert ours["unfinished"] == 0
    assert anyone["completion_s"] == pytest.approx(8.0)
    assert anyone["unfinished"] == 1
    assert anyone["retransmitted_fraction"] == pytest.approx(0.1)  # finished runs only
    assert anyone["return_drop_fraction"] == pytest.approx(0.1)
    off = rows["vegas-sat:ack_train_capacity=off"]
    assert off["ours"]["seeds"] == 0
    assert off["any"]["completion_s"] == pytest.approx(10.0)
    # Rendered: the ablation row has no our-client cells.
    text = sat.markdown({"clients": sat.client_table(tmp_path, runs)}, "scripts/satellite")
    assert "| fau-sat-resume | vegas-sat:ack_train_capacity=off | - | - | - | - | 10.00 | 40.00 % |" in text
    assert "| scenario | algorithm | our client (s) | retransmitted | ACK frequency only (s) |" in text


def test_any_client_sets_every_flow_without_receive_timestamps(tmp_path):
    (tmp_path / "interop" / "scenarios").mkdir(parents=True)
    (tmp_path / "interop" / "scenarios" / "two.toml").write_text("[flows.first]\n[flows.second]\n")
    run = sat.Run("clients", "two", "vegas-sat", (), 1, "any")
    assert sat.client_sets(tmp_path, run) == (
        ("flows.first.receive_timestamps", False),
        ("flows.first.ack_frequency", False),
        ("flows.second.receive_timestamps", False),
        ("flows.second.ack_frequency", False),
    )
    ours = sat.Run("clients", "two", "vegas-sat", (), 1, "ours")
    assert ("flows.second.ack_frequency", True) in sat.client_sets(tmp_path, ours)
    assert ("flows.second.receive_timestamps", True) in sat.client_sets(tmp_path, ours)
    assert sat.client_sets(tmp_path, sat.Run("clients", "two", "vegas-sat", (), 1)) == ()
    with pytest.raises(SpecError, match="unknown client"):
        sat.client_sets(tmp_path, sat.Run("clients", "two", "vegas-sat", (), 1, "browser"))
    assert sat.Run("clients", "two", "vegas-sat", (), 1, "any").directory == "two/vegas-sat+any-client/seed-1"


def test_seeds_option():
    assert sat.parse_seeds("1-3") == (1, 2, 3)
    assert sat.parse_seeds("4,1") == (4, 1)
    assert sat.parse_seeds("2-3,5") == (2, 3, 5)
    for bad in ("x", "1,1", "", "3-1"):
        with pytest.raises(SpecError, match="--seeds"):
            sat.parse_seeds(bad)


def test_the_matrix_runs_only_when_named():
    assert "matrix" not in sat.SECTIONS
    # The matrix plans its own runs: the satellite plan has none for it.
    assert sat.plan_runs(["matrix"], (1,), quick=True) == []

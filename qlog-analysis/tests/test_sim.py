import json
import math
import shutil

import pytest

from vegas_qlog import (
    SimOutputError,
    SimOutputWarning,
    find_runs,
    flows_table,
    load_run,
    load_runs,
    read_series_csv,
    runs_table,
)


def test_load_run(sim_dir):
    run = load_run(sim_dir)
    assert run.scenario == "tiny.toml"
    assert run.seed == 1
    assert run.jain_index == 1.0
    assert run.flow_names == ["vegas"]
    assert run.under_test_cc == "vegas"
    flows = run.flows
    assert flows.loc[0, "goodput_bps"] == pytest.approx(429243.664, rel=1e-6)
    assert flows.loc[0, "retransmission_ratio"] == pytest.approx(5562 / (12000 + 5562))
    assert list(run.links["name"]) == ["fwd", "ret"]
    assert run.cross_traffic.empty
    series = run.flow_series("vegas")
    assert {"time_s", "bytes_delivered", "goodput_bps", "cwnd_bytes", "srtt_ms"} <= set(series.columns)
    assert series["bytes_delivered"].iloc[-1] == 12000
    assert run.queue_series("fwd")["queue_packets"].max() <= 10
    assert run.qlog_path("vegas", "server").name == "vegas-server.sqlog"
    assert run.qlog_path("vegas", "router") is None
    assert run.trace("vegas").vantage_point == "server"
    with pytest.raises(SimOutputError, match=r"flow-nope\.csv: no such file"):
        run.flow_series("nope")
    with pytest.raises(SimOutputError, match=r"no vegas-router\.sqlog"):
        run.trace("vegas", "router")
    assert load_run(sim_dir / "summary.json").path == sim_dir


def test_bad_summaries_name_file_and_key(tmp_path):
    with pytest.raises(SimOutputError, match=r"no summary\.json here"):
        load_run(tmp_path)
    (tmp_path / "summary.json").write_text('{"flows": [\n  {"name": "a",}\n]}')
    with pytest.raises(SimOutputError, match=r"summary.json: line 2 column \d+: not valid JSON"):
        load_run(tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps({"flows": [{"name": "a", "cc": "vegas"}]}))
    with pytest.raises(SimOutputError, match=r"flows\[0\]: missing key 'goodput_bps'"):
        load_run(tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps({"flows": {}}))
    with pytest.raises(SimOutputError, match="key 'flows': expected a list"):
        load_run(tmp_path)


def test_damaged_csv_keeps_the_good_lines(sim_dir, tmp_path):
    text = (sim_dir / "flow-vegas.csv").read_text()
    cut = tmp_path / "flow-cut.csv"
    cut.write_text(text[:-25])  # the last line loses some fields and its newline
    with pytest.warns(SimOutputWarning, match=r"flow-cut.csv: line 4: truncated line"):
        frame = read_series_csv(cut)
    assert len(frame) == 2
    lines = text.splitlines()
    lines[2] = lines[2].replace("7770", "77x0")
    bad = tmp_path / "flow-bad.csv"
    bad.write_text("\n".join([*lines, "1,2,3"]) + "\n")
    with pytest.warns(SimOutputWarning) as caught:
        frame = read_series_csv(bad)
    messages = " ".join(str(w.message) for w in caught)
    assert "line 5: malformed line" in messages
    assert "column 'bytes_delivered': 1 value(s) are not numbers (first: '77x0')" in messages
    assert len(frame) == 3
    assert math.isnan(frame["bytes_delivered"].iloc[1])
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(SimOutputError, match="empty file"):
        read_series_csv(empty)


def test_many_runs(many_runs):
    found = find_runs(many_runs)
    assert len(found) == 6
    runs = load_runs([many_runs])
    assert [r.under_test_cc for r in runs] == ["cubic"] * 3 + ["vegas"] * 3
    flows = flows_table(runs)
    assert len(flows) == 12
    assert list(flows.columns[:7]) == ["run", "scenario", "seed", "run_cc", "jain_index", "simulated_s", "wall_s"]
    assert set(flows["cc"]) == {"vegas", "cubic", "reno"}
    table = runs_table(runs)
    assert len(table) == 6
    assert "utilization_fwd" in table.columns
    assert table.loc[table["run_cc"] == "vegas", "jain_index"].iloc[0] == pytest.approx(1.0)
    with pytest.raises(SimOutputError, match=r"no summary\.json in it or below"):
        load_runs([make_empty(many_runs)])
    with pytest.raises(SimOutputError, match="no such directory"):
        find_runs(many_runs / "missing")


def make_empty(root):
    empty = root.parent / "empty"
    empty.mkdir()
    return empty


def test_copy_of_fixture_is_a_run(sim_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sim_dir, copy)
    (copy / "vegas-server.sqlog").unlink()
    run = load_run(copy)
    assert run.qlog_path("vegas") is None
    assert flows_table([]).empty

import json
from pathlib import Path

import pytest

from vegas_qlog import read_qlog
from vegas_qlog.cli import main, trace_cc


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_of_one_run(capsys, sim_dir):
    code, out, _ = run(capsys, "summary", str(sim_dir))
    assert code == 0
    assert "goodput Mbit/s" in out
    assert "0.429" in out  # Mbit/s
    assert "31.67" in out  # retransmitted %
    assert "1 run(s)" in out


def test_summary_of_many_runs_has_intervals(capsys, many_runs):
    code, out, _ = run(capsys, "summary", str(many_runs), "--by", "run_cc,cc")
    assert code == 0
    assert "±" in out
    assert "6 run(s)" in out
    code, out, _ = run(capsys, "summary", str(many_runs), "--format", "json")
    rows = json.loads(out)
    vegas = next(r for r in rows if r["cc"] == "vegas")
    assert vegas["goodput_bps_n"] == 3
    assert vegas["goodput_bps_mean"] == pytest.approx(1.0e6)


def test_summary_of_qlogs(capsys, server_sqlog, client_sqlog):
    code, out, _ = run(capsys, "summary", str(server_sqlog), str(client_sqlog))
    assert code == 0
    assert "vegas-server.sqlog" in out
    assert "vegas-client.sqlog" in out
    code, out, _ = run(capsys, "summary", str(server_sqlog), "--format", "csv")
    assert out.splitlines()[0].startswith("path,vantage_point")


def test_plot_run_and_qlogs(capsys, sim_dir, server_sqlog, client_sqlog, tmp_path):
    code, _, _ = run(capsys, "plot", str(sim_dir), "-o", str(tmp_path / "run"), "--format", "png")
    assert code == 0
    names = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert names == [
        "tiny-fairness.png",
        "tiny-seed1-cwnd.png",
        "tiny-seed1-goodput.png",
        "tiny-seed1-queue.png",
        "tiny-throughput.png",
    ]
    code, _out, _ = run(
        capsys, "plot", str(server_sqlog), str(client_sqlog), "-o", str(tmp_path / "q"), "--format", "svg"
    )
    assert code == 0
    names = sorted(p.name for p in (tmp_path / "q").iterdir())
    assert "vegas-server-internals.svg" in names
    assert "vegas-server-trace.svg" in names
    assert "cwnd.svg" in names
    assert "goodput.svg" in names


def test_plot_many_runs(capsys, many_runs, tmp_path):
    code, _out, _ = run(capsys, "plot", str(many_runs), "-o", str(tmp_path / "figs"), "--format", "png")
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == [
        "tiny-cwnd.png",
        "tiny-fairness.png",
        "tiny-throughput.png",
    ]


def test_fairness(capsys, many_runs, server_sqlog, client_sqlog, tmp_path):
    code, out, _ = run(capsys, "fairness", str(many_runs), "--plot", str(tmp_path / "fair"))
    assert code == 0
    assert "jain index" in out
    assert "±" in out
    assert (tmp_path / "fair.png").exists()
    assert (tmp_path / "fair.svg").exists()
    code, out, _ = run(capsys, "fairness", str(client_sqlog), str(client_sqlog))
    assert "jain index of 2 flow(s): 1.0000" in out


def test_series_and_ci(capsys, server_sqlog, tmp_path):
    code, out, _ = run(capsys, "series", str(server_sqlog), "--kind", "internals")
    assert code == 0
    assert out.splitlines()[0].startswith("time_s,")
    assert "diff_packets" in out.splitlines()[0]
    target = tmp_path / "w.csv"
    code, out, _ = run(capsys, "series", str(server_sqlog), "-o", str(target))
    assert target.read_text().startswith("time_s,cwnd_bytes")
    code, out, _ = run(capsys, "ci", "1", "2", "3", "4", "5")
    assert "mean 3" in out
    assert "95% CI [1.03" in out


def test_errors_are_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "summary", str(tmp_path / "missing"))
    assert code == 1
    assert err.startswith("qlog-analysis: error:")
    assert "no such file" in err
    (tmp_path / "summary.json").write_text("{")
    code, _, err = run(capsys, "summary", str(tmp_path))
    assert code == 1
    assert "line 1 column 2" in err
    bad = tmp_path / "bad.sqlog"
    bad.write_bytes(b"")
    code, _, err = run(capsys, "to-qvis", str(bad))
    assert code == 1
    assert "empty" in err
    code, _, err = run(capsys, "plot", str(tmp_path), "-o", str(tmp_path), "--format", "gif")
    assert code == 1
    assert "unknown format" in err


def test_truncated_qlog_warns_on_stderr(capsys, server_sqlog, tmp_path):
    cut = tmp_path / "cut.sqlog"
    cut.write_bytes(server_sqlog.read_bytes()[:-30])
    code, out, err = run(capsys, "to-qvis", str(cut))
    assert code == 0
    assert "qlog-analysis: warning:" in err
    assert "truncated record" in err
    assert "1 bad record(s) skipped" in out


def test_trace_cc(server_sqlog):
    assert trace_cc(read_qlog(server_sqlog)) == "vegas"


def test_plot_a_qlog_next_to_it(capsys, sim_dir, tmp_path):
    """`qlog-analysis plot FILE`: the controller's story (and the other
    figures of the trace) next to the file; runs still need -o."""
    source = Path(__file__).parent / "fixtures" / "sim-qvis" / "ext-server.sqlog"
    local = tmp_path / "ext-server.sqlog"
    local.write_bytes(source.read_bytes())
    code, out, _ = run(capsys, "plot", str(local), "--format", "png")
    assert code == 0
    story = tmp_path / "ext-server-story.png"
    assert str(story) in out.splitlines()
    assert story.read_bytes().startswith(b"\x89PNG")
    code, _, err = run(capsys, "plot", str(sim_dir))
    assert code == 1
    assert "-o DIR is needed" in err

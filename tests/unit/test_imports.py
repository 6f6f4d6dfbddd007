# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope import osu|imb|reframe`: the parsers on samples of each tool's
own output (tests/data/imports, imports_logs.py), the runs they store, the
history of imported runs with a step put into the numbers, and the files
refused (another tool's, a damaged line, an empty file, a FIFO), each with
nothing imported. No MPI."""

import json
import os
from pathlib import Path

import pytest

from imports_logs import SAMPLES, nightly_osu, osu_allreduce_text
from mpiscope.cli.main import main
from mpiscope.common.errors import UsageError
from mpiscope.imports import imb, osu, reframe
from mpiscope.store import catalog

US = 1e-6


def _parse(module, name):
    path = SAMPLES / name
    return module.parse(path, path.read_text())


def _values(log):
    return {(v.bench, v.algo, v.size): v for v in log.values}


# ---------------------------------------------------------------- OSU

def test_osu_7_latency_reads_every_size_in_seconds():
    [log] = _parse(osu, "osu-7.4-latency.txt")
    values = _values(log)
    assert log.version == "7.4" and log.np == 2
    assert sorted(s for _, _, s in values) == [0] + [2 ** k for k in range(17)]
    v = values[("pingpong", "mpi", 8)]
    assert v.unit == "s" and v.value == pytest.approx(1.70 * US) and v.low is None and v.reps is None
    assert v.line == 9 and v.printed == {"Size": "8", "Latency (us)": "1.70"}


def test_osu_7_full_columns_give_min_max_and_iterations():
    [log] = _parse(osu, "osu-7.4-allreduce-f.txt")
    v = _values(log)[("allreduce", "mpi", 64)]
    assert (v.value, v.low, v.high) == pytest.approx((2.79 * US, 2.31 * US, 3.24 * US))
    assert v.reps == 1000 and log.np is None


def test_osu_5_job_log_makes_a_two_rank_run_and_one_of_the_others():
    pair, others = _parse(osu, "osu-5.6-job.txt")   # the launcher's line before the first title is skipped
    assert pair.version == others.version == "5.6.1"
    assert (pair.np, pair.part, others.part) == (2, "np 2", "the other programs")
    bw = _values(pair)[("bw", "mpi", 65536)]
    assert bw.unit == "B/s" and bw.value == pytest.approx(10962.04e6)
    rest = _values(others)
    assert rest[("barrier", "mpi", 0)].value == pytest.approx(5.83 * US)   # no size column
    assert {b for b, _, _ in rest} == {"allreduce", "barrier"}


NBC = """
# OSU MPI Non-blocking Allreduce Latency Test v7.4
# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait

# Datatype: MPI_CHAR.
# Size           Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)
4                      12.43              6.21              5.93             -1.45
"""
MBW_MR = """# OSU MPI Multiple Bandwidth / Message Rate Test v5.9
# [ pairs: 1 ] [ window size: 64 ]
# Size                  MB/s        Messages/s
1                       2.93        2930123.41
"""
VALIDATED = """
# OSU MPI Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Latency (us)        Validation   P50 Tail Lat(us)
8                    1.70              Pass               1.66
"""


@pytest.mark.parametrize("text, key, unit, value", [
    (NBC, ("non_blocking_allreduce_latency", "mpi", 4), "s", 12.43 * US),
    (MBW_MR, ("multiple_bandwidth_message_rate", "mpi", 1), "B/s", 2.93e6),
    (VALIDATED, ("pingpong", "mpi", 8), "s", 1.70 * US),
])
def test_osu_programs_with_other_columns(text, key, unit, value):
    """The first column after the size is the number kept, whatever follows it."""
    [log] = osu.parse("x.txt", text)
    v = _values(log)[key]
    assert v.unit == unit and v.value == pytest.approx(value)


def test_osu_datatype_other_than_char_is_a_variant():
    text = osu_allreduce_text({64: 3.0}).replace("MPI_CHAR", "MPI_INT")
    [log] = osu.parse("x.txt", text)
    assert [(v.bench, v.algo) for v in log.values] == [("allreduce", "MPI_INT")]


def test_mpiscope_export_osu_text_reads_back(tmp_path):
    """The OSU text `mpiscope export --format osu` writes is OSU 7.4's: it imports."""
    from rawgen import build_demo_run
    from mpiscope.views.exporters import export

    run_dir = build_demo_run(tmp_path)[0]
    text, _ = export(run_dir, "osu", "allreduce")
    [log] = osu.parse("export.txt", text)
    assert log.version == "7.4" and log.values and all(v.value > 0 for v in log.values)


@pytest.mark.parametrize("text, line, words", [
    ("# OSU MPI Latency Test v7.4\n# Size  Latency (us)\n1  1.5\n2  1.x\n", 4, "'1.x' is not a number"),
    ("# OSU MPI Latency Test v7.4\n# Size  Latency (us)\n1  1.5  7\n", 3, "3 fields where the header names 2"),
    ("# OSU MPI Latency Test v7.4\n1  1.5\n", 2, "without the column header"),
    ("# OSU MPI Latency Test v7.4\n# Size  Latency (us)\n1  1.5\n1  1.6\n", 4, "printed already on line 3"),
    ("# OSU MPI Latency Test v7.4\n# Size  Latency (us)\n", 2, "holds no result line"),
])
def test_osu_damaged_lines_are_refused_with_their_number(text, line, words):
    with pytest.raises(UsageError) as e:
        osu.parse("log.txt", text)
    assert f"log.txt line {line}:" in str(e.value) and words in str(e.value)


# ---------------------------------------------------------------- IMB

def test_imb_2019_one_log_per_process_count():
    logs = _parse(imb, "imb-2019-np2-4.txt")
    assert [(log.np, log.part, log.version) for log in logs] == [(2, "np 2", "2019 Update 6"),
                                                                  (4, "np 4", "2019 Update 6")]
    two = _values(logs[0])
    ping = two[("pingpong", "mpi", 1024)]
    assert ping.unit == "s" and ping.value == pytest.approx(0.32 * US) and ping.reps == 1000
    assert ping.printed["Mbytes/sec"] and ping.low is None
    allreduce = _values(logs[1])[("allreduce", "mpi", 1024)]
    assert allreduce.value == pytest.approx(float(allreduce.printed["t_avg[usec]"]) * US)
    assert allreduce.low < allreduce.value < allreduce.high
    assert logs[0].when.isoformat() == "2024-03-07T02:00:03"
    assert logs[0].facts["kernel"] == "6.1.0-18-amd64"
    assert _values(logs[1])[("barrier", "mpi", 0)].value > 0


def test_imb_2021_bandwidth_sendrecv_and_a_size_imb_gave_up_on():
    logs = _parse(imb, "imb-2021-np2-4-8.txt")
    assert [log.np for log in logs] == [2, 4, 8] and logs[0].version == "2021.3"
    uniband = _values(logs[0])[("uniband", "mpi", 65536)]
    assert uniband.unit == "B/s" and uniband.value == pytest.approx(float(uniband.printed["Mbytes/sec"]) * 1e6)
    assert ("uniband", "mpi", 0) not in _values(logs[0])          # 0.00 MB/s at 0 bytes: left out
    assert ("allreduce", "mpi", 65536) not in _values(logs[2])    # out-of-mem.
    assert any("out-of-mem." in n for n in logs[2].notes)
    assert ("sendrecv", "mpi", 65536) in _values(logs[2])


def test_imb_damaged_row_is_refused_with_its_line():
    text = (SAMPLES / "imb-2019-np2-4.txt").read_text().splitlines()
    row = next(i for i, t in enumerate(text) if t.strip().startswith("1024 "))
    text[row] = text[row][:30]
    with pytest.raises(UsageError) as e:
        imb.parse("imb.txt", "\n".join(text))
    assert f"imb.txt line {row + 1}:" in str(e.value) and "cut short" in str(e.value)


# ---------------------------------------------------------------- ReFrame

def test_reframe_each_line_is_a_run_of_its_date():
    logs = _parse(reframe, "reframe-osu_latency_check.log")
    assert [log.when.date().isoformat() for log in logs] == ["2024-03-05", "2024-03-06", "2024-03-07"]
    log = logs[2]
    assert (log.np, log.nodes, log.machine, log.method) == (2, 2, "alpine:batch", "environ gnu-openmpi")
    values = _values(log)
    lat = values[("osu_latency_check", "latency", 8)]
    assert lat.unit == "s" and lat.value == pytest.approx(1.71 * US)
    assert values[("osu_latency_check", "bandwidth", 8)].unit == "B/s"
    assert log.facts["result"] == "fail"


def test_reframe_units_other_than_time_or_bandwidth_are_left_out_with_a_note():
    header = "result|job_completion_time|name|flops_value|flops_unit|t_value|t_unit"
    [log] = reframe.parse("p.log", f"{header}\npass|2024-03-01T02:00:00|hpl|812.5|Gflop/s|3.5|ms\n")
    assert [(v.algo, v.value) for v in log.values] == [("t", pytest.approx(3.5e-3))]
    assert any("Gflop/s" in n for n in log.notes)


@pytest.mark.parametrize("text, words", [
    ("2024-03-01T02:00:00|reframe 3.12|osu|latency=1.5|ref=1.4\n", "line 1: not a ReFrame performance log"),
    ("result|name|t_value|t_unit\npass|x|1.5\n", "line 2: 3 fields where the header names 4"),
    ("result|name|t_value|t_unit\npass|x|fast|us\n", "line 2: t_value 'fast' is not a number"),
])
def test_reframe_refusals(text, words):
    with pytest.raises(UsageError) as e:
        reframe.parse("p.log", text)
    assert words in str(e.value)


# ---------------------------------------------------------------- the command

def _import(*argv):
    return main(["import", *map(str, argv)])


def test_import_then_history_shows_the_step_put_into_the_numbers(tmp_path, capsys):
    levels = [40.0, 40.4, 39.8, 40.2, 39.9, 40.1, 40.3, 39.7, 44.0, 44.3, 43.8, 44.1, 44.2, 43.9]
    paths = nightly_osu(tmp_path / "logs", levels)
    out = tmp_path / "out"
    assert _import("osu", *paths, "--date", "name", "--np", 16, "--nodes", 4, "--machine", "alpine",
                   "--mpi", "open-mpi", "--out", out) == 0
    assert capsys.readouterr().out.count("imported ") == len(levels)
    assert main(["history", "--out", str(out), "--where", "size=64K", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [series] = doc["series"]
    assert series["method"] == "imported osu" and series["nodes"] == 4
    assert series["ppn"] == "4" and series["machine"] == "alpine"
    [change] = series["changes"]
    assert change["first_after_created"].startswith("2024-03-09")
    assert change["direction"] == "slower" and change["step"] == pytest.approx(0.10, abs=0.01)
    assert main(["history", "--out", str(out), "--where", "size=1K", "--check"]) == 0
    capsys.readouterr()


def test_the_gate_flags_an_imported_night_that_got_slower(tmp_path, capsys):
    paths = nightly_osu(tmp_path / "logs", [40.0, 40.3, 39.8, 40.1, 39.9, 40.2, 46.0])
    out = tmp_path / "out"
    assert _import("osu", *paths, "--date", "name", "--out", out) == 0
    assert main(["history", "--out", str(out), "--check", "--where", "size=64K"]) == 5
    assert "REGRESSION" in capsys.readouterr().out


def test_imported_runs_listed_shown_and_refused_by_the_analyses(tmp_path, capsys):
    out = tmp_path / "out"
    assert _import("imb", SAMPLES / "imb-2019-np2-4.txt", "--machine", "alpine", "--label", "old",
                   "--out", out) == 0
    runs = catalog.list_runs(out, with_context=True)
    assert [r["np"] for r in runs] == [2, 4] or sorted(r["np"] for r in runs) == [2, 4]
    assert {r["context"]["kind"] for r in runs} == {"imported"}
    capsys.readouterr()
    assert main(["runs", "--out", str(out)]) == 0
    assert "pingpong,allreduce,barrier" in capsys.readouterr().out
    run_id = next(r["run_id"] for r in runs if r["np"] == 2)
    assert main(["show", run_id, "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "imported  imb 2019 Update 6" in shown and "no samples, no interval" in shown and "pingpong" in shown
    for argv in (["fit", run_id], ["report", run_id, "-o", str(tmp_path / "r.html")],
                 ["export", run_id, "--format", "csv"], ["show", run_id, "--json"]):
        assert main([*argv, "--out", str(out)]) == 2, argv
        assert "imported run" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("damage", ["", "{", '{"format": "mpiscope-imported", "schema_version": 1, "values": [1]}',
                                    '{"format": "mpiscope-imported", "schema_version": 2, "values": []}'])
def test_show_refuses_a_damaged_imported_file(tmp_path, capsys, damage):
    out = tmp_path / "out"
    assert _import("osu", SAMPLES / "osu-7.4-latency.txt", "--date", "2024-03-01", "--out", out) == 0
    [run] = catalog.list_runs(out)
    (Path(run["path"]) / "imported.json").write_text(damage)
    capsys.readouterr()
    assert main(["show", run["run_id"], "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "imported.json" in err and "Traceback" not in err


def test_a_file_imported_twice_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    log = SAMPLES / "reframe-osu_latency_check.log"
    assert _import("reframe", log, "--out", out) == 0
    assert _import("reframe", log, "--out", out) == 2
    assert "imported already" in capsys.readouterr().err
    assert len(catalog.list_runs(out)) == 3


def _nothing_imported(out):
    return not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("fmt, sample", [("osu", "imb-2019-np2-4.txt"), ("imb", "osu-7.4-latency.txt"),
                                         ("reframe", "osu-7.4-latency.txt")])
def test_another_tools_output_is_refused(tmp_path, capsys, fmt, sample):
    out = tmp_path / "out"
    assert _import(fmt, SAMPLES / sample, "--date", "2024-03-01", "--out", out) == 2
    err = capsys.readouterr().err
    assert "not a" in err and sample in err and "Traceback" not in err
    assert _nothing_imported(out)


def test_a_damaged_file_among_good_ones_imports_nothing(tmp_path, capsys):
    bad = tmp_path / "cut.txt"
    bad.write_text((SAMPLES / "osu-7.4-latency.txt").read_text()[:-6])
    out = tmp_path / "out"
    assert _import("osu", SAMPLES / "osu-7.4-latency.txt", bad, "--date", "2024-03-01", "--out", out) == 2
    err = capsys.readouterr().err
    assert f"{bad} line 22:" in err
    assert _nothing_imported(out)


@pytest.mark.parametrize("make, words", [
    (lambda p: p.write_text(""), "is empty"),
    (lambda p: p.write_text("\n\n"), "is empty"),
    (lambda p: os.mkfifo(p), "FIFO"),
    (lambda p: p.mkdir(), "directory"),
    (lambda p: None, "does not exist"),
])
def test_files_that_are_no_logs_are_refused(tmp_path, capsys, make, words):
    path = tmp_path / "log.txt"
    make(path)
    out = tmp_path / "out"
    assert _import("osu", path, "--date", "2024-03-01", "--out", out) == 2
    err = capsys.readouterr().err
    assert words in err and str(path) in err
    assert _nothing_imported(out)


@pytest.mark.parametrize("argv, words", [
    (["--date", "yesterday"], "--date 'yesterday'"),
    ([], "holds no date"),
    (["--date", "name"], "finds no date"),
])
def test_dates_refused(tmp_path, capsys, argv, words):
    out = tmp_path / "out"
    assert _import("osu", SAMPLES / "osu-7.4-latency.txt", *argv, "--out", out) == 2
    assert words in capsys.readouterr().err
    assert _nothing_imported(out)


def test_date_from_the_file_name_and_mtime(tmp_path):
    from mpiscope.imports.dates import date_of

    path = tmp_path / "imb_20240307_0215.txt"
    path.write_text("x")
    os.utime(path, (1709777700, 1709777700))
    assert date_of(path, "name")[0].isoformat() == "2024-03-07T02:15:00"
    assert date_of(path, "mtime")[0].timestamp() == 1709777700
    assert date_of(Path("osu-2024-03-07.log"), "name")[0].isoformat() == "2024-03-07T00:00:00"

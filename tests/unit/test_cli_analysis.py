# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope fit` and `mpiscope compare` run in this process on synthetic runs
with known curves (analysis_runs.py): text snapshots, JSON, one benchmark
and size, --noise parsing, and the runs or arguments they refuse."""

import json

import pytest

from analysis_runs import SIZES, build_run
from mpiscope.cli.main import build_parser
from mpiscope.cli.analysis import parse_noise
from mpiscope.common.errors import UsageError
from snapshot import assert_snapshot

A_ID, B_ID = "20240401-120000-aaaa", "20240402-120000-bbbb"


def _run(argv):
    args = build_parser().parse_args(argv)
    return args.func(args)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    build_run(out, A_ID, "2024-04-01T12:00:00+00:00", extra=[("barrier", 0)])
    # B: another library; pingpong 10% slower, bw 0.5% higher, allreduce 10%
    # faster; it lacks the largest size and adds one.
    sizes_b = SIZES[:-1] + [8 * 1024 * 1024]
    build_run(out, B_ID, "2024-04-02T12:00:00+00:00", seed=4, mpi="mpich", sizes=sizes_b,
              factor={"pingpong": 1.10, "bw": 1.005, "allreduce": 0.90},
              extra=[("barrier", 0)])
    return out


def test_fit_snapshot(out, capsys):
    assert _run(["fit", A_ID, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert_snapshot("fit.txt", text)
    assert "break between 4K B and 16K B" in text


def test_fit_json(out, capsys):
    assert _run(["fit", A_ID, "--json", "--bench", "pingpong", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["seed"] == 1 and doc["units"]["beta"] == "s/B"
    (fit,) = doc["fits"]
    assert fit["bench"] == "pingpong" and len(fit["points"]) == len(SIZES)
    pw = fit["piecewise"]
    assert pw["n_segments"] == 2 and pw["breaks"] == [[4096, 16384]]
    seg = pw["segments"][1]
    assert seg["beta"]["point"] == pytest.approx(0.1e-9, rel=0.05)
    assert seg["beta"]["low"] <= seg["beta"]["point"] <= seg["beta"]["high"]
    assert fit["hockney"]["alpha"]["method"].startswith("bootstrap")


def test_fit_one_size_and_json_nulls(out, capsys):
    assert _run(["fit", A_ID, "--bench", "barrier", "--json", "--out", str(out)]) == 0
    (fit,) = json.loads(capsys.readouterr().out)["fits"]
    assert fit["hockney"] is None and "one size" in fit["note"]


def test_fit_unknown_bench(out):
    with pytest.raises(UsageError, match="has no benchmark 'bibw'; it has: pingpong, bw"):
        _run(["fit", A_ID, "--bench", "bibw", "--out", str(out)])


def test_compare_snapshot(out, capsys):
    assert _run(["compare", A_ID, B_ID, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert_snapshot("compare.txt", text)
    assert "only in A (not compared): pingpong, bw, allreduce 4M B" in text
    assert "only in B (not compared): pingpong, bw, allreduce 8M B" in text


def test_compare_verdicts_and_json(out, capsys):
    assert _run(["compare", A_ID, B_ID, "--json", "--noise", "2%", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["noise"] == 0.02 and doc["seed"] == 1
    verdicts = {}
    for row in doc["rows"]:
        verdicts.setdefault(row["bench"], set()).add(row["verdict"])
    assert verdicts == {"pingpong": {"slower"}, "bw": {"same"}, "allreduce": {"faster"},
                        "barrier": {"same"}}
    assert len(doc["only_a"]) == 3 and len(doc["only_b"]) == 3


def test_compare_one_bench_and_size(out, capsys):
    assert _run(["compare", A_ID, B_ID, "--bench", "pingpong", "--size", "1K",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rows = [line.split() for line in text.splitlines() if line.startswith("pingpong")]
    assert [r[:2] for r in rows] == [["pingpong", "1024"]] and "only in" not in text


def test_compare_refuses_size_missing_from_one_run(out):
    with pytest.raises(UsageError, match=r"cannot compare: run B \(20240402-120000-bbbb\) has "
                                         r"no pingpong at 4M B"):
        _run(["compare", A_ID, B_ID, "--bench", "pingpong", "--size", "4M", "--out", str(out)])


def test_compare_refuses_nothing_in_common(out, tmp_path):
    # Runs given as paths, from anywhere.
    other = build_run(tmp_path, "20240403-120000-cccc", "2024-04-03T12:00:00+00:00",
                      benches=("bw",), sizes=[3, 5])
    with pytest.raises(UsageError) as exc:
        _run(["compare", str(out / A_ID), str(other), "--out", str(tmp_path)])
    assert str(exc.value) == (
        "runs A (20240401-120000-aaaa) and B (20240403-120000-cccc) have no benchmark × size "
        "in common: A has pingpong, bw, allreduce 1, 4, 16, 64, 256, 1K, 4K, 16K, 64K, 256K, "
        "1M, 4M B; barrier 0 B; B has bw 3, 5 B")


def test_parse_noise():
    assert parse_noise("2%") == pytest.approx(0.02)
    assert parse_noise("0.02") == pytest.approx(0.02)
    assert parse_noise("0") == 0.0
    for bad, what in (("2", "for percent write 2%"), ("abc", "not a number"),
                      ("150%", "below 100%"), ("-1%", "at least 0%")):
        with pytest.raises(UsageError, match=what):
            parse_noise(bad)


def test_bad_arguments(out, capsys):
    for bad, message in ((["--size", "lots"], "--size 'lots' is not a size"), (["--alpha", "2"], "--alpha")):
        with pytest.raises(SystemExit) as exc:   # refused as the command line is read
            _run(["compare", A_ID, B_ID, *bad, "--out", str(out)])
        assert exc.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(UsageError, match="no run 'zzz'"):
        _run(["compare", A_ID, "zzz", "--out", str(out)])
    with pytest.raises(SystemExit):
        _run(["compare", A_ID])   # RUN_B is required

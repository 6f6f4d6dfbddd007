# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope runs`, `show` and `export` run in this process on the demo run
(rawgen.py): latest by default, JSON, export to a file or stdout, and the
runs, formats and paths they refuse."""

import json

import pytest

from mpiscope.cli.main import build_parser
from mpiscope.common.errors import UsageError
from rawgen import build_demo_run


def _run(argv):
    args = build_parser().parse_args(argv)
    return args.func(args)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    build_demo_run(out)
    return out


def test_runs(out, capsys):
    assert _run(["runs", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["run_id", "created", "status"]
    assert lines[1].startswith("20240315-101500-a1b2")


def test_show_defaults_to_latest(out, capsys):
    assert _run(["show", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("run 20240315-101500-a1b2  completed")
    assert "pingpong" in captured.out
    assert "mpiscope: warning: 1 of 13 series: more than 25% of samples invalid" in captured.err


def test_show_json(out, capsys):
    assert _run(["show", "2024", "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"][0]["bench"] == "pingpong"


def test_export_to_file(out, tmp_path, capsys):
    target = tmp_path / "result.txt"
    assert _run(["export", "latest", "--format", "osu", "--bench", "pingpong", "-o", str(target),
                 "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert target.read_text().startswith("\n# OSU MPI Latency Test v7.4\n")
    assert [p.name for p in tmp_path.iterdir()] == ["result.txt"]  # no temporary left


def test_export_to_stdout(out, capsys):
    assert _run(["export", "20240315", "--format", "csv", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("bench,algo,size,launch,rep,source,value,unit\n")


def test_export_to_missing_directory(out, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:   # refused as the command line is read
        _run(["export", "--format", "csv", "-o", str(tmp_path / "no/such.csv"),
              "--out", str(out)])
    assert exc.value.code == 2 and "does not exist" in capsys.readouterr().err


def test_unknown_run(out):
    with pytest.raises(UsageError, match="no run 'zzz'"):
        _run(["show", "zzz", "--out", str(out)])


def test_bad_format_is_rejected_by_argparse(out, capsys):
    with pytest.raises(SystemExit) as exc:
        _run(["export", "--format", "xml", "--out", str(out)])
    assert exc.value.code == 2


@pytest.mark.parametrize("command", ["runs", "show", "export"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "--out DIR" in text and "mpiscope-runs" in text
    if command != "runs":
        assert "latest" in text

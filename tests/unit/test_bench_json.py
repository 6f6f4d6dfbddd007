# SPDX-License-Identifier: BSD-3-Clause
"""The bench scripts found, and bench/benchjson.py, what every one of them
uses for its command line, its printed tables and its --json document: the
reproducing command comes last in --help, an unwritable --json FILE is
refused, nothing is written without --json."""

import argparse
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import benchjson  # noqa: E402

# benchjson.py and peer_tools.py are modules the scripts import, not scripts
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name not in ("benchjson.py", "peer_tools.py"))


def test_without_json_nothing_is_written(tmp_path):
    benchjson.write(argparse.Namespace(json=None), "example", [])
    assert not list(tmp_path.iterdir())


def test_printed_table_shows_the_stored_numbers(capsys):
    t = benchjson.show("t", ["name", "value s"], [["a", 1.23456], ["b", None]], ["a note"])
    out = capsys.readouterr().out
    assert out.splitlines() == ["t", "  name  value s", "  a       1.235", "  b           -", "  a note", ""]
    assert t["rows"] == [["a", 1.23456], ["b", None]]


def _parser():
    ap = benchjson.parser("What it measures.\n\nTo reproduce:\n\n    .venv/bin/python bench/x.py\n")
    ap.add_argument("--trials", type=int, default=1, help="trials")
    return ap


def test_parser_puts_the_command_last():
    text = _parser().format_help()
    assert text.index("What it measures.") < text.rindex("--trials") < text.index(".venv/bin/python bench/x.py")


def test_check_json_path_refuses_a_directory(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        benchjson.parse(_parser(), ["--json", str(tmp_path)])
    assert e.value.code == 2
    assert "--json" in capsys.readouterr().err


def test_check_json_path_refuses_a_missing_parent(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        benchjson.parse(_parser(), ["--json", str(tmp_path / "no" / "such" / "out.json")])
    assert e.value.code == 2
    assert "--json" in capsys.readouterr().err


def test_check_json_path_accepts_a_new_file(tmp_path):
    args = benchjson.parse(_parser(), ["--json", str(tmp_path / "out.json"), "--trials", "2"])
    assert args.json == tmp_path / "out.json" and args.trials == 2


def test_every_script_is_found():
    assert len(SCRIPTS) >= 20, [p.name for p in SCRIPTS]

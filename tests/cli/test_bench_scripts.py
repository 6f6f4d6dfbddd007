# SPDX-License-Identifier: BSD-3-Clause
"""The bench scripts run as processes: every script answers --help (what it
measures, the command that reproduces it, --json among its options), and
writes a document with its context (commit from git) and tables, refusing
an unwritable --json FILE before anything is measured. No MPI is started."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import benchjson  # noqa: E402

# benchjson.py and peer_tools.py are modules the scripts import, history_anchors.py a
# filter history_detection.py runs in another Python: none is a bench script
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name not in ("benchjson.py", "peer_tools.py", "history_anchors.py"))
CONTEXT_KEYS = ("date", "commit", "command", "options", "machine", "mpi")


def run_script(script: Path, *args, timeout=120):
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=BENCH.parent)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_help(script):
    p = run_script(script, "--help")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "--json" in p.stdout
    # the command that reproduces the script's numbers comes last
    assert f".venv/bin/python bench/{script.name}" in p.stdout.split("To reproduce", 1)[-1], p.stdout[-600:]


# ---------------------------------------------------------------- benchjson

def test_write_holds_context_and_tables(tmp_path):
    args = argparse.Namespace(json=tmp_path / "out.json", rounds=3, where=tmp_path)
    t = benchjson.table("latency", ["size B", "median us"], [[8, 0.25], [1024, 0.61]], ["target: <= 1"])
    benchjson.write(args, "example", [t], {"samples": [0.25, float("nan")]}, mpi=["Open MPI 4.1.4"])
    doc = json.loads(args.json.read_text())
    assert doc["schema_version"] == benchjson.SCHEMA_VERSION and doc["bench"] == "example"
    assert all(k in doc["context"] for k in CONTEXT_KEYS), doc["context"].keys()
    ctx = doc["context"]
    assert ctx["mpi"] == ["Open MPI 4.1.4"]
    assert ctx["options"] == {"rounds": 3, "where": str(tmp_path)}  # --json itself is not an option of the numbers
    assert ctx["command"].startswith(".venv/bin/python ")
    assert ctx["machine"]["cores"] >= 1
    assert doc["tables"] == [{"title": "latency", "columns": ["size B", "median us"],
                              "rows": [[8, 0.25], [1024, 0.61]], "notes": ["target: <= 1"]}]
    assert doc["results"] == {"samples": [0.25, None]}  # JSON has no NaN


def test_a_script_refuses_an_unwritable_json_before_measuring(tmp_path):
    p = run_script(BENCH / "cli_startup.py", "--rounds", "1", "--json", tmp_path / "missing" / "out.json")
    assert p.returncode == 2 and "--json" in p.stderr and not p.stdout


# ---------------------------------------------------------------- one bench, end to end

def test_cli_startup_writes_its_document(tmp_path):
    out = tmp_path / "cli-startup.json"
    p = run_script(BENCH / "cli_startup.py", "--rounds", "1", "--json", out, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["bench"] == "cli_startup"
    assert all(k in doc["context"] for k in CONTEXT_KEYS)
    assert doc["context"]["options"] == {"rounds": 1, "via_module": False}
    assert doc["context"]["mpi"] == []
    [table] = doc["tables"]
    assert table["columns"][0] == "command" and len(table["rows"]) == 6
    assert all(isinstance(v, (int, float)) for row in table["rows"] for v in row[1:])
    # the terminal shows the same rows
    for row in table["rows"]:
        assert row[0] in p.stdout
    assert set(doc["results"]["wall_s"]) == {row[0] for row in table["rows"]}

# SPDX-License-Identifier: BSD-3-Clause
"""The --json documents of commands that start processes without MPI ranks
validate against their JSON Schemas: `config show` as a process, and `sim
run`, `sim predict` and `sim check` (the simulator, built by make) on a
synthetic run of our own allgather algorithms."""

import json

import pytest

from analysis_runs import build_collectives_run
from runcli import mpiscope
from schemas import json_of, validate


@pytest.fixture
def out(tmp_path):
    out = tmp_path / "runs"
    build_collectives_run(out)
    return out


def test_config_show_validates(tmp_path):
    p = mpiscope("config", "show", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    validate("config-show", json.loads(p.stdout))


def test_sim_run_predict_and_check(out, capsys, tmp_path):
    sched = tmp_path / "ring.goal"
    from mpiscope.sim import binary
    binary.schedule(["--bench", "allgather", "--algo", "ring", "-p", 4, "--size", 1024, "-o", sched])
    doc = json_of(["sim", "run", sched, "--alpha", "2us", "--beta", "1ns/B", "--critical-path", 2, "--json"],
                  capsys)
    validate("sim-run", doc)
    doc = json_of(["sim", "predict", "--bench", "bcast", "-p", 6, "--size", "4K", "--alpha", "2us",
                   "--beta", "1ns/B", "--crossover", "--range", "1-64K", "--json"], capsys)
    validate("sim-predict", doc)
    assert doc["predictions"] and "crossovers" in doc
    doc = json_of(["sim", "check", "20240303", "--json", "--out", out], capsys)
    validate("sim-check", doc)
    assert {r["algo"] for r in doc["rows"]} == {"ring", "recursive_doubling"}

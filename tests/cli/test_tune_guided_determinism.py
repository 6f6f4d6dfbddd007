# SPDX-License-Identifier: BSD-3-Clause
"""The guided search replayed on a stored tune (tests/data/tune-replay)
measures the same cells in the same order and decides the same, whatever
Python's string hash seed: the replay on the tuner's validation page is
deterministic. Each run is a process of its own (no MPI rank)."""

import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, sys
from tune_replay import Replay, catalog_of, reading
from tune_synthetic import plan
from mpiscope.sim.costs import SimCosts
from mpiscope.tune import tuner as T

stored = json.loads(open(sys.argv[1]).read())
said = []
cfg = T.TuneConfig(collectives=stored["collectives"], sizes=stored["sizes"], search="guided",
                   sim_costs=SimCosts(alpha_s=2e-6, beta_s=1e-9))
t = T.Tuner(plan(4), catalog_of(stored), cfg, Replay(stored), say=said.append)
t.reading = reading(stored, 4)
t.search()
print(json.dumps({"said": said, "winners": sorted(map(list, t.decisions.winners.items())),
                  "cells": {c: sorted(map(list, v)) for c, v in t.measured.cells.items()}}))
"""


def guided_run(seed):
    env = {
        **os.environ,
        "PYTHONHASHSEED": str(seed),
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    p = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(TESTS / "data" / "tune-replay" / "openmpi-4.1-p4-18-sizes.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout)


def test_the_guided_replay_is_the_same_whatever_the_hash_seed():
    a, b = guided_run(1), guided_run(2)
    assert a["said"] and any(x.startswith("guided:") for x in a["said"])
    assert a == b
